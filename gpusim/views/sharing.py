"""GPU sharing side by side: an isolation table, MIG slice maps, GPU-memory stacks, the same inference
workload under time-slicing / MPS / whole GPUs, and a small compute model of throughput vs tenants.

Mirrors no single upstream package; the facts come from NVIDIA/k8s-device-plugin (sharing config, MPS
control daemon), the MIG User Guide (via :mod:`gpusim.hardware.mig`), NVIDIA vGPU and HAMi docs (node-side
reference §4.3–4.8, §5, §9). A picture: time-slicing is one meeting room booked in turns (everyone
shares the whiteboard, i.e. memory); MPS is one room with a taped-off area of whiteboard per person; MIG
is a room split by real walls.

Views read finished runs (``memory_timeline``, trace records with function ``cuda.cudaMalloc``);
``sharing_scenario`` / ``with_sharing_mode`` only write YAML. Running them (``compare_sharing``,
``sharing_widget``) is in gpusim.experiments.sharing.
"""
from __future__ import annotations

import textwrap
from fractions import Fraction
from typing import Any, Iterable, Optional, Sequence, Union

import matplotlib.pyplot as plt
import yaml

from ..hardware import mig
from ..hardware.catalog import CATALOG, GPUModel, gpu_model

MODES = ("time-slicing", "mps", "whole")
_CONFIG_KEYS = {"whole": "whole", "time-slicing": "time-sliced", "mps": "mps"}
CONFIG_MAP = "gpusim-sharing"
PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"
OOM_FUNCTION = "cuda.cudaMalloc"
_COLORS = {"time-slicing": "#d62728", "mps": "#1f77b4", "mig": "#2ca02c", "whole": "#7f7f7f"}


# --- facts -----------------------------------------------------------------------------------------------

def mps_max_clients(model: Union[str, GPUModel]) -> int:
    """MPS clients per GPU (cmd/mps-control-daemon ``maxClients``): 48 from compute capability 7.5, else 16.
    The same rule gpusim's scenario validation applies to ``sharing.mps.resources[].replicas``."""
    m = model if isinstance(model, GPUModel) else gpu_model(model)
    return 48 if m.compute >= (7, 5) else 16


def mig_max_instances(model: Union[str, GPUModel]) -> int:
    """Most MIG instances one GPU can hold: the largest max count among its 1g profiles (7 on A100/H100/H200,
    4 on A30)."""
    return max(p.max_count for p in mig.profiles(model) if p.compute_slices == 1)


# vGPU: the operator's default-vgpu-devices-config (FB / smallest C-series type), node-side reference §9.1;
# HAMi: its helm values (deviceSplitCount), §9.2. Keyed by catalog model.
def _vgpu_max_per_gpu() -> dict[str, int]:
    """Most time-sliced C-series vGPUs per GPU model (the smallest framebuffer type), from gpusim.hardware.vgpu."""
    from ..hardware import vgpu
    out: dict[str, int] = {}
    for _, (model, types) in vgpu.TIME_SLICED.items():
        out[model] = max(out.get(model, 0), max(types.values()))
    return out


VGPU_MAX_PER_GPU = _vgpu_max_per_gpu()
from ..api.hami import DEFAULT_SPLIT_COUNT as HAMI_DEVICE_SPLIT_COUNT   # noqa: E402  helm deviceSplitCount
from .display import show_widget


