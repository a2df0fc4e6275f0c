"""Views of a run with Volcano (see gpusim.volcano): jobs, PodGroup conditions, queue shares per session,
and proportion's water-filling as a table. They read records; they never drive the simulation.

    r = gs.run("examples/volcano-queues.yaml")
    print(gs.volcano_summary(r))
    gs.queue_shares(r)            # one row per session and queue: deserved / allocated / share
    gs.water_filling({"a": (1, {"nvidia.com/gpu": 8}), "b": (3, {"nvidia.com/gpu": 6})}, {"nvidia.com/gpu": 8})
"""
from __future__ import annotations

from typing import Any, Optional

from ..api.batch_volcano_sh_v1alpha1 import Job
from ..api.scheduling_volcano_sh_v1beta1 import PodGroup
from ..volcano.api import resource

ADDON = "gpusim.volcano"
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


def water_filling(queues: dict[str, tuple], total: dict[str, float]) -> list[dict]:
    """proportion's deserved-share loop on given numbers: ``queues`` maps name → (weight, request) or
    (weight, request, capability) or (weight, request, capability, guarantee), resources as plain numbers
    (devices; cpu in millicores, memory in bytes); one row per round and queue with its deserved share
    and what remains."""
    from ..volcano.plugins.proportion import QueueAttr, water_fill
    attrs = []
    guarantees = resource()
    for name, spec in queues.items():
        weight, request, *rest = spec
        a = QueueAttr(name, weight)
        a.request = resource(request)
        cap = rest[0] if rest else None
        guar = rest[1] if len(rest) > 1 else None
        if guar:
            a.guarantee = resource(guar)
            for k, v in a.guarantee.items():
                guarantees[k] = guarantees.get(k, 0) + v
        a.capability = resource(cap) if cap else None
        attrs.append(a)
    tot = resource(total)
    for a in attrs:
        real = {k: tot.get(k, 0) - guarantees.get(k, 0) + a.guarantee.get(k, 0) for k in tot}
        if a.capability is not None:
            real = {k: min(v, a.capability.get(k, float("inf"))) for k, v in real.items()}
        a.real_capability = resource(real)
    rows = []
    for i, rnd in enumerate(water_fill(attrs, tot), start=1):
        for name, d in rnd["deserved"].items():
            rows.append({"round": i, "queue": name, "deserved": {k: v for k, v in d.items() if v},
                         "remaining": {k: v for k, v in rnd["remaining"].items() if v}})
    return rows


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
