"""HAMi (Project-HAMi/HAMi) fractional GPU sharing on a node: requests, bookkeeping annotations, and
the HAMi device plugin (node-side reference §9.2, §9.3).

Enabling it. A GPU node labelled ``gpu=on`` (the label the HAMi Helm chart's device-plugin DaemonSet
selects on) runs HAMi's device plugin instead of NVIDIA's. The plugin's settings come from an optional
ConfigMap ``hami-device-plugin`` in ``kube-system``, key ``config.yaml`` (gpusim's simplified form
of the chart's device config)::

    deviceSplitCount: 10        # vGPUs advertised per physical GPU (HAMi default 10)
    deviceMemoryScaling: 1      # registered memory = physical × scaling (>1 oversubscribes)

Requests (container ``limits``; HAMi's ``GenerateResourceRequests`` in pkg/device/nvidia/device.go):

- ``nvidia.com/gpu: N`` — N vGPUs, each on a different physical GPU;
- ``nvidia.com/gpumem: <MiB>`` or ``nvidia.com/gpumem-percentage: <0..100>`` — memory per GPU; neither
  means 100 %;
- ``nvidia.com/gpucores: <0..100>`` — compute %, values above 100 are clamped to 100. Without it, a
  container that also sets no memory (or 100 %) gets ``gpucores: 100`` from HAMi's webhook
  (``defaultExclusiveCoreIfNeeded``), i.e. an exclusive card.

The scheduler plugin (``gpusim.scheduler.plugins.hami``) picks the GPUs and writes them on the pod as
``hami.io/vgpu-devices-to-allocate`` / ``hami.io/vgpu-devices-allocated`` (one ``uuid,NVIDIA,mem,cores:``
entry per device, ``;`` after each container) with ``hami.io/bind-phase: allocating``. At ``Allocate``
the HAMi device plugin ignores the kubelet's device IDs, takes the next container's entry from the
pending pod's annotation (as upstream pkg/device-plugin/nvidiadevice/internal/plugin/server.go does with
util.GetPendingPod) and returns ``NVIDIA_VISIBLE_DEVICES`` plus the HAMi-core limits
``CUDA_DEVICE_MEMORY_LIMIT_<i>=<MiB>m`` and ``CUDA_DEVICE_SM_LIMIT=<cores>``. The kubelet's memory model
(``gpusim.node.sharing``, mode ``hami``) enforces the memory limit per container.

gpusim differences: no mutating webhook (a request must name ``nvidia.com/gpu`` itself; upstream's
webhook would add ``defaultGPUNum``), no node lock, no MIG/MPS operating modes, no quotas, no UUID or
type selectors.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Optional

import yaml

from ..api.quantity import parse_quantity
from .deviceplugin import RESOURCE_NAME, ContainerAllocateResponse, NvidiaDevicePlugin, ResourceServer
from .plugin_config import default as default_plugin_config

if TYPE_CHECKING:
    from ..controlplane.context import Context

NODE_LABEL, NODE_LABEL_VALUE = "gpu", "on"
CONFIGMAP_NAME, CONFIGMAP_NAMESPACE, CONFIGMAP_KEY = "hami-device-plugin", "kube-system", "config.yaml"
RESOURCE_MEM = "nvidia.com/gpumem"
RESOURCE_MEM_PCT = "nvidia.com/gpumem-percentage"
RESOURCE_CORES = "nvidia.com/gpucores"
HAMI_RESOURCES = (RESOURCE_MEM, RESOURCE_MEM_PCT, RESOURCE_CORES)
DEFAULT_SPLIT_COUNT = 10
DEVICE_TYPE = "NVIDIA"            # pkg/device/nvidia/device.go NvidiaGPUDevice
# pkg/device/nvidia/device.go (InitNvidiaDevice, RegisterAnnos) and pkg/util (bind phase)
ANN_TO_ALLOCATE = "hami.io/vgpu-devices-to-allocate"
ANN_ALLOCATED = "hami.io/vgpu-devices-allocated"
ANN_REGISTER = "hami.io/node-nvidia-register"
ANN_BIND_PHASE = "hami.io/bind-phase"
ANN_NODE_POLICY = "hami.io/node-scheduler-policy"
ANN_GPU_POLICY = "hami.io/gpu-scheduler-policy"


@dataclass
class HamiConfig:
    split_count: int = DEFAULT_SPLIT_COUNT
    memory_scaling: float = 1.0


def parse_config(text: str) -> HamiConfig:
    """The ConfigMap's ``config.yaml``. Raises ValueError with a readable message."""
    data = yaml.safe_load(text) or {}
    if not isinstance(data, dict):
        raise ValueError("must be a mapping with deviceSplitCount and/or deviceMemoryScaling")
    unknown = sorted(set(data) - {"deviceSplitCount", "deviceMemoryScaling"})
    if unknown:
        raise ValueError(f'unknown field "{unknown[0]}"')
    split = data.get("deviceSplitCount", DEFAULT_SPLIT_COUNT)
    scale = data.get("deviceMemoryScaling", 1)
    if not isinstance(split, int) or isinstance(split, bool) or split < 1:
        raise ValueError(f"deviceSplitCount: Invalid value: {split!r}: must be an integer >= 1")
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or scale <= 0:
        raise ValueError(f"deviceMemoryScaling: Invalid value: {scale!r}: must be a number > 0")
    return HamiConfig(split, float(scale))


