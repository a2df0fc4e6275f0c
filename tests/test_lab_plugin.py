"""Lab 08 (labs/08-write-a-plugin): a scheduler built with out-of-tree plugins (app.WithPlugin), the
fragmentation workload and measure, the GPUClustering example of chapter 07, and check_plugin.

check_plugin is tested as the other lab checkers are: the reference solution (FGD's fragmentation
gradient for whole GPUs, as in the lab's solution.ipynb) passes; named false solutions fail for the
reason the lab's README gives — random scores or a plan fitted to seed 0 lose on another seed, a
spreading plugin does not reduce fragmentation, a profile that disables a Filter plugin or replaces the
binder is refused before running, a plugin that hides a node's usage from Filter makes the kubelet
refuse pods, and a score outside [0, 100] stops the run with the framework's message.
"""
from __future__ import annotations

import random

import pytest

from gpusim.api.errors import InputError
from gpusim.labs import (PLUGIN_SEEDS, TARGET, build, check_plugin, fgd_score, fragmentation_report,
                         node_fragmentation, plugin_baseline, plugin_workload, with_plugin)
from gpusim.labs import gpuclustering
from gpusim.labs.fragmentation import fragmentation_over_time

GPU = "nvidia.com/gpu"


def config(name: str, weight: int = 10, extra: str = "") -> str:
    return ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
            "- schedulerName: default-scheduler\n  plugins:\n"
            f"    multiPoint: {{enabled: [{{name: {name}, weight: {weight}}}]}}\n" + extra)


class FragmentationGradient:
    """The lab's reference solution: the node whose fragmentation grows least (FGD, whole GPUs)."""

    name = "FragmentationGradient"

    def score(self, state, pod, node):
        free = node.allocatable.get(GPU) - node.requested.get(GPU)
        after = free - pod.requests.get(GPU, 0)
        return fgd_score(node_fragmentation(after) - node_fragmentation(free))


class RandomScores:
    name = "RandomScores"

    def __init__(self):
        self.rng = random.Random(0)

    def score(self, state, pod, node):
        return self.rng.randint(0, 100)


class Spread:
    name = "Spread"

    def score(self, state, pod, node):
        return (node.allocatable.get(GPU) - node.requested.get(GPU)) * 100 // node.allocatable.get(GPU)


