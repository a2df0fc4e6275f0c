"""Partitionable devices (KEP-4815) in the structured allocator: ResourceSlice ``sharedCounters`` and device
``consumesCounters``."""
from __future__ import annotations

import pytest

from gpusim.api.resource_k8s_io_v1 import Counter, DeviceClass, ResourceClaim, ResourceSlice
from gpusim.api.schema import decode
from gpusim.scheduler.dra.allocator import MSG_INVALID_POOLS, Allocator, FailedOnNodeError, gather_pools

# the helpers of allocator_testing.go, same names and values
DRIVER_A, DRIVER_B, CLASS_A, NODE1 = "driver-a", "driver-b", "class-a", "node-1"
POOL1, POOL2, SET1, SET2 = "pool-1", "pool-2", "counter-set-1", "counter-set-2"
DEV1, DEV2, DEV3 = "device-1", "device-2", "device-3"
CLASSES = {CLASS_A: decode(DeviceClass, {"metadata": {"name": CLASS_A}, "spec": {
    "selectors": [{"cel": {"expression": f'device.driver == "{DRIVER_A}"'}}]}})}
MEM = 'device.capacity["driver-a"].memory.compareTo(quantity("{}")) >= 0'


def dev(name, *uses, memory=None):
    """device(...).withDeviceCounterConsumption(deviceCounterConsumption(set, counters), ...); ``fromCounters``
    rows also give the device a ``memory`` capacity, which the prioritized-list rows select on."""
    d = {"name": name, "consumesCounters": [{"counterSet": s, "counters": {k: {"value": v} for k, v in c.items()}}
                                            for s, c in uses]}
    if memory:
        d["capacity"] = {"memory": {"value": memory}}
    return d


def devices_slice(name, pool, *devices, driver=DRIVER_A):
    """sliceWithDevices(name, node1, resourcePool(pool, 2), driver, ...)."""
    return decode(ResourceSlice, {"metadata": {"name": name}, "spec": {
        "driver": driver, "nodeName": NODE1, "pool": {"name": pool, "resourceSliceCount": 2}, "devices": list(devices)}})


def counters_slice(name, pool, *sets, driver=DRIVER_A):
    """sliceWithCounterSets(name, node1, resourcePool(pool, 2), driver, counterSet(...), ...)."""
    return decode(ResourceSlice, {"metadata": {"name": name}, "spec": {
        "driver": driver, "nodeName": NODE1, "pool": {"name": pool, "resourceSliceCount": 2},
        "sharedCounters": [{"name": s, "counters": {k: {"value": v} for k, v in c.items()}} for s, c in sets]}})


def claim(*requests):
    return decode(ResourceClaim, {"metadata": {"name": "claim-0", "namespace": "default"},
                                  "spec": {"devices": {"requests": list(requests)}}})


def req(name, count=1):
    return {"name": name, "exactly": {"deviceClassName": CLASS_A, "count": count}}


def prioritized(name):
    """requestWithPrioritizedList(req1, subRequest(subReq0 ≥6Gi), subRequest(subReq1 ≥4Gi))."""
    return {"name": name, "firstAvailable": [
        {"name": "subReq-0", "deviceClassName": CLASS_A, "selectors": [{"cel": {"expression": MEM.format("6Gi")}}]},
        {"name": "subReq-1", "deviceClassName": CLASS_A, "selectors": [{"cel": {"expression": MEM.format("4Gi")}}]}]}


def three_devices(m1, m2, m3, **extra):
    return devices_slice("slice-1", POOL1, dev(DEV1, (SET1, {"memory": m1}), memory=m1),
                         dev(DEV2, (SET1, {"memory": m2}), memory=m2), dev(DEV3, (SET1, {"memory": m3}), memory=m3))


