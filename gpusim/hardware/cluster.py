"""The hardware of a whole simulated cluster: each GPU node's server board, the GPUs' UUIDs, and the compute
fabric between the nodes — what the all-reduce model (:mod:`gpusim.hardware.collectives`) needs to cost a
placement, and what the records and views show.

Plain data built once per simulation by ``gpusim.cluster.simulation`` (boards from the NodePools'
``spec.gpu.topology``, the fabric from the scenario's ``Fabric`` or the default one); components read it through
the shared context, records and views through the finished run. The fabric is built on first use: a run that
costs no all-reduce never pays for it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import networkx as nx

from . import collectives, topology
from .fabric import Fabric, FabricSpec, build_fabric


@dataclass
class ClusterTopology:
    """``servers``: node → board graph (GPU nodes with a board); ``uuids``: node → GPU UUIDs by index;
    ``fabric_spec`` and ``fabric_nodes`` (in attachment order) describe the compute fabric."""

    servers: dict[str, nx.Graph] = field(default_factory=dict)
    uuids: dict[str, list[str]] = field(default_factory=dict)
    fabric_spec: FabricSpec = field(default_factory=FabricSpec)
    fabric_nodes: list[str] = field(default_factory=list)
    _fabric: Optional[Fabric] = field(default=None, repr=False)

    @property
    def fabric(self) -> Optional[Fabric]:
        """The fabric over ``fabric_nodes`` (None when no node has a compute NIC)."""
        if self._fabric is None and self.fabric_nodes:
            self._fabric = build_fabric([(n, self.servers[n]) for n in self.fabric_nodes], self.fabric_spec)
        return self._fabric

    def server(self, node: str) -> Optional[nx.Graph]:
        return self.servers.get(node)

    def gpu_index(self, node: str, uuid: str) -> Optional[int]:
        """The NVML index of GPU ``uuid`` on ``node`` (None if it is not one of its GPUs)."""
        ids = self.uuids.get(node, [])
        return ids.index(uuid) if uuid in ids else None

    def gpus(self, node: str) -> list[dict[str, Any]]:
        """``[{index, uuid, numaNode, nic}]`` for the node's GPUs (``nic``: the RDMA device of the GPU's compute
        NIC, None without one; ``numaNode`` None on a node without a board)."""
        g = self.servers.get(node)
        rows = []
        for i, u in enumerate(self.uuids.get(node, [])):
            d = g.nodes[topology.gpu_node(g, i)] if g is not None else None
            nic = d["nic"] if d is not None else None
            rows.append({"index": i, "uuid": u, "numaNode": d["numa"] if d is not None else None,
                         "nic": g.nodes[f"nic{nic}"]["rdma"] if nic is not None else None})
        return rows

    def allreduce(self, placement: Sequence[tuple[str, Sequence[int]]], size_bytes: float) -> collectives.AllReduceCost:
        """The §3.3 ring all-reduce of ``size_bytes`` over ``placement`` ((node, GPU indices) in rank order), on
        this cluster's boards and fabric."""
        for node, _ in placement:
            if node not in self.servers:
                raise ValueError(f'node "{node}" has no server board (a VM or a GPU-less node)')
        fabric = self.fabric if len({n for n, _ in placement}) > 1 else None
        return collectives.allreduce([(n, self.servers[n], list(gpus)) for n, gpus in placement], size_bytes,
                                     fabric)
