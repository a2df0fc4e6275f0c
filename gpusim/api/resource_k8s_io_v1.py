"""``resource.k8s.io/v1`` Dynamic Resource Allocation kinds: DeviceClass, ResourceClaim,
ResourceClaimTemplate, ResourceSlice (mirrors kubernetes staging/src/k8s.io/api/resource/v1/types.go,
GA in 1.34; validation after pkg/apis/resource/validation/validation.go).

Field names are upstream's. Modelled: class selectors (CEL) and config, ``extendedResourceName`` (read and
validated; the KEP-5004 mapping of ``nvidia.com/gpu`` requests onto DRA devices is not simulated); claim
requests with ``exactly`` {deviceClassName, selectors, allocationMode ExactCount|All, count, adminAccess}
or ``firstAvailable`` sub-requests; ``status.allocation`` and ``status.reservedFor``; ResourceSlices with
driver, pool {name, generation, resourceSliceCount}, nodeName/allNodes and devices with attributes and
capacity, and partitionable devices (KEP-4815: a slice's ``sharedCounters`` counter sets and a device's
``consumesCounters``). Accepted as opaque values so real manifests load, but not acted on: constraints, claim
config, tolerations, consumable-capacity requests, device taints and binding conditions.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from .meta import ObjectMeta
from .quantity import QuantityError, parse_quantity
from .schema import IntOrString
from .v1helper import is_extended_resource_name
from .validation import DNS1123_LABEL, DNS1123_LABEL_MSG, DNS1123_SUBDOMAIN, DNS1123_SUBDOMAIN_MSG, invalid, unsupported

GROUP = "resource.k8s.io"
GROUP_VERSION = "resource.k8s.io/v1"

# types.go limits
DEVICE_SELECTORS_MAX_SIZE = 32
DEVICE_REQUESTS_MAX_SIZE = 32
FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE = 8
ALLOCATION_RESULTS_MAX_SIZE = 32
RESOURCE_SLICE_MAX_DEVICES = 128
RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE = 256
CEL_SELECTOR_EXPRESSION_MAX_LENGTH = 10 * 1024
DEVICE_ALLOCATION_MODE_EXACT_COUNT = "ExactCount"
DEVICE_ALLOCATION_MODE_ALL = "All"
ALLOCATION_MODES = (DEVICE_ALLOCATION_MODE_ALL, DEVICE_ALLOCATION_MODE_EXACT_COUNT)
# the finalizer the scheduler adds on allocation (pkg/apis/resource Finalizer)
FINALIZER = "resource.kubernetes.io/delete-protection"
# the annotation the resourceclaim controller puts on a generated claim (resourceclaim.PodClaimNameAnnotation)
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
C_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
DEVICE_MAX_ID_LENGTH = 32         # resource.DeviceMaxIDLength
DEVICE_MAX_DOMAIN_LENGTH = 63     # resource.DeviceMaxDomainLength


# --- DeviceClass -------------------------------------------------------------------------------------------
@dataclass
class CELDeviceSelector:
    expression: str = field(default="", metadata={"required": True})


@dataclass
class DeviceSelector:
    cel: Optional[CELDeviceSelector] = None


@dataclass
class OpaqueDeviceConfiguration:
    driver: str = ""
    parameters: Any = None


@dataclass
class DeviceClassConfiguration:
    opaque: Optional[OpaqueDeviceConfiguration] = None


@dataclass
class DeviceClassSpec:
    selectors: list[DeviceSelector] = field(default_factory=list)
    config: list[DeviceClassConfiguration] = field(default_factory=list)
    extended_resource_name: Optional[str] = None


@dataclass
class DeviceClass:
    RESOURCE = "DeviceClass"
    NAMESPACED = False
    api_version: str = GROUP_VERSION
    kind: str = "DeviceClass"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: DeviceClassSpec = field(default_factory=DeviceClassSpec)


# --- ResourceClaim -----------------------------------------------------------------------------------------
@dataclass
class ExactDeviceRequest:
    device_class_name: str = field(default="", metadata={"required": True})
    selectors: list[DeviceSelector] = field(default_factory=list)
    allocation_mode: str = ""
    count: int = 0
    admin_access: Optional[bool] = None
    tolerations: Any = None
    capacity: Any = None


@dataclass
class DeviceSubRequest:
    name: str = field(default="", metadata={"required": True})
    device_class_name: str = field(default="", metadata={"required": True})
    selectors: list[DeviceSelector] = field(default_factory=list)
    allocation_mode: str = ""
    count: int = 0
    tolerations: Any = None
    capacity: Any = None


@dataclass
class DeviceRequest:
    name: str = field(default="", metadata={"required": True})
    exactly: Optional[ExactDeviceRequest] = None
    first_available: list[DeviceSubRequest] = field(default_factory=list)


@dataclass
class DeviceClaim:
    requests: list[DeviceRequest] = field(default_factory=list)
    constraints: Any = None
    config: Any = None


@dataclass
class ResourceClaimSpec:
    devices: DeviceClaim = field(default_factory=DeviceClaim)


@dataclass
class DeviceRequestAllocationResult:
    request: str = ""
    driver: str = ""
    pool: str = ""
    device: str = ""
    admin_access: Optional[bool] = None
    tolerations: Any = None
    binding_conditions: Any = None
    binding_failure_conditions: Any = None
    share_id: Any = field(default=None, metadata={"json": "shareID"})
    consumed_capacity: Any = None


@dataclass
class DeviceAllocationResult:
    results: list[DeviceRequestAllocationResult] = field(default_factory=list)
    config: Any = None


@dataclass
class AllocationResult:
    devices: DeviceAllocationResult = field(default_factory=DeviceAllocationResult)
    node_selector: Any = None               # a core/v1 NodeSelector as a plain mapping
    allocation_timestamp: Any = None


@dataclass
class ResourceClaimConsumerReference:
    api_group: str = ""
    resource: str = ""
    name: str = ""
    uid: str = ""


@dataclass
class ResourceClaimStatus:
    allocation: Optional[AllocationResult] = None
    reserved_for: list[ResourceClaimConsumerReference] = field(default_factory=list)
    devices: Any = None


@dataclass
class ResourceClaim:
    RESOURCE = "ResourceClaim"
    NAMESPACED = True
    api_version: str = GROUP_VERSION
    kind: str = "ResourceClaim"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: ResourceClaimSpec = field(default_factory=ResourceClaimSpec)
    status: ResourceClaimStatus = field(default_factory=ResourceClaimStatus)


@dataclass
class ResourceClaimTemplateSpec:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: ResourceClaimSpec = field(default_factory=ResourceClaimSpec)


@dataclass
class ResourceClaimTemplate:
    RESOURCE = "ResourceClaimTemplate"
    NAMESPACED = True
    api_version: str = GROUP_VERSION
    kind: str = "ResourceClaimTemplate"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: ResourceClaimTemplateSpec = field(default_factory=ResourceClaimTemplateSpec)


# --- ResourceSlice -----------------------------------------------------------------------------------------
@dataclass
class ResourcePool:
    name: str = field(default="", metadata={"required": True})
    generation: int = 0
    resource_slice_count: int = 0


@dataclass
class DeviceAttribute:
    """Exactly one of int, bool, string, version."""

    int_: Optional[int] = field(default=None, metadata={"json": "int"})
    bool_: Optional[bool] = field(default=None, metadata={"json": "bool"})
    string: Optional[str] = None
    version: Optional[str] = None

    def value(self) -> Any:
        return next(v for v in (self.int_, self.bool_, self.string, self.version) if v is not None)


@dataclass
class DeviceCapacity:
    value: IntOrString = field(default=None, metadata={"required": True})
    request_policy: Any = None


@dataclass
class Counter:
    """A counter's value (a quantity), types.go Counter."""

    value: IntOrString = field(default=None, metadata={"required": True})


