"""gpusim's own kinds (``gpusim.io/v1alpha1``): Simulation (with the alpha ``featureGates`` it models), NodePool
(with its server board and the kubelet's topology settings), Fault, Action, and Fabric (the compute network)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Optional

from .core_v1 import Taint
from .kueue_x_k8s_io import CONFIG_KEY, CONFIG_MAP, CONFIG_NAMESPACE, KUEUE_FEATURE_GATES
from .meta import ObjectMeta
from .schema import IntOrString

GROUP_VERSION = "gpusim.io/v1alpha1"
FAULT_TYPES = ("KubeletRestart", "DevicePluginCrash", "XidError", "NodeDown", "DriverFailure", "ToolkitFailure",
               "RuntimeClassMissing", "NVLinkError", "MigConfigFailure")
# Faults of the GPU Operator's operands: they need a ClusterPolicy (the operator deploys what they break).
OPERATOR_FAULT_TYPES = ("DriverFailure", "ToolkitFailure", "MigConfigFailure")
NVLINK_XID = 74   # NVLINK_ERROR in NVIDIA's XID catalog; the device plugin treats it as critical
# What an operator does with kubectl at a point in time: `kubectl label node`, `kubectl cordon/uncordon`.
ACTION_TYPES = ("LabelNode", "CordonNode", "UncordonNode")


@dataclass
class Timing:
    """Latencies of the simulated cluster. Defaults are documented in docs of ``gpusim.controlplane.timing``."""

    grpc_latency: str = "1ms"
    container_start: str = "1s"
    node_status_update_frequency: str = "10s"
    device_plugin_restart_delay: str = "5s"
    driver_load: str = "2m"
    toolkit_setup: str = "10s"


@dataclass
class SimulationSpec:
    seed: int = 0
    until: Optional[str] = None
    kubernetes_version: str = "1.36"
    timing: Timing = field(default_factory=Timing)
    # kube-apiserver / kube-scheduler / kubelet --feature-gates, for the gates gpusim models (FEATURE_GATES).
    feature_gates: dict[str, bool] = field(default_factory=dict)


# Feature gates gpusim models: name → first Kubernetes minor that has it (pkg/features/kube_features.go).
# Off unless set, except the ones in FEATURE_GATE_DEFAULTS.
# GenericWorkload serves the native gang API — 1.35: scheduling.k8s.io/v1alpha1 Workload and pod spec.workloadRef;
# 1.36: scheduling.k8s.io/v1alpha2 Workload and PodGroup and pod spec.schedulingGroup; GangScheduling adds the
# in-tree GangScheduling plugin to the default profile. Both alpha (off by default) in 1.35 and 1.36.
# DRAExtendedResource (KEP-5004) lets a DeviceClass's extendedResourceName (or its implicit
# deviceclass.resource.kubernetes.io/<class> name) back a plain extended resource with DRA devices.
# DynamicResourceAllocation (structured parameters, KEP-4381) keeps the DynamicResources plugin in the default
# profile (default_plugins.go applyFeatureGates); resource.k8s.io/v1 itself is served from 1.34 on.
FEATURE_GATES: dict[str, tuple[int, int]] = {"GenericWorkload": (1, 35), "GangScheduling": (1, 35),
                                             "TaintTolerationComparisonOperators": (1, 35),
                                             "DRAExtendedResource": (1, 34), "DynamicResourceAllocation": (1, 30)}
# Gates whose default changes with the release: name → ((minor, default), ...) in order, as the versioned
# feature-gate table (pkg/features/kube_features.go defaultVersionedKubernetesFeatureGates) lists them.
# DRAExtendedResource: 1.34 alpha (off), 1.36 beta (on), 1.37 GA (locked on). DynamicResourceAllocation: 1.30
# alpha (off), 1.32 beta (off), 1.34 GA (locked on).
FEATURE_GATE_DEFAULTS: dict[str, tuple[tuple[tuple[int, int], bool], ...]] = {
    "DRAExtendedResource": (((1, 34), False), ((1, 36), True), ((1, 37), True)),
    "DynamicResourceAllocation": (((1, 30), False), ((1, 32), False), ((1, 34), True)),
}
# GA gates locked to their default (featuregate.VersionedSpec LockToDefault): name → from which minor
LOCKED_FEATURE_GATES: dict[str, tuple[int, int]] = {"DynamicResourceAllocation": (1, 34)}
# gpusim's own check: GangScheduling reads Workloads, which only exist with GenericWorkload (UNVERIFIED
# whether kube-scheduler itself refuses the combination).
GATE_DEPENDENCIES: dict[str, str] = {"GangScheduling": "GenericWorkload"}


def validate_feature_gates(spec: SimulationSpec) -> Iterator[tuple[str, str]]:
    """Unknown gates are rejected as component-base's featuregate does ("unrecognized feature gate");
    a gate newer than ``kubernetesVersion`` and a missing dependency get a clear error."""
    version = tuple(int(x) for x in spec.kubernetes_version.split("."))
    for name in sorted(spec.feature_gates):
        path = f"spec.featureGates[{name}]"
        if name not in FEATURE_GATES:
            hint = ""
            if name in KUEUE_FEATURE_GATES:
                hint = ("; it is a Kueue feature gate: set it in Kueue's Configuration (ConfigMap "
                        f"{CONFIG_NAMESPACE}/{CONFIG_MAP}, key {CONFIG_KEY}, featureGates)")
            yield path, (f"unrecognized feature gate: {name} (gpusim models: {', '.join(sorted(FEATURE_GATES))})"
                         + hint)
            continue
        since = FEATURE_GATES[name]
        if spec.feature_gates[name] and version < since:
            yield path, (f"Forbidden: feature gate {name} exists from Kubernetes {since[0]}.{since[1]} on; "
                         f"spec.kubernetesVersion is {spec.kubernetes_version}")
        locked = LOCKED_FEATURE_GATES.get(name)
        if locked is not None and version >= locked and spec.feature_gates[name] != gate_default(name, version):
            # component-base featuregate.(*featureGate).unsafeSetFromMap
            value = str(bool(spec.feature_gates[name])).lower()
            yield path, (f"cannot set feature gate {name} to {value}, feature is locked to "
                         f"{str(gate_default(name, version)).lower()}")
        dep = GATE_DEPENDENCIES.get(name)
        if spec.feature_gates[name] and dep and not spec.feature_gates.get(dep, False):
            yield path, f"Forbidden: feature gate {name} requires {dep}=true"


def gate_default(name: str, version: tuple[int, int]) -> bool:
    """The gate's default in Kubernetes ``version`` (False for a gate without a versioned default)."""
    on = False
    for since, default in FEATURE_GATE_DEFAULTS.get(name, ()):
        if version >= since:
            on = default
    return on


