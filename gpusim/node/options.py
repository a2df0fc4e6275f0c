"""The configuration each GPU node component reads when the GPU Operator starts it (checked when a
scenario is loaded, so a bad ConfigMap or node label is an input error, as the component would fail):

- the NVIDIA device plugin's config file, which the plugin's config-manager sidecar picks by the node
  label ``nvidia.com/device-plugin.config`` among the keys of the ConfigMap that ClusterPolicy
  ``spec.devicePlugin.config`` names (NVIDIA/k8s-device-plugin cmd/config-manager, api/config/v1);
- mig-manager's mig-parted config and the layout the node label ``nvidia.com/mig.config`` asks for
  (NVIDIA/mig-parted cmd/nvidia-mig-manager);
- HAMi's device plugin settings (Project-HAMi/HAMi charts, ConfigMap ``hami-device-plugin``).

- the kubelet's KubeletConfiguration topology fields, per NodePool ``spec.kubelet`` (validated as
  pkg/kubelet/apis/config/validation does, and as the Topology Manager's NewManager would refuse them at start).

Each check records what it resolved on the scenario (``plugin_configs``, ``mig_layouts``,
``mig_strategies``, ``hami``, ``kubelet_configs``) for the simulation to build the node components from.
"""
from __future__ import annotations

from typing import Any

import yaml

from ..api.errors import FieldError
from ..api.nvidia_v1 import MIG_STRATEGIES, OPERATOR_NAMESPACE
from ..api.scheme import ObjectErrors
from ..api.validation import unsupported
from ..hardware import mig, migparted
from ..hardware import topology as hwtopology
from . import hami, plugin_config, topologymanager
from .labels import sharing_labels

PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"   # read by the device plugin and GFD
MIG_CONFIG_LABEL = "nvidia.com/mig.config"              # input to mig-manager
MIG_CONFIG_STATE_LABEL = "nvidia.com/mig.config.state"  # written by mig-manager


def check_device_plugin(sc: Any, errors: ObjectErrors) -> None:
    """GPU Operator wiring: ClusterPolicy spec.devicePlugin.config {name, default} names a ConfigMap in
    the operator's namespace; a node's nvidia.com/device-plugin.config label picks another key. The
    chosen config's sharing settings change what the node advertises and the labels GFD writes."""
    cp = sc.cluster_policy
    ref = cp.spec.device_plugin.config if cp is not None else None
    env = cp.spec.device_plugin.env if cp is not None and isinstance(cp.spec.device_plugin.env, list) else []
    for i, e in enumerate(env):
        if isinstance(e, dict) and e.get("name") == "SHARED_DEVICES_ALLOCATION_POLICY":
            if e.get("value") not in ("distributed", "packed"):
                raise errors.err(cp, f"spec.devicePlugin.env[{i}].value",
                           unsupported(e.get("value"), ("distributed", "packed")))
            sc.shared_devices_allocation_policy = e["value"]
    cm = None
    if cp is not None and cp.spec.mig.strategy not in MIG_STRATEGIES:
        raise errors.err(cp, "spec.mig.strategy", unsupported(cp.spec.mig.strategy, MIG_STRATEGIES))
    if ref is not None and ref.name:
        cm = next((c for c in sc.configmaps if c.metadata.name == ref.name
                   and c.metadata.namespace == OPERATOR_NAMESPACE), None)
        if cm is None:
            raise errors.err(cp, "spec.devicePlugin.config.name", f'Not found: "{ref.name}": no ConfigMap '
                       f'"{ref.name}" in namespace "{OPERATOR_NAMESPACE}"')
        if ref.default and ref.default not in cm.data:
            raise errors.err(cp, "spec.devicePlugin.config.default", f'Not found: "{ref.default}": '
                       f'ConfigMap "{ref.name}" has keys: ' + ", ".join(sorted(cm.data)))
    parsed: dict[str, object] = {}
    for node in sc.nodes:
        name = node.metadata.name
        if name not in sc.gpus:
            continue
        key = node.metadata.labels.get(PLUGIN_CONFIG_LABEL) or (ref.default if ref is not None else "")
        if cm is None or not key:
            sc.plugin_configs[name] = plugin_config.default()
            continue
        if key not in cm.data:
            raise errors.err(node, f"metadata.labels[{PLUGIN_CONFIG_LABEL}]", f'Not found: "{key}": '
                       f'ConfigMap "{cm.metadata.name}" has keys: ' + ", ".join(sorted(cm.data)))
        if key not in parsed:
            try:
                parsed[key] = plugin_config.parse(cm.data[key])
            except FieldError as e:
                raise errors.err(cm, f"data[{key}]" + (f".{e.path}" if e.path else ""), e.message) from None
        cfg = parsed[key]
        model, count = sc.gpus[name]
        if cfg.strategy == "mps":
            # cmd/mps-control-daemon: 48 clients from compute capability 7.5 on, else 16
            cap = 48 if model.compute >= (7, 5) else 16
            if cfg.replicas_for("nvidia.com/gpu") > cap:
                raise errors.err(cm, f"data[{key}].sharing.mps.resources",
                           f"invalid device maximum allowed replicas exceeded: {cfg.replicas_for('nvidia.com/gpu')} > {cap}")
        sc.plugin_configs[name] = cfg
        node.metadata.labels.update(sharing_labels(model, cfg))


