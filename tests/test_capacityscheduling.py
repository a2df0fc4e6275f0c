"""scheduler-plugins' CapacityScheduling with ElasticQuota: teams lend each other their guaranteed
GPUs (min), borrow up to max, and take them back by preemption. Read through events and the
quotas' status, as a user reads them."""
from __future__ import annotations

import pytest

from gpusim.api.errors import InputError
from gpusim.cluster.scenario import load
from gpusim.cluster.simulation import Simulation
from gpusim.scheduler.plugins.capacityscheduling import (ElasticQuotaInfo, aggregated_used_over_min_with, over,
                                                          resource_of)

CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint: {enabled: [{name: CapacityScheduling}]}
    postFilter: {enabled: [{name: CapacityScheduling}], disabled: [{name: "*"}]}
"""


def pool(gpus=8, count=1):
    return f"""apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {{name: a100}}
spec: {{count: {count}, gpu: {{model: A100-SXM4-80GB, count: {gpus}}}}}
"""


def namespace(name):
    return f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: {name}}}\n"


def quota(ns, min_=None, max_=None):
    spec = []
    if min_ is not None:
        spec.append(f"min: {min_}")
    if max_ is not None:
        spec.append(f"max: {max_}")
    return f"""apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata: {{name: quota, namespace: {ns}}}
spec: {{{", ".join(spec)}}}
"""


def gq(n):
    return "{nvidia.com/gpu: %s}" % n


def pod(name, ns, gpus, at=None, priority=None, cpu=None, duration="1h"):
    ann = f"gpusim.io/duration: {duration}" + (f", gpusim.io/submit-at: {at}" if at else "")
    req = f", requests: {{cpu: {cpu}}}" if cpu else ""
    prio = f"\n  priorityClassName: {priority}" if priority else ""
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {ns}, annotations: {{{ann}}}}}
spec:
  restartPolicy: Never{prio}
  containers: [{{name: main, image: cuda, resources: {{limits: {{nvidia.com/gpu: {gpus}}}{req}}}}}]
"""


HIGH = """apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
"""


def run(*docs, until=3600.0):
    sim = Simulation(load(texts=[("<text>", "---\n".join([CONFIG, *docs]))]))
    sim.ctx.env.run(until=until)
    return sim


def events(sim, reason):
    return [(e.object.namespace, e.object.name, e.message) for e in sim.ctx.recorder.log if e.reason == reason]


def running(sim):
    return sorted(f"{p.metadata.namespace}/{p.metadata.name}" for p in sim.ctx.api.list("Pod")
                  if p.status.phase == "Running")


TEAMS = [namespace("a"), namespace("b"), quota("a", gq(4), gq(8)), quota("b", gq(4), gq(8))]


@pytest.mark.parametrize("case, pods, want_running, want_preempted", [
    # team a borrows b's idle guarantee: 8 GPUs in use with min 4, since Σused (8) ≤ Σmin (8)
    ("borrow", [pod("a1", "a", 4), pod("a2", "a", 4)], ["a/a1", "a/a2"], []),
    # b claims its min back: the borrower's least important pod (a2 started later) is preempted
    ("reclaim", [pod("a1", "a", 4), pod("a2", "a", 4, at="1m"), pod("b1", "b", 4, at="10m")],
     ["a/a1", "b/b1"], ["a/a2"]),
    # reprieve: only as much as b needs is taken back (a1 stays, a2 and a3 go)
    ("reclaim-partial", [pod("a1", "a", 4), pod("a2", "a", 2, at="1m"), pod("a3", "a", 2, at="2m"),
                         pod("b1", "b", 4, at="10m")], ["a/a1", "b/b1"], ["a/a2", "a/a3"]),
    # b over its own min: it may only preempt its own lower-priority pods, never a's
    ("over-min-own-namespace", [HIGH, pod("a1", "a", 4), pod("b1", "b", 4), pod("b2", "b", 4, at="10m",
                                                                               priority="high")],
     ["a/a1", "b/b2"], ["b/b1"]),
])
def test_borrow_and_reclaim(case, pods, want_running, want_preempted):
    sim = run(pool(), *TEAMS, *pods)
    assert running(sim) == want_running
    assert sorted(f"{ns}/{n}" for ns, n, _ in events(sim, "Preempted")) == want_preempted


