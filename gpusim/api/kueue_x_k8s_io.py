"""``kueue.x-k8s.io`` v1beta1 and v1beta2 (mirrors kubernetes-sigs/kueue apis/kueue/v1beta2/*_types.go and
apis/kueue/v1beta1, v0.19), plus Kueue's ``config.kueue.x-k8s.io`` Configuration (apis/config/v1beta2).

Both versions are served by Kueue 0.19 and land in one store per kind. The differences gpusim reads:
ClusterQueue ``spec.cohort`` (v1beta1) vs ``spec.cohortName`` (v1beta2); Workload ``spec.priorityClassName`` +
``priorityClassSource`` (v1beta1) vs ``spec.priorityClassRef`` (v1beta2); v1beta1 flavorFungibility also takes the
deprecated ``Borrow``/``Preempt`` values. Defaults and messages follow the CRD OpenAPI schema and the webhooks
(pkg/webhooks/clusterqueue_webhook.go, cohort_webhook.go).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

import yaml

from .core_v1 import Taint, Toleration
from .errors import FieldError
from .meta import LabelSelector, ObjectMeta
from .quantity import QuantityError, parse_quantity
from .schema import INT32, IntOrString, decode
from .validation import unsupported

GROUP = "kueue.x-k8s.io"
V1BETA1, V1BETA2 = f"{GROUP}/v1beta1", f"{GROUP}/v1beta2"
QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name"            # pkg/constants: QueueLabel
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"    # constants.WorkloadPriorityClassLabel
JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
# Topology-Aware Scheduling (apis/kueue/v1beta2/topology_types.go)
PODSET_REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"
PODSET_PREFERRED_TOPOLOGY = "kueue.x-k8s.io/podset-preferred-topology"
PODSET_UNCONSTRAINED_TOPOLOGY = "kueue.x-k8s.io/podset-unconstrained-topology"
PODSET_SLICE_REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-slice-required-topology"
PODSET_SLICE_SIZE = "kueue.x-k8s.io/podset-slice-size"
PODSET_SLICE_REQUIRED_TOPOLOGY_CONSTRAINTS = "kueue.x-k8s.io/podset-slice-required-topology-constraints"
PODSET_GROUP_NAME = "kueue.x-k8s.io/podset-group-name"
TOPOLOGY_SCHEDULING_GATE = "kueue.x-k8s.io/topology"
WORKLOAD_ANNOTATION = "kueue.x-k8s.io/workload"
PODSET_LABEL = "kueue.x-k8s.io/podset"            # pkg/controller/constants PodSetLabel
LABEL_HOSTNAME = "kubernetes.io/hostname"
MAX_TOPOLOGY_LEVELS = 16
# topology_types.go TopologyLevel.nodeLabel +kubebuilder:validation:Pattern
NODE_LABEL_PATTERN = (r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                      r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$")
CONFIG_NAMESPACE = "kueue-system"
CONFIG_MAP = "kueue-manager-config"          # Helm chart / kustomize: <prefix kueue->manager-config
CONFIG_KEY = "controller_manager_config.yaml"

QUEUEING_STRATEGIES = ("StrictFIFO", "BestEffortFIFO")
STOP_POLICIES = ("None", "HoldAndDrain", "Hold")
RECLAIM_POLICIES = ("Never", "LowerPriority", "Any")
WITHIN_CQ_POLICIES = ("Never", "LowerPriority", "LowerOrNewerEqualPriority")
BORROW_WITHIN_COHORT_POLICIES = ("Never", "LowerPriority")
WHEN_CAN_BORROW = ("MayStopSearch", "TryNextFlavor")
WHEN_CAN_PREEMPT = ("MayStopSearch", "TryNextFlavor")
V1BETA1_FUNGIBILITY_ALIASES = {"Borrow": "MayStopSearch", "Preempt": "MayStopSearch"}
PREFERENCES = ("BorrowingOverPreemption", "PreemptionOverBorrowing")
MAX_RESOURCE_GROUPS = 16
MAX_FLAVORS = 64          # +kubebuilder:validation:MaxItems=64 on flavors and coveredResources
MAX_RESOURCES = 64
PREEMPTION_STRATEGIES = (("LessThanOrEqualToFinalShare",), ("LessThanInitialShare",),
                         ("LessThanOrEqualToFinalShare", "LessThanInitialShare"))


# --- ResourceFlavor ---------------------------------------------------------------------------------------

@dataclass
class ResourceFlavorSpec:
    node_labels: dict[str, str] = field(default_factory=dict)
    node_taints: list[Taint] = field(default_factory=list)
    tolerations: list[Toleration] = field(default_factory=list)
    topology_name: Optional[str] = None


@dataclass
class ResourceFlavor:
    api_version: str = V1BETA2
    kind: str = "ResourceFlavor"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: ResourceFlavorSpec = field(default_factory=ResourceFlavorSpec)
    NAMESPACED = False


# --- Topology (topology_types.go) ---------------------------------------------------------------------------

@dataclass
class TopologyLevel:
    node_label: str = ""


@dataclass
class TopologySpec:
    levels: list[TopologyLevel] = field(default_factory=list)


@dataclass
class Topology:
    """Levels of node labels, coarse → fine, that a TAS ResourceFlavor's ``topologyName`` refers to."""
    api_version: str = V1BETA2
    kind: str = "Topology"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: TopologySpec = field(default_factory=TopologySpec)
    NAMESPACED = False

    @property
    def level_keys(self) -> list[str]:
        return [lv.node_label for lv in self.spec.levels]


