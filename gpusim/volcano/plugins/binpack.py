"""binpack (mirrors volcano-sh/volcano pkg/scheduler/plugins/binpack/binpack.go): prefer the fullest node.

For each resource the task requests (> 0) that has a weight: ``s_r = w_r × (used_r + request_r) /
allocatable_r`` (0 where used + request exceeds allocatable or the node has none of r; its weight still
counts); the node's score is ``(Σ s_r / Σ w_r) × 100 × binpack.weight``. Arguments: ``binpack.weight`` (1), ``binpack.cpu`` (1),
``binpack.memory`` (1), ``binpack.resources`` (comma-separated extended resources) and
``binpack.resources.<name>`` (1; a negative weight becomes 1).
"""
from __future__ import annotations

from ...scheduler.framework import MAX_NODE_SCORE
from .util import arg_int

NAME = "binpack"


def weights(args: dict) -> tuple[int, dict[str, int]]:
    """(binpack.weight, resource → weight) as the plugin's calculateWeight reads its arguments."""
    w = {"cpu": arg_int(args, "binpack.cpu", 1), "memory": arg_int(args, "binpack.memory", 1)}
    if w["cpu"] < 0:
        w["cpu"] = 1
    if w["memory"] < 0:
        w["memory"] = 1
    for name in str(args.get("binpack.resources", "") or "").split(","):
        name = name.strip()
        if not name:
            continue
        rw = arg_int(args, f"binpack.resources.{name}", 1)
        w[name] = 1 if rw < 0 else rw
    return arg_int(args, "binpack.weight", 1), w


def resource_score(request: float, capacity: float, used: float, weight: int) -> float:
    """ResourceBinPackingScore: 0 without capacity or weight, and 0 when the node would be over capacity."""
    if capacity == 0 or weight == 0:
        return 0.0
    final = request + used
    if final > capacity:
        return 0.0
    return final * weight / capacity


def score(request: dict, allocatable: dict, used: dict, binpack_weight: int, res_weights: dict[str, int]) -> float:
    """BinPackingScore."""
    total, wsum = 0.0, 0
    for r, q in request.items():
        if q == 0 or r not in res_weights:
            continue
        total += resource_score(q, allocatable.get(r, 0), used.get(r, 0), res_weights[r])
        wsum += res_weights[r]
    if wsum > 0:
        total /= wsum
    return total * MAX_NODE_SCORE * binpack_weight


class Binpack:
    name = NAME

    def __init__(self, args: dict):
        self.args = args
        self.weight, self.res_weights = weights(args)

    def on_session_open(self, ssn) -> None:
        if self.weight == 0:
            return

        def node_order(task, nodes):
            return {n.name: score(task.resreq, n.allocatable, n.used, self.weight, self.res_weights) for n in nodes}

        ssn.add_fn("node_order", NAME, node_order)

    def on_session_close(self, ssn) -> None:
        pass


def new(args: dict) -> Binpack:
    return Binpack(args)
