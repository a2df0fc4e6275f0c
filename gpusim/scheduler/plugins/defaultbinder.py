"""DefaultBinder (plugins/defaultbinder): POST pods/binding — the pod gets spec.nodeName."""
from __future__ import annotations

from ..framework import Status

NAME = "DefaultBinder"


class DefaultBinder:
    name = NAME

    def __init__(self, handle):
        self.handle = handle

    def bind(self, state, pi, node: str) -> Status:
        pod = pi.pod
        pod.spec.node_name = node
        self.handle.api.update(pod)
        return Status()


def new(args=None, handle=None) -> DefaultBinder:
    return DefaultBinder(handle)
