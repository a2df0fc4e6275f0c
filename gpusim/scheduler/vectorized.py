"""A vectorised Filter/Score path over node arrays, for the default plugins.

kube-scheduler gets its speed from PreFilter/PreScore precomputation, Skip, the early stop at
numFeasibleNodesToFind and an incrementally updated snapshot (pkg/scheduler/backend/cache). gpusim
keeps upstream's per-node plugin interface (what the course teaches) and adds this path, which
computes the *same* decisions with numpy over all nodes at once: NodeUnschedulable, NodeName,
TaintToleration, NodeAffinity (required), NodeResourcesFit (Filter and the three scoring
strategies), NodeResourcesBalancedAllocation, and NodePorts/PodTopologySpread/InterPodAffinity when their
PreFilter/PreScore say Skip (DynamicResources too, for pods without claims). Anything else falls back to the per-node path. tests/test_vectorized.py
checks, over random clusters, that both paths choose the same nodes with the same statuses and scores.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..api.v1helper import is_extended_resource_name
from .framework import MAX_NODE_SCORE, Code, NodeInfo, PodInfo, Status
from .plugins import nodeaffinity, nodeunschedulable, noderesources, tainttoleration
from .plugins.helper import find_untolerated

FILTERS = {"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
           "PodTopologySpread", "InterPodAffinity", "DynamicResources"}
# vectorised only when they Skip (DynamicResources skips pods without ResourceClaims)
SKIP_ONLY = {"NodePorts", "PodTopologySpread", "InterPodAffinity", "DynamicResources"}
SCORES = {"TaintToleration", "NodeAffinity", "NodeResourcesFit", "NodeResourcesBalancedAllocation",
          "PodTopologySpread", "InterPodAffinity"}
SCORE_SKIP_ONLY = {"NodeAffinity", "PodTopologySpread", "InterPodAffinity"}
# plugins whose raw score already lies in [0, MaxNodeScore] (the per-resource scorers; TaintToleration's raw
# score is a count of intolerable PreferNoSchedule taints)
BOUNDED_RAW = {"NodeResourcesFit", "NodeResourcesBalancedAllocation"}
FIXED_ORDER = ("cpu", "memory", "ephemeral-storage")


class NodeTable:
    """Columns over the scheduler's NodeInfos in snapshot order, refreshed for changed rows only."""

    def __init__(self) -> None:
        self.infos: list[NodeInfo] = []
        self.names: list[str] = []
        self.index: dict[str, int] = {}
        self.alloc: dict[str, np.ndarray] = {}
        self.req: dict[str, np.ndarray] = {}
        self.nz: dict[str, np.ndarray] = {}
        self.npods = np.zeros(0, np.int64)
        self.unschedulable = np.zeros(0, bool)
        self.hard_tainted: set[int] = set()
        self.prefer_tainted: set[int] = set()
        self.labels: list[dict] = []
        self.dirty: set[str] = set()
        self.stale = True
        self.affinity_cache: dict[Any, np.ndarray] = {}
        # the per-shape cache (cached()): rows refreshed since the last full rebuild, as a log that entries read
        # from the position they have seen; ``generation`` counts full rebuilds
        self.generation = 0
        self.changed: list[int] = []
        self.changed_base = 0            # log position of changed[0] (the log is trimmed as it grows)
        self.shapes: dict[Any, list] = {}
        self.per_node_rows = PER_NODE_ROWS   # up to this many changed rows: per-node plugins, else numpy

    def mark(self, ni: NodeInfo) -> None:
        self.dirty.add(ni.name)

    def invalidate(self) -> None:
        self.stale = True

    def _column(self, r: str) -> None:
        n, infos = len(self.infos), self.infos
        self.alloc[r] = np.fromiter((ni.allocatable.values.get(r, 0) for ni in infos), np.int64, n)
        self.req[r] = np.fromiter((ni.requested.values.get(r, 0) for ni in infos), np.int64, n)
        self.nz[r] = np.fromiter((ni.non_zero_requested.values.get(r, 0) for ni in infos), np.int64, n)

    def _columns(self, cols: list[str]) -> None:
        """Every resource column afresh, in one pass over the nodes (each NodeInfo's three mappings read once:
        they lie scattered in memory, and a pass per column costs a cache miss per node and column)."""
        n, k = len(self.infos), len(cols)
        flat = np.empty((3, n * k), np.int64)
        a_out, r_out, z_out = [], [], []
        for ni in self.infos:
            av, rv, zv = ni.allocatable.values, ni.requested.values, ni.non_zero_requested.values
            for r in cols:
                a_out.append(av.get(r, 0))
                r_out.append(rv.get(r, 0))
                z_out.append(zv.get(r, 0))
        for j, out in enumerate((a_out, r_out, z_out)):
            flat[j] = out
        mats = flat.reshape(3, n, k)
        # one contiguous array per column (the per-row updates write into them)
        self.alloc = {r: np.ascontiguousarray(mats[0, :, c]) for c, r in enumerate(cols)}
        self.req = {r: np.ascontiguousarray(mats[1, :, c]) for c, r in enumerate(cols)}
        self.nz = {r: np.ascontiguousarray(mats[2, :, c]) for c, r in enumerate(cols)}

    def _row(self, i: int, ni: NodeInfo) -> None:
        for r in self.alloc:
            self.alloc[r][i] = ni.allocatable.get(r)
            self.req[r][i] = ni.requested.get(r)
            self.nz[r][i] = ni.non_zero_requested.get(r)
        self._node_row(i, ni)

    def _node_row(self, i: int, ni: NodeInfo) -> None:
        """Row ``i`` of what is not a resource column: pod count, cordon, taints, labels."""
        self.npods[i] = len(ni.pods)
        self.unschedulable[i] = ni.node.spec.unschedulable
        taints = ni.node.spec.taints
        (self.hard_tainted.add if _hard(taints) else self.hard_tainted.discard)(i)
        (self.prefer_tainted.add if _prefer(taints) else self.prefer_tainted.discard)(i)
        labels = ni.node.metadata.labels
        if self.labels[i] != labels:
            self.labels[i] = dict(labels)
            self.affinity_cache.clear()

    def refresh(self, nodes: dict[str, NodeInfo], resources) -> None:
        if self.stale or len(nodes) != len(self.infos):
            self.infos = list(nodes.values())
            self.names = [ni.name for ni in self.infos]
            self.index = {n: i for i, n in enumerate(self.names)}
            n = len(self.infos)
            cols = sorted(set(self.alloc) | {"cpu", "memory", "pods"} | set(resources))
            self._columns(cols)
            # the rest of every row (_node_row's fields), column by column
            infos = self.infos
            self.npods = np.fromiter((len(ni.pods) for ni in infos), np.int64, n)
            self.unschedulable = np.fromiter((bool(ni.node.spec.unschedulable) for ni in infos), bool, n)
            tainted = [(i, ni.node.spec.taints) for i, ni in enumerate(infos) if ni.node.spec.taints]
            self.hard_tainted = {i for i, ts in tainted if _hard(ts)}
            self.prefer_tainted = {i for i, ts in tainted if _prefer(ts)}
            self.labels = [dict(ni.node.metadata.labels) for ni in infos]
            self.affinity_cache.clear()
            self.stale = False
            self.dirty.clear()
            self.generation += 1
            self.changed, self.changed_base = [], 0
        for r in resources:
            if r not in self.alloc:
                self._column(r)
        if self.dirty:
            changed = self.changed
            for name in self.dirty:
                i = self.index.get(name)
                if i is not None:
                    self._row(i, self.infos[i])
                    changed.append(i)
            self.dirty.clear()
            if len(changed) > 2 * len(self.infos) + 1024:
                half = len(changed) // 2
                self.changed, self.changed_base = changed[half:], self.changed_base + half

    def cached(self, key: Any, compute: Callable[[Any, int], tuple[np.ndarray, ...]],
               per_node: Callable[[NodeInfo], tuple]) -> tuple[np.ndarray, ...]:
        """Per-node arrays that depend only on each node's row and on ``key`` (a pod shape: what the Filter
        verdicts or the bounded scores of a pod read), over every node, kept up to date by recomputing the rows
        refreshed since they were last read. ``compute(rows, size)`` computes them with numpy over node rows
        ``rows`` (a slice or an index array); ``per_node(ni)`` gives one node's values through the plugins'
        own per-node Filter/Score (cheaper than numpy for the few rows a cycle changes: the node the last pod
        was assumed on). A Job's 10,000 identical pods read one entry. The values are those a fresh
        computation gives (tests/test_vectorized.py); the arrays are shared: callers copy what they keep."""
        n = len(self.infos)
        end = self.changed_base + len(self.changed)
        e = self.shapes.get(key)
        if e is None or e[0] != self.generation or e[1] < self.changed_base or end - e[1] > n // 4:
            arrays = compute(slice(0, n), n)
            if e is None and len(self.shapes) >= MAX_SHAPES:
                del self.shapes[next(iter(self.shapes))]     # the oldest shape
            self.shapes[key] = [self.generation, end, arrays]
            return arrays
        if e[1] < end:
            seen = self.changed[e[1] - self.changed_base:]
            if len(seen) <= self.per_node_rows:
                infos = self.infos
                for i in set(seen):
                    for full, v in zip(e[2], per_node(infos[i])):
                        full[i] = v
            else:
                rows = np.unique(np.asarray(seen, np.intp))
                for full, part in zip(e[2], compute(rows, len(rows))):
                    full[rows] = part
            e[1] = end
        return e[2]


