"""GpuPackingScore: prefer shared GPUs, then used nodes, then idle nodes (mirrors
hkust-adsl/kubernetes-scheduler-simulator pkg/simulator/plugin/gpu_packing_score.go ``getPackingScore``).

Candidate GPUs are taken least-free first. (1) If the pod fits on already-shared GPUs only:
max(100 − Σ(free % of those GPUs)/10, 50). (2) Else, on a partly used node: max(50 − fully free GPUs
consumed, 33). (3) On a fully idle node: max(33 − its GPU count, its GPU count). A pod without GPUs
scores 0 everywhere.
"""
from __future__ import annotations

from typing import Any, Optional

from ..framework import MAX_NODE_SCORE, MIN_NODE_SCORE
from ..gpushare import MILLI, NodeResource, PodResource, node_resource, pod_resource

NAME = "GpuPackingScore"   # simontype.GpuPackingScorePluginName


def packing_score(node: NodeResource, pod: PodResource) -> int:
    """getPackingScore (MinNodeScore where upstream reports an allocation error)."""
    free = node.fully_free_gpu_num()
    if free == node.gpu_number:                                   # case 3
        return max(MAX_NODE_SCORE // 3 - free, free)
    want, free_used, used = pod.gpu_number, 0, []
    for i in node.sorted_milli_gpu_left_index_list(True):
        if want == 0:
            break
        g = node.milli_gpu_left_list[i]
        if pod.milli_gpu <= g:
            want -= 1
            used.append(i)
            if g == MILLI:
                free_used += 1
    if want != 0:
        return MIN_NODE_SCORE
    if free_used > 0:                                             # case 2
        return max(MAX_NODE_SCORE // 2 - free_used, MAX_NODE_SCORE // 3)
    ratio = sum(node.milli_gpu_left_list[i] * 100 // MILLI for i in used)   # case 1
    return max(MAX_NODE_SCORE - ratio // 10, MAX_NODE_SCORE // 2)


class GpuPackingScore:
    name = NAME

    def __init__(self, args: Optional[dict] = None, handle: Any = None):
        pass

    def score(self, state, pi, ni) -> int:
        pod = pod_resource(pi.pod)
        if pod.milli_gpu <= 0:
            return MIN_NODE_SCORE
        return packing_score(node_resource(ni), pod)


def new(args=None, handle=None) -> GpuPackingScore:
    return GpuPackingScore(args, handle)
