"""NodeAffinity (mirrors kubernetes pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go, 1.36).

- PreFilter: Skip when the pod has neither a nodeSelector nor required node affinity and the profile adds no
  ``addedAffinity`` (Filter is then skipped too). When every required term names nodes with
  ``matchFields: [{key: metadata.name, operator: In}]``, it returns those names as a PreFilterResult, so the
  scheduler filters only them (the other nodes get "node(s) didn't satisfy plugin(s) [NodeAffinity]"); terms
  whose names cannot all hold at once fail with "pod affinity terms conflict".
- Filter: the profile's ``addedAffinity`` required terms, then the pod's nodeSelector and required terms.
- PreScore/Score: the sum of the weights of the matching preferred terms (the pod's and ``addedAffinity``'s),
  normalised to 0..100 (weight 2 in the default profile).
"""
from __future__ import annotations

from typing import Any, Optional

from ...api.core_v1 import NodeAffinity as NodeAffinitySpec
from ...api.schema import decode
from ...componenthelpers.nodeaffinity import (OBJECT_NAME_FIELD, node_matches_pod, required_node_selector,
                                              selector_matches, term_matches)
from ..framework import Code, Status
from .helper import default_normalize_score

NAME = "NodeAffinity"
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"
EVENTS = {"Node/Add", "Node/UpdateNodeLabel"}


def required_node_names(pod) -> Optional[set[str]]:
    """The nodes the pod's required terms name through matchFields ``metadata.name In`` (a term's requirements
    ANDed: their intersection; the terms ORed: their union), or None when a term names no node (every node
    may match it) or there are no required terms. An empty set means the names conflict."""
    req = required_node_selector(pod)
    if req is None or not req.node_selector_terms:
        return None
    names: Optional[set[str]] = None
    for term in req.node_selector_terms:
        term_names: Optional[set[str]] = None
        for r in term.match_fields:
            if r.key == OBJECT_NAME_FIELD and r.operator == "In":
                term_names = set(r.values) if term_names is None else term_names & set(r.values)
        if term_names is None:
            return None
        names = term_names if names is None else names | term_names
    return names


class NodeAffinity:
    name = NAME
    events = EVENTS

    def __init__(self, added: Optional[NodeAffinitySpec] = None):
        self.added_node_selector = added.required_during_scheduling_ignored_during_execution if added else None
        self.added_pref_terms = list(added.preferred_during_scheduling_ignored_during_execution) if added else []

    def pre_filter(self, state, pi, nodes) -> tuple[Optional[set[str]], Status]:
        pod = pi.pod
        if required_node_selector(pod) is None and self.added_node_selector is None and not pod.spec.node_selector:
            return None, Status.new(Code.Skip)
        names = required_node_names(pod)
        if names is not None and not names:
            return None, Status.new(Code.UnschedulableAndUnresolvable, ERR_REASON_CONFLICT)
        return names, Status()

    def filter(self, state, pi, ni) -> Status:
        if self.added_node_selector is not None and not selector_matches(self.added_node_selector, ni.node):
            return Status.new(Code.UnschedulableAndUnresolvable, ERR_REASON_ENFORCED)
        if node_matches_pod(pi.pod, ni.node):
            return Status()
        return Status.new(Code.UnschedulableAndUnresolvable, ERR_REASON_POD)

    def _preferred(self, pod) -> list:
        aff = pod.spec.affinity.node_affinity if pod.spec.affinity else None
        return list(aff.preferred_during_scheduling_ignored_during_execution) if aff else []

    def pre_score(self, state, pi, nodes) -> Status:
        if not self._preferred(pi.pod) and not self.added_pref_terms:
            return Status.new(Code.Skip)
        return Status()

    def score(self, state, pi, ni) -> int:
        return sum(t.weight for t in self.added_pref_terms + self._preferred(pi.pod)
                   if term_matches(t.preference, ni.node))

    def normalize(self, state, pi, scores: dict[str, int]) -> dict[str, int]:
        return default_normalize_score(scores, reverse=False)


def new(args: Optional[dict[str, Any]] = None, handle=None) -> NodeAffinity:
    """New: NodeAffinityArgs' ``addedAffinity`` (checked by the loader) applies to every pod of the profile."""
    added = (args or {}).get("addedAffinity")
    return NodeAffinity(decode(NodeAffinitySpec, added, "addedAffinity") if added is not None else None)
