"""The structured-parameters allocator (mirrors kubernetes
staging/src/k8s.io/dynamic-resource-allocation/structured/internal/incubating/allocator_incubating.go, the
variant 1.36's default gates select (DRAPartitionableDevices, DRADeviceTaints, DRAConsumableCapacity on), reached
through structured/allocator.go ``NewAllocator(...).Allocate(node, claims)``; stable/allocator_stable.go is the
same search without those features).

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
- search: depth first over requests and, device by device, over each request's devices with backtracking, as
  upstream's ``allocateOne`` / ``allocateDevice`` (each combination of a request's devices is tried once), so a
  later request can still succeed when an earlier one could have used another device.
- partitionable devices (KEP-4815, ``checkAvailableCounters`` and pools_incubating.go ``buildPool``): slices with
  ``sharedCounters`` hold the pool's counter sets, the others its devices. A device with ``consumesCounters`` is
  allocatable only if, after adding its consumption to what the devices picked so far consume, every counter of
  every counter set of its pool stays at or above zero, counting the devices already allocated anywhere in the
  pool (an over-consumed counter blocks every counter-consuming device of the pool, as upstream). adminAccess
  picks consume counters too. A pool with a duplicate device name (``duplicate device name <d>``), a duplicate
  counter set (``duplicate counter set name <s>``) or a device consuming an unknown set or counter (``counter set
  <s> not found``, ``counter <c> not found in counter set <s>``) is invalid: its devices are not used, and when
  allocation fails on the node the error is "invalid resource pools were encountered"
  (``ErrFailedAllocationOnNode``: Unschedulable, not Error).
- claim constraints (``spec.devices.constraints``, ``matchAttributeConstraint`` / constraint.go
  ``distinctAttributeConstraint``): for the devices of the listed requests (a request name also covers its
  sub-requests; a ``<request>/<subrequest>`` name only that one; none listed = every request of the claim),
  ``matchAttribute`` wants the attribute on every device with one type and value, ``distinctAttribute`` (KEP-5075)
  pairwise different values. The attribute is looked up fully qualified, or by its identifier when the domain is
  the device's driver (``lookupAttribute``); a device without it fails the constraint. Constraints are checked as
  each device is picked and released when the search backtracks; for an ``All`` request a device that breaks a
  constraint is an error ("claim <c>, request <r>: cannot add device <driver>/<pool>/<device> because a claim
  constraint would not be satisfied"), a constraint of neither kind too ("claim <c>, constraint #<i>: empty
  constraint (unsupported constraint type?)").
- device taints (KEP-5055, DRADeviceTaints beta and on in 1.36, ``taintPreventsAllocation``): a device with a
  ``NoSchedule`` or ``NoExecute`` taint is allocatable only to a request with a toleration that tolerates it
  (``resourceclaim.ToleratesTaint``: effect and key match when set, operator ``Exists`` any value, ``Equal`` the
  same value); ``None`` taints do not matter; adminAccess does not bypass taints. Every result carries its request's
  tolerations. Only the taints in ResourceSlices count (DeviceTaintRule is the alpha DRADeviceTaintRules gate,
  off in 1.36, and refused at load).
- consumable capacity (KEP-5075, DRAConsumableCapacity beta and on in 1.36, consumable_capacity.go): a request's
  ``capacity.requests`` must name capacities the device has; each capacity of the device is consumed by its
  request, rounded up by the capacity's ``requestPolicy`` (``validRange``: below ``min`` → ``min``, else to
  ``min + n·step``; ``validValues``: the first value ≥ the request), or, when the request does not name it, by the
  policy's ``default`` or the whole capacity; the result must keep to the policy (not above ``max``, on the step
  grid, one of ``validValues``; the default is always valid) and, added to what allocated shares and picks of this
  run consume, stay within the capacity's ``value`` (``CmpRequestOverCapacity``; this also filters devices that are
  not multi-allocatable). A device with ``allowMultipleAllocations: true`` is not used up by a pick: several claims,
  and several requests of one claim, get shares of it; each share's result has a ``shareID`` and the
  ``consumedCapacity`` of every capacity of the device (none if the device has no capacity). A device allocated
  whole cannot be shared, and counters of a shared device are consumed by its first share only. An ``All`` request
  takes the devices whose capacity fits before the search starts (upstream's ``allDevices``).
Deviations, documented: upstream's shareID is a random UUID, here a UUID derived from the claim, request and device
(same input, same run); a consumed quantity is written as the text it came from (request, default, valid value,
``min``) or, after rounding to a step, in canonical form; the capacity name of a request must match the device's
key exactly (as 1.36; later releases also resolve the driver's domain).
Not modelled: device binding conditions (``bindingConditions``/``bindingFailureConditions``/``bindsToNode``,
DRADeviceBindingConditions, beta and on in 1.36): ResourceSlice validation refuses devices that use them; the
DeviceTaint eviction controller (pkg/controller/devicetainteviction: pods whose allocated device gains an
untolerated NoExecute taint, or whose ``tolerationSeconds`` run out, are deleted): gpusim's slices do not change
their taints during a run, and a toleration's ``tolerationSeconds`` is not acted on; list-type attributes
(DRAListTypeAttributes, alpha).
"""
from __future__ import annotations