def kubernetes_version(spec: SimulationSpec) -> tuple[int, int]:
    major, minor = (int(x) for x in spec.kubernetes_version.split(".")[:2])
    return major, minor


def gate_enabled(spec: SimulationSpec, name: str) -> bool:
    """The gate as set in ``spec.featureGates``, else its default for ``spec.kubernetesVersion``."""
    if name in spec.feature_gates:
        return bool(spec.feature_gates[name])
    return gate_default(name, kubernetes_version(spec))


def effective_feature_gates(spec: SimulationSpec) -> dict[str, bool]:
    """The gates as the components see them: what the Simulation sets, plus the versioned defaults."""
    gates = {name: gate_default(name, kubernetes_version(spec)) for name in FEATURE_GATE_DEFAULTS}
    gates.update(spec.feature_gates)
    return gates


@dataclass
class Simulation:
    api_version: str = GROUP_VERSION
    kind: str = "Simulation"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: SimulationSpec = field(default_factory=SimulationSpec)


@dataclass
class VGPUSpec:
    """The node is a VM with NVIDIA vGPUs of one time-sliced C-series type (gpusim.hardware.vgpu)."""

    type: str = field(default="", metadata={"required": True})
    scheduler: str = "BestEffort"


GPU_ALLOCATION_DEVICE_PLUGIN, GPU_ALLOCATION_DRA = "devicePlugin", "dra"
GPU_ALLOCATIONS = (GPU_ALLOCATION_DEVICE_PLUGIN, GPU_ALLOCATION_DRA)


