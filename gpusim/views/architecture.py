"""The architecture as data and pictures: which components gpusim simulates, how they talk to each
other, and where the parts of a GPU cluster it leaves out plug in; and which scheduler plugin hooks into
which extension point of a profile.

Think of a city map where the districts gpusim has built are drawn solid and the ones it leaves as open
ground are dashed: ``component_graph`` is the map (a ``networkx.DiGraph``), and ``draw_component_graph``
draws it with hand-placed coordinates so the picture never moves.

Edges point from the component that makes the call (or opens the watch) to the one it calls; the edge
``label`` says what flows. The upstream boundaries are those of kubernetes (kube-apiserver, pkg/scheduler,
pkg/kubelet, pkg/kubelet/cm/devicemanager, pkg/controller/job, pkg/controller/nodelifecycle), the Device
Plugin API v1beta1 (k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1), NVIDIA/k8s-device-plugin (with
gpu-feature-discovery), NVIDIA/mig-parted and NVIDIA/gpu-operator, volcano-sh/volcano, kubernetes-sigs/kueue
and kubernetes-sigs/scheduler-plugins.
"""
from __future__ import annotations

from typing import Any, Optional

import matplotlib.pyplot as plt
import networkx as nx
from matplotlib.lines import Line2D
from matplotlib.patches import FancyBboxPatch, Patch

from ..api.core_v1 import DEFAULT_SCHEDULER_NAME

# Extension points in execution order (pkg/scheduler/framework, kube-scheduler/framework/interface.go).
EXTENSION_POINTS = ["PreEnqueue", "QueueSort", "PreFilter", "Filter", "PostFilter", "PreScore", "Score",
                    "Reserve", "Permit", "PreBind", "Bind", "PostBind"]

GRPC_V1BETA1 = "gRPC v1beta1 (Register, ListAndWatch, GetPreferredAllocation, Allocate)"
_GRPC_DRAWN = "gRPC v1beta1\nRegister, ListAndWatch,\nGetPreferredAllocation, Allocate"

