"""Extended resources backed by DRA (KEP-5004, feature gate DRAExtendedResource: alpha 1.34, beta and on in 1.36):
the mapping from an extended resource name to the DeviceClass that backs it (mirrors kubernetes
pkg/scheduler/framework/plugins/dynamicresources/extended/cache.go ``ExtendedResourceCache`` behind the DRA
manager's ``DeviceClassResolver().GetDeviceClass``) and the per-container device requests of the special claim
(extendeddynamicresources.go ``createRequestsAndMappings`` / ``createResourceRequestAndMappings``).

- Every DeviceClass backs its implicit name ``deviceclass.resource.kubernetes.io/<class>``, and its
  ``spec.extendedResourceName`` when set. Two classes naming the same extended resource: the one created later
  wins, at the same creation time the lexicographically first name (the field's contract in
  staging/src/k8s.io/api/resource/v1/types.go ``DeviceClassSpec.ExtendedResourceName``).
- Requests: one per container and mapped resource, named ``container-<i>-request-<j>``, ``i`` the container's
  index in initContainers + containers, ``j`` the resource's index among the container's requested resource
  names sorted (cpu and memory included); ``ExactCount`` with ``count`` = the container's request, device class =
  the mapped class. A regular init container (not a sidecar) first reuses the requests of the long-lived
  containers after it, and the regular init containers share the largest of their own requests. Requests are
  sorted by name; mappings list the long-lived containers first, per resource in name order.
"""
from __future__ import annotations

from typing import Any, Iterable, Optional

from ...api.core_v1 import ContainerExtendedResourceRequest
from ...api.gpusim_v1alpha1 import gate_default
from ...api.resource_k8s_io_v1 import (DEVICE_ALLOCATION_MODE_EXACT_COUNT, DeviceClass, DeviceRequest,
                                       ExactDeviceRequest)
from ...api.v1helper import RESOURCE_DEVICE_CLASS_PREFIX, is_dra_extended_resource_name
from ...componenthelpers.resource import container_requests

GATE = "DRAExtendedResource"


def enabled(handle: Any) -> bool:
    """The scheduler's DRAExtendedResource gate: as the Simulation sets it, else the release's default."""
    gates = getattr(handle, "feature_gates", None) or {}
    if GATE in gates:
        return bool(gates[GATE])
    return gate_default(GATE, getattr(handle, "k8s_version", None) or (1, 36))


def device_class_mapping(classes: Iterable[DeviceClass]) -> dict[str, DeviceClass]:
    """Extended resource name → the DeviceClass backing it (explicit and implicit names)."""
    ordered = sorted(classes, key=lambda c: c.metadata.name)
    ordered = sorted(ordered, key=lambda c: c.metadata.creation_timestamp or 0, reverse=True)
    out: dict[str, DeviceClass] = {}
    for c in ordered:   # newest first, name order within one creation time: the first one seen wins
        if c.spec.extended_resource_name:
            out.setdefault(c.spec.extended_resource_name, c)
    for c in ordered:
        out.setdefault(RESOURCE_DEVICE_CLASS_PREFIX + c.metadata.name, c)
    return out


def mapped_requests(requests: dict[str, int], mapping: dict[str, DeviceClass]) -> dict[str, int]:
    """hasDeviceClassMappedExtendedResource: the pod's requested (non-zero) resources a DeviceClass backs."""
    return {r: q for r, q in requests.items() if q and is_dra_extended_resource_name(r) and r in mapping}


def _container_request(index: int, container: Any, resource: str, class_name: str,
                       reusable: list[Optional[DeviceRequest]]
                       ) -> tuple[Optional[DeviceRequest], list[ContainerExtendedResourceRequest]]:
    """createResourceRequestAndMappings for one container and resource."""
    reqs = container_requests(container)   # requests defaulted from limits, as the apiserver does
    if resource not in reqs:
        return None, []
    want = reqs[resource]
    if want.denominator != 1 or want == 0:
        return None, []
    want = int(want)
    mappings, total = [], 0
    for r in reusable:
        if r is None:
            continue
        total += r.exactly.count
        mappings.append(ContainerExtendedResourceRequest(container.name, resource, r.name))
        if total >= want:
            return None, mappings
    name = f"container-{index}-request-{sorted(reqs).index(resource)}"
    req = DeviceRequest(name=name, exactly=ExactDeviceRequest(
        device_class_name=class_name, allocation_mode=DEVICE_ALLOCATION_MODE_EXACT_COUNT, count=want - total))
    mappings.append(ContainerExtendedResourceRequest(container.name, resource, name))
    return req, mappings


def requests_and_mappings(pod: Any, resources: Iterable[str], mapping: dict[str, DeviceClass]
                          ) -> tuple[list[DeviceRequest], list[ContainerExtendedResourceRequest]]:
    """createRequestsAndMappings: the special claim's device requests for ``resources`` on one node, and the
    container → request mappings written to ``status.extendedResourceClaimStatus``."""
    containers = [*pod.spec.init_containers, *pod.spec.containers]
    n_init = len(pod.spec.init_containers)
    short = [i for i, c in enumerate(containers) if i < n_init and c.restart_policy != "Always"]
    long = [i for i in range(len(containers)) if i not in short]
    requests: list[DeviceRequest] = []
    mappings: list[ContainerExtendedResourceRequest] = []
    for resource in sorted(resources):
        cls = mapping.get(resource)
        if cls is None:
            continue
        long_reqs: list[Optional[DeviceRequest]] = [None] * len(containers)
        long_maps: list[ContainerExtendedResourceRequest] = []
        for i in long:
            req, maps = _container_request(i, containers[i], resource, cls.metadata.name, [])
            long_reqs[i] = req
            long_maps += maps
        biggest: Optional[DeviceRequest] = None
        short_names: set[str] = set()
        short_maps: list[ContainerExtendedResourceRequest] = []
        for i in short:
            req, maps = _container_request(i, containers[i], resource, cls.metadata.name, long_reqs[i:])
            if req is not None:
                short_names.add(req.name)
                if biggest is None or biggest.exactly.count < req.exactly.count:
                    biggest = req
            short_maps += maps
        if biggest is not None and len(short_names) > 1:
            short_names.discard(biggest.name)
            for m in short_maps:
                if m.request_name in short_names:
                    m.request_name = biggest.name
        if biggest is not None:
            requests.append(biggest)
        requests += [r for r in long_reqs if r is not None]
        mappings += long_maps + short_maps
    requests.sort(key=lambda r: r.name)
    return requests, mappings
