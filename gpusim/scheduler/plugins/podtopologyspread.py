"""PodTopologySpread (kubernetes ``pkg/scheduler/framework/plugins/podtopologyspread``, v1.36:
``plugin.go``, ``common.go``, ``filtering.go``, ``scoring.go``): weight 2 in the default profile.

PreFilter/Filter (``whenUnsatisfiable: DoNotSchedule``)
  For every hard constraint, count the pods matching its ``labelSelector`` (same namespace as the
  incoming pod, terminating pods skipped, an empty selector ``{}`` counts nothing) per topology
  domain over the *eligible* nodes: nodes carrying every constraint's ``topologyKey`` that pass the
  node inclusion policies (``nodeAffinityPolicy`` default Honor = the pod's nodeSelector/required
  node affinity; ``nodeTaintsPolicy`` default Ignore, Honor = no untolerated NoSchedule/NoExecute
  taint). Filter on node N in domain d: ``count(d) + selfMatch − globalMin ≤ maxSkew``, where
  selfMatch is 1 if the incoming pod matches the selector and globalMin is the smallest count over
  the eligible domains, or 0 when there are fewer eligible domains than ``minDomains`` (default 1).
  Failure → Unschedulable ``node(s) didn't match pod topology spread constraints``; a node without
  a constraint's topologyKey → UnschedulableAndUnresolvable ``... (missing required label)``.
  ``matchLabelKeys`` adds ``key=value`` of the incoming pod's labels to the selector.

PreScore/Score/NormalizeScore (``whenUnsatisfiable: ScheduleAnyway``)
  raw(N) = round(Σ_constraints cnt × log(size + 2) + (maxSkew − 1)), where cnt is the number of
  matching pods in N's domain (counted on all nodes, for hostname on N itself) and size is the number
  of domains among the feasible nodes (for hostname: the number of feasible nodes with all keys).
  Feasible nodes missing a topologyKey are "ignored" and get 0. Normalize: with min/max over the
  non-ignored raw scores, ``100 × (max + min − raw) / max`` (100 for all when max is 0), so fewer
  matching pods → higher score.

System default constraints (``defaultingType: System``: hostname maxSkew 3, zone maxSkew 5, both
ScheduleAnyway) apply upstream only to pods selected by a Service, ReplicationController, ReplicaSet
or StatefulSet (``helper.DefaultSelector``); gpusim has none of those objects, so the selector is
always empty and the defaults never apply — a pod without ``topologySpreadConstraints`` is skipped.

Preemption/nominated pods: upstream keeps PreFilter state consistent through the AddPod/RemovePod
PreFilter extensions. gpusim's preemption removes victims from the NodeInfo itself, so Filter
reconciles the node it evaluates: that node's stored per-node counts are replaced by a recount of its
live pods before the skew is computed (same result as RemovePod/AddPod on that node, with the exact
global minimum instead of upstream's two critical paths).

The constraint/selector helpers below accept the raw YAML dicts (camelCase or snake_case keys) that
``PodSpec.topology_spread_constraints`` and ``Affinity.pod_affinity`` currently hold.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

from ..framework import MAX_NODE_SCORE, Code, Status
from .helper import find_untolerated
from ...componenthelpers.nodeaffinity import node_matches_pod

NAME = "PodTopologySpread"
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
EVENTS = {"Pod/Add", "Pod/Delete", "Node/Add", "Node/UpdateNodeLabel"}

LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE, SCHEDULE_ANYWAY = "DoNotSchedule", "ScheduleAnyway"
HONOR, IGNORE = "Honor", "Ignore"
MAX_INT32 = 2**31 - 1
PRE_FILTER_KEY = "PreFilter" + NAME
PRE_SCORE_KEY = "PreScore" + NAME

# plugin.go systemDefaultConstraints (never effective in gpusim, see the module docstring)
SYSTEM_DEFAULT_CONSTRAINTS = [
    {"topologyKey": LABEL_HOSTNAME, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 3},
    {"topologyKey": LABEL_TOPOLOGY_ZONE, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 5},
]


# --- raw API helpers (shared with interpodaffinity) -----------------------------------------------------

def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name)


def field_of(obj: Any, camel: str, default: Any = None) -> Any:
    """Read ``camel`` from a raw dict (camelCase or snake_case key) or a dataclass attribute."""
    if obj is None:
        return default
    if isinstance(obj, dict):
        v = obj.get(camel)
        if v is None:
            v = obj.get(_snake(camel))
        return default if v is None else v
    v = getattr(obj, _snake(camel), None)
    return default if v is None else v


class Selector:
    """labels.Selector from metav1.LabelSelectorAsSelector: nil → Nothing, {} → Everything."""

    __slots__ = ("reqs", "nothing")

    def __init__(self, reqs: Optional[list[tuple[str, str, tuple[str, ...]]]] = None, nothing: bool = False):
        self.reqs = list(reqs or [])
        self.nothing = nothing

    def empty(self) -> bool:
        return not self.nothing and not self.reqs

    def add(self, key: str, op: str, values: tuple[str, ...]) -> "Selector":
        if self.nothing:      # mergeLabelSetWithSelector: Nothing has no requirements → unchanged
            return self
        return Selector(self.reqs + [(key, op, values)])

    def matches(self, labels: dict[str, str]) -> bool:
        if self.nothing:
            return False
        for key, op, values in self.reqs:
            has = key in labels
            if op == "In":
                ok = has and labels[key] in values
            elif op == "NotIn":
                ok = not has or labels[key] not in values
            elif op == "Exists":
                ok = has
            elif op == "DoesNotExist":
                ok = not has
            else:                 # LabelSelectorAsSelector rejects unknown operators; match nothing
                ok = False
            if not ok:
                return False
        return True


def parse_selector(raw: Any) -> Selector:
    if raw is None:
        return Selector(nothing=True)
    reqs = [(k, "In", (str(v),)) for k, v in sorted((field_of(raw, "matchLabels") or {}).items())]
    for e in field_of(raw, "matchExpressions") or []:
        reqs.append((field_of(e, "key", ""), field_of(e, "operator", ""),
                     tuple(str(v) for v in field_of(e, "values") or ())))
    return Selector(reqs)


def pod_labels(pod) -> dict[str, str]:
    return pod.metadata.labels or {}


# --- constraints -----------------------------------------------------------------------------------------

@dataclass
class Constraint:
    """common.go topologySpreadConstraint."""

    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE

    def match_node_inclusion_policies(self, pod, node) -> bool:
        if self.node_affinity_policy == HONOR and not node_matches_pod(pod, node):
            return False
        if self.node_taints_policy == HONOR and find_untolerated(
                node.spec.taints, pod.spec.tolerations, ("NoSchedule", "NoExecute")) is not None:
            return False
        return True


def filter_constraints(raw_constraints, pod_lbls: dict[str, str], action: str) -> list[Constraint]:
    """common.go filterTopologySpreadConstraints (MatchLabelKeys and NodeInclusionPolicy gates on)."""
    out = []
    for c in raw_constraints or []:
        if field_of(c, "whenUnsatisfiable", "") != action:
            continue
        sel = parse_selector(field_of(c, "labelSelector"))
        for key in field_of(c, "matchLabelKeys") or []:
            if key in pod_lbls:
                sel = sel.add(key, "In", (pod_lbls[key],))
        out.append(Constraint(
            max_skew=int(field_of(c, "maxSkew", 0)),
            topology_key=field_of(c, "topologyKey", ""),
            selector=sel,
            min_domains=int(field_of(c, "minDomains", 1)),
            node_affinity_policy=field_of(c, "nodeAffinityPolicy", HONOR),
            node_taints_policy=field_of(c, "nodeTaintsPolicy", IGNORE)))
    return out


def node_labels_match_spread_constraints(labels: dict[str, str], constraints: list[Constraint]) -> bool:
    return all(c.topology_key in labels for c in constraints)


def count_pods_match_selector(pod_infos, selector: Selector, namespace: str) -> int:
    """common.go countPodsMatchSelector: empty selector → 0; terminating pods and other namespaces skipped."""
    if selector.empty():
        return 0
    n = 0
    for p in pod_infos:
        pod = p.pod
        if pod.metadata.deletion_timestamp is not None or pod.metadata.namespace != namespace:
            continue
        if selector.matches(pod_labels(pod)):
            n += 1
    return n


# --- state -----------------------------------------------------------------------------------------------

@dataclass
class PreFilterState:
    constraints: list[Constraint] = field(default_factory=list)
    # per constraint: topology value → matching pods (domains of eligible nodes only)
    tp_value_to_match_num: list[dict[str, int]] = field(default_factory=list)
    # node name → {constraint index: count on that node} for eligible (node, constraint) pairs
    per_node: dict[str, dict[int, int]] = field(default_factory=dict)
    # node name → the pod keys the counts were computed from (Filter recounts a node that changed)
    pod_keys: dict[str, frozenset] = field(default_factory=dict)


@dataclass
class PreScoreState:
    constraints: list[Constraint] = field(default_factory=list)
    ignored_nodes: set[str] = field(default_factory=set)
    topology_value_to_pod_counts: list[dict[str, int]] = field(default_factory=list)
    topology_normalizing_weight: list[float] = field(default_factory=list)


def topology_normalizing_weight(size: int) -> float:
    return math.log(size + 2)


def score_for_count(cnt: int, max_skew: int, tp_weight: float) -> float:
    return cnt * tp_weight + (max_skew - 1)


def _go_round(x: float) -> int:
    """math.Round (half away from zero)."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