# --- ClusterQueue / Cohort ---------------------------------------------------------------------------------

@dataclass
class ResourceQuota:
    name: str = ""
    nominal_quota: IntOrString = field(default=None, metadata={"required": True})
    borrowing_limit: Optional[IntOrString] = None
    lending_limit: Optional[IntOrString] = None


@dataclass
class FlavorQuotas:
    name: str = ""
    resources: list[ResourceQuota] = field(default_factory=list)


@dataclass
class ResourceGroup:
    covered_resources: list[str] = field(default_factory=list)
    flavors: list[FlavorQuotas] = field(default_factory=list)


@dataclass
class BorrowWithinCohort:
    policy: str = "Never"
    max_priority_threshold: Optional[int] = None


@dataclass
class ClusterQueuePreemption:
    reclaim_within_cohort: str = "Never"
    within_cluster_queue: str = "Never"
    borrow_within_cohort: Optional[BorrowWithinCohort] = None


@dataclass
class FlavorFungibility:
    when_can_borrow: str = "MayStopSearch"
    when_can_preempt: str = "TryNextFlavor"
    preference: Optional[str] = None


@dataclass
class FairSharing:
    weight: Optional[IntOrString] = None

    def weight_value(self) -> float:
        return float(parse_quantity(self.weight)) if self.weight is not None else 1.0


@dataclass
class ClusterQueueSpecCommon:
    resource_groups: list[ResourceGroup] = field(default_factory=list)
    queueing_strategy: str = "BestEffortFIFO"
    namespace_selector: Optional[LabelSelector] = None
    flavor_fungibility: FlavorFungibility = field(default_factory=FlavorFungibility)
    preemption: ClusterQueuePreemption = field(default_factory=ClusterQueuePreemption)
    admission_checks: Any = None
    admission_checks_strategy: Any = None
    stop_policy: str = "None"
    fair_sharing: Optional[FairSharing] = None
    admission_scope: Any = None
    concurrent_admission_policy: Any = None


@dataclass
class ClusterQueueSpecV1beta2(ClusterQueueSpecCommon):
    cohort_name: str = ""


@dataclass
class ClusterQueueSpecV1beta1(ClusterQueueSpecCommon):
    cohort: str = ""


@dataclass
class ClusterQueueStatus:
    flavors_reservation: list[dict] = field(default_factory=list)
    flavors_usage: list[dict] = field(default_factory=list)
    pending_workloads: int = 0
    reserving_workloads: int = 0
    admitted_workloads: int = 0
    fair_sharing: Optional[dict] = None
    conditions: list[dict] = field(default_factory=list)


@dataclass
class ClusterQueue:
    api_version: str = V1BETA2
    kind: str = "ClusterQueue"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: ClusterQueueSpecV1beta2 = field(default_factory=ClusterQueueSpecV1beta2)
    status: ClusterQueueStatus = field(default_factory=ClusterQueueStatus)
    NAMESPACED = False

    @property
    def cohort(self) -> str:
        s = self.spec
        return getattr(s, "cohort_name", "") or getattr(s, "cohort", "")


@dataclass
class ClusterQueueV1beta1(ClusterQueue):
    api_version: str = V1BETA1
    spec: ClusterQueueSpecV1beta1 = field(default_factory=ClusterQueueSpecV1beta1)


@dataclass
class CohortSpec:
    parent_name: str = ""
    resource_groups: list[ResourceGroup] = field(default_factory=list)
    fair_sharing: Optional[FairSharing] = None


@dataclass
class Cohort:
    api_version: str = V1BETA2
    kind: str = "Cohort"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: CohortSpec = field(default_factory=CohortSpec)
    status: dict = field(default_factory=dict)
    NAMESPACED = False


# --- LocalQueue ----------------------------------------------------------------------------------------------

@dataclass
class LocalQueueSpec:
    cluster_queue: str = ""
    stop_policy: str = "None"
    fair_sharing: Optional[FairSharing] = None


@dataclass
class LocalQueueStatus:
    pending_workloads: int = 0
    reserving_workloads: int = 0
    admitted_workloads: int = 0
    flavors_usage: list[dict] = field(default_factory=list)
    conditions: list[dict] = field(default_factory=list)


@dataclass
class LocalQueue:
    api_version: str = V1BETA2
    kind: str = "LocalQueue"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: LocalQueueSpec = field(default_factory=LocalQueueSpec)
    status: LocalQueueStatus = field(default_factory=LocalQueueStatus)
    NAMESPACED = True


# --- Workload ----------------------------------------------------------------------------------------------

@dataclass
class PodSetTopologyRequest:
    """workload_types.go PodSetTopologyRequest (what the annotations of the pod template say)."""
    required: Optional[str] = None
    preferred: Optional[str] = None
    unconstrained: Optional[bool] = None
    pod_index_label: Optional[str] = None
    sub_group_index_label: Optional[str] = None
    sub_group_count: Optional[int] = None
    pod_set_group_name: Optional[str] = None
    pod_set_slice_required_topology: Optional[str] = None
    pod_set_slice_size: Optional[int] = None


