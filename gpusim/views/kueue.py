"""Views of a Kueue run (read the records of gpusim.kueue; never drive the simulation): a workload table as
``kubectl get workloads`` plus admission times and waits, ClusterQueue usage over time, the conditions
of one workload as ``kubectl describe workload`` lists them, and where Topology-Aware Scheduling placed each
workload (its ``topologyAssignment`` with every domain located in the Topology's levels)."""
from __future__ import annotations

from typing import Optional

WL = "Workload.kueue.x-k8s.io"
ADDON = "kueue"


def _kueue(result):
    k = result.addons.get(ADDON)
    if k is None:
        raise ValueError("this run has no Kueue (the scenario holds no kueue.x-k8s.io object)")
    return k


def kueue_workloads(result) -> list[dict]:
    """One dict per Workload: namespace, name, queue, clusterQueue, priority, createdAt, first admission
    (``admittedAt``, seconds), ``wait`` (first admission − creation), admissions, preemptions, evictions, the
    current status of its conditions and the last QuotaReserved message."""
    _kueue(result)
    first: dict[tuple, float] = {}
    counts: dict[tuple, dict[str, int]] = {}
    for e in result.events.log:
        if e.object.kind != "Workload":
            continue
        key = (e.object.namespace, e.object.name)
        c = counts.setdefault(key, {"Admitted": 0, "Preempted": 0, "Evicted": 0})
        if e.reason == "Admitted":
            first.setdefault(key, e.time)
            c["Admitted"] += 1
        elif e.reason == "Preempted":
            c["Preempted"] += 1
        elif e.reason.startswith("EvictedDueTo"):
            c["Evicted"] += 1
    k = _kueue(result)
    rows = []
    for wl in sorted(result.api.list(WL), key=lambda w: (w.metadata.namespace, w.metadata.name)):
        key = (wl.metadata.namespace, wl.metadata.name)
        info = k.workloads.get(f"{key[0]}/{key[1]}")
        created = wl.metadata.creation_timestamp or 0.0
        qr = wl.condition("QuotaReserved")
        c = counts.get(key, {"Admitted": 0, "Preempted": 0, "Evicted": 0})
        rows.append({
            "namespace": key[0], "name": wl.metadata.name, "queue": wl.spec.queue_name,
            "clusterQueue": info.cq if info is not None else "", "priority": info.priority if info else 0,
            "createdAt": created, "admittedAt": first.get(key),
            "wait": first[key] - created if key in first else None,
            "admissions": c["Admitted"], "preemptions": c["Preempted"], "evictions": c["Evicted"],
            "conditions": {cd.type: cd.status for cd in wl.status.conditions},
            "message": qr.message if qr is not None and qr.status == "False" else "",
        })
    return rows


