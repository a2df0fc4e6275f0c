"""Pictures for the labs. Memory over time for the GPU sharing labs: :func:`gpusim.views.sharing.plot_gpu_memory` (one panel
per physical GPU; pods stacked where they share one pool of memory, one line per pod under MPS with the
pinned limit dashed; a red × at every ``CUDA error: out of memory``). Chapter 02.2 draws the same picture.
Fragmentation over time and by seed for lab 08 (and chapter 07), with a widget over the seeds. Step time and
throughput against GPUs for lab 04.
"""
from __future__ import annotations

from ..views.sharing import plot_gpu_memory
from ..views.display import show_widget

__all__ = ["plot_gpu_memory", "plot_fragmentation_over_time", "plot_fragmentation_by_seed", "fragmentation_widget",
           "plot_allreduce_cliff"]


def plot_fragmentation_over_time(cmp: dict, seed: int = 0, ax=None, window: float = 600.0):
    """Cluster fragmentation (GPUs, FGD's measure; a moving average over ``window`` seconds) against time,
    one line per scheduler of ``cmp`` (:func:`gpusim.labs.fragmentation.compare`) for ``seed``."""
    import matplotlib.pyplot as plt

    from .fragmentation import fragmentation_over_time
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 3.4))
    for k, (name, by_seed) in enumerate(cmp.items()):
        result, rep = by_seed[seed]
        series = fragmentation_over_time(result)
        end = rep.until
        xs, ys, t = [], [], 0.0
        while t <= end:   # time-weighted mean of the step function over [t - window, t]
            lo, acc = max(0.0, t - window), 0.0
            for (t0, f, _a), nxt in zip(series, series[1:] + [(float("inf"), 0.0, 0)]):
                acc += f * max(0.0, min(nxt[0], t) - max(t0, lo))
            xs.append(t / 3600)
            ys.append(acc / (t - lo) if t > lo else series[0][1])
            t += 120.0
        ax.plot(xs, ys, color=f"C{k}", label=f"{name}: mean {rep.fragmentation:.2f} GPUs")
    ax.set_xlabel("time (h)")
    ax.set_ylabel("fragmented GPUs")
    ax.set_title(f"GPU fragmentation (FGD measure, {window / 60:.0f}-min moving average), seed {seed}")
    ax.legend(loc="upper left", fontsize=8)
    return ax


def plot_fragmentation_by_seed(cmp: dict, ax=None):
    """Grouped bars: each scheduler's mean fragmentation per seed."""
    import matplotlib.pyplot as plt
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 3.2))
    names = list(cmp)
    seeds = sorted(next(iter(cmp.values())))
    width = 0.8 / len(names)
    for k, name in enumerate(names):
        xs = [i + (k - (len(names) - 1) / 2) * width for i in range(len(seeds))]
        ax.bar(xs, [cmp[name][s][1].fragmentation for s in seeds], width * 0.92, color=f"C{k}", label=name)
    ax.set_xticks(range(len(seeds)), [f"seed {s}" for s in seeds])
    ax.set_ylabel("mean fragmented GPUs")
    ax.set_title("Time-averaged GPU fragmentation per workload seed (lower is better)")
    ax.legend(fontsize=8)
    return ax


def fragmentation_widget(builds: dict, seed: int = 0):
    """A seed slider: rerun every scheduler of ``builds`` on that seed's workload and redraw the
    fragmentation over time with the comparison table."""
    import ipywidgets as w
    import matplotlib.pyplot as plt

    from .fragmentation import compare, format_comparison
    slider = w.IntSlider(value=seed, min=0, max=19, description="seed", continuous_update=False)
    out = w.Output()

    def show(change=None):
        with out:
            out.clear_output(wait=True)
            cmp = compare(builds, (slider.value,))
            print(format_comparison(cmp))
            plot_fragmentation_over_time(cmp, slider.value)
            plt.show()

    slider.observe(show, names="value")
    show()
    show_widget(w.VBox([slider, out]))


def plot_allreduce_cliff(rows: list, axes=None):
    """Lab 04: step time and throughput against GPUs for the topology-blind and the Kueue TAS placement (rows of
    :func:`gpusim.labs.allreduce.scaling`); the blind curve's last points are the cliff."""
    import matplotlib.pyplot as plt

    from .allreduce import GLOBAL_BATCH_TOKENS
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(11, 3.6))
    styles = {"blind": ("C3", "o", "topology-blind (bin packing)"), "kueue-tas": ("C0", "s", "Kueue TAS (one SU)")}
    for name, (color, marker, label) in styles.items():
        pts = sorted((r["gpus"], r["step"]) for r in rows if r["placement"] == name)
        xs = [x for x, _ in pts]
        axes[0].plot(xs, [y for _, y in pts], color=color, marker=marker, label=label)
        axes[1].plot(xs, [GLOBAL_BATCH_TOKENS / y / 1e6 for _, y in pts], color=color, marker=marker, label=label)
    for ax in axes:
        ax.set_xlabel("GPUs (one rank per GPU)")
        ax.set_xticks(range(0, max(r["gpus"] for r in rows) + 1, 16))
        ax.grid(alpha=0.3)
        ax.legend(loc="best", fontsize=8)
    axes[0].set_yscale("log")
    for axis in (axes[0].yaxis.set_major_formatter, axes[0].yaxis.set_minor_formatter):
        axis(plt.FuncFormatter(lambda v, _: f"{v:g}"))
    axes[0].set_ylabel("step time (s, log scale)")
    axes[0].set_title("Llama-2-7B step time (same global batch)")
    axes[1].set_ylabel("throughput (M tokens/s)")
    axes[1].set_title("Throughput: the blind 128-GPU job is slower than 64")
    return axes
