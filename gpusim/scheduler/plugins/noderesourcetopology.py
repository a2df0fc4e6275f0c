"""scheduler-plugins' NodeResourceTopologyMatch (mirrors kubernetes-sigs/scheduler-plugins v0.35
``pkg/noderesourcetopology``: ``plugin.go``, ``filter.go``, ``score.go``, ``least_allocated.go``,
``most_allocated.go``, ``balanced_allocation.go``, ``least_numa.go``, ``numaresources.go``,
``pluginhelpers.go``, ``nodeconfig/topologymanager.go``, ``resourcerequests/exclusive.go``, the
``cache`` passthrough and discardreserved stores; ``apis/config/v1`` args and defaults,
``apis/config/validation`` ValidateNodeResourceTopologyMatchArgs).

The plugin runs a simplified kubelet Topology Manager in the scheduler, from the per-NUMA ``available``
amounts a node publishes in its ``topology.node.k8s.io/v1alpha2`` NodeResourceTopology (read from the
apiserver by node name). A pod the kubelet would reject with TopologyAffinityError stays Pending with a
FailedScheduling event instead.

Opt-in: registered in the in-tree registry, not in DEFAULT_PLUGINS; a KubeSchedulerConfiguration enables
it (``multiPoint.enabled: [{name: NodeResourceTopologyMatch}]``, as upstream's
manifests/noderesourcetopology/scheduler-configmap.yaml enables filter and score).

- Filter (only when the node's Topology Manager policy is ``single-numa-node``; pass otherwise, and when
  the node has no NRT): BestEffort pods requesting only native resources pass. Per requested resource
  (non-zero), a NUMA zone fits if its ``available`` covers the request — for non-Guaranteed pods cpu,
  memory and hugepages fit anywhere; a resource not published per zone is fine if it is a device or
  extended resource or ephemeral-storage (host level) and must exist in node allocatable. Scope
  ``container``: each init container alone (``cannot align init container``), then app containers in
  order, each taking its resources from the lowest fitting NUMA id (``cannot align container``). Scope
  ``pod``: the pod's effective request in one zone (``cannot align pod``). Stale data (discardReserved
  cache with a reservation): ``invalid node topology data``. All Unschedulable.
- Score: non-Guaranteed pods score 100 everywhere; no NRT → 0. ``LeastNUMANodes`` works with any
  policy: 100 − k·⌊100/maxNUMANodes⌋ for the fewest k NUMA zones that fit, plus half a unit when they are
  the closest such set. The other strategies score only single-numa-node nodes: per zone
  ``LeastAllocated`` (avail − req)·100/avail, ``MostAllocated`` req·100/avail, ``BalancedAllocation``
  (1 − sample variance of req/avail)·100; the node gets the smallest non-zero zone score (pod scope) or
  the mean over containers (container scope). Weights come from ``scoringStrategy.resources`` (default
  cpu and memory 1; unlisted requested resources weigh 1).

Requests are a container's requests after the API server's defaulting (missing requests = limits).
Maps are walked in sorted order (upstream ranges over Go maps).
"""
from __future__ import annotations

import itertools
import math
import struct
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Optional

from ...api.errors import FieldError
from ...api.kubescheduler_config_v1 import NodeResourceTopologyMatchArgs, NodeResourceTopologyScoringStrategy, ResourceSpec
from ...api.quantity import parse_quantity
from ...api.schema import decode
from ...api.topology_node_k8s_io_v1alpha2 import (ATTRIBUTE_MAX_NUMA_NODES, ATTRIBUTE_POLICY, ATTRIBUTE_SCOPE,
                                                  BEST_EFFORT_CONTAINER_LEVEL, BEST_EFFORT_POD_LEVEL, KIND,
                                                  RESTRICTED_CONTAINER_LEVEL, RESTRICTED_POD_LEVEL,
                                                  SINGLE_NUMA_NODE_CONTAINER_LEVEL, SINGLE_NUMA_NODE_POD_LEVEL,
                                                  ZONE_TYPE_NODE, NodeResourceTopology, name_to_id)
