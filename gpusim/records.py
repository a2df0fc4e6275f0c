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
        started = [cs.state.running.started_at if cs.state.running else
                   (cs.state.terminated.started_at if cs.state.terminated else None)
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