import copy
import math
import uuid
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterable, Optional

from ...api.quantity import format_quantity, parse_quantity
from ...api.resource_k8s_io_v1 import (DEVICE_ALLOCATION_MODE_ALL, DEVICE_TAINT_EFFECT_NO_EXECUTE,
                                       DEVICE_TAINT_EFFECT_NO_SCHEDULE, DEVICE_TOLERATION_OP_EQUAL,
                                       DEVICE_TOLERATION_OP_EXISTS, AllocationResult, CapacityRequestPolicy,
                                       CapacityRequirements, Device, DeviceAllocationResult, DeviceAttribute,
                                       DeviceCapacity, DeviceClass, DeviceRequestAllocationResult, DeviceTaint,
                                       DeviceToleration, ResourceClaim, ResourceSlice, allocation_mode, request_count)

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
class AllocatedState:
    """structured.AllocatedState (internal/allocatedstate.go): what allocated claims already use. ``devices``:
    devices allocated whole (AllocatedDevices); ``shared``: devices with at least one shared allocation of a
    multi-allocatable device (AllocatedSharedDeviceIDs, by device); ``capacity``: the capacity those shares
    consume, summed per device (AggregatedCapacity)."""

    devices: set[DeviceID] = field(default_factory=set)
    shared: set[DeviceID] = field(default_factory=set)
    capacity: dict[DeviceID, dict[str, Fraction]] = field(default_factory=dict)

    def allocated(self, device: DeviceID) -> bool:
        """internal.IsDeviceAllocated."""
        return device in self.devices or device in self.shared


def allocated_state(results: Iterable[DeviceRequestAllocationResult]) -> AllocatedState:
    """The scheduler's gathering of AllocatedState from allocation results (dynamicresources' allocated-device
    tracking): adminAccess results do not count; a result with a shareID is a share of its device."""
    state = AllocatedState()
    for r in results:
        if r.admin_access:
            continue
        dev = (r.driver, r.pool, r.device)
        if r.share_id is None:
            state.devices.add(dev)
            continue
        state.shared.add(dev)
        if r.consumed_capacity:
            used = state.capacity.setdefault(dev, {})
            for name, q in r.consumed_capacity.items():
                used[name] = used.get(name, Fraction(0)) + parse_quantity(q)
    return state