from ...api.v1helper import is_native_resource
from ...componenthelpers.qos import BEST_EFFORT, GUARANTEED, get_pod_qos
from ...componenthelpers.resource import container_requests, pod_requests
from ..framework import MAX_NODE_SCORE, MIN_NODE_SCORE, Code, Status

NAME = "NodeResourceTopologyMatch"
MSG_CANNOT_ALIGN_CONTAINER = "cannot align container"
MSG_CANNOT_ALIGN_INIT_CONTAINER = "cannot align init container"
MSG_CANNOT_ALIGN_POD = "cannot align pod"
MSG_INVALID_TOPOLOGY_DATA = "invalid node topology data"
MSG_INCONSISTENT_ACCOUNTING = "inconsistent resource accounting"

HIGHEST_NUMA_ID = 8            # filter.go highestNUMAID
MAX_NUMA_ID = 64               # pluginhelpers.go maxNUMAId
MAX_DISTANCE_VALUE = 255       # least_numa.go: ACPI SLIT "unknown"
DEFAULT_WEIGHT = 1
DEFAULT_MAX_NUMA_NODES = 8     # nodeconfig.DefaultMaxNUMANodes
LIMIT_NUMA_NODES = 1024        # nodeconfig.LimitNUMANodes

MOST_ALLOCATED, BALANCED_ALLOCATION = "MostAllocated", "BalancedAllocation"
LEAST_ALLOCATED, LEAST_NUMA_NODES = "LeastAllocated", "LeastNUMANodes"
SCORING_STRATEGIES = (MOST_ALLOCATED, BALANCED_ALLOCATION, LEAST_ALLOCATED, LEAST_NUMA_NODES)
PREEMPTION_MODES = ("Disabled", "Enabled")
DEFAULT_RESOURCES = (("cpu", 1), ("memory", 1))    # apis/config/v1 defaultResourceSpec
DEFAULT_CACHE = {"foreignPodsDetect": "All", "resyncMethod": "Autodetect", "informerMode": "Dedicated"}
EVENTS = {"Pod/Delete", "Node/Add", "Node/UpdateNodeAllocatable", f"{KIND}/Add", f"{KIND}/Update"}

# kubeletconfig names
POLICY_NONE, POLICY_BEST_EFFORT = "none", "best-effort"
POLICY_RESTRICTED, POLICY_SINGLE_NUMA_NODE = "restricted", "single-numa-node"
SCOPE_CONTAINER, SCOPE_POD = "container", "pod"

Resources = dict[str, Fraction]


# --- node configuration (nodeconfig/topologymanager.go) -----------------------------------------------
@dataclass(frozen=True)
class TopologyManagerConfig:
    policy: str = POLICY_NONE
    scope: str = SCOPE_CONTAINER
    max_numa_nodes: int = DEFAULT_MAX_NUMA_NODES


_LEGACY_POLICIES = {
    SINGLE_NUMA_NODE_POD_LEVEL: (POLICY_SINGLE_NUMA_NODE, SCOPE_POD),
    SINGLE_NUMA_NODE_CONTAINER_LEVEL: (POLICY_SINGLE_NUMA_NODE, SCOPE_CONTAINER),
    BEST_EFFORT_POD_LEVEL: (POLICY_BEST_EFFORT, SCOPE_POD),
    BEST_EFFORT_CONTAINER_LEVEL: (POLICY_BEST_EFFORT, SCOPE_CONTAINER),
    RESTRICTED_POD_LEVEL: (POLICY_RESTRICTED, SCOPE_POD),
    RESTRICTED_CONTAINER_LEVEL: (POLICY_RESTRICTED, SCOPE_CONTAINER),
}


