"""``batch.volcano.sh/v1alpha1`` Job (mirrors volcano-sh/apis pkg/apis/batch/v1alpha1/job.go and labels.go,
bus/v1alpha1 events.go/actions.go), with the defaults of volcano-sh/volcano
pkg/webhooks/admission/jobs/mutate/mutate_job.go and the checks of jobs/validate/admit_job.go + util.go.

Stored as ``Job.batch.volcano.sh`` (kubectl's ``jobs.batch.volcano.sh``, short names vcjob/vj) beside batch/v1 Jobs.
Defaults: ``schedulerName: volcano``, ``queue: default``, ``maxRetry: 3``, task name ``default<i>``, a task's
``minAvailable`` = its replicas, the job's ``minAvailable`` = Σ of the tasks' minAvailable.
"""
from __future__ import annotations

from .schema import INT32

import re
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from .batch_v1 import PodTemplateSpec
from .meta import ObjectMeta
from .scheduling_volcano_sh_v1beta1 import NetworkTopologySpec, validate_network_topology

SCHEDULER_NAME = "volcano"          # the Volcano scheduler's --scheduler-name default
DEFAULT_MAX_RETRY = 3
DEFAULT_TASK_NAME = "default"       # mutate_job.go defaultTaskName (+ task index)
# labels.go
TASK_SPEC_KEY = "volcano.sh/task-spec"
TASK_INDEX = "volcano.sh/task-index"
JOB_NAME_KEY = "volcano.sh/job-name"
QUEUE_NAME_KEY = "volcano.sh/queue-name"
JOB_NAMESPACE_KEY = "volcano.sh/job-namespace"
JOB_VERSION = "volcano.sh/job-version"
JOB_RETRY_COUNT_KEY = "volcano.sh/job-retry-count"
POD_TEMPLATE_KEY = "volcano.sh/template-uid"
PODGROUP_NAME_PREFIX = "podgroup-"
# bus/v1alpha1 events.go and actions.go
ANY_EVENT, POD_FAILED, POD_EVICTED, POD_PENDING, POD_RUNNING = "*", "PodFailed", "PodEvicted", "PodPending", "PodRunning"
JOB_UNKNOWN, TASK_COMPLETED, TASK_FAILED, OUT_OF_SYNC = "Unknown", "TaskCompleted", "TaskFailed", "OutOfSync"
COMMAND_ISSUED, JOB_UPDATED = "CommandIssued", "JobUpdated"
ABORT_JOB, RESTART_JOB, RESTART_TASK, RESTART_POD = "AbortJob", "RestartJob", "RestartTask", "RestartPod"
TERMINATE_JOB, COMPLETE_JOB, RESUME_JOB, SYNC_JOB = "TerminateJob", "CompleteJob", "ResumeJob", "SyncJob"
# jobs/validate/util.go policyEventMap / policyActionMap: what a policy may name
POLICY_EVENTS = (ANY_EVENT, POD_FAILED, POD_EVICTED, JOB_UNKNOWN, TASK_COMPLETED, TASK_FAILED, JOB_UPDATED)
POLICY_ACTIONS = (ABORT_JOB, RESTART_JOB, RESTART_TASK, TERMINATE_JOB, COMPLETE_JOB, RESUME_JOB)
# pkg/controllers/job/plugins/factory.go (UNVERIFIED: the full list of registered job plugins on master)
JOB_PLUGINS = ("env", "svc", "ssh", "mpi", "pytorch", "tensorflow", "ray", "hcclrank")
JOB_PHASES = ("Pending", "Aborting", "Aborted", "Running", "Restarting", "Completing", "Completed",
              "Terminating", "Terminated", "Failed")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


@dataclass
class LifecyclePolicy:
    action: str = ""
    event: str = ""
    events: list[str] = field(default_factory=list)
    exit_code: Optional[int] = None
    timeout: Optional[str] = None

    def event_list(self) -> list[str]:
        """getEventlist: ``events`` plus ``event``, without duplicates."""
        out = list(self.events) + ([self.event] if self.event else [])
        return list(dict.fromkeys(out))


@dataclass
class TaskSpec:
    name: str = ""
    replicas: int = field(default=0, metadata=INT32)
    min_available: Optional[int] = field(default=None, metadata=INT32)
    template: PodTemplateSpec = field(default_factory=PodTemplateSpec)
    policies: list[LifecyclePolicy] = field(default_factory=list)
    topology_policy: str = ""
    max_retry: int = field(default=0, metadata=INT32)
    depends_on: Any = None
    partition_policy: Any = None


@dataclass
class JobSpec:
    scheduler_name: str = ""
    min_available: int = field(default=0, metadata=INT32)
    volumes: Any = None
    tasks: list[TaskSpec] = field(default_factory=list)
    policies: list[LifecyclePolicy] = field(default_factory=list)
    plugins: dict[str, list[str]] = field(default_factory=dict)
    running_estimate: Any = None
    queue: str = ""
    max_retry: int = field(default=0, metadata=INT32)
    ttl_seconds_after_finished: Optional[int] = None
    priority_class_name: str = ""
    min_success: Optional[int] = None
    network_topology: Optional[NetworkTopologySpec] = None


@dataclass
class JobState:
    phase: str = ""
    reason: str = ""
    message: str = ""
    last_transition_time: Any = None


@dataclass
class JobCondition:
    status: str = ""
    last_transition_time: Any = None


