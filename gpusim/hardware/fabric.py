"""Cluster fabrics: the compute network between nodes' NICs, the topology labels real clusters carry, and which
switch tier a flow crosses.

Proposed scenario kind (not wired yet; the loader owns it). One document per fabric; every GPU node of the named
NodePools attaches in NodePool order, then node order::

    apiVersion: gpusim.io/v1alpha1
    kind: Fabric
    metadata: {name: compute}
    spec:
      type: RailOptimized        # RailOptimized (default) | Tree
      nodePools: [h100]          # NodePools attached, in order (default: every GPU NodePool)
      nicSpeed: 400G             # compute NIC speed: 100G (EDR) | 200G (HDR) | 400G (NDR) | 800G (XDR);
                                 # default: the board's own compute NICs (NDR on H100/H200/GB200/L40S boards)
      scalableUnit: 32           # RailOptimized: nodes per scalable unit (one leaf per rail per SU)
      spines: 4                  # RailOptimized: spine switches (default: the SuperPOD table for 1-4 SUs)
      nodesPerLeaf: 16           # Tree: nodes under one leaf (ToR / rack); all NICs of a node on that leaf
      leavesPerSpine: 4          # Tree: leaves under one spine (block); blocks meet at a core layer
      oversubscription: 1        # down-link : up-link capacity of every switch tier below the top (>= 1;
                                 # SuperPOD is 1, cheaper fabrics 2 or 3)
      load: 0                    # background load in [0, 1]: share of the other down-ports whose traffic goes up
      labels: topograph          # node labels written: topograph | aws | gcp | oci | kueue | volcano | none

Default (no Fabric document): one idle, non-blocking rail-optimized fabric over all GPU nodes, SUs of 32 nodes,
each board's compute NICs (one NDR NIC per GPU on the 8-GPU Hopper boards).

Models (topology reference ``/work/shared/reference/topology.md`` §2):

- **Rail-optimized fat tree** (DGX SuperPOD RA, "each group of 32 nodes is rail-aligned"): scalable unit *s* has
  one leaf per rail; NIC *r* of every node of the SU goes to leaf ``su<s>-rail<r>``; every leaf connects to every
  spine. A flow between NICs of the same rail in the same SU is one leaf hop; any other flow (another rail, or
  another SU) goes leaf → spine → leaf.
- **Tree** (block/rack): ``nodesPerLeaf`` nodes per leaf (rack ToR), ``leavesPerSpine`` leaves per spine (block),
  spines meet at one core; tier = the lowest common switch.
- **Load**: a leaf with *p* down-ports has up-link capacity ``p·B/o``. The flows going up through it are the job's
  own crossing flows plus ``load × (p − job ports)`` background flows; each gets ``min(1, p / (o · flows))`` of its
  NIC rate (fair share; DERIVED, topology.md §3.3 and §5.5). Idle and non-blocking: a spine crossing costs only
  latency.

Node labels (topology.md §2.2), per ``labels`` style; for a rail-optimized fabric a node touches one leaf per
rail, so its ``leaf`` label names the SU's leaf group (nodes sharing it reach each other in one hop per rail):

- ``topograph``: ``network.topology.nvidia.com/leaf`` / ``/spine`` / ``/core`` (NVIDIA topograph
  ``docs/reference/node-labels.md``; NVLink domains keep ``nvidia.com/gpu.clique`` and get no ``accelerator``
  label, as topograph does when the clique label exists);
- ``aws``: ``topology.k8s.aws/network-node-layer-1`` (top) … ``-3`` (bottom, nodes sharing it are closest), values
  like ``nn-…`` (Amazon EKS ML topology docs);
- ``gcp``: ``cloud.google.com/gce-topology-block`` / ``-subblock`` / ``-host`` (GKE TAS docs);
- ``oci``: ``oci.oraclecloud.com/host.network_block_id`` / ``host.rack_id``;
- ``kueue``: the placeholders of Kueue's TAS examples, ``cloud.provider.com/topology-block`` /
  ``topology-rack`` (rack values reused across blocks, e.g. ``b1``/``r1``, ``b2``/``r1``);
- ``volcano``: ``volcano.sh/hypercluster`` / ``volcano.sh/hypernode`` / ``volcano.sh/tor`` (Volcano's label
  discovery guide examples).
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

import networkx as nx

from . import topology

FABRIC_KINDS = ("leaf", "spine", "core")
TYPES = ("RailOptimized", "Tree")
LABEL_STYLES = ("topograph", "aws", "gcp", "oci", "kueue", "volcano", "none")
# DGX SuperPOD H100 RA: spine switches for 1-4 scalable units (topology.md §2.1).
SUPERPOD_SPINES = {1: 4, 2: 8, 3: 16, 4: 16}
NIC_NAMES = {100: "EDR", 200: "HDR", 400: "NDR", 800: "XDR"}
SPEC_FIELDS = ("type", "nodePools", "nicSpeed", "scalableUnit", "spines", "nodesPerLeaf", "leavesPerSpine",
               "oversubscription", "load", "labels")

TOPOGRAPH = "network.topology.nvidia.com/"


@dataclass(frozen=True)
class FabricSpec:
    """The fields of the proposed ``Fabric`` kind, in Python names."""
    type: str = "RailOptimized"
    nic_speed: Optional[int] = None        # Gb/s; None = each board's own compute NICs
    scalable_unit: int = 32
    spines: Optional[int] = None
    nodes_per_leaf: int = 16
    leaves_per_spine: int = 4
    oversubscription: float = 1.0
    load: float = 0.0
    labels: str = "topograph"
    node_pools: tuple[str, ...] = ()


@dataclass(frozen=True)
class Crossing:
    """Where a flow from one NIC to another goes. ``tier``: ``local`` (same node), ``nvlink`` (same multi-node
    NVLink domain), ``leaf``, ``spine`` or ``core``; ``switches`` on the way (in a rail-optimized fabric the middle
    entry is the literal ``spine``: any spine, as ECMP picks one); ``flow_share`` the fraction of the NIC rate this
    one flow gets alone under the fabric's background load."""
    tier: str
    switches: tuple[str, ...]
    rail_aligned: bool
    flow_share: float

    @property
    def crosses_up(self) -> bool:
        return self.tier in ("spine", "core")


