"""NVIDIA XID errors gpusim models (NVIDIA's XID catalog, docs.nvidia.com/deploy/xid-errors; the reference
sheet dra-and-operations.md §3(g)): the mnemonic, what it means, the catalog's immediate action, and the text the
kernel driver logs (``NVRM: Xid (PCI:<bus id>): <xid>, pid=..., name=..., <message>``)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Xid:
    number: int
    mnemonic: str
    meaning: str
    action: str


CATALOG: dict[int, Xid] = {x.number: x for x in (
    Xid(13, "ROBUST_CHANNEL_GR_EXCEPTION", "Graphics Engine Exception", "RESTART_APP"),
    Xid(31, "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT", "GPU memory page fault", "RESTART_APP"),
    Xid(43, "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR", "GPU stopped processing", "IGNORE"),
    Xid(45, "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL", "Preemptive cleanup, due to previous errors", "WORKFLOW_XID_45"),
    Xid(48, "ROBUST_CHANNEL_GPU_ECC_DBE", "Double Bit ECC Error", "WORKFLOW_XID_48"),
    Xid(63, "INFOROM_PAGE_RETIREMENT_EVENT", "ECC page retirement or row remapping recording event", "IGNORE"),
    Xid(64, "INFOROM_PAGE_RETIREMENT_FAILURE", "ECC page retirement or row remapper recording failure", "RESET_GPU"),
    Xid(68, "NVDEC0_EXCEPTION", "Video processor exception", "RESTART_APP"),
    Xid(74, "NVLINK_ERROR", "NVLink Error", "WORKFLOW_NVLINK_ERR"),
    Xid(79, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", "GPU has fallen off the bus", "RESTART_BM"),
    Xid(94, "ROBUST_CHANNEL_CONTAINED_ERROR", "Contained ECC error", "RESTART_APP"),
    Xid(95, "ROBUST_CHANNEL_UNCONTAINED_ERROR", "Uncontained ECC error", "RESET_GPU"),
    Xid(109, "CTXSW_TIMEOUT", "Context Switch Timeout Error", "RESTART_APP"),
)}


def bus(index: int) -> int:
    """The PCI bus gpusim gives GPU ``index`` of a node (an HGX board's GPUs sit on distinct buses)."""
    return 0x18 + 0x10 * index


def pci_bus_id(index: int) -> str:
    """As NVML prints it (and DCGM's ``pci_bus_id`` label): ``00000000:18:00.0``."""
    return f"00000000:{bus(index):02X}:00.0"


def kernel_log(xid: int, index: int) -> str:
    """The line ``dmesg`` shows for an XID on GPU ``index``, e.g. ``NVRM: Xid (PCI:0000:18:00): 79, ...``."""
    x = CATALOG.get(xid)
    return f"NVRM: Xid (PCI:0000:{bus(index):02x}:00): {xid}, pid='<unknown>', name=<unknown>, " + (
        x.meaning if x else "Unknown Error")
