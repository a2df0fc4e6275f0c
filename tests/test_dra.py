"""Dynamic Resource Allocation (resource.k8s.io/v1): objects and validation, CEL selectors, the structured
allocator, the DynamicResources plugin, the resourceclaim controller, and a scenario run end to end."""
from __future__ import annotations

import random
from types import SimpleNamespace

import pytest
import simpy

from gpusim.api.core_v1 import Node, Pod
from gpusim.api.errors import InputError
from gpusim.api.meta import ObjectMeta, OwnerReference
from gpusim.api.resource_k8s_io_v1 import DeviceClass, ResourceClaim, ResourceSlice
from gpusim.api.schema import decode
from gpusim.cluster.scenario import load
from gpusim.cluster.simulation import Simulation
from gpusim.controlplane.apiserver import APIServer
from gpusim.scheduler.dra.allocator import AllocationError, Allocator
from gpusim.scheduler.dra.cel import CELError, compile_selector
from gpusim.scheduler.framework import Code, CycleState, NodeInfo, PodInfo
from gpusim.scheduler.plugins.dynamicresources import DynamicResources

# --- builders (the helpers of allocator_testing.go, same names and values) ------------------------------------
DRIVER_A, DRIVER_B = "driver-a", "driver-b"
CLASS_A, CLASS_B = "class-a", "class-b"
NODE1, NODE2 = "node-1", "node-2"
POOL1, POOL2 = "pool-1", "pool-2"
DEV1, DEV2 = "device-1", "device-2"


