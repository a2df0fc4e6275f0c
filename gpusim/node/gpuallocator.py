"""go-gpuallocator's best-effort policy: which GPUs of a node belong together (mirrors
NVIDIA/go-gpuallocator ``gpuallocator/besteffort_policy.go``, ``device.go``, ``allocator.go`` and
``internal/links/device.go``; the score table is the one vendored in NVIDIA/k8s-device-plugin v0.20,
``vendor/github.com/NVIDIA/go-gpuallocator/gpuallocator/besteffort_policy.go``, which covers 1-18 NVLinks).

Picture a seating plan: every pair of GPUs has a "closeness" score (100 per NVLink between them, plus
10-60 for how near they sit on the PCIe tree), and the policy does not just seat the requested group at
the best table — it splits *all* free GPUs into tables of the requested size, keeps the split with the
highest total, and gives the pod the best table of that split, so that good tables are not broken up
for later pods.

Inputs are plain: the node's GPU UUIDs in NVML index order and a function that tells, for an ordered
pair of indexes, what NVML would report (:class:`PairTopology`). Nothing here depends on a topology
module; ``gpusim/hardware/topology.py`` can supply the pair function.

**The NVSwitch blind spot** (``internal/links/device.go`` ``GetNVLink``, whose upstream comment
leaves NVSwitch semantics unhandled): an NVLink is counted only when its remote end is the peer GPU's PCI bus id. On NVSwitch
baseboards (DGX/HGX A100, H100, H200, B200) every link ends on a switch, so no NVLink entry is found and
scoring falls back to the PCIe class alone. ``detect_nvswitch=True`` models HAMi's fix
(Project-HAMi/HAMi#2103: a pair behind NVSwitch counts min(links of the two GPUs)); upstream
go-gpuallocator does not have it.

**Order matters**: the search keeps the first best partition found (strict ``>``), so the answer depends
on the order of ``available``. The kubelet passes ``UnsortedList()`` (random order); gpusim passes GPUs in
index order (what ``Allocator.Allocate`` does with ``SortedSlice()``), which makes results deterministic.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional, Sequence

Padding = None     # besteffort_policy.go pads the device list with nil entries


class P2PLinkType(enum.IntEnum):
    """internal/links/device.go ``P2PLinkType``, same order and values."""

    P2PLinkUnknown = 0
    P2PLinkCrossCPU = 1
    P2PLinkSameCPU = 2
    P2PLinkHostBridge = 3
    P2PLinkMultiSwitch = 4
    P2PLinkSingleSwitch = 5
    P2PLinkSameBoard = 6
    SingleNVLINKLink = 7
    TwoNVLINKLinks = 8
    ThreeNVLINKLinks = 9
    FourNVLINKLinks = 10
    FiveNVLINKLinks = 11
    SixNVLINKLinks = 12
    SevenNVLINKLinks = 13
    EightNVLINKLinks = 14
    NineNVLINKLinks = 15
    TenNVLINKLinks = 16
    ElevenNVLINKLinks = 17
    TwelveNVLINKLinks = 18
    ThirteenNVLINKLinks = 19
    FourteenNVLINKLinks = 20
    FifteenNVLINKLinks = 21
    SixteenNVLINKLinks = 22
    SeventeenNVLINKLinks = 23
    EighteenNVLINKLinks = 24


MAX_NVLINKS = 18   # GetNVLink stops counting at EighteenNVLINKLinks


def nvlink_type(links: int) -> P2PLinkType:
    """The link type GetNVLink returns for ``links`` NVLinks to the peer (0 → Unknown; saturates at 18)."""
    if links <= 0:
        return P2PLinkType.P2PLinkUnknown
    return P2PLinkType(P2PLinkType.SingleNVLINKLink + min(links, MAX_NVLINKS) - 1)


# GetP2PLink: NVML common-ancestor level → link type. Keys are NVML's TOPOLOGY_* names and the codes
# `nvidia-smi topo -m` prints for the same levels.
NVML_LEVEL_TO_LINK: dict[str, P2PLinkType] = {
    "INTERNAL": P2PLinkType.P2PLinkSameBoard,
    "SINGLE": P2PLinkType.P2PLinkSingleSwitch,
    "MULTIPLE": P2PLinkType.P2PLinkMultiSwitch,
    "HOSTBRIDGE": P2PLinkType.P2PLinkHostBridge,
    "NODE": P2PLinkType.P2PLinkSameCPU,          # NVML_TOPOLOGY_CPU was renamed NVML_TOPOLOGY_NODE
    "SYSTEM": P2PLinkType.P2PLinkCrossCPU,
}
TOPO_CLASS_TO_LINK: dict[str, P2PLinkType] = {
    "PIX": P2PLinkType.P2PLinkSingleSwitch,
    "PXB": P2PLinkType.P2PLinkMultiSwitch,
    "PHB": P2PLinkType.P2PLinkHostBridge,
    "NODE": P2PLinkType.P2PLinkSameCPU,
    "SYS": P2PLinkType.P2PLinkCrossCPU,
}

# calculateGPUPairScore: points per link entry.
LINK_SCORE: dict[P2PLinkType, int] = {
    P2PLinkType.P2PLinkCrossCPU: 10,
    P2PLinkType.P2PLinkSameCPU: 20,
    P2PLinkType.P2PLinkHostBridge: 30,
    P2PLinkType.P2PLinkMultiSwitch: 40,
    P2PLinkType.P2PLinkSingleSwitch: 50,
    P2PLinkType.P2PLinkSameBoard: 60,
    **{nvlink_type(k): 100 * k for k in range(1, MAX_NVLINKS + 1)},
}


def pcie_link_type(level: str) -> P2PLinkType:
    """GetP2PLink for a common-ancestor level given as an NVML name or a ``topo -m`` code; ``""`` means
    no level reported (P2PLinkUnknown, no link entry)."""
    if not level:
        return P2PLinkType.P2PLinkUnknown
    key = level.upper()
    if key in NVML_LEVEL_TO_LINK:
        return NVML_LEVEL_TO_LINK[key]
    if key in TOPO_CLASS_TO_LINK:
        return TOPO_CLASS_TO_LINK[key]
    raise ValueError(f"unknown topology level: {level}")


@dataclass(frozen=True)
class PairTopology:
    """What NVML reports for an ordered GPU pair.

    ``pcie``: the common PCIe ancestor (``PIX``/``PXB``/``PHB``/``NODE``/``SYS`` or an NVML level name);
    ``nvlinks``: NVLink lanes between the two GPUs; ``via_nvswitch``: those lanes end on an NVSwitch (the
    remote PCI bus id is the switch's), the case go-gpuallocator does not see."""

    pcie: str
    nvlinks: int = 0
    via_nvswitch: bool = False


@dataclass(eq=False)
class Device:
    """gpuallocator.Device: NVML index, UUID and the P2P links to every other GPU (by index)."""

    index: int
    uuid: str
    links: dict[int, list[P2PLinkType]] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"Device({self.index})"


def new_devices(uuids: Sequence[str], pair: Callable[[int, int], PairTopology],
                detect_nvswitch: bool = False) -> list[Device]:
    """deviceListBuilder.build: one PCIe link entry per ordered pair (unless Unknown), plus one NVLink
    entry when NVLinks point at the peer. Through NVSwitch no NVLink entry is added unless
    ``detect_nvswitch`` (HAMi#2103)."""
    devices = [Device(i, u) for i, u in enumerate(uuids)]
    for i in range(len(devices)):
        for j in range(len(devices)):
            if i == j:
                continue
            p = pair(i, j)
            p2p = pcie_link_type(p.pcie)
            if p2p != P2PLinkType.P2PLinkUnknown:
                devices[i].links.setdefault(j, []).append(p2p)
            nvlinks = p.nvlinks if (not p.via_nvswitch or detect_nvswitch) else 0
            nv = nvlink_type(nvlinks)
            if nv != P2PLinkType.P2PLinkUnknown:
                devices[i].links.setdefault(j, []).append(nv)
    return devices


def filter_devices(devices: Sequence[Device], uuids: Sequence[str]) -> list[Device]:
    """DeviceList.Filter: the devices with these UUIDs, in the order of ``uuids``."""
    by_uuid = {d.uuid: d for d in devices}
    out = []
    for u in uuids:
        if u not in by_uuid:
            raise ValueError(f"no device with uuid: {u}")
        out.append(by_uuid[u])
    return out


# --- scoring (besteffort_policy.go) -------------------------------------------------------------------
def calculate_gpu_pair_score(gpu0: Optional[Device], gpu1: Optional[Device]) -> int:
    """calculateGPUPairScore: sum of LINK_SCORE over the links from gpu0 to gpu1 (0 with padding)."""
    if gpu0 is None or gpu1 is None or gpu0 is gpu1:
        return 0
    a, b = gpu0.links.get(gpu1.index, []), gpu1.links.get(gpu0.index, [])
    if len(a) != len(b):
        raise ValueError("Internal error in bestEffort GPU allocator: all P2PLinks between 2 GPUs "
                         "should be bidirectional")
    return sum(LINK_SCORE.get(link, 0) for link in a)


def calculate_gpu_set_score(gpu_set: Sequence[Optional[Device]]) -> int:
    """calculateGPUSetScore: sum of the pair scores over every pair of the set."""
    return sum(calculate_gpu_pair_score(a, b) for a, b in iterate_gpu_sets(gpu_set, 2))


def calculate_gpu_partition_score(partition: Sequence[Sequence[Optional[Device]]]) -> int:
    return sum(calculate_gpu_set_score(s) for s in partition)


# --- enumeration --------------------------------------------------------------------------------------
def iterate_gpu_sets(devices: Sequence[Optional[Device]], size: int) -> Iterator[tuple]:
    """iterateGPUSets: every combination of ``size`` devices, positions in increasing order."""
    n = len(devices)
    if size <= 0 or size > n:
        return
    idx = list(range(size))
    while True:
        yield tuple(devices[i] for i in idx)
        k = size - 1
        while k >= 0 and idx[k] == n - size + k:
            k -= 1
        if k < 0:
            return
        idx[k] += 1
        for m in range(k + 1, size):
            idx[m] = idx[m - 1] + 1


def _contains(gpu_set: Sequence[Optional[Device]], gpu: Optional[Device]) -> bool:
    """gpuSetContains (pointer identity; a nil entry matches padding)."""
    return any(g is gpu for g in gpu_set)


def _contains_all(gpu_set: Sequence[Optional[Device]], subset: Sequence[Optional[Device]]) -> bool:
    return all(_contains(gpu_set, g) for g in subset)


def _padding(gpu_set: Sequence[Optional[Device]]) -> int:
    return sum(1 for g in gpu_set if g is None)


def iterate_gpu_partitions(devices: Sequence[Device], size: int) -> Iterator[list[tuple]]:
    """iterateGPUPartitions: every split of ``devices`` (padded with None to a multiple of ``size``)
    into sets of ``size`` whose first elements are in increasing position order; a set holds either
    no padding or all of it. ``size == 1`` yields one single-device "partition" per device."""
    if size <= 0 or size > len(devices):
        return
    if size == 1:
        for d in devices:
            yield [(d,)]
        return
    padded: list[Optional[Device]] = list(devices)
    while len(padded) % size:
        padded.append(Padding)
    padding = _padding(padded)

    def iterate(rest: list, accum: list) -> Iterator[list[tuple]]:
        if size == len(rest):
            yield accum + [tuple(rest)]
            return
        for tail in iterate_gpu_sets(rest[1:], size - 1):
            s = (rest[0],) + tail
            p = _padding(s)
            if not (p == 0 or p == padding):
                continue
            remaining = [g for g in rest if not _contains(s, g)]
            yield from iterate(remaining, accum + [s])

    yield from iterate(padded, [])


def _partition_contains_set_with_all(partition: Sequence[tuple], subset: Sequence[Device]) -> bool:
    """gpuPartitionContainsSetWithAll: a set with every ``subset`` device and no padding."""
    return any(_contains_all(s, subset) and _padding(s) == 0 for s in partition)


class BestEffortPolicy:
    """gpuallocator.NewBestEffortPolicy().

    ``allocate`` returns exactly what upstream's exhaustive search returns, found by dynamic programming over
    the remaining GPUs instead of walking every partition (16 free GPUs in pairs are two million partitions):
    the first partition of the depth-first enumeration that reaches the best total is the one whose first set
    is the first (in enumeration order) with a best completion, recursively. ``allocate_exhaustive`` is the
    literal walk; the tests check both agree."""

    def allocate(self, available: Sequence[Device], required: Sequence[Device], size: int) -> list[Device]:
        """(*bestEffortPolicy).Allocate: the best set of ``size`` GPUs from ``available`` holding every
        ``required`` GPU, or [] (size ≤ 0, too few available, more required than size, or no set
        with all required GPUs)."""
        if size <= 0 or len(available) < size or len(required) > size:
            return []
        partition = _best_partition(list(available), list(required), size)
        if partition is None:
            return []
        return _best_set(partition, required)

    def allocate_exhaustive(self, available: Sequence[Device], required: Sequence[Device],
                            size: int) -> list[Device]:
        """The upstream algorithm step by step: every partition (iterateGPUPartitions), the first with the
        highest total score, then its best set holding the required GPUs."""
        if size <= 0 or len(available) < size or len(required) > size:
            return []
        best_partition: Optional[list[tuple]] = None
        best_score = 0
        set_scores: dict[tuple, int] = {}      # memo: a set appears in many partitions

        def set_score(s: tuple) -> int:
            if s not in set_scores:
                set_scores[s] = calculate_gpu_set_score(s)
            return set_scores[s]

        for candidate in iterate_gpu_partitions(available, size):
            if not _partition_contains_set_with_all(candidate, required):
                continue
            score = sum(set_score(s) for s in candidate)
            if score > best_score or best_partition is None:
                best_partition, best_score = candidate, score
        return _best_set(best_partition or [], required)


def _best_set(partition: Sequence[tuple], required: Sequence[Device]) -> list:
    """The sets of the partition holding every required GPU (all sets when none is required, padded ones
    included, as upstream), the first with the highest set score."""
    sets = [s for s in partition if _contains_all(s, required)]
    if not sets:
        return []
    best_set, best_score = sets[0], calculate_gpu_set_score(sets[0])
    for s in sets[1:]:
        score = calculate_gpu_set_score(s)
        if score > best_score:
            best_set, best_score = s, score
    return list(best_set)


def _best_partition(available: list[Device], required: list[Device], size: int) -> Optional[list[tuple]]:
    """The partition ``allocate_exhaustive`` settles on, by memoised search over bitmasks of the padded
    positions (padding positions form one block: a set holds all of it or none, as iterateGPUPartitions
    prunes). None when no partition has a set with every required GPU and no padding."""
    if size == 1:
        for d in available:
            if _contains_all((d,), required):
                return [(d,)]
        return None
    padded: list[Optional[Device]] = list(available)
    while len(padded) % size:
        padded.append(Padding)
    n = len(padded)
    pad_mask = sum(1 << i for i, d in enumerate(padded) if d is None)
    req_mask = 0
    for r in required:
        for i, d in enumerate(padded):
            if d is r:
                req_mask |= 1 << i
    if len({id(r) for r in required}) != bin(req_mask).count("1"):
        return None                      # a required GPU is not available: no set can hold it
    set_score: dict[int, int] = {}

    def score(mask: int) -> int:
        if mask not in set_score:
            set_score[mask] = calculate_gpu_set_score([padded[i] for i in range(n) if mask >> i & 1])
        return set_score[mask]

    def allowed(mask: int) -> bool:
        """No required GPU, or all of them and no padding (anything else has no valid completion)."""
        inter = mask & req_mask
        return inter == 0 or (inter == req_mask and not mask & pad_mask)

    def sets(rest: int):
        """The sets iterateGPUPartitions tries at ``rest``, in its order: the first remaining position plus
        every (size − 1)-combination of the others, lexicographically; padding all or nothing."""
        pos = [i for i in range(n) if rest >> i & 1]
        first, others = pos[0], pos[1:]
        pad_in_rest = rest & pad_mask
        for combo in iterate_gpu_sets(others, size - 1):
            mask = 1 << first
            for i in combo:
                mask |= 1 << i
            p = mask & pad_in_rest
            if p and p != pad_mask:
                continue
            yield mask

    memo: dict[int, Optional[int]] = {}

    def best(rest: int) -> Optional[int]:
        if rest in memo:
            return memo[rest]
        if bin(rest).count("1") == size:
            out = score(rest) if allowed(rest) else None
        else:
            out = None
            for mask in sets(rest):
                if not allowed(mask):
                    continue
                tail = best(rest & ~mask)
                if tail is not None and (out is None or score(mask) + tail > out):
                    out = score(mask) + tail
        memo[rest] = out
        return out

    full = (1 << n) - 1
    if best(full) is None:
        return None
    partition, rest = [], full
    while bin(rest).count("1") > size:
        want = best(rest)
        for mask in sets(rest):
            if allowed(mask):
                tail = best(rest & ~mask)
                if tail is not None and score(mask) + tail == want:
                    break
        partition.append(tuple(padded[i] for i in range(n) if mask >> i & 1))
        rest &= ~mask
    partition.append(tuple(padded[i] for i in range(n) if rest >> i & 1))
    return partition


class Allocator:
    """gpuallocator.Allocator: remaining/allocated sets over a node's GPUs; ``allocate`` asks the policy
    with the remaining GPUs sorted by index (DeviceSet.SortedSlice)."""

    def __init__(self, devices: Sequence[Device], policy: Optional[BestEffortPolicy] = None):
        self.gpus = list(devices)
        self.policy = policy or BestEffortPolicy()
        self.remaining: set[int] = {d.index for d in devices}
        self.allocated: set[int] = set()

    def allocate(self, num: int) -> list[Device]:
        remaining = sorted((d for d in self.gpus if d.index in self.remaining), key=lambda d: d.index)
        devices = self.policy.allocate(remaining, [], num)
        self.allocate_specific(devices)
        return devices

    def allocate_specific(self, devices: Sequence[Device]) -> None:
        unavailable = [d for d in devices if d.index not in self.remaining]
        if unavailable:
            raise ValueError(f"devices '{unavailable}' are unavailable for allocation")
        for d in devices:
            self.remaining.discard(d.index)
            self.allocated.add(d.index)

    def free(self, devices: Sequence[Device]) -> None:
        for d in devices:
            self.remaining.add(d.index)
            self.allocated.discard(d.index)


def aligned_alloc(devices: Sequence[Device], available: Sequence[str], required: Sequence[str],
                  size: int) -> list[str]:
    """k8s-device-plugin internal/rm/nvml_manager.go ``alignedAlloc``: GetPreferredAllocation for full GPUs
    without replicas or MIG. ``available`` keeps its order (DeviceList.Filter); the kubelet sends it in
    random order, gpusim callers pass GPU-index order. Returns UUIDs ([] when the policy finds none)."""
    try:
        avail = filter_devices(devices, available)
    except ValueError as e:
        raise ValueError(f"unable to retrieve list of available devices: {e}") from None
    try:
        req = filter_devices(devices, required)
    except ValueError as e:
        raise ValueError(f"unable to retrieve list of required devices: {e}") from None
    chosen = BestEffortPolicy().allocate(avail, req, size)
    if any(d is None for d in chosen):
        # upstream returns the padded set and dereferences its nil entry (device.UUID): the handler fails
        raise ValueError("best-effort policy returned a padded GPU set (nil device)")
    return [d.uuid for d in chosen]