@dataclass
class PodSet:
    name: str = "main"
    count: int = field(default=1, metadata=INT32)
    template: Any = field(default=None, metadata={"required": True})    # core/v1 PodTemplateSpec (typed below)
    min_count: Optional[int] = None
    topology_request: Optional[PodSetTopologyRequest] = None


@dataclass
class PriorityClassRef:
    group: str = ""
    kind: str = ""
    name: str = ""


@dataclass
class Condition:
    """metav1.Condition."""
    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""
    last_transition_time: Any = None
    observed_generation: Optional[int] = None


@dataclass
class RequeueState:
    count: Optional[int] = None
    requeue_at: Any = None


@dataclass
class TopologyAssignmentSliceLevelValues:
    """One level of a slice: ``universalValue`` for every domain, or ``prefix`` + ``roots`` + ``suffix``."""
    prefix: Optional[str] = None
    suffix: Optional[str] = None
    roots: Optional[list[str]] = None
    universal_value: Optional[str] = None

    def value(self, i: int) -> str:
        if self.roots is None:
            return self.universal_value or ""
        return (self.prefix or "") + self.roots[i] + (self.suffix or "")


@dataclass
class TopologyAssignmentSlice:
    domain_count: int = 0
    values_per_level: list[TopologyAssignmentSliceLevelValues] = field(default_factory=list)
    pod_counts: Optional[list[int]] = None
    universal_pod_count: Optional[int] = None

    def count(self, i: int) -> int:
        return self.universal_pod_count if self.pod_counts is None else self.pod_counts[i]


@dataclass
class TopologyAssignment:
    """workload_types.go TopologyAssignment (v1beta2 slices format): ``levels`` are the node-label keys;
    the domains are read by zipping each slice's values per level with its pod counts."""
    levels: list[str] = field(default_factory=list)
    slices: list[TopologyAssignmentSlice] = field(default_factory=list)

    def domains(self) -> list[tuple[list[str], int]]:
        """pkg/util/tas InternalSeqFrom: (values per level, pod count) of every domain, in order."""
        out = []
        for sl in self.slices:
            for i in range(sl.domain_count):
                out.append(([lv.value(i) for lv in sl.values_per_level], sl.count(i)))
        return out


@dataclass
class PodSetAssignment:
    name: str = ""
    flavors: dict[str, str] = field(default_factory=dict)
    resource_usage: dict[str, str] = field(default_factory=dict)
    count: int = 0
    topology_assignment: Optional[TopologyAssignment] = None


@dataclass
class Admission:
    cluster_queue: str = ""
    pod_set_assignments: list[PodSetAssignment] = field(default_factory=list)


@dataclass
class WorkloadStatus:
    conditions: list[Condition] = field(default_factory=list)
    admission: Optional[Admission] = None
    requeue_state: Optional[RequeueState] = None
    accumulated_past_exexcution_time_seconds: Any = None


@dataclass
class WorkloadSpecCommon:
    pod_sets: list[PodSet] = field(default_factory=list)
    queue_name: str = ""
    priority: Optional[int] = None
    active: bool = True
    maximum_execution_time_seconds: Optional[int] = None


@dataclass
class WorkloadSpecV1beta2(WorkloadSpecCommon):
    priority_class_ref: Optional[PriorityClassRef] = None


@dataclass
class WorkloadSpecV1beta1(WorkloadSpecCommon):
    priority_class_name: str = ""
    priority_class_source: str = ""


@dataclass
class Workload:
    api_version: str = V1BETA2
    kind: str = "Workload"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: WorkloadSpecV1beta2 = field(default_factory=WorkloadSpecV1beta2)
    status: WorkloadStatus = field(default_factory=WorkloadStatus)
    RESOURCE = "Workload.kueue.x-k8s.io"    # scheduling.k8s.io has a Workload kind too
    NAMESPACED = True

    def condition(self, ctype: str) -> Optional[Condition]:
        return next((c for c in self.status.conditions if c.type == ctype), None)

    def is_true(self, ctype: str) -> bool:
        c = self.condition(ctype)
        return c is not None and c.status == "True"

    @property
    def priority_class_name(self) -> str:
        s = self.spec
        ref = getattr(s, "priority_class_ref", None)
        return ref.name if ref is not None else getattr(s, "priority_class_name", "")


@dataclass
class WorkloadV1beta1(Workload):
    api_version: str = V1BETA1
    spec: WorkloadSpecV1beta1 = field(default_factory=WorkloadSpecV1beta1)


@dataclass
class WorkloadPriorityClass:
    api_version: str = V1BETA2
    kind: str = "WorkloadPriorityClass"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    value: int = 0
    description: str = ""
    NAMESPACED = False


def _v1beta1(cls: type) -> type:
    """The same shape served as v1beta1 (kinds whose fields did not change)."""
    sub = dataclass(type(cls.__name__ + "V1beta1", (cls,), {"__annotations__": {"api_version": str},
                                                           "api_version": V1BETA1}))
    return sub


