"""batch/v1 Job controller (mirrors kubernetes pkg/controller/job/job_controller.go).

Creates pods for ``parallelism`` up to ``completions`` (NonIndexed), named ``<job>-<5 chars>``
with apimachinery's random alphabet; honours ``suspend``; replaces failed pods with the
controller's exponential back-off until ``backoffLimit`` failures; then marks the Job
SuccessCriteriaMet → Complete, or FailureTarget → Failed (BackoffLimitExceeded).

Suspension (what Kueue drives): a suspended Job gets condition Suspended=True (JobSuspended, event
"Suspended"), its active pods are deleted and not counted as failures (UNVERIFIED: upstream's accounting of
pods deleted for suspension); resuming sets Suspended=False (JobResumed, event "Resumed") and resets
startTime. Status changes (active, ready, succeeded, failed) are written back, so watchers (Kueue's
PodsReady) see them.
"""
from __future__ import annotations

import random

from typing import Generator

from ..api.batch_v1 import Job, JobCondition
from ..api.core_v1 import Pod
from ..api.meta import ObjectMeta, OwnerReference
from ..api.schema import shallow_copy
from ..controlplane.apiserver import DELETED
from ..controlplane.context import Context
from ..controlplane.events import NORMAL, WARNING

# k8s.io/apimachinery/pkg/util/rand: the alphabet of generateName suffixes
ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
_ALPHANUM_BITS = len(ALPHANUMS).bit_length()
DEFAULT_BACKOFF_LIMIT = 6
DEFAULT_JOB_POD_FAILURE_BACKOFF = 10.0     # job_controller.go DefaultJobPodFailureBackOff
MAX_JOB_POD_FAILURE_BACKOFF = 600.0        # MaxJobPodFailureBackOff (10 minutes)
SOURCE = "job-controller"


def random_suffix(rng, n: int = 5) -> str:
    """utilrand.String(n) over ALPHANUMS; the draws of ``n`` × ``rng.choice(ALPHANUMS)`` (random.Random's
    ``_randbelow``: getrandbits of the length's bit length, drawn again while out of range)."""
    if type(rng) is not random.Random:
        return "".join(rng.choice(ALPHANUMS) for _ in range(n))
    bits, size, getrandbits = _ALPHANUM_BITS, len(ALPHANUMS), rng.getrandbits
    out = []
    for _ in range(n):
        r = getrandbits(bits)
        while r >= size:
            r = getrandbits(bits)
        out.append(ALPHANUMS[r])
    return "".join(out)


