"""The Volcano scheduler (mirrors volcano-sh/volcano pkg/scheduler/scheduler.go runOnce and
framework/framework.go OpenSession/CloseSession): every ``schedule-period`` (1 s) it opens a session over a
snapshot, runs the configured actions in order, and closes the session (plugins' OnSessionClose, then
PodGroup status). It only takes pods whose ``schedulerName`` is ``volcano``; it binds them through the
apiserver and the kubelet runs them as any other pod.

A period in which none of the objects it reads (Pods, Nodes, PodGroups, Queues, HyperNodes) changed since the last
session ended (its own writes excepted) is skipped: that session would see what the last one left and
decide the same (a simulation shortcut; upstream runs it anyway). So the scheduler sleeps until a change,
then runs at the next period boundary.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generator

from .actions import ACTIONS
from .cache import SchedulerCache
from .conf import SchedulerConf
from .framework import Session
from .hypernodes import HyperNodes
from .plugins import BUILDERS

SCHEDULER_NAME = "volcano"
SCHEDULE_PERIOD = 1.0     # --schedule-period default
WATCHED = ("Pod", "Node", "Queue", "PodGroup.scheduling.volcano.sh", "HyperNode")


@dataclass
class SessionRecord:
    """What one session saw and decided, for views: queue shares (proportion), PodGroup phases."""

    time: float
    uid: str
    queues: dict = field(default_factory=dict)      # queue → weight, deserved, allocated, request, share
    jobs: dict = field(default_factory=dict)        # PodGroup ns/name → (phase, ready, #tasks, minAvailable)
    record: dict = field(default_factory=dict)      # plugin name → what it reported


class VolcanoScheduler:
    def __init__(self, ctx: Any, conf: SchedulerConf, name: str = SCHEDULER_NAME, period: float = SCHEDULE_PERIOD):
        self.ctx = ctx
        self.conf = conf
        self.name = name
        self.component = name
        self.period = period
        self.cache = SchedulerCache(ctx, name, self.component)
        self.sessions: list[SessionRecord] = []
        self.k8s: dict = {}          # kube-scheduler frameworks the wrapping plugins reuse across sessions
        self._dirty = True
        self._seen_rv = -1        # the apiserver's resourceVersion when the last session ended
        self._count = 0
        self._wake = ctx.env.event()
        for kind in WATCHED:
            ctx.env.process(self._watch(ctx.api.watch(kind)))
        ctx.env.process(self._run())

    def _watch(self, store) -> Generator:
        while True:
            ev = yield store.get()
            if int(ev.obj.metadata.resource_version or 0) <= self._seen_rv:
                continue          # written before the last session ended (by it or seen by it)
            self._dirty = True
            if not self._wake.triggered:
                self._wake.succeed()

    def _run(self) -> Generator:
        env = self.ctx.env
        while True:
            if not self._dirty:
                self._wake = env.event()
                yield self._wake
                nxt = (int(env.now // self.period) + 1) * self.period
                if self._count == 0 and env.now == 0:
                    nxt = 0.0
                yield env.timeout(nxt - env.now)
            self._dirty = False
            self.run_once()
            self._seen_rv = self.ctx.api._rv

    def run_once(self) -> Session:
        """runOnce: OpenSession → actions → CloseSession."""
        ctx = self.ctx
        self._count += 1
        jobs, nodes, queues, total = self.cache.snapshot()
        ssn = Session(str(self._count), self.cache, self.conf, jobs, nodes, queues, total)
        ssn.set_hyper_nodes(HyperNodes(ctx.api.list("HyperNode"), [n.node for n in nodes.values()]))
        ssn.rng = ctx.rng
        ssn.record = {}
        ssn.k8s_cache = self.k8s
        ssn.trace = lambda fn, obj, result="Success", **d: ctx.trace.add(ctx.now, self.component, fn, obj, result, **d)
        ssn.trace("framework.OpenSession", f"Session {ssn.uid}", "Success", jobs=len(jobs), nodes=len(nodes),
                  queues=len(queues), tiers=[[p.name for p in tier.plugins] for tier in self.conf.tiers],
                  actions=list(self.conf.actions))
        for tier in self.conf.tiers:
            for p in tier.plugins:
                plugin = BUILDERS[p.name](p.arguments)
                ssn.plugins[p.name] = plugin
                plugin.on_session_open(ssn)
        for name in self.conf.actions:
            ACTIONS[name].execute(ssn)
        for plugin in ssn.plugins.values():
            plugin.on_session_close(ssn)
        self._record_topology(ssn)
        for uid in sorted(ssn.jobs):
            self.cache.update_job_status(ssn, ssn.jobs[uid])
        ssn.trace("framework.CloseSession", f"Session {ssn.uid}", "Success", plugins=list(ssn.plugins))
        self.sessions.append(SessionRecord(
            ctx.now, ssn.uid, ssn.record.get("proportion", {}),
            {uid: (j.pod_group.status.phase, j.ready_task_num(), len(j.tasks), j.min_available)
             for uid, j in sorted(ssn.jobs.items())}, ssn.record))
        return ssn

    @staticmethod
    def _record_topology(ssn: Session) -> None:
        """For views: the HyperNode tree and, per job with a networkTopology, its constraint, its allocated
        HyperNode at CloseSession and what allocate decided for it this session (one entry per round:
        the gradients tried, the HyperNode chosen or "", the HyperNode-order scores of the successes)."""
        hn = ssn.hyper_nodes
        jobs = {}
        for uid, j in sorted(ssn.jobs.items()):
            nt = j.network_topology
            if nt is None:
                continue
            jobs[uid] = {"mode": nt.mode, "highestTierAllowed": nt.highest_tier_allowed,
                         "highestTierName": nt.highest_tier_name, "hyperNode": j.allocated_hyper_node,
                         "tier": hn.info[j.allocated_hyper_node].tier if j.allocated_hyper_node in hn.info else None,
                         "decisions": ssn.record.get("hyperNodeDecisions", {}).get(uid, [])}
        if jobs or len(hn.info) > 1:
            ssn.record["networkTopology"] = {"jobs": jobs, "hyperNodes": hn.record()}
