"""The structured allocator's claim constraints, device taints and consumable capacity (gpusim.scheduler.dra.allocator),
their validation (gpusim.api.resource_k8s_io_v1) and the DynamicResources plugin's allocated state of shared devices.

Rows ported from kubernetes staging/src/k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting/
allocator_testing.go, ``TestAllocator`` (commit 008b3652959c, the 1.36 development line, run there against the
incubating allocator that 1.36's default gates select), with the same names, objects and expectations. Upstream
compares shareIDs against a fixed UUID; here a result's shareID must be set exactly when upstream's is.
"""
from __future__ import annotations

import random
import uuid
from types import SimpleNamespace

import pytest
import simpy

from gpusim.api.core_v1 import Node, Pod
from gpusim.api.errors import InputError
from gpusim.api.meta import ObjectMeta
from gpusim.api.resource_k8s_io_v1 import DeviceClass, ResourceClaim, ResourceSlice
from gpusim.api.schema import decode
from gpusim.cluster.scenario import load
from gpusim.controlplane.apiserver import APIServer
from gpusim.scheduler.dra.allocator import AllocatedState, AllocationError, Allocator
from gpusim.scheduler.framework import CycleState, NodeInfo, PodInfo
from gpusim.scheduler.plugins.dynamicresources import DynamicResources

