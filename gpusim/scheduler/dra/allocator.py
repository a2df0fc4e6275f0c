"""The structured-parameters allocator (mirrors kubernetes
staging/src/k8s.io/dynamic-resource-allocation/structured/internal/stable/allocator_stable.go, reached through
structured/allocator.go ``NewAllocator(...).Allocate(node, claims)``).

For one node it picks, for every request of every claim, devices from the ResourceSlices usable on that node:
- slices: ``nodeName`` equal to the node, or ``allNodes``; per (driver, pool) only the slices of the highest
  ``pool.generation`` count (GatherPools); an ``All`` request on an incomplete pool (fewer slices than
  ``resourceSliceCount``) is an error ("asks for all devices, but resource pool <driver>/<pool> is currently
  being updated");
- order: pools by (driver, pool name), slices by name, devices in slice order: first fit, as upstream;
- a device matches when every selector of its DeviceClass and of the request evaluates to true (CEL);
- ``ExactCount`` takes ``count`` devices, ``All`` takes every matching device and needs at least one and none
  in use; ``firstAvailable`` tries the sub-requests in order (result request ``<request>/<subrequest>``);
- a device already allocated to another claim, or picked for an earlier request of the same pod, is not
  taken again; a request with ``adminAccess`` may take devices in use by other claims (not those its own claim
  already picked), and its picks leave the device free for others;
- search: depth first over requests and their devices with backtracking, as upstream's ``allocateOne``, so a
  later request can still succeed when an earlier one could have used another device.
- partitionable devices (KEP-4815, internal/incubating/allocator_incubating.go ``checkAvailableCounters`` and
  pools_incubating.go ``buildPool``): slices with ``sharedCounters`` hold the pool's counter sets, the others its
  devices. A device with ``consumesCounters`` is allocatable only if, after adding its consumption to what the
  devices picked so far consume, every counter of every counter set of its pool stays at or above zero, counting
  the devices already allocated anywhere in the pool (an over-consumed counter blocks every counter-consuming
  device of the pool, as upstream). adminAccess picks consume counters too. A pool with a duplicate device name
  (``duplicate device name <d>``), a duplicate counter set (``duplicate counter set name <s>``) or a device
  consuming an unknown set or counter (``counter set <s> not found``, ``counter <c> not found in counter set <s>``)
  is invalid: its devices are not used, and when allocation fails on the node the error is
  "invalid resource pools were encountered" (``ErrFailedAllocationOnNode``: Unschedulable, not Error). gpusim
  runs with the DRAPartitionableDevices gate on.
Not modelled: constraints (matchAttribute/distinctAttribute), consumable capacity, device taints, binding
conditions: those fields load but are ignored here.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Iterator, Optional

from ...api.resource_k8s_io_v1 import (DEVICE_ALLOCATION_MODE_ALL, AllocationResult, Device, DeviceAllocationResult,
                                       DeviceClass, DeviceRequestAllocationResult, ResourceClaim, ResourceSlice,
                                       allocation_mode, request_count)
from ...api.quantity import parse_quantity
from .cel import CELError, compile_selector

DeviceID = tuple[str, str, str]   # driver, pool, device
Counters = dict[str, dict[str, Fraction]]   # counter set → counter → value
MSG_INVALID_POOLS = "invalid resource pools were encountered"


class AllocationError(Exception):
    """A claim cannot be handled at all (missing class, CEL error): the plugin turns it into an Error status."""


class FailedOnNodeError(AllocationError):
    """structured.ErrFailedAllocationOnNode: not fatal, other nodes may work; the plugin reports it Unschedulable."""


@dataclass(frozen=True)
class Candidate:
    driver: str
    pool: str
    device: Device
    slice_key: tuple[str, str] = ("", "")   # the slice's uid and resourceVersion: what a cached match depends on

    @property
    def id(self) -> DeviceID:
        return self.driver, self.pool, self.device.name


@dataclass(frozen=True)
class Pool:
    driver: str
    name: str
    slices: tuple[ResourceSlice, ...]        # the device slices usable on the node
    incomplete: bool
    counter_sets: Counters = field(default_factory=dict)
    invalid: str = ""                        # buildPool's InvalidReason
    pool_devices: tuple[Device, ...] = ()    # every device of the pool's current generation, on any node


def gather_pools(slices: list[ResourceSlice], node: str) -> list[Pool]:
    """GatherPools + buildPool: the pools usable on ``node``, newest generation only, in (driver, name) order;
    counter-set slices apart from device slices, and the pool checked for duplicate names and unknown counters."""
    by_pool: dict[tuple[str, str], list[ResourceSlice]] = {}
    everywhere: dict[tuple[str, str], list[ResourceSlice]] = {}
    for s in slices:
        everywhere.setdefault((s.spec.driver, s.spec.pool.name), []).append(s)
        if s.spec.all_nodes or s.spec.node_name == node:
            by_pool.setdefault((s.spec.driver, s.spec.pool.name), []).append(s)
    pools = []
    for (driver, name), group in sorted(by_pool.items()):
        gen = max(s.spec.pool.generation for s in group)
        current = sorted((s for s in group if s.spec.pool.generation == gen), key=lambda s: s.metadata.name)
        incomplete = len(current) < current[0].spec.pool.resource_slice_count
        device_slices = tuple(s for s in current if not s.spec.shared_counters)
        others = [d for s in everywhere[(driver, name)] if s.spec.pool.generation == gen and s not in current
                  for d in s.spec.devices]
        sets, invalid = _build_pool([s for s in current if s.spec.shared_counters], device_slices, others)
        pools.append(Pool(driver, name, device_slices, incomplete, sets, invalid,
                          tuple(d for s in device_slices for d in s.spec.devices) + tuple(others)))
    return pools


def _build_pool(counter_slices: list[ResourceSlice], device_slices: tuple[ResourceSlice, ...],
                other_devices: list[Device]) -> tuple[Counters, str]:
    """buildPool's checks (validateDeviceNames, getAndValidateCounterSets, validateDeviceCounterConsumption):
    the pool's counter sets, and the first reason it is invalid ("" when valid)."""
    names: set[str] = set()
    for s in device_slices:
        for d in s.spec.devices:
            if d.name in names:
                return {}, f"duplicate device name {d.name}"
            names.add(d.name)
    sets: Counters = {}
    for s in counter_slices:
        for cs in s.spec.shared_counters:
            if cs.name in sets:
                return {}, f"duplicate counter set name {cs.name}"
            sets[cs.name] = {k: parse_quantity(c.value) for k, c in cs.counters.items()}
    for d in [d for s in device_slices for d in s.spec.devices] + other_devices:
        for use in d.consumes_counters or []:
            if use.counter_set not in sets:
                return sets, f"counter set {use.counter_set} not found"
            for k in use.counters:
                if k not in sets[use.counter_set]:
                    return sets, f"counter {k} not found in counter set {use.counter_set}"
    return sets, ""


