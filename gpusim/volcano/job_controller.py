"""Volcano's job controller (mirrors volcano-sh/volcano pkg/controllers/job: job_controller.go,
job_controller_handler.go, job_controller_actions.go (syncJob, killJob, createOrUpdatePodGroup),
job_controller_util.go (createJobPod, applyPolicies), state/*.go).

- A new Job gets phase Pending and a PodGroup ``<job>-<job uid>`` (minMember = minAvailable, minTaskMember,
  queue, priorityClassName, minResources of the first minAvailable pods); its pods ``<job>-<task>-<index>``
  are created only once the scheduler moved the PodGroup past Pending (Inqueue), with the template's labels
  and annotations plus Volcano's (``scheduling.k8s.io/group-name``, ``volcano.sh/job-name``, task-spec, …).
- Pod events become requests: a pod that turns Failed is ``PodFailed`` (with its exit code), a deleted pod
  ``PodEvicted``, anything else syncs. ``applyPolicies``: task policies first, then job policies, matching
  the event (or ``*``) or the exit code; no match → ``SyncJob``; a request from an older job version syncs.
  Actions other than SyncJob are announced with the event ExecuteAction "Start to execute action <A> ".
- States: Pending → Running when minAvailable pods run (or ran); RestartJob kills every pod (the last retry
  keeps finished ones), deletes the PodGroup, ``retryCount``++ → Restarting → Pending again, or Failed once
  retryCount reaches maxRetry; AbortJob → Aborting → Aborted; TerminateJob → Terminating → Terminated;
  CompleteJob → Completing → Completed; Running → Completed (≥ minAvailable succeeded) or Failed when every
  pod finished.
Not simulated: policy ``timeout`` (the action runs at once), RestartTask/RestartPod, job plugins (accepted,
no effect), volumes, dependsOn.
"""
from __future__ import annotations

import copy
from typing import Any, Generator, Optional

from ..api import batch_volcano_sh_v1alpha1 as vcbatch
from ..api.core_v1 import Pod
from ..api.meta import ObjectMeta, OwnerReference
from ..api.scheduling_volcano_sh_v1beta1 import (GROUP_NAME_ANNOTATION, POD_PREEMPTABLE, UNSCHEDULABLE, PodGroup,
                                                 PodGroupSpec, PodGroupStatus)
from ..controlplane.apiserver import ADDED, DELETED
from ..controlplane.events import NORMAL, WARNING
from ..scheduler.framework import PodInfo
from .api import resource

JOB = vcbatch.Job.RESOURCE
PODGROUP = PodGroup.RESOURCE
COMPONENT = "vc-controller-manager"
RETAIN_NONE: tuple[str, ...] = ()
RETAIN_SOFT = ("Succeeded", "Failed")


def pod_group_name(job) -> str:
    return f"{job.metadata.name}-{job.metadata.uid}"


def quantities(r: dict) -> dict[str, str]:
    """gpusim units → ResourceList strings (cpu in milli, the rest whole units)."""
    return {k: (f"{int(v)}m" if k == "cpu" else str(int(v))) for k, v in sorted(r.items()) if v}


def min_resources(job, priorities: dict[str, int]) -> dict:
    """TasksPriority.CalcPGMinResources: the tasks' minAvailable pods first (higher priority first), then
    more replicas until the job's minAvailable is reached."""
    tasks = sorted(job.spec.tasks, key=lambda t: -priorities.get(t.template.spec.priority_class_name, 0))
    need = job.spec.min_available
    total, count = resource(), 0

    def add_pods(t, n: int) -> None:
        req = PodInfo(Pod(spec=t.template.spec)).requests
        for k, v in req.items():
            total[k] = total.get(k, 0) + v * n

    for t in tasks:
        if t.min_available is None:
            continue
        n = min(t.min_available, need - count)
        add_pods(t, n)
        count += n
        if count >= need:
            return total
    left = need - count
    for t in tasks:
        spare = t.replicas - (t.min_available if t.min_available is not None else 0)
        if spare <= 0:
            continue
        n = min(spare, left)
        add_pods(t, n)
        left -= n
        if left <= 0:
            break
    return total


