"""resource.PodRequests: rows ported from kubernetes/kubernetes
staging/src/k8s.io/component-helpers/resource/helpers_test.go (release-1.36): TestPodRequestsAndLimits,
TestPodRequestsAndLimitsWithoutOverhead, TestPodResourceRequests, TestPodLevelResourceRequests,
TestAggregateContainerRequestsAndLimits, TestIsPodLevelResourcesSet (requests side).

Adapted: upstream builds pods without the apiserver's defaulting, so a container with only a limit has no
request there; gpusim's ``container_requests`` applies SetDefaults_Container (request defaults to limit), as
every component sees the pod after admission. Rows that depend on an undefaulted limit-only container
("just-limit-no-overhead", "one container with limits", ...) are left out; rows with ``UseStatusResources``
(in-place resize, which gpusim does not model) are left out too.
"""
from __future__ import annotations

from fractions import Fraction

import pytest

from gpusim.api.core_v1 import Container, Pod, PodSpec, ResourceRequirements
from gpusim.api.quantity import parse_quantity
from gpusim.componenthelpers.resource import aggregate_container_requests, is_pod_level_requests_set, pod_requests


def c(requests=None, limits=None, sidecar=False, name="c"):
    return Container(name=name, image="x", restart_policy="Always" if sidecar else None,
                     resources=ResourceRequirements(requests=dict(requests or {}), limits=dict(limits or {})))


def pod(containers=(), init=(), overhead=None, resources=None) -> Pod:
    spec = PodSpec(containers=list(containers), init_containers=list(init), overhead=overhead,
                   resources=ResourceRequirements(**resources) if resources is not None else None)
    return Pod(spec=spec)


def q(d: dict) -> dict[str, Fraction]:
    return {k: parse_quantity(v) for k, v in d.items()}


def get_pod(cpu_req="", cpu_lim="", mem_req="", mem_lim="", cpu_ovh="", mem_ovh="") -> Pod:
    """helpers_test.go getPod: one container and one init container with the same resources."""
    req = {k: v for k, v in (("cpu", cpu_req), ("memory", mem_req)) if v}
    lim = {k: v for k, v in (("cpu", cpu_lim), ("memory", mem_lim)) if v}
    ovh = {k: v for k, v in (("cpu", cpu_ovh), ("memory", mem_ovh)) if v}
    return pod([c(req, lim, name="foo")], [c(req, lim, name="init-foo")], overhead=ovh)


TWO = [c({"cpu": "1", "memory": "5"}, {"cpu": "2", "memory": "10"}, name="foobar"),
       c({"cpu": "4", "memory": "12"}, {"cpu": "8", "memory": "24"}, name="foobar2")]
INITS = [c({"cpu": "1", "memory": "5"}, {"cpu": "1", "memory": "5"}, name="small-init"),
         c({"cpu": "40", "memory": "120"}, {"cpu": "80", "memory": "240"}, name="big-init")]
A = True   # restartPolicy: Always

