"""Collective-communication cost: the ring all-reduce time of a job from its placement, and bus bandwidth as
nccl-tests reports it.

Implements the gpusim model of the topology reference (``/work/shared/reference/topology.md`` §3.3, DERIVED from
NCCL's tuning model ``src/graph/tuning.cc`` and measured anchors), exactly:

1. One node (M = 1): ``B = B_intra(set)``. NVSwitch boards: A100 230, H100/H200 370 (ring) or 480 (NVLS, all
   8 GPUs), GB200 721 (NCCL model, 18 × 40.1). PCIe boards: the best ring's slowest edge, an edge's bandwidth by
   its class: ``PIX``/``PXB`` the PCIe link (24 on Gen4), ``PHB``/``NODE`` the PCIe link through the host (÷1.2 on
   Intel, NCCL ``INTEL_P2P_OVERHEAD``), ``SYS`` the SMP constant (22 Sapphire Rapids, 16 AMD; ``topo.h``), shared
   by the ring's crossings in the same direction (so the best 8x L40S ring crosses the sockets once each way and
   its slowest edges are the two ``PHB`` hops: 20, the reference's estimate).
2. Several nodes (M ≥ 2): ``B = min_i min(B_intra_i · g_i/(g_i − 1) [skipped when g_i = 1],
   r_i · B_nic · f_gdr_i · f_fabric)``; g_i = the job's GPUs on node i, r_i = distinct NICs (rails) they use,
   ``B_nic`` 12 (EDR), 24 (HDR), 48 (NDR), 96 (XDR), ``f_gdr`` = 1 if the GPU–NIC path is at most ``PXB`` (NCCL
   ``NCCL_NET_GDR_LEVEL`` default; on C2C boards also when the NIC hangs off the GPU's own CPU, NCCL
   ``NCCL_NET_GDR_C2C=1``), else 0.67; ``f_fabric`` = 1 when every ring edge stays under one leaf, or the fabric
   is idle and non-blocking, else the smallest fair share of a crossing flow (:meth:`Fabric.flow_shares`).
3. ``T = L + S · 2(n−1)/n / B``, ``L = 8.4 + (2(n−1) − 2(M−1))·α_intra + 2(M−1)·α_inter`` µs, α_intra 3.4 (NVLink)
   or 5.7 (PCIe), raised to ``3 × netOverhead`` (1 µs Intel/Arm, 2 µs AMD: ``getNetOverhead``) when M > 1,
   α_inter 14 µs; the optional ×1.4 multi-node Simple plateau factor (``plateau=True``).
4. ``step = T_compute + (1 − φ)·T_allreduce``.

Rings: ranks follow the placement order (node after node, GPUs by index). NCCL runs one ring per NIC (rail); ring
channel k leaves node i through its k-th NIC (rails sorted, cycling when a node has fewer) and enters node i+1
through that node's k-th NIC, so two nodes that use different GPU indices pair different rails (rail mismatch).

Two choices the reference does not settle, documented here: (a) a direct-NVLink board without NVSwitch (DGX-1V)
gets, as NCCL's ring search does, the sum over greedily found NVLink rings (each the best-bottleneck directed
Hamiltonian cycle on the remaining link capacity; 120 GB/s for all 8 GPUs: the NV2 cycle and the NV1 cycle, both
directions); a GPU set with no all-NVLink ring falls back to the PCIe rule; (b) nodes in one multi-node NVLink
domain (same ``nvidia.com/gpu.clique``, ``mnnvl=True``) count as one "node" of the formula, with the GB200
NVLink bandwidth: the ring crosses the NVL72 crossbar, not the NICs.

Bus bandwidth (nccl-tests ``doc/PERFORMANCE.md``): ``algbw = S / t``, ``busbw = algbw · 2(n−1)/n`` for all-reduce,
GB = 10⁹ bytes.
"""
from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import networkx as nx

from . import topology
from .fabric import Fabric

