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


def format_queue_shares(result: Any, times: Any = None, resource_name: str = GPU) -> str:
    """:func:`queue_shares` as a table (time, queue, weight, deserved, allocated, request, share), only the
    sessions at ``times`` (seconds) when given."""
    rows = [["TIME", "QUEUE", "WEIGHT", "DESERVED", "ALLOCATED", "REQUEST", "SHARE"]]
    for x in queue_shares(result, resource_name):
        if times is None or x["time"] in times:
            rows.append([f"{x['time']:g}s", x["queue"], str(x["weight"]), f"{x['deserved']:g}",
                         f"{x['allocated']:g}", f"{x['request']:g}", f"{x['share']:g}"])
    return _table(rows)


def format_pod_group_conditions(result: Any, job: str, namespace: str = "default") -> str:
    """The conditions of Volcano Job ``job``'s PodGroup as ``kubectl describe podgroup`` words them: phase,
    type=status, reason and message."""
    return "\n".join(f"phase={c['phase']}  {c['type']}={c['status']}  reason={c['reason']}\n  message: {c['message']}"
                     for c in pod_group_conditions(result, job, namespace))


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


DESERVED_WIDTH = 7     # points: the deserved share is a wide pale band, the allocated amount a thin line on it,
ALLOCATED_WIDTH = 1.6  # so a queue that got exactly its deserved share shows both (a line inside its band)


def plot_queue_shares(result: Any, resource_name: str = GPU, ax: Any = None) -> Any:
    """Deserved (wide pale band) and allocated (thin line drawn on top) ``resource_name`` per queue over time,
    one colour per queue; the legend sits outside the axes."""
    import matplotlib.pyplot as plt
    rows = queue_shares(result, resource_name)
    if ax is None:
        _, ax = plt.subplots()
    for i, q in enumerate(sorted({r["queue"] for r in rows})):
        pts = [r for r in rows if r["queue"] == q]
        t = [r["time"] / 60 for r in pts]
        color = f"C{i}"
        ax.step(t, [r["deserved"] for r in pts], where="post", color=color, alpha=0.3, linewidth=DESERVED_WIDTH,
                solid_capstyle="butt", zorder=2, label=f"{q} deserved")
        ax.step(t, [r["allocated"] for r in pts], where="post", color=color, linewidth=ALLOCATED_WIDTH, zorder=3,
                label=f"{q} allocated")
    ax.set_xlabel("time (min)")
    ax.set_ylabel(resource_name)
    ax.set_title("Volcano proportion: deserved (band) vs allocated (line) per queue")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return ax


# --- network topology (HyperNodes) ----------------------------------------------------------------------------
CLUSTER_TOP = "<cluster-top-hypernode>"     # the scheduler's virtual root (framework/session.go)
GROUP_NAME = "scheduling.k8s.io/group-name"


def _topology_records(result: Any) -> list[tuple[float, dict]]:
    return [(s.time, s.record["networkTopology"]) for s in _volcano(result).scheduler.sessions
            if "networkTopology" in s.record]


def hyper_nodes(result: Any) -> list[dict]:
    """``kubectl get hypernodes`` with the tree: name, tier, tierName, parent (the virtual cluster top left
    out), nodeCount and nodes (the real nodes below it), lowest tier first, as the last session saw them."""
    recs = _topology_records(result)
    if not recs:
        return []
    tree = recs[-1][1]["hyperNodes"]
    return [{"name": n, "tier": h["tier"], "tierName": h["tierName"],
             "parent": "" if h["parent"] == CLUSTER_TOP else h["parent"], "nodeCount": len(h["nodes"]),
             "nodes": list(h["nodes"])}
            for n, h in sorted(tree.items(), key=lambda kv: (kv[1]["tier"], kv[0])) if n != CLUSTER_TOP]


def _leaf(tree: dict, node: str) -> str:
    """The lowest-tier HyperNode holding ``node`` (FindHyperNodeForNode), "" outside every HyperNode."""
    for n, h in sorted(tree.items(), key=lambda kv: (kv[1]["tier"], kv[0])):
        if n != CLUSTER_TOP and node in h["nodes"]:
            return n
    return ""