def _hard(taints) -> bool:
    """A taint the Filter reads (TaintToleration: NoSchedule, NoExecute)."""
    return any(t.effect in ("NoSchedule", "NoExecute") for t in taints)


def _prefer(taints) -> bool:
    """A taint the Score reads (TaintToleration: PreferNoSchedule)."""
    return any(t.effect == "PreferNoSchedule" for t in taints)


MAX_SHAPES = 64     # pod shapes whose arrays a NodeTable keeps (each holds a few arrays of one value per node)
PER_NODE_ROWS = 16  # up to this many changed rows are recomputed node by node, more with numpy


def eligible(fw, state, skipped: set[str]) -> bool:
    """Whether this profile and this pod's PreFilter results allow the vectorised Filter path (not for a pod
    whose extended resources a DeviceClass backs: NodeResourcesFit delegates them per node)."""
    if state and state.get(noderesources.DRA_STATE_KEY):
        return False
    for p in fw.points["Filter"]:
        if p.name not in FILTERS or (p.name in SKIP_ONLY and p.name not in skipped):
            return False
        if p.name == "NodeAffinity" and p.added_node_selector is not None:
            return False            # the profile's addedAffinity: per-node path
    return all(p.name in SCORES for p in fw.points["Score"])


class BatchResult:
    """Feasible nodes (in search order), the number processed, and ``statuses()``, building the rejected nodes'
    statuses lazily (the function alone is what an Attempt keeps, not the feasible list)."""

    def __init__(self, feasible: np.ndarray, processed: int, statuses: Callable[[], dict[str, Status]]):
        self.feasible, self.processed, self.statuses = feasible, processed, statuses

    @property
    def consecutive(self) -> bool:
        """Nothing was rejected: the feasible nodes are consecutive in search order."""
        return self.processed == len(self.feasible)


