"""A profile's framework instance (mirrors pkg/scheduler/framework/runtime/framework.go):
plugins grouped by extension point, run in configured order with upstream's rules."""
from __future__ import annotations

from typing import Any, Optional

from .framework import MAX_NODE_SCORE, Code, CycleState, NodeInfo, PodInfo, QueuedPodInfo, Status
from .registry import Registry, in_tree_registry

POINT_METHODS = {"PreEnqueue": "pre_enqueue", "QueueSort": "less", "PreFilter": "pre_filter",
                 "Filter": "filter", "PostFilter": "post_filter", "PreScore": "pre_score", "Score": "score",
                 "Reserve": "reserve", "Permit": "permit", "PreBind": "pre_bind", "Bind": "bind",
                 "PostBind": "post_bind"}


class Framework:
    """One profile: plugin instances (one per name, shared by the points it serves), in order."""

    def __init__(self, spec: Any, handle: Any, registry: Optional[Registry] = None):
        self.spec = spec
        self.scheduler_name = spec.scheduler_name
        registry = registry or in_tree_registry()
        names = list(dict.fromkeys(n for pt in POINT_METHODS for n in spec.points.get(pt, ())))
        by_name = {n: registry[n](spec.args.get(n), handle) for n in names}
        self.plugins = list(by_name.values())
        self.weights: dict[str, int] = {n: spec.weights.get(n, 1) for n in names}
        self.points = {pt: [by_name[n] for n in spec.points.get(pt, ())] for pt in POINT_METHODS}
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
        allowed: Optional[set[str]] = None
        skipped = set()
        for p in self.points["PreFilter"]:
            names, st = p.pre_filter(state, pi, nodes)
            if st.code == Code.Skip:
                skipped.add(p.name)
                continue
            if not st.is_success():
                return None, st.with_plugin(p.name), skipped
            if names is not None:
                allowed = names if allowed is None else allowed & names
        return allowed, Status(), skipped

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
        reasons = []
        for p in self.points["PostFilter"]:
            nominated, st = p.post_filter(state, pi, statuses)
            if st.is_success() or st.code == Code.UnschedulableAndUnresolvable:
                return nominated, st.with_plugin(p.name)
            reasons += st.reasons
        return None, Status(Code.Unschedulable, reasons)

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
        """RunPermitPlugins. Wait (a waiting pod, capped at 15 minutes) arrives with the Coscheduling
        issue; until then a Wait from a plugin is reported as an error rather than ignored."""
        for p in self.points["Permit"]:
            st, _timeout = p.permit(state, pi, node)
            if st.code == Code.Wait:
                return Status(Code.Error, [f"plugin {p.name} asked to wait: waiting pods are not supported yet"]).with_plugin(p.name)
            if not st.is_success():
                return st.with_plugin(p.name)
        return Status()

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
