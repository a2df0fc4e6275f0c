"""go-gpuallocator's best-effort policy and the kubelet's rules for calling GetPreferredAllocation.

Rows ported from:
- NVIDIA/go-gpuallocator ``gpuallocator/besteffort_test.go`` @ a4601e735d79 (TestBestEffortAllocate,
  TestBestEffortIterateGPUSets, TestBestEffortIterateGPUPartitions, TestBestEffort{4xRTX8000,DGX1Pascal,
  DGX1Volta}GPUAlloc{One,Two,Four,Eight}) and @ 2a5a762c1793 (TestBestEffortAllocateRetainsBestPartition),
  with the node fixtures of ``gpuallocator/common_test.go`` @ 652a40b9c32a (New4xRTX8000Node,
  NewDGX1PascalNode, NewDGX1VoltaNode).
- kubernetes/kubernetes ``pkg/kubelet/cm/devicemanager/topology_hints_test.go`` (v1.36 shape, the
  ``sets.Set[string]`` version): TestTopologyAlignedAllocation, TestGetPreferredAllocationParameters.
"""
from __future__ import annotations

import random

import pytest

from gpusim.hardware import topology as hw
from gpusim.node.devicemanager_affinity import AllocationError, DevicesToAllocate, devices_to_allocate, filter_by_affinity
from gpusim.node.gpuallocator import (LINK_SCORE, Allocator, BestEffortPolicy, P2PLinkType, PairTopology, aligned_alloc,
                                      calculate_gpu_pair_score, iterate_gpu_partitions, iterate_gpu_sets, new_devices,
                                      nvlink_type)
from gpusim.node.gpuboard import board_devices
from gpusim.node.topologymanager import hint

PAD = -1


def node_from(n: int, nvlinks: dict[tuple[int, int], int], pcie: dict[tuple[int, int], str],
              default_pcie: str = "", via_nvswitch: bool = False, detect_nvswitch: bool = False):
    """A TestNode: symmetric link tables → gpuallocator devices (UUIDs GPU-<i> as in NewTestGPU)."""
    def pair(i: int, j: int) -> PairTopology:
        k = (min(i, j), max(i, j))
        return PairTopology(pcie.get(k, default_pcie), nvlinks.get(k, 0), via_nvswitch)
    return new_devices([f"GPU-{i}" for i in range(n)], pair, detect_nvswitch)


def dgx1_volta():
    nv = {(0, 1): 1, (0, 2): 1, (0, 3): 2, (0, 4): 2, (1, 2): 2, (1, 3): 1, (1, 5): 2, (2, 3): 2, (2, 6): 1,
          (3, 7): 1, (4, 5): 1, (4, 6): 1, (4, 7): 2, (5, 6): 2, (5, 7): 1, (6, 7): 2}
    pcie = {(0, 1): "PIX", (0, 2): "PHB", (0, 3): "PHB", (1, 2): "PHB", (1, 3): "PHB", (2, 3): "PIX",
            (4, 5): "PIX", (4, 6): "PHB", (4, 7): "PHB", (5, 6): "PHB", (5, 7): "PHB", (6, 7): "PIX"}
    return node_from(8, nv, pcie, default_pcie="SYS")


def dgx1_pascal():
    nv = {k: 1 for k in [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 5), (2, 3), (2, 6), (3, 7), (4, 5),
                         (4, 6), (4, 7), (5, 6), (5, 7), (6, 7)]}
    pcie = {(0, 1): "PHB", (0, 2): "PIX", (0, 3): "PHB", (1, 2): "PHB", (1, 3): "PIX", (2, 3): "PHB",
            (4, 5): "PHB", (4, 6): "PIX", (4, 7): "PHB", (5, 6): "PHB", (5, 7): "PIX", (6, 7): "PHB"}
    return node_from(8, nv, pcie, default_pcie="SYS")


def rtx8000x4():
    return node_from(4, {(0, 3): 2, (1, 2): 2}, {(0, 1): "NODE", (0, 2): "SYS", (1, 3): "SYS", (2, 3): "NODE"})


def pick(devices, indices):
    """GetDevicesFromIndices."""
    by = {d.index: d for d in devices}
    return [by[i] for i in indices]


