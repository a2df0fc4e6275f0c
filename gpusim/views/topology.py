"""Topology pictures: a server graph with a pod's GPUs highlighted, a cluster fabric with a job's ring drawn,
and step time against placement.

Read-only views of plain data: server graphs from :mod:`gpusim.hardware.topology`, fabrics from
:mod:`gpusim.hardware.fabric`, all-reduce results from :mod:`gpusim.hardware.collectives` (or lists of dicts),
and the same taken from a finished run (``draw_node``, ``draw_group_ring``, ``plot_run_step_time``, ``topo_m``:
the run's boards and fabric in ``result.ctx.topology``, its devices in the kubelet's records, its training groups'
placements). They never drive a simulation.
"""
from __future__ import annotations

import textwrap
from typing import Any, Iterable, Mapping, Optional, Sequence

import matplotlib.pyplot as plt
import networkx as nx

from ..hardware import topology as topo
from ..hardware.fabric import Fabric

EDGE_STYLE = {"nvlink": ("#76b900", 2.2), "pcie": ("#555555", 1.0), "smp": ("#9467bd", 1.6), "c2c": ("#17becf", 2.0),
              "ib": ("#1f77b4", 0.6)}
HIGHLIGHT, GPU_COLOR, NIC_COLOR, SWITCH_COLOR, NUMA_COLOR = "#ff7f0e", "#d9d9d9", "#9ecae1", "#f0f0f0", "#dadaeb"


def _root(g: nx.Graph, n: str) -> str:
    cur = g.nodes[n]["upstream"]
    while g.nodes[cur]["kind"] == "pcie_switch":
        cur = g.nodes[cur]["upstream"]
    return cur


def server_layout(g: nx.Graph) -> dict[str, tuple[float, float]]:
    """Layered positions: NUMA nodes at the bottom, PCIe switches above, GPUs and NICs, NVSwitch on top."""
    def top_of(n: str) -> str:
        cur = n
        while g.nodes[g.nodes[cur]["upstream"]]["kind"] == "pcie_switch":
            cur = g.nodes[cur]["upstream"]
        return cur
    devices = topo.gpus(g) + topo.nics(g)
    numa_order = {n: i for i, n in enumerate(sorted((n for n, d in g.nodes(data=True) if d["kind"] == "numa"),
                                                    key=lambda n: g.nodes[n]["id"]))}

    def key(n: str):
        first = min((g.nodes[d]["index"] for d in devices if top_of(d) == top_of(n)), default=0)
        return (first, top_of(n), g.nodes[n]["kind"] != "gpu", g.nodes[n]["index"])
    pos: dict[str, tuple[float, float]] = {}
    x, by_numa = 0.0, {n: [] for n in numa_order}
    for n in devices:
        by_numa[_root(g, n)].append(n)
    for numa in numa_order:          # NUMA nodes left to right; one slot for a NUMA node without devices
        members = sorted(by_numa[numa], key=key)
        for n in members:
            pos[n] = (x, 2.4 if g.nodes[n]["kind"] == "gpu" else 2.0)
            x += 1.0
        if not members:
            pos[numa] = (x, 0.0)
            x += 1.0
        x += 0.4
    switches = [n for n, d in g.nodes(data=True) if d["kind"] == "pcie_switch"]
    for _ in range(4):               # sub-switches first, then the switches above them
        for s in switches:
            kids = [c for c in g.neighbors(s) if g.nodes[c].get("upstream") == s]
            if s not in pos and kids and all(c in pos for c in kids):
                is_top = g.nodes[g.nodes[s]["upstream"]]["kind"] == "numa"
                pos[s] = (sum(pos[c][0] for c in kids) / len(kids), 1.0 if is_top else 1.5)
    for n in numa_order:
        kids = [c for c in g.neighbors(n) if g.nodes[c].get("upstream") == n and c in pos]
        if kids:
            pos[n] = (sum(pos[c][0] for c in kids) / len(kids), 0.0)
    gpu_x = [pos[n][0] for n in topo.gpus(g)]
    for n, d in g.nodes(data=True):
        if d["kind"] == "nvswitch":
            pos[n] = (sum(gpu_x) / len(gpu_x), 3.4)
    return pos


