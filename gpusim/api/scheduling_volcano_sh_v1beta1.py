"""``scheduling.volcano.sh/v1beta1`` Queue and PodGroup (mirrors volcano-sh/apis
pkg/apis/scheduling/v1beta1/types.go), with the defaults of Volcano's admission webhooks
(volcano-sh/volcano pkg/webhooks/admission/queues/mutate, podgroups/mutate) and their validation.

- Queue (cluster-scoped): ``spec.weight`` (webhook default 1), ``capability``, ``reclaimable`` (webhook
  default true), ``guarantee.resource``, ``deserved``, ``priority``, ``parent``…; ``status.state``
  Open | Closed | Closing | Unknown (the queue controller opens a new queue), counters per PodGroup phase.
- PodGroup (namespaced; stored as ``PodGroup.scheduling.volcano.sh`` because scheduler-plugins' PodGroup
  exists too): ``minMember``, ``minTaskMember``, ``queue`` (default ``default``), ``priorityClassName``,
  ``minResources``, ``networkTopology`` (``mode`` hard | soft, ``highestTierAllowed`` or ``highestTierName``:
  the HyperNode tier a job may span); ``status.phase`` Pending | Inqueue | Running | Unknown | Completed and
  conditions.
- Pods join a group with the annotation ``scheduling.k8s.io/group-name``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from .meta import ObjectMeta
from .schema import INT32
from .quantity import QuantityError, parse_quantity

GROUP = "scheduling.volcano.sh"
GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"       # v1beta1.KubeGroupNameAnnotationKey
QUEUE_NAME_ANNOTATION = "scheduling.volcano.sh/queue-name"   # v1beta1.QueueNameAnnotationKey
POD_PREEMPTABLE = "volcano.sh/preemptable"                   # v1beta1.PodPreemptable
DEFAULT_QUEUE = "default"
QUEUE_STATES = ("Open", "Closed", "Closing", "Unknown")
POD_GROUP_PHASES = ("Pending", "Running", "Unknown", "Inqueue", "Completed")
# PodGroup condition types and reasons (types.go)
UNSCHEDULABLE, SCHEDULED = "Unschedulable", "Scheduled"
NOT_ENOUGH_RESOURCES = "NotEnoughResources"
NOT_ENOUGH_PODS = "NotEnoughTasks"
NOT_ENOUGH_PODS_OF_TASK = "NotEnoughPodsOfTask"
POD_GROUP_NOT_READY = "pod group is not ready"
POD_GROUP_READY = "pod group is ready"


@dataclass
class Guarantee:
    resource: dict[str, Any] = field(default_factory=dict)


@dataclass
class QueueSpec:
    weight: int = 0
    capability: Optional[dict[str, Any]] = None
    reclaimable: Optional[bool] = None
    guarantee: Optional[Guarantee] = None
    deserved: Optional[dict[str, Any]] = None
    priority: int = 0
    parent: str = ""
    affinity: Any = None
    dequeue_strategy: str = ""
    extend_clusters: Any = None
    type: str = ""


@dataclass
class QueueStatus:
    state: str = ""
    unknown: int = 0
    pending: int = 0
    running: int = 0
    inqueue: int = 0
    completed: int = 0
    allocated: dict[str, Any] = field(default_factory=dict)
    reservation: Any = None


@dataclass
class Queue:
    NAMESPACED = False
    api_version: str = "scheduling.volcano.sh/v1beta1"
    kind: str = "Queue"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: QueueSpec = field(default_factory=QueueSpec)
    status: QueueStatus = field(default_factory=QueueStatus)


@dataclass
class NetworkTopologySpec:
    """types.go NetworkTopologySpec: ``mode`` hard | soft (CRD default hard), ``highestTierAllowed`` or
    ``highestTierName`` (not both)."""
    mode: str = "hard"
    highest_tier_allowed: Optional[int] = None
    highest_tier_name: str = ""

    def is_hard(self) -> bool:
        """JobInfo.ContainsHardTopology / IsHardTopologyMode: hard mode with a tier boundary."""
        return self.mode == "hard" and (self.highest_tier_allowed is not None or bool(self.highest_tier_name))


NETWORK_TOPOLOGY_MODES = ("hard", "soft")
TIER_NAME_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"


def validate_network_topology(nt: Optional[NetworkTopologySpec], path: str) -> Iterator[tuple[str, str]]:
    """The CRD's checks (``mode`` enum, ``highestTierAllowed`` ≥ 0, ``highestTierName`` ≤ 253 characters and a
    DNS-1123 subdomain) and the plugin's validateTopologyConstraint (not both boundaries)."""
    if nt is None:
        return
    if nt.mode not in NETWORK_TOPOLOGY_MODES:
        yield f"{path}.mode", f'Unsupported value: "{nt.mode}": supported values: "hard", "soft"'
    if nt.highest_tier_allowed is not None and nt.highest_tier_allowed < 0:
        yield f"{path}.highestTierAllowed", (f"Invalid value: {nt.highest_tier_allowed}: {path}.highestTierAllowed "
                                             "in body should be greater than or equal to 0")
    name = nt.highest_tier_name
    if len(name) > 253:
        yield f"{path}.highestTierName", "Too long: may not be longer than 253"
    elif name and not re.match(TIER_NAME_PATTERN, name):
        yield f"{path}.highestTierName", (f'Invalid value: "{name}": {path}.highestTierName in body should match '
                                          f"'{TIER_NAME_PATTERN}'")
    if nt.highest_tier_allowed is not None and nt.highest_tier_name:
        yield path, "Invalid value: highestTierAllowed and highestTierName cannot be set simultaneously"