# topology.md §3.3 / §3.2: intra-node all-reduce bus bandwidth of NVSwitch boards by SM, (ring, NVLS for 8 GPUs).
NVSWITCH_BUSBW = {80: (230.0, None), 90: (370.0, 480.0), 100: (721.0, None)}
# §3.3 B_nic: what one NIC delivers to NCCL (GB/s), by link speed (Gb/s). 800G is the NDR value doubled (DERIVED).
B_NIC = {100: 12.0, 200: 24.0, 400: 48.0, 800: 96.0}
F_GDR_HOST = 0.67                      # §3.3: NIC behind the CPU, 16/24 (nccl#412; UNVERIFIED as general)
INTEL_P2P_OVERHEAD = 1.2               # NCCL topo.h: GPU-GPU through an Intel CPU charged x6/5
BASE_LATENCY_US = 8.4                  # tuning.cc ring Simple base latency
ALPHA_NVLINK_US, ALPHA_PCIE_US, ALPHA_INTER_US = 3.4, 5.7, 14.0
NET_OVERHEAD_US = {"intel": 1.0, "amd": 2.0, "arm": 1.0}
PLATEAU_FACTOR = 1.4                   # multi-node Simple, SM >= 80
GB = 1e9


def allreduce_bus_factor(n: int) -> float:
    """nccl-tests' all-reduce bus factor ``2(n−1)/n``."""
    return 2.0 * (n - 1) / n if n > 0 else 0.0


def alg_bandwidth(size_bytes: float, seconds: float) -> float:
    """nccl-tests ``algbw`` in GB/s."""
    return size_bytes / GB / seconds if seconds > 0 else 0.0


def bus_bandwidth(size_bytes: float, seconds: float, n: int) -> float:
    """nccl-tests all-reduce ``busbw`` in GB/s: ``algbw · 2(n−1)/n``."""
    return alg_bandwidth(size_bytes, seconds) * allreduce_bus_factor(n)


def step_time(compute_seconds: float, allreduce_seconds: float, overlap: float = 0.0) -> float:
    """§3.3 step 4: ``T_compute + (1 − φ)·T_allreduce``; φ (``gpusim.io/allreduce-overlap``) in [0, 1)."""
    if not 0.0 <= overlap < 1.0:
        raise ValueError(f"overlap: must be in [0, 1), got {overlap!r}")
    return compute_seconds + (1.0 - overlap) * allreduce_seconds


@dataclass(frozen=True)
class NodePlacement:
    """The job's GPUs (indices) on one node, whose board is ``server``."""
    node: str
    server: nx.Graph
    gpus: tuple[int, ...]


@dataclass(frozen=True)
class DomainTerm:
    """One "node" of the §3.3 formula (a node, or a multi-node NVLink domain) and its two bounds."""
    nodes: tuple[str, ...]
    gpus: int
    rails: tuple[tuple[str, int], ...]
    intra: float                        # B_intra of the set
    intra_bound: Optional[float]        # B_intra · g/(g−1), None when g = 1
    nic: float                          # B_nic of its NICs
    f_gdr: float
    nic_bound: float                    # r · B_nic · f_gdr · f_fabric


@dataclass(frozen=True)
class AllReduceCost:
    """The result: bus bandwidth ``B`` (GB/s), time, latency, and how it came about."""
    size_bytes: float
    ranks: int
    domains: int
    bandwidth: float                    # B, GB/s
    latency_us: float
    seconds: float
    f_fabric: float
    bottleneck: str
    terms: tuple[DomainTerm, ...] = ()
    flows: tuple[dict[str, Any], ...] = ()

    @property
    def bus_bandwidth(self) -> float:
        """busbw nccl-tests would print for this all-reduce (latency included)."""
        return bus_bandwidth(self.size_bytes, self.seconds, self.ranks)

    @property
    def alg_bandwidth(self) -> float:
        return alg_bandwidth(self.size_bytes, self.seconds)


# --- intra-node bandwidth ---------------------------------------------------------------------------------------

def _cap(server: nx.Graph) -> float:
    return topology.PCIE_BW[max(d.get("gen", 3) for _, _, d in server.edges(data=True) if d["kind"] == "pcie")][1]


def p2p_bandwidth(server: nx.Graph, a: int, b: int) -> float:
    """NCCL-model bandwidth (GB/s) of one ring edge between GPUs ``a`` and ``b`` on ``server``: its NVLink
    (links × per-link) or the PCIe rule of §3.3 step 1."""
    ga, gb = topology.gpu_node(server, a), topology.gpu_node(server, b)
    if server.has_edge(ga, gb) and server.edges[ga, gb]["kind"] == "nvlink":
        return server.edges[ga, gb]["bw_nccl"]
    cls = topology.pcie_class(server, ga, gb)
    pcie = _cap(server)
    if cls in ("PIX", "PXB"):
        return pcie
    if cls in ("PHB", "NODE"):
        return pcie / INTEL_P2P_OVERHEAD if server.graph["cpu_vendor"] == "intel" else pcie
    return min(pcie, server.graph["smp_bw"])


