"""kubelet device manager (mirrors kubernetes pkg/kubelet/cm/devicemanager/manager.go).

Keeps, per extended resource, the healthy and unhealthy device sets that the plugin's
ListAndWatch stream reports (with each device's NUMA topology: ``allDevices``), the devices allocated to
each pod's containers, and a checkpoint (DeviceIDs per NUMA node). ``allocate`` follows
``(*ManagerImpl).devicesToAllocate`` step by step, with its error texts: the plan of
:mod:`gpusim.node.devicemanager_affinity` (filterByAffinity with the Topology Manager's hint, and when the
plugin's GetPreferredAllocation is called).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Generator, Optional

import simpy

from ..api.core_v1 import Container, Pod
from ..api.quantity import parse_quantity
from ..api.v1helper import is_extended_resource_name
from ..controlplane.trace import Trace
from . import checkpoint
from ..api.deviceplugin_v1beta1 import API_VERSION, HEALTHY, Device, DevicePlugin, RegisterRequest
from .devicemanager_affinity import AllocationError, DevicesToAllocate
from .grpc import Channel

ENDPOINT_STOP_GRACE_PERIOD = 300.0   # devicemanager/types.go endpointStopGracePeriod = 5 * time.Minute


class AllocateError(Exception):
    """An error out of devicesToAllocate or the Allocate RPC."""


@dataclass
class Endpoint:
    plugin: Optional[DevicePlugin]
    options: Any = None
    stopped_at: Optional[float] = None


def is_dra_extended_resource(pod: Pod, container: str, resource: str) -> bool:
    """isDRAExtendedResource (cm/devicemanager manager.go): the pod's ``status.extendedResourceClaimStatus`` maps
    this container's resource to a request of its extended resource claim."""
    ext = pod.status.extended_resource_claim_status
    return ext is not None and any(m.container_name == container and m.resource_name == resource
                                   for m in ext.request_mappings)


