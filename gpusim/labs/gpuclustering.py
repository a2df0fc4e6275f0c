"""GPUClustering: an out-of-tree Score plugin that keeps pods of one GPU size together (mirrors
hkust-adsl/kubernetes-scheduler-simulator ``pkg/simulator/plugin/gpu_clustering_score.go`` @ b6567da,
the "GPU Clustering" baseline of the FGD paper, USENIX ATC '23), for whole GPUs.

The idea is a hotel that gives each tour group its own floor: pods are grouped into *classes* by how
many GPUs they ask for (1, 2, 4, 8; upstream also has a ``share-gpu`` class for fractional GPUs, which
kube-scheduler's integer ``nvidia.com/gpu`` cannot express), and a node scores in one of four bands of
25 points:

=========  ========================================================
(75, 100]  the node hosts pods of this class only
(50, 75]   it hosts this class among others
(25, 50]   it hosts no GPU pod yet
[0, 25]    it hosts only other classes
=========  ========================================================

Within a band, a busier node scores higher: ``25 · (capacity − free) / capacity`` (integer division,
as upstream; upstream divides by the largest node shape in its trace, 8 GPUs, which is every node's
size here). A pod that asks for no GPU scores 0 everywhere. The plugin has no NormalizeScore
(``ScoreExtensions`` returns nil upstream).

Written the way in-tree plugins are (``NAME``, a pure :func:`score`, the plugin class, the factory
:func:`new`), and compiled into a scheduler the way scheduler-plugins are:
``gpusim.labs.outoftree.build(config, with_plugin(NAME, new))``.
"""
from __future__ import annotations

from ..api.core_v1 import NVIDIA_GPU
from ..scheduler.framework import MAX_NODE_SCORE, MIN_NODE_SCORE

NAME = "GPUClustering"
BAND = MAX_NODE_SCORE // 4


def score(want: int, free: int, capacity: int, classes: set[int]) -> int:
    """The node score for a pod of ``want`` GPUs on a node with ``free`` of ``capacity`` GPUs whose GPU
    pods belong to ``classes`` (their GPU counts)."""
    if want <= 0 or capacity <= 0:
        return MIN_NODE_SCORE
    busy = BAND * (capacity - free) // capacity
    if want in classes:
        return busy + (3 * BAND if len(classes) == 1 else 2 * BAND)
    return busy + (BAND if not classes else 0)


class GPUClustering:
    name = NAME

    def score(self, state, pi, ni) -> int:
        capacity = ni.allocatable.get(NVIDIA_GPU)
        classes = {p.requests.get(NVIDIA_GPU, 0) for p in ni.pods.values()} - {0}
        return score(pi.requests.get(NVIDIA_GPU, 0), capacity - ni.requested.get(NVIDIA_GPU), capacity, classes)


def new(args=None, handle=None) -> GPUClustering:
    """``NewGpuClusteringScorePlugin``: no arguments."""
    return GPUClustering()
