"""Pod resource requests (mirrors k8s.io/component-helpers/resource/helpers.go: PodRequests), and the
integer units schedulers count in (framework.Resource in kube-scheduler, api.Resource in Volcano)."""
from __future__ import annotations

from fractions import Fraction

from ..api.core_v1 import Container, Pod
from ..api.quantity import parse_quantity


def to_units(name: str, q: Fraction) -> int:
    """framework.Resource units: milliCPU for cpu, whole units (bytes, devices) otherwise; fractions
    round up as resource.Quantity's MilliValue/Value do."""
    v = q * 1000 if name == "cpu" else q
    return -((-v.numerator) // v.denominator)


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
