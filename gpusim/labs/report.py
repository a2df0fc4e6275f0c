"""Lab 03's comparison table: one line per attempted fix of the multi-tenant scenario, with the
figures gpusim.comparison.measure takes and the verdict of check_fairness."""
from __future__ import annotations

from typing import Any

import yaml

from ..comparison import MultiTenant, measure
from .checks import check_fairness


def with_preemptable_training(text: str, namespace: str = "team-a") -> str:
    """Mark ``namespace``'s Volcano training Jobs ``volcano.sh/preemptable: "true"`` (their first task's
    pod template), leaving every other Job as it is."""
    docs = list(yaml.safe_load_all(text))
    for d in docs:
        if d["kind"] == "Job" and d["metadata"].get("namespace") == namespace:
            d["spec"]["tasks"][0]["template"]["metadata"]["annotations"]["volcano.sh/preemptable"] = "true"
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
