"""The FGD simulator's GPU-sharing types, fragmentation measure and placement policies, as tables.

Ported rows: hkust-adsl/kubernetes-scheduler-simulator @ 29a1e4c4 pkg/utils/frag_test.go
(TestNodeGpuShareFragAmountScore, TestNodeGpuShareFragAmountWithNonGpu, TestGetGpuFragMilliByNodeResAndPodRes),
pkg/type/resource_test.go @ 97f5c2c3 (TestNodeResource_Flatten, TestNodeResource_Sub) and
pkg/simulator/plugin/gpu_packing_score_test.go @ 29a1e4c4 (TestGpuPackingScorePlugin_Score). The other
plugins have no upstream test file; their rows are worked out by hand from the formulas in their Go files.
"""
from __future__ import annotations

import random

import pytest

from gpusim.scheduler.framework import NodeInfo, PodInfo
from gpusim.scheduler.frag import (Q1_LACK_BOTH, Q2_LACK_GPU, Q3_SATISFIED, Q4_LACK_CPU, XL_SATISFIED, XR_LACK_CPU,
                                   NO_ACCESS, TargetPod, get_typical_pods, gpu_frag_milli, node_frag_score,
                                   node_gpu_share_frag_amount, node_pod_frag)
from gpusim.scheduler.gpushare import (NodeResource as N, PodResource as P, allocate_gpu_id_best_fit,
                                       allocate_gpu_id_random_fit, allocate_gpu_id_worst_fit, gpu_node_allocate,
                                       is_node_accessible_to_pod_by_type, node_resource, pod_resource)
from gpusim.scheduler.plugins import (bestfitscore, dotproductscore, fgdscore, gpuclusteringscore, gpupackingscore,
                                      opengpushare)
from gpusim.replay import alibaba


def T(cpu, milli, n, typ, pct):
    return TargetPod(P(cpu, milli, n, typ), pct / 100)


# frag_test.go TestingGenerateGetTypicalPods
TYPICAL = [T(6000, 465, 1, "", 9.33), T(8000, 440, 1, "2080", 9.15), T(8000, 475, 1, "T4", 8.76),
           T(8000, 440, 1, "P100", 8.72), T(2000, 465, 1, "", 8.68), T(12000, 900, 1, "", 8.65),
           T(4000, 900, 1, "", 8.43), T(16000, 678, 1, "T4", 8.36), T(8000, 500, 1, "", 8.29),
           T(6000, 511, 1, "", 8.11), T(14000, 1000, 2, "2080", 0.54), T(4000, 1000, 1, "2080", 0.43),
           T(32000, 1000, 2, "T4", 0.43), T(16000, 1000, 1, "V100M16", 0.40), T(64000, 1000, 2, "", 0.40),
           T(10000, 1000, 2, "", 0.40), T(11400, 1000, 1, "T4", 0.36), T(16000, 1000, 1, "T4", 0.36),
           T(4000, 1000, 2, "", 0.36), T(14000, 1000, 2, "V100M16", 0.36), T(8000, 1000, 4, "", 0.36),
           T(16000, 1000, 2, "", 0.32), T(2000, 1000, 1, "T4", 0.32), T(6000, 1000, 1, "", 0.32),
           T(4000, 1000, 1, "", 0.32), T(5000, 1000, 1, "", 0.32), T(32000, 1000, 4, "V100M16", 0.32),
           T(32000, 1000, 2, "", 0.32), T(24000, 1000, 8, "2080", 0.32), T(40000, 1000, 4, "", 0.29),
           T(32000, 1000, 8, "", 0.29), T(32000, 1000, 1, "T4", 0.29), T(16000, 1000, 1, "", 0.25),
           T(7000, 1000, 1, "V100M16", 0.25), T(24000, 1000, 1, "T4", 0.25)]
