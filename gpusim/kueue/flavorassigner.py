"""Flavor assignment (mirrors kueue pkg/scheduler/flavorassigner/flavorassigner.go, v0.19).

For each podSet and each resource group it needs, try the group's flavors in the listed order. A flavor whose
taints the pods do not tolerate, or whose nodeLabels contradict the pods' nodeSelector, is skipped. For the
others, each resource gets a mode: Fit (fits unused quota), Preempt (fits only if workloads are preempted),
NoFit. ``flavorFungibility`` decides whether to stop at the first flavor that fits by borrowing
(``whenCanBorrow: MayStopSearch``) or by preempting (``whenCanPreempt: MayStopSearch``) or to try the next.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from . import resources
from .cache import Node
from .resources import FlavorResource

NO_FIT, PREEMPT, FIT = 0, 1, 2
MODE_NAMES = {NO_FIT: "NoFit", PREEMPT: "Preempt", FIT: "Fit"}


@dataclass
class PodSetAssignment:
    name: str
    flavors: dict[str, str] = field(default_factory=dict)          # resource → flavor
    usage: dict[FlavorResource, int] = field(default_factory=dict)
    mode: int = FIT
    borrow: bool = False
    reasons: list[str] = field(default_factory=list)
    max_quota_only: bool = False                                    # every reason is ExceedsMaxQuota
    affinity_only: bool = False                                     # every reason is a taint/affinity mismatch


@dataclass
class Assignment:
    pod_sets: list[PodSetAssignment]

    @property
    def mode(self) -> int:
        return min((p.mode for p in self.pod_sets), default=FIT)

    @property
    def borrow(self) -> bool:
        return any(p.borrow for p in self.pod_sets)

    def usage(self) -> dict[FlavorResource, int]:
        out: dict[FlavorResource, int] = {}
        for p in self.pod_sets:
            for fr, v in p.usage.items():
                out[fr] = out.get(fr, 0) + v
        return out

    def message(self) -> str:
        parts = [f"couldn't assign flavors to pod set {p.name}: " + ", ".join(sorted(p.reasons))
                 for p in self.pod_sets if p.mode == NO_FIT or (p.mode != FIT and p.reasons)]
        return "; ".join(parts)


@dataclass
class ClusterQueueSpecView:
    """What the assigner reads of a ClusterQueue."""
    groups: list[tuple[list[str], list[str]]]       # (coveredResources, flavor names) per group
    when_can_borrow: str = "MayStopSearch"
    when_can_preempt: str = "TryNextFlavor"
    preference: str = "BorrowingOverPreemption"


def _taint_str(t: Any) -> str:
    return f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"


def _tolerates(tolerations: list[Any], t: Any) -> bool:
    for tol in tolerations:
        if tol.effect and tol.effect != t.effect:
            continue
        if tol.operator == "Exists":
            if not tol.key or tol.key == t.key:
                return True
        elif tol.key == t.key and tol.value == t.value:
            return True
    return False


def flavor_mismatch(flavor: Any, pod_spec: Any) -> Optional[str]:
    """checkPodSetAndFlavorMatchForTAS-free part: taints (NoSchedule/NoExecute) and nodeSelector vs nodeLabels."""
    name = flavor.metadata.name
    tolerations = list(pod_spec.tolerations) + list(flavor.spec.tolerations)
    for t in flavor.spec.node_taints:
        if t.effect in ("NoSchedule", "NoExecute") and not _tolerates(tolerations, t):
            return f"untolerated taint {_taint_str(t)} in flavor {name}"
    for k, v in flavor.spec.node_labels.items():
        if k in pod_spec.node_selector and pod_spec.node_selector[k] != v:
            return f"flavor {name} doesn't match node affinity"
    return None


def _rank(mode: int, borrow: bool, preference: str) -> int:
    if preference == "PreemptionOverBorrowing":
        return {(FIT, False): 3, (PREEMPT, False): 2, (FIT, True): 1, (PREEMPT, True): 0}[(mode, borrow)]
    return {(FIT, False): 3, (FIT, True): 2, (PREEMPT, False): 1, (PREEMPT, True): 0}[(mode, borrow)]


def _should_try_next(mode: int, borrow: bool, spec: ClusterQueueSpecView) -> bool:
    if mode == FIT and not borrow:
        return False
    if mode == FIT and borrow and spec.when_can_borrow == "MayStopSearch":
        return False
    if mode == PREEMPT and spec.when_can_preempt == "MayStopSearch" and (
            not borrow or spec.when_can_borrow == "MayStopSearch"):
        return False
    return True


PreemptionOracle = Callable[[FlavorResource, int], bool]   # can preemption free ``val`` of fr?


def fits_resource_quota(cq: Node, fr: FlavorResource, val: int, previous: int,
                        oracle: PreemptionOracle) -> tuple[int, bool, str, bool]:
    """(mode, borrow, message, exceeds max quota) for ``val`` = this podSet's request + ``previous``."""
    res, flavor = fr[1], fr[0]
    potential = cq.potential_available(fr)
    if val > potential:
        msg = (f"insufficient quota for {res} in flavor {flavor}, previously considered podsets requests "
               f"({resources.quantity(res, previous)}) + current podset request "
               f"({resources.quantity(res, val - previous)}) > maximum capacity ({resources.quantity(res, potential)})")
        return NO_FIT, False, msg, True
    borrow = cq.borrowing_with(fr, val) and cq.parent is not None
    available = cq.available(fr)
    if val <= available:
        return FIT, borrow, "", False
    msg = f"insufficient unused quota for {res} in flavor {flavor}, {resources.quantity(res, val - available)} more needed"
    return (PREEMPT if oracle(fr, val) else NO_FIT), borrow, msg, False


