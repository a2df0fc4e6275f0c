"""Distributed training: N workers, an all-reduce barrier every step.

A pod is a training worker when it carries ``gpusim.io/training-workers`` (N),
``gpusim.io/training-steps`` and ``gpusim.io/step-time`` (instead of ``gpusim.io/duration``).
Workers share a group: ``gpusim.io/training-group``, or by default the name of the Job that created
them (its ``batch.kubernetes.io/job-name`` label), within the pod's namespace.

The model (one ``TrainingCoordinator`` per simulation, on ``Context.training``):

- each step ends with an all-reduce over all N workers, so the group advances only while N workers
  run; one step completes every ``step-time`` from the moment the N-th worker's container starts;
- a worker whose container stops (failure, deletion, node down) pauses everybody; the step in
  flight is lost. A restarted or replacement worker resumes from the last completed step, as if
  the job checkpointed every step — a simplification: real jobs checkpoint every K steps and
  also pay a restart cost (process-group re-initialisation, reloading the checkpoint);
- when the last step completes every worker's container exits 0 at the same instant (a worker
  that starts after that exits 0 at once).

A partial start — some workers running, the rest Pending — holds GPUs and does no work:
``training_report`` measures it as wasted GPU-hours.

Communication: with ``gpusim.io/allreduce-bytes`` (the gradient bytes reduced per step, e.g. ``14G``) each step
also pays the ring all-reduce of the group's current placement (gpusim.hardware.collectives, the topology
reference's §3.3 model, on the cluster's boards and fabric), less the share ``gpusim.io/allreduce-overlap``
(default 0) hidden behind compute: ``step = step-time + (1 − overlap) · T_allreduce``. The placement is where
the workers' containers actually hold GPUs when all N run (the kubelet's device records): ranks follow the
workers (Job completion index, else pod name in natural order), node after node, GPUs by index. Every
time the group starts running again (after a pause) the placement is read anew.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from ..api.duration import parse_duration
from ..api.quantity import parse_quantity
from ..api.validation import (ANNOTATION_ALLREDUCE_BYTES, ANNOTATION_ALLREDUCE_OVERLAP, ANNOTATION_STEP_TIME,
                              ANNOTATION_TRAINING_GROUP, ANNOTATION_TRAINING_STEPS, ANNOTATION_TRAINING_WORKERS,
                              parse_overlap)
from ..hardware.collectives import step_time as collective_step_time

JOB_NAME_LABELS = ("batch.kubernetes.io/job-name", "job-name", "volcano.sh/job-name")   # batch/v1, Volcano
COMPLETION_INDEX_LABEL = "batch.kubernetes.io/job-completion-index"


def is_training(pod) -> bool:
    ann = pod.metadata.annotations
    return all(k in ann for k in (ANNOTATION_TRAINING_WORKERS, ANNOTATION_TRAINING_STEPS, ANNOTATION_STEP_TIME))


def training_group(pod) -> tuple[str, str]:
    """(namespace, group): the annotation, else the owning Job's name, else the pod's own name."""
    meta = pod.metadata
    name = meta.annotations.get(ANNOTATION_TRAINING_GROUP)
    if name is None:
        name = next((meta.labels[k] for k in JOB_NAME_LABELS if k in meta.labels), meta.name)
    return meta.namespace, name


@dataclass
class Group:
    namespace: str
    name: str
    workers: int
    steps: int
    step_time: float
    steps_done: int = 0
    running: dict = field(default_factory=dict)     # (pod uid, container) → (runtime, pod name)
    pods: dict = field(default_factory=dict)        # pod uid → pod name, every worker that started
    run_since: Optional[float] = None               # all N running since (None: paused)
    useful: list = field(default_factory=list)      # closed [start, end) spans with all N running
    first_start: Optional[float] = None
    completed_at: Optional[float] = None
    token: int = 0                                  # invalidates the pending completion timer
    allreduce_bytes: float = 0.0                    # gpusim.io/allreduce-bytes (0: no communication modelled)
    overlap: float = 0.0                            # gpusim.io/allreduce-overlap
    step_seconds: Optional[float] = None            # effective step of the current/last run (compute + comm)
    placements: list = field(default_factory=list)  # one Placement per run of all N workers

    def running_workers(self) -> int:
        return len({uid for uid, _ in self.running})


@dataclass
class Placement:
    """Where the group ran from ``since``: ``nodes`` ((node, GPU indices) in rank order) and what the all-reduce
    cost there (``allreduce_seconds`` None when it could not be costed; ``error`` says why)."""

    since: float
    nodes: list
    step_seconds: float
    allreduce_seconds: Optional[float] = None
    bus_bandwidth: Optional[float] = None
    bottleneck: str = ""
    error: str = ""


def _natural(name: str) -> list:
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


class TrainingCoordinator:
    """Tracks, per group, which workers' containers run; advances steps; ends the containers."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.groups: dict[tuple[str, str], Group] = {}
        self._where: dict[tuple[str, str], Group] = {}   # (pod uid, container) → its group
        self._runtimes: list = []

    def register(self, runtime, pod, container: str) -> None:
        """The kubelet started a training worker's container (without a duration) on ``runtime``."""
        ctx, ann = self.ctx, pod.metadata.annotations
        key = training_group(pod)
        g = self.groups.get(key)
        if g is None:
            g = self.groups[key] = Group(key[0], key[1], int(ann[ANNOTATION_TRAINING_WORKERS]),
                                         int(ann[ANNOTATION_TRAINING_STEPS]),
                                         parse_duration(ann[ANNOTATION_STEP_TIME]))
            if ANNOTATION_ALLREDUCE_BYTES in ann:
                g.allreduce_bytes = float(parse_quantity(ann[ANNOTATION_ALLREDUCE_BYTES]))
                g.overlap = parse_overlap(ann.get(ANNOTATION_ALLREDUCE_OVERLAP, "0"))
        if not any(r is runtime for r in self._runtimes):
            self._runtimes.append(runtime)
            runtime.on_stop.append(self._stopped)
        uid = pod.metadata.uid
        g.pods.setdefault(uid, pod.metadata.name)
        if g.first_start is None:
            g.first_start = ctx.now
        if g.completed_at is not None:   # nothing left to do: exit 0 once the start has been recorded
            ctx.env.timeout(0).callbacks.append(lambda _e: runtime.fail(uid, container, 0, ""))
            return
        g.running[(uid, container)] = (runtime, pod.metadata.name)
        self._where[(uid, container)] = g
        self._update(g)

    def _stopped(self, rec) -> None:
        key = (rec.pod_uid, rec.name)
        g = self._where.pop(key, None)
        if g is not None and g.running.pop(key, None) is not None:
            self._update(g)

    def _update(self, g: Group) -> None:
        now = self.ctx.now
        full = g.running_workers() >= g.workers
        if full and g.run_since is None:
            g.run_since = now
            g.token += 1
            g.step_seconds = self._place(g)
            timer = self.ctx.env.timeout((g.steps - g.steps_done) * g.step_seconds)
            timer.callbacks.append(lambda _e, token=g.token: self._complete(g, token))
        elif not full and g.run_since is not None:
            g.steps_done = min(g.steps, g.steps_done + self._steps_in(g, now - g.run_since))
            g.useful.append((g.run_since, now))
            g.run_since = None
            g.token += 1
            # the pending completion timer is now ignored (its stale token): it must not keep a
            # finished run going, so it counts as housekeeping until it fires (see _complete)
            self.ctx.daemon_pending[0] += 1

    @staticmethod
    def _steps_in(g: Group, seconds: float) -> int:
        return int(math.floor(seconds / (g.step_seconds or g.step_time) + 1e-9))

    def placement(self, g: Group) -> list[tuple[str, list[int]]]:
        """The running workers' GPUs, (node, GPU indices) in rank order (see the module docstring)."""
        ctx = self.ctx
        workers = []
        for uid in dict.fromkeys(uid for uid, _ in g.running):
            pod = ctx.api.get_by_uid("Pod", uid)
            if pod is None or not pod.spec.node_name:
                continue
            index = pod.metadata.labels.get(COMPLETION_INDEX_LABEL)
            rank = (int(index) if index is not None and index.isdigit() else 1 << 30, _natural(pod.metadata.name))
            workers.append((rank, pod))
        nodes: dict[str, list[int]] = {}
        for _, pod in sorted(workers, key=lambda w: w[0]):
            gpus = sorted({h.gpu for h in ctx.held_by(pod.metadata.uid) if h.gpu is not None
                           and h.node == pod.spec.node_name})
            if gpus:
                have = nodes.setdefault(pod.spec.node_name, [])
                have.extend(i for i in gpus if i not in have)
        return [(n, sorted(ids)) for n, ids in nodes.items()]

    def _place(self, g: Group) -> float:
        """Read the placement, cost its all-reduce and record it; returns the effective step time."""
        ctx = self.ctx
        nodes = self.placement(g)
        p = Placement(ctx.now, nodes, g.step_time, 0.0 if not g.allreduce_bytes else None)
        if g.allreduce_bytes and nodes:
            try:
                cost = ctx.topology.allreduce(nodes, g.allreduce_bytes)
            except (ValueError, AttributeError) as e:
                p.error = str(e)
            else:
                p.allreduce_seconds, p.bus_bandwidth, p.bottleneck = cost.seconds, cost.bus_bandwidth, cost.bottleneck
                p.step_seconds = collective_step_time(g.step_time, cost.seconds, g.overlap)
            ctx.trace.add(ctx.now, "gpusim", "collectives.allreduce", f"TrainingGroup {g.namespace}/{g.name}",
                          p.error or "Success", placement={n: ids for n, ids in nodes},
                          allreduceSeconds=p.allreduce_seconds, busBandwidthGBps=p.bus_bandwidth,
                          stepSeconds=p.step_seconds)
        g.placements.append(p)
        return p.step_seconds

    def _complete(self, g: Group, token: int) -> None:
        if token != g.token:   # paused since: this timer was abandoned (counted in daemon_pending)
            self.ctx.daemon_pending[0] -= 1
            return
        now = self.ctx.now
        g.steps_done = g.steps
        g.useful.append((g.run_since, now))
        g.run_since, g.completed_at = None, now
        running, g.running = g.running, {}
        for (uid, container), (runtime, _name) in running.items():
            self._where.pop((uid, container), None)
            runtime.fail(uid, container, 0, "")   # the process exits 0: training done

    def steps_done(self, g: Group, at: float) -> int:
        if g.run_since is None:
            return g.steps_done
        return min(g.steps, g.steps_done + self._steps_in(g, at - g.run_since))


