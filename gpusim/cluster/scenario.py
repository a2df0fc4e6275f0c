"""Loading a scenario: YAML files → validated, typed objects (the scenario contract of DESIGN.md).

The loader decodes every document (``api.scheme``), expands NodePools into Nodes, checks the references
between objects, and then runs each component's configuration check from the table in
``gpusim.cluster.components``. Every error names the file, the document, the object
(kind/namespace/name) and the field path.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

import yaml

from ..api.batch_v1 import Job, JobStatus
from ..api.core_v1 import NVIDIA_GPU, ConfigMap, Namespace, Node, NodeSpec, NodeStatus, Pod, PodStatus, Taint
from ..api.duration import DurationError, parse_duration
from ..api.errors import InputError, Source
from ..api.kueue_x_k8s_io import Workload as KueueWorkload
from ..api.gpusim_v1alpha1 import GPU_ALLOCATION_DRA, GPU_ALLOCATIONS, ACTION_TYPES, FAULT_TYPES, OPERATOR_FAULT_TYPES, Action, Fault, NodePool, Simulation, gate_enabled, kubernetes_version, validate_feature_gates
from ..api.kubescheduler_config_v1 import KubeSchedulerConfiguration
from ..api.meta import ObjectMeta
from ..api.nvidia_v1 import ClusterPolicy, section_enabled, validate_cluster_policy
from ..api.nvidia_operands import DEPLOY_PREFIX
from ..api.policy_v1 import PodDisruptionBudget, validate_pdb
from ..api.quantity import QuantityError, parse_quantity
from ..api.schema import cut, json_name
from ..api.scheme import ObjectErrors, decode_document, is_namespaced, object_error, raise_all, resource_of
from ..api.scheduling_x_k8s_io_v1alpha1 import PodGroup, validate_elastic_quota, validate_pod_group
from ..api.scheduling_v1 import HIGHEST_USER_DEFINABLE_PRIORITY, SYSTEM_PRIORITY_CLASSES, PriorityClass
from ..api.scheduling_v1alpha1 import validate_workload
from ..api import scheduling_k8s_io_v1alpha2 as schedv1alpha2
from ..api import resource_k8s_io_v1 as dra
from ..api import resource_nvidia_com_v1beta1 as nvres
from ..api.quantity import MAX_AMOUNT
from ..api.topology_node_k8s_io_v1alpha2 import KIND as NRT_KIND, validate_node_resource_topology
from ..api.validation import (TOO_LARGE, invalid, unsupported, validate_configmap_size, validate_job, validate_name,
                              validate_object_meta, validate_pod, validate_taint)
from ..hardware import CATALOG, GPUModel, vgpu
from ..hardware.catalog import BOARD_ONLY_MODELS
from ..hardware.mig import full_gpu_labels
from . import topology
from .components import COMPONENTS

# the operator acts on one policy; one compute fabric
SINGLETONS = ("Simulation", "KubeSchedulerConfiguration", "ClusterPolicy", "Fabric")
# Kinds with a list of their own on Scenario; every other kind lands in Scenario.objects[resource].
LISTS = {"Pod": "pods", "Node": "nodes", "Namespace": "namespaces", "ConfigMap": "configmaps", "Job": "jobs",
         "PriorityClass": "priority_classes", "NodePool": "node_pools", "Fault": "faults", "Action": "actions",
         "PodDisruptionBudget": "pdbs", "PodGroup": "pod_groups"}
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
    dra_nodes: set[str] = field(default_factory=set)   # GPU nodes served by NVIDIA's DRA driver (spec.gpu.allocation)
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
    join_at: dict[str, float] = field(default_factory=dict)         # node name → when it joins (NodePool joinAt)
    fabric: Any = None                                               # the Fabric document (api), None = default
    boards: dict = field(default_factory=dict, repr=False)           # node name → board key (cluster.topology)
    board_graphs: dict = field(default_factory=dict, repr=False)     # board key → server graph
    fabric_spec: Any = field(default=None, repr=False)               # hardware.fabric.FabricSpec
    fabric_nodes: list = field(default_factory=list, repr=False)     # nodes attached to the fabric, in order
    kubelet_configs: dict = field(default_factory=dict, repr=False)  # node name → KubeletConfiguration fields
    sources: dict[int, Source] = field(default_factory=dict, repr=False)

    def source(self, obj: Any) -> Optional[Source]:
        return self.sources.get(id(obj))



class _Strict:
    """PyYAML's safe loader, but a key repeated in one mapping is an error, as kubectl reports it (sigs.k8s.io/yaml
    → "error converting YAML to JSON: yaml: unmarshal errors: key "x" already set in map") instead of the
    last value silently winning."""

    def construct_mapping(self, node, deep=False):
        seen: set = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, (str, int, float, bool)) or key is None:
                if key in seen:
                    raise yaml.constructor.ConstructorError(None, None, f'key "{cut(str(key))}" already set in map',
                                                            key_node.start_mark)
                seen.add(key)
        return super().construct_mapping(node, deep)


class _StrictLoader(_Strict, yaml.SafeLoader):
    """The pure-Python loader: its messages and marks are the ones an invalid file is reported with."""


# libyaml's parser (when PyYAML was built with it) with the same constructor and resolver: several times faster on
# the scenarios a notebook generates; a document it refuses is parsed again by _StrictLoader, whose error (or
# documents) is what the user sees
_FastStrictLoader = type("_FastStrictLoader", (_Strict, yaml.CSafeLoader), {}) if yaml.__with_libyaml__ else None


def _fast_load_all(text: str) -> Optional[list]:
    """Every document of ``text`` through libyaml, or None when it is not available or refuses the text."""
    if _FastStrictLoader is None:
        return None
    try:
        return list(yaml.load_all(text, Loader=_FastStrictLoader))
    except Exception:   # noqa: BLE001 - any refusal: the pure-Python loader reports it as it always has
        return None


def read_documents(path: str, text: Optional[str] = None) -> list[tuple[Any, Source]]:
    """Parse one file (or ``text`` labelled ``path``) into documents with their sources."""
    if text is None:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise InputError(f"{path}: cannot read file: {e.strerror}") from None
        except UnicodeDecodeError as e:
            raise InputError(f"{path}: cannot read file: not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset "
                             f"{e.start}); Kubernetes manifests are UTF-8") from None
    out: list[tuple[Any, Source]] = []
    docs = _fast_load_all(text)
    if docs is None:
        docs = _read_strict(path, text)
    for i, doc in enumerate(docs, start=1):
        if doc is None:
            continue
        out.append((doc, Source(path, i)))
    return out


def _read_strict(path: str, text: str) -> list:
    """The documents of ``text`` through the pure-Python loader, or its error as an InputError."""
    docs: list = []
    try:
        for doc in yaml.load_all(text, Loader=_StrictLoader):
            docs.append(doc)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(e, "problem", None) or str(e)
        # The failing document is the one after the last that parsed.
        raise InputError(f"YAML syntax error{where}: {problem}", Source(path, len(docs) + 1)) from None
    except RecursionError:
        raise InputError("YAML nested too deeply to parse", Source(path, len(docs) + 1)) from None
    return docs


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
        _drop_system_fields(obj)
        sc.sources[id(obj)] = source
        kind, resource = obj.kind, resource_of(obj)
        namespaced = is_namespaced(obj)
        if namespaced and not obj.metadata.namespace:
            obj.metadata.namespace = "default"
        if kind in SINGLETONS:
            singletons[kind].append(obj)
            continue
        if kind == "Pod" and not obj.metadata.name and obj.metadata.generate_name:
            raise object_error(obj, source, "metadata.name", "Required value: gpusim needs explicit pod names "
                       "(generateName is only filled in by the apiserver)")
        raise_all(obj, source, validate_name(obj.metadata.name, label=kind == "Namespace"))
        raise_all(obj, source, validate_object_meta(obj.metadata))
        if kind == "ConfigMap":
            raise_all(obj, source, validate_configmap_size(obj.data, obj.binary_data or {}))
        key = (resource, obj.metadata.namespace if namespaced else "", obj.metadata.name)
        if key in seen:
            raise object_error(obj, source, "metadata.name", f'Duplicate value: "{obj.metadata.name}" (first defined in {seen[key]})')
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
        sc.cluster_policy = cp = singletons["ClusterPolicy"][0]
        raise_all(cp, sc.source(cp), validate_cluster_policy(cp))
    if singletons["Fabric"]:
        sc.fabric = singletons["Fabric"][0]
    _validate_simulation(sc)
    _expand_pools(sc)
    _registration_labels(sc)
    _explicit_node_gpus(sc)
    topology.resolve(sc)
    errors = ObjectErrors(sc.source)
    _validate_objects(sc, errors)
    for component in COMPONENTS:
        if component.check is not None:
            component.check(sc, errors)
    return sc


# What the apiserver fills in itself on create, whatever the request says (apimachinery
# rest.FillObjectMetaSystemFields and each strategy's PrepareForCreate): uid, creationTimestamp,
# resourceVersion, generation, deletionTimestamp; a Pod's and a Job's status start empty. Input copied from
# `kubectl get -o yaml` therefore loads like a fresh manifest and none of these fields drives the simulation.
_RESET_STATUS = {"Pod": PodStatus, "Job": JobStatus}


def _drop_system_fields(obj: Any) -> None:
    meta = getattr(obj, "metadata", None)
    if meta is not None and hasattr(meta, "uid"):
        meta.uid, meta.resource_version, meta.generation = "", "", 0
        meta.creation_timestamp = meta.deletion_timestamp = meta.deletion_grace_period_seconds = None
        meta.managed_fields = None
    status = _RESET_STATUS.get(getattr(obj, "kind", ""))
    if status is not None and getattr(obj, "api_version", "") in ("v1", "batch/v1"):
        obj.status = status()


def _duration(obj: Any, sc: Scenario, path: str, value: Optional[str], positive: bool = False) -> Optional[float]:
    if value is None:
        return None
    try:
        d = parse_duration(str(value))
    except DurationError as e:
        raise object_error(obj, sc.source(obj), path, f'Invalid value: "{value}": {e}') from None
    if d < 0 or (positive and d == 0):
        raise object_error(obj, sc.source(obj), path, f'Invalid value: "{value}": must be greater than 0')
    return d


def _validate_simulation(sc: Scenario) -> None:
    sim = sc.simulation
    if sim.spec.seed < 0:
        raise object_error(sim, sc.source(sim), "spec.seed", f'Invalid value: {sim.spec.seed}: must be greater than or equal to 0')
    _duration(sim, sc, "spec.until", sim.spec.until, positive=True)
    for f in dataclasses.fields(sim.spec.timing):
        _duration(sim, sc, f"spec.timing.{json_name(f)}", getattr(sim.spec.timing, f.name))
    if sim.spec.kubernetes_version not in KUBERNETES_VERSIONS:
        raise object_error(sim, sc.source(sim), "spec.kubernetesVersion",
                   unsupported(sim.spec.kubernetes_version, tuple(KUBERNETES_VERSIONS)))
    raise_all(sim, sc.source(sim), validate_feature_gates(sim.spec))


def _quantity(obj: Any, sc: Scenario, path: str, value: Any, positive: bool = True) -> None:
    try:
        q = parse_quantity(value)
    except QuantityError as e:
        raise object_error(obj, sc.source(obj), path, invalid(value, str(e))) from None
    if q < 0 or (positive and q == 0):
        raise object_error(obj, sc.source(obj), path, invalid(value, "must be greater than 0"))
    if q > MAX_AMOUNT:
        raise object_error(obj, sc.source(obj), path, invalid(value, TOO_LARGE))


def _expand_pools(sc: Scenario) -> None:
    names = {n.metadata.name for n in sc.nodes}
    for pool in sc.node_pools:
        s, src = pool.spec, sc.source(pool)
        if not 1 <= s.count <= MAX_POOL_NODES:
            raise object_error(pool, src, "spec.count", f"Invalid value: {s.count}: must be between 1 and {MAX_POOL_NODES}, inclusive")
        _quantity(pool, sc, "spec.cpu", s.cpu)
        _quantity(pool, sc, "spec.memory", s.memory)
        if s.pods < 1:
            raise object_error(pool, src, "spec.pods", f"Invalid value: {s.pods}: must be greater than 0")
        model = None
        if s.gpu is not None:
            board_only = BOARD_ONLY_MODELS.get(s.gpu.model)
            if board_only is not None and s.gpu.topology != board_only[1]:
                raise object_error(pool, src, "spec.gpu.topology", f'Required value: {s.gpu.model} GPUs come only on '
                                   f'the "{board_only[1]}" board: set spec.gpu.topology: {board_only[1]}')
            if s.gpu.model not in CATALOG and board_only is None:
                raise object_error(pool, src, "spec.gpu.model", unsupported(s.gpu.model, tuple(CATALOG)))
            if not 0 <= s.gpu.count <= MAX_GPUS_PER_NODE:
                raise object_error(pool, src, "spec.gpu.count", f"Invalid value: {s.gpu.count}: must be between 0 and {MAX_GPUS_PER_NODE}, inclusive")
            model = board_only[0] if board_only is not None else CATALOG[s.gpu.model]
            if s.gpu.allocation not in GPU_ALLOCATIONS:
                raise object_error(pool, src, "spec.gpu.allocation", unsupported(s.gpu.allocation, GPU_ALLOCATIONS))
            if s.gpu.allocation == GPU_ALLOCATION_DRA and kubernetes_version(sc.simulation.spec) < DRA_V1:
                raise object_error(pool, src, "spec.gpu.allocation", "Forbidden: NVIDIA's DRA driver publishes "
                                   f"resource.k8s.io/v1 ResourceSlices, served from Kubernetes 1.34 on; "
                                   f"spec.kubernetesVersion is {sc.simulation.spec.kubernetes_version}")
            if s.gpu.allocation == GPU_ALLOCATION_DRA and sc.cluster_policy is not None \
                    and section_enabled(sc.cluster_policy.spec, "device_plugin", True) \
                    and s.labels.get(DEPLOY_PREFIX + "device-plugin") != "false":
                raise object_error(pool, src, "spec.gpu.allocation", "Forbidden: with a ClusterPolicy the GPU Operator "
                                   "would also run its device plugin on these nodes; disable it as NVIDIA's DRA driver "
                                   "asks (ClusterPolicy spec.devicePlugin.enabled: false, or the pool's label "
                                   'nvidia.com/gpu.deploy.device-plugin: "false")')
            if s.gpu.allocation == GPU_ALLOCATION_DRA and s.gpu.vgpu is not None:
                raise object_error(pool, src, "spec.gpu.vgpu", "Forbidden: vGPU nodes use the device plugin; "
                                   "spec.gpu.allocation dra serves whole physical GPUs")
            if s.gpu.vgpu is not None:
                model = _vgpu_model(pool, sc, model)
        for i, t in enumerate(s.taints):
            raise_all(pool, src, validate_taint(t, f"spec.taints[{i}]"))
        join = _duration(pool, sc, "spec.joinAt", s.join_at)
        for i in range(s.count):
            node = pool_node(pool, i, model)
            if node.metadata.name in names:
                raise object_error(pool, src, "metadata.name", f'node "{node.metadata.name}" already exists')
            names.add(node.metadata.name)
            sc.nodes.append(node)
            sc.sources[id(node)] = src
            if join:
                sc.join_at[node.metadata.name] = join
            if model is not None and s.gpu.count:
                sc.gpus[node.metadata.name] = (model, s.gpu.count)
                if s.gpu.allocation == GPU_ALLOCATION_DRA:
                    sc.dra_nodes.add(node.metadata.name)


def pool_node(pool: NodePool, index: int, model: Optional[GPUModel]) -> Node:
    """Node ``<pool>-<index>`` of a NodePool, with the kubelet's well-known labels (k8s.io/api/core/v1
    well_known_labels.go) and, on GPU nodes, the labels GPU Feature Discovery writes for whole GPUs
    (NVIDIA/k8s-device-plugin internal/lm/resource.go; ``nvidia.com/vgpu.present`` in a vGPU guest). GPU
    capacity is not set here: the kubelet adds it once the device plugin has registered."""
    s = pool.spec
    name = f"{pool.metadata.name}-{index}"
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
              "gpusim.io/node-pool": pool.metadata.name}
    if model is not None and s.gpu is not None and s.gpu.count:
        labels.update(full_gpu_labels(model, s.gpu.count))
        if s.gpu.vgpu is not None:
            labels["nvidia.com/vgpu.present"] = "true"
    labels.update(s.labels)
    base = {"cpu": str(s.cpu), "memory": str(s.memory), "pods": str(s.pods)}
    return Node(metadata=ObjectMeta(name=name, labels=labels),
                spec=NodeSpec(taints=[Taint(key=t.key, value=t.value, effect=t.effect) for t in s.taints]),
                status=NodeStatus(capacity=dict(base), allocatable=dict(base)))


def _vgpu_model(pool: NodePool, sc: Scenario, physical: GPUModel) -> GPUModel:
    """A NodePool of VMs with time-sliced vGPUs: each vGPU is a GPU with the type's framebuffer."""
    v, src = pool.spec.gpu.vgpu, sc.source(pool)
    try:
        t = vgpu.vgpu_type(v.type)
    except KeyError as e:
        raise object_error(pool, src, "spec.gpu.vgpu.type", f'Unsupported value: "{v.type}": {e.args[0]}') from None
    if t.physical.name != physical.name:
        raise object_error(pool, src, "spec.gpu.vgpu.type", f'Invalid value: "{v.type}": a {t.board} vGPU type runs on '
                   f"{t.physical.name}, not {physical.name}")
    if v.scheduler not in vgpu.SCHEDULERS:
        raise object_error(pool, src, "spec.gpu.vgpu.scheduler", unsupported(v.scheduler, tuple(vgpu.SCHEDULERS)))
    if pool.spec.gpu.count > 1 and t.max_per_gpu > 1:
        # several vGPUs in one VM are supported for types that take a whole GPU (UNVERIFIED for every release)
        raise object_error(pool, src, "spec.gpu.count", f"Invalid value: {pool.spec.gpu.count}: a VM gets one fractional "
                   f"vGPU ({v.type} is 1/{t.max_per_gpu} of a GPU); only whole-GPU types can be attached several times")
    return vgpu.guest_model(t)


