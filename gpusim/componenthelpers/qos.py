"""A pod's QoS class (mirrors kubernetes pkg/apis/core/v1/helper/qos/qos.go ``GetPodQOS`` /
``ComputePodQOS``), used by the kubelet's resource managers and by scheduler plugins such as
NodeResourceTopologyMatch.

Only cpu and memory count. Guaranteed: every container (init and app) has cpu and memory limits and
the summed requests equal the summed limits; BestEffort: no cpu/memory request or limit at all;
Burstable otherwise. Requests are taken after the API server's defaulting (a missing request defaults
to the limit), since that is what the kubelet and the scheduler see. ``status.qosClass``, when set,
wins (GetPodQOS).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any

from ..api.quantity import parse_quantity
from .resource import container_requests

GUARANTEED, BURSTABLE, BEST_EFFORT = "Guaranteed", "Burstable", "BestEffort"
SUPPORTED_QOS_COMPUTE_RESOURCES = ("cpu", "memory")


def compute_pod_qos(pod: Any) -> str:
    """ComputePodQOS."""
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    guaranteed = True
    for c in list(pod.spec.init_containers) + list(pod.spec.containers):
        for name, q in container_requests(c).items():
            if name in SUPPORTED_QOS_COMPUTE_RESOURCES and q > 0:
                requests[name] = requests.get(name, Fraction(0)) + q
        found = set()
        for name, value in c.resources.limits.items():
            q = parse_quantity(value)
            if name in SUPPORTED_QOS_COMPUTE_RESOURCES and q > 0:
                found.add(name)
                limits[name] = limits.get(name, Fraction(0)) + q
        if not found >= set(SUPPORTED_QOS_COMPUTE_RESOURCES):
            guaranteed = False
    if not requests and not limits:
        return BEST_EFFORT
    if guaranteed:
        for name, req in requests.items():
            if limits.get(name) != req:
                guaranteed = False
                break
    if guaranteed and len(requests) == len(limits):
        return GUARANTEED
    return BURSTABLE


def get_pod_qos(pod: Any) -> str:
    """GetPodQOS: ``status.qosClass`` if set, else computed."""
    return pod.status.qos_class or compute_pod_qos(pod)
