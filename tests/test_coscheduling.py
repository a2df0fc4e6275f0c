"""scheduler-plugins' Coscheduling: the first failure scenario of the course (an 8-GPU training gang on
a cluster with 7 free GPUs) with and without gang scheduling, QueueSort, the minResources precheck and
the PodGroup status controller. Read through events, as a user reads them."""
from __future__ import annotations

from gpusim.cluster.scenario import load
from gpusim.cluster.simulation import Simulation

GPU = "nvidia.com/gpu"


def config(**args) -> str:
    pc = ""
    if args:
        pc = "  pluginConfig:\n  - name: Coscheduling\n    args: {" + ", ".join(f"{k}: {v}" for k, v in args.items()) + "}\n"
    return f"""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint: {{enabled: [{{name: Coscheduling}}]}}
    queueSort: {{enabled: [{{name: Coscheduling}}], disabled: [{{name: "*"}}]}}
{pc}"""


def pool(gpus=8):
    return f"""apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {{name: a100}}
spec: {{count: 1, gpu: {{model: A100-SXM4-80GB, count: {gpus}}}}}
"""


def podgroup(name="train", min_member=8, extra=""):
    return f"""apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {{name: {name}}}
spec: {{minMember: {min_member}{extra}}}
"""


def pod(name, gpus=1, group="train", at=None, duration="1h"):
    ann = f"gpusim.io/duration: {duration}" + (f", gpusim.io/submit-at: {at}" if at else "")
    lab = f", labels: {{scheduling.x-k8s.io/pod-group: {group}}}" if group else ""
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: {name}, annotations: {{{ann}}}{lab}}}
spec:
  restartPolicy: Never
  containers: [{{name: main, image: cuda, resources: {{limits: {{{GPU}: {gpus}}}}}}}]