POD_REQUESTS_ROWS = [
    # TestPodRequestsAndLimits (PodResourcesOptions{}), requests side
    ("just-overhead", get_pod(cpu_ovh="5", mem_ovh="5"), {}, {"cpu": "5", "memory": "5"}),
    ("req-and-overhead", get_pod(cpu_req="1", mem_req="10", cpu_ovh="5", mem_ovh="5"), {}, {"cpu": "6", "memory": "15"}),
    ("all-req-lim-and-overhead", get_pod("1", "2", "10", "12", "5", "5"), {}, {"cpu": "6", "memory": "15"}),
    ("req-some-lim-and-overhead", get_pod("1", "2", "10", "", "5", "5"), {}, {"cpu": "6", "memory": "15"}),
    # TestPodRequestsAndLimitsWithoutOverhead (ExcludeOverhead: true)
    ("two container no overhead - should just be sum of containers", pod(TWO), {"exclude_overhead": True},
     {"cpu": "5", "memory": "17"}),
    ("two container with overhead - shouldn't consider overhead", pod(TWO, overhead={"cpu": "3", "memory": "8"}),
     {"exclude_overhead": True}, {"cpu": "5", "memory": "17"}),
    ("two container with overhead, massive init - should just be the largest init",
     pod(TWO, INITS, overhead={"cpu": "3", "memory": "8"}), {"exclude_overhead": True}, {"cpu": "40", "memory": "120"}),
    # TestPodResourceRequests
    ("nil options, larger init container", pod([c({"cpu": "1"})], [c({"cpu": "4"})]), {}, {"cpu": "4"}),
    ("nil options, larger containers", pod([c({"cpu": "2"}), c({"cpu": "3"})], [c({"cpu": "2"})]), {}, {"cpu": "5"}),
    ("pod overhead excluded", pod([c({"cpu": "2"}), c({"cpu": "3"})], [c({"cpu": "2"})], overhead={"cpu": "1"}),
     {"exclude_overhead": True}, {"cpu": "5"}),
    ("pod overhead included", pod([c({"cpu": "2"}), c({"cpu": "3"})], [c({"cpu": "2"}, {"cpu": "2"})],
                                  overhead={"cpu": "1", "memory": "1Gi"}), {}, {"cpu": "6", "memory": "1Gi"}),
    ("restartable init container", pod([c({"cpu": "1"})], [c({"cpu": "1"}, sidecar=A)]), {}, {"cpu": "2"}),
    ("multiple restartable init containers",
     pod([c({"cpu": "1"})], [c({"cpu": "5"}), c({"cpu": "1"}, sidecar=A), c({"cpu": "2"}, sidecar=A),
                             c({"cpu": "3"}, sidecar=A)]), {}, {"cpu": "7"}),
    ("multiple restartable and regular init containers",
     pod([c({"cpu": "1"})], [c({"cpu": "5"}), c({"cpu": "1"}, sidecar=A), c({"cpu": "2"}, sidecar=A),
                             c({"cpu": "5"}), c({"cpu": "3"}, sidecar=A)]), {}, {"cpu": "8"}),
    ("restartable-init, init and regular",
     pod([c({"cpu": "100"})], [c({"cpu": "10"}, sidecar=A), c({"cpu": "200"})]), {}, {"cpu": "210"}),
    # TestPodLevelResourceRequests
    ("nil", pod(resources={}), {}, {}),
    ("pod level memory resource with SkipPodLevelResources true", pod(resources={"requests": {"memory": "2Mi"}}),
     {"skip_pod_level": True}, {}),
    ("pod level memory resource with SkipPodLevelResources false", pod(resources={"requests": {"memory": "2Mi"}}),
     {}, {"memory": "2Mi"}),
    ("pod level memory and container level cpu resources with SkipPodLevelResources false",
     pod([c({"cpu": "2m"})], resources={"requests": {"memory": "2Mi"}}), {}, {"memory": "2Mi", "cpu": "2m"}),
    ("pod level unsupported resources set at both pod-level and container-level with SkipPodLevelResources false",
     pod([c({"storage": "3Mi"})], resources={"requests": {"storage": "2Mi"}}), {}, {"storage": "3Mi"}),
    ("pod level unsupported resources set at pod-level with SkipPodLevelResources false",
     pod([c({"memory": "3Mi"})], resources={"requests": {"storage": "2Mi"}}), {}, {"memory": "3Mi"}),
    ("only container level resources set with SkipPodLevelResources false",
     pod([c({"memory": "3Mi", "cpu": "2m"})]), {}, {"memory": "3Mi", "cpu": "2m"}),
    ("both container-level and pod-level resources set with SkipPodLevelResources false",
     pod([c({"memory": "3Mi", "cpu": "2m"})], resources={"requests": {"memory": "6Mi", "cpu": "8m"}}), {},
     {"memory": "6Mi", "cpu": "8m"}),
    ("container-level resources and init container set with SkipPodLevelResources false",
     pod([c({"memory": "3Mi", "cpu": "2m"})], [c({"memory": "5Mi", "cpu": "4m"})]), {}, {"memory": "5Mi", "cpu": "4m"}),
    ("container-level resources and init container set with SkipPodLevelResources true",
     pod([c({"memory": "3Mi", "cpu": "2m"})], [c({"memory": "5Mi", "cpu": "4m"})]), {"skip_pod_level": True},
     {"memory": "5Mi", "cpu": "4m"}),
    ("container-level resources and sidecar container set with SkipPodLevelResources false",
     pod([c({"memory": "3Mi", "cpu": "2m"})], [c({"memory": "5Mi", "cpu": "4m"}, sidecar=A)]), {},
     {"memory": "8Mi", "cpu": "6m"}),
    ("container-level resources, init and sidecar container set with SkipPodLevelResources false",
     pod([c({"memory": "3Mi", "cpu": "2m"})], [c({"memory": "5Mi", "cpu": "4m"}, sidecar=A),
                                               c({"memory": "6Mi", "cpu": "8m"})]), {},
     {"memory": "11Mi", "cpu": "12m"}),
    ("pod-level resources, container-level resources, init and sidecar container set with SkipPodLevelResources false",
     pod([c({"memory": "3Mi", "cpu": "2m"})], [c({"memory": "5Mi", "cpu": "4m"}, sidecar=A),
                                               c({"memory": "6Mi", "cpu": "8m"})],
         resources={"requests": {"memory": "15Mi", "cpu": "18m"}}), {}, {"memory": "15Mi", "cpu": "18m"}),
]


