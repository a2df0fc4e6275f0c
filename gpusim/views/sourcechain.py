"""Views of a call chain (chapter 06): the frames of :func:`gpusim.experiments.sourcechain.chain` as a table, as
a swimlane figure (one lane per component or plugin, one row per step, an arrow where control passes from one
lane to the next) and as a stepper widget whose static twin is the same figure drawn once.

A frame is a plain dict (``time``, ``component``, ``trace``, ``function``, ``file``, ``repo``, ``release``,
``result``, ``detail``, and ``plugin``/``point`` for a plugin's step), so this module reads records only and
imports no component.
"""
from __future__ import annotations

from typing import Optional, Sequence

import matplotlib.pyplot as plt

from .display import show_widget

RPC_PREFIX = "v1beta1.DevicePlugin/"
SCHEDULER_PLUGIN_LANES = ("Coscheduling", "NodeResourceTopologyMatch")
FAIL_WORDS = ("nodes are available", "rejection", "rejected", "Discard", "rror", "Insufficient", "cannot")
WAIT_WORDS = ("asked to wait", "notReady", "Inqueue")


def lane_of(frame: dict) -> str:
    """The lane a frame is drawn in: the plugin for a followed scheduler plugin's step, ``volcano plugins`` for
    a Volcano plugin's OnSessionOpen, the device plugin for an RPC it serves, else the component (without the
    node suffix)."""
    plugin = frame.get("plugin")
    if plugin in SCHEDULER_PLUGIN_LANES:
        return plugin
    if plugin:
        return "volcano plugins"
    if frame["trace"].startswith(RPC_PREFIX):
        return "nvidia-device-plugin"
    return frame["component"].split("/", 1)[0]


def outcome(result: str) -> str:
    """``failed``, ``waiting`` or ``ok`` for a frame's result text."""
    if result.endswith(" feasible"):
        return "failed" if result.startswith("0 ") else "ok"
    if any(w in result for w in WAIT_WORDS):
        return "waiting"
    if any(w in result for w in FAIL_WORDS):
        return "failed"
    return "ok"


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def format_chain(frames: Sequence[dict], result_width: int = 60) -> str:
    """The chain as a table: step, simulated time, lane, upstream function, file and release, result."""
    lines = [f"{'#':>3} {'TIME':>9}  {'LANE':<26} {'UPSTREAM FUNCTION':<44} {'FILE (RELEASE)':<66} RESULT"]
    for i, f in enumerate(frames):
        where = f"{f['file']} ({f['release'].split(' ')[0]})"
        lines.append(f"{i:>3} {f['time']:>9.3f}  {lane_of(f):<26} {_short(f['function'], 44):<44} "
                     f"{_short(where, 66):<66} {_short(f['result'], result_width)}")
    return "\n".join(lines)


def format_frame(frame: dict, index: Optional[int] = None) -> str:
    """One frame in full: what ran, where upstream (repository, release, file, function, caller) and where in
    gpusim, with the result and details the trace recorded."""
    head = f"step {index}: " if index is not None else ""
    lines = [f"{head}t={frame['time']:g}s  {lane_of(frame)}  {frame['object']}",
             f"  upstream : {frame['repo']} @ {frame['release']}",
             f"             {frame['file']}  {frame['function']}"]
    if frame.get("caller"):
        lines.append(f"  called by: {frame['caller']}")
    lines.append(f"  gpusim   : {frame['gpusim']}  (trace: {frame['trace']})")
    lines.append(f"  result   : {frame['result']}")
    if frame.get("detail"):
        lines.append(f"  detail   : {frame['detail']}")
    return "\n".join(lines)


def format_sources(rows: Sequence[dict], chains: Optional[Sequence[str]] = None) -> str:
    """A Markdown table of traced steps → upstream file and function (with release) → the gpusim function."""
    out = ["| chain | trace record | upstream file (release) | upstream function | gpusim |", "|---|---|---|---|---|"]
    for r in rows:
        if chains is not None and r["chain"] not in chains:
            continue
        out.append(f"| {r['chain']} | `{r['trace']}` | `{r['file']}` ({r['release']}) | `{r['function']}` | "
                   f"`{r['gpusim']}` |")
    return "\n".join(out)


