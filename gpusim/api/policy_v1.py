"""``policy/v1`` PodDisruptionBudget (mirrors k8s.io/api/policy/v1/types.go), its API validation
(pkg/apis/policy/validation ValidatePodDisruptionBudgetSpec) and the status the disruption
controller computes for it (pkg/controller/disruption/disruption.go trySync).

gpusim has no disruption controller process: ``compute_status`` is the controller's arithmetic as a
pure function of the budget and the current pods, and DefaultPreemption calls it when it needs
``status.disruptionsAllowed`` (as if the controller were always up to date).

Upstream facts reproduced here:

- Pods of a budget: same namespace, matching ``spec.selector`` via LabelSelectorAsSelector — a nil
  selector matches nothing, an empty one (``{}``) every pod of the namespace (policy/v1 semantics).
  Terminal pods are listed too (they count in ``expectedPods`` for an integer ``minAvailable``).
- Healthy: no deletionTimestamp, not in ``status.disruptedPods`` (within DeletionTimeout 2m),
  and condition Ready=True (apipod.IsPodReady).
- Integer ``minAvailable``: desiredHealthy = value, expectedPods = number of pods.
- Percentage ``minAvailable`` and any ``maxUnavailable``: expectedPods = sum of the scales of the
  pods' controllers (getExpectedScale); pods without a controller are "unmanaged" and skipped; a
  controller whose scale cannot be read fails the sync. Percentages round **up**
  (intstr.GetScaledValueFromIntOrPercent(..., roundUp=true)); desiredHealthy = expected − maxUnavailable
  (≥ 0) or ceil(expected × minAvailable%).
- disruptionsAllowed = currentHealthy − desiredHealthy, 0 if negative or if expectedPods ≤ 0.
- A failed sync (failSafe) sets disruptionsAllowed 0 and condition DisruptionAllowed=False,
  reason SyncFailed, message = the error.

gpusim's only pod controller is the Job, and ``batch/v1`` Jobs have no scale subresource, so
upstream's sync fails with ``jobs.batch does not implement the scale subresource`` for Job pods
under a percentage or ``maxUnavailable`` budget; bare pods are unmanaged. Callers that model other
controllers pass ``scale_of``.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Optional

from .validation import unsupported
from .meta import LabelSelector, ObjectMeta
from .schema import IntOrString

DELETION_TIMEOUT = 120.0     # disruption.go DeletionTimeout = 2 * time.Minute
UNHEALTHY_POD_EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")   # sorted, as sets.List
# pkg/apis/policy/types.go condition and reasons
DISRUPTION_ALLOWED_CONDITION = "DisruptionAllowed"
SYNC_FAILED_REASON = "SyncFailed"
SUFFICIENT_PODS_REASON = "SufficientPods"
INSUFFICIENT_PODS_REASON = "InsufficientPods"

# apimachinery util/validation IsValidPercent
PERCENT_RE = re.compile(r"^[0-9]+%$")
PERCENT_ERR_MSG = ("a valid percent string must be a numeric string followed by an ending '%' "
                   "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")


@dataclass
class Condition:
    """metav1.Condition."""

    type: str = ""
    status: str = ""
    observed_generation: int = 0
    last_transition_time: Any = None
    reason: str = ""
    message: str = ""


@dataclass
class PodDisruptionBudgetSpec:
    min_available: Optional[IntOrString] = None
    selector: Optional[LabelSelector] = None
    max_unavailable: Optional[IntOrString] = None
    unhealthy_pod_eviction_policy: Optional[str] = None


@dataclass
class PodDisruptionBudgetStatus:
    observed_generation: int = 0
    disrupted_pods: dict[str, Any] = field(default_factory=dict)   # pod name → time (simulated seconds)
    disruptions_allowed: int = 0
    current_healthy: int = 0
    desired_healthy: int = 0
    expected_pods: int = 0
    conditions: list[Condition] = field(default_factory=list)


@dataclass
class PodDisruptionBudget:
    api_version: str = "policy/v1"
    kind: str = "PodDisruptionBudget"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: PodDisruptionBudgetSpec = field(default_factory=PodDisruptionBudgetSpec)
    status: PodDisruptionBudgetStatus = field(default_factory=PodDisruptionBudgetStatus)


# --- validation ---------------------------------------------------------------------------------------------

def _go_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _selector_json(sel: Optional[LabelSelector]) -> Any:
    if sel is None:
        return None
    out: dict[str, Any] = {}
    if sel.match_labels:
        out["matchLabels"] = dict(sorted(sel.match_labels.items()))
    if sel.match_expressions:
        out["matchExpressions"] = [{"key": r.key, "operator": r.operator, **({"values": r.values} if r.values else {})}
                                   for r in sel.match_expressions]
    return out


def validate_int_or_percent(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """apps/validation ValidatePositiveIntOrPercent + IsNotMoreThan100Percent."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        yield path, f"Invalid value: {_go_json(value)}: must be an integer or percentage (e.g '5%')"
    elif isinstance(value, int):
        if value < 0:
            yield path, f"Invalid value: {value}: must be greater than or equal to 0"
    elif not PERCENT_RE.match(value):
        yield path, f"Invalid value: {_go_json(value)}: {PERCENT_ERR_MSG}"
    elif int(value[:-1]) > 100:
        yield path, f"Invalid value: {_go_json(value)}: must not be greater than 100%"