def compact(a: np.ndarray, bounds: tuple[int, int] | None = None) -> np.ndarray:
    """The same integers in the smallest of int8/int16/int32/int64 that holds them (what a record keeps).
    ``bounds`` (lo, hi), when the caller knows the values lie within them, saves the min/max scan."""
    if a.size == 0:
        return a
    lo, hi = bounds if bounds is not None else (int(a.min()), int(a.max()))
    for t, tmin, tmax in _SMALL_INTS:
        if tmin <= lo and hi <= tmax:
            return a.astype(t)
    return a


_SMALL_INTS = [(t, int(np.iinfo(t).min), int(np.iinfo(t).max)) for t in (np.int8, np.int16, np.int32)]


class _Run:
    """Node indices ``first, first+1, …`` (mod n), ``count`` of them: what ``kept_indices`` keeps for a run of
    consecutive nodes instead of the array."""
    __slots__ = ("first", "count", "n")

    def __init__(self, first: int, count: int, n: int):
        self.first, self.count, self.n = first, count, n

    def tolist(self) -> list[int]:
        f, n = self.first, self.n
        return [(f + k) % n for k in range(self.count)]


def kept_indices(idx: np.ndarray, n: int, consecutive: bool = False) -> Any:
    """What an Attempt keeps of a cycle's feasible node indices (``.tolist()`` gives them back): the first index
    and a count when they are consecutive in search order (nothing rejected; ``consecutive`` says so when the
    caller knows), else the compact array."""
    if consecutive and len(idx):
        return _Run(int(idx[0]), len(idx), n)
    if len(idx) and (int(idx[-1]) - int(idx[0])) % n == len(idx) - 1 and \
            (len(idx) < 3 or bool(np.all((np.diff(idx) % n) == 1))):
        return _Run(int(idx[0]), len(idx), n)
    return compact(idx, (0, n - 1))


