"""FGDScore: Fragmentation Gradient Descent (mirrors hkust-adsl/kubernetes-scheduler-simulator
pkg/simulator/plugin/fgd_score.go ``calculateGpuShareFragExtendScore``; Weng et al., USENIX ATC '23).

Score = ⌊100 · sigmoid((F_n(M) before − F_n(M) after placing the pod) / 1000)⌋: the node whose
fragmentation against the target workload grows least (or shrinks most) wins, and an unchanged
fragmentation scores 50. A sharing pod tries every GPU that fits and keeps the best (the lowest index
among equals); that GPU is also the one Open-Gpu-Share reserves when ``gpuSelMethod: FGDScore``. Other
pods take whole free GPUs (``NodeResource.Sub``), or only CPU.

The target workload M ("typical pods") comes from the plugin args ``typicalPods`` (a list of
``{milliCpu, milliGpu, gpuNumber, gpuType, percentage}``), else from the handle's ``typical_pods`` (the
trace replay sets it from the original trace, as the simulator's ``SetTypicalPods``), else from the
Pods the apiserver holds when the plugin first scores, grouped by ``GetTypicalPods`` with
``typicalPodsConfig`` (default: CPU pods included, 95 %, step 1, as the paper's experiments).
"""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

from ..framework import MAX_NODE_SCORE, MIN_NODE_SCORE
from ..frag import (DEFAULT_POD_INCREASE_STEP, DEFAULT_POD_POPULARITY_THRESHOLD, TargetPod, get_typical_pods,
                    node_frag_score)
from ..gpushare import (MILLI, NodeResource, PodResource, allocate_exclusive_gpu_id, is_node_accessible_to_pod,
                        node_resource, pod_resource)

NAME = "FGDScore"   # simontype.FGDScorePluginName


def sigmoid(x: float) -> float:
    """plugin_utils.go sigmoid."""
    return 1.0 / (1.0 + math.exp(-x))


def frag_score(before: float, after: float) -> int:
    """int64(sigmoid((before − after)/1000) × MaxNodeScore)."""
    return int(sigmoid((before - after) / 1000) * MAX_NODE_SCORE)


def calculate_gpu_share_frag_extend_score(node: NodeResource, pod: PodResource,
                                          typical: Sequence[TargetPod]) -> tuple[int, str]:
    """calculateGpuShareFragExtendScore: (score, GPU ids) of placing the pod on the node."""
    before = node_frag_score(node, typical)
    if pod.gpu_number == 1 and pod.milli_gpu < MILLI:
        score, gpu_id = 0, ""
        for i, g in enumerate(node.milli_gpu_left_list):
            if g >= pod.milli_gpu:
                after = node.copy()
                after.milli_cpu_left -= pod.milli_cpu
                after.milli_gpu_left_list[i] -= pod.milli_gpu
                s = frag_score(before, node_frag_score(after, typical))
                if gpu_id == "" or s > score:
                    score, gpu_id = s, str(i)
        return score, gpu_id
    after, _ = node.sub(pod)
    return frag_score(before, node_frag_score(after, typical)), allocate_exclusive_gpu_id(node, pod)


def allocate_gpu_id(node: NodeResource, pod: PodResource, typical: Sequence[TargetPod]) -> str:
    """allocateGpuIdBasedOnFGDScore."""
    return calculate_gpu_share_frag_extend_score(node, pod, typical)[1]


def _int_field(d: dict, key: str, where: str) -> int:
    v = d.get(key, 0)
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"{where}.{key}: Invalid value: {v!r}: must be an integer")
    return v


def parse_typical_pods(items: Any, where: str = f"{NAME}.typicalPods") -> list[TargetPod]:
    """The ``typicalPods`` plugin arg: [{milliCpu, milliGpu, gpuNumber, gpuType, percentage}]."""
    if not isinstance(items, list):
        raise ValueError(f"{where}: Invalid value: must be a list")
    out = []
    for i, d in enumerate(items):
        w = f"{where}[{i}]"
        if not isinstance(d, dict):
            raise ValueError(f"{w}: Invalid value: must be an object")
        p = d.get("percentage")
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
            raise ValueError(f"{w}.percentage: Invalid value: {p!r}: must be a number in [0, 1]")
        res = PodResource(_int_field(d, "milliCpu", w), _int_field(d, "milliGpu", w), _int_field(d, "gpuNumber", w),
                          str(d.get("gpuType") or ""))
        out.append(TargetPod(res, float(p)))
    return out


class TypicalPods:
    """The target workload, resolved once on first use (see the module docstring)."""

    def __init__(self, args: Optional[dict], handle: Any):
        args = args or {}
        self.handle = handle
        self._pods: Optional[list[TargetPod]] = parse_typical_pods(args["typicalPods"]) if "typicalPods" in args \
            else None
        cfg = args.get("typicalPodsConfig") or {}
        self.config = {"is_involved_cpu_pods": bool(cfg.get("isInvolvedCpuPods", True)),
                       "pod_popularity_threshold": int(cfg.get("podPopularityThreshold", DEFAULT_POD_POPULARITY_THRESHOLD)),
                       "pod_increase_step": int(cfg.get("podIncreaseStep", DEFAULT_POD_INCREASE_STEP)),
                       "gpu_res_weight": float(cfg.get("gpuResWeight", 0.0))}

    def __call__(self) -> list[TargetPod]:
        if self._pods is None:
            given = getattr(self.handle, "typical_pods", None)
            if given is not None:
                self._pods = list(given() if callable(given) else given)
            else:
                api = getattr(self.handle, "api", None)
                pods = api.list("Pod") if api is not None else []
                self._pods = get_typical_pods((pod_resource(p) for p in pods), **self.config)
        return self._pods


class FGDScore:
    name = NAME

    def __init__(self, args: Optional[dict] = None, handle: Any = None):
        self.typical = TypicalPods(args, handle)

    def score(self, state, pi, ni) -> int:
        if not pi.requests:                       # PodRequestsAndLimits(p) is empty
            return MAX_NODE_SCORE
        node, pod = node_resource(ni), pod_resource(pi.pod)
        if not is_node_accessible_to_pod(node, pod):
            return MIN_NODE_SCORE
        return calculate_gpu_share_frag_extend_score(node, pod, self.typical())[0]


def new(args=None, handle=None) -> FGDScore:
    return FGDScore(args, handle)
