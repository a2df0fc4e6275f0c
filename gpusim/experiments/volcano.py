"""Volcano experiments for chapter 05.2: proportion's deserved-share water-filling loop on given numbers,
round by round (mirrors volcano-sh/volcano pkg/scheduler/plugins/proportion), and the Queue-weight scenario
rerun with other weights (a widget, its static twin, a sweep)."""
from __future__ import annotations

from typing import Any

from ..cluster.simulation import run
from ..views.volcano import volcano_summary
from ..volcano.api import resource
from ..volcano.plugins.proportion import QueueAttr, water_fill
from .edits import with_queue_weights


def water_filling(queues: dict[str, tuple], total: dict[str, float]) -> list[dict]:
    """proportion's deserved-share loop on given numbers: ``queues`` maps name → (weight, request) or
    (weight, request, capability) or (weight, request, capability, guarantee), resources as plain numbers
    (devices; cpu in millicores, memory in bytes); one row per round and queue with its deserved share
    and what remains."""
    attrs = []
    guarantees = resource()
    for name, spec in queues.items():
        weight, request, *rest = spec
        a = QueueAttr(name, weight)
        a.request = resource(request)
        cap = rest[0] if rest else None
        guar = rest[1] if len(rest) > 1 else None
        if guar:
            a.guarantee = resource(guar)
            for k, v in a.guarantee.items():
                guarantees[k] = guarantees.get(k, 0) + v
        a.capability = resource(cap) if cap else None
        attrs.append(a)
    tot = resource(total)
    for a in attrs:
        real = {k: tot.get(k, 0) - guarantees.get(k, 0) + a.guarantee.get(k, 0) for k in tot}
        if a.capability is not None:
            real = {k: min(v, a.capability.get(k, float("inf"))) for k, v in real.items()}
        a.real_capability = resource(real)
    rows = []
    for i, rnd in enumerate(water_fill(attrs, tot), start=1):
        for name, d in rnd["deserved"].items():
            rows.append({"round": i, "queue": name, "deserved": {k: v for k, v in d.items() if v},
                         "remaining": {k: v for k, v in rnd["remaining"].items() if v}})
    return rows


def explore_queue_weights(text: str, weights: dict[str, int], until: str = "15m") -> Any:
    """Run ``text`` with the Volcano Queues' weights set (``{queue: weight}``) until ``until`` and print the
    ``kubectl get vcjob``-like summary with the queues' deserved / allocated GPUs."""
    r = run(text=with_queue_weights(text, weights), until=until)
    print(volcano_summary(r))
    return r


def queue_weight_widget(text: str, queues: tuple[str, str] = ("team-a", "team-b"), start: tuple[int, int] = (1, 3),
                        until: str = "15m") -> Any:
    """Two weight sliders over :func:`explore_queue_weights` (needs a running Jupyter kernel; its static twin is
    one direct call)."""
    import ipywidgets as widgets

    from ..views.display import Shown
    a, b = queues
    return Shown(widgets.interactive(
        lambda weight_a, weight_b: explore_queue_weights(text, {a: weight_a, b: weight_b}, until) and None,
        weight_a=widgets.IntSlider(start[0], 1, 8, description=f"{a} weight"),
        weight_b=widgets.IntSlider(start[1], 1, 8, description=f"{b} weight")))


def weight_sweep(text: str, pairs: list[tuple[int, int]], job: str, queues: tuple[str, str] = ("team-a", "team-b"),
                 until: str = "15m") -> list[dict]:
    """Per pair of weights: whether Volcano Job ``job`` got all of its ``minAvailable`` running, the pods
    evicted by reclaim, and the deserved GPUs of each queue in the last session."""
    from ..views.volcano import queue_shares, volcano_jobs
    out = []
    for wa, wb in pairs:
        r = run(text=with_queue_weights(text, {queues[0]: wa, queues[1]: wb}), until=until)
        j = next(x for x in volcano_jobs(r) if x["name"] == job)
        last = {x["queue"]: x["deserved"] for x in queue_shares(r)}
        out.append({"weights": (wa, wb), "running": j["running"], "minAvailable": j["minAvailable"],
                    "started": j["running"] >= j["minAvailable"],
                    "evicted": sum(e.reason == "Evict" and e.object.kind == "Pod" for e in r.events.log),
                    "deserved": tuple(last.get(q) for q in queues)})
    return out


def format_water_filling(rows: list[dict], resource_name: str) -> str:
    """:func:`water_filling`'s rows as text: round, queue and its deserved ``resource_name``."""
    return "\n".join(f"{row['round']} {row['queue']} deserved={row['deserved'].get(resource_name, 0):.2f}"
                     for row in rows)