# --- TestBestEffortAllocate (DGX-1 Volta) -------------------------------------------------------------
@pytest.mark.parametrize("description,available,required,size,result", [
    ("Single NVLINK, prefer same switch", [0, 2, 4, 5], [], 2, [4, 5]),
    ("Single NVLINK, prefer same socket", [0, 4, 5, 6], [], 2, [5, 6]),
    ("Prefer dual NVLINK same socket", [0, 3, 1], [], 2, [0, 3]),
    ("Prefer dual NVLINK cross socket", [0, 1, 4], [], 2, [0, 4]),
    ("Must include with allocation size 1", list(range(8)), [4], 1, [4]),
    ("Must include with allocation size 2", list(range(8)), [4], 2, [4, 7]),
    ("Must include with allocation size 4", list(range(8)), [4], 4, [4, 5, 6, 7]),
    ("Must include with unavailable device", [1, 2, 3, 4, 5, 6, 7], [0, 1, 2, 3], 4, []),
    ("Must include with full set specified", list(range(8)), [0, 2, 4, 6], 4, [0, 2, 4, 6]),
    ("Must include with too many devices specified", list(range(8)), [1, 2, 3, 4, 5, 6], 4, []),
    ("Required too many devices than available", [1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 6], 1, []),
])
def test_best_effort_allocate(description, available, required, size, result):
    devices = dgx1_volta()
    got = BestEffortPolicy().allocate(pick(devices, available), pick(devices, required), size)
    assert sorted(d.index for d in got) == sorted(result)


# --- TestBestEffortIterateGPUSets ---------------------------------------------------------------------
@pytest.mark.parametrize("description,size,result", [
    ("Iterate 0", 0, []),
    ("Iterate 1", 1, [[0], [1], [2], [3]]),
    ("Iterate 2", 2, [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]),
    ("Iterate 3", 3, [[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]]),
    ("Iterate 4", 4, [[0, 1, 2, 3]]),
    ("Iterate Too Many", 5, []),
])
def test_iterate_gpu_sets(description, size, result):
    devices = pick(dgx1_volta(), [0, 1, 2, 3])
    got = [[d.index for d in s] for s in iterate_gpu_sets(devices, size)]
    assert got == result


def _canonical(partition):
    return tuple(sorted(tuple(sorted(PAD if d is None else d.index for d in s)) for s in partition))


# --- TestBestEffortIterateGPUPartitions ---------------------------------------------------------------
@pytest.mark.parametrize("description,size,result", [
    ("Iterate 0", 0, []),
    ("Iterate 1", 1, [[[0]], [[1]], [[2]], [[3]]]),
    ("Iterate 2", 2, [[[0, 1], [2, 3]], [[0, 2], [1, 3]], [[0, 3], [1, 2]]]),
    ("Iterate 3", 3, [[[0, 1, 2], [3, PAD, PAD]], [[0, 1, 3], [2, PAD, PAD]], [[0, 2, 3], [1, PAD, PAD]],
                      [[1, 2, 3], [0, PAD, PAD]]]),
    ("Iterate 4", 4, [[[0, 1, 2, 3]]]),
    ("Iterate Too Many", 5, []),
])
def test_iterate_gpu_partitions(description, size, result):
    devices = pick(dgx1_volta(), [0, 1, 2, 3])
    got = sorted(_canonical(p) for p in iterate_gpu_partitions(devices, size))
    want = sorted(tuple(sorted(tuple(sorted(s)) for s in p)) for p in result)
    assert got == want


def test_best_effort_allocate_retains_best_partition():
    """TestBestEffortAllocateRetainsBestPartition: 14 GPUs in pairs (NV2 each, NV4 for 12-13), size 2."""
    nv = {(i, i + 1): 2 for i in range(0, 12, 2)}
    nv[(12, 13)] = 4
    devices = node_from(14, nv, {})
    got = BestEffortPolicy().allocate(devices, [], 2)
    assert sorted(d.index for d in got) == [12, 13]