class JobController:
    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.jobs: dict[str, Job] = {}
        self._pods = ctx.api.watch("Pod")
        self._jobs = ctx.api.watch("Job")
        self._counted: set[str] = set()
        self._owned: dict[str, dict[str, Pod]] = {}   # job UID → pod UID → pod (the informer's index)
        self._active: dict[str, dict[str, Pod]] = {}  # job UID → pods created and not yet finished
        self._ready: set[str] = set()
        self._last_failure: dict[str, float] = {}     # job UID → when its last failed pod finished
        self._requeued: set[str] = set()
        self._queued: set[str] = set()
        self._suspend_deleted: set[str] = set()      # pods deleted because their Job was suspended
        self._published: dict[str, tuple] = {}       # job UID → status last written
        ctx.env.process(self._job_loop())
        ctx.env.process(self._pod_loop())

    def _job_loop(self) -> Generator:
        while True:
            ev = yield self._jobs.get()
            job = ev.obj
            if ev.type == DELETED:
                self.jobs.pop(job.metadata.uid, None)
                continue
            self.jobs[job.metadata.uid] = job
            self._enqueue(job)

    def _pod_loop(self) -> Generator:
        while True:
            ev = yield self._pods.get()
            pod = ev.obj
            owner = next((o for o in pod.metadata.owner_references if o.kind == "Job" and o.controller), None)
            if owner is None or owner.uid not in self.jobs:
                continue
            job = self.jobs[owner.uid]
            owned = self._owned.setdefault(owner.uid, {})
            if ev.type == DELETED:
                owned.pop(pod.metadata.uid, None)
                counted = self._count(job, pod, gone=True)
            else:
                owned[pod.metadata.uid] = pod
                counted = self._count(job, pod)
            running = pod.status.phase == "Running" and not counted
            if running != (pod.metadata.uid in self._ready):
                (self._ready.add if running else self._ready.discard)(pod.metadata.uid)
                job.status.ready = (job.status.ready or 0) + (1 if running else -1)
            self._enqueue(job)

    def _enqueue(self, job: Job) -> None:
        """The controller's workqueue: events for one Job that arrive at the same instant are
        coalesced into one sync (client-go workqueue de-duplicates keys)."""
        uid = job.metadata.uid
        if uid in self._queued:
            return
        self._queued.add(uid)
        t = self.ctx.env.timeout(0)
        t.callbacks.append(lambda _e, j=job: (self._queued.discard(j.metadata.uid), self.sync(j)))

    def _count(self, job: Job, pod: Pod, gone: bool = False) -> bool:
        """Count a finished pod once, when its event arrives (upstream tracks this with the
        batch.kubernetes.io/job-tracking finalizer); a pod deleted or terminating before it finished
        counts as failed. Returns whether the pod is (now) counted."""
        uid = pod.metadata.uid
        if uid in self._counted:
            return True
        if uid in self._suspend_deleted and pod.status.phase != "Succeeded":
            if not gone:
                return False
            self._suspend_deleted.discard(uid)
        elif pod.status.phase == "Succeeded":
            job.status.succeeded += 1
        elif pod.status.phase == "Failed" or gone or pod.metadata.deletion_timestamp is not None:
            job.status.failed += 1
            term = [c.state.terminated.finished_at for c in pod.status.container_statuses
                    if c.state.terminated is not None and c.state.terminated.finished_at is not None]
            self._last_failure[job.metadata.uid] = max(term) if term else self.ctx.now
        else:
            return False
        self._counted.add(uid)
        self._active.get(job.metadata.uid, {}).pop(uid, None)
        if uid in self._ready:
            self._ready.discard(uid)
            job.status.ready -= 1
        return True

    def _delete(self, pod: Pod) -> None:
        """Delete a pod unless another component (preemption, eviction) already did in this instant,
        before this controller's informer delivered the DELETED event (upstream gets NotFound and moves on)."""
        if self.ctx.api.get("Pod", pod.metadata.namespace, pod.metadata.name) is pod:
            self.ctx.api.delete(pod)

    def _finished(self, job: Job) -> bool:
        return any(c.type in ("Complete", "Failed") and c.status == "True" for c in job.status.conditions)

    def sync(self, job: Job) -> None:
        ctx = self.ctx
        if self._finished(job):
            return
        spec = job.spec
        if job.status.start_time is None and not spec.suspend:
            job.status.start_time = ctx.now
        # active: created and not yet counted as finished, as the controller's own bookkeeping sees it
        active_pods = self._active.get(job.metadata.uid, {})
        job.status.active = len(active_pods)
        completions = spec.completions if spec.completions is not None else None
        parallelism = spec.parallelism if spec.parallelism is not None else 1
        backoff_limit = spec.backoff_limit if spec.backoff_limit is not None else DEFAULT_BACKOFF_LIMIT
        if job.status.failed > backoff_limit:
            for p in list(active_pods.values()):
                self._delete(p)
            self._finish(job, "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
            return
        done = (completions is not None and job.status.succeeded >= completions) or \
               (completions is None and job.status.succeeded > 0 and not active_pods)
        if done:
            self._finish(job, "Complete", "CompletionsReached", "Reached expected number of succeeded pods")
            return
        self._suspend_condition(job)
        if spec.suspend:
            for p in list(active_pods.values()):
                active_pods.pop(p.metadata.uid, None)
                if ctx.api.get("Pod", p.metadata.namespace, p.metadata.name) is not p:
                    continue    # already gone (its DELETED event is on the way); upstream ignores NotFound
                self._suspend_deleted.add(p.metadata.uid)
                ctx.api.delete(p)
            job.status.active = 0
            self._publish(job)
            return
        want = parallelism
        if completions is not None:
            want = min(parallelism, completions - job.status.succeeded)
        elif job.status.succeeded > 0:
            want = 0
        missing = want - len(active_pods)
        if missing <= 0:
            self._publish(job)
            return
        delay = 0.0
        if job.status.failed:
            delay = min(DEFAULT_JOB_POD_FAILURE_BACKOFF * 2 ** (job.status.failed - 1), MAX_JOB_POD_FAILURE_BACKOFF)
            since = ctx.now - self._last_failure.get(job.metadata.uid, ctx.now - delay)
            if since < delay:
                uid = job.metadata.uid
                if uid not in self._requeued:
                    self._requeued.add(uid)
                    t = ctx.env.timeout(delay - since)
                    t.callbacks.append(lambda _e, j=job: (self._requeued.discard(j.metadata.uid), self.sync(j)))
                return
        for _ in range(missing):
            self._create_pod(job)
        job.status.active = len(active_pods)
        self._published[job.metadata.uid] = self._status_key(job)
        ctx.api.update(job)

    @staticmethod
    def _status_key(job: Job) -> tuple:
        s = job.status
        return (s.active, s.ready, s.succeeded, s.failed, job.spec.suspend)

    def _publish(self, job: Job) -> None:
        """Write the status back when it changed since the last write."""
        key = self._status_key(job)
        if self._published.get(job.metadata.uid, key) != key:
            self._published[job.metadata.uid] = key
            self.ctx.api.update(job)
        else:
            self._published.setdefault(job.metadata.uid, key)

    def _suspend_condition(self, job: Job) -> None:
        """job_controller.go: JobSuspended / JobResumed condition and events on a change of spec.suspend."""
        ctx = self.ctx
        cond = next((c for c in job.status.conditions if c.type == "Suspended"), None)
        if job.spec.suspend and (cond is None or cond.status != "True"):
            if cond is None:
                cond = JobCondition("Suspended")
                job.status.conditions.append(cond)
            cond.status, cond.reason, cond.message = "True", "JobSuspended", "Job suspended"
            cond.last_probe_time = cond.last_transition_time = ctx.now
            ctx.event(job, NORMAL, "Suspended", "Job suspended", SOURCE)
        elif not job.spec.suspend and cond is not None and cond.status == "True":
            cond.status, cond.reason, cond.message = "False", "JobResumed", "Job resumed"
            cond.last_probe_time = cond.last_transition_time = ctx.now
            job.status.start_time = ctx.now
            ctx.event(job, NORMAL, "Resumed", "Job resumed", SOURCE)

    def _create_pod(self, job: Job) -> None:
        ctx = self.ctx
        tmpl = job.spec.template
        spec = shallow_copy(tmpl.spec)   # per-pod spec; the lists admission appends to are copied too,
        spec.tolerations = list(spec.tolerations)   # containers are shared (their defaults are idempotent)
        spec.scheduling_gates = list(spec.scheduling_gates)
        while True:
            name = f"{job.metadata.name}-{random_suffix(ctx.rng)}"
            if ctx.api.get("Pod", job.metadata.namespace, name) is None:
                break
        labels = dict(tmpl.metadata.labels)
        labels.update({"batch.kubernetes.io/controller-uid": job.metadata.uid, "batch.kubernetes.io/job-name":
                       job.metadata.name, "controller-uid": job.metadata.uid, "job-name": job.metadata.name})
        meta = ObjectMeta(name=name, namespace=job.metadata.namespace, labels=labels,
                          annotations=dict(tmpl.metadata.annotations),
                          owner_references=[OwnerReference("batch/v1", "Job", job.metadata.name, job.metadata.uid,
                                                           True, True)])
        pod = Pod(metadata=meta, spec=spec)
        ctx.api.create(pod)
        self._owned.setdefault(job.metadata.uid, {})[pod.metadata.uid] = pod
        self._active.setdefault(job.metadata.uid, {})[pod.metadata.uid] = pod
        ctx.event(job, NORMAL, "SuccessfulCreate", f"Created pod: {name}", SOURCE)

    def _finish(self, job: Job, ctype: str, reason: str, message: str) -> None:
        ctx = self.ctx
        interim = "SuccessCriteriaMet" if ctype == "Complete" else "FailureTarget"
        job.status.conditions.append(JobCondition(interim, "True", reason, message, ctx.now, ctx.now))
        job.status.conditions.append(JobCondition(ctype, "True", reason, message, ctx.now, ctx.now))
        job.status.active = 0
        job.status.ready = 0
        if ctype == "Complete":
            job.status.completion_time = ctx.now
            ctx.event(job, NORMAL, "Completed", "Job completed", SOURCE)
        else:
            ctx.event(job, WARNING, reason, message, SOURCE)
        ctx.api.update(job)
