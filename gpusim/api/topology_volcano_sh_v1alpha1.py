"""``topology.volcano.sh/v1alpha1`` HyperNode (mirrors volcano-sh/apis pkg/apis/topology/v1alpha1/hypernode_types.go,
the CRD's validation rules, and volcano-sh/volcano pkg/webhooks/admission/hypernodes/validate/admit_hypernode.go).

A HyperNode is a network performance domain, typically a switch: ``spec.tier`` (smaller = faster, closer),
``spec.tierName``, and ``spec.members`` — nodes (``type: Node``) chosen by ``exactMatch.name``,
``regexMatch.pattern`` or ``labelMatch`` (a label selector, Node members only), or child HyperNodes
(``type: HyperNode``, by ``exactMatch.name``: the scheduler's cache links children by that name). Cluster-scoped;
kubectl's short name ``hn``; print columns Tier, TierName, NodeCount (``status.nodeCount``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from .meta import LabelSelector, ObjectMeta
from .validation import qualified_name_errors

GROUP = "topology.volcano.sh"
MEMBER_TYPES = ("Node", "HyperNode")
NETWORK_TOPOLOGY_SOURCE_LABEL = "volcano.sh/network-topology-source"    # labels.go (auto-discovery)


@dataclass
class ExactMatch:
    name: str = ""


@dataclass
class RegexMatch:
    pattern: str = ""


@dataclass
class MemberSelector:
    exact_match: Optional[ExactMatch] = None
    regex_match: Optional[RegexMatch] = None
    label_match: Optional[LabelSelector] = None


@dataclass
class MemberSpec:
    type: str = ""
    selector: MemberSelector = field(default_factory=MemberSelector)


@dataclass
class HyperNodeSpec:
    tier: int = 0
    tier_name: str = ""
    members: list[MemberSpec] = field(default_factory=list)


@dataclass
class HyperNodeStatus:
    conditions: list[Any] = field(default_factory=list)
    node_count: int = 0


@dataclass
class HyperNode:
    api_version: str = f"{GROUP}/v1alpha1"
    kind: str = "HyperNode"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: HyperNodeSpec = field(default_factory=HyperNodeSpec)
    status: HyperNodeStatus = field(default_factory=HyperNodeStatus)
    NAMESPACED = False


def validate_hyper_node(hn: HyperNode) -> Iterator[tuple[str, str]]:
    """The CRD schema (tier ≥ 0, tierName ≤ 253, ≥ 1 member, member type Node | HyperNode, exactly one selector) and
    admit_hypernode.go validateHyperNodeMemberSelector (exactMatch name a qualified name, regexMatch pattern
    that compiles). gpusim adds: a HyperNode member is chosen by exactMatch (the only selector the scheduler's
    cache reads for it) and labelMatch selects Nodes only (as the API's field comment says)."""
    s = hn.spec
    if s.tier < 0:
        yield "spec.tier", f"Invalid value: {s.tier}: spec.tier in body should be greater than or equal to 0"
    if len(s.tier_name) > 253:
        yield "spec.tierName", "Too long: may not be longer than 253"
    if not s.members:
        yield "spec.members", "Invalid value: 0: spec.members in body should have at least 1 items"
    for i, m in enumerate(s.members):
        p = f"spec.members[{i}]"
        if m.type not in MEMBER_TYPES:
            yield f"{p}.type", 'Unsupported value: "' + m.type + '": supported values: "Node", "HyperNode"'
            continue
        sel = m.selector
        n = sum(x is not None for x in (sel.exact_match, sel.regex_match, sel.label_match))
        if n == 0:
            yield f"{p}.selector", ('Invalid value: "object": Either ExactMatch or RegexMatch or LabelMatch must be '
                                    "specified")
            continue
        if n > 1:
            yield f"{p}.selector", ('Invalid value: "object": Only one of ExactMatch, RegexMatch, or LabelMatch can '
                                    "be specified")
            continue
        if sel.exact_match is not None:
            name = sel.exact_match.name
            if not name:
                yield f"{p}.selector.exactMatch.name", f'Invalid value: "{name}": member exactMatch name is required'
            else:
                errs = qualified_name_errors(name)
                if errs:
                    yield f"{p}.selector.exactMatch.name", (f'Invalid value: "{name}": member exactMatch validate '
                                                            f"failed [{' '.join(errs)}]")
        if sel.regex_match is not None:
            pat = sel.regex_match.pattern
            if not pat:
                yield f"{p}.selector.regexMatch.pattern", f'Invalid value: "{pat}": member regexMatch pattern is required'
            else:
                try:
                    re.compile(pat)
                except re.error as e:
                    yield f"{p}.selector.regexMatch.pattern", (f'Invalid value: "{pat}": member regexMatch pattern is '
                                                               f"invalid: {e}")
        if m.type == "HyperNode" and sel.exact_match is None:
            yield f"{p}.selector", ("Invalid value: a HyperNode member must be selected by exactMatch (Volcano's "
                                    "scheduler cache links child HyperNodes by exactMatch.name only)")


def matches_node(sel: MemberSelector, name: str, labels: dict[str, str]) -> bool:
    """Whether a Node member selector selects a node (Go regexp.MatchString: unanchored search)."""
    if sel.exact_match is not None:
        return sel.exact_match.name == name
    if sel.regex_match is not None:
        return re.search(sel.regex_match.pattern, name) is not None
    if sel.label_match is not None:
        return sel.label_match.matches(labels)
    return False
