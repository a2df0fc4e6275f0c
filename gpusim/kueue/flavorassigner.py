"""Flavor assignment (mirrors kueue pkg/scheduler/flavorassigner/flavorassigner.go, v0.19).

For each podSet and each resource group it needs, try the group's flavors in the listed order. A flavor whose
taints the pods do not tolerate, or whose nodeLabels contradict the pods' nodeSelector, is skipped. For the
others, each resource gets a mode: Fit (fits unused quota), Preempt (fits only if workloads are preempted),
NoFit. ``flavorFungibility`` decides whether to stop at the first flavor that fits by borrowing
(``whenCanBorrow: MayStopSearch``) or by preempting (``whenCanPreempt: MayStopSearch``) or to try the next.

Topology-Aware Scheduling (tas_flavorassigner.go): a PodSet that asks for TAS (an annotation, or every flavor
of its ClusterQueue is a TAS flavor) only takes TAS flavors that hold the level it asks for, and other PodSets
skip TAS flavors. Once every PodSet has flavors: if the quota fits, the placement is computed on the flavor's
topology; a PodSet that does not fit turns the assignment to Preempt, with the TAS message as its reason. A
Preempt assignment is tried on a topology emptied of TAS workloads; if even that fails it is NoFit.

Why a NoFit assignment does not fit (``Assignment.NoFitReason``, resolveNoFitReason): every flavor tried records
its own reason (NoMatchingFlavor for a taint/affinity/TAS mismatch, ExceedsMaxQuota above the maximum capacity,
WaitingForQuota when only waiting can help, TopologyPlacementFailed when only the placement fails); a resource
group takes the least severe of its flavors (another flavor might still do), the PodSet and the workload the most
severe of their groups and PodSets (``mostSevereReason``: NoMatchingFlavor > ExceedsMaxQuota > WaitingForQuota >
TopologyPlacementFailed).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..componenthelpers.taints import taint_value_string, tolerates
from . import resources
from .cache import Node
from .resources import FlavorResource
from .tas_flavor_snapshot import Placement, TASPodSetRequest

NO_FIT, PREEMPT, FIT = 0, 1, 2
MODE_NAMES = {NO_FIT: "NoFit", PREEMPT: "Preempt", FIT: "Fit"}

# QuotaReserved=False reasons a NoFit assignment resolves to (apis/kueue/v1beta2 WorkloadQuotaReservedReason*)
NO_MATCHING_FLAVOR, EXCEEDS_MAX_QUOTA = "NoMatchingFlavor", "ExceedsMaxQuota"
WAITING_FOR_QUOTA, TOPOLOGY_PLACEMENT_FAILED = "WaitingForQuota", "TopologyPlacementFailed"
_SEVERITY = {TOPOLOGY_PLACEMENT_FAILED: 1, WAITING_FOR_QUOTA: 2, EXCEEDS_MAX_QUOTA: 3, NO_MATCHING_FLAVOR: 4}


def reason_severity(reason: str) -> int:
    """flavorassigner.go reasonSeverity (0 for an empty or unknown reason)."""
    return _SEVERITY.get(reason, 0)


def most_severe_reason(a: str, b: str) -> str:
    """flavorassigner.go mostSevereReason: ``a`` unless ``b`` is strictly more severe."""
    return a if reason_severity(a) >= reason_severity(b) else b


@dataclass
class FlavorAttempt:
    """FlavorAssignmentAttempt: one flavor tried for a PodSet, in resource group ``group``."""
    flavor: str
    group: int
    mode: int
    no_fit_reason: str = ""


@dataclass
class PodSetAssignment:
    name: str
    flavors: dict[str, str] = field(default_factory=dict)          # resource → flavor
    usage: dict[FlavorResource, int] = field(default_factory=dict)
    mode: int = FIT
    borrow: int = 0                                                 # borrowing level (0: within nominal)
    reasons: list[str] = field(default_factory=list)
    attempts: list[FlavorAttempt] = field(default_factory=list)     # every flavor tried, in order
    topology: Optional[Placement] = None                            # TAS placement on ``tas_flavor``
    tas_flavor: str = ""
    tas_request: Optional[TASPodSetRequest] = None
    topology_failed: bool = False                                   # only the TAS placement failed


@dataclass
class Assignment:
    pod_sets: list[PodSetAssignment]

    @property
    def mode(self) -> int:
        return min((p.mode for p in self.pod_sets), default=FIT)

    @property
    def borrow(self) -> int:
        """Assignment.Borrowing: the height of the smallest cohort subtree that fits the usage (0: none)."""
        return max((p.borrow for p in self.pod_sets), default=0)

    def usage(self) -> dict[FlavorResource, int]:
        out: dict[FlavorResource, int] = {}
        for p in self.pod_sets:
            for fr, v in p.usage.items():
                out[fr] = out.get(fr, 0) + v
        return out

    def no_fit_reason(self) -> str:
        """resolveNoFitReason: "" unless the assignment is NoFit; a NoFit PodSet without any flavor tried is
        NoMatchingFlavor; otherwise the least severe NoFit reason per resource group, the most severe across
        groups and PodSets."""
        if self.mode != NO_FIT:
            return ""
        overall = ""
        for p in self.pod_sets:
            if p.mode != NO_FIT:
                continue
            if not p.attempts:
                overall = most_severe_reason(overall, NO_MATCHING_FLAVOR)
                continue
            per_group: dict[int, str] = {}
            for att in p.attempts:
                if att.mode != NO_FIT:
                    continue
                if att.group not in per_group or reason_severity(att.no_fit_reason) < reason_severity(per_group[att.group]):
                    per_group[att.group] = att.no_fit_reason
            ps_reason = ""
            for r in per_group.values():
                ps_reason = most_severe_reason(ps_reason, r)
            overall = most_severe_reason(overall, ps_reason)
        return overall

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
    # canPreemptWhileBorrowing: borrowWithinCohort is not Never, or fair sharing with reclaimWithinCohort
    can_preempt_while_borrowing: bool = False


def _tolerates(tolerations: list[Any], t: Any) -> bool:
    return any(tolerates(tol, t) for tol in tolerations)


def flavor_mismatch(flavor: Any, pod_spec: Any) -> Optional[str]:
    """checkPodSetAndFlavorMatchForTAS-free part: taints (NoSchedule/NoExecute) and nodeSelector vs nodeLabels."""
    name = flavor.metadata.name
    tolerations = list(pod_spec.tolerations) + list(flavor.spec.tolerations)
    for t in flavor.spec.node_taints:
        if t.effect in ("NoSchedule", "NoExecute") and not _tolerates(tolerations, t):
            return f"untolerated taint {taint_value_string(t)} in flavor {name}"
    for k, v in flavor.spec.node_labels.items():
        if k in pod_spec.node_selector and pod_spec.node_selector[k] != v:
            return f"flavor {name} doesn't match node affinity"
    return None


# granular preemption modes (flavorassigner.go preemptionMode), worst to best; a flavor whose preemption
# simulation finds no candidates (noPreemptionCandidates) is a Preempt assignment ranked below the others
G_NO_FIT, G_NO_CANDIDATES, G_PREEMPT, G_RECLAIM, G_FIT = 0, 1, 2, 3, 4
_TO_MODE = {G_NO_FIT: NO_FIT, G_NO_CANDIDATES: PREEMPT, G_PREEMPT: PREEMPT, G_RECLAIM: PREEMPT, G_FIT: FIT}
GranularMode = tuple[int, int]       # (preemption mode, borrowing level)
WORST: GranularMode = (G_NO_FIT, 1 << 62)
BEST: GranularMode = (G_FIT, 0)


def is_preferred(a: GranularMode, b: GranularMode, preference: str) -> bool:
    """flavorassigner.go isPreferred: is ``a`` better than ``b``? BorrowingOverPreemption compares the
    preemption mode first (Fit > Reclaim > Preempt), then the borrowing level (lower is better);
    PreemptionOverBorrowing the other way round."""
    if a[0] == G_NO_FIT:
        return False
    if b[0] == G_NO_FIT:
        return True
    if (a[0] == G_NO_CANDIDATES) != (b[0] == G_NO_CANDIDATES):
        return a[0] != G_NO_CANDIDATES
    if preference == "PreemptionOverBorrowing":
        return a[1] < b[1] if a[1] != b[1] else a[0] > b[0]
    return a[0] > b[0] if a[0] != b[0] else a[1] < b[1]


def should_try_next_flavor(mode: GranularMode, spec: "ClusterQueueSpecView") -> bool:
    """flavorassigner.go shouldTryNextFlavor."""
    if mode[0] in (G_NO_FIT, G_NO_CANDIDATES):
        return True
    if mode[0] in (G_PREEMPT, G_RECLAIM) and spec.when_can_preempt == "TryNextFlavor":
        return True
    return mode[1] != 0 and spec.when_can_borrow == "TryNextFlavor"


# preemption_oracle.go SimulatePreemption: (possibility, borrowing level after the preemptions)
PreemptionOracle = Callable[[FlavorResource, int], tuple[str, int]]
_FROM_POSSIBILITY = {"NoCandidates": G_NO_CANDIDATES, "Preempt": G_PREEMPT, "Reclaim": G_RECLAIM}


def fits_resource_quota(cq: Node, fr: FlavorResource, val: int, previous: int,
                        oracle: PreemptionOracle, can_preempt_while_borrowing: bool = False) -> tuple[int, int, str, bool]:
    """flavorassigner.go fitsResourceQuota for ``val`` = this podSet's request + ``previous``: (granular mode,
    borrowing level, message, exceeds max quota). A Preempt/Reclaim mode carries the level the preemption
    oracle computes once the targets are gone (``borrowAfterPreemptions``)."""
    res, flavor = fr[1], fr[0]
    potential = cq.potential_available(fr)
    if val > potential:
        msg = (f"insufficient quota for {res} in flavor {flavor}, previously considered podsets requests "
               f"({resources.quantity(res, previous)}) + current podset request "
               f"({resources.quantity(res, val - previous)}) > maximum capacity ({resources.quantity(res, potential)})")
        return G_NO_FIT, 0, msg, True
    borrow, may_reclaim_in_hierarchy = cq.height_of_lowest_subtree_that_fits(fr, val)
    available = cq.available(fr)
    if val <= available:
        return G_FIT, borrow, "", False
    msg = f"insufficient unused quota for {res} in flavor {flavor}, {resources.quantity(res, val - available)} more needed"
    if val <= cq.nominal.get(fr, 0) or may_reclaim_in_hierarchy or can_preempt_while_borrowing:
        possibility, borrow_after = oracle(fr, val)
        return _FROM_POSSIBILITY[possibility], borrow_after, msg, False
    return G_NO_FIT, borrow, msg, False


def tas_requested(podset: Any, tas_only: bool) -> tuple[bool, bool]:
    """(isTASRequested, isTASImplied) of a PodSet: an explicit topology request, or a TAS-only ClusterQueue."""
    explicit = podset is not None and podset.topology_request is not None
    implied = not explicit and tas_only
    return explicit or implied, implied


def tas_flavor_mismatch(flavor: Any, podset: Any, tas: Any, tas_only: bool) -> Optional[str]:
    """checkPodSetAndFlavorMatchForTAS."""
    name = flavor.metadata.name
    requested, implied = tas_requested(podset, tas_only)
    if requested:
        if implied:
            return None
        if not flavor.spec.topology_name:
            return f'Flavor "{name}" does not support TopologyAwareScheduling'
        if tas is None or not tas.is_tas(name):
            return f'Flavor "{name}" information missing in TAS cache'
        if not tas.snapshot(name).has_level(podset.topology_request):
            return f'Flavor "{name}" does not contain the requested level'
        return None
    if flavor.spec.topology_name:
        return f'Flavor "{name}" supports only TopologyAwareScheduling'
    return None


def assign(requests: list[tuple], cq: Node, spec: ClusterQueueSpecView, flavors: dict[str, Any],
           oracle: PreemptionOracle, tas: Any = None, tas_only: bool = False) -> Assignment:
    """``requests``: per podSet (name, total requests, pod spec[, the PodSet]); ``tas``: the TAS cache when a
    flavor of the ClusterQueue has a ``topologyName``. Returns the assignment with its mode."""
    out: list[PodSetAssignment] = []
    assigned: dict[FlavorResource, int] = {}
    for entry in requests:
        ps_name, req, pod_spec = entry[:3]
        podset = entry[3] if len(entry) > 3 else None
        psa = PodSetAssignment(ps_name)
        out.append(psa)
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
            gi = spec.groups.index(group)
            wanted = [r for r in covered if r in req]
            best: Optional[tuple[GranularMode, str, dict]] = None
            reasons: list[str] = []
            for fname in flavor_names:
                # checkPodSetAndFlavorMatchForTAS runs for every flavor (TopologyAwareScheduling is on in 0.19):
                # a PodSet asking for TAS does not take a flavor without a topology, in any ClusterQueue
                asks_tas = podset is not None and podset.topology_request is not None
                mismatch = (tas_flavor_mismatch(flavors[fname], podset, tas, tas_only)
                            if tas is not None or asks_tas or flavors[fname].spec.topology_name else None)
                mismatch = mismatch or flavor_mismatch(flavors[fname], pod_spec)
                if mismatch:
                    reasons.append(mismatch)
                    psa.attempts.append(FlavorAttempt(fname, gi, NO_FIT, NO_MATCHING_FLAVOR))
                    continue
                rep: GranularMode = BEST
                usage: dict[FlavorResource, int] = {}
                flavor_reason = ""
                for r in wanted:
                    fr = (fname, r)
                    prev = assigned.get(fr, 0)
                    m, b, msg, exceeds = fits_resource_quota(cq, fr, req[r] + prev, prev, oracle,
                                                             spec.can_preempt_while_borrowing)
                    if msg:
                        reasons.append(msg)
                        # fitsResourceQuota's noFitReason: above the maximum capacity, or no preemption possible
                        if m == G_NO_FIT:
                            flavor_reason = most_severe_reason(
                                flavor_reason, EXCEEDS_MAX_QUOTA if exceeds else WAITING_FOR_QUOTA)
                    if is_preferred(rep, (m, b), spec.preference):
                        rep = (m, b)          # the flavor's representative mode is its worst resource's
                    usage[fr] = req[r]
                psa.attempts.append(FlavorAttempt(fname, gi, _TO_MODE[rep[0]], flavor_reason))
                if rep[0] == G_NO_FIT:
                    continue
                if not should_try_next_flavor(rep, spec):
                    best = (rep, fname, usage)
                    break
                if best is None or is_preferred(rep, best[0], spec.preference):
                    best = (rep, fname, usage)
            if best is None:
                psa.mode = NO_FIT
                psa.reasons += reasons
                continue
            (gmode, level), fname, usage = best
            mode = _TO_MODE[gmode]
            for r in wanted:
                psa.flavors[r] = fname
            for fr, v in usage.items():
                psa.usage[fr] = psa.usage.get(fr, 0) + v
                assigned[fr] = assigned.get(fr, 0) + v
            psa.mode, psa.borrow = min(psa.mode, mode), max(psa.borrow, level)
            if mode != FIT:
                psa.reasons += reasons
    a = Assignment(out)
    if tas is not None and a.mode != NO_FIT:
        _assign_topology(a, requests, tas, tas_only)
    return a


def _single_pod_requests(req: dict[str, int], count: int) -> dict[str, int]:
    return {k: v // count for k, v in req.items() if k != resources.PODS} if count else {}


def _assign_topology(a: Assignment, requests: list[tuple], tas: Any, tas_only: bool) -> None:
    """flavorassigner.go assignFlavors, TAS part: WorkloadsTopologyRequests, then
    FindTopologyAssignmentsForWorkload (current usage when the quota fits; emptied of TAS workloads when it
    needs preemption)."""
    by_flavor: dict[str, list[PodSetAssignment]] = {}
    for psa, entry in zip(a.pod_sets, requests):
        podset = entry[3] if len(entry) > 3 else None
        requested, implied = tas_requested(podset, tas_only)
        if not requested or podset is None:
            continue
        used = sorted(set(psa.flavors.values()))
        if len(used) != 1:
            psa.mode = NO_FIT
            psa.reasons.append("more than one flavor assigned: " + ", ".join(used) if used else "no flavor assigned")
            return
        psa.tas_flavor = used[0]
        psa.tas_request = TASPodSetRequest(psa.name, podset.template.spec,
                                           _single_pod_requests(entry[1], podset.count), podset.count,
                                           podset.topology_request, implied)
        by_flavor.setdefault(psa.tas_flavor, []).append(psa)
    if not by_flavor:
        return
    if a.mode == FIT:
        failed = _find(by_flavor, tas, simulate_empty=False)
        if failed is None:
            return
        psa, reason = failed
        psa.reasons.append(reason)
        psa.topology_failed = True
        psa.mode = PREEMPT
    if a.mode == PREEMPT:
        failed = _find(by_flavor, tas, simulate_empty=True, record=False)
        if failed is not None:
            psa, reason = failed
            psa.mode = NO_FIT
            if reason not in psa.reasons:
                psa.reasons.append(reason)
            psa.topology_failed = True
            for att in psa.attempts:          # markFlavorAttempt(failure.Flavor, NoFit, TopologyPlacementFailed)
                if att.flavor == psa.tas_flavor:
                    att.mode, att.no_fit_reason = NO_FIT, TOPOLOGY_PLACEMENT_FAILED


def _find(by_flavor: dict[str, list[PodSetAssignment]], tas: Any, simulate_empty: bool,
          record: bool = True) -> Optional[tuple[PodSetAssignment, str]]:
    """The first PodSet that does not fit with its reason, or None (placements recorded when ``record``)."""
    for flavor, psas in sorted(by_flavor.items()):
        result = tas.snapshot(flavor).find_topology_assignments([p.tas_request for p in psas], simulate_empty)
        for p in psas:
            placement, reason = result.get(p.name, (None, ""))
            if reason:
                return p, reason
            if record:
                p.topology = placement
    return None
