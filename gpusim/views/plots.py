"""Matplotlib figures of a run (read-only views of the records): a per-GPU Gantt timeline and a
lifecycle sequence chart of one pod with components as lanes."""
from __future__ import annotations

from typing import Optional

import matplotlib.pyplot as plt

LANES = ["nvidia-device-plugin", "kubelet", "default-scheduler", "apiserver"]


def _pod_color(names: list[str]) -> dict[str, tuple]:
    cmap = plt.get_cmap("tab20")
    return {n: cmap(i % 20) for i, n in enumerate(sorted(set(names)))}


def gpu_gantt(result, node: Optional[str] = None, ax=None, until: Optional[float] = None):
    """One row per GPU (node/index), one bar per pod holding it."""
    holds = [h for h in result.ctx.holdings if node is None or h.node == node]
    devices = []
    for kl_name, kl in sorted(result.kubelets.items()):
        if (node is None or kl_name == node) and kl.plugin is not None:
            devices += [(kl_name, d.index, d.id) for d in kl.plugin.devices]
    end = until if until is not None else result.end
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 0.35 * max(len(devices), 2) + 1.2))
    colors = _pod_color([h.pod for h in holds])
    row = {d[2]: i for i, d in enumerate(devices)}
    for kl_name, kl in result.kubelets.items():   # a MIG device is drawn on its GPU's row
        if kl.plugin is not None:
            for m in kl.plugin.mig_devices:
                key = next((d[2] for d in devices if d[0] == kl_name and d[1] == m.index), None)
                if key is not None:
                    row[m.id] = row[key]
    for h in holds:
        dev = h.device.split("::", 1)[0]   # a time-sliced replica is drawn on its GPU's row
        if dev not in row:
            continue
        stop = h.end if h.end is not None else end
        ax.barh(row[dev], stop - h.start, left=h.start, color=colors[h.pod], edgecolor="black", linewidth=0.4)
        ax.text(h.start + (stop - h.start) / 2, row[dev], h.pod, ha="center", va="center", fontsize=7)
    ax.set_yticks(range(len(devices)), [f"{n}/gpu{i}" for n, i, _ in devices])
    ax.invert_yaxis()
    ax.set_xlim(0, max(end, 1))
    ax.set_xlabel("simulated time (s)")
    ax.set_title("GPU occupancy (which pod held which device)")
    return ax


def lifecycle_chart(result, pod: str, namespace: str = "default", ax=None):
    """Sequence chart of one pod's journey: trace records and events, by component lane."""
    ref = f"Pod {namespace}/{pod}"
    p = result.pod(pod, namespace)
    node = p.spec.node_name if p is not None else None
    recs = [(r.time, r.component.split("/")[0], r.function.split(".")[-1].split("/")[-1], r.result)
            for r in result.trace.records if r.object == ref]
    if node:
        recs += [(r.time, r.component.split("/")[0], r.function.split(".")[-1].split("/")[-1], r.result)
                 for r in result.trace.records if r.object == f"Node {node}" and r.time == 0]
    for e in result.events.log:
        if e.object.kind == "Pod" and e.object.name == pod and e.object.namespace == namespace:
            lane = "default-scheduler" if e.source == "default-scheduler" else "kubelet"
            recs.append((e.time, lane, f"Event {e.reason}", e.message))
    recs.sort(key=lambda r: (r[0], LANES.index(r[1]) if r[1] in LANES else 9))
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 0.3 * len(recs) + 1.5))
    lanes = [l for l in LANES if any(r[1] == l for r in recs)] or LANES
    xs = {l: i for i, l in enumerate(lanes)}
    for i, (time, comp, fn, res) in enumerate(recs):
        x = xs.get(comp, len(lanes) - 1)
        color = "tab:red" if ("failed" in res.lower() or "Insufficient" in res or "rejected" in res.lower()) else "tab:blue"
        ax.plot(x, i, "o", color=color)
        ax.text(x + 0.08, i, f"t={time:.3f}s  {fn}", va="center", fontsize=7)
    for l, x in xs.items():
        ax.axvline(x, color="grey", linewidth=0.6, zorder=0)
    ax.set_xticks(range(len(lanes)), lanes)
    ax.set_xlim(-0.3, len(lanes) + 0.8)
    ax.set_yticks([])
    ax.invert_yaxis()
    ax.set_title(f"Lifecycle of pod {namespace}/{pod}")
    ax.grid(False)
    return ax


def state_at(result, time: float) -> dict:
    """Pod phases and device occupancy at an instant, reconstructed from the records."""
    phases = {}
    for p in result.pods():
        created = p.metadata.creation_timestamp
        if created is None or created > time:
            continue
        phase = "Pending"
        for e in result.events.log:
            if e.object.name != p.metadata.name or e.time > time:
                continue
            if e.reason == "Started":
                phase = "Running"
            elif e.reason == "UnexpectedAdmissionError" or e.reason.startswith("OutOf"):
                phase = "Failed"
        for cs in p.status.container_statuses:
            term = cs.state.terminated
            if term is not None and term.finished_at is not None and term.finished_at <= time:
                phase = "Succeeded" if term.exit_code == 0 else "Failed"
        phases[p.metadata.name] = phase
    held = {h.device: h.pod for h in result.ctx.holdings if h.start <= time and (h.end is None or h.end > time)}
    return {"phases": phases, "held": held}