def isolation_table() -> list[dict[str, Any]]:
    """One row per sharing mechanism (none, time-slicing, MPS, MIG, vGPU C-series, HAMi).

    Keys: ``mechanism``, ``memory_isolation``, ``fault_isolation``, ``compute_qos``, ``max_tenants`` (catalog
    model → tenants per GPU; None = no upper bound), ``gpus`` (catalog models that support it),
    ``k8s_resource``, ``reconfiguration``, ``in_gpusim``. Tenant limits and GPU lists are computed from the
    catalog and gpusim's rules: the MPS cap, the MIG profiles, the vGPU types of gpusim.hardware.vgpu and
    HAMi's default deviceSplitCount (gpusim.api.hami).
    """
    models = list(CATALOG.values())
    every = [m.name for m in models]
    migs = [m.name for m in models if m.mig_capable]
    return [
        {"mechanism": "none (whole GPU)", "memory_isolation": "whole GPU per pod", "fault_isolation": "per GPU",
         "compute_qos": "whole GPU", "max_tenants": {n: 1 for n in every}, "gpus": every,
         "k8s_resource": "`nvidia.com/gpu`", "reconfiguration": "none", "in_gpusim": "yes"},
        {"mechanism": "time-slicing", "memory_isolation": "none: every tenant sees all memory",
         "fault_isolation": "none: one OOM/crash can take down all sharers",
         "compute_qos": "none: equal time slices per process", "max_tenants": {n: None for n in every},
         "gpus": every, "k8s_resource": "`nvidia.com/gpu` or `nvidia.com/gpu.shared`",
         "reconfiguration": "ConfigMap + node label; device plugin restarts, no GPU reset", "in_gpusim": "yes"},
        {"mechanism": "MPS", "memory_isolation": "pinned limit = memory / replicas per client",
         "fault_isolation": "none within a GPU: a fatal fault reaches every client",
         "compute_qos": "active thread % = 100 // replicas (a cap, not a guarantee)",
         "max_tenants": {m.name: mps_max_clients(m) for m in models}, "gpus": every,
         "k8s_resource": "`nvidia.com/gpu` or `nvidia.com/gpu.shared`",
         "reconfiguration": "ConfigMap + node label; MPS daemon restarts (full GPUs only, not on MIG)",
         "in_gpusim": "yes"},
        {"mechanism": "MIG", "memory_isolation": "hardware: own memory slices",
         "fault_isolation": "per instance", "compute_qos": "dedicated SMs (PCIe and power shared)",
         "max_tenants": {n: mig_max_instances(n) for n in migs}, "gpus": migs,
         "k8s_resource": "`nvidia.com/gpu` (single) or `nvidia.com/mig-<profile>` (mixed)",
         "reconfiguration": "mig-manager: evict GPU clients, GPU reset (maybe reboot)",
         "in_gpusim": "geometry, resources, labels, mig-manager"},
        {"mechanism": "vGPU (C-series)", "memory_isolation": "fixed framebuffer per VM",
         "fault_isolation": "per VM", "compute_qos": "Best Effort / Equal Share / Fixed Share scheduler",
         "max_tenants": {n: VGPU_MAX_PER_GPU[n] for n in every if n in VGPU_MAX_PER_GPU},
         "gpus": [n for n in every if n in VGPU_MAX_PER_GPU],
         "k8s_resource": "`nvidia.com/gpu` inside a VM node (vGPU guest driver)",
         "reconfiguration": "change vGPU type: VM restart; policy: vGPU Manager restart",
         "in_gpusim": "time-sliced types: framebuffer cap (NodePool spec.gpu.vgpu)"},
        {"mechanism": "HAMi", "memory_isolation": "software limit (libvgpu.so intercepts CUDA)",
         "fault_isolation": "none (shared GPU context model)", "compute_qos": "gpucores % throttling (approximate)",
         "max_tenants": {n: HAMI_DEVICE_SPLIT_COUNT for n in every}, "gpus": every,
         "k8s_resource": "`nvidia.com/gpu` + `nvidia.com/gpumem` + `nvidia.com/gpucores`",
         "reconfiguration": "per pod (requested at creation)",
         "in_gpusim": "device plugin, scheduler fit, per-container memory cap"},
    ]


def _tenants_text(max_tenants: dict[str, Optional[int]]) -> str:
    groups: dict[Optional[int], list[str]] = {}
    for name, n in max_tenants.items():
        groups.setdefault(n, []).append(name)
    if len(groups) == 1:
        (n, _), = groups.items()
        return "replicas (≥ 2, no upper bound)" if n is None else str(n)
    return ", ".join(f"{n} ({', '.join(names)})" for n, names in sorted(groups.items(), key=lambda kv: -(kv[0] or 0)))


def _gpus_text(gpus: list[str]) -> str:
    return "all catalog GPUs" if set(gpus) == set(CATALOG) else ", ".join(gpus)


def format_isolation_table(rows: Optional[list[dict[str, Any]]] = None) -> str:
    """The isolation table as markdown (``IPython.display.Markdown`` renders it)."""
    rows = isolation_table() if rows is None else rows
    head = ["mechanism", "memory isolation", "fault isolation", "compute QoS", "max tenants / GPU",
            "GPUs (catalog)", "K8s resource", "reconfiguration", "in gpusim"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["mechanism"], r["memory_isolation"], r["fault_isolation"], r["compute_qos"],
                 _tenants_text(r["max_tenants"]), _gpus_text(r["gpus"]), r["k8s_resource"],
                 r["reconfiguration"], r["in_gpusim"]]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def mig_profile_table(model: Union[str, GPUModel]) -> str:
    """The model's GPU-instance profiles (``nvidia-smi mig -lgip`` / ``-lgipp``) as markdown."""
    lines = ["| profile | ID | compute slices | memory slices | memory (GiB) | SMs | max count | placements |",
             "|---|---|---|---|---|---|---|---|"]
    for p in mig.profiles(model):
        lines.append(f"| `{p.name}` | {p.id} | {p.compute_slices} | {p.memory_slices} | {p.memory_gib:g} | "
                     f"{p.sms} | {p.max_count} | `{p.placement_spec}` |")
    return "\n".join(lines)


# --- MIG slice map ---------------------------------------------------------------------------------------

