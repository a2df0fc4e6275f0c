"""Workload bookkeeping (mirrors kueue pkg/workload: workload.go Info/TotalRequests, conditions helpers,
admission.go; and apis/kueue/v1beta2/workload_types.go condition types and reasons)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..api.kueue_x_k8s_io import Condition, Workload
from ..api.quantity import parse_quantity
from ..componenthelpers.resource import container_requests
from . import resources
from .resources import FlavorResource

# condition types
QUOTA_RESERVED, ADMITTED, EVICTED, PREEMPTED = "QuotaReserved", "Admitted", "Evicted", "Preempted"
PODS_READY, REQUEUED, FINISHED, DEACTIVATION_TARGET = "PodsReady", "Requeued", "Finished", "DeactivationTarget"
# Evicted / Preempted reasons
EVICTED_BY_PREEMPTION = "Preempted"
EVICTED_BY_PODS_READY_TIMEOUT = "PodsReadyTimeout"
EVICTED_BY_DEACTIVATION = "Deactivated"
REQUEUING_LIMIT_EXCEEDED = "RequeuingLimitExceeded"
IN_CLUSTER_QUEUE, IN_COHORT_RECLAMATION = "InClusterQueue", "InCohortReclamation"
IN_COHORT_FAIR_SHARING, IN_COHORT_RECLAIM_WHILE_BORROWING = "InCohortFairSharing", "InCohortReclaimWhileBorrowing"
HUMAN_READABLE_PREEMPTION = {   # preemption.go HumanReadablePreemptionReasons
    IN_CLUSTER_QUEUE: "prioritization in the ClusterQueue",
    IN_COHORT_RECLAMATION: "reclamation within the cohort",
    IN_COHORT_FAIR_SHARING: "Fair Sharing within the cohort",
    IN_COHORT_RECLAIM_WHILE_BORROWING: "reclamation within the cohort while borrowing",
}
# QuotaReserved=False reasons (Kueue 0.19, written only with the UnadmittedWorkloadsObservability gate on;
# off by default, see api/kueue_x_k8s_io.py, the scheduler writes PENDING)
WAITING_FOR_QUOTA, EXCEEDS_MAX_QUOTA, NO_MATCHING_FLAVOR = "WaitingForQuota", "ExceedsMaxQuota", "NoMatchingFlavor"
WAITING_FOR_PREEMPTED = "WaitingForPreemptedWorkloads"
TOPOLOGY_PLACEMENT_FAILED = "TopologyPlacementFailed"
PENDING = "Pending"


def set_condition(wl: Workload, ctype: str, status: str, reason: str, message: str, now: float) -> bool:
    """apimeta.SetStatusCondition: the transition time changes only when the status does. Returns whether
    anything changed."""
    c = wl.condition(ctype)
    if c is None:
        wl.status.conditions.append(Condition(ctype, status, reason, message, now))
        return True
    changed = (c.status, c.reason, c.message) != (status, reason, message)
    if c.status != status:
        c.last_transition_time = now
    c.status, c.reason, c.message = status, reason, message
    return changed


def remove_condition(wl: Workload, ctype: str) -> None:
    wl.status.conditions = [c for c in wl.status.conditions if c.type != ctype]


RESOURCES_VALIDATION_FAILED = "resources validation failed"           # workload.ErrInvalidWLResources
REQUESTS_MUST_NOT_EXCEED_LIMITS = "requests must not exceed its limits"  # RequestsMustNotExceedLimitMessage


def validate_resources(wl: Workload) -> str:
    """workload.ValidateResources, as ValidateAdmissibility reports it: every (init) container whose requests
    exceed its limits, ``spec.podSets[i].template.spec.containers[j]: Invalid value: ["cpu"]: requests must not
    exceed its limits`` (field.Invalid; several errors joined as an aggregate), after "resources validation
    failed: "; "" when valid."""
    errs = []
    for i, ps in enumerate(wl.spec.pod_sets):
        spec = ps.template.spec
        for kind, containers in (("initContainers", spec.init_containers), ("containers", spec.containers)):
            for j, c in enumerate(containers):
                limits = c.resources.limits
                greater = sorted(r for r, q in c.resources.requests.items()
                                 if r in limits and parse_quantity(q) > parse_quantity(limits[r]))
                if greater:
                    names = ",".join(f'"{r}"' for r in greater)
                    errs.append(f"spec.podSets[{i}].template.spec.{kind}[{j}]: Invalid value: [{names}]: "
                                f"{REQUESTS_MUST_NOT_EXCEED_LIMITS}")
    if not errs:
        return ""
    return f"{RESOURCES_VALIDATION_FAILED}: " + (errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]")


def queue_order_timestamp(wl: Workload, requeuing_timestamp: str = "Eviction") -> float:
    """workload.Ordering GetQueueOrderTimestamp with PrioritySortingWithinCohort on (Kueue 0.19 default): the
    time of the Evicted condition when the workload was evicted by the PodsReady timeout and
    ``waitForPodsReady.requeuingStrategy.timestamp`` is Eviction, else the creation time. (Admission-check
    evictions, the other case upstream, are not modelled.)"""
    if requeuing_timestamp == "Eviction":
        c = wl.condition(EVICTED)
        if c is not None and c.status == "True" and c.reason == EVICTED_BY_PODS_READY_TIMEOUT:
            return c.last_transition_time
    return wl.metadata.creation_timestamp or 0.0


@dataclass(eq=False)
class Info:
    """workload.Info: the object plus what the scheduler needs, computed once."""

    obj: Workload
    cq: str                                          # ClusterQueue name the LocalQueue points at
    priority: int
    requests: list[dict[str, int]]                   # per podSet: total requests (per pod × count)
    seq: int = 0                                     # tie-breaker: creation order (UID order upstream)
    usage: dict[FlavorResource, int] = field(default_factory=dict)   # while quota is reserved
    reserved_at: Optional[float] = None
    queued_at: float = 0.0                           # queue-order timestamp
    last_message: str = ""
    last_reason: str = ""
    job: Any = None                                  # owning batch/v1 Job, if any
    signature: Any = None                            # what flavor assignment depends on, for memoisation
    tas_usage: list = field(default_factory=list)    # while admitted by TAS: [(flavor, domain → usage)]

    key: str = ""

    def __post_init__(self) -> None:
        self.key = f"{self.obj.metadata.namespace}/{self.obj.metadata.name}"

    @property
    def uid(self) -> str:
        return self.obj.metadata.uid

    def total(self) -> dict[FlavorResource, int]:
        return self.usage


def pod_set_requests(ps: Any) -> dict[str, int]:
    """Requests of one pod of the podSet (resource → Kueue int value), × count, plus ``pods`` = count."""
    spec = ps.template.spec
    per: dict[str, Any] = {}
    for c in spec.containers:
        for k, v in container_requests(c).items():
            per[k] = per.get(k, 0) + v
    for c in spec.init_containers:
        for k, v in container_requests(c).items():
            if v > per.get(k, 0):
                per[k] = v
    out = {k: resources.value(k, v) * ps.count for k, v in per.items()}
    out[resources.PODS] = ps.count
    return out
