"""GPU device memory on one node, and what each sharing strategy does when it runs out.

Workload annotations (validated in ``gpusim.api.validation``):

- ``gpusim.io/gpu-memory: <quantity>`` — device memory the process holds on **each** GPU it uses once
  its container has started, e.g. ``20Gi``. Without it the container uses no GPU memory here.
- ``gpusim.io/gpu-memory-growth: <peak>/<duration>`` — e.g. ``60Gi/10m``: after the start, usage grows
  linearly from ``gpu-memory`` to ``<peak>`` over ``<duration>`` and then stays there (an inference
  server's KV cache filling up). Needs ``gpu-memory``; ``<peak>`` must be at least ``gpu-memory`` and
  ``<duration>`` greater than 0. A restarted container starts again from ``gpu-memory``.

The model keeps, for every physical GPU, the running containers on it and their usage u(t) (piecewise
linear). Whenever that set changes it computes, exactly (fractions), the next instant a limit is
exceeded and sets one timer; a change bumps the GPU's generation and retires the old timer. Limits
follow the node's sharing strategy (the device plugin config; node-side reference §4.4, §4.8, §9.3):

- ``none`` (whole GPUs): a container fails when its own usage exceeds the GPU memory
  (``model.memory_mib``).
- ``time-slicing``: no memory isolation. When the **sum** on a GPU exceeds the GPU memory, every
  container on that GPU gets ``CUDA error: out of memory`` — one tenant's growth takes all down.
- ``mps``: each client has the pinned device memory limit the MPS control daemon sets by default,
  ``set_default_device_pinned_mem_limit <gpu> <totalMemBytes/replicas/1MiB>M`` (integer MiB); only the
  client over its own limit fails.
- ``hami`` (HAMi, ``gpusim.node.hami``): HAMi-core inside each container caps its usage at the
  ``nvidia.com/gpumem`` it was given (``CUDA_DEVICE_MEMORY_LIMIT_<i>``); only the container over its own
  cap fails, the others on the GPU keep running.

A failed container exits with code 1 (reason ``Error``, message ``CUDA error: out of memory``); the
kubelet's restart policy does the rest. "Exceeds" is strict: usage that reaches the limit exactly and
stays there does not fail. ``gpusim.views.sharing.memory_timeline`` gives per-GPU samples for plots.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Callable, Optional

from ..api.quantity import parse_quantity
from ..api.validation import ANNOTATION_GPU_MEMORY, ANNOTATION_GPU_MEMORY_GROWTH, OOM_EXIT_CODE, OOM_MESSAGE, parse_growth  # noqa: F401

if TYPE_CHECKING:
    from ..controlplane.context import Context
    from .deviceplugin import NvidiaDevicePlugin

MIB = 1 << 20


def memory_profile(annotations: dict[str, str]) -> Optional[tuple[Fraction, Fraction, Fraction]]:
    """(start MiB, peak MiB, ramp seconds) of a pod's containers, or None when it declares no memory."""
    if ANNOTATION_GPU_MEMORY not in annotations:
        return None
    base = parse_quantity(annotations[ANNOTATION_GPU_MEMORY]) / MIB
    if ANNOTATION_GPU_MEMORY_GROWTH not in annotations:
        return base, base, Fraction(0)
    peak, secs = parse_growth(annotations[ANNOTATION_GPU_MEMORY_GROWTH])
    return base, max(base, peak / MIB), Fraction(secs)


@dataclass
class Usage:
    """One container's memory on one GPU: base at ``start``, linear to ``peak`` over ``ramp`` seconds."""

    pod_uid: str
    namespace: str
    pod: str
    container: str
    start: Fraction
    base: Fraction
    peak: Fraction
    ramp: Fraction
    end: Optional[float] = None
    oom: bool = False
    limit: Optional[int] = None   # per-container cap in MiB (HAMi-core), None = the domain's limit

    @property
    def key(self) -> tuple[str, str]:
        return self.pod_uid, self.container

    @property
    def ramp_end(self) -> Fraction:
        return self.start + self.ramp

    def at(self, t: Fraction) -> Fraction:
        if self.ramp == 0 or t >= self.ramp_end:
            return self.peak
        if t <= self.start:
            return self.base
        return self.base + (self.peak - self.base) * (t - self.start) / self.ramp

    def slope_after(self, t: Fraction) -> Fraction:
        """du/dt just after ``t``."""
        if self.ramp == 0 or t >= self.ramp_end or self.peak == self.base:
            return Fraction(0)
        return (self.peak - self.base) / self.ramp