def test_no_reclaim_from_a_team_within_its_min():
    """a uses exactly its min; b (over its own min with 8) finds no victim: both rejection messages."""
    sim = run(pool(), *TEAMS, pod("a1", "a", 4), pod("b1", "b", 8, at="1m"), until=120)
    assert running(sim) == ["a/a1"]
    msgs = {m for ns, n, m in events(sim, "FailedScheduling") if n == "b1"}
    assert msgs == {"0/1 nodes are available: Pod b/b1 is rejected in PreFilter because total ElasticQuota used is "
                    "more than min. 0/1 nodes are available: 1 No victims found on node a100-0 for preemptor pod b1."}


def test_max_caps_a_team_even_with_free_gpus():
    """b lends a its whole min (Σmin = 10), but a's max is 4."""
    sim = run(pool(gpus=8), namespace("a"), namespace("b"), quota("a", gq(2), gq(4)), quota("b", gq(8)),
              pod("a1", "a", 4), pod("a2", "a", 2, at="1m"), until=120)
    assert running(sim) == ["a/a1"]
    msgs = {m for ns, n, m in events(sim, "FailedScheduling") if n == "a2"}
    assert msgs == {"0/1 nodes are available: Pod a/a2 is rejected in PreFilter because ElasticQuota a is more than "
                    "Max. 0/1 nodes are available: 1 No victims found on node a100-0 for preemptor pod a2."}


def test_total_used_is_bounded_by_sum_of_min_not_by_cluster_size():
    """16 free GPUs, but Σmin is 4: a may not borrow beyond it although its max is 16."""
    sim = run(pool(gpus=16), namespace("a"), namespace("b"), quota("a", gq(2), gq(16)), quota("b", gq(2), gq(16)),
              pod("a1", "a", 4), pod("a2", "a", 1, at="1m"), until=120)
    assert running(sim) == ["a/a1"]
    assert any("Pod a/a2 is rejected in PreFilter because total ElasticQuota used is more than min" in m
               for _, n, m in events(sim, "FailedScheduling") if n == "a2")


@pytest.mark.parametrize("quota_doc, cpu, want", [
    # the trap: a quota listing only nvidia.com/gpu bounds cpu at 0 ...
    (quota("a", gq(4), gq(8)), "1", "Pod a/p is rejected in PreFilter because ElasticQuota a is more than Max"),
    (quota("a", gq(4)), "1", "Pod a/p is rejected in PreFilter because total ElasticQuota used is more than min"),
    # ... so only a pod without a cpu request (or a quota listing cpu) gets through
    (quota("a", gq(4), gq(8)), None, None),
    (quota("a", "{nvidia.com/gpu: 4, cpu: 8}", "{nvidia.com/gpu: 8, cpu: 16}"), "1", None),
    # no min at all: 0 for cpu too, so Σmin bounds it although max lists cpu
    (quota("a", None, "{nvidia.com/gpu: 8, cpu: 16}"), "1", "Pod a/p is rejected in PreFilter because total ElasticQuota used is more than min"),
])
def test_trap_resources_left_out_of_a_quota_are_bounded_at_zero(quota_doc, cpu, want):
    sim = run(pool(), namespace("a"), quota_doc, pod("p", "a", 1, cpu=cpu), until=60)
    fails = [m for _, n, m in events(sim, "FailedScheduling") if n == "p"]
    if want is None:
        assert running(sim) == ["a/p"] and not fails
    else:
        assert running(sim) == [] and fails and fails[0].startswith(f"0/1 nodes are available: {want}.")


def test_namespace_without_quota_is_not_checked():
    sim = run(pool(), *TEAMS, namespace("c"), pod("a1", "a", 8), pod("c1", "c", 0, cpu="1"), until=60)
    assert running(sim) == ["a/a1", "c/c1"]


def test_status_used_counts_running_pods_and_is_synced():
    sim = run(pool(), *TEAMS, pod("a1", "a", 4, duration="10m"), pod("a2", "a", 2), until=120)
    eq = sim.ctx.api.get("ElasticQuota", "a", "quota")
    assert eq.status.used == {"nvidia.com/gpu": "6"}
    assert sim.ctx.api.get("ElasticQuota", "b", "quota").status.used == {"nvidia.com/gpu": "0"}
    assert ("a", "quota", "Elastic Quota a/quota synced successfully") in events(sim, "Synced")
    sim.ctx.env.run(until=1200)                        # a1 finished: no longer counted
    assert eq.status.used == {"nvidia.com/gpu": "2"}


