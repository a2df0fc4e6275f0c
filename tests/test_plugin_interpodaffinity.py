"""InterPodAffinity: required (anti-)affinity in PreFilter/Filter and preferred terms in
PreScore/Score/NormalizeScore, table-driven.

The cluster is 4 nodes in 2 zones (n1, n2 in zone a; n3, n4 in zone b). Expected values are computed
by hand from upstream's rules (filtering.go, scoring.go); the arithmetic is in each row's comment.
"""
from __future__ import annotations

import pytest

from gpusim.api.core_v1 import Affinity, Container, Namespace, Node, NodeSpec, NodeStatus, Pod, PodSpec
from gpusim.api.meta import ObjectMeta
from gpusim.scheduler.framework import Code, CycleState, NodeInfo, PodInfo
from gpusim.scheduler.plugins import interpodaffinity
from gpusim.scheduler.plugins.interpodaffinity import (ERR_REASON_AFFINITY_RULES_NOT_MATCH,
                                                       ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
                                                       ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
                                                       InterPodAffinity)

HOST, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"
ZONES = {"n1": "a", "n2": "a", "n3": "b", "n4": "b"}
OK, U, UU = Code.Success, Code.Unschedulable, Code.UnschedulableAndUnresolvable
AFF = (UU, [ERR_REASON_AFFINITY_RULES_NOT_MATCH])
ANTI = (U, [ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH])
EXISTING = (U, [ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH])
PASS = (OK, [])
DB, WEB = {"app": "db"}, {"app": "web"}


class API:
    def __init__(self, namespaces=()):
        self.ns = {n.metadata.name: n for n in namespaces}

    def get(self, kind, namespace, name):
        return self.ns.get(name) if kind == "Namespace" else None


class Handle:
    def __init__(self, nodes, namespaces=()):
        self.nodes = nodes
        self.api = API(namespaces)

    def node_infos(self):
        return list(self.nodes)


def term(key, labels=None, selector=None, **extra):
    t = {"topologyKey": key, "labelSelector": selector if selector is not None else {"matchLabels": labels}}
    t.update(extra)
    return t


def pod(name, labels=None, ns="default", aff=None, anti=None, pref_aff=None, pref_anti=None):
    """aff/anti: required terms; pref_*: (weight, term) pairs."""
    pa = paa = None
    if aff or pref_aff:
        pa = {"requiredDuringSchedulingIgnoredDuringExecution": list(aff or []),
              "preferredDuringSchedulingIgnoredDuringExecution": [
                  {"weight": w, "podAffinityTerm": t} for w, t in pref_aff or []]}
    if anti or pref_anti:
        paa = {"requiredDuringSchedulingIgnoredDuringExecution": list(anti or []),
               "preferredDuringSchedulingIgnoredDuringExecution": [
                   {"weight": w, "podAffinityTerm": t} for w, t in pref_anti or []]}
    affinity = Affinity(pod_affinity=pa, pod_anti_affinity=paa) if (pa or paa) else None
    return Pod(metadata=ObjectMeta(name=name, namespace=ns, uid=f"uid-{name}", labels=dict(labels or {})),
               spec=PodSpec(containers=[Container(name="c")], affinity=affinity))


def node(name, zone=None):
    labels = {HOST: name, **({ZONE: zone} if zone else {})}
    return NodeInfo(Node(metadata=ObjectMeta(name=name, labels=labels), spec=NodeSpec(),
                         status=NodeStatus(allocatable={"cpu": "64", "memory": "512Gi", "pods": "110"})))


def cluster(existing, extra_nodes=()):
    nodes = [node(n, z) for n, z in ZONES.items()] + list(extra_nodes)
    by_name = {ni.name: ni for ni in nodes}
    i = 0
    for n, pods in existing.items():
        for p in pods:
            i += 1
            by_name[n].add_pod(PodInfo(pod(f"e{i}", p) if isinstance(p, dict) else p))
    return nodes


def run_filter(incoming, nodes, namespaces=()):
    pl = InterPodAffinity(Handle(nodes, namespaces))
    state, pi = CycleState(), PodInfo(incoming)
    _, st = pl.pre_filter(state, pi, nodes)
    if st.code == Code.Skip:
        return pl, state, pi, {ni.name: PASS for ni in nodes}
    return pl, state, pi, {ni.name: (s.code, s.reasons) for ni in nodes for s in [pl.filter(state, pi, ni)]}


