"""Required node affinity (mirrors k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go:
``GetRequiredNodeAffinity(pod).Match(node)``, used by the scheduler's NodeAffinity plugin and by the
kubelet's admission of a pod bound to its node)."""
from __future__ import annotations

from ..api.core_v1 import Node, NodeSelectorRequirement, NodeSelectorTerm, Pod


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