class PodTopologySpread:
    name = NAME
    events = EVENTS

    def __init__(self, handle=None, defaulting_type: str = "System", default_constraints=None):
        self.handle = handle
        self.defaulting_type = defaulting_type
        self.default_constraints = (SYSTEM_DEFAULT_CONSTRAINTS if defaulting_type == "System"
                                    else list(default_constraints or []))
        self.system_defaulted = defaulting_type == "System"

    # helper.DefaultSelector over Services/RCs/ReplicaSets/StatefulSets: gpusim has none → empty.
    def _build_default_constraints(self, pod, action: str) -> list[Constraint]:
        return []

    def _constraints(self, pod, action: str) -> list[Constraint]:
        raw = pod.spec.topology_spread_constraints
        if raw:
            return filter_constraints(raw, pod_labels(pod), action)
        return self._build_default_constraints(pod, action)

    def _all_nodes(self, fallback):
        h = self.handle
        return h.node_infos() if h is not None and hasattr(h, "node_infos") else list(fallback)

    # --- PreFilter / Filter ----------------------------------------------------------------------------
    def _node_counts(self, s: PreFilterState, pod, ni) -> dict[int, int]:
        node = ni.node
        if not node_labels_match_spread_constraints(node.metadata.labels, s.constraints):
            return {}
        return {i: count_pods_match_selector(ni.pods.values(), c.selector, pod.metadata.namespace)
                for i, c in enumerate(s.constraints) if c.match_node_inclusion_policies(pod, node)}

    def cal_pre_filter_state(self, pod, nodes) -> PreFilterState:
        constraints = self._constraints(pod, DO_NOT_SCHEDULE)
        s = PreFilterState(constraints, [{} for _ in constraints])
        if not constraints:
            return s
        for ni in nodes:
            if not node_labels_match_spread_constraints(ni.node.metadata.labels, constraints):
                continue
            counts = self._node_counts(s, pod, ni)
            s.per_node[ni.name] = counts
            s.pod_keys[ni.name] = frozenset(ni.pods)
            for i, n in counts.items():
                v = ni.node.metadata.labels[constraints[i].topology_key]
                s.tp_value_to_match_num[i][v] = s.tp_value_to_match_num[i].get(v, 0) + n
        return s

    def pre_filter(self, state, pi, nodes) -> tuple[Optional[set[str]], Status]:
        s = self.cal_pre_filter_state(pi.pod, nodes)
        state[PRE_FILTER_KEY] = s
        if not s.constraints:
            return None, Status.new(Code.Skip)
        return None, Status()

    def filter(self, state, pi, ni) -> Status:
        s: Optional[PreFilterState] = state.get(PRE_FILTER_KEY)
        if s is None:
            s = self.cal_pre_filter_state(pi.pod, self._all_nodes([ni]))
            state[PRE_FILTER_KEY] = s
        if not s.constraints:
            return Status()
        pod, labels = pi.pod, ni.node.metadata.labels
        stored = s.per_node.get(ni.name)
        if stored is not None and ni.pods.keys() == s.pod_keys.get(ni.name):
            stored = None                 # unchanged since PreFilter: nothing to reconcile
        live = self._node_counts(s, pod, ni) if stored is not None else None
        pl = pod_labels(pod)
        for i, c in enumerate(s.constraints):
            tp_val = labels.get(c.topology_key)
            if tp_val is None:
                return Status.new(Code.UnschedulableAndUnresolvable, ERR_REASON_NODE_LABEL_NOT_MATCH)
            counts = s.tp_value_to_match_num[i]
            if stored is not None and i in stored and live.get(i, 0) != stored[i]:
                counts = dict(counts)     # reconcile this node with its live pods (RemovePod/AddPod)
                counts[tp_val] = counts.get(tp_val, 0) + live.get(i, 0) - stored[i]
            min_match = min(counts.values()) if counts else MAX_INT32
            if len(counts) < c.min_domains:
                min_match = 0
            self_match = 1 if c.selector.matches(pl) else 0
            skew = counts.get(tp_val, 0) + self_match - min_match
            if skew > c.max_skew:
                return Status.new(Code.Unschedulable, ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return Status()

    # --- PreScore / Score / NormalizeScore -------------------------------------------------------------
    def pre_score(self, state, pi, nodes) -> Status:
        pod = pi.pod
        constraints = self._constraints(pod, SCHEDULE_ANYWAY)
        if not constraints:
            return Status.new(Code.Skip)
        all_nodes = self._all_nodes(nodes)
        if not all_nodes:
            return Status.new(Code.Skip)
        require_all = bool(pod.spec.topology_spread_constraints) or not self.system_defaulted
        s = PreScoreState(constraints, set(), [{} for _ in constraints])
        topo_size = [0] * len(constraints)
        for ni in nodes:
            labels = ni.node.metadata.labels
            if require_all and not node_labels_match_spread_constraints(labels, constraints):
                s.ignored_nodes.add(ni.name)
                continue
            for i, c in enumerate(constraints):
                if c.topology_key == LABEL_HOSTNAME:
                    continue
                v = labels.get(c.topology_key, "")
                if v not in s.topology_value_to_pod_counts[i]:
                    s.topology_value_to_pod_counts[i][v] = 0
                    topo_size[i] += 1
        for i, c in enumerate(constraints):
            sz = len(nodes) - len(s.ignored_nodes) if c.topology_key == LABEL_HOSTNAME else topo_size[i]
            s.topology_normalizing_weight.append(topology_normalizing_weight(sz))
        ns = pod.metadata.namespace
        for ni in all_nodes:
            node = ni.node
            labels = node.metadata.labels
            if require_all and not node_labels_match_spread_constraints(labels, constraints):
                continue
            for i, c in enumerate(constraints):
                if not c.match_node_inclusion_policies(pod, node):
                    continue
                v = labels.get(c.topology_key, "")
                counts = s.topology_value_to_pod_counts[i]
                if v not in counts:      # hostname, or a domain without feasible nodes
                    continue
                counts[v] += count_pods_match_selector(ni.pods.values(), c.selector, ns)
        state[PRE_SCORE_KEY] = s
        return Status()

    def score(self, state, pi, ni) -> int:
        s: PreScoreState = state[PRE_SCORE_KEY]
        if ni.name in s.ignored_nodes:
            return 0
        labels = ni.node.metadata.labels
        total = 0.0
        for i, c in enumerate(s.constraints):
            tp_val = labels.get(c.topology_key)
            if tp_val is None:
                continue
            if c.topology_key == LABEL_HOSTNAME:
                cnt = count_pods_match_selector(ni.pods.values(), c.selector, pi.pod.metadata.namespace)
            else:
                cnt = s.topology_value_to_pod_counts[i].get(tp_val, 0)
            total += score_for_count(cnt, c.max_skew, s.topology_normalizing_weight[i])
        return _go_round(total)

    def normalize(self, state, pi, scores: dict[str, int]) -> dict[str, int]:
        s: Optional[PreScoreState] = state.get(PRE_SCORE_KEY)
        if s is None:
            return dict(scores)
        valid = {n: v for n, v in scores.items() if n not in s.ignored_nodes}
        min_score = min(valid.values(), default=0)
        max_score = max([0, *valid.values()])
        out = {}
        for n, v in scores.items():
            if n in s.ignored_nodes:
                out[n] = 0
            elif max_score == 0:
                out[n] = MAX_NODE_SCORE
            else:
                out[n] = MAX_NODE_SCORE * (max_score + min_score - v) // max_score
        return out


def new(args=None, handle=None) -> PodTopologySpread:
    """args: PodTopologySpreadArgs as a dict (``defaultingType`` System|List, ``defaultConstraints``)."""
    args = args or {}
    return PodTopologySpread(handle, field_of(args, "defaultingType", "System"),
                             field_of(args, "defaultConstraints"))
