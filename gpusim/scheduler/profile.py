"""Profiles from a KubeSchedulerConfiguration (mirrors pkg/scheduler/apis/config/v1/default_plugins.go
``mergePlugins``, pkg/scheduler/apis/config/validation, and framework/runtime/framework.go
``expandMultiPointPlugins``).

The default profile enables every default plugin through ``multiPoint``. A user's ``plugins`` are merged
into it per extension point: ``disabled: [{name: "*"}]`` drops the defaults, a named plugin in
``enabled`` replaces the default of the same name in place (its weight wins), others are appended.
Then multiPoint plugins are expanded to every extension point they implement, except where that point
disables them; plugins enabled explicitly at a point come first, then multiPoint ones, then the rest.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Optional

from ..api.errors import FieldError
from ..api.kubescheduler_config_v1 import (ARGS_TYPES, KubeSchedulerConfiguration, KubeSchedulerProfile, PluginRef,
                                           Plugins, PluginSet)
from ..api.schema import decode
from ..api.validation import unsupported
from .plugins import noderesourcetopology
from .registry import DEFAULT_PLUGINS, Registry
from .runtime import POINT_METHODS

# extension point → Plugins field (camelCase key in YAML)
POINT_FIELDS = {"PreEnqueue": "pre_enqueue", "QueueSort": "queue_sort", "PreFilter": "pre_filter",
                "Filter": "filter", "PostFilter": "post_filter", "PreScore": "pre_score", "Score": "score",
                "Reserve": "reserve", "Permit": "permit", "PreBind": "pre_bind", "Bind": "bind",
                "PostBind": "post_bind"}
CAMEL = {"pre_enqueue": "preEnqueue", "queue_sort": "queueSort", "pre_filter": "preFilter", "filter": "filter",
         "post_filter": "postFilter", "pre_score": "preScore", "score": "score", "reserve": "reserve",
         "permit": "permit", "pre_bind": "preBind", "bind": "bind", "post_bind": "postBind",
         "multi_point": "multiPoint"}
SCORING_TYPES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")


@dataclass
class ProfileSpec:
    """A resolved profile: which plugin runs at which point, with weights and args."""

    scheduler_name: str
    points: dict[str, list[str]]
    weights: dict[str, int]
    args: dict[str, Any] = field(default_factory=dict)
    percentage_of_nodes_to_score: Optional[int] = None
    default_plugins: list[str] = field(default_factory=list)   # the default profile's, in registry order


# default_plugins.go applyFeatureGates: plugins appended to the default multiPoint set under a gate.
GATED_DEFAULT_PLUGINS: list[tuple[str, str, int]] = [("GangScheduling", "GangScheduling", 0)]   # (gate, plugin, weight)
# ... and default plugins it leaves out while their gate is off: plugin → gate. A gate missing from
# ``feature_gates`` counts as on (its 1.36 default); a Simulation passes every versioned default.
GATE_REMOVED_DEFAULT_PLUGINS: dict[str, str] = {"DynamicResources": "DynamicResourceAllocation"}


def default_plugins(feature_gates: Optional[dict[str, bool]] = None) -> Plugins:
    gates = feature_gates or {}
    enabled = [PluginRef(n, w or None) for n, w in DEFAULT_PLUGINS
               if gates.get(GATE_REMOVED_DEFAULT_PLUGINS.get(n, ""), True)]
    enabled += [PluginRef(n, w or None) for gate, n, w in GATED_DEFAULT_PLUGINS if gates.get(gate)]
    return Plugins(multi_point=PluginSet(enabled=enabled))


def merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    """mergePluginSet: defaults minus disabled (or none with '*'), custom enabled replacing in place."""
    disabled = {p.name for p in custom.disabled}
    replaced: dict[str, PluginRef] = {p.name: p for p in custom.enabled}
    out: list[PluginRef] = []
    if "*" not in disabled:
        for p in default.enabled:
            if p.name in disabled:
                continue
            out.append(replaced.pop(p.name, p))
    out += [p for p in custom.enabled if p.name in replaced]
    return PluginSet(enabled=out, disabled=list(custom.disabled))


def _implements(plugin: Any, point: str) -> bool:
    return hasattr(plugin, POINT_METHODS[point])


def build_profile(p: KubeSchedulerProfile, registry: Registry, path: str,
                  global_percentage: Optional[int], feature_gates: Optional[dict[str, bool]] = None) -> ProfileSpec:
    defaults, custom = default_plugins(feature_gates), p.plugins or Plugins()
    merged = Plugins(**{f.name: merge_plugin_set(getattr(defaults, f.name), getattr(custom, f.name))
                        for f in dataclasses.fields(Plugins)})
    instances = {}
    for f in dataclasses.fields(Plugins):
        for i, ref in enumerate(getattr(merged, f.name).enabled):
            if ref.name not in registry:
                where = next((f"{path}.plugins.{CAMEL[f.name]}.enabled[{j}]" for j, r in
                              enumerate(getattr(custom, f.name).enabled) if r.name == ref.name),
                             f"{path}.plugins.{CAMEL[f.name]}")
                raise FieldError(where + ".name", f'Invalid value: "{ref.name}": plugin "{ref.name}" does not exist '
                                 f"(registered: {', '.join(sorted(registry))})")
            if ref.weight is not None and not 0 <= ref.weight <= 100 and f.name in ("score", "multi_point"):
                raise FieldError(f"{path}.plugins.{CAMEL[f.name]}.enabled[{i}].weight",
                                 f"Invalid value: {ref.weight}: not in valid range [0-100]")
            instances[ref.name] = registry[ref.name]
    # multiPoint expansion
    points: dict[str, list[str]] = {}
    weights: dict[str, int] = {r.name: r.weight or 0 for r in merged.multi_point.enabled}
    probes = {name: factory(None, _Probe()) for name, factory in instances.items()}
    for point, fname in POINT_FIELDS.items():
        pset: PluginSet = getattr(merged, fname)
        disabled = {r.name for r in getattr(custom, fname).disabled}
        explicit = [r.name for r in pset.enabled]
        override, multi = [], []
        if "*" not in disabled:
            for r in merged.multi_point.enabled:
                if not _implements(probes[r.name], point) or r.name in disabled:
                    continue
                (override if r.name in explicit else multi).append(r.name)
        order = [n for n in explicit if n in override] + multi + [n for n in explicit if n not in override]
        for n in explicit:
            if not _implements(probes[n], point):
                raise FieldError(f"{path}.plugins.{CAMEL[fname]}", f'Invalid value: "{n}": plugin "{n}" does not '
                                 f"extend {point} plugin")
        points[point] = list(dict.fromkeys(order))
        if point == "Score":
            for r in pset.enabled:
                if r.weight:
                    weights[r.name] = r.weight
    if len(points["QueueSort"]) != 1:
        raise FieldError(f"{path}.plugins.queueSort", f"Invalid value: {points['QueueSort']}: "
                         "exactly one queue sort plugin must be enabled")
    if len(points["Bind"]) == 0:
        raise FieldError(f"{path}.plugins.bind", "Invalid value: []: at least one bind plugin is needed")
    args: dict[str, Any] = {}
    seen = set()
    for i, pc in enumerate(p.plugin_config):
        ap = f"{path}.pluginConfig[{i}]"
        if pc.name in seen:
            raise FieldError(f"{ap}.name", f'Duplicate value: "{pc.name}"')
        seen.add(pc.name)
        raw = pc.args or {}
        if pc.name in ARGS_TYPES:
            typed = decode(ARGS_TYPES[pc.name], raw, f"{ap}.args")
            validate_args(pc.name, typed, f"{ap}.args")
        args[pc.name] = raw
    used = {n for names in points.values() for n in names}
    weights = {n: (w or 1) for n, w in weights.items() if n in used}   # getValidScoreWeights: 0 → 1
    pct = p.percentage_of_nodes_to_score if p.percentage_of_nodes_to_score is not None else global_percentage
    return ProfileSpec(p.scheduler_name, points, weights, args, pct, [n for n, _ in DEFAULT_PLUGINS])


class _Probe:
    """A handle good enough to build a plugin and ask which interfaces it implements."""

    k8s_version = (1, 36)

    def __getattr__(self, name: str) -> Any:
        return None


def validate_args(name: str, a: Any, path: str) -> None:
    """validation_pluginargs.go, for the args gpusim reads."""
    if name == "NodeResourcesFit" and a.scoring_strategy is not None:
        s, sp = a.scoring_strategy, f"{path}.scoringStrategy"
        if s.type not in SCORING_TYPES:
            raise FieldError(f"{sp}.type", unsupported(s.type, tuple(SCORING_TYPES)))
        for i, r in enumerate(s.resources or []):
            if r.weight is not None and not 1 <= r.weight <= 100:
                raise FieldError(f"{sp}.resources[{i}].weight", f"Invalid value: {r.weight}: "
                                 "resource weight of cpu not in valid range [1, 100]".replace("cpu", r.name))
        if s.type == "RequestedToCapacityRatio":
            shape = s.requested_to_capacity_ratio.shape if s.requested_to_capacity_ratio else []
            if not shape:
                raise FieldError(f"{sp}.requestedToCapacityRatio.shape", "Required value: at least one point "
                                 "must be specified")
            for i, pt in enumerate(shape):
                pp = f"{sp}.requestedToCapacityRatio.shape[{i}]"
                if not 0 <= pt.utilization <= 100:
                    raise FieldError(f"{pp}.utilization", f"Invalid value: {pt.utilization}: not in valid range [0, 100]")
                if i and pt.utilization <= shape[i - 1].utilization:
                    raise FieldError(f"{pp}.utilization", f"Invalid value: {pt.utilization}: utilization values "
                                     "must be sorted in increasing order")
                if not 0 <= pt.score <= 10:
                    raise FieldError(f"{pp}.score", f"Invalid value: {pt.score}: not in valid range [0, 10]")
        elif s.requested_to_capacity_ratio is not None:
            raise FieldError(f"{sp}.requestedToCapacityRatio", "Forbidden: only valid with type "
                             "RequestedToCapacityRatio")
    if name == "Coscheduling":
        # sigs.k8s.io/scheduler-plugins apis/config/validation/validation_pluginargs.go ValidateCoschedulingArgs
        errs = []
        if a.permit_waiting_time_seconds < 0:
            errs.append((f"{path}.permitWaitingTimeSeconds",
                         f"Invalid value: {a.permit_waiting_time_seconds}: must be greater than 0"))
        if a.pod_group_backoff_seconds < 0:
            errs.append((f"{path}.podGroupBackoffSeconds",
                         f"Invalid value: {a.pod_group_backoff_seconds}: must be greater than 0"))
        if not 0 <= a.pod_group_reject_percentage <= 100:
            errs.append((f"{path}.podGroupRejectPercentage",
                         f"Invalid value: {a.pod_group_reject_percentage}: must be between 0 and 100"))
        if len(errs) == 1:
            raise FieldError(*errs[0])
        if errs:   # field.ErrorList.ToAggregate
            raise FieldError("", "[" + ", ".join(f"{p}: {m}" for p, m in errs) + "]")
    if name == "NodeResourceTopologyMatch":
        # scheduler-plugins apis/config/validation ValidateNodeResourceTopologyMatchArgs
        noderesourcetopology.validate_args(a, path)
    if name == "DefaultPreemption":
        if not 0 <= a.min_candidate_nodes_percentage <= 100:
            raise FieldError(f"{path}.minCandidateNodesPercentage", f"Invalid value: "
                             f"{a.min_candidate_nodes_percentage}: not in valid range [0, 100]")
        if a.min_candidate_nodes_absolute < 0:
            raise FieldError(f"{path}.minCandidateNodesAbsolute", f"Invalid value: {a.min_candidate_nodes_absolute}: "
                             "not in valid range [0, inf)")


def build_profiles(cfg: Optional[KubeSchedulerConfiguration], registry: Registry,
                   feature_gates: Optional[dict[str, bool]] = None) -> tuple[list[ProfileSpec], dict]:
    """All profiles, plus queue settings. Raises FieldError with upstream validation texts.
    ``feature_gates`` (the Simulation's) add gated plugins to the default profile (GangScheduling)."""
    cfg = cfg or KubeSchedulerConfiguration()
    if cfg.percentage_of_nodes_to_score is not None and not 0 <= cfg.percentage_of_nodes_to_score <= 100:
        raise FieldError("percentageOfNodesToScore", f"Invalid value: {cfg.percentage_of_nodes_to_score}: "
                         "not in valid range [0-100]")
    if cfg.pod_initial_backoff_seconds <= 0:
        raise FieldError("podInitialBackoffSeconds", f"Invalid value: {cfg.pod_initial_backoff_seconds}: "
                         "must be greater than 0")
    if cfg.pod_max_backoff_seconds < cfg.pod_initial_backoff_seconds:
        raise FieldError("podMaxBackoffSeconds", f"Invalid value: {cfg.pod_max_backoff_seconds}: must be greater "
                         "than or equal to PodInitialBackoffSeconds")
    profiles = cfg.profiles or [KubeSchedulerProfile()]
    specs, names = [], set()
    for i, p in enumerate(profiles):
        path = f"profiles[{i}]"
        if not p.scheduler_name:
            raise FieldError(f"{path}.schedulerName", "Required value")
        if p.scheduler_name in names:
            raise FieldError(f"{path}.schedulerName", f'Duplicate value: "{p.scheduler_name}"')
        names.add(p.scheduler_name)
        if p.percentage_of_nodes_to_score is not None and not 0 <= p.percentage_of_nodes_to_score <= 100:
            raise FieldError(f"{path}.percentageOfNodesToScore", f"Invalid value: {p.percentage_of_nodes_to_score}: "
                             "not in valid range [0-100]")
        specs.append(build_profile(p, registry, path, cfg.percentage_of_nodes_to_score, feature_gates))
    for i, s in enumerate(specs[1:], start=1):
        if s.points["QueueSort"] != specs[0].points["QueueSort"]:
            raise FieldError(f"profiles[{i}].plugins.queueSort", f"Invalid value: {s.points['QueueSort']}: "
                             "queueSort must be the same for all profiles")
    queue = {"initial_backoff": float(cfg.pod_initial_backoff_seconds),
             "max_backoff": float(cfg.pod_max_backoff_seconds)}
    return specs, queue