def check_mig_manager(sc: Any, errors: ObjectErrors) -> None:
    """GPU Operator MIG wiring: mig-manager applies the mig-parted config named by the node label
    ``nvidia.com/mig.config`` (from spec.migManager.config.name's ConfigMap, key config.yaml, or the
    operator's defaults for the model: all-disabled, all-1g.10gb, all-balanced, ...) and labels the
    node ``nvidia.com/mig.config.state=success``; the device plugin and GFD then expose the MIG devices
    with the ClusterPolicy's ``spec.mig.strategy`` (flags.migStrategy of the plugin config without one)."""
    cp = sc.cluster_policy
    custom = None
    if cp is not None and isinstance(cp.spec.mig_manager, dict):
        ref = (cp.spec.mig_manager.get("config") or {}).get("name")
        if ref:
            cm = next((c for c in sc.configmaps if c.metadata.name == ref
                       and c.metadata.namespace == OPERATOR_NAMESPACE), None)
            if cm is None or "config.yaml" not in cm.data:
                raise errors.err(cp, "spec.migManager.config.name", f'Not found: "{ref}": no ConfigMap '
                           f'"{ref}" with key config.yaml in namespace "{OPERATOR_NAMESPACE}"')
            try:
                custom = migparted.parse(cm.data["config.yaml"])
            except ValueError as e:
                raise errors.err(cm, "data[config.yaml]", str(e)) from None
            sc.mig_parted_config = custom
    for node in sc.nodes:
        name = node.metadata.name
        if name not in sc.gpus:
            continue
        model, count = sc.gpus[name]
        cfg = sc.plugin_configs.get(name)
        strategy = cp.spec.mig.strategy if cp is not None else ((cfg.flags.mig_strategy if cfg else None) or "none")
        sc.mig_strategies[name] = strategy
        wanted = node.metadata.labels.get(MIG_CONFIG_LABEL)
        if not wanted or cp is None:
            continue
        if not model.mig_capable and custom is None and wanted != "all-disabled":
            raise errors.err(node, f"metadata.labels[{MIG_CONFIG_LABEL}]", f'Invalid value: "{wanted}": '
                       f"{model.name} does not support MIG (mig-manager would set {MIG_CONFIG_STATE_LABEL}=failed)")
        configs = custom or migparted.default_configs(model)
        try:
            layouts = migparted.apply(configs, wanted, model, count)
        except (migparted.MigApplyError, mig.MigError) as e:
            raise errors.err(node, f"metadata.labels[{MIG_CONFIG_LABEL}]", f'Invalid value: "{wanted}": '
                       f"{e} (mig-manager would set {MIG_CONFIG_STATE_LABEL}=failed)") from None
        enabled = [g for g in layouts if g.mig_enabled]
        if enabled and strategy == "single":
            problem = mig.single_strategy_problem(layouts)
            if problem:
                raise errors.err(node, f"metadata.labels[{MIG_CONFIG_LABEL}]",
                           f'Invalid value: "{wanted}": with MIG strategy single the device plugin fails: {problem}')
        pcfg = sc.plugin_configs.get(name)
        if enabled and strategy != "none" and pcfg is not None and pcfg.strategy == "mps":
            raise errors.err(node, f"metadata.labels[{MIG_CONFIG_LABEL}]", f'Invalid value: "{wanted}": '
                       "the device plugin fails: sharing using MPS is not supported for MIG devices")
        sc.mig_layouts[name] = layouts
        node.metadata.labels[MIG_CONFIG_STATE_LABEL] = "success"
        if strategy != "none" and enabled:
            node.metadata.labels.update(mig.gfd_labels(strategy, model, layouts))


