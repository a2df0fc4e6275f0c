"""NodeAffinity (plugins/nodeaffinity): nodeSelector and required node affinity in Filter,
preferred terms in Score (weight 2 in the default profile)."""
from __future__ import annotations

from ...api.core_v1 import Node, NodeSelectorRequirement, NodeSelectorTerm, Pod
from ..framework import Code, Status
from .helper import default_normalize_score

NAME = "NodeAffinity"
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
EVENTS = {"Node/Add", "Node/UpdateNodeLabel"}


def _req_matches(r: NodeSelectorRequirement, labels: dict[str, str]) -> bool:
    has, v = r.key in labels, labels.get(r.key)
    if r.operator == "In":
        return has and v in r.values
    if r.operator == "NotIn":
        return not has or v not in r.values
    if r.operator == "Exists":
        return has
    if r.operator == "DoesNotExist":
        return not has
    if r.operator in ("Gt", "Lt") and has and len(r.values) == 1:
        try:
            a, b = int(v), int(r.values[0])
        except ValueError:
            return False
        return a > b if r.operator == "Gt" else a < b
    return False


def term_matches(term: NodeSelectorTerm, node: Node) -> bool:
    """An empty term matches nothing (nodeaffinity.go: nodeSelectorTerm with no requirements)."""
    if not term.match_expressions and not term.match_fields:
        return False
    fields = {"metadata.name": node.metadata.name}
    return all(_req_matches(r, node.metadata.labels) for r in term.match_expressions) and \
        all(_req_matches(r, fields) for r in term.match_fields)


def node_matches_pod(pod: Pod, node: Node) -> bool:
    """GetRequiredNodeAffinity(pod).Match(node): nodeSelector AND any required term."""
    labels = node.metadata.labels
    if any(labels.get(k) != v for k, v in pod.spec.node_selector.items()):
        return False
    aff = pod.spec.affinity.node_affinity if pod.spec.affinity else None
    req = aff.required_during_scheduling_ignored_during_execution if aff else None
    if req is not None:
        return any(term_matches(t, node) for t in req.node_selector_terms)
    return True


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
