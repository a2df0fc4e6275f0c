"""The record of a run as JSON (the contract of DESIGN.md: ``gpusim run -o json``), which views, metrics and
the CLI read. Times are simulated seconds from 0, rounded to the microsecond."""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Optional

from .api.quantity import format_quantity
from .componenthelpers.resource import pod_requests
from .workloads.training import training_records


def t(x: Optional[float]) -> Optional[float]:
    """Simulated seconds, rounded to the microsecond so that outputs are stable text."""
    return None if x is None else round(float(x), 6)


def node_ready(node) -> str:
    c = node.status.condition("Ready")
    status = "Ready" if c is not None and c.status == "True" else "NotReady"
    if node.spec.unschedulable:
        status += ",SchedulingDisabled"
    return status


def node_allocated(result, node, pods=None) -> dict[str, Fraction]:
    """Sum of the requests of the node's non-terminated pods (kubectl describe node's "Allocated")."""
    total: dict[str, Fraction] = {}
    if pods is None:
        pods = result.api.list("Pod", lambda p: p.spec.node_name == node.metadata.name)
    for p in pods:
        if p.status.phase in ("Succeeded", "Failed"):
            continue
        for k, v in pod_requests(p).items():
            total[k] = total.get(k, Fraction(0)) + v
    return total


def to_json(result) -> dict[str, Any]:
    """The JSON contract of DESIGN.md (times in simulated seconds from 0)."""
    held: dict[tuple[str, str], list] = {}
    for h in result.ctx.holdings:
        held.setdefault((h.namespace, h.pod), []).append(h)
    pods = []
    for p in result.pods():
        # a container in CrashLoopBackOff waits; its last run is in lastState
        started = [cs.state.running.started_at if cs.state.running else
                   (cs.state.terminated.started_at if cs.state.terminated else
                    (cs.last_state.terminated.started_at if cs.last_state and cs.last_state.terminated else None))
                   for cs in p.status.container_statuses]
        finished = [cs.state.terminated.finished_at for cs in p.status.container_statuses if cs.state.terminated]
        sched = p.status.condition("PodScheduled")
        devices: dict[str, list[str]] = {}
        for h in held.get((p.metadata.namespace, p.metadata.name), ()):
            devices.setdefault(h.resource, [])
            if h.device not in devices[h.resource]:
                devices[h.resource].append(h.device)
        pods.append({
            "namespace": p.metadata.namespace, "name": p.metadata.name, "phase": p.status.phase or "Pending",
            "reason": p.status.reason, "message": p.status.message, "nodeName": p.spec.node_name,
            "devices": devices, "createdAt": t(p.metadata.creation_timestamp),
            "scheduledAt": t(sched.last_transition_time) if sched is not None and sched.status == "True" else None,
            "startedAt": t(min(s for s in started if s is not None)) if any(s is not None for s in started) else None,
            "finishedAt": t(max(finished)) if finished and p.status.phase in ("Succeeded", "Failed") else None,
            "restarts": sum(c.restart_count for c in p.status.container_statuses),
        })
    nodes = []
    per_node: dict[str, list] = {}
    for p in result.api.list("Pod"):
        if p.spec.node_name and p.status.phase not in ("Succeeded", "Failed"):
            per_node.setdefault(p.spec.node_name, []).append(p)
    topo = result.ctx.topology
    for n in result.nodes():
        alloc = node_allocated(result, n, per_node.get(n.metadata.name, []))
        nodes.append({"name": n.metadata.name, "labels": dict(sorted(n.metadata.labels.items())),
                      "capacity": dict(sorted(n.status.capacity.items())),
                      "allocatable": dict(sorted(n.status.allocatable.items())),
                      "allocated": {k: format_quantity(v, binary=k == "memory") for k, v in sorted(alloc.items())},
                      "ready": node_ready(n) == "Ready",
                      "gpus": topo.gpus(n.metadata.name) if topo is not None else []})
    events = [{"time": t(e.time), "type": e.type, "reason": e.reason,
               "object": {"kind": e.object.kind, "namespace": e.object.namespace, "name": e.object.name},
               "message": e.message, "source": e.source} for e in result.events.log]
    jobs = [{"namespace": j.metadata.namespace, "name": j.metadata.name, "active": j.status.active,
             "succeeded": j.status.succeeded, "failed": j.status.failed,
             "conditions": [c.type for c in j.status.conditions if c.status == "True"],
             "completionTime": t(j.status.completion_time)} for j in result.jobs()]
    allocations = [{"node": h.node, "resource": h.resource, "device": h.device, "namespace": h.namespace,
                    "pod": h.pod, "start": t(h.start), "end": t(h.end)} for h in result.ctx.holdings]
    training = [{**g, "stepSeconds": t(g["stepSeconds"]), "allreduceSeconds": t(g["allreduceSeconds"]),
                 "busBandwidthGBps": None if g["busBandwidthGBps"] is None else round(g["busBandwidthGBps"], 3)}
                for g in training_records(result.ctx)]
    return {"seed": result.seed, "end": t(result.end), "pods": pods, "nodes": nodes, "jobs": jobs,
            "events": events, "allocations": allocations, "training": training}


