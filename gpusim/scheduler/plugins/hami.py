"""HAMi's per-GPU fit as a scheduler plugin (upstream runs it as a scheduler extender of
``hami-scheduler``: pkg/scheduler/scheduler.go Filter, pkg/scheduler/score.go, pkg/scheduler/policy
gpu_policy.go / node_policy.go, and pkg/device/nvidia/device.go ``Fit``).

Registered as ``HAMi`` but not in the default profile. Use it in a profile of your
KubeSchedulerConfiguration, e.g. the ``hami-scheduler`` name HAMi's pods use; the HAMi resources are
not node-allocatable, so NodeResourcesFit must ignore them (upstream's extender marks them
``ignoredByScheduler``)::

    profiles:
    - schedulerName: hami-scheduler
      plugins: {multiPoint: {enabled: [{name: HAMi}]}}
      pluginConfig:
      - name: NodeResourcesFit
        args: {ignoredResources: [nvidia.com/gpumem, nvidia.com/gpumem-percentage, nvidia.com/gpucores]}

Filter: the node's GPUs come from ``hami.io/node-nvidia-register``; their usage from the
``hami.io/vgpu-devices-allocated`` annotation of the pods on the node (assumed ones included). For
each container, GPUs are sorted by the GPU policy (``spread`` by default, ``binpack``; pod annotation
``hami.io/gpu-scheduler-policy``) and ``Fit`` walks them from the end: a GPU fits when it has a free
split slot (``CardTimeSlicingExhausted``), free memory ≥ request (``CardInsufficientMemory``), free
cores ≥ request (``CardInsufficientCore``), is idle if the request is 100 cores
(``ExclusiveDeviceAllocateConflict``), and is not fully cored when the request has 0 cores
(``CardComputeUnitsExhausted``). A failure reports ``<count>/<GPUs> <reason>`` per reason (GenReason).
GPU score = 10 × (slots/count + cores/100 + mem/total) after the request (ComputeScore, weight 10).
Score: node policy ``binpack`` (default; ``hami.io/node-scheduler-policy``) prefers fuller nodes:
0..100 = mean GPU fullness after placing the pod; ``spread`` is 100 minus that (gpusim's scaling of
HAMi's node score). Reserve writes the chosen GPUs on the pod; the HAMi device plugin hands exactly
those to the containers at Allocate.
"""
from __future__ import annotations

import json
from typing import Optional

from ...api import hami
from ..framework import MAX_NODE_SCORE, Code, Status

NAME = "HAMi"
EVENTS = {"Pod/Delete", "Node/Add", "Node/Update"}
WEIGHT = 10   # pkg/util Weight (ComputeScore)
# pkg/device/common reasons
NOT_HEALTH, SLICING_EXHAUSTED = "CardNotHealth", "CardTimeSlicingExhausted"
INSUFFICIENT_MEMORY, INSUFFICIENT_CORE = "CardInsufficientMemory", "CardInsufficientCore"
EXCLUSIVE_CONFLICT, CORES_EXHAUSTED = "ExclusiveDeviceAllocateConflict", "CardComputeUnitsExhausted"
INSUFFICIENT_REQUEST = "AllocatedCardsInsufficientRequest"
NOT_REGISTERED = f"node has no HAMi-registered GPUs ({hami.ANN_REGISTER})"


class Card:
    __slots__ = ("id", "index", "count", "total_mem", "total_core", "health", "used", "used_mem", "used_core")

    def __init__(self, d: dict):
        self.id, self.index, self.count = d["id"], d["index"], d["count"]
        self.total_mem, self.total_core, self.health = d["devmem"], d["devcore"], d["health"]
        self.used = self.used_mem = self.used_core = 0

    def score(self, req: hami.Request) -> float:
        mem = req.mem_for(self.total_mem)
        return WEIGHT * ((1 + self.used) / self.count + (req.cores + self.used_core) / self.total_core
                         + (mem + self.used_mem) / self.total_mem)


def node_cards(ni) -> Optional[list[Card]]:
    raw = ni.node.metadata.annotations.get(hami.ANN_REGISTER)
    if not raw:
        return None
    cards = [Card(d) for d in json.loads(raw)]
    by_id = {c.id: c for c in cards}
    for pi in ni.pods.values():
        for uuid, mem, cores in hami.pod_usage(pi.pod):
            c = by_id.get(uuid)
            if c is not None:
                c.used += 1
                c.used_mem += mem
                c.used_core += cores
    return cards