KINDS: dict[tuple[str, str], type] = {
    (V1BETA2, "ResourceFlavor"): ResourceFlavor, (V1BETA1, "ResourceFlavor"): _v1beta1(ResourceFlavor),
    (V1BETA2, "ClusterQueue"): ClusterQueue, (V1BETA1, "ClusterQueue"): ClusterQueueV1beta1,
    (V1BETA2, "Cohort"): Cohort, (V1BETA1, "Cohort"): _v1beta1(Cohort),
    (V1BETA2, "LocalQueue"): LocalQueue, (V1BETA1, "LocalQueue"): _v1beta1(LocalQueue),
    (V1BETA2, "Workload"): Workload, (V1BETA1, "Workload"): WorkloadV1beta1,
    (V1BETA2, "WorkloadPriorityClass"): WorkloadPriorityClass,
    (V1BETA1, "WorkloadPriorityClass"): _v1beta1(WorkloadPriorityClass),
    (V1BETA2, "Topology"): Topology, (V1BETA1, "Topology"): _v1beta1(Topology),
}
KUEUE_KINDS = ("ResourceFlavor", "ClusterQueue", "Cohort", "LocalQueue", "Workload", "WorkloadPriorityClass",
               "Topology")


# --- Configuration (config.kueue.x-k8s.io) -----------------------------------------------------------------

@dataclass
class RequeuingStrategy:
    timestamp: str = "Eviction"
    backoff_limit_count: Optional[int] = None
    backoff_base_seconds: int = 60
    backoff_max_seconds: int = 3600


@dataclass
class WaitForPodsReady:
    enable: Optional[bool] = None            # v1beta1 only; in v1beta2 presence enables (and 0.19 defaults it on)
    timeout: Optional[str] = None
    recovery_timeout: Optional[str] = None
    block_admission: Optional[bool] = None
    requeuing_strategy: RequeuingStrategy = field(default_factory=RequeuingStrategy)


@dataclass
class FairSharingConfig:
    enable: Optional[bool] = None            # v1beta1 only
    preemption_strategies: list[str] = field(default_factory=list)


@dataclass
class Configuration:
    api_version: str = "config.kueue.x-k8s.io/v1beta2"
    kind: str = "Configuration"
    namespace: Optional[str] = None
    manage_jobs_without_queue_name: bool = False
    managed_jobs_namespace_selector: Any = None
    wait_for_pods_ready: Optional[WaitForPodsReady] = None
    fair_sharing: Optional[FairSharingConfig] = None
    health: Any = None
    metrics: Any = None
    webhook: Any = None
    leader_election: Any = None
    controller: Any = None
    client_connection: Any = None
    internal_cert_management: Any = None
    integrations: Any = None
    queue_visibility: Any = None
    multi_kueue: Any = None
    resources: Any = None
    feature_gates: Any = None
    object_retention_policies: Any = None
    admission_fair_sharing: Any = None
    pprof_bind_address: Any = None


CONFIG_VERSIONS = ("config.kueue.x-k8s.io/v1beta1", "config.kueue.x-k8s.io/v1beta2")


@dataclass
class KueueConfig:
    """The resolved settings the simulated kueue-controller-manager runs with."""
    wait_for_pods_ready: bool = True
    pods_ready_timeout: float = 1800.0
    recovery_timeout: Optional[float] = 1800.0
    block_admission: bool = False
    requeuing_timestamp: str = "Eviction"
    backoff_limit_count: Optional[int] = None
    backoff_base_seconds: int = 60
    backoff_max_seconds: int = 3600
    fair_sharing: bool = False
    preemption_strategies: tuple[str, ...] = ("LessThanOrEqualToFinalShare", "LessThanInitialShare")
    # Configuration featureGates over KUEUE_FEATURE_GATES' defaults
    feature_gates: dict[str, bool] = field(default_factory=dict)

    def enabled(self, gate: str) -> bool:
        """features.Enabled(gate): the Configuration's value, else the Kueue 0.19 default."""
        return self.feature_gates.get(gate, KUEUE_FEATURE_GATES[gate])


# The Kueue 0.19 feature gates gpusim models, with their defaults (pkg/features/kube_features.go
# defaultVersionedFeatureGates): FairSharingPreemptWithinNominal Beta since 0.17, on.
FAIR_SHARING_PREEMPT_WITHIN_NOMINAL = "FairSharingPreemptWithinNominal"
# UnadmittedWorkloadsObservability (KEP-10852): OFF in 0.19. With it off the scheduler writes QuotaReserved=False
# and its Warning event with reason "Pending" (pkg/workload UnadmittedWorkloadReasonWithFallback(granular,
# "Pending")); on, the granular reasons (WaitingForQuota, NoMatchingFlavor, ExceedsMaxQuota, ...). Evidence:
# - the v0.19.0 release notes (kubernetes-sigs/kueue issue #13002, entry from PR #13022): "The feature is disabled
#   by default, and guarded by UnadmittedWorkloadsObservability";
# - PR #15562 "Fix the status for the observability gate for 0.20" (mimowo, 2026-09-14): "The FG is Beta but
#   disabled by default on 0.18 and 0.19" (link to release-0.19 pkg/features/kube_features.go), "enabled by
#   default in 0.20"; the flip itself is PR #13063 (merged on main for 0.20, not in release-0.19);
# - the stored kube_features.go copies: the one whose newest gates are 0.19/0.20-dev reads
#   {Version: "0.19", Default: false, Beta}; a later main copy (with 0.20 gates and "GA in 0.21" notes) reads
#   true for "0.19", the state PR #15562 corrected to false-for-0.19 plus a 0.20 entry.
# The KEP's "Beta (v0.19): enabled by default" plan and main's integration tests describe 0.20, not 0.19.
UNADMITTED_WORKLOADS_OBSERVABILITY = "UnadmittedWorkloadsObservability"
KUEUE_FEATURE_GATES: dict[str, bool] = {FAIR_SHARING_PREEMPT_WITHIN_NOMINAL: True,
                                        UNADMITTED_WORKLOADS_OBSERVABILITY: False}