def _registration_labels(sc: Scenario) -> None:
    """The labels the kubelet puts on the Node it registers (pkg/kubelet/kubelet_node_status.go initialNode:
    kubernetes.io/hostname, kubernetes.io/os, kubernetes.io/arch), so a plain v1 Node written without them is
    selected by hostname like a real one; labels the scenario sets are kept (as --hostname-override would)."""
    for node in sc.nodes:
        labels = node.metadata.labels
        labels.setdefault("kubernetes.io/hostname", node.metadata.name)
        labels.setdefault("kubernetes.io/os", "linux")
        labels.setdefault("kubernetes.io/arch", "amd64")


def _explicit_node_gpus(sc: Scenario) -> None:
    """A plain v1 Node with capacity nvidia.com/gpu: N gets N GPUs of the model named by its
    nvidia.com/gpu.product label (a catalog name or product string)."""
    by_product = {m.product: m for m in CATALOG.values()} | dict(CATALOG)
    for node in sc.nodes:
        src = sc.source(node)
        for i, t in enumerate(node.spec.taints):
            raise_all(node, src, validate_taint(t, f"spec.taints[{i}]"))
        for part in ("capacity", "allocatable"):
            for res, v in getattr(node.status, part).items():
                _quantity(node, sc, f"status.{part}[{res}]", v, positive=False)
        if node.metadata.name in sc.gpus or NVIDIA_GPU not in node.status.capacity:
            continue
        count = parse_quantity(node.status.capacity[NVIDIA_GPU])
        if count.denominator != 1 or not 0 < count <= MAX_GPUS_PER_NODE:
            raise object_error(node, src, f"status.capacity[{NVIDIA_GPU}]", f'Invalid value: "{node.status.capacity[NVIDIA_GPU]}": '
                       f"must be an integer between 1 and {MAX_GPUS_PER_NODE}")
        product = node.metadata.labels.get("nvidia.com/gpu.product")
        if product not in by_product:
            raise object_error(node, src, "metadata.labels[nvidia.com/gpu.product]",
                       f'Invalid value: "{product or ""}": a Node with {NVIDIA_GPU} capacity needs this label naming '
                       "a GPU model: " + ", ".join(sorted(CATALOG)))
        sc.gpus[node.metadata.name] = (by_product[product], int(count))


