"""The resourceclaim controller of kube-controller-manager (mirrors kubernetes
pkg/controller/resourceclaim/controller.go).

- For a pod claim with ``resourceClaimTemplateName`` it creates one ResourceClaim from the template
  (``generateName: <pod>-<claim>-``: the apiserver appends 5 random characters, alphabet of
  k8s.io/apimachinery/pkg/util/rand), owned by the pod (controller reference), annotated
  ``resource.kubernetes.io/pod-claim-name: <claim>``, with the template's labels and annotations, and records
  it in the pod's ``status.resourceClaimStatuses``.
- Once a pod is done (Succeeded/Failed) or deleted it is removed from ``status.reservedFor`` of its claims;
  a claim reserved by nobody is deallocated (``status.allocation`` and the finalizer cleared), and a claim
  generated for a pod that is done is deleted.
"""
from __future__ import annotations

import copy
from typing import Any, Generator, Optional

from ..api.meta import ObjectMeta, OwnerReference
from ..api.core_v1 import PodResourceClaimStatus
from ..api.resource_k8s_io_v1 import (FINALIZER, POD_CLAIM_NAME_ANNOTATION, DeviceClass, ResourceClaim,
                                      ResourceClaimTemplate, ResourceSlice)
from ..controlplane.apiserver import DELETED
from ..controlplane.context import Context
from ..controlplane.events import WARNING

ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"   # apimachinery util/rand: no vowels, no confusable characters
DONE = ("Succeeded", "Failed")


class ResourceClaimController:
    def __init__(self, ctx: Context):
        self.ctx = ctx
        self._pods = ctx.api.watch("Pod")
        ctx.env.process(self._loop())

    def _loop(self) -> Generator:
        while True:
            ev = yield self._pods.get()
            pod = ev.obj
            if not pod.spec.resource_claims:
                continue
            if ev.type == DELETED or pod.status.phase in DONE:
                self.release(pod)
            else:
                self.sync_pod(pod)

    # --- claims for templates ---------------------------------------------------------------------------------
    def sync_pod(self, pod: Any) -> None:
        """syncPod → handleClaim for every template claim without a status entry."""
        changed = False
        for rc in pod.spec.resource_claims:
            if not rc.resource_claim_template_name or any(s.name == rc.name for s in pod.status.resource_claim_statuses):
                continue
            ns = pod.metadata.namespace
            tmpl = self.ctx.api.get(ResourceClaimTemplate.RESOURCE, ns, rc.resource_claim_template_name)
            if tmpl is None:
                self.ctx.event(pod, WARNING, "FailedResourceClaimCreation",
                               f'PodResourceClaim {rc.name}: resource claim template '
                               f'"{rc.resource_claim_template_name}": resourceclaimtemplate.resource.k8s.io '
                               f'"{rc.resource_claim_template_name}" not found', "resourceclaim-controller")
                continue
            base = generate_name(pod.metadata.name, rc.name)
            claim = ResourceClaim(metadata=ObjectMeta(
                name=self._generate_name(ns, base), namespace=ns, generate_name=base,
                labels=dict(tmpl.spec.metadata.labels),
                annotations={**tmpl.spec.metadata.annotations, POD_CLAIM_NAME_ANNOTATION: rc.name},
                owner_references=[OwnerReference("v1", "Pod", pod.metadata.name, pod.metadata.uid, True, True)]),
                spec=copy.deepcopy(tmpl.spec.spec))
            self.ctx.api.create(claim)
            pod.status.resource_claim_statuses.append(PodResourceClaimStatus(rc.name, claim.metadata.name))
            changed = True
        if changed:
            self.ctx.api.update(pod)

    def _generate_name(self, ns: str, prefix: str) -> str:
        """The apiserver's generateName (names.SimpleNameGenerator): prefix cut to 58 characters + 5 random
        characters; a name that exists already is drawn again (the apiserver retries on AlreadyExists)."""
        rng = self.ctx.api.rng
        while True:
            name = prefix[:58] + "".join(rng.choice(ALPHANUMS) for _ in range(5))
            if self.ctx.api.get(ResourceClaim.RESOURCE, ns, name) is None:
                return name

    # --- release --------------------------------------------------------------------------------------------
    def release(self, pod: Any) -> None:
        """The pod no longer uses its claims: drop it from reservedFor; deallocate an unreserved claim; delete a
        claim generated for it."""
        ns, uid = pod.metadata.namespace, pod.metadata.uid
        names = [rc.resource_claim_name for rc in pod.spec.resource_claims if rc.resource_claim_name]
        names += [s.resource_claim_name for s in pod.status.resource_claim_statuses if s.resource_claim_name]
        for name in names:
            claim = self.ctx.api.get(ResourceClaim.RESOURCE, ns, name)
            if claim is None:
                continue
            before = len(claim.status.reserved_for)
            claim.status.reserved_for = [r for r in claim.status.reserved_for if r.uid != uid]
            if not claim.status.reserved_for and claim.status.allocation is not None:
                claim.status.allocation = None
                claim.metadata.finalizers = [f for f in claim.metadata.finalizers if f != FINALIZER]
            owned = any(o.uid == uid and o.controller for o in claim.metadata.owner_references)
            if owned:
                self.ctx.api.delete(claim)
            elif len(claim.status.reserved_for) != before or claim.status.allocation is None:
                self.ctx.api.update(claim)


def generate_name(pod: str, claim: str) -> str:
    """handleClaim's generateName ``<pod>-<claim>-``: longer than 57 characters, both names are cut in proportion
    to their length (so the claim's name survives a long pod name)."""
    name = f"{pod}-{claim}-"
    max_base = 57   # room for the apiserver's 5 random characters in a 63-character name
    if len(name) > max_base:
        name = pod[:len(pod) * max_base // len(name)] + "-" + claim[:len(claim) * max_base // len(name)] + "-"
    return name


def install(sim: Any) -> Optional[ResourceClaimController]:
    """Add-on install (gpusim.cluster.components): create the scenario's DeviceClasses, ResourceSlices,
    ResourceClaimTemplates and ResourceClaims and run the controller when any pod or Job references a claim."""
    sc = sim.scenario
    objs = [o for r in (DeviceClass.RESOURCE, ResourceSlice.RESOURCE, ResourceClaimTemplate.RESOURCE,
                        ResourceClaim.RESOURCE) for o in sc.objects.get(r, [])]
    for o in objs:
        sim.ctx.api.create(o)
    uses = any(p.spec.resource_claims for p in sc.pods) or any(j.spec.template.spec.resource_claims for j in sc.jobs) \
        or bool(sc.objects.get("ComputeDomain"))   # its IMEX daemon pods claim their daemon device
    return ResourceClaimController(sim.ctx) if objs or uses else None