def topology_manager_from_nrt(nrt: NodeResourceTopology) -> TopologyManagerConfig:
    """TopologyManagerFromNodeResourceTopology: defaults (none, container, 8), then the deprecated first
    ``topologyPolicies`` entry, then the ``attributes`` (which win). Invalid values are ignored."""
    policy, scope, max_nodes = POLICY_NONE, SCOPE_CONTAINER, DEFAULT_MAX_NUMA_NODES
    if nrt.topology_policies and nrt.topology_policies[0] in _LEGACY_POLICIES:
        policy, scope = _LEGACY_POLICIES[nrt.topology_policies[0]]
    for a in nrt.attributes:
        if a.name == ATTRIBUTE_SCOPE and a.value in (SCOPE_CONTAINER, SCOPE_POD):
            scope = a.value
        elif a.name == ATTRIBUTE_POLICY and a.value in (POLICY_NONE, POLICY_BEST_EFFORT, POLICY_RESTRICTED,
                                                          POLICY_SINGLE_NUMA_NODE):
            policy = a.value
        elif a.name == ATTRIBUTE_MAX_NUMA_NODES:
            try:
                v = int(a.value, 10)
            except ValueError:
                continue
            if v > 1:                                   # IsValidMaxNUMANodes
                max_nodes = min(v, LIMIT_NUMA_NODES)    # clampMaxNUMANodes
    return TopologyManagerConfig(policy, scope, max_nodes)


# --- NUMA nodes (numaresources.go, pluginhelpers.go) --------------------------------------------------
@dataclass
class NUMANode:
    numa_id: int
    resources: Resources
    costs: dict[int, int] = field(default_factory=dict)

    def copy(self) -> "NUMANode":
        return NUMANode(self.numa_id, dict(self.resources), dict(self.costs))


def _numa_id(name: str) -> Optional[int]:
    try:
        n = name_to_id(name)
    except ValueError:
        return None
    return n if n < MAX_NUMA_ID else None     # upstream skips > 64 and would panic on 64 (array of 64)


def create_numa_node_list(zones: list) -> list[NUMANode]:
    """createNUMANodeList: zones of type Node named node-<N> (others ignored), their ``available``
    amounts and costs, in zone order."""
    nodes = []
    for zone in zones:
        if zone.type != ZONE_TYPE_NODE:
            continue
        numa = _numa_id(zone.name)
        if numa is None:
            continue
        resources = {r.name: parse_quantity(r.available) for r in zone.resources}
        costs = {}
        for c in zone.costs:
            cid = _numa_id(c.name)
            if cid is not None:
                costs[cid] = int(c.value)
        nodes.append(NUMANode(numa, resources, costs))
    return nodes


def is_hugepages(resource: str) -> bool:
    return resource.startswith("hugepages-")


def is_host_level_resource(resource: str) -> bool:
    """isHostLevelResource: may not be bound to NUMA nodes (storage, devices, extended resources)."""
    return resource in ("ephemeral-storage", "storage") or not is_native_resource(resource)


def is_numa_affine_resource(resource: str) -> bool:
    """isNUMAAffineResource: cpu, memory, hugepages must expose NUMA affinity."""
    return resource in ("cpu", "memory") or is_hugepages(resource)


def is_resource_set_suitable(qos: str, resource: str, quantity: Fraction, numa_quantity: Fraction) -> bool:
    """isResourceSetSuitable: non-Guaranteed cpu/memory/hugepages fit any NUMA node."""
    if qos != GUARANTEED and is_numa_affine_resource(resource):
        return True
    return numa_quantity >= quantity


def include_non_native(pod: Any) -> bool:
    """resourcerequests.IncludeNonNative: any container requests a non-native resource."""
    return any(not is_native_resource(r) for c in list(pod.spec.init_containers) + list(pod.spec.containers)
               for r in container_requests(c))


# Node allocatable always carries these (util.ResourceList of framework.Resource), even when 0.
_ALWAYS_ALLOCATABLE = frozenset({"cpu", "memory", "pods", "ephemeral-storage"})


def resources_available_in_any_numa_nodes(numa_nodes: list[NUMANode], resources: Resources, qos: str,
                                          node_allocatable: frozenset[str] | set[str]) -> tuple[int, bool]:
    """resourcesAvailableInAnyNUMANodes → (the NUMA id the kubelet would pick: the lowest fitting one,
    fits)."""
    mask = (1 << 64) - 1
    for resource in sorted(resources):
        quantity = resources[resource]
        if quantity == 0:
            continue
        if resource not in node_allocatable and resource not in _ALWAYS_ALLOCATABLE:
            return HIGHEST_NUMA_ID, False
        has_affinity = False
        resource_mask = 0
        for node in numa_nodes:
            if resource not in node.resources:
                continue
            has_affinity = True
            if is_resource_set_suitable(qos, resource, quantity, node.resources[resource]):
                resource_mask |= 1 << node.numa_id
        if not has_affinity and is_host_level_resource(resource):
            continue
        mask &= resource_mask
        if mask == 0:
            return HIGHEST_NUMA_ID, False
    bits = [i for i in range(64) if mask & (1 << i)]
    return bits[0], True