class DeviceManager:
    """One per kubelet; rebuilt from the checkpoint when the kubelet restarts."""

    def __init__(self, env: simpy.Environment, node: str, channel: Channel, trace: Trace, disk: dict,
                 on_change: Callable[[], None], on_checkpoint: Optional[Callable[[], None]] = None):
        self.env, self.node, self.channel, self.trace, self.disk = env, node, channel, trace, disk
        self.on_change = on_change
        self.on_checkpoint = on_checkpoint     # the kubelet state directory changed (NFD's fsnotify watch)
        # allDevices: resource → device ID → NUMA nodes (None: no topology), in the plugin's order
        self.device_topology: dict[str, dict[str, Optional[list[int]]]] = {}
        self.component = f"kubelet/{node}"
        self.endpoints: dict[str, Endpoint] = {}
        self.healthy: dict[str, set[str]] = {}
        self.unhealthy: dict[str, set[str]] = {}
        # pod UID → container → resource → (device IDs, AllocResp)
        self.pod_devices: dict[str, dict[str, dict[str, tuple[list[str], dict]]]] = {}
        self.sources_ready = True
        self.removed: set[str] = set()

    # --- registration and ListAndWatch --------------------------------------------------------
    def register(self, plugin: DevicePlugin, req: RegisterRequest) -> None:
        """(*ManagerImpl).RegisterPlugin via the Registration service."""
        obj = f"Node {self.node}"
        if req.version != API_VERSION:
            self.trace.add(self.env.now, self.component, "devicemanager.(*server).Register", obj,
                           f'requested API version "{req.version}" is not supported by kubelet. '
                           f'Supported version is "{API_VERSION}"')
            return
        if not is_extended_resource_name(req.resource_name):
            self.trace.add(self.env.now, self.component, "devicemanager.(*server).Register", obj,
                           f'the ResourceName "{req.resource_name}" is invalid')
            return
        self.trace.add(self.env.now, self.component, "devicemanager.(*server).Register", obj, "Success",
                       resource=req.resource_name, endpoint=req.endpoint, version=req.version)
        self.endpoints[req.resource_name] = Endpoint(plugin, req.options)
        self.removed.discard(req.resource_name)
        self.env.process(self._connect(req.resource_name, plugin))

    def _connect(self, resource: str, plugin: DevicePlugin) -> Generator:
        """(*ManagerImpl).PluginConnected: GetDevicePluginOptions, then run ListAndWatch."""
        up = lambda: plugin.running
        try:
            opts = yield from self.channel.call(self.component, "v1beta1.DevicePlugin/GetDevicePluginOptions",
                                                f"Node {self.node}", up, plugin.get_device_plugin_options)
            self.endpoints[resource].options = opts
            yield from self.channel.call(self.component, "v1beta1.DevicePlugin/ListAndWatch", f"Node {self.node}",
                                         up, plugin.list_and_watch, lambda devs: self._receive(resource, devs))
        except Exception:
            self.disconnected(resource)

    def _receive(self, resource: str, devices: Optional[list[Device]]) -> None:
        """A ListAndWatch message arrives after the channel latency (None = stream ended)."""
        def deliver() -> Generator:
            if self.channel.latency:
                yield self.env.timeout(self.channel.latency)
            if self.endpoints.get(resource) is None or self.endpoints[resource].plugin is None:
                return
            if devices is None:
                self.disconnected(resource)
            else:
                self.update_devices(resource, devices)
        self.env.process(deliver())

    def update_devices(self, resource: str, devices: list[Device]) -> None:
        """genericDeviceUpdateCallback: rebuild healthy/unhealthy from the full list; checkpoint."""
        self.healthy[resource] = {d.id for d in devices if d.health == HEALTHY}
        self.unhealthy[resource] = {d.id for d in devices if d.health != HEALTHY}
        self.device_topology[resource] = {d.id: ([d.numa] if d.numa is not None and d.numa >= 0 else None)
                                          for d in devices}
        self.trace.add(self.env.now, self.component, "devicemanager.(*ManagerImpl).genericDeviceUpdateCallback",
                       f"Node {self.node}", "Success", resource=resource, healthy=len(self.healthy[resource]),
                       unhealthy=len(self.unhealthy[resource]))
        self.write_checkpoint()
        self.on_change()

    def disconnected(self, resource: str) -> None:
        """(*ManagerImpl).PluginDisconnected → markResourceUnhealthy; endpoint gets a stop time."""
        ep = self.endpoints.get(resource)
        if ep is None or ep.stopped_at is not None:
            return
        ep.stopped_at, ep.plugin = self.env.now, None
        self.unhealthy[resource] = self.unhealthy.get(resource, set()) | self.healthy.get(resource, set())
        self.healthy[resource] = set()
        self.trace.add(self.env.now, self.component, "devicemanager.(*ManagerImpl).markResourceUnhealthy",
                       f"Node {self.node}", "Success", resource=resource)
        self.on_change()
        self.env.process(self._grace(resource, ep))

    def _grace(self, resource: str, ep: Endpoint) -> Generator:
        yield self.env.timeout(ENDPOINT_STOP_GRACE_PERIOD)
        if self.endpoints.get(resource) is ep and ep.stopped_at is not None:
            del self.endpoints[resource]
            self.healthy.pop(resource, None)
            self.unhealthy.pop(resource, None)
            self.removed.add(resource)
            self.on_change()

    def restore_checkpoint(self) -> None:
        """readCheckpoint after a kubelet restart: pod devices come back; every registered resource
        starts with empty healthy/unhealthy sets and a stopped placeholder endpoint."""
        self.pod_devices, registered = checkpoint.read(self.disk)
        for res in registered:
            self.healthy[res], self.unhealthy[res] = set(), set()
            self.endpoints[res] = Endpoint(None, None, stopped_at=self.env.now)
        self.trace.add(self.env.now, self.component, "devicemanager.(*ManagerImpl).readCheckpoint",
                       f"Node {self.node}", "Success", resources=registered,
                       pods=len(self.pod_devices))

    def write_checkpoint(self) -> None:
        checkpoint.write(self.disk, self.pod_devices, self.healthy, self.device_topology)
        if self.on_checkpoint is not None:
            self.on_checkpoint()

    # --- capacity --------------------------------------------------------------------------------
    def get_capacity(self) -> tuple[dict[str, int], dict[str, int], list[str]]:
        """GetCapacity: capacity = healthy + unhealthy, allocatable = healthy; removed resources."""
        cap, alloc = {}, {}
        for res in sorted(set(self.healthy) | set(self.unhealthy)):
            h, u = len(self.healthy.get(res, ())), len(self.unhealthy.get(res, ()))
            cap[res], alloc[res] = h + u, h
        return cap, alloc, sorted(self.removed)

    def allocated(self, resource: str) -> set[str]:
        return {i for conts in self.pod_devices.values() for res in conts.values()
                for r, (ids, _) in res.items() if r == resource for i in ids}

    def devices_of(self, pod_uid: str) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for conts in self.pod_devices.get(pod_uid, {}).values():
            for res, (ids, _) in conts.items():
                out.setdefault(res, []).extend(i for i in ids if i not in out.get(res, []))
        return out

    def update_allocated_devices(self, active_pod_uids: set[str]) -> list[str]:
        """UpdateAllocatedDevices: free the devices of pods that are no longer active."""
        gone = sorted(set(self.pod_devices) - active_pod_uids)
        for uid in gone:
            del self.pod_devices[uid]
        if gone:
            self.write_checkpoint()
        return gone

    def is_device_plugin_resource(self, resource: str) -> bool:
        return resource in self.healthy or any(resource in r for c in self.pod_devices.values() for r in c.values())

    # --- Allocate ---------------------------------------------------------------------------------
    def allocate(self, pod: Pod, container: Container, reusable: dict[str, list[str]],
                 running: bool, hint: Any = None) -> Generator[Any, Any, None]:
        """(*ManagerImpl).Allocate → allocateContainerResources for one container, with the Topology
        Manager's stored ``hint`` for it (None under policy ``none``). Iterates over the container's limits
        (sorted, for determinism; upstream ranges over a map)."""
        uid = pod.metadata.uid
        for resource in sorted(container.resources.limits):
            if not self.is_device_plugin_resource(resource):
                continue
            if is_dra_extended_resource(pod, container.name, resource):
                continue   # DRAExtendedResource: the scheduler's extended resource claim serves it
            required = int(parse_quantity(container.resources.limits[resource]))
            ids = yield from self._devices_to_allocate(pod, container.name, resource, required,
                                                       reusable.get(resource, []), running, hint)
            if ids is None:
                continue
            ep = self.endpoints.get(resource)
            if ep is None or ep.plugin is None:
                raise AllocateError(f"unknown Device Plugin {resource}")
            plugin = ep.plugin
            resp = yield from self.channel.call(self.component, "v1beta1.DevicePlugin/Allocate",
                                                f"Pod {pod.metadata.namespace}/{pod.metadata.name}",
                                                lambda: plugin.running, plugin.allocate, ids)
            self.pod_devices.setdefault(uid, {}).setdefault(container.name, {})[resource] = \
                (ids, {"envs": dict(resp.envs)})
            self.write_checkpoint()
            self.trace.add(self.env.now, self.component, "devicemanager.(*ManagerImpl).Allocate",
                           f"Pod {pod.metadata.namespace}/{pod.metadata.name}", "Success",
                           container=container.name, resource=resource, devices=list(ids))

    def _devices_to_allocate(self, pod: Pod, cname: str, resource: str, required: int, reusable: list[str],
                             running: bool, hint: Any = None) -> Generator[Any, Any, Optional[list[str]]]:
        """devicesToAllocate: rows 1-2 here (the request changed; a container that ran before the kubelet
        restarted, while sources are not ready, keeps its devices without an RPC), the rest in
        :class:`~gpusim.node.devicemanager_affinity.DevicesToAllocate`, which says whether and with what the
        plugin's GetPreferredAllocation is called (devices in the plugin's order: GPU index)."""
        uid = pod.metadata.uid
        held = self.pod_devices.get(uid, {}).get(cname, {}).get(resource, ([], None))[0]
        if held and len(held) != required:
            raise AllocateError(f'pod "{uid}" container "{cname}" changed request for resource "{resource}" '
                                f"from {len(held)} to {required}")
        if not self.sources_ready and running:
            return None
        ep = self.endpoints.get(resource)
        plugin = ep.plugin if ep else None
        ask = plugin is not None and ep.options is not None and ep.options.get_preferred_allocation_available
        topo = self.device_topology.get(resource, {})
        healthy = self.healthy.get(resource, set())
        devices = list(topo) + sorted(healthy - set(topo))
        try:
            plan = DevicesToAllocate(resource=resource, required=required, devices=devices, healthy=healthy,
                                     topology=topo, in_use=self.allocated(resource), held=held,
                                     reusable=[d for d in reusable], hint=hint, preferred_allocation_available=ask,
                                     registered=resource in self.healthy, pod=uid, container=cname)
        except AllocationError as e:
            raise AllocateError(str(e)) from None
        if plan.result is not None:
            return plan.result or None
        preferred = None
        if plan.request is not None:
            r = plan.request
            try:
                preferred = yield from self.channel.call(
                    self.component, "v1beta1.DevicePlugin/GetPreferredAllocation",
                    f"Pod {pod.metadata.namespace}/{pod.metadata.name}", lambda: plugin.running,
                    plugin.get_preferred_allocation, list(r.available), list(r.must_include), r.size)
            except Exception as e:
                raise AllocateError(f"device plugin GetPreferredAllocation rpc failed with err: {e}") from None
        try:
            return plan.finish(preferred)
        except AllocationError as e:
            raise AllocateError(str(e)) from None
