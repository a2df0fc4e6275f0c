"""The HyperNode tree as the Volcano scheduler sees it (mirrors volcano-sh/volcano pkg/scheduler/api/hyper_node_info.go
``HyperNodesInfo``: members, parent/children, real nodes, tiers, ``GetLCAHyperNode``, ``GetAncestors``;
pkg/scheduler/util ``FindHyperNodeForNode``; and framework/session.go ``ClusterTopHyperNode``).

Picture network switches: a leaf HyperNode (tier 1, say a ToR) holds nodes, chosen by exact name, name regex or
node labels; a higher tier holds HyperNodes by exact name. The *real nodes* of a HyperNode are its nodes plus
those of every HyperNode below it. Each session adds a virtual ``<cluster-top-hypernode>`` one tier above the
highest (tier 1 when there is no HyperNode) whose children are the HyperNodes without a parent and whose real
nodes are all nodes, so every pair of nodes has a lowest common ancestor. ``status.nodeCount`` is the number of
real nodes (what the HyperNode controller writes).

Where upstream iterates a Go set (several HyperNodes of one tier holding the same node, malformed) gpusim takes
names in sorted order.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from ..api.topology_volcano_sh_v1alpha1 import matches_node

CLUSTER_TOP = "<cluster-top-hypernode>"


@dataclass
class HyperNodeInfo:
    name: str
    tier: int
    tier_name: str = ""
    parent: str = ""
    children: set[str] = field(default_factory=set)
    obj: Any = None


class HyperNodes:
    def __init__(self, hyper_nodes: Iterable[Any], nodes: Iterable[Any]):
        nodes = list(nodes)
        names = {n.metadata.name for n in nodes}
        self.info: dict[str, HyperNodeInfo] = {}
        own: dict[str, set[str]] = {}
        for hn in sorted(hyper_nodes, key=lambda h: h.metadata.name):
            name = hn.metadata.name
            self.info[name] = HyperNodeInfo(name, hn.spec.tier, hn.spec.tier_name, obj=hn)
            own[name] = set()
            for m in hn.spec.members:
                if m.type == "HyperNode":
                    if m.selector.exact_match is not None:
                        self.info[name].children.add(m.selector.exact_match.name)
                elif m.selector.exact_match is not None:
                    if m.selector.exact_match.name in names:
                        own[name].add(m.selector.exact_match.name)
                else:
                    own[name] |= {n.metadata.name for n in nodes
                                  if matches_node(m.selector, n.metadata.name, n.metadata.labels)}
        for name, info in self.info.items():
            for child in sorted(info.children):
                if child in self.info:
                    self.info[child].parent = name
        self.real_nodes: dict[str, set[str]] = {}
        for name in self.info:
            self.real_nodes[name] = self._real(name, own, set())
        top_tier = max((i.tier for i in self.info.values()), default=0) + 1
        self.info[CLUSTER_TOP] = HyperNodeInfo(CLUSTER_TOP, top_tier,
                                               children={n for n, i in self.info.items() if not i.parent})
        for n, i in self.info.items():
            if n != CLUSTER_TOP and not i.parent:
                i.parent = CLUSTER_TOP
        self.real_nodes[CLUSTER_TOP] = {n.metadata.name for n in nodes}
        self.by_tier: dict[int, list[str]] = {}
        for n, i in sorted(self.info.items()):
            self.by_tier.setdefault(i.tier, []).append(n)
        self.tiers = sorted(self.by_tier)
        self._for_node: dict[str, str] = {}

    def _real(self, name: str, own: dict[str, set[str]], chain: set[str]) -> set[str]:
        """Real nodes of a HyperNode; a cycle in the hierarchy stops the walk (findLeafNodesWithCycleCheck)."""
        if name in chain or name not in self.info:
            return set()
        out = set(own.get(name, ()))
        for child in self.info[name].children:
            out |= self._real(child, own, chain | {name})
        return out

    @property
    def min_tier(self) -> int:
        return self.tiers[0]

    @property
    def max_tier(self) -> int:
        return self.tiers[-1]

    def ancestors(self, name: str) -> list[str]:
        """GetAncestors: the HyperNode, its parent, … up to the cluster top."""
        out: list[str] = []
        while name and name in self.info and name not in out:
            out.append(name)
            name = self.info[name].parent
        return out

    def lca(self, a: str, b: str) -> str:
        """GetLCAHyperNode; an empty name yields the other one."""
        if not a:
            return b
        if not b:
            return a
        up = set(self.ancestors(a))
        return next((n for n in self.ancestors(b) if n in up), "")

    def hyper_node_for_node(self, node: str) -> str:
        """FindHyperNodeForNode: the lowest-tier HyperNode whose real nodes hold the node (the cluster top for a
        node outside every HyperNode)."""
        if node not in self._for_node:
            self._for_node[node] = next((hn for tier in self.tiers for hn in self.by_tier[tier]
                                         if node in self.real_nodes[hn]), "")
        return self._for_node[node]

    def allocated_hyper_node(self, node_names: Iterable[str]) -> str:
        """The HyperNode that holds all the given nodes (SyncJobAllocatedHyperNode: the LCA of their HyperNodes)."""
        out = ""
        for n in sorted(set(node_names)):
            hn = self.hyper_node_for_node(n)
            if hn:
                out = self.lca(out, hn) if out else hn
        return out

    def tier_of_name(self, tier_name: str) -> Optional[int]:
        tiers = {i.tier for i in self.info.values() if i.tier_name == tier_name}
        return min(tiers) if tiers else None

    def record(self) -> dict[str, dict]:
        """What views read: tier, tierName, parent and real nodes of every HyperNode (the cluster top included)."""
        return {n: {"tier": i.tier, "tierName": i.tier_name, "parent": i.parent if n != CLUSTER_TOP else "",
                    "nodes": sorted(self.real_nodes[n])} for n, i in sorted(self.info.items())}
