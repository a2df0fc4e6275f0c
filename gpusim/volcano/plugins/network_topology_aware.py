"""network-topology-aware (mirrors volcano-sh/volcano
pkg/scheduler/plugins/network-topology-aware/network_topology_aware.go): keep a job inside one HyperNode (a
switch's domain) and pack HyperNodes.

Three callbacks, all scores × ``100 × weight``:

- **HyperNode gradient** (jobs whose ``networkTopology`` is hard with a tier boundary): a breadth-first walk from
  the search root (the cluster top; for a job already partly placed, the highest ancestor of its allocated
  HyperNode within the boundary) keeping HyperNodes of tier ≤ ``highestTierAllowed`` (or at or below the
  HyperNode whose ``tierName`` is ``highestTierName``) whose idle or future-idle resources cover the job's
  ``minResources`` (not checked once the job has an allocated HyperNode), grouped by tier ascending, names sorted.
  allocate tries the lowest tier first and moves up only when no HyperNode of a tier can hold the gang.
- **HyperNode order**: the HyperNode's bin-packing score, the weighted mean over the resources the job requests
  of (used + Σ requests of the job's tasks) / allocatable (0 if one would overflow); ties at the top add the
  share of the job's tasks already inside the HyperNode.
- **node order**: for a task of a job with a ``networkTopology`` and an allocated HyperNode: 1 when the node's
  HyperNode is that one, else ``(maxTier − tier(LCA)) / (maxTier − minTier)`` over the session's tiers (the
  cluster top included), ties at the top + the task share; nothing before the job has a HyperNode. For other
  tasks (``hypernode.binpack.normal-pod.enable``): Σ over tiers t of ``fading^(t−1) × binpack(the node's
  HyperNode at tier t)`` / Σ ``fading^(t−1)``, a tier without a HyperNode for the node counting 1.

Per-HyperNode resources (allocatable, used, idle, future idle over its real nodes) are summed at session open;
``used`` follows allocations and evictions through the session's event handlers, as upstream.
Arguments: ``weight`` (1), ``hypernode.binpack.cpu`` / ``.memory`` (1), ``hypernode.binpack.resources``
(comma-separated) with ``hypernode.binpack.resources.<name>`` (1; negative → 1),
``hypernode.binpack.normal-pod.enable`` (true), ``hypernode.binpack.normal-pod.fading`` (0.8; negative → 0.8),
``hypernode.gradient.evict.max-hypernodes`` (8; read, used by upstream's eviction gradients, which gpusim's
preempt does not take: jobs with a networkTopology do not preempt, as upstream).

Where upstream iterates a Go map (tied HyperNodes, several HyperNodes of one tier holding a node) gpusim takes
sorted names.
"""
from __future__ import annotations

import math
from typing import Any, Optional

from ...scheduler.framework import MAX_NODE_SCORE
from ..api import add, resource, sub
from ..hypernodes import CLUSTER_TOP
from .util import arg_float, arg_int

NAME = "network-topology-aware"
FULL_SCORE, ZERO_SCORE = 1.0, 0.0
DEFAULT_WEIGHT = 1
DEFAULT_NORMAL_POD_ENABLE = True
DEFAULT_NORMAL_POD_FADING = 0.8
DEFAULT_EVICT_MAX_HYPER_NODES = 8


def _arg_bool(args: dict, key: str, default: bool) -> bool:
    """framework.Arguments.GetBool: a bool, or a string strconv.ParseBool accepts; anything else keeps the default."""
    v = args.get(key, default)
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        if v in ("1", "t", "T", "TRUE", "true", "True"):
            return True
        if v in ("0", "f", "F", "FALSE", "false", "False"):
            return False
    return default


