"""Pending workloads per ClusterQueue (mirrors kueue pkg/cache/queue: cluster_queue.go, manager.go).

Each ClusterQueue keeps a heap ordered by priority (higher first) then queue-order timestamp (creation, or
the eviction time after a PodsReady timeout with ``requeuingStrategy.timestamp: Eviction``). The scheduler
takes one head per ClusterQueue per cycle.
- BestEffortFIFO: a head that cannot be admitted is set aside in ``inadmissible`` and newer workloads can go
  ahead; set-aside workloads return to the heap when quota may have freed in the cohort (a workload finished
  or was evicted, a queue changed).
- StrictFIFO: the head goes back into the heap and blocks the queue until such an event.
"""
from __future__ import annotations

import heapq
from typing import Optional

from .workload import Info


class _Group:
    """Pending workloads with one signature (same requests, priority and pod constraints), by queue time."""

    __slots__ = ("heap", "members")

    def __init__(self) -> None:
        self.heap: list[tuple[float, int, Info]] = []
        self.members: dict[str, Info] = {}

    def add(self, info: Info) -> None:
        self.members[info.key] = info
        heapq.heappush(self.heap, (info.queued_at, info.seq, info))

    def head(self) -> Optional[Info]:
        while self.heap:
            qa, seq, info = self.heap[0]
            if self.members.get(info.key) is info and qa == info.queued_at:
                return info
            heapq.heappop(self.heap)
        return None

    def merge(self, other: "_Group") -> "_Group":
        big, small = (self, other) if len(self.members) >= len(other.members) else (other, self)
        for info in small.members.values():
            big.add(info)
        return big


class ClusterQueueQueue:
    """The pending workloads of one ClusterQueue. Workloads are grouped by signature so that BestEffortFIFO's
    "set aside" and "requeue everything set aside" move whole groups at once (identical workloads fail
    identically; see ``set_aside_like``); the order seen by the scheduler is upstream's."""

    def __init__(self, name: str, strategy: str):
        self.name, self.strategy = name, strategy
        self._active: dict[object, _Group] = {}
        self._inadmissible: dict[object, _Group] = {}
        self._heap: list[tuple[int, float, int, object]] = []     # group heads: (−priority, queued_at, seq, sig)
        self.blocked = False                    # StrictFIFO head waits for an event

    def __len__(self) -> int:
        return sum(len(g.members) for g in self._active.values()) + \
            sum(len(g.members) for g in self._inadmissible.values())

    def has_heads(self) -> bool:
        return not self.blocked and bool(self._active)

    def contains(self, info: Info) -> bool:
        return any(info.key in g.members for g in (self._active.get(info.signature),
                                                   self._inadmissible.get(info.signature)) if g is not None)

    def pending(self) -> list[Info]:
        out = [i for g in [*self._active.values(), *self._inadmissible.values()] for i in g.members.values()]
        return sorted(out, key=lambda i: (-i.priority, i.queued_at, i.seq))

    def _push_entry(self, info: Info) -> None:
        heapq.heappush(self._heap, (-info.priority, info.queued_at, info.seq, info.signature))

    def push(self, info: Info) -> None:
        sig = info.signature
        g = self._inadmissible.get(sig)
        if g is not None and g.members.pop(info.key, None) is not None and not g.members:
            del self._inadmissible[sig]
        g = self._active.get(sig)
        if g is None:
            g = self._active[sig] = _Group()
        elif info.key in g.members:
            return
        head = g.head()
        g.add(info)
        if head is None or (info.queued_at, info.seq) < (head.queued_at, head.seq):
            self._push_entry(info)
        self.blocked = False    # a new head may be admissible

    def delete(self, info: Info) -> None:
        for groups in (self._active, self._inadmissible):
            g = groups.get(info.signature)
            if g is not None and g.members.pop(info.key, None) is not None:
                if not g.members:
                    del groups[info.signature]
                elif groups is self._active:
                    h = g.head()
                    if h is not None:
                        self._push_entry(h)

    def pop_head(self) -> Optional[Info]:
        if self.blocked:
            return None
        while self._heap:
            _, qa, seq, sig = self._heap[0]
            g = self._active.get(sig)
            h = g.head() if g is not None else None
            if h is None or h.queued_at != qa or h.seq != seq:
                heapq.heappop(self._heap)
                continue
            heapq.heappop(self._heap)
            heapq.heappop(g.heap)
            del g.members[h.key]
            nh = g.head()
            if nh is None:
                del self._active[sig]
            else:
                self._push_entry(nh)
            return h
        return None

    def set_aside_like(self, info: Info) -> None:
        """BestEffortFIFO: move every workload still pending with the same signature as ``info`` to
        ``inadmissible`` — gpusim's shortcut for popping each of them in the next cycles and failing
        identically while usage in the cohort only grows (any release re-queues them all)."""
        g = self._active.pop(info.signature, None)
        if g is not None:
            old = self._inadmissible.get(info.signature)
            self._inadmissible[info.signature] = g if old is None else old.merge(g)

    def requeue(self, info: Info, immediate: bool, namespace_mismatch: bool = False) -> None:
        """After a failed nomination (cluster_queue.go RequeueIfNotPresent): StrictFIFO keeps the head (and
        blocks) unless the workload's namespace does not match the selector, which sends it to the
        inadmissible workloads in either strategy (RequeueReasonNamespaceMismatch); BestEffortFIFO sets it aside
        unless ``immediate`` (pending preemption, or it no longer fitted after another admission)."""
        if self.strategy == "StrictFIFO" and not namespace_mismatch:
            self.push(info)
            self.blocked = not immediate
        elif immediate and not namespace_mismatch:
            self.push(info)
        else:
            g = self._inadmissible.get(info.signature)
            if g is None:
                g = self._inadmissible[info.signature] = _Group()
            g.add(info)
            self.set_aside_like(info)

    def queue_inadmissible(self) -> bool:
        """QueueInadmissibleWorkloads: everything set aside goes back to the heap."""
        moved = bool(self._inadmissible) or self.blocked
        for sig, g in self._inadmissible.items():
            cur = self._active.get(sig)
            g = g if cur is None else cur.merge(g)
            self._active[sig] = g
            h = g.head()
            if h is not None:
                self._push_entry(h)
        self._inadmissible = {}
        self.blocked = False
        return moved and bool(self._active)
