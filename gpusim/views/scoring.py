"""How scoring shapes a GPU cluster: fragmentation under LeastAllocated vs MostAllocated, per-plugin
score bars of one scheduling attempt, and widgets to replay the scheduler's Filter/Score decision.

Scoring follows kube-scheduler's NodeResourcesFit ``scoringStrategy`` (pkg/scheduler/framework/plugins/
noderesources): GPUs count only when ``nvidia.com/gpu`` is listed in ``resources``. LeastAllocated
spreads pods like a host seating guests at the emptiest table; MostAllocated fills a table before
opening the next one, so whole tables (8-GPU nodes) stay free for the big party that comes later.

Views read a finished run's records (``result.ctx.holdings``, ``result.scheduler.attempts``); the
scenario builders here only write YAML. Running them (``compare_strategies``, ``filter_score_demo`` and
the widgets that rerun) is in gpusim.experiments.scoring.
"""
from __future__ import annotations

from typing import Any, Iterable, Optional

import matplotlib.pyplot as plt
import yaml

from ..api.core_v1 import NVIDIA_GPU
from .explain import attempts_for, explain_pod
from .kubectl import ts
from .display import show_widget

STRATEGIES = ("LeastAllocated", "MostAllocated")
DEFAULT = "default"   # no KubeSchedulerConfiguration: LeastAllocated over cpu and memory only
_COLORS = {"LeastAllocated": "#1f77b4", "MostAllocated": "#d62728", DEFAULT: "#7f7f7f",
           "RequestedToCapacityRatio": "#2ca02c"}


# --- scheduler configuration -----------------------------------------------------------------------

def _scoring(strategy: str, gpu_weight: int) -> dict:
    return {"type": strategy, "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
                                            {"name": NVIDIA_GPU, "weight": gpu_weight}]}


def scoring_config(strategy: str = "MostAllocated", gpu_weight: int = 5,
                   scheduler_name: str = "default-scheduler") -> str:
    """A KubeSchedulerConfiguration document whose profile scores cpu, memory and nvidia.com/gpu
    (weight ``gpu_weight``) with ``strategy``."""
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": scheduler_name, "pluginConfig": [
               {"name": "NodeResourcesFit", "args": {"scoringStrategy": _scoring(strategy, gpu_weight)}}]}]}
    return _dump([doc])


def _dump(docs: list) -> str:
    class Flow(yaml.SafeDumper):
        pass

    def represent_dict(dumper, data):   # small mappings inline, like hand-written YAML
        flow = len(data) <= 2 and all(not isinstance(v, (dict, list)) for v in data.values())
        return dumper.represent_mapping("tag:yaml.org,2002:map", data, flow_style=flow)
    Flow.add_representer(dict, represent_dict)
    return yaml.dump_all(docs, Dumper=Flow, sort_keys=False, default_flow_style=False)


def with_scoring_strategy(yaml_text: str, strategy: str, gpu_weight: int = 5) -> str:
    """The scenario with NodeResourcesFit scoring set to ``strategy`` (GPU weight ``gpu_weight``) in every
    profile: a KubeSchedulerConfiguration document is appended, or the existing one is edited.
    ``strategy="default"`` returns the text unchanged."""
    if strategy == DEFAULT:
        return yaml_text
    docs = [d for d in yaml.safe_load_all(yaml_text) if d is not None]
    cfg = next((d for d in docs if isinstance(d, dict) and d.get("kind") == "KubeSchedulerConfiguration"), None)
    if cfg is None:
        return yaml_text.rstrip("\n") + "\n---\n" + scoring_config(strategy, gpu_weight)
    if not cfg.get("profiles"):
        cfg["profiles"] = [{"schedulerName": "default-scheduler"}]
    for prof in cfg["profiles"]:
        pcs = prof.get("pluginConfig") or []
        prof["pluginConfig"] = pcs
        pc = next((p for p in pcs if p.get("name") == "NodeResourcesFit"), None)
        if pc is None:
            pc = {"name": "NodeResourcesFit"}
            pcs.append(pc)
        pc["args"] = dict(pc.get("args") or {}, scoringStrategy=_scoring(strategy, gpu_weight))
    return _dump(docs)


# --- fragmentation ----------------------------------------------------------------------------------