"""


def sim_of(*docs) -> Simulation:
    return Simulation(load(texts=[("<text>", "---\n".join(docs))]))


def evs(sim, reason):
    return [(e.time, e.object.name, e.message) for e in sim.ctx.recorder.log if e.reason == reason]


def workers(n=8):
    return [pod(f"w-{i}") for i in range(n)]


def test_without_gang_scheduling_seven_of_eight_workers_start_and_the_job_hangs():
    sim = sim_of(pool(), pod("other", 1, group=None), *workers())
    sim.ctx.env.run(until=5)
    assert len(evs(sim, "Scheduled")) == 8          # "other" + 7 workers hold all 8 GPUs
    assert [n for _, n, _ in evs(sim, "FailedScheduling")] == ["w-7"]


def test_gang_with_seven_free_gpus_binds_nothing_and_times_out():
    # podGroupRejectPercentage 100: PostFilter never rejects, so the 7 assumed workers wait in Permit
    sim = sim_of(config(podGroupRejectPercentage=100), pool(), podgroup(), pod("other", 1, group=None),
                 *workers())
    sim.ctx.env.run(until=61)
    assert [n for _, n, _ in evs(sim, "Scheduled")] == ["other"]
    failed = evs(sim, "FailedScheduling")
    timeout = "0/1 nodes are available: 1 rejected due to timeout after waiting 1m0s at plugin Coscheduling."
    assert {(t, n, m) for t, n, m in failed if "timeout" in m} == {(60.0, f"w-{i}", timeout) for i in range(7)}
    assert failed[0] == (0.0, "w-7", "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. no new claims to deallocate, preemption: 0/1 "
                         "nodes are available: 1 No preemption victims found for incoming pod.")
    sim.ctx.env.run(until=600)
    assert [n for _, n, _ in evs(sim, "Scheduled")] == ["other"]


def test_gang_with_seven_free_gpus_is_rejected_optimistically_in_postfilter():
    sim = sim_of(config(), pool(), podgroup(), pod("other", 1, group=None), *workers())
    sim.ctx.env.run(until=1)
    failed = evs(sim, "FailedScheduling")
    assert (0.0, "w-7", "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. no new claims to deallocate, preemption: 0/1 nodes are "
            "available: 1 No preemption victims found for incoming pod., PodGroup default/train gets rejected "
            "due to Pod w-7 is unschedulable even after PostFilter") in failed
    assert {(t, n, m) for t, n, m in failed if n != "w-7"} == {
        (0.0, f"w-{i}", "0/1 nodes are available: 1 optimistic rejection in PostFilter.") for i in range(7)}
    sim.ctx.env.run(until=600)
    assert [n for _, n, _ in evs(sim, "Scheduled")] == ["other"]
    assert sim.scheduler.nodes["a100-0"].requested.get(GPU) <= 8


def test_gang_with_eight_free_gpus_binds_all_at_the_same_instant():
    sim = sim_of(config(), pool(), podgroup(), *workers())
    sim.ctx.env.run(until=5)
    sched = evs(sim, "Scheduled")
    assert sorted(n for _, n, _ in sched) == [f"w-{i}" for i in range(8)]
    assert {t for t, _, _ in sched} == {0.0}
    assert not evs(sim, "FailedScheduling")


def test_too_few_siblings_fails_prefilter():
    sim = sim_of(config(), pool(), podgroup(), *workers(3))
    sim.ctx.env.run(until=1)
    msgs = {m for _, n, m in evs(sim, "FailedScheduling") if n == "w-0"}
    assert any(m.startswith("0/1 nodes are available: pre-filter pod w-0 cannot find enough sibling pods, "
                            "current pods number: 3, minMember of group: 8.") for m in msgs)


def test_min_resources_precheck_reports_the_resource_gap():
    sim = sim_of(config(), pool(), podgroup(min_member=2, extra=", minResources: {nvidia.com/gpu: 16}"),
                 pod("w-0", group="train"), pod("w-1", group="train"))
    sim.ctx.env.run(until=1)
    msgs = {m for _, n, m in evs(sim, "FailedScheduling") if n == "w-0"}
    assert any(m.startswith("0/1 nodes are available: resource gap: map[nvidia.com/gpu:8].") for m in msgs)


def test_queue_sort_keeps_siblings_together():
    # the group was created at t=0: its late pods go before a lone pod that arrived earlier
    from gpusim.scheduler.framework import PodInfo, QueuedPodInfo
    sim = sim_of(config(), pool(), podgroup(min_member=2), pod("lone", group=None), pod("g-1"), pod("g-0"))
    plugin = sim.scheduler.framework.points["QueueSort"][0]
    sc = load(texts=[("<t>", "---\n".join([podgroup(min_member=2), pod("lone", group=None), pod("g-1"),
                                            pod("g-0")]))])
    lone, g1, g0 = (QueuedPodInfo(PodInfo(p), 0.0) for p in sc.pods)
    lone.initial_attempt_timestamp = 0.0
    for q in (lone, g1, g0):
        q.pod.metadata.namespace = "default"
    sim.ctx.env.run(until=0.5)
    lone.initial_attempt_timestamp = 0.5
    order = sorted([lone, g1, g0], key=lambda q: sum(plugin.less(o, q) for o in (lone, g1, g0)))
    assert [q.pod.metadata.name for q in order] == ["g-0", "g-1", "lone"]


def test_podgroup_status_phases():
    sim = sim_of(config(), pool(), podgroup(min_member=2), pod("w-0", duration="10s"), pod("w-1", duration="10s"))
    pg = sim.ctx.api.get("PodGroup", "default", "train")
    sim.ctx.env.run(until=0.001)
    assert pg.status.phase in ("Scheduling", "Running")
    sim.ctx.env.run(until=5)
    assert (pg.status.phase, pg.status.running) == ("Running", 2)
    sim.run()
    assert (pg.status.phase, pg.status.succeeded) == ("Finished", 2)


def test_podgroup_validation():
    import pytest
    from gpusim.api.errors import InputError
    with pytest.raises(InputError, match="spec.minMember in body should be greater than or equal to 1"):
        load(texts=[("<t>", podgroup(min_member=0))])