# name: (label drawn in the box, simulated, upstream, gpusim module or None, (x, y), what gpusim does with it)
COMPONENTS: dict[str, tuple[str, bool, str, Optional[str], tuple[float, float], str]] = {
    "apiserver": ("kube-apiserver", True, "kubernetes staging/src/k8s.io/apiserver",
                  "gpusim.controlplane.apiserver", (6.8, 8.0), "object store with watches and events"),
    "kube-scheduler": ("kube-scheduler", True, "kubernetes pkg/scheduler", "gpusim.scheduler", (11.6, 9.4),
                       "profiles, extension points, in-tree plugins, preemption"),
    "scheduler-plugins": ("scheduler-plugins\nCoscheduling,\nCapacityScheduling", True,
                          "kubernetes-sigs/scheduler-plugins pkg/{coscheduling,capacityscheduling}",
                          "gpusim.scheduler.plugins.{coscheduling,capacityscheduling}", (15.3, 8.6),
                          "plugins enabled through a KubeSchedulerConfiguration profile"),
    "scheduler-plugins-controllers": ("PodGroup / ElasticQuota\ncontrollers", True,
                                      "kubernetes-sigs/scheduler-plugins pkg/controllers",
                                      "gpusim.controllers.{podgroup,elasticquota}", (6.8, 9.7),
                                      "PodGroup phase and ElasticQuota used"),
    "volcano": ("Volcano: 2nd scheduler +\nJob, PodGroup, Queue controllers", True,
                "volcano-sh/volcano pkg/scheduler, pkg/controllers", "gpusim.volcano", (11.6, 7.5),
                "installed when a scenario uses Volcano"),
    "kueue": ("Kueue (Job admission)", True, "kubernetes-sigs/kueue pkg/scheduler, pkg/controller",
              "gpusim.kueue", (2.0, 6.6), "installed when a scenario uses Kueue"),
    "job-controller": ("job-controller", True, "kubernetes pkg/controller/job", "gpusim.controllers.job",
                       (2.0, 9.4), "Job → Pods, backoff, completion"),
    "node-lifecycle-controller": ("node-lifecycle-controller", True, "kubernetes pkg/controller/nodelifecycle",
                                  "gpusim.controllers.nodelifecycle", (2.0, 8.0), "taints and evictions"),
    "kubelet": ("kubelet", True, "kubernetes pkg/kubelet", "gpusim.node.kubelet", (6.0, 4.6),
                "admission, pod lifecycle, node status, checkpoint"),
    "device-manager": ("device manager", True, "kubernetes pkg/kubelet/cm/devicemanager",
                       "gpusim.node.devicemanager", (6.0, 2.9), "Register, ListAndWatch, Allocate, checkpoint"),
    "nvidia-device-plugin": ("NVIDIA device plugin", True, "NVIDIA/k8s-device-plugin",
                             "gpusim.node.deviceplugin", (11.3, 2.9), "whole GPUs, MIG, time-slicing, MPS"),
    "container-runtime": ("container runtime", True, "containerd / CRI", "gpusim.node.runtime", (2.6, 4.6),
                          "container start and exit"),
    "gpus": ("GPUs (NVML)", True, "NVML, GPU hardware", "gpusim.hardware", (6.0, 0.7),
             "catalog, MIG geometry, vGPU types, device memory"),
    "gpu-feature-discovery": ("GFD", True, "NVIDIA/k8s-device-plugin (gpu-feature-discovery)", "gpusim.node.labels",
                              (15.3, 5.1), "the nvidia.com/gpu.* and mig labels, written when nodes are created "
                              "and after a MIG change"),
    "mig-manager": ("MIG manager", True, "NVIDIA/mig-parted (nvidia-mig-manager)", "gpusim.node.migmanager",
                    (15.3, 2.2), "applies nvidia.com/mig.config with mig-parted's configs"),
    "gpu-operator": ("GPU Operator", True, "NVIDIA/gpu-operator", "gpusim.operator", (15.3, 6.6),
                     "ClusterPolicy reconcile: node deploy labels, operand pods in state order, status.state "
                     "(watches Nodes and its pods through the apiserver)"),
    "nvidia-driver": ("driver DaemonSet", True, "NVIDIA/gpu-operator (state-driver)", "gpusim.node.operands",
                      (15.3, 0.7), "builds and loads the module (timing.driverLoad), .driver-ctr-ready; "
                      "DriverFailure crash-loops it"),
    "container-toolkit": ("container toolkit", True, "NVIDIA/nvidia-container-toolkit", "gpusim.node.operands",
                          (2.6, 2.9), "configures containerd's nvidia runtime handlers; Allocate's "
                          "NVIDIA_VISIBLE_DEVICES stands for the devices it mounts"),
    "dcgm-exporter": ("DCGM exporter", True, "NVIDIA/dcgm-exporter", "gpusim.records", (15.3, 3.7),
                      "per-GPU DCGM_FI_* series of the run while its pod runs (gpusim.views.dcgm)"),
    # not simulated: said in plain words in the last field
    "node-feature-discovery": ("NFD", False, "kubernetes-sigs/node-feature-discovery", None, (9.0, 5.2),
                               "not simulated: deployed with the GPU Operator for a ClusterPolicy, its workers' "
                               "PCI scan is replaced by the label feature.node.kubernetes.io/pci-10de.present "
                               "gpusim puts on every GPU node"),
}