def _window(n: int, start: int, w: int):
    """Positions ``start, start+1, … start+w-1`` (mod n) of the node columns: a slice when they do not wrap."""
    return slice(start, start + w) if start + w <= n else np.r_[start:n, 0:start + w - n]


def _positions(rows, members: set[int]) -> list[tuple[int, int]]:
    """(position, row) of each row of ``members`` within node rows ``rows`` (a slice or an index array)."""
    if isinstance(rows, slice):
        return [(i - rows.start, i) for i in sorted(members) if rows.start <= i < rows.stop]
    return [(k, i) for k, i in enumerate(rows.tolist()) if i in members]


def _fail_masks(table: NodeTable, fw, pi: PodInfo, rows, size: int):
    """The Filter plugins' fail masks (in filter order) over node rows ``rows`` (a slice or an index array of
    ``size`` rows), and the Fit plugin's per-reason masks."""
    pod = pi.pod
    fails: list[tuple[str, np.ndarray]] = []          # (plugin, fail mask) in filter order
    fit_detail: dict[str, np.ndarray] = {}
    fit_plugin = None
    for p in fw.points["Filter"]:
        if p.name in SKIP_ONLY:
            continue
        if p.name == "NodeUnschedulable":
            tolerates = nodeunschedulable.fits(pod, _Cordoned())
            fails.append((p.name, table.unschedulable[rows] & (not tolerates)))
        elif p.name == "NodeName":
            m = np.zeros(size, bool)
            if pod.spec.node_name:
                m[:] = True
                wanted = table.index.get(pod.spec.node_name)
                for k, _ in _positions(rows, set() if wanted is None else {wanted}):
                    m[k] = False
            fails.append((p.name, m))
        elif p.name == "TaintToleration":
            m = np.zeros(size, bool)
            for k, i in _positions(rows, table.hard_tainted):
                if find_untolerated(table.infos[i].node.spec.taints, pod.spec.tolerations,
                                    ("NoSchedule", "NoExecute")) is not None:
                    m[k] = True
            fails.append((p.name, m))
        elif p.name == "NodeAffinity":
            fails.append((p.name, _affinity_fail(table, pod)[rows]))
        elif p.name == "NodeResourcesFit":
            fit_plugin = p
            pods_over = table.npods[rows] + 1 > table.alloc["pods"][rows]
            fit_detail["Too many pods"] = pods_over
            m = pods_over.copy()
            for r in _fit_order(pi.requests):
                q = pi.requests[r]
                if q == 0 or (is_extended_resource_name(r) and (r in p.ignored or r.split("/", 1)[0] in p.ignored_groups)):
                    continue
                short = q > table.alloc[r][rows] - table.req[r][rows]
                fit_detail[r] = short
                m |= short
            fails.append((p.name, m))
    return fails, fit_detail, fit_plugin