def validate_label_selector(sel: Optional[LabelSelector], path: str) -> Iterator[tuple[str, str]]:
    """apimachinery meta/v1/validation ValidateLabelSelector (operators and values)."""
    if sel is None:
        return
    for i, r in enumerate(sel.match_expressions):
        rp = f"{path}.matchExpressions[{i}]"
        if r.operator in ("In", "NotIn"):
            if not r.values:
                yield f"{rp}.values", "Required value: must be specified when `operator` is 'In' or 'NotIn'"
        elif r.operator in ("Exists", "DoesNotExist"):
            if r.values:
                yield f"{rp}.values", "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
        else:
            yield f"{rp}.operator", f'Invalid value: "{r.operator}": not a valid selector operator'


def validate_pdb(pdb: PodDisruptionBudget) -> Iterator[tuple[str, str]]:
    """ValidatePodDisruptionBudgetSpec, in upstream order. The both-set error prints the internal spec
    as JSON with Go field names (the bad value of field.Invalid(spec, spec, ...))."""
    s = pdb.spec
    if s.min_available is not None and s.max_unavailable is not None:
        bad = {"MinAvailable": s.min_available, "Selector": _selector_json(s.selector),
               "MaxUnavailable": s.max_unavailable, "UnhealthyPodEvictionPolicy": s.unhealthy_pod_eviction_policy}
        yield "spec", f"Invalid value: {_go_json(bad)}: minAvailable and maxUnavailable cannot be both set"
    if s.min_available is not None:
        yield from validate_int_or_percent(s.min_available, "spec.minAvailable")
    if s.max_unavailable is not None:
        yield from validate_int_or_percent(s.max_unavailable, "spec.maxUnavailable")
    yield from validate_label_selector(s.selector, "spec.selector")
    p = s.unhealthy_pod_eviction_policy
    if p is not None and p not in UNHEALTHY_POD_EVICTION_POLICIES:
        yield "spec.unhealthyPodEvictionPolicy", (unsupported(p, tuple(UNHEALTHY_POD_EVICTION_POLICIES)))


# --- the disruption controller's arithmetic ----------------------------------------------------------------

class SyncError(Exception):
    """An error of trySync (the controller then runs failSafe)."""