def test_reserve_and_unreserve_update_the_plugin_cache():
    sim = run(pool(), *TEAMS, pod("a1", "a", 4), until=10)
    plugin = next(p for p in sim.scheduler.framework.plugins if p.name == "CapacityScheduling")
    a1 = sim.ctx.api.get("Pod", "a", "a1")
    from gpusim.scheduler.framework import PodInfo
    info = plugin.sync()["a"]
    assert info.used == {"nvidia.com/gpu": 4} and a1.metadata.uid in info.pods
    plugin.unreserve(None, PodInfo(a1), "a100-0")
    assert info.used == {"nvidia.com/gpu": 0}
    plugin.reserve(None, PodInfo(a1), "a100-0")
    plugin.reserve(None, PodInfo(a1), "a100-0")        # idempotent: addPodIfNotPresent
    assert info.used == {"nvidia.com/gpu": 4}


@pytest.mark.parametrize("x1, x2, y, bound, want", [
    ({"cpu": 1000}, {}, {}, 0, True),                              # absent native bound is 0
    ({"cpu": 1000}, {}, {"cpu": 1000}, 0, False),
    ({"nvidia.com/gpu": 2}, {"nvidia.com/gpu": 2}, {"nvidia.com/gpu": 4}, 0, False),
    ({"nvidia.com/gpu": 3}, {"nvidia.com/gpu": 2}, {"nvidia.com/gpu": 4}, 0, True),
    ({"nvidia.com/gpu": 1}, {}, {}, 0, True),                       # absent scalar in min: 0
    ({"nvidia.com/gpu": 1}, {}, {}, 2**63 - 1, False),              # absent scalar in max: unlimited
])
def test_cmp2(x1, x2, y, bound, want):
    assert over(x1, x2, y, bound) is want


def test_missing_min_and_max_defaults():
    info = ElasticQuotaInfo("a", None, None)
    assert not info.used_over_max_with({"cpu": 10**9, "memory": 10**12, "nvidia.com/gpu": 100})
    assert info.used_over_min_with({"nvidia.com/gpu": 1})
    infos = {"a": info, "b": ElasticQuotaInfo("b", {"nvidia.com/gpu": 4}, None)}
    assert not aggregated_used_over_min_with(infos, {"nvidia.com/gpu": 4})
    assert aggregated_used_over_min_with(infos, {"nvidia.com/gpu": 5})
    assert resource_of({"cpu": "500m", "nvidia.com/gpu": 2, "foo": 1}) == {"cpu": 500, "nvidia.com/gpu": 2}


def test_profile_replaces_default_preemption():
    sim = Simulation(load(texts=[("<text>", "---\n".join([CONFIG, pool()]))]))
    points = sim.scheduler.framework.spec.points
    assert points["PostFilter"] == ["CapacityScheduling"]
    assert "CapacityScheduling" in points["PreFilter"] and "CapacityScheduling" in points["Reserve"]
    assert "CapacityScheduling" not in Simulation(load(texts=[("<t>", pool())])).scheduler.framework.spec.points[
        "PreFilter"]


@pytest.mark.parametrize("docs, path, message", [
    ([namespace("a"), quota("a", "{nvidia.com/gpu: -1}")], "spec.min[nvidia.com/gpu]",
     'Invalid value: "-1": must be greater than or equal to 0'),
    ([namespace("a"), quota("a", "{nvidia.com/gpu: lots}")], "spec.min[nvidia.com/gpu]", 'Invalid value: "lots"'),
    ([quota("a", gq(1))], "metadata.namespace", 'namespaces "a" not found'),
    ([namespace("a"), quota("a", gq(1)), quota("a", gq(2)).replace("name: quota", "name: other")],
     "metadata.namespace", "Forbidden: only one ElasticQuota per namespace"),
    ([quota("default", gq(1)).replace("spec: {", "spec: {mni: 1, ")], "", 'unknown field "spec.mni"'),
])
def test_elastic_quota_validation(docs, path, message):
    with pytest.raises(InputError) as e:
        load(texts=[("<text>", "---\n".join([pool(), *docs]))])
    assert e.value.path == path and message in str(e.value)


