"""The Volcano scheduling session (mirrors volcano-sh/volcano pkg/scheduler/framework: framework.go,
session.go, session_plugins.go, statement.go, job_updater.go).

OpenSession snapshots the cluster, each plugin's ``on_session_open`` registers callbacks; actions run;
CloseSession runs ``on_session_close`` and writes PodGroup status. How callbacks of several plugins combine
(session_plugins.go), tier by tier in the configured order, skipping plugins whose switch is off:

- order fns (job/queue/task): the first non-zero comparison wins; fallback creation time, then UID;
- JobReady, Allocatable, Preemptive: all must agree (AND); Overused: any (OR);
- JobValid: the first failing result; JobPipelined / JobEnqueueable: a Reject anywhere rejects, a Permit
  in a tier ends the evaluation with yes; JobStarving: the first tier with a plugin decides;
- Preemptable / Reclaimable: intersection of the victim sets within a tier; the first tier that decides wins;
- node order: the sum of all scores; HyperNode order (HyperNodeOrderMapFn): the sum of all scores;
- HyperNode gradient (HyperNodeGradientForJobFn): the first plugin that registers one decides (gpusim has one,
  network-topology-aware); without any, the gradient is the root HyperNode alone.

The session also holds the HyperNode tree (``hyper_nodes``, with the virtual ``<cluster-top-hypernode>``) and,
for every job with a ``networkTopology``, its AllocatedHyperNode recovered from the nodes of its allocated tasks
(recoverAllocatedHyperNode).
"""
from __future__ import annotations

from functools import cmp_to_key
from typing import Any, Callable, Optional

from .api import (ALLOCATED, ALLOCATED_STATUSES, BINDING, PENDING, PIPELINED, RELEASING, RUNNING, JobInfo, NodeInfo,
                  QueueInfo, TaskInfo)
from .conf import SchedulerConf
from .hypernodes import CLUSTER_TOP, HyperNodes

PERMIT, ABSTAIN, REJECT = 1, 0, -1   # plugins/util: Permit, Abstain, Reject


class PriorityQueue:
    """util.PriorityQueue: pop the item that sorts first under ``less`` (evaluated at pop time, since
    shares change while an action runs)."""

    def __init__(self, less: Callable[[Any, Any], bool]):
        self.less = less
        self.items: list = []

    def push(self, item: Any) -> None:
        self.items.append(item)

    def pop(self) -> Any:
        best = 0
        for i in range(1, len(self.items)):
            if self.less(self.items[i], self.items[best]):
                best = i
        return self.items.pop(best)

    def empty(self) -> bool:
        return not self.items

    def __len__(self) -> int:
        return len(self.items)


