"""``scheduling.x-k8s.io/v1alpha1`` PodGroup and ElasticQuota (mirrors kubernetes-sigs/scheduler-plugins
apis/scheduling/v1alpha1/types.go) and their CRD validation.

- spec: ``minMember`` (CRD minimum 1), ``minResources`` (ResourceList), ``scheduleTimeoutSeconds``.
- status: ``phase`` (Pending, Scheduling, Running, Unknown, Finished, Failed; PreScheduling and
  Scheduled were removed upstream in 2023), ``occupiedBy``, ``running``, ``succeeded``, ``failed``,
  ``scheduleStartTime``. The controller is gpusim/controllers/podgroup.py.
- Pods join a group with the label ``scheduling.x-k8s.io/pod-group: <name>`` (same namespace).
- ElasticQuota (namespaced, one per namespace): ``spec.min`` (guaranteed), ``spec.max`` (upper bound),
  ``status.used``; read by the CapacityScheduling plugin (gpusim/scheduler/plugins/capacityscheduling.py),
  status written by gpusim/controllers/elasticquota.py.
"""
from __future__ import annotations

from .schema import INT32

from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from .meta import ObjectMeta
from .quantity import QuantityError, parse_quantity

POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
PHASES = ("Pending", "Scheduling", "Running", "Unknown", "Finished", "Failed")


@dataclass
class PodGroupSpec:
    min_member: int = field(default=0, metadata=INT32)
    min_resources: Optional[dict[str, Any]] = None
    schedule_timeout_seconds: Optional[int] = None


@dataclass
class PodGroupStatus:
    phase: str = ""
    occupied_by: str = ""
    running: int = 0
    succeeded: int = 0
    failed: int = 0
    schedule_start_time: Any = None      # simulated seconds


@dataclass
class PodGroup:
    api_version: str = "scheduling.x-k8s.io/v1alpha1"
    kind: str = "PodGroup"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: PodGroupSpec = field(default_factory=PodGroupSpec)
    status: PodGroupStatus = field(default_factory=PodGroupStatus)


def validate_pod_group(pg: PodGroup) -> Iterator[tuple[str, str]]:
    """The CRD's OpenAPI checks (kube-openapi message format)."""
    s = pg.spec
    if s.min_member < 1:
        yield "spec.minMember", (f"Invalid value: {s.min_member}: spec.minMember in body should be greater than "
                                 "or equal to 1")
    for name, value in (s.min_resources or {}).items():
        try:
            q = parse_quantity(value)
        except QuantityError as e:
            yield f"spec.minResources[{name}]", f'Invalid value: "{value}": {e}'
            continue
        if q < 0:
            yield f"spec.minResources[{name}]", f'Invalid value: "{value}": must be greater than or equal to 0'
    if s.schedule_timeout_seconds is not None and s.schedule_timeout_seconds < 0:
        yield "spec.scheduleTimeoutSeconds", (f"Invalid value: {s.schedule_timeout_seconds}: "
                                             "must be greater than or equal to 0")


# --- ElasticQuota (apis/scheduling/v1alpha1/types.go; CRD config/crd/bases/scheduling.x-k8s.io_elasticquotas.yaml) ---
@dataclass
class ElasticQuotaSpec:
    """``min``: the namespace's guaranteed resources; ``max``: its upper bound (borrowing up to it)."""

    min: Optional[dict[str, Any]] = None
    max: Optional[dict[str, Any]] = None


@dataclass
class ElasticQuotaStatus:
    used: Optional[dict[str, Any]] = None     # written by the ElasticQuota controller (Running pods' requests)


@dataclass
class ElasticQuota:
    """One per namespace (the plugin and the controller use the first one they list)."""

    NAMESPACED = True
    api_version: str = "scheduling.x-k8s.io/v1alpha1"
    kind: str = "ElasticQuota"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: ElasticQuotaSpec = field(default_factory=ElasticQuotaSpec)
    status: ElasticQuotaStatus = field(default_factory=ElasticQuotaStatus)


def validate_elastic_quota(eq: ElasticQuota) -> Iterator[tuple[str, str]]:
    """The CRD's schema (config/crd/bases/scheduling.x-k8s.io_elasticquotas.yaml): min/max/used are
    maps of int-or-string quantities. The CRD's pattern accepts a sign; rejecting negative amounts is
    gpusim's own rule (a negative bound makes every request of the namespace exceed it)."""
    for part, values in (("spec.min", eq.spec.min), ("spec.max", eq.spec.max), ("status.used", eq.status.used)):
        for name, value in (values or {}).items():
            try:
                q = parse_quantity(value)
            except QuantityError as e:
                yield f"{part}[{name}]", f'Invalid value: "{value}": {e}'
                continue
            if q < 0:
                yield f"{part}[{name}]", f'Invalid value: "{value}": must be greater than or equal to 0'