@dataclass
class CounterSet:
    """A named set of counters a ResourceSlice shares (``spec.sharedCounters``, KEP-4815)."""

    name: str = field(default="", metadata={"required": True})
    counters: dict[str, Counter] = field(default_factory=dict)


@dataclass
class DeviceCounterConsumption:
    """What a device consumes from one counter set of its pool (``consumesCounters``)."""

    counter_set: str = field(default="", metadata={"required": True})
    counters: dict[str, Counter] = field(default_factory=dict)


@dataclass
class Device:
    name: str = field(default="", metadata={"required": True})
    attributes: dict[str, DeviceAttribute] = field(default_factory=dict)
    capacity: dict[str, DeviceCapacity] = field(default_factory=dict)
    consumes_counters: Optional[list[DeviceCounterConsumption]] = None
    node_name: Optional[str] = None
    node_selector: Any = None
    all_nodes: Optional[bool] = None
    taints: Any = None
    binds_to_node: Optional[bool] = None
    binding_conditions: Any = None
    binding_failure_conditions: Any = None
    allow_multiple_allocations: Optional[bool] = None


@dataclass
class ResourceSliceSpec:
    driver: str = field(default="", metadata={"required": True})
    pool: ResourcePool = field(default_factory=ResourcePool, metadata={"required": True})
    node_name: Optional[str] = None
    node_selector: Any = None
    all_nodes: Optional[bool] = None
    per_device_node_selection: Optional[bool] = None
    devices: list[Device] = field(default_factory=list)
    shared_counters: Optional[list[CounterSet]] = None