# --- sequential Allocator tests (RunAllocTests) --------------------------------------------------------
@pytest.mark.parametrize("test,node,steps", [
    ("TestBestEffort4xRTX8000GPUAllocOne", rtx8000x4, [(1, [0]), (1, [1]), (1, [2]), (1, [3]), (1, [])]),
    ("TestBestEffort4xRTX8000GPUAllocTwo", rtx8000x4, [(2, [0, 3]), (2, [1, 2]), (1, [])]),
    ("TestBestEffort4xRTX8000GPUAllocFour", rtx8000x4, [(4, [0, 1, 2, 3]), (1, [])]),
    ("TestBestEffortDGX1PascalGPUAllocOne", dgx1_pascal, [(1, [i]) for i in range(8)] + [(1, [])]),
    ("TestBestEffortDGX1PascalGPUAllocTwo", dgx1_pascal, [(2, [0, 2]), (2, [1, 3]), (2, [4, 6]), (2, [5, 7]), (1, [])]),
    ("TestBestEffortDGX1PascalGPUAllocFour", dgx1_pascal, [(4, [0, 1, 2, 3]), (4, [4, 5, 6, 7]), (1, [])]),
    ("TestBestEffortDGX1PascalGPUAllocEight", dgx1_pascal, [(8, list(range(8))), (1, [])]),
    ("TestBestEffortDGX1VoltaGPUAllocOne", dgx1_volta, [(1, [i]) for i in range(8)] + [(1, [])]),
    ("TestBestEffortDGX1VoltaGPUAllocTwo", dgx1_volta, [(2, [0, 3]), (2, [1, 2]), (2, [4, 7]), (2, [5, 6]), (1, [])]),
    ("TestBestEffortDGX1VoltaGPUAllocFour", dgx1_volta, [(4, [0, 1, 2, 3]), (4, [4, 5, 6, 7]), (1, [])]),
    ("TestBestEffortDGX1VoltaGPUAllocEight", dgx1_volta, [(8, list(range(8))), (1, [])]),
])
def test_allocator_sequence(test, node, steps):
    allocator = Allocator(node())
    for size, result in steps:
        assert sorted(d.index for d in allocator.allocate(size)) == result


# --- scores, link types and the NVSwitch blind spot ---------------------------------------------------
def test_link_scores_match_calculate_gpu_pair_score():
    assert [LINK_SCORE[t] for t in (P2PLinkType.P2PLinkCrossCPU, P2PLinkType.P2PLinkSameCPU,
                                    P2PLinkType.P2PLinkHostBridge, P2PLinkType.P2PLinkMultiSwitch,
                                    P2PLinkType.P2PLinkSingleSwitch, P2PLinkType.P2PLinkSameBoard)] == [10, 20, 30, 40, 50, 60]
    assert LINK_SCORE[nvlink_type(1)] == 100 and LINK_SCORE[nvlink_type(12)] == 1200
    assert LINK_SCORE[nvlink_type(18)] == 1800 and nvlink_type(36) is P2PLinkType.EighteenNVLINKLinks
    v = dgx1_volta()
    assert calculate_gpu_pair_score(v[0], v[3]) == 200 + 30      # NV2 + PHB
    assert calculate_gpu_pair_score(v[0], v[4]) == 200 + 10      # NV2 + SYS


def hgx_h100(detect_nvswitch: bool = False):
    """8 GPUs, NV18 to every peer through NVSwitch; PCIe: own pair PIX, same socket NODE, else SYS."""
    def pcie(i, j):
        if i // 2 == j // 2:
            return "PIX"
        return "NODE" if i // 4 == j // 4 else "SYS"
    pairs = {(i, j): pcie(i, j) for i in range(8) for j in range(i + 1, 8)}
    return node_from(8, {k: 18 for k in pairs}, pairs, via_nvswitch=True, detect_nvswitch=detect_nvswitch)


def test_nvswitch_blind_spot_scores_pcie_only():
    blind, fixed = hgx_h100(), hgx_h100(detect_nvswitch=True)
    assert calculate_gpu_pair_score(blind[0], blind[1]) == 50          # PIX only: no NVLink entry found
    assert calculate_gpu_pair_score(blind[0], blind[5]) == 10          # SYS only
    assert calculate_gpu_pair_score(fixed[0], fixed[5]) == 1800 + 10   # HAMi#2103 counts the 18 links
    # What the blind spot still gets right: pairs on one PCIe switch, sockets kept together.
    got = BestEffortPolicy().allocate(blind, [], 2)
    assert sorted(d.index for d in got) == [0, 1]
    assert sorted(d.index for d in BestEffortPolicy().allocate(blind, [], 4)) == [0, 1, 2, 3]