def fragmentation(result, t: Optional[float] = None, pod_size: int = 8) -> dict[str, Any]:
    """Free GPUs per node at time ``t`` (default: the end of the run), from the devices pods held
    (``result.ctx.holdings``) and each node's GPU count. Summary: ``fully_free`` nodes, ``partially_used``
    nodes, ``full`` nodes, ``largest_free`` (most free GPUs on one node), ``total_free``, and ``pods_fit``:
    how many pods of ``pod_size`` GPUs would still fit."""
    at = result.end if t is None else float(t)
    capacity = {node: count for node, (_model, count) in sorted(result.scenario.gpus.items())}
    held: dict[str, set] = {n: set() for n in capacity}
    for h in result.ctx.holdings:
        if h.resource != NVIDIA_GPU or h.node not in held:
            continue
        if h.start <= at and (h.end is None or h.end > at):
            held[h.node].add(h.device)
    nodes = {n: {"capacity": c, "used": len(held[n]), "free": c - len(held[n])} for n, c in capacity.items()}
    free = [v["free"] for v in nodes.values()]
    return {"time": at, "nodes": nodes, "pod_size": pod_size,
            "fully_free": sum(1 for v in nodes.values() if v["used"] == 0),
            "partially_used": sum(1 for v in nodes.values() if 0 < v["used"] < v["capacity"]),
            "full": sum(1 for v in nodes.values() if v["used"] == v["capacity"]),
            "largest_free": max(free, default=0), "total_free": sum(free),
            "pods_fit": sum(f // pod_size for f in free)}


def fragmentation_scenario(sizes: Iterable[int] = (2, 3, 1, 4, 2, 3, 1, 2), nodes: int = 4, gpus: int = 8,
                           big: int = 8, interval: int = 10, model: str = "A100-SXM4-80GB", seed: int = 0) -> str:
    """A GPU cluster (``nodes`` × ``gpus``) and a stream of small GPU pods (``small-0`` …, one every
    ``interval`` seconds, running to the end), then one ``big`` pod asking for ``big`` GPUs."""
    sizes = list(sizes)
    docs: list[dict] = [
        {"apiVersion": "gpusim.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "fragmentation"},
         "spec": {"seed": seed}},
        {"apiVersion": "gpusim.io/v1alpha1", "kind": "NodePool", "metadata": {"name": "gpu"},
         "spec": {"count": nodes, "gpu": {"model": model, "count": gpus}}}]

    def pod(name: str, n: int, at: int) -> dict:
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "annotations": {"gpusim.io/submit-at": f"{at}s"}},
                "spec": {"containers": [{"name": "worker", "image": "nvcr.io/nvidia/pytorch:24.08-py3",
                                         "resources": {"limits": {NVIDIA_GPU: n}}}]}}
    docs += [pod(f"small-{i}", n, i * interval) for i, n in enumerate(sizes)]
    docs.append(pod("big", big, len(sizes) * interval))
    return _dump(docs)


def fragmentation_table(comparison: dict) -> str:
    from .kubectl import _table
    rows = [["STRATEGY", "FULLY FREE", "PARTIALLY USED", "FULL", "LARGEST FREE", "TOTAL FREE", "PODS THAT FIT"]]
    for s, (_r, f) in comparison.items():
        rows.append([s, str(f["fully_free"]), str(f["partially_used"]), str(f["full"]), str(f["largest_free"]),
                     str(f["total_free"]), f"{f['pods_fit']} × {f['pod_size']} GPUs"])
    return _table(rows)


def plot_fragmentation(comparison: dict, ax=None):
    """Per node, one stacked bar per strategy: used GPUs (solid) and free GPUs (hatched)."""
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 3.6))
    strategies = list(comparison)
    nodes = list(next(iter(comparison.values()))[1]["nodes"])
    width = 0.8 / max(len(strategies), 1)
    top = 0
    for k, s in enumerate(strategies):
        f = comparison[s][1]
        color = _COLORS.get(s, f"C{k}")
        xs = [i + (k - (len(strategies) - 1) / 2) * width for i in range(len(nodes))]
        used = [f["nodes"][n]["used"] for n in nodes]
        free = [f["nodes"][n]["free"] for n in nodes]
        top = max(top, max((u + v for u, v in zip(used, free)), default=0))
        ax.bar(xs, used, width * 0.92, color=color, edgecolor="black", linewidth=0.5,
               label=f"{s}: {f['fully_free']} fully free node(s), {f['pods_fit']} × {f['pod_size']}-GPU pod(s) fit")
        ax.bar(xs, free, width * 0.92, bottom=used, facecolor="white", edgecolor=color, hatch="//", linewidth=0.8)
        for x, u, v in zip(xs, used, free):
            if v:
                ax.text(x, u + v / 2, f"{v} free", ha="center", va="center", fontsize=7,
                        bbox=dict(boxstyle="round,pad=0.1", facecolor="white", edgecolor="none"))
    ax.set_xticks(range(len(nodes)), nodes)
    ax.set_ylabel("GPUs")
    ax.set_ylim(0, top * 1.45 + 0.5)
    t = next(iter(comparison.values()))[1]["time"]
    ax.set_title(f"GPU fragmentation at {ts(t)}: used (solid) and free (hatched) GPUs per node")
    ax.legend(loc="upper left", fontsize=7.5)
    return ax


