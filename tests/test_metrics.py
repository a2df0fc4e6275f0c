"""gpusim.metrics: policy-independent metrics over a finished run's records, checked against values
computed by hand on small record sets and small scenarios."""
from __future__ import annotations

import pytest

from gpusim import metrics as m
from gpusim.cluster.scenario import load
from gpusim.cluster.simulation import Simulation


def rec(ns, name, **kw):
    return m.PodRecord(ns, name, **kw)


ALLOCS = [m.Allocation("a", "a1", "n0", "g0", 0.0, 10.0), m.Allocation("a", "a2", "n0", "g1", 0.0, 5.0),
          m.Allocation("b", "b1", "n0", "g1", 5.0, 20.0)]


def test_share_over_time_by_hand():
    s = m.share_over_time(ALLOCS, [], total=2, end=20.0)
    assert s.times == [0.0, 5.0, 10.0, 20.0]
    assert s.values == {"a": [1.0, 0.5, 0.0, 0.0], "b": [0.0, 0.5, 0.5, 0.0]}
    assert s.integral("a") == 7.5 and s.integral("b") == 7.5      # share-seconds
    assert s.at("b", 7.0) == 0.5 and s.at("a", 12.0) == 0.0
    counts = m.share_over_time(ALLOCS, [], total=2, end=20.0, normalize=False)
    assert counts.values["a"] == [2, 1, 0, 0] and counts.integral("a") == 15.0


def test_tenant_is_a_caller_supplied_function():
    records = [rec("a", "a1", labels={"team": "x"}), rec("a", "a2", labels={"team": "y"}), rec("b", "b1")]
    s = m.share_over_time(ALLOCS, records, total=2, end=20.0, tenant=m.tenant_by_label("team"))
    assert sorted(s.values) == ["b", "x", "y"]                    # b1 has no label: its namespace
    assert s.integral("x") == 5.0 and s.integral("y") == 2.5


@pytest.mark.parametrize("record, want", [
    (rec("ns", "p", labels={m.KUEUE_QUEUE_LABEL: "team-a"}), "team-a"),
    (rec("ns", "p", owner_labels={m.KUEUE_QUEUE_LABEL: "team-b"}), "team-b"),   # the Job's label
    (rec("ns", "p"), "ns"),
])
def test_tenant_by_kueue_queue(record, want):
    assert m.tenant_by_kueue_queue(record) == want


def test_utilization_over_time_and_mean():
    u = m.utilization_over_time(ALLOCS, total=4, end=20.0)
    assert u.times == [0.0, 10.0, 20.0] and u.values["cluster"] == [0.5, 0.25, 0.0]
    assert m.mean_utilization(u) == pytest.approx((0.5 * 10 + 0.25 * 10) / 20)


@pytest.mark.parametrize("xs, want", [
    ([1, 1, 1, 1], 1.0), ([1, 0, 0, 0], 0.25), ([2, 1], 0.9), ([0, 0], 1.0), ([3.0], 1.0),
])
def test_jain_index(xs, want):
    assert m.jain_index(xs) == pytest.approx(want)


def test_jain_index_rejects_empty_and_negative():
    with pytest.raises(ValueError):
        m.jain_index([])
    with pytest.raises(ValueError):
        m.jain_index([1, -1])


@pytest.mark.parametrize("pods, want", [
    ([rec("d", "w0", started=3.0, finished=9.0), rec("d", "w1", started=7.0)], 7.0),
    ([rec("d", "w0", started=3.0, finished=5.0), rec("d", "w1", started=7.0)], None),   # never both running
    ([rec("d", "w0", started=3.0, finished=7.0), rec("d", "w1", started=7.0)], None),   # hand-over, not together
    ([rec("d", "w0")], None),
])
def test_job_queueing_delay_is_creation_to_all_pods_running(pods, want):
    job = m.JobRecord("d", "j", created=1.0, parallelism=2)
    got = m.job_queueing_delay(job, pods, end=100.0)
    assert got == (None if want is None else want - 1.0)


