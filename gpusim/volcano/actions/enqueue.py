"""enqueue (mirrors volcano-sh/volcano pkg/scheduler/actions/enqueue/enqueue.go): move Pending PodGroups to
Inqueue when the JobEnqueueable plugins allow (a job without minResources always moves). Queues in
QueueOrder, one job at a time per queue in JobOrder; a queue goes back until its pending jobs are done."""
from __future__ import annotations

from ..framework import PriorityQueue

NAME = "enqueue"


def execute(ssn) -> None:
    queues = PriorityQueue(ssn.queue_order_fn)
    seen: set[str] = set()
    jobs_of: dict[str, PriorityQueue] = {}
    for uid in sorted(ssn.jobs):
        job = ssn.jobs[uid]
        q = ssn.queues.get(job.queue)
        if q is None:
            continue
        if q.name not in seen:
            seen.add(q.name)
            queues.push(q)
        if job.is_pending():
            jobs_of.setdefault(q.name, PriorityQueue(ssn.job_order_fn)).push(job)
    while not queues.empty():
        q = queues.pop()
        jobs = jobs_of.get(q.name)
        if jobs is None or jobs.empty():
            continue
        job = jobs.pop()
        if job.min_resources is None or ssn.job_enqueueable(job):
            ssn.job_enqueued(job)
            job.phase = "Inqueue"
            ssn.trace("enqueue.(*Action).Execute", f"PodGroup {job.uid}", "Inqueue")
        queues.push(q)
