"""Kubernetes Events (mirrors client-go tools/record: EventRecorder and the EventCorrelator's
de-duplication of identical events into one Event with a count)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

NORMAL, WARNING = "Normal", "Warning"


@dataclass(slots=True, eq=False)
class ObjectReference:
    """The involved object. One per object, shared by all its events (identity is equality)."""

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


class Occurrence:
    """One recorded occurrence (the event log a timeline steps through): its time and the de-duplicated Event
    it counted in, whose type, reason, involved object, message and source it shares."""

    __slots__ = ("time", "event")

    def __init__(self, time: float, event: Event):
        self.time, self.event = time, event

    type = property(lambda self: self.event.type)
    reason = property(lambda self: self.event.reason)
    object = property(lambda self: self.event.involved_object)
    message = property(lambda self: self.event.message)
    source = property(lambda self: self.event.source)

    def __repr__(self) -> str:
        return (f"Occurrence(time={self.time!r}, type={self.type!r}, reason={self.reason!r}, "
                f"object={self.object!r}, message={self.message!r}, source={self.source!r})")


@dataclass
class EventRecorder:
    events: list[Event] = field(default_factory=list)
    log: list[Occurrence] = field(default_factory=list)
    _index: dict[tuple, Event] = field(default_factory=dict, repr=False)
    _refs: dict[Any, ObjectReference] = field(default_factory=dict, repr=False)

    def _ref(self, obj: Any) -> ObjectReference:
        m = obj.metadata
        k = m.uid or (obj.kind, m.namespace or "", m.name)
        ref = self._refs.get(k)
        if ref is None or ref.kind != obj.kind or ref.name != m.name:
            ref = self._refs[k] = ObjectReference(obj.kind, m.namespace or "", m.name, m.uid)
        return ref

    def record(self, now: float, obj: Any, type_: str, reason: str, message: str, source: str) -> None:
        ref = self._ref(obj)
        # events_cache.go getEventKey: source, involvedObject, type, reason, message (the shared ref stands for
        # the involved object's kind, namespace, name and uid)
        key = (source, ref, type_, reason, message)
        ev = self._index.get(key)
        if ev is not None:
            ev.count += 1
            ev.last_timestamp = now
        else:
            ev = self._index[key] = Event(type_, reason, message, ref, source, now, now)
            self.events.append(ev)
        self.log.append(Occurrence(now, ev))

    def for_object(self, kind: str, namespace: str, name: str) -> list[Event]:
        return [e for e in self.events if (e.involved_object.kind, e.involved_object.namespace,
                                            e.involved_object.name) == (kind, namespace, name)]