def test_answer_depends_on_available_order():
    """Ties keep the first partition found, so the kubelet's random order changes the answer on a board
    where every pair scores the same; gpusim passes index order."""
    devices = node_from(4, {}, {}, default_pcie="NODE")
    forward = BestEffortPolicy().allocate(devices, [], 1)
    backward = BestEffortPolicy().allocate(list(reversed(devices)), [], 1)
    assert [d.index for d in forward] == [0] and [d.index for d in backward] == [3]
    shuffled = list(devices)
    random.Random(7).shuffle(shuffled)
    assert [d.index for d in BestEffortPolicy().allocate(shuffled, [], 1)] == [shuffled[0].index]


def test_aligned_alloc_maps_uuids_and_rejects_unknown_ones():
    devices = dgx1_volta()
    assert aligned_alloc(devices, [f"GPU-{i}" for i in (0, 2, 4, 5)], [], 2) == ["GPU-4", "GPU-5"]
    with pytest.raises(ValueError, match="unable to retrieve list of available devices: no device with uuid: GPU-9"):
        aligned_alloc(devices, ["GPU-9"], [], 1)


# --- kubelet: TestTopologyAlignedAllocation -----------------------------------------------------------
def numa_devices(spec):
    """makeNUMADevice list → (ids, topology); spec items are (id, numa or None)."""
    ids = [d for d, _ in spec]
    return ids, {d: (None if n is None else [n]) for d, n in spec}


def many(ranges):
    """Dev<i> on NUMA n for each (start, stop, n)."""
    return [(f"Dev{i}", n) for start, stop, n in ranges for i in range(start, stop)]


def fixed_answer(ids):
    return lambda available, must_include, size: list(ids)


@pytest.mark.parametrize("description,request_,spec,hint_bits,answer,expected_preferred,expected_alignment", [
    ("Single Request, no alignment", 1, [("Dev1", None), ("Dev2", None)], (0, 1), None, [], {}),
    ("Request for 1, partial alignment", 1, [("Dev1", None), ("Dev2", 1)], (1,), None, [], {1: 1}),
    ("Single Request, socket 0", 1, [("Dev1", 0), ("Dev2", 1)], (0,), None, [], {0: 1}),
    ("Single Request, socket 1", 1, [("Dev1", 0), ("Dev2", 1)], (1,), None, [], {1: 1}),
    ("Request for 2, socket 0", 2, [("Dev1", 0), ("Dev2", 1), ("Dev3", 0), ("Dev4", 1)], (0,), None, [], {0: 2}),
    ("Request for 2, socket 1", 2, [("Dev1", 0), ("Dev2", 1), ("Dev3", 0), ("Dev4", 1)], (1,), None, [], {1: 2}),
    ("Request for 4, unsatisfiable, prefer socket 0", 4,
     [("Dev1", 0), ("Dev2", 1), ("Dev3", 0), ("Dev4", 1), ("Dev5", 0), ("Dev6", 1)], (0,), None, [], {0: 3, 1: 1}),
    ("Request for 4, unsatisfiable, prefer socket 1", 4,
     [("Dev1", 0), ("Dev2", 1), ("Dev3", 0), ("Dev4", 1), ("Dev5", 0), ("Dev6", 1)], (1,), None, [], {0: 1, 1: 3}),
    ("Request for 4, multisocket", 4, [(f"Dev{i}", (i - 1) % 4) for i in range(1, 9)], (1, 3), None, [],
     {1: 2, 3: 2}),
    ("Request for 5, socket 0, preferred aligned accepted", 5, many([(0, 100, 0), (100, 200, 1)]), (0,),
     ["Dev0", "Dev19", "Dev83", "Dev42", "Dev77"], ["Dev0", "Dev19", "Dev83", "Dev42", "Dev77"], {0: 5}),
    ("Request for 5, socket 0, preferred aligned accepted, unaligned ignored", 5, many([(0, 100, 0), (100, 200, 1)]),
     (0,), ["Dev0", "Dev19", "Dev83", "Dev150", "Dev186"], ["Dev0", "Dev19", "Dev83"], {0: 5}),
    ("Request for 5, socket 1, preferred aligned accepted, bogus ignored", 5, many([(0, 100, 1)]), (1,),
     ["Dev0", "Dev19", "Dev83", "bogus0", "bogus1"], ["Dev0", "Dev19", "Dev83"], {1: 5}),
    ("Request for 5, multisocket, preferred accepted", 5, many([(0, 3, 0), (3, 100, 1)]), (0,),
     ["Dev0", "Dev1", "Dev2", "Dev42", "Dev83"], ["Dev0", "Dev1", "Dev2", "Dev42", "Dev83"], {0: 3, 1: 2}),
    ("Request for 5, multisocket, preferred unaligned accepted, bogus ignored", 5, many([(0, 3, 0), (3, 100, 1)]),
     (0,), ["Dev0", "Dev1", "Dev2", "Dev42", "bogus0"], ["Dev0", "Dev1", "Dev2", "Dev42"], {0: 3, 1: 2}),
])
def test_topology_aligned_allocation(description, request_, spec, hint_bits, answer, expected_preferred,
                                     expected_alignment):
    ids, topology = numa_devices(spec)
    got = devices_to_allocate(fixed_answer(answer) if answer is not None else None, resource="resource",
                              required=request_, devices=ids, healthy=set(ids), topology=topology,
                              hint=hint(*hint_bits))
    assert len(got) == request_
    assert set(expected_preferred) <= set(got)
    alignment: dict[int, int] = {}
    if any(topology.values()):
        for d in got:
            if topology[d] is not None:
                alignment[topology[d][0]] = alignment.get(topology[d][0], 0) + 1
    assert alignment == expected_alignment


