"""Figures of replay runs (read-only views of their JSON documents): the allocation and fragmentation
curves per policy against arrived workload (the FGD paper's Figs. 7 and 9(a)), and the bar chart of
unallocated GPUs at 100 % arrival, mean ± sd over seeds, grouped by trace (Figs. 11–14, as
experiments/plot/plot_openb_*_alloc_bar.py draws them)."""
from __future__ import annotations

import statistics
from typing import Optional, Sequence

import matplotlib.pyplot as plt

POLICY_ORDER = ("Random", "DotProd", "GpuClustering", "GpuPacking", "BestFit", "FGD")


def _by_policy(docs: Sequence[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for d in docs:
        out.setdefault(d["policy"], []).append(d)
    return {p: out[p] for p in sorted(out, key=lambda p: (POLICY_ORDER.index(p) if p in POLICY_ORDER else 99, p))}


def _mean_curve(docs: Sequence[dict], key: str) -> tuple[list[int], list[float]]:
    pts: dict[int, list[float]] = {}
    for d in docs:
        for p in d["curve"]:
            pts.setdefault(p["arrived"], []).append(p[key])
    xs = sorted(pts)
    return xs, [statistics.mean(pts[x]) for x in xs]


def plot_curves(docs: Sequence[dict], axes=None, lo: int = 0):
    """Allocated GPU % and fragmentation (% of GPUs) against arrived GPU %, one line per policy (the mean
    over the documents of that policy); the ideal allocation is the diagonal."""
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(11, 4))
    a_ax, f_ax = axes
    for pol, ds in _by_policy(docs).items():
        xs, ys = _mean_curve(ds, "allocated")
        keep = [i for i, x in enumerate(xs) if x >= lo]
        a_ax.plot([xs[i] for i in keep], [ys[i] for i in keep], label=pol)
        xs, ys = _mean_curve(ds, "fragTotal")
        f_ax.plot([xs[i] for i in keep], [ys[i] for i in keep], label=pol)
    a_ax.plot([lo, 130], [lo, 130], color="grey", linestyle=":", linewidth=1, label="ideal")
    a_ax.set(xlabel="Arrived workload (% of GPU capacity)", ylabel="Allocated GPUs (%)",
             title="GPU allocation", ylim=(lo, 100))
    f_ax.set(xlabel="Arrived workload (% of GPU capacity)", ylabel="Fragmented GPUs (% of all GPUs)",
             title="Fragmentation against the target workload")
    a_ax.legend(fontsize=8)
    return axes


def plot_unallocated_bars(docs: Sequence[dict], published: Optional[dict[str, tuple[float, float]]] = None,
                          ax=None, traces: Optional[Sequence[str]] = None):
    """Unallocated GPU % at arrived = 100 %, mean ± sd over seeds: one group per trace, one bar per policy;
    ``published`` (policy → (mean, sd), for the first trace) adds the paper's values as black ticks."""
    groups: dict[str, dict[str, list[float]]] = {}
    for d in docs:
        at = {p["arrived"]: p for p in d["curve"]}.get(100)
        if at is not None:
            groups.setdefault(d["trace"], {}).setdefault(d["policy"], []).append(round(100 - at["allocated"], 2))
    order = list(traces) if traces else list(groups)
    pols = [p for p in POLICY_ORDER if any(p in groups.get(t, {}) for t in order)]
    pols += sorted({p for t in order for p in groups.get(t, {})} - set(pols))
    if ax is None:
        _, ax = plt.subplots(figsize=(min(max(5, 1.1 * len(order) + 2), 16), 4.2))
    width = 0.8 / max(len(pols), 1)
    cmap = plt.get_cmap("tab10")
    for j, pol in enumerate(pols):
        xs, ys, es = [], [], []
        for i, t in enumerate(order):
            v = groups.get(t, {}).get(pol)
            if v:
                xs.append(i + (j - (len(pols) - 1) / 2) * width)
                ys.append(statistics.mean(v))
                es.append(statistics.stdev(v) if len(v) > 1 else 0.0)
        ax.bar(xs, ys, width, yerr=es, capsize=2, label=pol, color=cmap(j % 10))
        if published and pol in published and order:
            x = (j - (len(pols) - 1) / 2) * width
            ax.plot([x - width / 2, x + width / 2], [published[pol][0]] * 2, color="black", linewidth=2)
    ax.set_xticks(range(len(order)), order, rotation=30 if len(order) > 6 else 0, ha="right" if len(order) > 6 else "center")
    ax.set(ylabel="Unallocated GPUs (%) at 100% arrival", title="Unallocated GPUs by policy (mean ± sd over seeds)")
    ax.legend(fontsize=8, ncol=min(len(pols), 6))
    return ax
