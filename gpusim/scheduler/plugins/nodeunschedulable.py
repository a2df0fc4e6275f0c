"""NodeUnschedulable (plugins/nodeunschedulable): cordoned nodes reject pods that do not tolerate
the ``node.kubernetes.io/unschedulable:NoSchedule`` taint."""
from __future__ import annotations

from ...api.core_v1 import Taint
from ..framework import Code, Status
from .helper import tolerates

NAME = "NodeUnschedulable"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
EVENTS = {"Node/Add", "Node/UpdateNodeTaint"}


def fits(pod, node) -> bool:
    if not node.spec.unschedulable:
        return True
    taint = Taint(key=TAINT_NODE_UNSCHEDULABLE, effect="NoSchedule")
    return any(tolerates(t, taint) for t in pod.spec.tolerations)


class NodeUnschedulable:
    name = NAME
    events = EVENTS

    def filter(self, state, pi, ni) -> Status:
        if fits(pi.pod, ni.node):
            return Status()
        return Status.new(Code.UnschedulableAndUnresolvable, ERR_REASON_UNSCHEDULABLE)


def new(args=None, handle=None) -> NodeUnschedulable:
    return NodeUnschedulable()