@dataclass
class _Slot:
    """One request (or one sub-request of a firstAvailable request) of one claim."""

    claim: int
    request: str          # result name: "<request>" or "<request>/<subrequest>"
    base: str             # the request's name
    sub: str              # the sub-request's name, "" for an exact request
    class_name: str
    selectors: tuple[str, ...]
    mode: str
    count: int
    admin: bool
    tolerations: tuple[DeviceToleration, ...] = ()
    capacity: Optional[dict[str, str]] = None   # capacity.requests: name → quantity text

    @property
    def name(self) -> str:
        """requestAccessor.name(): the sub-request's own name for a sub-request."""
        return self.sub or self.base


@dataclass
class _Pick:
    slot: _Slot
    candidate: Candidate
    share_id: Optional[str] = None
    consumed: Optional[dict[str, str]] = None


# --- constraints (internal/incubating/allocator_incubating.go matchAttributeConstraint, constraint.go
#     distinctAttributeConstraint) ------------------------------------------------------------------------------
def lookup_attribute(device: Device, driver: str, name: str) -> Optional[DeviceAttribute]:
    """lookupAttribute: the fully qualified name, else its identifier when the domain is the device's driver."""
    if name in device.attributes:
        return device.attributes[name]
    domain, sep, ident = name.partition("/")
    if not sep or domain != driver:
        return None
    return device.attributes.get(ident)


def _typed(a: DeviceAttribute) -> tuple[str, Any]:
    for kind, v in (("int", a.int_), ("bool", a.bool_), ("string", a.string), ("version", a.version)):
        if v is not None:
            return kind, v
    return "unknown", None


class _Constraint:
    def __init__(self, requests: list[str], attribute: str):
        self.requests = set(requests)
        self.attribute = attribute

    def applies(self, base: str, sub: str) -> bool:
        if not self.requests:
            return True
        return base in self.requests or (bool(sub) and f"{base}/{sub}" in self.requests)


class MatchAttributeConstraint(_Constraint):
    """Every device of the requests has the attribute, all with the same type and value (the first device
    fixes it; only a count is kept, as upstream)."""

    def __init__(self, requests: list[str], attribute: str):
        super().__init__(requests, attribute)
        self.value: tuple[str, Any] = ("unknown", None)
        self.devices = 0

    def add(self, base: str, sub: str, c: Candidate) -> bool:
        if not self.applies(base, sub):
            return True
        a = lookup_attribute(c.device, c.driver, self.attribute)
        if a is None:
            return False
        if self.devices == 0:
            self.value, self.devices = _typed(a), 1
            return True
        kind, v = _typed(a)
        if kind == "unknown" or (kind, v) != self.value:
            return False
        self.devices += 1
        return True

    def remove(self, base: str, sub: str, c: Candidate) -> None:
        if self.applies(base, sub):
            self.devices -= 1


class DistinctAttributeConstraint(_Constraint):
    """Every device of the requests has the attribute, with pairwise different values (values of different
    types count as different; versions compare without build metadata, as semver Equals)."""

    def __init__(self, requests: list[str], attribute: str):
        super().__init__(requests, attribute)
        self.values: list[tuple[str, Any]] = []

    def add(self, base: str, sub: str, c: Candidate) -> bool:
        if not self.applies(base, sub):
            return True
        a = lookup_attribute(c.device, c.driver, self.attribute)
        if a is None:
            return False
        kind, v = _typed(a)
        if kind == "unknown":
            raise AllocationError(f"device {c.driver}/{c.pool}/{c.device.name}: attribute {self.attribute}: "
                                  "unsupported attribute value")
        if kind == "version":
            v = v.split("+", 1)[0]
        if (kind, v) in self.values:
            return False
        self.values.append((kind, v))
        return True

    def remove(self, base: str, sub: str, c: Candidate) -> None:
        if self.applies(base, sub):
            self.values.pop()


