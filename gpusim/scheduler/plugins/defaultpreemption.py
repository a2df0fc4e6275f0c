"""DefaultPreemption (plugins/defaultpreemption/default_preemption.go and framework/preemption/preemption.go
Evaluator.Preempt): the PostFilter that evicts lower-priority pods so that the pod can be nominated.

1. Eligibility (PodEligibleToPreemptOthers): ``preemptionPolicy: Never`` → "not eligible due to
   preemptionPolicy=Never."; a pod whose ``status.nominatedNodeName`` node still holds a
   lower-priority pod terminating because of preemption (deletionTimestamp set and condition
   DisruptionTarget=True reason PreemptionByScheduler) → "not eligible due to a terminating pod on the
   nominated node." — unless the nominated node's Filter status is UnschedulableAndUnresolvable (an
   absent status counts as that, as NewDefaultNodeToStatus).
2. Potential nodes: Filter status exactly Unschedulable, in snapshot order. None → every node
   "Preemption is not helpful for scheduling".
3. Dry run (DryRunPreemption) from a random offset ``rng.randrange(n)`` (getOffsetRand = rand.Int31n,
   here the simulation's seeded RNG) for up to numCandidates = min(max(n × minCandidateNodesPercentage
   / 100, minCandidateNodesAbsolute), n) candidates (args default 10 and 100); it stops once at least
   one candidate violates no PodDisruptionBudget and non-violating + violating ≥ numCandidates.
   Candidates: non-violating ones first, then violating ones.
4. SelectVictimsOnNode on a copy of the node: remove every pod of lower priority; none → "No preemption
   victims found for incoming pod" (UnschedulableAndUnresolvable); still no fit → the Filter status.
   Else sort by MoreImportantPod (priority desc, then earlier start time; no start time = now), split
   into PDB-violating and non-violating (filterPodsWithPDBViolation), and reprieve greedily — violating
   ones first, then the others — keeping a pod back whenever the preemptor still fits. Victims that are
   violating count as PDB violations.
5. pickOneNodeForPreemption over the candidates, each criterion only among the ties of the previous:
   fewest PDB violations; lowest priority of the first (most important) victim; smallest sum of
   (priority + MaxInt32 + 1); fewest victims; latest GetEarliestPodStartTime (the earliest start among
   the victims of the highest priority); then the first in candidate order.
6. Actuation: the handle's ``preempt`` (DisruptionTarget condition, event Preempted "Preempted by pod
   <uid> on node <node>", delete) for victims not already being deleted; pods of lower priority
   nominated to the same node lose their nomination; the pod is nominated.
7. Failure message: "preemption: " + FitError over the dry-run statuses (nodes not dry-run:
   "Preemption is not helpful for scheduling"), and the pod's nomination is cleared.

PodDisruptionBudget status comes from ``policy_v1.compute_status`` over the apiserver's pods at the
moment of preemption (gpusim runs no separate disruption controller).
"""
from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from typing import Any, Optional

from ...api.policy_v1 import compute_status
from ..framework import Code, Diagnosis, FitError, NodeInfo, PodInfo, Status
from .queuesort import pod_priority

NAME = "DefaultPreemption"
MSG_NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
MSG_NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
MSG_NOT_HELPFUL = "Preemption is not helpful for scheduling"
MSG_NO_VICTIMS = "No preemption victims found for incoming pod"
MSG_PREFIX = "preemption: "
MAX_INT32 = 2**31 - 1
DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10    # config/v1 defaults.go SetDefaults_DefaultPreemptionArgs
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100


@dataclass
class Candidate:
    """preemption.candidate: a node and its victims (most important first) with their PDB violations."""

    name: str
    victims: list[PodInfo]
    num_pdb_violations: int = 0


def pod_start_time(pod, now: float) -> float:
    """util.GetPodStartTime: status.startTime, or now for pods not started yet."""
    st = pod.status.start_time
    return now if st is None else st


def more_important_key(pi: PodInfo, now: float) -> tuple:
    """util.MoreImportantPod as a sort key: higher priority first, then the earlier start."""
    return (-pod_priority(pi.pod), pod_start_time(pi.pod, now))


