"""The same GPU workload under NVIDIA's device plugin and under NVIDIA's DRA driver (course 02-4).

Also (``extended_resource_*``) one pod spec asking ``nvidia.com/gpu: 1`` pinned once to a device-plugin node and
once to a DRA node of one cluster: extended resources backed by DRA (KEP-5004, DRAExtendedResource, beta and on
in 1.36) — on the DRA node the gpu.nvidia.com DeviceClass's ``extendedResourceName: nvidia.com/gpu`` turns the
count into an extended resource claim the DynamicResources plugin allocates.

One node with two H100s; two inference servers that could share a GPU and two trainers that each want a
whole GPU with at least 40Gi. Under the device plugin each pod asks ``nvidia.com/gpu: 1`` (an opaque count:
the servers cannot share, the scheduler cannot say which memory it wants); under DRA (NodePool
``spec.gpu.allocation: dra``) the servers reference one ResourceClaim and the trainers a ResourceClaimTemplate
with a CEL selector over the device's capacity, as examples/dra-gpu.yaml does.
"""
from __future__ import annotations

from typing import Any, Optional

import yaml

from ..api.schema import encode
from ..cluster.simulation import run as _run
from ..views.dra import PREPARE, claim_paths
from .dynamicresources import TracedRun, traced_run

ALLOCATIONS = ("device-plugin", "dra")
SELECTOR = 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0'
_PODS = (("infer-a", "server", "vllm/vllm-openai:latest", "1h", "0s"),
         ("infer-b", "server", "vllm/vllm-openai:latest", "1h", "1m"),
         ("train-0", "trainer", "nvcr.io/nvidia/pytorch:25.01-py3", "30m", "2m"),
         ("train-1", "trainer", "nvcr.io/nvidia/pytorch:25.01-py3", "30m", "3m"))


def allocation_scenario(allocation: str, model: str = "H100-SXM5-80GB", gpus: int = 2) -> str:
    """The workload as scenario YAML under ``allocation`` (``device-plugin`` or ``dra``)."""
    if allocation not in ALLOCATIONS:
        raise ValueError(f"allocation must be one of {', '.join(ALLOCATIONS)}, not {allocation!r}")
    dra = allocation == "dra"
    gpu = {"model": model, "count": gpus, **({"allocation": "dra"} if dra else {})}
    docs: list[dict] = [
        {"apiVersion": "gpusim.io/v1alpha1", "kind": "Simulation", "metadata": {"name": f"gpu-{allocation}"},
         "spec": {"seed": 7}},
        {"apiVersion": "gpusim.io/v1alpha1", "kind": "NodePool", "metadata": {"name": "h100"},
         "spec": {"count": 1, "gpu": gpu}}]
    if dra:
        request = {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}
        docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "shared-gpu"},
                     "spec": {"devices": {"requests": [request]}}})
        docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                     "metadata": {"name": "one-h100"},
                     "spec": {"spec": {"devices": {"requests": [
                         {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com",
                                                     "selectors": [{"cel": {"expression": SELECTOR}}]}}]}}}})
    for name, container, image, duration, at in _PODS:
        c: dict = {"name": container, "image": image}
        spec: dict = {"restartPolicy": "Never", "containers": [c]}
        if dra:
            ref = {"resourceClaimName": "shared-gpu"} if name.startswith("infer") else \
                {"resourceClaimTemplateName": "one-h100"}
            spec["resourceClaims"] = [{"name": "gpu", **ref}]
            c["resources"] = {"claims": [{"name": "gpu"}]}
        else:
            c["resources"] = {"limits": {"nvidia.com/gpu": 1}}
        docs.append({"apiVersion": "v1", "kind": "Pod", "spec": spec, "metadata": {
            "name": name, "annotations": {"gpusim.io/duration": duration, "gpusim.io/submit-at": at}}})
    return yaml.safe_dump_all(docs, sort_keys=False)


def compare_allocation(**kw) -> dict:
    """Run the workload under both allocations: ``{"device-plugin": Result, "dra": Result}``."""
    return {a: _run(text=allocation_scenario(a, **kw)) for a in ALLOCATIONS}


# --- extended resources backed by DRA (KEP-5004) ---------------------------------------------------------------
EXTENDED_PODS = (("on-dp", "h100-dp-0"), ("on-dra", "h100-dra-0"))
DEVICE_PLUGIN_ALLOCATE = "devicemanager.(*ManagerImpl).Allocate"