# --- one attempt's scores ----------------------------------------------------------------------------

# a fixed colour per score plugin, so the same plugin looks the same in every figure
_SCORE_PLUGINS = ["TaintToleration", "NodeAffinity", "NodeResourcesFit", "NodeResourcesBalancedAllocation",
                  "PodTopologySpread", "InterPodAffinity"]

def _attempt(result, pod: str, attempt: int, namespace: str):
    attempts = attempts_for(result, pod, namespace)
    if not attempts:
        raise ValueError(f"pod {namespace}/{pod} has no scheduling attempts")
    a = attempts[attempt]
    return (attempt if attempt >= 0 else len(attempts) + attempt) + 1, a


def _draw_attempt(a, number: int, ax):
    scored = sorted(a.scores, key=lambda n: (-sum(v[2] for v in a.scores[n].values()), n))
    nodes = scored + sorted(n for n in a.feasible if n not in a.scores) + sorted(a.statuses)
    plugins = list(next(iter(a.scores.values())).keys()) if a.scores else []
    bottom = [0] * len(nodes)
    for p in plugins:
        vals = [a.scores[n][p][2] if n in a.scores else 0 for n in nodes]
        color = f"C{_SCORE_PLUGINS.index(p)}" if p in _SCORE_PLUGINS else f"C{6 + plugins.index(p) % 4}"
        ax.bar(range(len(nodes)), vals, 0.6, bottom=bottom, color=color, edgecolor="black", linewidth=0.4,
               label=f"{p}")
        for i, (b, v) in enumerate(zip(bottom, vals)):   # each plugin's weighted score, where it fits
            if v >= 25:
                ax.text(i, b + v / 2, str(v), ha="center", va="center", fontsize=7, color="white")
        bottom = [b + v for b, v in zip(bottom, vals)]
    top = max(bottom, default=0) or 100
    for i, n in enumerate(nodes):
        if n in a.statuses:
            plugin, _, reasons = a.statuses[n].partition(": ")
            ax.text(i, top * 0.04, f"filtered out\n{plugin}:\n{reasons}", ha="center", va="bottom", fontsize=7,
                    color="tab:red", wrap=True)
        elif n == a.node:
            ax.text(i, bottom[i] + top * 0.02, f"chosen ({bottom[i]})" if a.scores else "chosen", ha="center",
                    va="bottom", fontsize=8, fontweight="bold")
        elif n in a.scores:
            ax.text(i, bottom[i] + top * 0.02, str(bottom[i]), ha="center", va="bottom", fontsize=8)
    if not a.scores:
        note = ("one feasible node: chosen without scoring" if a.node else "no feasible node: " + a.message)
        ax.text(0.5, 0.93, note, transform=ax.transAxes, ha="center", va="top", fontsize=8, wrap=True)
    ax.set_xticks(range(len(nodes)), nodes)
    ax.set_xlim(-0.6, max(len(nodes), 2) - 0.4)
    ax.set_ylim(0, top * 1.35)
    ax.set_ylabel("weighted score")
    pod = a.pod.split("/", 1)[1]
    ax.set_title(f"Pod {pod}, attempt {number} at {ts(a.time)}: weighted score per plugin and node")
    if plugins:
        ax.legend(loc="upper right", fontsize=7.5)
    return ax


def score_bars(result, pod: str, attempt: int = -1, ax=None, namespace: str = "default"):
    """Stacked bars of one scheduling attempt: each score plugin's weighted score per feasible node;
    filtered-out nodes carry the plugin and reasons that rejected them."""
    number, a = _attempt(result, pod, attempt, namespace)
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 3.6))
    return _draw_attempt(a, number, ax)


def compare_score_bars(comparison: dict, pod: str, attempt: int = -1, namespace: str = "default"):
    """:func:`score_bars` of the same pod's attempt in each run of a comparison (``{label: (result, ...)}``),
    side by side, each panel titled with its label. Returns the Figure."""
    fig, axes = plt.subplots(1, len(comparison), figsize=(6 * len(comparison), 3.6), squeeze=False)
    for ax, (label, (result, *_)) in zip(axes[0], comparison.items()):
        number, a = _attempt(result, pod, attempt, namespace)
        _draw_attempt(a, number, ax)
        gpus = next(p for p in result.pods() if p.metadata.name == pod).spec.containers[0].resources.limits.get(
            NVIDIA_GPU, 0)
        ax.set_title(f"{label}: pod {pod} ({gpus} GPUs) at {ts(a.time)}")
    fig.tight_layout()
    return fig


def explain_runs(comparison: dict, pod: str, namespace: str = "default") -> str:
    """:func:`explain_pod` of one pod in each run of a comparison, each under ``== <label>``."""
    return "\n\n".join(f"== {label}\n{explain_pod(result, pod, namespace)}"
                        for label, (result, *_) in comparison.items())


