"""Volcano on gpusim: the Volcano scheduler (a second scheduler on the same clock) and the controllers of its
CRDs (mirrors volcano-sh/volcano: pkg/scheduler, pkg/controllers/{job,podgroup,queue}, and what the Helm
chart installs: the ``default`` Queue, the scheduler's ConfigMap).

``install(sim)`` is one of the simulation's add-ons (gpusim.cluster.components): it runs only when the
scenario holds a Volcano object (Queue, PodGroup of scheduling.volcano.sh, Job of batch.volcano.sh, HyperNode of
topology.volcano.sh) or a
pod / Job template that names ``schedulerName: volcano``. The kube-scheduler leaves those pods alone (they name another scheduler) and
still counts their resources on the nodes once they are bound.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ..api.batch_volcano_sh_v1alpha1 import SCHEDULER_NAME, Job
from ..api.scheduling_volcano_sh_v1beta1 import DEFAULT_QUEUE, PodGroup, Queue, QueueSpec, default_queue

RESOURCES = ("Queue", PodGroup.RESOURCE, Job.RESOURCE, "HyperNode")
NAMESPACE = "volcano-system"


def needed(sc: Any) -> bool:
    """Whether the scenario uses Volcano at all."""
    if any(sc.objects.get(r) for r in RESOURCES):
        return True
    return any(p.spec.scheduler_name == SCHEDULER_NAME for p in sc.pods) or \
        any(j.spec.template.spec.scheduler_name == SCHEDULER_NAME for j in sc.jobs)


@dataclass
class Volcano:
    """The installed components; ``result.addons["volcano"]``."""

    conf: Any
    scheduler: Any
    job_controller: Any
    pod_group_controller: Any
    queue_controller: Any


def install(sim: Any) -> Optional[Volcano]:
    from ..api.core_v1 import Namespace
    from ..api.meta import ObjectMeta
    from .conf import from_configmaps
    from .job_controller import JobController
    from .podgroup_controller import PodGroupController
    from .queue_controller import QueueController
    from .scheduler import VolcanoScheduler

    sc, ctx = sim.scenario, sim.ctx
    if not needed(sc):
        return None
    api = ctx.api
    if api.get("Namespace", "", NAMESPACE) is None:
        api.create(Namespace(metadata=ObjectMeta(name=NAMESPACE)))
    queues = sc.objects.get("Queue", [])
    if not any(q.metadata.name == DEFAULT_QUEUE for q in queues):
        # the chart's default queue: reclaimable, weight 1
        q = Queue(metadata=ObjectMeta(name=DEFAULT_QUEUE), spec=QueueSpec(weight=1, reclaimable=True))
        default_queue(q)
        api.create(q)
    for obj in [*queues, *sc.objects.get(PodGroup.RESOURCE, [])]:
        api.create(obj)
    hyper_nodes = sc.objects.get("HyperNode", [])
    if hyper_nodes:
        # the HyperNode controller's status.nodeCount: the real nodes below each HyperNode
        from .hypernodes import HyperNodes
        tree = HyperNodes(hyper_nodes, sc.nodes)
        for hn in hyper_nodes:
            hn.status.node_count = len(tree.real_nodes[hn.metadata.name])
            api.create(hn)
    conf = from_configmaps(sc.configmaps)
    priorities = {pc.metadata.name: pc.value for pc in sc.priority_classes}
    queue_controller = QueueController(ctx)
    job_controller = JobController(ctx, priorities)
    pg_controller = PodGroupController(ctx, (SCHEDULER_NAME,))
    scheduler = VolcanoScheduler(ctx, conf)
    for job in sc.objects.get(Job.RESOURCE, []):
        ctx.env.process(sim.submit(job))
    return Volcano(conf, scheduler, job_controller, pg_controller, queue_controller)
