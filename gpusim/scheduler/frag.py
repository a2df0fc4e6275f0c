"""GPU fragmentation against a target workload (mirrors hkust-adsl/kubernetes-scheduler-simulator
pkg/utils/frag.go: ``GetNodePodFrag``, ``NodeGpuShareFragAmount``, ``NodeGpuShareFragAmountScore``,
``GetTypicalPods``; and the FGD paper's measure, USENIX ATC '23).

Picture a node's free GPUs as shelf space and the target workload as the mix of boxes that usually
arrive. For one typical task *m*, the node's fragment is the free milli-GPU that *m* cannot use:

* *m* needs no GPU, or the node's GPU model is not allowed for *m*: all idle milli-GPU;
* the node can host *m* (enough GPUs with room for ``milli_gpu``, and CPU): only the partial GPUs too
  small for *m*;
* otherwise (short of GPU, CPU or both): all idle milli-GPU.

The node's fragmentation is the popularity-weighted sum over the typical tasks; the cluster's is the sum
over nodes. Memory is not part of the measure.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from .gpushare import MILLI, NodeResource, PodResource, is_node_accessible_to_pod

# frag.go fragment types, and FragRatioDataMap's order
Q1_LACK_BOTH = "q1_lack_both"
Q2_LACK_GPU = "q2_lack_gpu"
Q3_SATISFIED = "q3_satisfied"
Q4_LACK_CPU = "q4_lack_cpu"
XL_SATISFIED = "xl_satisfied"
XR_LACK_CPU = "xr_lack_cpu"
NO_ACCESS = "no_access"
FRAG_TYPES = (Q1_LACK_BOTH, Q2_LACK_GPU, Q3_SATISFIED, Q4_LACK_CPU, XL_SATISFIED, XR_LACK_CPU, NO_ACCESS)

# scripts/generate_config_and_run.py: the typical-pods settings of the paper's experiments
# (pkg/type/resource.go's own defaults are 60% and a step of 10)
DEFAULT_POD_POPULARITY_THRESHOLD = 95
DEFAULT_POD_INCREASE_STEP = 1


@dataclass(frozen=True)
class TargetPod:
    """simontype.TargetPod: a typical pod's resources and its popularity (0..1)."""

    resource: PodResource
    percentage: float


def can_node_host_pod_on_gpu_memory(node: NodeResource, pod: PodResource) -> bool:
    """CanNodeHostPodOnGpuMemory: at least ``gpu_number`` GPUs with ``milli_gpu`` free (at least one)."""
    want = pod.gpu_number
    for g in node.milli_gpu_left_list:
        if g >= pod.milli_gpu:
            want -= 1
            if want <= 0:
                return True
    return False


def node_pod_frag(node: NodeResource, pod: PodResource) -> str:
    """GetNodePodFrag: which fragment type the node is for one task."""
    if pod.milli_gpu == 0:
        return XL_SATISFIED if node.milli_cpu_left >= pod.milli_cpu else XR_LACK_CPU
    if not is_node_accessible_to_pod(node, pod):
        return NO_ACCESS
    if can_node_host_pod_on_gpu_memory(node, pod):
        return Q3_SATISFIED if node.milli_cpu_left >= pod.milli_cpu else Q4_LACK_CPU
    return Q2_LACK_GPU if node.milli_cpu_left >= pod.milli_cpu else Q1_LACK_BOTH


def gpu_frag_milli(node: NodeResource, pod: PodResource) -> int:
    """GetGpuFragMilliByNodeResAndPodRes: free milli-GPU on GPUs too small for the task."""
    return sum(g for g in node.milli_gpu_left_list if g < pod.milli_gpu)


def node_pod_frag_milli(node: NodeResource, pod: PodResource) -> int:
    """F_n(m): the node's fragment for one task, in milli-GPU."""
    idle = node.total_milli_gpu_left()
    return gpu_frag_milli(node, pod) if node_pod_frag(node, pod) == Q3_SATISFIED else idle


def node_gpu_share_frag_amount(node: NodeResource, typical: Sequence[TargetPod]) -> list[float]:
    """NodeGpuShareFragAmount: milli-GPU per fragment type (FRAG_TYPES order). A satisfied task puts its
    too-small partial GPUs under Q2 and the rest under Q3; any other type takes all idle milli-GPU."""
    data = [0.0] * len(FRAG_TYPES)
    idle = node.total_milli_gpu_left()
    for t in typical:
        kind = node_pod_frag(node, t.resource)
        if kind == Q3_SATISFIED:
            frag = gpu_frag_milli(node, t.resource)
            data[1] += t.percentage * frag
            data[2] += t.percentage * (idle - frag)
        else:
            data[FRAG_TYPES.index(kind)] += t.percentage * idle
    return data


def node_frag_score(node: NodeResource, typical: Sequence[TargetPod]) -> float:
    """NodeGpuShareFragAmountScore: F_n(M) = Σ_m p_m · F_n(m), summed over the typical pods in their
    order. (Upstream first adds the same terms per fragment type and then sums the types except Q3;
    the two orders differ only in the last bits of the float.)"""
    total = 0.0
    for t in typical:
        total += t.percentage * node_pod_frag_milli(node, t.resource)
    return total


def cluster_frag(nodes: Iterable[NodeResource], typical: Sequence[TargetPod]) -> float:
    """F(M) = Σ_n F_n(M), in milli-GPU."""
    return sum(node_frag_score(n, typical) for n in nodes)


def get_typical_pods(pods: Iterable[PodResource], is_involved_cpu_pods: bool = True,
                     pod_popularity_threshold: int = DEFAULT_POD_POPULARITY_THRESHOLD,
                     pod_increase_step: int = DEFAULT_POD_INCREASE_STEP,
                     gpu_res_weight: float = 0.0) -> list[TargetPod]:
    """GetTypicalPods: group the workload's pods by resources, sort by frequency (ties: the larger
    resource first, as ``sort.Reverse`` of Less), keep the most frequent groups until they cover
    ``pod_popularity_threshold`` % of pods (growing ``pod_increase_step`` groups at a time), and
    renormalise their popularities to sum to 1."""
    counts: dict[PodResource, float] = {}
    total = 0.0
    for r in pods:
        if not is_involved_cpu_pods and r.gpu_number == 0:
            continue
        w = 1.0
        if gpu_res_weight > 0 and r.milli_gpu == MILLI:
            w = 1 + r.gpu_number * gpu_res_weight
        counts[r] = counts.get(r, 0.0) + w
        total += w
    if not counts:
        return []
    order = sorted(counts.items(), key=lambda kv: (kv[1], kv[0].milli_cpu, kv[0].milli_gpu, kv[0].gpu_number,
                                                   kv[0].gpu_type), reverse=True)
    pct = [c for _, c in order]
    expected = float(pod_popularity_threshold if pod_popularity_threshold > 0 else 60) * total / 100.0
    step = pod_increase_step if pod_increase_step > 0 else 10
    i = num = 0
    cum = 0.0
    while cum < expected and i < len(order):
        num += step
        while i < num and i < len(order):
            cum += pct[i]
            pct[i] = pct[i] / total
            i += 1
    if i >= len(order):
        return [TargetPod(r, p) for (r, _), p in zip(order, pct)]
    scale = cum / total
    return [TargetPod(order[j][0], pct[j] / scale) for j in range(i)]