# --- builders: the helpers of allocator_testing.go, same names and values ---------------------------------------
DRIVER_A, DRIVER_B, CLASS_A, CLASS_B, NODE1 = "driver-a", "driver-b", "class-a", "class-b", "node-1"
POOL1, POOL2 = "pool-1", "pool-2"
DEV1, DEV2, DEV3, DEV4 = "device-1", "device-2", "device-3", "device-4"
SET1, SET2, CAP0, CAP1 = "counter-set-1", "counter-set-2", "capacity-0", "capacity-1"
INT_ATTR, VERSION_ATTR = f"{DRIVER_A}/numa", f"{DRIVER_A}/driverVersion"
STRING_ATTR, BOOL_ATTR = f"{DRIVER_A}/stringAttribute", f"{DRIVER_A}/boolAttribute"
NON_EXISTENT_ATTR = f"{DRIVER_A}/NonExistentAttribute"
# taintNone / taintNoSchedule / taintNoExecute and the tolerations of TestAllocator
TAINT_NONE = {"key": "taint-key", "value": "taint-value", "effect": "None"}
TAINT_NO_SCHEDULE = {"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}
TAINT_NO_EXECUTE = {"key": "taint-key", "value": "taint-value-2", "effect": "NoExecute"}
TOL_NO_SCHEDULE = {"operator": "Exists", "key": "taint-key", "effect": "NoSchedule"}
TOL_NO_EXECUTE = {"operator": "Equal", "key": "taint-key", "value": "taint-value-2", "effect": "NoExecute"}


def klass(name, driver, multi=None):
    """class() / classWithAllowMultipleAllocations()."""
    expr = f'device.driver == "{driver}"' + ("" if multi is None else
                                             f" && device.allowMultipleAllocations == {str(multi).lower()}")
    return decode(DeviceClass, {"metadata": {"name": name}, "spec": {"selectors": [{"cel": {"expression": expr}}]}})


A = {CLASS_A: klass(CLASS_A, DRIVER_A)}
AB = {CLASS_A: klass(CLASS_A, DRIVER_A), CLASS_B: klass(CLASS_B, DRIVER_B)}
A_MULTI = {CLASS_A: klass(CLASS_A, DRIVER_A, True)}
A_DEDICATED = {CLASS_A: klass(CLASS_A, DRIVER_A, False)}


def attrs(**kw):
    """Device attributes; keys are the unqualified names of TestAllocator (the driver's domain)."""
    kinds = {int: "int", bool: "bool", str: "string"}
    out = {}
    for k, v in kw.items():
        kind = "version" if k == "driverVersion" else kinds[type(v)]
        out[k] = {kind: v}
    return out


def dev(name, capacity=None, attributes=None, taints=(), multi=False, policy_range=None, policy_values=None,
        counters=()):
    """device(name, capacity, attributes) with .withTaints, .withAllowMultipleAllocations,
    .withCapacityRequestPolicyRange (default 2, range min 2 step 2 max 4), .withCapacityRequestPolicyValidValues
    (default, capacity, additional values) and .withDeviceCounterConsumption (with ``fromCounters`` capacity)."""
    d = {"name": name}
    if attributes:
        d["attributes"] = attributes
    caps = {k: {"value": v} for k, v in (capacity or {}).items()}
    for set_name, cs in counters:
        d.setdefault("consumesCounters", []).append({"counterSet": set_name,
                                                     "counters": {k: {"value": v} for k, v in cs.items()}})
        caps.update({k: {"value": v} for k, v in cs.items()})   # fromCounters
    for k, v in (policy_range or {}).items():
        caps[k] = {"value": v, "requestPolicy": {"default": 2, "validRange": {"min": 2, "step": 2, "max": 4}}}
    if policy_values:
        default, values, extra = policy_values
        for k, v in values.items():
            caps[k] = {"value": v, "requestPolicy": {"default": default, "validValues": [default, *extra]}}
    if caps:
        d["capacity"] = caps
    if taints:
        d["taints"] = list(taints)
    if multi:
        d["allowMultipleAllocations"] = True
    return d


def rslice(*devices, name="slice-1", pool=POOL1, driver=DRIVER_A, count=1, counter_sets=None):
    """sliceWithDevices / sliceWithCounterSets(name, node1, pool, driver, ...)."""
    spec = {"driver": driver, "nodeName": NODE1, "pool": {"name": pool, "generation": 1, "resourceSliceCount": count}}
    if counter_sets is not None:
        spec["sharedCounters"] = [{"name": n, "counters": {k: {"value": v} for k, v in c.items()}}
                                  for n, c in counter_sets]
    else:
        spec["devices"] = list(devices)
    return decode(ResourceSlice, {"metadata": {"name": name}, "spec": spec})


def req(name, cls=CLASS_A, count=1, capacity=None, selector=None, mode=None, tolerations=(), admin=False):
    """request() / deviceRequest().withCapacityRequest() / allDeviceRequest(); ``capacity`` is capacity-0's."""
    exactly = {"deviceClassName": cls}
    if mode == "All":
        exactly["allocationMode"] = "All"
    else:
        exactly["count"] = count
    if capacity is not None:
        exactly["capacity"] = {"requests": {CAP0: capacity}}
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    if tolerations:
        exactly["tolerations"] = list(tolerations)
    if admin:
        exactly["adminAccess"] = True
    return {"name": name, "exactly": exactly}


def sub(name, cls=CLASS_A, capacity=None, selector=None, tolerations=()):
    s = {"name": name, "deviceClassName": cls, "count": 1}
    if capacity is not None:
        s["capacity"] = {"requests": {CAP0: capacity}}
    if selector:
        s["selectors"] = [{"cel": {"expression": selector}}]
    if tolerations:
        s["tolerations"] = list(tolerations)
    return s


def prioritized(name, *subs):
    return {"name": name, "firstAvailable": list(subs)}


def claim(name, *requests, constraints=()):
    """claimWithRequests(name, constraints, requests...): no namespace, as upstream (klog.KObj prints the name)."""
    return decode(ResourceClaim, {"metadata": {"name": name, "namespace": ""}, "spec": {"devices": {
        "requests": list(requests), "constraints": list(constraints)}}})


def match(attr, *requests):
    return {"matchAttribute": attr, **({"requests": list(requests)} if requests else {})}


def distinct(attr, *requests):
    return {"distinctAttribute": attr, **({"requests": list(requests)} if requests else {})}


def mem(q):
    return f'device.capacity["{DRIVER_A}"].memory.compareTo(quantity("{q}")) >= 0'


def cap0(q):
    return f'device.capacity["{DRIVER_A}"]["{CAP0}"].compareTo(quantity("{q}")) >= 0'


def res(request, device, pool=POOL1, driver=DRIVER_A, tolerations=(), shared=False, consumed=None, admin=False):
    """deviceAllocationResult / deviceRequestAllocationResult(...).withConsumedCapacity(&fixedShareID, ...)."""
    return request, driver, pool, device, admin, tuple(tolerations), shared, consumed


def got(results):
    return [[(r.request, r.driver, r.pool, r.device, bool(r.admin_access),
              tuple({k: v for k, v in (("operator", t.operator), ("key", t.key), ("value", t.value),
                                       ("effect", t.effect)) if v} for t in r.tolerations),
              r.share_id is not None, r.consumed_capacity) for r in a.devices.results] for a in results]


def state(devices=(), capacity=None):
    """allocatedDevices / allocatedCapacityDevices of a test case."""
    st = AllocatedState(devices={(DRIVER_A, POOL1, d) for d in devices})
    for d, caps in (capacity or {}).items():
        st.shared.add((DRIVER_A, POOL1, d))
        st.capacity[(DRIVER_A, POOL1, d)] = dict(caps)
    return st


WITH_CONSTRAINT_DEVICE = attrs(driverVersion="1.0.0", numa=1, stringAttribute="stringAttributeValue",
                               boolAttribute=True)

# (name, claims, classes, slices, allocated state, expected results per claim | None | error text)
CONSTRAINT_ROWS = [
    ("with-constraint",
     [claim("claim-0", req("req-0"), req("req-1"), constraints=[
         match(INT_ATTR), match(VERSION_ATTR), match(STRING_ATTR), match(BOOL_ATTR)])], A,
     [rslice(dev(DEV1, attributes=WITH_CONSTRAINT_DEVICE), dev(DEV2, attributes=WITH_CONSTRAINT_DEVICE))], state(),
     [[res("req-0", DEV1), res("req-1", DEV2)]]),
    ("with-constraint-non-existent-attribute", [claim("claim-0", req("req-0"), constraints=[match(NON_EXISTENT_ATTR)])],
     A, [rslice(dev(DEV1))], state(), None),
    ("with-constraint-not-matching-int-attribute",
     [claim("claim-0", req("req-0", count=2), constraints=[match(INT_ATTR)])], AB,
     [rslice(dev(DEV1, attributes=attrs(numa=1)), dev(DEV2, attributes=attrs(numa=2)))], state(), None),
    ("with-constraint-not-matching-int-attribute-all-devices",
     [claim("claim-0", req("req-0", mode="All"), constraints=[match(INT_ATTR)])], AB,
     [rslice(dev(DEV1, attributes=attrs(numa=1)), dev(DEV2, attributes=attrs(numa=2)))], state(),
     "claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim constraint would not "
     "be satisfied"),
    ("with-constraint-not-matching-string-attribute",
     [claim("claim-0", req("req-0", count=2), constraints=[match(STRING_ATTR)])], AB,
     [rslice(dev(DEV1, attributes=attrs(stringAttribute="stringAttributeValue")),
             dev(DEV2, attributes=attrs(stringAttribute="stringAttributeValue2")))], state(), None),
    ("with-constraint-not-matching-bool-attribute",
     [claim("claim-0", req("req-0", count=2), constraints=[match(BOOL_ATTR)])], AB,
     [rslice(dev(DEV1, attributes=attrs(boolAttribute=True)), dev(DEV2, attributes=attrs(boolAttribute=False)))],
     state(), None),
    ("with-constraint-not-matching-version-attribute",
     [claim("claim-0", req("req-0", count=2), constraints=[match(VERSION_ATTR)])], AB,
     [rslice(dev(DEV1, attributes=attrs(driverVersion="1.0.0")), dev(DEV2, attributes=attrs(driverVersion="2.0.0")))],
     state(), None),
    ("with-constraint-for-request",
     [claim("claim-0", req("req-0"), req("req-1"), constraints=[match(VERSION_ATTR, "req-0")])], AB,
     [rslice(dev(DEV1, attributes=attrs(driverVersion="1.0.0")), dev(DEV2, attributes=attrs(driverVersion="2.0.0")))],
     state(), [[res("req-0", DEV1), res("req-1", DEV2)]]),
    ("with-constraint-for-request-retry",
     [claim("claim-0", req("req-0"), req("req-1"), constraints=[match(VERSION_ATTR, "req-0"), match(STRING_ATTR)])],
     AB, [rslice(dev(DEV1, attributes=attrs(driverVersion="1.0.0", stringAttribute="a")),
                 dev(DEV2, attributes=attrs(driverVersion="2.0.0", stringAttribute="b")),
                 dev(DEV3, attributes=attrs(driverVersion="3.0.0", stringAttribute="b")))], state(),
     [[res("req-0", DEV2), res("req-1", DEV3)]]),
    ("prioritized-list-subrequests-with-constraints-ref-parent-request",
     [claim("claim-0", req("req-0", selector=mem("8Gi")),
            prioritized("req-1", sub("subReq-0", selector=mem("2Gi")), sub("subReq-1", selector=mem("1Gi"))),
            constraints=[match(VERSION_ATTR, "req-0", "req-1")])], A,
     [rslice(dev(DEV1, {"memory": "8Gi"}, attrs(driverVersion="1.0.0"))),
      rslice(dev(DEV2, {"memory": "2Gi"}, attrs(driverVersion="2.0.0")),
             dev(DEV3, {"memory": "1Gi"}, attrs(driverVersion="1.0.0")), name="slice-2", pool=POOL2)], state(),
     [[res("req-0", DEV1), res("req-1/subReq-1", DEV3, pool=POOL2)]]),
    ("prioritized-list-subrequests-with-constraints-ref-sub-request",
     [claim("claim-0", req("req-0", selector=mem("8Gi")),
            prioritized("req-1", sub("subReq-0", selector=mem("2Gi")), sub("subReq-1", selector=mem("1Gi"))),
            constraints=[match(VERSION_ATTR, "req-0", "req-1/subReq-0")])], A,
     [rslice(dev(DEV1, {"memory": "8Gi"}, attrs(driverVersion="1.0.0"))),
      rslice(dev(DEV2, {"memory": "2Gi"}, attrs(driverVersion="2.0.0")), name="slice-2", pool=POOL2)], state(),
     [[res("req-0", DEV1), res("req-1/subReq-1", DEV2, pool=POOL2)]]),
    ("unknown-constraint", [claim("claim-0", req("req-0"), constraints=[{}])], A, [rslice(dev(DEV1))], state(),
     "claim claim-0, constraint #0: empty constraint (unsupported constraint type?)"),
    ("with-distinct-constraints",
     [claim("claim-0", req("req-0"), req("req-1"), req("req-2"), req("req-3"), constraints=[
         distinct(BOOL_ATTR, "req-0", "req-1"), distinct(VERSION_ATTR, "req-0", "req-1", "req-2"),
         distinct(INT_ATTR, "req-0", "req-1", "req-2", "req-3")])], A,
     [rslice(dev(DEV1, attributes=attrs(driverVersion="1.0.0", numa=0, boolAttribute=True), multi=True),
             dev(DEV2, attributes=attrs(driverVersion="1.0.1", numa=1, boolAttribute=False), multi=True),
             dev(DEV3, attributes=attrs(driverVersion="1.0.2", numa=2, boolAttribute=True), multi=True),
             dev(DEV4, attributes=attrs(driverVersion="1.0.0", numa=3, boolAttribute=True), multi=True))], state(),
     [[res("req-0", DEV1, shared=True), res("req-1", DEV2, shared=True), res("req-2", DEV3, shared=True),
       res("req-3", DEV4, shared=True)]]),
    ("with-distinct-constraints-attribute-not-set",
     [claim("claim-0", req("req-0"), constraints=[distinct(BOOL_ATTR, "req-0")])], A,
     [rslice(dev(DEV1, multi=True))], state(), None),
    ("with-distinct-constraints-with-subrequests",
     [claim("claim-0", *[prioritized(r, sub("subReq-0", selector=f'device.attributes["{DRIVER_A}"].boolAttribute'),
                                     sub("subReq-1")) for r in ("req-0", "req-1", "req-2")],
            constraints=[distinct(BOOL_ATTR, "req-0", "req-1")])], A,
     [rslice(dev(DEV1, attributes=attrs(boolAttribute=True), multi=True),
             dev(DEV2, attributes=attrs(boolAttribute=False), multi=True))], state(),
     [[res("req-0/subReq-0", DEV1, shared=True), res("req-1/subReq-1", DEV2, shared=True),
       res("req-2/subReq-0", DEV1, shared=True)]]),
    ("distinct-constraint-one-multi-allocatable-device-with-distinct-constraint",
     [claim("claim-0", req("req-0", capacity=1), req("req-1", capacity=1), constraints=[distinct(STRING_ATTR)])],
     A_MULTI, [rslice(dev(DEV1, attributes=attrs(stringAttribute="stringAttributeValue"), multi=True,
                          policy_range={CAP0: 2}))], state(), None),
    ("distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint",
     [claim("claim-0", req("req-0", capacity=2), req("req-1", capacity=2), constraints=[distinct(STRING_ATTR)])],
     A_MULTI, [rslice(dev(DEV1, attributes=attrs(stringAttribute="stringAttributeValue1"), multi=True,
                          policy_range={CAP0: 4}), count=2),
               rslice(dev(DEV2, attributes=attrs(stringAttribute="stringAttributeValue2"), multi=True,
                          policy_range={CAP0: 4}), count=2)], state(),
     [[res("req-0", DEV1, shared=True, consumed={CAP0: "2"}), res("req-1", DEV2, shared=True, consumed={CAP0: "2"})]]),
]

TAINT_ROWS = [
    ("tainted-two-devices", [claim("claim-0", req("req-0"))], A,
     [rslice(dev(DEV1, taints=[TAINT_NO_SCHEDULE]), dev(DEV2, taints=[TAINT_NO_EXECUTE]))], state(), None),
    ("tainted-one-device-two-taints", [claim("claim-0", req("req-0"))], A,
     [rslice(dev(DEV1, taints=[TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE]))], state(), None),
    ("tainted-two-devices-tolerated", [claim("claim-0", req("req-0", tolerations=[TOL_NO_EXECUTE]))], A,
     [rslice(dev(DEV1, taints=[TAINT_NO_SCHEDULE]), dev(DEV2, taints=[TAINT_NO_EXECUTE]))], state(),
     [[res("req-0", DEV2, tolerations=[TOL_NO_EXECUTE])]]),
    ("tainted-two-devices-prioritized-list-tolerated",
     [claim("claim-0", prioritized("req-0", sub("subReq-0"), sub("subReq-1", tolerations=[TOL_NO_EXECUTE])))], A,
     [rslice(dev(DEV1, taints=[TAINT_NO_SCHEDULE]), dev(DEV2, taints=[TAINT_NO_EXECUTE]))], state(),
     [[res("req-0/subReq-1", DEV2, tolerations=[TOL_NO_EXECUTE])]]),
    ("tainted-no-effect", [claim("claim-0", req("req-0"))], A, [rslice(dev(DEV1, taints=[TAINT_NONE]))], state(),
     [[res("req-0", DEV1)]]),
    ("tainted-one-device-two-taints-both-tolerated",
     [claim("claim-0", req("req-0", tolerations=[TOL_NO_SCHEDULE, TOL_NO_EXECUTE]))], A,
     [rslice(dev(DEV1, taints=[TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE]))], state(),
     [[res("req-0", DEV1, tolerations=[TOL_NO_SCHEDULE, TOL_NO_EXECUTE])]]),
    ("tainted-prioritized-list",
     [claim("claim-0", prioritized("req-0", sub("subReq-0", cls=CLASS_B), sub("subReq-1")))], AB,
     [rslice(dev(DEV1, taints=[TAINT_NO_SCHEDULE]))], state(), None),
    ("tainted-admin-access", [claim("claim-0", req("req-0", admin=True))], A,
     [rslice(dev(DEV1, taints=[TAINT_NO_SCHEDULE]))], state(devices=[DEV1, DEV2]), None),
    ("tainted-all-devices-single", [claim("claim-0", req("req-0", mode="All"))], A,
     [rslice(dev(DEV1, taints=[TAINT_NO_SCHEDULE]))], state(), None),
]

MULTI_RANGE4 = dev(DEV1, multi=True, policy_range={CAP0: 4})
CAPACITY_ROWS = [
    ("consumable-capacity-multi-allocatable-device-with-missing-capacity-request",
     [claim("claim-0", req("req-0", capacity=1))], A, [rslice(dev(DEV1, {CAP1: 1}, multi=True))], state(), None),
    ("consumable-capacity-multi-allocatable-device-allocation-mode-all-with-missing-capacity-request",
     [claim("claim-0", req("req-0", mode="All", capacity=1))], A_MULTI, [rslice(dev(DEV1, {CAP1: 1}, multi=True))],
     state(), None),
    ("consumable-capacity-multi-allocatable-device-without-capacity-without-capacity-request",
     [claim("claim-0", req("req-0")), claim("claim-1", req("req-0"))], A_MULTI, [rslice(dev(DEV1, multi=True))],
     state(), [[res("req-0", DEV1, shared=True)], [res("req-0", DEV1, shared=True)]]),
    ("consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request",
     [claim("claim-0", req("req-0")), claim("claim-1", req("req-0"))], A_MULTI,
     [rslice(dev(DEV1, {CAP0: 1}, multi=True), dev(DEV2, {CAP0: 1}, multi=True))], state(),
     [[res("req-0", DEV1, shared=True, consumed={CAP0: "1"})], [res("req-0", DEV2, shared=True, consumed={CAP0: "1"})]]),
    ("consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block",
     [claim("claim-0", req("req-0")), claim("claim-1", req("req-0"))], A_MULTI,
     [rslice(dev(DEV1, {CAP0: 2}, multi=True))], state(), None),
    ("consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request",
     [claim("claim-0", req("req-0", capacity=1)), claim("claim-1", req("req-0", capacity=1))], A_MULTI,
     [rslice(dev(DEV1, {CAP0: 2}, multi=True))], state(),
     [[res("req-0", DEV1, shared=True, consumed={CAP0: "1"})], [res("req-0", DEV1, shared=True, consumed={CAP0: "1"})]]),
    ("consumable-capacity-multi-allocatable-device-with-policy-without-capacity-request",
     [claim("claim-0", req("req-0")), claim("claim-1", req("req-0"))], A_MULTI, [rslice(MULTI_RANGE4)], state(),
     [[res("req-0", DEV1, shared=True, consumed={CAP0: "2"})], [res("req-0", DEV1, shared=True, consumed={CAP0: "2"})]]),
    ("consumable-capacity-multi-allocatable-device-with-zero-request-policy",
     [claim("claim-0", req("req-0")), claim("claim-1", req("req-0"))], A_MULTI,
     [rslice(dev(DEV1, multi=True, policy_values=(0, {CAP0: 1}, [])))], state(),
     [[res("req-0", DEV1, shared=True, consumed={CAP0: "0"})], [res("req-0", DEV1, shared=True, consumed={CAP0: "0"})]]),
    ("consumable-capacity-multi-allocatable-device-violates-zero-request-policy",
     [claim("claim-0", req("req-0", capacity=1))], A_MULTI,
     [rslice(dev(DEV1, multi=True, policy_values=(0, {CAP0: 1}, [])))], state(), None),
    ("consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request",
     [claim("claim-0", req("req-0", capacity=1)), claim("claim-1", req("req-0", capacity=1))], A_MULTI,
     [rslice(MULTI_RANGE4)], state(),
     [[res("req-0", DEV1, shared=True, consumed={CAP0: "2"})], [res("req-0", DEV1, shared=True, consumed={CAP0: "2"})]]),
    ("consumable-capacity-multi-allocatable-device-with-range-policy-step",
     [claim("claim-0", req("req-0", capacity=3))], A_MULTI, [rslice(MULTI_RANGE4)], state(),
     [[res("req-0", DEV1, shared=True, consumed={CAP0: "4"})]]),
    ("consumable-capacity-multi-allocatable-device-with-valid-values-policy",
     [claim("claim-0", req("req-0", capacity=2))], A_MULTI,
     [rslice(dev(DEV1, multi=True, policy_values=(1, {CAP0: 4}, [2])))], state(),
     [[res("req-0", DEV1, shared=True, consumed={CAP0: "2"})]]),
    ("consumable-capacity-multi-allocatable-device-with-valid-values-policy-round-up",
     [claim("claim-0", req("req-0", capacity=2))], A_MULTI,
     [rslice(dev(DEV1, multi=True, policy_values=(1, {CAP0: 3}, [3])))], state(),
     [[res("req-0", DEV1, shared=True, consumed={CAP0: "3"})]]),
    ("consumable-capacity-multi-allocatable-device-with-exceeded-consumable-capacity-request",
     [claim("claim-0", req("req-0", capacity=1)), claim("claim-1", req("req-0", capacity=2))], A_MULTI,
     [rslice(dev(DEV1, multi=True, policy_range={CAP0: 2}))], state(), None),
    ("consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy",
     [claim("claim-0", req("req-0", capacity=6))], A_MULTI, [rslice(dev(DEV1, multi=True, policy_range={CAP0: 10}))],
     state(), None),
    ("consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining",
     [claim("claim-0", req("req-0", capacity=2))], A_MULTI, [rslice(MULTI_RANGE4)], state(capacity={DEV1: {CAP0: 2}}),
     [[res("req-0", DEV1, shared=True, consumed={CAP0: "2"})]]),
    ("consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device",
     [claim("claim-0", req("req-0", capacity=2))], A_MULTI,
     [rslice(dev(DEV1, multi=True, policy_range={CAP0: 2}), dev(DEV2, multi=True, policy_range={CAP0: 2}))],
     state(capacity={DEV1: {CAP0: 2}}), [[res("req-0", DEV2, shared=True, consumed={CAP0: "2"})]]),
    ("consumable-capacity-with-multi-allocatable-device-backtrack",
     [claim("claim-0", req("req-0", capacity=2), req("req-1", capacity=2), constraints=[match(STRING_ATTR)]),
      claim("claim-1", req("req-0", capacity=2))], A,
     [rslice(dev(DEV2, attributes=attrs(stringAttribute="stringAttributeValue1"), multi=True, policy_range={CAP0: 2}),
             dev(DEV1, attributes=attrs(stringAttribute="stringAttributeValue2"), multi=True, policy_range={CAP0: 4}))],
     state(), [[res("req-0", DEV1, shared=True, consumed={CAP0: "2"}), res("req-1", DEV1, shared=True,
                                                                          consumed={CAP0: "2"})],
               [res("req-0", DEV2, shared=True, consumed={CAP0: "2"})]]),
    ("consumable-capacity-multi-allocatable-device-with-subrequest",
     [claim("claim-0", prioritized("req-0", sub("subReq-0", capacity=4), sub("subReq-1", capacity=2),
                                   sub("subReq-1")))], A_MULTI,
     [rslice(dev(DEV1, multi=True, policy_range={CAP0: 2}))], state(),
     [[res("req-0/subReq-1", DEV1, shared=True, consumed={CAP0: "2"})]]),
    ("consumable-capacity-multi-allocatable-device-with-no-available-consumable-capacity",
     [claim("claim-0", req("req-0", capacity=2))], A_MULTI, [rslice(dev(DEV1, multi=True, policy_range={CAP0: 2}))],
     state(capacity={DEV1: {CAP0: 2}}), None),
    ("consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-no-capacity",
     [claim("claim-0", req("req-0", mode="All", capacity=2))], A_MULTI,
     [rslice(dev(DEV1, {CAP0: 2}, multi=True), dev(DEV2, multi=True))], state(),
     [[res("req-0", DEV1, shared=True, consumed={CAP0: "2"})]]),
    ("consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-insufficient-capacity",
     [claim("claim-0", req("req-0", mode="All", capacity=2))], A_MULTI,
     [rslice(dev(DEV1, {CAP0: 2}, multi=True), dev(DEV2, {CAP0: 1}, multi=True))], state(),
     [[res("req-0", DEV1, shared=True, consumed={CAP0: "2"})]]),
    ("consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-sufficient",
     [claim("claim-0", req("req-0", capacity=1), req("req-1", mode="All", capacity=1))], A,
     [rslice(dev(DEV1, {CAP0: 2}, multi=True), dev(DEV2, {CAP0: 1}, multi=True))], state(),
     [[res("req-0", DEV1, shared=True, consumed={CAP0: "1"}), res("req-1", DEV1, shared=True, consumed={CAP0: "1"}),
       res("req-1", DEV2, shared=True, consumed={CAP0: "1"})]]),
    ("consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-sufficient",
     [claim("claim-0", req("req-0", mode="All", capacity=1))], A,
     [rslice(dev(DEV1, {CAP0: 2}, multi=True), dev(DEV2, {CAP0: 1}, multi=True))], state(capacity={DEV1: {CAP0: 1}}),
     [[res("req-0", DEV1, shared=True, consumed={CAP0: "1"}), res("req-0", DEV2, shared=True, consumed={CAP0: "1"})]]),
    ("consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-insufficient",
     [claim("claim-0", req("req-0", capacity=1), req("req-1", mode="All", capacity=1))], A,
     [rslice(dev(DEV1, {CAP0: 1}, multi=True), dev(DEV2, {CAP0: 1}, multi=True))], state(), None),
    ("consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-insufficient",
     [claim("claim-0", req("req-0", mode="All", capacity=1))], A,
     [rslice(dev(DEV1, {CAP0: 1}, multi=True), dev(DEV2, {CAP0: 1}, multi=True))], state(capacity={DEV1: {CAP0: 1}}),
     [[res("req-0", DEV2, shared=True, consumed={CAP0: "1"})]]),
    ("consumable-capacity-dedicated-device-with-consumable-capacity-request",
     [claim("claim-0", req("req-0", capacity=1))], A_DEDICATED, [rslice(dev(DEV1, {CAP0: 1}))], state(),
     [[res("req-0", DEV1)]]),
    ("consumable-capacity-dedicated-device-with-multiple-consumable-capacity-request",
     [claim("claim-0", req("req-0", capacity=1)), claim("claim-1", req("req-0", capacity=1))], A_DEDICATED,
     [rslice(dev(DEV1, policy_range={CAP0: 2}))], state(), None),
    ("allow-multiple-allocations-exclude-multi-allocatable-device-by-class-selector",
     [claim("claim-0", req("req-0", capacity=1))], A_DEDICATED, [rslice(dev(DEV1, {CAP0: 1}, multi=True))], state(),
     None),
    ("allow-multiple-allocations-not-allocate-multi-allocatable-device-which-already-dedicated",
     [claim("claim-0", req("req-0", capacity=1))], A_MULTI, [rslice(dev(DEV1, multi=True, policy_range={CAP0: 2}))],
     state(devices=[DEV1]), None),
    ("allow-multiple-allocations-not-allocate-dedicated-device-which-change-from-multi-allocatable",
     [claim("claim-0", req("req-0", capacity=1))], A_MULTI, [rslice(dev(DEV1, policy_range={CAP0: 2}))],
     state(capacity={DEV1: {CAP0: 1}}), None),
    ("allow-multiple-allocations-with-partitionable-device",
     [claim("claim-0", req("req-0"), prioritized("req-1", sub("subReq-0", selector=mem("6Gi")),
                                                 sub("subReq-1", selector=mem("4Gi"))))], A_MULTI,
     [rslice(*[dev(d, multi=True, counters=[(SET1, {"memory": m})]) for d, m in
               ((DEV1, "4Gi"), (DEV2, "6Gi"), (DEV3, "4Gi"))], count=2),
      rslice(name="slice-2", count=2, counter_sets=[(SET1, {"memory": "8Gi"})])], state(),
     [[res("req-0", DEV1, shared=True, consumed={"memory": "4Gi"}),
       res("req-1/subReq-1", DEV3, shared=True, consumed={"memory": "4Gi"})]]),
    ("consumable-capacity-with-partitionable-device-multiple-capacity-pools",
     [claim("claim-0", req("req-0", capacity=1), req("req-2", capacity=2),
            prioritized("req-1", sub("subReq-0", selector=cap0(4), capacity=1),
                        sub("subReq-1", selector=cap0(2), capacity=1)))], A,
     [rslice(*[dev(d, multi=True, counters=[(SET1, {CAP0: c}), (SET2, {CAP1: 4})], policy_range={CAP1: 4})
               for d, c in ((DEV1, 2), (DEV2, 4), (DEV3, 2))], count=2),
      rslice(name="slice-2", count=2, counter_sets=[(SET1, {CAP0: 4}), (SET2, {CAP1: "8"})])], state(),
     [[res("req-0", DEV1, shared=True, consumed={CAP0: "1", CAP1: "2"}),
       res("req-2", DEV3, shared=True, consumed={CAP0: "2", CAP1: "2"}),
       res("req-1/subReq-1", DEV1, shared=True, consumed={CAP0: "1", CAP1: "2"})]]),
]


def run(claims, classes, slices, allocated, want, node=NODE1):
    alloc = Allocator(classes, slices, allocated)
    if isinstance(want, str):
        with pytest.raises(AllocationError) as e:
            alloc.allocate(node, claims)
        assert want in str(e.value)
        return
    results = alloc.allocate(node, claims)
    if want is None:
        assert results is None
        return
    assert got(results) == want
    for a in results:
        for r in a.devices.results:   # a share's ID is an RFC 4122 UUID in normalized form
            assert r.share_id is None or str(uuid.UUID(r.share_id)) == r.share_id


@pytest.mark.parametrize("name,claims,classes,slices,allocated,want", CONSTRAINT_ROWS, ids=[r[0] for r in CONSTRAINT_ROWS])
def test_allocator_constraints(name, claims, classes, slices, allocated, want):
    run(claims, classes, slices, allocated, want)


@pytest.mark.parametrize("name,claims,classes,slices,allocated,want", TAINT_ROWS, ids=[r[0] for r in TAINT_ROWS])
def test_allocator_device_taints(name, claims, classes, slices, allocated, want):
    run(claims, classes, slices, allocated, want)


@pytest.mark.parametrize("name,claims,classes,slices,allocated,want", CAPACITY_ROWS, ids=[r[0] for r in CAPACITY_ROWS])
def test_allocator_consumable_capacity(name, claims, classes, slices, allocated, want):
    run(claims, classes, slices, allocated, want)


def test_share_ids_repeat_across_runs_and_differ_between_shares():
    """gpusim's deterministic stand-in for GenerateShareID."""
    claims = [claim("claim-0", req("req-0")), claim("claim-1", req("req-0"))]
    runs = [Allocator(A_MULTI, [rslice(dev(DEV1, multi=True))], AllocatedState()).allocate(NODE1, claims)
            for _ in range(2)]
    ids = [[r.share_id for a in results for r in a.devices.results] for results in runs]
    assert ids[0] == ids[1] and len(set(ids[0])) == 2


def test_matchattribute_keeps_mig_slices_on_one_parent_gpu():
    """The NVIDIA DRA driver's gpu-test4 pattern: two MIG requests with matchAttribute gpu.nvidia.com/parentUUID
    land on the same physical GPU even when the first GPU has only one free slice."""
    def mig(name, parent):
        return dev(name, attributes={"type": {"string": "mig"}, "parentUUID": {"string": parent}})

    slices = [rslice(mig("gpu-0-mig-a", "GPU-0"), mig("gpu-1-mig-a", "GPU-1"), mig("gpu-1-mig-b", "GPU-1"),
                     driver="gpu.nvidia.com")]
    classes = {"mig.nvidia.com": klass("mig.nvidia.com", "gpu.nvidia.com")}
    c = claim("mig-pair", req("mig-0", cls="mig.nvidia.com"), req("mig-1", cls="mig.nvidia.com"),
              constraints=[match("gpu.nvidia.com/parentUUID")])
    (a,) = Allocator(classes, slices, AllocatedState()).allocate(NODE1, [c])
    assert [r.device for r in a.devices.results] == ["gpu-1-mig-a", "gpu-1-mig-b"]
    without = claim("mig-pair", req("mig-0", cls="mig.nvidia.com"), req("mig-1", cls="mig.nvidia.com"))
    (b,) = Allocator(classes, slices, AllocatedState()).allocate(NODE1, [without])
    assert [r.device for r in b.devices.results] == ["gpu-0-mig-a", "gpu-1-mig-a"]


# --- the DynamicResources plugin: shares of allocated and in-flight claims count ----------------------------------
SHARED_SLICE = rslice(dev(DEV1, multi=True, policy_range={CAP0: 4}))


def shared_claim(name, capacity, allocated=False):
    c = claim(name, req("req-0", capacity=capacity))
    c.metadata.namespace = "default"
    if allocated:
        c.status = decode(ResourceClaim, {"metadata": {}, "status": {"allocation": {"devices": {"results": [{
            "request": "req-0", "driver": DRIVER_A, "pool": POOL1, "device": DEV1,
            "shareID": "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa", "consumedCapacity": {CAP0: str(capacity)}}]}}}}).status
    return c


def filter_pod(claims, pod_claim):
    api = APIServer(simpy.Environment(), random.Random(0))
    for o in [A_MULTI[CLASS_A], SHARED_SLICE, *claims]:
        api.create(o)
    plugin = DynamicResources(None, SimpleNamespace(api=api, ctx=SimpleNamespace(now=0.0)))
    pod = decode(Pod, {"metadata": {"name": "p", "namespace": "default", "uid": "p"}, "spec": {
        "resourceClaims": [{"name": "x", "resourceClaimName": pod_claim}], "containers": [{"name": "c", "image": "x"}]}})
    st = CycleState()
    plugin.pre_filter(st, PodInfo(pod), [])
    return plugin.filter(st, PodInfo(pod), NodeInfo(Node(metadata=ObjectMeta(name=NODE1)))).message()


@pytest.mark.parametrize("used,asked,message", [(2, 2, ""), (4, 2, "cannot allocate all claims"),
                                                (2, 3, "cannot allocate all claims")])
def test_plugin_counts_the_capacity_of_allocated_shares(used, asked, message):
    """A multi-allocatable device (capacity 4, range 2..4 step 2) with a share of ``used`` allocated: a claim
    asking ``asked`` (rounded up to the step) fits only in what is left."""
    assert filter_pod([shared_claim("first", used, allocated=True), shared_claim("second", asked)], "second") == message


# --- validation (pkg/apis/resource/validation/validation.go: validateDeviceConstraint, validateDeviceToleration,
#     validateDeviceTaint, validateRequestPolicy; texts as upstream) ---------------------------------------------
NS = "apiVersion: resource.k8s.io/v1\n"
CLAIM = NS + "kind: ResourceClaim\nmetadata: {name: c}\nspec: {devices: {requests: [{name: gpu, exactly: %s}]%s}}"
SLICE = (NS + "kind: ResourceSlice\nmetadata: {name: s}\nspec: {driver: gpu.nvidia.com, pool: {name: p, "
              "resourceSliceCount: 1}, nodeName: n, devices: [%s]}")


@pytest.mark.parametrize("doc,message", [
    (CLAIM % ("{deviceClassName: g}", ", constraints: [{matchAttribute: parentUUID}]"),
     'spec.devices.constraints[0].matchAttribute: Invalid value: "parentUUID": a fully qualified name must be a '
     "domain and a name separated by a slash"),
    (CLAIM % ("{deviceClassName: g}", ", constraints: [{requests: [gpu-x], matchAttribute: gpu.nvidia.com/uuid}]"),
     'spec.devices.constraints[0].requests[0]: Invalid value: "gpu-x": must be the name of a request in the claim or '
     "the name of a request and a subrequest separated by '/'"),
    (CLAIM % ("{deviceClassName: g}", ", constraints: [{requests: [gpu]}]"),
     'spec.devices.constraints[0]: Required value: exactly one of "matchAttribute" or "distinctAttribute" is required'),
    (CLAIM % ("{deviceClassName: g}", ", constraints: [{distinctAttribute: 'gpu.nvidia.com/9x'}]"),
     'spec.devices.constraints[0].distinctAttribute: Invalid value: "9x": a C identifier'),
    (CLAIM % ("{deviceClassName: g, tolerations: [{key: k, operator: Exists, value: v}]}", ""),
     'spec.devices.requests[0].exactly.tolerations[0].value: Invalid value: "v": must be empty for operator `Exists`'),
    (CLAIM % ("{deviceClassName: g, tolerations: [{key: k, operator: In}]}", ""),
     'spec.devices.requests[0].exactly.tolerations[0].operator: Unsupported value: "In": supported values: "Equal", '
     '"Exists"'),
    (CLAIM % ("{deviceClassName: g, tolerations: [{key: k, value: v, effect: PreferNoSchedule}]}", ""),
     'spec.devices.requests[0].exactly.tolerations[0].effect: Unsupported value: "PreferNoSchedule": supported '
     'values: "NoExecute", "NoSchedule", "None"'),
    (CLAIM % ("{deviceClassName: g, capacity: {requests: {memory: 10x}}}", ""),
     'spec.devices.requests[0].exactly.capacity.requests[memory]: Invalid value: "10x"'),
    (SLICE % "{name: gpu-0, taints: [{key: k, value: v}]}", "spec.devices[0].taints[0].effect: Required value"),
    (SLICE % "{name: gpu-0, taints: [{key: k, effect: PreferNoSchedule}]}",
     'spec.devices[0].taints[0].effect: Unsupported value: "PreferNoSchedule": supported values: "NoExecute", '
     '"NoSchedule", "None"'),
    (SLICE % "{name: gpu-0, capacity: {memory: {value: 80Gi, requestPolicy: {default: 1Gi}}}}",
     "spec.devices[0].capacity[memory].requestPolicy: Forbidden: allowMultipleAllocations must be true"),
    (SLICE % "{name: gpu-0, allowMultipleAllocations: true, capacity: {memory: {value: 80Gi, requestPolicy: "
             "{validValues: [10Gi]}}}}",
     "spec.devices[0].capacity[memory].requestPolicy.default: Required value: required when validValues is defined"),
    (SLICE % "{name: gpu-0, allowMultipleAllocations: true, capacity: {memory: {value: 80Gi, requestPolicy: "
             "{default: 10Gi, validValues: [20Gi, 10Gi]}}}}",
     'spec.devices[0].capacity[memory].requestPolicy.validValues[1]: Invalid value: "10Gi": values must be sorted in '
     "ascending order"),
    (SLICE % "{name: gpu-0, allowMultipleAllocations: true, capacity: {memory: {value: 80Gi, requestPolicy: "
             "{default: 3Gi, validRange: {min: 2Gi, step: 2Gi}}}}}",
     'spec.devices[0].capacity[memory].requestPolicy.validRange.step: Invalid value: "3Gi": value is not a multiple '
     "of a given step (2Gi) from (2Gi)"),
    (SLICE % "{name: gpu-0, allowMultipleAllocations: true, capacity: {memory: {value: 80Gi, requestPolicy: "
             "{default: 1Gi, validRange: {min: 90Gi}}}}}",
     'spec.devices[0].capacity[memory].requestPolicy.validRange.min: Invalid value: "90Gi": min is larger than '
     "capacity value: 80Gi"),
    (SLICE % "{name: gpu-0, bindingConditions: [ready], bindingFailureConditions: [failed]}",
     "spec.devices[0]: Forbidden: gpusim does not model device binding conditions (DRADeviceBindingConditions"),
    (NS.replace("v1", "v1alpha3") + "kind: DeviceTaintRule\nmetadata: {name: r}\nspec: {}",
     "DRADeviceTaintRules feature gate, alpha and off in Kubernetes 1.36"),
])
def test_validation(doc, message):
    with pytest.raises(InputError) as e:
        load(texts=[("dra.yaml", doc)])
    assert message in str(e.value) and "dra.yaml" in str(e.value)


def test_valid_constraints_tolerations_taints_and_policies_load():
    docs = [CLAIM % ("{deviceClassName: g, tolerations: [{key: k, operator: Exists, effect: NoSchedule}], "
                     "capacity: {requests: {memory: 10Gi}}}",
                     ", constraints: [{requests: [gpu], matchAttribute: gpu.nvidia.com/parentUUID}]"),
            SLICE % ("{name: gpu-0, taints: [{key: k, value: v, effect: NoExecute}], allowMultipleAllocations: true, "
                     "capacity: {memory: {value: 80Gi, requestPolicy: {default: 10Gi, validRange: {min: 10Gi, "
                     "step: 10Gi, max: 80Gi}}}}}")]
    sc = load(texts=[("dra.yaml", "\n---\n".join(docs))])
    (c,) = sc.objects["ResourceClaim"]
    assert c.spec.devices.requests[0].exactly.tolerations[0].operator == "Exists"
    assert c.spec.devices.constraints[0].match_attribute == "gpu.nvidia.com/parentUUID"
