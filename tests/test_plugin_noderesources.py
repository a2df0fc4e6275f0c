"""NodeResourcesFit and NodeResourcesBalancedAllocation: rows ported from kubernetes/kubernetes
pkg/scheduler/framework/plugins/noderesources (release-1.36): fit_test.go TestEnoughRequests and
balanced_allocation_test.go TestNodeResourcesBalancedAllocation; plus the resource accounting they rest
on (framework/types.go calculateResource, resource_allocation.go calculatePodResourceRequest): sidecars,
pod-level resources and the per-container non-zero defaults."""
from __future__ import annotations

import itertools

import pytest

from gpusim.api.core_v1 import Container, Node, NodeStatus, Pod, PodSpec, ResourceRequirements
from gpusim.api.meta import ObjectMeta
from gpusim.scheduler.framework import (DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST, Code, NodeInfo,
                                        PodInfo)
from gpusim.scheduler.plugins.noderesources import BalancedAllocation, NodeResourcesFit

_uid = itertools.count()
EXT_A = "example.com/aaa"
HUGE_A = "hugepages-2Mi"


def res(cpu_m=None, mem=None, ext=None, **extra) -> dict:
    """framework.Resource{MilliCPU, Memory, ScalarResources{extendedResourceA}} as a container's requests."""
    out = {}
    if cpu_m is not None:
        out["cpu"] = f"{cpu_m}m"
    if mem is not None:
        out["memory"] = str(mem)
    if ext is not None:
        out[EXT_A] = str(ext)
    out.update(extra)
    return out


def ctr(req: dict, sidecar: bool = False) -> Container:
    return Container(name=f"c{next(_uid)}", image="x", restart_policy="Always" if sidecar else None,
                     resources=ResourceRequirements(requests=dict(req)))


def make_pod(*usage: dict, init=(), node="", pod_resources=None, sidecars=()) -> Pod:
    """newResourcePod / newResourceInitPod: one container per usage, one init container per ``init``."""
    n = next(_uid)
    spec = PodSpec(containers=[ctr(u) for u in usage],
                   init_containers=[ctr(u, sidecar=True) for u in sidecars] + [ctr(u) for u in init],
                   node_name=node,
                   resources=ResourceRequirements(requests=pod_resources) if pod_resources else None)
    return Pod(metadata=ObjectMeta(name=f"p{n}", uid=f"uid-{n}"), spec=spec)


def node(name: str, allocatable: dict) -> Node:
    return Node(metadata=ObjectMeta(name=name), status=NodeStatus(capacity=dict(allocatable),
                                                                   allocatable=dict(allocatable)))


def node_info(n: Node, *pods: Pod) -> NodeInfo:
    ni = NodeInfo(n)
    for p in pods:
        ni.add_pod(PodInfo(p))
    return ni


# fit_test.go makeAllocatableResources(10, 20, 32, 5, 20, 5)
ENOUGH_ALLOC = {"cpu": "10m", "memory": "20", "pods": "32", EXT_A: "5", "ephemeral-storage": "20", HUGE_A: "5"}
R = res

