"""Server topology graphs: GPUs, NVLink/NVSwitch, PCIe switches, NUMA nodes and NICs, and ``nvidia-smi topo -m``.

Mirrors what a GPU server looks like to NVML / ``nvidia-smi topo -m`` and to NCCL's topology detection
(NVIDIA/nccl ``src/graph/topo.cc``), as networkx graphs following the graph conventions of the topology reference
(``/work/shared/reference/topology.md`` §1.1). A picture: the server is a small building; NVLink/NVSwitch is the
private corridor between GPU rooms, PCIe switches are stairwells, NUMA nodes are floors and the SMP link the lift
between wings. ``topo -m`` tells you, for every pair of rooms, the slowest kind of passage you must take.

Graph conventions (topology.md §1.1):

- node ``kind``: ``gpu``, ``nvswitch``, ``pcie_switch``, ``nic``, ``numa``;
- edge ``kind``: ``nvlink``, ``pcie``, ``smp``, ``c2c``; edge attrs ``links`` (count), ``bw`` (raw GB/s per
  direction) and ``bw_nccl`` (NCCL's model value, ``src/graph/topo.h``; use this for timing);
- PCIe is a tree: every ``gpu``/``nic``/``pcie_switch`` node has ``upstream`` (its parent switch or NUMA node);
  the top of each tree (a top-level switch or a device on a root port) carries ``host_bridge``, the PCIe host bridge
  (root complex) it hangs off;
- all NVSwitch chips of a board are one ``nvswitch`` node, as NCCL keeps them (``topo.cc`` ``ncclTopoAddNvLinks``),
  so any GPU subset of an NVSwitch board sees the same NVLink bandwidth; the GB200 NVL72 tray sees its rack's
  NVLink domain the same way (one node, ``nvl_domain=True``).

GPU-pair class (what ``topo -m`` prints and go-gpuallocator scores, NVML ``nvmlDeviceGetTopologyCommonAncestor`` →
``internal/links/device.go``): ``NV#`` when an NVLink path exists (direct: the bonded link count; through
NVSwitch: the smaller of the two GPUs' link counts), else the PCIe class of the common ancestor: ``PIX`` (both
directly under one switch: at most a single bridge), ``PXB`` (a common switch higher up: multiple bridges, no host
bridge), ``PHB`` (same host bridge), ``NODE`` (same NUMA node, different host bridges), ``SYS`` (different NUMA
nodes). The GB200 tray prints ``NODE`` between its two Grace sockets, as the captured output shows
(graph attr ``cross_numa_class``).

Boards (:data:`BOARDS`; :func:`server_graph` builds one, :func:`default_board` picks one for a NodePool):

- ``dgx-1v``: 8x V100-SXM2, NVLink 2 hybrid cube mesh (link counts and PCIe classes of go-gpuallocator
  ``gpuallocator/common_test.go`` ``NewDGX1VoltaNode``, which match the DGX-1V topology XML in NVIDIA/nccl#671);
  4 PLX Gen3 switches, each with a GPU pair and one EDR NIC (DGX-1 system architecture: one 100 Gb/s IB NIC per
  GPU pair; the mlx5 numbering is UNVERIFIED); 2x Xeon E5-2698 v4, CPUs 0-19,40-59 / 20-39,60-79 (the affinity
  mask of nccl#671).
- ``dgx-a100``: 8x A100, 6 NVSwitch (12 links per GPU, 2 per chip), 4 Gen4 switches each carrying a GPU pair and
  its two HDR NICs behind one more bridge level (``PXB`` between them, as observed), 2 storage ports on NUMA 0,
  2x EPYC 7742. ``nps=4`` (default, the observed 8 NUMA nodes: pairs on NUMA 3, 1, 7, 5) or ``nps=1``. The
  GPU↔GPU class inside a pair (``PXB``) is UNVERIFIED (topology.md §5.1).
- ``dgx-h100``: 8x H100, 4 NVSwitch (links 5/5/4/4), the DGX H100 User Guide NIC map (compute NICs mlx5_0, 3, 4, 5,
  6, 9, 10, 11; storage/management mlx5_1-2 on CPU 0, mlx5_7-8 on CPU 1), GPU↔own NIC ``PXB``, 2x Xeon 8480C.
- ``hgx-h200``: 8x H200 on the HGX baseboard (same NVLink graph as H100), 8 compute NICs, each GPU sharing a Gen5
  switch with its own NIC (``PIX``, NVIDIA/nccl#1264), other NICs of the socket ``NODE`` (nccl#1453), CPUs as
  DGX H100 (assumed).
- ``gb200-nvl72``: one compute tray (= one Kubernetes node) of a GB200 NVL72 rack: 2 Grace CPUs, 4 Blackwell
  GPUs on NVLink 5 (18 links, the rack's NVLink domain), 4 CX-7 400G compute NICs (one per GPU) and 2 BlueField-3
  ports, all ``NODE`` to each other (an exact capture from NVIDIA/aiconfigurator tests). Grace CPU numbering
  (72 cores each) is UNVERIFIED.
- ``pcie-l40s``: 8x L40S on Gen4, 2 per PCIe switch (``gpus_per_pcie_switch`` 2 or 4), 2 switches per socket
  under one host bridge (the ``PIX``/``PHB``/``SYS`` matrix and CPU numbering of NVIDIA/nccl#1439), one 400G NIC
  per socket on its first switch (a documented default: the reference says "usually 1-2 per box").
- ``pcie``: the documented default for every other model/count: ``gpus`` GPUs of ``model`` behind PCIe switches,
  2 per switch, one socket up to 4 GPUs, else 2 sockets (half each), one host bridge per socket, one 400G NIC per
  socket, PCIe generation from the compute capability (7.x Gen3, 8.x Gen4, 9.x+ Gen5).
"""
from __future__ import annotations

import uuid as _uuid
from typing import Any, Iterable, Mapping, Optional, Sequence

import networkx as nx

