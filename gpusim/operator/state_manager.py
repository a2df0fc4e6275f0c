"""Which operands a GPU node gets and the labels that select them (mirrors NVIDIA/gpu-operator
controllers/state_manager.go: ``hasGPULabels``, ``hasMIGCapableGPU``, ``gpuWorkloadConfiguration`` and
``labelGPUNodes``'s deploy labels; controllers/object_controls.go for the pod template transforms).

- A node is a GPU node when NFD labelled an NVIDIA PCI device (``feature.node.kubernetes.io/pci-10de.present``
  and its class variants) or it already has ``nvidia.com/gpu.present=true``.
- Workload config ``container`` (the default; ``nvidia.com/gpu.workload.config``) gets the container deploy
  labels; ``nvidia.com/gpu.deploy.mig-manager`` only on MIG-capable GPUs (``nvidia.com/mig.capable=true``,
  else a product label containing h100, a100 or a30), never on vGPU guests.
- The operator adds a missing deploy label as ``true`` and never overwrites one a user (or mig-manager) set.
"""
from __future__ import annotations

from typing import Any

from ..api.nvidia_operands import (CONFIG_MANAGER, CONFIG_MANAGER_INIT, DEPLOY_PREFIX, GPU_PRESENT_LABEL, NAMESPACE,
                                   NFD_PCI_LABELS, OPERANDS, PART_OF, WORKLOAD_CONFIG_LABEL, Operand)
from ..api.core_v1 import Container, Pod, PodSpec, Toleration
from ..api.meta import ObjectMeta
from ..api.nvidia_v1 import ClusterPolicySpec, section_enabled

# the container workload config's deploy labels (state_manager.go gpuStateLabels["container"])
CONTAINER_COMPONENTS = ("driver", "gpu-feature-discovery", "container-toolkit", "device-plugin", "dcgm",
                        "dcgm-exporter", "node-status-exporter", "operator-validator")
MIG_CAPABLE_PRODUCTS = ("h100", "a100", "a30")
OPERANDS_LABEL = DEPLOY_PREFIX + "operands"   # =false turns every operand off on the node


def operands_disabled(labels: dict[str, str]) -> bool:
    """hasOperandsDisabled: ``nvidia.com/gpu.deploy.operands=false``."""
    return labels.get(OPERANDS_LABEL) == "false"


def has_gpu(labels: dict[str, str]) -> bool:
    return labels.get(GPU_PRESENT_LABEL) == "true" or any(labels.get(k) == "true" for k in NFD_PCI_LABELS)


def mig_capable(labels: dict[str, str]) -> bool:
    if "nvidia.com/vgpu.host-driver-version" in labels or labels.get("nvidia.com/vgpu.present") == "true":
        return False
    if "nvidia.com/mig.capable" in labels:
        return labels["nvidia.com/mig.capable"] == "true"
    product = labels.get("nvidia.com/gpu.product", "").lower()
    return any(p in product for p in MIG_CAPABLE_PRODUCTS)


def gpu_node_labels(labels: dict[str, str]) -> dict[str, str]:
    """The labels ``labelGPUNodes`` adds to a GPU node with the container workload config (existing values kept)."""
    out = {GPU_PRESENT_LABEL: "true"}
    if labels.get(WORKLOAD_CONFIG_LABEL, "container") != "container":
        return {k: v for k, v in out.items() if k not in labels}
    for c in CONTAINER_COMPONENTS:
        out[DEPLOY_PREFIX + c] = "true"
    if mig_capable(labels):
        out[DEPLOY_PREFIX + "mig-manager"] = "true"
    return {k: v for k, v in out.items() if k not in labels}


def enabled_operands(spec: ClusterPolicySpec) -> list[Operand]:
    """The operands ClusterPolicy enables, in reconcile order (the validator is always on)."""
    return [o for o in OPERANDS if o.section == "validator" or section_enabled(spec, o.section, o.default_enabled)]


def wanted_on(operand: Operand, labels: dict[str, str]) -> bool:
    """The DaemonSet's nodeSelector ``nvidia.com/gpu.deploy.<component>: "true"``."""
    return not operands_disabled(labels) and labels.get(operand.deploy_label) == "true"


def operand_pod(operand: Operand, node: str, name: str, uid: str, spec: ClusterPolicySpec) -> Pod:
    """The pod the operand's DaemonSet creates on ``node`` (labels, tolerations, system-node-critical, the
    init containers that wait). TransformDevicePlugin / TransformGPUDiscoveryPlugin keep the config-manager
    containers only when ``spec.devicePlugin.config.name`` is set."""
    inits, mains = list(operand.init_containers), list(operand.containers)
    cfg = spec.device_plugin.config
    if operand.component in ("device-plugin", "gpu-feature-discovery") and cfg is not None and cfg.name:
        inits.append(CONFIG_MANAGER_INIT)
        mains.append(CONFIG_MANAGER)
    image = f"nvcr.io/nvidia/{operand.daemonset}"
    labels = {"app": operand.daemonset, PART_OF[0]: PART_OF[1]}
    return Pod(metadata=ObjectMeta(name=name, namespace=NAMESPACE, labels=labels, uid=uid,
                                   annotations={"gpusim.io/state": operand.state}),
               spec=PodSpec(containers=[Container(name=c, image=image) for c in mains],
                            init_containers=[Container(name=c, image=image) for c in inits],
                            node_name=node, node_selector={operand.deploy_label: "true"},
                            priority_class_name="system-node-critical", restart_policy="Always",
                            tolerations=[Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule")]))


def pod_ready(pod: Any) -> bool:
    """The DaemonSet counts the pod available: Running with every container ready."""
    st = pod.status
    return st.phase == "Running" and bool(st.container_statuses) and all(c.ready for c in st.container_statuses)
