"""One multi-tenant workload under four policy stacks — the course's fourth failure scenario.

Team A trains large data-parallel jobs (gangs of 8 one-GPU workers) and submits them all at once;
team B serves inference (small Jobs of one-GPU pods) a few minutes later. The same workload, seed
and clock run under:

- ``default``: kube-scheduler alone — no gang, no quota, FIFO by creation time, so B waits behind
  every pod A created before it;
- ``scheduler-plugins``: kube-scheduler with Coscheduling (one PodGroup per training Job) and
  CapacityScheduling (one ElasticQuota per team: ``min`` = the team's guaranteed GPUs,
  ``max`` = guaranteed + borrowing limit), as scheduler-plugins' sample config enables them;
- ``volcano``: Volcano Jobs in one Queue per team (``weight``), with the actions
  ``enqueue, allocate, preempt, reclaim, backfill``;
- ``kueue``: batch/v1 Jobs labelled with a LocalQueue per team; one ClusterQueue per team in one
  cohort (``nominalQuota`` = guaranteed GPUs, ``borrowingLimit``), reclaiming lent quota.

Each scenario is plain YAML (what a user would ``kubectl apply``); ``compare`` runs them and measures
them with gpusim.metrics. Nothing here changes how any component behaves.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Optional, Sequence

import yaml

POLICIES = ("default", "scheduler-plugins", "volcano", "kueue")
GPU = "nvidia.com/gpu"
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"       # kueue apis/kueue/v1beta2 constants
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"     # scheduler-plugins apis/scheduling
# The actions of Volcano's Helm chart plus preempt and reclaim (docs: "actions: enqueue, allocate,
# preempt, reclaim, backfill"); tiers as the chart's volcano-scheduler.conf.
VOLCANO_CONF = """actions: "enqueue, allocate, preempt, reclaim, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
"""


@dataclass(frozen=True)
class TrainingJob:
    name: str
    workers: int = 8
    steps: int = 1200
    step_time: str = "3s"        # 1200 × 3 s = 1 h once all workers run
    submit_at: str = "0s"


@dataclass(frozen=True)
class InferenceJob:
    name: str
    replicas: int = 4
    duration: str = "30m"
    submit_at: str = "5m"


@dataclass(frozen=True)
class Team:
    name: str                    # namespace, queue and quota name
    guaranteed: int              # GPUs: ElasticQuota min, Volcano share by weight, Kueue nominalQuota
    weight: int = 1              # Volcano Queue weight, Kueue fairSharing weight
    borrowing_limit: Optional[int] = None   # None: may borrow everything others leave unused
    training: tuple[TrainingJob, ...] = ()
    inference: tuple[InferenceJob, ...] = ()


@dataclass(frozen=True)
class MultiTenant:
    """The workload and the cluster it runs on."""

    nodes: int = 4
    gpus_per_node: int = 8
    model: str = "A100-SXM4-80GB"
    seed: int = 7
    until: str = "6h"
    reclaim: bool = True         # may a team take back lent quota by preempting the borrower?
    # Volcano only: False marks every Volcano Job volcano.sh/preemptable: "false". reclaim and preempt evict
    # only preemptable tasks (vc:pkg/scheduler/actions/reclaim/reclaim.go skips !task.Preemptable), and
    # GetPodPreemptable (vc:pkg/scheduler/api/pod_info.go) makes an unmarked task preemptable since v1.7.0;
    # with False the reclaim action finds no victim.
    volcano_preemptable: bool = True
    teams: tuple[Team, ...] = field(default_factory=lambda: (
        Team("team-a", 16, training=tuple(TrainingJob(f"train-{i}", submit_at=f"{i * 10}s") for i in range(6))),
        Team("team-b", 16, inference=tuple(InferenceJob(f"serve-{i}", submit_at=f"{5 + i}m") for i in range(4))),
    ))

    @property
    def total_gpus(self) -> int:
        return self.nodes * self.gpus_per_node

    def with_team(self, name: str, **changes: Any) -> "MultiTenant":
        return replace(self, teams=tuple(replace(t, **changes) if t.name == name else t for t in self.teams))


def _container(name: str, image: str) -> dict:
    return {"name": name, "image": image, "resources": {"limits": {GPU: 1}}}


def _training_template(job: TrainingJob, extra_labels: dict) -> dict:
    return {"metadata": {"labels": dict(extra_labels),
                         "annotations": {"gpusim.io/training-workers": str(job.workers),
                                         "gpusim.io/training-steps": str(job.steps),
                                         "gpusim.io/step-time": job.step_time}},
            "spec": {"restartPolicy": "Never", "containers": [_container("worker", "nvcr.io/nvidia/pytorch:24.08-py3")]}}


def _inference_template(job: InferenceJob, extra_labels: dict) -> dict:
    return {"metadata": {"labels": dict(extra_labels), "annotations": {"gpusim.io/duration": job.duration}},
            "spec": {"restartPolicy": "Never", "containers": [_container("server", "nvcr.io/nvidia/tritonserver:24.08-py3")]}}


def _batch_job(ns: str, name: str, n: int, submit_at: str, template: dict, labels: Optional[dict] = None) -> dict:
    meta: dict = {"name": name, "namespace": ns, "annotations": {"gpusim.io/submit-at": submit_at}}
    if labels:
        meta["labels"] = dict(labels)
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
            "spec": {"parallelism": n, "completions": n, "template": template}}


def scenario(policy: str, w: MultiTenant = MultiTenant()) -> str:
    """The YAML of ``w`` under ``policy`` (one of POLICIES)."""
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; choose one of {', '.join(POLICIES)}")
    docs: list[dict] = [
        {"apiVersion": "gpusim.io/v1alpha1", "kind": "Simulation", "metadata": {"name": f"multi-tenant-{policy}"},
         "spec": {"seed": w.seed, "until": w.until}},
        {"apiVersion": "gpusim.io/v1alpha1", "kind": "NodePool", "metadata": {"name": "a100"},
         "spec": {"count": w.nodes, "gpu": {"model": w.model, "count": w.gpus_per_node}, "cpu": "128", "memory": "1Ti"}},
    ]
    docs += [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": t.name}} for t in w.teams]
    docs += {"default": _default, "scheduler-plugins": _scheduler_plugins, "volcano": _volcano, "kueue": _kueue}[policy](w)
    return yaml.safe_dump_all(docs, sort_keys=False)


def _default(w: MultiTenant) -> list[dict]:
    out = []
    for t in w.teams:
        out += [_batch_job(t.name, j.name, j.workers, j.submit_at, _training_template(j, {})) for j in t.training]
        out += [_batch_job(t.name, j.name, j.replicas, j.submit_at, _inference_template(j, {})) for j in t.inference]
    return out


def _scheduler_plugins(w: MultiTenant) -> list[dict]:
    """Coscheduling + CapacityScheduling, as scheduler-plugins' manifests/capacityscheduling and
    manifests/coscheduling sample configs enable them (one profile, CapacityScheduling as the only PostFilter)."""
    out: list[dict] = [{
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "plugins": {
            "multiPoint": {"enabled": [{"name": "Coscheduling"}, {"name": "CapacityScheduling"}]},
            "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
            "postFilter": {"enabled": [{"name": "CapacityScheduling"}], "disabled": [{"name": "*"}]}}}]}]
    for t in w.teams:
        hi = w.total_gpus if t.borrowing_limit is None else t.guaranteed + t.borrowing_limit
        out.append({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "ElasticQuota",
                    "metadata": {"name": t.name, "namespace": t.name},
                    "spec": {"min": {GPU: t.guaranteed}, "max": {GPU: hi}}})
        for j in t.training:
            out.append({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                        "metadata": {"name": j.name, "namespace": t.name}, "spec": {"minMember": j.workers}})
            out.append(_batch_job(t.name, j.name, j.workers, j.submit_at,
                                  _training_template(j, {POD_GROUP_LABEL: j.name})))
        out += [_batch_job(t.name, j.name, j.replicas, j.submit_at, _inference_template(j, {})) for j in t.inference]
    return out


def _volcano(w: MultiTenant) -> list[dict]:
    out: list[dict] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "volcano-system"}},
                       {"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "volcano-scheduler-configmap", "namespace": "volcano-system"},
                        "data": {"volcano-scheduler.conf": VOLCANO_CONF if w.reclaim
                                 else VOLCANO_CONF.replace(", reclaim", "")}}]
    # as examples/volcano-queues.yaml marks its elastic job (see MultiTenant.volcano_preemptable)
    job_annotations = {} if w.volcano_preemptable else {"volcano.sh/preemptable": "false"}
    for t in w.teams:
        spec: dict = {"weight": t.weight, "reclaimable": True}
        if t.borrowing_limit is not None:
            spec["capability"] = {GPU: t.guaranteed + t.borrowing_limit}
        out.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": t.name},
                    "spec": spec})
        for j, n, tmpl, mins in ([(j, j.workers, _training_template(j, {}), j.workers) for j in t.training]
                                 + [(j, j.replicas, _inference_template(j, {}), 1) for j in t.inference]):
            out.append({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                        "metadata": {"name": j.name, "namespace": t.name,
                                     "annotations": {"gpusim.io/submit-at": j.submit_at, **job_annotations}},
                        "spec": {"schedulerName": "volcano", "queue": t.name, "minAvailable": mins,
                                 "tasks": [{"name": "worker", "replicas": n, "template": tmpl}]}})
    return out


def _kueue(w: MultiTenant) -> list[dict]:
    out: list[dict] = [{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
                        "metadata": {"name": "a100"}, "spec": {}}]
    for t in w.teams:
        res: dict = {"name": GPU, "nominalQuota": t.guaranteed}
        if t.borrowing_limit is not None:
            res["borrowingLimit"] = t.borrowing_limit
        out.append({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": t.name},
                    "spec": {"namespaceSelector": {}, "cohortName": "org",
                             "resourceGroups": [{"coveredResources": [GPU],
                                                 "flavors": [{"name": "a100", "resources": [res]}]}],
                             "preemption": {"reclaimWithinCohort": "Any" if w.reclaim else "Never",
                                            "withinClusterQueue": "LowerPriority"},
                             "fairSharing": {"weight": t.weight}}})
        out.append({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
                    "metadata": {"name": t.name, "namespace": t.name}, "spec": {"clusterQueue": t.name}})
        labels = {KUEUE_QUEUE_LABEL: t.name}
        out += [_batch_job(t.name, j.name, j.workers, j.submit_at, _training_template(j, {}), labels) for j in t.training]
        out += [_batch_job(t.name, j.name, j.replicas, j.submit_at, _inference_template(j, {}), labels)
                for j in t.inference]
    return out


# --- running and measuring ------------------------------------------------------------------------------------
CONTENTION_WINDOW = 1800.0   # seconds after team B's first submission over which fairness is measured
EVICTION_REASONS = ("Preempted", "Evict", "Evicted")   # kube-scheduler / CapacityScheduling, Volcano, Kueue
EVICTED_KINDS = ("Pod", "Workload")


def _job_of(pod_name: str, jobs: set[str]) -> Optional[str]:
    """The workload a pod belongs to: batch/v1 ``<job>-<5 chars>``, Volcano ``<job>-<task>-<index>``."""
    for cut in (1, 2):
        head = pod_name.rsplit("-", cut)[0]
        if head in jobs:
            return head
    return None


def _all_running_at(spans: list[tuple[float, float]], n: int) -> Optional[float]:
    """First instant at which ``n`` of the (start, stop) spans overlap."""
    running = 0
    for t, d in sorted([(a, 1) for a, b in spans if b > a] + [(b, -1) for a, b in spans if b > a]):
        running += d
        if running >= n:
            return t
    return None


@dataclass
class Measured:
    """One policy's run of the workload, measured."""

    policy: str
    b_wait_mean: Optional[float]      # team B: submission → all replicas running, mean over its jobs (s)
    b_wait_max: Optional[float]
    b_unserved: int                   # team B jobs that never had all replicas running
    a_jct_mean: Optional[float]       # team A: submission → training done, mean over finished jobs (s)
    a_unfinished: int
    wasted_gpu_hours: float           # training GPU-hours held while the gang could not step
    utilization: float                # allocated GPU time ÷ capacity, from 0 to the last completion
    fairness: float                   # Jain's index over (share ÷ guaranteed share) in the contention window
    shares: dict[str, float]          # mean GPU share of each team in the contention window
    evictions: int                    # pods or workloads preempted / evicted
    result: Any = field(default=None, repr=False)
    useful_utilization: float = 0.0   # utilization less the GPU time held by gangs that could not step