# frag_test.go TestingGenerateGetTypicalPodsWithNonGpu
TYPICAL_NON_GPU = [T(15700, 1000, 1, "", 28.69), T(11900, 1000, 1, "", 18.93), T(11400, 1000, 1, "", 12.27),
                   T(1000, 0, 0, "", 7.36), T(18710, 1000, 1, "", 4.85), T(8200, 1000, 1, "", 3.79),
                   T(16400, 1000, 1, "", 3.31), T(9810, 1000, 1, "", 1.97), T(15200, 1000, 1, "", 1.87),
                   T(11200, 1000, 1, "", 1.81), T(14200, 1000, 1, "", 1.76), T(12000, 0, 0, "", 1.65),
                   T(14900, 1000, 1, "", 1.39), T(60200, 1000, 4, "", 1.23), T(64200, 1000, 8, "", 1.07),
                   T(32200, 1000, 4, "", 1.01), T(17400, 1000, 2, "", 0.91), T(30200, 1000, 2, "", 0.69),
                   T(16000, 1000, 1, "", 0.64), T(15000, 1000, 1, "", 0.59), T(64000, 1000, 8, "", 0.53),
                   T(15000, 0, 0, "", 0.53), T(11910, 1000, 1, "", 0.53), T(120200, 1000, 8, "", 0.48),
                   T(11300, 1000, 1, "", 0.37), T(30000, 1000, 2, "", 0.32), T(9800, 1000, 1, "", 0.32),
                   T(8000, 1000, 1, "", 0.32), T(2000, 1000, 1, "", 0.27), T(2000, 80, 1, "", 0.27),
                   T(1000, 1000, 1, "", 0.27)]


def node(cpu, gpus, typ="1080", cap=64000, name="n"):
    return N(name, cpu, cap, list(gpus), len(gpus), typ)


@pytest.mark.parametrize("name, cpu, gpus, typical, want", [
    ("4x1080_used", 1000, [200, 1000, 1000, 500], TYPICAL, 2566.62),
    ("4x1080_full", 1000, [1000] * 4, TYPICAL, 3802.40),
    ("8x1080_full", 1000, [1000] * 8, TYPICAL, 7604.80),
    ("4x1080_used_lack_CPU", 1000, [200, 1000, 1000, 500], [T(6000, 465, 1, "", 9.33)], 251.91),
    ("8xP100_empty", 64000, [1000] * 8, TYPICAL_NON_GPU, 887.20),
    ("8xP100_halved", 32000, [1000] * 4 + [0] * 4, TYPICAL_NON_GPU, 554.4),
    ("8xP100_nocpu", 0, [1000] * 4 + [0] * 4, TYPICAL_NON_GPU, 4000),
])
def test_node_gpu_share_frag_amount_score(name, cpu, gpus, typical, want):
    """frag_test.go TestNodeGpuShareFragAmountScore / TestNodeGpuShareFragAmountWithNonGpu."""
    typ = "P100" if name.startswith("8xP100") else "1080"
    n = node(cpu, gpus, typ)
    assert node_frag_score(n, typical) == pytest.approx(want, abs=0.01)
    buckets = node_gpu_share_frag_amount(n, typical)
    assert sum(buckets) - buckets[2] == pytest.approx(want, abs=0.01)   # FragAmountSumExceptQ3
    assert sum(buckets) == pytest.approx(sum(gpus) * sum(t.percentage for t in typical), abs=1e-6)


@pytest.mark.parametrize("gpus, pod, want", [
    ([200, 1000, 1000, 500], P(100, 1000, 2, "1080"), 700),
    ([1000] * 4, P(100, 1000, 2, "1080"), 0),
    ([1000] * 8, P(100, 1000, 2, "1080"), 0),
    ([200, 1000, 1000, 500], P(100, 200, 2, "1080"), 0),
])
def test_gpu_frag_milli(gpus, pod, want):
    """frag_test.go TestGetGpuFragMilliByNodeResAndPodRes."""
    assert gpu_frag_milli(node(1000, gpus), pod) == want