# (caller, callee, label drawn, detail)
FLOWS: list[tuple[str, str, str, str]] = [
    ("kube-scheduler", "apiserver", "watch Pods/Nodes, bind",
     "informers on Pods and Nodes; POST pods/binding; FailedScheduling events and PodScheduled condition"),
    ("kubelet", "apiserver", "watch Pods, status",
     "watch Pods with spec.nodeName; node status (capacity/allocatable nvidia.com/gpu), pod status"),
    ("job-controller", "apiserver", "watch Jobs, create Pods", "watch Jobs and Pods; create/delete Pods; Job status"),
    ("node-lifecycle-controller", "apiserver", "watch Nodes, taint/evict",
     "watch node status heartbeats; NoExecute taints; evict pods from unreachable nodes"),
    ("kubelet", "device-manager", "Allocate, GetCapacity",
     "admission: Allocate(pod, container); node status: GetCapacity (capacity = healthy + unhealthy)"),
    ("device-manager", "nvidia-device-plugin", "gRPC v1beta1",
     "gRPC v1beta1: GetDevicePluginOptions, ListAndWatch, GetPreferredAllocation, Allocate"),
    ("nvidia-device-plugin", "device-manager", "gRPC v1beta1", "gRPC v1beta1: Registration/Register on kubelet.sock"),
    ("kubelet", "container-runtime", "CRI",
     "CRI: RunPodSandbox, CreateContainer, StartContainer (with Allocate's envs)"),
    ("nvidia-device-plugin", "gpus", "NVML: devices, XID health", "NVML device list and XID events (health)"),
    ("scheduler-plugins", "kube-scheduler", "plugins", "compiled into the scheduler binary: Coscheduling (PodGroup "
     "gang: QueueSort, PreFilter, PostFilter, Permit) and CapacityScheduling (ElasticQuota: PreFilter, Reserve, "
     "PostFilter preemption) at the framework's extension points"),
    ("scheduler-plugins-controllers", "apiserver", "watch Pods, status",
     "watch pods of a PodGroup / an ElasticQuota's namespace; write PodGroup phase and ElasticQuota used"),
    ("volcano", "apiserver", "watch Pods/PodGroups, bind",
     "a second scheduler: pods with schedulerName: volcano; Queue, PodGroup, Job CRDs and their controllers; bind"),
    ("kueue", "apiserver", "watch Jobs, unsuspend",
     "admission controller for Jobs: queue-name label, Workload, quota; admits by setting suspend: false"),
    ("gpu-feature-discovery", "apiserver", "node labels", "labels nvidia.com/gpu.product, .memory, .count, ..."),
    ("mig-manager", "apiserver", "mig.config label, state",
     "watch its node's nvidia.com/mig.config; write nvidia.com/mig.config.state pending/success/failed"),
    ("mig-manager", "nvidia-device-plugin", "pause, restart",
     "nvidia.com/gpu.deploy.device-plugin=paused-for-mig-change stops the plugin; it restarts on the new layout"),
    ("mig-manager", "gpus", "MIG geometry", "mig-parted applies the nvidia.com/mig.config label's MIG layout"),
    ("container-runtime", "container-toolkit", "OCI hook / CDI",
     "the runtime calls the NVIDIA container toolkit (OCI hook or CDI) with NVIDIA_VISIBLE_DEVICES"),
    ("container-toolkit", "gpus", "/dev/nvidia*", "mounts device nodes and driver libraries into the container"),
    ("nvidia-driver", "gpus", "kernel driver", "containerised kernel driver"),
    ("dcgm-exporter", "gpus", "DCGM metrics", "DCGM_FI_* metrics per GPU"),
    ("dcgm-exporter", "kubelet", "PodResources", "PodResourcesLister.List on pod-resources/kubelet.sock: GPU → pod"),
    ("node-feature-discovery", "apiserver", "label Nodes", "feature.node.kubernetes.io/* labels from the PCI scan"),
] + [("gpu-operator", c, "deploys", "ClusterPolicy operand (DaemonSet)")
     for c in ("nvidia-driver", "container-toolkit", "nvidia-device-plugin", "gpu-feature-discovery",
               "dcgm-exporter", "mig-manager")]

