"""Collective-model benchmark: how long gpusim takes to cost one all-reduce for typical placements, and the
figures those placements give (bus bandwidth, all-reduce time).

    python benchmarks/collectives.py

The training workload re-costs its group's all-reduce whenever the placement changes, so this is the figure that
matters for large scenarios: a 1024-GPU DGX H100 job on a 4-SU rail-optimized fabric, 64 PCIe nodes, a DGX-1V job
(NVLink ring search), a GB200 NVL72 rack.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpusim.hardware import collectives as c  # noqa: E402
from gpusim.hardware import fabric as f  # noqa: E402
from gpusim.hardware import topology as t  # noqa: E402


def case(name, placement, fabric=None, size=14e9, repeat=20):
    c.allreduce(placement, size, fabric)            # warm the ring caches, as a long simulation would
    start = time.perf_counter()
    for _ in range(repeat):
        r = c.allreduce(placement, size, fabric)
    ms = (time.perf_counter() - start) / repeat * 1e3
    print(f"{name:<48} {r.ranks:>5} GPUs  B {r.bandwidth:7.1f} GB/s  busbw {r.bus_bandwidth:7.1f}  "
          f"T {r.seconds * 1e3:8.2f} ms   cost {ms:7.2f} ms")


def main() -> None:
    h100, l40s, v100 = t.server_graph("dgx-h100"), t.server_graph("pcie-l40s"), t.server_graph("dgx-1v")
    start = time.perf_counter()
    big = f.build_fabric([(f"h{i}", h100) for i in range(128)])
    print(f"build a 128-node (4 SU) rail-optimized fabric: {(time.perf_counter() - start) * 1e3:.1f} ms")
    loaded = f.build_fabric([(f"h{i}", h100) for i in range(128)], f.FabricSpec(oversubscription=2, load=0.5))
    case("DGX H100 x128, packed, idle fabric", [(f"h{i}", h100, range(8)) for i in range(128)], big)
    case("DGX H100 x128, rails mismatched, 2:1 half-loaded",
         [(f"h{i}", h100, range(4) if i % 2 else range(4, 8)) for i in range(128)], loaded)
    case("L40S x64 nodes, no fabric given", [(f"p{i}", l40s, range(8)) for i in range(64)])
    case("DGX-1V x16 nodes", [(f"v{i}", v100, range(8)) for i in range(16)])
    rack = [(f"gb{i}", t.server_graph("gb200-nvl72", tray=i), range(4)) for i in range(18)]
    case("GB200 NVL72 rack (18 trays, one NVLink domain)", rack)
    start = time.perf_counter()
    for board in t.BOARDS:
        t.format_topo_m(t.server_graph(board))
    print(f"build + format topo -m for all {len(t.BOARDS)} boards: {(time.perf_counter() - start) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
