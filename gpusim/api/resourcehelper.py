"""Pod resource arithmetic (mirrors k8s.io/component-helpers/resource/helpers.go and
pkg/apis/core/v1/helper: IsExtendedResourceName, IsNativeResource)."""
from __future__ import annotations

from fractions import Fraction

from .core_v1 import Container, Pod
from .quantity import parse_quantity

RESOURCE_DEFAULT_NAMESPACE_PREFIX = "kubernetes.io/"
REQUESTS_PREFIX = "requests."


def is_native_resource(name: str) -> bool:
    """Names without a domain, or in kubernetes.io, are native (helper.IsNativeResource)."""
    return "/" not in name or RESOURCE_DEFAULT_NAMESPACE_PREFIX in name


def is_extended_resource_name(name: str) -> bool:
    """helper.IsExtendedResourceName: fully qualified, outside kubernetes.io, not 'requests.'-prefixed."""
    if is_native_resource(name) or name.startswith(REQUESTS_PREFIX):
        return False
    return True


def is_overcommit_allowed(name: str) -> bool:
    """helper.IsOvercommitAllowed: native, non-hugepages resources may be overcommitted."""
    return is_native_resource(name) and not name.startswith("hugepages-")


def container_requests(c: Container) -> dict[str, Fraction]:
    """Effective requests of a container: requests, defaulted from limits where absent."""
    out = {k: parse_quantity(v) for k, v in c.resources.limits.items()}
    out.update({k: parse_quantity(v) for k, v in c.resources.requests.items()})
    return out


def pod_requests(pod: Pod) -> dict[str, Fraction]:
    """resource.PodRequests: sum over app containers, at least the largest init container.
    A pod's resources do not change after creation (no in-place resize here), so the sum is kept."""
    cached = pod.__dict__.get("_requests")
    if cached is not None:
        return dict(cached)
    total: dict[str, Fraction] = {}
    for c in pod.spec.containers:
        for k, v in container_requests(c).items():
            total[k] = total.get(k, Fraction(0)) + v
    for c in pod.spec.init_containers:
        for k, v in container_requests(c).items():
            if v > total.get(k, Fraction(0)):
                total[k] = v
    pod.__dict__["_requests"] = total
    return dict(total)