def subtract_resources_from_numa_node_list(nodes: list[NUMANode], numa_id: int, qos: str,
                                           container_res: Resources) -> None:
    """subtractResourcesFromNUMANodeList (in place); raises ValueError when a request exceeds the zone."""
    for node in nodes:
        if node.numa_id != numa_id:
            continue
        for name in sorted(container_res):
            qty = container_res[name]
            if qos != GUARANTEED and is_numa_affine_resource(name):
                continue
            if qty == 0 or name not in node.resources:
                continue
            left = node.resources[name] - qty
            if left < 0:
                raise ValueError(f'resource "{name}" request {qty} exceeds NUMA {numa_id} availability '
                                 f"{node.resources[name]}")
            node.resources[name] = left


def _requests(container: Any) -> Resources:
    return dict(container_requests(container))


def single_numa_container_level_handler(pod: Any, zones: list, node_allocatable: frozenset[str] | set[str]) -> Status:
    """singleNUMAContainerLevelHandler."""
    nodes = create_numa_node_list(zones)
    qos = get_pod_qos(pod)
    for c in pod.spec.init_containers:
        _, ok = resources_available_in_any_numa_nodes(nodes, _requests(c), qos, node_allocatable)
        if not ok:
            return Status.new(Code.Unschedulable, MSG_CANNOT_ALIGN_INIT_CONTAINER)
    for c in pod.spec.containers:
        req = _requests(c)
        numa, ok = resources_available_in_any_numa_nodes(nodes, req, qos, node_allocatable)
        if not ok:
            return Status.new(Code.Unschedulable, MSG_CANNOT_ALIGN_CONTAINER)
        try:
            subtract_resources_from_numa_node_list(nodes, numa, qos, req)
        except ValueError as e:
            return Status.new(Code.Error, MSG_INCONSISTENT_ACCOUNTING, str(e))
    return Status()


def single_numa_pod_level_handler(pod: Any, zones: list, node_allocatable: frozenset[str] | set[str]) -> Status:
    """singleNUMAPodLevelHandler: the pod's effective request (GetPodEffectiveRequest) in one zone."""
    _, ok = resources_available_in_any_numa_nodes(create_numa_node_list(zones), dict(pod_requests(pod)),
                                                  get_pod_qos(pod), node_allocatable)
    return Status() if ok else Status.new(Code.Unschedulable, MSG_CANNOT_ALIGN_POD)


def filter_handler(conf: TopologyManagerConfig) -> Optional[Callable[..., Status]]:
    """filterHandlerFromTopologyManager: only single-numa-node is filtered."""
    if conf.policy != POLICY_SINGLE_NUMA_NODE:
        return None
    return single_numa_pod_level_handler if conf.scope == SCOPE_POD else single_numa_container_level_handler


def fits(pod: Any, nrt: Optional[NodeResourceTopology], node_allocatable: frozenset[str] | set[str]) -> Status:
    """The Filter decision for one node given its NRT (None: no data → pass)."""
    if get_pod_qos(pod) == BEST_EFFORT and not include_non_native(pod):
        return Status()
    if nrt is None:
        return Status()
    handler = filter_handler(topology_manager_from_nrt(nrt))
    return Status() if handler is None else handler(pod, nrt.zones, node_allocatable)


# --- score strategies (least_allocated.go, most_allocated.go, balanced_allocation.go) -----------------
def _value(q: Fraction) -> int:
    """resource.Quantity.Value(): rounds up to an integer."""
    return math.ceil(q)


Weights = dict[str, int]


def _weight(weights: Weights, resource: str) -> int:
    w = weights.get(resource)
    return DEFAULT_WEIGHT if w is None or w < 1 else w


def most_allocated_score(requested: Fraction, capacity: Fraction) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return _value(requested) * MAX_NODE_SCORE // _value(capacity)


