"""The Volcano scheduler's cache (mirrors volcano-sh/volcano pkg/scheduler/cache: cache.go Snapshot, Bind,
Evict, UpdateJobStatus, RecordJobStatusEvent, taskUnschedulable; event_handlers.go getTaskStatus).

Snapshot: every node with the pods on it (pods of other schedulers too: they use the node's resources),
every PodGroup of ``scheduling.volcano.sh`` whose queue exists as a job, its pods (``schedulerName:
volcano`` and annotation ``scheduling.k8s.io/group-name``) as tasks, and every Queue.
Binding and eviction go through the apiserver; the kubelet runs (or kills) the pod as for any other pod.
"""
from __future__ import annotations

from typing import Any, Optional

from ..api.scheduling_volcano_sh_v1beta1 import (GROUP_NAME_ANNOTATION, POD_GROUP_READY, SCHEDULED,
                                                UNSCHEDULABLE, PodGroup, PodGroupCondition)
from ..controlplane.events import NORMAL, WARNING
from ..componenthelpers.podutil import set_condition
from ..scheduler.framework import NodeInfo as KubeNodeInfo
from ..componenthelpers.resource import to_units
from ..api.quantity import parse_quantity
from .api import (ALLOCATED, ALLOCATED_STATUSES, ALL_NODE_UNAVAILABLE_MSG, PENDING, PIPELINED, RUNNING,
                  SUCCEEDED, JobInfo, NodeInfo, QueueInfo, TaskInfo, add, resource)

PODGROUP = PodGroup.RESOURCE
QUEUE = "Queue"


def pod_group_of(pod) -> str:
    return pod.metadata.annotations.get(GROUP_NAME_ANNOTATION, "")


