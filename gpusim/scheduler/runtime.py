"""A profile's framework instance (mirrors pkg/scheduler/framework/runtime/framework.go):
plugins grouped by extension point, run in configured order with upstream's rules; and the waiting
pods of the Permit extension point (framework/runtime/waiting_pods_map.go)."""
from __future__ import annotations

from typing import Any, Callable, Generator, Iterator, Optional

from ..api.duration import format_duration
from .framework import MAX_NODE_SCORE, Code, CycleState, NodeInfo, PodInfo, QueuedPodInfo, Status
from .registry import Registry, in_tree_registry

MAX_PERMIT_TIMEOUT = 15 * 60.0     # framework.go maxTimeout: a Permit Wait is capped at 15 minutes
MSG_PERMIT_WAIT = 'one or more plugins asked to wait and no plugin rejected pod "{}"'
MSG_PERMIT_TIMEOUT = "rejected due to timeout after waiting {} at plugin {}"
MSG_REMOVED = "removed"            # RejectWaitingPod: the pod was deleted while waiting
MSG_PREEMPTED = "preempted"        # a preemptor chose the waiting pod as a victim


class _Timer:
    """time.AfterFunc on the simulation clock. simpy cannot cancel a timeout, so a stopped timer is
    counted as housekeeping (Context.daemon_pending) until it fires: it must not keep a run alive."""

    __slots__ = ("ctx", "fn", "fired", "stopped")

    def __init__(self, ctx: Any, delay: float, fn: Callable[[], None]):
        self.ctx, self.fn = ctx, fn
        self.fired = self.stopped = False
        ctx.env.timeout(max(delay, 0.0)).callbacks.append(self._fire)

    def _fire(self, _event: Any) -> None:
        self.fired = True
        if self.stopped:
            self.ctx.daemon_pending[0] -= 1
            return
        self.fn()

    def stop(self) -> None:
        if not self.fired and not self.stopped:
            self.stopped = True
            self.ctx.daemon_pending[0] += 1


class WaitingPod:
    """fwk.WaitingPod: a pod that passed the scheduling cycle but that one or more Permit plugins asked
    to wait, each for at most its own timeout. ``allow(plugin)`` removes one pending plugin and lets the
    pod bind once none is left; ``reject(plugin, msg)`` fails it as Unschedulable; ``preempt(plugin,
    msg)`` fails it as an Error (back to the backoff queue); a plugin's timer firing rejects it with
    "rejected due to timeout after waiting <timeout> at plugin <plugin>". The first outcome wins
    (upstream sends on a channel of size 1 without blocking); later calls return False."""

    def __init__(self, ctx: Any, pod: Any, plugins_wait: dict[str, float]):
        self.pod = pod
        self.signal = ctx.env.event()        # succeeds with the outcome's Status
        self.pending: dict[str, _Timer] = {}
        for plugin, wait in plugins_wait.items():
            msg = MSG_PERMIT_TIMEOUT.format(format_duration(wait), plugin)
            self.pending[plugin] = _Timer(ctx, wait, lambda p=plugin, m=msg: self.reject(p, m))

    def get_pod(self) -> Any:
        return self.pod

    def get_pending_plugins(self) -> list[str]:
        return list(self.pending)

    def _send(self, st: Status) -> bool:
        if self.signal.triggered:
            return False
        self.signal.succeed(st)
        return True

    def allow(self, plugin: str) -> None:
        timer = self.pending.pop(plugin, None)
        if timer is not None:
            timer.stop()
        if not self.pending:
            self._send(Status())

    def _stop_all(self) -> None:
        for timer in self.pending.values():
            timer.stop()

    def reject(self, plugin: str, msg: str) -> bool:
        self._stop_all()
        return self._send(Status(Code.Unschedulable, [msg], plugin))

    def preempt(self, plugin: str, msg: str) -> bool:
        self._stop_all()
        return self._send(Status(Code.Error, [msg], plugin))


class WaitingPodsMap:
    """waitingPodsMap, shared by every profile of one scheduler (keyed by pod uid)."""

    def __init__(self, ctx: Any = None):
        self.ctx = ctx
        self.pods: dict[str, WaitingPod] = {}

    def __len__(self) -> int:
        return len(self.pods)

    def __contains__(self, uid: str) -> bool:
        return uid in self.pods

    def __iter__(self) -> Iterator[WaitingPod]:
        return iter(list(self.pods.values()))

    def add(self, wp: WaitingPod) -> None:
        self.pods[wp.pod.metadata.uid] = wp

    def remove(self, uid: str) -> None:
        self.pods.pop(uid, None)

    def get(self, uid: str) -> Optional[WaitingPod]:
        return self.pods.get(uid)