@dataclass
class Fabric:
    """A built fabric: the graph (NIC endpoints ``<node>/nic<r>`` of kind ``nic``, switches of kind ``leaf`` /
    ``spine`` / ``core``, edges of kind ``ib``), the spec and per-node facts."""
    spec: FabricSpec
    graph: nx.Graph
    nodes: list[str]
    rails: dict[str, list[int]]                 # node -> compute rails (NIC rail ids)
    nic_speed: dict[str, int]                   # node -> Gb/s
    domains: dict[str, Optional[str]] = field(default_factory=dict)   # node -> NVLink domain (clique) or None

    # --- structure ---
    def endpoint(self, node: str, rail: int) -> str:
        name = f"{node}/nic{rail}"
        if name not in self.graph:
            raise ValueError(f'node "{node}" has no compute NIC on rail {rail} in this fabric')
        return name

    def leaf_of(self, node: str, rail: int) -> str:
        return self.graph.nodes[self.endpoint(node, rail)]["leaf"]

    def _up(self, switch: str) -> Optional[str]:
        return self.graph.nodes[switch].get("parent")

    def ports_below(self, switch: str) -> int:
        return self.graph.nodes[switch]["ports"]

    # --- queries ---
    def crossing(self, node_a: str, rail_a: int, node_b: str, rail_b: int) -> Crossing:
        """Which tier a flow from ``node_a``'s rail-``rail_a`` NIC to ``node_b``'s rail-``rail_b`` NIC crosses."""
        if node_a == node_b:
            return Crossing("local", (), rail_a == rail_b, 1.0)
        da, db = self.domains.get(node_a), self.domains.get(node_b)
        if da is not None and da == db:
            return Crossing("nvlink", (), rail_a == rail_b, 1.0)
        la, lb = self.leaf_of(node_a, rail_a), self.leaf_of(node_b, rail_b)
        aligned = rail_a == rail_b
        if la == lb:
            return Crossing("leaf", (la,), aligned, 1.0)
        if self.spec.type == "RailOptimized":
            path = (la, "spine", lb)
            tier = "spine"
        else:
            sa, sb = self._up(la), self._up(lb)
            path, tier = ((la, sa, lb), "spine") if sa == sb else ((la, sa, "core", sb, lb), "core")
        share = self.flow_shares([((node_a, rail_a), (node_b, rail_b))])[0]
        return Crossing(tier, path, aligned, share)

    def _uplinks(self, node: str, rail: int, tier: str) -> list[str]:
        """Switches whose up-links a flow leaving (or entering) this NIC uses, for a flow crossing ``tier``."""
        leaf = self.leaf_of(node, rail)
        if tier == "spine":
            return [leaf]
        if tier == "core":
            return [leaf, self._up(leaf)]
        return []

    def flow_shares(self, flows: Sequence[tuple[tuple[str, int], tuple[str, int]]]) -> list[float]:
        """For a job's concurrent flows ((node, rail) → (node, rail)), the fraction of the NIC rate each gets:
        1 for flows that stay under one leaf (or one node / NVLink domain), else the smallest fair share
        ``min(1, ports / (o · flows))`` over the up-links it uses in both directions, counting the job's own
        crossing flows and ``load × (ports − job ports)`` background flows at each switch."""
        o, load = self.spec.oversubscription, self.spec.load
        tiers = []
        for (na, ra), (nb, rb) in flows:
            if na == nb or (self.domains.get(na) is not None and self.domains.get(na) == self.domains.get(nb)):
                tiers.append("local")
                continue
            la, lb = self.leaf_of(na, ra), self.leaf_of(nb, rb)
            if la == lb:
                tiers.append("leaf")
            elif self.spec.type == "RailOptimized" or self._up(la) == self._up(lb):
                tiers.append("spine")
            else:
                tiers.append("core")
        job_ports: dict[str, set[str]] = {}
        for (na, ra), (nb, rb) in flows:
            for n, r in ((na, ra), (nb, rb)):
                leaf = self.leaf_of(n, r)
                for sw in (leaf, self._up(leaf)):
                    if sw is not None:
                        job_ports.setdefault(sw, set()).add(self.endpoint(n, r))
        up: dict[str, int] = {}
        down: dict[str, int] = {}
        for ((na, ra), (nb, rb)), tier in zip(flows, tiers):
            for sw in self._uplinks(na, ra, tier):
                up[sw] = up.get(sw, 0) + 1
            for sw in self._uplinks(nb, rb, tier):
                down[sw] = down.get(sw, 0) + 1

        def share(sw: str, count: int) -> float:
            p = self.ports_below(sw)
            flows_here = count + load * max(0, p - len(job_ports.get(sw, ())))
            return min(1.0, p / (o * flows_here))
        out = []
        for ((na, ra), (nb, rb)), tier in zip(flows, tiers):
            s = 1.0
            for sw in self._uplinks(na, ra, tier):
                s = min(s, share(sw, up[sw]))
            for sw in self._uplinks(nb, rb, tier):
                s = min(s, share(sw, down[sw]))
            out.append(s)
        return out

    def node_labels(self, style: Optional[str] = None) -> dict[str, dict[str, str]]:
        """The topology labels each node carries in the chosen ``style`` (default: the spec's)."""
        style = style or self.spec.labels
        if style not in LABEL_STYLES:
            raise ValueError(f"labels: must be one of {', '.join(LABEL_STYLES)}, got {style!r}")
        out: dict[str, dict[str, str]] = {}
        for node in self.nodes:
            d = self.graph.nodes[self.endpoint(node, self.rails[node][0])]
            leaf, spine, core = d["leaf_group"], d["spine_group"], d.get("core_group")
            out[node] = _labels(style, leaf, spine, core, node, d.get("leaf_index", 0), d.get("block_index", 0))
        return out

    def summary(self) -> dict[str, Any]:
        kinds = [d["kind"] for _, d in self.graph.nodes(data=True)]
        return {"type": self.spec.type, "nodes": len(self.nodes), "leaves": kinds.count("leaf"),
                "spines": kinds.count("spine"), "cores": kinds.count("core"),
                "oversubscription": self.spec.oversubscription, "load": self.spec.load,
                "nicSpeeds": sorted(set(self.nic_speed.values()))}