@dataclass
class ResourceSlice:
    RESOURCE = "ResourceSlice"
    NAMESPACED = False
    api_version: str = GROUP_VERSION
    kind: str = "ResourceSlice"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: ResourceSliceSpec = field(default_factory=ResourceSliceSpec)


KINDS: dict[tuple[str, str], type] = {(GROUP_VERSION, c.__name__): c for c in
                                      (DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice)}


# --- helpers -----------------------------------------------------------------------------------------------
def request_count(r: Any) -> int:
    """count defaults to 1 for ExactCount (pkg/apis/resource/v1 defaults.go)."""
    return r.count or 1


def allocation_mode(r: Any) -> str:
    return r.allocation_mode or DEVICE_ALLOCATION_MODE_EXACT_COUNT


def is_reserved_for(claim: ResourceClaim, uid: str) -> bool:
    """resourceclaim.IsReservedForPod."""
    return any(r.resource == "pods" and r.uid == uid for r in claim.status.reserved_for)


# --- validation (pkg/apis/resource/validation) ---------------------------------------------------------------
Errors = Iterator[tuple[str, str]]


def _dns_label(value: str, path: str) -> Errors:
    if not DNS1123_LABEL.match(value) or len(value) > 63:
        yield path, invalid(value, DNS1123_LABEL_MSG)


def validate_selectors(selectors: list[DeviceSelector], path: str) -> Errors:
    if len(selectors) > DEVICE_SELECTORS_MAX_SIZE:
        yield path, f"Too many: {len(selectors)}: must have at most {DEVICE_SELECTORS_MAX_SIZE} items"
    for i, s in enumerate(selectors):
        p = f"{path}[{i}]"
        if s.cel is None:
            yield f"{p}.cel", "Required value"
        elif not s.cel.expression.strip():
            yield f"{p}.cel.expression", "Required value"
        elif len(s.cel.expression) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH:
            yield f"{p}.cel.expression", (f"Too long: may not be more than {CEL_SELECTOR_EXPRESSION_MAX_LENGTH} "
                                          "bytes")
        else:
            err = cel_syntax_error(s.cel.expression)
            if err:
                yield f"{p}.cel.expression", invalid(s.cel.expression, f"compilation failed: {err}")


