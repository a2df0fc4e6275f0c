"""Volcano's objects and configuration, checked when a scenario is loaded: the admission webhooks'
defaults and checks, and references that must resolve (mirrors volcano-sh/volcano
pkg/webhooks/admission/{queues,podgroups,jobs}).

A Job's or PodGroup's queue must exist (declared in the scenario, or ``default``, which the installation
creates) and be Open; namespaces and PriorityClasses must exist; the scheduler ConfigMap
``volcano-system/volcano-scheduler-configmap`` must parse.
"""
from __future__ import annotations

from typing import Any

from ..api.batch_volcano_sh_v1alpha1 import Job, default_job, validate_job
from ..api.scheme import ObjectErrors
from ..api.scheduling_volcano_sh_v1beta1 import (DEFAULT_QUEUE, QUEUE_NAME_ANNOTATION, PodGroup, default_pod_group,
                                                default_queue, validate_pod_group, validate_queue)
from ..api.validation import validate_annotations, validate_pod_spec
from . import NAMESPACE, needed
from .conf import CONFIGMAP_NAME, ConfError, from_configmaps


def _not_found(name: str) -> str:
    return f'queues.scheduling.volcano.sh "{name}" not found'


def check(sc: Any, errors: ObjectErrors) -> None:
    """Default and check every Volcano object of ``sc`` (raises InputError)."""
    if not needed(sc):
        return
    namespaces, classes = errors.namespaces, errors.priority_classes
    queues = {}
    for q in sc.objects.get("Queue", []):
        default_queue(q)
        errors.raise_all(q, validate_queue(q))
        queues[q.metadata.name] = q
    states = {name: (q.status.state or "Open") for name, q in queues.items()}
    states.setdefault(DEFAULT_QUEUE, "Open")

    def check_ns(obj: Any) -> None:
        if obj.metadata.namespace not in namespaces:
            raise errors.err(obj, "metadata.namespace", f'namespaces "{obj.metadata.namespace}" not found')

    def check_class(obj: Any, path: str, name: str) -> None:
        if name and name not in classes:
            raise errors.err(obj, path, f"no PriorityClass with name {name} was found")

    for pg in sc.objects.get(PodGroup.RESOURCE, []):
        check_ns(pg)
        default_pod_group(pg)
        errors.raise_all(pg, validate_pod_group(pg))
        if pg.spec.queue not in states:
            raise errors.err(pg, "spec.queue", f"failed to get queue for podgroup: {_not_found(pg.spec.queue)}")
        check_class(pg, "spec.priorityClassName", pg.spec.priority_class_name)
    for job in sc.objects.get(Job.RESOURCE, []):
        check_ns(job)
        default_job(job)
        errors.raise_all(job, validate_job(job))
        errors.raise_all(job, validate_annotations(job.metadata.annotations, "metadata.annotations"))
        if job.spec.queue not in states:
            raise errors.err(job, "spec.queue", f"unable to find job queue: {_not_found(job.spec.queue)}")
        if states[job.spec.queue] != "Open":
            raise errors.err(job, "spec.queue", "can only submit job to queue with state `Open`, "
                       f"queue `{job.spec.queue}` status is `{states[job.spec.queue]}`")
        check_class(job, "spec.priorityClassName", job.spec.priority_class_name)
        for i, t in enumerate(job.spec.tasks):
            path = f"spec.tasks[{i}].template"
            errors.raise_all(job, validate_annotations(t.template.metadata.annotations, f"{path}.metadata.annotations"))
            errors.raise_all(job, validate_pod_spec(t.template.spec, f"{path}.spec"))
            if t.template.spec.node_name and t.template.spec.node_name not in errors.nodes:
                raise errors.err(job, f"{path}.spec.nodeName", f'Not found: "{t.template.spec.node_name}": no such node '
                                 "in the scenario")
            check_class(job, f"{path}.spec.priorityClassName", t.template.spec.priority_class_name)
    for pod in sc.pods:
        q = pod.metadata.annotations.get(QUEUE_NAME_ANNOTATION)
        if q is not None and q not in states:
            raise errors.err(pod, f"metadata.annotations[{QUEUE_NAME_ANNOTATION}]",
                       f'Not found: "{q}": {_not_found(q)}')
    try:
        from_configmaps(sc.configmaps)
    except ConfError as e:
        cm = next(c for c in sc.configmaps if c.metadata.namespace == NAMESPACE and c.metadata.name == CONFIGMAP_NAME)
        raise errors.err(cm, e.path, e.message) from None