def least_allocated_score(requested: Fraction, capacity: Fraction) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return (_value(capacity) - _value(requested)) * MAX_NODE_SCORE // _value(capacity)


def _weighted(scorer: Callable[[Fraction, Fraction], int]) -> Callable[[Resources, Resources, Weights], int]:
    def strategy(requested: Resources, allocatable: Resources, weights: Weights) -> int:
        score = weight_sum = 0
        for r in sorted(requested):
            w = _weight(weights, r)
            score += scorer(requested[r], allocatable.get(r, Fraction(0))) * w
            weight_sum += w
        return score // weight_sum if weight_sum else 0
    return strategy


most_allocated_strategy = _weighted(most_allocated_score)
least_allocated_strategy = _weighted(least_allocated_score)


def fraction_of_capacity(requested: Fraction, capacity: Fraction) -> float:
    if _value(capacity) == 0:
        return 1.0
    return _value(requested) / _value(capacity)


def sample_variance(x: list[float]) -> float:
    """gonum stat.Variance (unweighted): the unbiased sample variance, with its compensation term."""
    n = len(x)
    if n < 2:
        return 0.0      # gonum returns NaN; Guaranteed pods always request cpu and memory, so n ≥ 2
    mean = sum(x) / n
    d = [v - mean for v in x]
    return (sum(v * v for v in d) - sum(d) ** 2 / n) / (n - 1)


def balanced_allocation_strategy(requested: Resources, allocatable: Resources, weights: Weights) -> int:
    fractions = []
    for r in sorted(requested):
        f = fraction_of_capacity(requested[r], allocatable.get(r, Fraction(0)))
        if f > 1:
            return 0
        fractions.append(f)
    return int((1 - sample_variance(fractions)) * MAX_NODE_SCORE)


STRATEGY_FUNCTIONS: dict[str, Callable[[Resources, Resources, Weights], int]] = {
    MOST_ALLOCATED: most_allocated_strategy, LEAST_ALLOCATED: least_allocated_strategy,
    BALANCED_ALLOCATION: balanced_allocation_strategy}


def score_for_each_numa_node(requested: Resources, numa_list: list[NUMANode],
                             strategy: Callable[[Resources, Resources, Weights], int], weights: Weights) -> int:
    """scoreForEachNUMANode: the smallest non-zero zone score (a later 0 does not replace it)."""
    min_score = 0
    for numa in numa_list:
        s = strategy(requested, numa.resources, weights)
        if min_score == 0 or (s != 0 and s < min_score):
            min_score = s
    return min_score


def pod_scope_score(pod: Any, zones: list, strategy, weights: Weights) -> int:
    return score_for_each_numa_node(dict(pod_requests(pod)), create_numa_node_list(zones), strategy, weights)


def container_scope_score(pod: Any, zones: list, strategy, weights: Weights) -> int:
    """containerScopeScore: int(mean) of the per-container scores, init containers first."""
    containers = list(pod.spec.init_containers) + list(pod.spec.containers)
    nodes = create_numa_node_list(zones)
    scores = [float(score_for_each_numa_node(_requests(c), nodes, strategy, weights)) for c in containers]
    return int(sum(scores) / len(scores)) if scores else 0


# --- LeastNUMANodes (least_numa.go) -------------------------------------------------------------------
def only_non_numa_resources(numa_nodes: list[NUMANode], resources: Resources) -> bool:
    return not any(r in n.resources for r in resources for n in numa_nodes)


def nodes_avg_distance(numa_nodes: list[NUMANode], nodes: tuple[int, ...]) -> float:
    """nodesAvgDistance over list positions; a missing cost counts as 255."""
    if not nodes:
        return float(MAX_DISTANCE_VALUE)
    total = sum(numa_nodes[a].costs.get(numa_nodes[b].numa_id, MAX_DISTANCE_VALUE) for a in nodes for b in nodes)
    return total / (len(nodes) * len(nodes))


def _f32(x: float) -> float:
    """float32 rounding, as upstream keeps distances in float32."""
    return struct.unpack("f", struct.pack("f", x))[0]


def check_resources_fit(qos: str, resources: Resources, combined: Resources) -> bool:
    return all(q == 0 or is_resource_set_suitable(qos, r, q, combined.get(r, Fraction(0)))
               for r, q in sorted(resources.items()))


