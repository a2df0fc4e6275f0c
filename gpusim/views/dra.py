"""Dynamic Resource Allocation views: a claim's path from DeviceClass to the CDI id its container got.

Reads a finished run: the DeviceClass and ResourceSlice objects left in the store and the kubelet's
``dra.(*ManagerImpl).PrepareResources`` trace records (pkg/kubelet/cm/dra/manager.go PrepareResources), which
carry each prepared claim's allocation results (request, driver, pool, device) and the CDI device ids the
driver returned in NodePrepareResourcesResponse (kubelet/pkg/apis/dra/v1 api.proto ``Device.cdi_device_ids``).
A claim built from a template is deleted with its pod, so the trace is where its allocation survives.
"""
from __future__ import annotations

from typing import Any

PREPARE = "dra.(*ManagerImpl).PrepareResources"


def _selectors(dc) -> str:
    return " && ".join(s.cel.expression for s in dc.spec.selectors if s.cel is not None) or "-"


def _slice_device(result, driver: str, pool: str, device: str):
    for sl in result.api.list("ResourceSlice"):
        if sl.spec.driver == driver and sl.spec.pool.name == pool:
            for d in sl.spec.devices:
                if d.name == device:
                    return sl, d
    return None, None


def claim_paths(result) -> list[dict[str, Any]]:
    """One row per (pod, claim, allocated device): DeviceClass and its CEL selectors, ResourceSlice, pool, node,
    the device's attributes and capacity, and the CDI ids the kubelet handed to the container runtime."""
    classes = {dc.metadata.name: dc for dc in result.api.list("DeviceClass")}
    rows = []
    for rec in result.ctx.trace.records:
        if rec.function != PREPARE or rec.result != "Success":
            continue
        pod = rec.object.split(" ", 1)[1]
        for c in rec.details.get("claims", []):
            dc = classes.get(c["deviceClassName"])
            sl, dev = _slice_device(result, c["driver"], c["pool"], c["device"])
            rows.append({
                "time": rec.time, "pod": pod, "claim": c["claim"], "request": c["request"],
                "deviceClass": c["deviceClassName"], "selectors": _selectors(dc) if dc is not None else "-",
                "resourceSlice": sl.metadata.name if sl is not None else "-",
                "node": sl.spec.node_name if sl is not None else "-", "driver": c["driver"], "pool": c["pool"],
                "device": c["device"],
                "attributes": {k: a.value() for k, a in sorted(dev.attributes.items())} if dev is not None else {},
                "capacity": {k: str(v.value) for k, v in sorted(dev.capacity.items())} if dev is not None else {},
                "cdiDeviceIDs": list(c["cdiDeviceIDs"]),
            })
    return rows


def claim_path_table(result, attributes: tuple[str, ...] = ("productName", "uuid")) -> str:
    """``claim_paths`` as a kubectl-style text table, with the chosen device attributes as columns."""
    from .kubectl import _table
    head = ["TIME", "POD", "CLAIM", "DEVICECLASS", "RESOURCESLICE", "NODE", "DEVICE"]
    rows = [head + [a.upper() for a in attributes] + ["CDI"]]
    for r in claim_paths(result):
        rows.append([f'{r["time"]:g}', r["pod"], r["claim"], r["deviceClass"], r["resourceSlice"], r["node"],
                     r["device"]] + [str(r["attributes"].get(a, "-")) for a in attributes]
                    + [", ".join(r["cdiDeviceIDs"]) or "-"])
    return _table(rows)


def plot_claim_paths(result, ax=None):
    """Each claim as a path DeviceClass → ResourceSlice → device → CDI id, one row per pod."""
    import matplotlib.pyplot as plt
    rows = claim_paths(result)
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 0.6 * max(len(rows), 1) + 1.2))
    stages = ["DeviceClass", "ResourceSlice", "Device", "CDI id"]
    for y, r in enumerate(rows):
        labels = [r["deviceClass"], r["resourceSlice"], f'{r["node"]}/{r["device"]}',
                  ", ".join(r["cdiDeviceIDs"]) or "-"]
        ax.plot(range(len(stages)), [y] * len(stages), "-o", color=f"C{y % 10}")
        for x, text in enumerate(labels):
            ax.annotate(text, (x, y), textcoords="offset points", xytext=(0, 6), ha="center", fontsize=7)
    ax.set_xticks(range(len(stages)), stages)
    ax.set_yticks(range(len(rows)), [f'{r["pod"]} ({r["claim"]})' for r in rows])
    ax.set_xlim(-0.5, len(stages) - 0.5)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_title("ResourceClaim path: DeviceClass → ResourceSlice → device → CDI")
    return ax
