"""Volcano's binpack plugin against its own test file: volcano-sh/volcano
pkg/scheduler/plugins/binpack/binpack_test.go (master @ 00561f9), TestArguments and TestNode (both cases, all
12 task × node scores each), through the plugin's weights() and score() with the cache's units (cpu in
millicores, memory in bytes; used = the pods bound to the node: p1 on n1, p2 on n3)."""
from __future__ import annotations

import pytest

from gpusim.volcano.plugins.binpack import score, weights

GI = 2**30
GPU, FOO = "nvidia.com/gpu", "example.com/foo"
PODS = {"c1/p1": {"cpu": 1000, "memory": GI}, "c1/p2": {"cpu": 1500, "memory": 0},
        "c1/p3": {"cpu": 2000, "memory": 10 * GI, GPU: 2}, "c1/p4": {"cpu": 3000, "memory": 4 * GI, FOO: 3}}
NODES = {"n1": {"cpu": 2000, "memory": 4 * GI}, "n2": {"cpu": 4000, "memory": 16 * GI, GPU: 4},
         "n3": {"cpu": 2000, "memory": 4 * GI, FOO: 16}}
USED = {"n1": PODS["c1/p1"], "n2": {}, "n3": PODS["c1/p2"]}


def test_arguments():
    w, res = weights({"binpack.weight": 10, "binpack.cpu": 5, "binpack.memory": 2,
                      "binpack.resources": "nvidia.com/gpu, example.com/foo", "binpack.resources.nvidia.com/gpu": 7,
                      "binpack.resources.example.com/foo": -3})
    assert w == 10 and res == {"cpu": 5, "memory": 2, GPU: 7, FOO: 1}


CASE1 = ({"binpack.weight": 10, "binpack.cpu": 2, "binpack.memory": 3, "binpack.resources": "nvidia.com/gpu, example.com/foo",
          "binpack.resources.nvidia.com/gpu": 7, "binpack.resources.example.com/foo": 8},
         {"c1/p1": {"n1": 700, "n2": 137.5, "n3": 150}, "c1/p2": {"n1": 0, "n2": 375, "n3": 0},
          "c1/p3": {"n1": 0, "n2": 531.25, "n3": 0}, "c1/p4": {"n1": 0, "n2": 173.076923076, "n3": 346.153846153}})
CASE2 = ({"binpack.weight": 1, "binpack.cpu": 1, "binpack.memory": 1, "binpack.resources": "nvidia.com/gpu",
          "binpack.resources.nvidia.com/gpu": 23},
         {"c1/p1": {"n1": 75, "n2": 15.625, "n3": 12.5}, "c1/p2": {"n1": 0, "n2": 37.5, "n3": 0},
          "c1/p3": {"n1": 0, "n2": 50.5, "n3": 0}, "c1/p4": {"n1": 0, "n2": 50, "n3": 50}})


@pytest.mark.parametrize("args, want", [CASE1, CASE2], ids=["single job (weights 10/2/3/7/8)",
                                                           "single job (gpu weight 23)"])
def test_node(args, want):
    w, res = weights(args)
    got = {t: {n: score(PODS[t], NODES[n], USED[n], w, res) for n in NODES} for t in PODS}
    for t in PODS:
        assert got[t] == pytest.approx(want[t], abs=1e-8), t
