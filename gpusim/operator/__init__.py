"""The NVIDIA GPU Operator (mirrors NVIDIA/gpu-operator controllers/: clusterpolicy_controller.go,
state_manager.go, object_controls.go). With a ClusterPolicy in the scenario it labels every GPU node that NFD
found, creates the operand pods per node in the order of ``state_manager.go`` addState, and keeps the
ClusterPolicy's ``status.state`` (``notReady`` until every enabled operand is ready on every GPU node, then
``ready``). It talks to the nodes only through the apiserver, as upstream: node labels, operand pods and
their status; what the containers do on the host is the node's part (gpusim.node.operands).
"""
from __future__ import annotations

from typing import Any, Optional

from .clusterpolicy_controller import ClusterPolicyReconciler

__all__ = ["ClusterPolicyReconciler", "install"]


def install(sim: Any) -> Optional[ClusterPolicyReconciler]:
    """The components-table add-on: the operator runs when the scenario holds a ClusterPolicy."""
    sc = sim.scenario
    if sc.cluster_policy is None:
        return None
    return ClusterPolicyReconciler(sim.ctx, sc.cluster_policy, sim.seed)