def draw_server(g: nx.Graph, highlight: Iterable[int] = (), ax=None, title: Optional[str] = None):
    """The board's graph; GPUs whose index is in ``highlight`` (a pod's devices) in orange, labelled with their
    NUMA node; NVLink edges in green (direct NVLink drawn as arcs with their link count)."""
    chosen = set(highlight)
    pos = server_layout(g)
    if ax is None:
        width = max(7.0, 0.75 * (len(topo.gpus(g)) + len(topo.nics(g))))
        _, ax = plt.subplots(figsize=(width, 4.6))
    direct = []
    for a, b, d in g.edges(data=True):
        color, lw = EDGE_STYLE[d["kind"]]
        if d["kind"] == "smp":
            continue
        if d["kind"] == "nvlink" and g.nodes[a]["kind"] == "gpu" and g.nodes[b]["kind"] == "gpu":
            direct.append((a, b, d))
            continue
        ax.plot([pos[a][0], pos[b][0]], [pos[a][1], pos[b][1]], color=color, linewidth=lw, zorder=1)
    for a, b, d in direct:
        (xa, ya), (xb, yb) = pos[a], pos[b]
        rad = 0.35 if abs(xa - xb) > 1.5 else 0.0
        ax.annotate("", xy=(xb, yb), xytext=(xa, ya), zorder=1,
                    arrowprops=dict(arrowstyle="-", color=EDGE_STYLE["nvlink"][0], linewidth=1.2 * d["links"],
                                    connectionstyle=f"arc3,rad={-rad}"))
    for n, d in g.nodes(data=True):
        x, y = pos[n]
        kind = d["kind"]
        if kind == "gpu":
            face = HIGHLIGHT if d["index"] in chosen else GPU_COLOR
            ax.text(x, y, f"GPU{d['index']}\nNUMA {d['numa']}", ha="center", va="center", fontsize=7, zorder=3,
                    bbox=dict(boxstyle="round", facecolor=face, edgecolor="black", linewidth=0.8))
        elif kind == "nic":
            label = f"NIC{d['index']}\n{d['rdma']}" + (f"\nrail {d['rail']}" if d["rail"] is not None else "")
            ax.text(x, y, label, ha="center", va="center", fontsize=6, zorder=3,
                    bbox=dict(boxstyle="round", facecolor=NIC_COLOR if d["role"] == "compute" else "white",
                              edgecolor="#3182bd", linewidth=0.8))
        elif kind == "pcie_switch":
            if g.nodes[d["upstream"]]["kind"] == "numa":
                ax.text(x, y, "PCIe\nswitch" if "." not in n else "", ha="center", va="center", fontsize=6, zorder=3,
                        bbox=dict(boxstyle="square", facecolor=SWITCH_COLOR, edgecolor="grey", linewidth=0.6))
            else:
                ax.plot([x], [y], "s", color="grey", markersize=4, zorder=3)
        elif kind == "numa":
            ax.text(x, y, f"NUMA {d['id']}\nCPUs {d['cpus']}", ha="center", va="center", fontsize=6, zorder=3,
                    bbox=dict(boxstyle="round", facecolor=NUMA_COLOR, edgecolor="#6a51a3", linewidth=0.8))
        elif kind == "nvswitch":
            label = ("NVLink domain (NVL72)" if d.get("nvl_domain") else
                     f"NVSwitch x{d.get('chips', 1)}")
            ax.text(x, y, label, ha="center", va="center", fontsize=8, zorder=3,
                    bbox=dict(boxstyle="round", facecolor="#e5f5e0", edgecolor=EDGE_STYLE["nvlink"][0]))
    numas = [n for n, d in g.nodes(data=True) if d["kind"] == "numa"]
    if len(numas) > 1:
        xs = sorted(pos[n][0] for n in numas)
        ax.plot([xs[0], xs[-1]], [-0.35, -0.35], color=EDGE_STYLE["smp"][0], linewidth=EDGE_STYLE["smp"][1])
        ax.text(xs[-1], -0.55, "SMP interconnect (SYS)", ha="right", va="center", fontsize=7,
                color=EDGE_STYLE["smp"][0])
    xs = [p[0] for p in pos.values()]
    ax.set_xlim(min(xs) - 0.8, max(xs) + 0.8)
    ax.set_ylim(-0.8, 3.9)
    ax.axis("off")
    picked = f" (GPUs {', '.join(map(str, sorted(chosen)))} highlighted)" if chosen else ""
    ax.set_title(title or "\n".join(textwrap.wrap(f"{g.graph['board']}: {g.graph['description']}{picked}", 90)),
                 fontsize=9)
    return ax