def test_pod_delay_and_job_completion_time():
    assert m.pod_queueing_delay(rec("d", "p", created=2.0, started=12.5)) == 10.5
    assert m.pod_queueing_delay(rec("d", "p", created=2.0)) is None
    assert m.job_completion_time(m.JobRecord("d", "j", 5.0, 1, 65.0)) == 60.0
    assert m.job_completion_time(m.JobRecord("d", "j", 5.0)) is None


SCENARIO = """apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: a100}
spec: {count: 1, gpu: {model: A100-SXM4-80GB, count: 2}}
---
apiVersion: v1
kind: Namespace
metadata: {name: a}
---
apiVersion: v1
kind: Namespace
metadata: {name: b}
---
apiVersion: v1
kind: Pod
metadata: {name: big, namespace: a, annotations: {gpusim.io/duration: 1h}}
spec:
  restartPolicy: Never
  containers: [{name: main, image: cuda, resources: {limits: {nvidia.com/gpu: 2}}}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: small, namespace: b, annotations: {gpusim.io/submit-at: 10m}}
spec:
  parallelism: 2
  completions: 2
  template:
    metadata: {annotations: {gpusim.io/duration: 30m}}
    spec:
      restartPolicy: Never
      containers: [{name: main, image: cuda, resources: {limits: {nvidia.com/gpu: 1}}}]
"""


def test_metrics_of_a_small_run():
    """big holds both GPUs for 1h; the 2-pod Job arrives at 10m, waits ≈50m, runs 30m."""
    r = Simulation(load(texts=[("<text>", SCENARIO)])).run()
    hours = m.gpu_hours_by_tenant(r)
    assert hours["a"] == pytest.approx(2.0, abs=0.01) and hours["b"] == pytest.approx(1.0, abs=0.01)
    assert m.tenant_fairness(r) == pytest.approx(9 / 10, abs=0.01)          # Jain([2, 1])
    assert m.job_queueing_delays(r)["b/small"] == pytest.approx(3000, abs=5)
    assert m.job_completion_times(r)["b/small"] == pytest.approx(4800, abs=5)
    share = m.gpu_share_over_time(r)
    assert share.at("a", 1800) == 1.0 and share.at("b", 1800) == 0.0 and share.at("b", 4000) == 1.0
    u = m.cluster_gpu_utilization(r)
    assert m.mean_utilization(u) == pytest.approx(3 * 3600 / (2 * r.end), abs=0.01)
    delays = m.queueing_delays(r)
    assert delays["a/big"] == pytest.approx(1.0, abs=0.1)
    assert all(d == pytest.approx(3000, abs=5) for k, d in delays.items() if k.startswith("b/"))


def test_wasted_gpu_hours_match_the_training_report():
    import gpusim as gs
    from gpusim.workloads.training import training_report
    r = gs.run("examples/gang-partial-start.yaml")
    assert m.wasted_gpu_hours(r) == {f"{g['namespace']}/{g['group']}": g["wasted_gpu_hours"]
                                     for g in training_report(r)}
    assert m.wasted_gpu_hours(r)["default/llm-pretrain"] == pytest.approx(7.0, abs=0.05)   # 7 GPUs × ≈1h


def test_deleted_pods_still_count_through_their_holdings():
    records = [rec("a", "kept")]
    allocs = [m.Allocation("a", "gone", "n0", "g0", 0.0, 10.0)]
    s = m.share_over_time(allocs, records, total=1, end=10.0)
    assert s.integral("a") == 10.0


def test_tenant_by_volcano_queue_reads_the_pod_group_queue():
    from types import SimpleNamespace as NS

    pg = NS(metadata=NS(namespace="ml", name="pg1"), spec=NS(queue="research"))
    api = NS(list=lambda resource: [pg] if resource == "PodGroup.scheduling.volcano.sh" else [])
    tenant = m.tenant_by_volcano_queue(NS(api=api))
    assert tenant(rec("ml", "p", annotations={m.VOLCANO_GROUP_ANNOTATION: "pg1"})) == "research"
    assert tenant(rec("ml", "p", annotations={m.VOLCANO_QUEUE_ANNOTATION: "prod"})) == "prod"
    assert tenant(rec("ml", "p", annotations={m.VOLCANO_GROUP_ANNOTATION: "other"})) == "ml"
    assert tenant(rec("ml", "p")) == "ml"
