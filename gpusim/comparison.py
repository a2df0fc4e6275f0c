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
from typing import Any, Optional

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
            "spec": {"parallelism": n, "completions": n, "backoffLimit": 0, "template": template}}


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
                                     "annotations": {"gpusim.io/submit-at": j.submit_at}},
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