def measure(result: Any, policy: str, w: MultiTenant = MultiTenant()) -> Measured:
    from . import metrics
    from .workloads.training import training_report
    submit = {j.name: parse_seconds(j.submit_at) for t in w.teams for j in (*t.training, *t.inference)}
    size = {j.name: j.replicas for t in w.teams for j in t.inference}
    records = metrics.pod_records(result)
    spans: dict[str, list[tuple[float, float]]] = {}
    for rec in records:
        job = _job_of(rec.name, set(submit))
        if job is not None and rec.started is not None:
            spans.setdefault(job, []).append((rec.started, rec.finished if rec.finished is not None else result.end))
    # deleted pods are known only through their device holdings
    live = {(r.namespace, r.name) for r in records if r.started is not None}
    for h in result.ctx.holdings:
        job = _job_of(h.pod, set(submit))
        if job is not None and (h.namespace, h.pod) not in live:
            spans.setdefault(job, []).append((h.start, h.end if h.end is not None else result.end))
    waits = []
    for name, n in size.items():
        t = _all_running_at(spans.get(name, []), n)
        waits.append(None if t is None else t - submit[name])
    served = [x for x in waits if x is not None]
    report = {g["group"]: g for g in training_report(result)}
    jcts = [report[j.name]["completed_at"] - submit[j.name] for t in w.teams for j in t.training
            if j.name in report and report[j.name]["completed_at"] is not None]
    n_training = sum(len(t.training) for t in w.teams)
    done = [g["completed_at"] for g in report.values() if g["completed_at"] is not None]
    allocs = metrics.allocations(result)
    last = max([*done, *(b for s in spans.values() for _, b in s)], default=result.end)
    util = sum(min(a.end, last) - a.start for a in allocs if a.start < last) / (w.total_gpus * last) if last else 0.0
    b_first = min((submit[j.name] for t in w.teams for j in t.inference), default=0.0)
    lo, hi = b_first, min(b_first + CONTENTION_WINDOW, result.end)
    held: dict[str, float] = {t.name: 0.0 for t in w.teams}
    for a in allocs:
        if a.namespace in held:
            held[a.namespace] += max(0.0, min(a.end, hi) - max(a.start, lo))
    shares = {k: v / (w.total_gpus * (hi - lo)) if hi > lo else 0.0 for k, v in held.items()}
    entitled = {t.name: t.guaranteed / w.total_gpus for t in w.teams}
    fairness = metrics.jain_index([shares[k] / entitled[k] for k in shares if entitled[k] > 0])
    # one event per evicted Pod (kube-scheduler, CapacityScheduling, Volcano) or preempted Kueue Workload;
    # Volcano also records each eviction on the PodGroup, which is not counted again
    evictions = sum(1 for e in result.events.log if e.reason in EVICTION_REASONS and e.object.kind in EVICTED_KINDS)
    wasted = sum(g["wasted_gpu_hours"] for g in report.values())
    useful = util - wasted * 3600 / (w.total_gpus * last) if last else 0.0
    return Measured(policy, sum(served) / len(served) if served else None, max(served) if served else None,
                    len(waits) - len(served), sum(jcts) / len(jcts) if jcts else None, n_training - len(jcts),
                    wasted, util, fairness, shares, evictions, result, useful)


