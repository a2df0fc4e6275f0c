"""Views of a run with Volcano (see gpusim.volcano): jobs, PodGroup conditions, queue shares per session.
They read records; they never drive the simulation (proportion's water-filling on given numbers is
gpusim.experiments.volcano.water_filling).

    r = gs.run("examples/volcano-queues.yaml")
    print(gs.volcano_summary(r))
    gs.queue_shares(r)            # one row per session and queue: deserved / allocated / share
"""
from __future__ import annotations

from typing import Any, Optional

from ..api.batch_volcano_sh_v1alpha1 import Job
from ..api.scheduling_volcano_sh_v1beta1 import PodGroup

ADDON = "volcano"
GPU = "nvidia.com/gpu"


def _volcano(result: Any):
    v = result.addons.get(ADDON)
    if v is None:
        raise ValueError("this run has no Volcano: the scenario holds no Volcano object and no pod names "
                         "schedulerName: volcano")
    return v


def _amount(name: str, v: float) -> float:
    """gpusim units → what people read: cores, GiB, devices."""
    if name == "cpu":
        return v / 1000
    if name == "memory":
        return v / 2**30
    return v


def volcano_jobs(result: Any) -> list[dict]:
    """One dict per Volcano Job: namespace, name, queue, phase, minAvailable, pod counts, retries and its
    PodGroup's phase."""
    api = result.api
    out = []
    for job in sorted(api.list(Job.RESOURCE), key=lambda j: (j.metadata.namespace, j.metadata.name)):
        st = job.status
        pg = api.get(PodGroup.RESOURCE, job.metadata.namespace, f"{job.metadata.name}-{job.metadata.uid}")
        out.append({"namespace": job.metadata.namespace, "name": job.metadata.name, "queue": job.spec.queue,
                    "phase": st.state.phase, "minAvailable": job.spec.min_available,
                    "pending": st.pending, "running": st.running, "succeeded": st.succeeded, "failed": st.failed,
                    "retryCount": st.retry_count, "podGroupPhase": pg.status.phase if pg is not None else ""})
    return out


def pod_group_conditions(result: Any, name: Optional[str] = None, namespace: str = "default") -> list[dict]:
    """The conditions of Volcano's PodGroups (all, or those whose name starts with ``name``, e.g. a Job's
    name): podGroup, phase, type, status, reason, message, lastTransitionTime."""
    out = []
    for pg in sorted(result.api.list(PodGroup.RESOURCE), key=lambda p: (p.metadata.namespace, p.metadata.name)):
        if name is not None and (pg.metadata.namespace != namespace or not pg.metadata.name.startswith(name)):
            continue
        for c in pg.status.conditions:
            out.append({"podGroup": f"{pg.metadata.namespace}/{pg.metadata.name}", "phase": pg.status.phase,
                        "type": c.type, "status": c.status, "reason": c.reason, "message": c.message,
                        "lastTransitionTime": c.last_transition_time})
    return out


def queue_shares(result: Any, resource_name: str = GPU) -> list[dict]:
    """Per session (that ran) and queue with jobs: time, queue, weight, deserved, allocated, request (of
    ``resource_name``, in cores / GiB / devices) and share, as the proportion plugin computed them."""
    out = []
    for s in _volcano(result).scheduler.sessions:
        for q, a in s.queues.items():
            out.append({"time": s.time, "session": s.uid, "queue": q, "weight": a["weight"],
                        "deserved": _amount(resource_name, a["deserved"].get(resource_name, 0)),
                        "allocated": _amount(resource_name, a["allocated"].get(resource_name, 0)),
                        "request": _amount(resource_name, a["request"].get(resource_name, 0)),
                        "share": round(a["share"], 4)})
    return out


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("   ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


def volcano_summary(result: Any) -> str:
    """``kubectl get vcjob``-like table, then the queues' last deserved / allocated GPUs."""
    rows = [["NAMESPACE", "NAME", "QUEUE", "PHASE", "MIN", "PENDING", "RUNNING", "SUCCEEDED", "FAILED", "RETRIES",
             "PODGROUP"]]
    for j in volcano_jobs(result):
        rows.append([j["namespace"], j["name"], j["queue"], j["phase"], str(j["minAvailable"]), str(j["pending"]),
                     str(j["running"]), str(j["succeeded"]), str(j["failed"]), str(j["retryCount"]),
                     j["podGroupPhase"]])
    text = _table(rows)
    last: dict[str, dict] = {}
    for r in queue_shares(result):
        last[r["queue"]] = r
    if last:
        qrows = [["QUEUE", "WEIGHT", "DESERVED GPU", "ALLOCATED GPU", "SHARE", "AT"]]
        for q, r in sorted(last.items()):
            qrows.append([q, str(r["weight"]), f"{r['deserved']:g}", f"{r['allocated']:g}", f"{r['share']:g}",
                          f"{r['time']:g}s"])
        text += "\n\n" + _table(qrows)
    return text


def plot_queue_shares(result: Any, resource_name: str = GPU, ax: Any = None) -> Any:
    """Deserved (dashed) and allocated (solid) ``resource_name`` per queue over time."""
    import matplotlib.pyplot as plt
    rows = queue_shares(result, resource_name)
    if ax is None:
        _, ax = plt.subplots()
    for q in sorted({r["queue"] for r in rows}):
        pts = [r for r in rows if r["queue"] == q]
        t = [r["time"] / 60 for r in pts]
        line, = ax.step(t, [r["allocated"] for r in pts], where="post", label=f"{q} allocated")
        ax.step(t, [r["deserved"] for r in pts], where="post", linestyle="--", color=line.get_color(),
                label=f"{q} deserved")
    ax.set_xlabel("time (min)")
    ax.set_ylabel(resource_name)
    ax.set_title("Volcano proportion: deserved vs allocated per queue")
    ax.legend(loc="best", fontsize=8)
    return ax
