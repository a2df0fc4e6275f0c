"""The device manager's topology side, as pure functions (mirrors kubernetes
pkg/kubelet/cm/devicemanager ``manager.go`` ``devicesToAllocate``, ``filterByAffinity``,
``callGetPreferredAllocationIfAvailable`` and ``topology_hints.go`` ``GetTopologyHints``,
``GetPodTopologyHints``, ``generateDeviceTopologyHints``, ``deviceHasTopologyAlignment``, v1.36).

When does the kubelet ask the device plugin's ``GetPreferredAllocation``? After taking reusable
(init-container) devices, it splits the free devices by the Topology Manager's hint into *aligned*
(on a hinted NUMA node), *unaligned* (another NUMA node) and *noAffinity* (no NUMA information):

1. ``needed < len(aligned)`` (strictly): ask the plugin with ``aligned ∪ allocated``, take its answer
   inside ``aligned``, then fill from ``aligned``.
2. otherwise take all of ``aligned``; if that is enough (``needed == len(aligned)``) **the plugin is not
   asked**; else ask with ``available ∪ allocated``, take its answer inside ``available``, then fill from
   ``unaligned``, then ``noAffinity``.

Without a hint (policy ``none``) or without device topology every device is *noAffinity*, so the plugin
is asked over all free devices. It is asked only if it registered ``GetPreferredAllocationAvailable``.

Order: upstream hands sets around (Go map order, random); gpusim keeps the node's device order (GPU
index) everywhere — the lists sent to the plugin, and the order devices are taken — so a run is
reproducible. The plugin's answer is walked in its own order.

Because the kubelet's RPC is a simulated call, :class:`DevicesToAllocate` is a two-step plan: read
``request`` (None when the plugin is not asked), call the plugin, then ``finish(preferred)``.
:func:`devices_to_allocate` does both with a plain callable.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

from ..componenthelpers.resource import container_requests, pod_requests
from .topologymanager import ProviderHints, TopologyHint, iterate_bitmasks

NODE_WITHOUT_TOPOLOGY = -1     # devicemanager nodeWithoutTopology


class AllocationError(Exception):
    """An error out of devicesToAllocate (the kubelet reports UnexpectedAdmissionError)."""


Topology = Mapping[str, Optional[Sequence[int]]]     # device ID → NUMA node IDs (None/[] = no topology)


def device_has_topology_alignment(topology: Topology) -> bool:
    """deviceHasTopologyAlignment: any device of the resource reports NUMA nodes."""
    return any(nodes for nodes in topology.values())


def filter_by_affinity(available: Sequence[str], topology: Topology, hint: Optional[TopologyHint],
                       ) -> tuple[list[str], list[str], list[str]]:
    """filterByAffinity → (aligned, unaligned, noAffinity), each in ``available`` order. A device on
    several NUMA nodes goes to the first of its nodes in upstream's sort (hinted nodes first, fewest
    devices first; then other nodes; then the fake node -1)."""
    mask = hint.numa_node_affinity if hint is not None else None
    if not device_has_topology_alignment(topology) or mask is None:
        return [], [], list(available)
    per_node: dict[int, set[str]] = {}
    for d in available:
        nodes = topology.get(d) or [NODE_WITHOUT_TOPOLOGY]
        for n in nodes:
            per_node.setdefault(n, set()).add(d)

    def key(n: int) -> tuple[int, int, int]:
        group = 0 if mask.is_set(n) else (2 if n == NODE_WITHOUT_TOPOLOGY else 1)
        return group, len(per_node[n]), n          # n: tie-break (sort.Slice is not stable upstream)

    order = sorted(per_node, key=key)
    aligned, unaligned, none = [], [], []
    for d in available:
        for n in order:
            if d in per_node[n]:
                if n == NODE_WITHOUT_TOPOLOGY:
                    none.append(d)
                elif mask.is_set(n):
                    aligned.append(d)
                else:
                    unaligned.append(d)
                break
    return aligned, unaligned, none


@dataclass(frozen=True)
class PreferredAllocationRequest:
    """The arguments of GetPreferredAllocation (one ContainerPreferredAllocationRequest)."""

    available: list[str]
    must_include: list[str]
    size: int


@dataclass
class DevicesToAllocate:
    """(*ManagerImpl).devicesToAllocate for one container and one resource, as a plan.

    ``devices``: every device of the resource in node order; ``healthy``: healthy IDs; ``in_use``: IDs
    allocated to any container (m.allocatedDevices); ``held``: IDs this container already holds;
    ``reusable``: devices handed down by init containers; ``hint``: the stored Topology Manager hint;
    ``preferred_allocation_available``: the plugin's option (False, or no endpoint options: not asked).
    Raises :class:`AllocationError` with upstream's texts. ``result`` is set when no RPC is needed."""

    resource: str
    required: int
    devices: Sequence[str]
    healthy: frozenset[str] | set[str]
    topology: Topology
    in_use: frozenset[str] | set[str] = frozenset()
    held: Sequence[str] = ()
    reusable: Sequence[str] = ()
    hint: Optional[TopologyHint] = None
    preferred_allocation_available: bool = True
    registered: bool = True
    pod: str = ""
    container: str = ""
    request: Optional[PreferredAllocationRequest] = field(default=None, init=False)
    result: Optional[list[str]] = field(default=None, init=False)

    def __post_init__(self) -> None:
        held = list(self.held)
        if held and len(held) != self.required:
            raise AllocationError(f'pod "{self.pod}" container "{self.container}" changed request for resource '
                                  f'"{self.resource}" from {len(held)} to {self.required}')
        if not self.registered:
            raise AllocationError(f"cannot allocate unregistered device {self.resource}")
        if not self.healthy:
            raise AllocationError(f"no healthy devices present; cannot allocate unhealthy devices {self.resource}")
        if not set(held) <= set(self.healthy):
            raise AllocationError("previously allocated devices are no longer healthy; cannot allocate unhealthy "
                                  f"devices {self.resource}")
        self._pos = {d: i for i, d in enumerate(self.devices)}
        self.needed = self.required - len(held)
        self.allocated: list[str] = []
        if self.needed == 0:
            self.result = []
            return
        if self._take(self.reusable):
            self.result = list(self.allocated)
            return
        available = [d for d in self.devices if d in self.healthy and d not in self.in_use and d not in self.allocated]
        if len(available) < self.needed:
            raise AllocationError(f"requested number of devices unavailable for {self.resource}. "
                                  f"Requested: {self.needed}, Available: {len(available)}")
        self.available = available
        self.aligned, self.unaligned, self.no_affinity = filter_by_affinity(available, self.topology, self.hint)
        self.branch_aligned = self.needed < len(self.aligned)
        if self.branch_aligned:
            self._ask(self.aligned)
            return
        if self._take(self.aligned):
            self.result = list(self.allocated)
            return
        self._ask(available)

    def _sorted(self, ids: Sequence[str]) -> list[str]:
        return sorted(set(ids), key=lambda d: self._pos.get(d, len(self._pos)))

    def _ask(self, pool: Sequence[str]) -> None:
        """callGetPreferredAllocationIfAvailable(pool ∪ allocated, allocated, required)."""
        if self.preferred_allocation_available:
            self.request = PreferredAllocationRequest(self._sorted(list(pool) + self.allocated),
                                                      self._sorted(self.allocated), self.required)

    def _take(self, ids: Sequence[str]) -> bool:
        """allocateRemainingFrom: True once nothing more is needed."""
        for d in ids:
            if d in self.allocated:
                continue
            self.allocated.append(d)
            self.needed -= 1
            if self.needed == 0:
                return True
        return False

    def finish(self, preferred: Optional[Sequence[str]] = None) -> list[str]:
        """The devices to allocate, given the plugin's answer (ignored when it was not asked)."""
        if self.result is not None:
            return list(self.result)
        answer = list(preferred or []) if self.request is not None else []
        if self.branch_aligned:
            inside = set(self.aligned)
            if self._take([d for d in answer if d in inside]) or self._take(self.aligned):
                return list(self.allocated)
        else:
            inside = set(self.available)
            if (self._take([d for d in answer if d in inside]) or self._take(self.unaligned)
                    or self._take(self.no_affinity)):
                return list(self.allocated)
        raise AllocationError(f"unexpectedly allocated less resources than required. Requested: {self.required}, "
                              f"Got: {self.required - self.needed}")