def _validate_objects(sc: Scenario, errors: ObjectErrors) -> None:
    """Per-object validation of the core kinds and the references between objects; fills in the
    namespaces and PriorityClasses that ``errors`` hands on to the component checks."""
    namespaces = set(BUILTIN_NAMESPACES) | {n.metadata.name for n in sc.namespaces}
    # the namespaces the components' installations create (gpu-operator, volcano-system, kueue-system)
    namespaces |= {c.namespace for c in COMPONENTS if c.namespace and c.needed(sc)}
    errors.namespaces = namespaces
    for obj in sc.objects.get("LocalQueue", []) + sc.objects.get(KueueWorkload.RESOURCE, []):
        if obj.metadata.namespace not in namespaces:
            raise object_error(obj, sc.source(obj), "metadata.namespace", f'namespaces "{obj.metadata.namespace}" not found')
    classes = dict(SYSTEM_PRIORITY_CLASSES)
    defaults = []
    for pc in sc.priority_classes:
        if pc.value > HIGHEST_USER_DEFINABLE_PRIORITY:
            raise object_error(pc, sc.source(pc), "value", f"Invalid value: {pc.value}: maximum allowed value of a user "
                       f"defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}")
        if pc.preemption_policy not in (None, "PreemptLowerPriority", "Never"):
            raise object_error(pc, sc.source(pc), "preemptionPolicy",
                       unsupported(pc.preemption_policy, ("Never", "PreemptLowerPriority")))
        classes[pc.metadata.name] = pc.value
        if pc.global_default:
            defaults.append(pc)
    if len(defaults) > 1:
        raise object_error(defaults[1], sc.source(defaults[1]), "globalDefault", "Invalid value: true: "
                   f'PriorityClass "{defaults[0].metadata.name}" is already marked as default. Only one default can exist')
    nodes = {n.metadata.name for n in sc.nodes}
    for nrt in sc.objects.get(NRT_KIND, []):
        raise_all(nrt, sc.source(nrt), validate_node_resource_topology(nrt))
        if nrt.metadata.name not in nodes:
            raise object_error(nrt, sc.source(nrt), "metadata.name", f'Not found: "{nrt.metadata.name}": a '
                               "NodeResourceTopology is named after its node; no such node in the scenario")
    for obj in [*sc.pods, *sc.jobs, *sc.configmaps, *sc.pdbs, *sc.pod_groups]:
        if obj.metadata.namespace not in namespaces:
            raise object_error(obj, sc.source(obj), "metadata.namespace", f'namespaces "{obj.metadata.namespace}" not found')
    comparison_operators = gate_enabled(sc.simulation.spec, "TaintTolerationComparisonOperators")
    if not gate_enabled(sc.simulation.spec, "DynamicResourceAllocation"):
        # the apiserver drops a disabled gate's fields (pkg/api/pod dropDisabledDynamicResourceAllocationFields);
        # gpusim refuses them rather than run the pod without the devices it claims
        for obj, spec, path in [*((p, p.spec, "spec") for p in sc.pods),
                                *((j, j.spec.template.spec, "spec.template.spec") for j in sc.jobs)]:
            if spec.resource_claims:
                raise object_error(obj, sc.source(obj), f"{path}.resourceClaims", "Forbidden: needs the "
                                   "DynamicResourceAllocation feature gate (off by default before Kubernetes 1.34)")
    for pod in sc.pods:
        raise_all(pod, sc.source(pod), validate_pod(pod, comparison_operators))
        _check_pod_refs(pod, pod.spec, "spec", sc, classes, nodes)
    for pdb in sc.pdbs:
        raise_all(pdb, sc.source(pdb), validate_pdb(pdb))
    _validate_dra(sc, namespaces)
    for pg in sc.pod_groups:
        raise_all(pg, sc.source(pg), validate_pod_group(pg))
    _check_native_gang(sc, namespaces)
    quota_of: dict[str, Any] = {}
    for eq in sc.objects.get("ElasticQuota", []):
        if eq.metadata.namespace not in namespaces:
            raise object_error(eq, sc.source(eq), "metadata.namespace", f'namespaces "{eq.metadata.namespace}" not found')
        raise_all(eq, sc.source(eq), validate_elastic_quota(eq))
        if eq.metadata.namespace in quota_of:
            raise object_error(eq, sc.source(eq), "metadata.namespace", "Forbidden: only one ElasticQuota per namespace is "
                       f'supported (scheduler-plugins uses the first; "{quota_of[eq.metadata.namespace]}" is already '
                       "defined)")
        quota_of[eq.metadata.namespace] = eq.metadata.name
    for job in sc.jobs:
        raise_all(job, sc.source(job), validate_job(job, comparison_operators))
        _check_pod_refs(job, job.spec.template.spec, "spec.template.spec", sc, classes, nodes)
    errors.priority_classes = classes
    errors.nodes = nodes
    for action in sc.actions:
        s, src = action.spec, sc.source(action)
        if s.type not in ACTION_TYPES:
            raise object_error(action, src, "spec.type", unsupported(s.type, tuple(ACTION_TYPES)))
        _duration(action, sc, "spec.at", s.at)
        if s.node not in nodes:
            raise object_error(action, src, "spec.node", f'Not found: "{s.node}": no such node in the scenario')
        if s.type == "LabelNode" and not s.labels:
            raise object_error(action, src, "spec.labels", "Required value: LabelNode sets or removes at least one label")
        if s.type != "LabelNode" and s.labels:
            raise object_error(action, src, "spec.labels", "Forbidden: only LabelNode takes labels")
    for fault in sc.faults:
        _validate_fault(sc, fault, nodes)


