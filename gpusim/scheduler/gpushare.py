"""GPU-sharing resources as the FGD simulator sees them (mirrors hkust-adsl/kubernetes-scheduler-simulator
pkg/type/resource.go ``NodeResource``/``PodResource``, pkg/type/open-gpu-share/utils const.go, pod.go,
node.go, and pkg/utils/utils.go ``GetPodResource``, ``GetNodeResourceViaNodeInfo``,
``IsNodeAccessibleToPodByType``).

A node offers ``gpu-count`` GPUs of one model, each of 1000 milli-GPU; a pod asks, in annotations, for
``gpu-count`` GPUs of ``gpu-milli`` each (below 1000 only for a one-GPU "sharing" pod), optionally of
one of the models in ``gpu-card-model`` (``|``-separated). Which GPUs a placed pod holds is written on
the pod as ``gpu-index`` (``"3"``, ``"0-1"``) by Open-Gpu-Share's Reserve; a node's free milli-GPU per GPU
is derived from the pods on it, as the simulator's GPU-share cache derives it.
"""
from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple, Optional

from ..api.quantity import parse_quantity

# pkg/type/open-gpu-share/utils/const.go
RESOURCE_NAME = "alibabacloud.com/gpu-milli"      # pod annotation; node capacity = count × 1000
COUNT_NAME = "alibabacloud.com/gpu-count"         # pod annotation; node capacity
DEVICE_INDEX = "alibabacloud.com/gpu-index"       # written on the pod at Reserve
MODEL_NAME = "alibabacloud.com/gpu-card-model"    # pod annotation; node label
DEV_ID_SEP = "-"
MILLI = 1000
MAX_SPEC_CPU = 128000   # the largest node's milli-CPU: normaliser of DotProd and BestFit
MAX_SPEC_GPU = 8000     # the largest node's milli-GPU
NO_GPU_TAG = "no-gpu"
SHARE_GPU_TAG = "share-gpu"
MAX_NUM_GPU_PER_NODE = 8   # pkg/type/const.go MaxNumGpuPerNode
DEFAULT_MILLI_CPU_REQUEST = 100   # k8s pkg/scheduler/util GetNonzeroRequests: absent CPU request


class PodResource(NamedTuple):
    """simontype.PodResource: a "typical pod", without name (hashable: typical pods group by it)."""

    milli_cpu: int
    milli_gpu: int      # per GPU, 0..1000
    gpu_number: int
    gpu_type: str = ""

    def total_milli_gpu(self) -> int:
        return self.milli_gpu * self.gpu_number

    def is_gpu_share(self) -> bool:
        return self.gpu_number == 1 and self.milli_gpu < MILLI

    def less(self, other: "PodResource") -> bool:
        """PodResource.Less: by CPU, then GPU milli, then GPU count, then GPU type."""
        return (self.milli_cpu, self.milli_gpu, self.gpu_number, self.gpu_type) < \
            (other.milli_cpu, other.milli_gpu, other.gpu_number, other.gpu_type)


@dataclasses.dataclass
class NodeResource:
    """simontype.NodeResource. ``milli_gpu_left_list`` is indexed by GPU device index; never sort it."""

    node_name: str
    milli_cpu_left: int
    milli_cpu_capacity: int
    milli_gpu_left_list: list[int]
    gpu_number: int
    gpu_type: str = ""
    gpu_affinity: dict[str, int] = dataclasses.field(default_factory=dict)

    def total_milli_gpu_left(self) -> int:
        return sum(self.milli_gpu_left_list)

    def fully_free_gpu_num(self) -> int:
        return sum(1 for g in self.milli_gpu_left_list if g == MILLI)

    def sorted_milli_gpu_left_index_list(self, ascending: bool) -> list[int]:
        """Device indices ordered by free milli-GPU (a stable sort, as sort.SliceStable)."""
        idx = range(len(self.milli_gpu_left_list))
        g = self.milli_gpu_left_list
        return sorted(idx, key=lambda i: g[i] if ascending else -g[i])

    def copy(self) -> "NodeResource":
        return NodeResource(self.node_name, self.milli_cpu_left, self.milli_cpu_capacity,
                            list(self.milli_gpu_left_list), self.gpu_number, self.gpu_type, self.gpu_affinity)

    def sub(self, pod: PodResource) -> tuple["NodeResource", bool]:
        """NodeResource.Sub: take the pod's CPU, and its GPUs from the least-free GPUs that fit
        (ascending free milli-GPU). Returns (new resource, ok)."""
        out = self.copy()
        if out.milli_cpu_left < pod.milli_cpu or out.gpu_number < pod.gpu_number:
            return out, False
        out.milli_cpu_left -= pod.milli_cpu
        want = pod.gpu_number
        if want == 0:
            return out, True
        for i in out.sorted_milli_gpu_left_index_list(True):
            if pod.milli_gpu <= out.milli_gpu_left_list[i]:
                want -= 1
                out.milli_gpu_left_list[i] -= pod.milli_gpu
                if want <= 0:
                    return out, True
        return out, False

    def flatten(self) -> tuple:
        """NodeResource.Flatten: the memo key (CPU left, free milli-GPU sorted descending, padded to 8, type)."""
        g = sorted(self.milli_gpu_left_list, reverse=True)[:MAX_NUM_GPU_PER_NODE]
        return (self.milli_cpu_left, tuple(g + [0] * (MAX_NUM_GPU_PER_NODE - len(g))), self.gpu_type)