def _fabric_layout(fabric: Fabric) -> dict[str, tuple[float, float]]:
    g = fabric.graph
    eps = [n for n, d in g.nodes(data=True) if d["kind"] == "nic"]
    order = {node: i for i, node in enumerate(fabric.nodes)}
    eps.sort(key=lambda e: (order[g.nodes[e]["node"]], g.nodes[e]["rail"]))
    pos: dict[str, tuple[float, float]] = {}
    x = 0.0
    last = None
    for e in eps:
        node = g.nodes[e]["node"]
        if last is not None and node != last:
            x += 0.6
        pos[e] = (x, 0.0)
        x += 1.0
        last = node
    leaves = [n for n, d in g.nodes(data=True) if d["kind"] == "leaf"]
    for leaf in leaves:
        kids = [pos[e] [0] for e in g.neighbors(leaf) if g.nodes[e]["kind"] == "nic"]
        pos[leaf] = (sum(kids) / len(kids) if kids else 0.0, 1.0)
    if fabric.spec.type == "RailOptimized":   # spread leaves of one SU so rails do not overlap
        by_su: dict[int, list[str]] = {}
        for leaf in leaves:
            by_su.setdefault(g.nodes[leaf]["su"], []).append(leaf)
        for su, ls in by_su.items():
            ls.sort(key=lambda l: g.nodes[l]["rail"])
            xs = [pos[e][0] for l in ls for e in g.neighbors(l) if g.nodes[e]["kind"] == "nic"]
            lo, hi = min(xs), max(xs)
            for i, l in enumerate(ls):
                pos[l] = (lo + (hi - lo) * (i + 0.5) / len(ls), 1.0)
    spines = sorted((n for n, d in g.nodes(data=True) if d["kind"] == "spine"), key=lambda n: int(n[5:]))
    span = max((p[0] for p in pos.values()), default=1.0)
    for i, s in enumerate(spines):
        if fabric.spec.type == "Tree":
            kids = [pos[l][0] for l in g.neighbors(s) if g.nodes[l]["kind"] == "leaf"]
            pos[s] = (sum(kids) / len(kids), 2.0)
        else:
            pos[s] = (span * (i + 0.5) / len(spines), 2.0)
    if "core" in g:
        pos["core"] = (span / 2, 3.0)
    return pos


def _flow_path(fabric: Fabric, src: str, dst: str) -> list[str]:
    g = fabric.graph
    a, b = g.nodes[src], g.nodes[dst]
    c = fabric.crossing(a["node"], a["rail"], b["node"], b["rail"])
    if c.tier in ("local", "nvlink"):
        return [src, dst]
    if c.tier == "leaf":
        return [src, c.switches[0], dst]
    if fabric.spec.type == "RailOptimized":
        spines = sorted((n for n, d in g.nodes(data=True) if d["kind"] == "spine"), key=lambda n: int(n[5:]))
        spine = spines[(a["rail"] + b["rail"]) % len(spines)]
        return [src, c.switches[0], spine, c.switches[-1], dst]
    return [src, *c.switches, dst]


def draw_fabric(fabric: Fabric, ring: Any = None, ax=None, title: Optional[str] = None):
    """The fabric (switch tiers above the nodes' NICs); ``ring`` (an :class:`AllReduceCost` or a list of
    ``(from_endpoint, to_endpoint)``) draws the job's inter-node ring flows: green when they stay under one leaf,
    red when they cross the spine (or core)."""
    g = fabric.graph
    pos = _fabric_layout(fabric)
    if ax is None:
        _, ax = plt.subplots(figsize=(min(18.0, max(8.0, 0.18 * len(pos))), 4.8))
    for a, b, d in g.edges(data=True):
        ax.plot([pos[a][0], pos[b][0]], [pos[a][1], pos[b][1]], color="#c6dbef", linewidth=0.5, zorder=1)
    for n, d in g.nodes(data=True):
        x, y = pos[n]
        if d["kind"] == "nic":
            ax.plot([x], [y], "o", color=NIC_COLOR, markeredgecolor="#3182bd", markersize=4, zorder=3)
        else:
            ax.plot([x], [y], "s", color={"leaf": "#fdd0a2", "spine": "#fdae6b", "core": "#e6550d"}[d["kind"]],
                    markeredgecolor="black", markersize=7, zorder=3)
    for node in fabric.nodes:
        xs = [pos[f"{node}/nic{r}"][0] for r in fabric.rails[node]]
        ax.plot([min(xs) - 0.3, max(xs) + 0.3], [-0.25, -0.25], color="black", linewidth=2, zorder=2)
        if len(fabric.nodes) <= 24:
            ax.text((min(xs) + max(xs)) / 2, -0.45, node, ha="center", va="top", fontsize=6)
    flows: list[tuple[str, str]] = []
    if ring is not None:
        rows = getattr(ring, "flows", ring)
        for row in rows:
            flows.append((row["from"], row["to"]) if isinstance(row, Mapping) else (row[0], row[1]))
    crossing = 0
    for src, dst in flows:
        path = _flow_path(fabric, src, dst)
        up = any(g.nodes[p]["kind"] in ("spine", "core") for p in path if p in g)
        crossing += up
        ax.plot([pos[p][0] for p in path], [pos[p][1] for p in path], color="#d62728" if up else "#2ca02c",
                linewidth=1.4, alpha=0.75, zorder=4)
    left = min(p[0] for p in pos.values()) - 1.0
    tiers = [(0.0, "node NICs"), (1.0, "leaf (one per rail per SU)" if fabric.spec.type == "RailOptimized" else "leaf"),
             (2.0, "spine")] + ([(3.0, "core")] if "core" in g else [])
    for y, name in tiers:
        ax.text(left, y, name, ha="right", va="center", fontsize=8)
    ax.axis("off")
    s = fabric.spec
    extra = f"; ring: {len(flows)} flows, {crossing} cross the spine" if flows else ""
    ax.set_title(title or f"{s.type} fabric, {len(fabric.nodes)} nodes, oversubscription {s.oversubscription:g}:1, "
                          f"load {s.load:g}{extra}", fontsize=9)
    return ax