def _hash(prefix: str, value: str, n: int = 17) -> str:
    return prefix + hashlib.sha256(value.encode()).hexdigest()[:n]


def _labels(style: str, leaf: str, spine: str, core: Optional[str], node: str, leaf_index: int,
            block_index: int) -> dict[str, str]:
    top = core or spine
    if style == "none":
        return {}
    if style == "topograph":
        out = {TOPOGRAPH + "leaf": leaf, TOPOGRAPH + "spine": spine}
        if core:
            out[TOPOGRAPH + "core"] = core
        return out
    if style == "aws":     # layer-1 = top of the hierarchy, layer-3 = bottom
        return {"topology.k8s.aws/network-node-layer-1": _hash("nn-", top),
                "topology.k8s.aws/network-node-layer-2": _hash("nn-", spine),
                "topology.k8s.aws/network-node-layer-3": _hash("nn-", leaf)}
    if style == "gcp":
        return {"cloud.google.com/gce-topology-block": _hash("", spine, 16),
                "cloud.google.com/gce-topology-subblock": _hash("", leaf, 16),
                "cloud.google.com/gce-topology-host": _hash("", node, 16)}
    if style == "oci":
        return {"oci.oraclecloud.com/host.network_block_id": _hash("ocid1.networkblock.", spine, 12),
                "oci.oraclecloud.com/host.rack_id": _hash("ocid1.rack.", leaf, 12)}
    if style == "kueue":   # rack names restart in every block, as in Kueue's kind-cluster example
        return {"cloud.provider.com/topology-block": f"b{block_index + 1}",
                "cloud.provider.com/topology-rack": f"r{leaf_index + 1}"}
    return {"volcano.sh/hypercluster": top, "volcano.sh/hypernode": spine, "volcano.sh/tor": leaf}


