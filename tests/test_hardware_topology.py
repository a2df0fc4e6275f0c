"""gpusim.hardware.topology: server graphs, GPU-pair classes, GPU→NUMA/NIC maps and ``nvidia-smi topo -m``,
checked against upstream test fixtures and observed outputs cited in the topology reference."""
from __future__ import annotations

import hashlib
import itertools

import networkx as nx
import pytest

from gpusim.hardware import topology as t

# --- go-gpuallocator gpuallocator/common_test.go @ 304658a7, NewDGX1VoltaNode: every GPU pair's NVLink count and
# P2P link type (P2PLinkSingleSwitch = PIX, P2PLinkHostBridge = PHB, P2PLinkCrossCPU = SYS).
DGX1V_PAIRS = [
    (0, 1, 1, "PIX"), (0, 2, 1, "PHB"), (0, 3, 2, "PHB"), (0, 4, 2, "SYS"), (0, 5, 0, "SYS"), (0, 6, 0, "SYS"),
    (0, 7, 0, "SYS"), (1, 2, 2, "PHB"), (1, 3, 1, "PHB"), (1, 4, 0, "SYS"), (1, 5, 2, "SYS"), (1, 6, 0, "SYS"),
    (1, 7, 0, "SYS"), (2, 3, 2, "PIX"), (2, 4, 0, "SYS"), (2, 5, 0, "SYS"), (2, 6, 1, "SYS"), (2, 7, 0, "SYS"),
    (3, 4, 0, "SYS"), (3, 5, 0, "SYS"), (3, 6, 0, "SYS"), (3, 7, 1, "SYS"), (4, 5, 1, "PIX"), (4, 6, 1, "PHB"),
    (4, 7, 2, "PHB"), (5, 6, 2, "PHB"), (5, 7, 1, "PHB"), (6, 7, 2, "PIX"),
]


@pytest.mark.parametrize("i, j, nvlinks, pcie", DGX1V_PAIRS)
def test_dgx1v_matches_go_gpuallocator_fixture(i, j, nvlinks, pcie):
    g = t.server_graph("dgx-1v")
    a, b = f"gpu{i}", f"gpu{j}"
    assert t.direct_nvlinks(g, a, b) == t.direct_nvlinks(g, b, a) == nvlinks
    assert t.pcie_class(g, a, b) == t.pcie_class(g, b, a) == pcie
    assert t.gpu_pair_class(g, i, j) == (f"NV{nvlinks}" if nvlinks else pcie)


def test_dgx1v_every_gpu_uses_its_six_nvlinks():
    g = t.server_graph("dgx-1v")
    for n in t.gpus(g):
        assert sum(g.edges[n, m]["links"] for m in g.neighbors(n) if g.edges[n, m]["kind"] == "nvlink") == 6


# --- nvidia-smi topo -m, byte for byte --------------------------------------------------------------------------

# ai-dynamo/aiconfigurator collector hardware-discovery tests, GB200_ANSI_TOPOLOGY: "Exact container bytes captured
# ... on nvl72078-T01" (a GB200 NVL72 tray, container cpuset 0-35). Its sha256 is asserted there; we assert it too.
GB200_CAPTURE = (
    "\t\x1b[4mGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tNIC1\tNIC2\tNIC3\tNIC4\tNIC5\tCPU Affinity\t"
    "NUMA Affinity\tGPU NUMA ID\x1b[0m\n"
    "GPU0\t X \tNV18\tNV18\tNV18\tNODE\tNODE\tNODE\tNODE\tNODE\tNODE\t0-35\t0\t\tN/A\n"
    "GPU1\tNV18\t X \tNV18\tNV18\tNODE\tNODE\tNODE\tNODE\tNODE\tNODE\t0-35\t0\t\tN/A\n"
    "GPU2\tNV18\tNV18\t X \tNV18\tNODE\tNODE\tNODE\tNODE\tNODE\tNODE\t\t1\t\tN/A\n"
    "GPU3\tNV18\tNV18\tNV18\t X \tNODE\tNODE\tNODE\tNODE\tNODE\tNODE\t\t1\t\tN/A\n"
    "NIC0\tNODE\tNODE\tNODE\tNODE\t X \tNODE\tNODE\tNODE\tNODE\tNODE\t\t\t\t\n"
    "NIC1\tNODE\tNODE\tNODE\tNODE\tNODE\t X \tNODE\tNODE\tNODE\tNODE\t\t\t\t\n"
    "NIC2\tNODE\tNODE\tNODE\tNODE\tNODE\tNODE\t X \tNODE\tNODE\tNODE\t\t\t\t\n"
    "NIC3\tNODE\tNODE\tNODE\tNODE\tNODE\tNODE\tNODE\t X \tNODE\tNODE\t\t\t\t\n"
    "NIC4\tNODE\tNODE\tNODE\tNODE\tNODE\tNODE\tNODE\tNODE\t X \tNODE\t\t\t\t\n"
    "NIC5\tNODE\tNODE\tNODE\tNODE\tNODE\tNODE\tNODE\tNODE\tNODE\t X \t\t\t\t\n"
    "\n"
    "Legend:\n"
    "\n"
    "  X    = Self\n"
    "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
    "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n"
    "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
    "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n"
    "  PIX  = Connection traversing at most a single PCIe bridge\n"
    "  NV#  = Connection traversing a bonded set of # NVLinks\n"
    "\n"
    "NIC Legend:\n"
    "\n"
    "  NIC0: mlx5_0\n"
    "  NIC1: mlx5_1\n"
    "  NIC2: mlx5_2\n"
    "  NIC3: mlx5_3\n"
    "  NIC4: mlx5_4\n"
    "  NIC5: mlx5_5\n"
    "\n"
)