def scaled_value(value: Any, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        if not value.endswith("%"):
            raise SyncError("invalid type: string is not a percentage")
        try:
            v = int(value[:-1])
        except ValueError:
            raise SyncError(f'invalid value "{value}": strconv.Atoi: parsing "{value[:-1]}": invalid syntax') from None
        return math.ceil(v * total / 100) if round_up else (v * total) // 100
    raise SyncError("invalid type: neither int nor percentage")


def selector_matches_for_controller(sel: Optional[LabelSelector], labels: dict[str, str]) -> bool:
    """metav1.LabelSelectorAsSelector: nil → labels.Nothing(), {} → labels.Everything()."""
    if sel is None:
        return False
    return sel.matches(labels)


def pods_for_pdb(pdb: PodDisruptionBudget, pods: Iterable[Any]) -> list[Any]:
    """getPodsForPdb: the pods of the budget's namespace its selector matches."""
    ns = pdb.metadata.namespace or "default"
    return [p for p in pods if (p.metadata.namespace or "default") == ns
            and selector_matches_for_controller(pdb.spec.selector, p.metadata.labels)]


def is_pod_ready(pod: Any) -> bool:
    c = pod.status.condition("Ready")
    return c is not None and c.status == "True"


def controller_of(pod: Any) -> Optional[Any]:
    return next((o for o in pod.metadata.owner_references if o.controller), None)


def default_scale_of(ref: Any, pod: Any) -> Optional[int]:
    """The finders of gpusim's controllers: a Job has no scale subresource (getScaleController's error);
    any other kind is not found (getPodReplicaSet/…/getScaleController return nothing)."""
    if ref.kind == "Job" and ref.api_version.split("/")[0] == "batch":
        raise SyncError("jobs.batch does not implement the scale subresource")
    return None


def expected_scale(pods: list[Any], scale_of: Callable[[Any, Any], Optional[int]]) -> tuple[int, list[str]]:
    """getExpectedScale: Σ scale over the distinct controllers of the pods; unmanaged pods listed."""
    scales: dict[str, int] = {}
    unmanaged: list[str] = []
    for pod in pods:
        ref = controller_of(pod)
        if ref is None:
            unmanaged.append(pod.metadata.name)
            continue
        if ref.uid in scales:
            continue
        scale = scale_of(ref, pod)
        if scale is None:
            raise SyncError(f'found no controllers for pod "{pod.metadata.name}"')
        scales[ref.uid] = scale
    return sum(scales.values()), unmanaged


def expected_pod_count(pdb: PodDisruptionBudget, pods: list[Any],
                       scale_of: Callable[[Any, Any], Optional[int]]) -> tuple[int, int]:
    """getExpectedPodCount → (expectedCount, desiredHealthy)."""
    s = pdb.spec
    expected, desired = 0, 0
    if s.max_unavailable is not None:
        expected, _ = expected_scale(pods, scale_of)
        desired = max(expected - scaled_value(s.max_unavailable, expected, True), 0)
    elif s.min_available is not None:
        if isinstance(s.min_available, int) and not isinstance(s.min_available, bool):
            desired, expected = s.min_available, len(pods)
        elif isinstance(s.min_available, str):
            expected, _ = expected_scale(pods, scale_of)
            desired = scaled_value(s.min_available, expected, True)
    return expected, desired


def _seconds(t: Any) -> Optional[float]:
    """A disruptedPods time in simulated seconds (anything else, e.g. an RFC 3339 string copied from a
    real cluster, counts as long expired)."""
    return float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) else None


def count_healthy(pods: list[Any], disrupted: dict[str, Any], now: float) -> int:
    """countHealthyPods."""
    n = 0
    for pod in pods:
        if pod.metadata.deletion_timestamp is not None:
            continue
        t = _seconds(disrupted.get(pod.metadata.name))
        if t is not None and t + DELETION_TIMEOUT > now:
            continue
        if is_pod_ready(pod):
            n += 1
    return n


def compute_status(pdb: PodDisruptionBudget, pods: Iterable[Any], now: float = 0.0,
                   scale_of: Callable[[Any, Any], Optional[int]] = default_scale_of) -> PodDisruptionBudgetStatus:
    """trySync → updatePdbStatus (or failSafe on error): the status the disruption controller writes.
    ``pods`` may be every pod of the cluster; the budget's own are selected here."""
    mine = pods_for_pdb(pdb, pods)
    gen = pdb.metadata.generation
    old = pdb.status
    try:
        expected, desired = expected_pod_count(pdb, mine, scale_of)
    except SyncError as e:
        st = PodDisruptionBudgetStatus(**{k: getattr(old, k) for k in ("observed_generation", "current_healthy",
                                                                        "desired_healthy", "expected_pods")},
                                       disrupted_pods=dict(old.disrupted_pods), disruptions_allowed=0)
        st.conditions = [Condition(DISRUPTION_ALLOWED_CONDITION, "False", st.observed_generation, now,
                                   SYNC_FAILED_REASON, str(e))]
        return st
    # buildDisruptedPodMap: keep entries of live, not-yet-deleted pods within DeletionTimeout
    names = {p.metadata.name for p in mine if p.metadata.deletion_timestamp is None}
    disrupted = {n: t for n, t in old.disrupted_pods.items()
                 if n in names and _seconds(t) is not None and _seconds(t) + DELETION_TIMEOUT >= now}
    healthy = count_healthy(mine, disrupted, now)
    allowed = healthy - desired
    if expected <= 0 or allowed <= 0:
        allowed = 0
    ok = allowed > 0
    cond = Condition(DISRUPTION_ALLOWED_CONDITION, "True" if ok else "False", gen, now,
                     SUFFICIENT_PODS_REASON if ok else INSUFFICIENT_PODS_REASON, "")
    return PodDisruptionBudgetStatus(gen, disrupted, allowed, healthy, desired, expected, [cond])


def disruptions_allowed(pdb: PodDisruptionBudget, pods: Iterable[Any], now: float = 0.0,
                        scale_of: Callable[[Any, Any], Optional[int]] = default_scale_of) -> int:
    return compute_status(pdb, pods, now, scale_of).disruptions_allowed
