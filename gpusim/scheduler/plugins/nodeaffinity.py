"""NodeAffinity (plugins/nodeaffinity): nodeSelector and required node affinity in Filter,
preferred terms in Score (weight 2 in the default profile)."""
from __future__ import annotations

from ...componenthelpers.nodeaffinity import node_matches_pod, term_matches
from ..framework import Code, Status
from .helper import default_normalize_score

NAME = "NodeAffinity"
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
EVENTS = {"Node/Add", "Node/UpdateNodeLabel"}


class NodeAffinity:
    name = NAME
    events = EVENTS

    def filter(self, state, pi, ni) -> Status:
        if node_matches_pod(pi.pod, ni.node):
            return Status()
        return Status.new(Code.UnschedulableAndUnresolvable, ERR_REASON_POD)

    def pre_score(self, state, pi, nodes) -> Status:
        aff = pi.pod.spec.affinity.node_affinity if pi.pod.spec.affinity else None
        if not aff or not aff.preferred_during_scheduling_ignored_during_execution:
            return Status.new(Code.Skip)
        return Status()

    def score(self, state, pi, ni) -> int:
        aff = pi.pod.spec.affinity.node_affinity
        return sum(t.weight for t in aff.preferred_during_scheduling_ignored_during_execution
                   if term_matches(t.preference, ni.node))

    def normalize(self, state, pi, scores: dict[str, int]) -> dict[str, int]:
        return default_normalize_score(scores, reverse=False)


def new(args=None, handle=None) -> NodeAffinity:
    return NodeAffinity()