from .catalog import CATALOG

NODE_KINDS = ("gpu", "nvswitch", "pcie_switch", "nic", "numa")
EDGE_KINDS = ("nvlink", "pcie", "smp", "c2c")
PCIE_CLASSES = ("PIX", "PXB", "PHB", "NODE", "SYS")   # closest first
NV_CLASS = "NV#"
SELF = "X"

# nvidia-smi's legend text (same in every driver copy the reference collected, node-side §10.3).
LEGEND = (
    "  X    = Self\n"
    "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
    "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n"
    "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
    "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n"
    "  PIX  = Connection traversing at most a single PCIe bridge\n"
    "  NV#  = Connection traversing a bonded set of # NVLinks\n"
)

# NCCL src/graph/topo.h: NVLink bandwidth per link per direction in NCCL's model, by SM (compute capability).
NVLINK_BW_NCCL = {70: 20.0, 80: 20.0, 86: 12.0, 90: 20.6, 100: 40.1}
NVLINK_BW_RAW = 25.0                      # GB/s per link per direction, NVLink 2-5
# PCIe x16 per direction: raw (node-side §10.2, rounded) and NCCL's width*GT/s/80 (topo.cc kvDictPciGen).
PCIE_BW = {3: (16.0, 12.0), 4: (32.0, 24.0), 5: (64.0, 48.0)}
# NCCL src/graph/topo.h socket-to-socket constants (GB/s): BDW_QPI_BW, SKL_QPI_BW, SRP_QPI_BW, ERP_QPI_BW, AMD_BW, ARM_BW.
SMP_BW_NCCL = {"broadwell": 6.0, "skylake": 10.0, "sapphire-rapids": 22.0, "emerald-rapids": 40.0, "amd": 16.0,
               "arm": 6.0}
NIC_SPEEDS_GBPS = (100, 200, 400, 800)    # EDR, HDR, NDR, XDR
CLIQUE_LABEL = "nvidia.com/gpu.clique"
DEFAULT_CLIQUE_ID = 32766                 # the clique ID seen on GB200 nodes in NVIDIA's DRA driver docs


class TopologyError(ValueError):
    """An unknown board, a bad board parameter, or a GPU/NIC that is not on the board. ``field`` says which
    input was wrong when :func:`check_board` raises it: ``topology`` (the board), ``model``, ``count`` or
    ``options``."""

    def __init__(self, message: str, field: str = "topology"):
        super().__init__(message)
        self.field = field


# --- CPU lists ----------------------------------------------------------------------------------------------

def parse_cpulist(text: str) -> frozenset[int]:
    """``"0-13,28-41"`` → the CPU ids (the Linux cpulist format nvidia-smi prints)."""
    out: set[int] = set()
    for part in filter(None, (p.strip() for p in text.split(","))):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return frozenset(out)


def format_cpulist(cpus: Iterable[int]) -> str:
    """The inverse of :func:`parse_cpulist`: sorted ranges joined by commas (``""`` when empty)."""
    ids = sorted(set(cpus))
    parts, i = [], 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        parts.append(str(ids[i]) if i == j else f"{ids[i]}-{ids[j]}")
        i = j + 1
    return ",".join(parts)


# --- building ----------------------------------------------------------------------------------------------

class _Builder:
    """Adds nodes and edges with the conventions above; every board builder uses it."""

    def __init__(self, board: str, model: str, sm: int, cpu: str, cpu_vendor: str, smp: str, **attrs: Any):
        self.g = nx.Graph(board=board, gpu_model=model, sm=sm, cpu=cpu, cpu_vendor=cpu_vendor,
                          smp_bw=SMP_BW_NCCL[smp], cross_numa_class="SYS", nvswitch=False, **attrs)

    def numa(self, nid: int, socket: int, cpus: str) -> str:
        name = f"numa{nid}"
        self.g.add_node(name, kind="numa", id=nid, socket=socket, cpus=cpus)
        return name

    def smp_mesh(self) -> None:
        """Connect every pair of NUMA nodes with the SMP link (NCCL models each NUMA node as a CPU node)."""
        numas = [n for n, d in self.g.nodes(data=True) if d["kind"] == "numa"]
        bw = self.g.graph["smp_bw"]
        for i, a in enumerate(numas):
            for b in numas[i + 1:]:
                self.g.add_edge(a, b, kind="smp", links=1, bw=bw, bw_nccl=bw)

    def _pcie(self, child: str, parent: str, gen: int) -> None:
        raw, nccl = PCIE_BW[gen]
        self.g.add_edge(child, parent, kind="pcie", links=1, bw=raw, bw_nccl=nccl, gen=gen)

    def switch(self, name: str, upstream: str, gen: int, host_bridge: Optional[str] = None) -> str:
        self.g.add_node(name, kind="pcie_switch", upstream=upstream, gen=gen)
        if host_bridge is not None:
            self.g.nodes[name]["host_bridge"] = host_bridge
        self._pcie(name, upstream, gen)
        return name

    def gpu(self, index: int, upstream: str, numa: int, nic: Optional[int], gen: int,
            host_bridge: Optional[str] = None) -> str:
        name = f"gpu{index}"
        self.g.add_node(name, kind="gpu", index=index, model=self.g.graph["gpu_model"], numa=numa, nic=nic,
                        upstream=upstream)
        if host_bridge is not None:
            self.g.nodes[name]["host_bridge"] = host_bridge
        self._pcie(name, upstream, gen)
        return name

    def nic(self, index: int, upstream: str, numa: int, speed: int, gen: int, rail: Optional[int] = None,
            role: str = "compute", host_bridge: Optional[str] = None, **attrs: Any) -> str:
        name = f"nic{index}"
        self.g.add_node(name, kind="nic", index=index, rdma=attrs.pop("rdma", f"mlx5_{index}"), speed_gbps=speed,
                        numa=numa, rail=rail, role=role, upstream=upstream, **attrs)
        if host_bridge is not None:
            self.g.nodes[name]["host_bridge"] = host_bridge
        self._pcie(name, upstream, gen)
        return name

    def nvswitch(self, name: str, **attrs: Any) -> str:
        self.g.add_node(name, kind="nvswitch", **attrs)
        self.g.graph["nvswitch"] = True
        return name

    def nvlink(self, a: str, b: str, links: int) -> None:
        per = NVLINK_BW_NCCL[self.g.graph["sm"]]
        if self.g.has_edge(a, b):
            links += self.g.edges[a, b]["links"]
        self.g.add_edge(a, b, kind="nvlink", links=links, bw=links * NVLINK_BW_RAW, bw_nccl=round(links * per, 2))