def parse_configuration(text: str) -> KueueConfig:
    """``controller_manager_config.yaml`` → KueueConfig (apis/config/v1beta2/defaults.go). Raises FieldError."""
    from .duration import DurationError, parse_duration
    try:
        doc = yaml.safe_load(text) or {}
    except yaml.YAMLError as e:
        raise FieldError("", f"YAML syntax error: {getattr(e, 'problem', None) or e}") from None
    cfg = decode(Configuration, doc)
    if cfg.api_version not in CONFIG_VERSIONS:
        raise FieldError("apiVersion", unsupported(cfg.api_version, CONFIG_VERSIONS))
    if cfg.kind != "Configuration":
        raise FieldError("kind", unsupported(cfg.kind, ("Configuration",)))
    out = KueueConfig()
    w = cfg.wait_for_pods_ready

    def dur(path: str, v: Optional[str]) -> Optional[float]:
        if v is None:
            return None
        try:
            d = parse_duration(str(v))
        except DurationError as e:
            raise FieldError(path, f'Invalid value: "{v}": {e}') from None
        if d < 0:
            raise FieldError(path, f'Invalid value: "{v}": must be greater than or equal to 0')
        return d
    if w is not None:
        v1 = cfg.api_version.endswith("v1beta1")
        out.wait_for_pods_ready = bool(w.enable) if v1 else True
        if not v1 and w.enable is not None:
            raise FieldError("waitForPodsReady.enable", 'strict decoding error: unknown field "waitForPodsReady.enable"')
        t = dur("waitForPodsReady.timeout", w.timeout)
        if t is not None:
            if t == 0:
                raise FieldError("waitForPodsReady.timeout", f'Invalid value: "{w.timeout}": must be greater than 0')
            out.pods_ready_timeout = t
        r = dur("waitForPodsReady.recoveryTimeout", w.recovery_timeout)
        out.recovery_timeout = out.pods_ready_timeout if r is None else (None if r == 0 else r)
        out.block_admission = bool(w.block_admission)
        rs = w.requeuing_strategy
        if rs.timestamp not in ("Eviction", "Creation"):
            raise FieldError("waitForPodsReady.requeuingStrategy.timestamp",
                             unsupported(rs.timestamp, ("Eviction", "Creation")))
        for name, v in (("backoffLimitCount", rs.backoff_limit_count), ("backoffBaseSeconds", rs.backoff_base_seconds),
                        ("backoffMaxSeconds", rs.backoff_max_seconds)):
            if v is not None and v < 0:
                raise FieldError(f"waitForPodsReady.requeuingStrategy.{name}",
                                 f"Invalid value: {v}: must be greater than or equal to 0")
        out.requeuing_timestamp, out.backoff_limit_count = rs.timestamp, rs.backoff_limit_count
        out.backoff_base_seconds, out.backoff_max_seconds = rs.backoff_base_seconds, rs.backoff_max_seconds
    if cfg.fair_sharing is not None:
        fs = cfg.fair_sharing
        out.fair_sharing = bool(fs.enable) if cfg.api_version.endswith("v1beta1") else True
        if fs.preemption_strategies:
            if tuple(fs.preemption_strategies) not in PREEMPTION_STRATEGIES:
                raise FieldError("fairSharing.preemptionStrategies", f"Unsupported value: {fs.preemption_strategies}: "
                                 "supported values: [LessThanOrEqualToFinalShare], [LessThanInitialShare], "
                                 "[LessThanOrEqualToFinalShare, LessThanInitialShare]")
            out.preemption_strategies = tuple(fs.preemption_strategies)
    if cfg.feature_gates is not None:
        if not isinstance(cfg.feature_gates, dict):
            raise FieldError("featureGates", f"Invalid value: {cfg.feature_gates!r}: must be a map of gate name to bool")
        for gate, v in cfg.feature_gates.items():
            if gate not in KUEUE_FEATURE_GATES:
                # upstream refuses a gate it does not know (featuregate SetFromMap "unrecognized feature gate");
                # gpusim also refuses a real gate it does not model, rather than ignore it
                raise FieldError(f"featureGates.{gate}", f'Unsupported value: "{gate}": gpusim models the Kueue '
                                 f"feature gates {sorted(KUEUE_FEATURE_GATES)}")
            if not isinstance(v, bool):
                raise FieldError(f"featureGates.{gate}", f"Invalid value: {v!r}: must be true or false")
            out.feature_gates[gate] = v
    return out


# --- validation (CRD OpenAPI + webhooks) -------------------------------------------------------------------

Errors = Iterator[tuple[str, str]]


def _enum(value: str, allowed: tuple[str, ...], path: str) -> Errors:
    if value not in allowed:
        yield path, unsupported(value, allowed)


