"""gang (mirrors volcano-sh/volcano pkg/scheduler/plugins/gang/gang.go): all-or-nothing placement.

- JobValid: every task with a minTaskMember has that many valid pods ("Not enough valid pods of each task
  for gang-scheduling", NotEnoughPodsOfTask), and valid tasks ≥ minAvailable ("Not enough valid tasks for
  gang-scheduling, valid: %d, min: %d", NotEnoughTasks);
- JobReady: ready tasks (Bound, Binding, Running, Allocated, Succeeded) ≥ minAvailable (and per task);
- JobPipelined: pipelined + ready ≥ minAvailable; JobStarving: pipelined + ready < minAvailable;
- JobOrder: jobs that are not ready first;
- Preemptable / Reclaimable: a job gives up tasks only while its ready count stays above minAvailable;
- OnSessionClose: a job that is not ready gets condition Unschedulable, reason NotEnoughResources,
  "<unready>/<#tasks> tasks in gang unschedulable: <FitError>", where unready = minAvailable − (tasks
  allocated in this session + ready); a ready job gets Scheduled, "tasks in gang are ready to be scheduled".
"""
from __future__ import annotations

from ...api.scheduling_volcano_sh_v1beta1 import (NOT_ENOUGH_PODS, NOT_ENOUGH_PODS_OF_TASK, NOT_ENOUGH_RESOURCES,
                                                  SCHEDULED, UNSCHEDULABLE)
from ..api import ALLOCATED_STATUSES, PENDING, FitErrors
from ..framework import PERMIT, REJECT

NAME = "gang"
READY_REASON = "tasks in gang are ready to be scheduled"


def job_valid(job):
    """(pass, reason, message) or None."""
    if not job.check_task_min_available():
        return (False, NOT_ENOUGH_PODS_OF_TASK, "Not enough valid pods of each task for gang-scheduling")
    vtn = job.valid_task_num()
    if vtn < job.min_available:
        return (False, NOT_ENOUGH_PODS,
                f"Not enough valid tasks for gang-scheduling, valid: {vtn}, min: {job.min_available}")
    return None


def job_ready(job) -> bool:
    """CheckTaskReady && IsReady."""
    return job.check_task_min_available_ready() and job.ready()


def job_pipelined(job) -> int:
    """CheckTaskPipelined && IsPipelined."""
    return PERMIT if job.check_task_min_available_pipelined() and job.pipelined() else REJECT


def job_starving(job) -> bool:
    """IsStarving: only the job's minAvailable counts here, not minTaskMember (master; an older gang.go
    also required every task's minimum to be pipelined, which kept such jobs from ever starving)."""
    return job.starving()


def unschedulable_message(job) -> str:
    """"<minAvailable − (allocated this session + ready)>/<#tasks> tasks in gang unschedulable: <FitError>"."""
    schedulable = sum(1 for t in job.index.get(PENDING, {}).values()
                      if (t.last_tx or (t.status, ""))[0] in ALLOCATED_STATUSES) + job.ready_task_num()
    return f"{job.min_available - schedulable}/{len(job.tasks)} tasks in gang unschedulable: {job.fit_error()}"


class Gang:
    name = NAME

    def __init__(self, args: dict):
        self.args = args

    def on_session_open(self, ssn) -> None:
        def victims(preemptor, preemptees):
            occupied: dict[str, int] = {}
            out = []
            for t in preemptees:
                job = ssn.jobs.get(t.job)
                if job is None:
                    continue
                occupied.setdefault(job.uid, job.ready_task_num())
                if occupied[job.uid] > job.min_available:
                    occupied[job.uid] -= 1
                    out.append(t)
            return out, PERMIT

        def job_order(l, r) -> int:
            lr, rr = l.ready(), r.ready()
            if lr and rr:
                return 0
            if lr:
                return 1
            if rr:
                return -1
            return 0

        ssn.add_fn("job_valid", NAME, job_valid)
        ssn.add_fn("reclaimable", NAME, victims)
        ssn.add_fn("preemptable", NAME, victims)
        ssn.add_fn("job_order", NAME, job_order)
        ssn.add_fn("job_ready", NAME, job_ready)
        ssn.add_fn("job_pipelined", NAME, job_pipelined)
        ssn.add_fn("job_starving", NAME, job_starving)

    def on_session_close(self, ssn) -> None:
        for uid in sorted(ssn.jobs):
            job = ssn.jobs[uid]
            if not job.ready():
                msg = unschedulable_message(job)
                # UNVERIFIED: what master keeps as the job's fit error for RecordJobStatusEvent; a real
                # cluster's pod events show the FitError text without the "tasks in gang" prefix.
                job.job_fit_errors = msg.split(" tasks in gang unschedulable: ", 1)[1]
                job.conditions.append((UNSCHEDULABLE, NOT_ENOUGH_RESOURCES, msg))
                for t in job.index.get("Allocated", {}).values():
                    if t.uid not in job.nodes_fit_errors:
                        job.nodes_fit_errors[t.uid] = FitErrors(err=msg)
            else:
                job.conditions.append((SCHEDULED, READY_REASON, ""))


def new(args: dict) -> Gang:
    return Gang(args)