def _best_ring(gpus: Sequence[int], ring_bw) -> tuple[float, Optional[tuple[int, ...]]]:
    """The directed ring (Hamiltonian cycle) through ``gpus`` with the highest ``ring_bw(order)``."""
    first, rest = gpus[0], list(gpus[1:])
    best, ring = 0.0, None
    for perm in itertools.permutations(rest):
        order = (first, *perm)
        low = ring_bw(order)
        if low > best:
            best, ring = low, order
    return best, ring


def _pair_table(server: nx.Graph, gpus: Sequence[int]) -> dict[tuple[int, int], tuple[str, float, tuple[int, int]]]:
    """(a, b) → (class, p2p bandwidth, (numa a, numa b)) for every ordered pair of ``gpus``."""
    numa = topology.gpu_numa(server)
    out = {}
    for a in gpus:
        for b in gpus:
            if a != b:
                ga, gb = f"gpu{a}", f"gpu{b}"
                direct = server.has_edge(ga, gb) and server.edges[ga, gb]["kind"] == "nvlink"
                out[(a, b)] = ("NV" if direct else topology.pcie_class(server, ga, gb), p2p_bandwidth(server, a, b),
                               (numa[a], numa[b]))
    return out


def _ring_bw(table, smp: float, pcie: float, order: Sequence[int]) -> float:
    arcs = [(order[i], order[(i + 1) % len(order)]) for i in range(len(order))]
    crossings: dict[tuple[int, int], int] = {}
    for arc in arcs:
        if table[arc][0] == "SYS":
            crossings[table[arc][2]] = crossings.get(table[arc][2], 0) + 1
    return min(min(pcie, smp / crossings[table[arc][2]]) if table[arc][0] == "SYS" else table[arc][1]
               for arc in arcs)


def ring_bandwidth(server: nx.Graph, order: Sequence[int]) -> float:
    """Bandwidth of one ring over GPUs in ``order`` on a board: its slowest edge (:func:`p2p_bandwidth`), where the
    ring's ``SYS`` edges going the same way between two NUMA nodes share that SMP link."""
    return _ring_bw(_pair_table(server, order), server.graph["smp_bw"], _cap(server), order)


def _nvlink_rings(server: nx.Graph, gpus: Sequence[int]) -> float:
    """Sum of greedily packed all-NVLink rings (choice (a) of the module docstring); 0 if there is none."""
    arcs = []
    for a in gpus:
        for b in gpus:
            ga, gb = f"gpu{a}", f"gpu{b}"
            if a != b and server.has_edge(ga, gb) and server.edges[ga, gb]["kind"] == "nvlink":
                arcs.append((a, b, server.edges[ga, gb]["bw_nccl"]))
    return _pack_rings(tuple(sorted(gpus)), tuple(arcs)) if arcs else 0.0


@functools.lru_cache(maxsize=256)
def _pack_rings(gpus: tuple[int, ...], arcs: tuple[tuple[int, int, float], ...]) -> float:
    if len(gpus) > MAX_RING_SEARCH:
        raise ValueError(f"NVLink ring search is limited to {MAX_RING_SEARCH} GPUs per node, got {len(gpus)}")
    cap = {(a, b): bw for a, b, bw in arcs}
    total = 0.0
    for _ in range(4 * len(gpus)):
        low, ring = _best_ring(list(gpus), lambda o: min(cap.get((o[i], o[(i + 1) % len(o)]), 0.0)
                                                          for i in range(len(o))))
        if ring is None or low <= 1e-9:
            break
        total += low
        for i in range(len(ring)):
            cap[(ring[i], ring[(i + 1) % len(ring)])] -= low
    return round(total, 6)


def intra_bandwidth(server: nx.Graph, gpus: Sequence[int], algorithm: str = "ring") -> float:
    """``B_intra`` (GB/s) of the GPU set on one board: NVSwitch constant, NVLink rings, or the PCIe ring rule.
    ``algorithm`` ``nvls`` (or ``auto``) uses NVLS on an 8-GPU Hopper board when all 8 GPUs take part."""
    gpus = sorted(set(gpus))
    for i in gpus:
        topology.gpu_node(server, i)
    if len(gpus) < 2:
        return float("inf")
    if server.graph["nvswitch"]:
        ring, nvls = NVSWITCH_BUSBW[server.graph["sm"]]
        if algorithm in ("auto", "nvls") and nvls is not None and len(gpus) == len(topology.gpus(server)) == 8:
            return nvls
        return ring
    nvl = _nvlink_rings(server, gpus)
    if nvl > 0:
        return nvl
    table = _pair_table(server, gpus)
    return _best_pcie_ring(tuple(gpus), tuple(sorted(table.items())), server.graph["smp_bw"], _cap(server))


