"""Core ``v1`` kinds: Pod, Node, Namespace, ConfigMap (mirrors k8s.io/api/core/v1/types.go).

Fields the simulator reads are typed; other upstream fields are accepted as opaque values so real
manifests load, while unknown fields are still rejected.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from .meta import ObjectMeta
from .schema import INT32, IntOrString

# Well-known resource names (k8s.io/api/core/v1 ResourceName constants).
CPU, MEMORY, PODS, EPHEMERAL_STORAGE = "cpu", "memory", "pods", "ephemeral-storage"
DEFAULT_SCHEDULER_NAME = "default-scheduler"   # k8s.io/api/core/v1 types.go DefaultSchedulerName
NVIDIA_GPU = "nvidia.com/gpu"


@dataclass
class ResourceClaim:
    """A container's ``resources.claims[]`` entry: a pod ``spec.resourceClaims[].name`` and, optionally, one of
    that claim's requests (core/v1 ResourceClaim)."""

    name: str = field(default="", metadata={"required": True})
    request: str = ""


@dataclass(slots=True)
class ResourceRequirements:
    limits: dict[str, IntOrString] = field(default_factory=dict)
    requests: dict[str, IntOrString] = field(default_factory=dict)
    claims: list[ResourceClaim] = field(default_factory=list)


@dataclass(slots=True)
class ContainerStateWaiting:
    reason: str = ""
    message: str = ""


@dataclass(slots=True)
class ContainerStateRunning:
    started_at: Any = None


@dataclass(slots=True)
class ContainerStateTerminated:
    exit_code: int = 0
    reason: str = ""
    message: str = ""
    started_at: Any = None
    finished_at: Any = None


@dataclass(slots=True)
class ContainerState:
    waiting: Optional[ContainerStateWaiting] = None
    running: Optional[ContainerStateRunning] = None
    terminated: Optional[ContainerStateTerminated] = None


@dataclass(slots=True)
class ContainerStatus:
    name: str = ""
    ready: bool = False
    restart_count: int = 0
    started: Optional[bool] = None
    state: ContainerState = field(default_factory=ContainerState)
    last_state: ContainerState = field(default_factory=ContainerState)
    image: str = ""
    allocated_resources_status: Any = None


@dataclass
class Container:
    name: str = field(default="", metadata={"required": True})
    image: str = ""
    command: Any = None
    args: Any = None
    working_dir: Any = None
    ports: Any = None
    env_from: Any = None
    env: Any = None
    resources: ResourceRequirements = field(default_factory=ResourceRequirements)
    resize_policy: Any = None
    restart_policy: Optional[str] = None
    volume_mounts: Any = None
    volume_devices: Any = None
    liveness_probe: Any = None
    readiness_probe: Any = None
    startup_probe: Any = None
    lifecycle: Any = None
    termination_message_path: Any = None
    termination_message_policy: Any = None
    image_pull_policy: Any = None
    security_context: Any = None
    stdin: Any = None
    stdin_once: Any = None
    tty: Any = None


@dataclass
class NodeSelectorRequirement:
    key: str = ""
    operator: str = ""
    values: list[str] = field(default_factory=list)


@dataclass
class NodeSelectorTerm:
    match_expressions: list[NodeSelectorRequirement] = field(default_factory=list)
    match_fields: list[NodeSelectorRequirement] = field(default_factory=list)


@dataclass
class NodeSelector:
    node_selector_terms: list[NodeSelectorTerm] = field(default_factory=list)


@dataclass
class PreferredSchedulingTerm:
    weight: int = 0
    preference: NodeSelectorTerm = field(default_factory=NodeSelectorTerm)


@dataclass
class NodeAffinity:
    required_during_scheduling_ignored_during_execution: Optional[NodeSelector] = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] = field(default_factory=list)


@dataclass
class Affinity:
    node_affinity: Optional[NodeAffinity] = None
    pod_affinity: Any = None
    pod_anti_affinity: Any = None


@dataclass(slots=True)
class Toleration:
    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""
    toleration_seconds: Optional[int] = None


@dataclass
class Taint:
    key: str = field(default="", metadata={"required": True})
    value: str = ""
    effect: str = field(default="", metadata={"required": True})
    time_added: Any = None


@dataclass
class PodSchedulingGate:
    name: str = ""


@dataclass
class WorkloadReference:
    """``spec.workloadRef`` (alpha, 1.35, feature gate GenericWorkload; immutable): the pod's Workload
    (same namespace), the pod group in it, and a replica key splitting that group into several gangs."""

    name: str = field(default="", metadata={"required": True})
    pod_group: str = field(default="", metadata={"required": True})
    pod_group_replica_key: str = ""


@dataclass
class PodSchedulingGroup:
    """``spec.schedulingGroup`` (alpha, 1.36, feature gate GenericWorkload; immutable; core/v1 types.go
    PodSchedulingGroup): the ``scheduling.k8s.io/v1alpha2`` PodGroup (same namespace) the pod belongs to.
    Replaces 1.35's ``spec.workloadRef``."""

    pod_group_name: Optional[str] = None


@dataclass
class PodResourceClaim:
    """``spec.resourceClaims[]``: exactly one of resourceClaimName (a shared claim) or resourceClaimTemplateName
    (the resourceclaim controller creates one claim per pod)."""

    name: str = field(default="", metadata={"required": True})
    resource_claim_name: Optional[str] = None
    resource_claim_template_name: Optional[str] = None


@dataclass
class PodResourceClaimStatus:
    """``status.resourceClaimStatuses[]``: the claim generated for a template (None: none was needed)."""

    name: str = ""
    resource_claim_name: Optional[str] = None


