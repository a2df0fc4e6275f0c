"""Loading a scenario: YAML files → validated, typed objects (the scenario contract of DESIGN.md).

Every error names the file, the document, the object (kind/namespace/name) and the field path.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

import yaml

from ..hardware import CATALOG, GPUModel
from .batch_v1 import Job
from . import batch_volcano_sh_v1alpha1 as vcbatch, scheduling_volcano_sh_v1beta1 as vcsched
from .core_v1 import NVIDIA_GPU, ConfigMap, Namespace, Node, Pod
from .duration import DurationError, parse_duration
from .errors import FieldError, InputError, Source
from .gpusim_v1alpha1 import ACTION_TYPES, FAULT_TYPES, Action, Fault, NodePool, Simulation, validate_feature_gates
from .kubescheduler_config_v1 import KubeSchedulerConfiguration
from . import kueue_x_k8s_io
from .nvidia_v1 import MIG_STRATEGIES, OPERATOR_NAMESPACE, ClusterPolicy
from .policy_v1 import PodDisruptionBudget, validate_pdb
from .quantity import QuantityError, parse_quantity
from .schema import decode
from .scheduling_x_k8s_io_v1alpha1 import ElasticQuota, PodGroup, validate_elastic_quota, validate_pod_group
from .scheduling_v1 import HIGHEST_USER_DEFINABLE_PRIORITY, SYSTEM_PRIORITY_CLASSES, PriorityClass
from .scheduling_v1alpha1 import Workload, validate_workload
from .validation import unsupported, validate_job, validate_name, validate_pod, validate_taint

KINDS: dict[tuple[str, str], type] = {
    ("v1", "Pod"): Pod, ("v1", "Node"): Node, ("v1", "Namespace"): Namespace, ("v1", "ConfigMap"): ConfigMap,
    ("batch/v1", "Job"): Job, ("scheduling.k8s.io/v1", "PriorityClass"): PriorityClass,
    ("gpusim.io/v1alpha1", "Simulation"): Simulation, ("gpusim.io/v1alpha1", "NodePool"): NodePool,
    ("gpusim.io/v1alpha1", "Fault"): Fault,
    ("gpusim.io/v1alpha1", "Action"): Action, ("policy/v1", "PodDisruptionBudget"): PodDisruptionBudget,
    ("kubescheduler.config.k8s.io/v1", "KubeSchedulerConfiguration"): KubeSchedulerConfiguration,
    ("nvidia.com/v1", "ClusterPolicy"): ClusterPolicy,
    ("scheduling.x-k8s.io/v1alpha1", "PodGroup"): PodGroup,
    ("scheduling.x-k8s.io/v1alpha1", "ElasticQuota"): ElasticQuota,
    ("scheduling.k8s.io/v1alpha1", "Workload"): Workload,   # alpha: needs featureGates.GenericWorkload
    ("scheduling.volcano.sh/v1beta1", "Queue"): vcsched.Queue,
    ("scheduling.volcano.sh/v1beta1", "PodGroup"): vcsched.PodGroup,
    ("batch.volcano.sh/v1alpha1", "Job"): vcbatch.Job,
    **kueue_x_k8s_io.KINDS,
}
SINGLETONS = ("Simulation", "KubeSchedulerConfiguration", "ClusterPolicy")   # the operator acts on one policy
PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"   # read by the device plugin and GFD
NAMESPACED = {"Pod", "ConfigMap", "Job", "PodDisruptionBudget", "PodGroup"}
# Kinds with a list of their own on Scenario; every other kind lands in Scenario.objects[resource].
LISTS = {"Pod": "pods", "Node": "nodes", "Namespace": "namespaces", "ConfigMap": "configmaps", "Job": "jobs",
         "PriorityClass": "priority_classes", "NodePool": "node_pools", "Fault": "faults", "Action": "actions",
         "PodDisruptionBudget": "pdbs", "PodGroup": "pod_groups"}


def resource_of(obj: Any) -> str:
    """Kind, or ``Kind.group`` where two API groups share a kind name (see controlplane.apiserver.resource_of)."""
    return getattr(type(obj), "RESOURCE", None) or obj.kind


def is_namespaced(obj: Any) -> bool:
    """A class may say so itself (``NAMESPACED = True``); the core kinds are listed in NAMESPACED."""
    flag = getattr(type(obj), "NAMESPACED", None)
    return flag if flag is not None else getattr(obj, "kind", "") in NAMESPACED
BUILTIN_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")
MAX_POOL_NODES = 100_000
# Versions whose scheduler behaviour differs where gpusim models it (taint message ≤1.33,
# resource Unresolvable ≥1.34, BalancedAllocation formula 1.36).
KUBERNETES_VERSIONS = ("1.33", "1.34", "1.35", "1.36")
MAX_GPUS_PER_NODE = 16


@dataclass
class Scenario:
    """Everything a simulation is built from. ``gpus`` maps node name → (model, count)."""

    simulation: Simulation = field(default_factory=Simulation)
    nodes: list[Node] = field(default_factory=list)
    gpus: dict[str, tuple[GPUModel, int]] = field(default_factory=dict)
    namespaces: list[Namespace] = field(default_factory=list)
    configmaps: list[ConfigMap] = field(default_factory=list)
    priority_classes: list[PriorityClass] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    jobs: list[Job] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    node_pools: list[NodePool] = field(default_factory=list)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    pod_groups: list[PodGroup] = field(default_factory=list)
    objects: dict[str, list] = field(default_factory=dict)           # resource → objects of the other kinds
    scheduler_config: Optional[KubeSchedulerConfiguration] = None
    cluster_policy: Optional[ClusterPolicy] = None
    plugin_configs: dict = field(default_factory=dict, repr=False)   # node name → device plugin Config
    mig_layouts: dict = field(default_factory=dict, repr=False)      # node name → list of mig.Layout per GPU
    mig_strategies: dict = field(default_factory=dict, repr=False)   # node name → none | single | mixed
    hami: dict = field(default_factory=dict, repr=False)             # node name → node.hami.HamiConfig
    mig_parted_config: Any = field(default=None, repr=False)         # ClusterPolicy migManager's ConfigMap
    shared_devices_allocation_policy: str = "distributed"            # device plugin env, v0.20
    scheduler_profiles: list = field(default_factory=list, repr=False)
    scheduler_queue: dict = field(default_factory=dict, repr=False)
    kueue_config: Any = field(default=None, repr=False)             # api.kueue_x_k8s_io.KueueConfig, None = no Kueue
    sources: dict[int, Source] = field(default_factory=dict, repr=False)

    def source(self, obj: Any) -> Optional[Source]:
        return self.sources.get(id(obj))


def _err(obj: Any, source: Optional[Source], path: str, message: str) -> InputError:
    meta = getattr(obj, "metadata", None)
    ns = meta.namespace if meta is not None and is_namespaced(obj) else ""
    return InputError(message, source, getattr(obj, "kind", ""), ns, meta.name if meta is not None else "", path)


def _raise_all(obj: Any, source: Optional[Source], errors: Iterable[tuple[str, str]]) -> None:
    errs = list(errors)
    if len(errs) == 1:
        raise _err(obj, source, errs[0][0], errs[0][1])
    if errs:
        raise _err(obj, source, "", "[" + ", ".join(f"{p}: {m}" for p, m in errs) + "]")


def decode_document(doc: Any, source: Source) -> Any:
    """One YAML document → typed object (strict)."""
    if not isinstance(doc, dict):
        raise InputError(f"expected a mapping (an object with apiVersion and kind), got {type(doc).__name__}", source)
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    name = (doc.get("metadata") or {}).get("name", "") if isinstance(doc.get("metadata"), dict) else ""
    if not api_version:
        raise InputError("apiVersion not set", source, str(kind or ""), "", name, "apiVersion")
    if not kind:
        raise InputError("kind not set", source, "", "", name, "kind")
    cls = KINDS.get((api_version, kind))
    if cls is None:
        ns = (doc.get("metadata") or {}).get("namespace", "") if isinstance(doc.get("metadata"), dict) else ""
        raise InputError(f'no matches for kind "{kind}" in version "{api_version}"', source, str(kind), ns, name, "")
    try:
        return decode(cls, doc)
    except FieldError as e:
        shell = cls()
        if hasattr(shell, "metadata"):
            shell.metadata.name = name
            shell.metadata.namespace = (doc.get("metadata") or {}).get("namespace") or "default"
        raise _err(shell, source, e.path, e.message) from None


def read_documents(path: str, text: Optional[str] = None) -> list[tuple[Any, Source]]:
    """Parse one file (or ``text`` labelled ``path``) into documents with their sources."""
    if text is None:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise InputError(f"{path}: cannot read file: {e.strerror}") from None
    out: list[tuple[Any, Source]] = []
    docs = []
    try:
        for doc in yaml.safe_load_all(text):
            docs.append(doc)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(e, "problem", None) or str(e)
        # The failing document is the one after the last that parsed.
        raise InputError(f"YAML syntax error{where}: {problem}", Source(path, len(docs) + 1)) from None
    for i, doc in enumerate(docs, start=1):
        if doc is None:
            continue
        out.append((doc, Source(path, i)))
    return out


def load(paths: Iterable[str] = (), texts: Iterable[tuple[str, str]] = ()) -> Scenario:
    """Load files (``paths``) and in-memory YAML (``texts`` as (label, text)) into a Scenario."""
    docs: list[tuple[Any, Source]] = []
    for p in paths:
        docs += read_documents(p)
    for label, text in texts:
        docs += read_documents(label, text)
    sc = Scenario()
    seen: dict[tuple[str, str, str], Source] = {}
    singletons: dict[str, list] = {k: [] for k in SINGLETONS}
    for doc, source in docs:
        obj = decode_document(doc, source)
        sc.sources[id(obj)] = source
        kind, resource = obj.kind, resource_of(obj)
        namespaced = is_namespaced(obj)
        if namespaced and not obj.metadata.namespace:
            obj.metadata.namespace = "default"
        if kind in SINGLETONS:
            singletons[kind].append(obj)
            continue
        if kind == "Pod" and not obj.metadata.name and obj.metadata.generate_name:
            raise _err(obj, source, "metadata.name", "Required value: gpusim needs explicit pod names "
                       "(generateName is only filled in by the apiserver)")
        _raise_all(obj, source, validate_name(obj.metadata.name, label=kind == "Namespace"))
        key = (resource, obj.metadata.namespace if namespaced else "", obj.metadata.name)
        if key in seen:
            raise _err(obj, source, "metadata.name", f'Duplicate value: "{obj.metadata.name}" (first defined in {seen[key]})')
        seen[key] = source
        if resource in LISTS:
            getattr(sc, LISTS[resource]).append(obj)
        else:
            sc.objects.setdefault(resource, []).append(obj)
    for kind, objs in singletons.items():
        if len(objs) > 1:
            raise InputError(f"at most one {kind} object is allowed; another is in {sc.sources[id(objs[0])]}",
                             sc.sources[id(objs[1])], kind, "", getattr(getattr(objs[1], "metadata", None), "name", ""))
    if singletons["Simulation"]:
        sc.simulation = singletons["Simulation"][0]
    if singletons["KubeSchedulerConfiguration"]:
        sc.scheduler_config = singletons["KubeSchedulerConfiguration"][0]
    if singletons["ClusterPolicy"]:
        sc.cluster_policy = singletons["ClusterPolicy"][0]
    _validate_simulation(sc)
    _build_scheduler(sc)
    _expand_pools(sc)
    _explicit_node_gpus(sc)
    _validate_objects(sc)
    _device_plugin_configs(sc)
    _mig_layouts(sc)
    _hami(sc)
    sc.kueue_config = kueue_x_k8s_io.validate_scenario(sc, lambda o, p, m: _err(o, sc.source(o), p, m))
    return sc


def _hami(sc: Scenario) -> None:
    """HAMi: request validation for every pod and job template; GPU nodes labelled ``gpu=on`` run HAMi's
    device plugin with the settings of ConfigMap kube-system/hami-device-plugin (see gpusim.node.hami)."""
    from ..node import hami
    for pod in sc.pods:
        _raise_all(pod, sc.source(pod), hami.validate_pod_spec(pod.spec, "spec"))
    for job in sc.jobs:
        _raise_all(job, sc.source(job), hami.validate_pod_spec(job.spec.template.spec, "spec.template.spec"))
    nodes = [n for n in sc.nodes if n.metadata.name in sc.gpus
             and n.metadata.labels.get(hami.NODE_LABEL) == hami.NODE_LABEL_VALUE]
    if not nodes:
        return
    cfg = hami.HamiConfig()
    cm = next((c for c in sc.configmaps if c.metadata.name == hami.CONFIGMAP_NAME
               and c.metadata.namespace == hami.CONFIGMAP_NAMESPACE), None)
    if cm is not None:
        if hami.CONFIGMAP_KEY not in cm.data:
            raise _err(cm, sc.source(cm), "data", f"Required value: key {hami.CONFIGMAP_KEY}")
        try:
            cfg = hami.parse_config(cm.data[hami.CONFIGMAP_KEY])
        except (ValueError, yaml.YAMLError) as e:
            raise _err(cm, sc.source(cm), f"data[{hami.CONFIGMAP_KEY}]", str(e)) from None
    for node in nodes:
        name = node.metadata.name
        if name in sc.mig_layouts or sc.plugin_configs.get(name, None) is not None \
                and sc.plugin_configs[name].strategy != "none":
            raise _err(node, sc.source(node), f"metadata.labels[{hami.NODE_LABEL}]", "Forbidden: a HAMi node "
                       "cannot also use the NVIDIA device plugin's sharing or MIG in gpusim")
        sc.hami[name] = cfg


MIG_CONFIG_LABEL = "nvidia.com/mig.config"              # input to mig-manager
MIG_CONFIG_STATE_LABEL = "nvidia.com/mig.config.state"  # written by mig-manager


def _mig_layouts(sc: Scenario) -> None:
    """GPU Operator MIG wiring: mig-manager applies the mig-parted config named by the node label
    ``nvidia.com/mig.config`` (from spec.migManager.config.name's ConfigMap, key config.yaml, or the
    operator's defaults for the model: all-disabled, all-1g.10gb, all-balanced, ...) and labels the
    node ``nvidia.com/mig.config.state=success``; the device plugin and GFD then expose the MIG devices
    with the ClusterPolicy's ``spec.mig.strategy`` (flags.migStrategy of the plugin config without one)."""
    from ..hardware import mig, migparted
    cp = sc.cluster_policy
    custom = None
    if cp is not None and isinstance(cp.spec.mig_manager, dict):
        ref = (cp.spec.mig_manager.get("config") or {}).get("name")
        if ref:
            cm = next((c for c in sc.configmaps if c.metadata.name == ref
                       and c.metadata.namespace == OPERATOR_NAMESPACE), None)
            if cm is None or "config.yaml" not in cm.data:
                raise _err(cp, sc.source(cp), "spec.migManager.config.name", f'Not found: "{ref}": no ConfigMap '
                           f'"{ref}" with key config.yaml in namespace "{OPERATOR_NAMESPACE}"')
            try:
                custom = migparted.parse(cm.data["config.yaml"])
            except ValueError as e:
                raise _err(cm, sc.source(cm), "data[config.yaml]", str(e)) from None
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
            raise _err(node, sc.source(node), f"metadata.labels[{MIG_CONFIG_LABEL}]", f'Invalid value: "{wanted}": '
                       f"{model.name} does not support MIG (mig-manager would set {MIG_CONFIG_STATE_LABEL}=failed)")
        configs = custom or migparted.default_configs(model)
        try:
            layouts = migparted.apply(configs, wanted, model, count)
        except (migparted.MigApplyError, mig.MigError) as e:
            raise _err(node, sc.source(node), f"metadata.labels[{MIG_CONFIG_LABEL}]", f'Invalid value: "{wanted}": '
                       f"{e} (mig-manager would set {MIG_CONFIG_STATE_LABEL}=failed)") from None
        enabled = [g for g in layouts if g.mig_enabled]
        if enabled and strategy == "single":
            problem = mig.single_strategy_problem(layouts)
            if problem:
                raise _err(node, sc.source(node), f"metadata.labels[{MIG_CONFIG_LABEL}]",
                           f'Invalid value: "{wanted}": with MIG strategy single the device plugin fails: {problem}')
        pcfg = sc.plugin_configs.get(name)
        if enabled and strategy != "none" and pcfg is not None and pcfg.strategy == "mps":
            raise _err(node, sc.source(node), f"metadata.labels[{MIG_CONFIG_LABEL}]", f'Invalid value: "{wanted}": '
                       "the device plugin fails: sharing using MPS is not supported for MIG devices")
        sc.mig_layouts[name] = layouts
        node.metadata.labels[MIG_CONFIG_STATE_LABEL] = "success"
        if strategy != "none" and enabled:
            node.metadata.labels.update(mig.gfd_labels(strategy, model, layouts))


def _device_plugin_configs(sc: Scenario) -> None:
    """GPU Operator wiring: ClusterPolicy spec.devicePlugin.config {name, default} names a ConfigMap in
    the operator's namespace; a node's nvidia.com/device-plugin.config label picks another key. The
    chosen config's sharing settings change what the node advertises and the labels GFD writes."""
    from ..node import plugin_config
    from ..node.labels import sharing_labels
    cp = sc.cluster_policy
    ref = cp.spec.device_plugin.config if cp is not None else None
    env = cp.spec.device_plugin.env if cp is not None and isinstance(cp.spec.device_plugin.env, list) else []
    for i, e in enumerate(env):
        if isinstance(e, dict) and e.get("name") == "SHARED_DEVICES_ALLOCATION_POLICY":
            if e.get("value") not in ("distributed", "packed"):
                raise _err(cp, sc.source(cp), f"spec.devicePlugin.env[{i}].value",
                           unsupported(e.get("value"), ("distributed", "packed")))
            sc.shared_devices_allocation_policy = e["value"]
    cm = None
    if cp is not None and cp.spec.mig.strategy not in MIG_STRATEGIES:
        raise _err(cp, sc.source(cp), "spec.mig.strategy", unsupported(cp.spec.mig.strategy, MIG_STRATEGIES))
    if ref is not None and ref.name:
        cm = next((c for c in sc.configmaps if c.metadata.name == ref.name
                   and c.metadata.namespace == OPERATOR_NAMESPACE), None)
        if cm is None:
            raise _err(cp, sc.source(cp), "spec.devicePlugin.config.name", f'Not found: "{ref.name}": no ConfigMap '
                       f'"{ref.name}" in namespace "{OPERATOR_NAMESPACE}"')
        if ref.default and ref.default not in cm.data:
            raise _err(cp, sc.source(cp), "spec.devicePlugin.config.default", f'Not found: "{ref.default}": '
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
            raise _err(node, sc.source(node), f"metadata.labels[{PLUGIN_CONFIG_LABEL}]", f'Not found: "{key}": '
                       f'ConfigMap "{cm.metadata.name}" has keys: ' + ", ".join(sorted(cm.data)))
        if key not in parsed:
            try:
                parsed[key] = plugin_config.parse(cm.data[key])
            except FieldError as e:
                raise _err(cm, sc.source(cm), f"data[{key}]" + (f".{e.path}" if e.path else ""), e.message) from None
        cfg = parsed[key]
        model, count = sc.gpus[name]
        if cfg.strategy == "mps":
            # cmd/mps-control-daemon: 48 clients from compute capability 7.5 on, else 16
            cap = 48 if model.compute >= (7, 5) else 16
            if cfg.replicas_for("nvidia.com/gpu") > cap:
                raise _err(cm, sc.source(cm), f"data[{key}].sharing.mps.resources",
                           f"invalid device maximum allowed replicas exceeded: {cfg.replicas_for('nvidia.com/gpu')} > {cap}")
        sc.plugin_configs[name] = cfg
        node.metadata.labels.update(sharing_labels(model, cfg))


def _duration(obj: Any, sc: Scenario, path: str, value: Optional[str], positive: bool = False) -> Optional[float]:
    if value is None:
        return None
    try:
        d = parse_duration(str(value))
    except DurationError as e:
        raise _err(obj, sc.source(obj), path, f'Invalid value: "{value}": {e}') from None
    if d < 0 or (positive and d == 0):
        raise _err(obj, sc.source(obj), path, f'Invalid value: "{value}": must be greater than 0')
    return d


def _build_scheduler(sc: Scenario) -> None:
    from ..scheduler.profile import build_profiles
    from ..scheduler.registry import in_tree_registry
    try:
        sc.scheduler_profiles, sc.scheduler_queue = build_profiles(sc.scheduler_config, in_tree_registry(),
                                                                   sc.simulation.spec.feature_gates)
    except FieldError as e:
        cfg = sc.scheduler_config
        raise InputError(e.message, sc.source(cfg), "KubeSchedulerConfiguration", "", "", e.path) from None


def _validate_simulation(sc: Scenario) -> None:
    sim = sc.simulation
    if sim.spec.seed < 0:
        raise _err(sim, sc.source(sim), "spec.seed", f'Invalid value: {sim.spec.seed}: must be greater than or equal to 0')
    _duration(sim, sc, "spec.until", sim.spec.until, positive=True)
    for f in dataclasses.fields(sim.spec.timing):
        from .schema import json_name
        _duration(sim, sc, f"spec.timing.{json_name(f)}", getattr(sim.spec.timing, f.name))
    if sim.spec.kubernetes_version not in KUBERNETES_VERSIONS:
        raise _err(sim, sc.source(sim), "spec.kubernetesVersion",
                   unsupported(sim.spec.kubernetes_version, tuple(KUBERNETES_VERSIONS)))
    _raise_all(sim, sc.source(sim), validate_feature_gates(sim.spec))


def _quantity(obj: Any, sc: Scenario, path: str, value: Any, positive: bool = True) -> None:
    try:
        q = parse_quantity(value)
    except QuantityError as e:
        raise _err(obj, sc.source(obj), path, f'Invalid value: "{value}": {e}') from None
    if q < 0 or (positive and q == 0):
        raise _err(obj, sc.source(obj), path, f'Invalid value: "{value}": must be greater than 0')


def _expand_pools(sc: Scenario) -> None:
    from ..node.labels import pool_node
    names = {n.metadata.name for n in sc.nodes}
    for pool in sc.node_pools:
        s, src = pool.spec, sc.source(pool)
        if not 1 <= s.count <= MAX_POOL_NODES:
            raise _err(pool, src, "spec.count", f"Invalid value: {s.count}: must be between 1 and {MAX_POOL_NODES}, inclusive")
        _quantity(pool, sc, "spec.cpu", s.cpu)
        _quantity(pool, sc, "spec.memory", s.memory)
        if s.pods < 1:
            raise _err(pool, src, "spec.pods", f"Invalid value: {s.pods}: must be greater than 0")
        model = None
        if s.gpu is not None:
            if s.gpu.model not in CATALOG:
                raise _err(pool, src, "spec.gpu.model", unsupported(s.gpu.model, tuple(CATALOG)))
            if not 0 <= s.gpu.count <= MAX_GPUS_PER_NODE:
                raise _err(pool, src, "spec.gpu.count", f"Invalid value: {s.gpu.count}: must be between 0 and {MAX_GPUS_PER_NODE}, inclusive")
            model = CATALOG[s.gpu.model]
            if s.gpu.vgpu is not None:
                model = _vgpu_model(pool, sc, model)
        for i, t in enumerate(s.taints):
            _raise_all(pool, src, validate_taint(t, f"spec.taints[{i}]"))
        for i in range(s.count):
            node = pool_node(pool, i, model)
            if node.metadata.name in names:
                raise _err(pool, src, "metadata.name", f'node "{node.metadata.name}" already exists')
            names.add(node.metadata.name)
            sc.nodes.append(node)
            sc.sources[id(node)] = src
            if model is not None and s.gpu.count:
                sc.gpus[node.metadata.name] = (model, s.gpu.count)


def _vgpu_model(pool: NodePool, sc: Scenario, physical: GPUModel) -> GPUModel:
    """A NodePool of VMs with time-sliced vGPUs: each vGPU is a GPU with the type's framebuffer."""
    from ..hardware import vgpu
    v, src = pool.spec.gpu.vgpu, sc.source(pool)
    try:
        t = vgpu.vgpu_type(v.type)
    except KeyError as e:
        raise _err(pool, src, "spec.gpu.vgpu.type", f'Unsupported value: "{v.type}": {e.args[0]}') from None
    if t.physical.name != physical.name:
        raise _err(pool, src, "spec.gpu.vgpu.type", f'Invalid value: "{v.type}": a {t.board} vGPU type runs on '
                   f"{t.physical.name}, not {physical.name}")
    if v.scheduler not in vgpu.SCHEDULERS:
        raise _err(pool, src, "spec.gpu.vgpu.scheduler", unsupported(v.scheduler, tuple(vgpu.SCHEDULERS)))
    if pool.spec.gpu.count > 1 and t.max_per_gpu > 1:
        # several vGPUs in one VM are supported for types that take a whole GPU (UNVERIFIED for every release)
        raise _err(pool, src, "spec.gpu.count", f"Invalid value: {pool.spec.gpu.count}: a VM gets one fractional "
                   f"vGPU ({v.type} is 1/{t.max_per_gpu} of a GPU); only whole-GPU types can be attached several times")
    return vgpu.guest_model(t)


def _explicit_node_gpus(sc: Scenario) -> None:
    """A plain v1 Node with capacity nvidia.com/gpu: N gets N GPUs of the model named by its
    nvidia.com/gpu.product label (a catalog name or product string)."""
    by_product = {m.product: m for m in CATALOG.values()} | dict(CATALOG)
    for node in sc.nodes:
        src = sc.source(node)
        for i, t in enumerate(node.spec.taints):
            _raise_all(node, src, validate_taint(t, f"spec.taints[{i}]"))
        for part in ("capacity", "allocatable"):
            for res, v in getattr(node.status, part).items():
                _quantity(node, sc, f"status.{part}[{res}]", v, positive=False)
        if node.metadata.name in sc.gpus or NVIDIA_GPU not in node.status.capacity:
            continue
        count = parse_quantity(node.status.capacity[NVIDIA_GPU])
        if count.denominator != 1 or not 0 < count <= MAX_GPUS_PER_NODE:
            raise _err(node, src, f"status.capacity[{NVIDIA_GPU}]", f'Invalid value: "{node.status.capacity[NVIDIA_GPU]}": '
                       f"must be an integer between 1 and {MAX_GPUS_PER_NODE}")
        product = node.metadata.labels.get("nvidia.com/gpu.product")
        if product not in by_product:
            raise _err(node, src, "metadata.labels[nvidia.com/gpu.product]",
                       f'Invalid value: "{product or ""}": a Node with {NVIDIA_GPU} capacity needs this label naming '
                       "a GPU model: " + ", ".join(sorted(CATALOG)))
        sc.gpus[node.metadata.name] = (by_product[product], int(count))


def _validate_objects(sc: Scenario) -> None:
    namespaces = set(BUILTIN_NAMESPACES) | {n.metadata.name for n in sc.namespaces}
    if sc.cluster_policy is not None:
        namespaces.add(OPERATOR_NAMESPACE)   # the operator's installation creates it
    from . import volcano_validation
    if volcano_validation.needed(sc):
        namespaces.add(volcano_validation.NAMESPACE)   # Volcano's installation creates it
    if any(k in sc.objects for k in kueue_x_k8s_io.KUEUE_KINDS + (kueue_x_k8s_io.Workload.RESOURCE,)):
        namespaces.add(kueue_x_k8s_io.CONFIG_NAMESPACE)   # Kueue's installation creates it
    for obj in sc.objects.get("LocalQueue", []) + sc.objects.get(kueue_x_k8s_io.Workload.RESOURCE, []):
        if obj.metadata.namespace not in namespaces:
            raise _err(obj, sc.source(obj), "metadata.namespace", f'namespaces "{obj.metadata.namespace}" not found')
    classes = dict(SYSTEM_PRIORITY_CLASSES)
    defaults = []
    for pc in sc.priority_classes:
        if pc.value > HIGHEST_USER_DEFINABLE_PRIORITY:
            raise _err(pc, sc.source(pc), "value", f"Invalid value: {pc.value}: maximum allowed value of a user "
                       f"defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}")
        if pc.preemption_policy not in (None, "PreemptLowerPriority", "Never"):
            raise _err(pc, sc.source(pc), "preemptionPolicy",
                       unsupported(pc.preemption_policy, ("Never", "PreemptLowerPriority")))
        classes[pc.metadata.name] = pc.value
        if pc.global_default:
            defaults.append(pc)
    if len(defaults) > 1:
        raise _err(defaults[1], sc.source(defaults[1]), "globalDefault", "Invalid value: true: "
                   f'PriorityClass "{defaults[0].metadata.name}" is already marked as default. Only one default can exist')
    nodes = {n.metadata.name for n in sc.nodes}
    for obj in [*sc.pods, *sc.jobs, *sc.configmaps, *sc.pdbs, *sc.pod_groups]:
        if obj.metadata.namespace not in namespaces:
            raise _err(obj, sc.source(obj), "metadata.namespace", f'namespaces "{obj.metadata.namespace}" not found')
    for pod in sc.pods:
        _raise_all(pod, sc.source(pod), validate_pod(pod))
        _check_pod_refs(pod, pod.spec, "spec", sc, classes, nodes)
    for pdb in sc.pdbs:
        _raise_all(pdb, sc.source(pdb), validate_pdb(pdb))
    for pg in sc.pod_groups:
        _raise_all(pg, sc.source(pg), validate_pod_group(pg))
    generic_workload = sc.simulation.spec.feature_gates.get("GenericWorkload", False)
    for w in sc.objects.get(Workload.RESOURCE, []):
        if not generic_workload:
            raise _err(w, sc.source(w), "", f'no matches for kind "Workload" in version "{w.api_version}" (alpha: '
                       "enable it with spec.featureGates.GenericWorkload: true in the Simulation)")
        if w.metadata.namespace not in namespaces:
            raise _err(w, sc.source(w), "metadata.namespace", f'namespaces "{w.metadata.namespace}" not found')
        _raise_all(w, sc.source(w), validate_workload(w))
    for obj, spec, path in [*((p, p.spec, "spec") for p in sc.pods),
                            *((j, j.spec.template.spec, "spec.template.spec") for j in sc.jobs)]:
        if spec.workload_ref is not None and not generic_workload:
            raise _err(obj, sc.source(obj), f"{path}.workloadRef", "Forbidden: alpha field; enable the feature gate "
                       "GenericWorkload in the Simulation's spec.featureGates (a real apiserver drops the field "
                       "silently when the gate is off)")
    quota_of: dict[str, Any] = {}
    for eq in sc.objects.get("ElasticQuota", []):
        if eq.metadata.namespace not in namespaces:
            raise _err(eq, sc.source(eq), "metadata.namespace", f'namespaces "{eq.metadata.namespace}" not found')
        _raise_all(eq, sc.source(eq), validate_elastic_quota(eq))
        if eq.metadata.namespace in quota_of:
            raise _err(eq, sc.source(eq), "metadata.namespace", "Forbidden: only one ElasticQuota per namespace is "
                       f'supported (scheduler-plugins uses the first; "{quota_of[eq.metadata.namespace]}" is already '
                       "defined)")
        quota_of[eq.metadata.namespace] = eq.metadata.name
    for job in sc.jobs:
        _raise_all(job, sc.source(job), validate_job(job))
        _check_pod_refs(job, job.spec.template.spec, "spec.template.spec", sc, classes, nodes)
    volcano_validation.validate(sc, namespaces, classes)
    for action in sc.actions:
        s, src = action.spec, sc.source(action)
        if s.type not in ACTION_TYPES:
            raise _err(action, src, "spec.type", unsupported(s.type, tuple(ACTION_TYPES)))
        _duration(action, sc, "spec.at", s.at)
        if s.node not in nodes:
            raise _err(action, src, "spec.node", f'Not found: "{s.node}": no such node in the scenario')
        if s.type == "LabelNode" and not s.labels:
            raise _err(action, src, "spec.labels", "Required value: LabelNode sets or removes at least one label")
        if s.type != "LabelNode" and s.labels:
            raise _err(action, src, "spec.labels", f"Forbidden: only LabelNode takes labels")
    for fault in sc.faults:
        s, src = fault.spec, sc.source(fault)
        if s.type not in FAULT_TYPES:
            raise _err(fault, src, "spec.type", unsupported(s.type, tuple(FAULT_TYPES)))
        _duration(fault, sc, "spec.at", s.at)
        _duration(fault, sc, "spec.downtime", s.downtime)
        if s.node not in nodes:
            raise _err(fault, src, "spec.node", f'Not found: "{s.node}": no such node in the scenario')
        if s.type == "XidError":
            n_gpus = sc.gpus.get(s.node, (None, 0))[1]
            if s.gpu is None:
                raise _err(fault, src, "spec.gpu", "Required value: the index of the GPU that reports the XID")
            if not 0 <= s.gpu < n_gpus:
                raise _err(fault, src, "spec.gpu", f"Invalid value: {s.gpu}: node {s.node} has {n_gpus} GPU(s)")
            if s.xid < 0:
                raise _err(fault, src, "spec.xid", f"Invalid value: {s.xid}: must be greater than or equal to 0")
        elif s.gpu is not None:
            raise _err(fault, src, "spec.gpu", f"Forbidden: only XidError faults name a GPU")
        if s.type in ("KubeletRestart", "DevicePluginCrash") and s.downtime is not None \
                and parse_duration(s.downtime) == 0:
            raise _err(fault, src, "spec.downtime", f'Invalid value: "{s.downtime}": must be greater than 0')
        if s.type == "NodeDown" and s.downtime is not None:
            raise _err(fault, src, "spec.downtime", "Forbidden: a NodeDown node does not come back in this version "
                       "of gpusim")
        if s.type == "XidError" and s.downtime is not None:
            raise _err(fault, src, "spec.downtime", "Forbidden: an XidError has no downtime; the device stays "
                       "Unhealthy until the device plugin restarts")


def _check_pod_refs(obj: Any, spec: Any, path: str, sc: Scenario, classes: dict[str, int], nodes: set[str]) -> None:
    src = sc.source(obj)
    if spec.priority_class_name and spec.priority_class_name not in classes:
        # plugin/pkg/admission/priority: the Priority admission plugin's message.
        raise _err(obj, src, f"{path}.priorityClassName", f"no PriorityClass with name {spec.priority_class_name} was found")
    if spec.node_name and spec.node_name not in nodes:
        raise _err(obj, src, f"{path}.nodeName", f'Not found: "{spec.node_name}": no such node in the scenario '
                   "(a real cluster accepts it and the pod garbage collector deletes the pod)")