def compare(w: MultiTenant = MultiTenant(), policies: tuple[str, ...] = POLICIES) -> list[Measured]:
    """Run ``w`` under each policy (same seed, same clock) and measure it."""
    from .cluster.simulation import run
    return [measure(run(text=scenario(p, w)), p, w) for p in policies]


def parse_seconds(s: str) -> float:
    from .api.duration import parse_duration
    return parse_duration(s)


# Where each stack sits (chapter 03): a fact of the architecture, not a measurement.
PLACEMENT = {
    "default": "kube-scheduler alone",
    "scheduler-plugins": "plugins inside kube-scheduler",
    "volcano": "a second scheduler (schedulerName: volcano)",
    "kueue": "admission above kube-scheduler (suspend/unsuspend Jobs)",
}


def _fmt_s(x: Optional[float]) -> str:
    return "—" if x is None else f"{x:,.0f} s"


def tradeoffs(rows: list[Measured]) -> dict[str, list[str]]:
    """What the measurements say about each policy, relative to the others (generated, not typed):
    best/worst on B's wait, A's completion, waste, utilization, fairness; gangs broken; jobs lost."""
    notes: dict[str, list[str]] = {m.policy: [] for m in rows}

    def rank(key, label_best: str, label_worst: str, lower_is_better: bool = True, tol: float = 0.05) -> None:
        vals = [(key(m), m.policy) for m in rows if key(m) is not None]
        if len(vals) < 2:
            return
        best = min(v for v, _ in vals) if lower_is_better else max(v for v, _ in vals)
        worst = max(v for v, _ in vals) if lower_is_better else min(v for v, _ in vals)
        if abs(worst - best) <= tol * max(abs(best), abs(worst), 1e-9):
            return                                            # no real difference
        for v, p in vals:
            if abs(v - best) <= tol * max(abs(best), 1e-9):
                notes[p].append(label_best)
            elif abs(v - worst) <= tol * max(abs(worst), 1e-9):
                notes[p].append(label_worst)

    rank(lambda m: m.b_wait_mean, "B waits least", "B waits longest")
    rank(lambda m: m.a_jct_mean, "A finishes soonest", "A finishes last")
    rank(lambda m: m.fairness, "fairest shares", "least fair", lower_is_better=False)
    rank(lambda m: m.useful_utilization, "most useful GPU time", "least useful GPU time", lower_is_better=False,
         tol=0.01)
    for m in rows:
        if m.wasted_gpu_hours >= 0.1:
            notes[m.policy].append(f"partial gangs waste {m.wasted_gpu_hours:.1f} GPU-h")
        if m.a_unfinished:
            notes[m.policy].append(f"{m.a_unfinished} training job(s) never finish")
        if m.evictions:
            notes[m.policy].append(f"{m.evictions} evictions")
    return notes