def earliest_start_of_highest_priority(victims: list[PodInfo], now: float) -> float:
    """util.GetEarliestPodStartTime."""
    earliest = pod_start_time(victims[0].pod, now)
    highest = pod_priority(victims[0].pod)
    for v in victims:
        p = pod_priority(v.pod)
        if p == highest:
            earliest = min(earliest, pod_start_time(v.pod, now))
        elif p > highest:
            highest, earliest = p, pod_start_time(v.pod, now)
    return earliest


def pick_one_node(candidates: list[Candidate], now: float = 0.0) -> Optional[Candidate]:
    """pickOneNodeForPreemption with the default score functions, in order."""
    if not candidates:
        return None
    score_funcs = [
        lambda c: -c.num_pdb_violations,
        lambda c: -pod_priority(c.victims[0].pod),
        lambda c: -sum(pod_priority(v.pod) + MAX_INT32 + 1 for v in c.victims),
        lambda c: -len(c.victims),
        lambda c: earliest_start_of_highest_priority(c.victims, now),
    ]
    remaining = list(candidates)
    for f in score_funcs:
        scores = [f(c) for c in remaining]
        best = max(scores)
        remaining = [c for c, s in zip(remaining, scores) if s == best]
        if len(remaining) == 1:
            return remaining[0]
    return remaining[0]


def pdb_selector_matches(sel, labels: dict[str, str]) -> bool:
    """filterPodsWithPDBViolation: a nil or empty selector matches nothing."""
    if sel is None or (not sel.match_labels and not sel.match_expressions):
        return False
    return sel.matches(labels)


def filter_pods_with_pdb_violation(pod_infos: list[PodInfo], pdbs: list) -> tuple[list[PodInfo], list[PodInfo]]:
    """Split (order kept) into victims whose eviction would take a matching budget's
    disruptionsAllowed below 0 and the others; every matching budget is decremented per pod
    (except for pods already listed in its status.disruptedPods)."""
    allowed = [pdb.status.disruptions_allowed for pdb in pdbs]
    violating, non_violating = [], []
    for pi in pod_infos:
        pod = pi.pod
        violated = False
        if pod.metadata.labels:
            for i, pdb in enumerate(pdbs):
                if (pdb.metadata.namespace or "default") != (pod.metadata.namespace or "default"):
                    continue
                if not pdb_selector_matches(pdb.spec.selector, pod.metadata.labels):
                    continue
                if pod.metadata.name in pdb.status.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(pi)
    return violating, non_violating


def pod_terminating_by_preemption(pod) -> bool:
    if pod.metadata.deletion_timestamp is None:
        return False
    c = pod.status.condition("DisruptionTarget")
    return c is not None and c.status == "True" and c.reason == "PreemptionByScheduler"


def _arg(args: Any, camel: str, snake: str, default: int) -> int:
    if args is None:
        return default
    if isinstance(args, dict):
        v = args.get(camel, args.get(snake))
    else:
        v = getattr(args, snake, None)
    return default if v is None else v


def validate_args(percentage: int, absolute: int) -> None:
    """validation_pluginargs.go ValidateDefaultPreemptionArgs (field paths relative to the args)."""
    errs = []
    if not 0 <= percentage <= 100:
        errs.append(f"minCandidateNodesPercentage: Invalid value: {percentage}: not in valid range [0, 100]")
    if absolute < 0:
        errs.append(f"minCandidateNodesAbsolute: Invalid value: {absolute}: not in valid range [0, inf)")
    if percentage == 0 and absolute == 0:
        errs += ["minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as "
                 "minCandidateNodesAbsolute",
                 "minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as "
                 "minCandidateNodesPercentage"]
    if errs:
        raise ValueError(errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]")


def snapshot(ni: NodeInfo) -> NodeInfo:
    """NodeInfo.Snapshot(): a copy whose pods can be removed and re-added without touching the cache."""
    c = NodeInfo(ni.node)
    for p in ni.pods.values():
        c.add_pod(p)
    return c