@dataclass
class PodGroupSpec:
    min_member: int = field(default=0, metadata=INT32)
    min_task_member: dict[str, int] = field(default_factory=dict)
    queue: str = ""
    priority_class_name: str = ""
    min_resources: Optional[dict[str, Any]] = None
    network_topology: Optional[NetworkTopologySpec] = None
    sub_group_policy: Any = None


@dataclass
class PodGroupCondition:
    type: str = ""
    status: str = ""
    transition_id: str = field(default="", metadata={"json": "transitionID"})
    last_transition_time: Any = None
    reason: str = ""
    message: str = ""


@dataclass
class PodGroupStatus:
    phase: str = ""
    conditions: list[PodGroupCondition] = field(default_factory=list)
    running: int = 0
    succeeded: int = 0
    failed: int = 0


@dataclass
class PodGroup:
    RESOURCE = "PodGroup.scheduling.volcano.sh"
    NAMESPACED = True
    api_version: str = "scheduling.volcano.sh/v1beta1"
    kind: str = "PodGroup"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: PodGroupSpec = field(default_factory=PodGroupSpec)
    status: PodGroupStatus = field(default_factory=PodGroupStatus)


def default_queue(q: Queue) -> None:
    """mutate_queue.go: weight 1 when unset, reclaimable true when unset."""
    if q.spec.weight == 0:
        q.spec.weight = 1
    if q.spec.reclaimable is None:
        q.spec.reclaimable = True


def default_pod_group(pg: PodGroup) -> None:
    """podgroups/mutate: the queue defaults to ``default``."""
    if not pg.spec.queue:
        pg.spec.queue = DEFAULT_QUEUE


def _resources(rl: Optional[dict[str, Any]], path: str) -> Iterator[tuple[str, str]]:
    for name, value in (rl or {}).items():
        try:
            q = parse_quantity(value)
        except QuantityError as e:
            yield f"{path}[{name}]", f'Invalid value: "{value}": {e}'
            continue
        if q < 0:
            yield f"{path}[{name}]", f'Invalid value: "{value}": must be greater than or equal to 0'


def validate_queue(q: Queue) -> Iterator[tuple[str, str]]:
    """queues/validate (admit_queue.go): positive weight, a known state, valid quantities; guarantee and
    deserved within capability. Message texts UNVERIFIED beyond the weight check."""
    if q.spec.weight <= 0:
        yield "spec.weight", f"Invalid value: {q.spec.weight}: queue weight must be a positive integer"
    if q.status.state and q.status.state not in QUEUE_STATES:
        yield "status.state", f'Invalid value: "{q.status.state}": queue state must be in {list(QUEUE_STATES)}'
    yield from _resources(q.spec.capability, "spec.capability")
    yield from _resources(q.spec.deserved, "spec.deserved")
    if q.spec.guarantee is not None:
        yield from _resources(q.spec.guarantee.resource, "spec.guarantee.resource")
    cap = q.spec.capability or {}
    for what, rl in (("deserved", q.spec.deserved), ("guarantee.resource",
                                                     q.spec.guarantee.resource if q.spec.guarantee else None)):
        for name, value in (rl or {}).items():
            try:
                if name in cap and parse_quantity(value) > parse_quantity(cap[name]):
                    yield f"spec.{what}[{name}]", (f'Invalid value: "{value}": {what.split(".")[0]} should less '
                                                   f"equal than capability")
            except QuantityError:
                pass


def validate_pod_group(pg: PodGroup) -> Iterator[tuple[str, str]]:
    s = pg.spec
    if s.min_member < 0:
        yield "spec.minMember", (f"Invalid value: {s.min_member}: spec.minMember in body should be greater than "
                                 "or equal to 0")
    for task, n in s.min_task_member.items():
        if n < 0:
            yield f"spec.minTaskMember[{task}]", f"Invalid value: {n}: must be greater than or equal to 0"
    yield from _resources(s.min_resources, "spec.minResources")
    yield from validate_network_topology(s.network_topology, "spec.networkTopology")
    if pg.status.phase and pg.status.phase not in POD_GROUP_PHASES:
        yield "status.phase", ('Unsupported value: "' + pg.status.phase + '": supported values: '
                               + ", ".join(f'"{p}"' for p in POD_GROUP_PHASES))