def devices_to_allocate(get_preferred: Optional[Callable[[list[str], list[str], int], Sequence[str]]] = None,
                        **kwargs: Any) -> list[str]:
    """Run :class:`DevicesToAllocate` to the end, calling ``get_preferred(available, must_include, size)``
    when the kubelet would call the plugin (``preferred_allocation_available`` is False when there is no
    callable)."""
    if get_preferred is None:
        kwargs["preferred_allocation_available"] = False
    plan = DevicesToAllocate(**kwargs)
    answer = None
    if plan.request is not None and get_preferred is not None:
        r = plan.request
        answer = get_preferred(list(r.available), list(r.must_include), r.size)
    return plan.finish(answer)


# --- topology_hints.go --------------------------------------------------------------------------------
def generate_device_topology_hints(numa_nodes: Sequence[int], topology: Topology, available: Sequence[str],
                                   reusable: Sequence[str], request: int) -> list[TopologyHint]:
    """generateDeviceTopologyHints: a hint for every NUMA mask that covers all reusable devices and
    enough available ones; preferred when the mask has the minimum number of NUMA nodes that could hold
    ``request`` devices counting *all* devices of the resource."""
    min_affinity = len(numa_nodes)
    hints: list[TopologyHint] = []
    for mask in iterate_bitmasks(numa_nodes):
        in_mask = sum(1 for nodes in topology.values() if mask.any_set(nodes or ()))
        if in_mask >= request and mask.count() < min_affinity:
            min_affinity = mask.count()
        matching = 0
        ok = True
        for d in reusable:
            nodes = topology.get(d)
            if nodes is None:
                continue
            if not mask.any_set(nodes):
                ok = False
                break
            matching += 1
        if not ok:
            continue
        matching += sum(1 for d in available if mask.any_set(topology.get(d) or ()))
        if matching < request:
            continue
        hints.append(TopologyHint(mask, False))
    return [TopologyHint(h.numa_node_affinity, h.numa_node_affinity.count() == min_affinity)  # type: ignore[union-attr]
            for h in hints]