def _speed(value: Any, where: str) -> int:
    if isinstance(value, str):
        m = re.fullmatch(r"(\d+)\s*[Gg](?:b/s|bps)?", value.strip())
        if m is None:
            raise ValueError(f"{where}: must be a NIC speed such as 400G, got {value!r}")
        value = int(m.group(1))
    if value not in NIC_NAMES:
        raise ValueError(f"{where}: must be one of {', '.join(f'{s}G' for s in NIC_NAMES)}, got {value!r}")
    return int(value)


def _check_spec(spec: FabricSpec) -> None:
    if spec.type not in TYPES:
        raise ValueError(f"spec.type: must be one of {', '.join(TYPES)}, got {spec.type!r}")
    for name, value in (("scalableUnit", spec.scalable_unit), ("nodesPerLeaf", spec.nodes_per_leaf),
                        ("leavesPerSpine", spec.leaves_per_spine)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"spec.{name}: must be a positive integer, got {value!r}")
    if spec.spines is not None and (not isinstance(spec.spines, int) or spec.spines < 1):
        raise ValueError(f"spec.spines: must be a positive integer, got {spec.spines!r}")
    if not isinstance(spec.oversubscription, (int, float)) or spec.oversubscription < 1:
        raise ValueError(f"spec.oversubscription: must be a number >= 1 (down:up capacity), "
                         f"got {spec.oversubscription!r}")
    if not isinstance(spec.load, (int, float)) or not 0 <= spec.load <= 1:
        raise ValueError(f"spec.load: must be a number in [0, 1], got {spec.load!r}")
    if spec.labels not in LABEL_STYLES:
        raise ValueError(f"spec.labels: must be one of {', '.join(LABEL_STYLES)}, got {spec.labels!r}")
    if spec.nic_speed is not None:
        _speed(spec.nic_speed, "spec.nicSpeed")


