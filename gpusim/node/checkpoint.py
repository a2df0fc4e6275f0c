"""The device manager checkpoint (mirrors kubernetes pkg/kubelet/cm/devicemanager/checkpoint).

Kept on the node's "disk" (a dict that survives a kubelet restart) as the JSON shape of
/var/lib/kubelet/device-plugins/kubelet_internal_checkpoint: PodDeviceEntries and the healthy
RegisteredDevices. DeviceIDs map NUMA node → IDs, with "-1" for "no topology".
"""
from __future__ import annotations

from typing import Any, Optional

CHECKPOINT_FILE = "kubelet_internal_checkpoint"   # devicemanager/types.go kubeletDeviceManagerCheckpoint


NODE_WITHOUT_TOPOLOGY = "-1"   # devicemanager nodeWithoutTopology


def devices_per_numa(ids: list[str], topology: Optional[dict[str, Optional[list[int]]]]) -> dict[str, list[str]]:
    """checkpoint.DevicesPerNUMA as podDevices.insert builds it: each device under every NUMA node of its
    topology, or under ``-1`` without one; keys in the order first met (devices keep their order)."""
    out: dict[str, list[str]] = {}
    for d in ids:
        nodes = (topology or {}).get(d)
        for n in (nodes if nodes else [NODE_WITHOUT_TOPOLOGY]):
            out.setdefault(str(n), []).append(d)
    return out


def write(disk: dict[str, Any], pod_devices: dict, healthy: dict[str, set[str]],
          topology: Optional[dict[str, dict[str, Optional[list[int]]]]] = None) -> None:
    """writeCheckpoint: ``topology`` is the device manager's allDevices (resource → device → NUMA nodes)."""
    entries = []
    for pod_uid in sorted(pod_devices):
        for cname in sorted(pod_devices[pod_uid]):
            for res in sorted(pod_devices[pod_uid][cname]):
                ids, resp = pod_devices[pod_uid][cname][res]
                entries.append({"PodUID": pod_uid, "ContainerName": cname, "ResourceName": res,
                                "DeviceIDs": devices_per_numa(list(ids), (topology or {}).get(res)),
                                "AllocResp": {k: dict(v) if isinstance(v, dict) else v for k, v in resp.items()}})
    disk[CHECKPOINT_FILE] = {"Data": {"PodDeviceEntries": entries,
                                      "RegisteredDevices": {r: sorted(ids) for r, ids in sorted(healthy.items())}}}


def read(disk: dict[str, Any]) -> tuple[dict, list[str]]:
    """→ (pod_devices, registered resource names). Missing file → empty."""
    data = disk.get(CHECKPOINT_FILE, {}).get("Data", {})
    pod_devices: dict = {}
    for e in data.get("PodDeviceEntries", []):
        ids = list(dict.fromkeys(i for group in e["DeviceIDs"].values() for i in group))
        pod_devices.setdefault(e["PodUID"], {}).setdefault(e["ContainerName"], {})[e["ResourceName"]] = (ids, e["AllocResp"])
    return pod_devices, list(data.get("RegisteredDevices", {}))


def pod_device_entries(disk: dict[str, Any]) -> list[dict]:
    """The checkpoint's PodDeviceEntries as written (``[]`` before the first write)."""
    return list(disk.get(CHECKPOINT_FILE, {}).get("Data", {}).get("PodDeviceEntries", []))