def selection_table(rows: list[Measured]) -> str:
    """The 定位与取舍 table of chapter 05, as Markdown, from ``compare``'s measurements."""
    notes = tradeoffs(rows)
    head = ("| policy | where it runs | B wait (mean / max) | A JCT (mean) | wasted GPU-h | GPUs allocated / useful "
            "| fairness (Jain) | evictions | trade-offs (from the numbers) |")
    lines = [head, "|" + "---|" * 9]
    for m in rows:
        lines.append(f"| {m.policy} | {PLACEMENT[m.policy]} | {_fmt_s(m.b_wait_mean)} / {_fmt_s(m.b_wait_max)}"
                     + (f" ({m.b_unserved} never)" if m.b_unserved else "")
                     + f" | {_fmt_s(m.a_jct_mean)}" + (f" ({m.a_unfinished} unfinished)" if m.a_unfinished else "")
                     + f" | {m.wasted_gpu_hours:.2f} | {m.utilization:.0%} / {m.useful_utilization:.0%} | {m.fairness:.2f} | {m.evictions} | "
                     + ("; ".join(notes[m.policy]) or "—") + " |")
    return "\n".join(lines)



# --- knobs, summaries and plots for chapter 05 §9 --------------------------------------------------------------
_KEEP: Any = object()