@dataclass
class JobStatus:
    state: JobState = field(default_factory=JobState)
    min_available: int = field(default=0, metadata=INT32)
    task_status_count: dict[str, Any] = field(default_factory=dict)
    pending: int = 0
    running: int = 0
    succeeded: int = 0
    failed: int = 0
    terminating: int = 0
    unknown: int = 0
    version: int = 0
    retry_count: int = 0
    running_duration: Any = None
    controlled_resources: dict[str, str] = field(default_factory=dict)
    conditions: list[JobCondition] = field(default_factory=list)


@dataclass
class Job:
    RESOURCE = "Job.batch.volcano.sh"
    NAMESPACED = True
    api_version: str = "batch.volcano.sh/v1alpha1"
    kind: str = "Job"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: JobSpec = field(default_factory=JobSpec)
    status: JobStatus = field(default_factory=JobStatus)


def default_job(job: Job) -> None:
    """mutate_job.go: patchDefaultQueue, patchDefaultScheduler, patchDefaultMaxRetry, task names and
    minAvailable, patchDefaultMinAvailable."""
    s = job.spec
    s.queue = s.queue or "default"
    s.scheduler_name = s.scheduler_name or SCHEDULER_NAME
    if s.max_retry == 0:
        s.max_retry = DEFAULT_MAX_RETRY
    for i, t in enumerate(s.tasks):
        if not t.name:
            t.name = f"{DEFAULT_TASK_NAME}{i}"
        if t.min_available is None:
            t.min_available = t.replicas
        if t.max_retry == 0:
            t.max_retry = DEFAULT_MAX_RETRY
    if s.min_available == 0:
        s.min_available = sum(t.min_available if t.min_available is not None else t.replicas for t in s.tasks)


def _validate_policies(policies: list[LifecyclePolicy], path: str) -> Iterator[tuple[str, str]]:
    """util.go validatePolicies (one message per policy list; the webhook stops at the first problem)."""
    seen_events: set[str] = set()
    codes: set[int] = set()
    for i, p in enumerate(policies):
        pp = f"{path}[{i}]"
        events = p.event_list()
        if events and p.exit_code is not None:
            yield pp, "must not specify event and exitCode simultaneously"
            return
        if not events and p.exit_code is None:
            yield pp, "either event and exitCode should be specified"
            return
        if events:
            for e in events:
                if e not in POLICY_EVENTS:
                    yield f"{pp}.event", (f'Invalid value: "{e}": invalid policy event; valid events are '
                                          f"{list(POLICY_EVENTS)}")
                    return
                if p.action not in POLICY_ACTIONS:
                    yield f"{pp}.action", (f'Invalid value: "{p.action}": invalid policy action; valid actions are '
                                           f"{list(POLICY_ACTIONS)}")
                    return
                if e in seen_events:
                    yield f"{pp}.event", f"duplicate event {e}  across different policy"
                    return
                seen_events.add(e)
        else:
            if p.exit_code == 0:
                yield f"{pp}.exitCode", "0 is not a valid error code"
                return
            if p.exit_code in codes:
                yield f"{pp}.exitCode", f"duplicate exitCode {p.exit_code}"
                return
            codes.add(p.exit_code)
            if p.action not in POLICY_ACTIONS:
                yield f"{pp}.action", (f'Invalid value: "{p.action}": invalid policy action; valid actions are '
                                       f"{list(POLICY_ACTIONS)}")
                return
    if ANY_EVENT in seen_events and len(seen_events) > 1:
        yield path, "if there's * here, no other policy should be here"


def validate_job(job: Job) -> Iterator[tuple[str, str]]:
    """admit_job.go validateJobCreate, one finding per field (messages as the webhook writes them).
    Run on the defaulted job, as the validating webhook runs after the mutating one."""
    s = job.spec
    if s.min_available < 0:
        yield "spec.minAvailable", "job 'minAvailable' must be >= 0."
    if s.max_retry < 0:
        yield "spec.maxRetry", "'maxRetry' cannot be less than zero."
    if s.ttl_seconds_after_finished is not None and s.ttl_seconds_after_finished < 0:
        yield "spec.ttlSecondsAfterFinished", "'ttlSecondsAfterFinished' cannot be less than zero."
    if not s.tasks:
        yield "spec.tasks", "No task specified in job spec"
        return
    names: set[str] = set()
    total = 0
    for i, t in enumerate(s.tasks):
        tp = f"spec.tasks[{i}]"
        if t.replicas < 0:
            yield f"{tp}.replicas", f"'replicas' < 0 in task: {t.name};"
        if t.min_available is not None and t.min_available > t.replicas:
            yield f"{tp}.minAvailable", f"'minAvailable' is greater than 'replicas' in task: {t.name}, job: {job.metadata.name}"
        total += t.replicas
        if not _DNS1123_LABEL.match(t.name) or len(t.name) > 63:
            yield f"{tp}.name", ("[a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
                                 "'-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
                                 "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')];")
        if t.name in names:
            yield f"{tp}.name", f"duplicated task name {t.name};"
        names.add(t.name)
        yield from _validate_policies(t.policies, f"{tp}.policies")
        pod_name = f"{job.metadata.name}-{t.name}-{i}"
        if len(pod_name) > 63 or not _QUALIFIED_NAME.match(pod_name):
            yield f"{tp}.name", f"create pod with name {pod_name} validate failed [must be no more than 63 characters];"
    if total < s.min_available:
        yield "spec.minAvailable", "job 'minAvailable' should not be greater than total replicas in tasks;"
    yield from validate_network_topology(s.network_topology, "spec.networkTopology")
    yield from _validate_policies(s.policies, "spec.policies")
    for name in s.plugins:
        if name not in JOB_PLUGINS:
            yield f"spec.plugins[{name}]", f" unable to find job plugin: {name}"