def is_valid_combine_resources(numa_nodes: list[NUMANode], resources: Resources, combination: tuple[int, ...]) -> bool:
    """isValidCombineResources: every NUMA node of the combination publishes every requested resource."""
    return all(r in numa_nodes[i].resources for i in combination for r in resources)


def combine_resources(numa_nodes: list[NUMANode], combination: tuple[int, ...]) -> Resources:
    out: Resources = {}
    for i in combination:
        for r, q in numa_nodes[i].resources.items():
            out[r] = out.get(r, Fraction(0)) + q
    return out


def find_suitable_combination(qos: str, numa_nodes: list[NUMANode], resources: Resources,
                              combinations: list[tuple[int, ...]]) -> tuple[Optional[tuple[int, ...]], bool]:
    """findSuitableCombination: a fitting combination with the minimal average distance among all
    combinations of this size (True), else the closest fitting one (False), else None."""
    min_avg = min((_f32(nodes_avg_distance(numa_nodes, c)) for c in combinations), default=float(MAX_DISTANCE_VALUE))
    min_avg = min(min_avg, float(MAX_DISTANCE_VALUE))
    best: Optional[tuple[int, ...]] = None
    best_distance = 256.0
    for c in combinations:
        if not is_valid_combine_resources(numa_nodes, resources, c):
            continue
        if not check_resources_fit(qos, resources, combine_resources(numa_nodes, c)):
            continue
        d = _f32(nodes_avg_distance(numa_nodes, c))
        if d == min_avg:
            return c, True
        if d < best_distance:
            best_distance, best = d, c
    return best, False


def numa_nodes_required(qos: str, numa_nodes: list[NUMANode], resources: Resources) -> tuple[Optional[list[int]], bool]:
    """numaNodesRequired → (the NUMA ids of the smallest fitting set, whether it is the closest)."""
    for size in range(1, len(numa_nodes) + 1):
        combinations = list(itertools.combinations(range(len(numa_nodes)), size))   # gonum combin.Combinations order
        c, closest = find_suitable_combination(qos, numa_nodes, resources, combinations)
        if c is not None:
            return sorted(numa_nodes[i].numa_id for i in c), closest
    return None, False


def subtract_from_numas(resources: Resources, numa_nodes: list[NUMANode], nodes: list[int]) -> None:
    """subtractFromNUMAs: takes the request from the listed NUMA nodes in turn. Upstream indexes the node
    list by NUMA *id*; kept as is (ids outside the list, a panic upstream, are skipped)."""
    for r in sorted(resources):
        q = resources[r]
        for n in nodes:
            if q == 0:
                break
            if not 0 <= n < len(numa_nodes):
                continue
            avail = numa_nodes[n].resources.get(r)
            if avail is None:
                continue
            if q >= avail:
                q -= avail
                numa_nodes[n].resources[r] = Fraction(0)
            else:
                numa_nodes[n].resources[r] = avail - q
                q = Fraction(0)


def normalize_least_numa_score(numa_nodes_count: int, is_min_avg_distance: bool, max_numa_nodes: int) -> int:
    """normalizeScore: 100 − count·⌊100/maxNUMANodes⌋, plus half a unit for the closest set."""
    unit = MAX_NODE_SCORE // max_numa_nodes
    score = MAX_NODE_SCORE - numa_nodes_count * unit
    return score + unit // 2 if is_min_avg_distance else score


def least_numa_container_scope_score(pod: Any, zones: list, max_numa_nodes: int = DEFAULT_MAX_NUMA_NODES) -> int:
    nodes = create_numa_node_list(zones)
    qos = get_pod_qos(pod)
    max_count, all_closest = 0, True
    for c in list(pod.spec.init_containers) + list(pod.spec.containers):
        req = _requests(c)
        if only_non_numa_resources(nodes, req):
            continue
        numas, closest = numa_nodes_required(qos, nodes, req)
        if numas is None:
            return MIN_NODE_SCORE
        all_closest = all_closest and closest
        max_count = max(max_count, len(numas))
        subtract_from_numas(req, nodes, numas)
    if max_count == 0:
        return MAX_NODE_SCORE
    return normalize_least_numa_score(max_count, all_closest, max_numa_nodes)