def test_gb200_tray_topo_m_is_byte_identical_to_the_capture():
    assert hashlib.sha256(GB200_CAPTURE.encode()).hexdigest() == \
        "cca8b1e86930da4776987fdd3fe8160e6e3093342c4c99a9a030cfd9c5b29999"
    g = t.server_graph("gb200-nvl72")
    assert t.format_topo_m(g, underline=True, cpus_allowed="0-35") == GB200_CAPTURE


# A raw (tab-separated) 10-NIC DGX A100 capture from a driver without the GPU NUMA ID column; the same matrix as
# NVIDIA/DCGM#149 (quoted in the reference, §1.2).
_A100_ROWS = [
    ("GPU0", "PXB PXB SYS SYS SYS SYS SYS SYS SYS SYS", "48-63,176-191", "3"),
    ("GPU1", "PXB PXB SYS SYS SYS SYS SYS SYS SYS SYS", "48-63,176-191", "3"),
    ("GPU2", "SYS SYS PXB PXB SYS SYS SYS SYS SYS SYS", "16-31,144-159", "1"),
    ("GPU3", "SYS SYS PXB PXB SYS SYS SYS SYS SYS SYS", "16-31,144-159", "1"),
    ("GPU4", "SYS SYS SYS SYS PXB PXB SYS SYS SYS SYS", "112-127,240-255", "7"),
    ("GPU5", "SYS SYS SYS SYS PXB PXB SYS SYS SYS SYS", "112-127,240-255", "7"),
    ("GPU6", "SYS SYS SYS SYS SYS SYS PXB PXB SYS SYS", "80-95,208-223", "5"),
    ("GPU7", "SYS SYS SYS SYS SYS SYS PXB PXB SYS SYS", "80-95,208-223", "5"),
]
DGX_A100_CAPTURE = (
    "\tGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tGPU6\tGPU7\tNIC0\tNIC1\tNIC2\tNIC3\tNIC4\tNIC5\tNIC6\tNIC7\tNIC8\tNIC9"
    "\tCPU Affinity\tNUMA Affinity\n"
    + "".join(f"{r}\t" + "\t".join(" X " if k == i else "NV12" for k in range(8)) + "\t" + "\t".join(nics.split())
              + f"\t{cpus}\t{numa}\n" for i, (r, nics, cpus, numa) in enumerate(_A100_ROWS))
    + "NIC0\tPXB\tPXB\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t X \tPXB\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t\t\n"
    "NIC1\tPXB\tPXB\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tPXB\t X \tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t\t\n"
    "NIC2\tSYS\tSYS\tPXB\tPXB\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t X \tPXB\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t\t\n"
    "NIC3\tSYS\tSYS\tPXB\tPXB\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tPXB\t X \tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t\t\n"
    "NIC4\tSYS\tSYS\tSYS\tSYS\tPXB\tPXB\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t X \tPXB\tSYS\tSYS\tSYS\tSYS\t\t\n"
    "NIC5\tSYS\tSYS\tSYS\tSYS\tPXB\tPXB\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tPXB\t X \tSYS\tSYS\tSYS\tSYS\t\t\n"
    "NIC6\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tPXB\tPXB\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t X \tPXB\tSYS\tSYS\t\t\n"
    "NIC7\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tPXB\tPXB\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tPXB\t X \tSYS\tSYS\t\t\n"
    "NIC8\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t X \tPIX\t\t\n"
    "NIC9\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tPIX\t X \t\t\n"
    "\nLegend:\n\n" + t.LEGEND + "\nNIC Legend:\n\n" + "".join(f"  NIC{i}: mlx5_{i}\n" for i in range(10)) + "\n"
)