# --- kubelet: TestGetPreferredAllocationParameters ----------------------------------------------------
@pytest.mark.parametrize("description,request_,spec,allocated,reusable,exp_available,exp_must_include,exp_size", [
    ("Request for 1, socket 0, 0 already allocated, 0 reusable", 1, many([(0, 4, 0)]), [], [],
     ["Dev0", "Dev1", "Dev2", "Dev3"], [], 1),
    ("Request for 4, socket 0, 2 already allocated, 2 reusable", 4, many([(0, 8, 0)]), ["Dev0", "Dev5"],
     ["Dev0", "Dev5"], [f"Dev{i}" for i in range(8)], ["Dev0", "Dev5"], 4),
    ("Request for 4, socket 0, 4 already allocated, 2 reusable", 4, many([(0, 8, 0)]),
     ["Dev0", "Dev5", "Dev4", "Dev1"], ["Dev0", "Dev5"], ["Dev0", "Dev2", "Dev3", "Dev5", "Dev6", "Dev7"],
     ["Dev0", "Dev5"], 4),
    ("Request for 6, multisocket, 2 already allocated, 2 reusable", 6, many([(0, 4, 0), (4, 8, 1)]),
     ["Dev1", "Dev6"], ["Dev1", "Dev6"], [f"Dev{i}" for i in range(8)], ["Dev0", "Dev1", "Dev2", "Dev3", "Dev6"], 6),
    ("Request for 6, multisocket, 4 already allocated, 2 reusable", 6, many([(0, 4, 0), (4, 8, 1)]),
     ["Dev0", "Dev1", "Dev6", "Dev7"], ["Dev1", "Dev6"], ["Dev1", "Dev2", "Dev3", "Dev4", "Dev5", "Dev6"],
     ["Dev1", "Dev2", "Dev3", "Dev6"], 6),
])
def test_get_preferred_allocation_parameters(description, request_, spec, allocated, reusable, exp_available,
                                             exp_must_include, exp_size):
    ids, topology = numa_devices(spec)
    calls = []
    devices_to_allocate(lambda a, m, s: calls.append((a, m, s)) or [], resource="resource", required=request_,
                        devices=ids, healthy=set(ids), topology=topology, in_use=set(allocated), reusable=reusable,
                        hint=hint(0))
    assert len(calls) == 1
    available, must_include, size = calls[0]
    assert set(available) == set(exp_available) and available == sorted(available, key=ids.index)
    assert set(must_include) == set(exp_must_include)
    assert size == exp_size