def test_capacity_scheduling_takes_no_args():
    cfg = CONFIG + "  pluginConfig:\n  - name: CapacityScheduling\n    args: {minCandidateNodesPercentage: 5}\n"
    with pytest.raises(InputError) as e:
        load(texts=[("<text>", "---\n".join([cfg, pool()]))])
    assert 'unknown field "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage"' in str(e.value)


def test_example_capacity_reclaim():
    """examples/capacity-reclaim.yaml: team-b takes its guarantee back from the borrower at 10m."""
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "examples" / "capacity-reclaim.yaml"
    sim = Simulation(load([str(path)]))
    r = sim.run()
    assert running(sim) == [] and {f"{p.metadata.namespace}/{p.metadata.name}" for p in r.pods()} == {
        "team-a/a-train-0", "team-b/b-train"}                    # a-train-1 was preempted (deleted)
    assert [(ns, n) for ns, n, _ in events(sim, "Preempted")] == [("team-a", "a-train-1")]
    (fail,) = [m for ns, n, m in events(sim, "FailedScheduling")]
    assert fail == ("0/1 nodes are available: Pod team-b/b-train is rejected in PreFilter because total "
                    "ElasticQuota used is more than min.")
    b = r.pod("b-train", "team-b")
    assert b.status.phase == "Succeeded" and b.status.condition("PodScheduled").last_transition_time == 601.0


@pytest.mark.parametrize("nominated_ns, nominated_priority, want", [
    ("a", 10, "Pod a/p is rejected in PreFilter because ElasticQuota a is more than Max"),   # ≥ priority, same quota
    ("a", 0, "Pod a/p is rejected in PreFilter because ElasticQuota a is more than Max"),    # equal priority counts
    ("a", -1, ""),                                                                            # lower priority: ignored
    ("b", 10, "Pod a/p is rejected in PreFilter because total ElasticQuota used is more than min"),  # b within min
])
def test_pre_filter_counts_nominated_pods(nominated_ns, nominated_priority, want):
    """A pod nominated by an earlier preemption (5 GPUs) reserves quota: p (2 GPUs) of quota a (max 4)
    sees it when it is of a with priority ≥ p's, or of another quota still within its min (Σmin = 6)."""
    import dataclasses

    from gpusim.api.core_v1 import Container, Pod, PodSpec, ResourceRequirements
    from gpusim.api.meta import ObjectMeta
    from gpusim.scheduler.framework import CycleState, PodInfo
    sim = Simulation(load(texts=[("<text>", "---\n".join([CONFIG, pool(), namespace("a"), namespace("b"),
                                                              quota("a", gq(4), gq(4)), quota("b", gq(2))]))]))
    sim.ctx.env.run(until=1)

    def mk(name, ns, gpus, prio):
        c = Container(name="main", image="cuda", resources=ResourceRequirements(limits={"nvidia.com/gpu": gpus}))
        return PodInfo(Pod(metadata=ObjectMeta(name=name, namespace=ns, uid=name),
                           spec=dataclasses.replace(PodSpec(containers=[c]), priority=prio)))
    nominated = mk("n", nominated_ns, 5, nominated_priority)
    sim.scheduler.nominated_pods["a100-0"] = {"n": nominated}
    plugin = next(p for p in sim.scheduler.framework.plugins if p.name == "CapacityScheduling")
    _, st = plugin.pre_filter(CycleState(), mk("p", "a", 2, 0), sim.scheduler.node_infos())
    assert st.message() == want


def test_preemption_policy_never_keeps_the_borrowed_gpus():
    never = pod("b1", "b", 4, at="10m").replace("restartPolicy: Never", "restartPolicy: Never\n  preemptionPolicy: Never")
    sim = run(pool(), *TEAMS, pod("a1", "a", 4), pod("a2", "a", 4, at="1m"), never, until=700)
    assert running(sim) == ["a/a1", "a/a2"] and events(sim, "Preempted") == []
    assert {m for _, n, m in events(sim, "FailedScheduling") if n == "b1"} == {
        "0/1 nodes are available: Pod b/b1 is rejected in PreFilter because total ElasticQuota used is more than "
        "min. not eligible due to preemptionPolicy=Never."}
