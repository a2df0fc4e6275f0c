"""reclaim (mirrors volcano-sh/volcano pkg/scheduler/actions/reclaim/reclaim.go): take resources back from
other queues. Per queue (QueueOrder; Overused queues skipped) its first starving job's first pending task,
if Preemptive(queue, task) (proportion: allocated + request ≤ deserved); on each node that passes the
predicates, the Running, preemptable (``volcano.sh/preemptable: "true"``) tasks of jobs in other,
reclaimable queues are candidates; the Reclaimable plugins pick victims (proportion: only from queues above
their deserved share; gang: a job keeps minAvailable); if the victims free enough, they are evicted
(reason "reclaim") and the task is pipelined onto the node."""
from __future__ import annotations

from ..api import PENDING, RUNNING, add, less_equal, resource
from ..framework import PriorityQueue

NAME = "reclaim"


def execute(ssn) -> None:
    queues = PriorityQueue(ssn.queue_order_fn)
    seen: set[str] = set()
    preemptors: dict[str, PriorityQueue] = {}
    tasks_of: dict[str, PriorityQueue] = {}
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
        if job.count(PENDING):
            preemptors.setdefault(q.name, PriorityQueue(ssn.job_order_fn)).push(job)
            tq = tasks_of[job.uid] = PriorityQueue(ssn.task_order_fn)
            for t in job.of(PENDING):
                tq.push(t)
    while not queues.empty():
        q = queues.pop()
        if ssn.overused(q):
            continue
        jobs = preemptors.get(q.name)
        if jobs is None or jobs.empty():
            continue
        job = jobs.pop()
        tasks = tasks_of.get(job.uid)
        if tasks is None or tasks.empty():
            continue
        task = tasks.pop()
        if not ssn.preemptive(q, task):
            ssn.trace("reclaim.(*Action).Execute", f"Pod {task.ref}", f"Queue <{q.name}> can not reclaim by "
                      f"preempt others when considering task <{task.name}> , ignore it.")
            continue
        assigned = False
        for node in ssn.nodes.values():
            if ssn.predicate_fn(task, node):
                continue
            reclaimees = []
            for t in sorted(node.tasks.values(), key=lambda t: (t.namespace, t.name)):
                if t.status != RUNNING or not t.preemptable:
                    continue
                vj = ssn.jobs.get(t.job)
                if vj is None or vj.queue == job.queue or not ssn.queues[vj.queue].reclaimable():
                    continue
                reclaimees.append(t)
            if not reclaimees:
                continue
            victims = ssn.reclaimable(task, reclaimees)
            freeable = add(node.future_idle(), resource())
            for v in victims:
                add(freeable, v.resreq)
            if not victims or not less_equal(task.resreq, freeable):
                continue
            reclaimed = resource()
            for v in victims:
                ssn.evict(v, "reclaim")
                add(reclaimed, v.resreq)
                if less_equal(task.resreq, reclaimed):
                    break
            if less_equal(task.resreq, add(node.future_idle(), resource())):
                ssn.pipeline(task, node)
                ssn.trace("reclaim.(*Action).Execute", f"Pod {task.ref}", f"Pipelined on {node.name}",
                          victims=[v.ref for v in victims])
                assigned = True
                break
        if assigned:
            jobs.push(job)
        queues.push(q)
