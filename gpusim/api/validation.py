"""API validation of the objects gpusim reads (mirrors kubernetes pkg/apis/core/validation/validation.go
and pkg/apis/batch/validation). Messages use upstream's field.Error formats:
``<path>: Invalid value: "<v>": <detail>``, ``<path>: Required value: <detail>``,
``<path>: Unsupported value: "<v>": supported values: ...``.
"""
from __future__ import annotations

import re
from fractions import Fraction
from typing import Any, Iterator

from .batch_v1 import Job
from .core_v1 import Container, Pod, PodSpec, Taint, Toleration
from .duration import DurationError, parse_duration
from .quantity import MAX_AMOUNT, QuantityError, format_quantity, parse_quantity
from .schema import cut
from .v1helper import is_extended_resource_name, is_overcommit_allowed

Errors = Iterator[tuple[str, str]]

DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS1123_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                         "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
                         "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1123_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                     "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
                     "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
IS_NOT_INTEGER = "must be an integer"   # validation.go isNotIntegerErrorMsg

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
RESTART_POLICIES = ("Always", "OnFailure", "Never")

# gpusim's workload annotations (documented in README and DESIGN): name → parser kind.
ANNOTATION_SUBMIT_AT = "gpusim.io/submit-at"
ANNOTATION_DURATION = "gpusim.io/duration"
ANNOTATION_GPU_MEMORY = "gpusim.io/gpu-memory"
ANNOTATION_GPU_MEMORY_GROWTH = "gpusim.io/gpu-memory-growth"
ANNOTATION_EXIT_CODE = "gpusim.io/exit-code"
# how busy the pod keeps each GPU it holds while its containers run, in percent (default 100): what the DCGM
# exporter reports as DCGM_FI_DEV_GPU_UTIL (gpusim.records.dcgm_samples)
ANNOTATION_GPU_UTILIZATION = "gpusim.io/gpu-utilization"
# distributed training (gpusim/workloads/training.py): N workers that progress only while all N run
ANNOTATION_TRAINING_GROUP = "gpusim.io/training-group"
ANNOTATION_TRAINING_WORKERS = "gpusim.io/training-workers"
ANNOTATION_TRAINING_STEPS = "gpusim.io/training-steps"
ANNOTATION_STEP_TIME = "gpusim.io/step-time"
TRAINING_REQUIRED = (ANNOTATION_TRAINING_WORKERS, ANNOTATION_TRAINING_STEPS, ANNOTATION_STEP_TIME)
# the all-reduce of each step (gpusim/hardware/collectives.py): gradient bytes reduced per step, and the share of
# it hidden behind compute (step = step-time + (1 − overlap) · all-reduce time)
ANNOTATION_ALLREDUCE_BYTES = "gpusim.io/allreduce-bytes"
ANNOTATION_ALLREDUCE_OVERLAP = "gpusim.io/allreduce-overlap"
ALLREDUCE = (ANNOTATION_ALLREDUCE_BYTES, ANNOTATION_ALLREDUCE_OVERLAP)
# What a process over its GPU memory limit prints and exits with (gpusim.node.sharing enforces the limits).
OOM_MESSAGE = "CUDA error: out of memory"
OOM_EXIT_CODE = 1


def parse_growth(value: str) -> tuple[Fraction, float]:
    """``"<peak>/<duration>"`` → (peak bytes, seconds). Raises ValueError with a readable message."""
    peak, sep, dur = str(value).partition("/")
    if not sep or not peak.strip() or not dur.strip():
        raise ValueError('must be "<peak>/<duration>", e.g. "60Gi/10m"')
    try:
        q = parse_quantity(peak.strip())
    except Exception as e:   # QuantityError
        raise ValueError(f"peak {peak.strip()!r}: {e}") from None
    try:
        secs = parse_duration(dur.strip())
    except Exception as e:   # DurationError
        raise ValueError(f"duration {dur.strip()!r}: {e}") from None
    if q < 0:
        raise ValueError("peak must be greater than or equal to 0")
    if secs <= 0:
        raise ValueError("growth duration must be greater than 0")
    return q, secs