# where along an edge (fraction from the caller) its label sits, where the middle is crowded
LABEL_AT = {("node-feature-discovery", "apiserver"): 0.3, ("gpu-feature-discovery", "apiserver"): 0.3, ("dcgm-exporter", "kubelet"): 0.35,
            ("gpu-operator", "nvidia-device-plugin"): 0.3, ("mig-manager", "apiserver"): 0.62,
            ("mig-manager", "nvidia-device-plugin"): 0.45}


def component_graph(result=None) -> nx.DiGraph:
    """The simulated components and their upstream boundaries, plus (``simulated=False``) where the parts
    gpusim leaves out (Node Feature Discovery's PCI scan) sit; each node's
    ``note`` says what gpusim does with it. With a ``result``, the scheduler node lists that run's profiles
    and the kubelet node its node names."""
    g = nx.DiGraph(name="gpusim components")
    for name, (label, simulated, upstream, module, pos, note) in COMPONENTS.items():
        g.add_node(name, label=label, simulated=simulated, upstream=upstream, module=module, pos=pos, note=note)
    for a, b, label, detail in FLOWS:
        g.add_edge(a, b, label=label, detail=detail, deploys=label == "deploys")
    for a, b in (("device-manager", "nvidia-device-plugin"), ("nvidia-device-plugin", "device-manager")):
        g.edges[a, b]["protocol"] = GRPC_V1BETA1
    if result is not None:
        profiles = list(result.scheduler.frameworks)
        nodes = sorted(result.kubelets)
    else:
        profiles = [DEFAULT_SCHEDULER_NAME]
        nodes = []
    g.nodes["kube-scheduler"]["profiles"] = profiles
    g.nodes["kube-scheduler"]["label"] = "kube-scheduler\nprofiles: " + ", ".join(profiles)
    g.nodes["kubelet"]["nodes"] = nodes
    if nodes:
        g.nodes["kubelet"]["label"] = f"kubelet (× {len(nodes)} node{'s' if len(nodes) != 1 else ''})"
    return g


def component_table(g: nx.DiGraph) -> str:
    """One line per component: simulated or not, upstream, gpusim module (simulated ones first)."""
    from .kubectl import _table
    rows = [["COMPONENT", "SIMULATED", "UPSTREAM", "GPUSIM MODULE"]]
    for name, d in sorted(g.nodes(data=True), key=lambda nd: not nd[1]["simulated"]):
        rows.append([name, "yes" if d["simulated"] else "no", d["upstream"], d["module"] or "-"])
    return _table(rows)


def unsimulated_components(g: nx.DiGraph) -> str:
    """The components gpusim does not simulate, one markdown bullet each, in plain words."""
    return "\n".join(f"- **{d['label']}** (`{d['upstream']}`): {d['note']}"
                      for _, d in g.nodes(data=True) if not d["simulated"])


def component_layers(g: nx.DiGraph) -> dict[str, str]:
    """Each simulated component's layer of gpusim/layers.py (the package of its gpusim module)."""
    from ..layers import LAYERS
    layer_of = {pkg: layer.name for layer in LAYERS for pkg in layer.packages}
    return {name: layer_of[d["module"].split(".")[1]] for name, d in g.nodes(data=True) if d["module"]}


def _box(ax, xy, text, simulated):
    x, y = xy
    w, h = max(1.9, 0.11 * max(len(s) for s in text.split("\n")) + 0.4), 0.55 + 0.32 * text.count("\n")
    style = dict(boxstyle="round,pad=0.08,rounding_size=0.15", linewidth=1.3, zorder=3)
    if simulated:
        patch = FancyBboxPatch((x - w / 2, y - h / 2), w, h, facecolor="#dbe9f6", edgecolor="#1f4e79", **style)
    else:
        patch = FancyBboxPatch((x - w / 2, y - h / 2), w, h, facecolor="#f4f4f4", edgecolor="grey",
                               linestyle=(0, (4, 3)), **style)
    ax.add_patch(patch)
    ax.text(x, y, text, ha="center", va="center", fontsize=8, zorder=4,
            color="black" if simulated else "dimgrey")
    return w, h


