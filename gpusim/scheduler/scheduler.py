"""kube-scheduler (mirrors pkg/scheduler: scheduler.go, schedule_one.go, eventhandlers.go,
backend/cache, backend/queue/nominator.go). One scheduling cycle at a time (serial, zero simulated
time), then an asynchronous binding cycle; failures produce the upstream FailedScheduling message and
requeue the pod.

- Permit: a plugin may answer Wait; the pod is then a waiting pod (see runtime.WaitingPod) and its
  binding cycle blocks in WaitOnPermit until every waiting plugin allows it, or a rejection (event
  "0/1 nodes are available: 1 <message>.") or a timeout. Plugins reach waiting pods through the
  handle: ``iterate_over_waiting_pods``, ``get_waiting_pod``, ``reject_waiting_pod``. With
  NominatedNodeNameForExpectation (beta, on since 1.35) a waiting pod shows its node in
  ``status.nominatedNodeName``.
- Nominated pods: a pod nominated by preemption (``status.nominatedNodeName``) is kept in the
  nominator until it is assumed, deleted or its nomination is cleared; any pod filtered on that node
  sees the nominated pods of equal or higher priority as if they ran there
  (RunFilterPluginsWithNominatedPods: Filter runs with them, then, if that passed, without them).
- PreEnqueue runs again when an unscheduled pod is updated, so removing a pod's last scheduling gate
  sends it to activeQ.
- Pod group scheduling cycle (1.36, GenericWorkload on): a popped pod with ``spec.schedulingGroup`` brings
  its PodGroup's other unscheduled pods, and the whole group is tried in one cycle
  (schedule_one_podgroup.py).
"""
from __future__ import annotations

from typing import Any, Generator, Optional, Sequence

import numpy as np

from ..api.core_v1 import DEFAULT_SCHEDULER_NAME, Node, Pod
from ..controlplane.apiserver import ADDED, DELETED, MODIFIED
from ..controlplane.context import Context
from ..controlplane.events import NORMAL, WARNING
from ..componenthelpers.podutil import set_condition
from .framework import (ERR_NO_NODES_AVAILABLE, MAX_NODE_SCORE, Code, CycleState, Diagnosis, FitError, NodeInfo, PodInfo,
                        QueuedPodInfo, Status)
from .plugins.queuesort import pod_priority
from .queue import SchedulingQueue
from .schedule_one_podgroup import pod_group_info_for_pod, schedule_one_pod_group
from .profile import ProfileSpec, build_profiles
from .registry import Registry, in_tree_registry
from .runtime import MSG_PREEMPTED, MSG_REMOVED, Framework, WaitingPod, WaitingPodsMap
from .vectorized import (SCORE_SKIP_ONLY, NodeTable, compact, eligible, find_feasible, kept_indices,
                         score as vector_score)

MIN_FEASIBLE_NODES_TO_FIND = 100          # schedule_one.go minFeasibleNodesToFind
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5  # schedule_one.go minFeasibleNodesPercentageToFind
MAX_MESSAGE = 1024                          # handleSchedulingFailure truncates event messages
# the vectorised path's numpy calls cost more than the per-node plugins below this many nodes (measured:
# benchmarks/scheduler_throughput.py's workloads at 4–24 nodes); both decide alike (tests/test_vectorized.py)
VECTORIZE_MIN_NODES = 10
# PreEnqueue plugins every pod passes unless it carries a gate; a profile with only these does not trace
# PreEnqueue outcomes that let the pod in (a gated pod is traced either way)
UNTRACED_PRE_ENQUEUE = frozenset({"SchedulingGates", "DynamicResources"})


def num_feasible_nodes_to_find(num_all_nodes: int, percentage: int = 0) -> int:
    """schedule_one.go numFeasibleNodesToFind (adaptive when percentage is 0)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    p = percentage
    if p == 0:
        p = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    k = num_all_nodes * p // 100
    return max(k, MIN_FEASIBLE_NODES_TO_FIND)


class _Infos:
    """The feasible NodeInfos, built only if a PreScore plugin looks at them."""

    def __init__(self, infos: list, idx: Sequence[int]):
        self._infos, self._idx = infos, idx

    def __len__(self) -> int:
        return len(self._idx)

    def __iter__(self):
        return (self._infos[i] for i in self._idx)

    def __getitem__(self, k):
        return self._infos[self._idx[k]]

    def __bool__(self) -> bool:
        return len(self._idx) > 0


class Attempt:
    """What one scheduling cycle decided, for explanations: ``statuses`` (node → "Plugin: reasons" for
    rejected nodes), ``scores`` (node → plugin → (raw, normalized, weighted)), ``feasible`` nodes.
    The vectorised path fills statuses and scores lazily, on first read."""

    def __init__(self, time: float, pod: str, node: Optional[str], profile: str = DEFAULT_SCHEDULER_NAME):
        self.time, self.pod, self.node, self.profile = time, pod, node, profile
        self.number = 1   # which of its pod's attempts this is (set by AttemptLog)
        self.message = ""
        self.pod_group = ""   # "namespace/name" when the attempt was part of a pod group scheduling cycle (1.36)
        self._feasible: Any = []
        self._statuses: Any = {}
        self._scores: Any = {}

    @property
    def statuses(self) -> dict[str, str]:
        if callable(self._statuses):
            self._statuses = {n: f"{st.plugin}: {st.message()}" for n, st in self._statuses().items()}
        return self._statuses

    @statuses.setter
    def statuses(self, value: Any) -> None:
        self._statuses = value

    @property
    def feasible(self) -> list[str]:
        if callable(self._feasible):
            self._feasible = self._feasible()
        return self._feasible

    @feasible.setter
    def feasible(self, value: Any) -> None:
        self._feasible = value

    @property
    def scores(self) -> dict[str, dict]:
        if callable(self._scores):
            self._scores = self._scores()
        return self._scores

    @scores.setter
    def scores(self, value: Any) -> None:
        self._scores = value



class AttemptLog:
    """The scheduler's Attempt records, bounded: a pod keeps its first attempt and its last ``keep``. A pod that
    waits behind a full cluster is retried on every event that might free room for it (upstream does the
    same); keeping every attempt of 500 such pods took 95,000 records and 2 GB. ``count(pod)`` is the total;
    ``Attempt.number`` says which of its pod's attempts a record is. Iterates in time order."""

    def __init__(self, keep: int = 20):
        self.keep = keep
        self._first: dict[str, tuple[int, Attempt]] = {}
        self._recent: dict[str, Any] = {}
        self._total: dict[str, int] = {}
        self._seq = 0
        self._sorted: Optional[list[Attempt]] = None
        self.last: Optional[Attempt] = None

    def append(self, a: Attempt) -> None:
        from collections import deque
        self._seq += 1
        n = self._total.get(a.pod, 0) + 1
        self._total[a.pod] = a.number = n
        if n == 1:
            self._first[a.pod] = (self._seq, a)
        else:
            self._recent.setdefault(a.pod, deque(maxlen=self.keep)).append((self._seq, a))
        self.last, self._sorted = a, None

    def count(self, pod: str) -> int:
        return self._total.get(pod, 0)

    def _all(self) -> list[Attempt]:
        if self._sorted is None:
            rows = list(self._first.values()) + [r for q in self._recent.values() for r in q]
            self._sorted = [a for _, a in sorted(rows, key=lambda r: r[0])]
        return self._sorted

    def __iter__(self):
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def __getitem__(self, i):
        return self.last if i == -1 else self._all()[i]