@pytest.mark.parametrize("name, p, opts, want", POD_REQUESTS_ROWS, ids=[r[0] for r in POD_REQUESTS_ROWS])
def test_pod_requests(name, p, opts, want):
    assert pod_requests(p, **opts) == q(want)


AGGREGATE_ROWS = [
    # TestAggregateContainerRequestsAndLimits, requests side (rows whose containers set requests)
    ("one container with requests", pod([c({"cpu": "9"})]), {"cpu": "9"}),
    ("two containers with requests", pod([c({"cpu": "9"}), c({"cpu": "9"})]), {"cpu": "18"}),
    ("regular and init containers with requests", pod([c({"cpu": "9"})], [c({"cpu": "9"})]), {"cpu": "9"}),
    ("regular, init and sidecar containers with requests",
     pod([c({"cpu": "9"})], [c({"cpu": "8"}, sidecar=A), c({"cpu": "6"})]), {"cpu": "17"}),
]


@pytest.mark.parametrize("name, p, want", AGGREGATE_ROWS, ids=[r[0] for r in AGGREGATE_ROWS])
def test_aggregate_container_requests(name, p, want):
    assert aggregate_container_requests(p) == q(want)


POD_LEVEL_SET_ROWS = [
    # TestIsPodLevelResourcesSet, the requests rows (IsPodLevelRequestsSet)
    ("nil resources struct", None, False),
    ("empty resources struct", {}, False),
    ("only unsupported resource requests set", {"requests": {"ephemeral-storage": "1Mi"}}, False),
    ("unsupported and suported resources requests set", {"requests": {"ephemeral-storage": "1Mi", "cpu": "1m"}}, True),
]


@pytest.mark.parametrize("name, resources, want", POD_LEVEL_SET_ROWS, ids=[r[0] for r in POD_LEVEL_SET_ROWS])
def test_is_pod_level_requests_set(name, resources, want):
    assert is_pod_level_requests_set(pod([c()], resources=resources)) is want


def test_pod_level_limit_defaults_the_pod_level_request():
    """pkg/apis/core/v1/defaults.go defaultPodRequests: a pod-level limit without a request defaults the
    request to the aggregated container requests when containers set them, else to the limit."""
    assert pod_requests(pod([c({"cpu": "1"})], resources={"limits": {"cpu": "4", "memory": "1Gi"}})) == \
        q({"cpu": "1", "memory": "1Gi"})
