"""The architecture and scoring views: the component graph, the extension-point map of a profile,
GPU fragmentation and the LeastAllocated-vs-MostAllocated claim of chapter 03, and the Filter/Score
demo of chapter 02."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

import gpusim as gs  # noqa: E402
from gpusim.scheduler.registry import DEFAULT_PLUGINS  # noqa: E402
from gpusim.views.architecture import EXTENSION_POINTS, GRPC_V1BETA1  # noqa: E402
from gpusim.views.scoring import attempt_text  # noqa: E402

SIMULATED = {"apiserver", "kube-scheduler", "job-controller", "node-lifecycle-controller", "kubelet",
             "device-manager", "nvidia-device-plugin", "container-runtime", "gpus", "scheduler-plugins",
             "scheduler-plugins-controllers", "volcano", "kueue", "gpu-feature-discovery", "mig-manager",
             "gpu-operator", "nvidia-driver", "container-toolkit", "dcgm-exporter"}
NOT_SIMULATED = {"node-feature-discovery"}

BINPACK = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
- schedulerName: gpu-binpack
  plugins:
    score:
      enabled: [{name: NodeResourcesFit, weight: 5}]
      disabled: [{name: NodeResourcesBalancedAllocation}]
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}, {name: nvidia.com/gpu, weight: 5}]
"""


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# --- component graph ------------------------------------------------------------------------------------

def test_graph_marks_simulated_and_not_simulated_components():
    g = gs.component_graph()
    assert {n for n, d in g.nodes(data=True) if d["simulated"]} == SIMULATED
    assert {n for n, d in g.nodes(data=True) if not d["simulated"]} == NOT_SIMULATED
    for n, d in g.nodes(data=True):
        assert d["upstream"] and d["note"] and (d["module"] is not None) == d["simulated"], n


@pytest.mark.parametrize("component", sorted(SIMULATED))
def test_every_simulated_component_names_modules_that_exist(component):
    import importlib
    import re
    module = gs.component_graph().nodes[component]["module"]
    m = re.fullmatch(r"([\w.]+?)(?:\.\{([\w,]+)\})?", module)
    names = [f"{m.group(1)}.{x}" for x in m.group(2).split(",")] if m.group(2) else [m.group(1)]
    for name in names:
        importlib.import_module(name)


def test_unsimulated_components_are_described_in_plain_words():
    text = gs.unsimulated_components(gs.component_graph())
    assert text.count("\n- ") == len(NOT_SIMULATED) - 1
    assert "yet" not in text and "ClusterPolicy" in text


@pytest.mark.parametrize("caller, callee, word", [
    ("kube-scheduler", "apiserver", "bind"),
    ("kube-scheduler", "apiserver", "watch"),
    ("kubelet", "apiserver", "status"),
    ("job-controller", "apiserver", "watch"),
    ("node-lifecycle-controller", "apiserver", "watch"),
    ("kubelet", "device-manager", "Allocate"),
    ("device-manager", "nvidia-device-plugin", "gRPC"),
    ("nvidia-device-plugin", "device-manager", "gRPC"),
    ("kubelet", "container-runtime", "CRI"),
    ("volcano", "apiserver", "bind"),
    ("scheduler-plugins-controllers", "apiserver", "status"),
    ("mig-manager", "apiserver", "mig.config"),
    ("mig-manager", "nvidia-device-plugin", "pause"),
    ("mig-manager", "gpus", "MIG"),
    ("kueue", "apiserver", "unsuspend"),
    ("scheduler-plugins", "kube-scheduler", "plugins"),
    ("gpu-operator", "nvidia-device-plugin", "deploys"),
    ("gpu-operator", "gpu-feature-discovery", "deploys"),
    ("gpu-operator", "dcgm-exporter", "deploys"),
    ("gpu-operator", "mig-manager", "deploys"),
])
def test_graph_edges_say_what_flows(caller, callee, word):
    g = gs.component_graph()
    assert g.has_edge(caller, callee)
    assert word in g.edges[caller, callee]["label"]


def test_device_plugin_boundary_is_grpc_v1beta1_both_ways():
    g = gs.component_graph()
    for a, b in (("device-manager", "nvidia-device-plugin"), ("nvidia-device-plugin", "device-manager")):
        assert g.edges[a, b]["protocol"] == GRPC_V1BETA1
    assert "Register" in g.edges["nvidia-device-plugin", "device-manager"]["detail"]
    for rpc in ("ListAndWatch", "GetPreferredAllocation", "Allocate"):
        assert rpc in g.edges["device-manager", "nvidia-device-plugin"]["detail"]


def test_layout_is_fixed_and_drawable():
    a, b = gs.component_graph(), gs.component_graph()
    pos = {n: d["pos"] for n, d in a.nodes(data=True)}
    assert pos == {n: d["pos"] for n, d in b.nodes(data=True)}
    assert len(set(pos.values())) == len(pos)
    ax = gs.draw_component_graph(a)
    assert ax.get_title()
    assert "apiserver" in gs.component_table(a)