def apply_policies(job, task: str, event: str, exit_code: Optional[int], version: int) -> str:
    """applyPolicies."""
    if event == vcbatch.OUT_OF_SYNC:
        return vcbatch.SYNC_JOB
    if version < job.status.version:
        return vcbatch.SYNC_JOB
    policies = []
    if task:
        spec = next((t for t in job.spec.tasks if t.name == task), None)
        if spec is not None:
            policies += spec.policies
    for group in (policies, job.spec.policies):
        for p in group:
            events = p.event_list()
            if events and event and (event in events or vcbatch.ANY_EVENT in events):
                return p.action
            if p.exit_code is not None and exit_code is not None and p.exit_code == exit_code:
                return p.action
    return vcbatch.SYNC_JOB


class JobController:
    def __init__(self, ctx: Any, priorities: Optional[dict[str, int]] = None):
        self.ctx = ctx
        self.api = ctx.api
        self.priorities = priorities or {}
        self._phase: dict[str, str] = {}          # pod uid → last phase seen
        self._pending_msg: dict[str, str] = {}    # job uid → last PodGroupPending message
        ctx.env.process(self._job_loop(ctx.api.watch(JOB)))
        ctx.env.process(self._pod_loop(ctx.api.watch("Pod")))
        ctx.env.process(self._pg_loop(ctx.api.watch(PODGROUP)))

    # --- informers ------------------------------------------------------------------------------------------
    def _job_loop(self, store) -> Generator:
        while True:
            ev = yield store.get()
            if ev.type == ADDED:
                self.handle(ev.obj, "", vcbatch.OUT_OF_SYNC, None, ev.obj.status.version)

    def _job_of(self, obj) -> Optional[Any]:
        ref = next((o for o in obj.metadata.owner_references
                    if o.controller and o.kind == "Job" and o.api_version == vcbatch.Job().api_version), None)
        if ref is None:
            return None
        job = self.api.get(JOB, obj.metadata.namespace, ref.name)
        return job if job is not None and job.metadata.uid == ref.uid else None

    def _pod_loop(self, store) -> Generator:
        while True:
            ev = yield store.get()
            pod = ev.obj
            job = self._job_of(pod)
            if job is None:
                continue
            ann = pod.metadata.annotations
            task = ann.get(vcbatch.TASK_SPEC_KEY, "")
            version = int(ann.get(vcbatch.JOB_VERSION, "0") or 0)
            old = self._phase.get(pod.metadata.uid, "")
            new = pod.status.phase
            if ev.type == DELETED:
                self._phase.pop(pod.metadata.uid, None)
                self.handle(job, task, vcbatch.POD_EVICTED, None, version)
                continue
            self._phase[pod.metadata.uid] = new
            event, code = vcbatch.OUT_OF_SYNC if ev.type == ADDED else "", None
            if old != "Failed" and new == "Failed":
                event = vcbatch.POD_FAILED
                code = next((c.state.terminated.exit_code for c in pod.status.container_statuses
                             if c.state.terminated is not None and c.state.terminated.exit_code), None)
            elif old != "Succeeded" and new == "Succeeded" and self._task_completed(job, task):
                event = vcbatch.TASK_COMPLETED
            self.handle(job, task, event, code, version)

    def _pg_loop(self, store) -> Generator:
        while True:
            ev = yield store.get()
            if ev.type == DELETED:
                continue
            job = self._job_of(ev.obj)
            if job is not None:
                self.handle(job, "", vcbatch.OUT_OF_SYNC, None, job.status.version)

    def _pods(self, job) -> list:
        uid = job.metadata.uid
        return sorted((p for p in self.api.list("Pod", lambda p: p.metadata.namespace == job.metadata.namespace)
                       if any(o.uid == uid and o.controller for o in p.metadata.owner_references)),
                      key=lambda p: p.metadata.name)

    def _task_completed(self, job, task: str) -> bool:
        spec = next((t for t in job.spec.tasks if t.name == task), None)
        if spec is None:
            return False
        done = sum(1 for p in self._pods(job) if p.metadata.annotations.get(vcbatch.TASK_SPEC_KEY) == task
                   and p.status.phase == "Succeeded")
        return done >= spec.replicas

    # --- requests -------------------------------------------------------------------------------------------
    def handle(self, job, task: str, event: str, exit_code: Optional[int], version: int) -> None:
        """processNextReq: applyPolicies, then the job's state executes the action."""
        if self.api.get(JOB, job.metadata.namespace, job.metadata.name) is not job:
            return
        action = apply_policies(job, task, event, exit_code, version)
        ref = f"Job {job.metadata.namespace}/{job.metadata.name}"
        if action != vcbatch.SYNC_JOB:
            self.ctx.event(job, NORMAL, "ExecuteAction", f"Start to execute action {action} ", COMPONENT)
            self.ctx.trace.add(self.ctx.now, COMPONENT, "job.(*jobcontroller).processNextReq", ref, action,
                               event=event, task=task)
        self.execute(job, action)

    def execute(self, job, action: str) -> None:
        """state.NewState(job).Execute(action)."""
        phase = job.status.state.phase
        if phase in ("", "Pending", "Running"):
            if action == vcbatch.RESTART_JOB:
                def restart(st):
                    st.retry_count += 1
                    return self._to(st, "Restarting")
                return self.kill_job(job, RETAIN_NONE, restart)
            soft = {vcbatch.ABORT_JOB: "Aborting", vcbatch.TERMINATE_JOB: "Terminating",
                    vcbatch.COMPLETE_JOB: "Completing"}
            if action in soft:
                return self.kill_job(job, RETAIN_SOFT, lambda st: self._to(st, soft[action]))
            return self.sync_job(job, self._pending if phase in ("", "Pending") else self._running)
        if phase == "Restarting":
            return self.kill_job(job, RETAIN_NONE, lambda st: self._restart_done(job, st))
        ends = {"Aborting": "Aborted", "Terminating": "Terminated", "Completing": "Completed"}
        if phase in ends:
            def finishing(st):
                if st.terminating or st.pending or st.running:
                    return False
                return self._to(st, ends[phase])
            return self.kill_job(job, RETAIN_SOFT, finishing)
        # Aborted, Completed, Failed, Terminated: finished; pods that still run are killed
        return self.kill_job(job, RETAIN_SOFT, None)

    @staticmethod
    def _to(st, phase: str) -> bool:
        st.state.phase = phase
        return True

    def _pending(self, job, st) -> bool:
        if job.spec.min_available <= st.running + st.succeeded + st.failed:
            return self._to(st, "Running")
        return False

    def _running(self, job, st) -> bool:
        total = sum(t.replicas for t in job.spec.tasks)
        if total == 0:
            return False
        if job.spec.min_success is not None and st.succeeded >= job.spec.min_success:
            return self._to(st, "Completed")
        if st.succeeded + st.failed == total:
            for t in job.spec.tasks:
                done = st.task_status_count.get(t.name, {}).get("Succeeded", 0)
                if t.min_available is not None and done < t.min_available:
                    return self._to(st, "Failed")
            if job.spec.min_success is not None and st.succeeded < job.spec.min_success:
                return self._to(st, "Failed")
            return self._to(st, "Completed" if st.succeeded >= job.spec.min_available else "Failed")
        return False

    # --- syncJob / killJob ------------------------------------------------------------------------------------
    def _condition(self, job) -> None:
        st = job.status
        st.state.last_transition_time = self.ctx.now
        st.conditions.append(vcbatch.JobCondition(st.state.phase, self.ctx.now))

    def _count(self, st, pods: list) -> None:
        st.pending = st.running = st.succeeded = st.failed = st.unknown = 0
        st.task_status_count = {}
        for p in pods:
            phase = p.status.phase or "Pending"
            attr = {"Pending": "pending", "Running": "running", "Succeeded": "succeeded", "Failed": "failed"}.get(
                phase, "unknown")
            setattr(st, attr, getattr(st, attr) + 1)
            task = p.metadata.annotations.get(vcbatch.TASK_SPEC_KEY, "")
            counts = st.task_status_count.setdefault(task, {})
            counts[phase] = counts.get(phase, 0) + 1

    def sync_job(self, job, update) -> None:
        ctx, api = self.ctx, self.api
        st = job.status
        if st.state.phase in ("", "Pending"):
            if st.state.phase == "":
                st.state.phase = "Pending"
                st.min_available = job.spec.min_available
                self._condition(job)
        pg = self._ensure_pod_group(job)
        if pg is not None:
            cond = next((c for c in pg.status.conditions if c.type == UNSCHEDULABLE), None)
            if cond is not None and self._pending_msg.get(job.metadata.uid) != cond.message:
                self._pending_msg[job.metadata.uid] = cond.message
                ctx.event(job, WARNING, "PodGroupPending", f"PodGroup {job.metadata.namespace}:{job.metadata.name} "
                          f"unschedule,reason: {cond.message}", COMPONENT)
        pods = self._pods(job)
        if pg is None or pg.status.phase in ("", "Pending"):
            self._count(st, pods)
            if update(job, st):
                self._condition(job)
            api.update(job)
            return
        existing = {p.metadata.name: p for p in pods}
        wanted = set()
        for i_task, t in enumerate(job.spec.tasks):
            for i in range(t.replicas):
                name = f"{job.metadata.name}-{t.name}-{i}"
                wanted.add(name)
                if name not in existing:
                    pods.append(self._create_pod(job, t, i))
        for p in pods:
            if p.metadata.name not in wanted:
                api.delete(p)
        pods = [p for p in pods if p.metadata.name in wanted and api.get("Pod", p.metadata.namespace,
                                                                          p.metadata.name) is p]
        st.terminating = 0
        self._count(st, pods)
        st.min_available = job.spec.min_available
        if update(job, st):
            self._condition(job)
        api.update(job)

    def kill_job(self, job, retain: tuple[str, ...], update) -> None:
        ctx, api = self.ctx, self.api
        st = job.status
        last_retry = st.retry_count >= job.spec.max_retry - 1
        keep = RETAIN_SOFT if last_retry else retain
        terminating = 0
        left = []
        for p in self._pods(job):
            if p.status.phase not in keep:
                api.delete(p)
                terminating += 1
                continue
            left.append(p)
        st.version += 1
        self._count(st, left)
        st.terminating = terminating
        changed = update is not None and update(st)
        if changed:
            self._condition(job)
        api.update(job)
        ctx.trace.add(ctx.now, COMPONENT, "job.(*jobcontroller).killJob", f"Job {job.metadata.namespace}/"
                      f"{job.metadata.name}", st.state.phase, deleted=terminating, version=st.version)
        pg = api.get(PODGROUP, job.metadata.namespace, pod_group_name(job))
        if pg is not None:
            api.delete(pg)
        if changed and st.state.phase in ("Pending", "Restarting", "Aborting", "Terminating", "Completing"):
            # the next state's sync, as the controller requeues the job after a status change
            t = ctx.env.timeout(0)
            t.callbacks.append(lambda _e, j=job: self.handle(j, "", vcbatch.OUT_OF_SYNC, None, j.status.version))

    def _restart_done(self, job, st) -> bool:
        """restartingState: Failed once retryCount reached maxRetry; Pending when enough pods are gone."""
        if st.retry_count >= job.spec.max_retry:
            return self._to(st, "Failed")
        total = sum(t.replicas for t in job.spec.tasks)
        if total - st.terminating >= st.min_available:
            return self._to(st, "Pending")
        return False

    # --- objects ---------------------------------------------------------------------------------------------
    def _ensure_pod_group(self, job) -> Optional[PodGroup]:
        """createOrUpdatePodGroup."""
        name = pod_group_name(job)
        pg = self.api.get(PODGROUP, job.metadata.namespace, name)
        if pg is not None:
            return pg
        if job.status.state.phase not in ("", "Pending"):
            return None
        spec = PodGroupSpec(min_member=job.spec.min_available,
                            min_task_member={t.name: t.min_available for t in job.spec.tasks
                                             if t.min_available is not None},
                            queue=job.spec.queue, priority_class_name=job.spec.priority_class_name,
                            min_resources=quantities(min_resources(job, self.priorities)),
                            network_topology=copy.deepcopy(job.spec.network_topology))
        meta = ObjectMeta(name=name, namespace=job.metadata.namespace, labels=dict(job.metadata.labels),
                          annotations=dict(job.metadata.annotations),
                          owner_references=[OwnerReference(job.api_version, "Job", job.metadata.name,
                                                           job.metadata.uid, True, True)])
        pg = PodGroup(metadata=meta, spec=spec, status=PodGroupStatus(phase="Pending"))
        self.api.create(pg)
        self.ctx.trace.add(self.ctx.now, COMPONENT, "job.(*jobcontroller).createOrUpdatePodGroup",
                           f"PodGroup {job.metadata.namespace}/{name}", "Created", minMember=spec.min_member)
        return pg

    def _create_pod(self, job, task, index: int) -> Pod:
        """createJobPod."""
        tmpl = task.template
        spec = copy.deepcopy(tmpl.spec)
        if not spec.scheduler_name:
            spec.scheduler_name = job.spec.scheduler_name
        name = f"{job.metadata.name}-{task.name}-{index}"
        ann = dict(tmpl.metadata.annotations)
        ann.update({vcbatch.TASK_INDEX: str(index), vcbatch.TASK_SPEC_KEY: task.name,
                    GROUP_NAME_ANNOTATION: pod_group_name(job), vcbatch.JOB_NAME_KEY: job.metadata.name,
                    vcbatch.QUEUE_NAME_KEY: job.spec.queue, vcbatch.JOB_VERSION: str(job.status.version),
                    vcbatch.POD_TEMPLATE_KEY: f"{job.metadata.name}-{task.name}",
                    vcbatch.JOB_RETRY_COUNT_KEY: str(job.status.retry_count)})
        if POD_PREEMPTABLE in job.metadata.annotations:
            ann[POD_PREEMPTABLE] = job.metadata.annotations[POD_PREEMPTABLE]
        labels = dict(tmpl.metadata.labels)
        labels.update({vcbatch.TASK_INDEX: str(index), vcbatch.JOB_NAME_KEY: job.metadata.name,
                       vcbatch.TASK_SPEC_KEY: task.name, vcbatch.JOB_NAMESPACE_KEY: job.metadata.namespace,
                       vcbatch.QUEUE_NAME_KEY: job.spec.queue})
        if POD_PREEMPTABLE in job.metadata.labels:
            labels[POD_PREEMPTABLE] = job.metadata.labels[POD_PREEMPTABLE]
        meta = ObjectMeta(name=name, namespace=job.metadata.namespace, labels=labels, annotations=ann,
                          owner_references=[OwnerReference(job.api_version, "Job", job.metadata.name,
                                                           job.metadata.uid, True, True)])
        pod = Pod(metadata=meta, spec=spec)
        self.api.create(pod)
        self.ctx.trace.add(self.ctx.now, COMPONENT, "job.(*jobcontroller).syncJob", f"Pod {pod.metadata.namespace}/"
                           f"{name}", "Created")
        return pod
