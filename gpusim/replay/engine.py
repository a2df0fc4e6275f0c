"""One scheduling attempt per pod, as the FGD simulator drives kube-scheduler (mirrors
hkust-adsl/kubernetes-scheduler-simulator pkg/simulator/simulator.go ``SchedulePods``/``assumePod`` over
kubernetes pkg/scheduler/schedule_one.go ``schedulePod``, ``findNodesThatFitPod``, ``prioritizeNodes``,
``selectHost``).

The simulator creates each pod, lets the real scheduler try it once, and deletes it if it stayed
unschedulable: no queue, no retry, no preemption, no time. Its kubernetes is a fork
(``k8s.io/kubernetes => github.com/mental2008/kubernetes v1.20.5-minor``) whose ``selectHost`` breaks
ties by the *smallest node name* "for reproducibility" instead of kube-scheduler's uniform reservoir
draw; the simulator prefixes node names with a random permutation (``%04d-``), so ties go to a fixed,
seed-dependent node order. ``tie_break="name"`` (the default here) does the same; ``"random"`` draws
uniformly among the best, as kube-scheduler (and gpusim's Scheduler) do. ``OneShotScheduler`` runs the same cycle
through gpusim's scheduler framework — a profile from a KubeSchedulerConfiguration, plugins from the
registry, NodeInfos of v1 Nodes — and binds by setting ``spec.nodeName`` (the simulator's ``Simon``
bind plugin). With ``vectorize`` (the default) the Filter and Score steps of NodeResourcesFit,
Open-Gpu-Share and the six FGD-study policies run over node arrays (gpusim.scheduler.vectorized_gpushare)
with the same results; anything else takes the per-node path.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from ..api.core_v1 import Node, Pod
from ..api.kubescheduler_config_v1 import KubeSchedulerConfiguration
from ..scheduler.framework import CycleState, NodeInfo, PodInfo
from ..scheduler.frag import TargetPod
from ..scheduler.profile import build_profiles
from ..scheduler.registry import in_tree_registry
from ..scheduler.runtime import Framework
from ..scheduler.scheduler import num_feasible_nodes_to_find
from ..scheduler import vectorized_gpushare as vec


TIE_BY_NAME, TIE_RANDOM = "name", "random"
TIE_BREAKS = (TIE_BY_NAME, TIE_RANDOM)


class _Ctx:
    """The part of the simulation context plugins read: the seeded RNG."""

    def __init__(self, rng: random.Random):
        self.rng = rng


class Handle:
    """framework.Handle for the replay: the seeded RNG (``ctx.rng``), the NodeInfos by name and the target
    workload (``typical_pods``, what the simulator hands its plugins). There is no apiserver."""

    k8s_version = (1, 36)
    api = None

    def __init__(self, rng: random.Random, nodes: dict[str, NodeInfo], typical: Sequence[TargetPod]):
        self.ctx = _Ctx(rng)
        self.nodes = nodes
        self.typical_pods = list(typical)

    def node_infos(self) -> list[NodeInfo]:
        return list(self.nodes.values())


@dataclass
class Attempt:
    """What one attempt decided: the node (None when the pod was dropped), the feasible nodes in search
    order and their total scores (empty when at most one node was feasible)."""

    node: Optional[str]
    feasible: list[str]
    scores: dict[str, int]
    vectorized: bool


class OneShotScheduler:
    def __init__(self, nodes: Sequence[Node], config: KubeSchedulerConfiguration, typical: Sequence[TargetPod],
                 rng: random.Random, vectorize: bool = True, keep_attempts: bool = False,
                 tie_break: str = TIE_BY_NAME):
        if tie_break not in TIE_BREAKS:
            raise ValueError(f"tie_break: Unsupported value: {tie_break!r}: supported values: {TIE_BREAKS}")
        specs, _ = build_profiles(config, in_tree_registry())
        self.tie_break = tie_break
        self.rng = rng
        self.nodes: dict[str, NodeInfo] = {}
        for node in nodes:
            self.nodes[node.metadata.name] = NodeInfo(node)
        self.handle = Handle(rng, self.nodes, typical)
        self.fw = Framework(specs[0], self.handle)
        self.infos = list(self.nodes.values())
        self.table = vec.GpuShareTable(self.infos, typical)
        for ni in self.infos:
            ni.on_change = self.table.mark
        order = sorted(range(len(self.infos)), key=lambda i: self.infos[i].name)
        self.name_rank = np.empty(len(self.infos), np.int64)
        self.name_rank[order] = np.arange(len(self.infos))
        self.vectorize = vectorize
        self.keep_attempts = keep_attempts
        self.next_start_node_index = 0
        self.attempts: list[Attempt] = []

    def schedule(self, pod: Pod) -> Optional[str]:
        """One attempt: the chosen node (the pod is bound there), or None (the pod is dropped)."""
        fw, pi, state = self.fw, PodInfo(pod), CycleState()
        infos = self.infos
        n = len(infos)
        allowed, st, skipped, _ = fw.run_pre_filter(state, pi, infos)
        state["__prefilter_skipped"] = skipped
        if not st.is_success() or not n:
            return self._record(None, [], {}, False)
        want = num_feasible_nodes_to_find(n, fw.spec.percentage_of_nodes_to_score or 0)
        if not fw.points["Score"]:
            want = 1
        self.table.refresh()
        use_vec = self.vectorize and allowed is None and vec.eligible(fw, pi, skipped, self.table)
        if use_vec:
            feasible, processed = vec.find_feasible(self.table, fw, pi, self.next_start_node_index, want)
        else:
            feasible, processed = [], 0
            for k in range(n):
                i = (self.next_start_node_index + k) % n
                processed += 1
                if allowed is not None and infos[i].name not in allowed:
                    continue
                if fw.run_filters(state, pi, infos[i]).is_success():
                    feasible.append(i)
                    if len(feasible) >= want:
                        break
        self.next_start_node_index = (self.next_start_node_index + processed) % n
        if not feasible:
            return self._record(None, [], {}, use_vec)
        scores: dict[str, int] = {}
        if len(feasible) == 1:
            chosen = feasible[0]
        else:
            if use_vec:
                totals = vec.score(self.table, fw, state, pi, feasible)
            else:
                by_name, _ = fw.run_score(state, pi, [infos[i] for i in feasible])
                totals = np.asarray([by_name[infos[i].name] for i in feasible], np.int64)
            best = int(totals.max())
            ties = np.flatnonzero(totals == best)
            if len(ties) == 1:
                k = int(ties[0])
            elif self.tie_break == TIE_BY_NAME:          # the fork's selectHost: the smallest name
                k = int(ties[np.argmin(self.name_rank[np.asarray(feasible)[ties]])])
            else:                                        # kube-scheduler: a uniform draw among the best
                k = int(ties[self.rng.choice(range(len(ties)))])
            chosen = feasible[k]
            if self.keep_attempts:
                scores = {infos[i].name: int(t) for i, t in zip(feasible, totals)}
        ni = infos[chosen]
        ni.add_pod(pi)                                     # assume
        st = fw.run_reserve(state, pi, ni.name)
        if not st.is_success():
            fw.run_unreserve(state, pi, ni.name)
            ni.remove_pod(pi.key)
            return self._record(None, feasible, scores, use_vec)
        pod.spec.node_name = ni.name                       # bind (the simulator's Simon plugin)
        self.table.mark(ni)                                # Reserve wrote the pod's GPUs
        return self._record(ni.name, feasible, scores, use_vec)

    def _record(self, node: Optional[str], feasible: list[int], scores: dict[str, int], vectorized: bool):
        if self.keep_attempts:
            self.attempts.append(Attempt(node, [self.infos[i].name for i in feasible], scores, vectorized))
        return node