def with_knobs(w: MultiTenant = MultiTenant(), weights: Optional[Sequence[int]] = None,
               guaranteed: Optional[Sequence[int]] = None, borrowing_limit: Any = _KEEP,
               reclaim: Optional[bool] = None, volcano_preemptable: Optional[bool] = None) -> MultiTenant:
    """``w`` with the policy knobs changed: ``weights`` and ``guaranteed`` GPUs per team (in ``w.teams``
    order), one ``borrowing_limit`` for every team (None = may borrow all unused quota), ``reclaim``,
    ``volcano_preemptable``."""
    teams = list(w.teams)
    for key, values in (("weight", weights), ("guaranteed", guaranteed)):
        if values is None:
            continue
        if len(values) != len(teams):
            raise ValueError(f"{key}: {len(values)} values for {len(teams)} teams")
        if any(v < 0 for v in values):
            raise ValueError(f"{key}: values must be ≥ 0, got {list(values)}")
        teams = [replace(t, **{key: int(v)}) for t, v in zip(teams, values)]
    if borrowing_limit is not _KEEP:
        if borrowing_limit is not None and borrowing_limit < 0:
            raise ValueError(f"borrowing_limit must be ≥ 0 or None, got {borrowing_limit}")
        teams = [replace(t, borrowing_limit=borrowing_limit) for t in teams]
    return replace(w, teams=tuple(teams), reclaim=w.reclaim if reclaim is None else reclaim,
                   volcano_preemptable=w.volcano_preemptable if volcano_preemptable is None else volcano_preemptable)