def cel_syntax_error(expression: str) -> str:
    """The apiserver compiles selectors on create (validateCELSelector). Here: a parse with cel-python, which
    says where it failed (gpusim's wording; cel-go prints ``ERROR: <input>:L:C: Syntax error: ...``)."""
    import celpy   # only scenarios with selectors pay for loading the CEL library

    try:
        celpy.Environment().compile(expression)
    except celpy.CELParseError as e:
        lines = str(e.args[0] if e.args else e).splitlines()
        caret = next((ln.index("^") + 1 for ln in lines if ln.strip() == "^"), 0)
        return f"syntax error at <input>:1:{caret}" if caret else "syntax error"
    return ""


def _validate_mode(r: Any, path: str) -> Errors:
    """validateDeviceAllocationMode: count ≥ 1 with ExactCount (0 is unset and defaults to 1), none with All."""
    mode = allocation_mode(r)
    if mode not in ALLOCATION_MODES:
        yield f"{path}.allocationMode", unsupported(mode, ALLOCATION_MODES)
    elif mode == DEVICE_ALLOCATION_MODE_EXACT_COUNT and r.count < 0:
        yield f"{path}.count", invalid(r.count, "must be greater than zero")
    elif mode == DEVICE_ALLOCATION_MODE_ALL and r.count:
        yield f"{path}.count", invalid(r.count, "must not be specified when allocationMode is All")


def validate_claim_spec(spec: ResourceClaimSpec, path: str) -> Errors:
    reqs = spec.devices.requests
    if len(reqs) > DEVICE_REQUESTS_MAX_SIZE:
        yield f"{path}.devices.requests", f"Too many: {len(reqs)}: must have at most {DEVICE_REQUESTS_MAX_SIZE} items"
    seen: set[str] = set()
    for i, r in enumerate(reqs):
        p = f"{path}.devices.requests[{i}]"
        yield from _dns_label(r.name, f"{p}.name")
        if r.name in seen:
            yield f"{p}.name", f'Duplicate value: "{r.name}"'
        seen.add(r.name)
        if (r.exactly is None) == (not r.first_available):
            yield p, "Invalid value: exactly one of `exactly` or `firstAvailable` is required"
            continue
        if r.exactly is not None:
            e = r.exactly
            yield from _dns_subdomain(e.device_class_name, f"{p}.exactly.deviceClassName")
            yield from validate_selectors(e.selectors, f"{p}.exactly.selectors")
            yield from _validate_mode(e, f"{p}.exactly")
            continue
        subs = r.first_available
        if len(subs) > FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE:
            yield f"{p}.firstAvailable", (f"Too many: {len(subs)}: must have at most "
                                          f"{FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE} items")
        sub_seen: set[str] = set()
        for j, s in enumerate(subs):
            sp = f"{p}.firstAvailable[{j}]"
            yield from _dns_label(s.name, f"{sp}.name")
            if s.name in sub_seen:
                yield f"{sp}.name", f'Duplicate value: "{s.name}"'
            sub_seen.add(s.name)
            yield from _dns_subdomain(s.device_class_name, f"{sp}.deviceClassName")
            yield from validate_selectors(s.selectors, f"{sp}.selectors")
            yield from _validate_mode(s, sp)


def _dns_subdomain(value: str, path: str) -> Errors:
    if not value:
        yield path, "Required value"
    elif not DNS1123_SUBDOMAIN.match(value) or len(value) > 253:
        yield path, invalid(value, DNS1123_SUBDOMAIN_MSG)


def validate_device_class(dc: DeviceClass) -> Errors:
    yield from validate_selectors(dc.spec.selectors, "spec.selectors")
    ern = dc.spec.extended_resource_name
    if ern is not None and ("/" not in ern or not is_extended_resource_name(ern)):
        yield "spec.extendedResourceName", invalid(ern, "must be a valid extended resource name")
    for i, c in enumerate(dc.spec.config):
        if c.opaque is None:
            yield f"spec.config[{i}].opaque", "Required value"
        else:
            yield from _dns_subdomain(c.opaque.driver, f"spec.config[{i}].opaque.driver")


