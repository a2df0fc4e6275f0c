"""Chapter 04 experiments: the kubelet-restart scenario run once per downtime (which downtimes end in
UnexpectedAdmissionError, and why), as its exercise asks."""
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
