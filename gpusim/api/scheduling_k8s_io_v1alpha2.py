"""``scheduling.k8s.io/v1alpha2`` Workload and PodGroup — **alpha** native gang scheduling, Kubernetes 1.36
shape (mirrors kubernetes staging/src/k8s.io/api/scheduling/v1alpha2/types.go, KEP-4671 as updated for 1.36,
kubernetes/kubernetes#136976). Served only with the feature gate ``GenericWorkload`` (off by default);
replaces 1.35's ``scheduling.k8s.io/v1alpha1`` Workload (gpusim/api/scheduling_v1alpha1.py), which a 1.36
apiserver no longer serves.

- Workload: ``spec.controllerRef {apiGroup, kind, name}`` (optional) and ``spec.podGroupTemplates[]`` (1..8,
  immutable) ``{name, schedulingPolicy}``; the policy is exactly one of ``basic: {}`` or ``gang: {minCount}``.
  A Workload holds templates only: the scheduler never reads it.
- PodGroup: the runtime instance the scheduler reads. ``spec.podGroupTemplateRef.workload {workloadName,
  podGroupTemplateName}`` (optional, immutable; for observability), ``spec.schedulingPolicy`` (required,
  immutable; copied from the template by a workload controller, or written directly for a standalone
  PodGroup), ``status.conditions`` (known type ``PodGroupScheduled``, reasons Scheduled / Unschedulable /
  Preempted).
- A pod joins with ``spec.schedulingGroup: {podGroupName}`` (same namespace, immutable); the pods naming
  the same PodGroup form one gang. The scheduler side is gpusim/scheduler/plugins/gangscheduling.py.
Not modelled: ``schedulingConstraints`` (feature gate TopologyAwareWorkloadScheduling) — strict decoding
rejects the field; the workload controllers that create PodGroups from templates (write the PodGroup).
Validation as pkg/apis/scheduling/validation/validation.go ValidateWorkload / ValidatePodGroup (1.36).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from .meta import ObjectMeta
from .schema import INT32
from .validation import validate_name

GROUP_VERSION = "scheduling.k8s.io/v1alpha2"
MAX_POD_GROUP_TEMPLATES = 8      # WorkloadMaxPodGroupTemplates
CONDITION_SCHEDULED = "PodGroupScheduled"   # PodGroupConditionTypeScheduled


@dataclass
class TypedLocalObjectReference:
    api_group: str = ""
    kind: str = ""
    name: str = ""


@dataclass
class GangSchedulingPolicy:
    min_count: int = field(default=0, metadata=INT32)


@dataclass
class PodGroupSchedulingPolicy:
    """Union: exactly one of ``basic`` (BasicSchedulingPolicy, no fields) and ``gang``."""

    basic: Optional[dict[str, Any]] = None
    gang: Optional[GangSchedulingPolicy] = None


@dataclass
class PodGroupTemplate:
    name: str = ""
    scheduling_policy: PodGroupSchedulingPolicy = field(default_factory=PodGroupSchedulingPolicy)


@dataclass
class WorkloadSpec:
    controller_ref: Optional[TypedLocalObjectReference] = None
    pod_group_templates: list[PodGroupTemplate] = field(default_factory=list)


@dataclass
class Workload:
    """Alpha (GenericWorkload gate). Stored as ``Workload.scheduling.k8s.io`` (one resource, several versions)."""

    RESOURCE = "Workload.scheduling.k8s.io"
    NAMESPACED = True
    api_version: str = GROUP_VERSION
    kind: str = "Workload"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: WorkloadSpec = field(default_factory=WorkloadSpec)


@dataclass
class WorkloadPodGroupTemplateReference:
    workload_name: str = ""
    pod_group_template_name: str = ""


@dataclass
class PodGroupTemplateReference:
    """Union with one member: ``workload``."""

    workload: Optional[WorkloadPodGroupTemplateReference] = None


@dataclass
class PodGroupSpec:
    pod_group_template_ref: Optional[PodGroupTemplateReference] = None
    scheduling_policy: PodGroupSchedulingPolicy = field(default_factory=PodGroupSchedulingPolicy)


@dataclass
class PodGroupStatus:
    conditions: list[dict[str, Any]] = field(default_factory=list)   # metav1.Condition


@dataclass
class PodGroup:
    """Alpha (GenericWorkload gate). Stored as ``PodGroup.scheduling.k8s.io`` (not the scheduler-plugins
    ``scheduling.x-k8s.io`` PodGroup, nor Volcano's)."""

    RESOURCE = "PodGroup.scheduling.k8s.io"
    NAMESPACED = True
    api_version: str = GROUP_VERSION
    kind: str = "PodGroup"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: PodGroupSpec = field(default_factory=PodGroupSpec)
    status: PodGroupStatus = field(default_factory=PodGroupStatus)


def _short_name(value: str, path: str) -> Iterator[tuple[str, str]]:
    """Empty → Required (as declarative validation), else ValidatePodGroupName (a DNS label, format=k8s-short-name)."""
    if not value:
        yield path, "Required value"
    else:
        yield from validate_name(value, path, label=True)


def validate_scheduling_policy(policy: PodGroupSchedulingPolicy, path: str) -> Iterator[tuple[str, str]]:
    """validatePodGroupSchedulingPolicy and validateGangSchedulingPolicy (1.36), with their messages."""
    set_fields = [f"`{k}`" for k in ("basic", "gang") if getattr(policy, k) is not None]
    if not set_fields:
        yield path, 'Invalid value: "": must specify one of: `basic`, `gang`'
    elif len(set_fields) > 1:
        yield path, (f'Invalid value: "{{{", ".join(set_fields)}}}": exactly one of `basic`, `gang` is required, '
                     "but multiple fields are set")
    elif policy.gang is not None:
        if policy.gang.min_count == 0:
            yield f"{path}.gang.minCount", "Required value"
        elif policy.gang.min_count < 0:
            yield f"{path}.gang.minCount", f"Invalid value: {policy.gang.min_count}: must be greater than zero"


def validate_workload(w: Workload) -> Iterator[tuple[str, str]]:
    """ValidateWorkload (1.36): controllerRef, then 1..8 uniquely named pod group templates."""
    ref = w.spec.controller_ref
    if ref is not None:
        if not ref.kind:
            yield "spec.controllerRef.kind", "Required value"
        if not ref.name:
            yield "spec.controllerRef.name", "Required value"
    templates = w.spec.pod_group_templates
    path = "spec.podGroupTemplates"
    if not templates:
        yield path, "Required value: must have at least one item"
        return
    if len(templates) > MAX_POD_GROUP_TEMPLATES:
        yield path, f"Too many: {len(templates)}: must have at most {MAX_POD_GROUP_TEMPLATES} items"
        return
    seen: set[str] = set()
    for i, t in enumerate(templates):
        p = f"{path}[{i}]"
        yield from _short_name(t.name, f"{p}.name")
        if t.name in seen:
            yield p, f'Duplicate value: "{t.name}"'
        seen.add(t.name)
        yield from validate_scheduling_policy(t.scheduling_policy, f"{p}.schedulingPolicy")


def validate_pod_group(pg: PodGroup) -> Iterator[tuple[str, str]]:
    """ValidatePodGroup (1.36): the template reference when set, then the scheduling policy."""
    ref = pg.spec.pod_group_template_ref
    if ref is not None and ref.workload is not None:
        p = "spec.podGroupTemplateRef.workload"
        yield from _short_name(ref.workload.workload_name, f"{p}.workloadName")
        yield from _short_name(ref.workload.pod_group_template_name, f"{p}.podGroupTemplateName")
    yield from validate_scheduling_policy(pg.spec.scheduling_policy, "spec.schedulingPolicy")