class FullestFirst:
    name = "FullestFirst"

    def score(self, state, pod, node):
        return min(100, node.requested.get(GPU) * 100 // 8)


class HideUsage:
    """Zeroes the node's GPU count in the scheduler's cache: Filter then lets pods onto full nodes."""

    name = "HideUsage"

    def score(self, state, pod, node):
        node.requested.values[GPU] = 0
        return 50


class OwnBinder:
    name = "OwnBinder"

    def __init__(self, handle):
        self.handle = handle

    def score(self, state, pod, node):
        return 50

    def bind(self, state, pod, node):
        from gpusim.scheduler.framework import Status
        pod.pod.spec.node_name = max(self.handle.node_infos(), key=lambda n: n.requested.get(GPU)).name
        self.handle.api.update(pod.pod)
        return Status()


class TooHigh:
    name = "TooHigh"

    def score(self, state, pod, node):
        return 150


def plugin(cls, extra: str = "", weight: int = 10, handle: bool = False):
    return build(config(cls.name, weight, extra), with_plugin(cls.name, (lambda a, h: cls(h)) if handle
                                                               else (lambda a, h: cls())))


@pytest.fixture(scope="module")
def baseline():
    return plugin_baseline()


def bad(c) -> list[str]:
    return [line for line in c.lines if line.startswith("✗")]


# --- the out-of-tree build -------------------------------------------------------------------------------

def test_build_registers_and_enables_an_out_of_tree_plugin():
    sched = plugin(FragmentationGradient)
    assert sched.out_of_tree == ("FragmentationGradient",)
    prof = sched.profile()
    assert prof.points["Score"][-1] == "FragmentationGradient" and prof.weights["FragmentationGradient"] == 10
    assert "FragmentationGradient" not in prof.points["Filter"]        # it implements Score only
    r = sched.run(text=plugin_workload(0))
    a = next(a for a in r.scheduler.attempts if a.scores)
    assert "FragmentationGradient" in next(iter(a.scores.values()))   # explain_pod shows its scores


def test_duplicate_plugin_name_is_an_error_as_in_registry_register():
    with pytest.raises(ValueError, match="a plugin named NodeResourcesFit already exists"):
        build(None, with_plugin("NodeResourcesFit", lambda a, h: Spread()))


@pytest.mark.parametrize("text, message", [
    (config("Nope"), 'profiles[0].plugins.multiPoint.enabled[0].name: Invalid value: "Nope": plugin "Nope" '
                     'does not exist'),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", "expected a KubeSchedulerConfiguration, got ConfigMap"),
    (config("Spread") + "  bogus: 1\n", 'strict decoding error: unknown field "profiles[0].bogus"'),
])
def test_config_errors_name_the_config_and_field(text, message):
    with pytest.raises(InputError) as e:
        build(text, with_plugin("Spread", lambda a, h: Spread()))
    assert str(e.value).startswith("error: --config, document 1: ") and message in str(e.value), str(e.value)


def test_a_scenario_with_its_own_scheduler_configuration_is_refused():
    text = plugin_workload(0) + "---\napiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    with pytest.raises(InputError, match="takes its configuration from build"):
        plugin(Spread).run(text=text)


def test_default_build_is_the_default_profile():
    a, b = build(None).run(text=plugin_workload(1)), plugin_workload(1)
    import gpusim as gs
    assert gs.get_pods(a) == gs.get_pods(gs.run(text=b))


# --- the workload and the measure --------------------------------------------------------------------------

def test_workload_is_deterministic_per_seed_and_follows_the_target():
    assert plugin_workload(3) == plugin_workload(3) and plugin_workload(3) != plugin_workload(4)
    import yaml
    pods = [d for s in PLUGIN_SEEDS for d in yaml.safe_load_all(plugin_workload(s)) if d["kind"] == "Pod"]
    sizes = [d["spec"]["containers"][0]["resources"]["limits"][GPU] for d in pods]
    assert set(sizes) == set(TARGET)
    for k, p in TARGET.items():
        assert abs(sizes.count(k) / len(sizes) - p) < 0.08


@pytest.mark.parametrize("free, expected", [
    (0, 0.0), (8, 0.0),                          # a full or an empty 8-GPU node has no fragment
    (1, 0.25 + 0.2 + 0.15),                      # one free GPU is useless to 2-, 4- and 8-GPU pods
    (3, 3 * (0.2 + 0.15)), (4, 4 * 0.15), (7, 7 * 0.15),
])
def test_node_fragmentation_whole_gpus(free, expected):
    # DERIVED from frag.go's rule for whole-GPU tasks: idle GPUs count for every target size they cannot host
    assert node_fragmentation(free) == pytest.approx(expected)


@pytest.mark.parametrize("delta, expected", [(0.0, 50), (-1.0, 73), (1.0, 26), (-10.0, 99), (10.0, 0)])
def test_fgd_score_is_floor_of_100_sigmoid(delta, expected):
    # fgd_score.go: int64(sigmoid(-Δ/1000) * MaxNodeScore), Δ in milli-GPU (here in GPUs)
    assert fgd_score(delta) == expected


def test_fragmentation_report_reads_holdings():
    import gpusim as gs
    r = gs.run(text=plugin_workload(0))
    series = fragmentation_over_time(r)
    assert series[0] == (0.0, 0.0, 0)                              # an empty cluster has no fragment
    assert max(a for _t, _f, a in series) <= 48
    rep = fragmentation_report(r)
    assert 0 < rep.fragmentation < 48 and rep.capacity == 48 and rep.unscheduled == 0
    assert set(rep.wait_by_size) == set(TARGET)


# --- GPUClustering (gpu_clustering_score.go; no upstream test file, rows DERIVED from the source) -----------

@pytest.mark.parametrize("want, free, classes, expected", [
    (2, 4, {2}, 25 * 4 // 8 + 75),        # only the same class: (75, 100]
    (2, 4, {1, 2}, 25 * 4 // 8 + 50),     # the same class among others: (50, 75]
    (2, 8, set(), 0 + 25),                # an idle node: (25, 50]
    (2, 2, {4}, 25 * 6 // 8),             # other classes only: [0, 25]
    (0, 8, set(), 0),                     # no GPU requested: MinNodeScore
    (8, 0, {8}, 25 + 75),                 # busier is better within a band
])
def test_gpuclustering_score(want, free, classes, expected):
    assert gpuclustering.score(want, free, 8, classes) == expected


def test_gpuclustering_reduces_fragmentation_on_seed_0(baseline):
    sched = build(config(gpuclustering.NAME), with_plugin(gpuclustering.NAME, gpuclustering.new))
    rep = fragmentation_report(sched.run(text=plugin_workload(0)))
    assert rep.fragmentation < 0.75 * baseline[0].fragmentation


# --- check_plugin -----------------------------------------------------------------------------------------

def test_reference_solution_passes(baseline):
    c = check_plugin(plugin(FragmentationGradient), baseline=baseline)
    assert c.passed, str(c)
    assert "✓ Score 扩展点上的树外插件：FragmentationGradient（权重 10）" in c.lines
    assert "✓ Filter 规则完整：默认 profile 的 9 个 Filter 插件都在" in c.lines
    seeds = [line for line in c.lines if line.startswith("✓ 种子 ")]
    assert len(seeds) == len(PLUGIN_SEEDS)
    assert "✓ 种子 0：碎片 0.59 张 GPU，默认 2.26（-74%）；8 卡 Pod 平均等待 53 分钟，默认 110" in c.lines


@pytest.mark.parametrize("sched, expected", [
    # random scores win on some seeds and lose on others
    (lambda: plugin(RandomScores), ["✗ 种子 2：", "✗ 种子 4："]),
    # LeastAllocated on GPUs is what the default already does
    (lambda: plugin(Spread), [f"✗ 种子 {s}：" for s in PLUGIN_SEEDS]),
    # a profile that disables NodeResourcesFit's Filter, to pack pods onto full nodes
    (lambda: plugin(FullestFirst, "    filter: {disabled: [{name: NodeResourcesFit}]}\n"),
     ["✗ profile 关掉了默认的过滤插件：NodeResourcesFit @ Filter"]),
    # a plugin that binds pods itself, wherever it likes
    (lambda: plugin(OwnBinder, "    bind: {enabled: [{name: OwnBinder}], disabled: [{name: '*'}]}\n", handle=True),
     ["✗ Score 插件不应参与 Filter、Reserve、Permit 或 Bind：OwnBinder @ Bind",
      "✗ Bind 扩展点被改成 ['OwnBinder']（应为 ['DefaultBinder']）"]),
    # hiding a node's usage from Filter: the kubelet refuses what does not fit
    (lambda: plugin(HideUsage), ["✗ 种子 0：kubelet 拒绝了 "]),
    # a score outside [0, 100]
    (lambda: plugin(TooHigh), ['✗ 种子 0：运行失败：ValueError: plugin "TooHigh" returns an invalid score 150, '
                               'it should in the range of [0, 100] after normalizing']),
    # no out-of-tree plugin at all: MostAllocated alone is not the lab
    (lambda: build(None), ["✗ default-scheduler 的 Score 扩展点上没有树外插件"]),
], ids=["random-scores", "spread", "filter-disabled", "own-binder", "hide-usage", "score-out-of-range",
        "no-plugin"])
def test_false_solutions_fail(sched, expected, baseline):
    c = check_plugin(sched(), baseline=baseline)
    assert not c.passed
    for e in expected:
        assert any(line.startswith(e) for line in bad(c)), str(c)


def test_a_plan_fitted_to_seed_0_fails_on_other_seeds(baseline):
    r0 = plugin(FragmentationGradient).run(text=plugin_workload(0))
    plan = {p.metadata.name: p.spec.node_name for p in r0.pods()}

    class Overfit:
        name = "Overfit"

        def score(self, state, pod, node):
            return 100 if plan.get(pod.pod.metadata.name) == node.name else 0
    c = check_plugin(plugin(Overfit, weight=100), baseline=baseline)
    assert not c.passed
    assert any(line.startswith("✓ 种子 0：") for line in c.lines)        # it wins where it was fitted …
    assert [line[:6] for line in bad(c)] == ["✗ 种子 2", "✗ 种子 4"], str(c)   # … and loses elsewhere