# kubernetes staging/src/k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting/allocator_testing.go
# (the 1.36 development line), TestAllocator, the "partitionable-devices-*" rows. Rows written with a bare pool1
# (resourceSliceCount 1 for two slices, an incomplete pool upstream skips) use resourcePool(pool1, 2) here so that
# the counters decide; the "-disabled-" rows (feature gate off) and the per-device node selection rows (gpusim
# models nodeName/allNodes slices only) are not ported.
# (name, claims, slices, allocated devices, want: [(request, driver, pool, device)] | None | error text)
ROWS = [
    ("partitionable-devices-single-device", [claim(req("req-0"))],
     [devices_slice("slice-1", POOL1, dev(DEV1, (SET1, {"memory": "4Gi"}))),
      counters_slice("slice-2", POOL1, (SET1, {"memory": "8Gi"}))], [],
     [("req-0", DRIVER_A, POOL1, DEV1)]),
    ("partitionable-devices-prioritized-list", [claim(req("req-0"), prioritized("req-1"))],
     [three_devices("4Gi", "6Gi", "4Gi"), counters_slice("slice-2", POOL1, (SET1, {"memory": "8Gi"}))], [],
     [("req-0", DRIVER_A, POOL1, DEV1), ("req-1/subReq-1", DRIVER_A, POOL1, DEV3)]),
    ("partitionable-devices-multiple-devices", [claim(req("req-0"), req("req-1"))],
     [three_devices("4Gi", "6Gi", "4Gi"), counters_slice("slice-2", POOL1, (SET1, {"memory": "8Gi"}))], [],
     [("req-0", DRIVER_A, POOL1, DEV1), ("req-1", DRIVER_A, POOL1, DEV3)]),
    ("partitionable-devices-multiple-capacity-pools", [claim(req("req-0"), prioritized("req-1"))],
     [devices_slice("slice-1", POOL1,
                    dev(DEV1, (SET1, {"memory": "4Gi"}), (SET2, {"cpus": "4"}), memory="4Gi"),
                    dev(DEV2, (SET1, {"memory": "6Gi"}), (SET2, {"cpus": "6"}), memory="6Gi"),
                    dev(DEV3, (SET1, {"memory": "4Gi"}), (SET2, {"cpus": "4"}), memory="4Gi")),
      counters_slice("slice-2", POOL1, (SET1, {"memory": "18Gi"}), (SET2, {"cpus": "8"}))], [],
     [("req-0", DRIVER_A, POOL1, DEV1), ("req-1/subReq-1", DRIVER_A, POOL1, DEV3)]),
    ("partitionable-devices-multiple-counters", [claim(req("req-0"), req("req-1"))],
     [devices_slice("slice-1", POOL1,
                    dev(DEV1, (SET1, {"memory": "4Gi", "cpus": "6"}), (SET2, {"cpus": "4", "memory": "2Gi"})),
                    dev(DEV2, (SET1, {"memory": "6Gi", "cpus": "4"}), (SET2, {"cpus": "6", "memory": "6Gi"})),
                    dev(DEV3, (SET1, {"memory": "4Gi", "cpus": "4"}), (SET2, {"cpus": "4", "memory": "4Gi"}))),
      counters_slice("slice-2", POOL1, (SET1, {"cpus": "8", "memory": "18Gi"}), (SET2, {"cpus": "12", "memory": "18Gi"}))],
     [], [("req-0", DRIVER_A, POOL1, DEV2), ("req-1", DRIVER_A, POOL1, DEV3)]),
    ("partitionable-devices-multiple-pools", [claim(req("req-0"), req("req-1"))],
     [devices_slice("slice-1", POOL1, dev(DEV1, (SET1, {"cpus": "6", "memory": "4Gi"})),
                    dev(DEV2, (SET1, {"cpus": "4", "memory": "6Gi"})), dev(DEV3, (SET1, {"cpus": "4", "memory": "4Gi"}))),
      counters_slice("slice-2", POOL1, (SET1, {"cpus": "8", "memory": "18Gi"})),
      devices_slice("slice-3", POOL2, dev(DEV1, (SET1, {"cpus": "6", "memory": "4Gi"})),
                    dev(DEV2, (SET1, {"cpus": "1", "memory": "7Gi"})), dev(DEV3, (SET1, {"cpus": "1", "memory": "7Gi"}))),
      counters_slice("slice-4", POOL2, (SET1, {"cpus": "8", "memory": "18Gi"}))],
     [(DRIVER_A, POOL1, DEV2), (DRIVER_A, POOL1, DEV3), (DRIVER_A, POOL2, DEV1)],
     [("req-0", DRIVER_A, POOL2, DEV2), ("req-1", DRIVER_A, POOL2, DEV3)]),
    ("partitionable-devices-unused-counters-in-counter-set", [claim(req("req-0", count=2))],
     [devices_slice("slice-1", POOL1, dev(DEV1, (SET1, {"memory": "5Gi"})), dev(DEV2, (SET1, {"memory": "4Gi"})),
                    dev(DEV3, (SET1, {"memory": "4Gi"}))),
      counters_slice("slice-2", POOL1, (SET1, {"memory": "8Gi", "unused": "1Gi"}))], [],
     [("req-0", DRIVER_A, POOL1, DEV2), ("req-0", DRIVER_A, POOL1, DEV3)]),
    ("partitionable-devices-no-capacity-available", [claim(req("req-0"))],
     [devices_slice("slice-1", POOL1, dev(DEV1, (SET1, {"memory": "4Gi"})), dev(DEV2, (SET1, {"memory": "16Gi"}))),
      counters_slice("slice-2", POOL1, (SET1, {"memory": "18Gi"}))], [(DRIVER_A, POOL1, DEV2)], None),
    ("partitionable-devices-overallocated-capacity-pool", [claim(req("req-0"))],
     [devices_slice("slice-1", POOL1, dev(DEV1, (SET1, {"memory": "4Gi"})), dev(DEV2, (SET1, {"memory": "20Gi"}))),
      counters_slice("slice-2", POOL1, (SET1, {"memory": "18Gi"}))], [(DRIVER_A, POOL1, DEV2)], None),
    # pools_incubating.go buildPool: invalid pools are skipped, and reported when nothing else fits
    ("invalid-pool-unknown-counter-set", [claim(req("req-0"))],
     [devices_slice("slice-1", POOL1, dev(DEV1, (SET2, {"memory": "4Gi"}))),
      counters_slice("slice-2", POOL1, (SET1, {"memory": "8Gi"}))], [], MSG_INVALID_POOLS),
    ("invalid-pool-unknown-counter", [claim(req("req-0"))],
     [devices_slice("slice-1", POOL1, dev(DEV1, (SET1, {"cpus": "4"}))),
      counters_slice("slice-2", POOL1, (SET1, {"memory": "8Gi"}))], [], MSG_INVALID_POOLS),
    ("invalid-pool-duplicate-counter-set", [claim(req("req-0"))],
     [devices_slice("slice-1", POOL1, dev(DEV1, (SET1, {"memory": "4Gi"}))),
      counters_slice("slice-2", POOL1, (SET1, {"memory": "8Gi"}), (SET1, {"memory": "8Gi"}))], [], MSG_INVALID_POOLS),
    ("invalid-pool-other-pool-fits", [claim(req("req-0"))],
     [devices_slice("slice-1", POOL1, dev(DEV1, (SET2, {"memory": "4Gi"}))),
      counters_slice("slice-2", POOL1, (SET1, {"memory": "8Gi"})),
      devices_slice("slice-3", POOL2, dev(DEV1, (SET1, {"memory": "4Gi"}))),
      counters_slice("slice-4", POOL2, (SET1, {"memory": "8Gi"}))], [], [("req-0", DRIVER_A, POOL2, DEV1)]),
]


