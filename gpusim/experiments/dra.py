"""The same GPU workload under NVIDIA's device plugin and under NVIDIA's DRA driver (course 02-4).

One node with two H100s; two inference servers that could share a GPU and two trainers that each want a
whole GPU with at least 40Gi. Under the device plugin each pod asks ``nvidia.com/gpu: 1`` (an opaque count:
the servers cannot share, the scheduler cannot say which memory it wants); under DRA (NodePool
``spec.gpu.allocation: dra``) the servers reference one ResourceClaim and the trainers a ResourceClaimTemplate
with a CEL selector over the device's capacity, as examples/dra-gpu.yaml does.
"""
from __future__ import annotations

import yaml

from ..cluster.simulation import run as _run

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
