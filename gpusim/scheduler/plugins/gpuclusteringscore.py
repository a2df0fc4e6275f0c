"""GpuClusteringScore: keep pods of one GPU class together (mirrors hkust-adsl/kubernetes-scheduler-simulator
pkg/simulator/plugin/gpu_clustering_score.go).

A GPU pod's class is ``share-gpu`` or ``<n>-gpu``. Four tiers of 25 points: (75, 100] if the node hosts
only GPU pods of the pod's class, (50, 75] if it hosts that class among others, (25, 50] if it hosts no
GPU pod yet, (0, 25] if it hosts only other classes; within a tier, 25 × (8000 − free milli-GPU) / 8000
(integer division, always over 8000, so small nodes look busy). A pod without GPUs scores 0 everywhere.
"""
from __future__ import annotations

from typing import Any, Optional

from ..framework import MAX_NODE_SCORE, MIN_NODE_SCORE
from ..gpushare import MAX_SPEC_GPU, NO_GPU_TAG, NodeResource, gpu_affinity_of, node_resource, pod_resource

NAME = "GpuClusteringScore"   # simontype.GpuClusteringScorePluginName


def clustering_score(node: NodeResource, pod_affinity: str) -> int:
    if pod_affinity == NO_GPU_TAG:
        return MIN_NODE_SCORE
    busy = MAX_NODE_SCORE // 4 * (MAX_SPEC_GPU - node.total_milli_gpu_left()) // MAX_SPEC_GPU
    if node.gpu_affinity.get(pod_affinity, 0) > 0:
        return busy + (MAX_NODE_SCORE * 3 // 4 if len(node.gpu_affinity) == 1 else MAX_NODE_SCORE * 2 // 4)
    return busy + (MAX_NODE_SCORE // 4 if len(node.gpu_affinity) == 0 else 0)


class GpuClusteringScore:
    name = NAME

    def __init__(self, args: Optional[dict] = None, handle: Any = None):
        pass

    def score(self, state, pi, ni) -> int:
        pod = pod_resource(pi.pod)
        return clustering_score(node_resource(ni), gpu_affinity_of(pod.milli_gpu, pod.gpu_number))


def new(args=None, handle=None) -> GpuClusteringScore:
    return GpuClusteringScore(args, handle)