# Fault types that take a GPU index, and those that may last a ``downtime`` (and their default, if any).
GPU_FAULTS = ("XidError", "NVLinkError")
DOWNTIME_FAULTS = ("KubeletRestart", "DevicePluginCrash", "NodeDown", "DriverFailure", "ToolkitFailure",
                   "RuntimeClassMissing")


DRA_V1 = (1, 34)   # resource.k8s.io/v1 is served (DRA GA) from this release on


def _validate_dra(sc: Scenario, namespaces: set[str]) -> None:
    """resource.k8s.io/v1 objects and ComputeDomains: per-object validation; claims and templates live in existing namespaces."""
    validators = {dra.DeviceClass.RESOURCE: dra.validate_device_class, dra.ResourceClaim.RESOURCE:
                  dra.validate_resource_claim, dra.ResourceClaimTemplate.RESOURCE: dra.validate_resource_claim_template,
                  dra.ResourceSlice.RESOURCE: dra.validate_resource_slice,
                  nvres.ComputeDomain.RESOURCE: nvres.validate_compute_domain}
    version = kubernetes_version(sc.simulation.spec)
    for resource, validate in validators.items():
        for obj in sc.objects.get(resource, []):
            if version < DRA_V1 and obj.api_version == dra.GROUP_VERSION:
                # kubectl against an apiserver that does not serve the version (RESTMapper: no matches for kind)
                raise object_error(obj, sc.source(obj), "apiVersion",
                                   f'no matches for kind "{obj.kind}" in version "{obj.api_version}": served from '
                                   f"Kubernetes 1.34 on; spec.kubernetesVersion is {sc.simulation.spec.kubernetes_version}")
            if is_namespaced(obj) and obj.metadata.namespace not in namespaces:
                raise object_error(obj, sc.source(obj), "metadata.namespace",
                                   f'namespaces "{obj.metadata.namespace}" not found')
            raise_all(obj, sc.source(obj), validate(obj))