def mig_slice_map(model: Union[str, GPUModel], profiles: Sequence[str], ax=None):
    """Memory slices 0..7 (A30: 0..3) of one GPU with each instance :func:`gpusim.hardware.mig.place` puts
    there as a labelled bar. An impossible request draws the empty GPU with the MigPlacementError message
    as the title. Returns the axes."""
    m = model if isinstance(model, GPUModel) else gpu_model(model)
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 1.9))
    geo = mig.geometry(m)
    total = geo.memory_slices
    request = " + ".join(profiles) or "(no instances)"
    try:
        layout, error = mig.place(m, list(profiles)), None
    except mig.MigPlacementError as e:
        layout, error = None, str(e)
    used = {s for g in (layout.instances if layout is not None else ()) for s in g.memory_range}
    for s in range(total):
        if s not in used:
            ax.barh(0, 1, left=s, height=0.6, color="#eeeeee", edgecolor="#999999", hatch="//")
    cmap = plt.get_cmap("tab10")
    if layout is not None:
        for i, g in enumerate(layout.instances):
            ax.barh(0, g.profile.size, left=g.start, height=0.6, color=cmap(i % 10), edgecolor="black")
            ax.text(g.start + g.profile.size / 2, 0, f"{g.profile.name}\n{g.profile.sms} SMs", ha="center",
                    va="center", fontsize=9, color="white", fontweight="bold")
        ax.set_title(f"{m.name}: {request} — valid ({layout.compute_slices_used}/{geo.compute_slices} "
                     f"compute slices)", fontsize=10)
    else:
        ax.set_title("\n".join(textwrap.wrap(f"{m.name}: {request} — INVALID: {error}", 110)), fontsize=9,
                     color="#b00000")
    ax.set_xlim(0, total)
    ax.set_ylim(-0.5, 0.5)
    ax.set_xticks([s + 0.5 for s in range(total)], [str(s) for s in range(total)])
    ax.set_yticks([])
    ax.set_xlabel("memory slice")
    ax.grid(False)
    return ax


# --- the inference workload under each mode -------------------------------------------------------------

def _sharing_config(kind: str, replicas: int) -> str:
    return (f"version: v1\nsharing:\n  {kind}:\n    resources:\n    - name: nvidia.com/gpu\n"
            f"      replicas: {replicas}\n")


def _operator_docs(replicas: int) -> list[dict]:
    """ClusterPolicy (default: whole GPUs) and the device-plugin ConfigMap with one key per mode."""
    return [
        {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "metadata": {"name": "cluster-policy"},
         "spec": {"devicePlugin": {"config": {"name": CONFIG_MAP, "default": _CONFIG_KEYS["whole"]}}}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": CONFIG_MAP, "namespace": "gpu-operator"},
         "data": {_CONFIG_KEYS["whole"]: "version: v1\n",
                  _CONFIG_KEYS["time-slicing"]: _sharing_config("timeSlicing", replicas),
                  _CONFIG_KEYS["mps"]: _sharing_config("mps", replicas)}},
    ]


def _check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f'unknown sharing mode "{mode}"; supported: {", ".join(MODES)}')
    return mode


def with_sharing_mode(yaml_text: str, mode: str, replicas: int = 4) -> str:
    """The scenario with its ClusterPolicy / device-plugin ConfigMaps replaced by gpusim-sharing's, and every
    GPU NodePool labelled ``nvidia.com/device-plugin.config=<mode key>``."""
    _check_mode(mode)
    docs = [d for d in yaml.safe_load_all(yaml_text) if d]
    policy = next((d for d in docs if d.get("kind") == "ClusterPolicy"), None)
    old_cm = (((policy or {}).get("spec") or {}).get("devicePlugin") or {}).get("config", {}).get("name")
    keep = [d for d in docs if d.get("kind") != "ClusterPolicy"
            and not (d.get("kind") == "ConfigMap" and d.get("metadata", {}).get("name") in (old_cm, CONFIG_MAP))]
    for d in keep:
        if d.get("kind") == "NodePool" and (d.get("spec") or {}).get("gpu"):
            d["spec"].setdefault("labels", {})[PLUGIN_CONFIG_LABEL] = _CONFIG_KEYS[mode]
    return yaml.safe_dump_all(keep[:1] + _operator_docs(replicas) + keep[1:], sort_keys=False)