@dataclass
class _Slot:
    """One request (or the chosen sub-request) of one claim."""

    claim: int
    request: str          # result name: "<request>" or "<request>/<subrequest>"
    class_name: str
    selectors: tuple[str, ...]
    mode: str
    count: int
    admin: bool


class Allocator:
    """Allocator for one scheduling cycle: classes, slices and the devices already in use."""

    def __init__(self, classes: dict[str, DeviceClass], slices: list[ResourceSlice], allocated: set[DeviceID],
                 match_cache: Optional[dict] = None):
        """``match_cache``: selector results kept across cycles by the caller, keyed by expression, driver, slice
        (uid, resourceVersion) and device, so each device is evaluated once per expression until its slice changes
        (cel-python interprets each evaluation; upstream evaluates compiled cel-go programs every time)."""
        self.classes = classes
        self.slices = slices
        self.allocated = allocated
        self.match_cache = match_cache if match_cache is not None else {}

    # --- matching -------------------------------------------------------------------------------------------
    def _class(self, claim: ResourceClaim, request: str, name: str) -> DeviceClass:
        dc = self.classes.get(name)
        if dc is None:
            raise AllocationError(f"claim {kobj(claim)}, request {request}: could not retrieve device class {name}")
        return dc

    def _matches(self, c: Candidate, slot: _Slot, claim: ResourceClaim) -> bool:
        """The class's selectors, then the request's; an error names its owner and the selector's index, as
        upstream's ``class <name>: selector #<i>: ...`` / ``claim <ns>/<name>: selector #<i>: ...``."""
        dc = self.classes[slot.class_name]
        owners = [(f"class {dc.metadata.name}", [s.cel.expression for s in dc.spec.selectors if s.cel]),
                  (f"claim {kobj(claim)}", list(slot.selectors))]
        for owner, exprs in owners:
            for i, e in enumerate(exprs):
                key = (e, c.driver, c.slice_key, c.device.name)
                hit = self.match_cache.get(key)
                if hit is None:
                    try:
                        hit = self.match_cache[key] = compile_selector(e).matches(c.driver, c.device)
                    except CELError as err:
                        raise AllocationError(f"{owner}: selector #{i}: {err}") from None
                if not hit:
                    return False
        return True

    # --- Allocate -------------------------------------------------------------------------------------------
    def allocate(self, node: str, claims: list[ResourceClaim]) -> Optional[list[AllocationResult]]:
        """One AllocationResult per claim (same order), or None when the node cannot satisfy them all."""
        pools = gather_pools(self.slices, node)
        self._pools = {(p.driver, p.name): p for p in pools}
        self._available: dict[tuple[str, str], Counters] = {}
        self._consumed: dict[tuple[str, str], Counters] = {}
        candidates = [Candidate(p.driver, p.name, d, (s.metadata.uid, s.metadata.resource_version))
                      for p in pools if not p.invalid for s in p.slices for d in s.spec.devices]
        incomplete = {(p.driver, p.name) for p in pools if p.incomplete}
        options: list[list[_Slot]] = []   # per request: its alternatives in order
        for ci, claim in enumerate(claims):
            for r in claim.spec.devices.requests:
                if r.exactly is not None:
                    e = r.exactly
                    self._class(claim, r.name, e.device_class_name)
                    options.append([_Slot(ci, r.name, e.device_class_name, tuple(s.cel.expression for s in e.selectors
                                                                                 if s.cel), allocation_mode(e),
                                          request_count(e), bool(e.admin_access))])
                else:
                    alts = []
                    for sub in r.first_available:
                        self._class(claim, f"{r.name}/{sub.name}", sub.device_class_name)
                        alts.append(_Slot(ci, f"{r.name}/{sub.name}", sub.device_class_name,
                                          tuple(s.cel.expression for s in sub.selectors if s.cel),
                                          allocation_mode(sub), request_count(sub), False))
                    options.append(alts)
        picked: list[tuple[_Slot, Candidate]] = []
        if not self._search(claims, options, 0, candidates, incomplete, set(), picked):
            if any(p.invalid for p in pools):
                raise FailedOnNodeError(MSG_INVALID_POOLS)
            return None
        results = [AllocationResult(DeviceAllocationResult([])) for _ in claims]
        everywhere = {(p.driver, p.name) for p in pools if all(s.spec.all_nodes for s in p.slices)}
        local: set[int] = set()
        for slot, c in picked:
            results[slot.claim].devices.results.append(DeviceRequestAllocationResult(
                request=slot.request, driver=c.driver, pool=c.pool, device=c.device.name,
                admin_access=True if slot.admin else None))
            if (c.driver, c.pool) not in everywhere:
                local.add(slot.claim)
        for ci in sorted(local):   # a node-local device: the claim can only be used on this node
            results[ci].node_selector = {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node]}]}]}
        return results

    def _search(self, claims, options, i, candidates, incomplete, taken, picked) -> bool:
        """allocateOne: request ``i`` and everything after it. ``taken`` holds (claim index or None, device): a
        device picked without adminAccess is taken for everybody (None), any pick for its own claim."""
        if i == len(options):
            return True
        for slot in options[i]:
            claim = claims[slot.claim]
            usable = [c for c in candidates if self._matches(c, slot, claim)]

            def free(c: Candidate) -> bool:
                if (slot.claim, c.id) in taken:
                    return False
                return slot.admin or (c.id not in self.allocated and (None, c.id) not in taken)

            if slot.mode == DEVICE_ALLOCATION_MODE_ALL:
                for c in usable:
                    if (c.driver, c.pool) in incomplete:
                        raise AllocationError(f"claim {kobj(claim)}, request {slot.request}: asks for all devices, "
                                              f"but resource pool {c.driver}/{c.pool} is currently being updated")
                if not usable or not all(free(c) for c in usable):
                    continue
                choices: Iterator[tuple[Candidate, ...]] = iter([tuple(usable)])
            else:
                choices = itertools.combinations([c for c in usable if free(c)], slot.count)
            for combo in choices:
                counted = []
                for c in combo:
                    if not self._take_counters(c):
                        break
                    counted.append(c)
                if len(counted) < len(combo):
                    for c in counted:
                        self._return_counters(c)
                    continue
                marks = {(slot.claim, c.id) for c in combo} | ({(None, c.id) for c in combo} if not slot.admin else set())
                new_marks = marks - taken
                picked.extend((slot, c) for c in combo)
                taken |= new_marks
                if self._search(claims, options, i + 1, candidates, incomplete, taken, picked):
                    return True
                del picked[len(picked) - len(combo):]
                taken -= new_marks
                for c in combo:
                    self._return_counters(c)
        return False

    # --- partitionable devices ------------------------------------------------------------------------------
    def _available_counters(self, key: tuple[str, str]) -> Counters:
        """The pool's counter sets minus what its allocated devices consume (computed once per pool), as
        checkAvailableCounters' availableCounters; may go negative."""
        if key not in self._available:
            pool = self._pools[key]
            avail = {name: dict(cs) for name, cs in pool.counter_sets.items()}
            for d in pool.pool_devices:
                if (key[0], key[1], d.name) in self.allocated:
                    for use in d.consumes_counters or []:
                        for k, c in use.counters.items():
                            if k in avail.get(use.counter_set, {}):
                                avail[use.counter_set][k] -= parse_quantity(c.value)
            self._available[key] = avail
        return self._available[key]

    def _take_counters(self, c: Candidate) -> bool:
        """checkAvailableCounters: add the device's consumption; if any counter of the pool is then exceeded,
        take it back and refuse the device."""
        if not c.device.consumes_counters:
            return True
        key = (c.driver, c.pool)
        avail = self._available_counters(key)
        consumed = self._consumed.setdefault(key, {})
        for use in c.device.consumes_counters:
            mine = consumed.setdefault(use.counter_set, {})
            for k, q in use.counters.items():
                mine[k] = mine.get(k, Fraction(0)) + parse_quantity(q.value)
        if any(v < consumed.get(name, {}).get(k, 0) for name, cs in avail.items() for k, v in cs.items()):
            self._return_counters(c)
            return False
        return True

    def _return_counters(self, c: Candidate) -> None:
        """deallocateCountersForDevice."""
        consumed = self._consumed.get((c.driver, c.pool), {})
        for use in c.device.consumes_counters or []:
            for k, q in use.counters.items():
                consumed[use.counter_set][k] -= parse_quantity(q.value)


def kobj(obj) -> str:
    """klog.KObj: ``namespace/name``, or the name alone for an object without a namespace."""
    ns = obj.metadata.namespace
    return f"{ns}/{obj.metadata.name}" if ns else obj.metadata.name