def _validate_fault(sc: Scenario, fault: Fault, nodes: set[str]) -> None:
    s, src = fault.spec, sc.source(fault)
    if s.type not in FAULT_TYPES:
        raise object_error(fault, src, "spec.type", unsupported(s.type, tuple(FAULT_TYPES)))
    _duration(fault, sc, "spec.at", s.at)
    _duration(fault, sc, "spec.downtime", s.downtime)
    if s.node not in nodes:
        raise object_error(fault, src, "spec.node", f'Not found: "{s.node}": no such node in the scenario')
    if s.node in sc.dra_nodes and s.type in ("DevicePluginCrash", "XidError", "NVLinkError", "MigConfigFailure"):
        raise object_error(fault, src, "spec.type", f'Invalid value: "{s.type}": node {s.node} serves its GPUs '
                           "through NVIDIA's DRA driver (spec.gpu.allocation: dra), which gpusim does not fault")
    if s.type in GPU_FAULTS:
        n_gpus = sc.gpus.get(s.node, (None, 0))[1]
        if s.gpu is None:
            raise object_error(fault, src, "spec.gpu", "Required value: the index of the GPU that reports the XID")
        if not 0 <= s.gpu < n_gpus:
            raise object_error(fault, src, "spec.gpu", f"Invalid value: {s.gpu}: node {s.node} has {n_gpus} GPU(s)")
        if s.xid < 0:
            raise object_error(fault, src, "spec.xid", f"Invalid value: {s.xid}: must be greater than or equal to 0")
    elif s.gpu is not None:
        raise object_error(fault, src, "spec.gpu", "Forbidden: only XidError and NVLinkError faults name a GPU")
    if s.type != "XidError" and s.xid != 79:
        raise object_error(fault, src, "spec.xid", "Forbidden: only XidError faults take an XID number "
                   "(NVLinkError is Xid 74)")
    if s.type in OPERATOR_FAULT_TYPES and sc.cluster_policy is None:
        raise object_error(fault, src, "spec.type", f'Invalid value: "{s.type}": needs a ClusterPolicy (the GPU '
                   "Operator deploys the component this fault breaks)")
    if s.type in ("DriverFailure", "ToolkitFailure", "MigConfigFailure") and s.node not in sc.gpus:
        raise object_error(fault, src, "spec.node", f'Invalid value: "{s.node}": {s.type} needs a GPU node')
    if s.type == "MigConfigFailure" and not sc.gpus[s.node][0].mig_capable:
        raise object_error(fault, src, "spec.node", f'Invalid value: "{s.node}": {sc.gpus[s.node][0].name} does '
                   "not support MIG, so mig-manager has nothing to apply")
    if s.downtime is not None:
        if s.type not in DOWNTIME_FAULTS:
            raise object_error(fault, src, "spec.downtime", f"Forbidden: {s.type} has no downtime"
                       + ("; the device stays Unhealthy until the device plugin restarts" if s.type in GPU_FAULTS
                          else ""))
        if parse_duration(s.downtime) == 0:
            raise object_error(fault, src, "spec.downtime", f'Invalid value: "{s.downtime}": must be greater than 0')


