"""The GPU Operator's operands as their DaemonSet assets define them (mirrors NVIDIA/gpu-operator assets/
``state-*/0500_daemonset.yaml`` and the transforms of controllers/object_controls.go), the node labels that
select them and the validation files they exchange on the host. The operator (gpusim.operator) creates the
pods from this table; the node (gpusim.node.operands) runs each container by its name, as the image would.

A pod's STATUS shows these names: a device-plugin pod waiting for the toolkit is ``Init:0/1`` with its init
container ``toolkit-validation`` printing ``waiting for nvidia container stack to be setup`` every 5 s.
"""
from __future__ import annotations

from dataclasses import dataclass

NAMESPACE = "gpu-operator"
PART_OF = ("app.kubernetes.io/part-of", "gpu-operator")   # on every operand pod (state-operator-validation asset)
DEPLOY_PREFIX = "nvidia.com/gpu.deploy."                  # controllers/state_manager.go gpuStateLabels
GPU_PRESENT_LABEL = "nvidia.com/gpu.present"
WORKLOAD_CONFIG_LABEL = "nvidia.com/gpu.workload.config"
# NFD's PCI labels that mark an NVIDIA device (state_manager.go nfdLabels): vendor 10de, classes 0300/0302
NFD_PCI_LABELS = ("feature.node.kubernetes.io/pci-10de.present", "feature.node.kubernetes.io/pci-0302_10de.present",
                  "feature.node.kubernetes.io/pci-0300_10de.present")
PAUSED_VALUES = ("paused-for-mig-change", "paused-for-driver-upgrade")

VALIDATIONS_DIR = "/run/nvidia/validations"              # cmd/nvidia-validator/main.go outputDirFlag
DRIVER_CTR_READY = ".driver-ctr-ready"                   # driver container startup probe
DRIVER_READY, TOOLKIT_READY = "driver-ready", "toolkit-ready"
CUDA_READY, PLUGIN_READY = "cuda-ready", "plugin-ready"
VALIDATOR_SLEEP_SECONDS = 5                               # nvidia-validator sleepIntervalSecondsFlag
PLUGIN_VALIDATION_RETRIES = 30                            # gpuResourceDiscoveryWaitRetries (× 5 s)

# exact texts printed by the operand containers
MSG_WAIT_STACK = "waiting for nvidia container stack to be setup"       # toolkit-validation init containers
MSG_WAIT_TOOLKIT = "waiting for nvidia container toolkit to be setup"   # mig-manager's toolkit-validation
MSG_NO_GPU_RESOURCES = "GPU resources are not discovered by the node"   # plugin-validation
MSG_VALIDATED = "all validations are successful"                       # nvidia-operator-validator
MSG_RETRY = f"command failed, retrying after {VALIDATOR_SLEEP_SECONDS} seconds"   # runCommandWithWait
# containerd's error when a pod names a RuntimeClass whose handler the toolkit has not configured
MSG_NO_RUNTIME = ('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: '
                  'no runtime for "{handler}" is configured')
RUNTIME_HANDLERS = ("nvidia", "nvidia-cdi", "nvidia-legacy")   # assets/pre-requisites RuntimeClasses' handlers


@dataclass(frozen=True)
class Operand:
    """One reconciled state: its asset directory, DaemonSet, the deploy label selecting it, the ClusterPolicy
    section that enables it (with the default when ``enabled`` is unset) and its containers."""

    state: str
    daemonset: str
    component: str                       # nvidia.com/gpu.deploy.<component>
    section: str                         # ClusterPolicySpec attribute
    default_enabled: bool
    init_containers: tuple[str, ...]
    containers: tuple[str, ...]

    @property
    def deploy_label(self) -> str:
        return DEPLOY_PREFIX + self.component


# controllers/state_manager.go addState order (pre-requisites and operator metrics create no node pods).
OPERANDS: tuple[Operand, ...] = (
    Operand("state-driver", "nvidia-driver-daemonset", "driver", "driver", True,
            ("k8s-driver-manager",), ("nvidia-driver-ctr",)),
    Operand("state-container-toolkit", "nvidia-container-toolkit-daemonset", "container-toolkit", "toolkit", True,
            ("driver-validation",), ("nvidia-container-toolkit-ctr",)),
    Operand("state-operator-validation", "nvidia-operator-validator", "operator-validator", "validator", True,
            ("driver-validation", "toolkit-validation", "cuda-validation", "plugin-validation"),
            ("nvidia-operator-validator",)),
    Operand("state-device-plugin", "nvidia-device-plugin-daemonset", "device-plugin", "device_plugin", True,
            ("toolkit-validation",), ("nvidia-device-plugin",)),
    Operand("state-dcgm", "nvidia-dcgm", "dcgm", "dcgm", False, ("toolkit-validation",), ("nvidia-dcgm-ctr",)),
    Operand("state-dcgm-exporter", "nvidia-dcgm-exporter", "dcgm-exporter", "dcgm_exporter", True,
            ("toolkit-validation",), ("nvidia-dcgm-exporter",)),
    Operand("gpu-feature-discovery", "gpu-feature-discovery", "gpu-feature-discovery", "gfd", True,
            ("toolkit-validation",), ("gpu-feature-discovery",)),
    Operand("state-mig-manager", "nvidia-mig-manager", "mig-manager", "mig_manager", True,
            ("toolkit-validation",), ("nvidia-mig-manager",)),
    Operand("state-node-status-exporter", "nvidia-node-status-exporter", "node-status-exporter",
            "node_status_exporter", False, ("toolkit-validation",), ("nvidia-node-status-exporter",)),
)
BY_DAEMONSET = {o.daemonset: o for o in OPERANDS}
# With spec.devicePlugin.config set, TransformDevicePlugin keeps the config-manager sidecar and its init twin.
CONFIG_MANAGER_INIT, CONFIG_MANAGER = "config-manager-init", "config-manager"


def is_operand_pod(pod) -> bool:
    """A pod the GPU Operator's DaemonSets own (namespace gpu-operator, app.kubernetes.io/part-of=gpu-operator)."""
    return pod.metadata.namespace == NAMESPACE and pod.metadata.labels.get(PART_OF[0]) == PART_OF[1]