def assign(requests: list[tuple[str, dict[str, int], Any]], cq: Node, spec: ClusterQueueSpecView,
           flavors: dict[str, Any], oracle: PreemptionOracle) -> Assignment:
    """``requests``: per podSet (name, total requests, pod spec). Returns the assignment with its mode."""
    out: list[PodSetAssignment] = []
    assigned: dict[FlavorResource, int] = {}
    for ps_name, req, pod_spec in requests:
        psa = PodSetAssignment(ps_name)
        out.append(psa)
        kinds: list[str] = []
        for res in sorted(req):
            if res == resources.PODS and not any(res in g[0] for g in spec.groups):
                continue     # pods counts only where a group covers it
            if res in psa.flavors:
                continue
            group = next((g for g in spec.groups if res in g[0]), None)
            if group is None:
                psa.mode = NO_FIT
                psa.reasons.append(f"resource {res} unavailable in ClusterQueue")
                continue
            covered, flavor_names = group
            wanted = [r for r in covered if r in req]
            best: Optional[tuple[int, int, bool, str, dict]] = None
            reasons: list[str] = []
            for fname in flavor_names:
                mismatch = flavor_mismatch(flavors[fname], pod_spec)
                if mismatch:
                    reasons.append(mismatch)
                    kinds.append("affinity")
                    continue
                mode, borrow, usage = FIT, False, {}
                for r in wanted:
                    fr = (fname, r)
                    prev = assigned.get(fr, 0)
                    m, b, msg, exceeds = fits_resource_quota(cq, fr, req[r] + prev, prev, oracle)
                    if msg:
                        reasons.append(msg)
                        kinds.append("max" if exceeds else "quota")
                    mode, borrow = min(mode, m), borrow or b
                    usage[fr] = req[r]
                if mode == NO_FIT:
                    continue
                rank = _rank(mode, borrow, spec.preference)
                if best is None or rank > best[0]:
                    best = (rank, mode, borrow, fname, usage)
                if not _should_try_next(mode, borrow, spec):
                    break
            if best is None:
                psa.mode = NO_FIT
                psa.reasons += reasons
                continue
            _, mode, borrow, fname, usage = best
            for r in wanted:
                psa.flavors[r] = fname
            for fr, v in usage.items():
                psa.usage[fr] = psa.usage.get(fr, 0) + v
                assigned[fr] = assigned.get(fr, 0) + v
            psa.mode, psa.borrow = min(psa.mode, mode), psa.borrow or borrow
            if mode != FIT:
                psa.reasons += reasons
        psa.max_quota_only = bool(kinds) and all(k == "max" for k in kinds)
        psa.affinity_only = bool(kinds) and all(k == "affinity" for k in kinds)
    return Assignment(out)