ANNOTATIONS = {ANNOTATION_SUBMIT_AT: "duration", ANNOTATION_DURATION: "duration",
               ANNOTATION_GPU_MEMORY: "quantity", ANNOTATION_GPU_MEMORY_GROWTH: "growth",
               ANNOTATION_EXIT_CODE: "int", ANNOTATION_TRAINING_GROUP: "name",
               ANNOTATION_TRAINING_WORKERS: "count", ANNOTATION_TRAINING_STEPS: "count",
               ANNOTATION_STEP_TIME: "positive-duration", ANNOTATION_ALLREDUCE_BYTES: "positive-quantity",
               ANNOTATION_ALLREDUCE_OVERLAP: "fraction", ANNOTATION_GPU_UTILIZATION: "percent"}


def parse_overlap(value: str) -> float:
    """``gpusim.io/allreduce-overlap``: a decimal number in [0, 1). Raises ValueError."""
    text = str(value).strip()
    if not re.fullmatch(r"[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?", text):
        raise ValueError("must be a number in [0, 1), e.g. 0.5")
    v = float(text)
    if not 0.0 <= v < 1.0:
        raise ValueError("must be in [0, 1): the share of the all-reduce hidden behind compute")
    return v


TOO_LARGE = f"must be at most {MAX_AMOUNT} (2^53) base units, the largest amount gpusim counts exactly"


def invalid(value: object, detail: str) -> str:
    return f'Invalid value: "{cut(str(value))}": {detail}'


QUALIFIED_NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
QUALIFIED_NAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                      "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                      "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


def qualified_name_errors(value: str) -> list[str]:
    """k8s.io/apimachinery/pkg/util/validation IsQualifiedName: ``[prefix/]name``, name ≤ 63 characters of the
    qualified-name alphabet, prefix a DNS-1123 subdomain (≤ 253)."""
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
        errs: list[str] = []
    elif len(parts) == 2:
        prefix, name = parts
        errs = []
        if not prefix:
            errs.append("prefix part must be non-empty")
        elif len(prefix) > 253:
            errs.append("prefix part must be no more than 253 bytes")
        elif not DNS1123_SUBDOMAIN.match(prefix):
            errs.append("prefix part " + DNS1123_SUBDOMAIN_MSG)
    else:
        return ["a qualified name " + QUALIFIED_NAME_MSG + " with an optional DNS subdomain prefix and '/' "
                "(e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 bytes")
    elif not QUALIFIED_NAME_PART.match(name):
        errs.append("name part " + QUALIFIED_NAME_MSG)
    return errs


def validate_label_name(value: str, path: str) -> Errors:
    """metav1validation.ValidateLabelName: one Invalid per IsQualifiedName message."""
    for msg in qualified_name_errors(value):
        yield path, invalid(value, msg)


def unsupported(value: object, supported: tuple[str, ...]) -> str:
    return f'Unsupported value: "{value}": supported values: ' + ", ".join(f'"{s}"' for s in supported)


def validate_name(name: str, path: str = "metadata.name", label: bool = False) -> Errors:
    if not name:
        yield path, "Required value: name or generateName is required"
    elif label and not DNS1123_LABEL.match(name):
        yield path, invalid(name, DNS1123_LABEL_MSG)
    elif not DNS1123_SUBDOMAIN.match(name) or len(name) > 253:
        yield path, invalid(name, DNS1123_SUBDOMAIN_MSG)


# k8s.io/apimachinery/pkg/util/validation/validation.go: IsQualifiedName, IsValidLabelValue and their texts.
_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME = re.compile(f"^{_QNAME_FMT}$")
_QNAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
_LABEL_VALUE_FMT = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"
_LABEL_VALUE = re.compile(f"^{_LABEL_VALUE_FMT}$")
_LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                    "and must start and end with an alphanumeric character")
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024   # apimachinery validation.go TotalAnnotationSizeLimitB
MAX_CONFIGMAP_SIZE = 1024 * 1024           # k8s.io/api/core/v1 MaxSecretSize, also the ConfigMap limit


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """validation.RegexError (its ",  or " between examples is upstream's)."""
    return f"{msg} (e.g. " + ",  or ".join(f"'{e}'" for e in examples) + f", regex used for validation is '{fmt}')"


