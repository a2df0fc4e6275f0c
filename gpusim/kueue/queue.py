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


class ClusterQueueQueue:
    def __init__(self, name: str, strategy: str):
        self.name, self.strategy = name, strategy
        self._heap: list[tuple[int, float, int, Info]] = []
        self._in_heap: dict[str, Info] = {}
        self.inadmissible: dict[str, Info] = {}
        self.blocked = False                    # StrictFIFO head waits for an event

    def __len__(self) -> int:
        return len(self._in_heap) + len(self.inadmissible)

    def pending(self) -> list[Info]:
        return sorted([*self._in_heap.values(), *self.inadmissible.values()],
                      key=lambda i: (-i.priority, i.queued_at, i.seq))

    def push(self, info: Info) -> None:
        self.inadmissible.pop(info.key, None)
        if info.key in self._in_heap:
            return
        self._in_heap[info.key] = info
        heapq.heappush(self._heap, (-info.priority, info.queued_at, info.seq, info))
        self.blocked = False    # a new head may be admissible

    def delete(self, key: str) -> None:
        self._in_heap.pop(key, None)
        self.inadmissible.pop(key, None)

    def pop_head(self) -> Optional[Info]:
        if self.blocked:
            return None
        while self._heap:
            _, _, _, info = heapq.heappop(self._heap)
            if self._in_heap.get(info.key) is info:
                del self._in_heap[info.key]
                return info
        return None

    def requeue(self, info: Info, immediate: bool) -> None:
        """After a failed nomination: StrictFIFO keeps the head (and blocks); BestEffortFIFO sets it aside
        unless ``immediate`` (pending preemption, or it no longer fitted after another admission)."""
        if self.strategy == "StrictFIFO":
            self.push(info)
            self.blocked = not immediate
        elif immediate:
            self.push(info)
        else:
            self.inadmissible[info.key] = info

    def queue_inadmissible(self) -> bool:
        moved = bool(self.inadmissible) or self.blocked
        for info in list(self.inadmissible.values()):
            self.push(info)
        self.blocked = False
        return moved and bool(self._in_heap)