def sharing_scenario(mode: str = "time-slicing", tenants: int = 4, model: str = "A100-SXM4-80GB",
                     memory: str = "15Gi", growth: str = "40Gi/10m", until: str = "20m") -> str:
    """``tenants`` inference servers on one GPU (like examples/inference-oom.yaml): each holds ``memory``;
    the last one's KV cache grows ``growth``. ``mode``: ``time-slicing`` or ``mps`` with ``replicas =
    tenants`` (at least 2), or ``whole`` (no sharing: one pod per GPU). restartPolicy Always."""
    _check_mode(mode)
    if tenants < 1:
        raise ValueError("tenants must be at least 1")
    docs: list[dict] = [
        {"apiVersion": "gpusim.io/v1alpha1", "kind": "Simulation", "metadata": {"name": f"sharing-{mode}"},
         "spec": {"seed": 7, "until": until}},
        {"apiVersion": "gpusim.io/v1alpha1", "kind": "NodePool", "metadata": {"name": "a100"},
         "spec": {"count": 1, "gpu": {"model": model, "count": 1}, "cpu": "64", "memory": "512Gi"}}]
    for i in range(tenants):
        ann = {"gpusim.io/gpu-memory": memory}
        if i == tenants - 1 and growth:
            ann["gpusim.io/gpu-memory-growth"] = growth
        docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"llm-{i}", "annotations": ann},
                     "spec": {"restartPolicy": "Always", "containers": [
                         {"name": "vllm", "image": "vllm/vllm-openai:v0.6.3",
                          "resources": {"limits": {"nvidia.com/gpu": 1}}}]}})
    return with_sharing_mode(yaml.safe_dump_all(docs, sort_keys=False), mode, max(2, tenants))


def time_slicing_scenario(gpus: int = 8, replicas: int = 4, rename_by_default: bool = False,
                          model: str = "A100-SXM4-80GB") -> str:
    """One GPU node whose device plugin is configured for time-slicing as the GPU Operator does it (ClusterPolicy
    ``devicePlugin.config`` → ConfigMap key picked by the node label ``nvidia.com/device-plugin.config``)."""
    config = (f"version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: {str(rename_by_default).lower()}\n"
              f"    resources:\n    - name: nvidia.com/gpu\n      replicas: {replicas}\n")
    docs = [
        {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "metadata": {"name": "cluster-policy"},
         "spec": {"devicePlugin": {"config": {"name": "time-slicing-config", "default": "any"}}}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "time-slicing-config",
                                                               "namespace": "gpu-operator"},
         "data": {"any": config}},
        {"apiVersion": "gpusim.io/v1alpha1", "kind": "NodePool", "metadata": {"name": "a100"},
         "spec": {"count": 1, "gpu": {"model": model, "count": gpus}}}]
    return yaml.safe_dump_all(docs, sort_keys=False)