def test_plugin_not_asked_when_aligned_exactly_covers_the_request():
    """needed == len(aligned): every aligned device is taken and GetPreferredAllocation is skipped."""
    ids, topology = numa_devices([("G0", 0), ("G1", 0), ("G2", 1), ("G3", 1)])
    plan = DevicesToAllocate(resource="nvidia.com/gpu", required=2, devices=ids, healthy=set(ids),
                             topology=topology, hint=hint(1))
    assert plan.request is None and plan.finish() == ["G2", "G3"]
    plan = DevicesToAllocate(resource="nvidia.com/gpu", required=1, devices=ids, healthy=set(ids),
                             topology=topology, hint=hint(1))
    assert plan.request is not None and plan.request.available == ["G2", "G3"]


def test_without_hint_the_plugin_chooses_among_all_free_devices():
    ids, topology = numa_devices([("G0", 0), ("G1", 0), ("G2", 1), ("G3", 1)])
    plan = DevicesToAllocate(resource="nvidia.com/gpu", required=2, devices=ids, healthy=set(ids),
                             topology=topology, in_use={"G1"}, hint=None)
    assert plan.request.available == ["G0", "G2", "G3"] and plan.request.must_include == []
    assert plan.finish(["G3", "G2"]) == ["G3", "G2"]


def test_filter_by_affinity_orders_multi_numa_devices_by_hinted_node_first():
    available = ["A", "B", "C", "D"]
    topology = {"A": [0], "B": [1], "C": [0, 1], "D": None}
    assert filter_by_affinity(available, topology, hint(1)) == (["B", "C"], ["A"], ["D"])
    assert filter_by_affinity(available, topology, None) == ([], [], available)


@pytest.mark.parametrize("kwargs,message", [
    (dict(required=2, held=["G0"]), 'pod "p" container "c" changed request for resource "r" from 1 to 2'),
    (dict(registered=False), "cannot allocate unregistered device r"),
    (dict(healthy=set()), "no healthy devices present; cannot allocate unhealthy devices r"),
    (dict(required=3, in_use={"G0"}), "requested number of devices unavailable for r. Requested: 3, Available: 2"),
])
def test_devices_to_allocate_errors(kwargs, message):
    ids, topology = numa_devices([("G0", 0), ("G1", 0), ("G2", 1)])
    base = dict(resource="r", required=1, devices=ids, healthy=set(ids), topology=topology, pod="p", container="c")
    base.update(kwargs)
    with pytest.raises(AllocationError) as e:
        DevicesToAllocate(**base)
    assert str(e.value) == message


# --- the board graphs of gpusim.hardware.topology through gpusim.node.gpuboard ---------------------------
@pytest.mark.parametrize("board", sorted(hw.BOARDS))
def test_board_devices_score_as_the_hardware_module_says(board):
    """Both sides model go-gpuallocator's calculateGPUPairScore: the policy's scores of the device list built
    from a board graph equal hardware.topology.gpuallocator_pair_score for every pair."""
    g = hw.server_graph(board)
    devices = board_devices(g)
    n = len(devices)
    for i in range(n):
        for j in range(n):
            if i != j:
                assert calculate_gpu_pair_score(devices[i], devices[j]) == hw.gpuallocator_pair_score(g, i, j)


def test_dgx_1v_board_is_the_upstream_fixture():
    """The hardware module's dgx-1v board is NewDGX1VoltaNode (common_test.go): same links, same scores."""
    g, fixture = board_devices(hw.server_graph("dgx-1v")), dgx1_volta()
    for i in range(8):
        assert {j: sorted(links) for j, links in g[i].links.items()} == \
               {j: sorted(links) for j, links in fixture[i].links.items()}
    assert [d.index for d in BestEffortPolicy().allocate(g, [], 4)] == \
           [d.index for d in BestEffortPolicy().allocate(fixture, [], 4)]


def test_dgx_h100_board_has_the_nvswitch_blind_spot_unless_detected():
    g = hw.server_graph("dgx-h100")
    blind, seen = board_devices(g), board_devices(g, detect_nvswitch=True)
    assert all(len(links) == 1 for d in blind for links in d.links.values())            # PCIe entry only
    assert all(P2PLinkType.EighteenNVLINKLinks in links for d in seen for links in d.links.values())
    with pytest.raises(ValueError, match="has 8 GPUs, got 2 uuids"):
        board_devices(g, uuids=["a", "b"])
