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
                                                 KIND, NodeResourceTopology, ResourceInfo, Zone, id_to_name)

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


# --- the updater on the simulated clock ------------------------------------------------------------------------
SLEEP_INTERVAL = 60.0      # nfd-topology-updater -sleep-interval default


class TopologyUpdater:
    """nfd-topology-updater on one node (``pkg/nfd-topology-updater``): reads the kubelet's PodResources API
    (``GetAllocatableResources``: the healthy devices with their NUMA node; ``List``: the devices every admitted
    pod's containers hold) and writes the node's NodeResourceTopology at start, whenever the kubelet's state
    files change (``-kubelet-state-dir``: the device manager's checkpoint) and every ``-sleep-interval``.

    Zones follow ``Aggregate``: a NUMA node with devices carries those device resources; a NUMA node without any
    carries ``cpu`` with allocatable 0 and its CPUs as capacity (the kubelet reports no CPUs under the CPU
    manager's ``none`` policy, so NFD counts them all as reserved). Memory is not reported (memory manager
    ``none``). gpusim writes only when the object would change (NFD rewrites it every interval; an unchanged
    object moves nothing in the scheduler but would requeue its pods)."""

    component_name = "nfd-topology-updater"

    def __init__(self, ctx, kubelet, policy: str = "none", scope: str = "container"):
        self.ctx, self.kubelet, self.policy, self.scope = ctx, kubelet, policy, scope
        self.node = kubelet.node_name
        self.component = f"{self.component_name}/{self.node}"
        self.updates = 0
        self._pending = False
        kubelet.state_listeners.append(self.notify)
        ctx.env.process(self._periodic())

    def notify(self) -> None:
        """fsnotify on the kubelet state directory: update once the current instant's changes are done."""
        if self._pending:
            return
        self._pending = True
        self.ctx.env.timeout(0).callbacks.append(lambda _e: self._fire())

    def _fire(self) -> None:
        self._pending = False
        self.update()

    def _periodic(self):
        while True:
            yield self.ctx.daemon_timeout(SLEEP_INTERVAL)
            self.update()

    def zones(self) -> tuple[list[NUMAZone], dict[int, dict[str, int]]]:
        """(zones, exclusive allocations per NUMA id) from the kubelet's PodResources view."""
        kl = self.kubelet
        dm = kl.dm
        numa_ids, distances, cpus = kl.numa_nodes, kl.numa_distances, kl.numa_cpu_counts
        per_numa: dict[int, dict[str, int]] = {}
        device_numa: dict[str, dict[str, Optional[int]]] = {}
        if dm is not None:
            for resource, topo in sorted(dm.device_topology.items()):
                healthy = dm.healthy.get(resource, set())
                device_numa[resource] = {d: (n[0] if n else None) for d, n in topo.items()}
                for d, nodes in topo.items():
                    if d in healthy and nodes:
                        for n in nodes:
                            per_numa.setdefault(n, {})
                            per_numa[n][resource] = per_numa[n].get(resource, 0) + 1
        zones = []
        for n in numa_ids:
            row = distances.get(n, [])
            if n in per_numa:
                zones.append(NUMAZone(n, dict(per_numa[n]), {}, row))
            else:
                zones.append(NUMAZone(n, {"cpu": 0}, {"cpu": cpus.get(n, 0)}, row))
        assigned: dict[str, list[str]] = {}
        if dm is not None:
            for uid in sorted(dm.pod_devices):
                for res, ids in sorted(dm.devices_of(uid).items()):
                    assigned.setdefault(res, []).extend(ids)
        return zones, device_allocations(assigned, device_numa)

    def build(self) -> NodeResourceTopology:
        zones, held = self.zones()
        return node_resource_topology(self.node, zones, held, self.policy, self.scope)

    def update(self) -> None:
        """Create or update the node's NodeResourceTopology (only when the kubelet is up and it changed)."""
        if not self.kubelet.up or self.kubelet.dm is None:
            return
        api, now = self.ctx.api, self.ctx.now
        new = self.build()
        old = api.get(new.kind, "", self.node)
        if old is None:
            api.create(new)
        elif (old.zones, old.attributes, old.topology_policies) != (new.zones, new.attributes, new.topology_policies):
            old.zones, old.attributes, old.topology_policies = new.zones, new.attributes, new.topology_policies
            api.update(old)
        else:
            return
        self.updates += 1
        self.ctx.trace.add(now, self.component, "topologyupdater.(*nfdTopologyUpdater).updateNodeResourceTopology",
                           f"NodeResourceTopology {self.node}", "Success",
                           available={z.name: {r.name: r.available for r in z.resources} for z in new.zones})


def install(sim) -> Optional[dict[str, TopologyUpdater]]:
    """The topology-updater DaemonSet: one updater per GPU node, except nodes whose NodeResourceTopology the
    scenario gives itself (as if the DaemonSet's node selector left them out)."""
    sc = sim.scenario
    given = {o.metadata.name for o in sc.objects.get(KIND, [])}
    out = {}
    for name, kl in sim.kubelets.items():
        if kl.plugin is None or name in given:
            continue
        cfg = sc.kubelet_configs.get(name, {})
        out[name] = TopologyUpdater(sim.ctx, kl, cfg.get("topologyManagerPolicy", "none"),
                                    cfg.get("topologyManagerScope", "container"))
    return out