def plot_step_time(rows: Sequence[Mapping[str, Any]], ax=None, title: Optional[str] = None):
    """Stacked bars of step time per placement. Each row: ``label``, ``compute`` and ``allreduce`` (seconds;
    the all-reduce part already scaled by 1 − overlap), optionally ``busbw`` (GB/s) printed next to the bar."""
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 0.55 * len(rows) + 1.4))
    labels = [r["label"] for r in rows]
    comp = [float(r["compute"]) for r in rows]
    comm = [float(r["allreduce"]) for r in rows]
    ys = range(len(rows))
    ax.barh(ys, comp, color="#9ecae1", label="compute")
    ax.barh(ys, comm, left=comp, color="#fd8d3c", label="all-reduce")
    for y, r, c, m in zip(ys, rows, comp, comm):
        note = f"{c + m:.3f} s" + (f"  (busbw {r['busbw']:.0f} GB/s)" if r.get("busbw") is not None else "")
        ax.text(c + m, y, "  " + note, va="center", fontsize=8)
    ax.set_yticks(list(ys), labels)
    ax.invert_yaxis()
    ax.set_xlim(0, max((c + m for c, m in zip(comp, comm)), default=1.0) * 1.45)
    ax.set_xlabel("step time (s)")
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title(title or "Training step time by placement", fontsize=10)
    return ax


def step_rows(results: Mapping[str, Any], compute_seconds: float, overlap: float = 0.0) -> list[dict[str, Any]]:
    """Rows for :func:`plot_step_time` from ``{label: AllReduceCost}``."""
    return [{"label": label, "compute": compute_seconds, "allreduce": (1.0 - overlap) * r.seconds,
             "busbw": r.bus_bandwidth} for label, r in results.items()]


# --- from a finished run ------------------------------------------------------------------------------------------
def pod_gpus(result: Any, name: str, namespace: str = "default") -> tuple[Optional[str], list[int]]:
    """(node, GPU indices) the pod held — now, or last before it ended (the kubelet's device records)."""
    pod = result.api.get("Pod", namespace, name)
    node = pod.spec.node_name if pod is not None else None
    held = [h for h in result.ctx.holdings if h.pod == name and h.namespace == namespace and h.gpu is not None]
    if node is None and held:
        node = held[-1].node
    return node, sorted({h.gpu for h in held if h.node == node})


def node_server(result: Any, node: str):
    """The server graph of ``node`` in the run (KeyError when the node has no board)."""
    topo = result.ctx.topology
    g = topo.server(node) if topo is not None else None
    if g is None:
        raise KeyError(f'node "{node}" has no server board (no GPUs, or a vGPU VM)')
    return g


def topo_m(result: Any, node: str) -> str:
    """What ``nvidia-smi topo -m`` prints on ``node`` (``gpusim topo -m``)."""
    return topo.format_topo_m(node_server(result, node))