ALL_PASS = {"n1": PASS, "n2": PASS, "n3": PASS, "n4": PASS}
FILTER_CASES = [
    # db runs on n3 (zone b): zone affinity → only zone b
    ("affinity zone", pod("p", WEB, aff=[term(ZONE, DB)]), {"n3": [DB]}, (),
     {"n1": AFF, "n2": AFF, "n3": PASS, "n4": PASS}),
    # hostname affinity → only n3
    ("affinity hostname", pod("p", WEB, aff=[term(HOST, DB)]), {"n3": [DB]}, (),
     {"n1": AFF, "n2": AFF, "n3": PASS, "n4": AFF}),
    # no db anywhere, the pod is not db itself → nowhere
    ("affinity unmatched", pod("p", WEB, aff=[term(ZONE, DB)]), {"n3": [WEB]}, (),
     {"n1": AFF, "n2": AFF, "n3": AFF, "n4": AFF}),
    # no db anywhere but the pod is db: the first pod of a self-affine group may go anywhere
    ("self affinity first pod", pod("p", DB, aff=[term(ZONE, DB)]), {"n3": [WEB]}, (), ALL_PASS),
    # ... once a db pod exists (zone b), the rest must follow it
    ("self affinity follows", pod("p", DB, aff=[term(ZONE, DB)]), {"n3": [DB]}, (),
     {"n1": AFF, "n2": AFF, "n3": PASS, "n4": PASS}),
    # ... and a node without the topology key never passes, even for the first pod
    ("self affinity missing key", pod("p", DB, aff=[term(ZONE, DB)]), {}, (node("n5"),),
     {**ALL_PASS, "n5": AFF}),
    # two terms: a pod must match both (db and tier=x) to count: n1 db only, n3 db+tier → zone b
    ("affinity all terms", pod("p", WEB, aff=[term(ZONE, DB), term(ZONE, {"tier": "x"})]),
     {"n1": [DB], "n3": [{"app": "db", "tier": "x"}]}, (),
     {"n1": AFF, "n2": AFF, "n3": PASS, "n4": PASS}),
    # anti-affinity hostname: web on n1 → n1 rejected (Unschedulable, preemption may help)
    ("anti hostname", pod("p", WEB, anti=[term(HOST, WEB)]), {"n1": [WEB]}, (),
     {"n1": ANTI, "n2": PASS, "n3": PASS, "n4": PASS}),
    # anti-affinity zone: web on n1 → whole zone a rejected
    ("anti zone", pod("p", WEB, anti=[term(ZONE, WEB)]), {"n1": [WEB]}, (),
     {"n1": ANTI, "n2": ANTI, "n3": PASS, "n4": PASS}),
    # an existing pod on n3 refuses web pods in its zone
    ("existing anti", pod("p", WEB), {"n3": [pod("guard", DB, anti=[term(ZONE, WEB)])]}, (),
     {"n1": PASS, "n2": PASS, "n3": EXISTING, "n4": EXISTING}),
    # ... which does not concern a pod it does not select
    ("existing anti other pod", pod("p", {"app": "batch"}), {"n3": [pod("guard", DB, anti=[term(ZONE, WEB)])]},
     (), ALL_PASS),
    # filter order: affinity is checked before anti-affinity (n3 has web and db)
    ("affinity before anti", pod("p", WEB, aff=[term(HOST, DB)], anti=[term(HOST, WEB)]),
     {"n1": [WEB], "n3": [DB, WEB]}, (),
     {"n1": AFF, "n2": AFF, "n3": ANTI, "n4": AFF}),
    # terms select the owning pod's namespace by default: a db pod in "other" does not count
    ("namespace default", pod("p", WEB, aff=[term(ZONE, DB)]), {"n3": [pod("x", DB, ns="other")]}, (),
     {"n1": AFF, "n2": AFF, "n3": AFF, "n4": AFF}),
    ("namespaces list", pod("p", WEB, aff=[term(ZONE, DB, namespaces=["other"])]),
     {"n3": [pod("x", DB, ns="other")]}, (), {"n1": AFF, "n2": AFF, "n3": PASS, "n4": PASS}),
    # namespaceSelector {} selects every namespace
    ("namespaceSelector all", pod("p", WEB, aff=[term(ZONE, DB, namespaceSelector={})]),
     {"n3": [pod("x", DB, ns="other")]}, (), {"n1": AFF, "n2": AFF, "n3": PASS, "n4": PASS}),
    # namespaceSelector by the automatic kubernetes.io/metadata.name label
    ("namespaceSelector name", pod("p", WEB, anti=[term(ZONE, DB, namespaceSelector={
        "matchLabels": {"kubernetes.io/metadata.name": "other"}})]),
     {"n1": [pod("x", DB, ns="other")], "n3": [pod("y", DB, ns="third")]}, (),
     {"n1": ANTI, "n2": ANTI, "n3": PASS, "n4": PASS}),
    # matchExpressions NotIn: anti-affinity to any app except web → n1 (db) rejected, n3 (web) not
    ("matchExpressions", pod("p", WEB, anti=[term(HOST, selector={"matchExpressions": [
        {"key": "app", "operator": "NotIn", "values": ["web"]}]})]),
     {"n1": [DB], "n3": [WEB]}, (), {"n1": ANTI, "n2": PASS, "n3": PASS, "n4": PASS}),
    # mismatchLabelKeys [tenant]: anti-affinity only to pods of *other* tenants (exclusive nodes)
    ("mismatchLabelKeys", pod("p", {"tenant": "t1"}, anti=[term(HOST, selector={"matchExpressions": [
        {"key": "tenant", "operator": "Exists"}]}, mismatchLabelKeys=["tenant"])]),
     {"n1": [{"tenant": "t1"}], "n2": [{"tenant": "t2"}]}, (),
     {"n1": PASS, "n2": ANTI, "n3": PASS, "n4": PASS}),
    # matchLabelKeys [job]: affinity to the pods of the same job only
    ("matchLabelKeys", pod("p", {"job": "j2"}, aff=[term(HOST, selector={"matchExpressions": [
        {"key": "job", "operator": "Exists"}]}, matchLabelKeys=["job"])]),
     {"n1": [{"job": "j1"}], "n4": [{"job": "j2"}]}, (),
     {"n1": AFF, "n2": AFF, "n3": AFF, "n4": PASS}),
]


