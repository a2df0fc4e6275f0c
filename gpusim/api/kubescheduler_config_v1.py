"""``kubescheduler.config.k8s.io/v1`` KubeSchedulerConfiguration (mirrors
k8s.io/kube-scheduler/config/v1/types.go and types_pluginargs.go).

In a real cluster this is the file given to ``kube-scheduler --config``; in a scenario it is one more
document. It has no ``metadata``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

GROUP_VERSION = "kubescheduler.config.k8s.io/v1"


@dataclass
class PluginRef:
    name: str = field(default="", metadata={"required": True})
    weight: Optional[int] = None


@dataclass
class PluginSet:
    enabled: list[PluginRef] = field(default_factory=list)
    disabled: list[PluginRef] = field(default_factory=list)


@dataclass
class Plugins:
    pre_enqueue: PluginSet = field(default_factory=PluginSet)
    queue_sort: PluginSet = field(default_factory=PluginSet)
    pre_filter: PluginSet = field(default_factory=PluginSet)
    filter: PluginSet = field(default_factory=PluginSet)
    post_filter: PluginSet = field(default_factory=PluginSet)
    pre_score: PluginSet = field(default_factory=PluginSet)
    score: PluginSet = field(default_factory=PluginSet)
    reserve: PluginSet = field(default_factory=PluginSet)
    permit: PluginSet = field(default_factory=PluginSet)
    pre_bind: PluginSet = field(default_factory=PluginSet)
    bind: PluginSet = field(default_factory=PluginSet)
    post_bind: PluginSet = field(default_factory=PluginSet)
    multi_point: PluginSet = field(default_factory=PluginSet)


@dataclass
class PluginConfig:
    name: str = field(default="", metadata={"required": True})
    args: Any = None


@dataclass
class KubeSchedulerProfile:
    scheduler_name: str = "default-scheduler"
    percentage_of_nodes_to_score: Optional[int] = None
    plugins: Optional[Plugins] = None
    plugin_config: list[PluginConfig] = field(default_factory=list)


@dataclass
class KubeSchedulerConfiguration:
    api_version: str = GROUP_VERSION
    kind: str = "KubeSchedulerConfiguration"
    parallelism: int = 16
    percentage_of_nodes_to_score: Optional[int] = None
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10
    profiles: list[KubeSchedulerProfile] = field(default_factory=list)
    extenders: Any = None
    leader_election: Any = None
    client_connection: Any = None
    health_z_bind_address: Any = field(default=None, metadata={"json": "healthzBindAddress"})
    metrics_bind_address: Any = None
    enable_profiling: Any = None
    enable_contention_profiling: Any = None
    delay_cache_until_active: Any = None


# --- plugin args (types_pluginargs.go), decoded strictly to catch typos ----------------------------------
@dataclass
class ResourceSpec:
    name: str = field(default="", metadata={"required": True})
    weight: Optional[int] = None


@dataclass
class UtilizationShapePoint:
    utilization: int = 0
    score: int = 0


@dataclass
class RequestedToCapacityRatioParam:
    shape: list[UtilizationShapePoint] = field(default_factory=list)


@dataclass
class ScoringStrategy:
    type: str = "LeastAllocated"
    resources: Optional[list[ResourceSpec]] = None
    requested_to_capacity_ratio: Optional[RequestedToCapacityRatioParam] = None


@dataclass
class NodeResourcesFitArgs:
    api_version: Optional[str] = None
    kind: Optional[str] = None
    ignored_resources: list[str] = field(default_factory=list)
    ignored_resource_groups: list[str] = field(default_factory=list)
    scoring_strategy: Optional[ScoringStrategy] = None


@dataclass
class NodeResourcesBalancedAllocationArgs:
    api_version: Optional[str] = None
    kind: Optional[str] = None
    resources: Optional[list[ResourceSpec]] = None


@dataclass
class DefaultPreemptionArgs:
    api_version: Optional[str] = None
    kind: Optional[str] = None
    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100


@dataclass
class NodeAffinityArgs:
    api_version: Optional[str] = None
    kind: Optional[str] = None
    added_affinity: Any = None


@dataclass
class InterPodAffinityArgs:
    api_version: Optional[str] = None
    kind: Optional[str] = None
    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False


@dataclass
class PodTopologySpreadArgs:
    api_version: Optional[str] = None
    kind: Optional[str] = None
    default_constraints: Any = None
    defaulting_type: str = "System"


# --- scheduler-plugins args (sigs.k8s.io/scheduler-plugins apis/config/v1/types.go) -----------------------
@dataclass
class CoschedulingArgs:
    """Defaults from apis/config/v1/defaults.go."""

    api_version: Optional[str] = None
    kind: Optional[str] = None
    permit_waiting_time_seconds: int = 60
    pod_group_backoff_seconds: int = 0
    pod_group_reject_percentage: int = 10


@dataclass
class CapacitySchedulingArgs:
    """CapacityScheduling takes no args: only apiVersion/kind are accepted (UNVERIFIED: upstream has
    no args type for it, so any field is an unknown field)."""

    api_version: Optional[str] = None
    kind: Optional[str] = None


@dataclass
class NodeResourceTopologyScoringStrategy:
    """scheduler-plugins apis/config/v1 ScoringStrategy: MostAllocated, BalancedAllocation,
    LeastAllocated or LeastNUMANodes, and per-resource weights. No default for ``type`` once the
    strategy is given (SetDefaults_NodeResourceTopologyMatchArgs defaults only an absent strategy)."""

    type: str = ""
    resources: Optional[list[ResourceSpec]] = None


@dataclass
class NodeResourceTopologyCache:
    """apis/config/v1 NodeResourceTopologyCache (defaults: foreignPodsDetect All, resyncMethod
    Autodetect, informerMode Dedicated)."""

    foreign_pods_detect: Optional[str] = None
    resync_method: Optional[str] = None
    informer_mode: Optional[str] = None
    resync_scope: Optional[str] = None


@dataclass
class NodeResourceTopologyMatchArgs:
    """apis/config/v1 NodeResourceTopologyMatchArgs."""

    api_version: Optional[str] = None
    kind: Optional[str] = None
    scoring_strategy: Optional[NodeResourceTopologyScoringStrategy] = None
    cache_resync_period_seconds: Optional[int] = None
    discard_reserved_nodes: bool = False
    cache: Optional[NodeResourceTopologyCache] = None
    preemption_mode: Optional[str] = None


ARGS_TYPES: dict[str, type] = {
    "NodeResourceTopologyMatch": NodeResourceTopologyMatchArgs,
    "Coscheduling": CoschedulingArgs,
    "CapacityScheduling": CapacitySchedulingArgs,
    "NodeResourcesFit": NodeResourcesFitArgs,
    "NodeResourcesBalancedAllocation": NodeResourcesBalancedAllocationArgs,
    "DefaultPreemption": DefaultPreemptionArgs,
    "NodeAffinity": NodeAffinityArgs,
    "InterPodAffinity": InterPodAffinityArgs,
    "PodTopologySpread": PodTopologySpreadArgs,
}
