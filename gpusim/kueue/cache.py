"""Kueue's quota cache: ClusterQueues and Cohorts as one tree of resource nodes (mirrors kueue
pkg/cache/scheduler: resource_node.go, cohort.go, clusterqueue.go, fair_sharing.go; pkg/hierarchy).

Picture a family budget: every ClusterQueue (a child) has its own pocket money (``nominalQuota``). What it
does not keep back for itself (``nominal − lendingLimit``, its *guaranteed* quota) goes into the family pot
(the Cohort). A child may spend from the pot up to ``borrowingLimit`` beyond its own quota. Cohorts nest.

Per node and flavor-resource (fr):
- ``subtree[fr]``: a CQ's nominal quota; a Cohort's own nominal + Σ children (subtree − guaranteed).
- ``guaranteed(fr)`` = max(0, subtree − lendingLimit) when a lendingLimit is set, else 0.
- ``usage[fr]``: a CQ's admitted usage; a Cohort's = Σ children max(0, usage − guaranteed) (+ its own none).
- ``available(fr)``: root: subtree − usage; else max(0, guaranteed − usage) + parent's available, the latter
  capped by ``subtree − guaranteed − max(0, usage − guaranteed) + borrowingLimit`` when a borrowingLimit is set.
- ``potential_available(fr)``: the most the node could ever get (same recursion with usage 0).
Usage changes propagate upward incrementally (only the part above guaranteed reaches the parent), so a
scheduling cycle never recomputes the tree.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

from . import resources
from .resources import FlavorResource


@dataclass(eq=False)
class Node:
    """A ClusterQueue or a Cohort in the tree."""

    name: str
    is_cq: bool
    parent: Optional["Node"] = None
    children: list["Node"] = field(default_factory=list)
    nominal: dict[FlavorResource, int] = field(default_factory=dict)
    borrowing_limit: dict[FlavorResource, Optional[int]] = field(default_factory=dict)
    lending_limit: dict[FlavorResource, Optional[int]] = field(default_factory=dict)
    subtree: dict[FlavorResource, int] = field(default_factory=dict)
    usage: dict[FlavorResource, int] = field(default_factory=dict)
    weight: float = 1.0
    _potential: dict[FlavorResource, int] = field(default_factory=dict, repr=False)
    _root: Optional["Node"] = field(default=None, repr=False)
    version: int = 0          # bumped on the root whenever usage anywhere in the tree changes

    def guaranteed(self, fr: FlavorResource) -> int:
        ll = self.lending_limit.get(fr)
        return max(0, self.subtree.get(fr, 0) - ll) if ll is not None else 0

    def available(self, fr: FlavorResource) -> int:
        u = self.usage.get(fr, 0)
        if self.parent is None:
            return self.subtree.get(fr, 0) - u
        g = self.guaranteed(fr)
        parent_available = self.parent.available(fr)
        bl = self.borrowing_limit.get(fr)
        if bl is not None:
            stored = self.subtree.get(fr, 0) - g
            used = max(0, u - g)
            parent_available = min(stored - used + bl, parent_available)
        return max(0, g - u) + parent_available

    def potential_available(self, fr: FlavorResource) -> int:
        """Depends on quotas only, which do not change during a run: computed once per fr."""
        cached = self._potential.get(fr)
        if cached is None:
            cached = self._potential[fr] = self._potential_available(fr)
        return cached

    def _potential_available(self, fr: FlavorResource) -> int:
        if self.parent is None:
            return self.subtree.get(fr, 0)
        g = self.guaranteed(fr)
        parent_potential = self.parent.potential_available(fr)
        bl = self.borrowing_limit.get(fr)
        if bl is not None:
            parent_potential = min(self.subtree.get(fr, 0) - g + bl, parent_potential)
        return g + parent_potential

    def add_usage(self, fr: FlavorResource, delta: int) -> None:
        self.root().version += 1
        node: Optional[Node] = self
        while node is not None and delta:
            g = node.guaranteed(fr)
            old = node.usage.get(fr, 0)
            new = old + delta
            node.usage[fr] = new
            delta = max(0, new - g) - max(0, old - g)
            node = node.parent

    def borrowing_with(self, fr: FlavorResource, val: int) -> bool:
        """Using ``val`` more of fr would go above the node's own quota (BorrowingWith)."""
        return self.usage.get(fr, 0) + val > self.subtree.get(fr, 0)

    def local_available(self, fr: FlavorResource) -> int:
        """The unused part of the node's guaranteed quota (resource_node.go LocalAvailable)."""
        return max(0, self.guaranteed(fr) - self.usage.get(fr, 0))

    def height(self) -> int:
        """Distance to the furthest leaf of a Cohort (classical/hierarchical_preemption.go getNodeHeight): 1
        for a Cohort of ClusterQueues, one more per level of child Cohorts."""
        h = min(len(self.children), 1)
        for c in self.children:
            if not c.is_cq:
                h = max(h, c.height() + 1)
        return h

    def height_of_lowest_subtree_that_fits(self, fr: FlavorResource, val: int) -> tuple[int, bool]:
        """(height, may reclaim in hierarchy) of the lowest subtree that fits ``val`` more of fr (classical
        FindHeightOfLowestSubtreeThatFits): 0 when the ClusterQueue's own quota suffices; the second value says
        whether that subtree is smaller than the whole tree."""
        if not self.borrowing_with(fr, val) or self.parent is None:
            return 0, self.parent is not None
        remaining = val - self.local_available(fr)
        node = self.parent
        while node is not None:
            if not node.borrowing_with(fr, remaining):
                return node.height(), node.parent is not None
            remaining -= node.local_available(fr)
            node = node.parent
        return self.root().height(), False

    def is_borrowing(self, fr: FlavorResource) -> bool:
        return self.usage.get(fr, 0) > self.subtree.get(fr, 0)

    def root(self) -> "Node":
        if self._root is None:
            node = self
            while node.parent is not None:
                node = node.parent
            self._root = node
        return self._root

    def path(self) -> str:
        """``/<root cohort>/.../<name>`` (UNVERIFIED: the exact preemptor/preemptee path format)."""
        parts, node = [], self
        while node is not None:
            parts.append(node.name)
            node = node.parent
        return "/" + "/".join(reversed(parts))

    # --- fair sharing (fair_sharing.go) ---------------------------------------------------------------------
    def dominant_resource_share(self, extra: Optional[dict[FlavorResource, int]] = None) -> tuple[float, str]:
        """DRS: max over resources of borrowed·1000/lendable, borrowed = Σ_flavors max(0, usage+extra−subtree),
        lendable = Σ_flavors potential available in the parent. Returns (share, resource); 0 when not borrowing
        or at the root."""
        if self.parent is None:
            return 0.0, ""
        borrowed: dict[str, int] = {}
        frs = set(self.subtree) | set(extra or ())
        for fr in frs:
            b = self.usage.get(fr, 0) + (extra or {}).get(fr, 0) - self.subtree.get(fr, 0)
            if b > 0:
                borrowed[fr[1]] = borrowed.get(fr[1], 0) + b
        if not borrowed:
            return 0.0, ""
        lendable: dict[str, int] = {}
        for fr in self.parent.subtree:
            lendable[fr[1]] = lendable.get(fr[1], 0) + self.parent.potential_available(fr)
        best, best_r = 0.0, ""
        for r in sorted(borrowed):
            ratio = borrowed[r] * 1000 / lendable[r] if lendable.get(r) else math.inf
            if ratio > best:
                best, best_r = ratio, r
        return best, best_r

    def weighted_share(self, extra: Optional[dict[FlavorResource, int]] = None) -> float:
        drs, _ = self.dominant_resource_share(extra)
        if drs == 0:
            return 0.0
        return math.inf if self.weight == 0 else drs / self.weight


def quotas_from(node: Node, groups: list[Any]) -> None:
    """Fill a node's nominal/borrowing/lending limits from ``spec.resourceGroups``."""
    for g in groups:
        for fq in g.flavors:
            for rq in fq.resources:
                fr = (fq.name, rq.name)
                node.nominal[fr] = resources.value(rq.name, rq.nominal_quota)
                node.borrowing_limit[fr] = (None if rq.borrowing_limit is None
                                            else resources.value(rq.name, rq.borrowing_limit))
                node.lending_limit[fr] = (None if rq.lending_limit is None
                                          else resources.value(rq.name, rq.lending_limit))


def compute_subtree(node: Node) -> None:
    """Bottom-up subtree quota (resource_node.go updateCohortTreeResources)."""
    for child in node.children:
        compute_subtree(child)
    node.subtree = dict(node.nominal)
    if node.is_cq:
        return
    for child in node.children:
        for fr, q in child.subtree.items():
            node.subtree[fr] = node.subtree.get(fr, 0) + q - child.guaranteed(fr)