@dataclass
class GPUSpec:
    """``topology`` names the server board (gpusim.hardware.topology BOARDS: dgx-1v, dgx-a100, dgx-h100, hgx-h200,
    gb200-nvl72, pcie-l40s, pcie; default: the model's DGX/HGX board on 8-GPU SXM nodes, else the generic ``pcie``
    board); ``topologyOptions`` the board's parameters (e.g. ``{nps: 1}`` on dgx-a100). ``allocation``: how pods get
    the GPUs: ``devicePlugin`` (default; NVIDIA's device plugin advertises ``nvidia.com/gpu``) or ``dra`` (NVIDIA's
    DRA driver ``gpu.nvidia.com`` publishes a ResourceSlice per node instead; gpusim/node/dra.py)."""

    model: str = field(default="", metadata={"required": True})
    count: int = 8
    allocation: str = GPU_ALLOCATION_DEVICE_PLUGIN
    vgpu: Optional[VGPUSpec] = None
    topology: Optional[str] = None
    topology_options: dict[str, IntOrString] = field(default_factory=dict)


@dataclass
class KubeletSpec:
    """The KubeletConfiguration fields (kubelet.config.k8s.io/v1beta1, same names) gpusim's kubelet reads:
    the Topology Manager's policy, scope and policy options, and the CPU manager's policy (only ``none``, the
    default, is modelled)."""

    topology_manager_policy: str = "none"
    topology_manager_scope: str = "container"
    topology_manager_policy_options: dict[str, str] = field(default_factory=dict)
    cpu_manager_policy: str = "none"


@dataclass
class NodePoolSpec:
    count: int = field(default=0, metadata={"required": True})
    gpu: Optional[GPUSpec] = None
    kubelet: Optional[KubeletSpec] = None
    cpu: IntOrString = "64"
    memory: IntOrString = "512Gi"
    pods: int = 110
    labels: dict[str, str] = field(default_factory=dict)
    taints: list[Taint] = field(default_factory=list)
    # When the nodes join the cluster (Go duration; absent = they exist at t=0), as a cluster autoscaler adds
    # them: bare, with only NFD's PCI labels; with a ClusterPolicy the GPU Operator brings them up.
    join_at: Optional[str] = None


@dataclass
class NodePool:
    api_version: str = GROUP_VERSION
    kind: str = "NodePool"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: NodePoolSpec = field(default_factory=NodePoolSpec, metadata={"required": True})


@dataclass
class FaultSpec:
    at: str = field(default="", metadata={"required": True})
    type: str = field(default="", metadata={"required": True})
    node: str = field(default="", metadata={"required": True})
    downtime: Optional[str] = None
    gpu: Optional[int] = None
    xid: int = 79


@dataclass
class Fault:
    api_version: str = GROUP_VERSION
    kind: str = "Fault"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: FaultSpec = field(default_factory=FaultSpec, metadata={"required": True})


@dataclass
class ActionSpec:
    at: str = field(default="", metadata={"required": True})
    type: str = field(default="", metadata={"required": True})
    node: str = field(default="", metadata={"required": True})
    labels: dict[str, Optional[str]] = field(default_factory=dict)   # a null value removes the label


@dataclass
class Action:
    """An operator's change at time ``at``, e.g. ``kubectl label node a100-0 nvidia.com/mig.config=all-1g.10gb``."""

    api_version: str = GROUP_VERSION
    kind: str = "Action"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: ActionSpec = field(default_factory=ActionSpec, metadata={"required": True})


@dataclass
class FabricSpec:
    """The compute fabric (gpusim.hardware.fabric; every field optional, defaults there): ``type``
    RailOptimized | Tree, ``nodePools`` attached (default: every GPU NodePool and GPU Node), ``nicSpeed``
    (``400G``; default: the boards' own NICs), ``scalableUnit``, ``spines`` (RailOptimized), ``nodesPerLeaf``,
    ``leavesPerSpine`` (Tree), ``oversubscription`` (>= 1), ``load`` ([0, 1]), ``labels`` (topograph | aws | gcp |
    oci | kueue | volcano | none: the node labels written)."""

    type: Optional[str] = None
    node_pools: Optional[list[str]] = None
    nic_speed: Optional[IntOrString] = None
    scalable_unit: Optional[int] = None
    spines: Optional[int] = None
    nodes_per_leaf: Optional[int] = None
    leaves_per_spine: Optional[int] = None
    oversubscription: Optional[float] = None
    load: Optional[float] = None
    labels: Optional[str] = None


@dataclass
class Fabric:
    """The network between the GPU nodes' compute NICs (at most one per scenario; without one, an idle,
    non-blocking rail-optimized fabric of the boards' own NICs that writes no node labels)."""

    api_version: str = GROUP_VERSION
    kind: str = "Fabric"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: FabricSpec = field(default_factory=FabricSpec)
