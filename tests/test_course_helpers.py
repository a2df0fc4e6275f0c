"""The small helpers chapters 00–03 call instead of holding logic in cells: what they read from a run and the
scenarios they write."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import yaml  # noqa: E402

import gpusim as gs  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_pod_json_and_scheduled_by():
    r = gs.run("examples/volcano-gang.yaml")
    assert gs.pod_json(r, "notebook")["name"] == "notebook"
    assert gs.scheduled_by(r, "llm-pretrain-worker-0") == "volcano" and gs.scheduled_by(r, "notebook") == "default-scheduler"
    with pytest.raises(KeyError, match="no pod default/nope"):
        gs.pod_json(r, "nope")


def test_scheduled_by_is_none_for_a_pod_never_bound():
    r = gs.run(text=gs.fragmentation_scenario(sizes=(8, 8), nodes=1))
    assert gs.scheduled_by(r, "small-0") == "default-scheduler" and gs.scheduled_by(r, "small-1") is None


def test_trace_functions_in_order():
    r = gs.run("examples/lifecycle.yaml")
    calls = gs.trace_functions(r, obj="Node a100-0")
    assert calls.index("devicemanager.(*server).Register") < calls.index("v1beta1.DevicePlugin/ListAndWatch")


def test_request_errors_leave_valid_requests_out():
    errors = gs.request_errors({"ok": "{limits: {nvidia.com/gpu: 1}}", "half": "{limits: {nvidia.com/gpu: 0.5}}"})
    assert list(errors) == ["half"] and errors["half"].endswith("must be an integer")
    assert gs.format_load_errors(errors).startswith("half:\n  error: pod.yaml")


def test_guide_run_follows_the_exit_code():
    assert gs.pod_json(gs.guide_run(2), "train-0")["phase"] == "Failed"


def test_oom_instants_group_the_pods_failing_together():
    r = gs.compare_sharing(modes=["time-slicing"])["time-slicing"]
    (t1, pods1), (t2, pods2) = gs.oom_instants(r)
    assert pods1 == pods2 == ["llm-0", "llm-1", "llm-2", "llm-3"] and t1 < t2


def test_mig_reports():
    assert gs.mig_placement_error("A100-SXM4-80GB", ["3g.40gb", "3g.40gb"]) is None
    report = gs.mig_placement_report("A100-SXM4-80GB", [["7g.80gb"], ["7g.80gb", "1g.10gb"]]).splitlines()
    assert report[0] == "[0-7 7g.80gb]" and report[1].startswith("MigPlacementError:")
    text = gs.mig_strategy_report()
    assert "single with 4g.40gb + 3g.40gb: invalid MIG configuration" in text and "nvidia.com/gpu.count=7" in text
    assert len(gs.plot_mig_layouts("A30-24GB", [["4g.24gb"], ["2g.12gb", "2g.12gb"]]).axes) == 2


def test_time_slicing_scenario_renames_the_resource():
    r = gs.run(text=gs.time_slicing_scenario(gpus=2, replicas=3, rename_by_default=True))
    assert r.nodes()[0].status.allocatable.get("nvidia.com/gpu.shared") in ("6", 6)
    r = gs.run(text=gs.time_slicing_scenario(gpus=2, replicas=3))
    assert r.nodes()[0].status.allocatable["nvidia.com/gpu"] in ("6", 6)
    assert gs.gpu_labels(r, keys=["nvidia.com/gpu.product"]) == "nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB-SHARED"


def test_vgpu_and_hami_scenarios():
    v = gs.run(text=gs.vgpu_scenario("A100D-10C"))
    assert gs.oom_instants(v) == [(121.002, ["grows"])]
    h = gs.run(text=gs.hami_scenario())
    rows = gs.hami_allocations(h).splitlines()
    assert rows[0].split() == ["POD", "GPU", "GPUMEM", "(MiB)", "GPUCORES", "(%)", "PHASE"]
    assert {r.split()[0]: r.split()[-1] for r in rows[1:]} == {"greedy": "Failed", "svc-0": "Succeeded",
                                                              "svc-1": "Succeeded"}
    assert {r.split()[1] for r in rows[1:]} == {h.pod("svc-0").metadata.annotations["hami.io/vgpu-devices-allocated"]
                                                .split(",")[0]}      # one GPU shared by all three


def test_with_node_name_affinity_writes_one_term_per_node():
    text = gs.with_node_name_affinity(gs.fragmentation_scenario(sizes=(1,), nodes=3), "big", ["gpu-0", "gpu-2"])
    big = next(d for d in yaml.safe_load_all(text) if d["metadata"]["name"] == "big")
    terms = big["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert [t["matchFields"][0]["values"] for t in terms] == [["gpu-0"], ["gpu-2"]]
    with pytest.raises(ValueError, match="no Pod nope"):
        gs.with_node_name_affinity(text, "nope", ["gpu-0"])


def test_gpus_used_by_weight_and_score_views():
    sc = gs.fragmentation_scenario(sizes=(2, 3), nodes=2)
    used = gs.gpus_used_by_weight(sc, "MostAllocated", [1, 10], t=15)
    assert used[1] == used[10] and sorted(used[1].values()) == [0, 5]
    cmp = gs.compare_strategies(sc, t=15)
    assert gs.explain_runs(cmp, "small-1").startswith("== LeastAllocated\nPod default/small-1")
    fig = gs.compare_score_bars(cmp, "small-1")
    assert [ax.get_title() for ax in fig.axes] == ["LeastAllocated: pod small-1 (3 GPUs) at t=10s",
                                                   "MostAllocated: pod small-1 (3 GPUs) at t=10s"]


def test_extension_points_of_and_component_layers():
    default = gs.load_profiles()["default-scheduler"]
    assert gs.extension_points_of(default, "NodeAffinity") == ["PreFilter", "Filter", "PreScore", "Score"]
    assert gs.extension_points_of(default, "Coscheduling") == []
    layers = gs.component_layers(gs.component_graph())
    assert layers["apiserver"] == "control plane" and layers["container-toolkit"] == "components"
    assert "node-feature-discovery" not in layers


def test_throughput_figure_one_row_per_demand():
    assert len(gs.plot_throughput_by_demand([1.0, 0.5, 0.25]).axes) == 6


# --- helpers the answers of chapters 07, 09, 10 and lab 08 call ------------------------------------------------

def test_with_field_sets_removes_and_names_what_is_missing():
    from gpusim.experiments import edits
    text = open("course/templates/volcano-queues.yaml").read()
    job = edits.find(edits.docs(edits.with_field(text, "Job", "serve-train", "spec.tasks.0.replicas", 4)), "Job", "serve-train")
    assert job["spec"]["tasks"][0]["replicas"] == 4
    q = edits.find(edits.docs(edits.with_field(text, "Queue", "research", "spec.capability", None)), "Queue", "research")
    assert "capability" not in q["spec"]
    deep = edits.find(edits.docs(edits.with_field(text, "Queue", "research", "spec.a.b", 1)), "Queue", "research")
    assert deep["spec"]["a"] == {"b": 1}
    with pytest.raises(KeyError, match="no item '5' at spec.tasks.5"):
        edits.with_field(text, "Job", "serve-train", "spec.tasks.5.replicas", 4)
    with pytest.raises(KeyError, match="no Job named 'nope'"):
        edits.with_field(text, "Job", "nope", "spec.x", 1)


def test_load_errors_name_the_given_file():
    errs = gs.load_errors({"bad": "apiVersion: v1\nkind: Podd\nmetadata: {name: x}\n"}, file="scenario.yaml")
    assert errs["bad"].startswith('error: scenario.yaml, document 1: Podd "x" is invalid: no matches for kind')


def test_with_priority_class_marks_only_pods_of_that_size():
    import gpusim.labs
    text = gs.labs.with_priority_class(gs.labs.plugin_workload(0), gpus=4, value=1000)
    docs = [d for d in yaml.safe_load_all(text) if d]
    pc = [d for d in docs if d["kind"] == "PriorityClass"]
    assert pc == [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "gpu-priority"},
                   "value": 1000, "preemptionPolicy": "Never"}]
    pods = [d for d in docs if d["kind"] == "Pod"]
    marked = {d["metadata"]["name"] for d in pods if d["spec"].get("priorityClassName") == "gpu-priority"}
    assert marked and marked == {d["metadata"]["name"] for d in pods
                                 if d["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 4}
    r = gs.run(text=text)
    assert {p.spec.priority for p in r.pods() if p.metadata.name in marked} == {1000}


def test_compare_uses_the_target_for_workload_and_measure():
    import gpusim.labs
    target = {1: 0.8, 8: 0.2}
    cmp = gs.labs.compare({"default": gs.labs.build(None)}, seeds=(0,), target=target)
    result, report = cmp["default"][0]
    sizes = {sum(int(c.resources.limits["nvidia.com/gpu"]) for c in p.spec.containers) for p in result.pods()}
    assert sizes == {1, 8}
    assert report == gs.labs.fragmentation_report(result, target=target)
    assert report != gs.labs.fragmentation_report(result)


@pytest.mark.parametrize("full, expected", [
    (9, "0/11 nodes are available: 2 node(s) had untolerated taint(s), 9 Insufficient nvidia.com/gpu."),
    (10, "0/12 nodes are available: 10 Insufficient nvidia.com/gpu, 2 node(s) had untolerated taint(s)."),
])
def test_failed_scheduling_sorts_the_reason_strings(full, expected):
    from gpusim.experiments.workflow import two_reasons_scenario
    message = gs.attempts_for(gs.run(text=two_reasons_scenario(full)), "late")[0].message
    assert message.startswith(expected + " no new claims to deallocate, preemption: ")
