"""The scheduling framework's types (mirrors k8s.io/kube-scheduler/framework interface.go and
kubernetes pkg/scheduler/framework types.go: Status, Code, CycleState, NodeInfo, FitError).

Extension points, in upstream order: PreEnqueue, QueueSort, PreFilter, Filter, PostFilter,
PreScore, Score, NormalizeScore, Reserve/Unreserve, Permit, PreBind, Bind, PostBind.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType
from typing import Callable, Optional, Protocol, runtime_checkable

from ..api.core_v1 import Node, Pod
from ..api.quantity import parse_quantity
from ..componenthelpers.resource import (containers_request_all, is_pod_level_requests_set, pod_request_units,  # noqa: F401
                                         pod_requests, to_units)   # to_units: framework.Resource units

MAX_NODE_SCORE, MIN_NODE_SCORE = 100, 0
NO_NODE_AVAILABLE_MSG = "0/{} nodes are available"   # framework/types.go NoNodeAvailableMsg
# schedule_one.go ErrNoNodesAvailable
ERR_NO_NODES_AVAILABLE = "no nodes available to schedule pods"
EXTENSION_POINTS = ("PreEnqueue", "QueueSort", "PreFilter", "Filter", "PostFilter", "PreScore", "Score",
                    "Reserve", "Permit", "PreBind", "Bind", "PostBind")


class Code(enum.IntEnum):
    """fwk.Code, with upstream's integer values."""

    Success = 0
    Error = 1
    Unschedulable = 2
    UnschedulableAndUnresolvable = 3
    Wait = 4
    Skip = 5
    Pending = 6


@dataclass
class Status:
    code: Code = Code.Success
    reasons: list[str] = field(default_factory=list)
    plugin: str = ""

    @staticmethod
    def new(code: Code, *reasons: str) -> "Status":
        return Status(code, list(reasons))

    def is_success(self) -> bool:
        return self.code == Code.Success

    def is_rejected(self) -> bool:
        return self.code in (Code.Unschedulable, Code.UnschedulableAndUnresolvable, Code.Pending)

    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, name: str) -> "Status":
        self.plugin = name
        return self


SUCCESS = Status()


class CycleState(dict):
    """Per-cycle scratch space that plugins write in PreFilter/PreScore and read later."""


class Resource:
    """framework.Resource: integer amounts per resource name (milliCPU, bytes, pods, devices)."""

    __slots__ = ("values",)

    def __init__(self, values: Optional[dict[str, int]] = None):
        self.values: dict[str, int] = values if values is not None else {}

    def get(self, name: str) -> int:
        return self.values.get(name, 0)

    def add(self, other: dict[str, int], sign: int = 1) -> None:
        vals = self.values
        for k, v in other.items():
            vals[k] = vals.get(k, 0) + sign * v


# pkg/scheduler/util/pod_resources.go: the non-zero defaults, used for scoring only
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
NON_MISSING_DEFAULTS = {"cpu": Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000), "memory": Fraction(DEFAULT_MEMORY_REQUEST)}


def non_missing_container_requests(requests: dict, pod_level_set: bool) -> dict[str, Fraction]:
    """framework/types.go getNonMissingContainerRequests: both defaults for every container, or, with
    pod-level requests set, only for a resource requested neither by a container nor by the pod."""
    if not pod_level_set:
        return dict(NON_MISSING_DEFAULTS)
    return {k: v for k, v in NON_MISSING_DEFAULTS.items() if k not in requests}


def _with_non_zero(requests: dict[str, int], non0: dict[str, Fraction]) -> dict[str, int]:
    out = dict(requests)
    for r in ("cpu", "memory"):
        out[r] = to_units(r, non0.get(r, Fraction(0)))
    return out


class PodInfo:
    """A pod with its effective requests computed once, in integer units: ``requests`` (PodRequests),
    ``non_zero`` (PodInfo.calculateResource's non0CPU/non0Mem, what NodeInfo.NonZeroRequested sums) and
    ``score_non_zero`` (resource_allocation.go calculatePodResourceRequest for the Fit scorers: the
    defaults for every container whose cpu or memory request is absent; an explicit 0 stays 0), as read-only
    mappings shared by every PodInfo of one pod."""

    __slots__ = ("pod", "requests", "non_zero", "score_non_zero")

    def __init__(self, pod: Pod):
        self.pod = pod
        cached = pod.__dict__.get("_pod_info_units")   # a pod's resources do not change after creation
        if cached is None:
            req = pod_requests(pod)
            rq = pod_request_units(pod)
            requests = dict(rq)
            pod_level = is_pod_level_requests_set(pod)
            defaults = non_missing_container_requests(req, pod_level)
            # the defaults change nothing when, without pod-level requests, every container requests both
            skip = not defaults or (not pod_level and containers_request_all(pod, ("cpu", "memory")))
            non0 = req if skip else pod_requests(pod, defaults)
            non_zero = _with_non_zero(requests, non0)
            score = non_zero if not pod_level else _with_non_zero(requests, pod_requests(pod, NON_MISSING_DEFAULTS))
            # read-only views, shared by every PodInfo of the pod (the scheduler keeps one per pod on its node)
            # (one view for equal mappings: the common pod whose containers all request cpu and memory)
            nz = rq if non_zero == requests else MappingProxyType(non_zero)
            sc = nz if score is non_zero or score == non_zero else MappingProxyType(score)
            cached = pod.__dict__["_pod_info_units"] = (rq, nz, sc)
        self.requests, self.non_zero, self.score_non_zero = cached

    @property
    def key(self) -> str:
        return self.pod.metadata.uid


