"""A kube-scheduler framework over the session's nodes (mirrors volcano-sh/volcano
pkg/scheduler/plugins/util/k8s: the framework handle and snapshot through which Volcano's predicates and
nodeorder plugins call the upstream kube-scheduler Filter and Score plugins). gpusim reuses its own
kube-scheduler plugins (gpusim.scheduler.plugins) the same way: same code, same reason strings."""
from __future__ import annotations

from typing import Any, Optional

from ..scheduler.framework import CycleState, PodInfo, Status
from ..scheduler.profile import ProfileSpec
from ..scheduler.runtime import Framework


class Handle:
    """framework.Handle, reduced to what the wrapped plugins read: the session's kube NodeInfos."""

    def __init__(self, ctx: Any):
        self.ctx = ctx
        self.api = ctx.api
        self.nodes: dict[str, Any] = {}

    def node_infos(self) -> list:
        return list(self.nodes.values())

    def nodes_with_affinity_pods(self) -> list:
        return [ni for ni in self.nodes.values() if ni.affinity_pods]


def framework(ctx: Any, name: str, filters: list[str], scores: dict[str, int],
              args: Optional[dict] = None, pre_filters: Optional[list[str]] = None) -> tuple[Framework, Handle]:
    """A profile running ``filters`` and ``scores`` (plugin → weight); the PreFilters run are those of
    ``pre_filters`` (default: every filter that has one)."""
    from ..scheduler.registry import in_tree_registry
    reg = in_tree_registry()
    probes = {n: reg[n](None, None) for n in [*filters, *scores]}
    points = {
        "QueueSort": ["PrioritySort"],
        "PreFilter": [n for n in (filters if pre_filters is None else pre_filters) if hasattr(probes[n], "pre_filter")],
        "Filter": list(filters),
        "PreScore": [n for n in scores if hasattr(probes[n], "pre_score")],
        "Score": list(scores),
        "Bind": ["DefaultBinder"],
    }
    handle = Handle(ctx)
    spec = ProfileSpec(name, points, {n: w for n, w in scores.items()}, dict(args or {}))
    return Framework(spec, handle), handle


class PodState:
    """Per task: its PodInfo and the CycleState its PreFilter/PreScore wrote (one per task per session)."""

    def __init__(self, pod: Any):
        self.pi = PodInfo(pod)
        self.state = CycleState()
        self.pre_filter: Optional[tuple] = None


def pre_filter(fw: Framework, ps: PodState, nodes: list) -> tuple[Optional[set], Status]:
    if ps.pre_filter is None:
        allowed, st, skipped, _ = fw.run_pre_filter(ps.state, ps.pi, nodes)
        ps.state["__prefilter_skipped"] = skipped
        ps.pre_filter = (allowed, st)
    return ps.pre_filter
