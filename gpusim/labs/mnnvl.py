"""What NCCL's communicator init decides about multi-node NVLink (MNNVL) for a job's ranks, from what a finished
run gave each rank: its node's NVLink fabric (GFD's ``nvidia.com/gpu.clique`` = ``<ClusterUUID>.<CliqueID>``, the
fabric state), the devices in its container (an IMEX channel from a ComputeDomain) and its ``NCCL_MNNVL_ENABLE``.

gpusim runs containers, not NCCL; this module applies NCCL's rules to the simulated placement (mirrors NVIDIA/nccl
src/init.cc ``initTransportsRank``, the MNNVL gate, and src/mnnvl.cc ``ncclMnnvlCheck``, read at commit
192610c9321b23deb0fad81cf51b99bc06849e85):

- the check runs when ``(nNodes > 1 && NCCL_MNNVL_ENABLE != 0 && p2pLevel != 0) || NCCL_MNNVL_ENABLE == 1``
  (``NCCL_MNNVL_ENABLE`` defaults to 2, auto; ``NCCL_P2P_LEVEL`` is not modelled, so p2pLevel is never 0);
- no MNNVL, silently, unless every rank's GPU reports fabric state ``COMPLETED`` and a non-zero cluster UUID;
- a rank's clique is the ranks with the same cluster UUID and clique ID; a clique of one rank means no MNNVL;
- otherwise NCCL allocates, exports and imports a FABRIC-handle buffer, which needs an IMEX channel
  (``/dev/nvidia-caps-imex-channels/channel<N>`` in the container): without one the init fails with
  ``ncclSystemError`` and the WARN text :data:`MSG_NO_CHANNEL`; with one ``comm->MNNVL = 1``.

cuMem (``NCCL_CUMEM_ENABLE``) and FABRIC-handle support are taken as on (what NCCL finds on GB200). With MNNVL the
ranks of one clique reach each other over NVLink and only traffic between cliques goes through the NICs; without
it every node is its own "node" of the ring. The all-reduce cost is gpusim.hardware.collectives' model on the
run's boards and fabric (``mnnvl`` as decided here).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..hardware import collectives
from ..hardware import topology as hwtopology

CHANNEL_CDI_PREFIX = "k8s.compute-domain.nvidia.com/claim="   # gpusim/node/computedomain.py, a channel's CDI id
MNNVL_ENV = "NCCL_MNNVL_ENABLE"
MNNVL_DEFAULT = 2                                             # init.cc NCCL_PARAM(MNNVLEnable, "MNNVL_ENABLE", 2)
MSG_NO_CHANNEL = ("MNNVL (cliqueSize {size}) is available but not working on this system. Check the IMEX channel "
                  "configuration (/dev/nvidia-caps-imex-channels). Set NCCL_MNNVL_ENABLE=0 to ignore this issue.")
PREPARE = "dra.(*ManagerImpl).PrepareResources"


@dataclass(frozen=True)
class Rank:
    """One NCCL rank: a GPU of a worker pod, with what its container sees."""

    rank: int
    pod: str
    node: str
    gpu: int
    clique: Optional[str]          # <ClusterUUID>.<CliqueID> of a COMPLETED fabric, else None
    channel: bool                  # an IMEX channel among the container's CDI devices
    mnnvl_enable: int              # NCCL_MNNVL_ENABLE as the rank's container sets it


@dataclass
class MnnvlInit:
    """NCCL's decision for the communicator over :attr:`ranks` and the all-reduce it gets."""

    ranks: list[Rank]
    checked: bool                                   # ncclMnnvlCheck ran
    mnnvl: bool                                     # comm->MNNVL
    clique_sizes: dict[str, int] = field(default_factory=dict)
    error: Optional[str] = None                     # the WARN text when the init fails (ncclSystemError)
    cost: Optional[collectives.AllReduceCost] = None

    @property
    def nodes(self) -> list[str]:
        return list(dict.fromkeys(r.node for r in self.ranks))


