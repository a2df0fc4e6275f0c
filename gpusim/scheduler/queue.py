"""The scheduling queue (mirrors pkg/scheduler/backend/queue/scheduling_queue.go).

activeQ is a heap ordered by the profile's QueueSort ``less``; backoffQ holds pods whose backoff
(1s doubling to 10s per attempt) has not expired; unschedulablePods holds pods that failed until a
cluster event that one of their rejecting plugins registered for moves them (QueueingHint), or
until the 5-minute flush (checked every 30s), and pods that a PreEnqueue plugin gates.

PreEnqueue (``gate``) runs whenever a pod is about to enter activeQ or backoffQ: when it is added,
when an event or the flush moves it, and when an update to the pod may have lifted its gate
(``update``). A gated pod stays in unschedulablePods and is never attempted, so it gets no
FailedScheduling event.

Not modelled: SchedulerPopFromBackoffQ (beta, on since 1.33: with activeQ empty the scheduler pops
backoffQ early) and the 1-second ordering windows backoff expiries are aligned to.
"""
from __future__ import annotations

import heapq
from typing import Callable, Generator, Optional

from ..controlplane.context import Context
from .framework import QueuedPodInfo

DEFAULT_POD_INITIAL_BACKOFF = 1.0       # DefaultPodInitialBackoffDuration
DEFAULT_POD_MAX_BACKOFF = 10.0          # DefaultPodMaxBackoffDuration
DEFAULT_POD_MAX_IN_UNSCHEDULABLE = 300.0   # DefaultPodMaxInUnschedulablePodsDuration
UNSCHEDULABLE_FLUSH_PERIOD = 30.0


class _Item:
    __slots__ = ("qpi", "less")

    def __init__(self, qpi: QueuedPodInfo, less: Callable):
        self.qpi, self.less = qpi, less

    def __lt__(self, other: "_Item") -> bool:
        if self.less(self.qpi, other.qpi):
            return True
        if self.less(other.qpi, self.qpi):
            return False
        return self.qpi.seq < other.qpi.seq


