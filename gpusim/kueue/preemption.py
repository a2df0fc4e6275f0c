"""Preemption (mirrors kueue pkg/scheduler/preemption/preemption.go, classical/ and fairsharing/ helpers,
common/ordering.go).

Classic (classicalPreemptions, classical/hierarchical_preemption.go, classical/candidate_generator.go): candidates
are the admitted workloads using a contested flavor-resource that the policies allow: of the preemptor's ClusterQueue
(``withinClusterQueue``), and of ClusterQueues above nominal in Cohort subtrees above nominal (``reclaimWithinCohort``).
Walking up from the preemptor's ClusterQueue, a candidate found once the preemptor's own subtree holds the request is
a hierarchical reclaim (InCohortReclamation, whatever the borrowing); the others are priority candidates:
with ``borrowWithinCohort`` those below the priority threshold may be reclaimed while the preemptor borrows
(InCohortReclaimWhileBorrowing), the rest only if it ends within nominal (InCohortReclamation). Hierarchical, then
priority, then own candidates, each list by CandidatesOrdering (lowest priority, most recently admitted, UID), are
taken while still valid (their queue and its Cohorts up to the common ancestor still above nominal) until the
preemptor fits, with and/or without borrowing, then every target not needed is put back (fillBackWorkloads).

Fair sharing (fairPreemptions), with the incoming workload's usage counted in its ClusterQueue: the target
ClusterQueue is found down the Cohort tree, highest share first at each level; the strategies compare the shares of
the preemptor's and the target's almost lowest common ancestors. First strategy over the targets (the preemptor's
own candidates InClusterQueue; another CQ's first candidate the strategy allows, the others kept for a retry); then
the second strategy over the refused candidates. LessThanOrEqualToFinalShare: preemptor's share ≤ target's share
without the candidate; LessThanInitialShare: < the target's current share.
"""
from __future__ import annotations

import bisect
import heapq
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator, Optional

from ..api.kueue_x_k8s_io import JOB_UID_LABEL
from .cache import Node
from .resources import FlavorResource
from .workload import (HUMAN_READABLE_PREEMPTION, IN_CLUSTER_QUEUE, IN_COHORT_FAIR_SHARING,
                       IN_COHORT_RECLAIM_WHILE_BORROWING, IN_COHORT_RECLAMATION, Info)


TASFits = Callable[[list[Info]], bool]
UNKNOWN = "UNKNOWN"
# preemption/common PreemptionPossibility
NO_CANDIDATES, PREEMPT_POSSIBLE, RECLAIM_POSSIBLE = "NoCandidates", "Preempt", "Reclaim"


def preemption_message(preemptor_uid: str, preemptor_labels: dict[str, str], reason: str,
                       preemptor_path: str, preemptee_path: str) -> str:
    """preemption.go preemptionMessage: the preemptor Workload's UID and its ``kueue.x-k8s.io/job-uid`` label
    (the Job it was created for), each ``UNKNOWN`` when empty; an unknown reason reads ``UNKNOWN`` too."""
    return (f"Preempted to accommodate a workload (UID: {preemptor_uid or UNKNOWN}, "
            f"JobUID: {preemptor_labels.get(JOB_UID_LABEL) or UNKNOWN}) due to "
            f"{HUMAN_READABLE_PREEMPTION.get(reason, '') or UNKNOWN}; preemptor path: {preemptor_path or UNKNOWN}; "
            f"preemptee path: {preemptee_path or UNKNOWN}")


# classical/hierarchical_preemption.go preemptionVariant, and the reason each one preempts with
WITHIN_CQ, HIERARCHICAL_RECLAIM = "WithinCQ", "HierarchicalReclaim"
RECLAIM_WITHOUT_BORROWING, RECLAIM_WHILE_BORROWING = "ReclaimWithoutBorrowing", "ReclaimWhileBorrowing"
_REASONS = {WITHIN_CQ: IN_CLUSTER_QUEUE, HIERARCHICAL_RECLAIM: IN_COHORT_RECLAMATION,
            RECLAIM_WITHOUT_BORROWING: IN_COHORT_RECLAMATION, RECLAIM_WHILE_BORROWING: IN_COHORT_RECLAIM_WHILE_BORROWING}


