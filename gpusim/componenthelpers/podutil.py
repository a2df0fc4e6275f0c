"""Pod conditions (mirrors kubernetes pkg/api/v1/pod/util.go ``UpdatePodCondition``), shared by the
scheduler (PodScheduled), the kubelet (Ready, ContainersReady, …), the node lifecycle controller and
Volcano, as upstream all import that package."""
from __future__ import annotations

from ..api.core_v1 import PodCondition


def set_condition(conds: list, ctype: str, status: str, now: float, reason: str = "", message: str = "") -> None:
    """Set condition ``ctype``; lastTransitionTime moves only when the status changes."""
    c = next((c for c in conds if c.type == ctype), None)
    if c is None:
        conds.append(PodCondition(ctype, status, reason, message, now))
    elif (c.status, c.reason, c.message) != (status, reason, message):
        if c.status != status:
            c.last_transition_time = now
        c.status, c.reason, c.message = status, reason, message