def lanes(frames: Sequence[dict]) -> list[str]:
    """The lanes of a chain in order of first appearance."""
    return list(dict.fromkeys(lane_of(f) for f in frames))


COLORS = {"ok": "#e8f1fb", "waiting": "#fff1d6", "failed": "#fde0dd"}
EDGES = {"ok": "#4a78b5", "waiting": "#d08b00", "failed": "#c0392b"}


def plot_chain(frames: Sequence[dict], title: Optional[str] = None, current: Optional[int] = None, ax=None):
    """Swimlane figure of a chain: x = lane, y = step (downwards); each box is one upstream function with its
    file (and the frame's ``note``: the operator state, DaemonSet or container it concerns); an arrow joins consecutive steps in different lanes; blue ok, orange waiting, red failed. With
    ``current``, that step is outlined thick and later steps are faded (what the stepper shows)."""
    ls = lanes(frames)
    x = {lane: i for i, lane in enumerate(ls)}
    if ax is None:
        _, ax = plt.subplots(figsize=(max(7.0, 2.6 * len(ls)), 0.42 * len(frames) + 1.4))
    for lane, i in x.items():
        ax.axvline(i, color="#cccccc", lw=0.8, zorder=0)
    prev = None
    for k, f in enumerate(frames):
        lx, y = x[lane_of(f)], -k
        state = outcome(f["result"])
        faded = current is not None and k > current
        alpha = 0.25 if faded else 1.0
        if prev is not None and prev[0] != lx:
            ax.annotate("", xy=(lx, y + 0.18), xytext=(prev[0], prev[1] - 0.18),
                        arrowprops={"arrowstyle": "->", "color": "#777777", "lw": 0.8, "alpha": alpha})
        label = f"{_short(f['function'], 38)}\n{_short(f['file'].rsplit('/', 1)[-1], 38)}"
        if f.get("note"):
            label += f" · {_short(f['note'], 30)}"
        ax.text(lx, y, label, ha="center", va="center", fontsize=6.5, alpha=alpha, zorder=3,
                bbox={"boxstyle": "round,pad=0.25", "fc": COLORS[state], "ec": EDGES[state], "alpha": alpha,
                      "lw": 2.2 if k == current else 0.8})
        ax.text(-0.62, y, f"{k:>2}  {f['time']:g}s", ha="right", va="center", fontsize=6.5, alpha=alpha)
        prev = (lx, y)
    ax.set_xticks(range(len(ls)))
    ax.set_xticklabels(ls, fontsize=8)
    ax.xaxis.tick_top()
    ax.set_xlim(-1.3, len(ls) - 0.4)
    ax.set_ylim(-len(frames) + 0.4, 0.8)
    ax.set_yticks([])
    for side in ("left", "right", "bottom", "top"):
        ax.spines[side].set_visible(False)
    if title:
        ax.set_title(title, fontsize=10, pad=22)
    return ax


def chain_stepper(frames: Sequence[dict], title: Optional[str] = None, start: int = 0) -> None:
    """A slider over the steps of one chain: the swimlane figure with the step outlined (later steps faded) and
    the step's upstream place and recorded result below. Static twin: :func:`plot_chain` and :func:`format_frame`."""
    import ipywidgets as w

    if not frames:
        raise ValueError("chain_stepper: the chain has no frames (did the run record the object?)")
    slider = w.IntSlider(value=start, min=0, max=len(frames) - 1, description="step", continuous_update=False,
                         layout=w.Layout(width="90%"))
    out = w.Output()

    def show(change=None):
        with out:
            out.clear_output(wait=True)
            plot_chain(frames, title, current=slider.value)
            plt.show()
            print(format_frame(frames[slider.value], slider.value))

    slider.observe(show, names="value")
    show()
    show_widget(w.VBox([slider, out]))