def vgpu_scenario(vgpu_type: str = "A100D-10C", model: str = "A100-SXM4-80GB") -> str:
    """Two Kubernetes nodes that are VMs with one NVIDIA vGPU each (NodePool ``gpu.vgpu``), and two training pods
    (restartPolicy Never, 5 minutes): ``fits`` holds 9Gi, ``grows`` grows from 8Gi to 12Gi over 4 minutes."""
    def pod(name: str, memory: str, growth: str = "") -> dict:
        ann = {"gpusim.io/duration": "5m", "gpusim.io/gpu-memory": memory}
        if growth:
            ann["gpusim.io/gpu-memory-growth"] = growth
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "annotations": ann},
                "spec": {"restartPolicy": "Never", "containers": [
                    {"name": "train", "image": "nvcr.io/nvidia/pytorch:24.08-py3",
                     "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}
    docs = [{"apiVersion": "gpusim.io/v1alpha1", "kind": "NodePool", "metadata": {"name": "vm"},
             "spec": {"count": 2, "gpu": {"model": model, "count": 1, "vgpu": {"type": vgpu_type}}}},
            pod("fits", "9Gi"), pod("grows", "8Gi", "12Gi/4m")]
    return yaml.safe_dump_all(docs, sort_keys=False)


HAMI_SCHEDULER = "hami-scheduler"


def hami_scenario(extra_gpumem: Optional[int] = None, model: str = "A100-SXM4-40GB") -> str:
    """One node labelled ``gpu=on`` (HAMi's device plugin) with one GPU, a ``hami-scheduler`` profile running the
    HAMi plugin, and three pods that each ask for ``nvidia.com/gpumem: 10000`` (MiB) and ``gpucores: 30`` of the
    same GPU: ``svc-0`` and ``svc-1`` hold 8Gi, ``greedy`` grows from 8Gi to 12Gi over 10 minutes. With
    ``extra_gpumem``, a fourth pod ``late`` asks for that much memory at 60s."""
    def pod(name: str, gpumem: int, growth: str = "", at: str = "0s") -> dict:
        ann = {"gpusim.io/submit-at": at, "gpusim.io/duration": "30m", "gpusim.io/gpu-memory": "8Gi"}
        if growth:
            ann["gpusim.io/gpu-memory-growth"] = growth
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "annotations": ann},
                "spec": {"schedulerName": HAMI_SCHEDULER, "restartPolicy": "Never", "containers": [
                    {"name": "infer", "image": "vllm/vllm-openai:v0.6.3", "resources": {"limits": {
                        "nvidia.com/gpu": 1, "nvidia.com/gpumem": gpumem, "nvidia.com/gpucores": 30}}}]}}
    docs = [{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [
                {"schedulerName": HAMI_SCHEDULER, "plugins": {"multiPoint": {"enabled": [{"name": "HAMi"}]}},
                 "pluginConfig": [{"name": "NodeResourcesFit", "args": {"ignoredResources": [
                     "nvidia.com/gpumem", "nvidia.com/gpumem-percentage", "nvidia.com/gpucores"]}}]}]},
            {"apiVersion": "gpusim.io/v1alpha1", "kind": "NodePool", "metadata": {"name": "hami"},
             "spec": {"count": 1, "labels": {"gpu": "on"}, "gpu": {"model": model, "count": 1}}},
            pod("svc-0", 10000), pod("svc-1", 10000), pod("greedy", 10000, "12Gi/10m")]
    if extra_gpumem is not None:
        docs.append(pod("late", extra_gpumem, at="60s"))
    return yaml.safe_dump_all(docs, sort_keys=False)


def hami_allocations(result) -> str:
    """Per pod: the GPU, memory (MiB) and cores (%) HAMi's scheduler wrote in ``hami.io/vgpu-devices-allocated``,
    and the pod's phase."""
    from ..api.hami import ANN_ALLOCATED, decode_pod_devices
    from .kubectl import _table
    rows = [["POD", "GPU", "GPUMEM (MiB)", "GPUCORES (%)", "PHASE"]]
    for pod in sorted(result.pods(), key=lambda p: p.metadata.name):
        devices = [d for c in decode_pod_devices(pod.metadata.annotations.get(ANN_ALLOCATED, "")) for d in c]
        for uuid, mem, cores in devices or [("-", "-", "-")]:
            rows.append([pod.metadata.name, str(uuid), str(mem), str(cores), pod.status.phase or "Pending"])
    return _table(rows)


def gpu_labels(result, node: Optional[str] = None, keys: Optional[Iterable[str]] = None) -> str:
    """``key=value`` lines of a node's ``nvidia.com/`` labels (GFD's, the device-plugin config), or of ``keys``."""
    n = next(x for x in result.nodes() if node is None or x.metadata.name == node)
    labels = n.metadata.labels
    wanted = list(keys) if keys is not None else sorted(k for k in labels if k.startswith("nvidia.com/"))
    return "\n".join(f"{k}={labels[k]}" for k in wanted if k in labels)


def mps_max_clients_table(models: Iterable[str] = ("A100-SXM4-80GB", "T4", "V100-SXM2-32GB")) -> str:
    """One line per GPU model: its compute capability and :func:`mps_max_clients`."""
    return "\n".join(f"{m:16} compute {gpu_model(m).compute[0]}.{gpu_model(m).compute[1]}  MPS max clients: "
                      f"{mps_max_clients(m)}" for m in models)


def plot_mig_layouts(model: Union[str, GPUModel], requests: Sequence[Sequence[str]]):
    """:func:`mig_slice_map` of each request (a list of profiles), one row each. Returns the Figure."""
    fig, axes = plt.subplots(len(requests), 1, figsize=(9, 1.9 * len(requests)), squeeze=False)
    for ax, req in zip(axes[:, 0], requests):
        mig_slice_map(model, list(req), ax=ax)
    fig.tight_layout()
    return fig


def mig_placement_error(model: Union[str, GPUModel], profiles) -> Optional[mig.MigPlacementError]:
    """The ``MigPlacementError`` :func:`gpusim.hardware.mig.place` raises for these profiles, or None if they fit."""
    try:
        mig.place(model, profiles)
    except mig.MigPlacementError as e:
        return e
    return None


def mig_placement_report(model: Union[str, GPUModel], requests: Sequence) -> str:
    """One line per request (a list of profiles or ``{profile: count}``): the layout :func:`mig.place` finds,
    drawn as ``[slices profile]``, or the ``MigPlacementError`` saying why it does not fit."""
    lines = []
    for req in requests:
        err = mig_placement_error(model, req)
        lines.append(f"MigPlacementError: {err}" if err else mig.place(model, req).diagram())
    return "\n".join(lines)


def mig_strategy_report(model: str = "A100-SXM4-80GB", mixed: Sequence[str] = ("4g.40gb", "3g.40gb"),
                        single: str = "1g.10gb") -> str:
    """What a one-GPU node advertises under each MIG strategy (``mig.resource_names``) for a two-profile layout
    (``mixed``) and a one-profile layout (``single`` × its max count), what ``single`` says about two
    profiles, and the GFD labels of each case (``mig.gfd_labels``)."""
    two = mig.place(model, list(mixed))
    one = mig.place(model, {single: mig.profile(model, single).max_count})
    lines = [f"{strategy:6} {mig.resource_names(strategy, model, [gpus])}"
             for strategy, gpus in (("none", two), ("single", one), ("mixed", two))]
    try:
        mig.resource_names("single", model, [two])
    except mig.MigStrategyError as e:
        lines.append(f"single with {' + '.join(mixed)}: {e}")
    lines.append("")
    lines += [f"{k}={v}" for k, v in mig.gfd_labels("single", model, [one]).items()
              if k.startswith("nvidia.com/gpu.") and k.split(".", 2)[2] in ("product", "count", "memory",
                                                                              "multiprocessors")]
    lines += [f"{k}={v}" for k, v in mig.gfd_labels("mixed", model, [two]).items()
              if k.startswith("nvidia.com/mig-") and k.endswith((".count", ".memory"))]
    return "\n".join(lines)


def oom_records(result, node: Optional[str] = None, gpu_index: Optional[int] = None) -> list:
    """Trace records of CUDA out-of-memory failures (function ``cuda.cudaMalloc``)."""
    recs = [x for x in result.trace.records if x.function == OOM_FUNCTION]
    if node is not None:
        prefix = f"gpu/{node}/" if gpu_index is None else f"gpu/{node}/{gpu_index}"
        recs = [x for x in recs if x.component == prefix or (gpu_index is None and x.component.startswith(prefix))]
    return recs


def sharing_summary(comparison: dict) -> list[dict[str, Any]]:
    """Rows ``mode, oom_events, oom_instants, pods_failed (pods with at least one OOM), restarts (sum of
    restart counts), running, pending, first_oom`` at the end of each run."""
    rows = []
    for mode, r in comparison.items():
        recs = oom_records(r)
        pods = r.pods()
        restarts = sum(cs.restart_count for p in pods for cs in p.status.container_statuses)
        rows.append({"mode": mode, "oom_events": len(recs), "oom_instants": len({x.time for x in recs}),
                     "pods_failed": len({x.object for x in recs}), "restarts": restarts,
                     "running": sum(p.status.phase == "Running" for p in pods),
                     "pending": sum(p.status.phase in ("", "Pending") for p in pods),
                     "first_oom": min((x.time for x in recs), default=None)})
    return rows


def sharing_summary_by_mode(comparison: dict) -> dict[str, dict[str, Any]]:
    """:func:`sharing_summary` keyed by mode."""
    return {row["mode"]: row for row in sharing_summary(comparison)}


def oom_instants(result, node: Optional[str] = None, gpu_index: Optional[int] = None) -> list[tuple[float, list[str]]]:
    """``[(time, [pod, ...])]``: the instants of CUDA out-of-memory failures and the pods that failed at each."""
    out: dict[float, list[str]] = {}
    for r in oom_records(result, node, gpu_index):
        out.setdefault(r.time, []).append(r.object.split("/", 1)[-1])
    return sorted((t, sorted(pods)) for t, pods in out.items())


def format_sharing_summary(rows: list[dict[str, Any]]) -> str:
    cols = ["mode", "oom_events", "oom_instants", "pods_failed", "restarts", "running", "pending", "first_oom"]
    table = [cols] + [[("-" if r[c] is None else (f"{r[c]:.3f}s" if c == "first_oom" else str(r[c]))) for c in cols]
                      for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(cols))]
    return "\n".join("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in table)


def memory_timeline(result, node: str, gpu_index: int) -> list[tuple[float, dict[str, float]]]:
    """Samples [(t, {pod: MiB})] of one GPU at every change point (starts, ends of growth, exits).
    Between samples usage is linear. At an exit two samples share the time: just before, then after.
    A pod with several containers on the GPU is summed."""
    mem = result.gpu_memory(node)
    if mem is None:
        return []
    gpu = next((g for g in mem.gpus.values() if g.index == gpu_index), None)
    if gpu is None:
        return []
    end = Fraction(result.end)
    points: set[Fraction] = set()
    for u in gpu.history:
        stop = Fraction(u.end) if u.end is not None else end
        points.update(p for p in (u.start, u.ramp_end, stop) if u.start <= p <= stop)
    out: list[tuple[float, dict[str, float]]] = []

    def sample(t: Fraction, include_ending: bool) -> dict[str, float]:
        vals: dict[str, Fraction] = {}
        for u in gpu.history:
            stop = Fraction(u.end) if u.end is not None else None
            if u.start > t or (stop is not None and (stop < t or (stop == t and not include_ending))):
                continue
            vals[u.pod] = vals.get(u.pod, Fraction(0)) + u.at(t)
        return {k: float(v) for k, v in sorted(vals.items())}

    for t in sorted(points):
        before, after = sample(t, True), sample(t, False)
        if before != after:
            out.append((float(t), before))
        out.append((float(t), after))
    return out


def _steps(tl: list[tuple[float, dict[str, float]]]) -> list[tuple[float, dict[str, float]]]:
    """Usage is linear between samples only for pods present in both; a pod that starts at a sample
    appears there as a jump (insert the sample without it first), not as a ramp from the one before."""
    out: list[tuple[float, dict[str, float]]] = []
    for t, v in tl:
        if out and set(v) - set(out[-1][1]):
            prev = out[-1][1]
            out.append((t, {p: x for p, x in v.items() if p in prev}))
        out.append((t, v))
    return out


def plot_gpu_memory(result, node: Optional[str] = None, gpus: Optional[list[int]] = None):
    """Device memory over time on ``node`` (default: the first node with GPU memory), one panel per GPU index
    in ``gpus`` (default: every GPU that held memory). Where the GPU is one pool of memory (whole GPUs,
    time-slicing) the pods are stacked, the top being what the GPU holds; under MPS, where every client has
    its own pinned limit, one line per pod with that limit dashed (a stack would suggest the clients share
    it). The GPU's memory is a solid line, each ``CUDA error: out of memory`` a red ×. Returns the Figure.
    Lab 01 (gpusim.labs.plot_gpu_memory) and chapter 02.2 draw with it."""
    if node is None:
        node = next((n for n in sorted(result.kubelets) if result.gpu_memory(n) is not None), None)
        if node is None:
            raise ValueError("no node with GPU memory in this run")
    mem = result.gpu_memory(node)
    by_index = {g.index: g for g in mem.gpus.values()}
    if gpus is None:
        gpus = sorted(i for i, g in by_index.items() if g.history) or sorted(by_index)[:1]
    fig, axes = plt.subplots(1, len(gpus), sharey=True, squeeze=False,
                             figsize=(9 if len(gpus) == 1 else min(4 * len(gpus), 14), 3.5))
    pods = sorted({u.pod for i in gpus for u in by_index[i].history})
    colors = {p: plt.cm.tab10(k % 10) for k, p in enumerate(pods)}
    for ax, idx in zip(axes[0], gpus):
        tl = _steps(memory_timeline(result, node, idx))
        xs = [t for t, _ in tl] or [0.0, result.end]
        if mem.strategy == "mps":   # limits are per process: one line per pod (gaps while it is down);
            # clients holding the same amount would hide one another: earlier pods are drawn wider, so
            # coinciding lines show as nested stripes
            for k, p in enumerate(pods):
                ax.plot(xs, [v.get(p, float("nan")) for _, v in tl] or [float("nan")] * 2, color=colors[p],
                        lw=2 + 2.5 * (len(pods) - 1 - k), label=p, solid_capstyle="butt")
        elif pods:                  # one pool of memory: stack the pods, the top is what the GPU holds
            ys = [[v.get(p, 0.0) for _, v in tl] or [0.0, 0.0] for p in pods]
            ax.stackplot(xs, ys, labels=pods, colors=[colors[p] for p in pods], alpha=0.8)
        ax.axhline(mem.total_mib, color="black", lw=1.2, label=f"GPU memory {mem.total_mib} MiB")
        if mem.strategy == "mps":
            ax.axhline(mem.client_limit_mib, color="black", lw=1, ls="--",
                       label=f"MPS limit per client {mem.client_limit_mib} MiB")
        component = f"gpu/{node}/{idx}"
        ooms = [r for r in result.trace.records if r.function == OOM_FUNCTION and r.component == component]
        if ooms:
            # time-slicing: the GPU as a whole ran out; otherwise the one process hit its own limit
            ys_oom = [mem.total_mib if mem.strategy == "time-slicing" else float(r.details.get("process_mib", 0))
                      for r in ooms]
            ax.scatter([r.time for r in ooms], ys_oom,
                       marker="x", color="red", s=40, zorder=5, label="CUDA OOM")
        ax.set_title(f"{node} GPU {idx} ({mem.strategy})")
        ax.set_xlabel("time (s)")
        ax.set_xlim(0, result.end)
    axes[0][0].set_ylabel("device memory (MiB)")
    axes[0][0].set_ylim(0, mem.total_mib * 1.12)
    handles, labels = [], []
    for ax in axes[0]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8)
    fig.tight_layout()
    return fig


