"""The NVIDIA device plugin for whole GPUs (mirrors NVIDIA/k8s-device-plugin v0.20:
internal/plugin/server.go, internal/rm/health.go, internal/rm/allocate.go; and the Device Plugin
API v1beta1 of k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1).

Lifecycle: start → ``Register`` with the kubelet (resource ``nvidia.com/gpu``, version ``v1beta1``,
endpoint ``nvidia-gpu.sock``) → the kubelet opens ``ListAndWatch``, which streams the full device list
(GPU UUIDs with health) now and whenever health changes. ``GetPreferredAllocation`` and ``Allocate``
answer the kubelet at admission. A critical XID marks a GPU Unhealthy until the plugin restarts.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Optional

import simpy

from ..controlplane.trace import Trace
from ..hardware import GPUModel
from . import plugin_config
from .plugin_config import Config

if TYPE_CHECKING:
    from .devicemanager import DeviceManager

# k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1/constants.go
HEALTHY, UNHEALTHY = "Healthy", "Unhealthy"
API_VERSION = "v1beta1"
DEVICE_PLUGIN_PATH = "/var/lib/kubelet/device-plugins/"
RESOURCE_NAME = "nvidia.com/gpu"
# internal/rm/health.go: XIDs treated as application errors and ignored by default.
IGNORED_XIDS = frozenset({13, 31, 43, 45, 68, 109})


@dataclass
class Device:
    """v1beta1.Device: ID (the GPU UUID), health, topology (NUMA node)."""

    id: str
    health: str = HEALTHY
    numa: Optional[int] = None
    index: int = 0


@dataclass
class DevicePluginOptions:
    pre_start_required: bool = False
    get_preferred_allocation_available: bool = True


@dataclass
class RegisterRequest:
    version: str
    endpoint: str
    resource_name: str
    options: DevicePluginOptions = field(default_factory=DevicePluginOptions)


@dataclass
class ContainerAllocateResponse:
    envs: dict[str, str] = field(default_factory=dict)
    mounts: list = field(default_factory=list)
    devices: list = field(default_factory=list)
    annotations: dict[str, str] = field(default_factory=dict)


REPLICA_SEPARATOR = "::"   # internal/rm/device_map.go NewAnnotatedID: "<uuid>::<replica>"


def parent_id(device_id: str) -> str:
    """The physical GPU behind a (possibly replicated) device ID."""
    return device_id.split(REPLICA_SEPARATOR, 1)[0]


class NvidiaDevicePlugin:
    """One plugin instance on one node, serving ``nvidia.com/gpu`` (or ``nvidia.com/gpu.shared``).

    ``devices`` are the physical GPUs; with time-slicing or MPS each is advertised ``replicas`` times."""

    def __init__(self, env: simpy.Environment, node: str, model: GPUModel, uuids: list[str], trace: Trace,
                 pre_start_required: bool = False, config: Optional[Config] = None):
        self.env, self.node, self.model, self.trace = env, node, model, trace
        self.devices = [Device(u, HEALTHY, None, i) for i, u in enumerate(uuids)]
        self.options = DevicePluginOptions(pre_start_required=pre_start_required)
        self.config = config or plugin_config.default()
        self.replicas = self.config.replicas_for(RESOURCE_NAME)
        self.resource = self.config.advertised_name(RESOURCE_NAME)
        self.running = False
        self._stream: Optional[Callable[[list[Device]], None]] = None
        self.component = f"nvidia-device-plugin/{node}"

    @property
    def endpoint(self) -> str:
        """internal/plugin/server.go: socket nvidia-<name>.sock, <name> after 'nvidia.com/'."""
        return "nvidia-" + self.resource.split("/", 1)[1] + ".sock"

    # --- lifecycle -------------------------------------------------------------------------
    def start(self, kubelet_dm: "DeviceManager") -> None:
        """(*NvidiaDevicePlugin).Start: serve, then Register with the kubelet."""
        self.running = True
        for d in self.devices:   # a fresh NVML view: XID marks do not survive a restart
            d.health = HEALTHY
        self.trace.add(self.env.now, self.component, "plugin.(*nvidiaDevicePlugin).Start", f"Node {self.node}",
                       devices=len(self.devices))
        kubelet_dm.register(self, RegisterRequest(API_VERSION, self.endpoint, self.resource, self.options))

    def stop(self, reason: str) -> None:
        self.running = False
        self.trace.add(self.env.now, self.component, "plugin.(*nvidiaDevicePlugin).Stop", f"Node {self.node}", reason)
        stream, self._stream = self._stream, None
        if stream is not None:
            stream(None)   # the ListAndWatch stream ends

    # --- v1beta1.DevicePluginServer ------------------------------------------------------------
    def get_device_plugin_options(self) -> DevicePluginOptions:
        return self.options

    def list_and_watch(self, send: Callable[[Optional[list[Device]]], None]) -> None:
        """Open the stream: send the full list now and on every health change."""
        self._stream = send
        send(self._snapshot())

    def _snapshot(self) -> list[Device]:
        """The advertised devices: one per GPU, or ``replicas`` per GPU sharing its health."""
        if self.replicas == 1:
            return [Device(d.id, d.health, d.numa, d.index) for d in self.devices]
        return [Device(f"{d.id}{REPLICA_SEPARATOR}{k}", d.health, d.numa, d.index)
                for d in self.devices for k in range(self.replicas)]

    def get_preferred_allocation(self, available: list[str], must_include: list[str], size: int) -> list[str]:
        """For whole GPUs upstream uses go-gpuallocator's best-effort policy, which scores sets by
        NVLink/PCIe links. On NVSwitch systems every pair scores the same, so the choice reduces to
        the required devices, then the lowest GPU indexes. Replicas use the ``distributed`` policy
        (internal/rm/allocate.go distributedAlloc): each pick goes to the GPU with the fewest replicas
        allocated, ties to the GPU picked least in this call, then the lower index."""
        if self.replicas > 1:
            return self._distributed(available, must_include, size)
        order = {d.id: d.index for d in self.devices}
        chosen = list(must_include)
        for dev in sorted(available, key=lambda i: order.get(i, 1 << 30)):
            if len(chosen) >= size:
                break
            if dev not in chosen:
                chosen.append(dev)
        return chosen

    def _distributed(self, available: list[str], must_include: list[str], size: int) -> list[str]:
        index = {d.id: d.index for d in self.devices}
        free: dict[str, list[str]] = {}
        for dev in available:
            free.setdefault(parent_id(dev), []).append(dev)
        allocated = {d.id: self.replicas - len(free.get(d.id, [])) for d in self.devices}
        chosen = list(must_include)
        picked: dict[str, int] = {}
        candidates = [d for d in available if d not in chosen]
        while len(chosen) < size:
            if not candidates:
                raise ValueError("not enough available devices to satisfy allocation")
            best = min(candidates, key=lambda d: (allocated[parent_id(d)], picked.get(parent_id(d), 0),
                                                  index[parent_id(d)], d))
            chosen.append(best)
            candidates.remove(best)
            allocated[parent_id(best)] += 1
            picked[parent_id(best)] = picked.get(parent_id(best), 0) + 1
        return chosen

    def allocate(self, device_ids: list[str]) -> ContainerAllocateResponse:
        """(*nvidiaDevicePlugin).Allocate with the default envvar device-list strategy: replica
        suffixes are stripped and duplicates dropped (internal/plugin/server.go)."""
        known = {d.id for d in self._snapshot()}
        for i in device_ids:
            if i not in known:
                raise ValueError(f'invalid allocation request for "{self.resource}": invalid request: unknown device: {i}')
        if self.replicas > 1 and len(device_ids) > 1 and self.config.fail_requests_greater_than_one:
            # internal/rm/rm.go ValidateRequest, wrapped by Allocate
            raise ValueError(f'invalid allocation request for "{self.resource}": invalid request: maximum request '
                             f"size for shared resources is 1; found {len(device_ids)}")
        gpus = list(dict.fromkeys(parent_id(i) for i in device_ids))
        envs = {"NVIDIA_VISIBLE_DEVICES": ",".join(gpus)}
        if self.config.strategy == "mps":   # internal/plugin/mps.go: the client talks to the MPS daemon
            envs["CUDA_MPS_PIPE_DIRECTORY"] = f"/mps/{RESOURCE_NAME}/pipe"
        return ContainerAllocateResponse(envs=envs)

    def pre_start_container(self, device_ids: list[str]) -> None:
        return None

    # --- health -----------------------------------------------------------------------------
    def xid_event(self, index: int, xid: int) -> bool:
        """internal/rm/health.go checkHealth: a critical XID marks the device Unhealthy.
        Returns whether the device changed."""
        dev = self.devices[index]
        if xid in IGNORED_XIDS:
            self.trace.add(self.env.now, self.component, "rm.(*nvmlResourceManager).checkHealth",
                           f"GPU {dev.id}", f"Skipping non-critical Xid={xid}")
            return False
        self.trace.add(self.env.now, self.component, "rm.(*nvmlResourceManager).checkHealth", f"GPU {dev.id}",
                       f"XidCriticalError: Xid={xid} on Device={dev.id}; marking device as unhealthy.")
        if dev.health == UNHEALTHY:
            return False
        dev.health = UNHEALTHY
        if self.running and self._stream is not None:
            self._stream(self._snapshot())
        return True