def hypernode_placement(result: Any) -> list[dict]:
    """One dict per PodGroup with a ``networkTopology`` (a Volcano Job's, or one of the scenario):
    namespace, job (the owning Volcano Job, else the PodGroup), podGroup, mode, highestTierAllowed,
    highestTierName; ``hyperNodes``: each time the job got an allocated HyperNode ``{"time", "hyperNode",
    "tier"}`` (a job whose tasks all ended loses it, and a later round searches again); ``pods``:
    ``{pod: {"node", "hyperNode"}}`` with the lowest HyperNode of the node (pods never bound: node "");
    ``pending`` (pods never bound) and, for those, ``waiting``: what the last allocate round found."""
    recs = _topology_records(result)
    if not recs:
        return []
    tree = recs[-1][1]["hyperNodes"]
    api = result.api
    history: dict[str, list[dict]] = {}
    last: dict[str, dict] = {}
    for time, rec in recs:
        for uid, j in rec["jobs"].items():
            h = history.setdefault(uid, [])
            prev = last.get(uid, {}).get("hyperNode", "")
            if j["hyperNode"] and j["hyperNode"] != prev:
                h.append({"time": time, "hyperNode": j["hyperNode"], "tier": j["tier"]})
            last[uid] = {**j, "decisions": j["decisions"] or last.get(uid, {}).get("decisions", [])}
    pods: dict[str, dict] = {}
    for pod in sorted(api.list("Pod"), key=lambda p: (p.metadata.namespace, p.metadata.name)):
        g = pod.metadata.annotations.get(GROUP_NAME)
        if g:
            node = pod.spec.node_name or ""
            pods.setdefault(f"{pod.metadata.namespace}/{g}", {})[pod.metadata.name] = {
                "node": node, "hyperNode": _leaf(tree, node) if node else ""}
    owners = {f"{j.metadata.namespace}/{j.metadata.name}-{j.metadata.uid}": j.metadata.name
              for j in api.list(Job.RESOURCE)}        # the job controller names the PodGroup <job>-<uid>
    out = []
    for uid in sorted(last):
        ns, name = uid.split("/", 1)
        owner = owners.get(uid, name)
        j = last[uid]
        mine = pods.get(uid, {})
        pending = sum(1 for p in mine.values() if not p["node"])
        out.append({"namespace": ns, "job": owner, "podGroup": name, "mode": j["mode"],
                    "highestTierAllowed": j["highestTierAllowed"], "highestTierName": j["highestTierName"],
                    "hyperNodes": history.get(uid, []), "pods": mine, "pending": pending,
                    "waiting": _waiting(j) if pending else ""})
    return out


def _waiting(job: dict) -> str:
    decisions = job["decisions"]
    if job["mode"] != "hard" or (job["highestTierAllowed"] is None and not job["highestTierName"]):
        return "no HyperNode search (not hard with a tier boundary): placed as any job, scored by topology"
    if not decisions:
        return ""
    d = decisions[-1]
    if d["gradients"] is None:
        return "no gradient (the constraint does not fit the job's allocated HyperNode)"
    tried = [h for g in d["gradients"] for h in g]
    if not tried:
        return "no HyperNode within the limit has the job's minResources idle"
    if not d["hyperNode"]:
        return "tried " + ", ".join(tried) + ": the job fits in none"
    return ""


def _limit(r: dict) -> str:
    if r["highestTierName"]:
        return f"{r['mode']} ≤{r['highestTierName']}"
    if r["highestTierAllowed"] is not None:
        return f"{r['mode']} tier≤{r['highestTierAllowed']}"
    return r["mode"]


def hypernode_summary(result: Any) -> str:
    """:func:`hyper_nodes` as ``kubectl get hn`` (NAME, TIER, TIERNAME, PARENT, NODECOUNT), then one line per job
    with a networkTopology: its constraint, the HyperNodes it was given (``name@time``) and its pods per
    HyperNode (``name×count``), or why pods still wait."""
    rows = [["NAME", "TIER", "TIERNAME", "PARENT", "NODECOUNT"]]
    for h in hyper_nodes(result):
        rows.append([h["name"], str(h["tier"]), h["tierName"] or "-", h["parent"] or "-", str(h["nodeCount"])])
    text = _table(rows) if len(rows) > 1 else ""
    jrows = [["NAMESPACE", "JOB", "CONSTRAINT", "HYPERNODES", "PODS"]]
    for r in hypernode_placement(result):
        given = " ".join(f"{h['hyperNode']}@{h['time']:g}s" for h in r["hyperNodes"]) or "-"
        counts: dict[str, int] = {}
        for p in r["pods"].values():
            if p["node"]:
                counts[p["hyperNode"] or "(none)"] = counts.get(p["hyperNode"] or "(none)", 0) + 1
        placed = " ".join(f"{k}×{v}" for k, v in sorted(counts.items()))
        if r["pending"]:
            placed = (placed + " " if placed else "") + f"(pending {r['pending']}: {r['waiting']})"
        jrows.append([r["namespace"], r["job"], _limit(r), given, placed or "-"])
    if len(jrows) > 1:
        text += ("\n\n" if text else "") + _table(jrows)
    return text