def draw_component_graph(g: nx.DiGraph, ax=None):
    """Draw the component graph at its fixed coordinates: simulated components solid blue, the
    others dashed grey; edges labelled with what flows (the device-plugin gRPC pair as one arrow)."""
    if ax is None:
        _, ax = plt.subplots(figsize=(12, 7.2))
    pos = nx.get_node_attributes(g, "pos")
    ax.set_xlim(0.3, 17.0)
    ax.set_ylim(-0.2, 10.2)
    (x0, y0), (x1, y1) = ax.transData.transform([(0, 0), (1, 1)])
    per_unit = ((x1 - x0) + (y1 - y0)) / 2 * 72 / ax.figure.dpi     # points per data unit
    ax.add_patch(FancyBboxPatch((0.6, 0.05), 12.6, 5.35, boxstyle="round,pad=0.05", facecolor="none",
                                edgecolor="#9bbb59", linewidth=1.0, linestyle=(0, (1, 2)), zorder=0))
    ax.text(0.8, 5.2, "every GPU node", fontsize=8, color="#5a7a2a", va="top")
    ax.add_patch(FancyBboxPatch((14.1, 0.05), 2.6, 5.9, boxstyle="round,pad=0.05", facecolor="none",
                                edgecolor="grey", linewidth=0.8, linestyle=(0, (1, 2)), zorder=0))
    ax.text(14.2, 5.85, "GPU Operator operands", fontsize=7, color="dimgrey", va="top")
    sizes = {n: _box(ax, pos[n], d["label"], d["simulated"]) for n, d in g.nodes(data=True)}
    done = set()
    for a, b, d in g.edges(data=True):
        if (a, b) in done:
            continue
        both = g.has_edge(b, a)
        done |= {(a, b), (b, a)}
        simulated = g.nodes[a]["simulated"] and g.nodes[b]["simulated"]
        if d.get("deploys"):
            color, ls, lw = "silver", (0, (1, 2)), 0.8
        else:
            color, ls, lw = ("#1f4e79", "-", 1.2) if simulated else ("grey", (0, (4, 3)), 1.0)
        (xa, ya), (xb, yb) = pos[a], pos[b]
        arrow = "<|-|>" if both else "-|>"
        ax.annotate("", xy=(xb, yb), xytext=(xa, ya), zorder=2,
                    arrowprops=dict(arrowstyle=arrow, color=color, linestyle=ls, linewidth=lw, mutation_scale=11,
                                    shrinkA=_shrink(sizes[a], xa, ya, xb, yb) * per_unit,
                                    shrinkB=_shrink(sizes[b], xb, yb, xa, ya) * per_unit))
        if d.get("deploys"):
            continue
        label = _GRPC_DRAWN if "protocol" in d else d["label"]
        f = LABEL_AT.get((a, b), 0.5)
        ax.text(xa + f * (xb - xa), ya + f * (yb - ya), label, fontsize=6.5, ha="center", va="center", zorder=5,
                color="#1f4e79" if simulated else "dimgrey",
                bbox=dict(boxstyle="round,pad=0.15", facecolor="white", edgecolor="none", alpha=0.9))
    ax.axis("off")
    ax.legend(handles=[Patch(facecolor="#dbe9f6", edgecolor="#1f4e79", label="simulated by gpusim"),
                       Patch(facecolor="#f4f4f4", edgecolor="grey", linestyle="--", label="not simulated"),
                       Line2D([], [], color="silver", linestyle=":", label="GPU Operator deploys")],
              loc="lower left", bbox_to_anchor=(0.045, 0.03), fontsize=7, framealpha=1)
    ax.set_title("gpusim components (solid) and where the rest of the GPU stack plugs in (dashed)")
    return ax