def priority_weight(args: dict) -> tuple[int, dict[str, int]]:
    """getPriorityWeight: (weight, resource → bin-packing weight); negative values fall back to 1."""
    weight = arg_int(args, "weight", DEFAULT_WEIGHT)
    if weight < 0:
        weight = DEFAULT_WEIGHT
    w = {"cpu": arg_int(args, "hypernode.binpack.cpu", DEFAULT_WEIGHT),
         "memory": arg_int(args, "hypernode.binpack.memory", DEFAULT_WEIGHT)}
    for k in ("cpu", "memory"):
        if w[k] < 0:
            w[k] = DEFAULT_WEIGHT
    raw = args.get("hypernode.binpack.resources", "")
    for name in (raw if isinstance(raw, str) else "").split(","):
        name = name.strip()
        if not name:
            continue
        rw = arg_int(args, f"hypernode.binpack.resources.{name}", DEFAULT_WEIGHT)
        w[name] = DEFAULT_WEIGHT if rw < 0 else rw
    return weight, w


def normal_pod_config(args: dict) -> tuple[bool, float]:
    """getNormalPodConfig: (enable, fading); a negative fading falls back to 0.8 (0 keeps only tier 1)."""
    enable = _arg_bool(args, "hypernode.binpack.normal-pod.enable", DEFAULT_NORMAL_POD_ENABLE)
    fading = arg_float(args, "hypernode.binpack.normal-pod.fading", DEFAULT_NORMAL_POD_FADING)
    if fading < 0:
        fading = DEFAULT_NORMAL_POD_FADING
    return enable, fading


def tier_score(tier: int, min_tier: int, max_tier: int) -> float:
    """scoreHyperNodeWithTier: (maxTier − tier) / (maxTier − minTier), 1 with a single tier, 0 out of range."""
    if min_tier == max_tier:
        return FULL_SCORE
    if min_tier <= tier <= max_tier:
        return (max_tier - tier) / (max_tier - min_tier)
    return ZERO_SCORE


