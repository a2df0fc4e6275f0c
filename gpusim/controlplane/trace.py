"""Trace: one record per extension-point call, RPC or controller step, naming the upstream
function it mirrors (SimPy's monitoring guide: record, don't drive)."""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain
from typing import Any


@dataclass(slots=True)
class TraceRecord:
    time: float
    component: str       # e.g. "kubelet/a100-0", "nvidia-device-plugin/a100-0", "default-scheduler"
    function: str        # upstream function, e.g. "devicemanager.(*ManagerImpl).Allocate"
    object: str          # "Pod default/train-0", "Node a100-0", ...
    result: str          # "Success", an error message, ...
    flat_details: tuple = ()   # key, value, key, value, ... (a third of a dict's size; see ``details``)

    @property
    def details(self) -> dict[str, Any]:
        """The recorded details as a new dict, in the order they were given."""
        d = self.flat_details
        return dict(zip(d[::2], d[1::2]))


@dataclass
class Trace:
    records: list[TraceRecord] = field(default_factory=list)
    enabled: bool = True

    def add(self, time: float, component: str, function: str, obj: str, result: str = "Success",
            **details: Any) -> None:
        if self.enabled:
            self.records.append(TraceRecord(time, component, function, obj, result,
                                           tuple(chain.from_iterable(details.items()))))

    def for_object(self, obj: str) -> list[TraceRecord]:
        return [r for r in self.records if r.object == obj]