def validate_resource_claim(claim: ResourceClaim) -> Errors:
    yield from validate_claim_spec(claim.spec, "spec")


def validate_resource_claim_template(t: ResourceClaimTemplate) -> Errors:
    yield from validate_claim_spec(t.spec.spec, "spec.spec")


def _qualified_attribute(name: str, path: str) -> Errors:
    """validateQualifiedName: ``[<domain>/]<C identifier ≤32>``."""
    domain, _, ident = name.rpartition("/")
    if not C_IDENTIFIER.match(ident) or len(ident) > DEVICE_MAX_ID_LENGTH:
        yield path, invalid(ident, f"a C identifier of at most {DEVICE_MAX_ID_LENGTH} characters is required "
                                   "(regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')")
    if domain and (not DNS1123_SUBDOMAIN.match(domain) or len(domain) > DEVICE_MAX_DOMAIN_LENGTH):
        yield path, invalid(domain, DNS1123_SUBDOMAIN_MSG)


def validate_resource_slice(s: ResourceSlice) -> Errors:
    spec = s.spec
    yield from _dns_subdomain(spec.driver, "spec.driver")
    if not spec.pool.name:
        yield "spec.pool.name", "Required value"
    if spec.pool.generation < 0:
        yield "spec.pool.generation", invalid(spec.pool.generation, "must be greater than or equal to 0")
    if spec.pool.resource_slice_count <= 0:
        yield "spec.pool.resourceSliceCount", invalid(spec.pool.resource_slice_count, "must be greater than zero")
    chosen = [n for n, v in (("nodeName", spec.node_name), ("nodeSelector", spec.node_selector),
                             ("allNodes", spec.all_nodes or None),
                             ("perDeviceNodeSelection", spec.per_device_node_selection or None)) if v]
    if len(chosen) != 1:
        yield "spec", ("Invalid value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
                       "`perDeviceNodeSelection` is required")
    if spec.node_selector is not None or spec.per_device_node_selection:
        yield "spec", "Forbidden: gpusim models only nodeName and allNodes slices"
    if len(spec.devices) > RESOURCE_SLICE_MAX_DEVICES:
        yield "spec.devices", f"Too many: {len(spec.devices)}: must have at most {RESOURCE_SLICE_MAX_DEVICES} items"
    seen: set[str] = set()
    for i, d in enumerate(spec.devices):
        p = f"spec.devices[{i}]"
        yield from _dns_label(d.name, f"{p}.name")
        if d.name in seen:
            yield f"{p}.name", f'Duplicate value: "{d.name}"'
        seen.add(d.name)
        for name, a in d.attributes.items():
            yield from _qualified_attribute(name, f"{p}.attributes[{name}]")
            set_ = [v for v in (a.int_, a.bool_, a.string, a.version) if v is not None]
            if len(set_) != 1:
                yield f"{p}.attributes[{name}]", "Invalid value: exactly one value must be specified"
        for name, c in d.capacity.items():
            yield from _qualified_attribute(name, f"{p}.capacity[{name}]")
            try:
                parse_quantity(c.value)
            except QuantityError as e:
                yield f"{p}.capacity[{name}].value", invalid(c.value, str(e))
        for j, use in enumerate(d.consumes_counters or []):
            yield from _counters(use.counters, f"{p}.consumesCounters[{j}].counters")
    for i, cs in enumerate(spec.shared_counters or []):
        yield from _dns_label(cs.name, f"spec.sharedCounters[{i}].name")
        yield from _counters(cs.counters, f"spec.sharedCounters[{i}].counters")


def _counters(counters: dict[str, Counter], path: str) -> Errors:
    for name, c in counters.items():
        try:
            parse_quantity(c.value)
        except QuantityError as e:
            yield f"{path}[{name}].value", invalid(c.value, str(e))
