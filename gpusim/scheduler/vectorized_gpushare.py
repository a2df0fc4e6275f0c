"""A vectorised Filter/Score path for GPU sharing: NodeResourcesFit (CPU, memory, pods), Open-Gpu-Share,
and the FGD study's six score plugins over node arrays.

The FGD simulator gets its speed by memoising each node's fragmentation by node state
(``NodeResource.Flatten``, ``sim.fragMemo``); gpusim keeps the per-node plugins (what the course teaches)
and adds this path, which makes the *same* decisions with numpy: each node's row (free milli-GPU per GPU,
CPU left, and, per typical pod, how many GPUs it fits and how much partial GPU it strands) is refreshed
only when the node changes, so one node's F_n(M) is recomputed per placement; a pod's hypothetical
F_n(M) on every feasible node (every distinct GPU for a sharing pod) is then a few array operations.
Floating-point sums are taken in the per-node helpers' order, and every float → int step that could
round differently (sigmoid, tanh) goes through the same scalar function, so both paths agree exactly;
tests/test_replay_vectorized.py checks placements, GPUs and scores over random clusters.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .framework import MAX_NODE_SCORE, Code, NodeInfo, PodInfo
from .frag import TargetPod
from .gpushare import (MILLI, MAX_SPEC_CPU, MAX_SPEC_GPU, NO_GPU_TAG, SHARE_GPU_TAG, PodResource, gpu_affinity_of,
                       gpu_count_of_node, is_node_accessible_to_pod_by_type, node_resource, pod_resource)
from .plugins import (bestfitscore, dotproductscore, fgdscore, gpuclusteringscore, gpupackingscore, noderesources,
                      opengpushare, randomscore)

FILTERS = frozenset({noderesources.NAME, opengpushare.NAME})    # both must be enabled, and nothing else
SCORES = frozenset({randomscore.NAME, dotproductscore.NAME, gpuclusteringscore.NAME, gpupackingscore.NAME,
                    bestfitscore.NAME, fgdscore.NAME})
FIT_RESOURCES = ("cpu", "memory")
_EDGE = 1e-9     # a float score this close to an integer is recomputed with the scalar function


class GpuShareTable:
    """Columns over the replay's NodeInfos (snapshot order), refreshed for changed rows only."""

    def __init__(self, infos: Sequence[NodeInfo], typical: Sequence[TargetPod]):
        self.infos = list(infos)
        self.names = [ni.name for ni in self.infos]
        self.index = {n: i for i, n in enumerate(self.names)}
        self.typical = list(typical)
        n = len(self.infos)
        self.g = max([1] + [gpu_count_of_node(ni.node) for ni in self.infos])
        z = lambda dt=np.int64: np.zeros(n, dt)   # noqa: E731
        self.alloc = {r: z() for r in (*FIT_RESOURCES, "pods")}
        self.req = {r: z() for r in FIT_RESOURCES}
        self.npods = z()
        self.cpu_left, self.cpu_cap, self.ngpu, self.idle, self.nfree = z(), z(), z(), z(), z()
        self.left = np.zeros((n, self.g), np.int64)
        self.gpu_type = [""] * n
        self.n_classes = z()
        self.classes = np.zeros((n, self.g + 1), np.int64)   # share-gpu, 1-gpu, 2-gpu … pods on the node
        self.frag = z(np.float64)
        self.plain = np.ones(n, bool)                          # untainted, schedulable, no other filter applies
        self.p = [t.percentage for t in self.typical]
        self.gpu_rows = [j for j, t in enumerate(self.typical) if t.resource.milli_gpu > 0]
        # _frag_after's terms: p as a column, and per typical pod its row in [GPU rows …, idle]
        self.p_col = np.asarray(self.p, np.float64).reshape(-1, 1)
        rows = {j: r for r, j in enumerate(self.gpu_rows)}
        self.frag_rows = [rows.get(j, len(self.gpu_rows)) for j in range(len(self.typical))]
        tg = [self.typical[j].resource for j in self.gpu_rows]
        self.t_d = np.array([r.milli_gpu for r in tg], np.int64).reshape(-1, 1)
        self.t_k = np.array([max(r.gpu_number, 1) for r in tg], np.int64).reshape(-1, 1)
        self.t_c = np.array([r.milli_cpu for r in tg], np.int64).reshape(-1, 1)
        self.t_type = [r.gpu_type for r in tg]
        self.fitcnt = np.zeros((len(tg), n), np.int64)
        self.partial = np.zeros((len(tg), n), np.int64)
        self.t_acc = np.zeros((len(tg), n), bool)
        self._access: dict[str, np.ndarray] = {}
        self.dirty: set[int] = set(range(n))
        self._frag_rows = False      # F_n(M) per row once t_acc is known (it needs every row's GPU type)
        self.refresh()
        for j, t in enumerate(self.t_type):
            self.t_acc[j] = self.access(t)
        self.frag = self._frag_now(np.arange(n))
        self._frag_rows = True

    # --- rows -------------------------------------------------------------------------------------------
    def mark(self, ni: NodeInfo) -> None:
        """The NodeInfo's on_change hook: refresh this row before the next cycle reads it."""
        i = self.index.get(ni.name)
        if i is not None:
            self.dirty.add(i)

    def refresh(self) -> None:
        for i in sorted(self.dirty):
            self._row(i)
        self.dirty.clear()

    def _row(self, i: int) -> None:
        ni = self.infos[i]
        res = node_resource(ni)
        for r in FIT_RESOURCES:
            self.alloc[r][i] = ni.allocatable.get(r)
            self.req[r][i] = ni.requested.get(r)
        self.alloc["pods"][i] = ni.allocatable.get("pods")
        self.npods[i] = len(ni.pods)
        self.cpu_left[i], self.cpu_cap[i] = res.milli_cpu_left, res.milli_cpu_capacity
        left = res.milli_gpu_left_list[:self.g]
        self.left[i] = 0
        self.left[i, :len(left)] = left
        self.ngpu[i] = res.gpu_number
        self.idle[i] = sum(res.milli_gpu_left_list)
        self.nfree[i] = res.fully_free_gpu_num()
        self.gpu_type[i] = res.gpu_type
        self.n_classes[i] = len(res.gpu_affinity)
        self.classes[i] = 0
        for tag, c in res.gpu_affinity.items():
            k = _class_index(tag)
            if k >= self.classes.shape[1]:          # a class wider than any node: grow the columns
                self.classes = np.pad(self.classes, ((0, 0), (0, k + 1 - self.classes.shape[1])))
            if k >= 0:
                self.classes[i, k] = c
        spec = ni.node.spec
        self.plain[i] = not spec.unschedulable and not any(t.effect in ("NoSchedule", "NoExecute") for t in spec.taints)
        if len(self.gpu_rows):
            row = np.asarray(res.milli_gpu_left_list, np.int64).reshape(1, -1)
            self.fitcnt[:, i] = (row >= self.t_d).sum(1)
            self.partial[:, i] = np.where(row < self.t_d, row, 0).sum(1)
        if self._frag_rows:
            self.frag[i] = self._frag_now(np.asarray([i]))[0]

    def _frag_now(self, cols: np.ndarray) -> np.ndarray:
        """F_n(M) of nodes as they are (node_frag_score of each, through _frag_after)."""
        return _frag_after(self, cols, self.cpu_left[cols], self.idle[cols], self.fitcnt[:, cols],
                           self.partial[:, cols])

    def access(self, pod_type: str) -> np.ndarray:
        m = self._access.get(pod_type)
        if m is None:
            m = np.fromiter((is_node_accessible_to_pod_by_type(t, pod_type) for t in self.gpu_type), bool,
                            len(self.gpu_type))
            self._access[pod_type] = m
        return m

    # --- what the replay measures ------------------------------------------------------------------------
    def total_frag(self) -> float:
        return float(self.frag.sum())

    def total_idle(self) -> int:
        return int(self.idle.sum())


