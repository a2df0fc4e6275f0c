"""The Volcano scheduler's configuration (mirrors volcano-sh/volcano pkg/scheduler/conf/scheduler_conf.go,
the loader in pkg/scheduler/util.go, and its ``DefaultSchedulerConf``).

The Helm chart mounts it from ConfigMap ``volcano-system/volcano-scheduler-configmap``, key
``volcano-scheduler.conf``; a scenario may hold that ConfigMap, else the default applies:

    actions: "enqueue, allocate, backfill"
    tiers:
    - plugins: [priority, gang, conformance]
    - plugins: [overcommit, drf, predicates, proportion, nodeorder]
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import yaml

CONFIGMAP_NAMESPACE = "volcano-system"
CONFIGMAP_NAME = "volcano-scheduler-configmap"
CONFIGMAP_KEY = "volcano-scheduler.conf"
DEFAULT_SCHEDULER_CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
"""


def configmap_yaml(conf: str) -> str:
    """The ConfigMap volcano-system/volcano-scheduler-configmap holding ``conf``, as YAML text (the Helm
    chart's shape: the configuration as a block scalar under ``volcano-scheduler.conf``)."""
    body = "".join(f"    {line}\n" for line in conf.splitlines())
    return (f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {CONFIGMAP_NAME}, namespace: {CONFIGMAP_NAMESPACE}}}\n"
            f"data:\n  {CONFIGMAP_KEY}: |\n{body}")


ACTIONS = ("enqueue", "allocate", "backfill", "preempt", "reclaim")
PLUGINS = ("priority", "gang", "conformance", "drf", "predicates", "proportion", "nodeorder", "binpack",
           "overcommit", "network-topology-aware")
# PluginOption's switches (yaml names as in scheduler_conf.go); unset means enabled.
SWITCHES = {
    "enableJobOrder": "job_order", "enableNamespaceOrder": "namespace_order", "enableHierarchy": "hierarchy",
    "enableJobReady": "job_ready", "enableJobPipelined": "job_pipelined", "enableTaskOrder": "task_order",
    "enablePreemptable": "preemptable", "enableReclaimable": "reclaimable", "enablePreemptive": "preemptive",
    "enableQueueOrder": "queue_order", "enableClusterOrder": "cluster_order", "enablePredicate": "predicate",
    "enableBestNode": "best_node", "enableNodeOrder": "node_order", "enableTargetJob": "target_job",
    "enableReservedNodes": "reserved_nodes", "enableJobEnqueued": "job_enqueued", "enabledVictim": "victim",
    "enableJobStarving": "job_starving", "enabledOverused": "overused", "enabledAllocatable": "allocatable",
    "enabledHyperNodeOrder": "hyper_node_order", "enabledHyperNodeGradient": "hyper_node_gradient",
}


class ConfError(ValueError):
    """A configuration the scheduler would not load; ``path`` names the field."""

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}" if path else message)
        self.path, self.message = path, message


@dataclass
class PluginOption:
    name: str
    switches: dict[str, bool] = field(default_factory=dict)   # job_order → False, ...; absent = enabled
    arguments: dict[str, Any] = field(default_factory=dict)

    def enabled(self, switch: str) -> bool:
        """isEnabled: a nil switch counts as enabled."""
        return self.switches.get(switch, True)


@dataclass
class Tier:
    plugins: list[PluginOption] = field(default_factory=list)


@dataclass
class SchedulerConf:
    actions: list[str]
    tiers: list[Tier]
    configurations: dict[str, dict[str, Any]] = field(default_factory=dict)   # action name → arguments
    source: str = "default"

    def plugin(self, name: str) -> Optional[PluginOption]:
        return next((p for t in self.tiers for p in t.plugins if p.name == name), None)


def parse(text: str, source: str = "default") -> SchedulerConf:
    """unmarshalSchedulerConf: actions split on commas; each must exist (``failed to find Action %s, ignore
    it`` upstream, which then keeps its previous conf); plugins gpusim does not simulate are an error here
    (upstream logs "Failed to get plugin" and skips them)."""
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfError("", f"cannot parse the scheduler configuration: {getattr(e, 'problem', None) or e}") from None
    if not isinstance(raw, dict):
        raise ConfError("", "the scheduler configuration must be a mapping with actions and tiers")
    for key in raw:
        if key not in ("actions", "tiers", "configurations", "metrics"):
            raise ConfError("", f'unknown field "{key}"')
    actions = [a.strip() for a in str(raw.get("actions") or "").split(",") if a.strip()]
    for a in actions:
        if a not in ACTIONS:
            raise ConfError("actions", f"failed to find Action {a}, ignore it (gpusim simulates: {', '.join(ACTIONS)})")
    tiers = []
    for i, t in enumerate(raw.get("tiers") or []):
        if not isinstance(t, dict) or set(t) - {"plugins"}:
            raise ConfError(f"tiers[{i}]", "a tier is a mapping with one key, plugins")
        plugins = []
        for j, p in enumerate(t.get("plugins") or []):
            path = f"tiers[{i}].plugins[{j}]"
            if not isinstance(p, dict) or "name" not in p:
                raise ConfError(path, "Required value: name")
            if p["name"] not in PLUGINS:
                raise ConfError(f"{path}.name", f'Failed to get plugin {p["name"]} (gpusim simulates: '
                                f"{', '.join(PLUGINS)})")
            switches = {}
            for k, v in p.items():
                if k in ("name", "arguments"):
                    continue
                if k not in SWITCHES:
                    raise ConfError(path, f'unknown field "{k}"')
                if not isinstance(v, bool):
                    raise ConfError(f"{path}.{k}", f"Invalid value: {v!r}: expected a boolean")
                switches[SWITCHES[k]] = v
            args = p.get("arguments") or {}
            if not isinstance(args, dict):
                raise ConfError(f"{path}.arguments", "Invalid value: expected a mapping")
            plugins.append(PluginOption(p["name"], switches, {str(k): v for k, v in args.items()}))
        tiers.append(Tier(plugins))
    configurations = {}
    for i, c in enumerate(raw.get("configurations") or []):
        if not isinstance(c, dict) or "name" not in c:
            raise ConfError(f"configurations[{i}]", "Required value: name")
        configurations[c["name"]] = dict(c.get("arguments") or {})
    return SchedulerConf(actions, tiers, configurations, source)


def default() -> SchedulerConf:
    return parse(DEFAULT_SCHEDULER_CONF)


def from_configmaps(configmaps: list) -> SchedulerConf:
    """The ConfigMap the Helm chart mounts, when the scenario holds it; else the default."""
    cm = next((c for c in configmaps if c.metadata.namespace == CONFIGMAP_NAMESPACE
               and c.metadata.name == CONFIGMAP_NAME), None)
    if cm is None:
        return default()
    if CONFIGMAP_KEY not in cm.data:
        raise ConfError("data", f"Required value: key {CONFIGMAP_KEY}")
    try:
        return parse(cm.data[CONFIGMAP_KEY], source=f"{CONFIGMAP_NAMESPACE}/{CONFIGMAP_NAME}")
    except ConfError as e:
        raise ConfError(f"data[{CONFIGMAP_KEY}]" + (f".{e.path}" if e.path else ""), e.message) from None
