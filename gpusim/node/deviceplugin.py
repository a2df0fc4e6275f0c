"""The NVIDIA device plugin for whole GPUs (mirrors NVIDIA/k8s-device-plugin v0.20:
internal/plugin/server.go, internal/rm/health.go, internal/rm/allocate.go; and the Device Plugin
API v1beta1 of k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1).

Lifecycle: start → ``Register`` with the kubelet (resource ``nvidia.com/gpu``, version ``v1beta1``,
endpoint ``nvidia-gpu.sock``) → the kubelet opens ``ListAndWatch``, which streams the full device list
(GPU UUIDs with health and NUMA topology) now and whenever health changes. ``GetPreferredAllocation`` and
``Allocate`` answer the kubelet at admission. A critical XID marks a GPU Unhealthy until the plugin restarts.

Topology: each device reports the NUMA node of its GPU (``/sys/bus/pci/devices/<bus>/numa_node``,
internal/rm/nvml_devices.go ``GetNumaNode``; replicas and MIG devices the one of their parent GPU), from the
node's server board (gpusim.hardware.topology). A node without a board (a vGPU VM) reports none.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Optional

import simpy

from ..api.deviceplugin_v1beta1 import (API_VERSION, HEALTHY, UNHEALTHY,  # noqa: F401  re-exported for the node package
                                        ContainerAllocateResponse, Device, DevicePluginOptions, RegisterRequest,
                                        Registration)
from ..controlplane.apiserver import uuid4_string
from ..controlplane.trace import Trace
from ..hardware import GPUModel
from ..hardware import topology as hwtopology
from . import gpuallocator, gpuboard, plugin_config
from .plugin_config import Config

RESOURCE_NAME = "nvidia.com/gpu"
# internal/rm/health.go: XIDs treated as application errors and ignored by default.
IGNORED_XIDS = frozenset({13, 31, 43, 45, 68, 109})


REPLICA_SEPARATOR = "::"   # internal/rm/device_map.go NewAnnotatedID: "<uuid>::<replica>"
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"


def parent_id(device_id: str) -> str:
    """The device behind a (possibly replicated) device ID: a GPU UUID or a MIG device UUID."""
    return device_id.split(REPLICA_SEPARATOR, 1)[0]


@dataclass
class MigDevice:
    """One MIG device (GPU instance + compute instance) on physical GPU ``index``."""

    id: str               # MIG-<uuid>
    index: int            # parent GPU index
    profile: str          # e.g. "1g.10gb"
    memory_mib: int
    start: int            # first memory slice


def gpu_uuids(rng: random.Random, n: int) -> list[str]:
    """GPU UUIDs as NVML prints them (GPU-xxxxxxxx-...), drawn from the simulation's seed."""
    return ["GPU-" + uuid4_string(rng.getrandbits(128)) for _ in range(n)]


def mig_devices(rng: random.Random, layouts: list) -> list[MigDevice]:
    """The MIG devices of a node's GPUs (one per GPU instance), with MIG-<uuid> IDs from the seed."""
    out = []
    for index, layout in enumerate(layouts):
        for gi in layout.instances if layout.mig_enabled else ():
            uid = "MIG-" + uuid4_string(rng.getrandbits(128))
            out.append(MigDevice(uid, index, gi.profile.name, int(gi.profile.memory_gib * 1024), gi.start))
    return out