def describe(m: Measured) -> str:
    """A few lines on one policy's measurements (what §9's widget prints)."""
    unserved = f" ({m.b_unserved} never served)" if m.b_unserved else ""
    unfinished = f" ({m.a_unfinished} unfinished)" if m.a_unfinished else ""
    shares = ", ".join(f"{k} {v:.0%}" for k, v in sorted(m.shares.items()))
    return "\n".join([
        f"policy: {m.policy} — {PLACEMENT[m.policy]}",
        f"team B wait (submit → all replicas running): mean {_fmt_s(m.b_wait_mean)}, max {_fmt_s(m.b_wait_max)}"
        + unserved,
        f"team A training JCT: mean {_fmt_s(m.a_jct_mean)}{unfinished}; wasted {m.wasted_gpu_hours:.2f} GPU-h",
        f"GPUs allocated {m.utilization:.0%}, useful {m.useful_utilization:.0%}; GPU share in the {CONTENTION_WINDOW / 60:.0f} min after B arrives: "
        f"{shares}; Jain {m.fairness:.2f}; evictions {m.evictions}",
    ])


# Which Volcano releases reclaim as chapter 05.2 teaches: volcano-sh/volcano#5067 (fixes #3673, "reclaim
# action's evict can not be canceled") made reclaim a per-job transaction; it ships in v1.15.0 (2026-05-30) and
# master. v1.14 and earlier evict each victim at once (ssn.Evict), whether or not the reclaimer then fits.
VOLCANO_RECLAIM_NOTE = ("Volcano v1.15.0 起的发布版与 master（volcano-sh/volcano#5067）；v1.14 及更早的 reclaim "
                        "逐个 task 直接驱逐、不能撤销")


def interpretation(rows: list[Measured], spared: Measured) -> str:
    """Chapter 05.5's 解读, in Chinese, from the measurements: ``rows`` the four policies of :data:`POLICIES` (in
    that order), ``spared`` the Volcano run with the training Jobs marked ``volcano.sh/preemptable: "false"``."""
    by = {m.policy: m for m in rows}
    d, sp, vc, kq = (by[p] for p in POLICIES)
    vs = spared
    b_wait = "始终没有 4 个副本同时运行" if vs.b_wait_mean is None else f"平均等 {vs.b_wait_mean / 60:.0f} 分钟"
    return "\n".join([
        f"default：没有配额，team-b 排在 team-a 之前创建的所有 Pod 后面，平均等 {d.b_wait_mean / 60:.0f} 分钟；"
        f"到达后 30 分钟里 team-b 的 GPU 份额 {d.shares['team-b']:.0%}（Jain {d.fairness:.2f}）。",
        f"scheduler-plugins：CapacityScheduling 按 Pod 抢占收回保底，team-b {sp.b_wait_mean:.0f} s 就跑起来，"
        f"但驱逐了 {sp.evictions} 个训练 worker——Coscheduling 不管已经在跑的 gang，残缺的 gang 空占 "
        f"{sp.wasted_gpu_hours:.2f} GPU 小时，{sp.a_unfinished} 个训练 Job 因被抢占的 Pod 计入 backoffLimit（默认 6）而失败。",
        f"volcano：没标 `volcano.sh/preemptable` 的 task 默认可被驱逐（v1.7.0 起，volcano-sh/volcano#2545），"
        f"reclaim 按 task 驱逐；gang 插件（第一层）不肯把作业拆到 minAvailable 以下时这一层没有结论，"
        f"落到第二层的 proportion，gang 照样被拆：驱逐 {vc.evictions} 个 worker、残缺的 gang 空占 {vc.wasted_gpu_hours:.2f} GPU 小时，"
        f"team-a 的平均 JCT 变成 {vc.a_jct_mean / 60:.0f} 分钟；而 reclaim 以作业为单位、只收回到作业的 minAvailable"
        f"（推理 Job 是 1；这是{VOLCANO_RECLAIM_NOTE}），team-b 的 {vc.b_unserved} 个 Job 始终没有 4 个副本同时运行，"
        f"到达后 30 分钟里只拿到 {vc.shares['team-b']:.0%} 的 GPU。",
        f"volcano，训练 Job 标 `volcano.sh/preemptable: \"false\"`：reclaim 找不到受害者（驱逐 {vs.evictions} 次），"
        f"team-b {b_wait}，和 default 的 {d.b_wait_mean / 60:.0f} 分钟差不多；训练不被打断，team-a 平均 JCT "
        f"{vs.a_jct_mean / 60:.0f} 分钟。",
        f"kueue：整 Workload 抢占（{kq.evictions} 次，都是整个训练 Job 被 suspend），team-b 等 {kq.b_wait_mean:.0f} s，"
        f"浪费 {kq.wasted_gpu_hours:.2f} GPU 小时，team-a 平均 JCT {kq.a_jct_mean / 60:.0f} 分钟（default 为 {d.a_jct_mean / 60:.0f}）。",
    ])