def _quantity(value: Any, path: str) -> Errors:
    try:
        q = parse_quantity(value)
    except QuantityError as e:
        yield path, f'Invalid value: "{value}": {e}'
        return
    if q < 0:
        yield path, f'Invalid value: "{value}": must be greater than or equal to 0'


def validate_resource_groups(groups: list[ResourceGroup], path: str, has_parent: bool) -> Errors:
    if len(groups) > MAX_RESOURCE_GROUPS:
        yield path, f"Too many: {len(groups)}: must have at most {MAX_RESOURCE_GROUPS} items"
    seen_res: set[str] = set()
    seen_fl: set[str] = set()
    for i, g in enumerate(groups):
        gp = f"{path}[{i}]"
        if not g.covered_resources:
            yield f"{gp}.coveredResources", "Required value"
        if not g.flavors:
            yield f"{gp}.flavors", "Required value"
        for j, r in enumerate(g.covered_resources):
            if r in seen_res:
                yield f"{gp}.coveredResources[{j}]", f'Duplicate value: "{r}"'
            seen_res.add(r)
        for j, fq in enumerate(g.flavors):
            fp = f"{gp}.flavors[{j}]"
            if fq.name in seen_fl:
                yield f"{fp}.name", f'Duplicate value: "{fq.name}"'
            seen_fl.add(fq.name)
            names = [r.name for r in fq.resources]
            # webhook: flavor resources must match coveredResources, in order
            if names != list(g.covered_resources):
                yield f"{fp}.resources", ("Invalid value: must have the same number of resources as the "
                                          "coveredResources" if len(names) != len(g.covered_resources) else
                                          "Invalid value: must match the resource names in coveredResources, "
                                          "in the same order")
            for k, rq in enumerate(fq.resources):
                rp = f"{fp}.resources[{k}]"
                yield from _quantity(rq.nominal_quota, f"{rp}.nominalQuota")
                if rq.borrowing_limit is not None:
                    yield from _quantity(rq.borrowing_limit, f"{rp}.borrowingLimit")
                    if not has_parent:
                        # clusterqueue_webhook.go: borrowingLimit must be nil when cohort is empty
                        yield f"{rp}.borrowingLimit", "Invalid value: must be nil when cohort is empty"
                if rq.lending_limit is not None:
                    yield from _quantity(rq.lending_limit, f"{rp}.lendingLimit")
                    if not has_parent:
                        yield f"{rp}.lendingLimit", "Invalid value: must be nil when cohort is empty"
                    else:
                        try:
                            if parse_quantity(rq.lending_limit) > parse_quantity(rq.nominal_quota):
                                yield f"{rp}.lendingLimit", (f'Invalid value: "{rq.lending_limit}": must be less '
                                                             "than or equal to the nominalQuota")
                        except QuantityError:
                            pass


def validate_cluster_queue(cq: ClusterQueue) -> Errors:
    s = cq.spec
    has_cohort = bool(cq.cohort)
    yield from validate_resource_groups(s.resource_groups, "spec.resourceGroups", has_cohort)
    yield from _enum(s.queueing_strategy, QUEUEING_STRATEGIES, "spec.queueingStrategy")
    yield from _enum(s.stop_policy, STOP_POLICIES, "spec.stopPolicy")
    p = s.preemption
    yield from _enum(p.reclaim_within_cohort, RECLAIM_POLICIES, "spec.preemption.reclaimWithinCohort")
    yield from _enum(p.within_cluster_queue, WITHIN_CQ_POLICIES, "spec.preemption.withinClusterQueue")
    if p.borrow_within_cohort is not None:
        yield from _enum(p.borrow_within_cohort.policy, BORROW_WITHIN_COHORT_POLICIES,
                         "spec.preemption.borrowWithinCohort.policy")
        if p.borrow_within_cohort.policy != "Never" and p.reclaim_within_cohort == "Never":
            # CRD x-kubernetes-validations rule on ClusterQueuePreemption
            yield "spec.preemption", ("Invalid value: \"object\": reclaimWithinCohort=Never and "
                                      "borrowWithinCohort.Policy!=Never")
    f = s.flavor_fungibility
    v1 = cq.api_version == V1BETA1
    when_borrow = WHEN_CAN_BORROW + (("Borrow",) if v1 else ())
    when_preempt = WHEN_CAN_PREEMPT + (("Preempt",) if v1 else ())
    yield from _enum(f.when_can_borrow, when_borrow, "spec.flavorFungibility.whenCanBorrow")
    yield from _enum(f.when_can_preempt, when_preempt, "spec.flavorFungibility.whenCanPreempt")
    if f.preference is not None:
        yield from _enum(f.preference, PREFERENCES, "spec.flavorFungibility.preference")
    if s.fair_sharing is not None and s.fair_sharing.weight is not None:
        yield from _quantity(s.fair_sharing.weight, "spec.fairSharing.weight")


def validate_cohort(c: Cohort) -> Errors:
    if c.spec.parent_name == c.metadata.name:
        yield "spec.parentName", f'Invalid value: "{c.spec.parent_name}": cohort cannot be its own parent'
    yield from validate_resource_groups(c.spec.resource_groups, "spec.resourceGroups", bool(c.spec.parent_name))
    if c.spec.fair_sharing is not None and c.spec.fair_sharing.weight is not None:
        yield from _quantity(c.spec.fair_sharing.weight, "spec.fairSharing.weight")


