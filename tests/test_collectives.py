"""gpusim.hardware.collectives: the topology.md §3.3 ring all-reduce model, reproducing the measured anchors of
§3.2, nccl-tests' bus bandwidth, and the 64 → 128 GPU cliff when placement spreads badly over rails and fabric."""
from __future__ import annotations

import pytest

from gpusim.hardware import collectives as c
from gpusim.hardware import fabric as f
from gpusim.hardware import topology as t

BOARDS = {name: t.server_graph(name) for name in ("dgx-1v", "dgx-a100", "dgx-h100", "hgx-h200", "pcie-l40s")}
BIG = 16e9   # large messages: latency is negligible, busbw → B


def nodes(board: str, n: int, gpus=range(8), prefix: str = "n"):
    return [(f"{prefix}{i}", BOARDS[board], gpus) for i in range(n)]


def gb200(trays: int, racks: int = 1):
    return [(f"gb{i}", t.server_graph("gb200-nvl72", rack=f"r{i % racks}", tray=i // racks), range(4))
            for i in range(trays)]


# (what, placement, model B in GB/s, measured busbw range in GB/s, source) — topology.md §3.2 / §3.3.
ANCHORS = [
    ("DGX A100 multi-node, 8x HDR", lambda: nodes("dgx-a100", 4), 192.0, (190.0, 194.0),
     "AddyLaddy in NVIDIA/nccl#812 via nccl#1576: 192"),
    ("DGX H100 multi-node, 8x NDR", lambda: nodes("dgx-h100", 4), 384.0, (368.0, 392.0), "§3.3: 368-392"),
    ("8x A100 SXM one node", lambda: nodes("dgx-a100", 1), 230.0, (227.0, 237.0), "nccl-tests#175: 232.5"),
    ("8x H100 one node, NVLS", lambda: nodes("dgx-h100", 1), 480.0, (470.0, 490.0), "nccl-tests#212/#290: ~480"),
    ("8x H200 one node", lambda: nodes("hgx-h200", 1), 480.0, (470.0, 480.0), "nccl-tests#272: 475"),
    ("GB200 tray, 4 GPUs", lambda: gb200(1), 721.0, (715.0, 722.0), "NCCL model 18 x 40.1"),
    ("one NDR NIC (a node holding 1 GPU)", lambda: nodes("dgx-h100", 1) + [("x", BOARDS["dgx-h100"], [0])], 48.0,
     (46.0, 49.0), "nccl-tests#290/#267: 46-49"),
    ("8x L40S one node", lambda: nodes("pcie-l40s", 1), 20.0, (19.5, 20.5), "§1.5: ~20 (DERIVED estimate)"),
]


@pytest.mark.parametrize("what, placement, model, measured, source", ANCHORS, ids=[a[0] for a in ANCHORS])
def test_measured_anchors(what, placement, model, measured, source):
    r = c.allreduce(placement(), BIG)
    assert r.bandwidth == pytest.approx(model)
    assert measured[0] <= r.bus_bandwidth <= measured[1], (what, r.bus_bandwidth, source)


def test_multi_node_terms_are_the_formula():
    a100 = c.allreduce(nodes("dgx-a100", 2), BIG)
    t0 = a100.terms[0]
    assert t0.intra_bound == pytest.approx(230 * 8 / 7) and t0.nic_bound == 8 * 24 and t0.f_gdr == 1.0
    h100 = c.allreduce(nodes("dgx-h100", 2), BIG)
    assert h100.terms[0].intra_bound == pytest.approx(370 * 8 / 7) and h100.terms[0].nic_bound == 8 * 48
    assert c.allreduce(nodes("dgx-h100", 1), BIG, algorithm="ring").bandwidth == 370.0


def test_nic_behind_the_cpu_runs_without_gpudirect():
    # HDR NIC behind the CPU: 24 → 16 ("16 GB/s is normal", NVIDIA/nccl#412). GPU 2 of pcie-l40s reaches NIC 0 over PHB.
    box = t.server_graph("pcie-l40s", nic_speed=200)
    assert c.f_gdr(box, 0) == 1.0 and c.f_gdr(box, 2) == 0.67
    r = c.allreduce([("p0", box, [2]), ("p1", box, [2])], BIG)
    assert r.bandwidth == pytest.approx(24 * 0.67) and "GPUDirect" in r.bottleneck


@pytest.mark.parametrize("placement, n, m, latency", [
    (lambda: nodes("dgx-h100", 1), 8, 1, 8.4 + 14 * 3.4),                      # NVLink, one node
    (lambda: nodes("pcie-l40s", 1), 8, 1, 8.4 + 14 * 5.7),                     # PCIe, one node
    (lambda: nodes("dgx-h100", 2), 16, 2, 8.4 + 28 * 3.4 + 2 * 14),            # Intel: max(3.4, 3 x 1)
    (lambda: nodes("dgx-a100", 2), 16, 2, 8.4 + 28 * 6.0 + 2 * 14),            # AMD: max(3.4, 3 x 2)
    (lambda: nodes("dgx-h100", 4), 32, 4, 8.4 + 56 * 3.4 + 6 * 14),
])
def test_latency_term(placement, n, m, latency):
    r = c.allreduce(placement(), 1e9)
    assert (r.ranks, r.domains) == (n, m)
    assert r.latency_us == pytest.approx(latency)
    assert r.seconds == pytest.approx(latency * 1e-6 + 1e9 * 2 * (n - 1) / n / (r.bandwidth * 1e9))
    assert c.allreduce(placement(), 1e9, plateau=True).latency_us == pytest.approx(
        latency * (1.4 if m > 1 else 1.0))


@pytest.mark.parametrize("size, seconds, n, algbw, busbw", [
    (1e9, 0.01, 8, 100.0, 175.0), (4e9, 0.1, 2, 40.0, 40.0), (1e9, 0.5, 16, 2.0, 3.75), (1e9, 1.0, 1, 1.0, 0.0),
])
def test_nccl_tests_bus_bandwidth(size, seconds, n, algbw, busbw):
    # nccl-tests doc/PERFORMANCE.md: algbw = S/t, busbw = algbw * 2(n-1)/n for all-reduce (GB = 1e9 bytes).
    assert c.alg_bandwidth(size, seconds) == pytest.approx(algbw)
    assert c.bus_bandwidth(size, seconds, n) == pytest.approx(busbw)


@pytest.mark.parametrize("compute, comm, overlap, step", [(1.0, 0.4, 0.0, 1.4), (1.0, 0.4, 0.5, 1.2), (2.0, 0.0, 0.9, 2.0)])
def test_step_time(compute, comm, overlap, step):
    assert c.step_time(compute, comm, overlap) == pytest.approx(step)


def test_step_time_rejects_full_overlap():
    with pytest.raises(ValueError, match=r"overlap: must be in \[0, 1\)"):
        c.step_time(1.0, 1.0, 1.0)


# --- placement rules of §3.3 ----------------------------------------------------------------------------------

def test_node_fragmentation_caps_the_ring_at_one_nic():
    packed = c.allreduce(nodes("dgx-h100", 2), BIG)
    frag = c.allreduce(nodes("dgx-h100", 1) + [("x", BOARDS["dgx-h100"], range(7)), ("y", BOARDS["dgx-h100"], [7])],
                       BIG)
    assert (packed.bandwidth, frag.bandwidth) == (384.0, 48.0) and frag.bottleneck == "1 NIC(s) at y"


@pytest.mark.parametrize("gpus, rails, b", [([0, 1], 1, 12.0), ([0, 2], 2, 24.0), ([0, 2, 4, 6], 4, 48.0)])
def test_nic_sharing_on_dgx_1v(gpus, rails, b):
    # DGX-1V: two GPUs per EDR NIC, so r_i = distinct NICs, not GPUs.
    r = c.allreduce(nodes("dgx-1v", 2, gpus), BIG)
    assert len(r.terms[0].rails) == rails and r.bandwidth == b


def test_rail_mismatch_costs_nothing_on_an_idle_non_blocking_fabric_but_halves_on_a_loaded_2_to_1():
    h = BOARDS["dgx-h100"]
    place = [("n0", h, range(4)), ("n1", h, range(4, 8))]
    idle = f.build_fabric([("n0", h), ("n1", h)])
    r = c.allreduce(place, BIG, idle)
    assert {row["tier"] for row in r.flows} == {"spine"}        # no ring edge is rail-aligned
    assert r.f_fabric == 1.0 and r.bandwidth == 4 * 48
    loaded = f.build_fabric([("n0", h), ("n1", h)], f.FabricSpec(oversubscription=2, load=1.0))
    r = c.allreduce(place, BIG, loaded)
    assert r.f_fabric == 0.5 and r.bandwidth == 2 * 48 and r.bottleneck.startswith("fabric")
    aligned = c.allreduce([("n0", h, range(4)), ("n1", h, range(4))], BIG, loaded)
    assert {row["tier"] for row in aligned.flows} == {"leaf"} and aligned.bandwidth == 4 * 48


def test_the_64_to_128_gpu_cliff():
    """A 2:1 fabric, half loaded, SUs of 16 DGX H100 (128 GPUs). 64 GPUs packed in an SU: rail-aligned, one leaf
    hop. 128 GPUs placed blind (4 GPUs per node on 32 nodes, GPUs 0-3 / 4-7 alternating, both SUs): every ring edge
    crosses the spine and shares the up-links; the all-reduce slows 3x and the step time follows. The same 128 GPUs
    packed into one SU keep the 64-GPU bandwidth."""
    h = BOARDS["dgx-h100"]
    fab = f.build_fabric([(f"n{i}", h) for i in range(32)], f.FabricSpec(scalable_unit=16, oversubscription=2, load=0.5))
    gradient_bytes, compute = 14e9, 0.1                         # 7B parameters in bf16; a communication-bound step
    packed64 = c.allreduce([(f"n{i}", h, range(8)) for i in range(8)], gradient_bytes, fab)
    packed128 = c.allreduce([(f"n{i}", h, range(8)) for i in range(16)], gradient_bytes, fab)
    blind128 = c.allreduce([(f"n{i}", h, range(4) if i % 2 == 0 else range(4, 8)) for i in range(32)],
                           gradient_bytes, fab)
    assert packed64.bandwidth == packed128.bandwidth == 384.0
    assert blind128.bandwidth == pytest.approx(128.0) and blind128.f_fabric == pytest.approx(2 / 3)
    steps = {name: c.step_time(compute, r.seconds) for name, r in
             (("64 packed", packed64), ("128 packed", packed128), ("128 blind", blind128))}
    assert steps["128 packed"] == pytest.approx(steps["64 packed"], rel=0.03)
    assert blind128.seconds > 2.9 * packed64.seconds
    assert steps["128 blind"] > 1.5 * steps["64 packed"]
    # the same blind placement on an idle non-blocking fabric loses only the NIC count (4 rails), not the fabric
    idle = c.allreduce([(f"n{i}", h, range(4) if i % 2 == 0 else range(4, 8)) for i in range(32)], gradient_bytes,
                       f.build_fabric([(f"n{i}", h) for i in range(32)], f.FabricSpec(scalable_unit=16)))
    assert idle.f_fabric == 1.0 and idle.bandwidth == 4 * 48


def test_interleaving_nodes_of_two_scalable_units_crosses_the_spine_on_every_edge():
    h = BOARDS["dgx-h100"]
    fab = f.build_fabric([(f"n{i}", h) for i in range(32)], f.FabricSpec(scalable_unit=16, oversubscription=2, load=0.5))
    order = [f"n{(i % 2) * 16 + i // 2}" for i in range(16)]     # n0, n16, n1, n17, ...
    r = c.allreduce([(n, h, range(8)) for n in order], BIG, fab)
    assert {row["tier"] for row in r.flows} == {"spine"}
    packed = c.allreduce([(f"n{i}", h, range(8)) for i in list(range(8)) + list(range(16, 24))], BIG, fab)
    assert sum(row["tier"] == "spine" for row in packed.flows) == 16    # only the two SU boundaries, 8 rails each
    assert r.bandwidth < packed.bandwidth


def test_gb200_nvlink_domain():
    one_rack = c.allreduce(gb200(4), BIG)
    assert (one_rack.domains, one_rack.bandwidth) == (1, 721.0)
    over_ib = c.allreduce(gb200(4), BIG, mnnvl=False)          # no IMEX channel: the ring leaves over the NICs
    assert (over_ib.domains, over_ib.bandwidth) == (4, 4 * 48)
    two_racks = c.allreduce(gb200(4, racks=2), BIG)            # 2 trays in each of 2 racks
    assert two_racks.domains == 2 and two_racks.bandwidth == 8 * 48


@pytest.mark.parametrize("gpus, b", [(range(8), 120.0), ([0, 3], 40.0), ([0, 1], 20.0), ([0, 1, 4, 5], 40.0),
                                     ([0, 5], 6.0)])
def test_dgx_1v_nvlink_rings(gpus, b):
    # 8 GPUs: the NV2 ring and the NV1 ring, each both ways (4 x 2 x 20 ... = 120); GPUs 0 and 5 share no NVLink:
    # SYS through two Broadwell sockets (BDW_QPI_BW 6).
    assert c.intra_bandwidth(BOARDS["dgx-1v"], gpus) == b


@pytest.mark.parametrize("gpus, b", [([0, 1], 24.0), ([0, 2], 20.0), ([0, 4], 22.0), (range(4), 20.0),
                                     (range(8), 20.0)])
def test_pcie_ring_rule(gpus, b):
    assert c.intra_bandwidth(BOARDS["pcie-l40s"], gpus) == b


def test_pcie_ring_shares_the_smp_link():
    box = BOARDS["pcie-l40s"]
    assert c.ring_bandwidth(box, [0, 4, 1, 5]) == 11.0         # two crossings each way share the 22 GB/s link
    assert c.ring_bandwidth(box, [0, 1, 4, 5]) == 22.0


@pytest.mark.parametrize("placement, message", [
    ([("a", BOARDS["dgx-h100"], [0, 0])], "GPU indices repeat"),
    ([("a", BOARDS["dgx-h100"], [8])], "has no GPU 8"),
    ([("a", BOARDS["dgx-h100"], [0]), ("a", BOARDS["dgx-h100"], [1])], "a node appears twice"),
    ([], "no GPUs"),
])
def test_bad_placements(placement, message):
    with pytest.raises(ValueError, match=message):
        c.allreduce(placement, 1e9)


def test_one_rank_has_nothing_to_reduce():
    r = c.allreduce([("a", BOARDS["dgx-h100"], [3])], 1e9)
    assert (r.seconds, r.bus_bandwidth) == (0.0, 0.0)
