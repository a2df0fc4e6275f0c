"""The package's layers, top to bottom: a module imports only from its own package or from layers below
it, and the components of one layer never import one another (Volcano reuses the in-tree scheduler
plugins, as upstream does). ``pyproject.toml`` states the same table as import-linter contracts, which
``make test`` checks with ``lint-imports``; a test keeps this table, those contracts and the README's
package map equal. Chapter 03 draws it (``gpusim.views.architecture.draw_layers``).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Layer:
    name: str
    packages: tuple[str, ...]      # sub-packages or modules of gpusim
    what: str
    independent: bool = False      # its packages do not import one another


LAYERS: tuple[Layer, ...] = (
    Layer("command line", ("cli",), "`gpusim run`, `describe`, `explain`: prints what kubectl would show"),
    Layer("labs", ("labs",), "lab tooling and checkers"),
    Layer("experiments", ("comparison", "experiments", "replay"),
          "scenarios built, run and compared (stacks, scoring strategies, sharing modes); widgets that rerun; "
          "trace replay at production scale (the Alibaba GPU trace, the FGD study's policies, sweeps)",
          independent=True),
    Layer("views", ("views",), "kubectl text, figures and widgets of a finished run"),
    Layer("metrics", ("metrics",), "per-tenant GPU share, utilization, queueing delay, JCT, wasted GPU-hours"),
    Layer("records", ("records",), "a run as JSON (the `-o json` contract)"),
    Layer("cluster", ("cluster",), "scenario loading, the component table, the simulation's wiring on one clock"),
    Layer("components", ("scheduler", "node", "controllers", "volcano", "kueue", "operator"),
          "kube-scheduler and its plugins; kubelet, device manager, device plugins, mig-manager, the GPU "
          "operands' containers; Job, node lifecycle, PodGroup and ElasticQuota controllers; Volcano; Kueue; the "
          "GPU Operator's ClusterPolicy reconciler"),
    Layer("workloads", ("workloads",), "what runs inside a pod: distributed training steps"),
    Layer("control plane", ("controlplane",), "apiserver store with watches, events, trace, the shared context"),
    Layer("component helpers", ("componenthelpers",),
          "node-affinity matching, pod conditions, PodRequests (k8s.io/component-helpers)"),
    Layer("object model and hardware", ("api", "hardware"),
          "every kind's types and validation, shared API types (Device Plugin API); GPU catalog, MIG, vGPU",
          independent=True),
)


def import_linter_layers() -> list[str]:
    """The ``layers`` list of the import-linter contract this table stands for."""
    return [(" | " if layer.independent else " : ").join(layer.packages) for layer in LAYERS]


def markdown_table() -> str:
    """The table as the README's package map shows it."""
    rows = ["| layer (top to bottom) | packages | what |", "|---|---|---|"]
    for layer in LAYERS:
        sep = " \\| " if layer.independent else ", "
        rows.append(f"| {layer.name} | " + sep.join(f"`{p}`" for p in layer.packages) + f" | {layer.what} |")
    return "\n".join(rows)
