"""reclaim (mirrors volcano-sh/volcano pkg/scheduler/actions/reclaim/reclaim.go, master after #5067, the fix
of #3673 "reclaim action's evict can not be canceled"): take resources back from other queues, as a
transaction per job.

Queues in QueueOrder (Overused queues skipped); in each, its starving jobs (JobStarving) in JobOrder. For
one job a Statement collects, task by task (TaskOrder; preemptionPolicy Never skipped; the queue must be
Preemptive for the task — proportion: allocated + request ≤ deserved) and while the job still starves, a
plan on the first node (name order) that passes the predicates: the Running, preemptable
(``volcano.sh/preemptable`` absent or true: GetPodPreemptable) tasks there of jobs in other, reclaimable
queues are offered to the Reclaimable plugins (proportion: only from queues above their deserved share;
gang: a job keeps minAvailable — an empty verdict falls through to the next tier); victims, in
BuildVictimsPriorityQueue order, are
evicted into a per-node statement until the task fits the node's future idle resources, then the task is
pipelined there (planOnNode; a node where it cannot fit is rolled back). After the job's tasks the
statement is committed — evictions reach the API server with reason "reclaim" — only if the job is then
JobPipelined; otherwise it is discarded and nobody is evicted. The bestFit victim selection and
cross-node victims of master are not modelled (firstFit, the default)."""
from __future__ import annotations

from typing import Optional

from ..api import PENDING, RUNNING, add, less_equal, resource
from ..framework import PriorityQueue, Statement

NAME = "reclaim"


def _reclaimees(ssn, job, node) -> list:
    out = []
    for t in sorted(node.tasks.values(), key=lambda t: (t.namespace, t.name)):
        if t.status != RUNNING or not t.preemptable:
            continue
        vj = ssn.jobs.get(t.job)
        if vj is None or vj.queue == job.queue or not ssn.queues[vj.queue].reclaimable():
            continue
        out.append(t)
    return out


def _plan_on_node(ssn, task, job, node) -> Optional[Statement]:
    """planOnNode: the node's statement with the evictions and the pipeline, or None (rolled back)."""
    reclaimees = _reclaimees(ssn, job, node)
    if not reclaimees:
        return None
    victims = ssn.reclaimable(task, reclaimees)
    freeable = add(node.future_idle(), resource())
    for v in victims:
        add(freeable, v.resreq)
    if not victims or not less_equal(task.resreq, freeable):   # util.ValidateVictims
        return None
    order = ssn.build_victims_priority_queue(victims, task)
    plan = Statement(ssn)
    while not order.empty() and not less_equal(task.resreq, node.future_idle()):
        plan.evict(order.pop(), "reclaim")
    if not less_equal(task.resreq, node.future_idle()):
        plan.discard()
        return None
    plan.pipeline(task, node)
    return plan


def execute(ssn) -> None:
    queues = PriorityQueue(ssn.queue_order_fn)
    seen: set[str] = set()
    preemptors: dict[str, PriorityQueue] = {}
    for uid in sorted(ssn.jobs):
        job = ssn.jobs[uid]
        if job.is_pending() or ssn.job_valid(job) is not None:
            continue
        q = ssn.queues.get(job.queue)
        if q is None:
            continue
        if q.name not in seen:
            seen.add(q.name)
            queues.push(q)
        if ssn.job_starving(job):
            preemptors.setdefault(q.name, PriorityQueue(ssn.job_order_fn)).push(job)
    while not queues.empty():
        q = queues.pop()
        if ssn.overused(q):
            continue
        jobs = preemptors.get(q.name)
        while jobs is not None and not jobs.empty():
            job = jobs.pop()
            tasks = PriorityQueue(ssn.task_order_fn)
            for t in job.of(PENDING):
                tasks.push(t)
            stmt = Statement(ssn)
            while ssn.job_starving(job) and not tasks.empty():
                task = tasks.pop()
                if task.pod.spec.preemption_policy == "Never":
                    continue
                if not ssn.preemptive(q, task):
                    ssn.trace("reclaim.(*Action).Execute", f"Pod {task.ref}",
                              f"Queue <{q.name}> cannot reclaim for task <{task.name}>, skip")
                    continue
                for node in ssn.nodes.values():
                    if ssn.predicate_fn(task, node):
                        continue
                    plan = _plan_on_node(ssn, task, job, node)
                    if plan is not None:
                        stmt.merge(plan)
                        break
            if ssn.job_pipelined(job):
                if stmt.has_evictions():
                    ssn.trace("reclaim.(*Action).Execute", f"PodGroup {job.uid}", "Commit",
                              victims=[t.ref for op, t, _ in stmt.ops if op == "evict"])
                stmt.commit()
            else:
                if stmt.has_evictions():
                    ssn.trace("reclaim.(*Action).Execute", f"PodGroup {job.uid}", "Discard",
                              victims=[t.ref for op, t, _ in stmt.ops if op == "evict"])
                stmt.discard()
