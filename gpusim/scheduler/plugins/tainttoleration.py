"""TaintToleration (plugins/tainttoleration): NoSchedule/NoExecute taints in Filter;
untolerated PreferNoSchedule taints counted in Score and normalized in reverse (weight 3)."""
from __future__ import annotations

from ..framework import Code, Status
from .helper import default_normalize_score, find_untolerated

NAME = "TaintToleration"
# Kubernetes ≥1.35 and late 1.34 patches (PR kubernetes/kubernetes#134740) report the generic reason.
ERR_REASON_NOT_MATCH = "node(s) had untolerated taint(s)"
EVENTS = {"Node/Add", "Node/UpdateNodeTaint"}


def reason(taint, version: tuple[int, int]) -> str:
    """≤1.33 names the first untolerated taint, as ``{key: value}``."""
    if version <= (1, 33):
        return f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"
    return ERR_REASON_NOT_MATCH


class TaintToleration:
    name = NAME
    events = EVENTS

    def __init__(self, version: tuple[int, int] = (1, 36)):
        self.version = version

    def filter(self, state, pi, ni) -> Status:
        taint = find_untolerated(ni.node.spec.taints, pi.pod.spec.tolerations, ("NoSchedule", "NoExecute"))
        if taint is None:
            return Status()
        return Status.new(Code.UnschedulableAndUnresolvable, reason(taint, self.version))

    def pre_score(self, state, pi, nodes) -> Status:
        return Status()

    def score(self, state, pi, ni) -> int:
        tols = [t for t in pi.pod.spec.tolerations if t.effect in ("", "PreferNoSchedule")]
        return sum(1 for t in ni.node.spec.taints if t.effect == "PreferNoSchedule"
                   and find_untolerated([t], tols, ("PreferNoSchedule",)) is not None)

    def normalize(self, state, pi, scores: dict[str, int]) -> dict[str, int]:
        return default_normalize_score(scores, reverse=True)


def new(args=None, handle=None) -> TaintToleration:
    return TaintToleration(getattr(handle, "k8s_version", None) or (1, 36))