def klass(name, driver):
    """class(): a DeviceClass selecting its driver's devices."""
    return decode(DeviceClass, {"metadata": {"name": name},
                                "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}})


def device(name, memory=None):
    return {"name": name, **({"capacity": {"memory": {"value": memory}}} if memory else {})}


def rslice(name, node, pool, driver, *devices, count=1, generation=1):
    spec = {"driver": driver, "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
            "devices": list(devices) if devices else [device(DEV1)]}
    spec.update({"allNodes": True} if node is None else {"nodeName": node})
    return decode(ResourceSlice, {"metadata": {"name": name}, "spec": spec})


def empty_slice(name, node, pool, driver):
    s = rslice(name, node, pool, driver)
    s.spec.devices = []
    return s


def req(name, cls, count=1, selector=None, mode=None, admin=None):
    exactly = {"deviceClassName": cls, "count": count}
    if mode:
        exactly["allocationMode"] = mode
        if mode == "All":
            exactly.pop("count")
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    if admin:
        exactly["adminAccess"] = True
    return {"name": name, "exactly": exactly}


def first_available(name, *subs):
    return {"name": name, "firstAvailable": list(subs)}


def sub(name, cls, mode=None):
    return {"name": name, "deviceClassName": cls, **({"allocationMode": mode} if mode else {})}


def claim(name, *requests, ns="default"):
    return decode(ResourceClaim, {"metadata": {"name": name, "namespace": ns},
                                  "spec": {"devices": {"requests": list(requests)}}})


MEM1 = f'device.capacity["{DRIVER_A}"].memory.compareTo(quantity("1Gi")) >= 0'
MEM2 = f'device.capacity["{DRIVER_A}"].memory.compareTo(quantity("2Gi")) >= 0'
A, B = [klass(CLASS_A, DRIVER_A)], [klass(CLASS_A, DRIVER_A), klass(CLASS_B, DRIVER_B)]


def res(request, driver, pool, dev, admin=False):
    return request, driver, pool, dev, admin


# kubernetes staging/src/k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting/allocator_testing.go
# (commit 008b3652959c, the 1.36 development line), TestAllocator: rows that use what gpusim models
# (no constraints, counters, taints, consumable capacity, network-attached node selectors).
# (name, claims, classes, slices, node, allocated devices, expected results per claim | None | error text)
ALLOCATOR_ROWS = [
    ("simple", [claim("claim-0", req("req-0", CLASS_A))], A, [rslice("slice-1", NODE1, POOL1, DRIVER_A)], NODE1, [],
     [[res("req-0", DRIVER_A, POOL1, DEV1)]]),
    ("other-node", [claim("claim-0", req("req-0", CLASS_A))], A,
     [rslice("slice-1", NODE1, POOL1, DRIVER_B), rslice("slice-2", NODE2, POOL2, DRIVER_A)], NODE2, [],
     [[res("req-0", DRIVER_A, POOL2, DEV1)]]),
    ("small-and-large", [claim("claim-0", req("req-0", CLASS_A, selector=MEM1), req("req-1", CLASS_A, selector=MEM2))],
     A, [rslice("slice-1", NODE1, POOL1, DRIVER_A, device(DEV1, "1Gi"), device(DEV2, "2Gi"))], NODE1, [],
     [[res("req-0", DRIVER_A, POOL1, DEV1), res("req-1", DRIVER_A, POOL1, DEV2)]]),
    ("small-and-large-backtrack-requests",
     [claim("claim-0", req("req-0", CLASS_A, selector=MEM1), req("req-1", CLASS_A, selector=MEM2))],
     A, [rslice("slice-1", NODE1, POOL1, DRIVER_A, device(DEV2, "2Gi"), device(DEV1, "1Gi"))], NODE1, [],
     [[res("req-0", DRIVER_A, POOL1, DEV1), res("req-1", DRIVER_A, POOL1, DEV2)]]),
    ("small-and-large-backtrack-claims",
     [claim("claim-0", req("req-0", CLASS_A, selector=MEM1)), claim("claim-1", req("req-1", CLASS_A, selector=MEM2))],
     A, [rslice("slice-1", NODE1, POOL1, DRIVER_A, device(DEV2, "2Gi"), device(DEV1, "1Gi"))], NODE1, [],
     [[res("req-0", DRIVER_A, POOL1, DEV1)], [res("req-1", DRIVER_A, POOL1, DEV2)]]),
    ("devices-split-across-different-slices", [claim("claim-0", req("req-0", CLASS_A, count=2))], A,
     [rslice("slice-1", NODE1, POOL1, DRIVER_A), rslice("slice-2", NODE1, POOL2, DRIVER_A)], NODE1, [],
     [[res("req-0", DRIVER_A, POOL1, DEV1), res("req-0", DRIVER_A, POOL2, DEV1)]]),
    ("no-slices", [claim("claim-0", req("req-0", CLASS_A))], A, [], NODE1, [], None),
    ("not-enough-suitable-devices", [claim("claim-0", req("req-0", CLASS_A)), claim("claim-0", req("req-1", CLASS_A))],
     A, [rslice("slice-1", NODE1, POOL1, DRIVER_A)], NODE1, [], None),
    ("no-classes", [claim("claim-0", req("req-0", CLASS_A))], [], [rslice("slice-1", NODE1, POOL1, DRIVER_A)], NODE1,
     [], "could not retrieve device class class-a"),
    ("unknown-class", [claim("claim-0", req("req-0", "unknown-class"))], A,
     [rslice("slice-1", NODE1, POOL1, DRIVER_A)], NODE1, [], "could not retrieve device class unknown-class"),
    ("no-claims-to-allocate", [], A, [rslice("slice-1", NODE1, POOL1, DRIVER_A)], NODE1, [], []),
    ("all-devices-single", [claim("claim-0", req("req-0", CLASS_A, mode="All"))], A,
     [rslice("slice-1", NODE1, POOL1, DRIVER_A)], NODE1, [], [[res("req-0", DRIVER_A, POOL1, DEV1)]]),
    ("all-devices-many", [claim("claim-0", req("req-0", CLASS_A, mode="All"))], A,
     [rslice("slice-1", NODE1, POOL1, DRIVER_A), rslice("slice-1", NODE1, POOL2, DRIVER_A)], NODE1, [],
     [[res("req-0", DRIVER_A, POOL1, DEV1), res("req-0", DRIVER_A, POOL2, DEV1)]]),
    ("all-devices-of-the-incomplete-pool", [claim("claim-0", req("req-0", CLASS_A, mode="All"))], A,
     [rslice("slice-1", NODE1, POOL1, DRIVER_A, count=2)], NODE1, [],
     "claim default/claim-0, request req-0: asks for all devices, but resource pool driver-a/pool-1 is currently "
     "being updated"),
    ("all-devices-plus-another",
     [claim("claim-0", req("req-0", CLASS_A, mode="All")), claim("claim-1", req("req-0", CLASS_B))], B,
     [rslice("slice-1", NODE1, POOL1, DRIVER_A), rslice("slice-1", NODE1, POOL1, DRIVER_B)], NODE1, [],
     [[res("req-0", DRIVER_A, POOL1, DEV1)], [res("req-0", DRIVER_B, POOL1, DEV1)]]),
    ("all-devices-plus-another-reversed",
     [claim("claim-1", req("req-0", CLASS_B)), claim("claim-0", req("req-0", CLASS_A, mode="All"))], B,
     [rslice("slice-1", NODE1, POOL1, DRIVER_A), rslice("slice-1", NODE1, POOL1, DRIVER_B)], NODE1, [],
     [[res("req-0", DRIVER_B, POOL1, DEV1)], [res("req-0", DRIVER_A, POOL1, DEV1)]]),
    ("all-devices-many-plus-another",
     [claim("claim-0", req("req-0", CLASS_A, mode="All")), claim("claim-1", req("req-0", CLASS_B))], B,
     [rslice("slice-1", NODE1, POOL1, DRIVER_A, device(DEV1), device(DEV2)), rslice("slice-1", NODE1, POOL1, DRIVER_B)],
     NODE1, [], [[res("req-0", DRIVER_A, POOL1, DEV1), res("req-0", DRIVER_A, POOL1, DEV2)],
                 [res("req-0", DRIVER_B, POOL1, DEV1)]]),
    ("all-devices-no-solution",
     [claim("claim-1", req("req-0", CLASS_A)), claim("claim-0", req("req-0", CLASS_A, mode="All"))], A,
     [rslice("slice-1", NODE1, POOL1, DRIVER_A)], NODE1, [], None),
    ("all-devices-no-solution-reversed",
     [claim("claim-0", req("req-0", CLASS_A, mode="All")), claim("claim-1", req("req-0", CLASS_A))], A,
     [rslice("slice-1", NODE1, POOL1, DRIVER_A)], NODE1, [], None),
    ("all-devices-slice-without-devices", [claim("claim-0", req("req-0", CLASS_A, mode="All"))], A,
     [empty_slice("slice-1", NODE1, POOL1, DRIVER_A)], NODE1, [], None),
    ("all-devices-no-slices", [claim("claim-0", req("req-0", CLASS_A, mode="All"))], A, [], NODE1, [], None),
    ("all-devices-some-allocated", [claim("claim-0", req("req-0", CLASS_A, mode="All"))], A,
     [rslice("slice-1", NODE1, POOL1, DRIVER_A, device(DEV1), device(DEV2))], NODE1, [(DRIVER_A, POOL1, DEV1)], None),
    ("all-devices-some-allocated-admin-access", [claim("claim-0", req("req-0", CLASS_A, mode="All", admin=True))], A,
     [rslice("slice-1", NODE1, POOL1, DRIVER_A, device(DEV1), device(DEV2))], NODE1, [(DRIVER_A, POOL1, DEV1)],
     [[res("req-0", DRIVER_A, POOL1, DEV1, True), res("req-0", DRIVER_A, POOL1, DEV2, True)]]),
    ("all-devices-some-allocating-admin-access",
     [claim("claim-0", req("req-0", CLASS_A, admin=True), req("req-1", CLASS_A, mode="All", admin=True))], A,
     [rslice("slice-1", NODE1, POOL1, DRIVER_A, device(DEV1), device(DEV2))], NODE1, [], None),
    ("count-devices-some-allocated-admin-access", [claim("claim-0", req("req-0", CLASS_A, count=2, admin=True))], A,
     [rslice("slice-1", NODE1, POOL1, DRIVER_A, device(DEV1), device(DEV2))], NODE1, [(DRIVER_A, POOL1, DEV1)],
     [[res("req-0", DRIVER_A, POOL1, DEV1, True), res("req-0", DRIVER_A, POOL1, DEV2, True)]]),
    ("separate-claims-share-device-admin-access",
     [claim("claim-0", req("req-0", CLASS_A, admin=True)), claim("claim-1", req("req-0", CLASS_A, admin=True))], A,
     [rslice("slice-1", NODE1, POOL1, DRIVER_A, device(DEV1), device(DEV2))], NODE1, [],
     [[res("req-0", DRIVER_A, POOL1, DEV1, True)], [res("req-0", DRIVER_A, POOL1, DEV1, True)]]),
    ("admin-access-claims-device-allocating-for-non-admin-access",
     [claim("claim-0", req("req-0", CLASS_A)), claim("claim-1", req("req-0", CLASS_A, admin=True))], A,
     [rslice("slice-1", NODE1, POOL1, DRIVER_A, device(DEV1), device(DEV2))], NODE1, [],
     [[res("req-0", DRIVER_A, POOL1, DEV1)], [res("req-0", DRIVER_A, POOL1, DEV1, True)]]),
    ("all-devices-slice-without-devices-prioritized-list",
     [claim("claim-0", first_available("req-0", sub("subReq-0", CLASS_A, "All"), sub("subReq-1", CLASS_B)))], B,
     [empty_slice("slice-1", NODE1, POOL1, DRIVER_A), rslice("slice-2", NODE1, POOL2, DRIVER_B)], NODE1, [],
     [[res("req-0/subReq-1", DRIVER_B, POOL2, DEV1)]]),
    ("all-devices-no-slices-prioritized-list",
     [claim("claim-0", first_available("req-0", sub("subReq-0", CLASS_A, "All"), sub("subReq-1", CLASS_B)))], B,
     [rslice("slice-2", NODE1, POOL2, DRIVER_B)], NODE1, [], [[res("req-0/subReq-1", DRIVER_B, POOL2, DEV1)]]),
    ("all-devices-some-allocated-prioritized-list",
     [claim("claim-0", first_available("req-0", sub("subReq-0", CLASS_A, "All"), sub("subReq-1", CLASS_B)))], B,
     [rslice("slice-1", NODE1, POOL1, DRIVER_A, device(DEV1), device(DEV2)), rslice("slice-2", NODE1, POOL2, DRIVER_B)],
     NODE1, [(DRIVER_A, POOL1, DEV1)], [[res("req-0/subReq-1", DRIVER_B, POOL2, DEV1)]]),
]


@pytest.mark.parametrize("name,claims,classes,slices,node,allocated,want", ALLOCATOR_ROWS,
                         ids=[r[0] for r in ALLOCATOR_ROWS])
def test_allocator(name, claims, classes, slices, node, allocated, want):
    alloc = Allocator({c.metadata.name: c for c in classes}, slices, set(allocated))
    if isinstance(want, str):
        with pytest.raises(AllocationError, match=want.replace("/", ".")):
            alloc.allocate(node, claims)
        return
    got = alloc.allocate(node, claims)
    if want is None:
        assert got is None
        return
    assert [[(r.request, r.driver, r.pool, r.device, bool(r.admin_access)) for r in a.devices.results]
            for a in got] == want
    for a in got:   # node-local slices: the claim is usable only on this node (localNodeSelector)
        assert a.node_selector == {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [node]}]}]}


