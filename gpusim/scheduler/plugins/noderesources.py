"""NodeResourcesFit and NodeResourcesBalancedAllocation (plugins/noderesources: fit.go,
least_allocated.go, most_allocated.go, requested_to_capacity_ratio.go, resource_allocation.go,
balanced_allocation.go).

Filter: every requested resource must fit in allocatable − requested; each shortage is one reason
(``Insufficient nvidia.com/gpu``). Since Kubernetes 1.34 (PR kubernetes/kubernetes#131345) a node whose
*allocatable* is below the request is UnschedulableAndUnresolvable (preemption cannot help).
Score (``scoringStrategy``): LeastAllocated (default), MostAllocated or RequestedToCapacityRatio over
the configured ``resources`` (default cpu and memory, weight 1 each). An extended resource such as
``nvidia.com/gpu`` is scored only when listed *and* requested by the pod.

Extended resources backed by DRA (KEP-5004, gate DRAExtendedResource, beta and on in 1.36; fit.go
``shouldDelegateResourceToDRA``): a requested extended resource that a DeviceClass backs (its
``extendedResourceName`` or the implicit ``deviceclass.resource.kubernetes.io/<class>``) is not checked on a node
whose allocatable has none of it: the DynamicResources plugin allocates it as devices. A node whose device plugin
advertises the resource is checked as before. Not modelled: the DRA-backed resources in Score
(``calculateDRAExtendedResourceAllocatableRequest``).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Optional

from ...api.resource_k8s_io_v1 import DeviceClass
from ...api.v1helper import is_dra_extended_resource_name, is_extended_resource_name
from ..dra import extended
from ..framework import MAX_NODE_SCORE, Code, Status

NAME = "NodeResourcesFit"
BALANCED_NAME = "NodeResourcesBalancedAllocation"
EVENTS = {"Pod/Delete", "Node/Add", "Node/UpdateNodeAllocatable"}
DRA_STATE_KEY = "PreFilterNodeResourcesFitDRA"   # the pod's requested extended resources a DeviceClass backs
DEFAULT_RESOURCES = (("cpu", 1), ("memory", 1))
MAX_UTILIZATION = 100
MAX_CUSTOM_PRIORITY_SCORE = 10   # RequestedToCapacityRatio shape scores are 0..10, scaled ×10


def go_div(a: int, b: int) -> int:
    """Go's integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def insufficient_resources(req: dict[str, int], ni, ignored: frozenset = frozenset(),
                           ignored_groups: frozenset = frozenset(),
                           dra_backed: frozenset = frozenset()) -> list[tuple[str, bool]]:
    """fitsRequest: (reason, unresolvable) per shortage, pods first, then cpu, memory, others sorted.
    ``dra_backed``: the extended resources a DeviceClass backs; one the node has no allocatable of is left to
    DRA (shouldDelegateResourceToDRA)."""
    out = []
    alloc, used = ni.allocatable, ni.requested
    if len(ni.pods) + 1 > alloc.get("pods"):
        out.append(("Too many pods", False))
    order = [r for r in ("cpu", "memory", "ephemeral-storage") if r in req] + \
        sorted(r for r in req if r not in ("cpu", "memory", "ephemeral-storage", "pods"))
    for r in order:
        q = req[r]
        if q == 0:
            continue
        if is_extended_resource_name(r) and (r in ignored or r.split("/", 1)[0] in ignored_groups):
            continue
        if r in dra_backed and alloc.get(r) <= 0:
            continue
        if q > alloc.get(r) - used.get(r):
            out.append((f"Insufficient {r}", q > alloc.get(r)))
    return out


def least_allocated(requested: int, capacity: int) -> int:
    """leastRequestedScore: (capacity − requested) × 100 / capacity; 0 when over capacity."""
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def most_allocated(requested: int, capacity: int) -> int:
    """mostRequestedScore: min(requested, capacity) × 100 / capacity."""
    if capacity == 0:
        return 0
    return min(requested, capacity) * MAX_NODE_SCORE // capacity


def broken_linear(shape: list[tuple[int, int]]) -> Callable[[int], int]:
    """buildBrokenLinearFunction over (utilization, score×10) points."""
    def f(p: int) -> int:
        for i, (u, s) in enumerate(shape):
            if p <= u:
                if i == 0:
                    return shape[0][1]
                pu, ps = shape[i - 1]
                return ps + go_div((s - ps) * (p - pu), u - pu)
        return shape[-1][1]
    return f


