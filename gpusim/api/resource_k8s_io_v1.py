"""``resource.k8s.io/v1`` Dynamic Resource Allocation kinds: DeviceClass, ResourceClaim,
ResourceClaimTemplate, ResourceSlice (mirrors kubernetes staging/src/k8s.io/api/resource/v1/types.go,
GA in 1.34; validation after pkg/apis/resource/validation/validation.go).

Field names are upstream's. Modelled: class selectors (CEL) and config, ``extendedResourceName`` (validated; the
KEP-5004 mapping of extended resource requests onto DRA devices is gpusim.scheduler.dra.extended); claim
requests with ``exactly`` {deviceClassName, selectors, allocationMode ExactCount|All, count, adminAccess}
or ``firstAvailable`` sub-requests; ``status.allocation`` and ``status.reservedFor``; ResourceSlices with
driver, pool {name, generation, resourceSliceCount}, nodeName/allNodes and devices with attributes and
capacity, and partitionable devices (KEP-4815: a slice's ``sharedCounters`` counter sets and a device's
``consumesCounters``); claim ``constraints`` (``matchAttribute`` | ``distinctAttribute``, requests that exist, a
fully qualified attribute name); request ``tolerations`` (operator defaulted to ``Equal``) and device ``taints``
(KEP-5055, effects None|NoSchedule|NoExecute); consumable capacity (KEP-5075: ``allowMultipleAllocations``, request
``capacity.requests``, a capacity's ``requestPolicy`` {default, validValues, validRange{min,max,step}} validated as
upstream's validateRequestPolicy, results' ``shareID``/``consumedCapacity``); at most 64 devices in a slice with
taints or counters. Refused at validation: device binding conditions (``bindingConditions``,
``bindingFailureConditions``, ``bindsToNode``: DRADeviceBindingConditions is not modelled). Accepted as opaque
values so real manifests load, but not acted on: claim config, a taint's ``timeAdded``, a toleration's
``tolerationSeconds``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from .meta import ObjectMeta
from .quantity import QuantityError, format_quantity, parse_quantity
from .schema import IntOrString
from .v1helper import is_extended_resource_name
from .validation import (DNS1123_LABEL, DNS1123_LABEL_MSG, DNS1123_SUBDOMAIN, DNS1123_SUBDOMAIN_MSG, invalid,
                         label_value_errors, unsupported, validate_label_name)

GROUP = "resource.k8s.io"
GROUP_VERSION = "resource.k8s.io/v1"

# types.go limits
DEVICE_SELECTORS_MAX_SIZE = 32
DEVICE_REQUESTS_MAX_SIZE = 32
FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE = 8
ALLOCATION_RESULTS_MAX_SIZE = 32
RESOURCE_SLICE_MAX_DEVICES = 128
RESOURCE_SLICE_MAX_DEVICES_WITH_TAINTS_OR_CONSUMES_COUNTERS = 64
DEVICE_CONSTRAINTS_MAX_SIZE = 32
DEVICE_TAINTS_MAX_LENGTH = 16
CAPACITY_REQUEST_POLICY_DISCRETE_MAX_OPTIONS = 10
DEVICE_TAINT_EFFECT_NONE, DEVICE_TAINT_EFFECT_NO_SCHEDULE, DEVICE_TAINT_EFFECT_NO_EXECUTE = "None", "NoSchedule", "NoExecute"
DEVICE_TAINT_EFFECTS = (DEVICE_TAINT_EFFECT_NO_EXECUTE, DEVICE_TAINT_EFFECT_NO_SCHEDULE, DEVICE_TAINT_EFFECT_NONE)  # sorted
DEVICE_TOLERATION_OP_EQUAL, DEVICE_TOLERATION_OP_EXISTS = "Equal", "Exists"
DEVICE_TOLERATION_OPERATORS = (DEVICE_TOLERATION_OP_EQUAL, DEVICE_TOLERATION_OP_EXISTS)
REQUEST_REF_MSG = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"
RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE = 256
CEL_SELECTOR_EXPRESSION_MAX_LENGTH = 10 * 1024
DEVICE_ALLOCATION_MODE_EXACT_COUNT = "ExactCount"
DEVICE_ALLOCATION_MODE_ALL = "All"
ALLOCATION_MODES = (DEVICE_ALLOCATION_MODE_ALL, DEVICE_ALLOCATION_MODE_EXACT_COUNT)
# the finalizer the scheduler adds on allocation (pkg/apis/resource Finalizer)
FINALIZER = "resource.kubernetes.io/delete-protection"
# the annotation the resourceclaim controller puts on a generated claim (resourceclaim.PodClaimNameAnnotation)
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
# the annotation of the claim the scheduler creates for a pod's extended resources backed by DRA (KEP-5004,
# resource.ExtendedResourceClaimAnnotation)
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
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
class DeviceToleration:
    """A request's toleration of device taints (types.go DeviceToleration, KEP-5055). ``operator`` defaults to
    ``Equal`` (defaults.go SetDefaults_DeviceToleration); ``tolerationSeconds`` only matters for NoExecute."""

    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""
    toleration_seconds: Optional[int] = None


@dataclass
class CapacityRequirements:
    """``capacity.requests`` of a request (KEP-5075): how much of each named device capacity one allocation
    consumes."""

    requests: dict[str, IntOrString] = field(default_factory=dict)


@dataclass
class ExactDeviceRequest:
    device_class_name: str = field(default="", metadata={"required": True})
    selectors: list[DeviceSelector] = field(default_factory=list)
    allocation_mode: str = ""
    count: int = 0
    admin_access: Optional[bool] = None
    tolerations: list[DeviceToleration] = field(default_factory=list)
    capacity: Optional[CapacityRequirements] = None


@dataclass
class DeviceSubRequest:
    name: str = field(default="", metadata={"required": True})
    device_class_name: str = field(default="", metadata={"required": True})
    selectors: list[DeviceSelector] = field(default_factory=list)
    allocation_mode: str = ""
    count: int = 0
    tolerations: list[DeviceToleration] = field(default_factory=list)
    capacity: Optional[CapacityRequirements] = None


@dataclass
class DeviceRequest:
    name: str = field(default="", metadata={"required": True})
    exactly: Optional[ExactDeviceRequest] = None
    first_available: list[DeviceSubRequest] = field(default_factory=list)


@dataclass
class DeviceConstraint:
    """One of ``matchAttribute`` (every device of the listed requests has the same value) or
    ``distinctAttribute`` (pairwise different values, KEP-5075); ``requests`` empty = every request."""

    requests: list[str] = field(default_factory=list)
    match_attribute: Optional[str] = None
    distinct_attribute: Optional[str] = None


@dataclass
class DeviceClaim:
    requests: list[DeviceRequest] = field(default_factory=list)
    constraints: list[DeviceConstraint] = field(default_factory=list)
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
    tolerations: list[DeviceToleration] = field(default_factory=list)
    binding_conditions: Any = None
    binding_failure_conditions: Any = None
    share_id: Optional[str] = field(default=None, metadata={"json": "shareID"})
    consumed_capacity: Optional[dict[str, IntOrString]] = None


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
class CapacityRequestPolicyRange:
    """``requestPolicy.validRange``: requests below ``min`` round up to it, others up to ``min + n·step``."""

    min: IntOrString = None
    max: IntOrString = None
    step: IntOrString = None


@dataclass
class CapacityRequestPolicy:
    """A multi-allocatable device capacity's ``requestPolicy`` (KEP-5075): ``default`` for a request that does
    not name the capacity, and at most one of ``validValues`` (ascending, ≤10) or ``validRange``."""

    default: IntOrString = None
    valid_values: list[IntOrString] = field(default_factory=list)
    valid_range: Optional[CapacityRequestPolicyRange] = None


@dataclass
class DeviceCapacity:
    value: IntOrString = field(default=None, metadata={"required": True})
    request_policy: Optional[CapacityRequestPolicy] = None


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
class DeviceTaint:
    """A taint on a device (types.go DeviceTaint, KEP-5055): effect ``None``, ``NoSchedule`` or ``NoExecute``."""

    key: str = ""
    value: str = ""
    effect: str = ""
    time_added: Any = None


@dataclass
class Device:
    name: str = field(default="", metadata={"required": True})
    attributes: dict[str, DeviceAttribute] = field(default_factory=dict)
    capacity: dict[str, DeviceCapacity] = field(default_factory=dict)
    consumes_counters: Optional[list[DeviceCounterConsumption]] = None
    node_name: Optional[str] = None
    node_selector: Any = None
    all_nodes: Optional[bool] = None
    taints: list[DeviceTaint] = field(default_factory=list)
    binds_to_node: Optional[bool] = None
    binding_conditions: list[str] = field(default_factory=list)
    binding_failure_conditions: list[str] = field(default_factory=list)
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
            yield from _validate_tolerations(e.tolerations, f"{p}.exactly.tolerations")
            yield from _validate_capacity_requests(e.capacity, f"{p}.exactly.capacity.requests")
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
            yield from _validate_tolerations(s.tolerations, f"{sp}.tolerations")
            yield from _validate_capacity_requests(s.capacity, f"{sp}.capacity.requests")
    yield from _validate_constraints(spec.devices, f"{path}.devices.constraints")


def _request_names(claim: DeviceClaim) -> set[str]:
    """gatherRequestNames + requestNames.Has: ``<request>`` and ``<request>/<subrequest>``."""
    names = set()
    for r in claim.requests:
        names.add(r.name)
        names.update(f"{r.name}/{s.name}" for s in r.first_available)
    return names


def _validate_constraints(claim: DeviceClaim, path: str) -> Errors:
    """validateDeviceConstraint (validation.go, DRAConsumableCapacity on as in 1.36): the requests named must
    exist, exactly one of matchAttribute / distinctAttribute, a fully qualified attribute name."""
    if len(claim.constraints) > DEVICE_CONSTRAINTS_MAX_SIZE:
        yield path, f"Too many: {len(claim.constraints)}: must have at most {DEVICE_CONSTRAINTS_MAX_SIZE} items"
        return
    names = _request_names(claim)
    for i, c in enumerate(claim.constraints):
        p = f"{path}[{i}]"
        seen: set[str] = set()
        for j, ref in enumerate(c.requests):
            rp = f"{p}.requests[{j}]"
            if len(ref.split("/")) > 2 or ref not in names:
                yield rp, invalid(ref, REQUEST_REF_MSG)
            if ref in seen:
                yield rp, f'Duplicate value: "{ref}"'
            seen.add(ref)
        if (c.match_attribute is None) == (c.distinct_attribute is None):
            yield p, ('Required value: exactly one of "matchAttribute" or "distinctAttribute" is required, but '
                      "multiple fields are set")
            continue
        attr, field_name = ((c.match_attribute, "matchAttribute") if c.match_attribute is not None
                            else (c.distinct_attribute, "distinctAttribute"))
        yield from _qualified_attribute(attr, f"{p}.{field_name}")
        if "/" not in attr:
            yield f"{p}.{field_name}", invalid(attr, "a fully qualified name must be a domain and a name separated by "
                                                     "a slash")


def _validate_tolerations(tolerations: list[DeviceToleration], path: str) -> Errors:
    """validateDeviceToleration, after SetDefaults_DeviceToleration (an empty operator is Equal)."""
    for i, t in enumerate(tolerations):
        p = f"{path}[{i}]"
        if not t.operator:
            t.operator = DEVICE_TOLERATION_OP_EQUAL
        if t.key:
            yield from validate_label_name(t.key, f"{p}.key")
        if t.operator == DEVICE_TOLERATION_OP_EXISTS:
            if t.value:
                yield f"{p}.value", invalid(t.value, "must be empty for operator `Exists`")
        elif t.operator == DEVICE_TOLERATION_OP_EQUAL:
            for msg in label_value_errors(t.value):
                yield f"{p}.value", invalid(t.value, msg)
        else:
            yield f"{p}.operator", unsupported(t.operator, DEVICE_TOLERATION_OPERATORS)
        if t.effect and t.effect not in DEVICE_TAINT_EFFECTS:
            yield f"{p}.effect", unsupported(t.effect, DEVICE_TAINT_EFFECTS)


def _validate_capacity_requests(capacity: Optional[CapacityRequirements], path: str) -> Errors:
    """``capacity.requests``: qualified capacity names, quantities that parse and are not negative."""
    for name, q in (capacity.requests if capacity else {}).items():
        yield from _qualified_attribute(name, f"{path}[{name}]")
        try:
            if parse_quantity(q) < 0:
                yield f"{path}[{name}]", invalid(q, "must be greater than or equal to 0")
        except QuantityError as e:
            yield f"{path}[{name}]", invalid(q, str(e))


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
    max_devices = RESOURCE_SLICE_MAX_DEVICES_WITH_TAINTS_OR_CONSUMES_COUNTERS if any(
        d.taints or d.consumes_counters for d in spec.devices) else RESOURCE_SLICE_MAX_DEVICES
    if len(spec.devices) > max_devices:
        yield "spec.devices", f"Too many: {len(spec.devices)}: must have at most {max_devices} items"
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
                value = parse_quantity(c.value)
            except QuantityError as e:
                yield f"{p}.capacity[{name}].value", invalid(c.value, str(e))
                continue
            if c.request_policy is not None:
                if not d.allow_multiple_allocations:
                    yield f"{p}.capacity[{name}].requestPolicy", "Forbidden: allowMultipleAllocations must be true"
                else:
                    yield from _validate_request_policy(value, str(c.value), c.request_policy,
                                                       f"{p}.capacity[{name}].requestPolicy")
        if len(d.taints) > DEVICE_TAINTS_MAX_LENGTH:
            yield f"{p}.taints", f"Too many: {len(d.taints)}: must have at most {DEVICE_TAINTS_MAX_LENGTH} items"
        for j, t in enumerate(d.taints):
            yield from _validate_taint(t, f"{p}.taints[{j}]")
        if d.binding_conditions or d.binding_failure_conditions or d.binds_to_node:
            yield p, ("Forbidden: gpusim does not model device binding conditions (DRADeviceBindingConditions, beta "
                      "and on in Kubernetes 1.36: the scheduler would wait in PreBind until the driver reports them); "
                      "remove bindingConditions, bindingFailureConditions and bindsToNode")
        for j, use in enumerate(d.consumes_counters or []):
            yield from _counters(use.counters, f"{p}.consumesCounters[{j}].counters")
    for i, cs in enumerate(spec.shared_counters or []):
        yield from _dns_label(cs.name, f"spec.sharedCounters[{i}].name")
        yield from _counters(cs.counters, f"spec.sharedCounters[{i}].counters")


def _validate_taint(t: DeviceTaint, path: str) -> Errors:
    """validateDeviceTaint: a label key, a label value, effect required and one of None/NoSchedule/NoExecute."""
    if not t.key:
        yield f"{path}.key", "Required value: name part must be non-empty"
    else:
        yield from validate_label_name(t.key, f"{path}.key")
    if t.value:
        for msg in label_value_errors(t.value):
            yield f"{path}.value", invalid(t.value, msg)
    if not t.effect:
        yield f"{path}.effect", "Required value"
    elif t.effect not in DEVICE_TAINT_EFFECTS:
        yield f"{path}.effect", unsupported(t.effect, DEVICE_TAINT_EFFECTS)


def _quantity_or_error(q: Any, path: str, errors: list) -> Optional[Any]:
    try:
        return parse_quantity(q)
    except QuantityError as e:
        errors.append((path, invalid(q, str(e))))
        return None


def _validate_request_policy(capacity: Any, capacity_text: str, policy: CapacityRequestPolicy, path: str) -> Errors:
    """validateRequestPolicy / validateValidRequestValues / validateRequestPolicyValidValues /
    validateRequestPolicyRange (validation.go), with upstream's texts."""
    errs: list[tuple[str, str]] = []
    if policy.valid_values and policy.valid_range is not None:
        yield path, ('Forbidden: exactly one policy can be specified, cannot specify "validValues" and "validRange" '
                     "at the same time")
        return
    default = None if policy.default is None else _quantity_or_error(policy.default, f"{path}.default", errs)
    if policy.valid_values:
        if policy.default is None:
            yield f"{path}.default", "Required value: required when validValues is defined"
            return
        p = f"{path}.validValues"
        values = [_quantity_or_error(v, f"{p}[{i}]", errs) for i, v in enumerate(policy.valid_values)]
        yield from errs
        if None in values or default is None:
            return
        if len(values) > CAPACITY_REQUEST_POLICY_DISCRETE_MAX_OPTIONS:
            yield p, f"Too many: {len(values)}: must have at most {CAPACITY_REQUEST_POLICY_DISCRETE_MAX_OPTIONS} items"
            return
        for i in range(len(values) - 1):
            if values[i] > values[i + 1]:
                yield f"{p}[{i + 1}]", invalid(policy.valid_values[i + 1], "values must be sorted in ascending order")
        seen: set = set()
        for i, v in enumerate(values):
            if v > capacity:
                yield f"{p}[{i}]", invalid(policy.valid_values[i], f"option is larger than capacity value: {capacity_text}")
            if v in seen:
                yield f"{p}[{i}]", f'Duplicate value: "{policy.valid_values[i]}"'
            seen.add(v)
        if default not in values:
            yield p, invalid(policy.default, "default value is not valid according to the requestPolicy")
    elif policy.valid_range is not None:
        if policy.default is None:
            yield f"{path}.default", "Required value: required when validRange is defined"
            return
        r, p = policy.valid_range, f"{path}.validRange"
        if r.min is None:
            yield f"{p}.min", "Required value: required when validRange is defined"
            return
        lo = _quantity_or_error(r.min, f"{p}.min", errs)
        hi = None if r.max is None else _quantity_or_error(r.max, f"{p}.max", errs)
        step = None if r.step is None else _quantity_or_error(r.step, f"{p}.step", errs)
        yield from errs
        if errs or default is None:
            return
        if lo > capacity:
            yield f"{p}.min", invalid(r.min, f"min is larger than capacity value: {capacity_text}")
        if default < lo:
            yield f"{p}.min", invalid(policy.default, f"default is less than min: {r.min}")
        if hi is not None:
            if lo > hi:
                yield f"{p}.max", invalid(r.min, f"min is larger than max: {r.max}")
            if hi > capacity:
                yield f"{p}.max", invalid(r.max, f"max is larger than capacity value: {capacity_text}")
            if default > hi:
                yield f"{p}.max", invalid(policy.default, f"default is more than max: {r.max}")
        if step is not None:
            if step <= 0:
                yield f"{p}.step", invalid(r.step, "must be greater than zero")
                return
            if lo + step > capacity:
                yield f"{p}.step", invalid(r.step, f"one step {format_quantity(lo + step, 'i' in str(r.step))} is larger than "
                                                 f"capacity value: {capacity_text}")
            for v, text in [(default, policy.default)] + ([(hi, r.max)] if hi is not None else []):
                if (v - lo) % step:
                    yield f"{p}.step", invalid(text, f"value is not a multiple of a given step ({r.step}) from "
                                                     f"({r.min})")
    else:
        yield from errs


def _counters(counters: dict[str, Counter], path: str) -> Errors:
    for name, c in counters.items():
        try:
            parse_quantity(c.value)
        except QuantityError as e:
            yield f"{path}[{name}].value", invalid(c.value, str(e))