@pytest.mark.parametrize("cpu, gpus, typ, pod, want", [
    (1000, [200, 1000, 1000, 500], "1080", P(6000, 465, 1, ""), Q4_LACK_CPU),   # frag_test.go
    (8000, [200, 1000, 1000, 500], "1080", P(6000, 465, 1, ""), Q3_SATISFIED),
    (8000, [200, 300], "1080", P(6000, 465, 1, ""), Q2_LACK_GPU),
    (1000, [200, 300], "1080", P(6000, 465, 1, ""), Q1_LACK_BOTH),
    (8000, [1000], "1080", P(6000, 0, 0, ""), XL_SATISFIED),
    (1000, [1000], "1080", P(6000, 0, 0, ""), XR_LACK_CPU),
    (8000, [1000], "1080", P(6000, 500, 1, "T4"), NO_ACCESS),
    (8000, [1000, 1000], "T4", P(6000, 1000, 2, "V100M16|T4"), Q3_SATISFIED),
])
def test_node_pod_frag(cpu, gpus, typ, pod, want):
    """GetNodePodFrag's quadrants."""
    assert node_pod_frag(node(cpu, gpus, typ), pod) == want


@pytest.mark.parametrize("cpu, gpus, typ, want", [
    (1000, [200, 600, 350, 0], "1080", (1000, (600, 350, 200, 0, 0, 0, 0, 0), "1080")),
    (300, [0, 0, 0, 0], "", (300, (0,) * 8, "")),
    (65535, [1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000], "",
     (65535, (9000, 8000, 7000, 6000, 5000, 4000, 3000, 2000), "")),
])
def test_node_resource_flatten(cpu, gpus, typ, want):
    """resource_test.go TestNodeResource_Flatten."""
    assert node(cpu, gpus, typ).flatten() == want


def test_node_resource_sub():
    """resource_test.go TestNodeResource_Sub: whole GPUs come from the least free ones that fit."""
    out, ok = N("Hello", 1000, 96000, [200, 1000, 1000, 500], 4, "1080").sub(P(100, 1000, 2, "1080"))
    assert ok and out == N("Hello", 900, 96000, [200, 0, 0, 500], 4, "1080")


@pytest.mark.parametrize("gpus, pod, want", [
    ([200, 1000, 1000, 500], P(100, 1000, 2, "1080"), 48),    # case 2
    ([1000] * 4, P(100, 1000, 2, "1080"), 29),                # case 3, 4 GPUs
    ([1000] * 8, P(100, 1000, 2, "1080"), 25),                # case 3, 8 GPUs
    ([200, 1000, 1000, 500], P(100, 200, 2, "1080"), 93),     # case 1: only shared GPUs
])
def test_gpu_packing_score(gpus, pod, want):
    """gpu_packing_score_test.go TestGpuPackingScorePlugin_Score (and the node's GPU order is untouched)."""
    n = N("Hello", 1000, 96000, list(gpus), len(gpus), "1080")
    assert gpupackingscore.packing_score(n, pod) == want
    assert n.milli_gpu_left_list == gpus


@pytest.mark.parametrize("node_type, pod_type, ok", [
    ("T4", "", True), ("", "", True), ("", "T4", False), ("T4", "T4", True), ("T4", "V100M16|T4", True),
    ("G2", "V100M16|V100M32", False), ("T4", "|", True),
])
def test_is_node_accessible_to_pod_by_type(node_type, pod_type, ok):
    assert is_node_accessible_to_pod_by_type(node_type, pod_type) is ok


@pytest.mark.parametrize("gpus, pod, want", [
    ([1000, 300, 600], P(1000, 250, 1), "1"),          # the tightest fit
    ([1000, 600, 600], P(1000, 500, 1), "1"),          # the lowest index among equals
    ([1000, 1000, 200], P(1000, 1000, 1), "0"),
    ([400, 400], P(1000, 500, 1), None),
    ([1000, 0, 1000, 1000], P(1000, 1000, 2), "0-2"),  # multi-GPU: greedy in index order
    ([1000, 0, 1000], P(1000, 1000, 3), None),
    ([], P(1000, 500, 1), None),
])
def test_allocate_gpu_id_filter(gpus, pod, want):
    """gpunodeinfo.go AllocateGpuId: whether (and where) the Filter sees room."""
    assert gpu_node_allocate(node(8000, gpus), pod) == want


