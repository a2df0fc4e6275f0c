"""Open-Gpu-Share: per-GPU milli-GPU sharing as the FGD simulator filters and reserves it (mirrors
hkust-adsl/kubernetes-scheduler-simulator pkg/simulator/plugin/open_gpu_share.go ``GpuSharePlugin`` and
pkg/type/open-gpu-share/cache/gpunodeinfo.go ``AllocateGpuId``).

Not in the default profile; enable it at Filter and Reserve next to the default plugins (NodeResourcesFit
still checks CPU and memory), with one of the FGD study's score plugins::

    profiles:
    - schedulerName: default-scheduler
      percentageOfNodesToScore: 100
      plugins:
        filter: {enabled: [{name: Open-Gpu-Share}]}
        reserve: {enabled: [{name: Open-Gpu-Share}]}
        score: {disabled: [{name: "*"}], enabled: [{name: FGDScore}]}
      pluginConfig:
      - name: Open-Gpu-Share
        args: {gpuSelMethod: FGDScore}

Filter (pods with ``alibabacloud.com/gpu-milli`` > 0 only): the node must have GPUs of an allowed model
(``alibabacloud.com/gpu-card-model``) and room for the pod's GPUs (``GpuNodeInfo.AllocateGpuId``);
upstream's reason is ``Node:<node name>``. Reserve picks the GPUs inside the chosen node by
``gpuSelMethod`` — ``best`` (default: the tightest GPU that fits), ``worst``, ``random`` (reservoir
sampling over the GPUs that fit), or ``FGDScore`` (the GPU whose use grows fragmentation least) — and
writes them on the pod as ``alibabacloud.com/gpu-index``; whole-GPU pods take the first free GPUs by
index. Unreserve removes the annotation. (Upstream also stamps ``alibabacloud.com/assume-time`` with the
wall clock; gpusim leaves it out to stay deterministic.)
"""
from __future__ import annotations

from typing import Any, Optional

from ..framework import Code, Status
from ..gpushare import (DEVICE_INDEX, MILLI, NodeResource, PodResource, allocate_exclusive_gpu_id,
                        allocate_gpu_id_best_fit, allocate_gpu_id_random_fit, allocate_gpu_id_worst_fit,
                        gpu_count_of_node, gpu_id_list, gpu_node_allocate, is_node_accessible_to_pod, node_resource,
                        pod_resource)
from . import fgdscore

NAME = "Open-Gpu-Share"          # simontype.OpenGpuSharePluginName
EVENTS = {"Pod/Delete", "Node/Add"}
REASON_PREFIX = "Node:"          # framework.NewStatus(framework.Unschedulable, "Node:"+nodeName)
SEL_BEST, SEL_WORST, SEL_RANDOM = "best", "worst", "random"   # simontype.SelBestFitGpu, ...
GPU_SEL_METHODS = (SEL_BEST, SEL_WORST, SEL_RANDOM, fgdscore.NAME)
ERR_ALLOCATE = "failed to allocate gpu to pod({}) to node({})"


def fits(node: NodeResource, pod: PodResource) -> bool:
    """The Filter's decision for a GPU pod: GPUs present, model allowed, and room (AllocateGpuId)."""
    if node.gpu_number == 0 or not is_node_accessible_to_pod(node, pod):
        return False
    return gpu_node_allocate(node, pod) is not None


def select_gpus(method: str, node: NodeResource, pod: PodResource, rng: Any, typical: Any) -> str:
    """allocateGpuId: the GPU ids (``"3"``, ``"0-1"``) the pod takes on the node; "" if none fit.
    ``rng`` and ``typical`` are called only when the method needs them (random draws, target workload)."""
    if pod.milli_gpu >= MILLI:
        return allocate_exclusive_gpu_id(node, pod)
    if method == SEL_WORST:
        return allocate_gpu_id_worst_fit(node, pod)
    if method == SEL_RANDOM:
        return allocate_gpu_id_random_fit(node, pod, rng())
    if method == fgdscore.NAME:
        return fgdscore.allocate_gpu_id(node, pod, typical())
    return allocate_gpu_id_best_fit(node, pod)


class OpenGpuShare:
    name = NAME
    events = EVENTS

    def __init__(self, args: Optional[dict] = None, handle: Any = None):
        args = args or {}
        self.handle = handle
        self.gpu_sel_method = args.get("gpuSelMethod") or SEL_BEST
        if self.gpu_sel_method not in GPU_SEL_METHODS:
            raise ValueError(f'{NAME}: gpuSelMethod: Unsupported value: "{self.gpu_sel_method}": supported values: '
                             + ", ".join(f'"{m}"' for m in GPU_SEL_METHODS))
        self._typical = fgdscore.TypicalPods(args, handle)

    def filter(self, state, pi, ni) -> Status:
        pod = pod_resource(pi.pod)
        if pod.milli_gpu <= 0:
            return Status()
        if gpu_count_of_node(ni.node) == 0 or not fits(node_resource(ni), pod):
            return Status.new(Code.Unschedulable, REASON_PREFIX + ni.name)
        return Status()

    def _rng(self) -> Any:
        ctx = getattr(self.handle, "ctx", None)
        return ctx.rng

    def reserve(self, state, pi, node: str) -> Status:
        pod = pod_resource(pi.pod)
        if pod.milli_gpu <= 0:
            return Status()
        ni = self.handle.nodes[node]
        res = node_resource(ni, exclude=pi.key)   # the assumed pod is already on the NodeInfo
        ann = pi.pod.metadata.annotations
        if ann.get(DEVICE_INDEX):                 # a pod that names its GPUs keeps them
            ids = gpu_id_list(pi.pod)
            if any(i >= len(res.milli_gpu_left_list) or res.milli_gpu_left_list[i] < pod.milli_gpu for i in ids):
                return Status(Code.Error, [ERR_ALLOCATE.format(f"{pi.pod.metadata.namespace}/{pi.pod.metadata.name}",
                                                               node)])
            return Status()
        gpu_id = select_gpus(self.gpu_sel_method, res, pod, self._rng, self._typical)
        if not gpu_id:
            return Status(Code.Error, [ERR_ALLOCATE.format(f"{pi.pod.metadata.namespace}/{pi.pod.metadata.name}", node)])
        ann[DEVICE_INDEX] = gpu_id
        state[(NAME, "gpu-index")] = gpu_id
        return Status()

    def unreserve(self, state, pi, node: str) -> None:
        if state.pop((NAME, "gpu-index"), None) is not None:
            pi.pod.metadata.annotations.pop(DEVICE_INDEX, None)


def new(args=None, handle=None) -> OpenGpuShare:
    return OpenGpuShare(args, handle)