def _check_pod_refs(obj: Any, spec: Any, path: str, sc: Scenario, classes: dict[str, int], nodes: set[str]) -> None:
    src = sc.source(obj)
    if spec.priority_class_name and spec.priority_class_name not in classes:
        # plugin/pkg/admission/priority: the Priority admission plugin's message.
        raise object_error(obj, src, f"{path}.priorityClassName", f"no PriorityClass with name {spec.priority_class_name} was found")
    if spec.node_name and spec.node_name not in nodes:
        raise object_error(obj, src, f"{path}.nodeName", f'Not found: "{spec.node_name}": no such node in the scenario '
                   "(a real cluster accepts it and the pod garbage collector deletes the pod)")


def load_profiles(text: Optional[str] = None) -> dict[str, Any]:
    """Resolved scheduler profiles (scheduler name → ProfileSpec) of a KubeSchedulerConfiguration in YAML
    ``text``; without text, the default profile."""
    sc = load(texts=[("<profiles>", text)] if text is not None else [])
    return {p.scheduler_name: p for p in sc.scheduler_profiles}


# Which scheduling.k8s.io version serves native gang scheduling in each release (KEP-4671): 1.35 serves
# v1alpha1 (Workload.spec.podGroups, pod spec.workloadRef); 1.36 serves v1alpha2 (Workload.spec.podGroupTemplates,
# PodGroup, pod spec.schedulingGroup) and no longer serves v1alpha1 (kubernetes/kubernetes#136976).
NATIVE_GANG_VERSION = {"1.35": "scheduling.k8s.io/v1alpha1", "1.36": "scheduling.k8s.io/v1alpha2"}
NATIVE_GANG_POD_FIELD = {"scheduling.k8s.io/v1alpha1": "workloadRef", "scheduling.k8s.io/v1alpha2": "schedulingGroup"}