class SchedulingQueue:
    def __init__(self, ctx: Context, less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
                 initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF, max_backoff: float = DEFAULT_POD_MAX_BACKOFF):
        self.ctx, self.less = ctx, less
        self.initial_backoff, self.max_backoff = initial_backoff, max_backoff
        self.active: list[_Item] = []
        self.in_active: set[str] = set()
        self.backoff: dict[str, QueuedPodInfo] = {}
        self.unschedulable: dict[str, QueuedPodInfo] = {}
        self.last_failure: dict[str, float] = {}
        self._waiter = None
        self._seq = 0
        self._backoff_seq = 0
        self._backoff_token: dict[str, int] = {}   # pod → the timer of its current stay in backoffQ
        # PreEnqueue: True lets the pod in; the scheduler sets this (runPreEnqueuePlugins).
        self.gate: Optional[Callable[[QueuedPodInfo], bool]] = None
        ctx.env.process(self._flush_unschedulable())

    def __len__(self) -> int:
        return len(self.in_active) + len(self.backoff) + len(self.unschedulable)

    def _push_active(self, qpi: QueuedPodInfo) -> None:
        if qpi.pod_info.key in self.in_active:
            return
        self._seq += 1
        qpi.seq = self._seq
        heapq.heappush(self.active, _Item(qpi, self.less))
        self.in_active.add(qpi.pod_info.key)
        if self._waiter is not None and not self._waiter.triggered:
            self._waiter.succeed()

    def add(self, qpi: QueuedPodInfo, gate: Optional[Callable[[QueuedPodInfo], bool]] = None) -> None:
        """A new pod: PreEnqueue gate, then activeQ (or unschedulablePods when gated)."""
        gate = gate or self.gate
        if gate is None or gate(qpi):
            self._push_active(qpi)
        else:
            self.unschedulable[qpi.pod_info.key] = qpi

    def update(self, qpi: QueuedPodInfo) -> bool:
        """Update of a pod that waits in unschedulablePods because it is gated: PreEnqueue runs again
        and, if it passes now, the pod moves on (activeQ, or backoffQ if it is still backing off).
        Returns whether the pod left unschedulablePods."""
        key = qpi.pod_info.key
        if not qpi.gated or self.unschedulable.get(key) is not qpi:
            return False
        del self.unschedulable[key]
        return self._to_backoff(qpi)

    def pop(self) -> Generator:
        while not self.active:
            self._waiter = self.ctx.env.event()
            yield self._waiter
        item = heapq.heappop(self.active)
        self.in_active.discard(item.qpi.pod_info.key)
        return item.qpi

    def delete(self, uid: str) -> None:
        self.backoff.pop(uid, None)
        self.unschedulable.pop(uid, None)
        if uid in self.in_active:
            self.active = [i for i in self.active if i.qpi.pod_info.key != uid]
            heapq.heapify(self.active)
            self.in_active.discard(uid)

    def pop_specific_pod(self, uid: str) -> Optional[QueuedPodInfo]:
        """PopSpecificPod (1.36, for podGroupInfoForPod): take the pod out of activeQ, backoffQ or unschedulablePods
        (UNVERIFIED: upstream's code for the last one was not read; its test pops pods the queue had put back after
        a failure); None when it is in none of them (in flight) or a PreEnqueue plugin gates it."""
        if uid in self.in_active:
            item = next(i for i in self.active if i.qpi.pod_info.key == uid)
            self.delete(uid)
            return item.qpi
        qpi = self.backoff.pop(uid, None)
        if qpi is not None:
            return qpi
        qpi = self.unschedulable.get(uid)
        if qpi is None or qpi.gated:
            return None
        del self.unschedulable[uid]
        return qpi

    def backoff_duration(self, qpi: QueuedPodInfo) -> float:
        """calculateBackoffDuration: initial × 2^(count−1), capped at max; 0 disables. Doubles step by step
        and stops at the cap, as upstream does to avoid overflow (a pod retried thousands of times)."""
        count = qpi.consecutive_errors or qpi.unschedulable_count
        if self.max_backoff == 0 or count == 0:
            return 0.0
        duration = self.initial_backoff
        for _ in range(1, count):
            if duration > self.max_backoff - duration:
                return self.max_backoff
            duration += duration
        return min(duration, self.max_backoff)

    def backoff_expiry(self, qpi: QueuedPodInfo) -> float:
        return self.last_failure.get(qpi.pod_info.key, 0.0) + self.backoff_duration(qpi)

    def add_unschedulable(self, qpi: QueuedPodInfo, error: bool = False) -> None:
        """AddUnschedulableIfNotPresent: errors go to backoffQ; rejections to unschedulablePods."""
        key = qpi.pod_info.key
        self.last_failure[key] = self.ctx.now
        if error:
            self._to_backoff(qpi)
        else:
            qpi.timestamp_unschedulable = self.ctx.now
            self.unschedulable[key] = qpi

    def _to_backoff(self, qpi: QueuedPodInfo) -> bool:
        """requeuePodWithQueueingStrategy(queueAfterBackoff): PreEnqueue first (a gated pod goes back
        to unschedulablePods), then backoffQ while backing off, else activeQ. Returns whether the
        pod left unschedulablePods."""
        key = qpi.pod_info.key
        if self.gate is not None and not self.gate(qpi):
            self.unschedulable[key] = qpi
            return False
        expiry = self.backoff_expiry(qpi)
        if expiry <= self.ctx.now:
            self._push_active(qpi)
            return True
        self.backoff[key] = qpi
        self._backoff_seq += 1
        self._backoff_token[key] = token = self._backoff_seq
        timer = self.ctx.env.timeout(expiry - self.ctx.now)
        timer.callbacks.append(lambda _e, q=qpi, t=token: self._backoff_done(q, t))
        return True

    def _backoff_done(self, qpi: QueuedPodInfo, token: int) -> None:
        """A backoff timer: only the one of the pod's current stay in backoffQ moves it (a pod taken out early,
        by PopSpecificPod, may be back in backoffQ with a later expiry when an old timer fires)."""
        key = qpi.pod_info.key
        if self._backoff_token.get(key) != token:
            return
        del self._backoff_token[key]
        if self.backoff.pop(key, None) is not None:
            self._push_active(qpi)

    def move(self, event: str, interested: Callable[[QueuedPodInfo, str], bool]) -> int:
        """MoveAllToActiveOrBackoffQueue for one cluster event; returns how many pods moved.
        ``interested`` is the QueueingHint check; for a gated pod, whether its gating plugin
        registered the event."""
        moved = 0
        for key in sorted(self.unschedulable, key=lambda k: self.unschedulable[k].seq):
            qpi = self.unschedulable[key]
            if not interested(qpi, event):
                continue
            del self.unschedulable[key]
            moved += self._to_backoff(qpi)
        return moved

    def activate(self, uids) -> None:
        """Activate (PodsToActivate): the pods move from backoffQ or unschedulablePods to activeQ;
        gated pods stay where they are."""
        for uid in uids:
            qpi = self.backoff.pop(uid, None)
            if qpi is None:
                qpi = self.unschedulable.get(uid)
                if qpi is None or qpi.gated:
                    continue
                del self.unschedulable[uid]
            self._push_active(qpi)

    def _flush_unschedulable(self) -> Generator:
        """flushUnschedulablePodsLeftover every 30s: pods stuck longer than 5 minutes retry."""
        while True:
            yield self.ctx.daemon_timeout(UNSCHEDULABLE_FLUSH_PERIOD)
            now = self.ctx.now
            stale = [k for k, q in self.unschedulable.items()
                     if not q.gated and now - q.timestamp_unschedulable > DEFAULT_POD_MAX_IN_UNSCHEDULABLE]
            for k in stale:
                q = self.unschedulable.get(k)
                if q is not None and not q.gated:
                    self._to_backoff(self.unschedulable.pop(k))
