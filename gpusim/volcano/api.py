"""The Volcano scheduler's snapshot types (mirrors volcano-sh/volcano pkg/scheduler/api: resource_info.go,
task_info.go, job_info.go, node_info.go, queue_info.go, unschedule_info.go).

Resources are dicts in gpusim's integer units (milliCPU, bytes, devices); only cpu, memory and scalar
resources (extended, hugepages) count, as ``api.NewResource`` keeps them (pods go to MaxTaskNum).
A task's status follows its pod (``getTaskStatus``) and changes within a session as actions allocate,
pipeline or evict it; ``JobInfo.task_status_index`` indexes tasks by status.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

from ..api.scheduling_volcano_sh_v1beta1 import POD_GROUP_NOT_READY, POD_GROUP_READY, POD_PREEMPTABLE
from ..scheduler.framework import PodInfo

Res = dict[str, float]

# TaskStatus (task_info.go / types.go)
PENDING, ALLOCATED, PIPELINED, BINDING, BOUND = "Pending", "Allocated", "Pipelined", "Binding", "Bound"
RUNNING, RELEASING, SUCCEEDED, FAILED, UNKNOWN = "Running", "Releasing", "Succeeded", "Failed", "Unknown"
ALLOCATED_STATUSES = (BOUND, BINDING, RUNNING, ALLOCATED)   # AllocatedStatus
SCHEDULABLE, UNSCHEDULABLE = "Schedulable", "Unschedulable"  # PodReasonSchedulable / PodReasonUnschedulable
ALL_NODE_UNAVAILABLE_MSG = "all nodes are unavailable"        # unschedule_info.go AllNodeUnavailableMsg


def is_counted(name: str) -> bool:
    return name in ("cpu", "memory") or "/" in name or name.startswith("hugepages-")


def resource(values: Optional[dict] = None) -> Res:
    """api.NewResource: cpu and memory always present."""
    r: Res = {"cpu": 0, "memory": 0}
    for k, v in (values or {}).items():
        if is_counted(k):
            r[k] = r.get(k, 0) + v
    return r


def add(a: Res, b: Res) -> Res:
    for k, v in b.items():
        a[k] = a.get(k, 0) + v
    return a


def sub(a: Res, b: Res) -> Res:
    for k, v in b.items():
        a[k] = a.get(k, 0) - v
    return a


def less_equal(left: Res, right: Res, infinity_default: bool = False) -> bool:
    """Resource.LessEqual(rr, defaultValue) over left's dimensions; a dimension missing on the right
    counts as 0 (api.Zero) or ∞ (api.Infinity)."""
    missing = math.inf if infinity_default else 0
    return all(v <= right.get(k, missing) for k, v in left.items())


def less_equal_with_dimension(left: Res, right: Res, req: Res) -> bool:
    """LessEqualWithDimension: only the dimensions ``req`` asks for (> 0)."""
    return all(left.get(k, 0) <= right.get(k, 0) for k, v in req.items() if v > 0)


def min_dimension(a: Res, b: Res, infinity_default: bool) -> Res:
    """MinDimensionResource: a = min(a, b) per dimension of a (missing in b: ∞ or 0)."""
    missing = math.inf if infinity_default else 0
    for k in a:
        a[k] = min(a[k], b.get(k, missing))
    return a


def insufficient(req: Res, avail: Res) -> list[str]:
    """The dimensions where ``req`` exceeds ``avail``, in cpu, memory, sorted-scalars order."""
    order = [k for k in ("cpu", "memory") if k in req] + sorted(k for k in req if k not in ("cpu", "memory"))
    return [k for k in order if req[k] > 0 and req[k] > avail.get(k, 0)]


def is_empty(r: Res) -> bool:
    return all(v <= 0 for v in r.values())


def share(allocated: float, total: float) -> float:
    """helpers.Share."""
    if total == 0:
        return 0.0 if allocated == 0 else 1.0
    return allocated / total


def fmt(r: Res) -> str:
    """``cpu 4, memory 16Gi, nvidia.com/gpu 2`` (cores, GiB, devices)."""
    parts = []
    for k in sorted(r, key=lambda k: (k not in ("cpu", "memory"), k != "cpu", k)):
        v = r[k]
        if k == "cpu":
            parts.append(f"cpu {v / 1000:g}")
        elif k == "memory":
            parts.append(f"memory {v / 2**30:g}Gi")
        elif v != math.inf:
            parts.append(f"{k} {v:g}")
    return ", ".join(parts)


def pod_status(pod) -> str:
    """getTaskStatus."""
    phase = pod.status.phase
    deleting = pod.metadata.deletion_timestamp is not None
    if phase == "Running":
        return RELEASING if deleting else RUNNING
    if phase in ("Pending", ""):
        if deleting:
            return RELEASING
        return BOUND if pod.spec.node_name else PENDING
    if phase == "Succeeded":
        return SUCCEEDED
    if phase == "Failed":
        return FAILED
    return UNKNOWN


_PARSE_BOOL = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
               "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}


def preemptable(pod) -> bool:
    """GetPodPreemptable (vc:pkg/scheduler/api/pod_info.go, master): the ``volcano.sh/preemptable``
    annotation, else the label, parsed as Go's strconv.ParseBool; a value that does not parse is false;
    absent, the task is preemptable. The default has been true since Volcano v1.7.0 (volcano#2545,
    cherry-picked as #2586); v1.6 defaulted to false."""
    for src in (pod.metadata.annotations, pod.metadata.labels):
        if POD_PREEMPTABLE in src:
            return _PARSE_BOOL.get(src[POD_PREEMPTABLE], False)
    return True


def task_role(pod, key: str) -> str:
    """getTaskRole (vc:pkg/scheduler/api/task_info.go, master): the non-empty ``volcano.sh/task-spec``
    annotation, else the non-empty label of that name (the job controller sets both; a pod built by
    hand often carries only the label), else ""."""
    return pod.metadata.annotations.get(key) or pod.metadata.labels.get(key) or ""


@dataclass
class TaskInfo:
    uid: str
    name: str
    namespace: str
    job: str
    pod: Any
    status: str
    resreq: Res
    node_name: str = ""
    priority: int = 0
    preemptable: bool = True
    task_role: str = ""
    index: int = 0
    last_tx: Optional[tuple[str, str]] = None   # (status, node) before the last discard (LastTransaction)
    job_allocated_hyper_node: str = ""          # JobAllocatedHyperNode: the job's HyperNode while it is placed

    @staticmethod
    def from_pod(pod, job: str) -> "TaskInfo":
        from ..api.batch_volcano_sh_v1alpha1 import TASK_INDEX, TASK_SPEC_KEY
        req = resource(PodInfo(pod).requests)
        ann = pod.metadata.annotations
        try:
            index = int(ann.get(TASK_INDEX, pod.metadata.name.rsplit("-", 1)[-1]))
        except ValueError:
            index = 0
        return TaskInfo(pod.metadata.uid, pod.metadata.name, pod.metadata.namespace, job, pod, pod_status(pod),
                        req, pod.spec.node_name or "", pod.spec.priority or 0, preemptable(pod),
                        task_role(pod, TASK_SPEC_KEY), index)

    @property
    def best_effort(self) -> bool:
        return is_empty(self.resreq)

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass
class FitErrors:
    """unschedule_info.go FitErrors: per node, the reasons it was rejected; Error() is
    "0/<nodes tried> nodes are unavailable: <histogram>." unless a common error was set, prefixed
    "In hyperNode <name>: " when the nodes were those of one HyperNode."""

    nodes: dict[str, list[str]] = field(default_factory=dict)
    err: str = ""
    hyper_node: str = ""           # SetHyperNode: the HyperNode a hard-topology job was tried in

    def error(self) -> str:
        base = self.err or f"0/{len(self.nodes)} nodes are unavailable"
        if not self.nodes:
            return base
        hist: dict[str, int] = {}
        for reasons in self.nodes.values():
            for r in reasons:
                hist[r] = hist.get(r, 0) + 1
        msg = f"{base}: " + ", ".join(sorted(f"{v} {k}" for k, v in hist.items())) + "."
        return f"In hyperNode {self.hyper_node}: {msg}" if self.hyper_node else msg


def _hist(reasons: dict[str, int]) -> str:
    return ", ".join(sorted(f"{v} {k}" for k, v in reasons.items()))


@dataclass
class JobInfo:
    uid: str                       # namespace/name of the PodGroup
    name: str
    namespace: str
    queue: str
    pod_group: Any                 # the PodGroup object; status is written back at CloseSession
    phase: str                     # the session's copy of status.phase
    min_available: int
    task_min_available: dict[str, int]
    priority: int
    creation_timestamp: float
    min_resources: Optional[Res]
    tasks: dict[str, TaskInfo] = field(default_factory=dict)
    index: dict[str, dict[str, TaskInfo]] = field(default_factory=dict)
    allocated: Res = field(default_factory=resource)
    nodes_fit_errors: dict[str, FitErrors] = field(default_factory=dict)
    job_fit_errors: str = ""
    conditions: list = field(default_factory=list)   # conditions set this session: (type, reason, message)
    network_topology: Any = None   # the PodGroup's spec.networkTopology (NetworkTopologySpec or None)
    allocated_hyper_node: str = ""  # AllocatedHyperNode: the HyperNode holding the job's allocated tasks

    def add_task(self, t: TaskInfo) -> None:
        self.tasks[t.uid] = t
        self.index.setdefault(t.status, {})[t.uid] = t
        if t.status in ALLOCATED_STATUSES:
            add(self.allocated, t.resreq)

    def update_task_status(self, t: TaskInfo, status: str) -> None:
        """UpdateTaskStatus: re-index, keeping ``allocated`` in step."""
        self.index.get(t.status, {}).pop(t.uid, None)
        if t.status in ALLOCATED_STATUSES:
            sub(self.allocated, t.resreq)
        t.status = status
        self.index.setdefault(status, {})[t.uid] = t
        if status in ALLOCATED_STATUSES:
            add(self.allocated, t.resreq)

    def count(self, *statuses: str) -> int:
        return sum(len(self.index.get(s, {})) for s in statuses)

    def of(self, status: str) -> list[TaskInfo]:
        """Tasks with ``status``, in a stable order (pod creation, then name)."""
        return sorted(self.index.get(status, {}).values(), key=lambda t: (t.index, t.name))

    def ready_task_num(self) -> int:
        """ReadyTaskNum: Bound, Binding, Running, Allocated and Succeeded tasks."""
        return self.count(*ALLOCATED_STATUSES, SUCCEEDED)

    def waiting_task_num(self) -> int:
        return self.count(PIPELINED)

    def valid_task_num(self) -> int:
        """ValidTaskNum: tasks that are (or may become) placed: Pending, Pipelined, allocated, Succeeded."""
        return self.count(PENDING, PIPELINED, *ALLOCATED_STATUSES, SUCCEEDED)

    def pending_best_effort_task_num(self) -> int:
        return sum(1 for t in self.index.get(PENDING, {}).values() if t.best_effort)

    def ready(self) -> bool:
        """IsReady: ready tasks plus pending best-effort ones (they need nothing) ≥ minAvailable."""
        return self.ready_task_num() + self.pending_best_effort_task_num() >= self.min_available

    def pipelined(self) -> bool:
        """IsPipelined."""
        return (self.waiting_task_num() + self.ready_task_num() + self.pending_best_effort_task_num()
                >= self.min_available)

    def starving(self) -> bool:
        """IsStarving."""
        return self.waiting_task_num() + self.ready_task_num() < self.min_available

    def is_pending(self) -> bool:
        return self.phase in ("", "Pending")

    def _per_task(self, statuses: tuple[str, ...], best_effort: bool) -> bool:
        """CheckTask{Valid,Ready,Pipelined}: every task with a minTaskMember has that many tasks in
        ``statuses`` (plus pending best-effort ones when ``best_effort``); checked only when minAvailable
        covers the sum of the tasks' minimums, as upstream."""
        if not self.task_min_available or self.min_available < sum(self.task_min_available.values()):
            return True
        counts: dict[str, int] = {}
        for s in statuses:
            for t in self.index.get(s, {}).values():
                counts[t.task_role] = counts.get(t.task_role, 0) + 1
        if best_effort:
            for t in self.index.get(PENDING, {}).values():
                if t.best_effort:
                    counts[t.task_role] = counts.get(t.task_role, 0) + 1
        return all(counts.get(role, 0) >= n for role, n in self.task_min_available.items() if n)

    def check_task_min_available(self) -> bool:
        return self._per_task((PENDING, PIPELINED, *ALLOCATED_STATUSES, SUCCEEDED), False)

    def check_task_min_available_ready(self) -> bool:
        return self._per_task((*ALLOCATED_STATUSES, SUCCEEDED), True)

    def check_task_min_available_pipelined(self) -> bool:
        return self._per_task((PIPELINED, *ALLOCATED_STATUSES, SUCCEEDED), True)

    def fit_failed_roles(self) -> set[str]:
        """FitFailedRoles (job_info.go, master) for the job's single sub-job: the roles of tasks that have
        fit errors this session."""
        return {self.tasks[uid].task_role for uid in self.nodes_fit_errors if uid in self.tasks}

    def task_has_fit_errors(self, t: TaskInfo) -> bool:
        """TaskHasFitErrors: a task with a role whose role already failed the predicates (no role: no cache)."""
        return bool(t.task_role) and t.task_role in self.fit_failed_roles()

    def allocated_roles(self) -> dict[str, int]:
        """getJobAllocatedRoles: per role, allocated (Bound, Binding, Running, Allocated) and Succeeded tasks plus
        pending best-effort ones."""
        counts: dict[str, int] = {}
        for s in (*ALLOCATED_STATUSES, SUCCEEDED):
            for t in self.index.get(s, {}).values():
                counts[t.task_role] = counts.get(t.task_role, 0) + 1
        for t in self.index.get(PENDING, {}).values():
            if t.best_effort:
                counts[t.task_role] = counts.get(t.task_role, 0) + 1
        return counts

    def need_continue_allocating(self) -> bool:
        """NeedContinueAllocating (job_info.go, master; called by allocate when a task fits no node): go on to
        the job's other tasks unless that cannot make the job ready. Never when minAvailable covers every task
        (upstream checks the job, then its default sub-job whose minimum is the job's); when minAvailable is below
        the sum of the per-task minimums: ready tasks + pending tasks of roles that have not failed ≥
        minAvailable; otherwise no failed role with a minimum may have fewer allocated tasks than that minimum.
        (Sub-group policies, where upstream always continues, are not modelled.)"""
        if self.min_available >= len(self.tasks):
            return False
        failed = self.fit_failed_roles()
        if self.min_available < sum(self.task_min_available.values()):
            left = sum(1 for t in self.index.get(PENDING, {}).values() if t.task_role not in failed)
            return self.ready_task_num() + left >= self.min_available
        allocated = self.allocated_roles()
        return all(allocated.get(role, 0) >= self.task_min_available.get(role, 0) for role in failed)

    def task_scheduling_reason(self, t: TaskInfo) -> tuple[str, str]:
        """TaskSchedulingReason: (reason, message) from the task's last transaction."""
        status, node = t.last_tx if t.last_tx is not None else (t.status, t.node_name)
        if status == ALLOCATED:
            return SCHEDULABLE, (f"Pod {t.namespace}/{t.name} can possibly be assigned to {node}, "
                                 "once minAvailable is satisfied")
        if status == PIPELINED:
            return UNSCHEDULABLE, (f"Pod {t.namespace}/{t.name} can possibly be assigned to {node}, "
                                   "once resource is released and minAvailable is satisfied")
        if status == PENDING:
            fe = self.nodes_fit_errors.get(t.uid)
            return UNSCHEDULABLE, fe.error() if fe is not None else self.job_fit_errors
        return status, self.job_fit_errors

    def fit_error(self) -> str:
        """JobInfo.FitError: "pod group is (not) ready, <histogram of task statuses and minAvailable>",
        "; Pending: <histogram of the pending tasks' scheduling reasons>", then the origin: ". Origin reason
        is: <JobFitErrors>" or ". Origin reason is <task>: <its FitErrors>" for the first task that has
        some (upstream walks a Go map; gpusim takes the first by task index, then name)."""
        reasons = {s: len(ts) for s, ts in self.index.items() if ts}
        reasons["minAvailable"] = self.min_available
        msg = f"{POD_GROUP_READY if self.ready() else POD_GROUP_NOT_READY}, {_hist(reasons)}"
        pending: dict[str, int] = {}
        for t in self.index.get(PENDING, {}).values():
            r, _ = self.task_scheduling_reason(t)
            pending[r] = pending.get(r, 0) + 1
        if pending:
            msg += f"; {PENDING}: {_hist(pending)}"
        if self.job_fit_errors:
            msg += ". Origin reason is: " + self.job_fit_errors
        else:
            for t in sorted(self.tasks.values(), key=lambda t: (t.index, t.name)):
                fe = self.nodes_fit_errors.get(t.uid)
                if fe is not None:
                    msg += f". Origin reason is {t.name}: {fe.error()}"
                    break
        return msg


@dataclass
class NodeInfo:
    """node_info.go: allocatable, idle, used, releasing, pipelined and the tasks on the node; ``ni`` is the
    kube-scheduler NodeInfo the wrapped Filter/Score plugins read."""

    name: str
    node: Any
    ni: Any
    allocatable: Res
    idle: Res
    used: Res = field(default_factory=resource)
    releasing: Res = field(default_factory=resource)
    pipelined: Res = field(default_factory=resource)
    tasks: dict[str, TaskInfo] = field(default_factory=dict)

    def future_idle(self) -> Res:
        """FutureIdle = Idle + Releasing − Pipelined."""
        return sub(add(dict(self.idle), self.releasing), self.pipelined)

    def add_task(self, t: TaskInfo) -> None:
        self.tasks[t.uid] = t
        if t.status == PIPELINED:
            add(self.pipelined, t.resreq)
            return
        if t.status == RELEASING:
            add(self.releasing, t.resreq)
        sub(self.idle, t.resreq)
        add(self.used, t.resreq)
        self.ni.add_pod(PodInfo(t.pod))

    def remove_task(self, t: TaskInfo) -> None:
        if self.tasks.pop(t.uid, None) is None:
            return
        if t.status == PIPELINED:
            sub(self.pipelined, t.resreq)
            return
        if t.status == RELEASING:
            sub(self.releasing, t.resreq)
        add(self.idle, t.resreq)
        sub(self.used, t.resreq)
        self.ni.remove_pod(t.uid)


@dataclass
class QueueInfo:
    uid: str
    name: str
    weight: int
    priority: int
    queue: Any
    creation_timestamp: float

    def reclaimable(self) -> bool:
        r = self.queue.spec.reclaimable
        return True if r is None else r

    def is_open(self) -> bool:
        """status.state Open; a queue the queue controller has not synced yet (no state) counts as open."""
        return (self.queue.status.state or "Open") == "Open"