def _check_native_gang(sc: Scenario, namespaces: Any) -> None:
    """The alpha GenericWorkload objects and pod fields: gate on, the API version the release serves (an
    apiserver answers 'no matches for kind' for a version it does not serve), namespace, validation."""
    version = sc.simulation.spec.kubernetes_version
    served = NATIVE_GANG_VERSION.get(version)
    generic_workload = sc.simulation.spec.feature_gates.get("GenericWorkload", False)
    objs = [*sc.objects.get("Workload.scheduling.k8s.io", []), *sc.objects.get(schedv1alpha2.PodGroup.RESOURCE, [])]
    for obj in objs:
        if not generic_workload:
            raise object_error(obj, sc.source(obj), "", f'no matches for kind "{obj.kind}" in version "{obj.api_version}" '
                       "(alpha: enable it with spec.featureGates.GenericWorkload: true in the Simulation)")
        if obj.api_version != served:
            hint = (f"Kubernetes {version} serves {served}" if served else
                    f"Kubernetes {version} has no native gang scheduling API")
            if obj.api_version == "scheduling.k8s.io/v1alpha1":
                hint += (": write a scheduling.k8s.io/v1alpha2 PodGroup (spec.schedulingPolicy) that the pods name in "
                         "spec.schedulingGroup.podGroupName, and optionally a v1alpha2 Workload (spec.podGroupTemplates)")
            elif served:
                hint += (": write a scheduling.k8s.io/v1alpha1 Workload (spec.podGroups) that the pods name in "
                         'spec.workloadRef, or set the Simulation\'s spec.kubernetesVersion: "1.36"')
            raise object_error(obj, sc.source(obj), "", f'no matches for kind "{obj.kind}" in version '
                               f'"{obj.api_version}" ({hint})')
        if obj.metadata.namespace not in namespaces:
            raise object_error(obj, sc.source(obj), "metadata.namespace", f'namespaces "{obj.metadata.namespace}" not found')
        if obj.api_version == "scheduling.k8s.io/v1alpha1":
            raise_all(obj, sc.source(obj), validate_workload(obj))
        elif obj.kind == "Workload":
            raise_all(obj, sc.source(obj), schedv1alpha2.validate_workload(obj))
        else:
            raise_all(obj, sc.source(obj), schedv1alpha2.validate_pod_group(obj))
    for obj, spec, path in [*((p, p.spec, "spec") for p in sc.pods),
                            *((j, j.spec.template.spec, "spec.template.spec") for j in sc.jobs)]:
        for name, value in (("workloadRef", spec.workload_ref), ("schedulingGroup", spec.scheduling_group)):
            if value is None:
                continue
            if not generic_workload:
                raise object_error(obj, sc.source(obj), f"{path}.{name}", "Forbidden: alpha field; enable the feature "
                           "gate GenericWorkload in the Simulation's spec.featureGates (a real apiserver drops the "
                           "field silently when the gate is off)")
            field_of_release = NATIVE_GANG_POD_FIELD.get(served or "")
            if name != field_of_release:
                other = ("; Kubernetes 1.36 replaced it with spec.schedulingGroup.podGroupName naming a "
                         "scheduling.k8s.io/v1alpha2 PodGroup" if name == "workloadRef" else
                         "; it exists from Kubernetes 1.36 on (1.35 has spec.workloadRef)")
                raise object_error(obj, sc.source(obj), f"{path}.{name}", f"Forbidden: Kubernetes {version} has no "
                                   f"field {name}{other}")
        group = spec.scheduling_group
        if group is not None:
            # PodSchedulingGroup: exactly one member, podGroupName, a DNS subdomain (core/v1 types.go)
            gpath = f"{path}.schedulingGroup.podGroupName"
            if not group.pod_group_name:
                raise object_error(obj, sc.source(obj), gpath, "Required value")
            raise_all(obj, sc.source(obj), validate_name(group.pod_group_name, gpath))
