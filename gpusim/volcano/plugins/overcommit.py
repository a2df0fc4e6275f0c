"""overcommit (mirrors volcano-sh/volcano pkg/scheduler/plugins/overcommit/overcommit.go): the enqueue gate.

``idle = total × overcommit-factor − used`` (factor default 1.2; values below 1.0 fall back to 1.2); a job with
minResources is enqueueable iff ``inqueue + minResources ≤ idle`` on the dimensions it asks for, where
inqueue sums the minResources of Inqueue jobs and what Running jobs still lack of theirs. A rejected job
gets the event "resource in cluster is overused" naming the short dimensions.
"""
from __future__ import annotations

from ..api import ALLOCATED_STATUSES, add, insufficient, less_equal_with_dimension, resource, sub
from ..framework import PERMIT, REJECT
from .util import arg_float, format_resource_names
from .proportion import inqueue_resource

NAME = "overcommit"
DEFAULT_FACTOR = 1.2
FACTOR_KEY = "overcommit-factor"


class Overcommit:
    name = NAME

    def __init__(self, args: dict):
        self.args = args
        f = arg_float(args, FACTOR_KEY, DEFAULT_FACTOR)
        self.factor = f if f >= 1.0 else DEFAULT_FACTOR
        self.idle = resource()
        self.inqueue = resource()

    def on_session_open(self, ssn) -> None:
        used = resource()
        for n in ssn.nodes.values():
            add(used, n.used)
        self.idle = sub({k: v * self.factor for k, v in ssn.total_resource.items()}, used)
        for uid in sorted(ssn.jobs):
            job = ssn.jobs[uid]
            if job.min_resources is None:
                continue
            if job.phase == "Inqueue":
                add(self.inqueue, job.min_resources)
            elif job.phase == "Running" and job.count(*ALLOCATED_STATUSES) >= job.min_available:
                add(self.inqueue, inqueue_resource(job.min_resources, job.allocated))

        def enqueueable(job) -> int:
            if job.min_resources is None:
                return PERMIT
            want = add(dict(self.inqueue), job.min_resources)
            if less_equal_with_dimension(want, self.idle, job.min_resources):
                return PERMIT
            short = insufficient({k: v for k, v in want.items() if job.min_resources.get(k, 0) > 0}, self.idle)
            ssn.cache.ctx.event(job.pod_group, "Normal", "Unschedulable", format_resource_names(
                "resource in cluster is overused", "overused", short), ssn.cache.component)
            return REJECT

        def enqueued(job) -> None:
            if job.min_resources is not None:
                add(self.inqueue, job.min_resources)

        ssn.add_fn("job_enqueueable", NAME, enqueueable)
        ssn.add_fn("job_enqueued", NAME, enqueued)

    def on_session_close(self, ssn) -> None:
        ssn.record["overcommit"] = {"factor": self.factor, "idle": dict(self.idle), "inqueue": dict(self.inqueue)}


def new(args: dict) -> Overcommit:
    return Overcommit(args)