def test_allocator_all_nodes_slice_has_no_node_selector_and_newest_generation_wins():
    old = rslice("slice-1", None, POOL1, DRIVER_A, device(DEV1), generation=1)
    new = rslice("slice-2", None, POOL1, DRIVER_A, device(DEV2), generation=2)
    (a,) = Allocator({CLASS_A: A[0]}, [old, new], set()).allocate(NODE1, [claim("c", req("r", CLASS_A))])
    assert [r.device for r in a.devices.results] == [DEV2] and a.node_selector is None


# --- CEL ------------------------------------------------------------------------------------------------------
GPU = decode(ResourceSlice, {"metadata": {"name": "s"}, "spec": {
    "driver": "gpu.nvidia.com", "pool": {"name": "n", "resourceSliceCount": 1}, "nodeName": "n", "devices": [{
        "name": "gpu-0", "attributes": {"productName": {"string": "NVIDIA A100-SXM4-80GB"}, "index": {"int": 0},
                                         "example.com/fast": {"bool": True}},
        "capacity": {"memory": {"value": "80Gi"}}}]}}).spec.devices[0]


@pytest.mark.parametrize("expression,want", [
    ('device.driver == "gpu.nvidia.com"', True),
    ('device.driver == "other.example.com"', False),
    ('device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA A100")', True),
    ('device.attributes["gpu.nvidia.com"].index == 0', True),
    ('device.attributes["example.com"].fast', True),
    ('device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0', True),
    ('device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80Gi")) == 0', True),
    ('device.capacity["gpu.nvidia.com"].memory.isLessThan(quantity("81920Mi"))', False),
    ('device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("79Gi"))', True),
    ('has(device.attributes["gpu.nvidia.com"].uuid)', False),
    ('has(device.attributes["unknown.example.com"].x)', False),   # an unknown domain is an empty map
])
def test_cel_selector(expression, want):
    assert compile_selector(expression).matches("gpu.nvidia.com", GPU) is want