class NetworkTopologyAware:
    name = NAME

    def __init__(self, args: dict):
        self.args = args
        self.weight, self.res_weights = priority_weight(args)
        self.normal_pod_enable, self.fading = normal_pod_config(args)
        evict = arg_int(args, "hypernode.gradient.evict.max-hypernodes", DEFAULT_EVICT_MAX_HYPER_NODES)
        self.max_hyper_nodes_for_eviction = evict if evict > 0 else DEFAULT_EVICT_MAX_HYPER_NODES
        self.min_tier = self.max_tier = 0
        self.cache: dict[str, dict[str, dict]] = {}     # HyperNode → allocatable / used / idle / futureIdle
        self.ssn: Any = None

    # --- session ---------------------------------------------------------------------------------------------
    def on_session_open(self, ssn) -> None:
        self.ssn = ssn
        hn = ssn.hyper_nodes
        self.min_tier, self.max_tier = hn.min_tier, hn.max_tier
        self.cache = {}
        for name in hn.info:
            st = {"allocatable": resource(), "used": resource(), "idle": resource(), "futureIdle": resource()}
            for node in sorted(hn.real_nodes[name]):
                ni = ssn.nodes.get(node)
                if ni is None:
                    continue
                add(st["allocatable"], ni.allocatable)
                add(st["used"], ni.used)
                add(st["idle"], ni.idle)
                add(st["futureIdle"], ni.future_idle())
            self.cache[name] = st
        ssn.add_fn("hyper_node_order", NAME, self.hyper_node_order)
        ssn.add_fn("node_order", NAME, self.batch_node_order)
        ssn.add_fn("hyper_node_gradient", NAME, self.hyper_node_gradient)
        ssn.add_event_handler(lambda t: self._used(t, add), lambda t: self._used(t, sub))

    def _used(self, task, op) -> None:
        for name, nodes in self.ssn.hyper_nodes.real_nodes.items():
            if task.node_name in nodes and name in self.cache:
                op(self.cache[name]["used"], task.resreq)

    def on_session_close(self, ssn) -> None:
        pass

    # --- scores ----------------------------------------------------------------------------------------------
    def _scale(self, scores: dict[str, float]) -> dict[str, float]:
        return {k: MAX_NODE_SCORE * self.weight * v for k, v in scores.items()}

    def _task_share(self, hyper_node: str, job) -> float:
        """scoreWithTaskNum: the share of the job's tasks on the HyperNode's nodes."""
        if not job.tasks:
            return FULL_SCORE
        nodes = self.ssn.hyper_nodes.real_nodes.get(hyper_node, set())
        return sum(1 for t in job.tasks.values() if t.node_name and t.node_name in nodes) / len(job.tasks)

    def _binpack(self, request: dict, hyper_node: str) -> float:
        """The weighted mean of (used + request) / allocatable over the weighted resources requested; 0 when
        one would overflow (getPodHyperNodeBinPackingScore / getSubJobHyperNodeBinPackingScore)."""
        st = self.cache.get(hyper_node)
        if st is None:
            return ZERO_SCORE
        total, wsum = 0.0, 0
        for r in sorted(request):
            req = request[r]
            if req <= 0 or r not in self.res_weights:
                continue
            alloc, used = st["allocatable"].get(r, 0), st["used"].get(r, 0)
            if used + req > alloc:
                return ZERO_SCORE
            total += self.res_weights[r] * (used + req) / alloc
            wsum += self.res_weights[r]
        return total / wsum if wsum > 0 else ZERO_SCORE

    def hyper_node_order(self, job, hyper_nodes: list[str]) -> dict[str, float]:
        """HyperNodeOrderFn: bin-packing with the requests of all the job's tasks; ties + the task share."""
        request = resource()
        for t in job.tasks.values():
            add(request, {r: v for r, v in t.resreq.items() if r in self.res_weights})
        scores = {h: self._binpack(request, h) for h in hyper_nodes}
        if scores:
            top = max(scores.values())
            tied = [h for h in hyper_nodes if scores[h] == top]
            if len(tied) > 1:
                for h in tied:
                    scores[h] += self._task_share(h, job)
        return self._scale(scores)

    def batch_node_order(self, task, nodes: list) -> dict[str, float]:
        job = self.ssn.jobs.get(task.job)
        if job is None:
            return {}
        if job.network_topology is not None:
            return self._scale(self._network_aware(task, job, nodes))
        return self._scale(self._normal(task, nodes))

    def _network_aware(self, task, job, nodes: list) -> dict[str, float]:
        """batchNodeOrderFnForNetworkAwarePods."""
        allocated = task.job_allocated_hyper_node
        if not allocated:
            return {}
        hn = self.ssn.hyper_nodes
        scores: dict[str, float] = {}
        for n in nodes:
            scores[n.name] = self._lca_score(hn.hyper_node_for_node(n.name), allocated)
        top = max(scores.values(), default=0.0)
        tied = [n.name for n in nodes if scores[n.name] == top]
        if len(tied) > 1:
            for name in tied:
                scores[name] += self._task_share(hn.hyper_node_for_node(name), job)
        return scores

    def _lca_score(self, hyper_node: str, allocated: str) -> float:
        """networkTopologyAwareScore."""
        if not hyper_node or not allocated:
            return ZERO_SCORE
        if hyper_node == allocated:
            return FULL_SCORE
        hn = self.ssn.hyper_nodes
        lca = hn.lca(hyper_node, allocated)
        if lca not in hn.info:
            return ZERO_SCORE
        return tier_score(hn.info[lca].tier, self.min_tier, self.max_tier)

    def _normal(self, task, nodes: list) -> dict[str, float]:
        """batchNodeOrderFnForNormalPods: tier-weighted HyperNode bin-packing."""
        if not self.normal_pod_enable:
            return {}
        hn = self.ssn.hyper_nodes
        tiers = range(self.min_tier, self.max_tier + 1)
        weights = {t: math.pow(self.fading, t - 1) for t in tiers}
        wsum = sum(weights.values())
        if wsum <= 0:
            return {}
        scores = {}
        for n in nodes:
            total = 0.0
            for t in tiers:
                s = FULL_SCORE
                holder = next((h for h in hn.by_tier.get(t, []) if n.name in hn.real_nodes[h]), None)
                if holder is not None:
                    s = self._binpack(task.resreq, holder)
                total += weights[t] * s
            scores[n.name] = total / wsum
        return scores

    # --- gradient --------------------------------------------------------------------------------------------
    def hyper_node_gradient(self, job, root: str = CLUSTER_TOP) -> Optional[list[list[str]]]:
        """The HyperNodeGradientForJobFn callback (hyperNodeGradientFn); a job without a hard boundary gets the
        root alone; None when no gradient can be built (upstream logs the error and the job waits)."""
        nt = job.network_topology
        if nt is None or not nt.is_hard():
            return [[root]]
        hn = self.ssn.hyper_nodes
        search = self._search_root(root, job)
        if search is None:
            return None
        name = nt.highest_tier_name
        # by name: a HyperNode is inside the boundary when it or an ancestor carries the tier name
        inside = bool(name) and any(hn.info[a].tier_name == name for a in hn.ancestors(search))
        matched = inside
        eligible: dict[int, list[str]] = {}
        queue, seen = [(search, inside)], {search}
        while queue:
            cur, inside = queue.pop(0)
            tier = hn.info[cur].tier
            within = inside if name else tier <= nt.highest_tier_allowed
            if within and self._eligible(cur, job):
                eligible.setdefault(tier, []).append(cur)
            for child in sorted(hn.info[cur].children):
                if child in seen or child not in hn.info:
                    continue
                seen.add(child)
                child_inside = inside or (bool(name) and hn.info[child].tier_name == name)
                matched = matched or child_inside
                queue.append((child, child_inside))
        if name and not matched:
            self.ssn.trace("network-topology-aware.hyperNodeGradientFn", f"PodGroup {job.uid}",
                           f"tier name {name} not found in available HyperNode subtree {search}")
            return None
        return [sorted(eligible[t]) for t in sorted(eligible)]

    def _search_root(self, root: str, job) -> Optional[str]:
        """getSearchRoot: the root, narrowed to the highest allowed ancestor of the job's allocated HyperNode
        (getHighestAllowedHyperNode; the cluster top is never that ancestor for a hard job)."""
        allocated = job.allocated_hyper_node
        if not allocated:
            return root
        hn, nt = self.ssn.hyper_nodes, job.network_topology
        highest = ""
        for a in hn.ancestors(allocated):
            if nt.highest_tier_name:
                if hn.info[a].tier_name == nt.highest_tier_name:
                    highest = a
                continue
            if a == CLUSTER_TOP or hn.info[a].tier > nt.highest_tier_allowed:
                break
            highest = a
        if not highest:
            self.ssn.trace("network-topology-aware.hyperNodeGradientFn", f"PodGroup {job.uid}",
                           f"allocated hyperNode {allocated} has no ancestor within the job's networkTopology")
            return None
        lca = hn.lca(root, highest)
        if lca == highest:
            return root
        if lca == root:
            return highest
        return None

    def _eligible(self, hyper_node: str, job) -> bool:
        """isEligibleHyperNode: skipped once the job has an allocated HyperNode; else minResources ≤ idle or
        future idle."""
        if job.allocated_hyper_node:
            return True
        st = self.cache.get(hyper_node)
        if st is None:
            return True
        minres = job.min_resources or {}
        return all(v <= st["idle"].get(r, 0) for r, v in minres.items()) or \
            all(v <= st["futureIdle"].get(r, 0) for r, v in minres.items())


def new(args: dict) -> NetworkTopologyAware:
    return NetworkTopologyAware(args)
