"""drf (mirrors volcano-sh/volcano pkg/scheduler/plugins/drf/drf.go): Dominant Resource Fairness between jobs.

A job's share is its dominant share, ``max_r allocated_r / total_r`` over the cluster's resources; JobOrder
puts the lower share first; a task may preempt another job's task when the preemptor's share after
gaining it stays below the victim's share after losing it (or they differ by ≤ shareDelta = 0.000001).
Hierarchical DRF (``enableHierarchy``) is not simulated.
"""
from __future__ import annotations

from ..api import add, share, sub
from ..framework import PERMIT

NAME = "drf"
SHARE_DELTA = 0.000001


def dominant_share(allocated: dict, total: dict) -> float:
    """calculateShare: the largest per-resource share."""
    return max((share(allocated.get(r, 0), total[r]) for r in total), default=0.0)


class DRF:
    name = NAME

    def __init__(self, args: dict):
        self.args = args
        self.total: dict = {}
        self.allocated: dict[str, dict] = {}
        self.shares: dict[str, float] = {}

    def on_session_open(self, ssn) -> None:
        self.total = dict(ssn.total_resource)
        for uid, job in ssn.jobs.items():
            self.allocated[uid] = dict(job.allocated)
            self.shares[uid] = dominant_share(self.allocated[uid], self.total)

        def job_order(l, r) -> int:
            ls, rs = self.shares.get(l.uid, 0.0), self.shares.get(r.uid, 0.0)
            if ls == rs:
                return 0
            return 1 if ls > rs else -1

        def preemptable(preemptor, preemptees):
            lalloc = add(dict(self.allocated.get(preemptor.job, {})), preemptor.resreq)
            ls = dominant_share(lalloc, self.total)
            allocations: dict[str, dict] = {}
            victims = []
            for t in preemptees:
                if t.job not in allocations:
                    allocations[t.job] = dict(self.allocated.get(t.job, {}))
                rs = dominant_share(sub(allocations[t.job], t.resreq), self.total)
                if ls < rs or abs(ls - rs) <= SHARE_DELTA:
                    victims.append(t)
            return victims, PERMIT

        def on_allocate(task) -> None:
            if task.job in self.allocated:
                add(self.allocated[task.job], task.resreq)
                self.shares[task.job] = dominant_share(self.allocated[task.job], self.total)

        def on_deallocate(task) -> None:
            if task.job in self.allocated:
                sub(self.allocated[task.job], task.resreq)
                self.shares[task.job] = dominant_share(self.allocated[task.job], self.total)

        ssn.add_fn("job_order", NAME, job_order)
        ssn.add_fn("preemptable", NAME, preemptable)
        ssn.add_event_handler(on_allocate, on_deallocate)

    def on_session_close(self, ssn) -> None:
        ssn.record["drf"] = dict(self.shares)


def new(args: dict) -> DRF:
    return DRF(args)