def check_hami(sc: Any, errors: ObjectErrors) -> None:
    """HAMi: request validation for every pod and job template; GPU nodes labelled ``gpu=on`` run HAMi's
    device plugin with the settings of ConfigMap kube-system/hami-device-plugin (see gpusim.node.hami)."""
    for pod in sc.pods:
        errors.raise_all(pod, hami.validate_pod_spec(pod.spec, "spec"))
    for job in sc.jobs:
        errors.raise_all(job, hami.validate_pod_spec(job.spec.template.spec, "spec.template.spec"))
    nodes = [n for n in sc.nodes if n.metadata.name in sc.gpus
             and n.metadata.labels.get(hami.NODE_LABEL) == hami.NODE_LABEL_VALUE]
    if not nodes:
        return
    cfg = hami.HamiConfig()
    cm = next((c for c in sc.configmaps if c.metadata.name == hami.CONFIGMAP_NAME
               and c.metadata.namespace == hami.CONFIGMAP_NAMESPACE), None)
    if cm is not None:
        if hami.CONFIGMAP_KEY not in cm.data:
            raise errors.err(cm, "data", f"Required value: key {hami.CONFIGMAP_KEY}")
        try:
            cfg = hami.parse_config(cm.data[hami.CONFIGMAP_KEY])
        except (ValueError, yaml.YAMLError) as e:
            raise errors.err(cm, f"data[{hami.CONFIGMAP_KEY}]", str(e)) from None
    for node in nodes:
        name = node.metadata.name
        if name in sc.mig_layouts or sc.plugin_configs.get(name, None) is not None \
                and sc.plugin_configs[name].strategy != "none":
            raise errors.err(node, f"metadata.labels[{hami.NODE_LABEL}]", "Forbidden: a HAMi node "
                       "cannot also use the NVIDIA device plugin's sharing or MIG in gpusim")
        sc.hami[name] = cfg


CPU_MANAGER_POLICIES = ("none", "static")   # pkg/kubelet/cm/cpumanager PolicyNone, PolicyStatic


def check_kubelet(sc: Any, errors: ObjectErrors) -> None:
    """NodePool ``spec.kubelet``: the Topology Manager fields with the kubelet's own validation messages
    (``validate_kubelet_config``), then what NewManager checks when the kubelet starts (policy options, at most
    ``max-allowable-numa-nodes`` NUMA nodes on the node's board). ``cpuManagerPolicy`` ``static`` is refused:
    gpusim does not model the CPU manager (its exclusive CPUs and NUMA hints)."""
    for pool in sc.node_pools:
        k = pool.spec.kubelet
        if k is None:
            continue
        config = {topologymanager.KUBELET_POLICY_FIELD: k.topology_manager_policy,
                  topologymanager.KUBELET_SCOPE_FIELD: k.topology_manager_scope,
                  topologymanager.KUBELET_OPTIONS_FIELD: dict(k.topology_manager_policy_options)}
        for message in topologymanager.validate_kubelet_config(config):
            field_ = "topologyManagerScope" if "topologyManagerScope" in message else "topologyManagerPolicy"
            raise errors.err(pool, f"spec.kubelet.{field_}", message)
        if k.cpu_manager_policy not in CPU_MANAGER_POLICIES:
            # cpumanager.NewManager
            raise errors.err(pool, "spec.kubelet.cpuManagerPolicy", f'unknown policy: "{k.cpu_manager_policy}"')
        if k.cpu_manager_policy != "none":
            raise errors.err(pool, "spec.kubelet.cpuManagerPolicy", unsupported(k.cpu_manager_policy, ("none",))
                             + " (gpusim does not model the CPU manager's static policy: exclusive CPUs and "
                               "their NUMA hints)")
        for i in range(pool.spec.count):
            name = f"{pool.metadata.name}-{i}"
            numa = node_numa_nodes(sc, name)
            try:
                topologymanager.manager_from_kubelet_config(config, numa, node_numa_distances(sc, name))
            except topologymanager.TopologyManagerError as e:
                # the NUMA-node limit is the policy's; every other NewManager error is about an option
                field_ = "topologyManagerPolicy" if "unsupported on machines" in str(e) else \
                    "topologyManagerPolicyOptions"
                raise errors.err(pool, f"spec.kubelet.{field_}", str(e)) from None
            sc.kubelet_configs[name] = config


def node_numa_nodes(sc: Any, node: str) -> list[int]:
    """The NUMA node ids of ``node``'s board (a node without one: a single NUMA node 0)."""
    key = sc.boards.get(node)
    return hwtopology.numa_nodes(sc.board_graphs[key]) if key is not None else [0]


def node_numa_distances(sc: Any, node: str) -> dict[int, list[int]]:
    key = sc.boards.get(node)
    return hwtopology.numa_distances(sc.board_graphs[key]) if key is not None else {0: [10]}
