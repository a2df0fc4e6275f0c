"""InterPodAffinity (kubernetes ``pkg/scheduler/framework/plugins/interpodaffinity``, v1.36:
``plugin.go``, ``filtering.go``, ``scoring.go``; terms as in ``framework/types.go`` AffinityTerm):
weight 2 in the default profile, ``hardPodAffinityWeight`` 1.

PreFilter counts, per topology pair (topologyKey, value of the node holding the pod):
  * existing pods whose *required anti-affinity* terms match the incoming pod;
  * existing pods matching *all* of the incoming pod's required affinity terms (one count per term);
  * existing pods matching each of the incoming pod's required anti-affinity terms.
  Nothing to check (no required terms, no existing anti-affinity match) → Skip.
Filter, in upstream order:
  1. every required affinity term's topologyKey must be on the node and its pair must hold a matching
     pod — except when no pod anywhere matches and the pod matches its own terms (the first pod of a
     self-affine group) → else UnschedulableAndUnresolvable ``node(s) didn't match pod affinity rules``;
  2. no pod matching a required anti-affinity term in the node's pair → else Unschedulable
     ``node(s) didn't match pod anti-affinity rules``;
  3. no existing pod's required anti-affinity term matching the incoming pod in any pair of the node's
     labels → else Unschedulable ``node(s) didn't satisfy existing pods anti-affinity rules``.
PreScore/Score: for every existing pod on a node N' and pair p = (key, N'.labels[key]):
  + weight of each incoming preferred affinity term the existing pod matches,
  − weight of each incoming preferred anti-affinity term it matches,
  + hardPodAffinityWeight for each of the existing pod's required affinity terms the incoming pod matches,
  + / − weight of each of the existing pod's preferred affinity / anti-affinity terms the incoming pod
  matches. raw(N) = Σ over pairs of N's labels. Nothing accumulated → Skip.
NormalizeScore: min-max over the scored nodes, ``int(100 × (raw − min) / (max − min))`` (0 if max = min).

Term semantics: ``namespaces`` empty and ``namespaceSelector`` absent → the owning pod's namespace;
``namespaceSelector: {}`` → all namespaces; a nil ``labelSelector`` matches nothing. Namespace labels
come from Namespace objects (plus ``kubernetes.io/metadata.name``, which the API server sets; a
namespace without an object gets just that label). ``matchLabelKeys``/``mismatchLabelKeys`` are
merged into the term's selector with the owning pod's labels (``key In/NotIn (value)``), as the API
server does at pod creation.

Preemption/nominated pods: instead of the AddPod/RemovePod PreFilter extensions, Filter reconciles
the node it evaluates: that node's stored contributions are replaced by a recount of its live pods.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from ..framework import MAX_NODE_SCORE, Code, Status
from .podtopologyspread import Selector, field_of, parse_selector, pod_labels

NAME = "InterPodAffinity"
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"
EVENTS = {"Pod/Add", "Pod/Delete", "Node/Add", "Node/UpdateNodeLabel"}

LABEL_METADATA_NAME = "kubernetes.io/metadata.name"
DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1
PRE_FILTER_KEY = "PreFilter" + NAME
PRE_SCORE_KEY = "PreScore" + NAME
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"

Pair = tuple[str, str]
NsLabels = Callable[[str], dict[str, str]]


@dataclass
class AffinityTerm:
    """framework.AffinityTerm."""

    namespaces: frozenset[str]
    namespace_selector: Selector
    selector: Selector
    topology_key: str

    def matches(self, pod, ns_labels: NsLabels) -> bool:
        ns = pod.metadata.namespace
        if ns in self.namespaces or (not self.namespace_selector.nothing
                                     and self.namespace_selector.matches(ns_labels(ns))):
            return self.selector.matches(pod_labels(pod))
        return False


def new_affinity_term(owner, raw) -> AffinityTerm:
    """GetNamespacesFromPodAffinityTerm + LabelSelectorAsSelector + matchLabelKeys merge."""
    namespaces = field_of(raw, "namespaces") or []
    raw_ns_sel = field_of(raw, "namespaceSelector")
    if not namespaces and raw_ns_sel is None:
        namespaces = [owner.metadata.namespace]
    raw_sel = field_of(raw, "labelSelector")
    sel = parse_selector(raw_sel)
    if raw_sel is not None:
        lbls = pod_labels(owner)
        for key in field_of(raw, "matchLabelKeys") or []:
            if key in lbls:
                sel = sel.add(key, "In", (lbls[key],))
        for key in field_of(raw, "mismatchLabelKeys") or []:
            if key in lbls:
                sel = sel.add(key, "NotIn", (lbls[key],))
    return AffinityTerm(frozenset(namespaces), parse_selector(raw_ns_sel), sel, field_of(raw, "topologyKey", ""))


@dataclass
class PodTerms:
    """The parsed terms framework.NewPodInfo keeps on a PodInfo."""

    required_affinity: list[AffinityTerm] = field(default_factory=list)
    required_anti_affinity: list[AffinityTerm] = field(default_factory=list)
    preferred_affinity: list[tuple[AffinityTerm, int]] = field(default_factory=list)
    preferred_anti_affinity: list[tuple[AffinityTerm, int]] = field(default_factory=list)


_NO_TERMS = PodTerms()


def pod_terms(pod) -> PodTerms:
    aff = pod.spec.affinity
    if aff is None or (aff.pod_affinity is None and aff.pod_anti_affinity is None):
        return _NO_TERMS

    def required(raw):
        return [new_affinity_term(pod, t) for t in field_of(raw, REQUIRED) or []]

    def preferred(raw):
        return [(new_affinity_term(pod, field_of(w, "podAffinityTerm")), int(field_of(w, "weight", 0)))
                for w in field_of(raw, PREFERRED) or []]

    return PodTerms(required(aff.pod_affinity), required(aff.pod_anti_affinity),
                    preferred(aff.pod_affinity), preferred(aff.pod_anti_affinity))


def pod_matches_all_affinity_terms(terms: list[AffinityTerm], pod, ns_labels: NsLabels) -> bool:
    return bool(terms) and all(t.matches(pod, ns_labels) for t in terms)


def _inc(m: dict[Pair, int], labels: dict[str, str], key: str, value: int) -> None:
    """topologyToMatchedTermCount.update: entries that reach 0 are deleted."""
    if key in labels:
        pair = (key, labels[key])
        m[pair] = m.get(pair, 0) + value
        if m[pair] == 0:
            del m[pair]


@dataclass
class PreFilterState:
    terms: PodTerms = field(default_factory=PodTerms)
    skip: bool = False
    existing_anti_affinity_counts: dict[Pair, int] = field(default_factory=dict)
    affinity_counts: dict[Pair, int] = field(default_factory=dict)
    anti_affinity_counts: dict[Pair, int] = field(default_factory=dict)
    # node name → (existing anti, affinity, anti-affinity) contributions of that node's pods
    per_node: dict[str, tuple[dict, dict, dict]] = field(default_factory=dict)
    # node name → the pod keys the counts were computed from (Filter recounts a node that changed)
    pod_keys: dict[str, frozenset] = field(default_factory=dict)


@dataclass
class PreScoreState:
    topology_score: dict[str, dict[str, int]] = field(default_factory=dict)


class InterPodAffinity:
    name = NAME
    events = EVENTS

    def __init__(self, handle=None, hard_pod_affinity_weight: int = DEFAULT_HARD_POD_AFFINITY_WEIGHT,
                 ignore_preferred_terms_of_existing_pods: bool = False):
        self.handle = handle
        self.hard_pod_affinity_weight = hard_pod_affinity_weight
        self.ignore_preferred_terms_of_existing_pods = ignore_preferred_terms_of_existing_pods

    # --- helpers -----------------------------------------------------------------------------------------
    def _ns_labels_fn(self) -> NsLabels:
        """GetNamespaceLabelsSnapshot, memoised for one call."""
        api = getattr(self.handle, "api", None)
        cache: dict[str, dict[str, str]] = {}

        def get(ns: str) -> dict[str, str]:
            if ns not in cache:
                obj = api.get("Namespace", "", ns) if api is not None else None
                labels = dict(obj.metadata.labels) if obj is not None else {}
                labels.setdefault(LABEL_METADATA_NAME, ns)
                cache[ns] = labels
            return cache[ns]
        return get

    def _all_nodes(self, fallback):
        h = self.handle
        return h.node_infos() if h is not None and hasattr(h, "node_infos") else list(fallback)

    def _affinity_nodes(self, fallback):
        """Nodes that hold pods with pod (anti-)affinity: the snapshot's HavePodsWithAffinityList. Only
        these can contribute when the incoming pod has no terms of its own."""
        return [ni for ni in self._all_nodes(fallback) if ni.affinity_pods] if not hasattr(
            self.handle, "nodes_with_affinity_pods") else self.handle.nodes_with_affinity_pods()

    @staticmethod
    def _node_contrib(pod, terms: PodTerms, ni, ns_labels: NsLabels) -> tuple[dict, dict, dict]:
        labels = ni.node.metadata.labels
        existing, aff, anti = {}, {}, {}
        incoming = bool(terms.required_affinity or terms.required_anti_affinity)
        for p in ni.pods.values():
            other = p.pod
            a = other.spec.affinity
            if a is not None and a.pod_anti_affinity is not None:      # getExistingAntiAffinityCounts
                for t in pod_terms(other).required_anti_affinity:
                    if t.matches(pod, ns_labels):
                        _inc(existing, labels, t.topology_key, 1)
            if not incoming:
                continue
            if terms.required_affinity and pod_matches_all_affinity_terms(terms.required_affinity, other, ns_labels):
                for t in terms.required_affinity:
                    _inc(aff, labels, t.topology_key, 1)
            for t in terms.required_anti_affinity:
                if t.matches(other, ns_labels):
                    _inc(anti, labels, t.topology_key, 1)
        return existing, aff, anti

    # --- PreFilter / Filter ------------------------------------------------------------------------------
    def cal_pre_filter_state(self, pod, nodes) -> PreFilterState:
        terms = pod_terms(pod)
        s = PreFilterState(terms)
        if not (terms.required_affinity or terms.required_anti_affinity):
            nodes = self._affinity_nodes(nodes)   # only existing pods' anti-affinity can matter
            if not nodes:
                s.skip = True
                return s
        ns_labels = self._ns_labels_fn()
        for ni in nodes:
            contrib = self._node_contrib(pod, terms, ni, ns_labels)
            if any(contrib):
                s.per_node[ni.name] = contrib
            for total, part in zip((s.existing_anti_affinity_counts, s.affinity_counts, s.anti_affinity_counts),
                                   contrib):
                for pair, n in part.items():
                    total[pair] = total.get(pair, 0) + n
                    if total[pair] == 0:
                        del total[pair]
        s.skip = (not s.existing_anti_affinity_counts and not terms.required_affinity
                  and not terms.required_anti_affinity)
        if not s.skip:
            s.pod_keys = {ni.name: frozenset(ni.pods) for ni in nodes}
        return s

    def pre_filter(self, state, pi, nodes) -> tuple[Optional[set[str]], Status]:
        s = self.cal_pre_filter_state(pi.pod, nodes)
        state[PRE_FILTER_KEY] = s
        return None, Status.new(Code.Skip) if s.skip else Status()

    def _reconciled(self, s: PreFilterState, pod, ni, ns_labels) -> tuple[dict, dict, dict]:
        """The counts with this node's stored contributions replaced by its live pods' (Add/RemovePod)."""
        totals = (s.existing_anti_affinity_counts, s.affinity_counts, s.anti_affinity_counts)
        if ni.pods.keys() == s.pod_keys.get(ni.name):
            return totals
        stored = s.per_node.get(ni.name, ({}, {}, {}))
        live = self._node_contrib(pod, s.terms, ni, ns_labels)
        if live == stored:
            return totals
        out = []
        for total, old, new_ in zip(totals, stored, live):
            t = dict(total)
            for pair in set(old) | set(new_):
                v = t.get(pair, 0) - old.get(pair, 0) + new_.get(pair, 0)
                if v == 0:
                    t.pop(pair, None)
                else:
                    t[pair] = v
            out.append(t)
        return out[0], out[1], out[2]

    def filter(self, state, pi, ni) -> Status:
        s: Optional[PreFilterState] = state.get(PRE_FILTER_KEY)
        if s is None:
            s = self.cal_pre_filter_state(pi.pod, self._all_nodes([ni]))
            state[PRE_FILTER_KEY] = s
        ns_labels = self._ns_labels_fn()
        existing, aff, anti = self._reconciled(s, pi.pod, ni, ns_labels)
        if s.skip and not existing:
            return Status()
        labels = ni.node.metadata.labels
        if not self._satisfy_pod_affinity(s, aff, pi.pod, labels, ns_labels):
            return Status.new(Code.UnschedulableAndUnresolvable, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
        for t in s.terms.required_anti_affinity:                   # satisfyPodAntiAffinity
            if t.topology_key in labels and anti.get((t.topology_key, labels[t.topology_key]), 0) > 0:
                return Status.new(Code.Unschedulable, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
        if existing and any(existing.get(pair, 0) > 0 for pair in labels.items()):   # satisfyExistingPodsAntiAffinity
            return Status.new(Code.Unschedulable, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
        return Status()

    @staticmethod
    def _satisfy_pod_affinity(s: PreFilterState, aff: dict, pod, labels, ns_labels) -> bool:
        pods_exist = True
        for t in s.terms.required_affinity:
            if t.topology_key not in labels:
                return False                  # all topology labels must exist on the node
            if aff.get((t.topology_key, labels[t.topology_key]), 0) <= 0:
                pods_exist = False
        if not pods_exist:
            # The first pod of a series with affinity to themselves: no pod matches anywhere and the
            # pod matches its own terms.
            return not aff and pod_matches_all_affinity_terms(s.terms.required_affinity, pod, ns_labels)
        return True

    # --- PreScore / Score / NormalizeScore ---------------------------------------------------------------
    def _process_existing_pod(self, terms: PodTerms, existing, node_labels, pod, ns_labels, topo: dict) -> None:
        if not node_labels:
            return

        def process(term: AffinityTerm, weight: int, target, mult: int) -> None:
            if term.matches(target, ns_labels) and term.topology_key in node_labels:
                m = topo.setdefault(term.topology_key, {})
                v = node_labels[term.topology_key]
                m[v] = m.get(v, 0) + weight * mult

        for t, w in terms.preferred_affinity:
            process(t, w, existing, 1)
        for t, w in terms.preferred_anti_affinity:
            process(t, w, existing, -1)
        et = pod_terms(existing)
        if self.hard_pod_affinity_weight > 0:
            for t in et.required_affinity:
                process(t, self.hard_pod_affinity_weight, pod, 1)
        for t, w in et.preferred_affinity:
            process(t, w, pod, 1)
        for t, w in et.preferred_anti_affinity:
            process(t, w, pod, -1)

    def pre_score(self, state, pi, nodes) -> Status:
        pod = pi.pod
        terms = pod_terms(pod)
        has_constraints = bool(terms.preferred_affinity or terms.preferred_anti_affinity)
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status.new(Code.Skip)
        if not has_constraints and not self._affinity_nodes(nodes):
            return Status.new(Code.Skip)
        ns_labels = self._ns_labels_fn()
        topo: dict[str, dict[str, int]] = {}
        touched = False
        for ni in (self._all_nodes(nodes) if has_constraints else self._affinity_nodes(nodes)):
            labels = ni.node.metadata.labels
            node_topo: dict[str, dict[str, int]] = {}
            if not labels:
                continue
            for p in ni.pods.values():
                existing = p.pod
                if not has_constraints:       # only pods with affinity (PodsWithAffinity)
                    a = existing.spec.affinity
                    if a is None or (a.pod_affinity is None and a.pod_anti_affinity is None):
                        continue
                self._process_existing_pod(terms, existing, labels, pod, ns_labels, node_topo)
            if node_topo:
                touched = True
                for k, vals in node_topo.items():
                    m = topo.setdefault(k, {})
                    for v, n in vals.items():
                        m[v] = m.get(v, 0) + n
        if not touched:
            return Status.new(Code.Skip)
        state[PRE_SCORE_KEY] = PreScoreState(topo)
        return Status()

    def score(self, state, pi, ni) -> int:
        s: PreScoreState = state[PRE_SCORE_KEY]
        labels = ni.node.metadata.labels
        return sum(vals.get(labels[k], 0) for k, vals in s.topology_score.items() if k in labels)

    def normalize(self, state, pi, scores: dict[str, int]) -> dict[str, int]:
        s: Optional[PreScoreState] = state.get(PRE_SCORE_KEY)
        if s is None or not s.topology_score or not scores:
            return dict(scores)
        lo, hi = min(scores.values()), max(scores.values())
        diff = hi - lo
        return {n: int(float(MAX_NODE_SCORE) * (float(v - lo) / float(diff))) if diff > 0 else 0
                for n, v in scores.items()}


def new(args=None, handle=None) -> InterPodAffinity:
    """args: InterPodAffinityArgs as a dict (``hardPodAffinityWeight`` default 1,
    ``ignorePreferredTermsOfExistingPods`` default false)."""
    args = args or {}
    return InterPodAffinity(handle, int(field_of(args, "hardPodAffinityWeight", DEFAULT_HARD_POD_AFFINITY_WEIGHT)),
                            bool(field_of(args, "ignorePreferredTermsOfExistingPods", False)))