def test_dgx_a100_topo_m_matches_the_10_nic_capture():
    assert t.format_topo_m(t.server_graph("dgx-a100"), gpu_numa_id=False) == DGX_A100_CAPTURE


# NVIDIA/DCGM#149 as pasted (tabs expanded by the terminal), driver with the GPU NUMA ID column.
DCGM_149 = """\
        GPU0    GPU1    GPU2    GPU3    GPU4    GPU5    GPU6    GPU7    NIC0    NIC1    NIC2    NIC3    NIC4    NIC5    NIC6    NIC7    NIC8    NIC9    CPU Affinity    NUMA Affinity   GPU NUMA ID
GPU0     X      NV12    NV12    NV12    NV12    NV12    NV12    NV12    PXB     PXB     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     48-63,176-191   3               N/A
GPU1    NV12     X      NV12    NV12    NV12    NV12    NV12    NV12    PXB     PXB     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     48-63,176-191   3               N/A
GPU2    NV12    NV12     X      NV12    NV12    NV12    NV12    NV12    SYS     SYS     PXB     PXB     SYS     SYS     SYS     SYS     SYS     SYS     16-31,144-159   1               N/A
GPU3    NV12    NV12    NV12     X      NV12    NV12    NV12    NV12    SYS     SYS     PXB     PXB     SYS     SYS     SYS     SYS     SYS     SYS     16-31,144-159   1               N/A
GPU4    NV12    NV12    NV12    NV12     X      NV12    NV12    NV12    SYS     SYS     SYS     SYS     PXB     PXB     SYS     SYS     SYS     SYS     112-127,240-255 7               N/A
GPU5    NV12    NV12    NV12    NV12    NV12     X      NV12    NV12    SYS     SYS     SYS     SYS     PXB     PXB     SYS     SYS     SYS     SYS     112-127,240-255 7               N/A
"""


def test_dgx_a100_expanded_output_matches_dcgm_149():
    text = t.format_topo_m(t.server_graph("dgx-a100")).expandtabs(8)
    assert "\n".join(line.rstrip() for line in text.splitlines()[:7]) + "\n" == DCGM_149


# vllm-project/vllm#13855: a DGX H100 (12 NICs; tab-separated as pasted). GPU0-3 rows; GPU r's own NIC is the
# DGX H100 User Guide Table 6 device (mlx5_0, 3, 4, 5, 6, 9, 10, 11).
DGX_H100_ROWS = """\
GPU0\t X \tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\tPXB\tNODE\tNODE\tNODE\tNODE\tNODE\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t0-55,112-167\t0\t\tN/A
GPU1\tNV18\t X \tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\tNODE\tNODE\tNODE\tPXB\tNODE\tNODE\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t0-55,112-167\t0\t\tN/A
GPU2\tNV18\tNV18\t X \tNV18\tNV18\tNV18\tNV18\tNV18\tNODE\tNODE\tNODE\tNODE\tPXB\tNODE\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t0-55,112-167\t0\t\tN/A
GPU3\tNV18\tNV18\tNV18\t X \tNV18\tNV18\tNV18\tNV18\tNODE\tNODE\tNODE\tNODE\tNODE\tPXB\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t0-55,112-167\t0\t\tN/A
"""