def test_gpu_selection_methods():
    """open_gpu_share.go allocateGpuIdBasedOn{BestFit,WorstFit,RandomFit}; whole-GPU pods take free GPUs."""
    n = node(8000, [700, 1000, 300, 700])
    share, whole = P(1000, 250, 1), P(1000, 1000, 2)
    assert allocate_gpu_id_best_fit(n, share) == "2" and allocate_gpu_id_worst_fit(n, share) == "1"
    assert allocate_gpu_id_best_fit(n, whole) == allocate_gpu_id_worst_fit(n, whole) == ""   # one free GPU only
    seen = {allocate_gpu_id_random_fit(n, share, random.Random(s)) for s in range(40)}
    assert seen == {"0", "1", "2", "3"}
    assert allocate_gpu_id_random_fit(node(8000, [100, 1000]), P(1000, 500, 1), random.Random(0)) == "1"


@pytest.mark.parametrize("cpu_left, gpus, pod, norm, want", [
    # int(100 × (1 − (cpu_left/128000 · c/128000 + free/8000 · g/8000) / 2))
    (96000, [1000] * 8, P(12000, 1000, 1), "max", 90),     # (0.0703 + 0.125)/2 → 90.2
    (96000, [1000] * 8, P(12000, 1000, 8), "max", 46),     # (0.0703 + 1)/2 → 46.5
    (4000, [500], P(3152, 810, 1), "max", 99),
    (2000, [1000] * 8, P(3152, 810, 1), "max", 0),         # too little CPU: no match group
    (64000, [1000, 1000], P(16000, 1000, 2), "node", 37),  # by the node's capacity: (0.25 + 1)/2
    (64000, [1000, 1000], P(16000, 1000, 2), "pod", 75),   # by the pod: 1 − tanh(((4 + 1)/2)/10)
])
def test_dot_product_score(cpu_left, gpus, pod, norm, want):
    n = N("n", cpu_left, 64000 if norm == "node" else 96000, list(gpus), len(gpus), "G2")
    assert dotproductscore.dot_product_score(n, pod, norm) == want


@pytest.mark.parametrize("free, affinity, tag, want", [
    (8000, {}, "share-gpu", 25),                         # idle node: (25, 50]
    (4000, {"share-gpu": 3}, "share-gpu", 87),           # only the same class: 12 + 75
    (4000, {"share-gpu": 3, "1-gpu": 1}, "share-gpu", 62),
    (4000, {"1-gpu": 4}, "share-gpu", 12),               # only other classes: (0, 25]
    (1000, {"2-gpu": 1}, "2-gpu", 96),                   # a 2-GPU node looks busy against 8000
    (8000, {}, "no-gpu", 0),
])
def test_gpu_clustering_score(free, affinity, tag, want):
    n = N("n", 8000, 96000, [free], 8, "G2", affinity)
    assert gpuclusteringscore.clustering_score(n, tag) == want


@pytest.mark.parametrize("cpu_left, free, pod, want", [
    (96000, 8000, P(12000, 1000, 1), 23),     # 100 × (1 − (84000/128000·0.5 + 7000/8000·0.5)) = 23.4
    (12000, 1000, P(12000, 1000, 1), 100),    # nothing left over
    (12000, 500, P(12000, 1000, 1), 0),       # a negative leftover: upstream's error case
])
def test_best_fit_score(cpu_left, free, pod, want):
    assert bestfitscore.best_fit_score(N("n", cpu_left, 96000, [free], 1, "G2"), pod) == want


def test_best_fit_normalize():
    """plugin_utils.go NormalizeScore: min–max onto 0..100, all 0 when equal."""
    assert bestfitscore.normalize_scores({"a": 20, "b": 30, "c": 60}) == {"a": 0, "b": 25, "c": 100}
    assert bestfitscore.normalize_scores({"a": 7, "b": 7}) == {"a": 0, "b": 0}


