"""proportion (mirrors volcano-sh/volcano pkg/scheduler/plugins/proportion/proportion.go): queues share the
cluster by weight.

OnSessionOpen, over the queues that have jobs in this session: ``request`` = allocated + pending requests,
``realCapability = min(capability, (total − Σguarantee) + guarantee)``, where a capability that leaves out
cpu or memory does not limit them (upstream sets ``MilliCPU``/``Memory`` ≤ 0 to ``math.MaxFloat64``); then water-filling: each round,
every queue not yet met gets ``remaining × weight / Σweight`` more, capped per dimension by its
realCapability and its request, and at least its guarantee; a queue is met when its request fits in its
deserved share or its deserved share stopped changing; ``remaining`` shrinks by what was handed out; stop when
nothing remains or nothing changed.
Callbacks: QueueOrder (higher spec.priority, then lower share = max_r allocated_r/deserved_r), Overused
(deserved ≤ allocated), Allocatable / Preemptive (allocated + request ≤ deserved on the requested
dimensions), Reclaimable (victims from queues above their deserved share), JobEnqueueable (queue open;
with a capability: minResources + allocated + inqueue − elastic ≤ realCapability).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..api import (ALLOCATED_STATUSES, PENDING, Res, add, insufficient, less_equal, less_equal_with_dimension,
                   min_dimension, resource, share, sub)
from ..framework import PERMIT, REJECT
from .util import format_resource_names

NAME = "proportion"


@dataclass
class QueueAttr:
    name: str
    weight: int
    priority: int = 0
    deserved: Res = field(default_factory=resource)
    allocated: Res = field(default_factory=resource)
    request: Res = field(default_factory=resource)
    inqueue: Res = field(default_factory=resource)
    elastic: Res = field(default_factory=resource)
    guarantee: Res = field(default_factory=resource)
    capability: Res | None = None
    real_capability: Res = field(default_factory=resource)
    share: float = 0.0


def _quantities(rl) -> Res:
    from ...api.quantity import parse_quantity
    from ...componenthelpers.resource import to_units
    return resource({k: to_units(k, parse_quantity(v)) for k, v in (rl or {}).items()})


def update_share(attr: QueueAttr) -> None:
    attr.share = max((share(attr.allocated.get(r, 0), attr.deserved.get(r, 0)) for r in attr.deserved), default=0.0)


def water_fill(attrs: list[QueueAttr], total: Res) -> list[dict]:
    """The deserved-share loop; returns one record per round (remaining, and each queue's deserved)."""
    remaining = dict(total)
    met: set[str] = set()
    rounds = []
    while True:
        weight = sum(a.weight for a in attrs if a.name not in met)
        if weight == 0:
            break
        old_remaining = dict(remaining)
        increased, decreased = resource(), resource()
        for a in attrs:
            if a.name in met:
                continue
            old = dict(a.deserved)
            add(a.deserved, {k: v * a.weight / weight for k, v in remaining.items()})
            min_dimension(a.deserved, a.real_capability, infinity_default=True)
            min_dimension(a.deserved, a.request, infinity_default=False)
            for k, v in a.guarantee.items():          # helpers.Max(deserved, guarantee)
                a.deserved[k] = max(a.deserved.get(k, 0), v)
            update_share(a)
            if less_equal(a.request, a.deserved) or a.deserved == old:
                met.add(a.name)
            for k in set(a.deserved) | set(old):
                d = a.deserved.get(k, 0) - old.get(k, 0)
                if d > 0:
                    increased[k] = increased.get(k, 0) + d
                elif d < 0:
                    decreased[k] = decreased.get(k, 0) - d
        sub(remaining, increased)
        add(remaining, decreased)
        rounds.append({"remaining": dict(remaining), "deserved": {a.name: dict(a.deserved) for a in attrs}})
        if all(v <= 0 for v in remaining.values()) or remaining == old_remaining:
            break
    return rounds


def inqueue_resource(minres: Res, allocated: Res) -> Res:
    """util.GetInqueueResource: what minResources still lacks beyond what is allocated."""
    return {k: max(v - allocated.get(k, 0), 0) for k, v in minres.items()}


class Proportion:
    name = NAME

    def __init__(self, args: dict):
        self.args = args
        self.attrs: dict[str, QueueAttr] = {}
        self.rounds: list[dict] = []

    def on_session_open(self, ssn) -> None:
        total = dict(ssn.total_resource)
        total_guarantee = resource()
        for q in ssn.queues.values():
            if q.queue.spec.guarantee is not None:
                add(total_guarantee, _quantities(q.queue.spec.guarantee.resource))
        for uid in sorted(ssn.jobs):
            job = ssn.jobs[uid]
            q = ssn.queues[job.queue]
            attr = self.attrs.get(q.name)
            if attr is None:
                spec = q.queue.spec
                attr = QueueAttr(q.name, q.weight, q.priority)
                if spec.guarantee is not None:
                    attr.guarantee = _quantities(spec.guarantee.resource)
                if spec.capability is not None:
                    attr.capability = _quantities(spec.capability)
                    for dim in ("cpu", "memory"):   # OnSessionOpen: capability.MilliCPU/Memory <= 0 → MaxFloat64
                        if attr.capability[dim] <= 0:
                            attr.capability[dim] = math.inf
                real = add(sub(dict(total), total_guarantee), attr.guarantee)
                if attr.capability is not None:
                    min_dimension(real, attr.capability, infinity_default=True)
                attr.real_capability = real
                self.attrs[q.name] = attr
            for status, tasks in job.index.items():
                for t in tasks.values():
                    if status in ALLOCATED_STATUSES:
                        add(attr.allocated, t.resreq)
                        add(attr.request, t.resreq)
                    elif status == PENDING:
                        add(attr.request, t.resreq)
            if job.phase == "Inqueue" and job.min_resources is not None:
                add(attr.inqueue, job.min_resources)
            elif (job.phase == "Running" and job.min_resources is not None
                  and job.count(*ALLOCATED_STATUSES) >= job.min_available):
                add(attr.inqueue, inqueue_resource(job.min_resources, job.allocated))
        attrs = [self.attrs[k] for k in sorted(self.attrs)]
        self.rounds = water_fill(attrs, total)
        for a in attrs:
            update_share(a)

        def queue_order(l, r) -> int:
            if l.priority != r.priority:
                return -1 if l.priority > r.priority else 1
            ls = self.attrs[l.name].share if l.name in self.attrs else 0.0
            rs = self.attrs[r.name].share if r.name in self.attrs else 0.0
            if ls == rs:
                return 0
            return -1 if ls < rs else 1

        def overused(queue) -> bool:
            a = self.attrs.get(queue.name)
            return a is not None and less_equal(a.deserved, a.allocated)

        def allocatable(queue, task) -> bool:
            a = self.attrs.get(queue.name)
            if a is None:
                return True
            future = add(dict(a.allocated), task.resreq)
            return less_equal_with_dimension(future, a.deserved, task.resreq)

        def reclaimable(reclaimer, reclaimees):
            # master: a victim while its queue's allocated (less the victims taken so far) is above deserved.
            # volcano-sh/volcano#4160 (2025) removed the guard that skipped a queue whose allocated was
            # partly below the reclaimer's request: a queue's allocation spans nodes, so it said nothing.
            allocations: dict[str, Res] = {}
            victims = []
            for t in reclaimees:
                job = ssn.jobs.get(t.job)
                if job is None:
                    continue
                a = self.attrs[job.queue]
                allocations.setdefault(job.queue, dict(a.allocated))
                allocated = allocations[job.queue]
                if not less_equal(allocated, a.deserved):
                    sub(allocated, t.resreq)
                    victims.append(t)
            return victims, PERMIT

        def enqueueable(job) -> int:
            q = ssn.queues[job.queue]
            if not q.is_open():
                return REJECT     # upstream only logs "... is not open state, reject job ..."
            a = self.attrs[job.queue]
            if a.capability is None or job.min_resources is None:
                return PERMIT
            minreq = job.min_resources
            r = sub(add(add(dict(minreq), a.allocated), a.inqueue), a.elastic)
            if less_equal(r, a.real_capability, infinity_default=True):
                add(a.inqueue, minreq)
                return PERMIT
            short = [k for k in insufficient(r, a.real_capability) if k in a.real_capability]
            ssn.cache.ctx.event(job.pod_group, "Normal", "Unschedulable", format_resource_names(
                "queue resource quota insufficient", "insufficient", short), ssn.cache.component)
            return REJECT

        def on_allocate(task) -> None:
            job = ssn.jobs.get(task.job)
            if job is not None and job.queue in self.attrs:
                add(self.attrs[job.queue].allocated, task.resreq)
                update_share(self.attrs[job.queue])

        def on_deallocate(task) -> None:
            job = ssn.jobs.get(task.job)
            if job is not None and job.queue in self.attrs:
                sub(self.attrs[job.queue].allocated, task.resreq)
                update_share(self.attrs[job.queue])

        ssn.add_fn("queue_order", NAME, queue_order)
        ssn.add_fn("overused", NAME, overused)
        ssn.add_fn("allocatable", NAME, allocatable)
        ssn.add_fn("preemptive", NAME, allocatable)
        ssn.add_fn("reclaimable", NAME, reclaimable)
        ssn.add_fn("job_enqueueable", NAME, enqueueable)
        ssn.add_event_handler(on_allocate, on_deallocate)

    def on_session_close(self, ssn) -> None:
        ssn.record["proportion"] = {
            name: {"weight": a.weight, "deserved": dict(a.deserved), "allocated": dict(a.allocated),
                   "request": dict(a.request), "share": a.share,
                   "capability": None if a.capability is None else dict(a.capability)}
            for name, a in sorted(self.attrs.items())}


def new(args: dict) -> Proportion:
    return Proportion(args)