@pytest.mark.parametrize("expression,message", [
    ('device.attributes["gpu.nvidia.com"].uuid == "x"', "CEL runtime error"),   # unknown field: an error
    ('device.driver', "CEL result must be a bool"),
    ('device.driver ==', "compilation failed"),
])
def test_cel_errors(expression, message):
    with pytest.raises(CELError, match=message):
        compile_selector(expression).matches("gpu.nvidia.com", GPU)


# --- DynamicResources plugin ------------------------------------------------------------------------------------
# kubernetes pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go (the 1.36 development line,
# resource.k8s.io/v1 and fwk statuses), TestPlugin: pod
# "my-pod" with claim "my-resource" (by name, or from a template with the generated claim
# "my-pod-my-resource" in its status), a worker node with one device of class "my-resource-class".
POD_UID = "1234"
WORKER = "worker"


def make_pod(template=False, status=True):
    rc = {"name": "my-resource", **({"resourceClaimTemplateName": "my-template"} if template
                                     else {"resourceClaimName": "my-pod-my-resource"})}
    pod = decode(Pod, {"metadata": {"name": "my-pod", "namespace": "default", "uid": POD_UID},
                       "spec": {"resourceClaims": [rc], "containers": [{"name": "c", "image": "x"}]}})
    if template and status:
        pod.status.resource_claim_statuses = decode(Pod, {"metadata": {}, "spec": {"containers": []}, "status": {
            "resourceClaimStatuses": [{"name": "my-resource", "resourceClaimName": "my-pod-my-resource"}]}}
        ).status.resource_claim_statuses
    return pod


def pending_claim(owner=POD_UID, deleting=False, cls="my-resource-class", selector=None, admin=None):
    c = claim("my-pod-my-resource", req("req-1", cls, selector=selector, admin=admin))
    c.metadata.owner_references = [OwnerReference("v1", "Pod", "my-pod", owner, True, True)]
    c.metadata.deletion_timestamp = 1.0 if deleting else None
    return c


