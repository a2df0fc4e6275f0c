"""DotProductScore: Tetris-style packing by the dot product of the node's free resources and the pod's
request (mirrors hkust-adsl/kubernetes-scheduler-simulator pkg/simulator/plugin/dot_product_score.go
``calculateDotProductScore`` with pkg/utils/utils.go ``GenerateSchedulingMatchGroups``).

With ``dimExtMethod: merge`` (the paper's DotProd): node vector (CPU left, total free milli-GPU), pod
vector (CPU request, milli-GPU × GPU count), both divided by ``normMethod``'s scale — ``max`` (default:
128000 milli-CPU and 8000 milli-GPU, the largest node), ``node`` (the node's capacity) or ``pod`` (the
pod's request, then tanh(x/10)). Score = int(100 × (1 − dot/2)): a *smaller* dot product scores higher,
which leans toward packing. A node with too little CPU scores 0. The GPUs inside the node come from
Open-Gpu-Share's ``gpuSelMethod`` (``best`` in the paper).
"""
from __future__ import annotations

import math
from typing import Any, Optional

from ..framework import MAX_NODE_SCORE, MIN_NODE_SCORE
from ..gpushare import MAX_SPEC_CPU, MAX_SPEC_GPU, MILLI, NodeResource, PodResource, node_resource, pod_resource

NAME = "DotProductScore"   # simontype.DotProductScorePluginName
MERGE = "merge"            # simontype.MergeGpuDim
NORM_NODE, NORM_POD, NORM_MAX = "node", "pod", "max"   # simontype.NormByNode, NormByPod, NormByMax
NORM_METHODS = (NORM_NODE, NORM_POD, NORM_MAX)


def _normalize(vec: list[float], norm: list[float]) -> list[float]:
    """NormalizeVector: divide by the scale, 0 where the scale is 0."""
    return [v / s if s > 0 else 0.0 for v, s in zip(vec, norm)]


def dot_product_score(node: NodeResource, pod: PodResource, norm_method: str = NORM_MAX) -> int:
    """calculateDotProductScore for the merged GPU dimension."""
    if node.milli_cpu_left < pod.milli_cpu:     # ToVirtualNodeResourceList: no match group
        return MIN_NODE_SCORE
    node_vec = [float(node.milli_cpu_left), float(node.total_milli_gpu_left())]
    pod_vec = [float(pod.milli_cpu), float(pod.milli_gpu * pod.gpu_number)]
    if norm_method == NORM_NODE:
        scale = [float(node.milli_cpu_capacity), float(node.gpu_number * MILLI)]
    elif norm_method == NORM_POD:
        scale = list(pod_vec)
    else:
        scale = [float(MAX_SPEC_CPU), float(MAX_SPEC_GPU)]
    node_vec, pod_vec = _normalize(node_vec, scale), _normalize(pod_vec, scale)
    dot = 0.0
    for a, b in zip(node_vec, pod_vec):
        dot += a * b
    cur = dot / len(pod_vec)
    if norm_method == NORM_POD:
        cur = math.tanh(cur / 10)
    cur = 1 - cur
    return int(float(MAX_NODE_SCORE) * cur)


class DotProductScore:
    name = NAME

    def __init__(self, args: Optional[dict] = None, handle: Any = None):
        args = args or {}
        dim = args.get("dimExtMethod") or MERGE
        if dim != MERGE:
            raise ValueError(f'{NAME}: dimExtMethod: Unsupported value: "{dim}": supported values: "{MERGE}"')
        self.norm_method = args.get("normMethod") or NORM_MAX
        if self.norm_method not in NORM_METHODS:
            raise ValueError(f'{NAME}: normMethod: Unsupported value: "{self.norm_method}": supported values: '
                             + ", ".join(f'"{m}"' for m in NORM_METHODS))

    def score(self, state, pi, ni) -> int:
        return dot_product_score(node_resource(ni), pod_resource(pi.pod), self.norm_method)


def new(args=None, handle=None) -> DotProductScore:
    return DotProductScore(args, handle)
