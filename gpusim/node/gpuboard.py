"""What NVML reports about a server board's GPU pairs, as go-gpuallocator's device list builder sees it.

Adapter from a board graph of :mod:`gpusim.hardware.topology` to :class:`gpusim.node.gpuallocator.PairTopology`:
``pcie`` is the board's PCIe class of the pair (NVML ``nvmlDeviceGetTopologyCommonAncestor``), ``nvlinks`` the
NVLinks ``nvidia-smi`` reports (direct bonded links, or through an NVSwitch the smaller of the two GPUs' link
counts) and ``via_nvswitch`` whether those links end on a switch rather than on the peer, which is what
go-gpuallocator's ``GetNVLink`` misses (the NVSwitch blind spot). :func:`board_devices` builds the
``gpuallocator.Device`` list the best-effort policy scores.
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence

import networkx as nx

from gpusim.hardware import topology as hw
from gpusim.node.gpuallocator import Device, PairTopology, new_devices


def pair_function(g: nx.Graph) -> Callable[[int, int], PairTopology]:
    """The ``pair(i, j)`` input of :func:`gpusim.node.gpuallocator.new_devices` for board ``g`` (GPU indices)."""
    def pair(i: int, j: int) -> PairTopology:
        a, b = hw.gpu_node(g, i), hw.gpu_node(g, j)
        links = hw.nvlink_links(g, a, b)
        direct = hw.direct_nvlinks(g, a, b)
        return PairTopology(pcie=hw.pcie_class(g, a, b), nvlinks=links, via_nvswitch=links > 0 and direct == 0)
    return pair


DEVICES_ATTR = "gpuallocator_devices"   # graph attribute memoising the devices' links per detect_nvswitch
PAIRS_ATTR = "gpuallocator_pairs"   # graph attribute memoising pair_table (the board graph is read-only data)


def pair_table(g: nx.Graph) -> dict[tuple[int, int], PairTopology]:
    """:func:`pair_function` for every ordered GPU pair of ``g``, computed once per board graph (nodes sharing a
    board share it: NVML's answers depend on the board, not on the node)."""
    memo = g.graph.setdefault("_derived", {})
    if PAIRS_ATTR not in memo:
        pair, n = pair_function(g), len(hw.gpus(g))
        memo[PAIRS_ATTR] = {(i, j): pair(i, j) for i in range(n) for j in range(n) if i != j}
    return memo[PAIRS_ATTR]


def board_devices(g: nx.Graph, uuids: Optional[Sequence[str]] = None, detect_nvswitch: bool = False) -> list[Device]:
    """go-gpuallocator's device list for every GPU of board ``g`` in index order; ``uuids`` default to
    ``GPU-<index>``. ``detect_nvswitch`` models HAMi#2103 (NVSwitch pairs count their NVLinks)."""
    n = len(hw.gpus(g))
    ids = list(uuids) if uuids is not None else [f"GPU-{i}" for i in range(n)]
    if len(ids) != n:
        raise ValueError(f"{g.graph['board']} has {n} GPUs, got {len(ids)} uuids")
    # the P2P links depend on the board alone: built once per board graph, then shared (read-only) by the
    # device lists of every node on that board, each with its own UUIDs
    memo = g.graph.setdefault("_derived", {})
    key = (DEVICES_ATTR, detect_nvswitch)
    if key not in memo:
        table = pair_table(g)
        memo[key] = new_devices([f"GPU-{i}" for i in range(n)], lambda i, j: table[(i, j)],
                                detect_nvswitch=detect_nvswitch)
    return [Device(d.index, u, d.links) for d, u in zip(memo[key], ids)]
