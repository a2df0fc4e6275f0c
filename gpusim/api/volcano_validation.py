"""Volcano objects in a scenario: the admission webhooks' defaults and checks, and references that must
resolve (mirrors volcano-sh/volcano pkg/webhooks/admission/{queues,podgroups,jobs}).

A Job's or PodGroup's queue must exist (declared in the scenario, or ``default``, which the installation
creates) and be Open; namespaces and PriorityClasses must exist; the scheduler ConfigMap
``volcano-system/volcano-scheduler-configmap`` must parse.
"""
from __future__ import annotations

from typing import Any

from .batch_volcano_sh_v1alpha1 import Job, default_job, validate_job
from .scheduling_volcano_sh_v1beta1 import (DEFAULT_QUEUE, QUEUE_NAME_ANNOTATION, PodGroup, default_pod_group,
                                            default_queue, validate_pod_group, validate_queue)
from .validation import validate_annotations, validate_pod_spec

NAMESPACE = "volcano-system"


def needed(sc: Any) -> bool:
    from ..volcano import needed as volcano_needed
    return volcano_needed(sc)


def _not_found(name: str) -> str:
    return f'queues.scheduling.volcano.sh "{name}" not found'


def validate(sc: Any, namespaces: set[str], classes: dict[str, int]) -> None:
    """Default and check every Volcano object of ``sc`` (raises InputError)."""
    from ..volcano.conf import ConfError, from_configmaps
    from .scenario import _err, _raise_all
    if not needed(sc):
        return
    queues = {}
    for q in sc.objects.get("Queue", []):
        default_queue(q)
        _raise_all(q, sc.source(q), validate_queue(q))
        queues[q.metadata.name] = q
    states = {name: (q.status.state or "Open") for name, q in queues.items()}
    states.setdefault(DEFAULT_QUEUE, "Open")

    def check_ns(obj: Any) -> None:
        if obj.metadata.namespace not in namespaces:
            raise _err(obj, sc.source(obj), "metadata.namespace", f'namespaces "{obj.metadata.namespace}" not found')

    def check_class(obj: Any, path: str, name: str) -> None:
        if name and name not in classes:
            raise _err(obj, sc.source(obj), path, f"no PriorityClass with name {name} was found")

    for pg in sc.objects.get(PodGroup.RESOURCE, []):
        check_ns(pg)
        default_pod_group(pg)
        _raise_all(pg, sc.source(pg), validate_pod_group(pg))
        if pg.spec.queue not in states:
            raise _err(pg, sc.source(pg), "spec.queue", f"failed to get queue for podgroup: {_not_found(pg.spec.queue)}")
        check_class(pg, "spec.priorityClassName", pg.spec.priority_class_name)
    for job in sc.objects.get(Job.RESOURCE, []):
        check_ns(job)
        default_job(job)
        src = sc.source(job)
        _raise_all(job, src, validate_job(job))
        _raise_all(job, src, validate_annotations(job.metadata.annotations, "metadata.annotations"))
        if job.spec.queue not in states:
            raise _err(job, src, "spec.queue", f"unable to find job queue: {_not_found(job.spec.queue)}")
        if states[job.spec.queue] != "Open":
            raise _err(job, src, "spec.queue", "can only submit job to queue with state `Open`, "
                       f"queue `{job.spec.queue}` status is `{states[job.spec.queue]}`")
        check_class(job, "spec.priorityClassName", job.spec.priority_class_name)
        for i, t in enumerate(job.spec.tasks):
            path = f"spec.tasks[{i}].template"
            _raise_all(job, src, validate_annotations(t.template.metadata.annotations, f"{path}.metadata.annotations"))
            _raise_all(job, src, validate_pod_spec(t.template.spec, f"{path}.spec"))
            check_class(job, f"{path}.spec.priorityClassName", t.template.spec.priority_class_name)
    for pod in sc.pods:
        q = pod.metadata.annotations.get(QUEUE_NAME_ANNOTATION)
        if q is not None and q not in states:
            raise _err(pod, sc.source(pod), f"metadata.annotations[{QUEUE_NAME_ANNOTATION}]",
                       f'Not found: "{q}": {_not_found(q)}')
    try:
        from_configmaps(sc.configmaps)
    except ConfError as e:
        from ..volcano.conf import CONFIGMAP_NAME
        cm = next(c for c in sc.configmaps if c.metadata.namespace == NAMESPACE and c.metadata.name == CONFIGMAP_NAME)
        raise _err(cm, sc.source(cm), e.path, e.message) from None
