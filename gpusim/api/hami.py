"""HAMi's shared device API (mirrors Project-HAMi/HAMi pkg/device/nvidia/device.go and pkg/util/types.go):
the resource names, the annotations through which the HAMi scheduler and the HAMi device plugin talk, a
container's request as the webhook defaults it, and the codec of the device annotations.

Upstream the scheduler extender and the device plugin both import ``pkg/device``; here
``gpusim.scheduler.plugins.hami`` and ``gpusim.node.hami`` both import this module and not each other.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

from .core_v1 import NVIDIA_GPU as RESOURCE_NAME
from .quantity import parse_quantity

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