@pytest.mark.parametrize("incoming,existing,extra,want", [c[1:] for c in FILTER_CASES],
                         ids=[c[0] for c in FILTER_CASES])
def test_filter(incoming, existing, extra, want):
    _, _, _, got = run_filter(incoming, cluster(existing, extra))
    assert got == want


def test_namespace_selector_uses_namespace_object_labels():
    nodes = cluster({"n1": [pod("x", DB, ns="ml")], "n3": [pod("y", DB, ns="web")]})
    ns = [Namespace(metadata=ObjectMeta(name="ml", labels={"team": "ml"})),
          Namespace(metadata=ObjectMeta(name="web", labels={"team": "web"}))]
    incoming = pod("p", WEB, aff=[term(ZONE, DB, namespaceSelector={"matchLabels": {"team": "ml"}})])
    _, _, _, got = run_filter(incoming, nodes, ns)
    assert got == {"n1": PASS, "n2": PASS, "n3": AFF, "n4": AFF}


def test_pre_filter_skips_when_nothing_to_check():
    nodes = cluster({"n1": [WEB], "n3": [pod("guard", DB, anti=[term(ZONE, {"app": "other"})])]})
    pl = InterPodAffinity(Handle(nodes))
    _, st = pl.pre_filter(CycleState(), PodInfo(pod("p", WEB)), nodes)
    assert st.code == Code.Skip
    # preferred-only terms are not checked in Filter either
    _, st = pl.pre_filter(CycleState(), PodInfo(pod("p", WEB, pref_aff=[(5, term(ZONE, DB))])), nodes)
    assert st.code == Code.Skip