def _shrink(size, x, y, ox, oy) -> float:
    """How far (in data units) an arrow towards (ox, oy) runs inside a box of (w, h) centred at (x, y)."""
    w, h = size
    dx, dy = abs(ox - x), abs(oy - y)
    if dx * h > dy * w:
        d = (w / 2) * ((dx ** 2 + dy ** 2) ** 0.5) / dx if dx else h / 2
    else:
        d = (h / 2) * ((dx ** 2 + dy ** 2) ** 0.5) / dy if dy else w / 2
    return d


# --- extension points ------------------------------------------------------------------------------

def _plugin_order(spec) -> list[str]:
    """The default profile's plugins in their registry order (``spec.default_plugins``), then the others."""
    seen = [n for pt in EXTENSION_POINTS for n in spec.points.get(pt, ())]
    known = [n for n in spec.default_plugins if n in seen]
    return known + [n for n in dict.fromkeys(seen) if n not in known]


def scoring_summary(spec) -> str:
    """NodeResourcesFit's scoring strategy in one line, e.g. ``MostAllocated (cpu 1, memory 1, nvidia.com/gpu 5)``."""
    strategy = (spec.args.get("NodeResourcesFit") or {}).get("scoringStrategy") or {}
    res = strategy.get("resources") or [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
    return f"{strategy.get('type') or 'LeastAllocated'} (" + ", ".join(
        f"{r['name']} {r.get('weight') or 1}" for r in res) + ")"


def extension_point_map(profile_spec) -> list[dict[str, Any]]:
    """One row per plugin of a profile: ``plugin``, ``points`` (where it hooks, in execution order),
    ``weight`` (its Score weight, None if it does not score) and, per extension point, its 1-based
    position among that point's plugins (None where it does not hook)."""
    rows = []
    for name in _plugin_order(profile_spec):
        row: dict[str, Any] = {"plugin": name}
        points = []
        for pt in EXTENSION_POINTS:
            names = profile_spec.points.get(pt, [])
            row[pt] = names.index(name) + 1 if name in names else None
            if name in names:
                points.append(pt)
        row["points"] = points
        row["weight"] = profile_spec.weights.get(name, 1) if "Score" in points else None
        rows.append(row)
    return rows


def extension_points_of(profile_spec, plugin: str) -> list[str]:
    """The extension points ``plugin`` hooks into in this profile, in execution order ([] if it is not enabled)."""
    return next((r["points"] for r in extension_point_map(profile_spec) if r["plugin"] == plugin), [])


def format_extension_point_map(profile_spec) -> str:
    """The map as text: one line per plugin, its extension points, and its Score weight."""
    from .kubectl import _table
    rows = [["PLUGIN", "EXTENSION POINTS", "SCORE WEIGHT"]]
    for r in extension_point_map(profile_spec):
        rows.append([r["plugin"], ", ".join(r["points"]), "" if r["weight"] is None else str(r["weight"])])
    return _table(rows)


def draw_extension_point_map(profiles: dict[str, Any], ax=None):
    """Plugins × extension points for one or more profiles side by side in each cell (one colour per
    profile); the Score column carries each plugin's weight. Compare the default profile with a GPU
    bin-packing one: a missing square is a plugin the profile disabled at that point."""
    labels = list(profiles)
    order: list[str] = []
    for spec in profiles.values():
        order += [n for n in _plugin_order(spec) if n not in order]
    if ax is None:
        _, ax = plt.subplots(figsize=(11, 0.42 * len(order) + 1.8))
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]
    n = len(labels)
    for k, (label, spec) in enumerate(profiles.items()):
        dx = (k - (n - 1) / 2) * 0.28
        rows = {r["plugin"]: r for r in extension_point_map(spec)}
        for i, name in enumerate(order):
            r = rows.get(name)
            if r is None:
                continue
            for j, pt in enumerate(EXTENSION_POINTS):
                if r[pt] is None:
                    continue
                ax.scatter(j + dx, i, marker="s", s=70, color=colors[k % len(colors)], zorder=3)
                if pt == "Score":
                    below = k % 2 == 1
                    ax.text(j + dx, i + (0.2 if below else -0.2), f"w={r['weight']}", ha="center",
                            va="top" if below else "bottom", fontsize=6.5, color=colors[k % len(colors)])
    ax.set_xticks(range(len(EXTENSION_POINTS)), EXTENSION_POINTS, rotation=30, ha="right")
    ax.set_yticks(range(len(order)), order)
    ax.set_xlim(-0.6, len(EXTENSION_POINTS) - 0.4)
    ax.set_ylim(len(order) - 0.5, -0.8)
    ax.grid(True, alpha=0.3)
    for lo, hi, text, color in ((-0.5, 1.5, "queue", "#eaf5ea"), (1.5, 8.5, "scheduling cycle", "#eef3fa"),
                                (8.5, 11.5, "binding cycle", "#faf3ea")):
        ax.axvspan(lo, hi, color=color, zorder=0)
        ax.text((lo + hi) / 2, -0.62, text, ha="center", fontsize=8, color="dimgrey")
    ax.legend(handles=[Line2D([], [], marker="s", linestyle="", color=colors[k % len(colors)],
                              label=f"{lb}: NodeResourcesFit {scoring_summary(profiles[lb])}")
                       for k, lb in enumerate(labels)],
              loc="upper center", bbox_to_anchor=(0.5, -0.17), fontsize=7.5, ncol=1, frameon=False)
    ax.set_title("Which plugin hooks into which extension point (w = Score weight)")
    return ax