MAX_RING_SEARCH = 8     # GPUs; a larger PCIe set is evaluated in index order (switch by switch, socket by socket)


@functools.lru_cache(maxsize=256)
def _best_pcie_ring(gpus: tuple[int, ...], table_items: tuple, smp: float, pcie: float) -> float:
    table = dict(table_items)
    if len(gpus) > MAX_RING_SEARCH:
        return _ring_bw(table, smp, pcie, gpus)
    low, _ = _best_ring(list(gpus), lambda o: _ring_bw(table, smp, pcie, o))
    return low


def _intra_alpha(server: nx.Graph, gpus: Sequence[int]) -> float:
    if server.graph["nvswitch"] or (len(gpus) > 1 and _nvlink_rings(server, gpus) > 0):
        return ALPHA_NVLINK_US
    return ALPHA_PCIE_US


def f_gdr(server: nx.Graph, gpu: int) -> float:
    """1 if GPUDirect RDMA applies between the GPU and its NIC (path ≤ ``PXB``, or the C2C rule), else 0.67."""
    g = topology.gpu_node(server, gpu)
    nic = server.nodes[g]["nic"]
    if nic is None:
        raise ValueError(f"{server.graph['board']}: GPU {gpu} has no NIC to leave the node through")
    cls = topology.pcie_class(server, g, f"nic{nic}")
    if topology.class_rank(cls) <= topology.class_rank("PXB"):
        return 1.0
    c2c = any(server.edges[g, n]["kind"] == "c2c" for n in server.neighbors(g))
    if c2c and server.nodes[f"nic{nic}"]["numa"] == server.nodes[g]["numa"]:
        return 1.0
    return F_GDR_HOST


# --- the formula ------------------------------------------------------------------------------------------------

def _placements(placement: Sequence[Any]) -> list[NodePlacement]:
    out = []
    for p in placement:
        p = p if isinstance(p, NodePlacement) else NodePlacement(p[0], p[1], tuple(p[2]))
        if not p.gpus:
            continue
        if len(set(p.gpus)) != len(p.gpus):
            raise ValueError(f'node "{p.node}": GPU indices repeat in {list(p.gpus)}')
        for i in p.gpus:
            topology.gpu_node(p.server, i)
        out.append(NodePlacement(p.node, p.server, tuple(sorted(p.gpus))))
    names = [p.node for p in out]
    if len(set(names)) != len(names):
        raise ValueError("placement: a node appears twice; give each node's GPUs once")
    return out