def least_numa_pod_scope_score(pod: Any, zones: list, max_numa_nodes: int = DEFAULT_MAX_NUMA_NODES) -> int:
    nodes = create_numa_node_list(zones)
    req = dict(pod_requests(pod))
    if only_non_numa_resources(nodes, req):
        return MAX_NODE_SCORE
    numas, closest = numa_nodes_required(get_pod_qos(pod), nodes, req)
    if numas is None:
        return MIN_NODE_SCORE
    return normalize_least_numa_score(len(numas), closest, max_numa_nodes)


def score(pod: Any, nrt: Optional[NodeResourceTopology], strategy_type: str, weights: Weights) -> int:
    """The Score of one node given its NRT (None → 0)."""
    if get_pod_qos(pod) != GUARANTEED:
        return MAX_NODE_SCORE
    if nrt is None:
        return 0
    conf = topology_manager_from_nrt(nrt)
    if strategy_type == LEAST_NUMA_NODES:
        fn = least_numa_pod_scope_score if conf.scope == SCOPE_POD else least_numa_container_scope_score
        return fn(pod, nrt.zones, conf.max_numa_nodes)
    if conf.policy != POLICY_SINGLE_NUMA_NODE:
        return 0
    fn2 = pod_scope_score if conf.scope == SCOPE_POD else container_scope_score
    return fn2(pod, nrt.zones, STRATEGY_FUNCTIONS[strategy_type], weights)


# --- args (apis/config/v1 defaults.go, apis/config/validation) ---------------------------------------
@dataclass(frozen=True)
class Args:
    """NodeResourceTopologyMatchArgs after SetDefaults_NodeResourceTopologyMatchArgs."""

    scoring_type: str = LEAST_ALLOCATED
    resources: tuple[tuple[str, int], ...] = DEFAULT_RESOURCES
    cache_resync_period_seconds: int = 0
    discard_reserved_nodes: bool = False
    cache: tuple[tuple[str, str], ...] = tuple(sorted(DEFAULT_CACHE.items()))
    preemption_mode: str = "Disabled"


def validate_args(a: NodeResourceTopologyMatchArgs, path: str = "") -> None:
    """ValidateNodeResourceTopologyMatchArgs (scoringStrategy.type, preemptionMode), plus gpusim's own
    refusal of the OverReserve cache (``cacheResyncPeriodSeconds > 0`` without ``discardReservedNodes``),
    which gpusim does not model."""
    p = f"{path}." if path else ""
    errs = []
    strategy = a.scoring_strategy or NodeResourceTopologyScoringStrategy(LEAST_ALLOCATED)
    if strategy.type not in SCORING_STRATEGIES:
        errs.append((f"{p}scoringStrategy.type", f'Invalid value: "{strategy.type}": invalid ScoringStrategyType'))
    if a.preemption_mode is not None and a.preemption_mode not in PREEMPTION_MODES:
        errs.append((f"{p}preemptionMode", f'Invalid value: "{a.preemption_mode}": invalid PreemptionMode'))
    if not a.discard_reserved_nodes and (a.cache_resync_period_seconds or 0) > 0:
        errs.append((f"{p}cacheResyncPeriodSeconds", f"Invalid value: {a.cache_resync_period_seconds}: the "
                     "OverReserve cache (cacheResyncPeriodSeconds > 0) is not modelled by gpusim; leave it unset "
                     "(passthrough) or set discardReservedNodes: true"))
    if len(errs) == 1:
        raise FieldError(*errs[0])
    if errs:   # field.ErrorList.ToAggregate
        raise FieldError("", "[" + ", ".join(f"{q}: {m}" for q, m in errs) + "]")