def first_excess(usages: list[Usage], limit: Fraction, now: Fraction) -> Optional[Fraction]:
    """First t ≥ now after which the summed usage exceeds ``limit`` (sum is non-decreasing and
    piecewise linear), or None if it never does."""
    if not usages:
        return None
    points = sorted({now, *(u.ramp_end for u in usages if u.ramp_end > now)})
    for i, a in enumerate(points):
        s = sum(u.at(a) for u in usages)
        slope = sum(u.slope_after(a) for u in usages)
        if s > limit or (s == limit and slope > 0):
            return a
        if slope > 0:
            t = a + (limit - s) / slope
            if i + 1 == len(points) or t < points[i + 1]:
                return t
    return None


class GPUState:
    def __init__(self, uuid: str, index: int):
        self.uuid, self.index = uuid, index
        self.running: list[Usage] = []
        self.history: list[Usage] = []
        self.generation = 0
        self.timer: Any = None


class GPUMemory:
    """The memory of a node's physical GPUs under the plugin's sharing strategy."""

    def __init__(self, ctx: "Context", node: str, plugin: "NvidiaDevicePlugin",
                 fail: Callable[[str, str, str], None]):
        self.ctx, self.node, self.plugin = ctx, node, plugin
        self.fail = fail   # (pod_uid, container, message): the runtime kills the container
        # memory domains: each whole GPU, or each MIG device (which has its own memory)
        self.domains = plugin.device_memory_mib()
        self.gpus = {i: GPUState(i, idx) for i, (idx, _) in self.domains.items()}

    # --- limits ------------------------------------------------------------------------------------
    @property
    def strategy(self) -> str:
        return self.plugin.config.strategy

    @property
    def total_mib(self) -> int:
        """Memory of one whole GPU."""
        return self.plugin.model.memory_mib

    @property
    def client_limit_mib(self) -> int:
        """What one container may use on a whole GPU: all of it, or the MPS pinned limit."""
        if self.strategy == "mps":
            return self.total_mib * MIB // self.plugin.replicas // MIB
        return self.total_mib

    def domain_mib(self, gpu: "GPUState") -> int:
        """Memory of the domain: the whole GPU, or a MIG device's own memory."""
        return self.domains[gpu.uuid][1]

    def mode(self, gpu: "GPUState") -> str:
        """How this domain isolates memory: ``mig`` for a MIG device, else the plugin's sharing strategy."""
        if gpu.uuid.startswith("MIG-"):   # a time-sliced MIG device shares its instance memory unisolated
            return "time-slicing" if self.strategy == "time-slicing" and self.plugin.replicas_of(gpu.uuid) > 1 else "mig"
        return self.strategy

    def domain_limit_mib(self, gpu: "GPUState") -> int:
        """The limit one container may use alone in the domain: its memory, or the MPS pinned limit."""
        if self.mode(gpu) == "mps":
            return self.domain_mib(gpu) * MIB // self.plugin.replicas // MIB
        return self.domain_mib(gpu)

    # --- container lifecycle -----------------------------------------------------------------------
    def container_started(self, pod, container: str, gpu_uuids: list[str],
                          limits: Optional[dict[str, int]] = None) -> None:
        prof = memory_profile(pod.metadata.annotations)
        if prof is None:
            return
        base, peak, ramp = prof
        now = Fraction(self.ctx.now)
        for uuid in dict.fromkeys(gpu_uuids):
            gpu = self.gpus.get(uuid)
            if gpu is None:
                continue
            u = Usage(pod.metadata.uid, pod.metadata.namespace, pod.metadata.name, container, now, base, peak, ramp,
                      limit=(limits or {}).get(uuid))
            gpu.running.append(u)
            gpu.history.append(u)
            self._reschedule(gpu)

    def container_stopped(self, pod_uid: str, container: str) -> None:
        for gpu in self.gpus.values():
            gone = [u for u in gpu.running if u.key == (pod_uid, container)]
            if not gone:
                continue
            for u in gone:
                u.end = self.ctx.now
                gpu.running.remove(u)
            self._reschedule(gpu)

    # --- crossing timers ---------------------------------------------------------------------------
    def _next_failure(self, gpu: GPUState) -> tuple[Optional[Fraction], list[Usage]]:
        now = Fraction(self.ctx.now)
        if self.mode(gpu) == "time-slicing":
            return first_excess(gpu.running, Fraction(self.domain_mib(gpu)), now), list(gpu.running)
        best, victims = None, []
        for u in gpu.running:
            lim = self.domain_limit_mib(gpu) if u.limit is None else min(u.limit, self.domain_mib(gpu))
            t = first_excess([u], Fraction(lim), now)
            if t is None:
                continue
            if best is None or t < best:
                best, victims = t, [u]
            elif t == best:
                victims.append(u)
        return best, victims

    def _reschedule(self, gpu: GPUState) -> None:
        gpu.generation += 1
        self._retire(gpu)
        t, victims = self._next_failure(gpu)
        if t is None:
            return
        gen = gpu.generation
        timer = self.ctx.env.timeout(max(0.0, float(t) - self.ctx.now))
        gpu.timer = timer
        timer.callbacks.append(lambda _e: self._fire(gpu, gen, victims, t))

    def _retire(self, gpu: GPUState) -> None:
        """A stale timer stays in simpy's queue; count it as a daemon timer so it cannot keep an
        otherwise finished simulation running."""
        timer, gpu.timer = gpu.timer, None
        if timer is not None and not timer.processed:
            pending = self.ctx.daemon_pending
            pending[0] += 1
            timer.callbacks.append(lambda _e: pending.__setitem__(0, pending[0] - 1))

    def _fire(self, gpu: GPUState, gen: int, victims: list[Usage], now: Fraction) -> None:
        """``now`` is the exact crossing instant (the simpy clock holds its float)."""
        if gen != gpu.generation:
            return
        gpu.timer = None
        total = sum(u.at(now) for u in gpu.running)
        for u in victims:
            mode = self.mode(gpu)
            if mode == "time-slicing":
                used, limit, why = total, self.domain_mib(gpu), "time-slicing: no memory isolation"
            elif mode == "mps":
                used, limit, why = u.at(now), self.domain_limit_mib(gpu), "mps: pinned device memory limit per client"
            elif mode == "hami":
                used, why = u.at(now), "HAMi-core: per-container nvidia.com/gpumem limit"
                limit = self.domain_mib(gpu) if u.limit is None else min(u.limit, self.domain_mib(gpu))
            elif mode == "mig":
                used, limit, why = u.at(now), self.domain_mib(gpu), "MIG: confined to the GPU instance's memory"
            else:
                used, limit, why = u.at(now), self.domain_mib(gpu), "whole GPU"
            self.ctx.trace.add(self.ctx.now, f"gpu/{self.node}/{gpu.index}", "cuda.cudaMalloc",
                               f"Pod {u.namespace}/{u.pod}",
                               f"out of memory: used {_mib(used)} MiB of {limit} MiB ({why})",
                               container=u.container, gpu=gpu.uuid, process_mib=_mib(u.at(now)))
            u.oom = True
        for u in victims:   # the runtime stops each; container_stopped updates every GPU it used
            self.fail(u.pod_uid, u.container, OOM_MESSAGE)


def _mib(v: Fraction) -> str:
    v = Fraction(v)
    return str(v.numerator) if v.denominator == 1 else f"{float(v):.1f}"
