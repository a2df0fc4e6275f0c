"""Metrics shared by every scheduling policy (kube-scheduler plugins, Volcano, Kueue), computed from a
finished run's records: pods' timestamps, device holdings (which pod held which GPU when) and the
training report. Pure, deterministic functions over records; the ``*(result, ...)`` helpers only
gather the records of a Result first.

- ``gpu_share_over_time``: per-tenant GPU share (held devices / cluster allocatable) as a step function.
- ``cluster_gpu_utilization``: allocated GPUs / allocatable GPUs over time, and its time average.
- ``queueing_delays``: pod creation → containers started; ``job_queueing_delays``: Job creation → all of
  its ``parallelism`` pods running at once (the gang is complete).
- ``job_completion_times``: Job creation → Complete (batch/v1 ``status.completionTime``).
- ``wasted_gpu_hours``: per training group, from gpusim.workloads.training.training_report.
- ``jain_index``: Jain's fairness index of any allocation vector.

A *tenant* is a caller-supplied function of a PodRecord; the default is the namespace. Helpers read
what the other components put on pods: ``tenant_by_kueue_queue`` (label ``kueue.x-k8s.io/queue-name``
on the pod or its Job), ``tenant_by_volcano_queue`` (annotation ``scheduling.volcano.sh/queue-name``, or
``scheduling.k8s.io/group-name`` → the Volcano PodGroup's ``spec.queue``), ``tenant_by_label``.

"Utilization" here is allocation (what the scheduler handed out), not SM activity (see DCGM in
gpusim.node). Pods deleted during the run (preempted, evicted) are known only through their device
holdings: their records carry namespace and name, no labels.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

NVIDIA_GPU = "nvidia.com/gpu"
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"            # kueue: constants.QueueLabel
VOLCANO_GROUP_ANNOTATION = "scheduling.k8s.io/group-name"  # volcano apis: v1beta1.KubeGroupNameAnnotationKey
VOLCANO_QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"   # volcano apis: v1beta1.QueueNameAnnotationKey
VOLCANO_PODGROUP_RESOURCES = ("PodGroup.scheduling.volcano.sh", "PodGroup")   # stores that may hold them


@dataclass(frozen=True)
class PodRecord:
    """What the metrics need of one pod (times in simulated seconds; None = did not happen)."""

    namespace: str
    name: str
    created: Optional[float] = None
    scheduled: Optional[float] = None
    started: Optional[float] = None
    finished: Optional[float] = None
    phase: str = ""
    job: Optional[str] = None                     # owning Job's name
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    owner_labels: Mapping[str, str] = field(default_factory=dict)   # the owning Job's labels


@dataclass(frozen=True)
class Allocation:
    """One device held by a pod over [start, end)."""

    namespace: str
    pod: str
    node: str
    device: str
    start: float
    end: float


@dataclass(frozen=True)
class JobRecord:
    namespace: str
    name: str
    created: float
    parallelism: int = 1
    completed: Optional[float] = None


@dataclass
class StepSeries:
    """A step function: ``values[k][i]`` holds on [times[i], times[i+1]) (the last one up to ``end``)."""

    times: list[float]
    values: dict[str, list[float]]
    end: float

    def at(self, key: str, t: float) -> float:
        v = 0.0
        for ti, vi in zip(self.times, self.values[key]):
            if ti > t:
                break
            v = vi
        return v

    def integral(self, key: str) -> float:
        """∫ values[key] dt over [times[0], end]."""
        bounds = self.times[1:] + [self.end]
        return sum(v * (b - a) for a, b, v in zip(self.times, bounds, self.values[key]))


Tenant = Callable[[PodRecord], str]


# --- tenants --------------------------------------------------------------------------------------------------
def tenant_by_namespace(rec: PodRecord) -> str:
    return rec.namespace


def tenant_by_label(key: str, fallback: Tenant = tenant_by_namespace) -> Tenant:
    """The pod's label ``key``, else its Job's, else ``fallback``."""
    def tenant(rec: PodRecord) -> str:
        return rec.labels.get(key) or rec.owner_labels.get(key) or fallback(rec)
    return tenant


tenant_by_kueue_queue: Tenant = tenant_by_label(KUEUE_QUEUE_LABEL)


def tenant_by_volcano_queue(result: Any, fallback: Tenant = tenant_by_namespace) -> Tenant:
    """The pod's Volcano queue: annotation ``scheduling.volcano.sh/queue-name``, else the ``spec.queue``
    of its PodGroup (annotation ``scheduling.k8s.io/group-name``), else ``fallback``."""
    queues: dict[tuple[str, str], str] = {}
    for resource in VOLCANO_PODGROUP_RESOURCES:
        for pg in result.api.list(resource):
            q = getattr(pg.spec, "queue", None)
            if q:
                queues[(pg.metadata.namespace, pg.metadata.name)] = q

    def tenant(rec: PodRecord) -> str:
        if rec.annotations.get(VOLCANO_QUEUE_ANNOTATION):
            return rec.annotations[VOLCANO_QUEUE_ANNOTATION]
        group = rec.annotations.get(VOLCANO_GROUP_ANNOTATION)
        if not group:
            return fallback(rec)
        return queues.get((rec.namespace, group)) or fallback(rec)
    return tenant


# --- gathering records from a Result ----------------------------------------------------------------------------
def pod_records(result: Any) -> list[PodRecord]:
    """Every pod still in the apiserver, plus (namespace and name only) pods that held devices and were
    deleted; sorted by namespace/name."""
    from .records import to_json
    jobs = {(j.metadata.namespace, j.metadata.name): j for j in result.api.list("Job")}
    by_key = {(p.metadata.namespace, p.metadata.name): p for p in result.api.list("Pod")}
    out: dict[tuple[str, str], PodRecord] = {}
    for d in to_json(result)["pods"]:
        key = (d["namespace"], d["name"])
        pod = by_key[key]
        owner = next((o.name for o in pod.metadata.owner_references if o.kind == "Job"), None)
        job = jobs.get((key[0], owner)) if owner else None
        out[key] = PodRecord(key[0], key[1], d["createdAt"], d["scheduledAt"], d["startedAt"], d["finishedAt"],
                             d["phase"], owner, dict(pod.metadata.labels), dict(pod.metadata.annotations),
                             dict(job.metadata.labels) if job is not None else {})
    for h in result.ctx.holdings:
        key = (h.namespace, h.pod)
        if key not in out:
            out[key] = PodRecord(h.namespace, h.pod, phase="Deleted")
    return [out[k] for k in sorted(out)]


def allocations(result: Any, resource: str = NVIDIA_GPU) -> list[Allocation]:
    """Device holdings of ``resource``; holdings still open end at the end of the run."""
    return [Allocation(h.namespace, h.pod, h.node, h.device, h.start, h.end if h.end is not None else result.end)
            for h in result.ctx.holdings if h.resource == resource]


def capacity(result: Any, resource: str = NVIDIA_GPU) -> float:
    """Σ node allocatable of ``resource`` at the end of the run."""
    from .api.quantity import parse_quantity
    return float(sum((parse_quantity(n.status.allocatable.get(resource, 0)) for n in result.nodes()), Fraction(0)))


def job_records(result: Any) -> list[JobRecord]:
    return [JobRecord(j.metadata.namespace, j.metadata.name, j.metadata.creation_timestamp or 0.0,
                      j.spec.parallelism if j.spec.parallelism is not None else 1, j.status.completion_time)
            for j in result.jobs()]


# --- pure metrics over records ------------------------------------------------------------------------------------
def share_over_time(allocs: Iterable[Allocation], records: Iterable[PodRecord], total: float, end: float,
                    tenant: Tenant = tenant_by_namespace, normalize: bool = True) -> StepSeries:
    """Per-tenant devices held (÷ ``total`` when ``normalize``) as a step function from t=0 to ``end``."""
    recs = {(r.namespace, r.name): r for r in records}
    deltas: dict[float, dict[str, int]] = {0.0: {}}
    tenants: set[str] = set()
    for a in allocs:
        rec = recs.get((a.namespace, a.pod)) or PodRecord(a.namespace, a.pod)
        who = tenant(rec)
        tenants.add(who)
        for t, d in ((a.start, 1), (a.end, -1)):
            if a.start == a.end:
                continue
            slot = deltas.setdefault(t, {})
            slot[who] = slot.get(who, 0) + d
    names = sorted(tenants)
    level = {n: 0 for n in names}
    times: list[float] = []
    values: dict[str, list[float]] = {n: [] for n in names}
    scale = (1.0 / total) if normalize and total else 1.0
    for t in sorted(deltas):
        if t > end:
            break
        for n, d in deltas[t].items():
            level[n] += d
        if times and all(values[n][-1] == level[n] * scale for n in names):
            continue                                      # no change: keep the step
        times.append(t)
        for n in names:
            values[n].append(level[n] * scale)
    return StepSeries(times, values, end)


def utilization_over_time(allocs: Iterable[Allocation], total: float, end: float) -> StepSeries:
    """Allocated devices ÷ ``total`` over time (one series, key ``"cluster"``)."""
    s = share_over_time(allocs, [], total, end, tenant=lambda r: "cluster")
    if not s.values:
        return StepSeries([0.0], {"cluster": [0.0]}, end)
    return s


def mean_utilization(series: StepSeries) -> float:
    """Time-weighted average of the ``"cluster"`` series over [0, end]."""
    return series.integral("cluster") / series.end if series.end > 0 else 0.0


def pod_queueing_delay(rec: PodRecord) -> Optional[float]:
    """Creation → containers started (None if the pod never started)."""
    if rec.created is None or rec.started is None:
        return None
    return rec.started - rec.created


def all_running_at(job: JobRecord, pods: Sequence[PodRecord], end: float) -> Optional[float]:
    """The first instant at which ``parallelism`` pods of the job were running at once."""
    events: list[tuple[float, int]] = []
    for p in pods:
        if p.started is not None:
            stop = p.finished if p.finished is not None else end
            if stop > p.started:
                events += [(p.started, 1), (stop, -1)]
    running = 0
    for t, d in sorted(events, key=lambda e: (e[0], e[1])):    # a stop before a start at the same instant
        running += d
        if running >= job.parallelism:
            return t
    return None


def job_queueing_delay(job: JobRecord, pods: Sequence[PodRecord], end: float) -> Optional[float]:
    """Job creation → all of its ``parallelism`` pods running (None if that never happened)."""
    t = all_running_at(job, pods, end)
    return None if t is None else t - job.created


def job_completion_time(job: JobRecord) -> Optional[float]:
    return None if job.completed is None else job.completed - job.created


def jain_index(xs: Sequence[float]) -> float:
    """Jain's fairness index J = (Σx)² / (n·Σx²): 1 when everybody gets the same, 1/n when one gets all.
    R. Jain, D.-M. Chiu, W. Hawe, "A Quantitative Measure of Fairness and Discrimination for Resource
    Allocation in Shared Computer Systems", DEC Research Report TR-301, 1984. All zeros count as equal (1)."""
    n = len(xs)
    if n == 0:
        raise ValueError("Jain's index needs at least one value")
    if any(x < 0 for x in xs):
        raise ValueError("Jain's index is defined for non-negative values")
    sq = sum(x * x for x in xs)
    return 1.0 if sq == 0 else sum(xs) ** 2 / (n * sq)