class Session:
    """One scheduling cycle's view of the cluster plus the plugins' callbacks."""

    def __init__(self, uid: str, cache: Any, conf: SchedulerConf, jobs: dict[str, JobInfo],
                 nodes: dict[str, NodeInfo], queues: dict[str, QueueInfo], total: dict):
        self.uid = uid
        self.cache = cache
        self.conf = conf
        self.tiers = conf.tiers
        self.jobs = jobs
        self.nodes = nodes
        self.queues = queues
        self.total_resource = total
        self.plugins: dict[str, Any] = {}
        self.fns: dict[str, dict[str, Callable]] = {}
        self.event_handlers: list[tuple[Optional[Callable], Optional[Callable]]] = []
        self.rng: Any = None                            # the simulation's seeded random.Random
        self.record: dict[str, Any] = {}                # plugin → what it reports at CloseSession
        self.k8s_cache: dict = {}                       # kube-scheduler frameworks reused across sessions
        self.trace: Callable[..., None] = lambda *a, **k: None
        self.hyper_nodes = HyperNodes([], [n.node for n in nodes.values()])

    def set_hyper_nodes(self, hyper_nodes: HyperNodes) -> None:
        """openSession: the HyperNode tree, then recoverAllocatedHyperNode for jobs with a networkTopology (the
        lowest HyperNode holding every node their allocated tasks run on)."""
        self.hyper_nodes = hyper_nodes
        for job in self.jobs.values():
            job.allocated_hyper_node = ""
            if job.network_topology is None:
                continue
            nodes = [t.node_name for s in ALLOCATED_STATUSES for t in job.index.get(s, {}).values() if t.node_name]
            job.allocated_hyper_node = hyper_nodes.allocated_hyper_node(nodes)

    # --- registration (session.go AddXxxFn) ----------------------------------------------------------------
    def add_fn(self, kind: str, plugin: str, fn: Callable) -> None:
        self.fns.setdefault(kind, {})[plugin] = fn

    def add_event_handler(self, allocate: Optional[Callable] = None, deallocate: Optional[Callable] = None) -> None:
        self.event_handlers.append((allocate, deallocate))

    def _each(self, kind: str, switch: Optional[str]):
        """(tier index, plugin name, fn) for plugins with a ``kind`` fn whose switch is on, tier by tier."""
        fns = self.fns.get(kind, {})
        for i, tier in enumerate(self.tiers):
            for p in tier.plugins:
                if switch is not None and not p.enabled(switch):
                    continue
                fn = fns.get(p.name)
                if fn is not None:
                    yield i, p.name, fn

    # --- order fns -----------------------------------------------------------------------------------------
    def _order(self, kind: str, switch: str, l: Any, r: Any) -> int:
        for _, _, fn in self._each(kind, switch):
            c = fn(l, r)
            if c != 0:
                return c
        return 0

    def job_order_fn(self, l: JobInfo, r: JobInfo) -> bool:
        c = self._order("job_order", "job_order", l, r)
        if c != 0:
            return c < 0
        if l.creation_timestamp != r.creation_timestamp:
            return l.creation_timestamp < r.creation_timestamp
        return l.uid < r.uid

    def queue_order_fn(self, l: QueueInfo, r: QueueInfo) -> bool:
        c = self._order("queue_order", "queue_order", l, r)
        if c != 0:
            return c < 0
        if l.creation_timestamp != r.creation_timestamp:
            return l.creation_timestamp < r.creation_timestamp
        return l.uid < r.uid

    def task_order_fn(self, l: TaskInfo, r: TaskInfo) -> bool:
        c = self._order("task_order", "task_order", l, r)
        if c != 0:
            return c < 0
        # helpers.CompareTask: by pod index under the task, then creation time
        if l.index != r.index:
            return l.index < r.index
        return (l.pod.metadata.creation_timestamp or 0, l.name) < (r.pod.metadata.creation_timestamp or 0, r.name)

    def build_victims_priority_queue(self, victims: list[TaskInfo], preemptor: TaskInfo) -> "PriorityQueue":
        """BuildVictimsPriorityQueue (framework/session_plugins.go, master): victims of one job by reverse
        TaskOrder; of jobs in different queues by VictimQueueOrder, which without a plugin's verdict is the
        reverse QueueOrder (no gpusim plugin registers one; upstream's capacity plugin does); else by reverse
        JobOrder."""
        def less(l: TaskInfo, r: TaskInfo) -> bool:
            if l.job == r.job:
                return not self.task_order_fn(l, r)
            lj, rj, pj = self.jobs.get(l.job), self.jobs.get(r.job), self.jobs.get(preemptor.job)
            if lj is not None and rj is not None and pj is not None and lj.queue != rj.queue:
                return not self.queue_order_fn(self.queues[lj.queue], self.queues[rj.queue])
            return not self.job_order_fn(lj, rj)
        order = PriorityQueue(less)
        for v in victims:
            order.push(v)
        return order

    # --- predicates on jobs and queues -----------------------------------------------------------------------
    def job_ready(self, job: JobInfo) -> bool:
        return all(fn(job) for _, _, fn in self._each("job_ready", "job_ready"))

    def job_pipelined(self, job: JobInfo) -> bool:
        return self._vote("job_pipelined", "job_pipelined", job)

    def job_enqueueable(self, job: JobInfo) -> bool:
        return self._vote("job_enqueueable", "job_enqueued", job)

    def _vote(self, kind: str, switch: str, obj: Any) -> bool:
        found_tier = None
        permitted = False
        for i, _, fn in self._each(kind, switch):
            if found_tier is not None and i != found_tier and permitted:
                return True
            found_tier = i
            res = fn(obj)
            if res < 0:
                return False
            if res > 0:
                permitted = True
        return True

    def job_enqueued(self, job: JobInfo) -> None:
        for _, _, fn in self._each("job_enqueued", "job_enqueued"):
            fn(job)

    def job_valid(self, job: JobInfo):
        for _, _, fn in self._each("job_valid", None):
            vr = fn(job)
            if vr is not None and not vr[0]:
                return vr
        return None

    def job_starving(self, job: JobInfo) -> bool:
        found = False
        last_tier = None
        for i, _, fn in self._each("job_starving", "job_starving"):
            if found and i != last_tier:
                return True
            found, last_tier = True, i
            if not fn(job):
                return False
        return found

    def overused(self, queue: QueueInfo) -> bool:
        return any(fn(queue) for _, _, fn in self._each("overused", "overused"))

    def allocatable(self, queue: QueueInfo, task: TaskInfo) -> bool:
        return all(fn(queue, task) for _, _, fn in self._each("allocatable", "allocatable"))

    def preemptive(self, queue: QueueInfo, task: TaskInfo) -> bool:
        return all(fn(queue, task) for _, _, fn in self._each("preemptive", "preemptive"))

    def _victims(self, kind: str, switch: str, preemptor: TaskInfo, candidates: list[TaskInfo]) -> list[TaskInfo]:
        victims: Optional[list[TaskInfo]] = None
        init = False
        fns = self.fns.get(kind, {})
        for tier in self.tiers:
            for p in tier.plugins:
                fn = fns.get(p.name)
                if fn is None or not p.enabled(switch):
                    continue
                got, vote = fn(preemptor, candidates)
                if vote == ABSTAIN:
                    continue
                if not got:
                    victims = None      # this plugin wants no victims: the tier ends undecided
                    break
                if not init:
                    victims, init = list(got), True
                else:
                    keep = {t.uid for t in got}
                    victims = [t for t in (victims or []) if t.uid in keep] or None
            if victims:                 # plugins in this tier made a decision
                return victims
        return victims or []

    def preemptable(self, preemptor: TaskInfo, preemptees: list[TaskInfo]) -> list[TaskInfo]:
        return self._victims("preemptable", "preemptable", preemptor, preemptees)

    def reclaimable(self, reclaimer: TaskInfo, reclaimees: list[TaskInfo]) -> list[TaskInfo]:
        return self._victims("reclaimable", "reclaimable", reclaimer, reclaimees)

    def predicate_fn(self, task: TaskInfo, node: NodeInfo) -> list[str]:
        """PredicateFn: the reasons a node is rejected ([] = feasible); the first failing plugin only."""
        for _, _, fn in self._each("predicate", "predicate"):
            reasons = fn(task, node)
            if reasons:
                return reasons
        return []

    def hyper_node_gradient(self, job: JobInfo, root: str = CLUSTER_TOP) -> Optional[list[list[str]]]:
        """HyperNodeGradientForJobFn: the HyperNodes to try, tier by tier (None: the plugin failed to build
        one and the job is not allocated)."""
        for _, _, fn in self._each("hyper_node_gradient", "hyper_node_gradient"):
            return fn(job, root)
        return [[root]]

    def hyper_node_order(self, job: JobInfo, hyper_nodes: list[str]) -> dict[str, float]:
        """PrioritizeHyperNodes with HyperNodeOrderMapFn: Σ of every plugin's score per HyperNode."""
        totals = {h: 0.0 for h in hyper_nodes}
        for _, _, fn in self._each("hyper_node_order", "hyper_node_order"):
            for name, s in fn(job, hyper_nodes).items():
                totals[name] += s
        return totals

    def node_order_fn(self, task: TaskInfo, nodes: list[NodeInfo]) -> dict[str, float]:
        """BatchNodeOrderFn + NodeOrderFn: Σ of every node-order plugin's score per node."""
        totals = {n.name: 0.0 for n in nodes}
        for _, _, fn in self._each("node_order", "node_order"):
            for name, s in fn(task, nodes).items():
                totals[name] += s
        return totals

    # --- operations (session.go Allocate / Pipeline / Evict, statement.go) -----------------------------------
    def _allocated(self, task: TaskInfo) -> None:
        for fn, _ in self.event_handlers:
            if fn is not None:
                fn(task)

    def _deallocated(self, task: TaskInfo) -> None:
        for _, fn in self.event_handlers:
            if fn is not None:
                fn(task)

    def place(self, task: TaskInfo, node: NodeInfo, status: str) -> None:
        job = self.jobs[task.job]
        job.update_task_status(task, status)
        task.node_name = node.name
        node.add_task(task)
        self._allocated(task)

    def unplace(self, task: TaskInfo) -> None:
        job = self.jobs[task.job]
        node = self.nodes.get(task.node_name)
        task.last_tx = (task.status, task.node_name)
        if node is not None:
            node.remove_task(task)
        job.update_task_status(task, PENDING)
        self._deallocated(task)
        task.node_name = ""

    def dispatch(self, task: TaskInfo) -> None:
        """dispatch: bind through the cache; the task becomes Binding."""
        self.cache.bind(task, task.node_name)
        self.jobs[task.job].update_task_status(task, BINDING)

    def allocate(self, task: TaskInfo, node: NodeInfo) -> None:
        """Session.Allocate (backfill): allocate, then dispatch the job's allocated tasks once it is ready."""
        self.place(task, node, ALLOCATED)
        job = self.jobs[task.job]
        if self.job_ready(job):
            for t in job.of(ALLOCATED):
                self.dispatch(t)

    def pipeline(self, task: TaskInfo, node: NodeInfo) -> None:
        self.place(task, node, PIPELINED)

    def evict(self, task: TaskInfo, reason: str) -> None:
        """Session.Evict: the cache evicts the pod; the task is Releasing on its node."""
        self.cache.evict(task, reason)
        self._mark_releasing(task)

    def _mark_releasing(self, task: TaskInfo) -> None:
        job = self.jobs[task.job]
        node = self.nodes.get(task.node_name)
        if node is not None:
            node.remove_task(task)
        job.update_task_status(task, RELEASING)
        if node is not None:
            node.add_task(task)
        self._deallocated(task)