ENOUGH_REQUESTS_ROWS = [
    ("no resources requested always fits", make_pod(), make_pod(R(10, 20)), []),
    ("too many resources fails", make_pod(R(1, 1)), make_pod(R(10, 20)), ["Insufficient cpu", "Insufficient memory"]),
    ("too many resources fails due to init container cpu", make_pod(R(1, 1), init=[R(3, 1)]), make_pod(R(8, 19)),
     ["Insufficient cpu"]),
    ("too many resources fails due to highest init container cpu", make_pod(R(1, 1), init=[R(3, 1), R(2, 1)]),
     make_pod(R(8, 19)), ["Insufficient cpu"]),
    ("too many resources fails due to init container memory", make_pod(R(1, 1), init=[R(1, 3)]), make_pod(R(9, 19)),
     ["Insufficient memory"]),
    ("too many resources fails due to highest init container memory", make_pod(R(1, 1), init=[R(1, 3), R(1, 2)]),
     make_pod(R(9, 19)), ["Insufficient memory"]),
    ("init container fits because it's the max, not sum, of containers and init containers",
     make_pod(R(1, 1), init=[R(1, 1)]), make_pod(R(9, 19)), []),
    ("multiple init containers fit because it's the max, not sum, of containers and init containers",
     make_pod(R(1, 1), init=[R(1, 1), R(1, 1)]), make_pod(R(9, 19)), []),
    ("both resources fit", make_pod(R(1, 1)), make_pod(R(5, 5)), []),
    ("one resource memory fits", make_pod(R(2, 1)), make_pod(R(9, 5)), ["Insufficient cpu"]),
    ("one resource cpu fits", make_pod(R(1, 2)), make_pod(R(5, 19)), ["Insufficient memory"]),
    ("equal edge case", make_pod(R(5, 1)), make_pod(R(5, 19)), []),
    ("equal edge case for init container", make_pod(R(4, 1), init=[R(5, 1)]), make_pod(R(5, 19)), []),
    ("extended resource fits", make_pod(R(ext=1)), make_pod(R()), []),
    ("extended resource fits for init container", make_pod(R(), init=[R(ext=1)]), make_pod(R()), []),
    ("extended resource capacity enforced", make_pod(R(1, 1, 10)), make_pod(R(0, 0, 0)), [f"Insufficient {EXT_A}"]),
    ("extended resource capacity enforced for init container", make_pod(R(), init=[R(1, 1, 10)]),
     make_pod(R(0, 0, 0)), [f"Insufficient {EXT_A}"]),
    ("extended resource allocatable enforced", make_pod(R(1, 1, 1)), make_pod(R(0, 0, 5)), [f"Insufficient {EXT_A}"]),
    ("extended resource allocatable enforced for init container", make_pod(R(), init=[R(1, 1, 1)]),
     make_pod(R(0, 0, 5)), [f"Insufficient {EXT_A}"]),
    ("extended resource allocatable enforced for multiple containers", make_pod(R(1, 1, 3), R(1, 1, 3)),
     make_pod(R(0, 0, 2)), [f"Insufficient {EXT_A}"]),
    ("extended resource allocatable admits multiple init containers", make_pod(R(), init=[R(1, 1, 3), R(1, 1, 3)]),
     make_pod(R(0, 0, 2)), []),
    # gpusim rows (KEP-753 sidecars, KEP-2837 pod-level resources) on the same node
    ("sidecar requests add to the app containers", make_pod(R(1, 1), sidecars=[R(2, 1)]), make_pod(R(8, 18)),
     ["Insufficient cpu"]),
    ("an init container after a sidecar needs the sidecar's share too",
     make_pod(R(1, 1), sidecars=[R(1, 1)], init=[R(2, 1)]), make_pod(R(8, 18)), ["Insufficient cpu"]),
    ("pod-level requests replace the container sum", make_pod(R(1, 1), pod_resources={"cpu": "3m"}),
     make_pod(R(8, 19)), ["Insufficient cpu"]),
]


BEYOND_ALLOCATABLE = {"extended resource capacity enforced", "extended resource capacity enforced for init container",
                      "extended resource allocatable enforced for multiple containers"}


@pytest.mark.parametrize("name, pod, existing, reasons", ENOUGH_REQUESTS_ROWS, ids=[r[0] for r in ENOUGH_REQUESTS_ROWS])
def test_enough_requests(name, pod, existing, reasons):
    st = NodeResourcesFit().filter(None, PodInfo(pod), node_info(node("n", ENOUGH_ALLOC), existing))
    assert st.reasons == reasons
    # since 1.34 (kubernetes/kubernetes#131345) a request above allocatable is UnschedulableAndUnresolvable,
    # as the release-1.36 rows expect for the "capacity enforced" cases
    want = Code.Success if not reasons else (
        Code.UnschedulableAndUnresolvable if name in BEYOND_ALLOCATABLE else Code.Unschedulable)
    assert st.code == want


GPU8 = {"nvidia.com/gpu": "8"}
DEFAULT_BALANCED = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
WITH_GPU = DEFAULT_BALANCED + [{"name": "nvidia.com/gpu", "weight": 1}]


def mk(cpu, mem, extra=None):
    return {"cpu": f"{cpu}m", "memory": str(mem), **(extra or {})}


def alloc(cpu_m, mem, scalar=None):
    """balanced_allocation_test.go makeNode(name, milliCPU, memory, extendedResource)."""
    return {"cpu": f"{cpu_m}m", "memory": str(mem), "pods": "110", **(scalar or {})}


def two(*reqs, node_name=""):
    return make_pod(*reqs, node=node_name)