def resource_hints(numa_nodes: Sequence[int], topology: Topology, healthy: set[str] | frozenset[str],
                   in_use: set[str] | frozenset[str], allocated: Sequence[str], reusable: Sequence[str],
                   requested: int) -> Optional[list[TopologyHint]]:
    """The per-resource body of GetTopologyHints: nil without topology; regenerate from devices already
    allocated (kubelet restart), [] if their count differs; [] if too few devices; else the hints."""
    if not device_has_topology_alignment(topology):
        return None
    if allocated:
        if len(allocated) != requested:
            return []
        return generate_device_topology_hints(numa_nodes, topology, allocated, (), requested)
    available = [d for d in topology if d in healthy and d not in in_use]
    if len(set(available) | set(reusable)) < requested:
        return []
    return generate_device_topology_hints(numa_nodes, topology, available, reusable, requested)


@dataclass
class DeviceState:
    """The device manager state the hint provider reads: per resource, every device with its NUMA nodes
    (node order), the healthy IDs, and pod UID → container → resource → device IDs."""

    numa_nodes: list[int]
    topology: dict[str, dict[str, Optional[list[int]]]] = field(default_factory=dict)
    healthy: dict[str, set[str]] = field(default_factory=dict)
    pod_devices: dict[str, dict[str, dict[str, list[str]]]] = field(default_factory=dict)
    preferred_allocation: dict[str, Callable[[list[str], list[str], int], Sequence[str]]] = field(default_factory=dict)

    def in_use(self, resource: str) -> set[str]:
        return {d for conts in self.pod_devices.values() for res in conts.values() for d in res.get(resource, [])}

    def is_device_plugin_resource(self, resource: str) -> bool:
        return resource in self.topology


