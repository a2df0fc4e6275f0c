"""Required node affinity (mirrors k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go:
``GetRequiredNodeAffinity(pod).Match(node)`` and ``NodeSelector.Match``, used by the scheduler's NodeAffinity
plugin and by the kubelet's admission of a pod bound to its node).

A term whose requirements do not parse (``labels.NewRequirement`` in k8s.io/apimachinery/pkg/labels/selector.go:
an invalid key or label value, values where the operator takes none, a non-integer for Gt/Lt; a field
requirement without exactly one value) matches no node, as upstream's lazy-error selector does; the other
terms still count."""
from __future__ import annotations

import re
from typing import Optional

from ..api.core_v1 import Node, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod

OBJECT_NAME_FIELD = "metadata.name"     # metav1.ObjectNameField
# k8s.io/apimachinery/pkg/util/validation: IsValidLabelValue, IsQualifiedName
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def _valid_label_value(v: str) -> bool:
    return len(v) <= 63 and bool(_LABEL_VALUE.match(v))


def _valid_qualified_name(key: str) -> bool:
    prefix, _, name = key.rpartition("/")
    if "/" in key and (not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix)):
        return False
    return 0 < len(name) <= 63 and bool(_NAME_PART.match(name))


def _label_requirement_parses(r: NodeSelectorRequirement) -> bool:
    """labels.NewRequirement's checks for a matchExpressions entry."""
    if not _valid_qualified_name(r.key):
        return False
    if r.operator in ("In", "NotIn"):
        return bool(r.values) and all(_valid_label_value(v) for v in r.values)
    if r.operator in ("Exists", "DoesNotExist"):
        return not r.values
    if r.operator in ("Gt", "Lt"):
        return len(r.values) == 1 and re.fullmatch(r"[+-]?[0-9]+", r.values[0]) is not None
    return False


def _field_requirement_parses(r: NodeSelectorRequirement) -> bool:
    """nodeSelectorRequirementsAsFieldSelector: In/NotIn with exactly one value."""
    return r.operator in ("In", "NotIn") and len(r.values) == 1


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
    """An empty term matches nothing (nodeaffinity.go: nodeSelectorTerm with no requirements), nor does a term
    with a requirement that does not parse."""
    if not term.match_expressions and not term.match_fields:
        return False
    if not all(map(_label_requirement_parses, term.match_expressions)) or \
            not all(map(_field_requirement_parses, term.match_fields)):
        return False
    fields = {OBJECT_NAME_FIELD: node.metadata.name}
    return all(_req_matches(r, node.metadata.labels) for r in term.match_expressions) and \
        all(_req_matches(r, fields) for r in term.match_fields)


def selector_matches(selector: NodeSelector, node: Node) -> bool:
    """NodeSelector.Match: the terms are ORed."""
    return any(term_matches(t, node) for t in selector.node_selector_terms)


def required_node_selector(pod: Pod) -> Optional[NodeSelector]:
    """The pod's spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution, or None."""
    aff = pod.spec.affinity.node_affinity if pod.spec.affinity else None
    return aff.required_during_scheduling_ignored_during_execution if aff else None


def node_matches_pod(pod: Pod, node: Node) -> bool:
    """GetRequiredNodeAffinity(pod).Match(node): nodeSelector AND any required term."""
    labels = node.metadata.labels
    if any(labels.get(k) != v for k, v in pod.spec.node_selector.items()):
        return False
    req = required_node_selector(pod)
    if req is not None:
        return selector_matches(req, node)
    return True
