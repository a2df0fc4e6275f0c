"""NodeResourcesFit and NodeResourcesBalancedAllocation (plugins/noderesources: fit.go,
least_allocated.go, resource_allocation.go, balanced_allocation.go).

Filter: every requested resource must fit in allocatable − requested; each shortage is one reason
(``Insufficient nvidia.com/gpu``). Since Kubernetes 1.34 a node whose *allocatable* is below the
request is UnschedulableAndUnresolvable (preemption cannot help). Score: LeastAllocated over
cpu and memory with weight 1 each (GPUs are scored only when listed in scoringStrategy.resources).
"""
from __future__ import annotations

from fractions import Fraction

from ...api.resourcehelper import is_extended_resource_name
from ..framework import MAX_NODE_SCORE, Code, Status

NAME = "NodeResourcesFit"
BALANCED_NAME = "NodeResourcesBalancedAllocation"
EVENTS = {"Pod/Delete", "Node/Add", "Node/UpdateNodeAllocatable"}
DEFAULT_RESOURCES = (("cpu", 1), ("memory", 1))


def insufficient_resources(req: dict[str, Fraction], ni) -> list[tuple[str, bool]]:
    """fitsRequest: (reason, unresolvable) per shortage, pods first, then cpu, memory, others sorted."""
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
        if q > alloc.get(r) - used.get(r):
            out.append((f"Insufficient {r}", q > alloc.get(r)))
    return out


def least_allocated(requested: Fraction, capacity: Fraction) -> int:
    """leastRequestedScore: (capacity − requested) × 100 / capacity, integer."""
    if capacity == 0 or requested > capacity:
        return 0
    return int((capacity - requested) * MAX_NODE_SCORE // capacity)


class NodeResourcesFit:
    name = NAME
    events = EVENTS

    def __init__(self, resources=DEFAULT_RESOURCES):
        self.resources = resources

    def pre_filter(self, state, pi, nodes):
        return None, Status()

    def filter(self, state, pi, ni) -> Status:
        short = insufficient_resources(pi.requests, ni)
        if not short:
            return Status()
        code = Code.UnschedulableAndUnresolvable if any(u for _, u in short) else Code.Unschedulable
        return Status(code, [r for r, _ in short])

    def pre_score(self, state, pi, nodes) -> Status:
        return Status()

    def score(self, state, pi, ni) -> int:
        total, weights = 0, 0
        for r, w in self.resources:
            alloc = ni.allocatable.get(r)
            if alloc == 0 or (is_extended_resource_name(r) and pi.requests.get(r, 0) == 0):
                continue
            requested = ni.non_zero_requested.get(r) + pi.non_zero.get(r, Fraction(0))
            total += least_allocated(requested, alloc) * w
            weights += w
        return total // weights if weights else 0


def balance(fractions: list[Fraction]) -> int:
    """int((1 − std) × 100) over the requested/allocatable fractions."""
    if len(fractions) < 2:
        std = 0.0
    elif len(fractions) == 2:
        std = abs(float(fractions[0]) - float(fractions[1])) / 2
    else:
        mean = sum(float(f) for f in fractions) / len(fractions)
        std = (sum((float(f) - mean) ** 2 for f in fractions) / len(fractions)) ** 0.5
    return int((1 - std) * MAX_NODE_SCORE)


class BalancedAllocation:
    """Kubernetes 1.36 (PR kubernetes/kubernetes#135573): score = 50 + (50 + balance(with pod) −
    balance(without pod)) / 2, so an unchanged balance scores 75."""

    name = BALANCED_NAME
    events = EVENTS

    def pre_score(self, state, pi, nodes) -> Status:
        if all(pi.requests.get(r, 0) == 0 for r in ("cpu", "memory")):
            return Status.new(Code.Skip)
        return Status()

    def score(self, state, pi, ni) -> int:
        before, after = [], []
        for r in ("cpu", "memory"):
            alloc = ni.allocatable.get(r)
            if alloc == 0:
                continue
            used = ni.requested.get(r)
            before.append(min(used / alloc, Fraction(1)))
            after.append(min((used + pi.requests.get(r, Fraction(0))) / alloc, Fraction(1)))
        return 50 + (50 + balance(after) - balance(before)) // 2


def new(args=None, handle=None) -> NodeResourcesFit:
    return NodeResourcesFit()


def new_balanced(args=None, handle=None) -> BalancedAllocation:
    return BalancedAllocation()