# --- device taints (taintPreventsAllocation, resourceclaim.ToleratesTaint) ----------------------------------------
def tolerates(t: DeviceToleration, taint: DeviceTaint) -> bool:
    """resourceclaim.ToleratesTaint: effect and key match when set; ``Exists`` any value, ``Equal`` (the default)
    the same value."""
    if t.effect and t.effect != taint.effect:
        return False
    if t.key and t.key != taint.key:
        return False
    op = t.operator or DEVICE_TOLERATION_OP_EQUAL
    if op == DEVICE_TOLERATION_OP_EQUAL:
        return t.value == taint.value
    return op == DEVICE_TOLERATION_OP_EXISTS


def taint_prevents_allocation(device: Device, tolerations: tuple[DeviceToleration, ...]) -> bool:
    """Only NoSchedule and NoExecute taints keep a device from being allocated; None (and unknown effects) not."""
    return any(taint.effect in (DEVICE_TAINT_EFFECT_NO_SCHEDULE, DEVICE_TAINT_EFFECT_NO_EXECUTE)
               and not any(tolerates(t, taint) for t in tolerations) for taint in device.taints)


# --- consumable capacity (internal/incubating/consumable_capacity.go) ---------------------------------------------
def consumed_quantity(requested: Optional[Fraction], cap: DeviceCapacity) -> Fraction:
    """calculateConsumedCapacity: no request → the policy's default, else the whole capacity; a request rounds up
    to ``validRange`` (below min → min, else min + ⌈(request − min)/step⌉·step) or to the first valid value ≥ it."""
    policy = cap.request_policy
    if requested is None:
        return parse_quantity(policy.default) if policy is not None and policy.default is not None \
            else parse_quantity(cap.value)
    if policy is None:
        return requested
    r = policy.valid_range
    if r is not None and r.min is not None:
        lo = parse_quantity(r.min)
        if requested < lo:
            return lo
        if r.step is None:
            return requested
        step = parse_quantity(r.step)
        return lo + math.ceil((requested - lo) / step) * step
    if policy.valid_values:
        return next((v for v in map(parse_quantity, policy.valid_values) if requested <= v), requested)
    return requested


def violates_policy(consumed: Fraction, policy: Optional[CapacityRequestPolicy]) -> bool:
    """violatesPolicy: the default is always valid; otherwise above ``validRange.max``, off the step grid, or not
    one of ``validValues``."""
    if policy is None:
        return False
    if policy.default is not None and consumed == parse_quantity(policy.default):
        return False
    r = policy.valid_range
    if r is not None:
        if r.max is not None and consumed > parse_quantity(r.max):
            return True
        return r.step is not None and (consumed - parse_quantity(r.min)) % parse_quantity(r.step) != 0
    if policy.valid_values:
        return consumed not in {parse_quantity(v) for v in policy.valid_values}
    return False


def _quantity_text(value: Fraction, cap: DeviceCapacity, requested: Optional[str]) -> str:
    """The consumed amount as a quantity string: the text it came from (request, default, valid value, min,
    capacity value) when equal, else the canonical form in the step's (or capacity's) format."""
    policy = cap.request_policy
    texts = [requested, cap.value]
    if policy is not None:
        texts += [policy.default, *policy.valid_values]
        if policy.valid_range is not None:
            texts += [policy.valid_range.min, policy.valid_range.step]
    for t in texts:
        if t is not None and parse_quantity(t) == value:
            return str(t)
    like = str(policy.valid_range.step) if policy is not None and policy.valid_range is not None \
        and policy.valid_range.step is not None else str(cap.value)
    return format_quantity(value, binary="i" in like)


