"""Preemption (mirrors kueue pkg/scheduler/preemption/preemption.go, classical/ and fairsharing/ helpers,
common/ordering.go).

Classic: candidates are admitted workloads of the same ClusterQueue allowed by ``withinClusterQueue`` and of
other ClusterQueues in the cohort tree that are borrowing, allowed by ``reclaimWithinCohort`` (and, when the
preemptor has to borrow, ``borrowWithinCohort``). Candidates are ordered (other CQs first, lowest priority,
most recently admitted, UID), taken greedily until the preemptor fits, then minimised by walking the list
backwards and putting back every target that is not needed.

Fair sharing: repeatedly take the ClusterQueue with the highest weighted share that has candidates; its best
candidate is preempted if a strategy allows it (LessThanOrEqualToFinalShare: share of the preemptor's CQ with
the workload ≤ share of the target CQ without the candidate; LessThanInitialShare: < the target's current share).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from .cache import Node
from .resources import FlavorResource
from .workload import (IN_CLUSTER_QUEUE, IN_COHORT_FAIR_SHARING, IN_COHORT_RECLAIM_WHILE_BORROWING,
                       IN_COHORT_RECLAMATION, Info)


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


def _ordering_key(c: Info, own_cq: str) -> tuple:
    """common/ordering.go CandidatesOrdering: other CQs first, lower priority, most recent reservation, UID."""
    return (c.cq == own_cq, c.priority, -(c.reserved_at or 0.0), c.uid)


class Preemptor:
    def __init__(self, nodes: dict[str, Node], admitted: dict[str, dict[str, Info]], policies: dict[str, Policy],
                 fair_sharing: bool = False, strategies: tuple[str, ...] = ()):
        self.nodes, self.admitted, self.policies = nodes, admitted, policies
        self.fair_sharing, self.strategies = fair_sharing, strategies

    # --- candidates ----------------------------------------------------------------------------------------
    def candidates(self, wl: Info, frs: set[FlavorResource]) -> list[Info]:
        cq = self.nodes[wl.cq]
        pol = self.policies[wl.cq]
        out: list[Info] = []
        if pol.within_cluster_queue != "Never":
            for c in self.admitted.get(wl.cq, {}).values():
                if c is wl or not frs.intersection(c.usage):
                    continue
                if c.priority < wl.priority or (pol.within_cluster_queue == "LowerOrNewerEqualPriority"
                                                and c.priority == wl.priority and c.queued_at > wl.queued_at):
                    out.append(c)
        if cq.parent is not None and pol.reclaim_within_cohort != "Never":
            root = cq.root()
            for name in sorted(self.admitted):
                other = self.nodes.get(name)
                if name == wl.cq or other is None or other.root() is not root:
                    continue
                if not any(other.is_borrowing(fr) for fr in frs):
                    continue
                for c in self.admitted[name].values():
                    if not frs.intersection(c.usage):
                        continue
                    if pol.reclaim_within_cohort == "Any" or c.priority < wl.priority:
                        out.append(c)
        out.sort(key=lambda c: _ordering_key(c, wl.cq))
        return out

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

    def _minimal(self, wl: Info, req: dict[FlavorResource, int], candidates: list[Info], allow_borrowing: bool,
                 frs: set[FlavorResource]) -> list[Info]:
        cq = self.nodes[wl.cq]
        targets: list[Info] = []
        fits = False
        for c in candidates:
            if c.cq != wl.cq and not any(self.nodes[c.cq].is_borrowing(fr) for fr in frs):
                continue
            self._remove(c)
            targets.append(c)
            if self._fits(cq, req, allow_borrowing):
                fits = True
                break
        if not fits:
            for c in targets:
                self._restore(c)
            return []
        for i in range(len(targets) - 2, -1, -1):
            self._restore(targets[i])
            if self._fits(cq, req, allow_borrowing):
                targets.pop(i)
            else:
                self._remove(targets[i])
        for c in targets:
            self._restore(c)
        return targets

    def get_targets(self, wl: Info, req: dict[FlavorResource, int], frs: set[FlavorResource]) -> list[Target]:
        """preemption.go GetTargets for the flavor-resources that need preemption."""
        candidates = self.candidates(wl, frs)
        if not candidates:
            return []
        cq = self.nodes[wl.cq]
        if self.fair_sharing and cq.parent is not None:
            return self._fair(wl, req, frs, candidates)
        pol = self.policies[wl.cq]
        same = [c for c in candidates if c.cq == wl.cq]
        under_nominal = all(cq.usage.get(fr, 0) < cq.subtree.get(fr, 0) for fr in frs)
        borrows = any(cq.borrowing_with(fr, v) for fr, v in req.items())
        if pol.borrow_within_cohort != "Never":
            cands = candidates
            if not under_nominal and pol.max_priority_threshold is not None:
                cands = [c for c in candidates if c.cq == wl.cq or c.priority <= pol.max_priority_threshold]
            cands = [c for c in cands if c.cq == wl.cq or c.priority < wl.priority] if not under_nominal else cands
            return self._label(wl, self._minimal(wl, req, cands, True, frs), borrows)
        if under_nominal:
            targets = self._minimal(wl, req, candidates, False, frs)
            if targets:
                return self._label(wl, targets, False)
        return self._label(wl, self._minimal(wl, req, same, True, frs), borrows)

    def _label(self, wl: Info, targets: list[Info], borrowing: bool) -> list[Target]:
        out = []
        for t in targets:
            if t.cq == wl.cq:
                reason = IN_CLUSTER_QUEUE
            else:
                reason = IN_COHORT_RECLAIM_WHILE_BORROWING if borrowing else IN_COHORT_RECLAMATION
            out.append(Target(t, reason))
        return out

    # --- fair sharing (preemption.go fairPreemptions) ------------------------------------------------------
    def _fair(self, wl: Info, req: dict[FlavorResource, int], frs: set[FlavorResource],
              candidates: list[Info]) -> list[Target]:
        cq = self.nodes[wl.cq]
        by_cq: dict[str, list[Info]] = {}
        for c in candidates:
            by_cq.setdefault(c.cq, []).append(c)
        removed: list[Target] = []
        fits = False

        def share_with_wl() -> float:
            return cq.weighted_share(req)
        while not fits:
            order = sorted((n for n in by_cq if by_cq[n]), key=lambda n: (-self.nodes[n].weighted_share(), n))
            progressed = False
            for name in order:
                c = by_cq[name][0]
                node = self.nodes[name]
                if name == wl.cq:
                    ok, reason = True, IN_CLUSTER_QUEUE
                else:
                    ok, reason = False, IN_COHORT_FAIR_SHARING
                    preemptor_share = share_with_wl()
                    for strategy in self.strategies:
                        if strategy == "LessThanOrEqualToFinalShare":
                            self._remove(c)
                            target_after = node.weighted_share()
                            self._restore(c)
                            ok = preemptor_share <= target_after
                        elif strategy == "LessThanInitialShare":
                            ok = preemptor_share < node.weighted_share()
                        if ok:
                            break
                by_cq[name].pop(0)
                if not ok:
                    continue
                self._remove(c)
                removed.append(Target(c, reason))
                progressed = True
                if self._fits(cq, req, True):
                    fits = True
                break
            if not progressed:
                break
        if not fits:
            for t in removed:
                self._restore(t.info)
            return []
        for i in range(len(removed) - 2, -1, -1):
            self._restore(removed[i].info)
            if self._fits(cq, req, True):
                removed.pop(i)
            else:
                self._remove(removed[i].info)
        for t in removed:
            self._restore(t.info)
        return removed

    def oracle(self, wl: Info) -> Callable[[FlavorResource, int], bool]:
        """preemption_oracle.go SimulatePreemption: could preemption make ``val`` of fr fit?"""
        return lambda fr, val: bool(self.get_targets(wl, {fr: val}, {fr}))