def kueue_summary(result, wide: bool = False) -> str:
    """``kubectl get workloads``-like table with the first admission time and the wait for it."""
    rows = kueue_workloads(result)
    head = ["NAMESPACE", "NAME", "QUEUE", "CLUSTERQUEUE", "PRIORITY", "ADMITTED", "WAIT", "EVICTED", "FINISHED"]
    if wide:
        head.append("MESSAGE")
    table = [head]
    for r in rows:
        cond = r["conditions"]
        line = [r["namespace"], r["name"], r["queue"], r["clusterQueue"], str(r["priority"]),
                f"{r['admittedAt']:g}s" if r["admittedAt"] is not None else "-",
                f"{r['wait']:g}s" if r["wait"] is not None else "-",
                str(r["evictions"]), cond.get("Finished", "")]
        if wide:
            line.append(r["message"])
        table.append(line)
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    return "\n".join("   ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in table)


def cluster_queue_usage(result, resource: Optional[str] = None) -> dict[str, list[tuple[float, int]]]:
    """Usage over time: ``{"<cq>/<flavor>/<resource>": [(t, usage), ...]}`` (Kueue's integer units: cpu in
    milli-cores, other resources whole), a step function starting at (0, 0)."""
    k = _kueue(result)
    out: dict[str, list[tuple[float, int]]] = {}
    for t, cq, flavor, res, usage in k.history:
        if resource is not None and res != resource:
            continue
        series = out.setdefault(f"{cq}/{flavor}/{res}", [(0.0, 0)])
        if series[-1][0] == t:
            series[-1] = (t, usage)
        else:
            series.append((t, usage))
    return dict(sorted(out.items()))


def plot_cluster_queue_usage(result, resource: Optional[str] = None, ax=None, nominal: bool = True):
    """Step plot of each ClusterQueue's usage (thin line) over its nominal quota (a wide pale band drawn
    underneath, in the queue's colour; queues with the same quota share one grey band naming them all), so a
    queue using exactly its quota shows its line inside the band."""
    import matplotlib.pyplot as plt
    k = _kueue(result)
    series = cluster_queue_usage(result, resource)
    if ax is None:
        _, ax = plt.subplots()
    quotas: dict[tuple[str, float], list[tuple[str, str]]] = {}
    for i, (name, pts) in enumerate(series.items()):
        xs = [p[0] for p in pts] + [result.end]
        ys = [p[1] for p in pts] + [pts[-1][1]]
        cq, flavor, res = name.split("/", 2)
        ax.step(xs, ys, where="post", color=f"C{i}", linewidth=1.6, zorder=3, label=f"{name} usage")
        q = k.nodes[cq].nominal.get((flavor, res)) if nominal else None
        if q is not None:
            quotas.setdefault((res, q), []).append((cq, f"C{i}"))
    for (res, q), queues in quotas.items():
        color = queues[0][1] if len(queues) == 1 else "0.5"
        ax.plot([0, result.end], [q, q], color=color, alpha=0.3, linewidth=7, solid_capstyle="butt", zorder=2,
                label=f"nominalQuota {q:g}: " + ", ".join(cq for cq, _ in queues))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("usage" + (f" ({resource})" if resource else ""))
    ax.set_title("ClusterQueue usage (line) and nominal quota (band)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return ax


def describe_workload(result, name: str, namespace: str = "default") -> str:
    """The conditions and events of one Workload, as ``kubectl describe workload`` shows them."""
    wl = result.api.get(WL, namespace, name)
    if wl is None:
        raise KeyError(f'workloads.kueue.x-k8s.io "{name}" not found')
    lines = [f"Name:         {name}", f"Namespace:    {namespace}", f"Queue Name:   {wl.spec.queue_name}",
             "Conditions:", "  Type                Status  Reason                  Message"]
    for c in wl.status.conditions:
        lines.append(f"  {c.type:<19} {c.status:<7} {c.reason:<23} {c.message}")
    if wl.status.admission is not None:
        lines.append(f"Admission:    ClusterQueue {wl.status.admission.cluster_queue}; " + "; ".join(
            f"{p.name}: " + ", ".join(f"{r}={f}" for r, f in sorted(p.flavors.items()))
            for p in wl.status.admission.pod_set_assignments))
        for p in wl.status.admission.pod_set_assignments:
            ta = p.topology_assignment
            if ta is not None:
                lines.append(f"  Topology Assignment ({p.name}):  levels {', '.join(ta.levels)}")
                lines += [f"    {', '.join(v)}: {c}" for v, c in ta.domains()]
    lines.append("Events:")
    for e in result.events.log:
        if e.object.kind == "Workload" and e.object.name == name and e.object.namespace == namespace:
            lines.append(f"  {e.time:>8g}s  {e.type:<7} {e.reason:<28} {e.message}")
    return "\n".join(lines)


def topology_assignments(result) -> list[dict]:
    """One dict per TAS PodSet of every Workload: namespace, workload, podSet, flavor, topology, levels (of
    the Topology), admitted (bool), message (the last QuotaReserved message while not admitted) and domains:
    ``[{"values": [...], "path": "b1/r1/b1-r1-0", "count": n}]``, where ``path`` locates the domain at every
    level of the Topology (a hostname assignment is placed in its block and rack from the node's labels)."""
    api = result.api
    flavors = {f.metadata.name: f for f in api.list("ResourceFlavor")}
    topologies = {t.metadata.name: t for t in api.list("Topology")}
    nodes = {n.metadata.labels.get("kubernetes.io/hostname", n.metadata.name): n for n in api.list("Node")}
    rows = []
    for wl in sorted(api.list(WL), key=lambda w: (w.metadata.namespace, w.metadata.name)):
        adm = wl.status.admission
        psas = {p.name: p for p in adm.pod_set_assignments} if adm is not None else {}
        qr = wl.condition("QuotaReserved")
        for ps in wl.spec.pod_sets:
            psa = psas.get(ps.name)
            ta = psa.topology_assignment if psa is not None else None
            flavor = next(iter(dict.fromkeys(psa.flavors.values())), "") if psa is not None else ""
            topo = flavors[flavor].spec.topology_name if flavor in flavors else None
            if ta is None and ps.topology_request is None and (topo is None or psa is not None):
                continue
            levels = topologies[topo].level_keys if topo in topologies else (ta.levels if ta else [])
            domains = []
            for values, count in (ta.domains() if ta is not None else []):
                full = values
                if ta.levels != levels and ta.levels == ["kubernetes.io/hostname"] and values[0] in nodes:
                    labels = nodes[values[0]].metadata.labels
                    full = [labels.get(k, "") for k in levels]
                domains.append({"values": list(values), "path": "/".join(full), "count": count})
            rows.append({"namespace": wl.metadata.namespace, "workload": wl.metadata.name, "podSet": ps.name,
                         "flavor": flavor, "topology": topo or "", "levels": list(levels),
                         "admitted": ta is not None, "domains": domains,
                         "message": qr.message if qr is not None and qr.status == "False" else ""})
    return rows


def topology_summary(result) -> str:
    """A table of :func:`topology_assignments`: one line per PodSet, its domains as ``path×count``, or the
    reason it is not placed."""
    rows = topology_assignments(result)
    table = [["NAMESPACE", "WORKLOAD", "PODSET", "FLAVOR", "PLACEMENT"]]
    for r in rows:
        placement = " ".join(f"{d['path']}×{d['count']}" for d in r["domains"]) if r["admitted"] else \
            f"(pending) {r['message']}"
        table.append([r["namespace"], r["workload"], r["podSet"], r["flavor"] or "-", placement])
    widths = [max(len(row[i]) for row in table) for i in range(4)]
    return "\n".join("   ".join([*(c.ljust(w) for c, w in zip(row[:4], widths)), row[4]]).rstrip() for row in table)