class DefaultPreemption:
    name = NAME

    def __init__(self, handle, args: Any = None):
        self.handle = handle
        self.min_candidate_nodes_percentage = _arg(args, "minCandidateNodesPercentage",
                                                   "min_candidate_nodes_percentage",
                                                   DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE)
        self.min_candidate_nodes_absolute = _arg(args, "minCandidateNodesAbsolute", "min_candidate_nodes_absolute",
                                                 DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE)
        validate_args(self.min_candidate_nodes_percentage, self.min_candidate_nodes_absolute)

    # --- helpers over the handle ---------------------------------------------------------------------------
    @property
    def _ctx(self):
        return getattr(self.handle, "ctx", None)

    def _now(self) -> float:
        ctx = self._ctx
        return ctx.now if ctx is not None else 0.0

    def _rng(self) -> random.Random:
        ctx = self._ctx
        if ctx is None:
            self._fallback_rng = getattr(self, "_fallback_rng", None) or random.Random(0)
            return self._fallback_rng
        return ctx.rng

    def _api(self):
        ctx = self._ctx
        return ctx.api if ctx is not None else None

    def pdbs(self) -> list:
        """Every PodDisruptionBudget with the status the disruption controller would have written now."""
        api = self._api()
        if api is None:
            return []
        budgets = api.list("PodDisruptionBudget")
        if not budgets:
            return []
        pods = api.list("Pod")
        now = self._now()
        return [dataclasses.replace(b, status=compute_status(b, pods, now)) for b in budgets]

    # --- calculateNumCandidates / GetOffsetAndNumCandidates ----------------------------------------------
    def calculate_num_candidates(self, num_nodes: int) -> int:
        n = num_nodes * self.min_candidate_nodes_percentage // 100
        n = max(n, self.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return self._rng().randrange(num_nodes), self.calculate_num_candidates(num_nodes)

    # --- PostFilter -----------------------------------------------------------------------------------------
    def pod_eligible_to_preempt_others(self, pod, statuses: dict[str, Status]) -> tuple[bool, str]:
        if pod.spec.preemption_policy == "Never":
            return False, MSG_NOT_ELIGIBLE_NEVER
        nom = pod.status.nominated_node_name
        if nom:
            st = statuses.get(nom)
            if st is None or st.code == Code.UnschedulableAndUnresolvable:
                return True, ""
            ni = next((n for n in self.handle.node_infos() if n.name == nom), None)
            if ni is not None:
                prio = pod_priority(pod)
                for p in ni.pods.values():
                    if pod_priority(p.pod) < prio and pod_terminating_by_preemption(p.pod):
                        return False, MSG_NOT_ELIGIBLE_TERMINATING
        return True, ""

    def post_filter(self, state, pi: PodInfo, statuses: dict[str, Status]) -> tuple[Optional[str], Status]:
        st_nominated, st = self.preempt(state, pi, statuses)
        msg = st.message()
        if msg:
            return st_nominated, Status(st.code, [MSG_PREFIX + msg])
        return st_nominated, st

    def preempt(self, state, pi: PodInfo, statuses: dict[str, Status]) -> tuple[Optional[str], Status]:
        """Evaluator.Preempt: the nominated node (or None), and the status (unprefixed message)."""
        pod = pi.pod
        ok, msg = self.pod_eligible_to_preempt_others(pod, statuses)
        if not ok:
            return None, Status.new(Code.Unschedulable, msg)
        all_nodes = self.handle.node_infos()
        if not all_nodes:
            return None, Status.new(Code.Error, "no nodes available")
        candidates, node_statuses, errs = self.find_candidates(state, pi, all_nodes, statuses)
        if errs and not candidates:
            uniq = list(dict.fromkeys(errs))
            return None, Status.new(Code.Error, uniq[0] if len(uniq) == 1 else "[" + ", ".join(uniq) + "]")
        if not candidates:
            for ni in all_nodes:   # SetAbsentNodesStatus
                node_statuses.setdefault(ni.name, Status.new(Code.UnschedulableAndUnresolvable, MSG_NOT_HELPFUL))
            fe = FitError(pod, len(all_nodes), Diagnosis(node_to_status=node_statuses))
            pod.status.nominated_node_name = ""    # PostFilterResult{NominatedNodeName: ""} (ModeOverride)
            return None, Status.new(Code.Unschedulable, fe.error())
        best = candidates[0] if len(candidates) == 1 else pick_one_node(candidates, self._now())
        self.prepare_candidate(best, pi)
        return best.name, Status()

    def find_candidates(self, state, pi: PodInfo, all_nodes: list[NodeInfo],
                        statuses: dict[str, Status]) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        potential = [ni for ni in all_nodes
                     if statuses.get(ni.name) is not None and statuses[ni.name].code == Code.Unschedulable]
        if not potential:
            return [], {}, []
        pdbs = self.pdbs()
        offset, num = self.get_offset_and_num_candidates(len(potential))
        return self.dry_run_preemption(state, pi, potential, pdbs, offset, num)

    def dry_run_preemption(self, state, pi: PodInfo, potential: list[NodeInfo], pdbs: list, offset: int,
                           num: int) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        """Sequential DryRunPreemption: nodes from ``offset`` round-robin; stop as upstream cancels."""
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        node_statuses: dict[str, Status] = {}
        errs: list[str] = []
        n = len(potential)
        for i in range(n):
            ni = potential[(offset + i) % n]
            victims, nviol, st = self.select_victims_on_node(state, pi, ni, pdbs)
            if st.is_success() and victims:
                lst = non_violating if nviol == 0 else violating
                if len(lst) < num:    # candidateList.add drops what exceeds its size
                    lst.append(Candidate(ni.name, victims, nviol))
                if non_violating and len(non_violating) + len(violating) >= num:
                    break
                continue
            if st.is_success():
                st = Status.new(Code.Error, f'expected at least one victim pod on node "{ni.name}"')
            if st.code == Code.Error:
                errs.append(st.message())
            node_statuses[ni.name] = st
        return non_violating + violating, node_statuses, errs

    def select_victims_on_node(self, state, pi: PodInfo, ni: NodeInfo,
                               pdbs: Optional[list] = None) -> tuple[list[PodInfo], int, Status]:
        """SelectVictimsOnNode on a snapshot of ``ni``: (victims most important first, #violating, status)."""
        prio = pod_priority(pi.pod)
        potential = [p for p in ni.pods.values() if pod_priority(p.pod) < prio]
        if not potential:
            return [], 0, Status.new(Code.UnschedulableAndUnresolvable, MSG_NO_VICTIMS)
        ni = snapshot(ni)
        for p in potential:
            ni.remove_pod(p.key)
        st = self.handle.run_filters(state, pi, ni)
        if not st.is_success():
            return [], 0, st
        now = self._now()
        potential.sort(key=lambda p: more_important_key(p, now))
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs or [])
        victims: list[PodInfo] = []

        def reprieve(p: PodInfo) -> bool:
            ni.add_pod(p)
            fits = self.handle.run_filters(state, pi, ni).is_success()
            if not fits:
                ni.remove_pod(p.key)
                victims.append(p)
            return fits

        num_violating = sum(1 for p in violating if not reprieve(p))
        for p in non_violating:
            reprieve(p)
        if violating and non_violating:
            victims.sort(key=lambda p: more_important_key(p, now))
        return victims, num_violating, Status()

    def prepare_candidate(self, c: Candidate, pi: PodInfo) -> None:
        """Executor.prepareCandidate: preempt the victims not already being deleted, then clear the
        nomination of lower-priority pods nominated to the same node; the handle nominates the pod."""
        to_delete = [v for v in c.victims if v.pod.metadata.deletion_timestamp is None]
        self.handle.preempt(pi, c.name, to_delete)
        api = self._api()
        if api is None:
            return
        prio = pod_priority(pi.pod)
        for p in api.list("Pod"):
            if p is pi.pod or p.spec.node_name or p.status.nominated_node_name != c.name:
                continue
            if pod_priority(p) < prio:
                p.status.nominated_node_name = ""
                api.update(p)


def new(args=None, handle=None) -> DefaultPreemption:
    return DefaultPreemption(handle, args)
