"""Kueue's objects and its manager Configuration, checked when a scenario is loaded (mirrors
kubernetes-sigs/kueue pkg/webhooks (per-object validation), the references its controllers resolve, and
pkg/config (the ``kueue-manager-config`` ConfigMap's Configuration))."""
from __future__ import annotations

from typing import Any, Optional

from ..api.errors import FieldError
from ..api.kueue_x_k8s_io import (CONFIG_KEY, CONFIG_MAP, CONFIG_NAMESPACE, KUEUE_KINDS, PRIORITY_CLASS_LABEL,
                                  QUEUE_NAME_LABEL, V1BETA2, KueueConfig, Workload, decode_pod_templates,
                                  parse_configuration, validate_cluster_queue, validate_cohort, validate_local_queue,
                                  validate_pod_set_topology_request, validate_tas_pod_set_request, validate_topology,
                                  validate_workload)
from ..api.scheme import ObjectErrors
from ..api.validation import validate_taint

NAMESPACE = CONFIG_NAMESPACE   # Kueue's installation creates it


# Partial admission (KEP 420, feature gate PartialAdmission): a PodSet's minCount, set for a batch Job from this
# annotation (pkg/controller/jobs/job/job_controller.go JobMinParallelismAnnotation). gpusim's flavor assigner
# admits whole PodSets only, so it refuses the input rather than admit count pods where Kueue would admit fewer.
JOB_MIN_PARALLELISM_ANNOTATION = "kueue.x-k8s.io/job-min-parallelism"
PARTIAL_ADMISSION_UNSUPPORTED = ("Forbidden: partial admission (minCount) is not modelled by gpusim: Kueue would "
                                 "admit between minCount and count pods, gpusim admits only the whole count; remove it")


def needed(sc: Any) -> bool:
    """Whether the scenario holds a Kueue object (the installation, and its namespace, are then present)."""
    return any(k in sc.objects for k in KUEUE_KINDS + (Workload.RESOURCE,))


def check(sc: Any, errors: ObjectErrors) -> None:
    sc.kueue_config = configuration(sc, errors)


