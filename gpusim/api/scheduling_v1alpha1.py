"""``scheduling.k8s.io/v1alpha1`` Workload — **alpha** native gang scheduling, Kubernetes 1.35 shape
(mirrors kubernetes staging/src/k8s.io/api/scheduling/v1alpha1/types.go, KEP-4671). Served only with
the feature gate ``GenericWorkload`` (off by default) and only by 1.35 (the Simulation's
``kubernetesVersion: "1.35"``): 1.36 replaced it with the v1alpha2 Workload and PodGroup
(gpusim/api/scheduling_k8s_io_v1alpha2.py) and no longer serves v1alpha1.

- spec.controllerRef ``{apiGroup, kind, name}`` (optional): the object that owns the workload, e.g. a Job.
- spec.podGroups[] (1..8, immutable) ``{name, policy}``; policy is exactly one of ``basic: {}`` (no
  gang semantics) or ``gang: {minCount}``.
- A pod joins with ``spec.workloadRef: {name, podGroup, podGroupReplicaKey}`` (same namespace,
  immutable); pods with the same reference form one gang; the replica key splits a pod group into
  independent gangs. The scheduler side is gpusim/scheduler/plugins/gangscheduling.py.
Validation as pkg/apis/scheduling/validation/validation.go ValidateWorkload (1.35).
"""
from __future__ import annotations

from .schema import INT32

from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from .meta import ObjectMeta
from .validation import validate_name

GROUP_VERSION = "scheduling.k8s.io/v1alpha1"
MAX_POD_GROUPS = 8       # WorkloadMaxPodGroups


@dataclass
class TypedLocalObjectReference:
    api_group: str = ""
    kind: str = ""
    name: str = ""


@dataclass
class GangSchedulingPolicy:
    min_count: int = field(default=0, metadata=INT32)


@dataclass
class PodGroupPolicy:
    basic: Optional[dict[str, Any]] = None
    gang: Optional[GangSchedulingPolicy] = None


@dataclass
class WorkloadPodGroup:
    """``PodGroup`` inside a Workload's spec (not the scheduler-plugins PodGroup CRD)."""

    name: str = field(default="", metadata={"required": True})
    policy: PodGroupPolicy = field(default_factory=PodGroupPolicy)


@dataclass
class WorkloadSpec:
    controller_ref: Optional[TypedLocalObjectReference] = None
    pod_groups: list[WorkloadPodGroup] = field(default_factory=list)


@dataclass
class Workload:
    """Alpha (GenericWorkload gate). Stored as ``Workload.scheduling.k8s.io``."""

    RESOURCE = "Workload.scheduling.k8s.io"
    NAMESPACED = True
    api_version: str = GROUP_VERSION
    kind: str = "Workload"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: WorkloadSpec = field(default_factory=WorkloadSpec)


def pod_group_policy(workload: Workload, name: str) -> Optional[PodGroupPolicy]:
    """podGroupPolicy: the policy of the pod group ``name``, or None when the workload has none."""
    return next((g.policy for g in workload.spec.pod_groups if g.name == name), None)


def validate_workload(w: Workload) -> Iterator[tuple[str, str]]:
    """pkg/apis/scheduling/validation ValidateWorkload (1.35), with its messages."""
    ref = w.spec.controller_ref
    if ref is not None:
        if not ref.kind:
            yield "spec.controllerRef.kind", "Required value"
        if not ref.name:
            yield "spec.controllerRef.name", "Required value"
    groups = w.spec.pod_groups
    if not groups:
        yield "spec.podGroups", "Required value: must have at least one item"
        return
    if len(groups) > MAX_POD_GROUPS:
        yield "spec.podGroups", f"Too many: {len(groups)}: must have at most {MAX_POD_GROUPS} items"
        return
    seen = set()
    for i, g in enumerate(groups):
        p = f"spec.podGroups[{i}]"
        yield from validate_name(g.name, f"{p}.name", label=True)   # ValidatePodGroupName (UNVERIFIED: DNS label)
        if g.name in seen:
            yield f"{p}.name", f'Duplicate value: "{g.name}"'
        seen.add(g.name)
        set_fields = [f"`{k}`" for k in ("basic", "gang") if getattr(g.policy, k) is not None]
        if not set_fields:
            yield f"{p}.policy", "Required value: exactly one of `basic`, `gang` is required"
        elif len(set_fields) > 1:
            yield f"{p}.policy", (f'Invalid value: "{{{", ".join(set_fields)}}}": exactly one of `basic`, `gang` is '
                                  "required, but multiple fields are set")
        elif g.policy.gang is not None and g.policy.gang.min_count <= 0:
            yield f"{p}.policy.gang.minCount", f"Invalid value: {g.policy.gang.min_count}: must be greater than zero"
