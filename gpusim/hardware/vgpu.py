"""NVIDIA vGPU for Compute (C-series) types: a VM gets a vGPU with a fixed framebuffer.

Time-sliced types are named ``<board>-<FB GB>C`` (e.g. ``A100-4C``); MIG-backed ones
``<board>-<g>-<FB GB>C``. Maximum instances per GPU as in the GPU Operator's
``default-vgpu-devices-config`` (NVIDIA/gpu-operator assets/state-vgpu-device-manager/0500_configmap.yaml);
the scheduler policies of time-sliced vGPU (Best Effort default, Equal Share, Fixed Share) from NVIDIA's
vGPU documentation. gpusim models the time-sliced types: inside the VM (the Kubernetes node) each
vGPU is a GPU whose memory is the type's framebuffer; memory beyond it fails the process.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .catalog import CATALOG, GPUModel

SCHEDULERS = ("BestEffort", "EqualShare", "FixedShare")   # NVML_VGPU_SCHEDULER_POLICY_* 1, 2, 3

# board prefix → (physical GPU model, {time-sliced type suffix: max per GPU})
TIME_SLICED: dict[str, tuple[str, dict[str, int]]] = {
    "A100": ("A100-SXM4-40GB", {"4C": 10, "5C": 8, "8C": 5, "10C": 4, "20C": 2, "40C": 1}),
    "A100D": ("A100-SXM4-80GB", {"4C": 20, "8C": 10, "10C": 8, "16C": 5, "20C": 4, "40C": 2, "80C": 1}),
    "H100": ("H100-SXM5-80GB", {"4C": 20, "5C": 16, "8C": 10, "10C": 8, "16C": 5, "20C": 4, "40C": 2, "80C": 1}),
    "H200": ("H200-141GB", {"4C": 32, "7C": 20, "8C": 16, "14C": 10, "17C": 8, "28C": 5, "35C": 4, "70C": 2,
                            "141C": 1}),
    "A30": ("A30-24GB", {"4C": 6, "6C": 4, "8C": 3, "12C": 2, "24C": 1}),
}


@dataclass(frozen=True)
class VGPUType:
    name: str            # e.g. "A100D-10C"
    board: str
    physical: GPUModel
    framebuffer_gb: int
    max_per_gpu: int

    @property
    def fraction(self) -> float:
        """The share of the GPU a Fixed Share scheduler guarantees (1 / max instances)."""
        return 1 / self.max_per_gpu


def types_for(model_name: str) -> list[VGPUType]:
    out = []
    for board, (model, types) in TIME_SLICED.items():
        if model == model_name:
            out += [VGPUType(f"{board}-{t}", board, CATALOG[model], int(t[:-1]), n) for t, n in types.items()]
    return out


def vgpu_type(name: str) -> VGPUType:
    board, _, suffix = name.rpartition("-")
    if board in TIME_SLICED and suffix in TIME_SLICED[board][1]:
        model, types = TIME_SLICED[board]
        return VGPUType(name, board, CATALOG[model], int(suffix[:-1]), types[suffix])
    known = [f"{b}-{t}" for b, (_, ts) in TIME_SLICED.items() for t in ts]
    raise KeyError(f'unknown time-sliced vGPU type "{name}"; known: {", ".join(known)}')


def guest_model(t: VGPUType) -> GPUModel:
    """The GPU as the VM sees it: the board's compute, the type's framebuffer, no MIG. The product
    string follows what nvidia-smi shows in a vGPU guest (``GRID <type>``; UNVERIFIED for every driver)."""
    return dataclasses.replace(t.physical, name=t.name, product=f"GRID-{t.name}",
                               memory_mib=t.framebuffer_gb * 1024, mig_capable=False)