def qualified_name_errors(value: str) -> list[str]:
    """validation.IsQualifiedName: ``[prefix/]name``, prefix a DNS subdomain, name at most 63 characters."""
    parts = value.split("/")
    errs: list[str] = []
    if len(parts) > 2:
        return ["a qualified name " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errs.append("prefix part must be non-empty")
        elif len(prefix) > 253:
            errs.append("prefix part must be no more than 253 characters")
        elif not DNS1123_SUBDOMAIN.match(prefix):
            errs.append("prefix part " + DNS1123_SUBDOMAIN_MSG)
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if not _QNAME.match(name):
        errs.append("name part " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def label_value_errors(value: str) -> list[str]:
    """validation.IsValidLabelValue."""
    errs = ["must be no more than 63 characters"] if len(value) > 63 else []
    if not _LABEL_VALUE.match(value):
        errs.append(_regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def validate_metadata_labels(labels: dict[str, str], path: str = "metadata.labels") -> Errors:
    """metav1validation.ValidateLabels."""
    for k, v in labels.items():
        for msg in qualified_name_errors(k):
            yield path, invalid(k, msg)
        if len(v) > 63:
            yield path, invalid(v, "must be no more than 63 characters")
        if not _LABEL_VALUE.match(v):
            yield path, invalid(v, _regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))


def validate_metadata_annotations(annotations: dict[str, str], path: str = "metadata.annotations") -> Errors:
    """apimachinery ValidateAnnotations: qualified-name keys (lower-cased), at most 256 KiB in all."""
    for k in annotations:
        for msg in qualified_name_errors(k.lower()):
            yield path, invalid(k, msg)
    if sum(len(k) + len(v) for k, v in annotations.items()) > TOTAL_ANNOTATION_SIZE_LIMIT:
        yield path, f"Too long: must have at most {TOTAL_ANNOTATION_SIZE_LIMIT} bytes"


def validate_object_meta(meta: Any, path: str = "metadata") -> Errors:
    yield from validate_metadata_labels(meta.labels, f"{path}.labels")
    yield from validate_metadata_annotations(meta.annotations, f"{path}.annotations")


def validate_configmap_size(data: dict[str, str], binary_data: dict[str, str]) -> Errors:
    """ValidateConfigMap: keys and values together at most 1 MiB (field.TooLong on the object)."""
    total = sum(len(k) + len(v.encode("utf-8")) for k, v in data.items()) + \
        sum(len(k) + len(v) for k, v in binary_data.items())
    if total > MAX_CONFIGMAP_SIZE:
        yield "", f"Too long: must have at most {MAX_CONFIGMAP_SIZE} bytes"


def validate_annotations(annotations: dict[str, str], path: str) -> Errors:
    for key, value in sorted(annotations.items()):
        if not key.startswith("gpusim.io/"):
            continue
        kind = ANNOTATIONS.get(key)
        p = f"{path}[{key}]"
        if kind is None:
            yield p, invalid(key, "unknown gpusim annotation; known: " + ", ".join(sorted(ANNOTATIONS)))
        elif kind == "duration":
            try:
                if parse_duration(str(value)) < 0:
                    yield p, invalid(value, "must be greater than or equal to 0")
            except DurationError as e:
                yield p, invalid(value, str(e))
        elif kind == "quantity":
            try:
                if parse_quantity(str(value)) < 0:
                    yield p, invalid(value, "must be greater than or equal to 0")
            except QuantityError as e:
                yield p, invalid(value, str(e))
        elif kind == "positive-quantity":
            try:
                if parse_quantity(str(value)) <= 0:
                    yield p, invalid(value, "must be greater than 0")
            except QuantityError as e:
                yield p, invalid(value, str(e))
        elif kind == "fraction":
            try:
                parse_overlap(str(value))
            except ValueError as e:
                yield p, invalid(value, str(e))
        elif kind == "growth":
            yield from _validate_growth(annotations, str(value), p)
        elif kind == "int":
            if not re.fullmatch(r"[0-9]{1,3}", str(value)) or int(value) > 255:
                yield p, invalid(value, "must be an integer in [0, 255]")
        elif kind == "percent":
            if not re.fullmatch(r"[0-9]{1,3}", str(value)) or int(value) > 100:
                yield p, invalid(value, "must be an integer in [0, 100]")
        elif kind == "count":
            if not re.fullmatch(r"[0-9]{1,9}", str(value)) or int(value) < 1:
                yield p, invalid(value, "must be an integer greater than or equal to 1")
        elif kind == "positive-duration":
            try:
                if parse_duration(str(value)) <= 0:
                    yield p, invalid(value, "must be greater than 0")
            except DurationError as e:
                yield p, invalid(value, str(e))
        elif kind == "name":
            if not DNS1123_LABEL.match(str(value)) or len(str(value)) > 63:
                yield p, invalid(value, DNS1123_LABEL_MSG)
    yield from _validate_training(annotations, path)


def _validate_training(annotations: dict[str, str], path: str) -> Errors:
    """The training annotations come together (workers, steps, step-time; the group is optional) and
    replace ``gpusim.io/duration``: a training worker runs until the group's steps are done."""
    present = [k for k in (ANNOTATION_TRAINING_GROUP, *TRAINING_REQUIRED) if k in annotations]
    if not present:
        for key in ALLREDUCE:
            if key in annotations:
                yield f"{path}[{key}]", invalid(annotations[key], "only for training workers (with "
                                                + ", ".join(TRAINING_REQUIRED) + ")")
        return
    if ANNOTATION_ALLREDUCE_OVERLAP in annotations and ANNOTATION_ALLREDUCE_BYTES not in annotations:
        yield (f"{path}[{ANNOTATION_ALLREDUCE_OVERLAP}]",
               invalid(annotations[ANNOTATION_ALLREDUCE_OVERLAP], f"requires {ANNOTATION_ALLREDUCE_BYTES} "
                       "(the all-reduce it overlaps)"))
    for key in TRAINING_REQUIRED:
        if key not in annotations:
            yield f"{path}[{key}]", ("Required value: the training annotations go together: "
                                     + ", ".join(TRAINING_REQUIRED) + f" (found {', '.join(present)})")
    if ANNOTATION_DURATION in annotations:
        yield f"{path}[{ANNOTATION_DURATION}]", invalid(
            annotations[ANNOTATION_DURATION], "may not be set together with the training annotations "
            f"({', '.join(present)}): a training worker runs until its group's steps are done")


def _validate_growth(annotations: dict[str, str], value: str, p: str) -> Errors:
    """``<peak>/<duration>`` (see parse_growth): peak >= gpu-memory, duration > 0, needs gpu-memory."""
    try:
        peak, _ = parse_growth(value)
    except ValueError as e:
        yield p, invalid(value, str(e))
        return
    base = annotations.get(ANNOTATION_GPU_MEMORY)
    if base is None:
        yield p, invalid(value, f"requires the {ANNOTATION_GPU_MEMORY} annotation (the memory it grows from)")
        return
    try:
        if peak < parse_quantity(str(base)):
            yield p, invalid(value, f"peak must be greater than or equal to {ANNOTATION_GPU_MEMORY} ({base})")
    except QuantityError:
        pass   # reported on gpu-memory itself


def validate_resources(c: Container, path: str) -> Errors:
    """validateResourceRequirements: quantities parse, are non-negative; extended resources are
    integers, need a limit, and request must equal limit."""
    parsed: dict[str, dict] = {"limits": {}, "requests": {}}
    for part in ("limits", "requests"):
        for name, raw in getattr(c.resources, part).items():
            p = f"{path}.{part}[{name}]"
            try:
                q = parse_quantity(raw)
            except QuantityError as e:
                yield p, invalid(raw, str(e))
                continue
            if q < 0:
                yield p, invalid(raw, "must be greater than or equal to 0")
            elif q > MAX_AMOUNT:
                yield p, invalid(raw, TOO_LARGE)
            elif is_extended_resource_name(name) and q.denominator != 1:
                yield p, invalid(raw, IS_NOT_INTEGER)
            parsed[part][name] = (raw, q)
    for name, (raw, q) in parsed["requests"].items():
        if name in parsed["limits"]:
            lraw, lq = parsed["limits"][name]
            if q != lq and not is_overcommit_allowed(name):
                yield f"{path}.requests[{name}]", invalid(raw, f"must be equal to {name} limit of {lraw}")
            elif q > lq:
                yield f"{path}.requests[{name}]", invalid(raw, f"must be less than or equal to {name} limit of {lraw}")
        elif not is_overcommit_allowed(name):
            yield f"{path}.limits", "Required value: Limit must be set for non overcommitable resources"


POD_LEVEL_RESOURCES = ("cpu", "hugepages-", "memory")   # resourcehelper.SupportedPodLevelResources()
OVERHEAD_WITHOUT_RUNTIMECLASS = "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"


def _container_requests_sum(spec: PodSpec) -> dict[str, Fraction]:
    """The aggregate container requests pod-level requests are checked against (validation.go
    validatePodResourceConsistency calls component-helpers AggregateContainerRequests; the layering keeps
    api/ below componenthelpers/, so this is the same sidecar-aware sum for the supported resources)."""
    def reqs(c: Container) -> dict[str, Fraction]:
        out: dict[str, Fraction] = {}
        for part in (c.resources.limits, c.resources.requests):
            for k, v in part.items():
                try:
                    out[k] = parse_quantity(v)
                except QuantityError:
                    pass
        return out
    total: dict[str, Fraction] = {}
    for c in spec.containers:
        for k, v in reqs(c).items():
            total[k] = total.get(k, Fraction(0)) + v
    sidecars: dict[str, Fraction] = {}
    for c in spec.init_containers:
        r = reqs(c)
        if c.restart_policy == "Always":
            for k, v in r.items():
                total[k] = total.get(k, Fraction(0)) + v
                sidecars[k] = sidecars.get(k, Fraction(0)) + v
            use = dict(sidecars)
        else:
            use = {k: r.get(k, Fraction(0)) + sidecars.get(k, Fraction(0)) for k in set(r) | set(sidecars)}
        for k, v in use.items():
            if v > total.get(k, Fraction(0)):
                total[k] = v
    return total


def validate_pod_level_resources(spec: PodSpec, path: str) -> Errors:
    """validatePodResourceRequirements and validatePodResourceConsistency (pkg/apis/core/validation):
    pod-level ``spec.resources`` names only cpu, memory or hugepages-*; quantities parse; a request is at
    most its limit and at least the aggregated container requests."""
    res = spec.resources
    if res is None:
        return
    parsed: dict[str, dict[str, Fraction]] = {"limits": {}, "requests": {}}
    for part in ("limits", "requests"):
        for name, raw in getattr(res, part).items():
            p = f"{path}.{part}[{name}]"
            if name not in ("cpu", "memory") and not name.startswith("hugepages-"):
                yield p, unsupported(name, POD_LEVEL_RESOURCES)
                continue
            try:
                q = parse_quantity(raw)
            except QuantityError as e:
                yield p, invalid(raw, str(e))
                continue
            if q < 0:
                yield p, invalid(raw, "must be greater than or equal to 0")
            elif q > MAX_AMOUNT:
                yield p, invalid(raw, TOO_LARGE)
            else:
                parsed[part][name] = q
    for name, q in parsed["requests"].items():
        raw = res.requests[name]
        if name in parsed["limits"] and q > parsed["limits"][name]:
            yield (f"{path}.requests[{name}]",
                   invalid(raw, f"must be less than or equal to {name} limit of {res.limits[name]}"))
    agg = _container_requests_sum(spec)
    for name, q in parsed["requests"].items():
        if name in agg and agg[name] > q:
            yield (f"{path}.requests[{name}]", invalid(res.requests[name], "must be greater than or equal to "
                   f"aggregate container requests of {format_quantity(agg[name], binary=name != 'cpu')}"))


DECIMAL_INTEGER_MSG = "must be a valid decimal integer in canonical form"   # apimachinery validate/content


def is_decimal_integer(value: str) -> bool:
    """apimachinery pkg/api/validate/content IsDecimalInteger: "0" or an optional "-" then 1-9 then digits
    (no leading zeros, no "+"), within int64 (strconv.ParseInt)."""
    if not re.fullmatch(r"0|-?[1-9][0-9]*", value or ""):
        return False
    return -(2 ** 63) <= int(value) < 2 ** 63


def validate_toleration(t: Toleration, path: str, allow_comparison_operators: bool = False) -> Errors:
    """validateTolerations (pkg/apis/core/validation/validation.go). ``Lt``/``Gt`` (KEP-5471, alpha since 1.35,
    feature gate TaintTolerationComparisonOperators: PodValidationOptions.AllowTaintTolerationComparisonOperators)
    need the gate and a decimal-integer value."""
    ops = ("Equal", "Exists", "Gt", "Lt") if allow_comparison_operators else ("Equal", "Exists")
    if t.operator not in ("", *ops):
        yield f"{path}.operator", unsupported(t.operator, ops)
    elif t.operator in ("Gt", "Lt") and not is_decimal_integer(t.value):
        yield f"{path}.value", invalid(t.value, DECIMAL_INTEGER_MSG)
    if t.operator == "Exists" and t.value:
        yield f"{path}.operator", invalid(t.value, "value must be empty when `operator` is 'Exists'")
    if t.effect and t.effect not in TAINT_EFFECTS:
        yield f"{path}.effect", unsupported(t.effect, TAINT_EFFECTS)


def validate_taint(t: Taint, path: str) -> Errors:
    if t.effect not in TAINT_EFFECTS:
        yield f"{path}.effect", unsupported(t.effect, TAINT_EFFECTS)


def validate_pod_spec(spec: PodSpec, path: str, allow_comparison_operators: bool = False) -> Errors:
    if not spec.containers:
        yield f"{path}.containers", "Required value"
    seen: set[str] = set()
    for group, containers in (("initContainers", spec.init_containers), ("containers", spec.containers)):
        for i, c in enumerate(containers):
            cp = f"{path}.{group}[{i}]"
            if not c.name:
                yield f"{cp}.name", "Required value"
            elif not DNS1123_LABEL.match(c.name):
                yield f"{cp}.name", invalid(c.name, DNS1123_LABEL_MSG)
            if not c.image:
                yield f"{cp}.image", "Required value"
            elif c.name in seen:
                yield f"{cp}.name", f'Duplicate value: "{c.name}"'
            seen.add(c.name)
            yield from validate_resources(c, f"{cp}.resources")
            yield from validate_container_claims(c, {rc.name for rc in spec.resource_claims}, f"{cp}.resources.claims")
    yield from validate_pod_resource_claims(spec, f"{path}.resourceClaims")
    yield from validate_pod_level_resources(spec, f"{path}.resources")
    if spec.overhead is not None:
        yield f"{path}.overhead", f"Forbidden: {OVERHEAD_WITHOUT_RUNTIMECLASS}"
    if spec.restart_policy and spec.restart_policy not in RESTART_POLICIES:
        yield f"{path}.restartPolicy", unsupported(spec.restart_policy, RESTART_POLICIES)
    for i, t in enumerate(spec.tolerations):
        yield from validate_toleration(t, f"{path}.tolerations[{i}]", allow_comparison_operators)
    if spec.preemption_policy not in (None, "PreemptLowerPriority", "Never"):
        yield f"{path}.preemptionPolicy", unsupported(spec.preemption_policy, ("Never", "PreemptLowerPriority"))
    if spec.affinity and spec.affinity.node_affinity:
        req = spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
        if req is not None and not req.node_selector_terms:
            yield (f"{path}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
                   "Required value: must have at least one node selector term")
        for ti, term in enumerate(req.node_selector_terms if req else []):
            for ri, r in enumerate(term.match_expressions):
                rp = (f"{path}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
                      f"nodeSelectorTerms[{ti}].matchExpressions[{ri}]")
                ops = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
                if r.operator not in ops:
                    yield f"{rp}.operator", unsupported(r.operator, ops)
                elif r.operator in ("In", "NotIn") and not r.values:
                    yield f"{rp}.values", "Required value: must be specified when `operator` is 'In' or 'NotIn'"
                elif r.operator in ("Exists", "DoesNotExist") and r.values:
                    yield f"{rp}.values", "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
                elif r.operator in ("Gt", "Lt") and len(r.values) != 1:
                    yield f"{rp}.values", "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'"
            for ri, r in enumerate(term.match_fields):
                rp = (f"{path}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
                      f"nodeSelectorTerms[{ti}].matchFields[{ri}]")
                yield from validate_node_field_selector_requirement(r, rp)


def validate_pod_resource_claims(spec: PodSpec, path: str) -> Errors:
    """validatePodResourceClaims (pkg/apis/core/validation): DNS-label names, unique, exactly one source."""
    seen: set[str] = set()
    for i, rc in enumerate(spec.resource_claims):
        p = f"{path}[{i}]"
        if not DNS1123_LABEL.match(rc.name) or len(rc.name) > 63:
            yield f"{p}.name", invalid(rc.name, DNS1123_LABEL_MSG)
        elif rc.name in seen:
            yield f"{p}.name", f'Duplicate value: "{rc.name}"'
        seen.add(rc.name)
        sources = [s for s in (rc.resource_claim_name, rc.resource_claim_template_name) if s]
        if len(sources) > 1:
            yield p, "Invalid value: at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"
        elif not sources:
            yield p, "Invalid value: must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"


def validate_container_claims(c: Container, pod_claims: set[str], path: str) -> Errors:
    """validateResourceClaimNames: a container's claim names a pod claim, at most once per (name, request)."""
    seen: set[tuple[str, str]] = set()
    for i, claim in enumerate(c.resources.claims if c.resources else []):
        if claim.name not in pod_claims:
            yield f"{path}[{i}]", f'Not found: "{cut(claim.name)}": must be one of the names in pod.spec.resourceClaims'
        elif (claim.name, claim.request) in seen:
            yield f"{path}[{i}]", f'Duplicate value: "{cut(claim.name)}"'
        seen.add((claim.name, claim.request))


def validate_node_field_selector_requirement(r, path: str) -> Errors:
    """ValidateNodeFieldSelectorRequirement (pkg/apis/core/validation): In/NotIn with exactly one value, and the
    only field a node can be selected by is metadata.name (a node name, i.e. a DNS subdomain)."""
    if r.operator in ("In", "NotIn"):
        if len(r.values) != 1:
            yield (f"{path}.values", "Required value: must be only one value when `operator` is 'In' or 'NotIn' "
                                     "for node field selector")
    else:
        yield f"{path}.operator", invalid(r.operator, "not a valid selector operator")
    if r.key != "metadata.name":
        yield f"{path}.key", invalid(r.key, "not a valid field selector key")
    else:
        for i, v in enumerate(r.values):
            if len(v) > 253 or not DNS1123_SUBDOMAIN.match(v):
                yield f"{path}.values[{i}]", invalid(v, DNS1123_SUBDOMAIN_MSG)


def validate_pod(pod: Pod, allow_comparison_operators: bool = False) -> Errors:
    yield from validate_annotations(pod.metadata.annotations, "metadata.annotations")
    ann = pod.metadata.annotations
    if any(k in ann for k in TRAINING_REQUIRED) and ANNOTATION_TRAINING_GROUP not in ann \
            and not ({"job-name", "batch.kubernetes.io/job-name"} & set(pod.metadata.labels)):
        yield (f"metadata.annotations[{ANNOTATION_TRAINING_GROUP}]",
               "Required value: a training worker outside a Job names its group")
    yield from validate_pod_spec(pod.spec, "spec", allow_comparison_operators)


def validate_job(job: Job, allow_comparison_operators: bool = False) -> Errors:
    s = job.spec
    for fld, v in (("parallelism", s.parallelism), ("completions", s.completions), ("backoffLimit", s.backoff_limit)):
        if v is not None and v < 0:
            yield f"spec.{fld}", invalid(v, "must be greater than or equal to 0")
    yield from validate_annotations(job.metadata.annotations, "metadata.annotations")
    yield from validate_annotations(s.template.metadata.annotations, "spec.template.metadata.annotations")
    yield from validate_object_meta(s.template.metadata, "spec.template.metadata")
    yield from validate_pod_spec(s.template.spec, "spec.template.spec", allow_comparison_operators)
    if s.template.spec.restart_policy not in ("OnFailure", "Never"):
        yield "spec.template.spec.restartPolicy", 'Required value: valid values: "OnFailure", "Never"'