class Allocator:
    """Allocator for one scheduling cycle: classes, slices and the devices already in use."""

    def __init__(self, classes: dict[str, DeviceClass], slices: list[ResourceSlice],
                 allocated: "set[DeviceID] | AllocatedState", match_cache: Optional[dict] = None):
        """``allocated``: the AllocatedState, or a plain set of whole-device allocations. ``match_cache``:
        selector results kept across cycles by the caller, keyed by expression, driver, slice (uid,
        resourceVersion) and device, so each device is evaluated once per expression until its slice changes
        (cel-python interprets each evaluation; upstream evaluates compiled cel-go programs every time)."""
        self.classes = classes
        self.slices = slices
        self.state = allocated if isinstance(allocated, AllocatedState) else AllocatedState(devices=set(allocated))
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
        if not owners[0][1] and not owners[1][1]:
            return True
        from .cel import CELError, compile_selector   # cel-python loads only for scenarios with selectors
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
        self._claims = claims
        self._candidates = [Candidate(p.driver, p.name, d, (s.metadata.uid, s.metadata.resource_version))
                            for p in pools if not p.invalid for s in p.slices for d in s.spec.devices]
        self._incomplete = {(p.driver, p.name) for p in pools if p.incomplete}
        self._allocating: dict[DeviceID, set[int]] = {}           # allocatingDevices: device → claim indices
        self._allocating_capacity: dict[DeviceID, dict[str, Fraction]] = {}
        self._allocating_shares: dict[DeviceID, int] = {}
        self._usable: dict[int, list[Candidate]] = {}
        self._all: dict[int, list[Candidate]] = {}
        self._picked: list[_Pick] = []
        self._constraints = [self._claim_constraints(c) for c in claims]
        options: list[list[_Slot]] = []   # per request: its alternatives in order
        for ci, claim in enumerate(claims):
            for r in claim.spec.devices.requests:
                if r.exactly is not None:
                    e = r.exactly
                    self._class(claim, r.name, e.device_class_name)
                    options.append([_Slot(ci, r.name, r.name, "", e.device_class_name,
                                          tuple(s.cel.expression for s in e.selectors if s.cel), allocation_mode(e),
                                          request_count(e), bool(e.admin_access), tuple(e.tolerations),
                                          _capacity_requests(e.capacity))])
                else:
                    alts = []
                    for sub in r.first_available:
                        self._class(claim, f"{r.name}/{sub.name}", sub.device_class_name)
                        alts.append(_Slot(ci, f"{r.name}/{sub.name}", r.name, sub.name, sub.device_class_name,
                                          tuple(s.cel.expression for s in sub.selectors if s.cel),
                                          allocation_mode(sub), request_count(sub), False, tuple(sub.tolerations),
                                          _capacity_requests(sub.capacity)))
                    options.append(alts)
        if not self._search(options, 0):
            if any(p.invalid for p in pools):
                raise FailedOnNodeError(MSG_INVALID_POOLS)
            return None
        results = [AllocationResult(DeviceAllocationResult([])) for _ in claims]
        everywhere = {(p.driver, p.name) for p in pools if all(s.spec.all_nodes for s in p.slices)}
        local: set[int] = set()
        for pick in self._picked:
            slot, c = pick.slot, pick.candidate
            results[slot.claim].devices.results.append(DeviceRequestAllocationResult(
                request=slot.request, driver=c.driver, pool=c.pool, device=c.device.name,
                admin_access=True if slot.admin else None, tolerations=[copy.copy(t) for t in slot.tolerations],
                share_id=pick.share_id, consumed_capacity=pick.consumed))
            if (c.driver, c.pool) not in everywhere:
                local.add(slot.claim)
        for ci in sorted(local):   # a node-local device: the claim can only be used on this node
            results[ci].node_selector = {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node]}]}]}
        return results

    def _claim_constraints(self, claim: ResourceClaim) -> list:
        out: list = []
        for i, c in enumerate(claim.spec.devices.constraints):
            if c.match_attribute is not None:
                out.append(MatchAttributeConstraint(c.requests, c.match_attribute))
            elif c.distinct_attribute is not None:
                out.append(DistinctAttributeConstraint(c.requests, c.distinct_attribute))
            else:
                raise AllocationError(f"claim {kobj(claim)}, constraint #{i}: empty constraint (unsupported "
                                      "constraint type?)")
        return out

    def _usable_for(self, slot: _Slot) -> list[Candidate]:
        key = id(slot)
        if key not in self._usable:
            claim = self._claims[slot.claim]
            self._usable[key] = [c for c in self._candidates if self._matches(c, slot, claim)]
        return self._usable[key]

    def _search(self, options: list[list[_Slot]], i: int) -> bool:
        """allocateOne over requests: request ``i`` and everything after it; a firstAvailable request tries its
        sub-requests in order."""
        if i == len(options):
            return True
        for slot in options[i]:
            usable = self._usable_for(slot)
            if slot.mode == DEVICE_ALLOCATION_MODE_ALL:
                for c in usable:
                    if (c.driver, c.pool) in self._incomplete:
                        raise AllocationError(f"claim {kobj(self._claims[slot.claim])}, request {slot.request}: asks "
                                              f"for all devices, but resource pool {c.driver}/{c.pool} is currently "
                                              "being updated")
                if id(slot) not in self._all:   # validateDeviceRequest: devices whose capacity fits, before search
                    self._all[id(slot)] = [c for c in usable if self._fits(slot, c, allocating=False) is not None]
                devices = self._all[id(slot)]
                if devices and self._take_all(options, i, slot, devices, 0):
                    return True
            elif self._take_count(options, i, slot, usable, 0, 0):
                return True
        return False

    def _take_count(self, options, i: int, slot: _Slot, usable: list[Candidate], k: int, start: int) -> bool:
        """allocateOne for the ``k``-th device of an ExactCount request: devices in pool/slice order from
        ``start`` on, so each combination is tried once (startLocation)."""
        if k == slot.count:
            return self._search(options, i + 1)
        for j in range(start, len(usable)):
            undo = self._take(slot, usable[j], must=False)
            if undo is None:
                continue
            if self._take_count(options, i, slot, usable, k + 1, j + 1):
                return True
            undo()
        return False

    def _take_all(self, options, i: int, slot: _Slot, devices: list[Candidate], k: int) -> bool:
        """allocateOne for allocationMode All: every device of the precomputed list, or none."""
        if k == len(devices):
            return self._search(options, i + 1)
        undo = self._take(slot, devices[k], must=True)
        if undo is None:
            return False
        if self._take_all(options, i, slot, devices, k + 1):
            return True
        undo()
        return False

    def _in_use(self, dev: DeviceID) -> bool:
        """deviceInUse: allocated whole, or picked in this run (multi-allocatable picks are not recorded)."""
        return dev in self.state.devices or bool(self._allocating.get(dev))

    def _capacity_in_use(self, dev: DeviceID) -> bool:
        """deviceCapacityInUse: the device already has a share (allocated or picked in this run)."""
        return dev in self.state.shared or self._allocating_shares.get(dev, 0) > 0

    def _take(self, slot: _Slot, c: Candidate, must: bool):
        """allocateDevice: availability, capacity, counters, taints, then the claim's constraints; on success the
        device is recorded and an undo function returned, else None. With ``must`` (allocationMode All) a
        constraint that rejects the device is an error, as upstream."""
        dev = c.id
        multi = bool(c.device.allow_multiple_allocations)
        if not multi and slot.admin and slot.claim in self._allocating.get(dev, ()):
            return None
        if not slot.admin and self._in_use(dev):
            return None
        consumed = self._fits(slot, c)
        if consumed is None:
            return None
        counted = False
        if c.device.consumes_counters and not (multi and self._capacity_in_use(dev)):
            if not self._take_counters(c):
                return None
            counted = True
        if taint_prevents_allocation(c.device, slot.tolerations):
            if counted:
                self._return_counters(c)
            return None
        constraints = self._constraints[slot.claim]
        for n, con in enumerate(constraints):
            if not con.add(slot.base, slot.sub, c):
                if must:
                    raise AllocationError(f"claim {kobj(self._claims[slot.claim])}, request {slot.name}: cannot add "
                                          f"device {c.driver}/{c.pool}/{c.device.name} because a claim constraint "
                                          "would not be satisfied")
                for prev in constraints[:n]:
                    prev.remove(slot.base, slot.sub, c)
                if counted:
                    self._return_counters(c)
                return None
        pick = _Pick(slot, c)
        if multi:
            used = self._allocating_capacity.setdefault(dev, {})
            for name, q in consumed.items():
                used[name] = used.get(name, Fraction(0)) + q
            self._allocating_shares[dev] = self._allocating_shares.get(dev, 0) + 1
            pick.share_id = self._share_id(slot, c)
            if consumed:
                pick.consumed = {name: _quantity_text(q, c.device.capacity[name], (slot.capacity or {}).get(name))
                                 for name, q in sorted(consumed.items())}
        else:
            self._allocating.setdefault(dev, set()).add(slot.claim)
        self._picked.append(pick)

        def undo() -> None:
            self._picked.pop()
            for con in constraints:
                con.remove(slot.base, slot.sub, c)
            if multi:
                for name, q in consumed.items():
                    self._allocating_capacity[dev][name] -= q
                self._allocating_shares[dev] -= 1
            else:
                self._allocating[dev].discard(slot.claim)
            if counted:
                self._return_counters(c)
        return undo

    def _fits(self, slot: _Slot, c: Candidate, allocating: bool = True) -> Optional[dict[str, Fraction]]:
        """CmpRequestOverCapacity: every requested capacity exists on the device, each capacity's consumption (see
        consumed_quantity) keeps to its request policy, and what is allocated, picked in this run (unless
        ``allocating`` is False) and asked now stays within the capacity's value. The consumption per capacity,
        or None."""
        dev = c.id
        caps = c.device.capacity
        used = self.state.capacity.get(dev)
        picked = self._allocating_capacity.get(dev) if allocating else None
        if not slot.capacity and not used and not picked and not c.device.allow_multiple_allocations \
                and all(cap.request_policy is None for cap in caps.values()):
            return {}   # the whole, unshared capacity: always fits
        requested = {name: parse_quantity(q) for name, q in (slot.capacity or {}).items()}
        if any(name not in caps for name in requested):
            return None   # "some requested capacity has not been defined": skip the device
        out = {}
        for name, cap in caps.items():
            q = consumed_quantity(requested.get(name), cap)
            if violates_policy(q, cap.request_policy):
                return None
            total = q + (used or {}).get(name, Fraction(0)) + (picked or {}).get(name, Fraction(0))
            if total > parse_quantity(cap.value):
                return None
            out[name] = q
        return out

    def _share_id(self, slot: _Slot, c: Candidate) -> str:
        """GenerateShareID: upstream a random UUID; here a UUID derived from the claim, request and device so
        that runs repeat."""
        claim = self._claims[slot.claim]
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"gpusim.io/share/{claim.metadata.uid or kobj(claim)}/"
                                                  f"{slot.request}/{c.driver}/{c.pool}/{c.device.name}"))

    # --- partitionable devices ------------------------------------------------------------------------------
    def _available_counters(self, key: tuple[str, str]) -> Counters:
        """The pool's counter sets minus what its allocated devices consume (computed once per pool), as
        checkAvailableCounters' availableCounters; may go negative."""
        if key not in self._available:
            pool = self._pools[key]
            avail = {name: dict(cs) for name, cs in pool.counter_sets.items()}
            for d in pool.pool_devices:
                if self.state.allocated((key[0], key[1], d.name)):
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


def _capacity_requests(capacity: Optional[CapacityRequirements]) -> Optional[dict[str, str]]:
    return dict(capacity.requests) if capacity is not None and capacity.requests else None


def kobj(obj) -> str:
    """klog.KObj: ``namespace/name``, or the name alone for an object without a namespace."""
    ns = obj.metadata.namespace
    return f"{ns}/{obj.metadata.name}" if ns else obj.metadata.name