class Statement:
    """statement.go: operations kept until Commit (bind / evict for real) or Discard (undo, newest first)."""

    def __init__(self, ssn: Session):
        self.ssn = ssn
        self.ops: list[tuple[str, TaskInfo, str]] = []

    def allocate(self, task: TaskInfo, node: NodeInfo) -> None:
        self.ssn.place(task, node, ALLOCATED)
        self.ops.append(("allocate", task, ""))

    def pipeline(self, task: TaskInfo, node: NodeInfo) -> None:
        self.ssn.place(task, node, PIPELINED)
        self.ops.append(("pipeline", task, ""))

    def evict(self, task: TaskInfo, reason: str) -> None:
        self.ssn._mark_releasing(task)
        self.ops.append(("evict", task, reason))

    def merge(self, other: "Statement") -> None:
        """Statement.Merge: take over ``other``'s operations (already applied to the session)."""
        self.ops.extend(other.ops)
        other.ops = []

    def has_evictions(self) -> bool:
        return any(op == "evict" for op, _, _ in self.ops)

    def commit(self) -> None:
        for op, task, reason in self.ops:
            if op == "evict":
                self.ssn.cache.evict(task, reason)
            elif op == "allocate" and task.status == ALLOCATED:
                self.ssn.dispatch(task)
        self.ops = []

    def discard(self) -> None:
        for op, task, _ in reversed(self.ops):
            if op == "evict":
                job = self.ssn.jobs[task.job]
                node = self.ssn.nodes.get(task.node_name)
                if node is not None:
                    node.remove_task(task)
                job.update_task_status(task, RUNNING)
                if node is not None:
                    node.add_task(task)
                self.ssn._allocated(task)
            else:
                self.ssn.unplace(task)
        self.ops = []


def less(fn: Callable[[Any, Any], bool]):
    """A sort key from a ``less`` function."""
    return cmp_to_key(lambda a, b: -1 if fn(a, b) else (1 if fn(b, a) else 0))