@pytest.mark.parametrize("before, after, want", [
    (1000.0, 1000.0, 50),      # unchanged fragmentation scores 50
    (1000.0, 0.0, 73),         # 100·sigmoid(1) = 73.1
    (0.0, 1000.0, 26),         # 100·sigmoid(−1) = 26.9
    (8000.0, 0.0, 99),
])
def test_fgd_frag_score(before, after, want):
    assert fgdscore.frag_score(before, after) == want


def test_fgd_prefers_the_gpu_that_fragments_least():
    """A 0.5-GPU pod: on a GPU with 500 free it strands nothing (fragmentation falls), on a fresh GPU it
    leaves 500 that tasks of 0.6 GPU cannot use."""
    typical = [T(1000, 600, 1, "", 50), T(1000, 500, 1, "", 50)]
    n = node(8000, [1000, 500])
    score, gpu = fgdscore.calculate_gpu_share_frag_extend_score(n, P(1000, 500, 1), typical)
    assert gpu == "1"
    assert score == fgdscore.frag_score(node_frag_score(n, typical), node_frag_score(node(7000, [1000, 0]), typical))
    assert fgdscore.allocate_gpu_id(n, P(1000, 1000, 1), typical) == "0"


def test_typical_pods_of_the_default_trace():
    """GetTypicalPods with the experiments' config keeps 35 of 91 shapes (95.3 % of pods); the most
    popular is 3152m CPU + 0.81 GPU (12.8 %) and the CPU-only shapes make up 13.6 % of the target."""
    rows = alibaba.read_pods("default")
    typical = get_typical_pods(r.resource() for r in rows)
    assert len(typical) == 35 and len({r.resource() for r in rows}) == 91
    assert sum(t.percentage for t in typical) == pytest.approx(1.0)
    top = typical[0]
    assert top.resource == P(3152, 810, 1, "")
    assert sum(r.resource() == top.resource for r in rows) / len(rows) == pytest.approx(0.128, abs=0.001)
    cpu_only = sum(t.percentage for t in typical if t.resource.milli_gpu == 0)
    assert cpu_only == pytest.approx(0.136, abs=0.002)
    assert [t.percentage for t in typical] == sorted((t.percentage for t in typical), reverse=True)


def test_pod_and_node_resources_from_objects():
    """GetPodResource / GetNodeResourceViaNodeInfo on the objects the loader builds, with a reserved pod."""
    row = alibaba.PodRow("p", 3152, 4096, 1, 810, "G2|T4")
    pod = alibaba.pod_object(row)
    assert pod_resource(pod) == row.resource() == P(3152, 810, 1, "G2|T4")
    ni = NodeInfo(alibaba.node_object(alibaba.NodeRow("n", 96000, 393216, 8, "G2")))
    pod.metadata.annotations["alibabacloud.com/gpu-index"] = "3"
    ni.add_pod(PodInfo(pod))
    res = node_resource(ni)
    assert res.milli_cpu_left == 96000 - 3152 and res.milli_gpu_left_list == [1000] * 3 + [190] + [1000] * 4
    assert res.gpu_type == "G2" and res.gpu_affinity == {"share-gpu": 1} and res.gpu_number == 8
    assert node_resource(ni, exclude=pod.metadata.uid).milli_gpu_left_list == [1000] * 8


def test_open_gpu_share_rejects_an_unknown_gpu_sel_method():
    with pytest.raises(ValueError, match='gpuSelMethod: Unsupported value: "tightest"'):
        opengpushare.new({"gpuSelMethod": "tightest"})


SCENARIO = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  percentageOfNodesToScore: 100
  plugins:
    filter: {enabled: [{name: Open-Gpu-Share}]}
    reserve: {enabled: [{name: Open-Gpu-Share}]}
    score: {disabled: [{name: "*"}], enabled: [{name: FGDScore}]}
  pluginConfig:
  - name: Open-Gpu-Share
    args: {gpuSelMethod: FGDScore}
  - name: FGDScore
    args:
      typicalPods:
      - {milliCpu: 1000, milliGpu: 600, gpuNumber: 1, percentage: 0.5}
      - {milliCpu: 1000, milliGpu: 500, gpuNumber: 1, percentage: 0.5}
