"""GPU catalog: memory, SMs, compute capability, MIG support, NVLink.

Values follow NVIDIA's product specifications; ``product`` is the NVML name as GPU Feature
Discovery writes it into ``nvidia.com/gpu.product`` (spaces → ``-``; k8s-device-plugin
``internal/lm/resource.go``), ``memory_mib`` what GFD writes into ``nvidia.com/gpu.memory``.
``pci_device_id`` is the PCI device ID + vendor ID key that mig-parted's ``device-filter`` matches
(values from the GPU Operator's default MIG ConfigMap, NVIDIA/gpu-operator
``assets/state-mig-manager/0400_configmap.yaml``); empty where the simulator does not need it.
MIG geometry (GPU-instance profiles and placements) lives in :mod:`gpusim.hardware.mig`.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GPUModel:
    name: str              # the name a NodePool uses
    product: str           # nvidia.com/gpu.product
    memory_mib: int        # nvidia.com/gpu.memory
    sms: int
    compute: tuple[int, int]
    mig_capable: bool
    nvlink_generation: int  # 0 = none
    nvlink_links: int
    pci_device_id: str = ""  # mig-parted device-filter key, e.g. "0x20B010DE"

    @property
    def family(self) -> str:
        """GFD's ``nvidia.com/gpu.family`` from the compute capability (internal/lm/resource.go)."""
        major, minor = self.compute
        if major == 7:
            return "volta" if minor < 5 else "turing"
        if major == 8:
            return "ada-lovelace" if minor == 9 else "ampere"
        return {1: "tesla", 2: "fermi", 3: "kepler", 5: "maxwell", 6: "pascal", 9: "hopper",
                10: "blackwell", 12: "blackwell", 13: "rubin"}.get(major, "undefined")


CATALOG: dict[str, GPUModel] = {m.name: m for m in [
    GPUModel("A100-SXM4-40GB", "NVIDIA-A100-SXM4-40GB", 40960, 108, (8, 0), True, 3, 12, "0x20B010DE"),
    GPUModel("A100-SXM4-80GB", "NVIDIA-A100-SXM4-80GB", 81920, 108, (8, 0), True, 3, 12, "0x20B210DE"),
    GPUModel("A30-24GB", "NVIDIA-A30", 24576, 56, (8, 0), True, 3, 4, "0x20B710DE"),
    GPUModel("H100-SXM5-80GB", "NVIDIA-H100-80GB-HBM3", 81559, 132, (9, 0), True, 4, 18, "0x233010DE"),
    GPUModel("H200-141GB", "NVIDIA-H200", 143771, 132, (9, 0), True, 4, 18, "0x233510DE"),
    GPUModel("L40S", "NVIDIA-L40S", 46068, 142, (8, 9), False, 0, 0),
    GPUModel("T4", "Tesla-T4", 15360, 40, (7, 5), False, 0, 0),
    GPUModel("V100-SXM2-32GB", "Tesla-V100-SXM2-32GB", 32768, 80, (7, 0), False, 2, 6),
]}


# GPUs sold only on one board, not as a part a NodePool can put on any server: a pool names the board
# (``spec.gpu.topology``) and the model together. GB200: the Blackwell GPU of a GB200 NVL72 compute tray (4 per tray);
# compute capability 10.0 and NVLink 5 with 18 links (``NV18`` in ``nvidia-smi topo -m``, topology.md §1.4).
# From third-party observations, not an NVIDIA spec sheet: ``nvidia-smi --query-gpu=name,memory.total`` prints
# "NVIDIA GB200, 189471 MiB" (several public benchmark logs), GFD's product label is NVIDIA-GB200 (a deployment
# guide's node selector), and benchmark notes give 152 SMs. gpusim has no MIG profile table for Blackwell, so the
# model is not MIG-capable here.
BOARD_ONLY_MODELS: dict[str, tuple[GPUModel, str]] = {
    "GB200": (GPUModel("GB200", "NVIDIA-GB200", 189471, 152, (10, 0), False, 5, 18), "gb200-nvl72"),
}


def gpu_model(name: str) -> GPUModel:
    """Look up a model; KeyError lists the known names."""
    try:
        return CATALOG[name]
    except KeyError:
        raise KeyError(f'unknown GPU model "{name}"; known models: {", ".join(sorted(CATALOG))}') from None


# The NVML device names (``nvidia-smi -L``, DCGM's ``modelName`` label) GFD's product labels come from, and the
# boards' maximum power (NVIDIA's product specifications; SXM parts, the PCIe T4 and L40S).
NVML_NAMES: dict[str, str] = {
    "A100-SXM4-40GB": "NVIDIA A100-SXM4-40GB", "A100-SXM4-80GB": "NVIDIA A100-SXM4-80GB", "A30-24GB": "NVIDIA A30",
    "H100-SXM5-80GB": "NVIDIA H100 80GB HBM3", "H200-141GB": "NVIDIA H200", "L40S": "NVIDIA L40S", "T4": "Tesla T4",
    "V100-SXM2-32GB": "Tesla V100-SXM2-32GB"}
TDP_WATTS: dict[str, int] = {"A100-SXM4-40GB": 400, "A100-SXM4-80GB": 400, "A30-24GB": 165, "H100-SXM5-80GB": 700,
                             "H200-141GB": 700, "L40S": 350, "T4": 70, "V100-SXM2-32GB": 300}


def nvml_name(m: GPUModel) -> str:
    return NVML_NAMES.get(m.name, m.product.replace("-", " ", 1))
