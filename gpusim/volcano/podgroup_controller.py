"""Volcano's PodGroup controller (mirrors volcano-sh/volcano pkg/controllers/podgroup: pg_controller_handler.go
createNormalPodPGIfNotExist, helpers.GeneratePodgroupName): a pod for the Volcano scheduler that belongs to
no PodGroup (a bare pod, or one made by a batch/v1 Job, Deployment, …) gets a PodGroup
``podgroup-<controller owner uid>`` (or ``podgroup-<pod uid>`` without one) with minMember 1, the queue of
its ``scheduling.volcano.sh/queue-name`` annotation (else ``default``), its priorityClassName and its
requests as minResources; the pod is annotated ``scheduling.k8s.io/group-name`` with it."""
from __future__ import annotations

from typing import Any, Generator

from ..api.batch_volcano_sh_v1alpha1 import PODGROUP_NAME_PREFIX
from ..api.meta import ObjectMeta, OwnerReference
from ..api.scheduling_volcano_sh_v1beta1 import (DEFAULT_QUEUE, GROUP_NAME_ANNOTATION, QUEUE_NAME_ANNOTATION,
                                                 PodGroup, PodGroupSpec, PodGroupStatus)
from ..controlplane.apiserver import ADDED
from ..scheduler.framework import PodInfo
from .job_controller import COMPONENT, quantities

PODGROUP = PodGroup.RESOURCE


def generate_pod_group_name(pod) -> str:
    owner = next((o for o in pod.metadata.owner_references if o.controller), None)
    return PODGROUP_NAME_PREFIX + (owner.uid if owner is not None else pod.metadata.uid)


class PodGroupController:
    def __init__(self, ctx: Any, scheduler_names: tuple[str, ...]):
        self.ctx = ctx
        self.scheduler_names = scheduler_names
        ctx.env.process(self._loop(ctx.api.watch("Pod")))

    def _loop(self, store) -> Generator:
        while True:
            ev = yield store.get()
            pod = ev.obj
            if ev.type != ADDED or pod.spec.scheduler_name not in self.scheduler_names \
                    or pod.metadata.annotations.get(GROUP_NAME_ANNOTATION):
                continue
            self.create_normal_pod_pg_if_not_exist(pod)

    def create_normal_pod_pg_if_not_exist(self, pod) -> None:
        api, ctx = self.ctx.api, self.ctx
        name = generate_pod_group_name(pod)
        if api.get(PODGROUP, pod.metadata.namespace, name) is None:
            owner = next((o for o in pod.metadata.owner_references if o.controller), None)
            ref = owner if owner is not None else OwnerReference("v1", "Pod", pod.metadata.name, pod.metadata.uid,
                                                                 True, True)
            spec = PodGroupSpec(min_member=1, queue=pod.metadata.annotations.get(QUEUE_NAME_ANNOTATION, DEFAULT_QUEUE),
                                priority_class_name=pod.spec.priority_class_name,
                                min_resources=quantities(PodInfo(pod).requests))
            pg = PodGroup(metadata=ObjectMeta(name=name, namespace=pod.metadata.namespace, owner_references=[ref]),
                          spec=spec, status=PodGroupStatus(phase="Pending"))
            api.create(pg)
            ctx.trace.add(ctx.now, COMPONENT, "podgroup.(*pgcontroller).createNormalPodPGIfNotExist",
                          f"PodGroup {pod.metadata.namespace}/{name}", "Created")
        pod.metadata.annotations[GROUP_NAME_ANNOTATION] = name
        if api.get("Pod", pod.metadata.namespace, pod.metadata.name) is pod:
            api.update(pod)
