"""Multi-tenant views of a finished run (read records, never drive the simulation): who held the
cluster's GPUs over time (stacked area) and a per-job Gantt chart shading waiting, wasted (partial
start: some workers hold GPUs, the gang is not complete) and running time. Data functions return
plain structures (tested); ``plot_*`` draw them with matplotlib, English titles and labels."""
from __future__ import annotations

from typing import Any, Optional

from ..metrics import (JobRecord, Tenant, all_running_at, gpu_share_over_time, job_records, pod_records,
                       tenant_by_namespace)

COLORS = {"waiting": "#d9d9d9", "wasted": "#e6550d", "running": "#31a354"}


def share_steps(result: Any, tenant: Tenant = tenant_by_namespace, normalize: bool = True
                ) -> tuple[list[float], dict[str, list[float]]]:
    """The per-tenant share as (x, {tenant: y}) drawn as steps: every change point appears twice
    (old value, then new value), ending at the end of the run."""
    s = gpu_share_over_time(result, tenant, normalize=normalize)
    xs: list[float] = []
    ys: dict[str, list[float]] = {k: [] for k in s.values}
    bounds = s.times[1:] + [s.end]
    for i, (t0, t1) in enumerate(zip(s.times, bounds)):
        xs += [t0, t1]
        for k, v in s.values.items():
            ys[k] += [v[i], v[i]]
    return xs, ys


def plot_tenant_share(result: Any, tenant: Tenant = tenant_by_namespace, ax=None, normalize: bool = True):
    """Stacked area of each tenant's share of the cluster's GPUs over time."""
    import matplotlib.pyplot as plt
    xs, ys = share_steps(result, tenant, normalize)
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 3.2))
    names = sorted(ys)
    if names:
        ax.stackplot(xs, [ys[n] for n in names], labels=names, alpha=0.85)
        ax.legend(loc="upper right", fontsize=8, title="tenant")
    ax.set_xlim(0, max(result.end, 1))
    if normalize:
        ax.set_ylim(0, 1.05)
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("share of cluster GPUs" if normalize else "GPUs held")
    ax.set_title("GPU share per tenant over time")
    return ax


def _segments(created: Optional[float], first: Optional[float], together: Optional[float],
              done: float) -> list[tuple[float, float, str]]:
    out: list[tuple[float, float, str]] = []
    if created is None:
        return out
    start_running = together if together is not None else None
    wait_end = first if first is not None else done
    if wait_end > created:
        out.append((created, wait_end, "waiting"))
    if first is not None:
        partial_end = start_running if start_running is not None else done
        if partial_end > first:
            out.append((first, partial_end, "wasted"))
    if start_running is not None and done > start_running:
        out.append((start_running, done, "running"))
    return out


def job_gantt_data(result: Any, tenant: Tenant = tenant_by_namespace) -> list[dict]:
    """One row per Job (and per pod without a Job): ``segments`` [(start, end, kind)] with kind
    waiting (created → first pod started), wasted (first pod started → all ``parallelism`` pods
    running at once: GPUs held by an incomplete gang) and running (→ completion, or last pod end, or
    the end of the run)."""
    recs = pod_records(result)
    rows = []
    for j in job_records(result):
        pods = [r for r in recs if r.namespace == j.namespace and r.job == j.name]
        first = min((p.started for p in pods if p.started is not None), default=None)
        together = all_running_at(j, pods, result.end)
        ends = [p.finished for p in pods if p.finished is not None]
        running = any(p.started is not None and p.finished is None for p in pods)
        done = j.completed if j.completed is not None else (result.end if running or not ends else max(ends))
        rows.append({"name": f"{j.namespace}/{j.name}", "tenant": tenant(pods[0]) if pods else j.namespace,
                     "segments": _segments(j.created, first, together, done)})
    for p in recs:
        if p.job is not None or p.created is None:
            continue
        done = p.finished if p.finished is not None else result.end
        job = JobRecord(p.namespace, p.name, p.created)
        together = all_running_at(job, [p], result.end)
        rows.append({"name": f"{p.namespace}/{p.name}", "tenant": tenant(p),
                     "segments": _segments(p.created, p.started, together, done)})
    return rows


def plot_job_gantt(result: Any, tenant: Tenant = tenant_by_namespace, ax=None):
    """Per-job Gantt: grey waiting, orange wasted (partial start), green running."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
    rows = job_gantt_data(result, tenant)
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 0.4 * max(len(rows), 2) + 1.2))
    for i, row in enumerate(rows):
        for t0, t1, kind in row["segments"]:
            ax.barh(i, t1 - t0, left=t0, color=COLORS[kind], edgecolor="black", linewidth=0.4)
    ax.set_yticks(range(len(rows)), [f"{r['name']} ({r['tenant']})" for r in rows])
    ax.invert_yaxis()
    ax.set_xlim(0, max(result.end, 1))
    ax.set_xlabel("simulated time (s)")
    ax.set_title("Jobs: waiting, wasted (partial start) and running")
    ax.legend(handles=[Patch(color=c, label=k) for k, c in COLORS.items()], loc="lower right", fontsize=8)
    return ax
