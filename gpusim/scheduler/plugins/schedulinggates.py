"""SchedulingGates (plugins/schedulinggates): PreEnqueue keeps gated pods out of activeQ."""
from __future__ import annotations

from ..framework import Code, Status

NAME = "SchedulingGates"


class SchedulingGates:
    name = NAME

    def pre_enqueue(self, pod) -> Status:
        gates = [g.name for g in pod.spec.scheduling_gates]
        if not gates:
            return Status()
        return Status.new(Code.UnschedulableAndUnresolvable, f"waiting for scheduling gates: [{' '.join(gates)}]")


def new(args=None, handle=None) -> SchedulingGates:
    return SchedulingGates()