def outcome_bars(rows: list[Measured], labels: Optional[Sequence[str]] = None) -> list[dict]:
    """What :func:`plot_outcomes` draws, per run: ``label``, team B's ``wait_mean`` / ``wait_max`` (minutes, None
    when no Job was ever served), ``never`` (B Jobs never served) and ``wasted`` GPU-hours."""
    names = list(labels) if labels is not None else [m.policy for m in rows]
    if len(names) != len(rows):
        raise ValueError(f"{len(names)} labels for {len(rows)} runs")
    return [{"label": n, "wait_mean": None if m.b_wait_mean is None else m.b_wait_mean / 60,
             "wait_max": None if m.b_wait_max is None else m.b_wait_max / 60, "never": m.b_unserved,
             "wasted": m.wasted_gpu_hours} for n, m in zip(names, rows)]


def _fmt_min(minutes: float) -> str:
    return f"{minutes * 60:.0f} s" if minutes < 1 else f"{minutes:.0f} min"


def plot_outcomes(rows: list[Measured], axes: Any = None, labels: Optional[Sequence[str]] = None) -> Any:
    """Two bar charts per run: team B's wait (bar: mean, ▼: max, minutes, the value written on each bar) and
    team A's wasted GPU-hours. A run where some of B's Jobs were never served gets a hatched bar to the top of
    the axes (the wait is at least the rest of the run, off the chart), labelled with how many; ``labels``
    names the bars (default: the policies)."""
    import matplotlib.pyplot as plt
    bars = outcome_bars(rows, labels)
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(10, 3.4))
    x = list(range(len(bars)))
    finite = [v for b in bars for v in (b["wait_mean"], b["wait_max"]) if v is not None]
    top = 1.3 * max(finite + [1.0])
    ax = axes[0]
    for i, b in enumerate(bars):
        if b["wait_mean"] is not None:
            ax.bar(i, b["wait_mean"], color="#6baed6")
            ax.text(i, max(b["wait_mean"], b["wait_max"] or 0.0) + 0.03 * top, _fmt_min(b["wait_mean"]),
                    ha="center", va="bottom", fontsize=8)
        if b["wait_max"] is not None:
            ax.plot(i, b["wait_max"], "v", color="black")
        if b["never"]:
            base = b["wait_mean"] or 0.0
            ax.bar(i, top - base, bottom=base, facecolor="white", edgecolor="#3182bd", hatch="//", linewidth=0.8)
            ax.text(i, top * 0.55, f"{b['never']} Jobs\nnever\nserved", ha="center", va="center", fontsize=8,
                    bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "none"})
    ax.set_ylim(0, top)
    ax.set_xticks(x, [b["label"] for b in bars])
    ax.set_ylabel("minutes")
    ax.set_title("Team B: submit → all replicas running\n(bar: mean, ▼: max)", fontsize=10)
    ax = axes[1]
    ax.bar(x, [b["wasted"] for b in bars], color="#e6550d")
    for i, b in enumerate(bars):
        ax.text(i, b["wasted"], f"{b['wasted']:.2f}", ha="center", va="bottom", fontsize=8)
    ax.set_ylim(0, 1.2 * max([b["wasted"] for b in bars] + [0.1]))
    ax.set_xticks(x, [b["label"] for b in bars])
    ax.set_ylabel("GPU-hours")
    ax.set_title("Team A: GPU-hours held by incomplete gangs", fontsize=10)
    for a in axes:
        a.tick_params(axis="x", labelsize=8)
    return axes


