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
from typing import TYPE_CHECKING, Any, Optional

import yaml

from ..api.hami import (ANN_ALLOCATED, ANN_BIND_PHASE, ANN_GPU_POLICY, ANN_NODE_POLICY, ANN_REGISTER,  # noqa: F401
                        ANN_TO_ALLOCATE, CONFIGMAP_KEY, CONFIGMAP_NAME, CONFIGMAP_NAMESPACE, DEFAULT_SPLIT_COUNT,
                        DEVICE_TYPE, HAMI_RESOURCES, NODE_LABEL, NODE_LABEL_VALUE, RESOURCE_CORES, RESOURCE_MEM,
                        RESOURCE_MEM_PCT, Request, container_request, decode_pod_devices, encode_pod_devices,
                        pod_usage, validate_container, validate_pod_spec)
from .deviceplugin import RESOURCE_NAME, ContainerAllocateResponse, NvidiaDevicePlugin, ResourceServer
from .plugin_config import default as default_plugin_config

if TYPE_CHECKING:
    from ..controlplane.context import Context

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
