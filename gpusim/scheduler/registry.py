"""The plugin registry (mirrors pkg/scheduler/framework/runtime/registry.go): name → factory.
Out-of-tree plugins register the same way in-tree ones do."""
from __future__ import annotations

from typing import Any, Callable

from .plugins import (capacityscheduling, coscheduling, dynamicresources, gangscheduling, defaultbinder, defaultpreemption, hami, interpodaffinity, nodeaffinity, nodename, nodeports, noderesources,
                      noderesourcetopology,
                      nodeunschedulable, podtopologyspread, queuesort, schedulinggates, tainttoleration)
from .plugins import (bestfitscore, dotproductscore, fgdscore, gpuclusteringscore, gpupackingscore, opengpushare,
                      randomscore)

Factory = Callable[[Any, Any], Any]


class Registry(dict):
    def register(self, name: str, factory: Factory) -> None:
        if name in self:
            raise ValueError(f"a plugin named {name} already exists")
        self[name] = factory

    def unregister(self, name: str) -> None:
        if name not in self:
            raise ValueError(f"no plugin named {name} exists")
        del self[name]

    def merge(self, other: "Registry") -> None:
        for name, factory in other.items():
            self.register(name, factory)


def in_tree_registry() -> Registry:
    r = Registry()
    r.register(schedulinggates.NAME, schedulinggates.new)
    r.register(queuesort.NAME, queuesort.new)
    r.register(nodeunschedulable.NAME, nodeunschedulable.new)
    r.register(nodename.NAME, nodename.new)
    r.register(tainttoleration.NAME, tainttoleration.new)
    r.register(nodeaffinity.NAME, nodeaffinity.new)
    r.register(nodeports.NAME, nodeports.new)
    r.register(noderesources.NAME, noderesources.new)
    r.register(podtopologyspread.NAME, podtopologyspread.new)
    r.register(interpodaffinity.NAME, interpodaffinity.new)
    r.register(noderesources.BALANCED_NAME, noderesources.new_balanced)
    r.register(dynamicresources.NAME, dynamicresources.new)
    r.register(defaultpreemption.NAME, defaultpreemption.new)
    r.register(defaultbinder.NAME, defaultbinder.new)
    r.register(hami.NAME, hami.new)   # HAMi's scheduler fit: opt-in, not in DEFAULT_PLUGINS
    r.register(coscheduling.NAME, coscheduling.new)   # scheduler-plugins: opt-in through a profile
    r.register(capacityscheduling.NAME, capacityscheduling.new)   # scheduler-plugins: opt-in through a profile
    r.register(noderesourcetopology.NAME, noderesourcetopology.new)   # scheduler-plugins: opt-in through a profile
    r.register(gangscheduling.NAME, gangscheduling.new)   # alpha, in the default profile only with its feature gate
    # the FGD simulator's GPU sharing and its six placement policies: opt-in through a profile
    for m in (opengpushare, randomscore, dotproductscore, gpuclusteringscore, gpupackingscore, bestfitscore, fgdscore):
        r.register(m.NAME, m.new)
    return r


# pkg/scheduler/apis/config/v1/default_plugins.go (multiPoint), restricted to the plugins gpusim has:
# (name, score weight). Filter order is this list's order.
DEFAULT_PLUGINS: list[tuple[str, int]] = [
    ("SchedulingGates", 0), ("PrioritySort", 0), ("NodeUnschedulable", 0), ("NodeName", 0),
    ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", 0), ("NodeResourcesFit", 1),
    ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DynamicResources", 0), ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1), ("DefaultBinder", 0),
]