def plot_shares(rows: list[Measured], w: MultiTenant = MultiTenant(), axes: Any = None) -> Any:
    """Per policy, each team's share of the cluster's GPUs over time (stacked), B's first submission marked."""
    import matplotlib.pyplot as plt
    from .views.tenancy import plot_tenant_share
    if axes is None:
        _, axes = plt.subplots(len(rows), 1, figsize=(9, 1.9 * len(rows)), sharex=True, squeeze=False)
        axes = [a[0] for a in axes]
    b_first = min((parse_seconds(j.submit_at) for t in w.teams for j in t.inference), default=None)
    from .metrics import allocations
    end = 1.02 * max((a.end for m in rows for a in allocations(m.result)), default=1.0)
    for ax, m in zip(axes, rows):
        plot_tenant_share(m.result, ax=ax)
        ax.set_xlim(0, end)
        if b_first is not None:
            ax.axvline(b_first, color="black", linestyle=":", linewidth=1)
        ax.set_title(f"{m.policy}: GPU share per team", fontsize=9)
        ax.set_xlabel("")
        ax.set_ylabel("share", fontsize=8)
    axes[-1].set_xlabel("simulated time (s); dotted line: team B's first inference Job")
    return axes


def explore(policy: str = "kueue", weight_a: int = 1, weight_b: int = 1, guaranteed_b: int = 16,
            borrowing_limit: int = -1, reclaim: bool = True, preemptable: bool = True,
            w: MultiTenant = MultiTenant()) -> Measured:
    """Run one policy with the widget's knobs (team A is guaranteed the rest of the cluster; a negative
    ``borrowing_limit`` means unlimited; ``preemptable=False`` marks Volcano Jobs ``"false"``), print ``describe`` and draw
    the share plot."""
    import matplotlib.pyplot as plt
    if not 0 <= guaranteed_b <= w.total_gpus:
        raise ValueError(f"guaranteed_b must be within 0..{w.total_gpus}, got {guaranteed_b}")
    v = with_knobs(w, weights=(weight_a, weight_b), guaranteed=(w.total_gpus - guaranteed_b, guaranteed_b),
                   borrowing_limit=None if borrowing_limit < 0 else borrowing_limit, reclaim=reclaim,
                   volcano_preemptable=preemptable)
    [m] = compare(v, (policy,))
    print(describe(m))
    plot_shares([m], v)
    plt.show()
    return m


def policy_widget(w: MultiTenant = MultiTenant()) -> Any:
    """ipywidgets controls for ``explore`` (needs a running Jupyter kernel)."""
    import ipywidgets as widgets

    from .views.display import Shown
    total = w.total_gpus
    return Shown(widgets.interactive(
        lambda policy, weight_a, weight_b, guaranteed_b, borrowing_limit, reclaim, preemptable: explore(
            policy, weight_a, weight_b, guaranteed_b, borrowing_limit, reclaim, preemptable, w) and None,
        policy=widgets.Dropdown(options=list(POLICIES), value="kueue"),
        weight_a=widgets.IntSlider(1, 1, 8), weight_b=widgets.IntSlider(1, 1, 8),
        guaranteed_b=widgets.IntSlider(total // 2, 0, total, w.gpus_per_node // 2),
        borrowing_limit=widgets.IntSlider(-1, -1, total, 1, description="borrow (−1 = ∞)"),
        reclaim=widgets.Checkbox(True), preemptable=widgets.Checkbox(True, description="Volcano preemptable")))