def _any_fail(fails: list[tuple[str, np.ndarray]], size: int) -> np.ndarray:
    """Whether any of the Filter plugins' masks rejects each node."""
    out = np.zeros(size, bool)
    for _, m in fails:
        out |= m
    return out


def _fail_at(table: NodeTable, fw, pi: PodInfo, rows, size: int) -> np.ndarray:
    """Whether any vectorised Filter plugin rejects the pod on node rows ``rows``, for a pod without spec.nodeName:
    what :meth:`NodeTable.cached` keeps per pod shape (:func:`_filter_key`)."""
    return _any_fail(_fail_masks(table, fw, pi, rows, size)[0], size)


def _filter_key(fw, pi: PodInfo) -> tuple:
    """What the vectorised Filter verdicts read of a pod (no spec.nodeName): its requests, tolerations and
    required node affinity/selector, under one profile."""
    spec = pi.pod.spec
    aff = spec.affinity.node_affinity if spec.affinity else None
    req = aff.required_during_scheduling_ignored_during_execution if aff else None
    return (id(fw), "Filter", tuple(pi.requests.items()),
            tuple((t.key, t.operator, t.value, t.effect, t.toleration_seconds) for t in spec.tolerations),
            tuple(sorted(spec.node_selector.items())) if spec.node_selector else (),
            repr(req) if req is not None else None)


def _no_statuses() -> dict[str, Status]:
    return {}


def find_feasible(table: NodeTable, fw, state, pi: PodInfo, start: int, want: int) -> BatchResult:
    """findNodesThatPassFilters, stopping (as upstream) after ``want`` feasible nodes in search order (from
    nextStartNodeIndex, wrapping round). The masks are computed over a window of nodes from ``start`` that
    grows until it holds ``want`` feasible nodes or covers the cluster: the same answer as over all nodes."""
    n = len(table.infos)
    pod = pi.pod
    # a pod without spec.nodeName reads its shape's verdicts over every node (NodeTable.cached); the per-plugin
    # masks are computed only when there are rejected nodes to give statuses to
    fail_all = None if pod.spec.node_name else \
        table.cached(_filter_key(fw, pi), lambda rows, size: (_fail_at(table, fw, pi, rows, size),),
                     lambda ni: (not fw.run_filters(state, pi, ni).is_success(),))[0]
    fails = None
    w = min(n, 2 * want + 64)
    while True:
        window = _window(n, start, w)
        if fail_all is not None:
            any_fail = fail_all[window]
        else:
            fails, fit_detail, fit_plugin = _fail_masks(table, fw, pi, window, w)
            any_fail = _any_fail(fails, w)
        pos = np.flatnonzero(~any_fail)
        if len(pos) >= want:
            processed = int(pos[want - 1]) + 1
            pos = pos[:want]
            break
        if w == n:
            processed = n
            break
        w = min(n, 4 * w)
    feasible = (pos + start) % n if start else pos
    rejected_k = np.flatnonzero(any_fail[:processed])       # window positions of the rejected nodes
    if len(rejected_k) == 0:
        # nothing rejected (the common case in a roomy cluster): the Attempt keeps no per-plugin masks
        return BatchResult(feasible, processed, _no_statuses)
    if fails is None:
        fails, fit_detail, fit_plugin = _fail_masks(table, fw, pi, window, w)
    rejected = (rejected_k + start) % n
    snap = [(name, m[rejected_k]) for name, m in fails]
    detail = {k: v[rejected_k] for k, v in fit_detail.items()}
    alloc_at = {r: table.alloc[r][rejected] for r in fit_detail if r != "Too many pods"}
    all_names = table.names
    reqs = dict(pi.requests)

    def statuses() -> dict[str, Status]:
        out: dict[str, Status] = {}
        for k, i in enumerate(rejected.tolist()):
            name = all_names[i]
            for plugin, m in snap:
                if not m[k]:
                    continue
                if plugin == "NodeResourcesFit":
                    reasons, unresolvable = [], False
                    for key, short in detail.items():
                        if short[k]:
                            reasons.append("Too many pods" if key == "Too many pods" else f"Insufficient {key}")
                            if key != "Too many pods" and reqs[key] > alloc_at[key][k]:
                                unresolvable = True
                    code = Code.UnschedulableAndUnresolvable if unresolvable and fit_plugin.version >= (1, 34) \
                        else Code.Unschedulable
                    out[name] = Status(code, reasons, plugin)
                elif plugin == "TaintToleration":
                    ni = table.infos[table.index[name]]
                    taint = find_untolerated(ni.node.spec.taints, pod.spec.tolerations, ("NoSchedule", "NoExecute"))
                    version = next(p.version for p in fw.points["Filter"] if p.name == plugin)
                    out[name] = Status(Code.UnschedulableAndUnresolvable, [tainttoleration.reason(taint, version)], plugin)
                else:
                    reason = {"NodeUnschedulable": nodeunschedulable.ERR_REASON_UNSCHEDULABLE,
                              "NodeName": "node(s) didn't match the requested node name",
                              "NodeAffinity": nodeaffinity.ERR_REASON_POD}[plugin]
                    out[name] = Status(Code.UnschedulableAndUnresolvable, [reason], plugin)
                break
        return out
    return BatchResult(feasible, processed, statuses)


