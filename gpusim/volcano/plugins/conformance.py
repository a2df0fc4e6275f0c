"""conformance (mirrors volcano-sh/volcano pkg/scheduler/plugins/conformance/conformance.go): never evict
critical pods (priority class system-cluster-critical / system-node-critical) or pods in kube-system."""
from __future__ import annotations

from ..framework import PERMIT

NAME = "conformance"
CRITICAL = ("system-cluster-critical", "system-node-critical")


class Conformance:
    name = NAME

    def __init__(self, args: dict):
        self.args = args

    def on_session_open(self, ssn) -> None:
        def evictable(evictor, evictees):
            out = [t for t in evictees if t.pod.spec.priority_class_name not in CRITICAL
                   and t.namespace != "kube-system"]
            return out, PERMIT

        ssn.add_fn("preemptable", NAME, evictable)
        ssn.add_fn("reclaimable", NAME, evictable)

    def on_session_close(self, ssn) -> None:
        pass


def new(args: dict) -> Conformance:
    return Conformance(args)
