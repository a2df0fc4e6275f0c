"""An apiserver-like object store (mirrors k8s.io/apiserver's registry + watch cache, much reduced).

Objects are kept by kind and namespace/name, get a uid, a resourceVersion and a creation time, and
every change is pushed to watchers as a ``WatchEvent`` on a ``WatchStream``, which the watching
component consumes in its own process: components never call each other, only the store.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable, Optional

import simpy

ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"


@dataclass
class WatchEvent:
    type: str
    obj: Any


class WatchStream:
    """One watcher's event stream (the input channel of k8s.io/apiserver/pkg/storage/cacher cacheWatcher),
    consumed by ``ev = yield stream.get()``.

    It behaves exactly as an unbounded ``simpy.Store`` does, event for event: ``put`` appends the item and
    schedules a triggered put event whose callback hands the oldest item to the oldest waiting getter; ``get``
    succeeds at once when an item is queued, else waits. The same events are scheduled in the same order
    (so every run's interleaving, and every decision, is the store's), without simpy's generic resource
    machinery (put/get queues scanned on every trigger, context-manager events), which cost about a
    seventh of a large run's time."""

    __slots__ = ("_env", "items", "_getters")

    def __init__(self, env: simpy.Environment):
        self._env = env
        self.items: list[Any] = []
        self._getters: list[simpy.Event] = []

    def put(self, item: Any) -> simpy.Event:
        self.items.append(item)
        ev = simpy.Event(self._env)
        ev.callbacks.append(self._trigger_get)
        return ev.succeed()

    def get(self) -> simpy.Event:
        ev = simpy.Event(self._env)
        self._getters.append(ev)
        self._trigger_get(None)
        return ev

    def _trigger_get(self, _event: Any) -> None:
        # simpy BaseResource._trigger_get with Store._do_get: only the first waiting getter is tried
        if self._getters and self.items:
            self._getters.pop(0).succeed(self.items.pop(0))


def uuid4_string(bits: int) -> str:
    """``str(uuid.UUID(int=bits, version=4))`` without building the UUID: the 128 random bits with the RFC 4122
    variant and version 4 set, as 8-4-4-4-12 hex digits."""
    bits = (bits & ~(0xc000 << 48) | 0x8000 << 48) & ~(0xf000 << 64) | 4 << 76
    h = "%032x" % bits
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


class NotFound(KeyError):
    pass


class AlreadyExists(ValueError):
    pass


def key_of(obj: Any) -> tuple[str, str]:
    return obj.metadata.namespace or "", obj.metadata.name


def resource_of(obj: Any) -> str:
    """The store an object lives in: its kind, or ``Kind.group`` for a kind whose name another API group
    also uses (a class sets ``RESOURCE``, e.g. ``"Job.batch.volcano.sh"``), as kubectl's ``jobs.batch.volcano.sh``."""
    return getattr(type(obj), "RESOURCE", None) or obj.kind


class APIServer:
    """Store with create/update/delete, resourceVersion and watch streams."""

    def __init__(self, env: simpy.Environment, rng: random.Random):
        self.env = env
        self.rng = rng
        self._objects: dict[str, dict[tuple[str, str], Any]] = {}
        self._watchers: dict[str, list[WatchStream]] = {}
        self._node_pod_watchers: dict[str, list[WatchStream]] = {}
        self._rv = 0
        self._by_uid: dict[str, Any] = {}   # uid → stored object (what a field index on metadata.uid would give)
        self.admission: dict[str, Callable[[Any], None]] = {}   # kind → mutating admission

    def new_uid(self) -> str:
        return uuid4_string(self.rng.getrandbits(128))

    def _bump(self, obj: Any) -> None:
        self._rv += 1
        obj.metadata.resource_version = str(self._rv)

    def _notify(self, kind: str, ev: WatchEvent) -> None:
        for store in self._watchers.get(kind, ()):
            store.put(ev)
        if kind == "Pod":
            node = ev.obj.spec.node_name
            for store in self._node_pod_watchers.get(node, ()) if node else ():
                store.put(ev)

    def create(self, obj: Any) -> Any:
        kind = resource_of(obj)
        objs = self._objects.setdefault(kind, {})
        k = key_of(obj)
        if k in objs:
            raise AlreadyExists(f'{obj.kind.lower()}s "{obj.metadata.name}" already exists')
        if kind in self.admission:
            self.admission[kind](obj)
        obj.metadata.uid = obj.metadata.uid or self.new_uid()   # the loader drops input uids (system field)
        if obj.metadata.creation_timestamp is None:
            obj.metadata.creation_timestamp = self.env.now
        self._bump(obj)
        objs[k] = obj
        self._by_uid[obj.metadata.uid] = obj
        self._notify(kind, WatchEvent(ADDED, obj))
        return obj

    def update(self, obj: Any) -> Any:
        kind = resource_of(obj)
        if key_of(obj) not in self._objects.get(kind, {}):
            raise NotFound(f'{obj.kind.lower()}s "{obj.metadata.name}" not found')
        self._bump(obj)
        self._notify(kind, WatchEvent(MODIFIED, obj))
        return obj

    def delete(self, obj: Any) -> None:
        kind = resource_of(obj)
        objs = self._objects.get(kind, {})
        if objs.pop(key_of(obj), None) is None:
            raise NotFound(f'{obj.kind.lower()}s "{obj.metadata.name}" not found')
        self._by_uid.pop(obj.metadata.uid, None)
        self._bump(obj)
        self._notify(kind, WatchEvent(DELETED, obj))

    def get(self, kind: str, namespace: str, name: str) -> Optional[Any]:
        objs = self._objects.get(kind)
        return objs.get((namespace or "", name)) if objs else None

    def get_by_uid(self, kind: str, uid: str) -> Optional[Any]:
        """The stored object of ``kind`` with this uid, or None (deleted, or never created)."""
        obj = self._by_uid.get(uid)
        return obj if obj is not None and resource_of(obj) == kind else None

    def list(self, kind: str, where: Optional[Callable[[Any], bool]] = None) -> list[Any]:
        objs = self._objects.get(kind, {}).values()
        return [o for o in objs if where is None or where(o)]

    def watch(self, kind: str) -> WatchStream:
        """A stream of WatchEvents for ``kind``; existing objects are replayed as ADDED first."""
        store = WatchStream(self.env)
        for obj in self._objects.get(kind, {}).values():
            store.put(WatchEvent(ADDED, obj))
        self._watchers.setdefault(kind, []).append(store)
        return store

    def watch_node_pods(self, node: str) -> WatchStream:
        """Pods with ``spec.nodeName=<node>`` (a field-selector watch, as the kubelet's pod source uses)."""
        store = WatchStream(self.env)
        self._node_pod_watchers.setdefault(node, []).append(store)
        return store