def test_dgx_h100_rows_match_vllm_13855():
    g = t.server_graph("dgx-h100")
    lines = t.format_topo_m(g).splitlines()
    assert "\n".join(lines[1:5]) + "\n" == DGX_H100_ROWS
    m = t.topo_matrix(g)
    assert [n for n, c in m["GPU4"].items() if c == "PXB"] == ["NIC6"]
    assert [next(n for n, c in m[f"GPU{i}"].items() if c == "PXB") for i in range(4, 8)] == \
        ["NIC6", "NIC9", "NIC10", "NIC11"]


# NVIDIA/nccl#1439: an 8-GPU PCIe host, two GPUs per switch (pasted, tabs expanded).
NCCL_1439 = """\
        GPU0    GPU1    GPU2    GPU3    GPU4    GPU5    GPU6    GPU7    CPU Affinity    NUMA Affinity   GPU NUMA ID
GPU0     X      PIX     PHB     PHB     SYS     SYS     SYS     SYS     0-13,28-41      0               N/A
GPU1    PIX      X      PHB     PHB     SYS     SYS     SYS     SYS     0-13,28-41      0               N/A
GPU2    PHB     PHB      X      PIX     SYS     SYS     SYS     SYS     0-13,28-41      0               N/A
GPU3    PHB     PHB     PIX      X      SYS     SYS     SYS     SYS     0-13,28-41      0               N/A
GPU4    SYS     SYS     SYS     SYS      X      PIX     PHB     PHB     14-27,42-55     1               N/A
GPU5    SYS     SYS     SYS     SYS     PIX      X      PHB     PHB     14-27,42-55     1               N/A
GPU6    SYS     SYS     SYS     SYS     PHB     PHB      X      PIX     14-27,42-55     1               N/A
GPU7    SYS     SYS     SYS     SYS     PHB     PHB     PIX      X      14-27,42-55     1               N/A

Legend:

"""


def test_pcie_l40s_matrix_matches_nccl_1439():
    g = t.server_graph("pcie-l40s", nics_per_socket=0)
    text = t.format_topo_m(g).expandtabs(8)
    assert "\n".join(line.rstrip() for line in text.splitlines()[:12]) + "\n" == NCCL_1439
    assert text.endswith(t.LEGEND) and "NIC Legend" not in text     # no NICs: the output ends after the legend


@pytest.mark.parametrize("per_switch, pair, cls", [(2, (0, 1), "PIX"), (2, (0, 2), "PHB"), (2, (3, 4), "SYS"),
                                                   (4, (0, 3), "PIX"), (4, (4, 7), "PIX"), (4, (3, 4), "SYS")])
def test_pcie_l40s_gpus_per_switch(per_switch, pair, cls):
    assert t.gpu_pair_class(t.server_graph("pcie-l40s", gpus_per_pcie_switch=per_switch), *pair) == cls