CPU_AND_MEM = (R(1000, 2000), R(2000, 3000))
CPU_ONLY = ({"cpu": "1000m"}, {"cpu": "2000m"})
BALANCED_ROWS = [
    ("nothing scheduled, nothing requested, skip in PreScore", make_pod(),
     [("node1", alloc(4000, 10000), []), ("node2", alloc(4000, 10000), [])], DEFAULT_BALANCED, None),
    ("nothing scheduled, resources requested, differently sized nodes", two(*CPU_AND_MEM),
     [("node1", alloc(4000, 10000), []), ("node2", alloc(6000, 10000), [])], DEFAULT_BALANCED, [68, 75]),
    ("resources requested, pods scheduled with resources", two(*CPU_AND_MEM),
     [("node1", alloc(10000, 20000), [two(*CPU_ONLY)]), ("node2", alloc(10000, 20000), [two(*CPU_AND_MEM)])],
     DEFAULT_BALANCED, [73, 74]),
    ("resources requested, pods scheduled with resources, differently sized nodes", two(*CPU_AND_MEM),
     [("node1", alloc(10000, 20000), [two(*CPU_ONLY)]), ("node2", alloc(10000, 50000), [two(*CPU_AND_MEM)])],
     DEFAULT_BALANCED, [73, 70]),
    ("resources requested, pods scheduled with resources, nodes to reach min/max score",
     two({"memory": "2000"}, {"memory": "3000"}),
     [("node1", alloc(3000, 5000), [two(*CPU_ONLY)]), ("node2", alloc(3000, 5000), [])], DEFAULT_BALANCED, [100, 50]),
    ("requested resources at node capacity", two(*CPU_ONLY),
     [("node1", alloc(6000, 10000), [two(*CPU_ONLY)]), ("node2", alloc(6000, 10000), [two(*CPU_AND_MEM)])],
     DEFAULT_BALANCED, [62, 62]),
    ("include scalar resource on a node for balanced resource allocation", two(mk(0, 0, {"nvidia.com/gpu": "1"})),
     [("node1", alloc(3500, 40000, GPU8), [two(R(1000, 2000), mk(2000, 3000, {"nvidia.com/gpu": "3"}))]),
      ("node2", alloc(3500, 40000, GPU8), [two(*CPU_AND_MEM)])], WITH_GPU, [75, 76]),
    ("node without the scalar resource should skip the scalar resource", two(*CPU_AND_MEM),
     [("node1", alloc(3500, 40000, GPU8), []), ("node2", alloc(3500, 40000), [])], WITH_GPU, [56, 56]),
    ("resources requested, pods scheduled with resources if PreScore not called", two(*CPU_AND_MEM),
     [("node1", alloc(10000, 20000), [two(*CPU_ONLY)]), ("node2", alloc(10000, 20000), [two(*CPU_AND_MEM)])],
     DEFAULT_BALANCED, [73, 74]),
]


@pytest.mark.parametrize("name, pod, nodes, resources, want", BALANCED_ROWS, ids=[r[0] for r in BALANCED_ROWS])
def test_node_resources_balanced_allocation(name, pod, nodes, resources, want):
    plugin = BalancedAllocation({"resources": resources})
    pi = PodInfo(pod)
    infos = [node_info(node(n, a), *existing) for n, a, existing in nodes]
    st = plugin.pre_score(None, pi, infos)
    if want is None:
        assert st.code == Code.Skip
        return
    assert st.is_success()
    assert [plugin.score(None, pi, ni) for ni in infos] == want


# framework/types.go calculateResource and resource_allocation.go calculatePodResourceRequest
NON_ZERO_ROWS = [
    ("no requests: both defaults", make_pod(R()), DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST),
    ("defaults per container, not per pod", make_pod(R(), R()), 2 * DEFAULT_MILLI_CPU_REQUEST,
     2 * DEFAULT_MEMORY_REQUEST),
    ("an explicit 0 stays 0", make_pod(R(0, 0)), 0, 0),
    ("only the absent resource is defaulted", make_pod(R(cpu_m=0), R(cpu_m=300)), 300, 2 * DEFAULT_MEMORY_REQUEST),
    ("one container set, one absent: the absent one gets the default", make_pod(R(500, 1000), R()),
     500 + DEFAULT_MILLI_CPU_REQUEST, 1000 + DEFAULT_MEMORY_REQUEST),
    ("init containers take the defaults too, then the max",
     make_pod(R(cpu_m=50, mem=10), init=[R()]), DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST),
    ("a sidecar adds its default", make_pod(R(cpu_m=50, mem=10), sidecars=[R()]),
     50 + DEFAULT_MILLI_CPU_REQUEST, 10 + DEFAULT_MEMORY_REQUEST),
    ("pod-level cpu set: cpu from the pod, memory default only when absent everywhere",
     make_pod(R(), pod_resources={"cpu": "2"}), 2000, DEFAULT_MEMORY_REQUEST),
]


@pytest.mark.parametrize("name, pod, cpu, mem", NON_ZERO_ROWS, ids=[r[0] for r in NON_ZERO_ROWS])
def test_non_zero_requests(name, pod, cpu, mem):
    pi = PodInfo(pod)
    assert (pi.non_zero["cpu"], pi.non_zero["memory"]) == (cpu, mem)


def test_fit_score_defaults_each_container_missing_memory_with_pod_level_cpu():
    """calculatePodResourceRequest applies the defaults to every container whose request is absent, while
    calculateResource (NodeInfo's NonZeroRequested) defaults only a resource absent from the whole pod."""
    pi = PodInfo(make_pod(R(mem=1000), R(), pod_resources={"cpu": "1"}))
    assert pi.non_zero["memory"] == 1000
    assert pi.score_non_zero["memory"] == 1000 + DEFAULT_MEMORY_REQUEST
    assert pi.score_non_zero["cpu"] == pi.non_zero["cpu"] == 1000
