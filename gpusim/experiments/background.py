"""Chapter 01's five failure scenarios of native Kubernetes GPU scheduling, each reproduced by a run (or, for the
all-reduce cliff, by the collective cost model of :mod:`gpusim.hardware.collectives`) and summarised as the
numbers the chapter's prose quotes. Scenario 4 (team B Pending behind team A) is chapter 05-5's workload, run
by ``gpusim.comparison.compare`` directly (comparison and experiments are sibling modules of one layer)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..cluster.simulation import run
from ..hardware import collectives, fabric, topology
from ..views.sharing import oom_instants
from ..workloads.training import training_report


def partial_start(path: str = "examples/gang-partial-start.yaml") -> dict[str, Any]:
    """Scenario 1 (no gang): the run, and its training group's report (``gpus_held_over_time``,
    ``wasted_gpu_hours``, ``first_start``, ``completed_at``, ``ideal_run_time``)."""
    r = run(path)
    return {"result": r, **training_report(r)[0]}


@dataclass(frozen=True)
class Cliff:
    """Scenario 2's cluster: ``nodes`` DGX H100 under a Tree fabric of ``nodes_per_leaf`` nodes per leaf, switch
    up-links oversubscribed ``oversubscription``:1, background ``load`` (gpusim.hardware.fabric's Load model)."""
    nodes: int = 64
    nodes_per_leaf: int = 8
    oversubscription: float = 2.0
    load: float = 0.5
    board: str = "dgx-h100"
    gradient_bytes: float = 14e9       # one all-reduce per step: a 7B-parameter model's bf16 gradients
    compute_seconds: float = 0.3       # forward + backward per step (gpusim.io/step-time)


def allreduce_cliff(c: Cliff = Cliff()) -> list[dict[str, Any]]:
    """Rows for ``gs.plot_step_time``: 64 GPUs packed on 8 whole nodes; 128 GPUs packed on 16 whole nodes; 128
    GPUs as the default scheduler leaves them on a busy cluster, 2 per node over 64 nodes (any GPUs, no NVLink /
    NIC affinity). Step time = compute + ring all-reduce (no overlap; collectives.step_time)."""
    g = topology.server_graph(c.board)
    fab = fabric.build_fabric({f"n-{i}": g for i in range(c.nodes)},
                              fabric.FabricSpec(type="Tree", nodes_per_leaf=c.nodes_per_leaf,
                                                oversubscription=c.oversubscription, load=c.load))
    placements = {
        "64 GPUs: 8 nodes x 8": [(f"n-{i}", g, range(8)) for i in range(8)],
        "128 GPUs: 16 nodes x 8": [(f"n-{i}", g, range(8)) for i in range(16)],
        "128 GPUs: 64 nodes x 2 (scattered)": [(f"n-{i}", g, range(2)) for i in range(c.nodes)],
    }
    rows = []
    for label, p in placements.items():
        cost = collectives.allreduce(p, c.gradient_bytes, fab)
        rows.append({"label": label, "compute": c.compute_seconds, "allreduce": cost.seconds,
                     "busbw": cost.bus_bandwidth, "bottleneck": cost.bottleneck,
                     "step": collectives.step_time(c.compute_seconds, cost.seconds)})
    return rows


def oom_cascade(path: str = "examples/inference-oom.yaml") -> dict[str, Any]:
    """Scenario 3 (time-slicing): the run and its OOM instants ``[(t, [pods killed together])]``."""
    r = run(path)
    return {"result": r, "ooms": oom_instants(r)}


def admission_errors(path: str = "examples/admission-error.yaml") -> dict[str, Any]:
    """Scenario 5 (kubelet restart): the run and the pods the kubelet rejected with ``UnexpectedAdmissionError``
    (name → the event message)."""
    r = run(path)
    failed = {e.object.name: e.message for e in r.events.log
              if e.object.kind == "Pod" and e.reason == "UnexpectedAdmissionError"}
    return {"result": r, "rejected": failed}