def validate_local_queue(lq: LocalQueue) -> Errors:
    if not lq.spec.cluster_queue:
        yield "spec.clusterQueue", "Required value"
    yield from _enum(lq.spec.stop_policy, STOP_POLICIES, "spec.stopPolicy")


def validate_workload(wl: Workload) -> Errors:
    if not wl.spec.pod_sets:
        yield "spec.podSets", "Required value"
    if len(wl.spec.pod_sets) > 8:
        yield "spec.podSets", f"Too many: {len(wl.spec.pod_sets)}: must have at most 8 items"
    names = set()
    for i, ps in enumerate(wl.spec.pod_sets):
        if ps.count < 0:
            yield f"spec.podSets[{i}].count", f"Invalid value: {ps.count}: must be greater than or equal to 0"
        if ps.name in names:
            yield f"spec.podSets[{i}].name", f'Duplicate value: "{ps.name}"'
        names.add(ps.name)


def decode_pod_templates(wl: Workload) -> None:
    """PodSet templates are core/v1 PodTemplateSpecs; decode them strictly once the envelope decoded."""
    from .batch_v1 import PodTemplateSpec
    for i, ps in enumerate(wl.spec.pod_sets):
        if isinstance(ps.template, dict):
            ps.template = decode(PodTemplateSpec, ps.template, f"spec.podSets[{i}].template")


# --- Topology-Aware Scheduling: the Topology CRD and the PodSet annotations -------------------------------

def validate_topology(t: Topology) -> Errors:
    """The Topology CRD schema (topology_types.go): 1–16 levels, each nodeLabel 1–316 characters of the label
    key pattern, unique, and ``kubernetes.io/hostname`` only as the lowest level."""
    import re
    levels = t.spec.levels
    if not levels:
        yield "spec.levels", "Required value"
        return
    if len(levels) > MAX_TOPOLOGY_LEVELS:
        yield "spec.levels", f"Too many: {len(levels)}: must have at most {MAX_TOPOLOGY_LEVELS} items"
    for i, lv in enumerate(levels):
        p = f"spec.levels[{i}].nodeLabel"
        if not lv.node_label:
            yield p, "Required value"
        elif len(lv.node_label) > 316:
            yield p, f"Too long: may not be longer than 316"
        elif not re.match(NODE_LABEL_PATTERN, lv.node_label):
            yield p, f'Invalid value: "{lv.node_label}": {p} in body should match \'{NODE_LABEL_PATTERN}\''
    keys = [lv.node_label for lv in levels]
    if len(set(keys)) != len(keys):
        yield "spec.levels", 'Invalid value: "array": must be unique'
    if LABEL_HOSTNAME in keys and keys[-1] != LABEL_HOSTNAME:
        yield "spec.levels", ('Invalid value: "array": the kubernetes.io/hostname label can only be used at the '
                              "lowest level of topology")


def is_explicit_tas(annotations: dict[str, str]) -> bool:
    """pkg/util/tas IsExplicitTAS (with the unconstrained annotation: IsTAS)."""
    return any(k in annotations for k in (PODSET_REQUIRED_TOPOLOGY, PODSET_PREFERRED_TOPOLOGY,
                                          PODSET_SLICE_REQUIRED_TOPOLOGY, PODSET_UNCONSTRAINED_TOPOLOGY))


