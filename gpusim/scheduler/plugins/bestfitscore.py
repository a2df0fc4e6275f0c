"""BestFitScore: the node with the least leftover CPU and GPU wins (mirrors
hkust-adsl/kubernetes-scheduler-simulator pkg/simulator/plugin/best_fit_score.go ``getBestFitScore`` and
plugin_utils.go ``NormalizeScore``).

Raw score = int(100 × (1 − [(CPU left − CPU request)/128000 × 0.5 + (free milli-GPU − milli-GPU
request)/8000 × 0.5])); NormalizeScore then maps the feasible nodes' raw scores min–max onto 0..100
(integer division; all 0 when they are equal).
"""
from __future__ import annotations

from typing import Any, Optional

from ..framework import MAX_NODE_SCORE, MIN_NODE_SCORE
from ..gpushare import MAX_SPEC_CPU, MAX_SPEC_GPU, NodeResource, PodResource, node_resource, pod_resource

NAME = "BestFitScore"   # simontype.BestFitScorePluginName
WEIGHTS = (0.5, 0.5)    # cpu, gpu


def best_fit_score(node: NodeResource, pod: PodResource) -> int:
    """getBestFitScore (MinNodeScore where upstream reports a negative leftover as an error)."""
    free = (float(node.milli_cpu_left), float(node.total_milli_gpu_left()))
    req = (float(pod.milli_cpu), float(pod.milli_gpu * pod.gpu_number))
    spec = (float(MAX_SPEC_CPU), float(MAX_SPEC_GPU))
    s = 0.0
    for f, r, m, w in zip(free, req, spec, WEIGHTS):
        if f < r:
            return MIN_NODE_SCORE
        s += (f - r) / m * w
    return int((1.0 - s) * float(MAX_NODE_SCORE))


def normalize_scores(scores: dict[str, int]) -> dict[str, int]:
    """NormalizeScore: min–max onto [MinNodeScore, MaxNodeScore]."""
    if not scores:
        return {}
    hi, lo = max(scores.values()), min(scores.values())
    span = hi - lo
    if span == 0:
        return {n: MIN_NODE_SCORE for n in scores}
    return {n: (s - lo) * (MAX_NODE_SCORE - MIN_NODE_SCORE) // span + MIN_NODE_SCORE for n, s in scores.items()}


class BestFitScore:
    name = NAME

    def __init__(self, args: Optional[dict] = None, handle: Any = None):
        pass

    def score(self, state, pi, ni) -> int:
        return best_fit_score(node_resource(ni), pod_resource(pi.pod))

    def normalize(self, state, pi, scores: dict[str, int]) -> dict[str, int]:
        return normalize_scores(scores)


def new(args=None, handle=None) -> BestFitScore:
    return BestFitScore(args, handle)
