"""batch/v1 Job integration (mirrors kueue pkg/controller/jobframework/{reconciler.go,workload_names.go,
defaults.go} and pkg/controller/jobs/job/{job_controller.go,job_webhook.go}).

- Webhook: a Job labelled ``kueue.x-k8s.io/queue-name`` is created suspended.
- Reconciler: creates the Workload ``job-<name>-<hash>`` (hash: first 5 hex digits of the SHA-1 of
  ``Job\\nbatch\\n<name>\\n<uid>``), one podSet ``main`` with count = parallelism (capped by completions);
  on admission injects the flavors' nodeLabels into the template's nodeSelector and their tolerations, then
  unsuspends; on eviction suspends again and restores the template; reports PodsReady (ready + succeeded ≥
  count) and Finished.
- TAS (pkg/podset FromAssignment, jobframework expectedRunningPodSets): the PodSet's ``topologyRequest`` comes
  from the template's annotations; a PodSet admitted with a topology assignment gets the label
  ``kueue.x-k8s.io/podset``, the annotation ``kueue.x-k8s.io/workload`` (plus
  ``kueue.x-k8s.io/podset-unconstrained-topology: "true"`` when TAS was implied by a TAS-only ClusterQueue) and
  the scheduling gate ``kueue.x-k8s.io/topology``, which the topology ungater lifts pod by pod.
"""
from __future__ import annotations

import copy
import hashlib
from typing import Any, Callable, Optional, Protocol

from ..api.batch_v1 import Job
from ..api.core_v1 import PodSchedulingGate
from ..api.kueue_x_k8s_io import (PODSET_LABEL, PODSET_UNCONSTRAINED_TOPOLOGY, PRIORITY_CLASS_LABEL, QUEUE_NAME_LABEL,
                                  TOPOLOGY_SCHEDULING_GATE, V1BETA2, WORKLOAD_ANNOTATION, PodSet, PriorityClassRef,
                                  Workload, WorkloadSpecV1beta2, topology_request_from_annotations)
from ..api.meta import ObjectMeta, OwnerReference
from ..api.schema import shallow_copy
from ..controlplane.apiserver import DELETED
from ..controlplane.context import Context
from ..controlplane.events import NORMAL

SOURCE = "kueue-job-controller"   # UNVERIFIED: the recorder name of the Job reconciler


def workload_name(job_name: str, job_uid: str, kind: str = "Job", group: str = "batch") -> str:
    """jobframework.GetWorkloadNameForOwnerWithGVK."""
    prefix = (kind.lower() + "-" + job_name)[:252 - 5]
    h = hashlib.sha1(f"{kind}\n{group}\n{job_name}\n{job_uid}".encode()).hexdigest()
    return f"{prefix}-{h[:5]}"


def webhook(previous: Optional[Callable[[Any], None]]) -> Callable[[Any], None]:
    """job_webhook.go Default: suspend Jobs that name a queue; chained after any existing Job admission."""
    def admit(job: Job) -> None:
        if previous is not None:
            previous(job)
        if job.metadata.labels.get(QUEUE_NAME_LABEL):
            job.spec.suspend = True
    return admit


def _template_copy(tmpl: Any) -> Any:
    """The Workload's copy of the pod template: what the reconciler later changes on the Job (labels,
    annotations, nodeSelector, tolerations) is copied; containers are shared and never mutated."""
    out = shallow_copy(tmpl)
    out.metadata = shallow_copy(tmpl.metadata)
    out.metadata.labels, out.metadata.annotations = dict(tmpl.metadata.labels), dict(tmpl.metadata.annotations)
    out.spec = shallow_copy(tmpl.spec)
    out.spec.node_selector, out.spec.tolerations = dict(tmpl.spec.node_selector), list(tmpl.spec.tolerations)
    out.spec.scheduling_gates = list(tmpl.spec.scheduling_gates)
    return out


JOB_COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"    # batchv1.JobCompletionIndexAnnotation


def pod_count(job: Job) -> int:
    """job_controller.go podsCount: parallelism (default 1), at most completions."""
    n = job.spec.parallelism if job.spec.parallelism is not None else 1
    if job.spec.completions is not None:
        n = min(n, job.spec.completions)
    return n


class QueueManager(Protocol):
    """What the reconciler needs of the controller-manager (upstream: the client and the queue manager)."""

    ctx: Context
    jobs: dict[str, Job]
    workload_priority_classes: dict[str, int]

    def job_changed(self, wl: Workload, job: Job) -> None: ...