@dataclass
class Target:
    info: Info
    reason: str


@dataclass
class Policy:
    within_cluster_queue: str = "Never"
    reclaim_within_cohort: str = "Never"
    borrow_within_cohort: str = "Never"
    max_priority_threshold: Optional[int] = None


class Preemptor:
    def __init__(self, nodes: dict[str, Node], admitted: dict[str, dict[str, Info]], policies: dict[str, Policy],
                 fair_sharing: bool = False, strategies: tuple[str, ...] = (), preempt_within_nominal: bool = True):
        self.nodes, self.admitted, self.policies = nodes, admitted, policies
        self.fair_sharing, self.strategies = fair_sharing, strategies
        self.preempt_within_nominal = preempt_within_nominal   # feature gate FairSharingPreemptWithinNominal
        self._searches: Optional[dict] = None        # while nominating: memoised target searches
        # admitted workloads of each CQ kept in candidate order (priority, newest reservation first, UID), so
        # candidates stream out lazily and the greedy search stops as soon as the preemptor fits
        self._ordered: dict[str, list[tuple[tuple, Info]]] = {n: [] for n in nodes}
        self._cohort: dict[str, list[str]] = {}
        for name, node in sorted(nodes.items()):
            if node.parent is not None:
                root = node.root()
                self._cohort[name] = sorted(n for n, o in nodes.items() if o.root() is root and n != name)

    @staticmethod
    def _key(c: Info) -> tuple:
        return (c.priority, -(c.reserved_at or 0.0), c.uid)

    def admitted_added(self, c: Info) -> None:
        bisect.insort(self._ordered[c.cq], (self._key(c), c), key=lambda e: e[0])

    def admitted_removed(self, c: Info) -> None:
        lst = self._ordered[c.cq]
        k = self._key(c)
        i = bisect.bisect_left(lst, k, key=lambda e: e[0])
        while i < len(lst) and lst[i][1] is not c:
            i += 1
        if i < len(lst):
            del lst[i]

    # --- candidates ----------------------------------------------------------------------------------------
    def candidates(self, wl: Info, frs: set[FlavorResource]) -> Iterator[Info]:
        """preemption.go findCandidates (fair sharing), in CandidatesOrdering order: other CQs of the cohort tree
        that borrow first, then the preemptor's CQ."""
        pol = self.policies[wl.cq]
        if pol.reclaim_within_cohort != "Never":
            lists = [self._ordered[n] for n in self._cohort.get(wl.cq, ())
                     if self._ordered[n] and any(self.nodes[n].is_borrowing(fr) for fr in frs)]
            stream = lists[0] if len(lists) == 1 else heapq.merge(*lists, key=lambda e: e[0])
            any_priority = pol.reclaim_within_cohort == "Any"
            for _, c in stream:
                if not any_priority and c.priority >= wl.priority:
                    if len(lists) == 1:
                        break
                    continue
                if frs.intersection(c.usage):
                    yield c
        if pol.within_cluster_queue != "Never":
            newer_equal = pol.within_cluster_queue == "LowerOrNewerEqualPriority"
            for _, c in self._ordered[wl.cq]:
                if c.priority > wl.priority or (c.priority == wl.priority and not newer_equal):
                    break
                if c is wl or not frs.intersection(c.usage):
                    continue
                if c.priority < wl.priority or c.queued_at > wl.queued_at:
                    yield c

    # --- fit checks on the live tree (targets are removed and put back) ------------------------------------
    @staticmethod
    def _fits(cq: Node, req: dict[FlavorResource, int], allow_borrowing: bool) -> bool:
        for fr, v in req.items():
            if not allow_borrowing and cq.borrowing_with(fr, v):
                return False
            if v > cq.available(fr):
                return False
        return True

    def _remove(self, c: Info) -> None:
        node = self.nodes[c.cq]
        for fr, v in c.usage.items():
            node.add_usage(fr, -v)

    def _restore(self, c: Info) -> None:
        node = self.nodes[c.cq]
        for fr, v in c.usage.items():
            node.add_usage(fr, v)

    # --- classical preemption (preemption.go classicalPreemptions, classical/hierarchical_preemption.go,
    # classical/candidate_generator.go) ---------------------------------------------------------------------------
    @staticmethod
    def _within_nominal(node: Node, frs: set[FlavorResource]) -> bool:
        """IsWithinNominalInResources."""
        return all(node.usage.get(fr, 0) <= node.subtree.get(fr, 0) for fr in frs)

    @staticmethod
    def _fits_in_quota(node: Node, req: dict[FlavorResource, int]) -> tuple[bool, dict[FlavorResource, int]]:
        """QuantitiesFitInQuota: whether ``req`` fits the node's subtree quota, and what exceeds its local
        (guaranteed) quota, for the parent."""
        fits = all(node.usage.get(fr, 0) + v <= node.subtree.get(fr, 0) for fr, v in req.items())
        return fits, {fr: max(0, v - node.local_available(fr)) for fr, v in req.items()}

    def _variant(self, wl: Info, c: Info, frs: set[FlavorResource], advantage: bool) -> str:
        """classifyPreemptionVariant: "" (never), WithinCQ, HierarchicalReclaim, ReclaimWithoutBorrowing or
        ReclaimWhileBorrowing."""
        if not frs.intersection(c.usage):
            return ""
        pol = self.policies[wl.cq]
        policy = pol.within_cluster_queue if c.cq == wl.cq else pol.reclaim_within_cohort
        lower = wl.priority > c.priority
        if policy == "LowerPriority":
            too_high = not lower
        elif policy == "LowerOrNewerEqualPriority":
            too_high = not (lower or (wl.priority == c.priority and wl.queued_at < c.queued_at))
        else:
            too_high = policy != "Any"
        if too_high:
            return ""
        if c.cq == wl.cq:
            return WITHIN_CQ
        if advantage:
            return HIERARCHICAL_RECLAIM
        if pol.borrow_within_cohort == "Never":
            return RECLAIM_WITHOUT_BORROWING
        thr = pol.max_priority_threshold
        if c.priority >= wl.priority or (thr is not None and c.priority > thr):
            return RECLAIM_WITHOUT_BORROWING
        return RECLAIM_WHILE_BORROWING

    def _collect_subtree(self, wl: Info, node: Node, lca: Node, skip: Optional[Node], advantage: bool,
                         frs: set[FlavorResource], out: list) -> None:
        """collectCandidatesInSubtree: the candidates of the ClusterQueues above nominal in the subtree, not
        entering Cohorts within nominal nor the subtree already visited."""
        for child in node.children:
            if child.is_cq:
                if child.name != wl.cq and not self._within_nominal(child, frs):
                    for _, c in self._ordered[child.name]:
                        variant = self._variant(wl, c, frs, advantage)
                        if variant:
                            out.append((c, lca, variant))
            elif child is not skip and not self._within_nominal(child, frs):
                self._collect_subtree(wl, child, lca, skip, advantage, frs, out)

    def _classical_candidates(self, wl: Info, req: dict[FlavorResource, int], frs: set[FlavorResource]
                              ) -> tuple[list, list, list]:
        """NewCandidateIterator's three lists, each in CandidatesOrdering order: hierarchical reclaim
        candidates (the preemptor's subtree holds the quota they use), priority candidates, own candidates."""
        cq, pol = self.nodes[wl.cq], self.policies[wl.cq]
        same: list = []
        if pol.within_cluster_queue != "Never":
            for _, c in self._ordered[wl.cq]:
                if c is not wl and self._variant(wl, c, frs, False):
                    same.append((c, None, WITHIN_CQ))
        hier: list = []
        prio: list = []
        if cq.parent is not None and pol.reclaim_within_cohort != "Never":
            advantage, remaining = self._fits_in_quota(cq, req)
            prev, node = None, cq.parent
            while node is not None:
                self._collect_subtree(wl, node, node, prev, advantage, frs, hier if advantage else prio)
                fits, remaining = self._fits_in_quota(node, remaining)
                advantage = advantage or fits
                prev, node = node, node.parent
        order = lambda e: self._key(e[0])   # noqa: E731  (lowest priority, newest reservation, UID)
        return sorted(hier, key=order), sorted(prio, key=order), same

    def _valid(self, wl: Info, c: Info, lca: Optional[Node], variant: str, borrow: bool,
               frs: set[FlavorResource]) -> bool:
        """candidateIsValid, on the cache as the targets chosen so far left it."""
        if c.cq == wl.cq:
            return True
        if borrow and variant == RECLAIM_WITHOUT_BORROWING:
            return False
        node: Optional[Node] = self.nodes[c.cq]
        if self._within_nominal(node, frs):
            return False
        node = node.parent
        while node is not None and node is not lca:
            if self._within_nominal(node, frs):
                return False
            node = node.parent
        return True

    def _classical(self, wl: Info, req: dict[FlavorResource, int], frs: set[FlavorResource], minimize: bool,
                   tas_fits: Optional[TASFits]) -> list[Target]:
        """classicalPreemptions: one or two attempts, with and/or without borrowing, each taking valid
        candidates in order until the preemptor fits, then putting back every target not needed."""
        found = self._cached(("classical", wl, req, frs), tas_fits,
                             lambda: self._classical_search(wl, req, frs, tas_fits))
        if found is None:
            return []
        borrow, targets = found
        return self._fill_back(wl, req, borrow, targets, tas_fits) if minimize else list(targets)

    def _classical_search(self, wl: Info, req: dict[FlavorResource, int], frs: set[FlavorResource],
                          tas_fits: Optional[TASFits]) -> Optional[tuple[bool, list[Target]]]:
        """The attempts of classicalPreemptions: (whether borrowing was allowed, the targets taken in order until
        the preemptor fits) for the first attempt that fits, None if none does. The cache is left as it was."""
        cq, pol = self.nodes[wl.cq], self.policies[wl.cq]
        hier, prio, same = self._classical_candidates(wl, req, frs)
        forbidden = pol.borrow_within_cohort == "Never"
        under_nominal = all(cq.usage.get(fr, 0) < cq.nominal.get(fr, 0) for fr in frs)
        if not hier and not prio or (forbidden and not under_nominal):
            attempts = [True]
        elif forbidden and not hier:
            attempts = [False, True]
        else:
            attempts = [True, False]
        for borrow in attempts:
            targets: list[Target] = []
            fits = False
            for c, lca, variant in (*hier, *prio, *same):
                if not self._valid(wl, c, lca, variant, borrow, frs):
                    continue
                self._remove(c)
                targets.append(Target(c, _REASONS[variant]))
                if self._fits(cq, req, borrow) and (tas_fits is None or tas_fits([t.info for t in targets])):
                    fits = True
                    break
            for t in targets:
                self._restore(t.info)
            if fits:
                return borrow, targets
        return None

    def _fill_back(self, wl: Info, req: dict[FlavorResource, int], borrow: bool, found: list[Target],
                   tas_fits: Optional[TASFits]) -> list[Target]:
        """fillBackWorkloads: with ``found`` removed, put back each target, newest taken first but the last,
        whose removal is not needed for the preemptor to fit."""
        cq = self.nodes[wl.cq]
        targets = list(found)
        for t in targets:
            self._remove(t.info)

        def fits_now() -> bool:
            return self._fits(cq, req, borrow) and (tas_fits is None or tas_fits([t.info for t in targets]))
        return self._put_back(targets, fits_now)

    def _put_back(self, targets: list[Target], fits: Callable[[], bool]) -> list[Target]:
        """fillBackWorkloads' loop, shared by minimalPreemptions and fairPreemptions: with every target removed,
        put back each one, newest taken first but the last, while the preemptor still ``fits``; then restore the
        rest too (the search only simulated their removal). Returns the targets still needed."""
        for i in range(len(targets) - 2, -1, -1):
            back = targets.pop(i)
            self._restore(back.info)
            if not fits():
                self._remove(back.info)
                targets.insert(i, back)
        for t in targets:
            self._restore(t.info)
        return targets

    @contextmanager
    def nominating(self) -> Iterator[None]:
        """While a scheduling cycle nominates its heads (flavor assignment with the preemption oracle, then
        nominate's GetTargets for the Preempt assignments) the cache and the admitted workloads do not change:
        a search for the same workload and request, as the oracle and nominate both make it, is done once."""
        self._searches = {}
        try:
            yield
        finally:
            self._searches = None

    def _cached(self, key: tuple, tas_fits: Optional[TASFits], search: Callable[[], object]) -> object:
        """``search()``, memoised for ``key`` (the workload by identity, the request, the flavor-resources)
        while nominating; a TAS fit check is not part of the key, so such searches are not memoised."""
        if self._searches is None or tas_fits is not None:
            return search()
        k = (key[0], id(key[1]), tuple(sorted(key[2].items())), frozenset(key[3]))
        if k not in self._searches:
            self._searches[k] = search()
        return self._searches[k]

    def get_targets(self, wl: Info, req: dict[FlavorResource, int], frs: set[FlavorResource],
                    minimize: bool = True, tas_fits: Optional[TASFits] = None) -> list[Target]:
        """preemption.go GetTargets for the flavor-resources that need preemption (``minimize=False``: only
        whether any set of targets exists, as the flavor assigner's preemption oracle asks). ``tas_fits``: for a
        workload that needs TAS, whether its topology placement fits once the given targets are gone (the
        fit check then asks for both, as upstream's preemption does for TAS workloads). Fair sharing in a cohort
        (fairPreemptions), otherwise classical preemption."""
        cq = self.nodes[wl.cq]
        if self.fair_sharing and cq.parent is not None:
            def search() -> list[Target]:
                candidates = list(self.candidates(wl, frs))
                return self._fair(wl, req, frs, candidates, tas_fits) if candidates else []
            return list(self._cached(("fair", wl, req, frs), tas_fits, search))
        return self._classical(wl, req, frs, minimize, tas_fits)

    _STRATEGIES = {   # fairsharing strategies: (preemptor's new share, target's old share, target's new share)
        "LessThanOrEqualToFinalShare": lambda preemptor, old, new: preemptor <= new,   # rule S2-a
        "LessThanInitialShare": lambda preemptor, old, new: preemptor < old,          # rule S2-b
    }

    def _fair(self, wl: Info, req: dict[FlavorResource, int], frs: set[FlavorResource],
              candidates: list[Info], tas_fits: Optional[TASFits] = None) -> list[Target]:
        """preemption.go fairPreemptions, with the incoming workload's usage added to its ClusterQueue while
        shares are compared (SimulateUsageAddition). The target ClusterQueue is found down the Cohort tree,
        highest share first at each level (fairsharing ClusterQueueOrdering); the strategies compare the shares of
        the preemptor's and the target's almost lowest common ancestors (the children of their common Cohort:
        in one flat Cohort, the two ClusterQueues). First strategy (runFirstFsStrategy): in the preemptor's own
        ClusterQueue preempt its next candidate; in another, the first candidate the first strategy allows (those
        it refuses are kept for a retry), then look for the target again. If the preemptor does not fit yet, the
        second strategy (runSecondFsStrategy) goes through the refused candidates, the first of each ClusterQueue.
        Last, every target that is not needed is put back."""
        cq = self.nodes[wl.cq]
        removed: list[Target] = []
        # fairsharing_preemption.go iterateWithFirstFsStrategy: a preemptor that stays within its nominal quota
        # for every contested resource with the incoming workload counted
        # (preemption.go queueWithinNominalInResourcesNeedingPreemption) reclaims each other ClusterQueue's
        # candidates without consulting the strategies, reason InCohortReclamation
        within_nominal = self.preempt_within_nominal and not any(cq.borrowing_with(fr, req.get(fr, 0)) for fr in frs)

        def simulate(sign: int) -> None:
            for fr, v in req.items():
                cq.add_usage(fr, sign * v)

        def fits_plain() -> bool:
            return self._fits(cq, req, True) and (tas_fits is None or tas_fits([t.info for t in removed]))

        def fits_now() -> bool:      # workloadFitsForFairSharing: without the simulated usage
            simulate(-1)
            try:
                return fits_plain()
            finally:
                simulate(1)

        def take(c: Info, reason: str) -> bool:
            self._remove(c)
            removed.append(Target(c, reason))
            return fits_now()
        by_cq: dict[str, list[Info]] = {}
        for c in candidates:
            by_cq.setdefault(c.cq, []).append(c)
        below: dict[int, set[str]] = {}

        def cqs_below(node: Node) -> set[str]:
            if id(node) not in below:
                below[id(node)] = {node.name} if node.is_cq else set().union(*(cqs_below(ch) for ch in node.children))
            return below[id(node)]

        def pick(names: set[str]) -> Optional[str]:
            """The next target ClusterQueue: down from the root, the child with the highest share."""
            node = cq.root()
            while True:
                best, best_share = None, 0.0
                for child in node.children:
                    if not (names & cqs_below(child)):
                        continue
                    sh = child.weighted_share()
                    if best is None or sh > best_share or (sh == best_share and child.name < best.name):
                        best, best_share = child, sh
                if best is None:
                    return None
                if best.is_cq:
                    return best.name
                node = best

        def path(node: Node) -> list[Node]:
            out = []
            while node is not None:
                out.append(node)
                node = node.parent
            return out

        def almost_lcas(target: Node) -> tuple[Node, Node]:
            pa, pb = path(cq), path(target)
            ids = {id(n): i for i, n in enumerate(pb)}
            for i, n in enumerate(pa):
                if id(n) in ids:
                    return pa[i - 1], pb[ids[id(n)] - 1]
            return pa[-1], pb[-1]
        strategies = [self._STRATEGIES[s] for s in self.strategies]
        active = set(by_cq)
        retry: list[Info] = []
        fits = False
        simulate(1)
        try:
            while not fits:
                name = pick(active)
                if name is None:
                    break
                node, cands = self.nodes[name], by_cq[name]
                if name == wl.cq:
                    fits = take(cands.pop(0), IN_CLUSTER_QUEUE)
                    if not cands:
                        active.discard(name)
                    continue
                mine, theirs = almost_lcas(node)
                preemptor_share, target_old = mine.weighted_share(), theirs.weighted_share()
                while cands and not fits:
                    c = cands.pop(0)
                    self._remove(c)
                    target_new = theirs.weighted_share()
                    self._restore(c)
                    if within_nominal:
                        ok, reason = True, IN_COHORT_RECLAMATION
                    else:
                        ok, reason = strategies[0](preemptor_share, target_old, target_new), IN_COHORT_FAIR_SHARING
                    if not ok:
                        retry.append(c)
                        continue
                    fits = take(c, reason)
                    break       # the shares changed: look for the target again
                if not cands or not any(node.is_borrowing(fr) for fr in frs):
                    active.discard(name)
            if not fits and len(strategies) > 1 and retry:
                first: dict[str, Info] = {}
                for c in retry:
                    first.setdefault(c.cq, c)
                names = set(first)
                while names and not fits:
                    name = pick(names)
                    names.discard(name)
                    mine, theirs = almost_lcas(self.nodes[name])
                    if strategies[1](mine.weighted_share(), theirs.weighted_share(), 0.0):
                        fits = take(first[name], IN_COHORT_FAIR_SHARING)
        finally:
            simulate(-1)
        if not fits:
            for t in removed:
                self._restore(t.info)
            return []
        return self._put_back(removed, fits_plain)

    def oracle(self, wl: Info) -> Callable[[FlavorResource, int], tuple[str, int]]:
        """preemption_oracle.go SimulatePreemption for ``val`` of fr: (possibility, borrowing level). The
        possibility is ``NoCandidates``, ``Preempt`` (a target is in the preemptor's ClusterQueue) or ``Reclaim``
        (all targets are in other ClusterQueues); the level is FindHeightOfLowestSubtreeThatFits once the
        targets are gone (before, when there are none)."""
        def simulate(fr: FlavorResource, val: int) -> tuple[str, int]:
            cq = self.nodes[wl.cq]
            targets = self.get_targets(wl, {fr: val}, {fr})
            if not targets:
                return NO_CANDIDATES, cq.height_of_lowest_subtree_that_fits(fr, val)[0]
            for t in targets:
                self._remove(t.info)
            borrow_after = cq.height_of_lowest_subtree_that_fits(fr, val)[0]
            for t in targets:
                self._restore(t.info)
            same = any(t.info.cq == wl.cq for t in targets)
            return (PREEMPT_POSSIBLE if same else RECLAIM_POSSIBLE), borrow_after
        return simulate