def allreduce(placement: Sequence[Any], size_bytes: float, fabric: Optional[Fabric] = None, *,
              algorithm: str = "auto", mnnvl: bool = True, plateau: bool = False) -> AllReduceCost:
    """The §3.3 ring all-reduce of ``size_bytes`` over the placement: a sequence of :class:`NodePlacement` or
    ``(node, server_graph, gpu_indices)`` in rank order. ``fabric`` None = idle and non-blocking."""
    if algorithm not in ("auto", "ring", "nvls"):
        raise ValueError(f"algorithm: must be auto, ring or nvls, got {algorithm!r}")
    if size_bytes < 0:
        raise ValueError(f"size_bytes: must be >= 0, got {size_bytes!r}")
    ps = _placements(placement)
    n = sum(len(p.gpus) for p in ps)
    if n == 0:
        raise ValueError("placement: no GPUs")
    if n == 1:
        return AllReduceCost(size_bytes, 1, 1, float("inf"), 0.0, 0.0, 1.0, "single rank")

    # group into "nodes" of the formula: a node, or nodes sharing a multi-node NVLink domain
    groups: list[list[NodePlacement]] = []
    by_domain: dict[str, list[NodePlacement]] = {}
    for p in ps:
        dom = topology.nvl_domain(p.server) if mnnvl else None
        if dom is None:
            groups.append([p])
        elif dom in by_domain:
            by_domain[dom].append(p)
        else:
            by_domain[dom] = [p]
            groups.append(by_domain[dom])
    m = len(groups)

    def group_intra(group: list[NodePlacement], algo: str) -> float:
        if len(group) == 1:
            return intra_bandwidth(group[0].server, group[0].gpus, algo)
        return NVSWITCH_BUSBW[group[0].server.graph["sm"]][0]

    if m == 1:
        b = group_intra(groups[0], algorithm)
        alpha = max(_intra_alpha(p.server, p.gpus) for p in groups[0]) if len(groups[0]) == 1 else ALPHA_NVLINK_US
        latency = BASE_LATENCY_US + 2 * (n - 1) * alpha
        seconds = (latency * 1e-6) + size_bytes * allreduce_bus_factor(n) / (b * GB)
        rails = tuple((p.node, topology.gpu_rail(p.server)[i]) for p in groups[0] for i in p.gpus)
        term = DomainTerm(tuple(p.node for p in groups[0]), n, tuple(sorted(set(rails))), b, None, 0.0, 1.0,
                          float("inf"))
        return AllReduceCost(size_bytes, n, 1, b, latency, seconds, 1.0,
                             "NVLink domain" if len(groups[0]) > 1 else "intra-node", (term,))

    # rails per group and the inter-node ring flows
    group_rails: list[list[tuple[str, int]]] = []
    for group in groups:
        rs = sorted({(p.node, topology.gpu_rail(p.server)[i]) for p in group for i in p.gpus},
                    key=lambda x: ([q.node for q in group].index(x[0]), x[1]))
        if any(r is None for _, r in rs):
            raise ValueError(f'node "{group[0].node}": a GPU of the job has no NIC')
        group_rails.append(rs)
    channels = max(len(rs) for rs in group_rails)
    flows = []
    for k in range(channels):
        for i in range(m):
            src = group_rails[i][k % len(group_rails[i])]
            dst = group_rails[(i + 1) % m][k % len(group_rails[(i + 1) % m])]
            flows.append((src, dst))
    shares = fabric.flow_shares(flows) if fabric is not None else [1.0] * len(flows)
    f_fabric = min(shares) if shares else 1.0
    flow_rows = tuple({"from": f"{a[0]}/nic{a[1]}", "to": f"{b[0]}/nic{b[1]}",
                       "tier": fabric.crossing(a[0], a[1], b[0], b[1]).tier if fabric is not None else None,
                       "share": s} for (a, b), s in zip(flows, shares))

    terms = []
    for group, rs in zip(groups, group_rails):
        g = sum(len(p.gpus) for p in group)
        intra = group_intra(group, "ring")
        intra_bound = intra * g / (g - 1) if g > 1 else None
        speeds = [fabric.nic_speed[p.node] if fabric is not None and p.node in fabric.nic_speed
                  else min(p.server.nodes[f"nic{p.server.nodes[f'gpu{i}']['nic']}"]["speed_gbps"] for i in p.gpus)
                  for p in group]
        b_nic = B_NIC[min(speeds)]
        gdr = min(f_gdr(p.server, i) for p in group for i in p.gpus)
        terms.append(DomainTerm(tuple(p.node for p in group), g, tuple(rs), intra, intra_bound, b_nic, gdr,
                                len(rs) * b_nic * gdr * f_fabric))
    b, bottleneck = float("inf"), ""
    for t in terms:
        if t.intra_bound is not None and t.intra_bound < b:
            b, bottleneck = t.intra_bound, f"NVLink/PCIe inside {t.nodes[0]}"
        if t.nic_bound < b:
            why = "fabric" if f_fabric < 1 else "GPUDirect RDMA off" if t.f_gdr < 1 else f"{len(t.rails)} NIC(s)"
            b, bottleneck = t.nic_bound, f"{why} at {t.nodes[0]}"
    vendors = [p.server.graph["cpu_vendor"] for grp in groups for p in grp]
    alpha_intra = max(max(_intra_alpha(p.server, p.gpus) for grp in groups for p in grp),
                      3 * max(NET_OVERHEAD_US[v] for v in vendors))
    latency = BASE_LATENCY_US + (2 * (n - 1) - 2 * (m - 1)) * alpha_intra + 2 * (m - 1) * ALPHA_INTER_US
    if plateau:
        latency *= PLATEAU_FACTOR
    seconds = latency * 1e-6 + size_bytes * allreduce_bus_factor(n) / (b * GB)
    return AllReduceCost(size_bytes, n, m, b, latency, seconds, f_fabric, bottleneck, tuple(terms), flow_rows)