@dataclass(frozen=True)
class Request:
    """device.ContainerDeviceRequest: ``mem_pct`` is 101 when unset (upstream's sentinel)."""

    nums: int
    mem: int
    mem_pct: int
    cores: int

    def mem_for(self, total_mib: int) -> int:
        """Fit's memreq: MiB, or percentage of the card (integer arithmetic as upstream)."""
        if self.mem > 0:
            return self.mem
        if self.mem_pct != 101:
            return total_mib * self.mem_pct // 100
        return 0


def _limit(container: Any, name: str) -> Optional[Fraction]:
    res = container.resources
    v = res.limits.get(name, res.requests.get(name))
    return None if v is None else parse_quantity(v)


def container_request(container: Any) -> Optional[Request]:
    """The container's HAMi request after the webhook's defaulting, or None without nvidia.com/gpu."""
    n = _limit(container, RESOURCE_NAME)
    if n is None or n == 0:
        return None
    mem = _limit(container, RESOURCE_MEM)
    pct = _limit(container, RESOURCE_MEM_PCT)
    cores = _limit(container, RESOURCE_CORES)
    mem_i = int(mem) if mem is not None else 0
    pct_i = int(pct) if pct is not None else 101
    if pct_i == 101 and mem_i == 0:
        pct_i = 100
    if cores is None:   # webhook defaultExclusiveCoreIfNeeded
        cores_i = 100 if (pct is not None and int(pct) == 100) or (pct is None and mem is None) else 0
    else:
        cores_i = min(int(cores), 100)   # Fit: "core limit can't exceed 100" → clamped
    return Request(int(n), mem_i, pct_i, cores_i)


def validate_container(container: Any, path: str) -> list[tuple[str, str]]:
    """Field errors for HAMi resources (gpusim has no webhook to fill in nvidia.com/gpu)."""
    errs: list[tuple[str, str]] = []
    named = [r for r in HAMI_RESOURCES if _limit(container, r) is not None]
    if not named:
        return errs
    if not _limit(container, RESOURCE_NAME):
        errs.append((f"{path}.resources.limits[{RESOURCE_NAME}]", f"Required value: {named[0]} needs "
                     f"{RESOURCE_NAME} (the number of vGPUs); HAMi's webhook would add defaultGPUNum, gpusim has none"))
    pct = _limit(container, RESOURCE_MEM_PCT)
    if pct is not None and (pct.denominator != 1 or not 0 <= pct <= 100):
        errs.append((f"{path}.resources.limits[{RESOURCE_MEM_PCT}]",
                     f'Invalid value: "{pct}": must be an integer between 0 and 100'))
    mem = _limit(container, RESOURCE_MEM)
    if mem is not None and pct is not None:
        errs.append((f"{path}.resources.limits[{RESOURCE_MEM_PCT}]",
                     f"Forbidden: set either {RESOURCE_MEM} or {RESOURCE_MEM_PCT}, not both"))
    cores = _limit(container, RESOURCE_CORES)
    if cores is not None and cores.denominator != 1:
        errs.append((f"{path}.resources.limits[{RESOURCE_CORES}]", f'Invalid value: "{cores}": must be an integer'))
    return errs