def fit(cards: list[Card], req: hami.Request, gpu_policy: str) -> tuple[Optional[list[tuple[str, int, int]]], str]:
    """Fit for one container: (chosen [(uuid, mem, cores)], "") or (None, reasons)."""
    order = sorted(cards, key=lambda c: c.score(req), reverse=gpu_policy != "binpack")   # gpu_policy.go Less
    reasons: dict[str, int] = {}
    chosen: list[tuple[str, int, int]] = []
    for c in reversed(order):
        mem = req.mem_for(c.total_mem)
        if not c.health:
            why = NOT_HEALTH
        elif c.count <= c.used:
            why = SLICING_EXHAUSTED
        elif c.total_mem - c.used_mem < mem:
            why = INSUFFICIENT_MEMORY
        elif c.total_core - c.used_core < req.cores:
            why = INSUFFICIENT_CORE
        elif c.total_core == 100 and req.cores == 100 and c.used > 0:
            why = EXCLUSIVE_CONFLICT
        elif c.total_core != 0 and c.used_core == c.total_core and req.cores == 0:
            why = CORES_EXHAUSTED
        else:
            chosen.append((c.id, mem, req.cores))
            if len(chosen) == req.nums:
                return chosen, ""
            continue
        reasons[why] = reasons.get(why, 0) + 1
    if chosen:
        reasons[INSUFFICIENT_REQUEST] = len(chosen)
    return None, ", ".join(f"{n}/{len(cards)} {r}" for r, n in sorted(reasons.items()))


def _apply(cards: list[Card], devs: list[tuple[str, int, int]]) -> None:
    by_id = {c.id: c for c in cards}
    for uuid, mem, cores in devs:
        c = by_id[uuid]
        c.used += 1
        c.used_mem += mem
        c.used_core += cores


def pod_requests(pod) -> list[Optional[hami.Request]]:
    return [hami.container_request(c) for c in pod.spec.containers]


class HAMi:
    name = NAME
    events = EVENTS

    def __init__(self, args: Optional[dict] = None):
        self.args = args or {}

    def filter(self, state, pi, ni) -> Status:
        reqs = pod_requests(pi.pod)
        if not any(reqs):
            return Status()
        cards = node_cards(ni)
        if cards is None:
            return Status.new(Code.UnschedulableAndUnresolvable, NOT_REGISTERED)
        policy = pi.pod.metadata.annotations.get(hami.ANN_GPU_POLICY, "spread")
        result = []
        for req in reqs:
            if req is None:
                result.append([])
                continue
            devs, why = fit(cards, req, policy)
            if devs is None:
                return Status.new(Code.Unschedulable, why)
            _apply(cards, devs)
            result.append(devs)
        state[(NAME, ni.name)] = (result, cards)
        return Status()

    def score(self, state, pi, ni) -> int:
        got = state.get((NAME, ni.name))
        if got is None:
            return 0
        _, cards = got
        full = sum((c.used / c.count + c.used_core / c.total_core + c.used_mem / c.total_mem) / 3
                   for c in cards) / max(1, len(cards))
        s = int(full * MAX_NODE_SCORE)
        policy = pi.pod.metadata.annotations.get(hami.ANN_NODE_POLICY, "binpack")
        return MAX_NODE_SCORE - s if policy == "spread" else s

    def reserve(self, state, pi, node: str) -> Status:
        got = state.get((NAME, node))
        if got is None:
            return Status()
        enc = hami.encode_pod_devices(got[0])
        ann = pi.pod.metadata.annotations
        ann[hami.ANN_TO_ALLOCATE] = ann[hami.ANN_ALLOCATED] = enc
        ann[hami.ANN_BIND_PHASE] = "allocating"
        return Status()

    def unreserve(self, state, pi, node: str) -> None:
        for k in (hami.ANN_TO_ALLOCATE, hami.ANN_ALLOCATED, hami.ANN_BIND_PHASE):
            pi.pod.metadata.annotations.pop(k, None)


def new(args=None, handle=None) -> HAMi:
    return HAMi(args)
