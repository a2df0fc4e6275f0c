"""backfill (mirrors volcano-sh/volcano pkg/scheduler/actions/backfill/backfill.go): place best-effort tasks
(no resource requests) of jobs that are past Pending on the first node the predicates accept."""
from __future__ import annotations

from ..api import PENDING, FitErrors

NAME = "backfill"


def execute(ssn) -> None:
    for uid in sorted(ssn.jobs):
        job = ssn.jobs[uid]
        if job.is_pending() or ssn.job_valid(job) is not None:
            continue
        for task in job.of(PENDING):
            if not task.best_effort:
                continue
            fe = FitErrors()
            for node in ssn.nodes.values():
                reasons = ssn.predicate_fn(task, node)
                if reasons:
                    fe.nodes[node.name] = reasons
                    continue
                ssn.allocate(task, node)
                ssn.trace("backfill.(*Action).Execute", f"Pod {task.ref}", node.name)
                break
            else:
                job.nodes_fit_errors[task.uid] = fe