# --- DCGM exporter -------------------------------------------------------------------------------------------
# What NVIDIA/dcgm-exporter would have scraped from each GPU during the run (its pod running on the node: the
# operand pod's running time with a ClusterPolicy, else the node's whole life, as the other node components).
# Fields and help texts are etc/default-counters.csv's; labels as internal/pkg/rendermetrics attaches them
# (``Hostname`` as releases before PR #655 spell it), with the Kubernetes mapping of the GPU to the pods that
# hold it (pod-resources). Values: GPU_UTIL is the ``gpusim.io/gpu-utilization`` (default 100) of the pods
# whose containers run on the GPU, FB_USED/FB_FREE come from the GPU memory model (gpusim.node.sharing; no
# reserved framebuffer), XID_ERRORS is the last XID the GPU reported (0 before any). GPU_TEMP and POWER_USAGE
# are illustrative (linear in utilisation: 30 °C + 0.5 °C per %, 15 % of the board's TDP idle to 100 % busy).
DCGM_INTERVAL = 30.0   # DCGM_EXPORTER_INTERVAL, 30000 ms
DCGM_COUNTERS: tuple[tuple[str, str, str], ...] = (
    ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
    ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
    ("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."),
    ("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."),
    ("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."),
)
DCGM_ILLUSTRATIVE = ("DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE")
_REPLICA_SEPARATOR = "::"   # the NVIDIA plugin's replicated device IDs, "<uuid>::<replica>"


def _exporter_windows(result, node: str, kl) -> list[tuple[float, float]]:
    inf = float("inf")
    if getattr(kl, "operands", None) is not None:
        return [(a, inf if b is None else b) for a, b in kl.operands.exporter]
    n = result.api.get("Node", "", node)
    start = n.metadata.creation_timestamp if n is not None else inf
    windows, t = [], start
    for r in result.trace.records:
        if r.function == "fault.NodeDown" and r.object == f"Node {node}" and r.time >= t:
            windows.append((t, r.time))
            down = r.details.get("downtime")
            t = r.time + down if down else inf
    if t != inf:
        windows.append((t, inf))
    return windows


def _gpu_table(result, node: str, kl, driver: str):
    """Per physical GPU of the node: (index, uuid, labels, total MiB); device id → GPU index."""
    from .hardware.catalog import nvml_name
    plugin = kl.plugin
    gpus = []
    for d in plugin.devices:
        labels = {"gpu": str(d.index), "UUID": d.id, "pci_bus_id": f"00000000:{0x18 + 0x10 * d.index:02X}:00.0",
                  "device": f"nvidia{d.index}", "modelName": nvml_name(plugin.model), "Hostname": node,
                  "DCGM_FI_DRIVER_VERSION": driver}
        gpus.append((d.index, d.id, labels, plugin.model.memory_mib))
    index = {d.id: d.index for d in plugin.devices}
    index.update({dev: idx for dev, (idx, _) in plugin.device_memory_mib().items()})
    return gpus, index