class NodeInfo:
    """framework.NodeInfo: the node, its allocatable, and the pods (bound or assumed) on it."""

    __slots__ = ("node", "name", "pods", "requested", "non_zero_requested", "allocatable", "affinity_pods",
                 "on_change")

    def __init__(self, node: Node, on_change: Optional[Callable[["NodeInfo"], None]] = None):
        self.pods: dict[str, PodInfo] = {}
        self.requested = Resource()
        self.non_zero_requested = Resource()
        self.affinity_pods = 0          # pods with pod (anti-)affinity: HavePodsWithAffinity
        self.on_change = None
        self.set_node(node)
        self.on_change = on_change      # the scheduler cache's incremental-snapshot hook

    def set_node(self, node: Node) -> None:
        self.node = node
        self.name = node.metadata.name
        self.allocatable = Resource({k: to_units(k, parse_quantity(v)) for k, v in node.status.allocatable.items()})
        if self.on_change is not None:
            self.on_change(self)

    def add_pod(self, pi: PodInfo) -> None:
        if pi.key in self.pods:
            return
        self.pods[pi.key] = pi
        self.requested.add(pi.requests)
        self.non_zero_requested.add(pi.non_zero)
        if has_pod_affinity(pi.pod):
            self.affinity_pods += 1
        if self.on_change is not None:
            self.on_change(self)

    def remove_pod(self, uid: str) -> None:
        pi = self.pods.pop(uid, None)
        if pi is not None:
            self.requested.add(pi.requests, -1)
            self.non_zero_requested.add(pi.non_zero, -1)
            if has_pod_affinity(pi.pod):
                self.affinity_pods -= 1
            if self.on_change is not None:
                self.on_change(self)

    def snapshot(self) -> "NodeInfo":
        """NodeInfo.Snapshot(): a detached copy (no cache hook) whose pods can be added or removed
        without touching the scheduler cache."""
        c = NodeInfo.__new__(NodeInfo)
        c.node, c.name, c.allocatable = self.node, self.name, self.allocatable
        c.pods = dict(self.pods)
        c.requested = Resource(dict(self.requested.values))
        c.non_zero_requested = Resource(dict(self.non_zero_requested.values))
        c.affinity_pods = self.affinity_pods
        c.on_change = None
        return c


def has_pod_affinity(pod: Pod) -> bool:
    a = pod.spec.affinity
    return a is not None and bool(a.pod_affinity or a.pod_anti_affinity)


@runtime_checkable
class Plugin(Protocol):
    name: str


class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: Pod) -> Status: ...


class QueueSortPlugin(Plugin, Protocol):
    def less(self, a: "QueuedPodInfo", b: "QueuedPodInfo") -> bool: ...


class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> tuple[Optional[set[str]], Status]: ...


class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status: ...


class PostFilterPlugin(Plugin, Protocol):
    def post_filter(self, state: CycleState, pod: PodInfo, statuses: dict[str, Status]) -> tuple[Optional[str], Status]: ...


class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> Status: ...


class ScorePlugin(Plugin, Protocol):
    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int: ...


class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: PodInfo, node: str) -> Status: ...
    def unreserve(self, state: CycleState, pod: PodInfo, node: str) -> None: ...


class PermitPlugin(Plugin, Protocol):
    def permit(self, state: CycleState, pod: PodInfo, node: str) -> tuple[Status, float]: ...


class BindPlugin(Plugin, Protocol):
    def bind(self, state: CycleState, pod: PodInfo, node: str) -> Status: ...


@dataclass
class QueuedPodInfo:
    """framework.QueuedPodInfo: the pod plus queue bookkeeping."""

    pod_info: PodInfo
    timestamp: float
    initial_attempt_timestamp: Optional[float] = None
    attempts: int = 0
    unschedulable_count: int = 0
    consecutive_errors: int = 0
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    gated: bool = False
    gating_plugin: str = ""
    pre_enqueue_traced: bool = False   # the trace holds this pod's PreEnqueue outcome (see Scheduler._pre_enqueue)
    timestamp_unschedulable: float = 0.0
    seq: int = 0

    @property
    def pod(self) -> Pod:
        return self.pod_info.pod


@dataclass
class Diagnosis:
    node_to_status: dict[str, Status] = field(default_factory=dict)
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""


@dataclass
class FitError:
    """framework.FitError; ``error()`` composes the FailedScheduling message exactly as upstream."""

    pod: Pod
    num_all_nodes: int
    diagnosis: Diagnosis

    def error(self) -> str:
        msg = NO_NODE_AVAILABLE_MSG.format(self.num_all_nodes) + ":"
        d = self.diagnosis
        if d.pre_filter_msg:
            msg += f" {d.pre_filter_msg}."
        else:
            msg += histogram(d.node_to_status)
        if d.post_filter_msg:
            msg += f" {d.post_filter_msg}"
        return msg


def histogram(statuses: dict[str, Status]) -> str:
    """' <count> <reason>, ....' with reasons counted per node and sorted as strings (sort.Strings)."""
    counts: dict[str, int] = {}
    for st in statuses.values():
        for r in st.reasons:
            counts[r] = counts.get(r, 0) + 1
    items = sorted(f"{v} {k}" for k, v in counts.items())
    return f" {', '.join(items)}." if items else ""