def _env(container: Any) -> dict[str, str]:
    out = {}
    for e in container.env or []:
        name = e.get("name") if isinstance(e, dict) else getattr(e, "name", None)
        value = e.get("value") if isinstance(e, dict) else getattr(e, "value", None)
        if name:
            out[name] = "" if value is None else str(value)
    return out


def _int_param(text: Optional[str], default: int) -> int:
    """ncclGetEnv + strtoll as NCCL_PARAM reads it: unset (or not a number) keeps the default."""
    try:
        return int(text) if text not in (None, "") else default
    except ValueError:
        return default


def container_cdi(result, pod) -> dict[str, list[str]]:
    """Container → the CDI device ids the kubelet last handed it (the PrepareResources trace)."""
    obj = f"Pod {pod.metadata.namespace}/{pod.metadata.name}"
    recs = [r for r in result.trace.records if r.function == PREPARE and r.object == obj and r.result == "Success"]
    return dict(recs[-1].details.get("cdi_devices", {})) if recs else {}


def _natural(name: str) -> tuple:
    import re
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))


def ranks(result, pods: list[str], namespace: str = "default") -> list[Rank]:
    """The ranks of ``pods`` (pod name order, then GPU index): only running pods' GPUs count."""
    out: list[Rank] = []
    for name in sorted(pods, key=_natural):
        pod = result.pod(name, namespace)
        if pod is None or not pod.spec.node_name or pod.status.phase != "Running":
            continue
        node = pod.spec.node_name
        g = result.ctx.topology.server(node)
        clique = hwtopology.gpu_clique(g) if g is not None else None
        cdi = container_cdi(result, pod)
        gpus = sorted({h.gpu for h in result.ctx.held_by(pod.metadata.uid) if h.gpu is not None and h.node == node})
        for c in pod.spec.containers:
            env = _env(c)
            channel = any(i.startswith(CHANNEL_CDI_PREFIX) and "-channel-" in i for i in cdi.get(c.name, []))
            for gpu in gpus:
                out.append(Rank(len(out), name, node, gpu, clique, channel,
                                _int_param(env.get(MNNVL_ENV), MNNVL_DEFAULT)))
            break   # one NCCL process per GPU, in the pod's first container
    return out


def mnnvl_check(rs: list[Rank]) -> MnnvlInit:
    """init.cc's gate and mnnvl.cc ncclMnnvlCheck over the ranks (each rank decides for itself; one failing rank
    fails the communicator's init)."""
    init = MnnvlInit(rs, False, False)
    if not rs:
        return init
    n_nodes = len({r.node for r in rs})
    results = []
    for me in rs:
        if not ((n_nodes > 1 and me.mnnvl_enable != 0) or me.mnnvl_enable == 1):
            results.append(False)
            continue
        init.checked = True
        if any(r.clique is None for r in rs):       # a fabric not COMPLETED (or no fabric): no MNNVL
            results.append(False)
            continue
        size = sum(1 for r in rs if r.clique == me.clique)
        init.clique_sizes[me.clique] = size
        if size <= 1:
            results.append(False)
            continue
        if not me.channel:
            init.error = MSG_NO_CHANNEL.format(size=size)
            return init
        results.append(True)
    init.mnnvl = all(results)
    return init


def nccl_allreduce(result, pods: list[str], size_bytes: float, namespace: str = "default") -> MnnvlInit:
    """:func:`mnnvl_check` for the job's ranks and, when the init succeeds, the ring all-reduce of ``size_bytes``
    over their placement (collectives model; ``mnnvl`` as NCCL decided)."""
    init = mnnvl_check(ranks(result, pods, namespace))
    if init.error is not None or not init.ranks:
        return init
    top = result.ctx.topology
    placement: dict[str, list[int]] = {}
    for r in init.ranks:
        placement.setdefault(r.node, []).append(r.gpu)
    fabric = top.fabric if len(placement) > 1 else None
    init.cost = collectives.allreduce([(n, top.server(n), gpus) for n, gpus in placement.items()], size_bytes,
                                      fabric, mnnvl=init.mnnvl)
    return init
