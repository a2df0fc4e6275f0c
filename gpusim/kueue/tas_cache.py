"""Kueue's TAS cache: what the placement of each TAS ResourceFlavor starts from (mirrors kueue
pkg/cache/scheduler/tas_cache.go, tas_flavor.go ``TASFlavorCache.snapshot``, tas_nodes_cache.go, the
non-TAS pod usage of tas_non_tas_pod_cache.go / pkg/controller/tas/non_tas_usage_controller.go, and the
node requeueing of pkg/controller/tas/node_controller.go).

- Nodes: Ready and not ``spec.unschedulable``, carrying the flavor's ``nodeLabels`` and every level label of
  its Topology (``NodeMatchesFlavor``); their allocatable is the leaves' capacity.
- Non-TAS usage: pods bound to a node and not terminated that are not TAS pods (no TAS annotation), e.g. pods of
  other schedulers or of non-TAS workloads: their requests and one ``pods`` each are taken off the capacity.
- TAS usage: what admitted TAS workloads were assigned, per lowest-level domain. With ``TASHandleOverlappingFlavors``
  (beta, on in 0.19) flavors whose lowest level is the hostname share it: a node's usage counts in all of them.

Kueue keeps these caches up to date from watches; gpusim rebuilds a flavor's snapshot when the apiserver or
the TAS usage changed since the last one (same content, computed lazily).
"""
from __future__ import annotations

from typing import Any, Iterable, Optional

from ..api.kueue_x_k8s_io import LABEL_HOSTNAME, is_explicit_tas
from ..componenthelpers.resource import pod_requests
from . import resources
from .tas_flavor_snapshot import PODS, Requests, TASFlavorSnapshot, add


def node_ready(node: Any) -> bool:
    c = node.status.condition("Ready")
    return c is not None and c.status == "True"


def node_matches_flavor(labels: dict[str, str], flavor_labels: dict[str, str], levels: list[str]) -> bool:
    """pkg/util/tas NodeMatchesFlavor."""
    return all(labels.get(k) == v for k, v in flavor_labels.items()) and all(k in labels for k in levels)


def is_tas_pod(pod: Any) -> bool:
    """pkg/util/tas IsTAS: the pod carries a TAS annotation."""
    return is_explicit_tas(pod.metadata.annotations)


def requests_of(values: dict) -> Requests:
    return {k: resources.value(k, v) for k, v in values.items()}


class TASCache:
    """The TAS flavors of one kueue-controller-manager and their usage."""

    def __init__(self, ctx: Any, flavors: dict[str, Any], topologies: dict[str, Any]):
        self.ctx = ctx
        self.flavors: dict[str, tuple[list[str], dict[str, str], list[Any]]] = {}
        for name, f in sorted(flavors.items()):
            tn = f.spec.topology_name
            if tn and tn in topologies:
                self.flavors[name] = (topologies[tn].level_keys, dict(f.spec.node_labels), list(f.spec.tolerations))
        self.topology_of = {n: flavors[n].spec.topology_name for n in self.flavors}
        self.usage: dict[str, dict[str, Requests]] = {n: {} for n in self.flavors}   # flavor → domain → usage
        self._usage_version = 0
        self._cache: dict[str, tuple[tuple, TASFlavorSnapshot]] = {}

    def is_tas(self, flavor: str) -> bool:
        return flavor in self.flavors

    def version(self) -> tuple[int, int]:
        return self.ctx.api._rv, self._usage_version

    def _hostname_leaf(self, flavor: str) -> bool:
        return self.flavors[flavor][0][-1] == LABEL_HOSTNAME

    def snapshot(self, flavor: str) -> TASFlavorSnapshot:
        """TASFlavorCache.snapshot: a fresh tree with capacity, non-TAS usage and TAS usage."""
        ver = self.version()
        hit = self._cache.get(flavor)
        if hit is not None and hit[0] == ver:
            return hit[1]
        levels, flavor_labels, tolerations = self.flavors[flavor]
        snap = TASFlavorSnapshot(self.topology_of[flavor], levels, tolerations)
        node_domain: dict[str, str] = {}
        for n in sorted(self.ctx.api.list("Node"), key=lambda n: n.metadata.name):
            if n.spec.unschedulable or not node_ready(n):
                continue
            if not node_matches_flavor(n.metadata.labels, flavor_labels, levels):
                continue
            node_domain[n.metadata.name] = snap.add_node(n, requests_of(n.status.allocatable))
        snap.initialize()
        for pod in self.ctx.api.list("Pod"):
            name = pod.spec.node_name
            if not name or name not in node_domain or pod.status.phase in ("Succeeded", "Failed"):
                continue
            if is_tas_pod(pod) and pod.metadata.deletion_timestamp is None:
                continue
            usage = requests_of(pod_requests(pod))
            usage[PODS] = usage.get(PODS, 0) + 1
            snap.add_non_tas_usage(node_domain[name], usage)
        sources = [f for f in self.flavors if self._hostname_leaf(f)] if self._hostname_leaf(flavor) else [flavor]
        for f in sources:
            for did, u in self.usage[f].items():
                snap.add_tas_usage(did, u)
        self._cache[flavor] = (ver, snap)
        return snap

    def add_usage(self, flavor: str, per_domain: dict[str, Requests], sign: int = 1) -> None:
        """TASFlavorCache.addUsage / removeUsage of an admitted (released) workload."""
        ledger = self.usage[flavor]
        for did, u in per_domain.items():
            cur = add(ledger.setdefault(did, {}), u, sign)
            if all(v == 0 for v in cur.values()):
                del ledger[did]
        self._usage_version += 1

    def with_removed(self, removed: Iterable[Any]):
        """A context in which the TAS usage of ``removed`` workloads (``Info.tas_usage``) is taken off the
        snapshots (SimulateWorkloadRemoval), restored on exit."""
        cache = self

        class _Removed:
            def __enter__(self_inner):
                self_inner.items = [(f, u) for info in removed for f, u in info.tas_usage]
                for f, u in self_inner.items:
                    cache.add_usage(f, u, -1)
                return cache

            def __exit__(self_inner, *exc):
                for f, u in self_inner.items:
                    cache.add_usage(f, u, 1)
                return False
        return _Removed()


def node_signature(node: Any) -> Optional[tuple]:
    """What the TAS node controller reacts to: readiness, schedulability, labels, allocatable, taints."""
    if node is None:
        return None
    return (node_ready(node), bool(node.spec.unschedulable), tuple(sorted(node.metadata.labels.items())),
            tuple(sorted(node.status.allocatable.items())),
            tuple((t.key, t.value, t.effect) for t in node.spec.taints))