def _class_index(tag: str) -> int:
    if tag == SHARE_GPU_TAG:
        return 0
    if tag == NO_GPU_TAG:
        return -1
    return int(tag.split("-", 1)[0])


def eligible(fw: Any, pi: PodInfo, skipped: set[str], table: GpuShareTable) -> bool:
    """Whether this profile and pod allow the vectorised path: Filter is exactly NodeResourcesFit and
    Open-Gpu-Share, every Score plugin is one of the six, the pod asks only for CPU and memory and names
    no node, and no node is tainted or cordoned (so no other filter would have anything to check)."""
    names = {p.name for p in fw.points["Filter"] if p.name not in skipped}
    if names != FILTERS or any(p.name not in SCORES for p in fw.points["Score"]):
        return False
    if any(r not in FIT_RESOURCES for r in pi.requests) or pi.pod.spec.node_name:
        return False
    return bool(table.plain.all())


def find_feasible(table: GpuShareTable, fw: Any, pi: PodInfo, start: int, want: int) -> tuple[list[int], int]:
    """findNodesThatPassFilters over all nodes at once: (feasible node indices in search order, number of
    nodes processed), stopping after ``want`` feasible as upstream."""
    n = len(table.infos)
    ok = table.npods + 1 <= table.alloc["pods"]
    for r in FIT_RESOURCES:
        q = pi.requests.get(r, 0)
        if q:
            ok &= q <= table.alloc[r] - table.req[r]
    pod = pod_resource(pi.pod)
    if pod.milli_gpu > 0:
        if pod.gpu_number <= 0:
            ok &= False
        else:
            room = (table.left // pod.milli_gpu).sum(1) if pod.gpu_number > 1 else (table.left >= pod.milli_gpu).sum(1)
            ok &= (table.ngpu > 0) & table.access(pod.gpu_type) & (room >= pod.gpu_number)
    pos = np.flatnonzero(np.concatenate((ok[start:], ok[:start])) if start else ok)
    if len(pos) >= want:
        processed = int(pos[want - 1]) + 1
        pos = pos[:want]
    else:
        processed = n
    return ((pos + start) % n).tolist(), processed


class _Infos:
    """The feasible NodeInfos, for PreScore plugins (RandomScore reads one name)."""

    def __init__(self, infos: list, idx: list[int]):
        self._infos, self._idx = infos, idx

    def __len__(self) -> int:
        return len(self._idx)

    def __getitem__(self, k):
        return self._infos[self._idx[k]]

    def __iter__(self):
        return (self._infos[i] for i in self._idx)


def score(table: GpuShareTable, fw: Any, state: Any, pi: PodInfo, feasible: list[int]) -> np.ndarray:
    """PreScore, Score, NormalizeScore and weights over the feasible nodes: the total per node."""
    infos = _Infos(table.infos, feasible)
    skipped = set()
    for p in fw.points["PreScore"]:
        if p.pre_score(state, pi, infos).code == Code.Skip:
            skipped.add(p.name)
    idx = np.asarray(feasible, np.int64)
    pod = pod_resource(pi.pod)
    totals = np.zeros(len(idx), np.int64)
    for p in fw.points["Score"]:
        if p.name in skipped:
            continue
        if p.name == randomscore.NAME:
            chosen = state.get(randomscore.PRE_SCORE_STATE_KEY)
            raw = np.zeros(len(idx), np.int64)
            if chosen in table.index:
                raw[idx == table.index[chosen]] = MAX_NODE_SCORE
        elif p.name == dotproductscore.NAME:
            raw = dot_product_scores(table, idx, pod, p.norm_method)
        elif p.name == gpuclusteringscore.NAME:
            raw = clustering_scores(table, idx, pod)
        elif p.name == gpupackingscore.NAME:
            raw = packing_scores(table, idx, pod)
        elif p.name == bestfitscore.NAME:
            raw = best_fit_normalized(best_fit_scores(table, idx, pod))
        elif p.name == fgdscore.NAME:
            raw = fgd_scores(table, idx, pi, pod)
        else:
            raise AssertionError(f"{p.name} has no vectorised score")
        totals += raw * fw.weights[p.name]
    return totals


# --- the six scores -------------------------------------------------------------------------------------
def dot_product_scores(table: GpuShareTable, idx: np.ndarray, pod: PodResource, norm_method: str) -> np.ndarray:
    """dotproductscore.dot_product_score, element by element in the same float order."""
    cpu = table.cpu_left[idx].astype(np.float64)
    gpu = table.idle[idx].astype(np.float64)
    pc, pg = float(pod.milli_cpu), float(pod.milli_gpu * pod.gpu_number)
    if norm_method == dotproductscore.NORM_NODE:
        sc, sg = table.cpu_cap[idx].astype(np.float64), (table.ngpu[idx] * MILLI).astype(np.float64)
        a0 = np.where(sc > 0, cpu / np.where(sc > 0, sc, 1.0), 0.0)
        a1 = np.where(sg > 0, gpu / np.where(sg > 0, sg, 1.0), 0.0)
        b0 = np.where(sc > 0, pc / np.where(sc > 0, sc, 1.0), 0.0)
        b1 = np.where(sg > 0, pg / np.where(sg > 0, sg, 1.0), 0.0)
    elif norm_method == dotproductscore.NORM_POD:
        a0 = cpu / pc if pc > 0 else np.zeros_like(cpu)
        a1 = gpu / pg if pg > 0 else np.zeros_like(gpu)
        b0, b1 = (pc / pc if pc > 0 else 0.0), (pg / pg if pg > 0 else 0.0)
    else:
        a0, a1 = cpu / float(MAX_SPEC_CPU), gpu / float(MAX_SPEC_GPU)
        b0, b1 = pc / float(MAX_SPEC_CPU), pg / float(MAX_SPEC_GPU)
    cur = (a0 * b0 + a1 * b1) / 2
    if norm_method == dotproductscore.NORM_POD:
        cur = _map_unique(cur, lambda x: math.tanh(x / 10))
    out = (float(MAX_NODE_SCORE) * (1 - cur)).astype(np.int64)
    return np.where(table.cpu_left[idx] < pod.milli_cpu, 0, out)


def clustering_scores(table: GpuShareTable, idx: np.ndarray, pod: PodResource) -> np.ndarray:
    """gpuclusteringscore.clustering_score."""
    tag = gpu_affinity_of(pod.milli_gpu, pod.gpu_number)
    if tag == NO_GPU_TAG:
        return np.zeros(len(idx), np.int64)
    busy = MAX_NODE_SCORE // 4 * (MAX_SPEC_GPU - table.idle[idx]) // MAX_SPEC_GPU
    k = _class_index(tag)
    has = table.classes[idx, k] > 0 if 0 <= k < table.classes.shape[1] else np.zeros(len(idx), bool)
    nc = table.n_classes[idx]
    tier = np.where(has, np.where(nc == 1, MAX_NODE_SCORE * 3 // 4, MAX_NODE_SCORE * 2 // 4),
                    np.where(nc == 0, MAX_NODE_SCORE // 4, 0))
    return busy + tier


def packing_scores(table: GpuShareTable, idx: np.ndarray, pod: PodResource) -> np.ndarray:
    """gpupackingscore.packing_score."""
    if pod.milli_gpu <= 0:
        return np.zeros(len(idx), np.int64)
    free, ngpu = table.nfree[idx], table.ngpu[idx]
    case3 = np.maximum(MAX_NODE_SCORE // 3 - free, free)
    left = table.left[idx]
    real = np.arange(table.g)[None, :] < np.minimum(ngpu, table.g)[:, None]
    fits = real & (left >= pod.milli_gpu)
    vals = np.sort(np.where(fits, left, MILLI + 1), axis=1)[:, :pod.gpu_number]
    enough = fits.sum(1) >= pod.gpu_number
    free_used = (vals == MILLI).sum(1)
    case2 = np.maximum(MAX_NODE_SCORE // 2 - free_used, MAX_NODE_SCORE // 3)
    ratio = np.where(vals <= MILLI, vals * 100 // MILLI, 0).sum(1)
    case1 = np.maximum(MAX_NODE_SCORE - ratio // 10, MAX_NODE_SCORE // 2)
    out = np.where(free_used > 0, case2, case1)
    out = np.where(enough, out, 0)
    return np.where(free == ngpu, case3, out)


def best_fit_scores(table: GpuShareTable, idx: np.ndarray, pod: PodResource) -> np.ndarray:
    """bestfitscore.best_fit_score (raw, before NormalizeScore)."""
    f0, f1 = table.cpu_left[idx].astype(np.float64), table.idle[idx].astype(np.float64)
    r0, r1 = float(pod.milli_cpu), float(pod.milli_gpu * pod.gpu_number)
    w0, w1 = bestfitscore.WEIGHTS
    s = (f0 - r0) / float(MAX_SPEC_CPU) * w0 + (f1 - r1) / float(MAX_SPEC_GPU) * w1
    out = ((1.0 - s) * float(MAX_NODE_SCORE)).astype(np.int64)
    return np.where((f0 < r0) | (f1 < r1), 0, out)


def best_fit_normalized(raw: np.ndarray) -> np.ndarray:
    """bestfitscore.normalize_scores."""
    if not len(raw):
        return raw
    hi, lo = int(raw.max()), int(raw.min())
    if hi == lo:
        return np.zeros(len(raw), np.int64)
    return (raw - lo) * MAX_NODE_SCORE // (hi - lo)


def _map_unique(x: np.ndarray, fn) -> np.ndarray:
    """Apply a scalar float function through its distinct values (exactly what the per-node path computes)."""
    u, inv = np.unique(x, return_inverse=True)
    return np.asarray([fn(float(v)) for v in u], np.float64)[inv.reshape(-1)]


def fgd_score_array(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """fgdscore.frag_score element by element: numpy's sigmoid, with the scalar function wherever the
    float lies within 1e-9 of an integer (where a last-bit difference could change the truncation)."""
    x = (before - after) / 1000
    v = 1.0 / (1.0 + np.exp(-x)) * MAX_NODE_SCORE
    out = v.astype(np.int64)
    near = (np.abs(v - np.rint(v)) < _EDGE) & (x != 0)     # x = 0 is exactly 50 either way
    if near.any():
        for k in np.flatnonzero(near):
            out[k] = fgdscore.frag_score(float(before[k]), float(after[k]))
    return out


def _frag_after(table: GpuShareTable, cols: np.ndarray, cpu: np.ndarray, idle: np.ndarray, fit: np.ndarray,
                part: np.ndarray) -> np.ndarray:
    """F_n(M) for hypothetical node states (one column each): CPU left, idle milli-GPU, and per GPU typical
    pod the GPUs that fit and the stranded partial milli-GPU; summed in typical-pod order, as node_frag_score
    adds them (a numpy reduction could pair the terms differently and change the last bits)."""
    n = len(cols)
    if not table.p:
        return np.zeros(n, np.float64)
    can = table.t_acc[:, cols] & (fit >= table.t_k) & (cpu[None, :] >= table.t_c)
    fm = np.where(can, part, idle[None, :])
    if n <= _FRAG_MATRIX_COLUMNS:
        # one row per typical pod (its GPU row of fm, or the idle milli-GPU), added row after row
        terms = table.p_col * np.vstack((fm, idle[None, :]))[table.frag_rows]
        return np.add.accumulate(terms, axis=0, out=terms)[-1]
    # wide: a large temporary matrix costs more (fresh pages) than a loop of row operations
    total, term = np.zeros(n, np.float64), np.empty(n, np.float64)
    rows = [*fm, idle]
    for p, r in zip(table.p, table.frag_rows):
        np.multiply(rows[r], p, out=term)
        total += term
    return total


_FRAG_MATRIX_COLUMNS = 128   # up to this many columns _frag_after adds a (typical pods × columns) matrix


def fgd_scores(table: GpuShareTable, idx: np.ndarray, pi: PodInfo, pod: PodResource) -> np.ndarray:
    """fgdscore.FGDScore.score over the feasible nodes."""
    if not pi.requests:
        return np.full(len(idx), MAX_NODE_SCORE, np.int64)
    acc = table.access(pod.gpu_type)[idx]
    before = table.frag[idx]
    c, d, k = pod.milli_cpu, pod.milli_gpu, pod.gpu_number
    if k == 1 and d < MILLI:
        out = _fgd_share(table, idx, before, c, d)
    elif k == 0 or d == 0 or d == MILLI:
        cpu = table.cpu_left[idx]
        ok = (cpu >= c) & (table.ngpu[idx] >= k)          # NodeResource.Sub leaves the node as it was otherwise
        cpu2 = np.where(ok, cpu - c, cpu)
        take = np.where(ok, k * (d == MILLI), 0)
        after = _frag_after(table, idx, cpu2, table.idle[idx] - MILLI * take, table.fitcnt[:, idx] - take[None, :],
                            table.partial[:, idx])
        out = fgd_score_array(before, after)
    else:   # several GPUs of less than one each: the per-node helper
        out = np.asarray([fgdscore.calculate_gpu_share_frag_extend_score(node_resource(table.infos[int(i)]), pod,
                                                                         table.typical)[0] for i in idx], np.int64)
    return np.where(acc, out, 0)


def _fgd_share(table: GpuShareTable, idx: np.ndarray, before: np.ndarray, c: int, d: int) -> np.ndarray:
    """A sharing pod: every distinct free value on every feasible node is a candidate GPU; the node's
    score is its best candidate's."""
    left = table.left[idx]
    real = np.arange(table.g)[None, :] < np.minimum(table.ngpu[idx], table.g)[:, None]
    srt = np.sort(np.where(real & (left >= d), left, -1), axis=1)
    first = np.ones_like(srt, bool)
    first[:, 1:] = srt[:, 1:] != srt[:, :-1]
    cand = (srt >= d) & first
    rows, gpus = np.nonzero(cand)
    out = np.zeros(len(idx), np.int64)
    if not len(rows):
        return out
    v = srt[rows, gpus]
    cols = idx[rows]
    v2 = v - d
    td = table.t_d
    fit = table.fitcnt[:, cols] - (v[None, :] >= td) + (v2[None, :] >= td)
    part = table.partial[:, cols] - np.where(v[None, :] < td, v[None, :], 0) + np.where(v2[None, :] < td, v2[None, :], 0)
    after = _frag_after(table, cols, table.cpu_left[cols] - c, table.idle[cols] - d, fit, part)
    s = fgd_score_array(before[rows], after)
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
    out[rows[starts]] = np.maximum.reduceat(s, starts)
    return out