POINT_METHODS = {"PreEnqueue": "pre_enqueue", "QueueSort": "less", "PreFilter": "pre_filter",
                 "Filter": "filter", "PostFilter": "post_filter", "PreScore": "pre_score", "Score": "score",
                 "Reserve": "reserve", "Permit": "permit", "PreBind": "pre_bind", "Bind": "bind",
                 "PostBind": "post_bind"}


class Framework:
    """One profile: plugin instances (one per name, shared by the points it serves), in order."""

    def __init__(self, spec: Any, handle: Any, registry: Optional[Registry] = None,
                 waiting_pods: Optional[WaitingPodsMap] = None):
        self.spec = spec
        self.handle = handle
        self.waiting_pods = waiting_pods if waiting_pods is not None else WaitingPodsMap(getattr(handle, "ctx", None))
        self.scheduler_name = spec.scheduler_name
        registry = registry or in_tree_registry()
        names = list(dict.fromkeys(n for pt in POINT_METHODS for n in spec.points.get(pt, ())))
        by_name = {n: registry[n](spec.args.get(n), handle) for n in names}
        self.plugins = list(by_name.values())
        self.weights: dict[str, int] = {n: spec.weights.get(n, 1) for n in names}
        self.points = {pt: [by_name[n] for n in spec.points.get(pt, ())] for pt in POINT_METHODS}
        # the plugin names per extension point, in order (what the trace records name at each point)
        self.names: dict[str, tuple[str, ...]] = {pt: tuple(p.name for p in ps) for pt, ps in self.points.items()}
        if len(self.points["QueueSort"]) != 1:
            raise ValueError("only one QueueSort plugin may be enabled per profile")

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return self.points["QueueSort"][0].less(a, b)

    def run_pre_enqueue(self, pod) -> Status:
        for p in self.points["PreEnqueue"]:
            st = p.pre_enqueue(pod)
            if not st.is_success():
                return st.with_plugin(p.name)
        return Status()

    def run_pre_filter(self, state: CycleState, pi: PodInfo, nodes: list[NodeInfo]):
        """RunPreFilterPlugins (framework/runtime/framework.go): ``(allowed, status, skipped, with_nodes)``.

        Skip marks the plugin (its Filter is skipped too). UnschedulableAndUnresolvable stops at once;
        Unschedulable is kept and the remaining plugins still run (kubernetes#119770), so preemption can
        follow. A plugin's PreFilterResult (node names) is intersected with the others'; ``with_nodes`` are the
        plugins that narrowed the nodes, and an empty intersection is UnschedulableAndUnresolvable."""
        allowed: Optional[set[str]] = None
        skipped: set[str] = set()
        with_nodes: set[str] = set()
        result = Status()
        for p in self.points["PreFilter"]:
            names, st = p.pre_filter(state, pi, nodes)
            if st.code == Code.Skip:
                skipped.add(p.name)
                continue
            if not st.is_success():
                st.with_plugin(p.name)
                if st.code == Code.Unschedulable:
                    result = st
                    continue
                return None, st, skipped, set()
            if names is None:
                continue
            with_nodes.add(p.name)
            allowed = set(names) if allowed is None else allowed & names
            if not allowed:
                plugins = sorted(with_nodes)
                msg = (f"node(s) didn't satisfy plugin {plugins[0]}" if len(plugins) == 1 else
                       f"node(s) didn't satisfy plugin(s) [{' '.join(plugins)}] simultaneously")
                st = Status(Code.UnschedulableAndUnresolvable, [msg], ", ".join(plugins))
                return allowed, st, skipped, with_nodes
        return allowed, result, skipped, with_nodes

    def run_filters(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> Status:
        skipped = state.get("__prefilter_skipped", set())
        for p in self.points["Filter"]:
            if p.name in skipped:
                continue
            st = p.filter(state, pi, ni)
            if not st.is_success():
                return st.with_plugin(p.name)
        return Status()

    def run_post_filter(self, state: CycleState, pi: PodInfo, statuses: dict[str, Status]):
        """RunPostFilterPlugins (framework/runtime/framework.go): the first Success or
        UnschedulableAndUnresolvable ends it, an Error ends it as an error; otherwise every plugin runs and the
        result is Unschedulable with all their reasons in order (joined by ", " in the FailedScheduling
        message: "no new claims to deallocate, preemption: …"), the first rejecting plugin named."""
        reasons: list[str] = []
        rejector = ""
        for p in self.points["PostFilter"]:
            nominated, st = p.post_filter(state, pi, statuses)
            if st.is_success() or st.code == Code.UnschedulableAndUnresolvable:
                return nominated, st.with_plugin(p.name)
            if not st.is_rejected():
                return None, Status(Code.Error, list(st.reasons)).with_plugin(p.name)
            reasons += st.reasons
            rejector = rejector or p.name
        return None, Status(Code.Unschedulable, reasons).with_plugin(rejector)

    def run_score(self, state: CycleState, pi: PodInfo, nodes: list[NodeInfo]) -> tuple[dict[str, int], dict]:
        """PreScore, Score, NormalizeScore, weights → total per node, and the per-plugin breakdown."""
        skipped = set()
        for p in self.points["PreScore"]:
            if p.pre_score(state, pi, nodes).code == Code.Skip:
                skipped.add(p.name)
        scorers = [p for p in self.points["Score"] if p.name not in skipped]
        totals = {ni.name: 0 for ni in nodes}
        breakdown: dict[str, dict[str, tuple[int, int, int]]] = {ni.name: {} for ni in nodes}
        for p in scorers:
            raw = {ni.name: p.score(state, pi, ni) for ni in nodes}
            norm = p.normalize(state, pi, raw) if hasattr(p, "normalize") else raw
            w = self.weights[p.name]
            for n in totals:
                if not 0 <= norm[n] <= MAX_NODE_SCORE:
                    raise ValueError(f'plugin "{p.name}" returns an invalid score {norm[n]}, '
                                     f"it should in the range of [0, {MAX_NODE_SCORE}] after normalizing")
                totals[n] += norm[n] * w
                breakdown[n][p.name] = (raw[n], norm[n], norm[n] * w)
        return totals, breakdown

    def run_reserve(self, state, pi, node) -> Status:
        for p in self.points["Reserve"]:
            st = p.reserve(state, pi, node)
            if not st.is_success():
                return st.with_plugin(p.name)
        return Status()

    def run_unreserve(self, state, pi, node) -> None:
        for p in reversed(self.points["Reserve"]):
            p.unreserve(state, pi, node)

    def run_permit(self, state, pi, node) -> Status:
        """RunPermitPlugins: the first rejection wins; a Wait (timeout capped at 15 minutes) from any
        plugin makes the pod a waiting pod, and the status is Wait; any other status is an error."""
        plugins_wait: dict[str, float] = {}
        for p in self.points["Permit"]:
            st, timeout = p.permit(state, pi, node)
            if st is None or st.is_success():
                continue
            if st.is_rejected():
                return st.with_plugin(p.name)
            if st.code == Code.Wait:
                plugins_wait[p.name] = min(float(timeout or 0.0), MAX_PERMIT_TIMEOUT)
                continue
            return Status(Code.Error, [f'running Permit plugin "{p.name}": {st.message()}']).with_plugin(p.name)
        if plugins_wait:
            # in a pod group scheduling cycle (schedule_one_podgroup.go) Permit is only a check: no waiting pod
            if "__pod_group_cycle" not in state:
                self.waiting_pods.add(WaitingPod(self.waiting_pods.ctx, pi.pod, plugins_wait))
            return Status(Code.Wait, [MSG_PERMIT_WAIT.format(pi.pod.metadata.name)])
        return Status()

    def will_wait_on_permit(self, pod) -> bool:
        return pod.metadata.uid in self.waiting_pods

    def wait_on_permit(self, pod) -> Generator:
        """WaitOnPermit (a simpy sub-process): blocks until the waiting pod is allowed, rejected, preempted
        or timed out. Rejections come back as they are; anything else that is not a success is an error."""
        wp = self.waiting_pods.get(pod.metadata.uid)
        if wp is None:
            return Status()
        try:
            st = yield wp.signal
        finally:
            self.waiting_pods.remove(pod.metadata.uid)
        if st.is_success() or st.is_rejected():
            return st
        return Status(Code.Error, [f"waiting on permit for pod: {st.message()}"], st.plugin)

    def run_pre_bind(self, state, pi, node) -> Status:
        for p in self.points["PreBind"]:
            st = p.pre_bind(state, pi, node)
            if not st.is_success() and st.code != Code.Skip:
                return st.with_plugin(p.name)
        return Status()

    def run_post_bind(self, state, pi, node) -> None:
        for p in self.points["PostBind"]:
            p.post_bind(state, pi, node)

    def run_bind(self, state, pi, node) -> Status:
        for p in self.points["Bind"]:
            st = p.bind(state, pi, node)
            if st.code != Code.Skip:
                return st.with_plugin(p.name)
        return Status(Code.Skip)
