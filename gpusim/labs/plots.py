"""Memory-over-time picture for the GPU sharing labs (reads ``gpusim.views.sharing.memory_timeline``).

One panel per physical GPU: each pod's device memory stacked (the top is what the GPU holds) — or, under
MPS, where every client has its own limit, one line per pod with the pinned limit dashed — the GPU's
memory as a solid line, and a red × at every ``CUDA error: out of memory``. English labels, like the rest of the course.
"""
from __future__ import annotations

from typing import Optional

from ..views.sharing import memory_timeline
from .checks import OOM_FUNCTION


def _steps(tl: list[tuple[float, dict[str, float]]]) -> list[tuple[float, dict[str, float]]]:
    """Usage is linear between samples only for pods present in both; a pod that starts at a sample
    appears there as a jump (insert the sample without it first), not as a ramp from the one before."""
    out: list[tuple[float, dict[str, float]]] = []
    for t, v in tl:
        if out and set(v) - set(out[-1][1]):
            prev = out[-1][1]
            out.append((t, {p: x for p, x in v.items() if p in prev}))
        out.append((t, v))
    return out


def plot_gpu_memory(result, node: Optional[str] = None, gpus: Optional[list[int]] = None):
    """Plot device memory over time on ``node`` (default: the first node with GPU memory), one panel per
    GPU index in ``gpus`` (default: every GPU that held memory). Returns the matplotlib Figure."""
    import matplotlib.pyplot as plt

    if node is None:
        node = next((n for n in sorted(result.kubelets) if result.gpu_memory(n) is not None), None)
        if node is None:
            raise ValueError("no node with GPU memory in this run")
    mem = result.gpu_memory(node)
    by_index = {g.index: g for g in mem.gpus.values()}
    if gpus is None:
        gpus = sorted(i for i, g in by_index.items() if g.history) or sorted(by_index)[:1]
    fig, axes = plt.subplots(1, len(gpus), sharey=True, squeeze=False,
                             figsize=(9 if len(gpus) == 1 else min(4 * len(gpus), 14), 3.5))
    pods = sorted({u.pod for i in gpus for u in by_index[i].history})
    colors = {p: plt.cm.tab10(k % 10) for k, p in enumerate(pods)}
    for ax, idx in zip(axes[0], gpus):
        tl = _steps(memory_timeline(result, node, idx))
        xs = [t for t, _ in tl] or [0.0, result.end]
        if mem.strategy == "mps":   # limits are per process: one line per pod (gaps while it is down)
            for p in pods:
                ax.plot(xs, [v.get(p, float("nan")) for _, v in tl] or [float("nan")] * 2, color=colors[p],
                        lw=2, label=p)
        elif pods:                  # one pool of memory: stack the pods, the top is what the GPU holds
            ys = [[v.get(p, 0.0) for _, v in tl] or [0.0, 0.0] for p in pods]
            ax.stackplot(xs, ys, labels=pods, colors=[colors[p] for p in pods], alpha=0.8)
        ax.axhline(mem.total_mib, color="black", lw=1.2, label=f"GPU memory {mem.total_mib} MiB")
        if mem.strategy == "mps":
            ax.axhline(mem.client_limit_mib, color="black", lw=1, ls="--",
                       label=f"MPS limit per client {mem.client_limit_mib} MiB")
        component = f"gpu/{node}/{idx}"
        ooms = [r for r in result.trace.records if r.function == OOM_FUNCTION and r.component == component]
        if ooms:
            # time-slicing: the GPU as a whole ran out; otherwise the one process hit its own limit
            ys_oom = [mem.total_mib if mem.strategy == "time-slicing" else float(r.details.get("process_mib", 0))
                      for r in ooms]
            ax.scatter([r.time for r in ooms], ys_oom,
                       marker="x", color="red", s=40, zorder=5, label="CUDA OOM")
        ax.set_title(f"{node} GPU {idx} ({mem.strategy})")
        ax.set_xlabel("time (s)")
        ax.set_xlim(0, result.end)
    axes[0][0].set_ylabel("device memory (MiB)")
    axes[0][0].set_ylim(0, mem.total_mib * 1.12)
    handles, labels = [], []
    for ax in axes[0]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8)
    fig.tight_layout()
    return fig