class _Cordoned:
    """A stand-in node with spec.unschedulable=true, to ask whether the pod tolerates cordoning."""

    class spec:
        unschedulable = True


def _fit_order(req: dict[str, int]) -> list[str]:
    return [r for r in FIXED_ORDER if r in req] + sorted(r for r in req if r not in FIXED_ORDER and r != "pods")


def _affinity_fail(table: NodeTable, pod) -> np.ndarray:
    aff = pod.spec.affinity.node_affinity if pod.spec.affinity else None
    req = aff.required_during_scheduling_ignored_during_execution if aff else None
    if not pod.spec.node_selector and req is None:
        return np.zeros(len(table.infos), bool)
    key = (tuple(sorted(pod.spec.node_selector.items())), repr(req))
    m = table.affinity_cache.get(key)
    if m is None:
        m = np.fromiter((not nodeaffinity.node_matches_pod(pod, ni.node) for ni in table.infos), bool,
                        len(table.infos))
        table.affinity_cache[key] = m
    return m


def score(table: NodeTable, fw, state, pi: PodInfo, idx: np.ndarray, skipped: set[str]):
    """PreScore results given; returns (totals array, per-plugin (raw, normalized) arrays, weights)."""
    # feasible nodes that are consecutive in the columns (the usual case while nodes have room) are read as
    # a slice (views), not gathered
    sel = slice(int(idx[0]), int(idx[-1]) + 1) if len(idx) and idx[-1] - idx[0] == len(idx) - 1 else idx
    parts: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    totals = np.zeros(len(idx), np.int64)
    bounded = None
    for p in fw.points["Score"]:
        if p.name in skipped:
            continue
        if p.name == "TaintToleration":
            raw = np.zeros(len(idx), np.int64)
            if table.prefer_tainted:   # only nodes with PreferNoSchedule taints can score above 0
                for k, i in enumerate(idx):
                    if int(i) in table.prefer_tainted:
                        raw[k] = p.score(state, pi, table.infos[int(i)])
            mx = raw.max() if len(raw) else 0
            norm = np.full(len(idx), MAX_NODE_SCORE, np.int64) if mx == 0 else MAX_NODE_SCORE - MAX_NODE_SCORE * raw // mx
        elif p.name in BOUNDED_RAW:
            if bounded is None:
                scorers = [q for q in fw.points["Score"] if q.name in BOUNDED_RAW and q.name not in skipped]
                bounded = iter(table.cached(_score_key(fw, pi, skipped),
                                            lambda rows, size: _bounded_scores(table, scorers, pi, rows, size),
                                            lambda ni: tuple(q.score(state, pi, ni) for q in scorers)))
            raw = next(bounded)[sel]     # a view of the shape's scores: the caller copies what it keeps
            norm = raw
        else:
            raise AssertionError(f"{p.name} has no vectorised score")
        parts[p.name] = (raw, norm)
        totals += norm * fw.weights[p.name]
    return totals, parts