""" + "".join(f"""---
apiVersion: v1
kind: Node
metadata: {{name: {n}, labels: {{alibabacloud.com/gpu-card-model: T4}}}}
status:
  capacity: &c {{cpu: "8", memory: 32Gi, pods: "110", alibabacloud.com/gpu-count: "1", alibabacloud.com/gpu-milli: "1000"}}
  allocatable: *c
""" for n in ("a", "b")) + "".join(f"""---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  annotations: {{alibabacloud.com/gpu-milli: "{milli}", alibabacloud.com/gpu-count: "1", gpusim.io/submit-at: {at}s}}
spec:
  restartPolicy: Never
  containers: [{{name: main, image: x, resources: {{requests: {{cpu: "1", memory: 1Gi}}}}}}]
""" for name, milli, at in (("half-1", 500, 0), ("half-2", 500, 1), ("whole", 1000, 2), ("third", 500, 3)))


def test_fgd_profile_in_a_simulation():
    """Enabled through a KubeSchedulerConfiguration like any plugin: the second half-GPU pod joins the
    first (fragmentation falls: 56 against 43 on the empty GPU), the whole-GPU pod takes the other node,
    and a fourth pod finds no room — Open-Gpu-Share's reason is "Node:<name>"."""
    import gpusim as gs
    r = gs.run(text=SCENARIO)
    placed = {p: r.pod(p).spec.node_name for p in ("half-1", "half-2", "whole", "third")}
    assert placed["half-1"] == placed["half-2"] != placed["whole"] and placed["third"] == ""
    assert {p: r.pod(p).metadata.annotations.get("alibabacloud.com/gpu-index") for p in placed} == \
        {"half-1": "0", "half-2": "0", "whole": "0", "third": None}
    second = next(a for a in r.scheduler.attempts if a.pod == "default/half-2")
    assert sorted(s["FGDScore"][0] for s in second.scores.values()) == [43, 56]
    msg = next(e.message for e in r.events.log if e.reason == "FailedScheduling")
    assert msg == ("0/2 nodes are available: 1 Node:a, 1 Node:b. no new claims to deallocate, preemption: 0/2 nodes are available: "
                   "2 No preemption victims found for incoming pod.")


@pytest.mark.parametrize("vectorize", [False, True])
def test_one_shot_scheduler_enforces_memory_and_gpu_type(vectorize):
    """NodeResourcesFit still checks memory next to Open-Gpu-Share: a pod asking for more RAM than the
    node has is dropped even though a GPU is free; a GPU-type constraint keeps pods off other models."""
    from gpusim.api.kubescheduler_config_v1 import KubeSchedulerConfiguration
    from gpusim.api.schema import decode
    from gpusim.replay import protocol
    from gpusim.replay.engine import OneShotScheduler
    nodes = [alibaba.node_object(alibaba.NodeRow("p100", 16000, 32 * 1024, 2, "P100")),
             alibaba.node_object(alibaba.NodeRow("t4", 16000, 32 * 1024, 2, "T4"))]
    cfg = decode(KubeSchedulerConfiguration, protocol.scheduler_config(protocol.policy("BestFit")), "c")
    s = OneShotScheduler(nodes, cfg, [T(1000, 500, 1, "", 100)], random.Random(0), vectorize=vectorize)
    big = alibaba.pod_object(alibaba.PodRow("big", 1000, 40 * 1024, 1, 500, ""))
    t4 = alibaba.pod_object(alibaba.PodRow("t4-only", 1000, 1024, 2, 1000, "T4"))
    more = alibaba.pod_object(alibaba.PodRow("more-t4", 1000, 1024, 1, 1000, "T4"))
    p100 = alibaba.pod_object(alibaba.PodRow("any", 1000, 20 * 1024, 1, 700, ""))
    assert [s.schedule(p) for p in (big, t4, more, p100)] == [None, "t4", None, "p100"]
    assert p100.metadata.annotations["alibabacloud.com/gpu-index"] == "0"
    assert "alibabacloud.com/gpu-index" not in big.metadata.annotations
