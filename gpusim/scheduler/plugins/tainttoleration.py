"""TaintToleration (plugins/tainttoleration): NoSchedule/NoExecute taints in Filter;
untolerated PreferNoSchedule taints counted in Score and normalized in reverse (weight 3)."""
from __future__ import annotations

from ..framework import Code, Status
from .helper import default_normalize_score, find_untolerated

NAME = "TaintToleration"
# Kubernetes ≥1.35 (PR kubernetes/kubernetes#134740) reports the generic reason.
ERR_REASON_NOT_MATCH = "node(s) had untolerated taint(s)"
EVENTS = {"Node/Add", "Node/UpdateNodeTaint"}


class TaintToleration:
    name = NAME
    events = EVENTS

    def filter(self, state, pi, ni) -> Status:
        if find_untolerated(ni.node.spec.taints, pi.pod.spec.tolerations, ("NoSchedule", "NoExecute")) is None:
            return Status()
        return Status.new(Code.UnschedulableAndUnresolvable, ERR_REASON_NOT_MATCH)

    def pre_score(self, state, pi, nodes) -> Status:
        return Status()

    def score(self, state, pi, ni) -> int:
        tols = [t for t in pi.pod.spec.tolerations if t.effect in ("", "PreferNoSchedule")]
        return sum(1 for t in ni.node.spec.taints if t.effect == "PreferNoSchedule"
                   and find_untolerated([t], tols, ("PreferNoSchedule",)) is not None)

    def normalize(self, state, pi, scores: dict[str, int]) -> dict[str, int]:
        return default_normalize_score(scores, reverse=True)


def new(args=None, handle=None) -> TaintToleration:
    return TaintToleration()