def extended_resource_scenario(gate: Optional[bool] = None) -> str:
    """Two H100 nodes, h100-dp-0 (NVIDIA device plugin) and h100-dra-0 (NVIDIA DRA driver), and the same pod
    spec (``nvidia.com/gpu: 1``) pinned to each by ``kubernetes.io/hostname``. ``gate`` sets
    DRAExtendedResource (None: the release's default, on in 1.36)."""
    sim: dict = {"seed": 7, **({"featureGates": {"DRAExtendedResource": gate}} if gate is not None else {})}
    docs: list[dict] = [
        {"apiVersion": "gpusim.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "extended-resource"},
         "spec": sim},
        {"apiVersion": "gpusim.io/v1alpha1", "kind": "NodePool", "metadata": {"name": "h100-dp"},
         "spec": {"count": 1, "gpu": {"model": "H100-SXM5-80GB", "count": 2}}},
        {"apiVersion": "gpusim.io/v1alpha1", "kind": "NodePool", "metadata": {"name": "h100-dra"},
         "spec": {"count": 1, "gpu": {"model": "H100-SXM5-80GB", "count": 2, "allocation": "dra"}}}]
    for name, node in EXTENDED_PODS:
        docs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": name, "annotations": {"gpusim.io/duration": "10m"}},
                     "spec": {"restartPolicy": "Never", "nodeSelector": {"kubernetes.io/hostname": node},
                              "containers": [{"name": "trainer", "image": "nvcr.io/nvidia/pytorch:25.01-py3",
                                              "resources": {"requests": {"cpu": "8", "memory": "64Gi"},
                                                            "limits": {"nvidia.com/gpu": 1}}}]}})
    return yaml.safe_dump_all(docs, sort_keys=False)


def compare_extended_resource(gate: Optional[bool] = None) -> TracedRun:
    """Run ``extended_resource_scenario`` with the DynamicResources plugin's calls recorded."""
    return traced_run(text=extended_resource_scenario(gate))


def extended_resource_rows(run: TracedRun) -> list[dict[str, Any]]:
    """Per pod: its node and the node's allocatable ``nvidia.com/gpu``; what the DynamicResources plugin did at
    PreFilter, Filter (the node's claim requests and the devices allocated) and PreBind; the pod's
    ``status.extendedResourceClaimStatus``; what the container got (device plugin env or CDI ids); or why it
    waits."""
    res = run.result
    prepared = {r.object.split("/", 1)[1]: r for r in res.ctx.trace.records if r.function == PREPARE}
    allocated = {r.object.split("/", 1)[1]: r for r in res.ctx.trace.records if r.function == DEVICE_PLUGIN_ALLOCATE}
    paths = claim_paths(res)
    rows = []
    for name, node in EXTENDED_PODS:
        pod = res.api.get("Pod", "default", name)
        alloc = res.api.get("Node", "", node).status.allocatable.get("nvidia.com/gpu", "-")
        calls = {c.point: c for c in run.calls_of(name)}
        ext = pod.status.extended_resource_claim_status
        claim = "-"
        if ext is not None:
            reqs = sorted({(p["request"], p["device"]) for p in paths
                           if p["pod"] == f"default/{name}" and p["claim"] == ext.resource_claim_name})
            claim = f"{ext.resource_claim_name}: " + ", ".join(f"{r} → {d}" for r, d in reqs)
        if name in allocated:
            gets = "NVIDIA_VISIBLE_DEVICES=" + ",".join(allocated[name].details.get("devices", []))
        elif name in prepared:
            gets = "CDI " + ", ".join(prepared[name].details["cdi_devices"].get("trainer", [])) + \
                "; NVIDIA_VISIBLE_DEVICES=void"
        else:
            gets = "-"
        waits = [e.message for e in res.events.log if e.reason == "FailedScheduling" and e.object.name == name]
        rows.append({
            "pod": name, "node": pod.spec.node_name or "-", "allocatable": alloc,
            "preFilter": calls["PreFilter"].code if "PreFilter" in calls else "Skip",
            "filter": (f'{calls["Filter"].code} ' + (",".join(calls["Filter"].devices) or "(nothing from DRA)"))
            if "Filter" in calls else "-",
            "claim": claim,
            "requestMappings": ", ".join(f"{m.container_name}/{m.resource_name} → {m.request_name}"
                                         for m in ext.request_mappings) if ext is not None else "-",
            "container": gets, "waiting": waits[-1] if waits else "-"})
    return rows


def format_extended_resource_comparison(run: TracedRun) -> str:
    """``extended_resource_rows`` with one column per pod."""
    from ..views.kubectl import _table
    rows = extended_resource_rows(run)
    labels = [("node", "NODE"), ("allocatable", "NODE ALLOCATABLE nvidia.com/gpu"),
              ("preFilter", "DynamicResources PreFilter"), ("filter", "DynamicResources Filter (devices)"),
              ("claim", "EXTENDED RESOURCE CLAIM: request → device"),
              ("requestMappings", "status.extendedResourceClaimStatus"), ("container", "CONTAINER GETS"),
              ("waiting", "LAST FailedScheduling")]
    return _table([["", *[r["pod"] for r in rows]]] + [[label, *[str(r[k]) for r in rows]] for k, label in labels])


def extended_resource_claim_status(run: TracedRun, pod: str = "on-dra") -> str:
    """The pod's ``status.extendedResourceClaimStatus`` as ``kubectl get pod -o yaml`` prints it (or "null")."""
    ext = run.result.api.get("Pod", "default", pod).status.extended_resource_claim_status
    return yaml.safe_dump({"extendedResourceClaimStatus": encode(ext) if ext is not None else None},
                          sort_keys=False, allow_unicode=True)