def allocated_claim(node=WORKER, **kw):
    c = pending_claim(**kw)
    c.status = decode(ResourceClaim, {"metadata": {}, "status": {"allocation": {
        "devices": {"results": [{"request": "req-1", "driver": "some-driver", "pool": WORKER, "device": "instance-1"}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}}).status
    return c


def other_allocated_claim(admin=False):
    c = allocated_claim()
    c.metadata.name, c.metadata.uid = "other-claim", ""
    c.status.allocation.devices.results[0].admin_access = True if admin else None
    return c


def in_use_claim():
    c = allocated_claim()
    c.status.reserved_for = decode(ResourceClaim, {"metadata": {}, "status": {"reservedFor": [
        {"resource": "pods", "name": "my-pod", "uid": POD_UID}]}}).status.reserved_for
    return c


BROKEN = 'device.attributes["some-driver"].healthy'   # breakCELInClaim / breakCELInClass: an unknown attribute
BROKEN_CLASS = decode(DeviceClass, {"metadata": {"name": "my-resource-class"},
                                    "spec": {"selectors": [{"cel": {"expression": BROKEN}}]}})


WORKER_SLICE = decode(ResourceSlice, {"metadata": {"name": "worker-some-driver"}, "spec": {
    "driver": "some-driver", "pool": {"name": WORKER, "resourceSliceCount": 1}, "nodeName": WORKER,
    "devices": [{"name": "instance-1"}]}})
CLASS = decode(DeviceClass, {"metadata": {"name": "my-resource-class"}, "spec": {}})


def setup(claims, classes=(CLASS,), slices=()):
    env = simpy.Environment()
    api = APIServer(env, random.Random(0))
    for o in [*classes, *slices, *claims]:
        api.create(o)
    handle = SimpleNamespace(api=api, ctx=SimpleNamespace(now=0.0))
    return DynamicResources(None, handle), api


# (name, pod, claims, classes, slices, phase, code, message) — the phase where the row's outcome shows
PLUGIN_ROWS = [
    ("empty", Pod(metadata=ObjectMeta(name="foo", namespace="default")), [], (CLASS,), (), "prefilter", Code.Skip, ""),
    ("missing-claim", make_pod(template=True, status=False), [allocated_claim()], (CLASS,), (), "preenqueue",
     Code.UnschedulableAndUnresolvable, 'pod "default/my-pod": ResourceClaim not created yet'),
    ("deleted-claim", make_pod(template=True), [allocated_claim(deleting=True)], (CLASS,), (), "preenqueue",
     Code.UnschedulableAndUnresolvable, 'resourceclaim "my-pod-my-resource" is being deleted'),
    ("wrong-claim", make_pod(template=True), [allocated_claim(owner=POD_UID + "123")], (CLASS,), (), "preenqueue",
     Code.UnschedulableAndUnresolvable,
     "ResourceClaim default/my-pod-my-resource was not created for pod default/my-pod (pod is not owner)"),
    ("no-resources", make_pod(), [pending_claim()], (CLASS,), (), "filter",
     Code.UnschedulableAndUnresolvable, "cannot allocate all claims"),
    ("exhausted-resources", make_pod(), [pending_claim(), other_allocated_claim()], (CLASS,),
     (WORKER_SLICE,), "filter", Code.UnschedulableAndUnresolvable, "cannot allocate all claims"),
    ("wrong-topology", make_pod(), [allocated_claim(node="other")], (CLASS,), (), "filter",
     Code.UnschedulableAndUnresolvable, "resourceclaim not available on the node"),
    ("missing-class", make_pod(), [pending_claim(cls="no-such-class")], (CLASS,), (), "prefilter",
     Code.UnschedulableAndUnresolvable, "request req-1: device class no-such-class does not exist"),
    ("reserved-okay", make_pod(), [in_use_claim()], (CLASS,), (), "filter", Code.Success, ""),
    ("structured-ignore-allocated-admin-access", make_pod(), [pending_claim(), other_allocated_claim(admin=True)],
     (CLASS,), (WORKER_SLICE,), "filter", Code.Success, ""),
    ("request-admin-access-with-DRAAdminAccess-featuregate", make_pod(), [pending_claim(admin=True),
                                                                          other_allocated_claim()],
     (CLASS,), (WORKER_SLICE,), "filter", Code.Success, ""),
    ("claim-parameters-CEL-runtime-error", make_pod(), [pending_claim(selector=BROKEN)], (CLASS,), (WORKER_SLICE,),
     "filter", Code.Error, "claim default/my-pod-my-resource: selector #0: CEL runtime error: no such key: healthy"),
    ("class-parameters-CEL-runtime-error", make_pod(), [pending_claim()], (BROKEN_CLASS,), (WORKER_SLICE,),
     "filter", Code.Error, "class my-resource-class: selector #0: CEL runtime error: no such key: healthy"),
]


def run_until(plugin, pod, phase):
    """PreEnqueue → PreFilter → Filter on the worker, stopping at ``phase``; returns (status, state)."""
    st = plugin.pre_enqueue(pod)
    if phase == "preenqueue" or not st.is_success():
        return st, None
    state = CycleState()
    _, st = plugin.pre_filter(state, PodInfo(pod), [])
    if phase == "prefilter" or not st.is_success():
        return st, state
    return plugin.filter(state, PodInfo(pod), NodeInfo(Node(metadata=ObjectMeta(name=WORKER)))), state


@pytest.mark.parametrize("name,pod,claims,classes,slices,phase,code,message", PLUGIN_ROWS,
                         ids=[r[0] for r in PLUGIN_ROWS])
def test_plugin(name, pod, claims, classes, slices, phase, code, message):
    plugin, _ = setup(claims, classes, slices)
    st, _ = run_until(plugin, pod, phase)
    assert (st.code, st.message()) == (code, message)


@pytest.mark.parametrize("template", [False, True], ids=["claim-reference", "claim-template"])
def test_plugin_allocated_claim_gets_the_pod_reserved_at_prebind(template):
    """claim-reference / claim-template: an allocated claim only gains the pod in reservedFor."""
    plugin, api = setup([allocated_claim()])
    pod = make_pod(template=template)
    st, state = run_until(plugin, pod, "filter")
    assert st.is_success()
    assert plugin.reserve(state, PodInfo(pod), WORKER).is_success()
    assert plugin.pre_bind(state, PodInfo(pod), WORKER).is_success()
    stored = api.get("ResourceClaim", "default", "my-pod-my-resource")
    assert [(r.resource, r.name, r.uid) for r in stored.status.reserved_for] == [("pods", "my-pod", POD_UID)]
    assert stored.metadata.finalizers == []


def test_plugin_structured_with_resources_allocates_in_reserve_and_writes_in_prebind():
    """with-resources: Reserve puts the allocation in flight; PreBind writes finalizer, allocation,
    reservedFor; skip-bind: Unreserve before PreBind drops the in-flight allocation."""
    plugin, api = setup([pending_claim()], slices=(WORKER_SLICE,))
    pod = make_pod()
    st, state = run_until(plugin, pod, "filter")
    assert st.is_success()
    plugin.reserve(state, PodInfo(pod), WORKER)
    uid = api.get("ResourceClaim", "default", "my-pod-my-resource").metadata.uid
    assert [r.device for r in plugin.in_flight[uid].devices.results] == ["instance-1"]
    # another pod's claim for the same device cannot be allocated while this one is in flight
    other = claim("other", req("req-1", "my-resource-class"))
    api.create(other)
    st2 = CycleState()
    other_pod = decode(Pod, {"metadata": {"name": "p2", "namespace": "default", "uid": "p2"}, "spec": {
        "resourceClaims": [{"name": "x", "resourceClaimName": "other"}], "containers": [{"name": "c", "image": "x"}]}})
    plugin.pre_filter(st2, PodInfo(other_pod), [])
    assert plugin.filter(st2, PodInfo(other_pod), NodeInfo(Node(metadata=ObjectMeta(name=WORKER)))).message() == \
        "cannot allocate all claims"
    assert plugin.pre_bind(state, PodInfo(pod), WORKER).is_success()
    stored = api.get("ResourceClaim", "default", "my-pod-my-resource")
    assert stored.metadata.finalizers == ["resource.kubernetes.io/delete-protection"]
    assert [(r.driver, r.pool, r.device) for r in stored.status.allocation.devices.results] == \
        [("some-driver", WORKER, "instance-1")]
    assert [r.uid for r in stored.status.reserved_for] == [POD_UID] and plugin.in_flight == {}


def test_plugin_unreserve_drops_the_in_flight_allocation():
    plugin, api = setup([pending_claim()], slices=(WORKER_SLICE,))
    pod = make_pod()
    _, state = run_until(plugin, pod, "filter")
    plugin.reserve(state, PodInfo(pod), WORKER)
    plugin.unreserve(state, PodInfo(pod), WORKER)
    assert plugin.in_flight == {}
    assert api.get("ResourceClaim", "default", "my-pod-my-resource").status.allocation is None


# --- objects and validation -----------------------------------------------------------------------------------
NS = "apiVersion: resource.k8s.io/v1\n"


@pytest.mark.parametrize("doc,message", [
    (NS + "kind: DeviceClass\nmetadata: {name: c}\nspec: {selectors: [{cel: {expresion: x}}]}",
     'unknown field "spec.selectors[0].cel.expresion"'),
    (NS + "kind: DeviceClass\nmetadata: {name: c}\nspec: {selectors: [{cel: {expression: 'device.driver =='}}]}",
     'spec.selectors[0].cel.expression: Invalid value: "device.driver ==": compilation failed: syntax error'),
    (NS + "kind: DeviceClass\nmetadata: {name: c}\nspec: {extendedResourceName: gpu}",
     'spec.extendedResourceName: Invalid value: "gpu": must be a valid extended resource name'),
    (NS + "kind: ResourceClaim\nmetadata: {name: c}\nspec: {devices: {requests: [{name: gpu}]}}",
     "spec.devices.requests[0]: Invalid value: exactly one of `exactly` or `firstAvailable` is required"),
    (NS + "kind: ResourceClaim\nmetadata: {name: c}\nspec: {devices: {requests: [{name: GPU, exactly: "
          "{deviceClassName: g}}]}}", 'spec.devices.requests[0].name: Invalid value: "GPU": a lowercase RFC 1123 label'),
    (NS + "kind: ResourceClaim\nmetadata: {name: c}\nspec: {devices: {requests: [{name: gpu, exactly: "
          "{deviceClassName: g, count: -1}}]}}", 'spec.devices.requests[0].exactly.count: Invalid value: "-1": must be '
                                                  "greater than zero"),
    (NS + "kind: ResourceClaim\nmetadata: {name: c}\nspec: {devices: {requests: [{name: gpu, exactly: "
          "{deviceClassName: g, allocationMode: Some}}]}}", 'allocationMode: Unsupported value: "Some"'),
    (NS + "kind: ResourceClaimTemplate\nmetadata: {name: t}\nspec: {spec: {devices: {requests: [{name: gpu, exactly: "
          "{}}]}}}", "spec.spec.devices.requests[0].exactly.deviceClassName: Required value"),
    (NS + "kind: ResourceSlice\nmetadata: {name: s}\nspec: {driver: gpu.nvidia.com, pool: {name: p, "
          "resourceSliceCount: 1}, nodeName: n, allNodes: true}", "exactly one of `nodeName`"),
    (NS + "kind: ResourceSlice\nmetadata: {name: s}\nspec: {driver: gpu.nvidia.com, pool: {name: p, "
          "resourceSliceCount: 1}, nodeName: n, devices: [{name: gpu-0, attributes: {a: {int: 1, bool: true}}}]}",
     "spec.devices[0].attributes[a]: Invalid value: exactly one value must be specified"),
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {resourceClaims: [{name: gpu}], containers: "
     "[{name: c, image: x}]}", "spec.resourceClaims[0]: Invalid value: must specify one of: `resourceClaimName`"),
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: x, resources: "
     "{claims: [{name: gpu}]}}]}", 'spec.containers[0].resources.claims[0]: Not found: "gpu"'),
    ("apiVersion: gpusim.io/v1alpha1\nkind: NodePool\nmetadata: {name: n}\nspec: {count: 1, gpu: {model: T4, "
     "allocation: DRA}}", 'spec.gpu.allocation: Unsupported value: "DRA": supported values: "devicePlugin", "dra"'),
    ("apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata: {name: cluster-policy}\nspec: {}\n---\n"
     "apiVersion: gpusim.io/v1alpha1\nkind: NodePool\nmetadata: {name: n}\nspec: {count: 1, gpu: {model: T4, "
     "allocation: dra}}", "spec.gpu.allocation: Forbidden: with a ClusterPolicy the GPU Operator would also run"),
    ("apiVersion: gpusim.io/v1alpha1\nkind: NodePool\nmetadata: {name: n}\nspec: {count: 1, gpu: {model: T4, "
     "allocation: dra}}\n---\napiVersion: gpusim.io/v1alpha1\nkind: Fault\nmetadata: {name: f}\n"
     "spec: {at: 1m, type: XidError, node: n-0, gpu: 0}",
     'spec.type: Invalid value: "XidError": node n-0 serves its GPUs through NVIDIA\'s DRA driver'),
])
def test_validation(doc, message):
    with pytest.raises(InputError) as e:
        load(texts=[("dra.yaml", doc)])
    assert message in str(e.value) and "dra.yaml" in str(e.value)


# --- end to end: the resourceclaim controller and the scheduler -------------------------------------------------
SCENARIO = """apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: a100}
spec: {count: 1, gpu: {model: A100-SXM4-80GB, count: 2, allocation: dra}}
---
apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: plugin}
spec: {count: 1, gpu: {model: A100-SXM4-80GB, count: 2}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]}}}
""" + "".join(f"""---
apiVersion: v1
kind: Pod
metadata: {{name: p{i}, annotations: {{gpusim.io/duration: 100s}}}}
spec:
  restartPolicy: Never
  resourceClaims: [{{name: gpu, resourceClaimTemplateName: one-gpu}}]
  containers: [{{name: c, image: x, resources: {{claims: [{{name: gpu}}]}}}}]
""" for i in range(3))


def test_end_to_end_claims_from_templates_allocate_then_free_devices():
    sim = Simulation(load(texts=[("dra.yaml", SCENARIO)]))
    sim.ctx.env.run(until=50)
    claims = sorted(sim.ctx.api.list("ResourceClaim"), key=lambda c: c.metadata.name)
    pods = {p.metadata.name: p for p in sim.ctx.api.list("Pod")}
    # one claim per pod, named <pod>-<claim>-<5 random characters>, recorded in the pod's status
    assert [c.metadata.name[:-5] for c in claims] == ["p0-gpu-", "p1-gpu-", "p2-gpu-"]
    for c in claims:
        owner = c.metadata.owner_references[0].name
        assert pods[owner].status.resource_claim_statuses[0].resource_claim_name == c.metadata.name
        assert c.metadata.annotations["resource.kubernetes.io/pod-claim-name"] == "gpu"
    devices = {c.metadata.owner_references[0].name: [r.device for r in c.status.allocation.devices.results]
               for c in claims if c.status.allocation}
    assert devices == {"p0": ["gpu-0"], "p1": ["gpu-1"]}
    assert {n: p.spec.node_name for n, p in pods.items()} == {"p0": "a100-0", "p1": "a100-0", "p2": ""}
    waiting = [e.message for e in sim.ctx.recorder.log if e.reason == "FailedScheduling"]
    assert waiting[0] == ("0/2 nodes are available: 2 cannot allocate all claims. preemption: 0/2 nodes are "
                          "available: 2 Preemption is not helpful for scheduling.")
    sim.ctx.env.run(until=400)
    # p0 and p1 finished: their claims were deleted (generated for them) and p2 got a device
    assert {p.metadata.name: p.status.phase for p in sim.ctx.api.list("Pod")} == \
        {"p0": "Succeeded", "p1": "Succeeded", "p2": "Succeeded"}
    assert sim.ctx.api.list("ResourceClaim") == []
    assert not any(h.end is None for h in sim.ctx.holdings)


def test_end_to_end_is_deterministic():
    def names():
        sim = Simulation(load(texts=[("dra.yaml", SCENARIO)]))
        sim.ctx.env.run(until=50)
        return sorted(c.metadata.name for c in sim.ctx.api.list("ResourceClaim"))
    assert names() == names()


def test_node_side_driver_slice_device_class_and_prepared_cdi_devices():
    sim = Simulation(load(texts=[("dra.yaml", SCENARIO)]))
    sim.ctx.env.run(until=50)
    # NVIDIA's DRA driver on the dra pool only (A100: DynamicMIG, the split layout: a counter-set slice and one
    # devices slice per GPU), the chart's DeviceClasses, no nvidia.com/gpu there
    slices = sim.ctx.api.list("ResourceSlice")
    assert len(slices) == 3
    for sl in slices:
        assert sl.metadata.name.startswith("a100-0-gpu.nvidia.com-") and len(sl.metadata.name) == len("a100-0-gpu.nvidia.com-") + 5
        assert (sl.spec.driver, sl.spec.pool.name, sl.spec.node_name, sl.spec.pool.resource_slice_count) == (
            "gpu.nvidia.com", "a100-0", "a100-0", 3)
    (counters,) = [sl for sl in slices if sl.spec.shared_counters]
    assert [cs.name for cs in counters.spec.shared_counters] == ["gpu-0-counter-set", "gpu-1-counter-set"]
    (sl,) = [sl for sl in slices if sl.spec.devices and sl.spec.devices[0].name == "gpu-0"]
    d = sl.spec.devices[0]
    assert d.attributes["uuid"].string == sim.ctx.topology.uuids["a100-0"][0]
    assert {k: a.value() for k, a in d.attributes.items() if k != "uuid"} == {
        "type": "gpu", "productName": "NVIDIA A100-SXM4-80GB", "architecture": "Ampere",
        "cudaComputeCapability": "8.0.0", "driverVersion": "580.95.5"}
    dcs = {dc.metadata.name: dc for dc in sim.ctx.api.list("DeviceClass")}
    assert {n: dc.spec.selectors[0].cel.expression for n, dc in dcs.items()} == {
        "gpu.nvidia.com": "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
        "mig.nvidia.com": "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"}
    assert dcs["gpu.nvidia.com"].spec.extended_resource_name == "nvidia.com/gpu"
    assert dcs["mig.nvidia.com"].spec.extended_resource_name is None
    nodes = {n.metadata.name: n.status.allocatable.get("nvidia.com/gpu") for n in sim.ctx.api.list("Node")}
    assert nodes == {"a100-0": None, "plugin-0": "2"}
    # the kubelet prepared the claims: CDI ids per container, the GPUs held by the pods
    kl = sim.kubelets["a100-0"]
    pods = {p.metadata.name: p.metadata.uid for p in sim.ctx.api.list("Pod")}
    assert kl.dra_cdi_devices[pods["p0"]] == {"c": ["k8s.gpu.nvidia.com/device=gpu-0"]}
    assert kl.dra_cdi_devices[pods["p1"]] == {"c": ["k8s.gpu.nvidia.com/device=gpu-1"]}
    held = sorted((h.pod, h.device) for h in sim.ctx.holdings if h.end is None)
    assert held == [("p0", sim.ctx.topology.uuids["a100-0"][0]), ("p1", sim.ctx.topology.uuids["a100-0"][1])]
    sim.ctx.env.run(until=150)
    # p0 and p1 ended: unprepared, claims deleted, p2 got gpu-0
    assert kl.dra_plugins["gpu.nvidia.com"].prepared.keys() == {sim.ctx.api.list("ResourceClaim")[0].metadata.uid}
    assert kl.dra_cdi_devices == {pods["p2"]: {"c": ["k8s.gpu.nvidia.com/device=gpu-0"]}}


HAND_WRITTEN = """apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: n}
spec: {count: 1}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: example}
spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n-0-example}
spec: {driver: gpu.example.com, pool: {name: n-0, resourceSliceCount: 1}, nodeName: n-0, devices: [{name: dev-0}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared}
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: example}}]}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, annotations: {gpusim.io/duration: 100s}}
spec:
  restartPolicy: Never
  resourceClaims: [{name: x, resourceClaimName: shared}]
  containers: [{name: c, image: x, resources: {claims: [{name: x}]}}]
"""


def test_a_slice_of_a_driver_not_running_on_the_node_allocates_but_the_kubelet_cannot_prepare():
    sim = Simulation(load(texts=[("dra.yaml", HAND_WRITTEN)]))
    sim.ctx.env.run(until=30)
    (c,) = sim.ctx.api.list("ResourceClaim")
    assert [r.device for r in c.status.allocation.devices.results] == ["dev-0"]
    assert [r.name for r in c.status.reserved_for] == ["p"]
    msgs = [e.message for e in sim.ctx.recorder.log if e.reason == "FailedPrepareDynamicResources"]
    assert msgs[0] == ("Failed to prepare dynamic resources: prepare dynamic resources: DRA driver gpu.example.com is "
                       "not registered")
    assert sim.ctx.api.get("Pod", "default", "p").status.phase == "Pending"


def test_example_dra_gpu():
    """examples/dra-gpu.yaml: a shared claim serves two pods with one GPU; template claims wait for a free GPU;
    nvidia.com/gpu pods land only on the device-plugin node."""
    from pathlib import Path
    sim = Simulation(load([str(Path(__file__).resolve().parents[1] / "examples" / "dra-gpu.yaml")]))
    sim.ctx.env.run(until=600)
    shared = sim.ctx.api.get("ResourceClaim", "default", "shared-gpu")
    assert [r.name for r in shared.status.reserved_for] == ["infer-a", "infer-b"]
    # first fit over the pool's slices in name order: the GPU whose devices slice sorts first
    first = min((s for s in sim.ctx.api.list("ResourceSlice") if s.spec.devices), key=lambda s: s.metadata.name)
    assert [r.device for r in shared.status.allocation.devices.results] == [first.spec.devices[0].name]
    pods = {p.metadata.name: p for p in sim.ctx.api.list("Pod")}
    assert {n: p.spec.node_name for n, p in pods.items()} == {
        "infer-a": "h100-dra-0", "infer-b": "h100-dra-0", "train-0": "h100-dra-0", "train-1": "", "classic": "h100-dp-0"}
    sim.run()
    sched = {e.object.name: e.time for e in sim.ctx.recorder.log if e.reason == "Scheduled"}
    ended = {h.pod: h.end for h in sim.ctx.holdings}
    assert sched["train-1"] == pytest.approx(ended["train-0"], abs=1e-6)


@pytest.mark.parametrize("pod,claim,want", [
    ("my-pod", "gpu", "my-pod-gpu-"),
    ("p" * 60, "gpu", "p" * 52 + "-gp-"),   # 65 > 57: 60·57//65 = 52 and 3·57//65 = 2 characters kept
])
def test_generated_claim_name_base(pod, claim, want):
    """resourceclaim controller handleClaim: <pod>-<claim>-, cut in proportion past 57 characters."""
    from gpusim.controllers.resourceclaim import generate_name
    assert generate_name(pod, claim) == want


def test_cached_selector_results_follow_slice_updates():
    """The plugin keeps CEL results per slice version: an updated slice is evaluated again."""
    small = rslice("worker-slice", WORKER, WORKER, "some-driver", device("instance-1", "1Gi"))
    plugin, api = setup([pending_claim(selector='device.capacity["some-driver"].memory.compareTo(quantity("2Gi")) >= 0')],
                        slices=(small,))
    pod = make_pod()
    st, _ = run_until(plugin, pod, "filter")
    assert st.message() == "cannot allocate all claims" and plugin.match_cache
    stored = api.get("ResourceSlice", "", "worker-slice")
    stored.spec.devices[0].capacity["memory"].value = "2Gi"
    api.update(stored)
    st, _ = run_until(plugin, pod, "filter")
    assert st.is_success()