class DeviceManagerHintProvider:
    """The device manager as a Topology Manager hint provider (GetTopologyHints / GetPodTopologyHints /
    Allocate). ``store`` is the Topology Manager (``get_affinity``); ``reusable`` maps pod UID → resource
    → IDs handed down by init containers."""

    def __init__(self, state: DeviceState, store: Any = None):
        self.state = state
        self.store = store
        self.reusable: dict[str, dict[str, list[str]]] = {}

    def _container_request(self, container: Any) -> dict[str, int]:
        """getContainerDeviceRequest: the container's limits of device-plugin resources (requests default
        to limits for extended resources, so effective requests are the same numbers)."""
        return {r: int(q) for r, q in sorted(container_requests(container).items())
                if self.state.is_device_plugin_resource(r)}

    def get_topology_hints(self, pod: Any, container: Any) -> ProviderHints:
        s, uid = self.state, pod.metadata.uid
        out: dict[str, Optional[list[TopologyHint]]] = {}
        for resource, requested in self._container_request(container).items():
            held = s.pod_devices.get(uid, {}).get(container.name, {}).get(resource, [])
            out[resource] = resource_hints(s.numa_nodes, s.topology[resource], s.healthy.get(resource, set()),
                                           s.in_use(resource), held,
                                           self.reusable.get(uid, {}).get(resource, []), requested)
        return out

    def get_pod_topology_hints(self, pod: Any) -> ProviderHints:
        """GetPodTopologyHints: the pod's effective request (max of the app-container sum and the largest
        init container); no reusable devices at pod scope."""
        s, uid = self.state, pod.metadata.uid
        out: dict[str, Optional[list[TopologyHint]]] = {}
        for resource, q in sorted(pod_requests(pod).items()):
            if not s.is_device_plugin_resource(resource):
                continue
            held = [d for conts in s.pod_devices.get(uid, {}).values() for d in conts.get(resource, [])]
            out[resource] = resource_hints(s.numa_nodes, s.topology[resource], s.healthy.get(resource, set()),
                                           s.in_use(resource), list(dict.fromkeys(held)), (), int(q))
        return out

    def allocate(self, pod: Any, container: Any) -> None:
        """Allocate: devicesToAllocate per resource with the stored hint; init containers' devices become
        reusable by the following containers."""
        s, uid = self.state, pod.metadata.uid
        hint = self.store.get_affinity(uid, container.name) if self.store is not None else None
        for resource, required in self._container_request(container).items():
            held = s.pod_devices.get(uid, {}).get(container.name, {}).get(resource, [])
            reusable = self.reusable.get(uid, {}).get(resource, [])
            in_use = s.in_use(resource)
            ids = devices_to_allocate(s.preferred_allocation.get(resource), resource=resource, required=required,
                                      devices=list(s.topology[resource]), healthy=s.healthy.get(resource, set()),
                                      topology=s.topology[resource], in_use=in_use, held=held, reusable=reusable,
                                      hint=hint, pod=uid, container=container.name)
            if ids:
                s.pod_devices.setdefault(uid, {}).setdefault(container.name, {})[resource] = held + ids
            if any(c.name == container.name for c in pod.spec.init_containers) and container.restart_policy != "Always":
                self.reusable.setdefault(uid, {})[resource] = list(dict.fromkeys(reusable + held + ids))
            elif reusable:
                self.reusable[uid][resource] = [d for d in reusable if d not in ids]