# go-gpuallocator common_test.go NewDGX1VoltaNode: NVLink link count per GPU pair (the hybrid cube mesh).
DGX1V_NVLINKS = {(0, 1): 1, (0, 2): 1, (0, 3): 2, (0, 4): 2, (1, 2): 2, (1, 3): 1, (1, 5): 2, (2, 3): 2, (2, 6): 1,
                 (3, 7): 1, (4, 5): 1, (4, 6): 1, (4, 7): 2, (5, 6): 2, (5, 7): 1, (6, 7): 2}


def _dgx_1v() -> nx.Graph:
    b = _Builder("dgx-1v", "V100-SXM2-32GB", 70, "2x Intel Xeon E5-2698 v4", "intel", "broadwell",
                 description="DGX-1 with V100: NVLink 2 hybrid cube mesh, 4 PCIe Gen3 switches, 4x EDR IB")
    for s, cpus in enumerate(("0-19,40-59", "20-39,60-79")):
        b.numa(s, s, cpus)
    b.smp_mesh()
    for k in range(4):
        sw = b.switch(f"pcie{k}", f"numa{k // 2}", 3, host_bridge=f"numa{k // 2}/hb0")
        for i in (2 * k, 2 * k + 1):
            b.gpu(i, sw, k // 2, nic=k, gen=3)
        b.nic(k, sw, k // 2, 100, 3, rail=k)
    for (i, j), links in DGX1V_NVLINKS.items():
        b.nvlink(f"gpu{i}", f"gpu{j}", links)
    return b.g


def _dgx_a100(nps: int = 4) -> nx.Graph:
    if nps not in (1, 4):
        raise TopologyError(f'dgx-a100: nps must be 1 or 4, got {nps!r}')
    b = _Builder("dgx-a100", "A100-SXM4-80GB", 80, "2x AMD EPYC 7742", "amd", "amd", nps=nps,
                 description="DGX A100: 6 NVSwitch, 4 PCIe Gen4 switches, 8x HDR IB + 2 storage ports")
    if nps == 4:   # 8 NUMA nodes of 16 cores (+SMT); GPU pairs on NUMA 3, 1, 7, 5 (NVIDIA/DCGM#149)
        for n in range(8):
            b.numa(n, n // 4, f"{16 * n}-{16 * n + 15},{128 + 16 * n}-{128 + 16 * n + 15}")
        pair_numa = (3, 1, 7, 5)
    else:
        for s in range(2):
            b.numa(s, s, f"{64 * s}-{64 * s + 63},{128 + 64 * s}-{128 + 64 * s + 63}")
        pair_numa = (0, 0, 1, 1)
    b.smp_mesh()
    nvs = b.nvswitch("nvswitch", chips=6)
    for j, numa in enumerate(pair_numa):
        top = b.switch(f"pcie{j}", f"numa{numa}", 4, host_bridge=f"numa{numa}/hb{j}")
        for i in (2 * j, 2 * j + 1):
            b.gpu(i, b.switch(f"pcie{j}.gpu{i}", top, 4), numa, nic=i, gen=4)
            b.nic(i, b.switch(f"pcie{j}.nic{i}", top, 4), numa, 200, 4, rail=i)
    storage = b.switch("pcie-storage0", "numa0", 4, host_bridge="numa0/hb-storage")
    for i in (8, 9):
        b.nic(i, storage, 0, 200, 4, role="storage")
    for i in range(8):
        b.nvlink(f"gpu{i}", nvs, 12)       # 2 links to each of the 6 chips (nccl#1505 topology XML)
    return b.g


# DGX H100/H200 User Guide, Table 6: compute NIC (RDMA device) per GPU, netdev and OSFP port.
DGX_H100_NICS = ((0, "ibp24s0", "OSFP4P2"), (3, "ibp64s0", "OSFP3P2"), (4, "ibp79s0", "OSFP3P1"),
                 (5, "ibp94s0", "OSFP4P1"), (6, "ibp154s0", "OSFP1P2"), (9, "ibp192s0", "OSFP2P2"),
                 (10, "ibp206s0", "OSFP2P1"), (11, "ibp220s0", "OSFP1P1"))
H100_NVSWITCH_LINKS = (5, 5, 4, 4)       # links from a GPU to each of the 4 chips (nvidia-smi nvlink -R, nccl#1182)


def _hopper_numa(b: _Builder) -> None:
    for s, cpus in enumerate(("0-55,112-167", "56-111,168-223")):   # 2x Xeon 8480C (nccl#1264)
        b.numa(s, s, cpus)
    b.smp_mesh()


def _dgx_h100() -> nx.Graph:
    b = _Builder("dgx-h100", "H100-SXM5-80GB", 90, "2x Intel Xeon Platinum 8480C", "intel", "sapphire-rapids",
                 description="DGX H100: 4 NVSwitch, 8x CX-7 NDR (one per GPU) + 2 dual-port storage CX-7")
    _hopper_numa(b)
    nvs = b.nvswitch("nvswitch", chips=4)
    for gpu, (nic, netdev, port) in enumerate(DGX_H100_NICS):
        numa = gpu // 4
        top = b.switch(f"pcie{gpu}", f"numa{numa}", 5, host_bridge=f"numa{numa}/hb{gpu}")
        b.gpu(gpu, b.switch(f"pcie{gpu}.gpu", top, 5), numa, nic=nic, gen=5)
        b.nic(nic, b.switch(f"pcie{gpu}.nic", top, 5), numa, 400, 5, rail=gpu, netdev=netdev, port=port)
        b.nvlink(f"gpu{gpu}", nvs, sum(H100_NVSWITCH_LINKS))
    for numa, ports in ((0, (1, 2)), (1, (7, 8))):
        card = b.switch(f"pcie-storage{numa}", f"numa{numa}", 5, host_bridge=f"numa{numa}/hb-storage")
        for nic in ports:
            b.nic(nic, card, numa, 400, 5, role="storage")
    return b.g


def _hgx_h200() -> nx.Graph:
    b = _Builder("hgx-h200", "H200-141GB", 90, "2x Intel Xeon Platinum 8480C", "intel", "sapphire-rapids",
                 description="HGX H200: 4 NVSwitch, each GPU and its CX-7 NDR NIC on one PCIe Gen5 switch")
    _hopper_numa(b)
    nvs = b.nvswitch("nvswitch", chips=4)
    for gpu in range(8):
        numa = gpu // 4
        sw = b.switch(f"pcie{gpu}", f"numa{numa}", 5, host_bridge=f"numa{numa}/hb{gpu}")
        b.gpu(gpu, sw, numa, nic=gpu, gen=5)
        b.nic(gpu, sw, numa, 400, 5, rail=gpu)
        b.nvlink(f"gpu{gpu}", nvs, sum(H100_NVSWITCH_LINKS))
    return b.g


def _gb200_nvl72(rack: str = "rack0", tray: int = 0, cluster_uuid: Optional[str] = None,
                 clique_id: int = DEFAULT_CLIQUE_ID, fabric_state: str = "Completed") -> nx.Graph:
    if not 0 <= int(tray) < 18:
        raise TopologyError(f"gb200-nvl72: tray must be in 0..17 (18 compute trays per rack), got {tray!r}")
    if fabric_state not in ("Completed", "InProgress", "NotStarted", "NotSupported"):
        raise TopologyError(f"gb200-nvl72: fabric_state must be Completed, InProgress, NotStarted or NotSupported, "
                            f"got {fabric_state!r}")
    cluster = cluster_uuid or str(_uuid.uuid5(_uuid.NAMESPACE_URL, f"gpusim.io/nvl72/{rack}"))
    b = _Builder("gb200-nvl72", "GB200", 100, "2x NVIDIA Grace", "arm", "arm", rack=rack, tray=int(tray),
                 description="GB200 NVL72 compute tray: 2 Grace + 4 Blackwell, 4x CX-7 NDR + 2x BlueField-3")
    b.g.graph["cross_numa_class"] = "NODE"          # as nvidia-smi prints it between the two Graces of a tray
    for s, cpus in enumerate(("0-71", "72-143")):
        b.numa(s, s, cpus)
    b.smp_mesh()
    nvl = b.nvswitch("nvl-domain", nvl_domain=True, domain_size=72, switch_trays=9, cluster_uuid=cluster,
                     clique_id=int(clique_id), fabric_state=fabric_state)
    for gpu in range(4):
        grace = gpu // 2
        b.gpu(gpu, f"numa{grace}", grace, nic=gpu, gen=5, host_bridge=f"numa{grace}/hb-gpu{gpu}")
        # the GPU reaches its Grace over NVLink-C2C (900 GB/s bidirectional), not PCIe
        b.g.add_edge(f"gpu{gpu}", f"numa{grace}", kind="c2c", links=1, bw=450.0, bw_nccl=450.0)
        b.nic(gpu, f"numa{grace}", grace, 400, 5, rail=gpu, host_bridge=f"numa{grace}/hb-nic{gpu}")
        b.nvlink(f"gpu{gpu}", nvl, 18)
    for grace in range(2):
        b.nic(4 + grace, f"numa{grace}", grace, 400, 5, role="storage", host_bridge=f"numa{grace}/hb-dpu")
    return b.g


def _pcie_generation(model: str) -> int:
    major = CATALOG[model].compute[0] if model in CATALOG else 9
    return 3 if major < 8 else 4 if major == 8 else 5


def _pcie(model: str = "L40S", gpus: int = 8, gpus_per_pcie_switch: int = 2, sockets: Optional[int] = None,
          numa_cpus: Optional[Sequence[str]] = None, nics_per_socket: int = 1, nic_speed: int = 400,
          smp: str = "sapphire-rapids", board: str = "pcie") -> nx.Graph:
    if gpus < 1:
        raise TopologyError(f"{board}: gpus must be at least 1, got {gpus!r}")
    if gpus_per_pcie_switch not in (2, 4):
        raise TopologyError(f"{board}: gpus_per_pcie_switch must be 2 or 4, got {gpus_per_pcie_switch!r}")
    if nic_speed not in NIC_SPEEDS_GBPS:
        raise TopologyError(f"{board}: nic_speed must be one of {', '.join(map(str, NIC_SPEEDS_GBPS))} (Gb/s), "
                            f"got {nic_speed!r}")
    sockets = sockets if sockets is not None else (1 if gpus <= 4 else 2)
    if sockets not in (1, 2) or sockets > gpus:
        raise TopologyError(f"{board}: sockets must be 1 or 2 (and at most the GPU count), got {sockets!r}")
    gen = _pcie_generation(model)
    sm = (lambda c: c[0] * 10 + c[1])(CATALOG[model].compute) if model in CATALOG else 90
    b = _Builder(board, model, sm, "2x Intel Xeon" if sockets == 2 else "Intel Xeon", "intel", smp,
                 description=f"{gpus}x {model} on PCIe Gen{gen}, {gpus_per_pcie_switch} per switch, no NVLink")
    cpus = list(numa_cpus) if numa_cpus else [f"{32 * s}-{32 * s + 31},{32 * sockets + 32 * s}-{32 * sockets + 32 * s + 31}"
                                              for s in range(sockets)]
    if len(cpus) != sockets:
        raise TopologyError(f"{board}: numa_cpus needs one CPU list per socket ({sockets}), got {len(cpus)}")
    for s in range(sockets):
        b.numa(s, s, cpus[s])
    b.smp_mesh()
    per_socket = [gpus // sockets + (1 if s < gpus % sockets else 0) for s in range(sockets)]
    index, nic_index = 0, 0
    for s, count in enumerate(per_socket):
        switches = []
        for k in range(-(-count // gpus_per_pcie_switch)):
            switches.append(b.switch(f"pcie{s}.{k}", f"numa{s}", gen, host_bridge=f"numa{s}/hb0"))
        first_nic = nic_index
        for n in range(nics_per_socket):
            b.nic(nic_index, switches[n % len(switches)], s, nic_speed, gen, rail=nic_index)
            nic_index += 1
        for k in range(count):
            sw = switches[k // gpus_per_pcie_switch]
            nic = first_nic + (k // gpus_per_pcie_switch) % nics_per_socket if nics_per_socket else None
            b.gpu(index, sw, s, nic=nic, gen=gen)
            index += 1
    return b.g


def _pcie_l40s(gpus_per_pcie_switch: int = 2, nics_per_socket: int = 1, nic_speed: int = 400) -> nx.Graph:
    return _pcie("L40S", 8, gpus_per_pcie_switch, 2, ("0-13,28-41", "14-27,42-55"), nics_per_socket, nic_speed,
                 board="pcie-l40s")


BOARDS = {
    "dgx-1v": _dgx_1v,
    "dgx-a100": _dgx_a100,
    "dgx-h100": _dgx_h100,
    "hgx-h200": _hgx_h200,
    "gb200-nvl72": _gb200_nvl72,
    "pcie-l40s": _pcie_l40s,
    "pcie": _pcie,
}

# (catalog model, GPUs per node) → board. Every other pair gets the generic "pcie" board.
DEFAULT_BOARDS = {
    ("V100-SXM2-32GB", 8): "dgx-1v",
    ("A100-SXM4-40GB", 8): "dgx-a100",
    ("A100-SXM4-80GB", 8): "dgx-a100",
    ("H100-SXM5-80GB", 8): "dgx-h100",
    ("H200-141GB", 8): "hgx-h200",
    ("L40S", 8): "pcie-l40s",
    ("GB200", 4): "gb200-nvl72",           # a board-only model (catalog.BOARD_ONLY_MODELS): the pool names the board
}


# The catalog models each named board carries (a DGX H100 chassis also ships as DGX H200, and the HGX H200
# baseboard is the HGX H100 one: same NVLink graph, topology.md §1.3). The generic ``pcie`` board takes any model.
BOARD_MODELS: dict[str, tuple[str, ...]] = {
    "dgx-1v": ("V100-SXM2-32GB",),
    "dgx-a100": ("A100-SXM4-40GB", "A100-SXM4-80GB"),
    "dgx-h100": ("H100-SXM5-80GB", "H200-141GB"),
    "hgx-h200": ("H200-141GB", "H100-SXM5-80GB"),
    "gb200-nvl72": ("GB200",),
    "pcie-l40s": ("L40S",),
}
# Board builder parameters a scenario may set (``NodePool spec.gpu.topologyOptions``, camelCase → keyword).
BOARD_OPTIONS: dict[str, dict[str, str]] = {
    "dgx-1v": {}, "dgx-a100": {"nps": "nps"}, "dgx-h100": {}, "hgx-h200": {},
    "gb200-nvl72": {"cliqueId": "clique_id", "fabricState": "fabric_state"},
    "pcie-l40s": {"gpusPerPcieSwitch": "gpus_per_pcie_switch", "nicsPerSocket": "nics_per_socket",
                  "nicSpeed": "nic_speed"},
    "pcie": {"gpusPerPcieSwitch": "gpus_per_pcie_switch", "sockets": "sockets", "nicsPerSocket": "nics_per_socket",
             "nicSpeed": "nic_speed", "smp": "smp"},
}
GB200_TRAYS_PER_RACK = 18


def board_gpu_count(board: str, **params: Any) -> int:
    """How many GPUs ``board`` has (the generic ``pcie`` board: its ``gpus`` parameter)."""
    if board == "pcie":
        return int(params.get("gpus", 8))
    return 4 if board == "gb200-nvl72" else 8


def check_board(board: str, model: str, count: int, options: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
    """Check that a node of ``count`` ``model`` GPUs can have ``board`` with ``options`` (camelCase, as a
    NodePool writes them) and return the builder's keyword parameters. Raises :class:`TopologyError` with a
    message naming the problem (the loader prefixes the field)."""
    if board not in BOARDS:
        raise TopologyError(f'unknown server topology "{board}"; known: {", ".join(sorted(BOARDS))}')
    allowed = BOARD_MODELS.get(board)
    if allowed is not None and model not in allowed:
        raise TopologyError(f'board "{board}" carries {" or ".join(allowed)} GPUs, not {model}', "model")
    params: dict[str, Any] = {"model": model, "gpus": count} if board == "pcie" else {}
    names = BOARD_OPTIONS[board]
    for key, value in (options or {}).items():
        if key not in names:
            known = ", ".join(sorted(names)) or "none"
            raise TopologyError(f'unknown option "{key}" for board "{board}" (known: {known})', "options")
        params[names[key]] = value
    want = board_gpu_count(board, **params)
    if count != want:
        raise TopologyError(f'board "{board}" has {want} GPUs, the pool asks for {count}', "count")
    try:
        server_graph(board, **params)          # the builder's own parameter checks
    except TopologyError as e:
        raise TopologyError(str(e), "options") from None
    return params


def node_board_params(board: str, params: Mapping[str, Any], index: int) -> dict[str, Any]:
    """The parameters of the ``index``-th node of a pool on ``board``: GB200 NVL72 trays fill racks of 18
    (node i is tray i mod 18 of rack ``rack<i // 18>``), so nodes of one rack share an NVLink domain and its
    ``nvidia.com/gpu.clique``; every other board is the same on every node."""
    if board != "gb200-nvl72":
        return dict(params)
    return {**params, "rack": f"rack{index // GB200_TRAYS_PER_RACK}", "tray": index % GB200_TRAYS_PER_RACK}


def server_graph(board: str, **params: Any) -> nx.Graph:
    """Build the graph of ``board`` (a name in :data:`BOARDS`) with its parameters."""
    try:
        builder = BOARDS[board]
    except KeyError:
        raise TopologyError(f'unknown server topology "{board}"; known: {", ".join(sorted(BOARDS))}') from None
    try:
        return builder(**params)
    except TypeError as e:
        raise TopologyError(f"{board}: {e}") from None


def default_board(model: str, count: int) -> tuple[str, dict[str, Any]]:
    """The board a NodePool of ``count`` ``model`` GPUs gets when it names none: the DGX/HGX board for the 8-GPU
    SXM models, ``pcie-l40s`` for 8x L40S, else the generic ``pcie`` board with that model and count."""
    name = DEFAULT_BOARDS.get((model, count))
    if name is not None:
        return name, {}
    return "pcie", {"model": model, "gpus": count}


def board_for(model: str, count: int, **params: Any) -> nx.Graph:
    """:func:`server_graph` of :func:`default_board` (``params`` override the defaults)."""
    name, defaults = default_board(model, count)
    return server_graph(name, **{**defaults, **params})


# --- queries ------------------------------------------------------------------------------------------------

def _of_kind(g: nx.Graph, kind: str) -> list[str]:
    return sorted((n for n, d in g.nodes(data=True) if d["kind"] == kind), key=lambda n: g.nodes[n].get("index", 0))


def gpus(g: nx.Graph) -> list[str]:
    """GPU node names in index order."""
    return _of_kind(g, "gpu")


def nics(g: nx.Graph, role: Optional[str] = None) -> list[str]:
    """NIC node names in index order (``role`` ``compute`` or ``storage`` filters)."""
    return [n for n in _of_kind(g, "nic") if role is None or g.nodes[n]["role"] == role]


def gpu_node(g: nx.Graph, index: int) -> str:
    name = f"gpu{index}"
    if name not in g or g.nodes[name]["kind"] != "gpu":
        raise TopologyError(f"{g.graph['board']} has no GPU {index} (GPUs 0..{len(gpus(g)) - 1})")
    return name


def _memo(g: nx.Graph, key: str, compute):
    """Facts derived from a board graph, computed once and kept in its attributes (a board graph is read-only
    data shared by every node with that board); callers get a copy."""
    memo = g.graph.setdefault("_derived", {})
    if key not in memo:
        memo[key] = compute()
    value = memo[key]
    return dict(value) if isinstance(value, dict) else list(value)


def gpu_numa(g: nx.Graph) -> dict[int, int]:
    """GPU index → NUMA node (what ``/sys/bus/pci/devices/<bus>/numa_node`` gives the device plugin)."""
    return _memo(g, "gpu_numa", lambda: {g.nodes[n]["index"]: g.nodes[n]["numa"] for n in gpus(g)})


def gpu_nic(g: nx.Graph) -> dict[int, Optional[int]]:
    """GPU index → the compute NIC (index) its traffic leaves through (its rail's NIC)."""
    return {g.nodes[n]["index"]: g.nodes[n]["nic"] for n in gpus(g)}


def gpu_rail(g: nx.Graph) -> dict[int, Optional[int]]:
    """GPU index → rail: the ``rail`` of the GPU's NIC (NIC *r* of every node goes to leaf *r*)."""
    return {i: (g.nodes[f"nic{n}"]["rail"] if n is not None else None) for i, n in gpu_nic(g).items()}


def numa_cpus(g: nx.Graph, numa: int) -> str:
    return g.nodes[f"numa{numa}"]["cpus"]


def numa_nodes(g: nx.Graph) -> list[int]:
    """The board's NUMA node ids, ascending (what the kubelet's cAdvisor machine info lists)."""
    return _memo(g, "numa_nodes", lambda: sorted(d["id"] for _, d in g.nodes(data=True) if d["kind"] == "numa"))


def numa_cpu_counts(g: nx.Graph) -> dict[int, int]:
    """NUMA id → how many logical CPUs it has."""
    return _memo(g, "numa_cpu_counts", lambda: {n: len(parse_cpulist(numa_cpus(g, n))) for n in numa_nodes(g)})


# ACPI SLIT distances (``/sys/devices/system/node/node<N>/distance``): 10 for the local node by definition; two
# Intel sockets report 21; AMD EPYC in NPS4 12 inside a socket and 32 across; two Grace CPUs 40. The remote values
# are the common firmware defaults, UNVERIFIED for the exact boards.
SLIT_LOCAL = 10
SLIT_REMOTE = {"intel": (21, 21), "amd": (12, 32), "arm": (40, 40)}   # vendor → (same socket, other socket)


def numa_distances(g: nx.Graph) -> dict[int, list[int]]:
    """NUMA id → its distance row indexed by NUMA id (the Topology Manager's ``prefer-closest-numa-nodes`` and
    NFD's zone ``costs`` read these)."""
    def compute() -> dict[int, list[int]]:
        ids = numa_nodes(g)
        same, other = SLIT_REMOTE[g.graph["cpu_vendor"]]
        socket = {i: g.nodes[f"numa{i}"]["socket"] for i in ids}
        return {a: [SLIT_LOCAL if a == b else same if socket[a] == socket[b] else other for b in ids] for a in ids}
    return {a: list(row) for a, row in _memo(g, "numa_distances", compute).items()}


def _pcie_chain(g: nx.Graph, node: str) -> tuple[list[str], str, Optional[str]]:
    """Switches above ``node`` (nearest first), the NUMA node at the root and the host bridge used."""
    chain: list[str] = []
    hb = g.nodes[node].get("host_bridge")
    cur = g.nodes[node]["upstream"]
    while g.nodes[cur]["kind"] == "pcie_switch":
        chain.append(cur)
        hb = g.nodes[cur].get("host_bridge", hb)
        cur = g.nodes[cur]["upstream"]
    return chain, cur, hb


def pcie_class(g: nx.Graph, a: str, b: str) -> str:
    """The PCIe class (``PIX`` … ``SYS``) between two PCIe endpoints (GPU or NIC node names)."""
    ca, na, ha = _pcie_chain(g, a)
    cb, nb, hb = _pcie_chain(g, b)
    common = next((s for s in ca if s in cb), None)
    if common is not None:
        return "PIX" if ca[0] == common and cb[0] == common else "PXB"
    if na == nb:
        return "PHB" if ha == hb else "NODE"
    return g.graph["cross_numa_class"]


def nvlink_links(g: nx.Graph, a: str, b: str) -> int:
    """NVLinks ``nvidia-smi`` reports between two GPUs: the direct bonded count, or through an NVSwitch the smaller
    of the two GPUs' link counts; 0 when they share no NVLink."""
    if g.has_edge(a, b) and g.edges[a, b]["kind"] == "nvlink":
        return g.edges[a, b]["links"]

    def to_switches(x: str) -> dict[str, int]:
        return {s: g.edges[x, s]["links"] for s in g.neighbors(x)
                if g.nodes[s]["kind"] == "nvswitch" and g.edges[x, s]["kind"] == "nvlink"}
    sa, sb = to_switches(a), to_switches(b)
    if set(sa) & set(sb):
        return min(sum(sa.values()), sum(sb.values()))
    return 0


def direct_nvlinks(g: nx.Graph, a: str, b: str) -> int:
    """NVLinks whose remote end is the peer GPU itself: all that go-gpuallocator counts (``internal/links/device.go``
    has no NVSwitch handling, so on NVSwitch boards this is 0: the "NVSwitch blind spot")."""
    if g.has_edge(a, b) and g.edges[a, b]["kind"] == "nvlink":
        return g.edges[a, b]["links"]
    return 0


# go-gpuallocator gpuallocator/besteffort_policy.go calculateGPUPairScore: points per P2P link entry of a GPU pair
# (NVML common ancestor → P2PLinkCrossCPU/SameCPU/HostBridge/MultiSwitch/SingleSwitch; SameBoard 60 is for dual-GPU
# boards, none here), plus 100 per NVLink whose remote end is the peer itself.
GPUALLOCATOR_PCIE_SCORE = {"SYS": 10, "NODE": 20, "PHB": 30, "PXB": 40, "PIX": 50}
GPUALLOCATOR_NVLINK_SCORE = 100


def gpuallocator_pair_score(g: nx.Graph, i: int, j: int) -> int:
    """The pair score go-gpuallocator's best-effort policy gives GPUs ``i`` and ``j``: the PCIe entry plus 100 per
    direct NVLink. On NVSwitch boards that is the PCIe entry alone (its NVSwitch blind spot, topology.md §4.2)."""
    a, b = gpu_node(g, i), gpu_node(g, j)
    if a == b:
        return 0
    return GPUALLOCATOR_PCIE_SCORE[pcie_class(g, a, b)] + GPUALLOCATOR_NVLINK_SCORE * direct_nvlinks(g, a, b)


def link_class(g: nx.Graph, a: str, b: str) -> str:
    """What ``nvidia-smi topo -m`` prints for the pair: ``X``, ``NV<k>`` or a PCIe class."""
    if a == b:
        return SELF
    if g.nodes[a]["kind"] == "gpu" and g.nodes[b]["kind"] == "gpu":
        k = nvlink_links(g, a, b)
        if k:
            return f"NV{k}"
    return pcie_class(g, a, b)


def gpu_pair_class(g: nx.Graph, i: int, j: int) -> str:
    """:func:`link_class` of GPUs ``i`` and ``j`` by index."""
    return link_class(g, gpu_node(g, i), gpu_node(g, j))


def class_rank(cls: str) -> int:
    """Order of closeness: NV# 0, PIX 1 … SYS 5 (``X`` −1)."""
    if cls == SELF:
        return -1
    if cls.startswith("NV"):
        return 0
    return 1 + PCIE_CLASSES.index(cls)


def topo_matrix(g: nx.Graph) -> dict[str, dict[str, str]]:
    """Every GPU/NIC pair's class, keyed by the names ``topo -m`` prints (``GPU0``, ``NIC0``)."""
    devs = gpus(g) + nics(g)
    label = {d: d.upper() for d in devs}
    return {label[a]: {label[b]: link_class(g, a, b) for b in devs} for a in devs}


def gpu_clique(g: nx.Graph) -> Optional[str]:
    """The ``nvidia.com/gpu.clique`` value GPU Feature Discovery writes for this node: ``<ClusterUUID>.<CliqueID>``
    (ClusterUUID = the physical NVLink domain, i.e. the NVL72 rack; CliqueID = the Fabric Manager partition), set
    only on multi-node-NVLink boards whose fabric state is ``Completed`` (k8s-device-plugin ``internal/lm/imex.go``;
    topograph ``docs/reference/node-labels.md``). ``None`` everywhere else."""
    for n, d in g.nodes(data=True):
        if d["kind"] == "nvswitch" and d.get("nvl_domain") and d.get("fabric_state") == "Completed":
            return f"{d['cluster_uuid']}.{d['clique_id']}"
    return None


def node_labels(g: nx.Graph) -> dict[str, str]:
    """Topology labels a node with this board carries from the node side (today only ``nvidia.com/gpu.clique``)."""
    clique = gpu_clique(g)
    return {CLIQUE_LABEL: clique} if clique else {}


def nvl_domain(g: nx.Graph) -> Optional[str]:
    """The NVLink domain the board's GPUs reach beyond the node: the clique value on a multi-node-NVLink board
    (``None`` on single-node NVLink boards, whose NVLink stops at the chassis)."""
    return gpu_clique(g)


# --- nvidia-smi topo -m -------------------------------------------------------------------------------------

UNDERLINE_ON, UNDERLINE_OFF = "\x1b[4m", "\x1b[0m"


def format_topo_m(g: nx.Graph, *, gpu_numa_id: bool = True, underline: bool = False,
                  cpus_allowed: Optional[str] = None) -> str:
    """The text ``nvidia-smi topo -m`` prints for this board, byte for byte: tab-separated cells, the self cell
    ``" X "``, the ``CPU Affinity`` / ``NUMA Affinity`` columns, and (drivers that print it, the default)
    ``GPU NUMA ID`` (``N/A`` for GPUs without their own memory NUMA node), preceded by an empty cell as nvidia-smi
    writes it; NIC rows end with empty affinity cells; then the legend and, when the board has NICs, the NIC legend.

    ``underline`` wraps the header in the ANSI underline sequences newer drivers emit (as in the captured GB200
    output). ``cpus_allowed`` (a cpulist) limits ``CPU Affinity`` to the CPUs the calling process may use, as
    nvidia-smi does inside a container with a cpuset. Without NICs the output ends after the legend.
    """
    devs = gpus(g) + nics(g)
    cols = [d.upper() for d in devs] + ["CPU Affinity", "NUMA Affinity"] + (["GPU NUMA ID"] if gpu_numa_id else [])
    head = "\t".join(cols)
    lines = ["\t" + (UNDERLINE_ON + head + UNDERLINE_OFF if underline else head)]
    allowed = parse_cpulist(cpus_allowed) if cpus_allowed is not None else None
    for a in devs:
        cells = [" X " if a == b else link_class(g, a, b) for b in devs]
        if g.nodes[a]["kind"] == "gpu":
            numa = g.nodes[a]["numa"]
            cpus = parse_cpulist(numa_cpus(g, numa))
            cells += [format_cpulist(cpus & allowed if allowed is not None else cpus), str(numa)]
            cells += ["", "N/A"] if gpu_numa_id else []
        else:
            cells += ["", ""] + (["", ""] if gpu_numa_id else [])
        lines.append(a.upper() + "\t" + "\t".join(cells))
    out = "\n".join(lines) + "\n\nLegend:\n\n" + LEGEND
    if nics(g):
        out += "\nNIC Legend:\n\n" + "".join(f"  {n.upper()}: {g.nodes[n]['rdma']}\n" for n in nics(g)) + "\n"
    return out


def describe(g: nx.Graph) -> list[dict[str, Any]]:
    """One row per GPU: index, NUMA node, CPU affinity, NIC (RDMA device) and rail — the map ``gpusim describe
    node`` and the course show."""
    rows = []
    for n in gpus(g):
        d = g.nodes[n]
        nic = f"nic{d['nic']}" if d["nic"] is not None else None
        rows.append({"index": d["index"], "numaNode": d["numa"], "cpus": numa_cpus(g, d["numa"]),
                     "nic": g.nodes[nic]["rdma"] if nic else None, "rail": g.nodes[nic]["rail"] if nic else None,
                     "nicPath": pcie_class(g, n, nic) if nic else None})
    return rows


def validate(g: nx.Graph) -> None:
    """Check the graph conventions (node/edge kinds, the PCIe tree, GPU→NIC references); raises TopologyError."""
    for n, d in g.nodes(data=True):
        if d.get("kind") not in NODE_KINDS:
            raise TopologyError(f"{n}: node kind {d.get('kind')!r} is not one of {', '.join(NODE_KINDS)}")
        if d["kind"] in ("gpu", "nic", "pcie_switch"):
            up = d.get("upstream")
            if up not in g or not g.has_edge(n, up) or g.edges[n, up]["kind"] not in ("pcie", "c2c"):
                raise TopologyError(f"{n}: upstream {up!r} is not a PCIe (or C2C) neighbour")
            chain, root, hb = _pcie_chain(g, n)
            if g.nodes[root]["kind"] != "numa" or hb is None:
                raise TopologyError(f"{n}: PCIe tree does not end at a NUMA node through a host bridge")
        if d["kind"] == "gpu" and d["nic"] is not None and f"nic{d['nic']}" not in g:
            raise TopologyError(f"{n}: nic {d['nic']} is not on the board")
    for a, b, d in g.edges(data=True):
        if d.get("kind") not in EDGE_KINDS:
            raise TopologyError(f"{a}-{b}: edge kind {d.get('kind')!r} is not one of {', '.join(EDGE_KINDS)}")
        for attr in ("links", "bw", "bw_nccl"):
            if not isinstance(d.get(attr), (int, float)):
                raise TopologyError(f"{a}-{b}: edge attribute {attr} missing")


def boards_summary(params: Optional[Mapping[str, Mapping[str, Any]]] = None) -> list[dict[str, Any]]:
    """One row per named board (not the generic ``pcie``): GPUs, model, NVLink class, NUMA nodes, compute NICs."""
    rows = []
    for name in BOARDS:
        if name == "pcie":
            continue
        g = server_graph(name, **dict((params or {}).get(name, {})))
        g0, g1 = gpus(g)[0], gpus(g)[1]
        rows.append({"board": name, "gpus": len(gpus(g)), "model": g.graph["gpu_model"],
                     "gpu0-gpu1": link_class(g, g0, g1),
                     "numa": len(_of_kind(g, "numa")), "computeNics": len(nics(g, "compute")),
                     "nicGbps": g.nodes[nics(g, "compute")[0]]["speed_gbps"] if nics(g, "compute") else None})
    return rows