def test_filter_reconciles_node_whose_pods_changed_during_preemption():
    # web on n1 blocks a hostname-anti-affine web pod; a preemption dry run removing it from n1's
    # NodeInfo re-runs Filter with the same CycleState → passes (RemovePod), back again → fails.
    nodes = cluster({"n1": [WEB]})
    pl, state, pi, got = run_filter(pod("p", WEB, anti=[term(HOST, WEB)]), nodes)
    assert got["n1"] == ANTI
    n1 = nodes[0]
    victim = next(iter(n1.pods.values()))
    n1.remove_pod(victim.key)
    assert pl.filter(state, pi, n1).is_success()
    n1.add_pod(victim)
    assert (pl.filter(state, pi, n1).code, pl.filter(state, pi, n1).reasons) == ANTI


def test_filter_reconciles_existing_anti_affinity_and_self_affinity():
    # An existing guard on n3 rejects web in zone b; removing it from n3 (dry run) lifts that.
    nodes = cluster({"n3": [pod("guard", DB, anti=[term(ZONE, WEB)])]})
    pl, state, pi, got = run_filter(pod("p", WEB), nodes)
    assert got["n3"] == EXISTING
    n3 = nodes[2]
    n3.remove_pod("uid-guard")
    assert pl.filter(state, pi, n3).is_success()
    # Self affinity: the only db pod is on n1; removing it makes the pod "first" again.
    nodes = cluster({"n1": [DB]})
    pl, state, pi, got = run_filter(pod("p", DB, aff=[term(HOST, DB)]), nodes)
    assert got == {"n1": PASS, "n2": AFF, "n3": AFF, "n4": AFF}
    n1 = nodes[0]
    n1.remove_pod(next(iter(n1.pods)))
    assert pl.filter(state, pi, n1).is_success()


# --- scoring ---------------------------------------------------------------------------------------------

SCORE_CASES = [
    # preferred affinity db/zone weight 10, preferred anti web/hostname weight 4.
    # Existing: n1 {db, web}, n3 {web}. zone a +10; host n1 -4; host n3 -4.
    # raw n1 6, n2 10, n3 -4, n4 0; min -4, max 10 → int(100·(s+4)/14): 71, 100, 0, 28
    ("preferred terms", pod("p", WEB, pref_aff=[(10, term(ZONE, DB))], pref_anti=[(4, term(HOST, WEB))]),
     {"n1": [DB, WEB], "n3": [WEB]}, 1,
     {"n1": 6, "n2": 10, "n3": -4, "n4": 0}, {"n1": 71, "n2": 100, "n3": 0, "n4": 28}),
    # existing pod's required affinity to web (hostname) on n3, hardPodAffinityWeight 1 → n3 +1
    ("existing required affinity", pod("p", WEB), {"n3": [pod("x", DB, aff=[term(HOST, WEB)])]}, 1,
     {"n1": 0, "n2": 0, "n3": 1, "n4": 0}, {"n1": 0, "n2": 0, "n3": 100, "n4": 0}),
    # ... weighted by hardPodAffinityWeight 5 (raw 5), same normalized result
    ("hard weight 5", pod("p", WEB), {"n3": [pod("x", DB, aff=[term(HOST, WEB)])]}, 5,
     {"n1": 0, "n2": 0, "n3": 5, "n4": 0}, {"n1": 0, "n2": 0, "n3": 100, "n4": 0}),
    # existing pod's preferred anti-affinity to web (zone, weight 20) on n1 → zone a -20
    ("existing preferred anti", pod("p", WEB),
     {"n1": [pod("x", DB, pref_anti=[(20, term(ZONE, WEB))])]}, 1,
     {"n1": -20, "n2": -20, "n3": 0, "n4": 0}, {"n1": 0, "n2": 0, "n3": 100, "n4": 100}),
    # existing pod's preferred affinity to web (zone, weight 7) on n4 → zone b +7 → 100 there
    ("existing preferred affinity", pod("p", WEB),
     {"n4": [pod("x", DB, pref_aff=[(7, term(ZONE, WEB))])]}, 1,
     {"n1": 0, "n2": 0, "n3": 7, "n4": 7}, {"n1": 0, "n2": 0, "n3": 100, "n4": 100}),
    # both zones hold a db pod: zone a +10, zone b +10 → all raw 10, max = min → all 0
    ("flat", pod("p", WEB, pref_aff=[(10, term(ZONE, DB))]), {"n1": [DB], "n3": [DB]}, 1,
     {"n1": 10, "n2": 10, "n3": 10, "n4": 10}, {"n1": 0, "n2": 0, "n3": 0, "n4": 0}),
    # three db pods in zone b (weight 3 each → 9), one in zone a (3), hostname anti web weight 50 on n4:
    # raw n1 3, n2 3, n3 9, n4 9-50 = -41; min -41, max 9 → int(100·(s+41)/50): 88, 88, 100, 0
    ("mixed", pod("p", WEB, pref_aff=[(3, term(ZONE, DB))], pref_anti=[(50, term(HOST, WEB))]),
     {"n1": [DB], "n3": [DB, DB], "n4": [DB, WEB]}, 1,
     {"n1": 3, "n2": 3, "n3": 9, "n4": -41}, {"n1": 88, "n2": 88, "n3": 100, "n4": 0}),
]


