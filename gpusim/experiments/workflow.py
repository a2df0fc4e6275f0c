"""Chapter 04 experiments: the kubelet-restart scenario run once per downtime (which downtimes end in
UnexpectedAdmissionError, and why), as its exercise asks; and a cluster whose nodes fail Filter for two
different reasons, to read how FailedScheduling orders them (chapter 10's self-checks)."""
from __future__ import annotations

from typing import Iterable

from ..cluster.simulation import run
from ..records import to_json
from .edits import with_fault


def downtime_sweep(text: str, downtimes: Iterable[str], fault: str = "kubelet-restart") -> list[dict]:
    """Run ``text`` once per kubelet downtime: per run and per pod the phase, reason, when it was scheduled and
    whether it ever saw FailedScheduling (``{downtime, pod, phase, reason, scheduledAt, failedScheduling}``)."""
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


def two_reasons_scenario(full: int, tainted: int = 2, model: str = "T4") -> str:
    """``full`` one-GPU nodes each held by a pod, ``tainted`` one-GPU nodes tainted ``nvidia.com/gpu=present:
    NoSchedule``, and a pod ``late`` (one GPU, no toleration) at 10 s: Filter rejects ``full`` nodes with
    ``Insufficient nvidia.com/gpu`` and the others with the taint (upstream ``FitError.Error`` sorts the
    histogram's ``"<count> <reason>"`` strings)."""
    import yaml
    pod = lambda name, at: {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "annotations": {
        "gpusim.io/submit-at": at}}, "spec": {"containers": [{"name": "c", "image": "nvcr.io/nvidia/pytorch:24.08-py3",
                                                               "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}
    docs = [{"apiVersion": "gpusim.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "two-reasons"},
             "spec": {"until": "1m"}},
            {"apiVersion": "gpusim.io/v1alpha1", "kind": "NodePool", "metadata": {"name": "full"},
             "spec": {"count": full, "gpu": {"model": model, "count": 1}}},
            {"apiVersion": "gpusim.io/v1alpha1", "kind": "NodePool", "metadata": {"name": "tainted"},
             "spec": {"count": tainted, "gpu": {"model": model, "count": 1},
                      "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]}}]
    docs += [pod(f"busy-{i}", "0s") for i in range(full)] + [pod("late", "10s")]
    return yaml.safe_dump_all(docs, sort_keys=False)
