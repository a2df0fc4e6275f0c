"""Lab 03's comparison table: one line per attempted fix of the multi-tenant scenario, with the
figures gpusim.comparison.measure takes and the verdict of check_fairness."""
from __future__ import annotations

from typing import Any

import yaml

from ..comparison import MultiTenant, measure
from .checks import check_fairness


def with_preemptable_training(text: str, value: bool = True, namespace: str = "team-a") -> str:
    """Mark ``namespace``'s Volcano training Jobs ``volcano.sh/preemptable: "true"`` or ``"false"`` (their
    first task's pod template), leaving every other Job as it is. Unmarked tasks are preemptable (Volcano's
    GetPodPreemptable default since v1.7.0), so ``value=False`` is the change that protects them."""
    docs = list(yaml.safe_load_all(text))
    for d in docs:
        if d["kind"] == "Job" and d["metadata"].get("namespace") == namespace:
            meta = d["spec"]["tasks"][0]["template"].setdefault("metadata", {})
            meta.setdefault("annotations", {})["volcano.sh/preemptable"] = "true" if value else "false"
    return yaml.safe_dump_all(docs, sort_keys=False)


def fairness_report(runs: dict[str, Any], w: MultiTenant) -> str:
    """``runs``: label → finished run of ``w``; the table lab 03 prints, with its footnote."""
    lines = [f"{'fix':30} {'B wait mean/max':>16} {'A JCT':>7} {'wasted':>7} {'util':>5} {'evict':>5}  check"]
    for label, run in runs.items():
        m = measure(run, label, w)
        jct = f"{m.a_jct_mean:.0f}" + ("*" if m.a_unfinished else "")
        wait = "never" if m.b_wait_mean is None else f"{m.b_wait_mean:.0f} / {m.b_wait_max:.0f} s"
        if m.b_unserved and m.b_wait_mean is not None:
            wait += f" ({m.b_unserved} never)"
        lines.append(f"{label:30} {wait:>16} {jct:>7} {m.wasted_gpu_hours:7.2f} "
                     f"{m.utilization:5.0%} {m.evictions:5}  {'PASS' if check_fairness(run) else 'FAIL'}")
    lines.append("* some training jobs never finish; never: no team-b Job ever had all its replicas running at once")
    return "\n".join(lines)


def gang_report(runs: dict[str, Any], group: str) -> str:
    """``runs``: label → finished run; one line each with the training group's first worker start, completion
    and partial-gang waste (lab 02's comparison of the broken run and its fixes)."""
    from ..workloads.training import training_report
    lines = []
    for label, run in runs.items():
        g = next(g for g in training_report(run) if g["group"] == group)
        start = f"{g['first_start']:5.0f}s" if g["first_start"] is not None else "never"
        done = f"{g['completed_at']:5.0f}s" if g["completed_at"] is not None else "never"
        lines.append(f"{label:17} first worker t={start}  done t={done}  wasted {g['wasted_gpu_hours']:.2f} GPU-h")
    return "\n".join(lines)


def job_failures(result: Any, namespace: str) -> str:
    """The Jobs of ``namespace`` with failed pods: how many, and the Job's last condition (type and reason)."""
    lines = []
    for j in result.jobs():
        if j.metadata.namespace == namespace and j.status.failed:
            last = j.status.conditions[-1]
            lines.append(f"{j.metadata.name}: {j.status.failed} failed pods, {last.type} ({last.reason})")
    return "\n".join(lines)
