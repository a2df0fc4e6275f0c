"""Volcano's objects and configuration, checked when a scenario is loaded: the admission webhooks'
defaults and checks, and references that must resolve (mirrors volcano-sh/volcano
pkg/webhooks/admission/{queues,podgroups,jobs}).

A Job's or PodGroup's queue must exist (declared in the scenario, or ``default``, which the installation
creates) and be Open; namespaces and PriorityClasses must exist; the scheduler ConfigMap
``volcano-system/volcano-scheduler-configmap`` must parse. HyperNodes are checked as the CRD and
pkg/webhooks/admission/hypernodes/validate do; gpusim adds the references upstream's scheduler would trip over
(it logs them and leaves the job unscheduled): a HyperNode member must name an existing HyperNode, a HyperNode
has at most one parent and the hierarchy no cycle, an exact Node member names a Node of the scenario (unless node
pools may add nodes), and a ``networkTopology.highestTierName`` must be some HyperNode's ``spec.tierName``.
"""
from __future__ import annotations

from typing import Any

from ..api.gpusim_v1alpha1 import gate_enabled
from ..api.batch_volcano_sh_v1alpha1 import Job, default_job, validate_job
from ..api.scheme import ObjectErrors
from ..api.scheduling_volcano_sh_v1beta1 import (DEFAULT_QUEUE, QUEUE_NAME_ANNOTATION, PodGroup, default_pod_group,
                                                default_queue, validate_pod_group, validate_queue)
from ..api.topology_volcano_sh_v1alpha1 import validate_hyper_node
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

    tier_names = _check_hyper_nodes(sc, errors)

    def check_tier_name(obj: Any, nt: Any) -> None:
        if nt is not None and nt.highest_tier_name and nt.highest_tier_name not in tier_names:
            raise errors.err(obj, "spec.networkTopology.highestTierName",
                             f'Not found: "{nt.highest_tier_name}": no HyperNode has spec.tierName '
                             f'"{nt.highest_tier_name}"')

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
        check_tier_name(pg, pg.spec.network_topology)
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
        check_tier_name(job, job.spec.network_topology)
        for i, t in enumerate(job.spec.tasks):
            path = f"spec.tasks[{i}].template"
            errors.raise_all(job, validate_annotations(t.template.metadata.annotations, f"{path}.metadata.annotations"))
            errors.raise_all(job, validate_pod_spec(t.template.spec, f"{path}.spec", gate_enabled(
                sc.simulation.spec, "TaintTolerationComparisonOperators")))
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


def _check_hyper_nodes(sc: Any, errors: ObjectErrors) -> set[str]:
    """Check every HyperNode; return the tier names they declare."""
    hyper_nodes = sc.objects.get("HyperNode", [])
    names = {hn.metadata.name for hn in hyper_nodes}
    nodes = {n.metadata.name for n in sc.nodes}
    parent: dict[str, str] = {}
    for hn in hyper_nodes:
        errors.raise_all(hn, validate_hyper_node(hn))
        for i, m in enumerate(hn.spec.members):
            sel = m.selector.exact_match
            if sel is None:
                continue
            path = f"spec.members[{i}].selector.exactMatch.name"
            if m.type == "HyperNode":
                if sel.name not in names:
                    raise errors.err(hn, path, f'Not found: "{sel.name}": hypernodes.topology.volcano.sh '
                                     f'"{sel.name}" not found (the scheduler would fail every gradient through '
                                     f"{hn.metadata.name})")
                if sel.name == hn.metadata.name:
                    raise errors.err(hn, path, f'Invalid value: "{sel.name}": a HyperNode cannot be its own member')
                if sel.name in parent and parent[sel.name] != hn.metadata.name:
                    raise errors.err(hn, path, f'Invalid value: "{sel.name}": HyperNode {sel.name} is already a '
                                     f"member of HyperNode {parent[sel.name]} (a HyperNode has one parent)")
                parent[sel.name] = hn.metadata.name
            elif sel.name not in nodes and not sc.node_pools:
                raise errors.err(hn, path, f'Not found: "{sel.name}": nodes "{sel.name}" not found')
    by_name = {hn.metadata.name: hn for hn in hyper_nodes}
    for name in sorted(parent):
        chain, cur = [name], parent[name]
        while cur in parent and cur not in chain:
            chain.append(cur)
            cur = parent[cur]
        if cur in chain or cur == name:
            loop = " -> ".join(reversed([*chain, cur]))
            raise errors.err(by_name[name], "spec.members",
                             f"Invalid value: the HyperNode hierarchy has a cycle: {loop}")
    return {hn.spec.tier_name for hn in hyper_nodes if hn.spec.tier_name}