@pytest.mark.parametrize("incoming,existing,hard,want_raw,want_norm", [c[1:] for c in SCORE_CASES],
                         ids=[c[0] for c in SCORE_CASES])
def test_score(incoming, existing, hard, want_raw, want_norm):
    nodes = cluster(existing)
    pl = InterPodAffinity(Handle(nodes), hard_pod_affinity_weight=hard)
    state, pi = CycleState(), PodInfo(incoming)
    assert pl.pre_score(state, pi, nodes).is_success()
    raw = {ni.name: pl.score(state, pi, ni) for ni in nodes}
    assert raw == want_raw
    norm = pl.normalize(state, pi, raw)
    assert norm == want_norm
    assert all(0 <= v <= 100 for v in norm.values())


def test_pre_score_skips_when_nothing_contributes():
    nodes = cluster({"n1": [DB], "n3": [WEB]})
    pl = InterPodAffinity(Handle(nodes))
    assert pl.pre_score(CycleState(), PodInfo(pod("p", WEB)), nodes).code == Code.Skip
    # preferred term that matches no pod: nothing accumulated → Skip
    p = pod("p", WEB, pref_aff=[(10, term(ZONE, {"app": "none"}))])
    assert pl.pre_score(CycleState(), PodInfo(p), nodes).code == Code.Skip
    # hardPodAffinityWeight 0 ignores existing pods' required affinity
    nodes = cluster({"n3": [pod("x", DB, aff=[term(HOST, WEB)])]})
    assert InterPodAffinity(Handle(nodes), 0).pre_score(CycleState(), PodInfo(pod("p", WEB)), nodes).code == Code.Skip
    # ignorePreferredTermsOfExistingPods skips pods without preferred terms
    pl = interpodaffinity.new({"ignorePreferredTermsOfExistingPods": True}, Handle(nodes))
    assert pl.pre_score(CycleState(), PodInfo(pod("p", WEB)), nodes).code == Code.Skip


def test_scores_only_feasible_nodes_but_counts_pods_everywhere():
    # db on n2 (infeasible) still attracts the pod to zone a: n1 raw 10, n3 raw 0 → 100, 0
    nodes = cluster({"n2": [DB]})
    feasible = [nodes[0], nodes[2]]
    pl = InterPodAffinity(Handle(nodes))
    state, pi = CycleState(), PodInfo(pod("p", WEB, pref_aff=[(10, term(ZONE, DB))]))
    assert pl.pre_score(state, pi, feasible).is_success()
    raw = {ni.name: pl.score(state, pi, ni) for ni in feasible}
    assert raw == {"n1": 10, "n3": 0}
    assert pl.normalize(state, pi, raw) == {"n1": 100, "n3": 0}


def test_factory_and_events():
    pl = interpodaffinity.new(None, None)
    assert pl.name == "InterPodAffinity" and pl.hard_pod_affinity_weight == 1
    assert pl.events == {"Pod/Add", "Pod/Delete", "Node/Add", "Node/UpdateNodeLabel"}
    assert interpodaffinity.new({"hardPodAffinityWeight": 3}).hard_pod_affinity_weight == 3
