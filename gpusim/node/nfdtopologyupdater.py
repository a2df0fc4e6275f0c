"""What NFD's topology-updater publishes for a node (mirrors kubernetes-sigs/node-feature-discovery v0.20
``pkg/nfd-topology-updater/nfd-topology-updater.go``, ``pkg/resourcemonitor/noderesourcesaggregator.go``
``Aggregate``, ``pkg/topologypolicy`` ``DetectTopologyPolicy``), as a pure function the node component
calls.

The updater reads the kubelet's PodResources API: ``GetAllocatableResources`` gives, per NUMA node, the
allocatable CPUs, memory and devices (devices without NUMA topology are not reported per zone); ``List``
gives what running containers hold *exclusively* — whole CPUs and memory of Guaranteed pods, devices of
any pod. Per zone: ``allocatable`` = what the kubelet can hand out, ``capacity`` = allocatable plus the
reserved CPUs (memory capacity from sysfs; devices: = allocatable), ``available`` = allocatable minus the
exclusive allocations. Zones are ``node-<N>`` of type ``Node`` with ``costs`` from the NUMA distance row.
The object carries the kubelet's ``topologyManagerPolicy`` / ``topologyManagerScope`` attributes and the
deprecated ``topologyPolicies`` entry. The pod fingerprint attribute is not computed.

NFD ranges over Go maps; gpusim orders zones by NUMA id and resources by name.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Mapping, Optional, Sequence, Union

from ..api.meta import ObjectMeta
from ..api.quantity import parse_quantity
from ..api.topology_node_k8s_io_v1alpha2 import (ATTRIBUTE_POLICY, ATTRIBUTE_SCOPE, BEST_EFFORT_CONTAINER_LEVEL,
                                                 BEST_EFFORT_POD_LEVEL, NONE, RESTRICTED_CONTAINER_LEVEL,
                                                 RESTRICTED_POD_LEVEL, SINGLE_NUMA_NODE_CONTAINER_LEVEL,
                                                 SINGLE_NUMA_NODE_POD_LEVEL, ZONE_TYPE_NODE, AttributeInfo, CostInfo,
                                                 NodeResourceTopology, ResourceInfo, Zone, id_to_name)

Quantity = Union[int, str, Fraction]

_POD_SCOPE = {"single-numa-node": SINGLE_NUMA_NODE_POD_LEVEL, "restricted": RESTRICTED_POD_LEVEL,
              "best-effort": BEST_EFFORT_POD_LEVEL}
_CONTAINER_SCOPE = {"single-numa-node": SINGLE_NUMA_NODE_CONTAINER_LEVEL, "restricted": RESTRICTED_CONTAINER_LEVEL,
                    "best-effort": BEST_EFFORT_CONTAINER_LEVEL}


def detect_topology_policy(policy: str, scope: str) -> str:
    """topologypolicy.DetectTopologyPolicy: kubelet (policy, scope) → the deprecated v1alpha2 name."""
    if scope == "pod":
        return _POD_SCOPE.get(policy, NONE)
    if scope == "container":
        return _CONTAINER_SCOPE.get(policy, NONE)
    return NONE


_DECIMAL_SUFFIXES = ("", "k", "M", "G", "T", "P", "E")


def decimal_si(value: Fraction) -> str:
    """resource.NewQuantity(v, DecimalSI).String() for an integer: the largest 10^3k suffix that keeps
    the mantissa integral (8 → "8", 2000 → "2k")."""
    n = int(value)
    if n == 0:
        return "0"
    i = 0
    while i < len(_DECIMAL_SUFFIXES) - 1 and n % 1000 == 0:
        n //= 1000
        i += 1
    return f"{n}{_DECIMAL_SUFFIXES[i]}"


@dataclass
class NUMAZone:
    """One NUMA node as the updater sees it: allocatable per resource (cpu in cores, memory in bytes,
    devices as counts), extra capacity the kubelet keeps back (reserved CPUs, memory not allocatable),
    and the distance row indexed by destination NUMA id."""

    numa_id: int
    allocatable: Mapping[str, Quantity]
    reserved: Mapping[str, Quantity] = field(default_factory=dict)
    distances: Sequence[int] = ()


def node_resource_topology(node_name: str, zones: Sequence[NUMAZone],
                           allocated: Optional[Mapping[int, Mapping[str, Quantity]]] = None,
                           policy: str = "none", scope: str = "container",
                           exclude: Sequence[str] = ()) -> NodeResourceTopology:
    """The NodeResourceTopology the updater writes for ``node_name``. ``allocated`` maps NUMA id →
    resource → amount held exclusively by running containers (devices of any QoS, whole CPUs and memory
    of Guaranteed pods); ``exclude`` lists resources left out (the updater's excludeList)."""
    held = allocated or {}
    out_zones = []
    for z in sorted(zones, key=lambda z: z.numa_id):
        resources = []
        for name in sorted(z.allocatable):
            if name in exclude:
                continue
            alloc = parse_quantity(z.allocatable[name])
            capacity = alloc + parse_quantity(z.reserved.get(name, 0))
            available = max(Fraction(0), alloc - parse_quantity(held.get(z.numa_id, {}).get(name, 0)))
            resources.append(ResourceInfo(name, decimal_si(capacity), decimal_si(alloc), decimal_si(available)))
        costs = [CostInfo(id_to_name(dst), int(d)) for dst, d in enumerate(z.distances)]
        out_zones.append(Zone(id_to_name(z.numa_id), ZONE_TYPE_NODE, costs=costs, resources=resources))
    return NodeResourceTopology(
        metadata=ObjectMeta(name=node_name),
        topology_policies=[detect_topology_policy(policy, scope)],
        zones=out_zones,
        attributes=[AttributeInfo(ATTRIBUTE_POLICY, policy), AttributeInfo(ATTRIBUTE_SCOPE, scope)])


def device_allocations(assigned: Mapping[str, Sequence[str]], device_numa: Mapping[str, Mapping[str, Optional[int]]]
                       ) -> dict[int, dict[str, int]]:
    """updateAvailable for devices: resource → assigned device IDs (PodResources List) and resource →
    device → NUMA id (None: no topology, not counted) → NUMA id → resource → count."""
    out: dict[int, dict[str, int]] = {}
    for resource, ids in assigned.items():
        for d in ids:
            numa = device_numa.get(resource, {}).get(d)
            if numa is None:
                continue
            out.setdefault(numa, {})
            out[numa][resource] = out[numa].get(resource, 0) + 1
    return out