def validate_pod_spec(spec: Any, path: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for kind, cs in (("initContainers", spec.init_containers), ("containers", spec.containers)):
        for i, c in enumerate(cs):
            out += validate_container(c, f"{path}.{kind}[{i}]")
    return out


# --- annotation codec (pkg/device: EncodeContainerDevices / EncodePodSingleDevice) -------------------
def encode_pod_devices(containers: list[list[tuple[str, int, int]]]) -> str:
    """[[(uuid, mem MiB, cores), ...] per container] → ``uuid,NVIDIA,mem,cores:`` entries, ``;`` each."""
    return "".join("".join(f"{u},{DEVICE_TYPE},{m},{c}:" for u, m, c in devs) + ";" for devs in containers)


def decode_pod_devices(value: str) -> list[list[tuple[str, int, int]]]:
    out = []
    for part in value.split(";")[:-1] if value.endswith(";") else value.split(";"):
        devs = []
        for entry in part.split(":"):
            if not entry:
                continue
            uuid, _typ, mem, cores = entry.split(",")
            devs.append((uuid, int(mem), int(cores)))
        out.append(devs)
    return out


def pod_usage(pod: Any) -> list[tuple[str, int, int]]:
    """Every device entry the pod holds (from hami.io/vgpu-devices-allocated)."""
    val = pod.metadata.annotations.get(ANN_ALLOCATED)
    return [d for devs in decode_pod_devices(val) for d in devs] if val else []


# --- the device plugin ----------------------------------------------------------------------------
class HamiResourceServer(ResourceServer):
    """``nvidia.com/gpu`` with deviceSplitCount devices per GPU; Allocate follows the pod annotation."""

    def get_preferred_allocation(self, available: list[str], must_include: list[str], size: int) -> list[str]:
        return list(must_include) + [d for d in available if d not in must_include][:size - len(must_include)]

    def allocate(self, device_ids: list[str]) -> ContainerAllocateResponse:
        plugin: HamiDevicePlugin = self.plugin   # type: ignore[assignment]
        pod = plugin.pending_pod()
        if pod is None:
            raise ValueError("failed to find pending pod on this node (no pod with "
                             f"{ANN_BIND_PHASE}=allocating)")
        ann = pod.metadata.annotations
        containers = decode_pod_devices(ann.get(ANN_TO_ALLOCATE, ""))
        idx = next((i for i, devs in enumerate(containers) if devs), None)
        if idx is None:
            raise ValueError(f"pod {pod.metadata.namespace}/{pod.metadata.name}: no devices left in {ANN_TO_ALLOCATE}")
        devs = containers[idx]
        containers[idx] = []   # EraseNextDeviceTypeFromAnnotation
        ann[ANN_TO_ALLOCATE] = encode_pod_devices(containers)
        if not any(containers):
            ann[ANN_BIND_PHASE] = "success"
        envs = {"NVIDIA_VISIBLE_DEVICES": ",".join(u for u, _, _ in devs)}
        for i, (_u, mem, _c) in enumerate(devs):
            envs[f"CUDA_DEVICE_MEMORY_LIMIT_{i}"] = f"{mem}m"
        envs["CUDA_DEVICE_SM_LIMIT"] = str(devs[0][2]) if devs else "0"
        if plugin.hami.memory_scaling > 1:
            envs["CUDA_OVERSUBSCRIBE"] = "true"
        plugin.ctx.api.update(pod)
        return ContainerAllocateResponse(envs=envs)


class HamiDevicePlugin(NvidiaDevicePlugin):
    """HAMi's device plugin on one node: registers its GPUs in the node annotation
    ``hami.io/node-nvidia-register`` (id, index, count = deviceSplitCount, devmem = MiB × scaling,
    devcore 100, type, numa, health) and serves ``nvidia.com/gpu`` × deviceSplitCount."""


    def memory_claims(self, held: dict) -> tuple[list[str], Optional[dict[str, int]]]:
        """HAMi decides the GPUs and per-container caps itself: read them from its Allocate response
        (NVIDIA_VISIBLE_DEVICES / CUDA_DEVICE_MEMORY_LIMIT_<i>), not from the kubelet's device IDs."""
        limits: dict[str, int] = {}
        for res in self.servers:
            limits.update(container_limits((held.get(res, ([], None))[1] or {}).get("envs", {})))
        return list(limits), (limits or None)

    def __init__(self, ctx: "Context", node: str, model, uuids: list[str], hami: HamiConfig):
        self.ctx, self.hami = ctx, hami
        cfg = default_plugin_config()
        super().__init__(ctx.env, node, model, uuids, ctx.trace, config=cfg)
        self.replicas = hami.split_count
        self.servers = {RESOURCE_NAME: HamiResourceServer(self, RESOURCE_NAME,
                                                          [(d.id, d.index) for d in self.devices], hami.split_count)}
        self.resource = RESOURCE_NAME
        self.component = f"hami-device-plugin/{node}"

    def _servers(self):   # the base constructor's call; replaced right after
        return {}

    def registered_devices(self) -> list[dict[str, Any]]:
        mem = int(self.model.memory_mib * self.hami.memory_scaling)
        return [{"id": d.id, "index": d.index, "count": self.hami.split_count, "devmem": mem, "devcore": 100,
                 "type": f"{DEVICE_TYPE}-{self.model.product}", "numa": 0, "health": d.health == "Healthy"}
                for d in self.devices]

    def start(self, kubelet_dm) -> None:
        super().start(kubelet_dm)
        node = self.ctx.api.get("Node", "", self.node)
        if node is not None:
            node.metadata.annotations[ANN_REGISTER] = json.dumps(self.registered_devices(), separators=(",", ":"))
            self.ctx.api.update(node)

    def pending_pod(self) -> Any:
        pods = self.ctx.api.list("Pod", lambda p: p.spec.node_name == self.node
                                 and p.metadata.annotations.get(ANN_BIND_PHASE) == "allocating")
        return min(pods, key=lambda p: (p.metadata.creation_timestamp, p.metadata.name), default=None)


def container_limits(envs: dict[str, str]) -> dict[str, int]:
    """GPU uuid → MiB limit from a HAMi Allocate response (what HAMi-core reads)."""
    uuids = [u for u in envs.get("NVIDIA_VISIBLE_DEVICES", "").split(",") if u]
    out = {}
    for i, u in enumerate(uuids):
        v = envs.get(f"CUDA_DEVICE_MEMORY_LIMIT_{i}")
        if v:
            out[u] = int(v.rstrip("m"))
    return out