class ResourceServer:
    """One gRPC server of the plugin: a resource name with its devices (internal/plugin/server.go
    nvidiaDevicePlugin — upstream starts one per resource, e.g. nvidia.com/gpu and nvidia.com/mig-1g.10gb)."""

    def __init__(self, plugin: "NvidiaDevicePlugin", resource: str, base_ids: list[tuple[str, int]], replicas: int):
        self.plugin, self.resource, self.replicas = plugin, resource, replicas
        self.base_ids = base_ids          # (device id, parent GPU index)
        self.options = plugin.options
        self._stream: Optional[Callable[[Optional[list[Device]]], None]] = None

    @property
    def running(self) -> bool:
        return self.plugin.running

    @property
    def endpoint(self) -> str:
        """internal/plugin/server.go: socket nvidia-<name>.sock, <name> after 'nvidia.com/'."""
        return "nvidia-" + self.resource.split("/", 1)[1] + ".sock"

    def get_device_plugin_options(self) -> DevicePluginOptions:
        return self.options

    def list_and_watch(self, send: Callable[[Optional[list[Device]]], None]) -> None:
        """Open the stream: send the full list now and on every health change."""
        self._stream = send
        send(self.snapshot())

    def snapshot(self) -> list[Device]:
        """The advertised devices: one per device, or ``replicas`` per device sharing its health."""
        health = {d.index: d.health for d in self.plugin.devices}
        numa = self.plugin.numa_of
        if self.replicas == 1:
            return [Device(i, health[g], numa(g), g) for i, g in self.base_ids]
        return [Device(f"{i}{REPLICA_SEPARATOR}{k}", health[g], numa(g), g)
                for i, g in self.base_ids for k in range(self.replicas)]

    def _ids(self) -> set[str]:
        """The IDs snapshot() advertises, without building the devices."""
        if self.replicas == 1:
            return {i for i, _ in self.base_ids}
        return {f"{i}{REPLICA_SEPARATOR}{k}" for i, _ in self.base_ids for k in range(self.replicas)}

    def aligned_allocation_supported(self) -> bool:
        """internal/rm/devices.go ``AlignedAllocationSupported``: every device is a whole GPU (no MIG device)."""
        mig = {m.id for m in self.plugin.mig_devices}
        return not any(i in mig for i, _ in self.base_ids)

    def get_preferred_allocation(self, available: list[str], must_include: list[str], size: int) -> list[str]:
        """internal/rm/nvml_manager.go ``getPreferredAllocation``: when every device of the resource is a whole
        GPU and no ID carries a replica annotation, ``alignedAlloc`` — go-gpuallocator's best-effort policy over
        the board's links (gpusim.node.gpuallocator, with its NVSwitch blind spot), ``available`` in the order
        the kubelet sent it (GPU index order in gpusim); otherwise the shared-devices allocation policy
        (internal/rm/allocate.go, v0.20): ``distributed`` (default) picks the device with the fewest replicas
        allocated, ``packed`` the one with the most; ties go to the device picked least in this call, then the
        lower index. Without a board (a vGPU VM: NVML reports no links) the aligned path degenerates to the
        required devices, then the lowest indexes."""
        annotated = any(REPLICA_SEPARATOR in d for d in available)
        if not self.aligned_allocation_supported() or annotated:
            return self._distributed(available, must_include, size)
        devices = self.plugin.allocator_devices()
        if devices is None:
            order = {i: g for i, g in self.base_ids}
            chosen = list(must_include)
            for dev in sorted(available, key=lambda i: order.get(i, 1 << 30)):
                if len(chosen) >= size:
                    break
                if dev not in chosen:
                    chosen.append(dev)
            return chosen
        return gpuallocator.aligned_alloc(devices, available, must_include, size)

    def _distributed(self, available: list[str], must_include: list[str], size: int) -> list[str]:
        index = {i: (g, k) for k, (i, g) in enumerate(self.base_ids)}
        free: dict[str, list[str]] = {}
        for dev in available:
            free.setdefault(parent_id(dev), []).append(dev)
        allocated = {i: self.replicas - len(free.get(i, [])) for i, _ in self.base_ids}
        chosen = list(must_include)
        picked: dict[str, int] = {}
        candidates = [d for d in available if d not in chosen]
        while len(chosen) < size:
            if not candidates:
                raise ValueError("not enough available devices to satisfy allocation")
            sign = -1 if self.plugin.shared_allocation_policy == "packed" else 1   # packed: most allocated first
            best = min(candidates, key=lambda d: (sign * allocated[parent_id(d)], picked.get(parent_id(d), 0),
                                                  index[parent_id(d)], d))
            chosen.append(best)
            candidates.remove(best)
            allocated[parent_id(best)] += 1
            picked[parent_id(best)] = picked.get(parent_id(best), 0) + 1
        return chosen

    def allocate(self, device_ids: list[str]) -> ContainerAllocateResponse:
        """(*nvidiaDevicePlugin).Allocate with the default envvar device-list strategy: replica
        suffixes are stripped and duplicates dropped (internal/plugin/server.go)."""
        known = self._ids()
        for i in device_ids:
            if i not in known:
                raise ValueError(f'invalid allocation request for "{self.resource}": invalid request: unknown device: {i}')
        cfg = self.plugin.config
        if self.replicas > 1 and len(device_ids) > 1 and cfg.fail_requests_greater_than_one:
            # internal/rm/rm.go ValidateRequest, wrapped by Allocate
            raise ValueError(f'invalid allocation request for "{self.resource}": invalid request: maximum request '
                             f"size for shared resources is 1; found {len(device_ids)}")
        ids = list(dict.fromkeys(parent_id(i) for i in device_ids))
        envs = {"NVIDIA_VISIBLE_DEVICES": ",".join(ids)}
        if cfg.strategy == "mps":   # internal/plugin/mps.go: the client talks to the MPS daemon
            envs["CUDA_MPS_PIPE_DIRECTORY"] = f"/mps/{RESOURCE_NAME}/pipe"
        return ContainerAllocateResponse(envs=envs)

    def pre_start_container(self, device_ids: list[str]) -> None:
        return None

    def resend(self) -> None:
        if self.running and self._stream is not None:
            self._stream(self.snapshot())


