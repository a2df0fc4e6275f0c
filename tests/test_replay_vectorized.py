"""The vectorised GPU-sharing path (gpusim/scheduler/vectorized_gpushare.py) decides exactly like the
per-node plugins: the same feasible nodes in the same order, the same total score on every one of them,
the same node, the same GPUs (Open-Gpu-Share's gpu-index) and the same later state, for every policy."""
from __future__ import annotations

import random

from hypothesis import given, settings, strategies as st

from gpusim.api.kubescheduler_config_v1 import KubeSchedulerConfiguration
from gpusim.api.schema import decode
from gpusim.replay import alibaba, protocol
from gpusim.replay.engine import OneShotScheduler
from gpusim.scheduler.frag import get_typical_pods, node_frag_score
from gpusim.scheduler.gpushare import DEVICE_INDEX, node_resource

MODELS = ["G2", "T4", "P100", "V100M16"]
SPECS = ["", "", "", "T4", "G2|P100", "V100M16|T4"]
MILLIS = [50, 230, 320, 470, 500, 650, 810, 1000]


@st.composite
def clusters(draw):
    nodes = []
    for i in range(draw(st.integers(2, 14))):
        gpu = draw(st.sampled_from([0, 1, 2, 4, 8]))
        nodes.append(alibaba.NodeRow(f"n{i:02d}", draw(st.sampled_from([8000, 16000, 32000, 96000])),
                                     draw(st.sampled_from([60 * 1024, 256 * 1024])), gpu, draw(st.sampled_from(MODELS))))
    pods = []
    for j in range(draw(st.integers(1, 70))):
        kind = draw(st.sampled_from(["cpu", "share", "share", "whole", "multi", "odd"]))
        n = {"cpu": 0, "share": 1, "whole": 1}.get(kind, 0) or draw(st.sampled_from([2, 4, 8])) if kind != "cpu" else 0
        # "odd": GPUs asked for with 0 milli-GPU (the loader keeps such a row as a CPU-only request)
        milli = {"share": draw(st.sampled_from(MILLIS[:-1])), "cpu": 0, "odd": 0}.get(kind, 1000)
        pods.append(alibaba.PodRow(f"p{j:03d}", draw(st.sampled_from([1000, 3152, 6000, 12000, 30000])),
                                   draw(st.sampled_from([0, 4096, 30000, 100000])), n, milli,
                                   draw(st.sampled_from(SPECS)) if n else ""))
    return nodes, pods


def attempts(nodes, pods, policy, vectorize, tie_break, seed, norm):
    p = protocol.policy(policy)
    cfg = protocol.scheduler_config(p)
    if norm and p.name == "DotProd":
        cfg["profiles"][0]["pluginConfig"][1]["args"]["normMethod"] = norm
    typical = get_typical_pods(r.resource() for r in pods)
    rng = random.Random(seed)
    s = OneShotScheduler([alibaba.node_object(r) for r in nodes],
                         decode(KubeSchedulerConfiguration, cfg, "config"), typical, rng, vectorize=vectorize,
                         keep_attempts=True, tie_break=tie_break)
    objs = [alibaba.pod_object(r) for r in pods]
    for o in objs:
        s.schedule(o)
    s.table.refresh()
    # the table's F_n(M) per node (numpy, summed row after row) is node_frag_score's float to the last bit
    assert s.table.frag.tolist() == [node_frag_score(node_resource(ni), typical) for ni in s.table.infos]
    return ([(a.node, a.feasible, a.scores, a.vectorized) for a in s.attempts],
            [o.metadata.annotations.get(DEVICE_INDEX) for o in objs], s.table.frag.tolist(), rng.random())


@settings(max_examples=80, deadline=None)
@given(clusters(), st.sampled_from(list(protocol.POLICIES)), st.sampled_from(["name", "random"]),
       st.integers(0, 3), st.sampled_from([None, "node", "pod"]))
def test_vectorised_path_decides_like_the_per_node_path(cluster, policy, tie_break, seed, norm):
    nodes, pods = cluster
    per_node = attempts(nodes, pods, policy, False, tie_break, seed, norm)
    vectorised = attempts(nodes, pods, policy, True, tie_break, seed, norm)
    assert all(v for *_, v in vectorised[0]) and not any(v for *_, v in per_node[0])
    strip = lambda r: ([a[:3] for a in r[0]], *r[1:])   # noqa: E731
    assert strip(vectorised) == strip(per_node)