def build_fabric(servers: Mapping[str, nx.Graph] | Sequence[tuple[str, nx.Graph]],
                 spec: Optional[FabricSpec] = None) -> Fabric:
    """Attach the nodes (name → server graph from :mod:`gpusim.hardware.topology`, in order) to a fabric."""
    spec = spec or FabricSpec()
    _check_spec(spec)
    items = list(servers.items()) if isinstance(servers, Mapping) else list(servers)
    g = nx.Graph(type=spec.type)
    nodes, rails, speeds, domains = [], {}, {}, {}
    for name, server in items:
        compute = topology.nics(server, "compute")
        if not compute:
            raise ValueError(f'node "{name}": board {server.graph["board"]} has no compute NIC to attach')
        nodes.append(name)
        rails[name] = sorted(server.nodes[n]["rail"] for n in compute)
        speeds[name] = spec.nic_speed or server.nodes[compute[0]]["speed_gbps"]
        domains[name] = topology.nvl_domain(server)
    raw = {n: s / 8 for n, s in speeds.items()}            # GB/s per direction
    if spec.type == "RailOptimized":
        su_size = spec.scalable_unit
        n_su = -(-len(nodes) // su_size) if nodes else 0
        spines = spec.spines or SUPERPOD_SPINES.get(n_su, 16)
        all_rails = sorted({r for rs in rails.values() for r in rs})
        for j in range(spines):
            g.add_node(f"spine{j}", kind="spine", ports=0)
        for s in range(n_su):
            members = nodes[s * su_size:(s + 1) * su_size]
            for r in all_rails:
                leaf = f"su{s}-rail{r}"
                down = sum(1 for m in members if r in rails[m])
                g.add_node(leaf, kind="leaf", su=s, rail=r, ports=su_size, parent=None)
                up_ports = max(1, round(su_size / spec.oversubscription))
                for j in range(spines):
                    links = max(1, up_ports // spines)
                    bw = links * 50.0
                    g.add_edge(leaf, f"spine{j}", kind="ib", links=links, bw=bw, bw_nccl=bw)
                    g.nodes[f"spine{j}"]["ports"] += links
                g.nodes[leaf]["attached"] = down
            for i, m in enumerate(members):
                for r in rails[m]:
                    ep = f"{m}/nic{r}"
                    g.add_node(ep, kind="nic", node=m, rail=r, leaf=f"su{s}-rail{r}", leaf_group=f"su{s}",
                               spine_group="spines", leaf_index=s, block_index=0, speed_gbps=speeds[m])
                    g.add_edge(ep, f"su{s}-rail{r}", kind="ib", links=1, bw=raw[m], bw_nccl=raw[m])
    else:
        per_leaf, per_spine = spec.nodes_per_leaf, spec.leaves_per_spine
        n_leaf = -(-len(nodes) // per_leaf) if nodes else 0
        n_spine = -(-n_leaf // per_spine) if n_leaf else 0
        if n_spine > 1:
            g.add_node("core", kind="core", ports=sum(len(rails[m]) for m in nodes))
        for b in range(n_spine):
            leaves = range(b * per_spine, min(n_leaf, (b + 1) * per_spine))
            ports = sum(len(rails[m]) for l in leaves for m in nodes[l * per_leaf:(l + 1) * per_leaf])
            g.add_node(f"spine{b}", kind="spine", ports=ports, parent="core" if n_spine > 1 else None)
            if n_spine > 1:
                g.add_edge(f"spine{b}", "core", kind="ib", links=1, bw=ports * 50.0 / spec.oversubscription,
                           bw_nccl=ports * 50.0 / spec.oversubscription)
        for l in range(n_leaf):
            members = nodes[l * per_leaf:(l + 1) * per_leaf]
            b = l // per_spine
            ports = sum(len(rails[m]) for m in members)
            leaf = f"leaf{l}"
            g.add_node(leaf, kind="leaf", ports=ports, parent=f"spine{b}", attached=ports)
            g.add_edge(leaf, f"spine{b}", kind="ib", links=max(1, round(ports / spec.oversubscription)),
                       bw=ports * 50.0 / spec.oversubscription, bw_nccl=ports * 50.0 / spec.oversubscription)
            for m in members:
                for r in rails[m]:
                    ep = f"{m}/nic{r}"
                    g.add_node(ep, kind="nic", node=m, rail=r, leaf=leaf, leaf_group=leaf, spine_group=f"spine{b}",
                               core_group="core" if n_spine > 1 else None, leaf_index=l % per_spine,
                               block_index=b, speed_gbps=speeds[m])
                    g.add_edge(ep, leaf, kind="ib", links=1, bw=raw[m], bw_nccl=raw[m])
    return Fabric(spec, g, nodes, rails, speeds, domains)


def default_fabric(servers: Mapping[str, nx.Graph] | Sequence[tuple[str, nx.Graph]]) -> Fabric:
    """One idle, non-blocking rail-optimized fabric (SUs of 32 nodes) over the boards' own compute NICs."""
    return build_fabric(servers, FabricSpec())


def spec_from_dict(spec: Mapping[str, Any]) -> FabricSpec:
    """The ``spec`` of a ``Fabric`` document (camelCase fields as above) → :class:`FabricSpec`. Unknown fields and
    bad values raise ``ValueError`` naming the field (``spec.<field>: …``)."""
    if spec is None:
        spec = {}
    if not isinstance(spec, Mapping):
        raise ValueError(f"spec: must be a mapping, got {type(spec).__name__}")
    unknown = sorted(set(spec) - set(SPEC_FIELDS))
    if unknown:
        raise ValueError(f'spec.{unknown[0]}: unknown field "{unknown[0]}" (known: {", ".join(SPEC_FIELDS)})')
    pools = spec.get("nodePools", ())
    if isinstance(pools, str) or not isinstance(pools, (list, tuple)) or not all(isinstance(p, str) for p in pools):
        raise ValueError(f"spec.nodePools: must be a list of NodePool names, got {pools!r}")
    out = FabricSpec(
        type=spec.get("type", "RailOptimized"),
        nic_speed=_speed(spec["nicSpeed"], "spec.nicSpeed") if spec.get("nicSpeed") is not None else None,
        scalable_unit=spec.get("scalableUnit", 32),
        spines=spec.get("spines"),
        nodes_per_leaf=spec.get("nodesPerLeaf", 16),
        leaves_per_spine=spec.get("leavesPerSpine", 4),
        oversubscription=spec.get("oversubscription", 1),
        load=spec.get("load", 0),
        labels=spec.get("labels", "topograph"),
        node_pools=tuple(pools))
    if out.type == "Tree" and "scalableUnit" in spec:
        raise ValueError("spec.scalableUnit: only for type RailOptimized")
    if out.type == "RailOptimized" and ({"nodesPerLeaf", "leavesPerSpine"} & set(spec)):
        field_ = sorted({"nodesPerLeaf", "leavesPerSpine"} & set(spec))[0]
        raise ValueError(f"spec.{field_}: only for type Tree")
    _check_spec(out)
    return out


def fabric_from_dict(spec: Mapping[str, Any],
                     servers: Mapping[str, nx.Graph] | Sequence[tuple[str, nx.Graph]]) -> Fabric:
    """:func:`spec_from_dict` then :func:`build_fabric`."""
    return build_fabric(servers, spec_from_dict(spec))
