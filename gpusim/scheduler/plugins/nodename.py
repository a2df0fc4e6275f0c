"""NodeName (plugins/nodename): a pod naming a node fits only there."""
from __future__ import annotations

from ..framework import Code, Status

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"
EVENTS = {"Node/Add"}


class NodeName:
    name = NAME
    events = EVENTS

    def filter(self, state, pi, ni) -> Status:
        want = pi.pod.spec.node_name
        if not want or want == ni.name:
            return Status()
        return Status.new(Code.UnschedulableAndUnresolvable, ERR_REASON)


def new(args=None, handle=None) -> NodeName:
    return NodeName()
