"""Pod resource requests (mirrors k8s.io/component-helpers/resource/helpers.go: PodRequests,
AggregateContainerRequests, IsPodLevelRequestsSet), and the integer units schedulers count in
(framework.Resource in kube-scheduler, api.Resource in Volcano).

Kubernetes 1.36: sidecar containers (init containers with ``restartPolicy: Always``, KEP-753) add to the
app containers and stay running while later init containers run; pod-level ``spec.resources`` requests
(PodLevelResources, on by default since 1.34) replace the container aggregate for cpu, memory and
hugepages; ``spec.overhead`` (RuntimeClass overhead) is added on top.
"""
from __future__ import annotations

from fractions import Fraction
from types import MappingProxyType
from typing import Mapping, Optional

from ..api.core_v1 import Container, Pod
from ..api.quantity import parse_quantity

ResourceList = dict[str, Fraction]
CONTAINER_RESTART_POLICY_ALWAYS = "Always"
RESOURCE_HUGEPAGES_PREFIX = "hugepages-"
SUPPORTED_POD_LEVEL_RESOURCES = ("cpu", "memory")    # helpers.go supportedPodLevelResources (+ hugepages-*)


def to_units(name: str, q: Fraction) -> int:
    """framework.Resource units: milliCPU for cpu, whole units (bytes, devices) otherwise; fractions
    round up as resource.Quantity's MilliValue/Value do."""
    num = q.numerator * 1000 if name == "cpu" else q.numerator   # integer arithmetic: ceil(q × 1000) exactly
    return -((-num) // q.denominator)


def container_requests(c: Container) -> ResourceList:
    """Effective requests of a container: requests, defaulted from limits where absent (the apiserver's
    SetDefaults_Container does this before any component sees the pod). A container's resources do not
    change after creation (no in-place resize here), and the pods of one template share their containers,
    so the result is kept on the container."""
    cached = c.__dict__.get("_requests")
    if cached is None:
        cached = {k: parse_quantity(v) for k, v in c.resources.limits.items()}
        cached.update({k: parse_quantity(v) for k, v in c.resources.requests.items()})
        c.__dict__["_requests"] = cached
    return dict(cached)


def is_restartable_init_container(c: Container) -> bool:
    """A sidecar: an init container with ``restartPolicy: Always``."""
    return c.restart_policy == CONTAINER_RESTART_POLICY_ALWAYS


def is_supported_pod_level_resource(name: str) -> bool:
    """IsSupportedPodLevelResource: cpu, memory and hugepages-*."""
    return name in SUPPORTED_POD_LEVEL_RESOURCES or name.startswith(RESOURCE_HUGEPAGES_PREFIX)


def _add(into: ResourceList, other: Mapping[str, Fraction]) -> None:
    for k, v in other.items():
        if k in into:
            into[k] = into[k] + v
        else:
            into[k] = v if type(v) is Fraction else Fraction(0) + v   # 0 + v, without the addition


def _max(into: ResourceList, other: Mapping[str, Fraction]) -> None:
    for k, v in other.items():
        if k not in into or v > into[k]:
            into[k] = v


def _apply_non_missing(reqs: ResourceList, non_missing: Mapping[str, Fraction]) -> ResourceList:
    """applyNonMissing: a resource absent from the container's requests takes the given value; an
    explicit request, even 0, is kept."""
    out = dict(reqs)
    for k, v in non_missing.items():
        if k not in reqs:
            out[k] = v
    return out


def aggregate_container_requests(pod: Pod, non_missing: Optional[Mapping[str, Fraction]] = None) -> ResourceList:
    """AggregateContainerRequests: app containers plus sidecars, at least the largest init container,
    where an init container's use is its own request plus every sidecar started before it."""
    reqs: ResourceList = {}
    for c in pod.spec.containers:
        cr = container_requests(c)
        _add(reqs, _apply_non_missing(cr, non_missing) if non_missing else cr)
    sidecars: ResourceList = {}
    init_peak: ResourceList = {}
    for c in pod.spec.init_containers:
        cr = container_requests(c)
        if non_missing:
            cr = _apply_non_missing(cr, non_missing)
        if is_restartable_init_container(c):
            _add(reqs, cr)
            _add(sidecars, cr)
            use = dict(sidecars)
        else:
            use = dict(cr)
            _add(use, sidecars)
        _max(init_peak, use)
    _max(reqs, init_peak)
    return reqs


def pod_level_requests(pod: Pod) -> ResourceList:
    """The pod's ``spec.resources.requests`` for supported resources, after the apiserver's pod-level
    defaulting (pkg/apis/core/v1/defaults.go defaultPodRequests): a resource with only a pod-level limit
    requests the aggregated container requests when containers set it, else the limit."""
    res = pod.spec.resources
    if res is None:
        return {}
    out = {k: parse_quantity(v) for k, v in res.requests.items() if is_supported_pod_level_resource(k)}
    missing = [k for k in res.limits if is_supported_pod_level_resource(k) and k not in out]
    if missing:
        agg = aggregate_container_requests(pod)
        for k in missing:
            out[k] = agg[k] if k in agg else parse_quantity(res.limits[k])
    return out


def is_pod_level_requests_set(pod: Pod) -> bool:
    """IsPodLevelRequestsSet (after defaulting): some supported resource has a pod-level request."""
    return bool(pod_level_requests(pod))


def pod_overhead(pod: Pod) -> ResourceList:
    """``spec.overhead`` (set by the RuntimeClass admission plugin from RuntimeClass.overhead.podFixed)."""
    return {k: parse_quantity(v) for k, v in (pod.spec.overhead or {}).items()}


def pod_requests(pod: Pod, non_missing: Optional[Mapping[str, Fraction]] = None,
                 skip_pod_level: bool = False, exclude_overhead: bool = False) -> ResourceList:
    """resource.PodRequests(pod, PodResourcesOptions{NonMissingContainerRequests, SkipPodLevelResources,
    ExcludeOverhead}). A pod's resources do not change after creation (no in-place resize here), so the
    default-options result is kept on the pod."""
    default = non_missing is None and not skip_pod_level and not exclude_overhead
    if default:
        cached = pod.__dict__.get("_requests")
        if cached is not None:
            return dict(cached)
    total = aggregate_container_requests(pod, non_missing)
    if not skip_pod_level:
        total.update(pod_level_requests(pod))
    if not exclude_overhead:
        _add(total, pod_overhead(pod))
    if default:
        pod.__dict__["_requests"] = total
        return dict(total)
    return total


def pod_request_units(pod: Pod) -> Mapping[str, int]:
    """PodRequests in framework.Resource units (:func:`to_units`: milliCPU, bytes, devices), the integers
    kube-scheduler's NodeInfo and the kubelet's admission (GeneralPredicates → noderesources.Fits) compare.
    Kept on the pod as a read-only mapping, like :func:`pod_requests`."""
    cached = pod.__dict__.get("_request_units")
    if cached is None:
        cached = pod.__dict__["_request_units"] = MappingProxyType(
            {k: to_units(k, v) for k, v in pod_requests(pod).items()})
    return cached


def containers_request_all(pod: Pod, names: tuple[str, ...]) -> bool:
    """The pod has no init containers and every container requests each of ``names`` (so
    NonMissingContainerRequests defaults for them change nothing)."""
    if pod.spec.init_containers:
        return False
    for c in pod.spec.containers:
        container_requests(c)            # fills the container's cache
        reqs = c.__dict__["_requests"]
        if any(n not in reqs for n in names):
            return False
    return True