# --- the package's layers ---------------------------------------------------------------------------

def layer_table() -> str:
    """The layers of gpusim (gpusim/layers.py, the table the import-linter contracts encode), top to bottom."""
    from ..layers import LAYERS
    from .kubectl import _table
    rows = [["LAYER", "PACKAGES", "WHAT"]]
    for layer in LAYERS:
        rows.append([layer.name, (" | " if layer.independent else ", ").join(layer.packages), layer.what])
    return _table(rows)


def draw_layers(ax=None):
    """The layers as a stack of bands, one box per package; imports point only downwards (and, inside the
    components band, only from volcano to scheduler)."""
    from ..layers import LAYERS
    if ax is None:
        _, ax = plt.subplots(figsize=(11, 0.62 * len(LAYERS) + 0.6))
    n = len(LAYERS)
    for i, layer in enumerate(LAYERS):
        y = n - 1 - i
        ax.add_patch(FancyBboxPatch((0.0, y + 0.08), 3.0, 0.84, boxstyle="round,pad=0.02", fc="#f2f2f2",
                                    ec="grey", lw=0.8))
        ax.text(1.5, y + 0.5, layer.name, ha="center", va="center", fontsize=9, weight="bold")
        k = len(layer.packages)
        width = (8.8 - 0.15 * (k - 1)) / k
        for j, pkg in enumerate(layer.packages):
            x = 3.2 + j * (width + 0.15)
            ax.add_patch(FancyBboxPatch((x, y + 0.14), width, 0.72, boxstyle="round,pad=0.02",
                                        fc="#dbe9f6" if layer.name != "components" else "#e3f1e0", ec="#4a6f94",
                                        lw=0.9))
            ax.text(x + width / 2, y + 0.5, pkg, ha="center", va="center", fontsize=9, family="monospace")
    ax.annotate("", xy=(12.25, 0.1), xytext=(12.25, n - 0.1),
                arrowprops=dict(arrowstyle="->", color="dimgrey", lw=1.5))
    ax.text(12.4, n / 2, "imports point down only", rotation=90, va="center", fontsize=8.5, color="dimgrey")
    ax.set_xlim(-0.1, 12.8)
    ax.set_ylim(-0.1, n + 0.1)
    ax.axis("off")
    ax.set_title("gpusim's layers (gpusim/layers.py = import-linter contracts in pyproject.toml)")
    return ax
