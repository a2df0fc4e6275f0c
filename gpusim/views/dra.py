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


def _what_scheduler_saw(result, pod, paths: dict) -> str:
    """A container's ``nvidia.com/gpu`` count (device plugin) or the claimed devices with attributes (DRA)."""
    counts = [str(c.resources.limits.get("nvidia.com/gpu")) for c in pod.spec.containers
              if c.resources and c.resources.limits and "nvidia.com/gpu" in c.resources.limits]
    if counts:
        return "nvidia.com/gpu: " + "+".join(counts)
    key = f"{pod.metadata.namespace}/{pod.metadata.name}"
    r = paths.get(key)
    if r is None:
        return f"{len(pod.spec.resource_claims)} ResourceClaim(s), not allocated"
    attrs = r["attributes"]
    return (f'claim {r["claim"]}: {r["device"]} ({attrs.get("productName", "-")}, '
            f'memory {r["capacity"].get("memory", "-")})')


def allocation_rows(result) -> list[dict[str, Any]]:
    """Per pod: what the scheduler matched (count or devices with attributes), node, GPU UUIDs, and the first
    FailedScheduling message while it waited (upstream's ``0/N nodes are available: ...``)."""
    paths = {}
    for r in claim_paths(result):
        paths.setdefault(r["pod"], r)
    waits = {}
    for e in result.events.log:
        if e.reason == "FailedScheduling":
            waits.setdefault(f"{e.object.namespace}/{e.object.name}", e.message)
    rows = []
    for p in sorted(result.pods(), key=lambda p: p.metadata.name):
        key = f"{p.metadata.namespace}/{p.metadata.name}"
        gpus = sorted({h.device for h in result.ctx.holdings if (h.namespace, h.pod) == (p.metadata.namespace,
                                                                                          p.metadata.name)})
        rows.append({"pod": p.metadata.name, "saw": _what_scheduler_saw(result, p, paths),
                     "node": p.spec.node_name or "-", "gpus": gpus, "pending": waits.get(key, "")})
    return rows


def format_allocation_comparison(runs: dict) -> str:
    """``{label: Result}`` side by side: one block per run of ``allocation_rows``."""
    from .kubectl import _table
    out = []
    for label, result in runs.items():
        rows = [["POD", "SCHEDULER SAW", "NODE", "GPU", "FIRST PENDING MESSAGE"]]
        for r in allocation_rows(result):
            rows.append([r["pod"], r["saw"], r["node"], ", ".join(g[:12] for g in r["gpus"]) or "-",
                         r["pending"] or "-"])
        out.append(f"== {label} ==\n" + _table(rows))
    return "\n\n".join(out)


def plot_allocation_comparison(runs: dict, axes=None):
    """Which GPU each pod ran on, one panel per run (x: simulated minutes)."""
    import matplotlib.pyplot as plt
    if axes is None:
        _, axes = plt.subplots(1, len(runs), figsize=(6 * len(runs), 2.8), sharex=True,
                                 constrained_layout=True)
    for ax, (label, result) in zip(list(axes), runs.items()):
        gpus = sorted({h.device for h in result.ctx.holdings})
        placed: list = []
        for h in sorted(result.ctx.holdings, key=lambda h: (h.start, h.pod)):
            end = result.end if h.end is None else h.end
            # pods holding the same GPU at once (a shared claim) stack within the GPU's row
            k = sum(1 for d, e in placed if d == h.device and e > h.start)
            placed.append((h.device, end))
            y = gpus.index(h.device) - 0.2 + 0.4 * k
            ax.barh(y, (end - h.start) / 60, left=h.start / 60, height=0.35, alpha=0.6)
            ax.annotate(h.pod, (h.start / 60 + 1, y), fontsize=7, va="center")
        ax.set_yticks(range(len(gpus)), [g[:12] for g in gpus])
        ax.set_xlabel("time (min)")
        ax.set_title(f"{label}: pods per GPU")
    return axes
