"""Chapter 04 experiments: the example scenarios with one thing changed (a pod's GPU request, a fault's
downtime or XID, a PriorityClass), as the chapter's exercises ask, and a downtime sweep of the kubelet-restart
scenario. Each helper returns YAML text a user could ``kubectl apply`` (gpusim's own kinds aside)."""
from __future__ import annotations

from typing import Any, Iterable

import yaml

from ..cluster.simulation import run

GPU = "nvidia.com/gpu"


def _docs(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(text) if d is not None]


def _find(docs: list[dict], kind: str, name: str) -> dict:
    for d in docs:
        if d.get("kind") == kind and (d.get("metadata") or {}).get("name") == name:
            return d
    raise KeyError(f"no {kind} named {name!r} in the scenario")


def with_pod_gpus(text: str, pod: str, count: int) -> str:
    """The scenario with every container of Pod ``pod`` limited to ``count`` ``nvidia.com/gpu``."""
    docs = _docs(text)
    for c in _find(docs, "Pod", pod)["spec"]["containers"]:
        c.setdefault("resources", {}).setdefault("limits", {})[GPU] = count
    return yaml.safe_dump_all(docs, sort_keys=False)


def with_fault(text: str, fault: str, **spec: Any) -> str:
    """The scenario with fields of Fault ``fault``'s spec replaced (e.g. ``downtime="8s"``, ``xid=43``)."""
    docs = _docs(text)
    _find(docs, "Fault", fault)["spec"].update(spec)
    return yaml.safe_dump_all(docs, sort_keys=False)


def with_priority_class(text: str, pod: str, value: int, name: str = "high-priority") -> str:
    """The scenario with a PriorityClass ``name`` (``value``) and Pod ``pod`` using it."""
    docs = _docs(text)
    _find(docs, "Pod", pod)["spec"]["priorityClassName"] = name
    docs.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                 "value": value})
    return yaml.safe_dump_all(docs, sort_keys=False)


def downtime_sweep(text: str, downtimes: Iterable[str], fault: str = "kubelet-restart") -> list[dict]:
    """Run ``text`` once per kubelet downtime: per run and per pod the phase, reason, when it was scheduled and
    whether it ever saw FailedScheduling (``{downtime, pod, phase, reason, scheduledAt, failedScheduling}``)."""
    from ..records import to_json
    out = []
    for d in downtimes:
        r = run(text=with_fault(text, fault, downtime=d))
        failed = {e.object.name for e in r.events.log if e.reason == "FailedScheduling"}
        for p in to_json(r)["pods"]:
            out.append({"downtime": d, "pod": p["name"], "phase": p["phase"], "reason": p["reason"],
                        "scheduledAt": p["scheduledAt"], "failedScheduling": p["name"] in failed})
    return out


def format_downtime_sweep(rows: list[dict]) -> str:
    """The sweep as a table: one line per run and pod."""
    lines = [f"{'DOWNTIME':<9} {'POD':<22} {'PHASE':<10} {'REASON':<26} {'SCHEDULED':>9}  FAILEDSCHEDULING"]
    for x in rows:
        sched = f"{x['scheduledAt']:g}s" if x["scheduledAt"] is not None else "—"
        lines.append(f"{x['downtime']:<9} {x['pod']:<22} {x['phase']:<10} {x['reason'] or '—':<26} {sched:>9}  "
                     f"{'yes' if x['failedScheduling'] else 'no'}")
    return "\n".join(lines)
