"""PodGroup status controller (mirrors kubernetes-sigs/scheduler-plugins
pkg/controllers/podgroup_controller.go), run on every change of a pod labelled
``scheduling.x-k8s.io/pod-group``.

Phase rules, in upstream's order (later rules override earlier ones):
"" → Pending; Pending → Scheduling once the group has ≥ minMember pods (scheduleStartTime set);
otherwise: pods < minMember → Pending; running+succeeded < minMember → Scheduling; ≥ minMember →
Running; failed ≠ 0 and failed+running+succeeded ≥ minMember → Failed; succeeded ≥ minMember →
Finished. ``occupiedBy`` is ``<namespace>/<owner name>`` of the pods' controller (UNVERIFIED format).
PreScheduling/Scheduled no longer exist upstream and are not emitted.
"""
from __future__ import annotations

from typing import Generator

from ..api.scheduling_x_k8s_io_v1alpha1 import POD_GROUP_LABEL
from ..controlplane.context import Context


class PodGroupController:
    def __init__(self, ctx: Context):
        self.ctx = ctx
        self._pods = ctx.api.watch("Pod")
        for pg in ctx.api.list("PodGroup"):
            self.sync(pg)
        ctx.env.process(self._loop())

    def _loop(self) -> Generator:
        while True:
            ev = yield self._pods.get()
            g = ev.obj.metadata.labels.get(POD_GROUP_LABEL)
            if not g:
                continue
            pg = self.ctx.api.get("PodGroup", ev.obj.metadata.namespace, g)
            if pg is not None:
                self.sync(pg)

    def sync(self, pg) -> None:
        ns, name = pg.metadata.namespace, pg.metadata.name
        pods = self.ctx.api.list("Pod", lambda p: p.metadata.namespace == ns
                                 and p.metadata.labels.get(POD_GROUP_LABEL) == name)
        st, mm = pg.status, pg.spec.min_member
        old = (st.phase, st.running, st.succeeded, st.failed, st.occupied_by)
        if st.phase == "":
            st.phase = "Pending"
        elif st.phase == "Pending":
            if len(pods) >= mm:
                st.phase = "Scheduling"
                st.schedule_start_time = self.ctx.now
        else:
            st.running = sum(p.status.phase == "Running" for p in pods)
            st.succeeded = sum(p.status.phase == "Succeeded" for p in pods)
            st.failed = sum(p.status.phase == "Failed" for p in pods)
            owners = sorted({f"{ns}/{r.name}" for p in pods for r in p.metadata.owner_references[:1]})
            if owners:
                st.occupied_by = ",".join(owners)
            if len(pods) < mm:
                st.phase = "Pending"
            elif st.running + st.succeeded < mm:
                st.phase = "Scheduling"
            else:
                st.phase = "Running"
            if st.failed != 0 and st.failed + st.running + st.succeeded >= mm:
                st.phase = "Failed"
            if st.succeeded >= mm:
                st.phase = "Finished"
        if (st.phase, st.running, st.succeeded, st.failed, st.occupied_by) != old:
            self.ctx.api.update(pg)
            if st.phase == "Pending" and old[0] == "" and len(pods) >= mm:
                self.sync(pg)      # the controller requeues: Pending → Scheduling right away
