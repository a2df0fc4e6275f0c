"""Why a pod went where it went: per scheduling attempt, which plugin rejected each node and why,
and each score plugin's raw, normalized and weighted score per node (read from the scheduler's
Attempt records)."""
from __future__ import annotations

from .kubectl import _table, ts


def attempts_for(result, name: str, namespace: str = "default") -> list:
    ref = f"{namespace}/{name}"
    return [a for a in result.scheduler.attempts if a.pod == ref]


def explain_pod(result, name: str, namespace: str = "default") -> str:
    attempts = attempts_for(result, name, namespace)
    if result.pod(name, namespace) is None:
        raise KeyError(f'pods "{name}" not found')
    if not attempts:
        pod = result.pod(name, namespace)
        why = ("it names spec.nodeName, so it went straight to the kubelet" if pod.spec.node_name and not
               any(e.reason == "Scheduled" and e.object.name == name for e in result.events.log)
               else f'no profile is named "{pod.spec.scheduler_name}", so this scheduler never saw it')
        return f"Pod {namespace}/{name}: no scheduling attempts ({why})."
    total = attempts[-1].number
    out = [f"Pod {namespace}/{name}: {total} scheduling attempt(s), profile {attempts[0].profile}"]
    previous = 0
    for a in attempts:
        out.append("")
        if a.number > previous + 1:
            out.append(f"(attempts {previous + 1}–{a.number - 1} not kept: gpusim keeps a pod's first and last "
                       "attempts)")
            out.append("")
        previous = a.number
        head = f"scheduled on {a.node}" if a.node else "unschedulable"
        group = getattr(a, "pod_group", "")
        if group:      # 1.36 pod group scheduling cycle: the pod was placed in the group's snapshot, then bound or undone
            head = (f"placed on {a.node} in PodGroup {group}'s scheduling cycle, " + ("undone" if a.message else "bound")
                    if a.node else f"unschedulable in PodGroup {group}'s scheduling cycle")
        out.append(f"Attempt {a.number} at {ts(a.time)}: {head}")
        if a.message:
            out.append(f"  {a.message}")
        if a.statuses:
            rows = [["NODE", "REJECTED BY", "REASONS"]]
            for node, st in a.statuses.items():
                plugin, _, reasons = st.partition(": ")
                rows.append([node, plugin, reasons])
            out += ["  " + line for line in _table(rows).splitlines()]
        if a.feasible:
            out.append(f"  feasible: {len(a.feasible)} node(s): {', '.join(a.feasible[:10])}"
                       + (" …" if len(a.feasible) > 10 else ""))
        if a.scores:
            plugins = list(next(iter(a.scores.values())).keys())
            rows = [["NODE"] + plugins + ["TOTAL"]]
            for node, per in sorted(a.scores.items(), key=lambda kv: -sum(v[2] for v in kv[1].values())):
                rows.append([node] + [f"{per[p][0]} → {per[p][1]} → {per[p][2]}" for p in plugins]
                            + [str(sum(v[2] for v in per.values()))])
            out.append("  scores (raw → normalized → weighted):")
            out += ["  " + line for line in _table(rows).splitlines()]
        elif a.node and len(a.feasible) == 1:
            out.append("  one feasible node: chosen without scoring (schedule_one.go)")
    return "\n".join(out)