def test_hgx_h200_own_nic_pix_same_socket_node_other_socket_sys():
    # HGX: each GPU shares a PCIe switch with its own NIC (PIX, nccl#1264); other NICs of the socket NODE (nccl#1453).
    m = t.topo_matrix(t.server_graph("hgx-h200"))
    for i in range(8):
        row = m[f"GPU{i}"]
        assert row[f"NIC{i}"] == "PIX"
        assert all(row[f"NIC{j}"] == ("NODE" if j // 4 == i // 4 else "SYS") for j in range(8) if j != i)
        assert all(row[f"GPU{j}"] == "NV18" for j in range(8) if j != i)


def test_topo_m_shape_and_legend_for_every_board():
    for name in t.BOARDS:
        g = t.server_graph(name)
        lines = t.format_topo_m(g).split("\n")
        n = len(t.gpus(g)) + len(t.nics(g))
        header = lines[0].split("\t")
        assert header[0] == "" and header[-3:] == ["CPU Affinity", "NUMA Affinity", "GPU NUMA ID"]
        assert len(header) == 1 + n + 3
        for row in lines[1:1 + n]:
            cells = row.split("\t")
            assert len(cells) == 1 + n + 4                       # the empty cell before GPU NUMA ID
            assert cells.count(" X ") == 1
        assert lines[1 + n] == "" and lines[2 + n] == "Legend:"


# --- NVSwitch semantics, default boards, maps, labels ----------------------------------------------------------

@pytest.mark.parametrize("board, nv", [("dgx-a100", "NV12"), ("dgx-h100", "NV18"), ("hgx-h200", "NV18"),
                                       ("gb200-nvl72", "NV18")])
def test_nvswitch_boards_print_nv_k_but_have_no_direct_nvlink(board, nv):
    g = t.server_graph(board)
    for a, b in itertools.combinations(t.gpus(g), 2):
        assert t.link_class(g, a, b) == nv
        assert t.direct_nvlinks(g, a, b) == 0    # go-gpuallocator's NVSwitch blind spot: it scores PCIe only
    assert sum(1 for n, d in g.nodes(data=True) if d["kind"] == "nvswitch") == 1


@pytest.mark.parametrize("board, i, j, score", [
    ("dgx-1v", 0, 1, 50 + 100), ("dgx-1v", 0, 3, 30 + 200), ("dgx-1v", 0, 4, 10 + 200), ("dgx-1v", 0, 5, 10),
    ("dgx-h100", 0, 1, 20), ("dgx-h100", 0, 4, 10), ("dgx-a100", 0, 1, 40), ("dgx-a100", 0, 2, 10),
    ("hgx-h200", 2, 3, 20), ("pcie-l40s", 0, 1, 50), ("pcie-l40s", 0, 2, 30), ("pcie-l40s", 0, 7, 10),
])
def test_gpuallocator_pair_score(board, i, j, score):
    # go-gpuallocator besteffort_policy.go calculateGPUPairScore; NVSwitch boards get PCIe points only.
    assert t.gpuallocator_pair_score(t.server_graph(board), i, j) == score


def test_nvswitch_blind_spot_misses_all_28_pairs():
    # HAMi PR #2103 measured "OLD detected NVLink in 0 pairs, missed 28 pairs" on 8x H100.
    g = t.server_graph("dgx-h100")
    pairs = list(itertools.combinations(range(8), 2))
    assert len(pairs) == 28
    assert sum(t.gpuallocator_pair_score(g, i, j) >= 100 for i, j in pairs) == 0
    assert all(t.gpu_pair_class(g, i, j) == "NV18" for i, j in pairs)


@pytest.mark.parametrize("model, count, board", [
    ("A100-SXM4-80GB", 8, "dgx-a100"), ("A100-SXM4-40GB", 8, "dgx-a100"), ("H100-SXM5-80GB", 8, "dgx-h100"),
    ("H200-141GB", 8, "hgx-h200"), ("V100-SXM2-32GB", 8, "dgx-1v"), ("L40S", 8, "pcie-l40s"),
    ("H100-SXM5-80GB", 4, "pcie"), ("T4", 4, "pcie"), ("A30-24GB", 8, "pcie"), ("L40S", 2, "pcie"),
])
def test_default_board(model, count, board):
    name, params = t.default_board(model, count)
    assert name == board
    g = t.board_for(model, count)
    assert len(t.gpus(g)) == count
    if name == "pcie":
        assert params == {"model": model, "gpus": count} and g.graph["gpu_model"] == model


@pytest.mark.parametrize("model, count, pair, cls", [("T4", 4, (0, 1), "PIX"), ("T4", 4, (1, 2), "PHB"),
                                                     ("A30-24GB", 8, (3, 4), "SYS"), ("L40S", 1, None, None)])
def test_generic_pcie_board(model, count, pair, cls):
    g = t.board_for(model, count)
    t.validate(g)
    if pair:
        assert t.gpu_pair_class(g, *pair) == cls
    assert len({g.nodes[n]["numa"] for n in t.gpus(g)}) == (1 if count <= 4 else 2)


@pytest.mark.parametrize("board, numa, nic", [
    ("dgx-1v", [0, 0, 0, 0, 1, 1, 1, 1], [0, 0, 1, 1, 2, 2, 3, 3]),
    ("dgx-a100", [3, 3, 1, 1, 7, 7, 5, 5], [0, 1, 2, 3, 4, 5, 6, 7]),
    ("dgx-h100", [0, 0, 0, 0, 1, 1, 1, 1], [0, 3, 4, 5, 6, 9, 10, 11]),
    ("hgx-h200", [0, 0, 0, 0, 1, 1, 1, 1], [0, 1, 2, 3, 4, 5, 6, 7]),
    ("gb200-nvl72", [0, 0, 1, 1], [0, 1, 2, 3]),
    ("pcie-l40s", [0, 0, 0, 0, 1, 1, 1, 1], [0, 0, 0, 0, 1, 1, 1, 1]),
])
def test_gpu_numa_and_nic_maps(board, numa, nic):
    g = t.server_graph(board)
    assert list(t.gpu_numa(g).values()) == numa
    assert list(t.gpu_nic(g).values()) == nic
    assert len(set(t.gpu_rail(g).values())) == len(set(nic))       # one rail per compute NIC


def test_dgx_a100_nps1_has_two_numa_nodes():
    g = t.server_graph("dgx-a100", nps=1)
    assert list(t.gpu_numa(g).values()) == [0, 0, 0, 0, 1, 1, 1, 1]
    m = t.topo_matrix(g)
    assert m["GPU0"]["NIC2"] == "NODE" and m["GPU0"]["NIC4"] == "SYS" and m["GPU0"]["NIC0"] == "PXB"


def test_dgx_h100_nic_names_follow_the_user_guide():
    g = t.server_graph("dgx-h100")
    rows = t.describe(g)
    assert [r["nic"] for r in rows] == ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10",
                                        "mlx5_11"]
    assert [g.nodes[f"nic{n}"]["netdev"] for n in t.gpu_nic(g).values()][:2] == ["ibp24s0", "ibp64s0"]
    assert {r["nicPath"] for r in rows} == {"PXB"} and [r["rail"] for r in rows] == list(range(8))


def test_gb200_clique_label():
    a0 = t.server_graph("gb200-nvl72", rack="r1", tray=0)
    a5 = t.server_graph("gb200-nvl72", rack="r1", tray=5)
    b0 = t.server_graph("gb200-nvl72", rack="r2", tray=0)
    clique = t.node_labels(a0)[t.CLIQUE_LABEL]
    cluster, _, cid = clique.rpartition(".")
    assert cid == "32766" and len(cluster) == 36          # <ClusterUUID>.<CliqueID>
    assert t.node_labels(a5) == t.node_labels(a0) != t.node_labels(b0)
    assert t.node_labels(t.server_graph("gb200-nvl72", clique_id=7, cluster_uuid="9277d399-0674-44a9-b64e-d85bb19ce2b0")) \
        == {"nvidia.com/gpu.clique": "9277d399-0674-44a9-b64e-d85bb19ce2b0.7"}
    assert t.node_labels(t.server_graph("gb200-nvl72", fabric_state="InProgress")) == {}   # only once COMPLETED
    for name in ("dgx-1v", "dgx-a100", "dgx-h100", "hgx-h200", "pcie-l40s"):
        assert t.node_labels(t.server_graph(name)) == {}


@pytest.mark.parametrize("board", sorted(t.BOARDS))
def test_graph_conventions(board):
    g = t.server_graph(board)
    t.validate(g)
    assert {d["kind"] for _, d in g.nodes(data=True)} <= set(t.NODE_KINDS)
    assert {d["kind"] for _, _, d in g.edges(data=True)} <= set(t.EDGE_KINDS)
    assert nx.is_connected(g)


def test_validate_rejects_a_broken_graph():
    g = t.server_graph("dgx-h100")
    g.nodes["gpu0"]["nic"] = 42
    with pytest.raises(t.TopologyError, match="nic 42"):
        t.validate(g)


@pytest.mark.parametrize("call, message", [
    (lambda: t.server_graph("dgx-2"), 'unknown server topology "dgx-2"'),
    (lambda: t.server_graph("dgx-a100", nps=2), "nps must be 1 or 4"),
    (lambda: t.server_graph("gb200-nvl72", tray=18), "tray must be in 0..17"),
    (lambda: t.server_graph("pcie-l40s", gpus_per_pcie_switch=3), "gpus_per_pcie_switch must be 2 or 4"),
    (lambda: t.server_graph("dgx-h100", nps=4), "dgx-h100: "),
    (lambda: t.gpu_pair_class(t.server_graph("gb200-nvl72"), 0, 4), "has no GPU 4"),
])
def test_errors(call, message):
    with pytest.raises(t.TopologyError, match=message):
        call()


@pytest.mark.parametrize("text, cpus", [("0-13,28-41", list(range(14)) + list(range(28, 42))), ("5", [5]),
                                        ("", []), ("0-1,3", [0, 1, 3])])
def test_cpulist_round_trip(text, cpus):
    assert sorted(t.parse_cpulist(text)) == cpus
    assert t.format_cpulist(cpus) == text