class SchedulerCache:
    """What the scheduler knows, read from the apiserver at each OpenSession."""

    def __init__(self, ctx: Any, scheduler_name: str, component: str = "volcano"):
        self.ctx = ctx
        self.api = ctx.api
        self.scheduler_name = scheduler_name
        self.component = component

    # --- Snapshot ------------------------------------------------------------------------------------------
    def snapshot(self) -> tuple[dict[str, JobInfo], dict[str, NodeInfo], dict[str, QueueInfo], dict]:
        api = self.api
        queues = {}
        for q in sorted(api.list(QUEUE), key=lambda q: q.metadata.name):
            queues[q.metadata.name] = QueueInfo(q.metadata.name, q.metadata.name, q.spec.weight or 1,
                                                q.spec.priority, q, q.metadata.creation_timestamp or 0)
        nodes: dict[str, NodeInfo] = {}
        total = resource()
        for n in sorted(api.list("Node"), key=lambda n: n.metadata.name):
            alloc = resource({k: to_units(k, parse_quantity(v)) for k, v in n.status.allocatable.items()})
            nodes[n.metadata.name] = NodeInfo(n.metadata.name, n, KubeNodeInfo(n), alloc, dict(alloc))
            add(total, alloc)
        jobs: dict[str, JobInfo] = {}
        for pg in api.list(PODGROUP):
            if pg.spec.queue not in queues:
                continue
            uid = f"{pg.metadata.namespace}/{pg.metadata.name}"
            prio = 0
            if pg.spec.priority_class_name:
                pc = api.get("PriorityClass", "", pg.spec.priority_class_name)
                prio = pc.value if pc is not None else 0
            minres = None
            if pg.spec.min_resources is not None:
                minres = resource({k: to_units(k, parse_quantity(v)) for k, v in pg.spec.min_resources.items()})
            jobs[uid] = JobInfo(uid, pg.metadata.name, pg.metadata.namespace, pg.spec.queue, pg,
                                pg.status.phase, pg.spec.min_member, dict(pg.spec.min_task_member), prio,
                                pg.metadata.creation_timestamp or 0, minres,
                                network_topology=pg.spec.network_topology)
        for pod in sorted(api.list("Pod"), key=lambda p: (p.metadata.creation_timestamp or 0, p.metadata.namespace,
                                                          p.metadata.name)):
            job_uid = ""
            if pod.spec.scheduler_name == self.scheduler_name:
                g = pod_group_of(pod)
                if g and f"{pod.metadata.namespace}/{g}" in jobs:
                    job_uid = f"{pod.metadata.namespace}/{g}"
            task = TaskInfo.from_pod(pod, job_uid)
            if job_uid:
                jobs[job_uid].add_task(task)
            node = nodes.get(pod.spec.node_name) if pod.spec.node_name else None
            if node is not None and task.status not in (SUCCEEDED, "Failed"):
                node.add_task(task)
        return jobs, nodes, queues, total

    # --- Bind / Evict --------------------------------------------------------------------------------------
    def bind(self, task: TaskInfo, node: str) -> None:
        """DefaultBinder.Bind: POST pods/binding; the pod gets spec.nodeName."""
        ctx, pod = self.ctx, task.pod
        if self.api.get("Pod", pod.metadata.namespace, pod.metadata.name) is not pod or pod.spec.node_name:
            return
        pod.spec.node_name = node
        pod.status.nominated_node_name = ""
        set_condition(pod.status.conditions, "PodScheduled", "True", ctx.now)
        self.api.update(pod)
        ctx.trace.add(ctx.now, self.component, "cache.(*DefaultBinder).Bind", f"Pod {task.ref}", "Success", node=node)
        ctx.event(pod, NORMAL, "Scheduled", f"Successfully assigned {task.ref} to {node}", self.component)

    def evict(self, task: TaskInfo, reason: str) -> None:
        """SchedulerCache.Evict + defaultEvictor.Evict: a Warning Evict event on the pod, PodReady=False
        (reason Evict), delete; a Normal Evict event on the PodGroup."""
        ctx, pod = self.ctx, task.pod
        if self.api.get("Pod", pod.metadata.namespace, pod.metadata.name) is not pod:
            return
        msg = f"Pod is evicted, because of {reason}"
        ctx.event(pod, WARNING, "Evict", msg, self.component)
        set_condition(pod.status.conditions, "Ready", "False", ctx.now, "Evict", msg)
        ctx.trace.add(ctx.now, self.component, "cache.(*SchedulerCache).Evict", f"Pod {task.ref}", reason,
                      node=task.node_name)
        pg = self._pod_group(task.job)
        if pg is not None:
            ctx.event(pg, NORMAL, "Evict", reason, self.component)
        self.api.delete(pod)

    def _pod_group(self, job_uid: str) -> Optional[PodGroup]:
        if not job_uid:
            return None
        ns, name = job_uid.split("/", 1)
        return self.api.get(PODGROUP, ns, name)

    # --- CloseSession: job status --------------------------------------------------------------------------
    def update_job_status(self, ssn: Any, job: JobInfo) -> None:
        """jobUpdater.updateJob: the PodGroup's phase (jobStatus), conditions and counters; written when they
        changed; then RecordJobStatusEvent."""
        ctx, pg = self.ctx, job.pod_group
        if self.api.get(PODGROUP, pg.metadata.namespace, pg.metadata.name) is not pg:
            return
        st = pg.status
        old = (st.phase, [(c.type, c.status, c.reason, c.message) for c in st.conditions],
               st.running, st.succeeded, st.failed)
        for ctype, reason, message in job.conditions:
            cur = next((c for c in st.conditions if c.type == ctype), None)
            if cur is None:
                st.conditions.append(PodGroupCondition(ctype, "True", ssn.uid, ctx.now, reason, message))
            elif (cur.status, cur.reason, cur.message) != ("True", reason, message):
                cur.status, cur.reason, cur.message = "True", reason, message
                cur.transition_id, cur.last_transition_time = ssn.uid, ctx.now
        unschedulable = any(c[0] == UNSCHEDULABLE for c in job.conditions)
        if job.count(RUNNING) and unschedulable:
            phase = "Unknown"
        else:
            allocated = job.count(*ALLOCATED_STATUSES, SUCCEEDED)
            phase = job.phase
            if allocated >= pg.spec.min_member:
                phase = "Running"
                if job.count(SUCCEEDED) == allocated:
                    phase = "Completed"
            elif job.phase != "Inqueue":
                phase = "Pending"
        st.phase = phase
        st.running, st.succeeded, st.failed = job.count(RUNNING), job.count(SUCCEEDED), job.count("Failed")
        new = (st.phase, [(c.type, c.status, c.reason, c.message) for c in st.conditions],
               st.running, st.succeeded, st.failed)
        updated = new != old
        if updated:
            self.api.update(pg)
            ctx.trace.add(ctx.now, self.component, "cache.(*SchedulerCache).UpdateJobStatus",
                          f"PodGroup {job.uid}", st.phase)
        self.record_job_status_event(job)

    def record_job_status_event(self, job: JobInfo) -> None:
        """RecordJobStatusEvent (every session, as upstream; the recorder aggregates repeats): the PodGroup's
        Unschedulable or Scheduled event, and PodScheduled=False with a FailedScheduling event on each
        Allocated, Pending or Pipelined pod whose condition changed (taskUnschedulable)."""
        ctx, pg = self.ctx, job.pod_group
        if pg.status.phase in ("Unknown", "Pending", "Inqueue"):
            msg = f"{job.count(PENDING)}/{len(job.tasks)} tasks in gang unschedulable: {job.fit_error()}"
            ctx.event(pg, WARNING, UNSCHEDULABLE, msg, self.component)
        else:
            ctx.event(pg, NORMAL, SCHEDULED, POD_GROUP_READY, self.component)
        base = job.job_fit_errors or ALL_NODE_UNAVAILABLE_MSG
        for status in (ALLOCATED, PENDING, PIPELINED):
            for t in job.of(status):
                reason, msg = job.task_scheduling_reason(t)
                msg = msg or base
                pod = t.pod
                cur = next((c for c in pod.status.conditions if c.type == "PodScheduled"), None)
                if cur is not None and (cur.status, cur.reason, cur.message) == ("False", reason, msg):
                    continue
                if self.api.get("Pod", pod.metadata.namespace, pod.metadata.name) is not pod or pod.spec.node_name:
                    continue
                set_condition(pod.status.conditions, "PodScheduled", "False", ctx.now, reason, msg)
                ctx.event(pod, WARNING, "FailedScheduling", msg, self.component)
                self.api.update(pod)
