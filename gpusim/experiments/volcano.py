"""Volcano's proportion plugin on given numbers: the deserved-share water-filling loop round by round
(mirrors volcano-sh/volcano pkg/scheduler/plugins/proportion), for chapter 05's picture of it."""
from __future__ import annotations

from ..volcano.api import resource
from ..volcano.plugins.proportion import QueueAttr, water_fill


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