@dataclass
class ContainerExtendedResourceRequest:
    """``status.extendedResourceClaimStatus.requestMappings[]`` (KEP-5004): which request of the extended
    resource claim serves a container's extended resource."""

    container_name: str = ""
    resource_name: str = ""
    request_name: str = ""


@dataclass
class PodExtendedResourceClaimStatus:
    """``status.extendedResourceClaimStatus`` (DRAExtendedResource): the claim the scheduler created for the
    pod's extended resources backed by DRA, and the request of it each container's resource maps to."""

    request_mappings: list[ContainerExtendedResourceRequest] = field(default_factory=list)
    resource_claim_name: str = ""


@dataclass(slots=True)
class PodSpec:
    containers: list[Container] = field(default_factory=list, metadata={"required": True})
    init_containers: list[Container] = field(default_factory=list)
    ephemeral_containers: Any = None
    volumes: Any = None
    restart_policy: str = ""
    termination_grace_period_seconds: Optional[int] = None
    active_deadline_seconds: Optional[int] = None
    dns_policy: Any = None
    dns_config: Any = None
    node_selector: dict[str, str] = field(default_factory=dict)
    service_account_name: Any = None
    service_account: Any = None
    automount_service_account_token: Any = None
    node_name: str = ""
    host_network: Any = None
    host_pid: Any = field(default=None, metadata={"json": "hostPID"})
    host_ipc: Any = field(default=None, metadata={"json": "hostIPC"})
    host_users: Any = None
    share_process_namespace: Any = None
    security_context: Any = None
    image_pull_secrets: Any = None
    hostname: Any = None
    subdomain: Any = None
    set_hostname_as_fqdn: Any = field(default=None, metadata={"json": "setHostnameAsFQDN"})
    affinity: Optional[Affinity] = None
    scheduler_name: str = ""
    tolerations: list[Toleration] = field(default_factory=list)
    host_aliases: Any = None
    priority_class_name: str = ""
    priority: Optional[int] = field(default=None, metadata=INT32)
    preemption_policy: Optional[str] = None
    readiness_gates: Any = None
    runtime_class_name: Any = None
    enable_service_links: Any = None
    overhead: Optional[dict[str, IntOrString]] = None     # set by the RuntimeClass admission plugin
    topology_spread_constraints: Any = None
    os: Any = None
    scheduling_gates: list[PodSchedulingGate] = field(default_factory=list)
    resource_claims: list[PodResourceClaim] = field(default_factory=list)
    resources: Optional[ResourceRequirements] = None    # pod-level resources (PodLevelResources, 1.34 beta on)
    workload_ref: Optional[WorkloadReference] = None     # alpha (1.35 only): native gang scheduling
    scheduling_group: Optional[PodSchedulingGroup] = None   # alpha (1.36): replaces workloadRef


@dataclass(slots=True)
class PodCondition:
    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""
    last_transition_time: Any = None
    last_probe_time: Any = None


@dataclass(slots=True)
class PodStatus:
    phase: str = ""
    conditions: list[PodCondition] = field(default_factory=list)
    message: str = ""
    reason: str = ""
    nominated_node_name: str = ""
    host_ip: str = field(default="", metadata={"json": "hostIP"})
    pod_ip: str = field(default="", metadata={"json": "podIP"})
    start_time: Any = None
    init_container_statuses: list[ContainerStatus] = field(default_factory=list)
    container_statuses: list[ContainerStatus] = field(default_factory=list)
    qos_class: str = ""
    resource_claim_statuses: list[PodResourceClaimStatus] = field(default_factory=list)
    extended_resource_claim_status: Optional[PodExtendedResourceClaimStatus] = None

    def condition(self, ctype: str) -> Optional[PodCondition]:
        return next((c for c in self.conditions if c.type == ctype), None)


@dataclass
class Pod:
    api_version: str = "v1"
    kind: str = "Pod"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: PodSpec = field(default_factory=PodSpec, metadata={"required": True})
    status: PodStatus = field(default_factory=PodStatus)


@dataclass
class NodeSpec:
    unschedulable: bool = False
    taints: list[Taint] = field(default_factory=list)
    pod_cidr: Any = field(default=None, metadata={"json": "podCIDR"})
    pod_cidrs: Any = field(default=None, metadata={"json": "podCIDRs"})
    provider_id: Any = field(default=None, metadata={"json": "providerID"})


@dataclass
class NodeCondition:
    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""
    last_heartbeat_time: Any = None
    last_transition_time: Any = None


@dataclass
class NodeStatus:
    capacity: dict[str, IntOrString] = field(default_factory=dict)
    allocatable: dict[str, IntOrString] = field(default_factory=dict)
    conditions: list[NodeCondition] = field(default_factory=list)
    addresses: Any = None
    node_info: Any = None
    images: Any = None
    phase: Any = None
    daemon_endpoints: Any = None
    volumes_in_use: Any = None
    volumes_attached: Any = None
    config: Any = None
    runtime_handlers: Any = None
    features: Any = None

    def condition(self, ctype: str) -> Optional[NodeCondition]:
        return next((c for c in self.conditions if c.type == ctype), None)


@dataclass
class Node:
    api_version: str = "v1"
    kind: str = "Node"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: NodeSpec = field(default_factory=NodeSpec)
    status: NodeStatus = field(default_factory=NodeStatus)


@dataclass
class Namespace:
    api_version: str = "v1"
    kind: str = "Namespace"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: Any = None
    status: Any = None


@dataclass
class ConfigMap:
    api_version: str = "v1"
    kind: str = "ConfigMap"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    data: dict[str, str] = field(default_factory=dict)
    binary_data: Any = None
    immutable: Any = None