@pytest.mark.parametrize("name,claims,slices,allocated,want", ROWS, ids=[r[0] for r in ROWS])
def test_allocator_counters(name, claims, slices, allocated, want):
    alloc = Allocator(CLASSES, slices, set(allocated))
    if isinstance(want, str):
        with pytest.raises(FailedOnNodeError, match=want):
            alloc.allocate(NODE1, claims)
        return
    got = alloc.allocate(NODE1, claims)
    if want is None:
        assert got is None
        return
    (a,) = got
    assert [(r.request, r.driver, r.pool, r.device) for r in a.devices.results] == want


@pytest.mark.parametrize("mutate,reason", [
    (lambda s: setattr(s[0].spec.devices[0].consumes_counters[0], "counter_set", "counter-set-9"),
     "counter set counter-set-9 not found"),
    (lambda s: s[0].spec.devices[0].consumes_counters[0].counters.update(cpus=Counter("1")),
     "counter cpus not found in counter set counter-set-1"),
    (lambda s: s[1].spec.shared_counters.append(s[1].spec.shared_counters[0]),
     "duplicate counter set name counter-set-1"),
    (lambda s: s[0].spec.devices.append(s[0].spec.devices[0]), "duplicate device name device-1"),
])
def test_invalid_pool_reasons(mutate, reason):
    """buildPool's InvalidReason, kept on the pool (upstream logs it at V(6))."""
    slices = [devices_slice("slice-1", POOL1, dev(DEV1, (SET1, {"memory": "4Gi"}))),
              counters_slice("slice-2", POOL1, (SET1, {"memory": "8Gi"}))]
    assert gather_pools(slices, NODE1)[0].invalid == ""
    mutate(slices)
    assert gather_pools(slices, NODE1)[0].invalid == reason


def test_counters_free_again_after_search_backtracks():
    """A request that fails after an earlier one consumed counters gives them back: the second alternative of
    the whole search still sees the full counter set."""
    slices = [three_devices("8Gi", "4Gi", "4Gi"), counters_slice("slice-2", POOL1, (SET1, {"memory": "8Gi"}))]
    (a,) = Allocator(CLASSES, slices, set()).allocate(NODE1, [claim(req("req-0"), req("req-1"))])
    assert [r.device for r in a.devices.results] == [DEV2, DEV3]


def test_all_mode_needs_counters_for_every_device():
    slices = [three_devices("4Gi", "4Gi", "4Gi"), counters_slice("slice-2", POOL1, (SET1, {"memory": "8Gi"}))]
    all_req = {"name": "req-0", "exactly": {"deviceClassName": CLASS_A, "allocationMode": "All"}}
    assert Allocator(CLASSES, slices, set()).allocate(NODE1, [claim(all_req)]) is None
    slices[1].spec.shared_counters[0].counters["memory"].value = "12Gi"
    (a,) = Allocator(CLASSES, slices, set()).allocate(NODE1, [claim(all_req)])
    assert [r.device for r in a.devices.results] == [DEV1, DEV2, DEV3]
