"""priority (mirrors volcano-sh/volcano pkg/scheduler/plugins/priority/priority.go): jobs by PriorityClass
value, tasks by pod priority (higher first); a task may preempt tasks of lower-priority jobs, or lower-priority
tasks of its own job; a job starves while some of its tasks are neither ready nor pipelined."""
from __future__ import annotations

from ..framework import PERMIT

NAME = "priority"


class Priority:
    name = NAME

    def __init__(self, args: dict):
        self.args = args

    def on_session_open(self, ssn) -> None:
        def job_order(l, r) -> int:
            if l.priority != r.priority:
                return -1 if l.priority > r.priority else 1
            return 0

        def task_order(l, r) -> int:
            if l.priority != r.priority:
                return -1 if l.priority > r.priority else 1
            return 0

        def preemptable(preemptor, preemptees):
            pj = ssn.jobs[preemptor.job]
            victims = []
            for t in preemptees:
                tj = ssn.jobs.get(t.job)
                if tj is None:
                    continue
                if tj.uid != pj.uid:
                    if tj.priority >= pj.priority:
                        continue
                elif t.priority >= preemptor.priority:
                    continue
                victims.append(t)
            return victims, PERMIT

        def starving(job) -> bool:
            return job.ready_task_num() + job.waiting_task_num() < len(job.tasks)

        ssn.add_fn("job_order", NAME, job_order)
        ssn.add_fn("task_order", NAME, task_order)
        ssn.add_fn("preemptable", NAME, preemptable)
        ssn.add_fn("job_starving", NAME, starving)

    def on_session_close(self, ssn) -> None:
        pass


def new(args: dict) -> Priority:
    return Priority(args)