# --- throughput vs tenants: an illustrative model ------------------------------------------------------

# Illustrative assumptions of this teaching model, NOT NVIDIA figures: each extra time-sliced tenant costs
# CONTEXT_SWITCH_OVERHEAD of the GPU in context switches; a tenant alone keeps DEMAND of the GPU's SMs busy
# (1.0 = compute-bound; small inference batches use much less); the node's MPS replicas are fixed.
CONTEXT_SWITCH_OVERHEAD = 0.05
DEMAND = 1.0
MPS_REPLICAS = 8                  # the device-plugin replicas a node is configured with (fixed per node)
MIG_PROFILE = ("A100-SXM4-80GB", "1g.10gb")   # one 1g instance per tenant


def throughput_vs_tenants(modes: Iterable[str] = ("time-slicing", "mps", "mig"), tenants: Iterable[int] = range(1, 9),
                          overhead: float = CONTEXT_SWITCH_OVERHEAD, demand: float = DEMAND,
                          mps_replicas: int = MPS_REPLICAS, mig_profile: tuple[str, str] = MIG_PROFILE,
                          ) -> dict[str, list[tuple[int, Optional[float], Optional[float]]]]:
    """``{mode: [(n, per-tenant, aggregate)]}``: the share of one GPU's compute (SM-time) each of n identical
    tenants gets, and their sum. A tenant alone uses ``demand`` of the GPU.

    - ``time-slicing``: one tenant at a time; the time left after context switches, ``1 − overhead·(n−1)``,
      is split equally, and in its slice a tenant uses ``demand`` of the SMs:
      per-tenant ``demand · (1 − overhead·(n−1)) / n``.
    - ``mps``: tenants run concurrently, each capped by ``CUDA_MPS_ACTIVE_THREAD_PERCENTAGE = 100 //
      mps_replicas`` (the device plugin's default): per-tenant ``min(demand, cap)``, the sum limited to 1.0.
      More tenants than replicas cannot be scheduled (None).
    - ``mig``: each tenant has its own instance: ``min(demand, instance SMs / GPU SMs)`` (1g.10gb on A100:
      14/108). More tenants than the profile's max count do not fit (None).
    - ``whole``: one tenant per GPU (only n = 1).
    """
    out: dict[str, list] = {}
    for mode in modes:
        rows = []
        for n in tenants:
            per: Optional[float]
            if mode == "time-slicing":
                per = demand * max(0.0, 1.0 - overhead * (n - 1)) / n
            elif mode == "mps":
                per = None if n > mps_replicas else min(demand, (100 // mps_replicas) / 100, 1.0 / n)
            elif mode == "mig":
                p = mig.profile(mig_profile[0], mig_profile[1])
                per = None if n > p.max_count else min(demand, p.sms / gpu_model(mig_profile[0]).sms)
            elif mode == "whole":
                per = demand if n == 1 else None
            else:
                raise ValueError(f'unknown mode "{mode}"; supported: time-slicing, mps, mig, whole')
            rows.append((n, per, None if per is None else n * per))
        out[mode] = rows
    return out


def plot_throughput(model: Optional[dict] = None, axes=None, title: str = "", **kwargs: Any):
    """Per-tenant and aggregate compute share vs number of tenants (``throughput_vs_tenants``)."""
    model = throughput_vs_tenants(**kwargs) if model is None else model
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(10, 3.4))
    for mode, rows in model.items():
        pts = [(n, per, agg) for n, per, agg in rows if per is not None]
        if not pts:
            continue
        ns = [p[0] for p in pts]
        axes[0].plot(ns, [p[1] for p in pts], "o-", color=_COLORS.get(mode), label=mode)
        axes[1].plot(ns, [p[2] for p in pts], "o-", color=_COLORS.get(mode), label=mode)
    axes[0].set_title("Per-tenant share of GPU compute")
    axes[1].set_title("Aggregate GPU compute used")
    for ax in axes:
        ax.set_xlabel("tenants per GPU")
        ax.set_ylim(0, 1.05)
        ax.legend(fontsize=8)
    if title:
        axes[0].figure.suptitle(title, fontsize=10)
    axes[0].set_ylabel("fraction of one GPU")
    return axes


# --- widgets -------------------------------------------------------------------------------------------

def plot_throughput_by_demand(demands: Sequence[float] = (1.0, 0.25), **kwargs: Any):
    """:func:`plot_throughput` once per tenant demand, one row each (per-tenant left, aggregate right)."""
    names = {1.0: "compute-bound", 0.25: "small batches"}
    fig, axes = plt.subplots(len(demands), 2, figsize=(10, 3.2 * len(demands)), squeeze=False)
    for row, demand in zip(axes, demands):
        plot_throughput(throughput_vs_tenants(demand=demand, **kwargs), axes=row)
        row[0].set_title(f"Per-tenant share ({names.get(demand, 'demand')}, demand={demand:g})")
    fig.tight_layout()
    return fig


def mig_layout_widget(model: str = "A100-SXM4-80GB", counts: Optional[dict[str, int]] = None):
    """Pick a MIG-capable GPU and how many instances of each profile: the placement (or why it is invalid)
    is drawn with :func:`mig_slice_map`."""
    import ipywidgets as w

    dd = w.Dropdown(options=[m.name for m in CATALOG.values() if m.mig_capable], value=model, description="GPU")
    box = w.VBox()
    out = w.Output()

    def draw(change=None):
        with out:
            out.clear_output(wait=True)
            names = [n for c in box.children for n in [c.description] * c.value]
            mig_slice_map(dd.value, names)
            plt.show()

    def build(change=None, initial: Optional[dict[str, int]] = None):
        kids = []
        for p in mig.profiles(dd.value):
            c = w.BoundedIntText(value=(initial or {}).get(p.name, 0), min=0, max=8, description=p.name,
                                 layout=w.Layout(width="180px"))
            c.observe(draw, names="value")
            kids.append(c)
        box.children = kids
        draw()

    dd.observe(build, names="value")
    build(initial=counts if counts is not None else {"4g.40gb": 1, "3g.40gb": 1})
    show_widget(w.VBox([dd, box, out]))