# --- pods (pkg/type/open-gpu-share/utils/pod.go) -------------------------------------------------------
def _annotations(pod: Any) -> dict:
    return pod.metadata.annotations or {}


def gpu_milli_from_pod(pod: Any) -> int:
    """GetGpuMilliFromPodAnnotation: the quantity's Value() (rounded up); 0 if absent or malformed."""
    v = _annotations(pod).get(RESOURCE_NAME)
    if v is None:
        return 0
    try:
        q = parse_quantity(str(v))
    except ValueError:
        return 0
    return -((-q.numerator) // q.denominator)


def gpu_count_from_pod(pod: Any) -> int:
    """GetGpuCountFromPodAnnotation: strconv.Atoi of the annotation, 0 if absent, malformed or negative."""
    v = _annotations(pod).get(COUNT_NAME)
    try:
        n = int(str(v).strip()) if v is not None else 0
    except ValueError:
        return 0
    return n if n >= 0 else 0


def gpu_model_from_pod(pod: Any) -> str:
    return str(_annotations(pod).get(MODEL_NAME, ""))


def gpu_id_list(pod: Any) -> list[int]:
    """GetGpuIdListFromAnnotation: ``"2-3-4"`` → [2, 3, 4]; [] when absent."""
    v = _annotations(pod).get(DEVICE_INDEX, "")
    return [int(x) for x in str(v).split(DEV_ID_SEP)] if v else []


def gpu_affinity_of(milli: int, count: int) -> str:
    """GetGpuAffinityFromPodAnnotation: no-gpu, share-gpu or "<n>-gpu" (upstream panics on a pod with
    several GPUs below 1000 milli each; gpusim classes it by its GPU count)."""
    if count == 0:
        return NO_GPU_TAG
    if count == 1 and milli < MILLI:
        return SHARE_GPU_TAG
    return f"{count}-gpu"


def pod_resource(pod: Any) -> PodResource:
    """GetPodResource: the non-zero CPU request summed over containers (an absent CPU request counts
    100m), and the GPU request from the annotations. Cached on the pod (requests do not change)."""
    cached = pod.__dict__.get("_gpushare_resource")
    if cached is not None:
        return cached
    cpu = 0
    for c in pod.spec.containers:
        req = dict(c.resources.limits)
        req.update(c.resources.requests)
        if "cpu" in req:
            q = parse_quantity(req["cpu"]) * 1000
            cpu += -((-q.numerator) // q.denominator)
        else:
            cpu += DEFAULT_MILLI_CPU_REQUEST
    res = PodResource(cpu, gpu_milli_from_pod(pod), gpu_count_from_pod(pod), gpu_model_from_pod(pod))
    pod.__dict__["_gpushare_resource"] = res
    return res


# --- nodes (pkg/type/open-gpu-share/utils/node.go) ----------------------------------------------------
def _capacity_int(node: Any, name: str) -> int:
    v = (node.status.capacity or {}).get(name)
    if v is None:
        return 0
    q = parse_quantity(v)
    return -((-q.numerator) // q.denominator)


def gpu_count_of_node(node: Any) -> int:
    return _capacity_int(node, COUNT_NAME)


def gpu_milli_of_node(node: Any) -> int:
    return _capacity_int(node, RESOURCE_NAME)


def gpu_model_of_node(node: Any) -> str:
    return str((node.metadata.labels or {}).get(MODEL_NAME, ""))


def is_node_accessible_to_pod_by_type(node_gpu_type: str, pod_gpu_type: str) -> bool:
    """IsNodeAccessibleToPodByType: a pod without a GPU type fits any node; otherwise the node's model
    must be one of the pod's ``|``-separated types (a node without GPUs matches none)."""
    if not pod_gpu_type:
        return True
    if not node_gpu_type:
        return False
    wanted = [t for t in pod_gpu_type.split("|") if t]
    return node_gpu_type in wanted if wanted else True


def is_node_accessible_to_pod(node: NodeResource, pod: PodResource) -> bool:
    return is_node_accessible_to_pod_by_type(node.gpu_type, pod.gpu_type)


def node_resource(ni: Any, exclude: str = "") -> NodeResource:
    """GetNodeResourceViaNodeInfo, from a scheduler NodeInfo: CPU left is allocatable minus the
    requests of the pods on the node; free milli-GPU per GPU is 1000 minus what the pods placed there
    (``gpu-index``) hold. ``exclude`` leaves out one pod (the one being reserved, already assumed)."""
    node = ni.node
    cpu_alloc = ni.allocatable.get("cpu")
    cpu_used = ni.requested.get("cpu")
    count = gpu_count_of_node(node)
    left = [MILLI] * count if gpu_milli_of_node(node) > 0 else []
    affinity: dict[str, int] = {}
    for uid, pi in ni.pods.items():
        if uid == exclude:
            cpu_used -= pi.requests.get("cpu", 0)
            continue
        pod = pi.pod
        res = pod_resource(pod)
        tag = gpu_affinity_of(res.milli_gpu, res.gpu_number)
        if tag != NO_GPU_TAG:
            affinity[tag] = affinity.get(tag, 0) + 1
        for i in gpu_id_list(pod):
            if 0 <= i < len(left):
                left[i] -= res.milli_gpu
    return NodeResource(ni.name, cpu_alloc - cpu_used, cpu_alloc, left, count, gpu_model_of_node(node), affinity)


# --- GPU selection inside a node (open_gpu_share.go allocateGpuIdBasedOn*, resource.go) ---------------
def allocate_exclusive_gpu_id(node: NodeResource, pod: PodResource) -> str:
    """AllocateExclusiveGpuId: the first fully free GPUs by index, enough for the pod's total milli-GPU."""
    want = pod.total_milli_gpu()
    ids: list[str] = []
    for i, g in enumerate(node.milli_gpu_left_list):
        if want <= 0:
            break
        if g == MILLI:
            ids.append(str(i))
            want -= MILLI
    return DEV_ID_SEP.join(ids) if want <= 0 else ""


def allocate_gpu_id_best_fit(node: NodeResource, pod: PodResource) -> str:
    """allocateGpuIdBasedOnBestFit: a sharing pod takes the GPU with the least free milli-GPU that fits
    (the lowest index among equals); other pods take whole free GPUs."""
    if pod.milli_gpu < MILLI:
        best = -1
        for i, g in enumerate(node.milli_gpu_left_list):
            if g >= pod.milli_gpu and (best == -1 or g < node.milli_gpu_left_list[best]):
                best = i
        return str(best) if best >= 0 else ""
    return allocate_exclusive_gpu_id(node, pod)


def allocate_gpu_id_worst_fit(node: NodeResource, pod: PodResource) -> str:
    """allocateGpuIdBasedOnWorstFit: the GPU with the most free milli-GPU that fits."""
    if pod.milli_gpu < MILLI:
        best = -1
        for i, g in enumerate(node.milli_gpu_left_list):
            if g >= pod.milli_gpu and (best == -1 or g > node.milli_gpu_left_list[best]):
                best = i
        return str(best) if best >= 0 else ""
    return allocate_exclusive_gpu_id(node, pod)


def allocate_gpu_id_random_fit(node: NodeResource, pod: PodResource, rng: Any) -> str:
    """allocateGpuIdBasedOnRandomFit: reservoir sampling over the GPUs that fit (one draw per GPU)."""
    if pod.milli_gpu < MILLI:
        chosen, n = "", 0
        for i, g in enumerate(node.milli_gpu_left_list):
            if g >= pod.milli_gpu:
                n += 1
                if rng.randrange(n) == 0:
                    chosen = str(i)
        return chosen
    return allocate_exclusive_gpu_id(node, pod)


def gpu_node_allocate(node: NodeResource, pod: PodResource) -> Optional[str]:
    """GpuNodeInfo.AllocateGpuId (the Filter's test): a one-GPU pod fits on the tightest GPU with enough
    free milli-GPU; a multi-GPU pod greedily packs its GPUs onto devices in index order. None if it
    does not fit."""
    k, d = pod.gpu_number, pod.milli_gpu
    if d <= 0 or k <= 0 or not node.milli_gpu_left_list:
        return None
    if k == 1:   # "the original naive packing logic": the tightest fit, lowest index among equals
        best = -1
        for i, g in enumerate(node.milli_gpu_left_list):
            if g >= d and (best == -1 or g < node.milli_gpu_left_list[best]):
                best = i
        return str(best) if best >= 0 else None
    idle = list(node.milli_gpu_left_list)
    ids, dev = [], 0
    while dev < len(idle) and len(ids) < k:
        if idle[dev] >= d:
            ids.append(dev)
            idle[dev] -= d
        else:
            dev += 1
    return DEV_ID_SEP.join(map(str, ids)) if len(ids) == k else None