def defaulted_args(raw: Optional[dict]) -> Args:
    """Strict decode, validation and SetDefaults_NodeResourceTopologyMatchArgs."""
    a = decode(NodeResourceTopologyMatchArgs, raw or {}, "args")
    validate_args(a, "args")
    strategy = a.scoring_strategy
    if strategy is None:
        strategy = NodeResourceTopologyScoringStrategy(LEAST_ALLOCATED, [ResourceSpec(n, w) for n, w in DEFAULT_RESOURCES])
    specs = strategy.resources or [ResourceSpec(n, w) for n, w in DEFAULT_RESOURCES]
    resources = tuple((r.name, r.weight or 1) for r in specs)
    cache = dict(DEFAULT_CACHE)
    if a.cache is not None:
        for key, value in (("foreignPodsDetect", a.cache.foreign_pods_detect), ("resyncMethod", a.cache.resync_method),
                           ("informerMode", a.cache.informer_mode), ("resyncScope", a.cache.resync_scope)):
            if value is not None:
                cache[key] = value
    return Args(strategy.type, resources, a.cache_resync_period_seconds or 0, a.discard_reserved_nodes,
                tuple(sorted(cache.items())), a.preemption_mode or "Disabled")


# --- the NRT stores (cache/passthrough.go, cache/discardreserved.go) ---------------------------------
class Passthrough:
    """GetCachedNRTCopy straight from the apiserver: (the node's NRT or None, fresh=True)."""

    def __init__(self, api: Any):
        self.api = api

    def get_cached_nrt_copy(self, node: str, pod: Any) -> tuple[Optional[NodeResourceTopology], bool]:
        return (self.api.get(KIND, "", node) if self.api is not None else None), True

    def reserve(self, node: str, pod: Any) -> None:
        """ReserveNodeResources: nothing to track."""

    def unreserve(self, node: str, pod: Any) -> None:
        """UnreserveNodeResources: nothing to track."""

    def post_bind(self, node: str, pod: Any) -> None:
        """PostBind: nothing to track."""


class DiscardReserved(Passthrough):
    """A node with a pod reserved (Reserve) but not yet bound (PostBind) reports stale data."""

    def __init__(self, api: Any):
        super().__init__(api)
        self.reservations: dict[str, set[str]] = {}

    def get_cached_nrt_copy(self, node: str, pod: Any) -> tuple[Optional[NodeResourceTopology], bool]:
        if self.reservations.get(node):
            return None, False
        return super().get_cached_nrt_copy(node, pod)

    def reserve(self, node: str, pod: Any) -> None:
        self.reservations.setdefault(node, set()).add(pod.metadata.uid)

    def unreserve(self, node: str, pod: Any) -> None:
        self.reservations.get(node, set()).discard(pod.metadata.uid)

    def post_bind(self, node: str, pod: Any) -> None:
        self.reservations.get(node, set()).discard(pod.metadata.uid)


class NodeResourceTopologyMatch:
    name = NAME
    events = EVENTS

    def __init__(self, args: Optional[dict], handle: Any):
        self.args = defaulted_args(args)
        self.handle = handle
        self.weights: Weights = dict(self.args.resources)
        api = getattr(handle, "api", None)
        self.cache = DiscardReserved(api) if self.args.discard_reserved_nodes else Passthrough(api)

    def filter(self, state, pi, ni) -> Status:
        pod = pi.pod
        if get_pod_qos(pod) == BEST_EFFORT and not include_non_native(pod):
            return Status()
        nrt, fresh = self.cache.get_cached_nrt_copy(ni.name, pod)
        if not fresh:
            return Status.new(Code.Unschedulable, MSG_INVALID_TOPOLOGY_DATA)
        return fits(pod, nrt, frozenset(ni.allocatable.values))

    def score(self, state, pi, ni) -> int:
        pod = pi.pod
        if get_pod_qos(pod) != GUARANTEED:
            return MAX_NODE_SCORE
        nrt, fresh = self.cache.get_cached_nrt_copy(ni.name, pod)
        if not fresh:
            return 0
        return score(pod, nrt, self.args.scoring_type, self.weights)

    def reserve(self, state, pi, node: str) -> Status:
        self.cache.reserve(node, pi.pod)
        return Status()

    def unreserve(self, state, pi, node: str) -> None:
        self.cache.unreserve(node, pi.pod)

    def post_bind(self, state, pi, node: str) -> None:
        self.cache.post_bind(node, pi.pod)


def new(args: Any, handle: Any) -> NodeResourceTopologyMatch:
    return NodeResourceTopologyMatch(args, handle)
