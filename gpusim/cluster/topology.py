"""The loader's hardware step: which server board each GPU node has, and the compute fabric between them.

- A NodePool's ``spec.gpu.topology`` names the board (``gpusim.hardware.topology.BOARDS``) and
  ``spec.gpu.topologyOptions`` its parameters; without one a pool gets ``default_board`` (the DGX/HGX board of
  the 8-GPU SXM models, ``pcie-l40s`` for 8x L40S, the generic ``pcie`` board otherwise). Plain v1 Nodes with
  GPUs get the default board. vGPU VMs have none (the guest sees no PCIe/NUMA topology of the host).
- GPU Feature Discovery's ``nvidia.com/gpu.clique`` is written on nodes whose board is in a multi-node NVLink
  domain (GB200 NVL72 trays; GFD ``internal/lm/imex.go``), as the other GFD labels are, at load time.
- The ``Fabric`` kind (at most one) attaches the GPU nodes of its ``nodePools`` (default: every GPU node with a
  compute NIC, in node order) to a rail-optimized or tree fabric (``gpusim.hardware.fabric``) and writes the
  topology labels of its ``labels`` style on them (default ``topograph``). Without a Fabric document the
  simulation uses an idle, non-blocking rail-optimized fabric of the boards' own NICs that writes no labels: a
  cluster carries topology labels only when something (topograph, the cloud provider) writes them.

Resolved on the scenario: ``boards`` (node → board key), ``board_graphs`` (key → graph, one per distinct
board), ``fabric_spec`` and ``fabric_nodes``.
"""
from __future__ import annotations

from typing import Any

from ..api.schema import encode
from ..api.scheme import object_error
from ..hardware import fabric as hwfabric
from ..hardware import topology as hw


def _key(board: str, params: dict[str, Any]) -> tuple:
    return (board, tuple(sorted(params.items())))


def resolve(sc: Any) -> None:
    """Boards, the clique label, the fabric and its node labels (see the module docstring)."""
    pool_of: dict[str, Any] = {}
    for pool in sc.node_pools:
        g = pool.spec.gpu
        src = sc.source(pool)
        if g is None or not g.count:
            continue
        if g.vgpu is not None:
            if g.topology is not None or g.topology_options:
                raise object_error(pool, src, "spec.gpu.topology", "Forbidden: a vGPU VM sees no server board "
                                   "(its GPUs have no host PCIe/NUMA topology)")
            continue
        board = g.topology if g.topology is not None else hw.default_board(g.model, g.count)[0]
        try:
            params = hw.check_board(board, g.model, g.count, g.topology_options)
        except hw.TopologyError as e:
            field = {"options": "spec.gpu.topologyOptions", "count": "spec.gpu.count",
                     "model": "spec.gpu.model"}.get(e.field, "spec.gpu.topology")
            value = {"spec.gpu.count": g.count, "spec.gpu.model": g.model}.get(field, board)
            if field == "spec.gpu.topologyOptions":
                raise object_error(pool, src, field, f"Invalid value: {e}") from None
            raise object_error(pool, src, field, f'Invalid value: "{value}": {e}') from None
        for i in range(pool.spec.count):
            name = f"{pool.metadata.name}-{i}"
            pool_of[name] = pool
            _attach(sc, name, board, hw.node_board_params(board, params, i))
    for node in sc.nodes:
        name = node.metadata.name
        if name in sc.gpus and name not in pool_of and not node.metadata.labels.get("nvidia.com/vgpu.present"):
            model, count = sc.gpus[name]
            board, params = hw.default_board(model.name, count)
            _attach(sc, name, board, params)
    for node in sc.nodes:
        key = sc.boards.get(node.metadata.name)
        if key is not None:
            node.metadata.labels.update(hw.node_labels(sc.board_graphs[key]))
    _resolve_fabric(sc, pool_of)


def _attach(sc: Any, node: str, board: str, params: dict[str, Any]) -> None:
    key = _key(board, params)
    if key not in sc.board_graphs:
        sc.board_graphs[key] = hw.server_graph(board, **params)
    sc.boards[node] = key


def _resolve_fabric(sc: Any, pool_of: dict[str, Any]) -> None:
    fab = sc.fabric
    with_nics = [n.metadata.name for n in sc.nodes if n.metadata.name in sc.boards
                 and hw.nics(sc.board_graphs[sc.boards[n.metadata.name]], "compute")]
    if fab is None:
        sc.fabric_spec, sc.fabric_nodes = hwfabric.FabricSpec(labels="none"), with_nics
        return
    src = sc.source(fab)
    try:
        spec = hwfabric.spec_from_dict(encode(fab.spec))
    except ValueError as e:
        path, _, message = str(e).partition(": ")
        raise object_error(fab, src, path, message) from None
    if spec.node_pools:
        pools = {p.metadata.name: p for p in sc.node_pools}
        nodes = []
        for i, name in enumerate(spec.node_pools):
            pool = pools.get(name)
            if pool is None:
                raise object_error(fab, src, f"spec.nodePools[{i}]", f'Not found: "{name}": no such NodePool '
                                   "in the scenario")
            members = [n for n in with_nics if pool_of.get(n) is pool]
            if not members:
                raise object_error(fab, src, f"spec.nodePools[{i}]", f'Invalid value: "{name}": the pool has no '
                                   "GPU node with a compute NIC to attach")
            nodes += [n for n in members if n not in nodes]
    else:
        nodes = with_nics
    if not nodes:
        raise object_error(fab, src, "spec", "Invalid value: the scenario has no GPU node with a compute NIC "
                           "to attach")
    sc.fabric_spec, sc.fabric_nodes = spec, nodes
    if spec.labels != "none":
        built = hwfabric.build_fabric([(n, sc.board_graphs[sc.boards[n]]) for n in nodes], spec)
        labels = built.node_labels()
        for node in sc.nodes:
            node.metadata.labels.update(labels.get(node.metadata.name, {}))