def validate_tas_pod_set_request(annotations: dict[str, str], path: str, count: Optional[int] = None) -> Errors:
    """jobframework/tas_validation.go ValidateTASPodSetRequest (+ ValidateSliceSizeAnnotationUpperBound when
    ``count`` is known) on a pod template's ``metadata.annotations`` at ``path``."""
    from .validation import validate_label_name
    a = annotations
    required, preferred = a.get(PODSET_REQUIRED_TOPOLOGY), a.get(PODSET_PREFERRED_TOPOLOGY)
    slice_topology = a.get(PODSET_SLICE_REQUIRED_TOPOLOGY)
    has_unconstrained, has_size = PODSET_UNCONSTRAINED_TOPOLOGY in a, PODSET_SLICE_SIZE in a
    if (required is not None) + (preferred is not None) + has_unconstrained > 1:
        yield path, (f'Invalid value: must not contain more than one topology annotation: ["{PODSET_REQUIRED_TOPOLOGY}", '
                     f'"{PODSET_PREFERRED_TOPOLOGY}", "{PODSET_UNCONSTRAINED_TOPOLOGY}"]')
    for key, value in ((PODSET_REQUIRED_TOPOLOGY, required), (PODSET_PREFERRED_TOPOLOGY, preferred),
                       (PODSET_SLICE_REQUIRED_TOPOLOGY, slice_topology)):
        if value is not None:
            yield from validate_label_name(value, f"{path}[{key}]")
    group = a.get(PODSET_GROUP_NAME)
    if group is not None:
        gp = f"{path}[{PODSET_GROUP_NAME}]"
        if group.isdigit():
            yield gp, f'Invalid value: "{group}": must not be a number'
        if has_size:
            yield gp, f"Forbidden: may not be set when '{PODSET_SLICE_SIZE}' is specified"
        if slice_topology is not None:
            yield gp, f"Forbidden: may not be set when '{PODSET_SLICE_REQUIRED_TOPOLOGY}' is specified"
        if required is None and preferred is None:
            yield gp, (f"Forbidden: may not be set when neither '{PODSET_PREFERRED_TOPOLOGY}' nor "
                       f"'{PODSET_REQUIRED_TOPOLOGY}' is specified")
    if has_unconstrained and a[PODSET_UNCONSTRAINED_TOPOLOGY] not in _GO_BOOLS:
        v = a[PODSET_UNCONSTRAINED_TOPOLOGY]
        yield f"{path}[{PODSET_UNCONSTRAINED_TOPOLOGY}]", f'Invalid value: "{v}": must be a boolean value'
    size = a.get(PODSET_SLICE_SIZE)
    if size is not None:
        sp = f"{path}[{PODSET_SLICE_SIZE}]"
        n = _go_int32(size)
        if n is None:
            yield sp, f'Invalid value: "{size}": must be a numeric value'
        elif n < 1:
            yield sp, f'Invalid value: "{size}": must be greater than or equal to 1'
        elif count is not None and n > count:
            yield sp, f'Invalid value: "{size}": must not be greater than pod set count {count}'
    if slice_topology is not None and not has_size:
        yield f"{path}[{PODSET_SLICE_SIZE}]", f"Required value: must be set when '{PODSET_SLICE_REQUIRED_TOPOLOGY}' is specified"
    if slice_topology is None and has_size:
        yield f"{path}[{PODSET_SLICE_SIZE}]", f"Forbidden: may not be set when '{PODSET_SLICE_REQUIRED_TOPOLOGY}' is not specified"
    if PODSET_SLICE_REQUIRED_TOPOLOGY_CONSTRAINTS in a:
        # TASMultiLayerTopology (beta in 0.19): accepted by Kueue, not modelled by gpusim
        yield f"{path}[{PODSET_SLICE_REQUIRED_TOPOLOGY_CONSTRAINTS}]", (
            "Unsupported value: multi-layer slice constraints (TASMultiLayerTopology) are not modelled by gpusim; "
            f"use '{PODSET_SLICE_REQUIRED_TOPOLOGY}' with '{PODSET_SLICE_SIZE}'")


# strconv.ParseBool accepts these
_GO_BOOLS = ("1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False")


def _go_int32(v: str) -> Optional[int]:
    """strconv.ParseInt(v, 10, 32)."""
    import re
    if not re.fullmatch(r"[+-]?[0-9]+", v):
        return None
    n = int(v)
    return n if -2**31 <= n < 2**31 else None


def topology_request_from_annotations(annotations: dict[str, str]) -> Optional[PodSetTopologyRequest]:
    """jobframework podset.go NewPodSetTopologyRequest(...).Build(): the request the annotations describe
    (None when the pod template asks nothing of TAS)."""
    a = annotations
    if not is_explicit_tas(a) and PODSET_GROUP_NAME not in a:
        return None
    req = PodSetTopologyRequest(required=a.get(PODSET_REQUIRED_TOPOLOGY), preferred=a.get(PODSET_PREFERRED_TOPOLOGY),
                                pod_set_group_name=a.get(PODSET_GROUP_NAME),
                                pod_set_slice_required_topology=a.get(PODSET_SLICE_REQUIRED_TOPOLOGY))
    if PODSET_UNCONSTRAINED_TOPOLOGY in a:
        req.unconstrained = a[PODSET_UNCONSTRAINED_TOPOLOGY] in _GO_BOOLS[:6]
    if PODSET_SLICE_SIZE in a:
        req.pod_set_slice_size = _go_int32(a[PODSET_SLICE_SIZE])
    return req


def validate_pod_set_topology_request(tr: PodSetTopologyRequest, path: str, count: int) -> Errors:
    """The same rules on a Workload's ``podSets[].topologyRequest`` written directly (the fields the
    annotations would fill)."""
    ann: dict[str, str] = {}
    for key, v in ((PODSET_REQUIRED_TOPOLOGY, tr.required), (PODSET_PREFERRED_TOPOLOGY, tr.preferred),
                   (PODSET_SLICE_REQUIRED_TOPOLOGY, tr.pod_set_slice_required_topology),
                   (PODSET_GROUP_NAME, tr.pod_set_group_name)):
        if v is not None:
            ann[key] = v
    if tr.unconstrained is not None:
        ann[PODSET_UNCONSTRAINED_TOPOLOGY] = "true" if tr.unconstrained else "false"
    if tr.pod_set_slice_size is not None:
        ann[PODSET_SLICE_SIZE] = str(tr.pod_set_slice_size)
    names = {PODSET_REQUIRED_TOPOLOGY: "required", PODSET_PREFERRED_TOPOLOGY: "preferred",
             PODSET_UNCONSTRAINED_TOPOLOGY: "unconstrained", PODSET_SLICE_REQUIRED_TOPOLOGY:
             "podSetSliceRequiredTopology", PODSET_SLICE_SIZE: "podSetSliceSize", PODSET_GROUP_NAME: "podSetGroupName"}
    for p, msg in validate_tas_pod_set_request(ann, "@", count):
        for key, fld in names.items():
            p = p.replace(f"@[{key}]", f"{path}.{fld}")
            msg = msg.replace(f"'{key}'", f"'{fld}'").replace(f'"{key}"', f'"{fld}"')
        yield p.replace("@", path), msg
