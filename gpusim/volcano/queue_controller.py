"""Volcano's queue controller (mirrors volcano-sh/volcano pkg/controllers/queue: queue_controller.go,
queue_controller_action.go syncQueue): opens new queues and keeps ``status`` counting the queue's PodGroups
per phase (pending, inqueue, running, unknown, completed)."""
from __future__ import annotations

from typing import Any, Generator

from ..api.scheduling_volcano_sh_v1beta1 import PodGroup

PODGROUP = PodGroup.RESOURCE


class QueueController:
    def __init__(self, ctx: Any):
        self.ctx = ctx
        ctx.env.process(self._queue_loop(ctx.api.watch("Queue")))
        ctx.env.process(self._pg_loop(ctx.api.watch(PODGROUP)))

    def _queue_loop(self, store) -> Generator:
        while True:
            ev = yield store.get()
            q = ev.obj
            if ev.type != "DELETED" and not q.status.state:
                q.status.state = "Open"
                self.ctx.api.update(q)
                self.sync(q.metadata.name)

    def _pg_loop(self, store) -> Generator:
        while True:
            ev = yield store.get()
            self.sync(ev.obj.spec.queue)

    def sync(self, name: str) -> None:
        """syncQueue: the PodGroup counters."""
        api = self.ctx.api
        q = api.get("Queue", "", name)
        if q is None:
            return
        counts = {"Pending": 0, "Inqueue": 0, "Running": 0, "Unknown": 0, "Completed": 0}
        for pg in api.list(PODGROUP, lambda pg: pg.spec.queue == name):
            phase = pg.status.phase or "Pending"
            counts[phase] = counts.get(phase, 0) + 1
        st = q.status
        new = (counts["Pending"], counts["Inqueue"], counts["Running"], counts["Unknown"], counts["Completed"])
        if (st.pending, st.inqueue, st.running, st.unknown, st.completed) != new:
            st.pending, st.inqueue, st.running, st.unknown, st.completed = new
            api.update(q)