def draw_node(result: Any, node: str, pod: Optional[str] = None, namespace: str = "default", ax=None):
    """:func:`draw_server` of a node of the run, with ``pod``'s GPUs highlighted (none without a pod)."""
    gpus: list[int] = []
    if pod is not None:
        where, gpus = pod_gpus(result, pod, namespace)
        if where != node:
            gpus = []
    g = node_server(result, node)
    title = None
    if pod is not None:
        title = (f"{node} ({g.graph['board']}): pod {pod} holds GPU " + ", ".join(map(str, gpus)) if gpus
                 else f"{node} ({g.graph['board']}): pod {pod} holds no GPU here")
    return draw_server(g, gpus, ax=ax, title=title)


def training_rows(result: Any) -> list[dict[str, Any]]:
    """The ``training`` section of the run's record (one row per training group, its last placement)."""
    from ..workloads.training import training_records
    return training_records(result.ctx)


def group_allreduce(result: Any, group: str, namespace: str = "default"):
    """The :class:`~gpusim.hardware.collectives.AllReduceCost` of a training group at the placement it last ran
    with (its ``gpusim.io/allreduce-bytes``, or 1 GB when it has none)."""
    coord = result.ctx.training
    g = coord.groups.get((namespace, group)) if coord is not None else None
    if g is None or not g.placements:
        raise KeyError(f'training group "{namespace}/{group}" never ran all its workers')
    return result.ctx.topology.allreduce(g.placements[-1].nodes, g.allreduce_bytes or 1e9)


def draw_group_ring(result: Any, group: str, namespace: str = "default", ax=None):
    """:func:`draw_fabric` of the run's fabric with the group's inter-node ring flows (green: under one leaf,
    red: through the spine)."""
    cost = group_allreduce(result, group, namespace)
    fabric = result.ctx.topology.fabric
    if fabric is None:
        raise KeyError("the run has no fabric (no GPU node with a compute NIC)")
    ax = draw_fabric(fabric, cost, ax=ax)
    nodes = ", ".join(f"{n}: GPU {','.join(map(str, ids))}" for n, ids in result.ctx.training.groups[
        (namespace, group)].placements[-1].nodes)
    ax.set_title("\n".join(textwrap.wrap(f"{group}: bus bandwidth {cost.bandwidth:.0f} GB/s ({cost.bottleneck}); "
                                         f"{nodes}", 110)), fontsize=9)
    return ax


def plot_run_step_time(result: Any, ax=None, title: Optional[str] = None):
    """:func:`plot_step_time` of every training group of the run that ran: compute (``gpusim.io/step-time``) and
    the all-reduce share each step paid at its last placement."""
    rows = []
    coord = result.ctx.training
    for key in sorted(coord.groups) if coord is not None else ():
        g = coord.groups[key]
        if not g.placements:
            continue
        p = g.placements[-1]
        comm = p.step_seconds - g.step_time
        rows.append({"label": f"{g.name} ({len(p.nodes)} node{'s' if len(p.nodes) != 1 else ''})",
                     "compute": g.step_time, "allreduce": comm, "busbw": p.bus_bandwidth})
    if not rows:
        raise ValueError("no training group ran in this result")
    return plot_step_time(rows, ax=ax, title=title)


def plot_cliff(rows: Sequence[Mapping[str, Any]], ax=None, title: Optional[str] = None):
    """Step time (left axis, solid) and bus bandwidth (right axis, dashed) against job size, one line per
    ``policy``. Rows: ``policy``, ``gpus``, ``step`` (s), ``bandwidth`` (GB/s), as
    :func:`gpusim.experiments.topology.cliff_rows` gives them."""
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 3.8))
    right = ax.twinx()
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    colors = ["#2ca02c", "#d62728", "#1f77b4", "#ff7f0e"]
    for policy, color in zip(policies, colors):
        mine = sorted((r for r in rows if r["policy"] == policy), key=lambda r: r["gpus"])
        xs = [r["gpus"] for r in mine]
        ax.plot(xs, [r["step"] for r in mine], "o-", color=color, label=f"{policy}: step time")
        right.plot(xs, [r["bandwidth"] for r in mine], "s--", color=color, alpha=0.5,
                   label=f"{policy}: bus bandwidth")
    ax.set_xscale("log", base=2)
    xs = sorted({r["gpus"] for r in rows})
    ax.set_xticks(xs, [str(x) for x in xs])
    ax.set_xlabel("GPUs in the job")
    ax.set_ylabel("step time (s)")
    right.set_ylabel("bus bandwidth (GB/s)")
    right.set_ylim(0, max(r["bandwidth"] for r in rows if r["bandwidth"] != float("inf")) * 1.15)
    right.grid(False)
    lines = ax.get_legend_handles_labels()
    more = right.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize=7, loc="center left")
    ax.set_title(title or "Step time and bus bandwidth against job size", fontsize=10)
    return ax