def dcgm_samples(result, at: float) -> list[tuple[str, dict[str, str], float]]:
    """One scrape of every dcgm-exporter at time ``at``: (metric, labels, value), GPUs in node order."""
    from .api.nvidia_v1 import DEFAULT_DRIVER_VERSION, driver_version
    from .api.validation import ANNOTATION_GPU_UTILIZATION
    from .hardware.catalog import TDP_WATTS
    cp = result.scenario.cluster_policy
    driver = driver_version(cp.spec) if cp is not None else DEFAULT_DRIVER_VERSION
    out = []
    xid_records = [r for r in result.trace.records if r.function in ("fault.XidError", "fault.NVLinkError")
                   and r.time <= at]
    pods = {(p.metadata.namespace, p.metadata.name): p for p in result.api.list("Pod")}
    for node in sorted(result.kubelets):
        kl = result.kubelets[node]
        if kl.plugin is None or not any(a <= at < b for a, b in _exporter_windows(result, node, kl)):
            continue
        gpus, index = _gpu_table(result, node, kl, driver)
        holders: dict[int, list] = {}
        for h in result.ctx.holdings:
            if h.node == node and h.start <= at and (h.end is None or at < h.end):
                i = index.get(h.device.split(_REPLICA_SEPARATOR, 1)[0])
                pod = pods.get((h.namespace, h.pod))
                if i is not None and pod is not None and pod not in holders.setdefault(i, []):
                    holders[i].append(pod)
        mem = kl.gpu_memory
        for i, uuid, labels, total in gpus:
            util = 0
            for pod in holders.get(i, ()):
                if any(rec.pod_uid == pod.metadata.uid and rec.started_at <= at
                       and (rec.finished_at is None or at < rec.finished_at) for rec in kl.runtime.history):
                    util = max(util, int(pod.metadata.annotations.get(ANNOTATION_GPU_UTILIZATION, "100")))
            used = 0.0
            for g in (mem.gpus.values() if mem is not None else ()):
                if g.index == i:
                    used += sum(float(u.at(at)) for u in g.history if u.start <= at and (u.end is None or at < u.end))
            used_mib = int(round(used))
            xid = next((r.details["xid"] for r in reversed(xid_records)
                        if r.object == f"Node {node}" and r.details.get("gpu") == i), 0)
            tdp = TDP_WATTS.get(kl.plugin.model.name, 300)
            values = {"DCGM_FI_DEV_GPU_TEMP": 30 + util // 2, "DCGM_FI_DEV_POWER_USAGE": round(tdp * (0.15 + 0.85 * util / 100), 3),
                      "DCGM_FI_DEV_GPU_UTIL": util, "DCGM_FI_DEV_XID_ERRORS": xid,
                      "DCGM_FI_DEV_FB_FREE": max(0, total - used_mib), "DCGM_FI_DEV_FB_USED": used_mib}
            owners = sorted(holders.get(i, ()), key=lambda p: (p.metadata.namespace, p.metadata.name))
            label_sets = [dict(labels, container=p.spec.containers[0].name, namespace=p.metadata.namespace,
                               pod=p.metadata.name) for p in owners] or [labels]
            for metric, _, _ in DCGM_COUNTERS:
                out.extend((metric, ls, values[metric]) for ls in label_sets)
    return out


def dcgm_series(result, interval: float = DCGM_INTERVAL) -> dict[tuple[str, tuple], list[tuple[float, float]]]:
    """Every scrape from t=0 to the end of the run, every ``interval`` seconds: (metric, labels) → [(t, value)]."""
    series: dict[tuple[str, tuple], list[tuple[float, float]]] = {}
    steps = int(result.end // interval)
    for k in range(steps + 1):
        at = k * interval
        for metric, labels, value in dcgm_samples(result, at):
            series.setdefault((metric, tuple(sorted(labels.items()))), []).append((at, value))
    return series