def requested_to_capacity_ratio(shape: list[tuple[int, int]]) -> Callable[[int, int], int]:
    raw = broken_linear([(u, s * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for u, s in shape])

    def score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(requested * MAX_UTILIZATION // capacity)
    return score


class NodeResourcesFit:
    name = NAME
    events = EVENTS

    def __init__(self, args: Optional[dict] = None, version: tuple[int, int] = (1, 36), handle: Any = None):
        args = args or {}
        self.handle = handle
        # fts.EnableDRAExtendedResource; without a handle (no apiserver to list DeviceClasses) nothing is delegated
        self.extended_resources = getattr(handle, "api", None) is not None and extended.enabled(handle)
        if self.extended_resources:   # EventsToRegister under the gate: a DeviceClass may now back a resource
            self.events = EVENTS | {"DeviceClass/Add", "DeviceClass/Update"}
        strategy = args.get("scoringStrategy") or {}
        self.strategy = strategy.get("type") or "LeastAllocated"
        res = strategy.get("resources")
        self.resources = tuple((r["name"], r.get("weight") or 1) for r in res) if res else DEFAULT_RESOURCES
        self.ignored = frozenset(args.get("ignoredResources") or ())
        self.ignored_groups = frozenset(args.get("ignoredResourceGroups") or ())
        self.version = version
        if self.strategy == "MostAllocated":
            self._scorer = most_allocated
        elif self.strategy == "RequestedToCapacityRatio":
            shape = (strategy.get("requestedToCapacityRatio") or {}).get("shape") or []
            self._scorer = requested_to_capacity_ratio([(p.get("utilization", 0), p.get("score", 0)) for p in shape])
        else:
            self._scorer = least_allocated

    def pre_filter(self, state, pi, nodes):
        if self.extended_resources:
            scalar = {r: q for r, q in pi.requests.items() if q and is_dra_extended_resource_name(r)}
            if scalar:
                mapping = extended.device_class_mapping(self.handle.api.list(DeviceClass.RESOURCE))
                backed = frozenset(extended.mapped_requests(scalar, mapping))
                if backed:
                    state[DRA_STATE_KEY] = backed
        return None, Status()

    def filter(self, state, pi, ni) -> Status:
        short = insufficient_resources(pi.requests, ni, self.ignored, self.ignored_groups,
                                       state.get(DRA_STATE_KEY, frozenset()) if state else frozenset())
        if not short:
            return Status()
        unresolvable = self.version >= (1, 34) and any(u for _, u in short)
        return Status(Code.UnschedulableAndUnresolvable if unresolvable else Code.Unschedulable, [r for r, _ in short])

    def pre_score(self, state, pi, nodes) -> Status:
        return Status()

    def resource_scores(self, pi, ni) -> list[tuple[str, int, int]]:
        """(resource, score, weight) for each scored resource (resource_allocation.go score)."""
        out = []
        for r, w in self.resources:
            alloc = ni.allocatable.get(r)
            if alloc == 0 or (is_extended_resource_name(r) and pi.requests.get(r, 0) == 0):
                continue
            if r in ("cpu", "memory"):   # non-zero requests for cpu and memory
                requested = ni.non_zero_requested.get(r) + pi.score_non_zero.get(r, 0)
            else:
                requested = ni.requested.get(r) + pi.requests.get(r, 0)
            out.append((r, self._scorer(requested, alloc), w))
        return out

    def score(self, state, pi, ni) -> int:
        parts = self.resource_scores(pi, ni)
        if self.strategy == "RequestedToCapacityRatio":
            parts = [p for p in parts if p[1] > 0]
            weights = sum(w for _, _, w in parts)
            return int(math.floor(sum(s * w for _, s, w in parts) / weights + 0.5)) if weights else 0
        weights = sum(w for _, _, w in parts)
        return sum(s * w for _, s, w in parts) // weights if weights else 0


def balance(fractions: list[float]) -> int:
    """int((1 − std) × 100) over the requested/allocatable fractions."""
    if len(fractions) < 2:
        std = 0.0
    elif len(fractions) == 2:
        std = abs(fractions[0] - fractions[1]) / 2
    else:
        mean = sum(float(f) for f in fractions) / len(fractions)
        std = (sum((float(f) - mean) ** 2 for f in fractions) / len(fractions)) ** 0.5
    return int((1 - std) * MAX_NODE_SCORE)


class BalancedAllocation:
    """Kubernetes 1.36 (PR kubernetes/kubernetes#135573): score = 50 + (50 + balance(with pod) −
    balance(without pod)) / 2, so an unchanged balance scores 75; up to 1.35, balance(with pod)."""

    name = BALANCED_NAME
    events = EVENTS

    def __init__(self, args: Optional[dict] = None, version: tuple[int, int] = (1, 36)):
        res = (args or {}).get("resources")
        self.resources = tuple(r["name"] for r in res) if res else ("cpu", "memory")
        self.version = version

    def pre_score(self, state, pi, nodes) -> Status:
        if all(pi.requests.get(r, 0) == 0 for r in self.resources):
            return Status.new(Code.Skip)
        return Status()

    def score(self, state, pi, ni) -> int:
        before, after = [], []
        for r in self.resources:
            req = pi.requests.get(r, 0)
            if req == 0 and is_extended_resource_name(r):
                continue            # calculateResourceAllocatableRequest: (0, 0) for an unrequested scalar
            alloc = ni.allocatable.get(r)
            if alloc == 0:
                continue
            used = ni.requested.get(r)
            before.append(min(used / alloc, 1.0))
            after.append(min((used + req) / alloc, 1.0))
        if self.version < (1, 36):
            return balance(after)
        return 50 + go_div(50 + balance(after) - balance(before), 2)


def _version(handle: Any) -> tuple[int, int]:
    return getattr(handle, "k8s_version", None) or (1, 36)


def new(args=None, handle=None) -> NodeResourcesFit:
    return NodeResourcesFit(args, _version(handle), handle)


def new_balanced(args=None, handle=None) -> BalancedAllocation:
    return BalancedAllocation(args, _version(handle))