WATCHED_CUSTOM_RESOURCES = ("NodeResourceTopology", "ResourceClaim", "ResourceSlice", "DeviceClass")


class Scheduler:
    """kube-scheduler with one or more profiles; a pod goes to the profile named by its schedulerName.
    Pods naming no profile are left alone (another scheduler may own them)."""

    def __init__(self, ctx: Context, profiles: Optional[list[ProfileSpec]] = None, queue: Optional[dict] = None,
                 registry: Optional[Registry] = None, k8s_version: tuple[int, int] = (1, 36),
                 config: Any = None, feature_gates: Optional[dict[str, bool]] = None):
        """``registry`` adds out-of-tree plugins; with it, the profiles are rebuilt from ``config`` (the
        scenario's KubeSchedulerConfiguration, None for the defaults) so that they may name them."""
        self.ctx = ctx
        self.k8s_version = k8s_version
        self.feature_gates = dict(feature_gates or {})   # what plugins read (unset: the release's default)
        if profiles is None or registry is not None:
            profiles, queue = build_profiles(config, registry or in_tree_registry(), feature_gates)
        # eventhandlers.go addPodToSchedulingQueue: with GangScheduling on, every new unscheduled pod is
        # also a cluster event (EventUnscheduledPodAdd) that may lift a sibling's PreEnqueue gate.
        self.gang_scheduling_gate = bool((feature_gates or {}).get("GangScheduling"))
        # schedule_one.go ScheduleOne: with GenericWorkload on (1.36), a pod naming a PodGroup in
        # spec.schedulingGroup takes the pod group scheduling cycle (schedule_one_podgroup.py)
        self.generic_workload_enabled = k8s_version >= (1, 36) and bool((feature_gates or {}).get("GenericWorkload"))
        self.pod_group_cycles: list = []    # schedule_one_podgroup.PodGroupCycle, in time order
        self.waiting_pods = WaitingPodsMap(ctx)       # shared by all profiles, as upstream
        self.frameworks = {p.scheduler_name: Framework(p, self, registry, self.waiting_pods) for p in profiles}
        self.framework = next(iter(self.frameworks.values()))
        self.name = self.component = self.framework.scheduler_name
        self.queue = SchedulingQueue(ctx, self.framework.less, **(queue or {}))
        self.queue.gate = self._pre_enqueue
        self.nominator: dict[str, str] = {}                         # pod uid → nominated node
        self.nominated_pods: dict[str, dict[str, PodInfo]] = {}     # node → uid → PodInfo, in order added
        self._inflight: dict[str, list[str]] = {}                   # waiting pod uid → cluster events seen
        self._plugin_events: Optional[dict[str, set]] = None
        self.nodes: dict[str, NodeInfo] = {}
        self._node_list: Optional[list[NodeInfo]] = None   # list(self.nodes.values()), until a node comes or goes
        self._filter_names_cache: dict[tuple, list[str]] = {}
        self._unschedulable: dict[str, bool] = {}   # node → spec.unschedulable last seen (for uncordon events)
        self.pod_node: dict[str, str] = {}
        self.assumed: set[str] = set()
        self.next_start_node_index = 0
        self.attempts = AttemptLog()
        self.table = NodeTable()
        self._affinity_nodes: set[str] = set()
        self.vectorize = True   # the numpy path for the default plugins; False = per-node path only
        self.vectorize_min_nodes = VECTORIZE_MIN_NODES   # below it the per-node path is cheaper
        self.qpis: dict[str, QueuedPodInfo] = {}
        self._pods = ctx.api.watch("Pod")
        self._nodes = ctx.api.watch("Node")
        ctx.env.process(self._node_loop())
        ctx.env.process(self._pod_loop())
        # A plugin that registers events on NodeResourceTopology gets that informer (NodeResourceTopologyMatch:
        # noderesourcetopologies.v1alpha2.topology.node.k8s.io Add|Update, EventsToRegister). Other custom
        # resources' events (PodGroup, ElasticQuota, Workload) are not delivered in this version.
        custom = sorted({ev.split("/", 1)[0] for fw in self.frameworks.values() for p in fw.plugins
                         for ev in getattr(p, "events", ()) if ev.split("/", 1)[0] in WATCHED_CUSTOM_RESOURCES})
        for resource in custom:
            ctx.env.process(self._custom_loop(resource, ctx.api.watch(resource)))
        ctx.env.process(self._run())

    # --- handle (what plugins may call) ----------------------------------------------------------------
    @property
    def api(self):
        return self.ctx.api

    def record_attempt(self, pod: Pod) -> "Attempt":
        """A new, empty Attempt record for ``pod`` (a pod group's pod that its cycle did not reach)."""
        a = Attempt(self.ctx.now, f"{pod.metadata.namespace}/{pod.metadata.name}", None,
                    profile=pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME)
        self.attempts.append(a)
        return a

    def knows_pod(self, uid: str) -> bool:
        """Whether the scheduler's informer has delivered the pod (queued, assumed or bound): the pods a 1.36
        pod group state holds."""
        return uid in self.qpis or uid in self.pod_node or uid in self.assumed

    def node_infos(self) -> list[NodeInfo]:
        return list(self.nodes.values())

    def nodes_with_affinity_pods(self) -> list[NodeInfo]:
        """HavePodsWithAffinityList: nodes holding pods with pod (anti-)affinity, in snapshot order."""
        if not self._affinity_nodes:
            return []
        index = self.table.index if not self.table.stale else {n: i for i, n in enumerate(self.nodes)}
        return [self.nodes[n] for n in sorted(self._affinity_nodes, key=lambda n: index.get(n, 0))
                if n in self.nodes]

    def _node_info_changed(self, ni: NodeInfo) -> None:
        self.table.mark(ni)
        (self._affinity_nodes.add if ni.affinity_pods else self._affinity_nodes.discard)(ni.name)

    def run_filters(self, state, pi, ni) -> Status:
        """The handle's RunFilterPluginsWithNominatedPods (what DefaultPreemption's dry run calls)."""
        return self.run_filters_with_nominated_pods(state, pi, ni)

    # --- nominated pods (backend/queue/nominator.go, framework.go RunFilterPluginsWithNominatedPods) ------
    def nominated_pods_for_node(self, node: str) -> list[PodInfo]:
        return list(self.nominated_pods.get(node, {}).values())

    def _add_nominated_pod(self, pi: PodInfo, node: str) -> None:
        uid = pi.key
        if self.nominator.get(uid) == node:
            return
        self._delete_nominated_pod(uid)
        self.nominator[uid] = node
        self.nominated_pods.setdefault(node, {})[uid] = pi

    def _delete_nominated_pod(self, uid: str) -> None:
        node = self.nominator.pop(uid, None)
        if node is not None:
            pods = self.nominated_pods.get(node)
            if pods is not None:
                pods.pop(uid, None)
                if not pods:
                    del self.nominated_pods[node]

    def _sync_nomination(self, qpi: QueuedPodInfo) -> None:
        """AddNominatedPod / UpdateNominatedPod: an unscheduled, unassumed pod is nominated where its
        status.nominatedNodeName says."""
        pod = qpi.pod
        node = pod.status.nominated_node_name
        if node and not pod.spec.node_name and pod.metadata.uid not in self.assumed:
            self._add_nominated_pod(qpi.pod_info, node)
        else:
            self._delete_nominated_pod(pod.metadata.uid)

    def _nominated_to_add(self, pi: PodInfo, node: str) -> list[PodInfo]:
        """addNominatedPods: the pods nominated to ``node`` of equal or higher priority, other than ``pi``."""
        pods = self.nominated_pods.get(node)
        if not pods:
            return []
        prio = pod_priority(pi.pod)
        return [p for uid, p in pods.items() if uid != pi.key and pod_priority(p.pod) >= prio]

    def _nominations_matter(self, pi: PodInfo) -> bool:
        """Whether some node has a nominated pod that filtering ``pi`` must take into account."""
        if not self.nominator:
            return False
        prio = pod_priority(pi.pod)
        return any(uid != pi.key and pod_priority(p.pod) >= prio
                   for pods in self.nominated_pods.values() for uid, p in pods.items())

    def run_filters_with_nominated_pods(self, state, pi, ni, fw: Optional[Framework] = None) -> Status:
        """Filter with the nominated pods of equal or higher priority added to the node; if that passes
        and some were added, Filter again without them (pod affinity may need them absent)."""
        fw = fw or self.framework_for(pi.pod)
        extra = self._nominated_to_add(pi, ni.name) if self.nominator else None
        if not extra:
            return fw.run_filters(state, pi, ni)
        with_nominated = ni.snapshot()
        for p in extra:
            with_nominated.add_pod(p)
        st = fw.run_filters(state, pi, with_nominated)
        if not st.is_success():
            return st
        return fw.run_filters(state, pi, ni)

    # --- waiting pods (Handle: IterateOverWaitingPods, GetWaitingPod, RejectWaitingPod) -----------------
    def iterate_over_waiting_pods(self, fn) -> None:
        for wp in self.waiting_pods:
            fn(wp)

    def get_waiting_pod(self, uid: str) -> Optional[WaitingPod]:
        return self.waiting_pods.get(uid)

    def reject_waiting_pod(self, uid: str) -> bool:
        """RejectWaitingPod: reject("", "removed"); whether the pod was waiting."""
        wp = self.waiting_pods.get(uid)
        if wp is None:
            return False
        wp.reject("", MSG_REMOVED)
        return True

    def preempt(self, pi: PodInfo, node: str, victims: list[PodInfo], plugin: str = "DefaultPreemption") -> None:
        """preemption Executor: DisruptionTarget condition, Preempted event, delete; nominate. A victim
        that is a waiting pod is not deleted: it is preempted out of Permit (back to the queue)."""
        for v in victims:
            wp = self.waiting_pods.get(v.pod.metadata.uid)
            if wp is not None and wp.preempt(plugin, MSG_PREEMPTED):
                self.ctx.event(v.pod, NORMAL, "Preempted", f"Preempted by pod {pi.pod.metadata.uid} on node {node}",
                               self.framework_for(pi.pod).scheduler_name)
                continue
            set_condition(v.pod.status.conditions, "DisruptionTarget", "True", self.ctx.now, "PreemptionByScheduler",
                          f"{pi.pod.spec.scheduler_name or self.name}: preempting to accommodate a higher priority pod")
            self.ctx.event(v.pod, NORMAL, "Preempted", f"Preempted by pod {pi.pod.metadata.uid} on node {node}",
                           self.framework_for(pi.pod).scheduler_name)
            self.ctx.trace.add(self.ctx.now, self.name, "preemption.(*Executor).prepareCandidate",
                               f"Pod {v.pod.metadata.namespace}/{v.pod.metadata.name}", "Preempted",
                               preemptor=f"{pi.pod.metadata.namespace}/{pi.pod.metadata.name}", node=node)
            if self.ctx.api.get("Pod", v.pod.metadata.namespace, v.pod.metadata.name) is not None:
                self.ctx.api.delete(v.pod)
        pi.pod.status.nominated_node_name = node

    # --- informers --------------------------------------------------------------------------------------
    def _node_loop(self) -> Generator:
        while True:
            ev = yield self._nodes.get()
            node: Node = ev.obj
            name = node.metadata.name
            if ev.type == DELETED:
                self.nodes.pop(name, None)
                self._node_list = None
                self.table.invalidate()
                continue
            ni = self.nodes.get(name)
            if ni is None:
                self.nodes[name] = NodeInfo(node, on_change=self._node_info_changed)
                self._node_list = None
                self._unschedulable[name] = bool(node.spec.unschedulable)
                self.table.invalidate()
                self._move("Node/Add")
                continue
            old_alloc = dict(ni.allocatable.values)
            old_taints = [(t.key, t.value, t.effect) for t in ni.node.spec.taints]
            was_unschedulable = self._unschedulable.get(name, False)
            self._unschedulable[name] = bool(node.spec.unschedulable)
            ni.set_node(node)
            if ni.allocatable.values != old_alloc:
                self._move("Node/UpdateNodeAllocatable")
            # queue/events.go NodeSpecUnschedulableChange: an uncordon (spec.unschedulable true → false) is an
            # UpdateNodeTaint event, so the pods NodeUnschedulable rejected retry at once
            uncordoned = was_unschedulable and not node.spec.unschedulable
            if uncordoned or old_taints != [(t.key, t.value, t.effect) for t in node.spec.taints]:
                self._move("Node/UpdateNodeTaint")

    def _custom_loop(self, resource: str, watch) -> Generator:
        """eventhandlers.go addAllEventHandlers for a custom resource: every Add/Update (Delete) is a cluster
        event that moves the pods its registered plugins rejected."""
        actions = {ADDED: "Add", MODIFIED: "Update", DELETED: "Delete"}
        while True:
            ev = yield watch.get()
            self._move(f"{resource}/{actions[ev.type]}")

    def _responsible(self, pod: Pod) -> bool:
        return (pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME) in self.frameworks

    def framework_for(self, pod: Pod) -> Framework:
        return self.frameworks[pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME]

    def _pod_loop(self) -> Generator:
        while True:
            ev = yield self._pods.get()
            pod: Pod = ev.obj
            uid = pod.metadata.uid
            terminal = pod.status.phase in ("Succeeded", "Failed")
            if ev.type == DELETED or terminal:
                self._delete_nominated_pod(uid)
                if uid in self.waiting_pods:
                    # deletePodFromSchedulingQueue: the binding cycle unreserves and forgets it
                    self.queue.delete(uid)
                    self.qpis.pop(uid, None)
                    if self.reject_waiting_pod(uid):
                        self._move("Pod/Delete")
                    continue
                node = self.pod_node.pop(uid, None)
                if node is not None and node in self.nodes:
                    self.nodes[node].remove_pod(uid)
                    self.assumed.discard(uid)
                    self._move("Pod/Delete")
                self.queue.delete(uid)
                self.qpis.pop(uid, None)
                continue
            if pod.spec.node_name:
                self._delete_nominated_pod(uid)
                if uid not in self.pod_node and pod.spec.node_name in self.nodes:
                    self.pod_node[uid] = pod.spec.node_name
                    self.nodes[pod.spec.node_name].add_pod(PodInfo(pod))
                self.assumed.discard(uid)
                self.queue.delete(uid)
                continue
            if ev.type == ADDED and self._responsible(pod) and uid not in self.qpis:
                qpi = QueuedPodInfo(PodInfo(pod), self.ctx.now)
                self.qpis[uid] = qpi
                self.queue.add(qpi, self._pre_enqueue)
                if pod.status.nominated_node_name:
                    self._sync_nomination(qpi)
                if self.gang_scheduling_gate:
                    self._move("Pod/Add")
            elif ev.type == MODIFIED:
                # updatePodInSchedulingQueue (assumed pods are skipped): the nominator follows the
                # pod's nomination, and a gated pod runs PreEnqueue again.
                qpi = self.qpis.get(uid)
                if qpi is None or uid in self.assumed:
                    continue
                if pod.status.nominated_node_name or uid in self.nominator:
                    self._sync_nomination(qpi)
                if qpi.gated:
                    self.queue.update(qpi)

    def _pre_enqueue(self, qpi: QueuedPodInfo) -> bool:
        """runPreEnqueuePlugins: the gating plugin also counts among the pod's unschedulable plugins.

        Traced (``(*PriorityQueue).runPreEnqueuePlugins``) when the outcome changes: the pod is gated, or let in
        after being gated, or let in the first time by a profile with PreEnqueue plugins beyond
        :data:`UNTRACED_PRE_ENQUEUE` (e.g. Coscheduling's)."""
        fw = self.framework_for(qpi.pod)
        st = fw.run_pre_enqueue(qpi.pod)
        gated = not st.is_success()
        first = not qpi.pre_enqueue_traced
        if gated != qpi.gated or (first and (gated or set(fw.names["PreEnqueue"]) - UNTRACED_PRE_ENQUEUE)):
            pod = qpi.pod
            self.ctx.trace.add(self.ctx.now, self.name, "queue.(*PriorityQueue).runPreEnqueuePlugins",
                               f"Pod {pod.metadata.namespace}/{pod.metadata.name}",
                               st.message() if gated else "Success", plugins=list(fw.names["PreEnqueue"]),
                               plugin=st.plugin if gated else "")
            qpi.pre_enqueue_traced = True
        if gated:
            qpi.unschedulable_plugins = qpi.unschedulable_plugins | {st.plugin}
        elif qpi.gated:
            qpi.unschedulable_plugins = qpi.unschedulable_plugins - {qpi.gating_plugin}
        qpi.gated = gated
        qpi.gating_plugin = st.plugin if gated else ""
        return not gated

    def _events_of(self, plugin: str) -> set:
        if self._plugin_events is None:
            self._plugin_events = {p.name: getattr(p, "events", set())
                                   for fw in self.frameworks.values() for p in fw.plugins}
        return self._plugin_events.get(plugin, set())

    def _worth_requeuing(self, qpi: QueuedPodInfo, event: str) -> bool:
        """isPodWorthRequeuing, with a registered event standing for a QueueingHint that says Queue. A
        gated pod moves only on an event its gating plugin registered (then PreEnqueue runs again)."""
        if qpi.gated:
            return event in self._events_of(qpi.gating_plugin)
        rejectors = qpi.unschedulable_plugins | qpi.pending_plugins
        return not rejectors or any(event in self._events_of(r) for r in rejectors)

    def _move(self, event: str, exclude: str = "") -> None:
        """MoveAllToActiveOrBackoffQueue: only pods rejected by a plugin that registered ``event`` move.
        Pods waiting on Permit (in flight) remember the event for when they come back."""
        for events in self._inflight.values():
            events.append(event)
        if exclude:
            self.queue.move(event, lambda q, ev: q.pod_info.key != exclude and self._worth_requeuing(q, ev))
        else:
            self.queue.move(event, self._worth_requeuing)

    # --- scheduling cycle ---------------------------------------------------------------------------------
    def _run(self) -> Generator:
        while True:
            qpi = yield from self.queue.pop()
            pod = qpi.pod
            if self.ctx.api.get("Pod", pod.metadata.namespace, pod.metadata.name) is not pod \
                    or pod.spec.node_name or pod.metadata.uid in self.assumed:
                continue
            group = pod.spec.scheduling_group
            if self.generic_workload_enabled and group is not None and group.pod_group_name:
                schedule_one_pod_group(self, pod_group_info_for_pod(self, qpi))
                continue
            self.schedule_one(qpi)

    def schedule_one(self, qpi: QueuedPodInfo) -> None:
        ctx, fw = self.ctx, self.framework_for(qpi.pod)
        pi = qpi.pod_info
        qpi.attempts += 1
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = ctx.now
        qpi.unschedulable_plugins, qpi.pending_plugins = set(), set()   # cleared at Pop
        state = CycleState()
        node, fit_error, attempt = self.schedule_pod(state, pi)
        if node is None:
            if fit_error is None:
                self._fail(qpi, Status(Code.UnschedulableAndUnresolvable, [ERR_NO_NODES_AVAILABLE]),
                           ERR_NO_NODES_AVAILABLE, attempt)
                return
            nominated, msg = self.post_filter(state, fw, pi, fit_error, attempt)
            qpi.unschedulable_plugins = fit_error.diagnosis.unschedulable_plugins
            self._fail(qpi, Status(Code.Unschedulable, [msg]), msg, attempt, nominated)
            return
        st = self.assume_reserve_permit(state, fw, pi, node)
        if not st.is_success() and st.code != Code.Wait:
            self._fail_after_assume(qpi, node, st, attempt)
            return
        ctx.env.process(self._binding_cycle(state, qpi, node, attempt))

    def assume(self, pi: PodInfo, node: str) -> Optional[str]:
        """assume: the pod is on ``node`` in the scheduler's cache and leaves the nominator; returns the
        nomination it had (for a pod group cycle's revert)."""
        uid = pi.key
        nominated = self.nominator.get(uid)
        self.assumed.add(uid)
        self.pod_node[uid] = node
        self.nodes[node].add_pod(pi)
        self._delete_nominated_pod(uid)
        return nominated

    def assume_reserve_permit(self, state: CycleState, fw: Framework, pi: PodInfo, node: str) -> Status:
        """The end of schedulingCycle (schedule_one.go), shared with the pod group cycle's prepareForBindingCycle:
        assume, RunReservePluginsReserve, RunPermitPlugins. A rejection is undone here (Unreserve, forget) and
        returned; a Wait makes the pod a waiting pod. Success or Wait: the caller starts the binding cycle."""
        ctx, pod = self.ctx, pi.pod
        ref = f"Pod {pod.metadata.namespace}/{pod.metadata.name}"
        self.assume(pi, node)
        ctx.trace.add(ctx.now, self.name, "scheduler.(*Scheduler).assume", ref, "Success", node=node)
        st = fw.run_reserve(state, pi, node)
        if st.is_success():
            st = fw.run_permit(state, pi, node)
        if not st.is_success() and st.code != Code.Wait:
            fw.run_unreserve(state, pi, node)
            self._forget(pi, node)
            return st
        if st.code == Code.Wait:
            self._inflight[pod.metadata.uid] = []
            ctx.trace.add(ctx.now, self.name, "runtime.(*frameworkImpl).RunPermitPlugins", ref, st.message(),
                          node=node, plugins=list(fw.names["Permit"]))
        elif fw.names["Permit"]:
            ctx.trace.add(ctx.now, self.name, "runtime.(*frameworkImpl).RunPermitPlugins", ref, "Success",
                          node=node, plugins=list(fw.names["Permit"]))
        return st

    def schedule_pod(self, state: CycleState, pi: PodInfo) -> tuple[Optional[str], Optional[FitError], Attempt]:
        """schedulePod: PreFilter → findNodesThatFitPod → prioritizeNodes → selectHost."""
        ctx, fw = self.ctx, self.framework_for(pi.pod)
        pod = pi.pod
        ref = f"{pod.metadata.namespace}/{pod.metadata.name}"
        attempt = Attempt(ctx.now, ref, None, profile=fw.scheduler_name)
        self.attempts.append(attempt)
        nodes = self._node_list
        if nodes is None:
            nodes = self._node_list = list(self.nodes.values())
        if not nodes:
            return None, None, attempt
        diag = Diagnosis()
        allowed, st, skipped, with_nodes = fw.run_pre_filter(state, pi, nodes)
        state["__prefilter_skipped"] = skipped
        diag.unschedulable_plugins |= with_nodes
        ctx.trace.add(ctx.now, self.name, "runtime.(*frameworkImpl).RunPreFilterPlugins", f"Pod {ref}",
                      "Success" if st.is_success() else st.message(), plugins=list(fw.names["PreFilter"]),
                      plugin=st.plugin or "", skipped=sorted(skipped))
        if not st.is_success():
            for ni in nodes:
                diag.node_to_status[ni.name] = st
            diag.pre_filter_msg = st.message()
            if st.plugin and not with_nodes:
                diag.unschedulable_plugins.add(st.plugin)
            attempt.statuses = {ni.name: f"{st.plugin}: {st.message()}" for ni in nodes}
            return None, FitError(pod, len(nodes), diag), attempt
        # nominated node first (schedule_one.go evaluateNominatedNode)
        feasible: list[NodeInfo] = []
        nominated = pod.status.nominated_node_name
        if nominated and nominated in self.nodes and (allowed is None or nominated in allowed):
            if self.run_filters_with_nominated_pods(state, pi, self.nodes[nominated], fw).is_success():
                feasible = [self.nodes[nominated]]
        n = len(nodes)
        if (not feasible and allowed is None and self.vectorize and n >= self.vectorize_min_nodes
                and not self._nominations_matter(pi)
                and eligible(fw, state, skipped)):
            want = num_feasible_nodes_to_find(n, fw.spec.percentage_of_nodes_to_score or 0)
            return self._schedule_vectorized(state, pi, fw, attempt, want if fw.points["Score"] else 1)
        filters = self.run_filters_with_nominated_pods if self.nominator else None
        if not feasible:
            candidates = nodes
            if allowed is not None:
                # findNodesThatFitPod: only the PreFilterResult's nodes that exist are filtered (in snapshot
                # order here; upstream ranges over a set); the others share one absent-node status.
                candidates = [ni for ni in nodes if ni.name in allowed]
                absent = Status(Code.UnschedulableAndUnresolvable,
                                [f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(with_nodes))}]"],
                                ", ".join(sorted(with_nodes)))
                for ni in nodes:
                    if ni.name not in allowed:
                        diag.node_to_status[ni.name] = absent
            m = len(candidates)
            # findNodesThatPassFilters: the budget and the round-robin start are over the candidates
            want = num_feasible_nodes_to_find(m, fw.spec.percentage_of_nodes_to_score or 0)
            if not fw.points["Score"]:
                want = 1   # no score plugins: the first feasible node is as good as any
            rejected = 0
            for i in range(m):
                ni = candidates[(self.next_start_node_index + i) % m]
                s = filters(state, pi, ni, fw) if filters is not None else fw.run_filters(state, pi, ni)
                if s.is_success():
                    feasible.append(ni)
                    if len(feasible) >= want:
                        break
                else:
                    rejected += 1
                    diag.node_to_status[ni.name] = s
                    diag.unschedulable_plugins.add(s.plugin)
            if m:
                self.next_start_node_index = (self.next_start_node_index + len(feasible) + rejected) % n
        attempt.statuses = {n_: f"{s.plugin}: {s.message()}" for n_, s in diag.node_to_status.items()}
        attempt.feasible = [ni.name for ni in feasible]
        rejected_by: dict[str, int] = {}
        for s_ in diag.node_to_status.values():
            rejected_by[s_.plugin] = rejected_by.get(s_.plugin, 0) + 1
        ctx.trace.add(ctx.now, self.name, "scheduler.(*Scheduler).findNodesThatFitPod", f"Pod {ref}",
                      f"{len(feasible)} feasible", rejected=len(diag.node_to_status),
                      plugins=[n_ for n_ in fw.names["Filter"] if n_ not in skipped], rejected_by=rejected_by)
        if not feasible:
            return None, FitError(pod, len(nodes), diag), attempt
        if len(feasible) == 1:
            attempt.node = feasible[0].name
            return feasible[0].name, None, attempt
        totals, breakdown = fw.run_score(state, pi, feasible)
        attempt.scores = breakdown
        best = max(totals.values())
        top = [ni.name for ni in feasible if totals[ni.name] == best]
        chosen = top[0] if len(top) == 1 else ctx.rng.choice(top)
        ctx.trace.add(ctx.now, self.name, "scheduler.selectHost", f"Pod {ref}", chosen, score=best, ties=len(top),
                      plugins={pl: parts[2] for pl, parts in breakdown[chosen].items()})
        attempt.node = chosen
        return chosen, None, attempt

    def _filter_names(self, fw: Framework, skipped: Optional[set]) -> list[str]:
        """The Filter plugins a cycle ran (PreFilter-skipped ones left out), one shared list per combination:
        every pod's findNodesThatFitPod trace record keeps it."""
        key = (id(fw), frozenset(skipped) if skipped else frozenset())
        names = self._filter_names_cache.get(key)
        if names is None:
            names = self._filter_names_cache[key] = [n for n in fw.names["Filter"] if n not in key[1]]
        return names

    def _schedule_vectorized(self, state: CycleState, pi: PodInfo, fw: Framework, attempt: Attempt, want: int):
        """The same decisions as the per-node path, computed over node arrays (see vectorized.py)."""
        ctx, pod = self.ctx, pi.pod
        ref = f"{pod.metadata.namespace}/{pod.metadata.name}"
        table = self.table
        table.refresh(self.nodes, pi.requests)
        n = len(table.infos)
        res = find_feasible(table, fw, state, pi, self.next_start_node_index, want)
        self.next_start_node_index = (self.next_start_node_index + res.processed) % n
        attempt.statuses = res.statuses
        names = table.names
        feasible_idx = res.feasible
        # the Attempt keeps its lazy views on compact arrays, not on the cycle's Python lists and int64 columns:
        # a 10,000-pod run keeps one Attempt per pod (AttemptLog), and those were most of its memory
        kept = kept_indices(feasible_idx, n, res.consecutive)
        attempt.feasible = lambda: [names[i] for i in kept.tolist()]
        ctx.trace.add(ctx.now, self.name, "scheduler.(*Scheduler).findNodesThatFitPod", f"Pod {ref}",
                      f"{len(res.feasible)} feasible", rejected=res.processed - len(res.feasible),
                      plugins=self._filter_names(fw, state.get("__prefilter_skipped")))
        if len(feasible_idx) == 0:
            diag = Diagnosis(node_to_status=res.statuses())
            diag.unschedulable_plugins = {st.plugin for st in diag.node_to_status.values()}
            attempt.statuses = {k: f"{v.plugin}: {v.message()}" for k, v in diag.node_to_status.items()}
            return None, FitError(pod, n, diag), attempt
        if len(feasible_idx) == 1:
            attempt.node = names[feasible_idx[0]]
            return attempt.node, None, attempt
        infos = _Infos(table.infos, res.feasible)
        skipped = {p.name for p in fw.points["PreScore"] if p.pre_score(state, pi, infos).code == Code.Skip}
        if any(p.name in SCORE_SKIP_ONLY and p.name not in skipped for p in fw.points["Score"]):
            totals_d, breakdown = fw.run_score(state, pi, list(infos))
            attempt.scores = per_node = breakdown
            totals = np.asarray([totals_d[ni.name] for ni in infos], dtype=np.int64)
        else:
            idx = feasible_idx
            totals, parts = vector_score(table, fw, state, pi, idx, skipped)
            per_node = None
            weights = fw.weights
            # every plugin's raw and normalised scores in one compact matrix (one array, not two per plugin); a
            # row that is the same on every node is kept as that number. row_of[plugin] = (raw, normalised), each
            # ("m", row index in the matrix) or ("c", the constant)
            rows: list[np.ndarray] = []
            row_of: dict[str, tuple] = {}
            lo, hi = 0, MAX_NODE_SCORE   # Fit and BalancedAllocation raw scores, and every normalised score
            for pl, (raw, norm) in parts.items():
                kept_pair = []
                for j, arr in enumerate((raw, norm)):
                    if j == 1 and (norm is raw or np.array_equal(norm, raw)):
                        kept_pair.append(kept_pair[0])      # e.g. Fit's scores need no normalising
                        continue
                    a_lo, a_hi = (int(arr.min()), int(arr.max())) if len(arr) else (0, 0)
                    if a_lo == a_hi:
                        kept_pair.append(("c", a_lo))
                    else:
                        lo, hi = min(lo, a_lo), max(hi, a_hi)
                        kept_pair.append(("m", len(rows)))
                        rows.append(arr)
                row_of[pl] = tuple(kept_pair)
            mat = compact(np.vstack(rows), (lo, hi)) if rows else None

            def breakdown() -> dict:
                cols = mat.T.tolist() if mat is not None else None
                out = {}
                for k, i in enumerate(kept.tolist()):
                    entry = {}
                    for pl, ((rk, rv), (nk, nv)) in row_of.items():
                        r = cols[k][rv] if rk == "m" else rv
                        q = cols[k][nv] if nk == "m" else nv
                        entry[pl] = (r, q, q * weights[pl])
                    out[names[i]] = entry
                return out
            attempt.scores = breakdown
        best = int(totals.max())
        ties = np.flatnonzero(totals == best)
        # the same draw as rng.choice(list of tied names) in the per-node path
        k = int(ties[0]) if len(ties) == 1 else int(ties[ctx.rng.choice(range(len(ties)))])
        chosen = names[feasible_idx[k]]
        # the weighted score of each plugin on the chosen node (never through the Attempt's lazy breakdown)
        if per_node is not None:
            chosen_scores = {pl: v[2] for pl, v in per_node[chosen].items()}
        else:
            chosen_scores = {pl: int(norm[k]) * fw.weights[pl] for pl, (_raw, norm) in parts.items()}
        ctx.trace.add(ctx.now, self.name, "scheduler.selectHost", f"Pod {ref}", chosen, score=int(best), ties=len(ties),
                      plugins=chosen_scores)
        attempt.node = chosen
        return chosen, None, attempt

    def post_filter(self, state: CycleState, fw: Framework, pi: PodInfo, fit_error: FitError, attempt: Attempt,
                    run: bool = True) -> tuple[Optional[str], str]:
        """schedulingAlgorithm after a FitError: RunPostFilterPlugins (unless ``run`` is False: the pod group
        cycle's RunWithoutPostFilters), their message in the diagnosis, the attempt's message and the
        schedulePod trace record. Returns the nominated node (or None) and the FitError's message."""
        nominated, pst = None, None
        if run and fw.points["PostFilter"]:
            nominated, pst = fw.run_post_filter(state, pi, fit_error.diagnosis.node_to_status)
            if pst.reasons and not pst.is_success():
                fit_error.diagnosis.post_filter_msg = pst.message()
        msg = fit_error.error()
        attempt.message = msg
        pod = pi.pod
        # RunPostFilterPlugins ran inside schedulingCycle: its plugins, the deciding one and its outcome
        self.ctx.trace.add(self.ctx.now, self.name, "scheduler.(*Scheduler).schedulePod",
                           f"Pod {pod.metadata.namespace}/{pod.metadata.name}", msg,
                           post_filter=list(fw.names["PostFilter"]), post_filter_plugin=pst.plugin if pst else "",
                           post_filter_result=(pst.message() or ("Success" if pst.is_success() else ""))
                           if pst else "", nominated=nominated or "")
        return nominated, msg

    def _forget(self, pi: PodInfo, node: str) -> None:
        self.assumed.discard(pi.key)
        self.pod_node.pop(pi.key, None)
        if node in self.nodes:
            self.nodes[node].remove_pod(pi.key)

    def _fail_after_assume(self, qpi: QueuedPodInfo, node: str, st: Status, attempt: Attempt,
                           inflight: Optional[tuple] = None) -> None:
        """A Reserve or Permit rejection (or, ``inflight`` given, a rejection while waiting on Permit)
        is a FitError over the one node the pod was assumed on: "0/1 nodes are available: 1 <reason>.";
        other failures keep their message. Either way the nomination is cleared (clearNominatedNode)."""
        if st.is_rejected():
            diag = Diagnosis(node_to_status={node: st})
            if inflight is not None:                    # bindingCycle: UnschedulablePlugins = {plugin}
                diag.unschedulable_plugins.add(st.plugin)
            elif st.plugin:                             # schedulingCycle: Diagnosis.AddPluginStatus
                diag.unschedulable_plugins.add(st.plugin)
                if st.code == Code.Pending:
                    diag.pending_plugins.add(st.plugin)
            qpi.unschedulable_plugins, qpi.pending_plugins = diag.unschedulable_plugins, diag.pending_plugins
            msg = FitError(qpi.pod, 1, diag).error()
            self._fail(qpi, Status(st.code, [msg], st.plugin), msg, attempt, clear_nomination=True,
                       inflight=inflight or ())
        else:
            self._fail(qpi, st, st.message(), attempt, clear_nomination=True, inflight=inflight or ())

    def _fail(self, qpi: QueuedPodInfo, st: Status, message: str, attempt: Attempt,
              nominated: Optional[str] = None, clear_nomination: bool = False, inflight: tuple = (),
              queue_after_backoff: bool = False) -> None:
        """handleSchedulingFailure: Warning FailedScheduling, PodScheduled=False, nomination, requeue.
        ``inflight``: cluster events seen while the pod waited on Permit; one its rejecting plugins
        registered sends it to backoffQ/activeQ instead of unschedulablePods; so does ``queue_after_backoff``
        (a pod group's pod with no rejecting plugin: determineSchedulingHintForInFlightPod → queueAfterBackoff)."""
        ctx = self.ctx
        pod = qpi.pod
        if len(message) > MAX_MESSAGE:
            message = message[:MAX_MESSAGE - 4] + " ..."
        attempt.message = message
        error = st.code == Code.Error
        if not error:
            qpi.unschedulable_count += 1
            if qpi.unschedulable_plugins or qpi.pending_plugins:
                qpi.consecutive_errors = 0
        else:
            qpi.consecutive_errors += 1
        ctx.event(pod, WARNING, "FailedScheduling", message, self.framework_for(pod).scheduler_name)
        set_condition(pod.status.conditions, "PodScheduled", "False", ctx.now,
                      "SchedulerError" if error else "Unschedulable", message)
        if clear_nomination:
            pod.status.nominated_node_name = ""
        if nominated:
            pod.status.nominated_node_name = nominated
        if ctx.api.get("Pod", pod.metadata.namespace, pod.metadata.name) is pod:
            ctx.api.update(pod)
            requeue = (error or bool(nominated) or queue_after_backoff
                       or any(self._worth_requeuing(qpi, ev) for ev in inflight))
            self.queue.add_unschedulable(qpi, error=requeue)
            self._sync_nomination(qpi)

    # --- binding cycle -------------------------------------------------------------------------------------
    def _binding_cycle(self, state: CycleState, qpi: QueuedPodInfo, node: str,
                       attempt: Optional[Attempt] = None) -> Generator:
        ctx, fw = self.ctx, self.framework_for(qpi.pod)
        pi, pod = qpi.pod_info, qpi.pod
        uid = pod.metadata.uid
        ref = f"Pod {pod.metadata.namespace}/{pod.metadata.name}"
        attempt = attempt or self.attempts[-1]
        yield ctx.env.timeout(0)
        if fw.will_wait_on_permit(pod):
            if self.k8s_version >= (1, 35) and ctx.api.get("Pod", pod.metadata.namespace, pod.metadata.name) is pod:
                # NominatedNodeNameForExpectation: tell others where the pod is about to go
                pod.status.nominated_node_name = node
                ctx.api.update(pod)
            st = yield from fw.wait_on_permit(pod)
            inflight = tuple(self._inflight.pop(uid, ()))
            ctx.trace.add(ctx.now, self.name, "runtime.(*frameworkImpl).WaitOnPermit", ref,
                          "Success" if st.is_success() else st.message(), node=node, plugin=st.plugin or "")
            if not st.is_success():
                fw.run_unreserve(state, pi, node)
                self._forget(pi, node)
                self._fail_after_assume(qpi, node, st, attempt, inflight)
                self._move("Pod/Delete", exclude=uid)      # the forgotten pod freed its resources
                return
        if ctx.api.get("Pod", pod.metadata.namespace, pod.metadata.name) is not pod:
            self._forget(pi, node)
            return
        set_condition(pod.status.conditions, "PodScheduled", "True", ctx.now)
        pod.status.nominated_node_name = ""
        st = fw.run_pre_bind(state, pi, node)
        if st.is_success():
            st = fw.run_bind(state, pi, node)
        if not st.is_success():
            fw.run_unreserve(state, pi, node)
            self._forget(pi, node)
            self._fail(qpi, Status(Code.Error, [st.message()]), st.message(), attempt, clear_nomination=True)
            self._move("Pod/Delete", exclude=uid)
            return
        ctx.trace.add(ctx.now, self.name, "defaultbinder.(*DefaultBinder).Bind", ref, "Success", node=node)
        ctx.event(pod, NORMAL, "Scheduled", f"Successfully assigned {pod.metadata.namespace}/{pod.metadata.name} "
                  f"to {node}", fw.scheduler_name)
        fw.run_post_bind(state, pi, node)
        self.qpis.pop(pod.metadata.uid, None)