def _bounded_scores(table: NodeTable, scorers: list, pi: PodInfo, rows, size: int) -> tuple[np.ndarray, ...]:
    """The raw scores of ``scorers`` (the BOUNDED_RAW plugins that run, in score order) on node rows ``rows``:
    each node's depends only on its row and the pod (what :meth:`NodeTable.cached` keeps per
    :func:`_score_key`)."""
    return tuple((_fit_scores if p.name == "NodeResourcesFit" else _balanced_scores)(table, p, pi, rows, size)
                 for p in scorers)


def _score_key(fw, pi: PodInfo, skipped: set[str]) -> tuple:
    return (id(fw), "Score", tuple(pi.requests.items()), tuple(pi.score_non_zero.items()), frozenset(skipped))


def _fit_scores(table: NodeTable, p, pi: PodInfo, idx, size: int) -> np.ndarray:
    num = np.zeros(size, np.int64)
    den = np.zeros(size, np.int64)
    rtc = p.strategy == "RequestedToCapacityRatio"
    for r, w in p.resources:
        if is_extended_resource_name(r) and pi.requests.get(r, 0) == 0:
            continue
        if r not in table.alloc:
            table._column(r)    # a scored resource no pod requested yet (ephemeral-storage): read it now
        alloc = table.alloc[r][idx]
        if r in ("cpu", "memory"):
            requested = table.nz[r][idx] + pi.score_non_zero.get(r, 0)
        else:
            requested = table.req[r][idx] + pi.requests.get(r, 0)
        present = alloc != 0
        safe = np.where(present, alloc, 1)
        if p.strategy == "MostAllocated":
            s = np.minimum(requested, safe) * MAX_NODE_SCORE // safe
        elif rtc:
            util = np.where(requested > safe, noderesources.MAX_UTILIZATION,
                            requested * noderesources.MAX_UTILIZATION // safe)
            f = p._scorer
            s = np.fromiter((f(int(u), 100) for u in util), np.int64, len(util))
        else:
            s = np.where(requested > safe, 0, (safe - requested) * MAX_NODE_SCORE // safe)
        use = present & (s > 0) if rtc else present
        num += np.where(use, s * w, 0)
        den += np.where(use, w, 0)
    if rtc:
        return np.where(den > 0, np.floor(num / np.where(den > 0, den, 1) + 0.5), 0).astype(np.int64)
    return np.where(den > 0, num // np.where(den > 0, den, 1), 0)


def _balanced_scores(table: NodeTable, p, pi: PodInfo, idx, size: int) -> np.ndarray:
    before, after = [], []
    for r in p.resources:
        if pi.requests.get(r, 0) == 0 and is_extended_resource_name(r):
            continue            # as the per-node path: an unrequested scalar is not balanced
        if r not in table.alloc:
            table._column(r)    # a scored resource no pod requested yet (ephemeral-storage): read it now
        alloc = table.alloc[r][idx]
        present = alloc != 0
        safe = np.where(present, alloc, 1).astype(np.float64)
        used = table.req[r][idx].astype(np.float64)
        before.append((present, np.minimum(used / safe, 1.0)))
        after.append((present, np.minimum((used + pi.requests.get(r, 0)) / safe, 1.0)))

    def bal(fr):
        # per node, only resources with allocatable > 0 count (as in the per-node path)
        out = np.empty(size, np.int64)
        for k in range(size):
            vals = [float(v[k]) for pr, v in fr if pr[k]]
            out[k] = noderesources.balance(vals)
        return out
    if all(pr.all() for pr, _ in after) and len(after) == 2:
        def bal2(fr):
            std = np.abs(fr[0][1] - fr[1][1]) / 2
            return np.trunc((1 - std) * MAX_NODE_SCORE).astype(np.int64)
        b_after, b_before = bal2(after), bal2(before)
    else:
        b_after, b_before = bal(after), bal(before)
    if p.version < (1, 36):
        return b_after
    d = 50 + b_after - b_before
    return 50 + np.where(d >= 0, d // 2, -((-d) // 2))