def with_node_name_affinity(yaml_text: str, pod: str, nodes: Iterable[str]) -> str:
    """The scenario with ``pod`` restricted to ``nodes`` by required node affinity on the node's name: one
    ``matchFields: [{key: metadata.name, operator: In, values: [<node>]}]`` term per node (the terms are ORed;
    the apiserver allows one value per field requirement). NodeAffinity's PreFilter turns these into the set
    of nodes the scheduler filters."""
    docs = [d for d in yaml.safe_load_all(yaml_text) if d]
    target = next((d for d in docs if d.get("kind") == "Pod" and d["metadata"]["name"] == pod), None)
    if target is None:
        raise ValueError(f"no Pod {pod} in the scenario")
    terms = [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]}]} for n in nodes]
    target["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                                                   {"nodeSelectorTerms": terms}}}
    return _dump(docs)


def attempt_text(result, a) -> str:
    """The explain_pod text of one Attempt record (header and that attempt's block)."""
    ns, name = a.pod.split("/", 1)
    blocks = explain_pod(result, name, ns).split("\n\n")
    number = next(i for i, x in enumerate(attempts_for(result, name, ns), start=1) if x is a)
    return blocks[0] + "\n\n" + blocks[number]


def explain_widget(result, pod: Optional[str] = None, namespace: str = "default"):
    """A dropdown of scheduling attempts (of one pod, or of every pod in time order) showing the
    explain_pod text and the score bars of the chosen attempt."""
    import ipywidgets as w

    attempts = attempts_for(result, pod, namespace) if pod else list(result.scheduler.attempts)
    options = [(f"{ts(a.time)}  {a.pod.split('/', 1)[1]} #{a.number} → {a.node or 'unschedulable'}", i)
               for i, a in enumerate(attempts)]
    dd = w.Dropdown(options=options, value=len(options) - 1 if options else None, description="attempt",
                    layout=w.Layout(width="70%"))
    out = w.Output()

    def show(change=None):
        with out:
            out.clear_output(wait=True)
            if dd.value is None:
                print("no scheduling attempts")
                return
            a = attempts[dd.value]
            print(attempt_text(result, a))
            _, ax = plt.subplots(figsize=(9, 3.4))
            _draw_attempt(a, a.number, ax)
            plt.show()

    dd.observe(show, names="value")
    show()
    show_widget(w.VBox([dd, out]))


# --- Filter and Score on a three-node cluster ----------------------------------------------------------

def filter_score_scenario(gpu_request: int = 4, used_gpus: int = 6, strategy: str = DEFAULT,
                          gpu_weight: int = 5) -> str:
    """Nodes a100-0 and a100-1 (8 GPUs each) and cpu-0 (no GPU); pod ``occupant`` holds ``used_gpus`` GPUs
    on a100-0; at 5s pod ``demo`` asks for ``gpu_request`` GPUs (plus 4 CPUs, 16Gi). ``strategy`` sets
    NodeResourcesFit scoring with nvidia.com/gpu weight ``gpu_weight`` (``"default"``: cpu and memory only)."""
    if not 0 <= gpu_request <= 8 or not 0 <= used_gpus <= 8:
        raise ValueError("gpu_request and used_gpus must be between 0 and 8")
    docs: list[dict] = [
        {"apiVersion": "gpusim.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "filter-score"},
         "spec": {"seed": 0}},
        {"apiVersion": "gpusim.io/v1alpha1", "kind": "NodePool", "metadata": {"name": "a100"},
         "spec": {"count": 2, "gpu": {"model": "A100-SXM4-80GB", "count": 8}}},
        {"apiVersion": "gpusim.io/v1alpha1", "kind": "NodePool", "metadata": {"name": "cpu"}, "spec": {"count": 1}}]
    if used_gpus:
        docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "occupant"},
                     "spec": {"nodeSelector": {"kubernetes.io/hostname": "a100-0"},
                              "containers": [{"name": "worker", "image": "nvcr.io/nvidia/pytorch:24.08-py3",
                                              "resources": {"limits": {NVIDIA_GPU: used_gpus}}}]}})
    limits: dict[str, Any] = {"cpu": "4", "memory": "16Gi"}
    if gpu_request:
        limits[NVIDIA_GPU] = gpu_request
    docs.append({"apiVersion": "v1", "kind": "Pod",
                 "metadata": {"name": "demo", "annotations": {"gpusim.io/submit-at": "5s"}},
                 "spec": {"containers": [{"name": "worker", "image": "nvcr.io/nvidia/pytorch:24.08-py3",
                                          "resources": {"limits": limits}}]}})
    return with_scoring_strategy(_dump(docs), strategy, gpu_weight)