def coordinator(ctx) -> TrainingCoordinator:
    """The simulation's coordinator, created on first use."""
    if ctx.training is None:
        ctx.training = TrainingCoordinator(ctx)
    return ctx.training


def _overlap(a0: float, a1: float, spans: list[tuple[float, float]]) -> float:
    return sum(max(0.0, min(a1, b1) - max(a0, b0)) for b0, b1 in spans)


def training_report(result) -> list[dict]:
    """Per training group: who worked, what they held, and how much of it was wasted.

    GPU-seconds held count every device the group's pods held (admission → release, or the end of
    the run); useful ones are those held while all N workers ran; the rest is waste."""
    ctx, end = result.ctx, result.end
    coord: Optional[TrainingCoordinator] = ctx.training
    members: dict[tuple[str, str], dict[str, Any]] = {}
    for pod in result.api.list("Pod"):
        if is_training(pod):
            key = training_group(pod)
            members.setdefault(key, {})[pod.metadata.name] = pod
    groups = coord.groups if coord is not None else {}
    out = []
    for key in sorted(set(members) | set(groups)):
        g = groups.get(key)
        names = set(members.get(key, {})) | (set(g.pods.values()) if g is not None else set())
        pods = members.get(key, {})
        any_pod = next(iter(pods.values()), None)
        if g is not None:
            workers, steps, step_time = g.workers, g.steps, g.step_time
        else:
            ann = any_pod.metadata.annotations
            workers, steps = int(ann[ANNOTATION_TRAINING_WORKERS]), int(ann[ANNOTATION_TRAINING_STEPS])
            step_time = parse_duration(ann[ANNOTATION_STEP_TIME])
        useful_spans = list(g.useful) if g is not None else []
        if g is not None and g.run_since is not None:
            useful_spans.append((g.run_since, end))
        held = [h for h in ctx.holdings if h.namespace == key[0] and h.pod in names]
        changes: dict[float, int] = {}
        held_s = useful_s = 0.0
        for h in held:
            h_end = h.end if h.end is not None else end
            held_s += h_end - h.start
            useful_s += _overlap(h.start, h_end, useful_spans)
            changes[h.start] = changes.get(h.start, 0) + 1
            if h.end is not None:   # still held at the end of the run: the curve stays up
                changes[h.end] = changes.get(h.end, 0) - 1
        over_time, level = [], 0
        for t in sorted(changes):
            if changes[t]:
                level += changes[t]
                over_time.append((t, level))
        created = min((p.metadata.creation_timestamp for p in pods.values()), default=None)
        completed = g.completed_at if g is not None else None
        out.append({
            "namespace": key[0], "group": key[1], "workers": workers, "steps": steps, "step_time": step_time,
            "pods": sorted(names),
            "gpus_held_over_time": over_time,
            "gpu_seconds_held": held_s,
            "gpu_seconds_useful": useful_s,
            "wasted_gpu_hours": (held_s - useful_s) / 3600,
            "created": created,
            "first_start": g.first_start if g is not None else None,
            "completed_at": completed,
            "job_completion_time": completed - created if completed is not None and created is not None else None,
            "ideal_run_time": steps * (g.step_seconds if g is not None and g.step_seconds else step_time),
            "steps_done": coord.steps_done(g, end) if g is not None else 0,
            "step_seconds": g.step_seconds if g is not None else None,
            "placements": list(g.placements) if g is not None else [],
        })
    return out


def training_records(ctx) -> list[dict[str, Any]]:
    """The ``training`` section of the ``-o json`` record: per group, at the placement it last ran with,
    ``{namespace, group, workers, stepSeconds, allreduceSeconds, busBandwidthGBps, placement}`` (None where the
    group never ran all N workers, or the all-reduce could not be costed)."""
    coord: Optional[TrainingCoordinator] = ctx.training
    out = []
    for key in sorted(coord.groups) if coord is not None else ():
        g = coord.groups[key]
        last = g.placements[-1] if g.placements else None
        out.append({"namespace": g.namespace, "group": g.name, "workers": g.workers,
                    "stepSeconds": last.step_seconds if last else None,
                    "allreduceSeconds": last.allreduce_seconds if last else None,
                    "busBandwidthGBps": last.bus_bandwidth if last else None,
                    "placement": [{"node": n, "gpus": list(ids)} for n, ids in last.nodes] if last else []})
    return out