def configuration(sc: Any, errors: ObjectErrors) -> Optional[KueueConfig]:
    """Per-object validation and references (LocalQueue → ClusterQueue, ClusterQueue → ResourceFlavor and
    Cohort, Cohort → parent Cohort without cycles, Workload → LocalQueue/WorkloadPriorityClass), and the
    manager's Configuration. Returns the config, or None when the scenario has no Kueue object."""
    objs = {k: sc.objects.get(k, []) for k in ("ResourceFlavor", "ClusterQueue", "Cohort", "LocalQueue",
                                               Workload.RESOURCE, "WorkloadPriorityClass", "Topology")}
    jobs_with_queue = [j for j in sc.jobs if QUEUE_NAME_LABEL in j.metadata.labels]
    if not any(objs.values()) and not jobs_with_queue:
        return None
    flavors = {f.metadata.name for f in objs["ResourceFlavor"]}
    topologies = set()
    for t in objs["Topology"]:
        errors.raise_all(t, validate_topology(t))
        topologies.add(t.metadata.name)
    for f in objs["ResourceFlavor"]:
        for i, t in enumerate(f.spec.node_taints):
            errors.raise_all(f, validate_taint(t, f"spec.nodeTaints[{i}]"))
        tn = f.spec.topology_name
        if tn is not None and tn not in topologies:
            # Kueue keeps the flavor out of its TAS cache and the ClusterQueues using it inactive
            # (TopologyNotFound); gpusim rejects the input so the mistake is seen at once.
            raise errors.err(f, "spec.topologyName", f'Not found: "{tn}": no Topology "{tn}" in the scenario')
    cohorts = {c.metadata.name: c for c in objs["Cohort"]}
    for c in objs["Cohort"]:
        errors.raise_all(c, validate_cohort(c))
        seen, cur = {c.metadata.name}, c.spec.parent_name
        while cur and cur in cohorts:
            if cur in seen:
                raise errors.err(c, "spec.parentName", f'Invalid value: "{c.spec.parent_name}": cohort cycle '
                          + " -> ".join([*seen, cur]))
            seen.add(cur)
            cur = cohorts[cur].spec.parent_name
        for i, g in enumerate(c.spec.resource_groups):
            for j, fq in enumerate(g.flavors):
                if fq.name not in flavors:
                    raise errors.err(c, f"spec.resourceGroups[{i}].flavors[{j}].name",
                              f'Not found: "{fq.name}": no ResourceFlavor "{fq.name}" in the scenario')
    cqs = {q.metadata.name: q for q in objs["ClusterQueue"]}
    for cq in objs["ClusterQueue"]:
        errors.raise_all(cq, validate_cluster_queue(cq))
        for i, g in enumerate(cq.spec.resource_groups):
            for j, fq in enumerate(g.flavors):
                if fq.name not in flavors:
                    # Kueue keeps such a ClusterQueue inactive (condition Active=False, reason FlavorNotFound);
                    # gpusim rejects the input so the mistake is seen at once.
                    raise errors.err(cq, f"spec.resourceGroups[{i}].flavors[{j}].name",
                              f'Not found: "{fq.name}": no ResourceFlavor "{fq.name}" in the scenario '
                              "(Kueue would keep the ClusterQueue inactive: FlavorNotFound)")
    classes = {p.metadata.name for p in objs["WorkloadPriorityClass"]}
    lqs = {(q.metadata.namespace, q.metadata.name): q for q in objs["LocalQueue"]}
    for lq in objs["LocalQueue"]:
        errors.raise_all(lq, validate_local_queue(lq))
        if lq.spec.cluster_queue not in cqs:
            raise errors.err(lq, "spec.clusterQueue", f'Not found: "{lq.spec.cluster_queue}": no ClusterQueue '
                      f'"{lq.spec.cluster_queue}" in the scenario')
    for wl in objs[Workload.RESOURCE]:
        try:
            decode_pod_templates(wl)
        except FieldError as e:
            raise errors.err(wl, e.path, e.message) from None
        errors.raise_all(wl, validate_workload(wl))
        for i, ps in enumerate(wl.spec.pod_sets):
            if ps.topology_request is not None:
                errors.raise_all(wl, validate_pod_set_topology_request(
                    ps.topology_request, f"spec.podSets[{i}].topologyRequest", ps.count))
            if ps.min_count is not None:
                raise errors.err(wl, f"spec.podSets[{i}].minCount", PARTIAL_ADMISSION_UNSUPPORTED)
        if wl.spec.queue_name and (wl.metadata.namespace, wl.spec.queue_name) not in lqs:
            raise errors.err(wl, "spec.queueName", f'Not found: "{wl.spec.queue_name}": no LocalQueue '
                      f'"{wl.spec.queue_name}" in namespace "{wl.metadata.namespace}"')
        if wl.priority_class_name and wl.priority_class_name not in classes:
            raise errors.err(wl, "spec.priorityClassRef.name" if wl.api_version == V1BETA2 else "spec.priorityClassName",
                      f'Not found: "{wl.priority_class_name}": no WorkloadPriorityClass in the scenario')
    for job in jobs_with_queue:
        # job_webhook.go validateTopologyRequest (the TopologyAwareScheduling gate is on by default)
        from .jobframework import pod_count
        errors.raise_all(job, validate_tas_pod_set_request(job.spec.template.metadata.annotations,
                                                           "spec.template.metadata.annotations", pod_count(job)))
        if JOB_MIN_PARALLELISM_ANNOTATION in job.metadata.annotations:
            raise errors.err(job, f"metadata.annotations[{JOB_MIN_PARALLELISM_ANNOTATION}]",
                             PARTIAL_ADMISSION_UNSUPPORTED)
        q = job.metadata.labels[QUEUE_NAME_LABEL]
        if (job.metadata.namespace, q) not in lqs:
            raise errors.err(job, f"metadata.labels[{QUEUE_NAME_LABEL}]", f'Not found: "{q}": no LocalQueue "{q}" in '
                      f'namespace "{job.metadata.namespace}"')
        p = job.metadata.labels.get(PRIORITY_CLASS_LABEL)
        if p and p not in classes:
            raise errors.err(job, f"metadata.labels[{PRIORITY_CLASS_LABEL}]",
                      f'Not found: "{p}": no WorkloadPriorityClass in the scenario')
    cm = next((c for c in sc.configmaps if c.metadata.name == CONFIG_MAP
               and c.metadata.namespace == CONFIG_NAMESPACE), None)
    if cm is None:
        return KueueConfig()
    if CONFIG_KEY not in cm.data:
        raise errors.err(cm, "data", f"Required value: key {CONFIG_KEY}")
    try:
        return parse_configuration(cm.data[CONFIG_KEY])
    except FieldError as e:
        raise errors.err(cm, f"data[{CONFIG_KEY}]" + (f".{e.path}" if e.path else ""), e.message) from None