def test_graph_from_a_result_lists_profiles_and_nodes():
    r = gs.run(text=gs.fragmentation_scenario(sizes=(1,), nodes=2) + "---\n" + BINPACK)
    g = gs.component_graph(r)
    assert g.nodes["kube-scheduler"]["profiles"] == ["default-scheduler", "gpu-binpack"]
    assert g.nodes["kubelet"]["nodes"] == ["gpu-0", "gpu-1"]
    assert gs.component_graph().nodes["kube-scheduler"]["profiles"] == ["default-scheduler"]


# --- extension-point map ----------------------------------------------------------------------------------

def test_default_map_has_one_row_per_default_plugin():
    rows = gs.extension_point_map(gs.load_profiles()["default-scheduler"])
    assert [r["plugin"] for r in rows] == [n for n, _ in DEFAULT_PLUGINS]
    for r in rows:
        assert r["points"] == [pt for pt in EXTENSION_POINTS if r[pt] is not None]


@pytest.mark.parametrize("name, weight", DEFAULT_PLUGINS)
def test_default_score_weights_match_default_plugins(name, weight):
    row = next(r for r in gs.extension_point_map(gs.load_profiles()["default-scheduler"]) if r["plugin"] == name)
    if "Score" in row["points"]:
        assert row["weight"] == (weight or 1)
    else:
        assert row["weight"] is None and weight == 0


@pytest.mark.parametrize("name, points, weight", [
    ("NodeResourcesFit", ["PreFilter", "Filter", "PreScore", "Score"], 1),
    ("TaintToleration", ["Filter", "PreScore", "Score"], 3),
    ("NodeResourcesBalancedAllocation", ["PreScore", "Score"], 1),
    ("SchedulingGates", ["PreEnqueue"], None),
    ("PrioritySort", ["QueueSort"], None),
    ("DefaultPreemption", ["PostFilter"], None),
    ("DefaultBinder", ["Bind"], None),
])
def test_default_map_rows(name, points, weight):
    row = next(r for r in gs.extension_point_map(gs.load_profiles()["default-scheduler"]) if r["plugin"] == name)
    assert row["points"] == points and row["weight"] == weight


def test_filter_positions_follow_the_default_order():
    rows = gs.extension_point_map(gs.load_profiles()["default-scheduler"])
    filters = sorted((r["Filter"], r["plugin"]) for r in rows if r["Filter"] is not None)
    order = [n for n, _ in DEFAULT_PLUGINS]
    assert [p for _, p in filters] == sorted((p for _, p in filters), key=order.index)
    assert [i for i, _ in filters] == list(range(1, len(filters) + 1))


def test_binpack_profile_map_and_drawing():
    ps = gs.load_profiles(BINPACK)
    rows = {r["plugin"]: r for r in gs.extension_point_map(ps["gpu-binpack"])}
    assert rows["NodeResourcesFit"]["weight"] == 5
    assert rows["NodeResourcesBalancedAllocation"]["points"] == ["PreScore"]   # disabled at Score only
    assert rows["NodeResourcesBalancedAllocation"]["weight"] is None
    assert "NodeResourcesFit" in gs.format_extension_point_map(ps["gpu-binpack"])
    ax = gs.draw_extension_point_map(ps)
    assert [t.get_text() for t in ax.get_yticklabels()][:2] == ["SchedulingGates", "PrioritySort"]


# --- fragmentation ------------------------------------------------------------------------------------------

TINY = """apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: n}
spec: {count: 2, gpu: {model: A100-SXM4-80GB, count: 4}}
---
apiVersion: v1
kind: Pod
metadata: {name: three}
spec:
  nodeSelector: {kubernetes.io/hostname: n-0}
  containers:
  - {name: c, image: x, resources: {limits: {nvidia.com/gpu: 3}}}
---
apiVersion: v1
kind: Pod
metadata: {name: one, annotations: {gpusim.io/duration: 60s}}
spec:
  restartPolicy: Never
  nodeSelector: {kubernetes.io/hostname: n-1}
  containers:
  - {name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}
"""


def test_fragmentation_hand_checked():
    r = gs.run(text=TINY)
    mid = gs.fragmentation(r, t=30, pod_size=4)
    assert mid["nodes"] == {"n-0": {"capacity": 4, "used": 3, "free": 1}, "n-1": {"capacity": 4, "used": 1, "free": 3}}
    assert (mid["fully_free"], mid["partially_used"], mid["full"]) == (0, 2, 0)
    assert (mid["largest_free"], mid["total_free"], mid["pods_fit"]) == (3, 4, 0)
    assert gs.fragmentation(r, t=30, pod_size=1)["pods_fit"] == 4
    end = gs.fragmentation(r, pod_size=4)          # "one" has finished: n-1 is whole again
    assert end["time"] == r.end > 60
    assert end["nodes"]["n-1"] == {"capacity": 4, "used": 0, "free": 4}
    assert (end["fully_free"], end["largest_free"], end["pods_fit"]) == (1, 4, 1)