class NvidiaDevicePlugin:
    """The plugin on one node. ``devices`` are the physical GPUs. It serves one resource per server:
    ``nvidia.com/gpu`` (or ``nvidia.com/gpu.shared``) for whole GPUs or their time-sliced/MPS replicas,
    the MIG devices as ``nvidia.com/gpu`` (strategy single) or ``nvidia.com/mig-<profile>`` (mixed)."""

    def __init__(self, env: simpy.Environment, node: str, model: GPUModel, uuids: list[str], trace: Trace,
                 pre_start_required: bool = False, config: Optional[Config] = None,
                 mig_strategy: str = "none", mig_devices: Optional[list[MigDevice]] = None,
                 shared_allocation_policy: str = "distributed", board=None):
        self.env, self.node, self.model, self.trace = env, node, model, trace
        self.board = board                  # the node's server graph (gpusim.hardware.topology), None in a VM
        self._numa = hwtopology.gpu_numa(board) if board is not None else {}
        self._allocator_devices: Optional[list] = None
        self.devices = [Device(u, HEALTHY, self._numa.get(i), i) for i, u in enumerate(uuids)]
        self.options = DevicePluginOptions(pre_start_required=pre_start_required)
        self.config = config or plugin_config.default()
        self.mig_strategy = mig_strategy
        self.mig_devices = list(mig_devices or []) if mig_strategy != "none" else []
        self.shared_allocation_policy = shared_allocation_policy   # --shared-devices-allocation-policy
        self.replicas = self.config.replicas_for(RESOURCE_NAME)   # of whole GPUs
        self.running = False
        self.component = f"nvidia-device-plugin/{node}"
        self.servers = self._servers()
        self.resource = next(iter(self.servers)) if self.servers else RESOURCE_NAME

    def _servers(self) -> dict[str, ResourceServer]:
        """internal/rm/device_map.go buildDeviceMap: which devices each resource name serves. Sharing
        (replicas, renaming) applies per resource name, MIG devices included."""
        out: dict[str, ResourceServer] = {}
        cfg = self.config

        def add(base: str, ids: list[tuple[str, int]]) -> None:
            name = cfg.advertised_name(base)
            if name not in out:
                out[name] = ResourceServer(self, name, [], cfg.replicas_for(base))
            out[name].base_ids.extend(ids)

        mig_gpus = {m.index for m in self.mig_devices}
        if self.mig_strategy == "single" and self.mig_devices:
            add(RESOURCE_NAME, [(m.id, m.index) for m in self.mig_devices])
            return out
        whole = [(d.id, d.index) for d in self.devices if d.index not in mig_gpus]
        if whole:
            add(RESOURCE_NAME, whole)
        for m in self.mig_devices:
            add(MIG_RESOURCE_PREFIX + m.profile, [(m.id, m.index)])
        return out

    def gpu_index(self, device_id: str) -> Optional[int]:
        """The physical GPU behind a device ID of any resource this plugin serves (replica or MIG device)."""
        for srv in self.servers.values():
            for i, g in srv.base_ids:
                if i == parent_id(device_id):
                    return g
        return None

    def numa_of(self, index: int) -> Optional[int]:
        """The NUMA node of GPU ``index`` (None: no topology, the kubelet's ``noAffinity``)."""
        return self._numa.get(index)

    def allocator_devices(self) -> Optional[list]:
        """go-gpuallocator's ``NewDevices``: the node's GPUs with their P2P links, built once from the board
        (None without a board)."""
        if self._allocator_devices is None and self.board is not None:
            self._allocator_devices = gpuboard.board_devices(self.board, [d.id for d in self.devices])
        return self._allocator_devices

    def replicas_of(self, device_id: str) -> int:
        """How many containers may share the device (1 unless time-sliced or MPS)."""
        return next((srv.replicas for srv in self.servers.values() if any(i == device_id for i, _ in srv.base_ids)), 1)

    def set_mig_devices(self, strategy: str, devices: list[MigDevice]) -> None:
        """After mig-manager applied a new layout: the plugin restarts with the new device set."""
        self.mig_strategy = strategy
        self.mig_devices = list(devices) if strategy != "none" else []
        self.servers = self._servers()
        self.resource = next(iter(self.servers)) if self.servers else RESOURCE_NAME

    def memory_claims(self, held: dict) -> tuple[list[str], Optional[dict[str, int]]]:
        """The memory domains a container was given (from the kubelet's allocations: resource → (IDs,
        AllocResp)), and per-domain caps when the plugin sets any (None: the domain's own limit)."""
        ids = [i for res in self.servers for i in held.get(res, ([], None))[0]]
        return list(dict.fromkeys(parent_id(i) for i in ids)), None

    def device_memory_mib(self) -> dict[str, tuple[int, int]]:
        """Memory domains: device id → (parent GPU index, MiB). A MIG device is its own domain."""
        mig = {m.id: (m.index, m.memory_mib) for m in self.mig_devices}
        out = {d.id: (d.index, self.model.memory_mib) for d in self.devices if d.index not in {v[0] for v in mig.values()}}
        out.update(mig)
        return out

    # --- lifecycle -------------------------------------------------------------------------
    def start(self, kubelet_dm: Registration) -> None:
        """(*NvidiaDevicePlugin).Start for every resource: serve, then Register with the kubelet."""
        self.running = True
        for d in self.devices:   # a fresh NVML view: XID marks do not survive a restart
            d.health = HEALTHY
        self.trace.add(self.env.now, self.component, "plugin.(*nvidiaDevicePlugin).Start", f"Node {self.node}",
                       devices=len(self.devices), resources=list(self.servers))
        for srv in self.servers.values():
            kubelet_dm.register(srv, RegisterRequest(API_VERSION, srv.endpoint, srv.resource, self.options))

    def stop(self, reason: str) -> None:
        self.running = False
        self.trace.add(self.env.now, self.component, "plugin.(*nvidiaDevicePlugin).Stop", f"Node {self.node}", reason)
        for srv in self.servers.values():
            stream, srv._stream = srv._stream, None
            if stream is not None:
                stream(None)   # the ListAndWatch stream ends

    def break_streams(self) -> None:
        """The kubelet went away: every ListAndWatch stream is gone."""
        for srv in self.servers.values():
            srv._stream = None

    def snapshot(self) -> list[Device]:
        return [d for srv in self.servers.values() for d in srv.snapshot()]

    # --- health -----------------------------------------------------------------------------
    def nvml_lost(self, error: str) -> None:
        """internal/rm/health.go: an NVML error while waiting for events marks every device unhealthy (the
        driver is gone); as for XIDs there is no recovery until the plugin restarts."""
        self.trace.add(self.env.now, self.component, "rm.(*nvmlResourceManager).checkHealth", f"Node {self.node}",
                       f"{error}; marking all devices as unhealthy")
        for d in self.devices:
            d.health = UNHEALTHY
        for srv in self.servers.values():
            srv.resend()

    def xid_event(self, index: int, xid: int) -> bool:
        """internal/rm/health.go checkHealth: a critical XID marks the device Unhealthy (for MIG, every
        MIG device of that GPU, the whole-GPU event case). Returns whether the device changed."""
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
        for srv in self.servers.values():
            if any(g == index for _, g in srv.base_ids):
                srv.resend()
        return True