class JobReconciler:
    def __init__(self, kueue: QueueManager):
        self.kueue = kueue
        self.ctx = kueue.ctx
        self.by_job: dict[str, Workload] = {}            # job UID → its Workload
        self._original: dict[str, Any] = {}              # job UID → template spec before injection
        self._jobs = self.ctx.api.watch("Job")
        self.ctx.env.process(self._loop())

    def _loop(self):
        while True:
            ev = yield self._jobs.get()
            job = ev.obj
            if not job.metadata.labels.get(QUEUE_NAME_LABEL) or ev.type == DELETED:
                continue
            wl = self.by_job.get(job.metadata.uid)
            if wl is None:
                self._create_workload(job)
            else:
                self.kueue.job_changed(wl, job)

    def _create_workload(self, job: Job) -> None:
        ctx = self.ctx
        name = workload_name(job.metadata.name, job.metadata.uid)
        tr = topology_request_from_annotations(job.spec.template.metadata.annotations)
        if tr is not None:
            tr.pod_index_label = JOB_COMPLETION_INDEX        # job_controller.go PodSets: PodIndexLabel
        spec = WorkloadSpecV1beta2(
            pod_sets=[PodSet("main", pod_count(job), _template_copy(job.spec.template), topology_request=tr)],
            queue_name=job.metadata.labels[QUEUE_NAME_LABEL])
        wpc = job.metadata.labels.get(PRIORITY_CLASS_LABEL)
        if wpc:
            spec.priority_class_ref = PriorityClassRef("kueue.x-k8s.io", "WorkloadPriorityClass", wpc)
            spec.priority = self.kueue.workload_priority_classes.get(wpc, 0)
        else:
            pcn = job.spec.template.spec.priority_class_name
            if pcn:
                spec.priority_class_ref = PriorityClassRef("scheduling.k8s.io", "PriorityClass", pcn)
                pc = ctx.api.get("PriorityClass", "", pcn)
                spec.priority = pc.value if pc is not None else 0
        meta = ObjectMeta(name=name, namespace=job.metadata.namespace,
                          labels={"kueue.x-k8s.io/job-uid": job.metadata.uid},
                          owner_references=[OwnerReference("batch/v1", "Job", job.metadata.name, job.metadata.uid,
                                                           True, True)])
        wl = Workload(V1BETA2, "Workload", meta, spec)
        self.by_job[job.metadata.uid] = wl
        self.kueue.jobs[f"{job.metadata.namespace}/{name}"] = job
        ctx.api.create(wl)
        ctx.event(job, NORMAL, "CreatedWorkload", f"Created Workload: {job.metadata.namespace}/{name}", SOURCE)

    def start(self, job: Job, wl: Workload, flavors: dict[str, Any]) -> None:
        """reconciler.go startJob: inject the admission (PodSetInfo) and unsuspend."""
        tmpl = job.spec.template.spec
        meta = job.spec.template.metadata
        self._original[job.metadata.uid] = (dict(tmpl.node_selector), list(tmpl.tolerations),
                                            list(tmpl.scheduling_gates), dict(meta.labels), dict(meta.annotations))
        psa = wl.status.admission.pod_set_assignments[0]
        for fname in dict.fromkeys(psa.flavors.values()):
            rf = flavors[fname]
            tmpl.node_selector = {**tmpl.node_selector, **rf.spec.node_labels}
            tmpl.tolerations = list(tmpl.tolerations) + [copy.copy(t) for t in rf.spec.tolerations]
        if psa.topology_assignment is not None:
            meta.labels = {**meta.labels, PODSET_LABEL: psa.name}
            extra = {WORKLOAD_ANNOTATION: wl.metadata.name}
            if wl.spec.pod_sets[0].topology_request is None:
                extra[PODSET_UNCONSTRAINED_TOPOLOGY] = "true"      # TAS implied by a TAS-only ClusterQueue
            meta.annotations = {**meta.annotations, **extra}
            if not any(g.name == TOPOLOGY_SCHEDULING_GATE for g in tmpl.scheduling_gates):
                tmpl.scheduling_gates = list(tmpl.scheduling_gates) + [PodSchedulingGate(TOPOLOGY_SCHEDULING_GATE)]
        job.spec.suspend = False
        self.ctx.api.update(job)
        self.ctx.event(job, NORMAL, "Started", f"Admitted by clusterQueue {wl.status.admission.cluster_queue}", SOURCE)

    def stop(self, job: Job, message: str) -> None:
        """reconciler.go stopJob: suspend and restore the pod template."""
        tmpl = job.spec.template.spec
        orig = self._original.pop(job.metadata.uid, None)
        if orig is not None:
            meta = job.spec.template.metadata
            tmpl.node_selector, tmpl.tolerations, tmpl.scheduling_gates, meta.labels, meta.annotations = orig
        if not job.spec.suspend:
            job.spec.suspend = True
            self.ctx.api.update(job)
        self.ctx.event(job, NORMAL, "Stopped", message, SOURCE)

    @staticmethod
    def pods_ready(job: Job, count: int) -> bool:
        """job_controller.go PodsReady: succeeded + ready ≥ podsCount."""
        return job.status.succeeded + (job.status.ready or 0) >= count

    @staticmethod
    def finished(job: Job) -> Optional[tuple[str, str]]:
        for c in job.status.conditions:
            if c.status == "True" and c.type == "Complete":
                return "Succeeded", "Job finished successfully"
            if c.status == "True" and c.type == "Failed":
                return "Failed", c.message
        return None