def test_fragmentation_ignores_nodes_without_gpus():
    r = gs.filter_score_demo(4, 6)
    assert set(gs.fragmentation(r)["nodes"]) == {"a100-0", "a100-1"}


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_most_allocated_keeps_a_node_free_for_the_8_gpu_pod(seed):
    """Chapter 03's claim: before the 8-GPU pod arrives (t=79s), MostAllocated leaves more fully free
    nodes, and only under MostAllocated is the 8-GPU pod scheduled."""
    cmp = gs.compare_strategies(gs.fragmentation_scenario(seed=seed), t=79)
    (least, fl), (most, fm) = cmp["LeastAllocated"], cmp["MostAllocated"]
    assert fm["fully_free"] > fl["fully_free"] == 0
    assert fm["pods_fit"] == 1 and fl["pods_fit"] == 0
    assert fl["total_free"] == fm["total_free"] == 14      # same free GPUs, differently spread
    assert most.pod("big").spec.node_name and not least.pod("big").spec.node_name
    assert next(p["phase"] for p in gs.to_json(least)["pods"] if p["name"] == "big") == "Pending"
    assert "Insufficient nvidia.com/gpu" in gs.explain_pod(least, "big")
    assert "fully free" in gs.fragmentation_table(cmp) or "FULLY FREE" in gs.fragmentation_table(cmp)
    gs.plot_fragmentation(cmp)


def test_default_strategy_leaves_text_alone_and_config_is_edited_in_place():
    text = gs.fragmentation_scenario(sizes=(1,), nodes=1)
    assert gs.with_scoring_strategy(text, "default") == text
    once = gs.with_scoring_strategy(text + "---\n" + BINPACK, "MostAllocated", 7)
    sc = gs.load(texts=[("x", once)])
    for p in sc.scheduler_profiles:
        strategy = p.args["NodeResourcesFit"]["scoringStrategy"]
        assert strategy["type"] == "MostAllocated"
        assert {"name": "nvidia.com/gpu", "weight": 7} in strategy["resources"]
    assert "MostAllocated" in gs.scoring_config()


# --- Filter / Score demo --------------------------------------------------------------------------------------

def _attempt(r):
    return next(a for a in r.scheduler.attempts if a.pod == "default/demo")


def test_filter_rejects_nodes_short_of_gpus():
    a = _attempt(gs.filter_score_demo(gpu_request=4, used_gpus=6))
    assert a.node == "a100-1" and a.feasible == ["a100-1"]
    assert a.statuses == {"a100-0": "NodeResourcesFit: Insufficient nvidia.com/gpu",
                          "cpu-0": "NodeResourcesFit: Insufficient nvidia.com/gpu"}


def test_gpus_do_not_count_in_the_default_score():
    a = _attempt(gs.filter_score_demo(gpu_request=4, used_gpus=2))
    assert a.scores["a100-0"]["NodeResourcesFit"] == a.scores["a100-1"]["NodeResourcesFit"]


@pytest.mark.parametrize("strategy, chosen", [("MostAllocated", "a100-0"), ("LeastAllocated", "a100-1")])
def test_gpus_count_when_listed_in_scoring_resources(strategy, chosen):
    r = gs.filter_score_demo(gpu_request=4, used_gpus=2, strategy=strategy)
    a = _attempt(r)
    assert a.node == chosen
    assert a.scores["a100-0"]["NodeResourcesFit"] != a.scores["a100-1"]["NodeResourcesFit"]
    ax = gs.score_bars(r, "demo")
    assert "demo" in ax.get_title()
    assert attempt_text(r, a).startswith("Pod default/demo")


def test_zero_gpu_request_fits_the_cpu_node():
    a = _attempt(gs.filter_score_demo(gpu_request=0, used_gpus=8))
    assert not a.statuses and sorted(a.feasible) == ["a100-0", "a100-1", "cpu-0"]


def test_widgets_build(capsys):
    pytest.importorskip("ipywidgets")
    r = gs.run(text=gs.fragmentation_scenario(sizes=(1, 2), nodes=2))
    gs.explain_widget(r, "small-1")
    gs.explain_widget(r)
    gs.filter_score_widget(gpu_request=2, used_gpus=1)
    gs.strategy_widget(gs.fragmentation_scenario(sizes=(1, 2), nodes=2), t=15)


def test_with_coscheduling_labels_job_pods_and_adds_profile_and_podgroup():
    import yaml
    from gpusim.views.gang import POD_GROUP_LABEL, with_coscheduling
    text = open("examples/gang-partial-start.yaml").read()
    docs = list(yaml.safe_load_all(with_coscheduling(text, "g", 8, timeout=30, args={"podGroupRejectPercentage": 100})))
    job = next(d for d in docs if d["kind"] == "Job")
    assert job["spec"]["template"]["metadata"]["labels"][POD_GROUP_LABEL] == "g"
    pg = next(d for d in docs if d["kind"] == "PodGroup")
    assert pg["spec"] == {"minMember": 8, "scheduleTimeoutSeconds": 30}
    cfg = next(d for d in docs if d["kind"] == "KubeSchedulerConfiguration")
    assert cfg["profiles"][0]["pluginConfig"][0]["args"] == {"podGroupRejectPercentage": 100}
