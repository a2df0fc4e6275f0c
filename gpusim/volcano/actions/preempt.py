"""preempt (mirrors volcano-sh/volcano pkg/scheduler/actions/preempt/preempt.go), between jobs of the same
queue: a starving job's pending task may evict Running, preemptable (``volcano.sh/preemptable`` absent or
true) tasks of other jobs in its queue that the Preemptable plugins allow (priority: lower job priority; gang:
a job keeps minAvailable; drf: shares; conformance: no critical pods), in BuildVictimsPriorityQueue order, on
the first node (sorted by name) where that frees enough; the task is pipelined there. The statement is committed if
the job is then JobPipelined, else discarded. Preemption between tasks of one job is not simulated. A job with a
``networkTopology`` does not preempt (upstream skips it: volcano-sh/volcano issue 4374)."""
from __future__ import annotations

from ..api import PENDING, RUNNING, add, less_equal, resource
from ..framework import PriorityQueue, Statement

NAME = "preempt"


def _preempt(ssn, stmt: Statement, preemptor, job) -> bool:
    for node in ssn.nodes.values():
        if ssn.predicate_fn(preemptor, node):
            continue
        candidates = []
        for t in sorted(node.tasks.values(), key=lambda t: (t.namespace, t.name)):
            if t.status != RUNNING or not t.preemptable or t.job == job.uid:
                continue
            vj = ssn.jobs.get(t.job)
            if vj is None or vj.queue != job.queue:
                continue
            candidates.append(t)
        victims = ssn.preemptable(preemptor, candidates) if candidates else []
        freeable = add(node.future_idle(), resource())
        for v in victims:
            add(freeable, v.resreq)
        if not victims or not less_equal(preemptor.resreq, freeable):
            continue
        order = ssn.build_victims_priority_queue(victims, preemptor)
        while not order.empty() and not less_equal(preemptor.resreq, node.future_idle()):
            stmt.evict(order.pop(), "preempt")
        if less_equal(preemptor.resreq, node.future_idle()):
            stmt.pipeline(preemptor, node)
            return True
    return False


def execute(ssn) -> None:
    by_queue: dict[str, PriorityQueue] = {}
    for uid in sorted(ssn.jobs):
        job = ssn.jobs[uid]
        if job.is_pending() or ssn.job_valid(job) is not None or ssn.queues.get(job.queue) is None:
            continue
        if not ssn.job_starving(job):
            continue
        if job.network_topology is not None:
            # upstream: "jobs containing networkTopology do not support preemption" (volcano issue 4374)
            ssn.trace("preempt.(*Action).Execute", f"PodGroup {job.uid}", "skip preemption: networkTopology")
            continue
        by_queue.setdefault(job.queue, PriorityQueue(ssn.job_order_fn)).push(job)
    for qname in sorted(by_queue):
        jobs = by_queue[qname]
        while not jobs.empty():
            job = jobs.pop()
            tasks = PriorityQueue(ssn.task_order_fn)
            for t in job.of(PENDING):
                tasks.push(t)
            stmt = Statement(ssn)
            while ssn.job_starving(job) and not tasks.empty():
                _preempt(ssn, stmt, tasks.pop(), job)
            if ssn.job_pipelined(job):
                if stmt.ops:
                    ssn.trace("preempt.(*Action).Execute", f"PodGroup {job.uid}", "Commit",
                              victims=[t.ref for op, t, _ in stmt.ops if op == "evict"])
                stmt.commit()
            else:
                stmt.discard()
