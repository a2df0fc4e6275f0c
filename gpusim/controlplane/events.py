"""Kubernetes Events (mirrors client-go tools/record: EventRecorder and the EventCorrelator's
de-duplication of identical events into one Event with a count)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

NORMAL, WARNING = "Normal", "Warning"


@dataclass(slots=True)
class ObjectReference:
    kind: str
    namespace: str
    name: str
    uid: str = ""


@dataclass(slots=True)
class Event:
    """One core/v1 Event. ``count``, ``first_timestamp`` and ``last_timestamp`` as upstream."""

    type: str
    reason: str
    message: str
    involved_object: ObjectReference
    source: str
    first_timestamp: float
    last_timestamp: float
    count: int = 1


@dataclass(slots=True)
class Occurrence:
    """One recorded occurrence (the event log a timeline steps through)."""

    time: float
    type: str
    reason: str
    object: ObjectReference
    message: str
    source: str


@dataclass
class EventRecorder:
    events: list[Event] = field(default_factory=list)
    log: list[Occurrence] = field(default_factory=list)
    _index: dict[tuple, Event] = field(default_factory=dict, repr=False)

    def record(self, now: float, obj: Any, type_: str, reason: str, message: str, source: str) -> None:
        ref = ObjectReference(obj.kind, obj.metadata.namespace or "", obj.metadata.name, obj.metadata.uid)
        self.log.append(Occurrence(now, type_, reason, ref, message, source))
        # events_cache.go getEventKey: source, involvedObject, type, reason, message
        key = (source, ref.kind, ref.namespace, ref.name, ref.uid, type_, reason, message)
        ev = self._index.get(key)
        if ev is not None:
            ev.count += 1
            ev.last_timestamp = now
            return
        ev = Event(type_, reason, message, ref, source, now, now)
        self._index[key] = ev
        self.events.append(ev)

    def for_object(self, kind: str, namespace: str, name: str) -> list[Event]:
        return [e for e in self.events if (e.involved_object.kind, e.involved_object.namespace,
                                            e.involved_object.name) == (kind, namespace, name)]