# --- Result wrappers ------------------------------------------------------------------------------------------------
def gpu_share_over_time(result: Any, tenant: Tenant = tenant_by_namespace, resource: str = NVIDIA_GPU,
                        normalize: bool = True) -> StepSeries:
    return share_over_time(allocations(result, resource), pod_records(result), capacity(result, resource),
                           result.end, tenant, normalize)


def gpu_hours_by_tenant(result: Any, tenant: Tenant = tenant_by_namespace, resource: str = NVIDIA_GPU) -> dict:
    """GPU-hours each tenant held over the run."""
    s = gpu_share_over_time(result, tenant, resource, normalize=False)
    return {k: s.integral(k) / 3600 for k in s.values}


def cluster_gpu_utilization(result: Any, resource: str = NVIDIA_GPU) -> StepSeries:
    return utilization_over_time(allocations(result, resource), capacity(result, resource), result.end)


def queueing_delays(result: Any) -> dict[str, Optional[float]]:
    """``namespace/name`` → pod queueing delay."""
    return {f"{r.namespace}/{r.name}": pod_queueing_delay(r) for r in pod_records(result) if r.created is not None}


def job_queueing_delays(result: Any) -> dict[str, Optional[float]]:
    recs = pod_records(result)
    return {f"{j.namespace}/{j.name}": job_queueing_delay(
        j, [r for r in recs if r.namespace == j.namespace and r.job == j.name], result.end)
        for j in job_records(result)}


def job_completion_times(result: Any) -> dict[str, Optional[float]]:
    return {f"{j.namespace}/{j.name}": job_completion_time(j) for j in job_records(result)}


def wasted_gpu_hours(result: Any) -> dict[str, float]:
    """``namespace/group`` → GPU-hours held while the training group could not step."""
    from .workloads.training import training_report
    return {f"{g['namespace']}/{g['group']}": g["wasted_gpu_hours"] for g in training_report(result)}


def tenant_fairness(result: Any, tenant: Tenant = tenant_by_namespace, resource: str = NVIDIA_GPU) -> float:
    """Jain's index over the GPU-hours each tenant held."""
    hours = gpu_hours_by_tenant(result, tenant, resource)
    return jain_index(list(hours.values())) if hours else 1.0
