"""PodTopologySpread: PreFilter/Filter skew checks and PreScore/Score/NormalizeScore, table-driven.

The cluster is 4 nodes in 2 zones (n1, n2 in zone a; n3, n4 in zone b). Expected values are computed
by hand from upstream's formulas (filtering.go, scoring.go); the arithmetic is in each row's comment.
"""
from __future__ import annotations

import math

import pytest

from gpusim.api.core_v1 import Affinity, Container, Node, NodeSpec, NodeStatus, Pod, PodSpec, Taint, Toleration
from gpusim.api.core_v1 import NodeAffinity as NodeAffinitySpec
from gpusim.api.meta import ObjectMeta
from gpusim.scheduler.framework import Code, CycleState, NodeInfo, PodInfo
from gpusim.scheduler.plugins import podtopologyspread
from gpusim.scheduler.plugins.podtopologyspread import (ERR_REASON_CONSTRAINTS_NOT_MATCH,
                                                        ERR_REASON_NODE_LABEL_NOT_MATCH, NAME, PodTopologySpread)

HOST, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"
ZONES = {"n1": "a", "n2": "a", "n3": "b", "n4": "b"}
OK, U, UU = Code.Success, Code.Unschedulable, Code.UnschedulableAndUnresolvable
NOT_MATCH, MISSING = ERR_REASON_CONSTRAINTS_NOT_MATCH, ERR_REASON_NODE_LABEL_NOT_MATCH


class Handle:
    def __init__(self, nodes):
        self.nodes = nodes

    def node_infos(self):
        return list(self.nodes)


def pod(name, labels=None, ns="default", tsc=None, node_selector=None, tolerations=(), terminating=False):
    p = Pod(metadata=ObjectMeta(name=name, namespace=ns, uid=f"uid-{name}", labels=dict(labels or {})),
            spec=PodSpec(containers=[Container(name="c")], topology_spread_constraints=tsc,
                         node_selector=dict(node_selector or {}), tolerations=list(tolerations)))
    if terminating:
        p.metadata.deletion_timestamp = 1.0
    return p


def node(name, zone=None, extra=None, taints=()):
    labels = {HOST: name, **({ZONE: zone} if zone else {}), **(extra or {})}
    return NodeInfo(Node(metadata=ObjectMeta(name=name, labels=labels), spec=NodeSpec(taints=list(taints)),
                         status=NodeStatus(allocatable={"cpu": "64", "memory": "512Gi", "pods": "110"})))


def cluster(existing, extra_nodes=(), node_extra=None, taints=None):
    """existing: node → list of (labels, kwargs) or Pods."""
    nodes = []
    for n, z in ZONES.items():
        ni = node(n, z, (node_extra or {}).get(n), (taints or {}).get(n, ()))
        nodes.append(ni)
    nodes += list(extra_nodes)
    by_name = {ni.name: ni for ni in nodes}
    i = 0
    for n, pods in existing.items():
        for p in pods:
            i += 1
            if isinstance(p, dict):
                p = pod(f"e{i}", p)
            by_name[n].add_pod(PodInfo(p))
    return nodes


def tsc(key, max_skew=1, when="DoNotSchedule", selector=None, **extra):
    c = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when,
         "labelSelector": {"matchLabels": {"app": "foo"}} if selector is None else selector}
    c.update(extra)
    return c


FOO = {"app": "foo"}


def run_filter(incoming, nodes):
    pl = PodTopologySpread(Handle(nodes))
    state = CycleState()
    pi = PodInfo(incoming)
    _, st = pl.pre_filter(state, pi, nodes)
    if st.code == Code.Skip:
        return pl, state, pi, {ni.name: (OK, []) for ni in nodes}
    return pl, state, pi, {ni.name: (s.code, s.reasons) for ni in nodes for s in [pl.filter(state, pi, ni)]}


FILTER_CASES = [
    # zone a = 2, zone b = 1, min 1: a → 2+1-1 = 2 > 1; b → 1+1-1 = 1
    ("zone skew", pod("p", FOO, tsc=[tsc(ZONE)]), {"n1": [FOO, FOO], "n3": [FOO]}, (),
     {"n1": (U, [NOT_MATCH]), "n2": (U, [NOT_MATCH]), "n3": (OK, []), "n4": (OK, [])}),
    # hosts 2,1,1,0, min 0: only n4 (0+1-0 = 1)
    ("hostname skew", pod("p", FOO, tsc=[tsc(HOST)]), {"n1": [FOO, FOO], "n2": [FOO], "n3": [FOO]}, (),
     {"n1": (U, [NOT_MATCH]), "n2": (U, [NOT_MATCH]), "n3": (U, [NOT_MATCH]), "n4": (OK, [])}),
    # maxSkew 2 on hostname: n1 2+1-0 = 3 > 2, n2/n3 1+1 = 2 ok
    ("hostname maxSkew 2", pod("p", FOO, tsc=[tsc(HOST, 2)]), {"n1": [FOO, FOO], "n2": [FOO], "n3": [FOO]}, (),
     {"n1": (U, [NOT_MATCH]), "n2": (OK, []), "n3": (OK, []), "n4": (OK, [])}),
    # incoming pod does not match its selector: selfMatch 0, n1 1+0-0 = 1 ok everywhere
    ("no self match", pod("p", {"app": "bar"}, tsc=[tsc(HOST)]), {"n1": [FOO]}, (),
     {"n1": (OK, []), "n2": (OK, []), "n3": (OK, []), "n4": (OK, [])}),
    # a=1, b=1 → min 1: 1+1-1 = 1 everywhere
    ("balanced zones", pod("p", FOO, tsc=[tsc(ZONE)]), {"n1": [FOO], "n3": [FOO]}, (),
     {"n1": (OK, []), "n2": (OK, []), "n3": (OK, []), "n4": (OK, [])}),
    # minDomains 3 > 2 domains → global min treated as 0: 1+1-0 = 2 > 1 everywhere
    ("minDomains", pod("p", FOO, tsc=[tsc(ZONE, minDomains=3)]), {"n1": [FOO], "n3": [FOO]}, (),
     {"n1": (U, [NOT_MATCH]), "n2": (U, [NOT_MATCH]), "n3": (U, [NOT_MATCH]), "n4": (U, [NOT_MATCH])}),
    # minDomains 2 == 2 domains: min stays 1
    ("minDomains met", pod("p", FOO, tsc=[tsc(ZONE, minDomains=2)]), {"n1": [FOO], "n3": [FOO]}, (),
     {"n1": (OK, []), "n2": (OK, []), "n3": (OK, []), "n4": (OK, [])}),
    # other namespace and terminating pods are not counted: counts all 0 → 0+1-0 = 1
    ("namespace and terminating", pod("p", FOO, tsc=[tsc(HOST)]),
     {"n1": [pod("o1", FOO, ns="other"), pod("t1", FOO, terminating=True)]}, (),
     {"n1": (OK, []), "n2": (OK, []), "n3": (OK, []), "n4": (OK, [])}),
    # empty selector {} counts nothing but self-matches: 0+1-0 = 1 everywhere
    ("empty selector", pod("p", FOO, tsc=[tsc(HOST, selector={})]), {"n1": [FOO, FOO]}, (),
     {"n1": (OK, []), "n2": (OK, []), "n3": (OK, []), "n4": (OK, [])}),
    # matchExpressions In: app in (foo, baz) → n1 counts 2, n2 counts 1, n3 0, n4 0
    ("matchExpressions", pod("p", FOO, tsc=[tsc(HOST, selector={"matchExpressions": [
        {"key": "app", "operator": "In", "values": ["foo", "baz"]}]})]),
     {"n1": [FOO, {"app": "baz"}], "n2": [{"app": "baz"}], "n3": [{"app": "qux"}]}, (),
     {"n1": (U, [NOT_MATCH]), "n2": (U, [NOT_MATCH]), "n3": (OK, []), "n4": (OK, [])}),
    # matchLabelKeys [rev]: only rev=2 pods count → n3 has 1: 1+1-0 = 2 fails, rest 0+1 ok
    ("matchLabelKeys", pod("p", {"app": "foo", "rev": "2"}, tsc=[tsc(HOST, matchLabelKeys=["rev"])]),
     {"n1": [{"app": "foo", "rev": "1"}, {"app": "foo", "rev": "1"}], "n3": [{"app": "foo", "rev": "2"}]}, (),
     {"n1": (OK, []), "n2": (OK, []), "n3": (U, [NOT_MATCH]), "n4": (OK, [])}),
    # a node without the zone label: Unresolvable (missing label), and it is not a domain
    ("missing label", pod("p", FOO, tsc=[tsc(ZONE)]), {"n1": [FOO], "n3": [FOO]}, (node("n5"),),
     {"n1": (OK, []), "n2": (OK, []), "n3": (OK, []), "n4": (OK, []), "n5": (UU, [MISSING])}),
    # two constraints, the first failing one decides: zone ok (a=1,b=1) but host n1 1+1-0 = 2 > 1
    ("two constraints", pod("p", FOO, tsc=[tsc(ZONE), tsc(HOST)]), {"n1": [FOO], "n3": [FOO]}, (),
     {"n1": (U, [NOT_MATCH]), "n2": (OK, []), "n3": (U, [NOT_MATCH]), "n4": (OK, [])}),
    # ScheduleAnyway constraints are not filtered on
    ("soft only", pod("p", FOO, tsc=[tsc(HOST, when="ScheduleAnyway")]), {"n1": [FOO, FOO, FOO]}, (),
     {"n1": (OK, []), "n2": (OK, []), "n3": (OK, []), "n4": (OK, [])}),
]


@pytest.mark.parametrize("incoming,existing,extra,want", [c[1:] for c in FILTER_CASES],
                         ids=[c[0] for c in FILTER_CASES])
def test_filter(incoming, existing, extra, want):
    _, _, _, got = run_filter(incoming, cluster(existing, extra))
    assert got == want


GPU = {"gpu": "a100"}


@pytest.mark.parametrize("policy,want", [
    # Honor: only n1, n3 (gpu=a100) are eligible → a=0 (n1), b=1 (n3): n1 0+1-0 = 1, n3 1+1-0 = 2 > 1
    ("Honor", {"n1": OK, "n3": U}),
    # Ignore: all nodes count → a=3, b=1: n1 3+1-1 = 3 > 1, n3 1+1-1 = 1
    ("Ignore", {"n1": U, "n3": OK}),
])
def test_node_affinity_policy(policy, want):
    nodes = cluster({"n2": [FOO, FOO, FOO], "n3": [FOO]}, node_extra={"n1": GPU, "n3": GPU})
    incoming = pod("p", FOO, tsc=[tsc(ZONE, nodeAffinityPolicy=policy)], node_selector=GPU)
    _, _, _, got = run_filter(incoming, nodes)
    assert {n: got[n][0] for n in ("n1", "n3")} == want


def test_node_affinity_policy_honors_required_node_affinity_terms():
    from gpusim.api.core_v1 import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
    nodes = cluster({"n2": [FOO, FOO, FOO], "n3": [FOO]}, node_extra={"n1": GPU, "n3": GPU})
    incoming = pod("p", FOO, tsc=[tsc(ZONE)])
    incoming.spec.affinity = Affinity(node_affinity=NodeAffinitySpec(NodeSelector([NodeSelectorTerm(
        [NodeSelectorRequirement("gpu", "In", ["a100"])])])))
    _, _, _, got = run_filter(incoming, nodes)
    assert got["n1"][0] == OK and got["n3"][0] == U      # same as nodeSelector (Honor is the default)


@pytest.mark.parametrize("policy,want", [
    # Honor: n2 (tainted) not eligible → a=0 (n1), b=1: n1 ok, n3 1+1-0 = 2 fails
    ("Honor", {"n1": OK, "n3": U}),
    # Ignore (default): a=3, b=1 → n1 fails, n3 ok
    ("Ignore", {"n1": U, "n3": OK}),
])
def test_node_taints_policy(policy, want):
    nodes = cluster({"n2": [FOO, FOO, FOO], "n3": [FOO]}, taints={"n2": [Taint("dedicated", "x", "NoSchedule")]})
    _, _, _, got = run_filter(pod("p", FOO, tsc=[tsc(ZONE, nodeTaintsPolicy=policy)]), nodes)
    assert {n: got[n][0] for n in ("n1", "n3")} == want
    # a toleration makes the tainted node eligible again under Honor
    tol = [Toleration(key="dedicated", operator="Exists")]
    _, _, _, got = run_filter(pod("p", FOO, tsc=[tsc(ZONE, nodeTaintsPolicy=policy)], tolerations=tol), nodes)
    assert {n: got[n][0] for n in ("n1", "n3")} == {"n1": U, "n3": OK}


def test_pre_filter_skips_without_hard_constraints_and_system_defaults_do_not_apply():
    nodes = cluster({"n1": [FOO]})
    pl = PodTopologySpread(Handle(nodes))
    for p in (pod("p", FOO), pod("q", FOO, tsc=[tsc(HOST, when="ScheduleAnyway")])):
        _, st = pl.pre_filter(CycleState(), PodInfo(p), nodes)
        assert st.code == Code.Skip
    assert pl.pre_score(CycleState(), PodInfo(pod("p", FOO)), nodes).code == Code.Skip


def test_filter_reconciles_node_whose_pods_changed_during_preemption():
    # hosts n1=2, others 0 → n1 fails (2+1-0 = 3). Preemption removes both victims from n1's NodeInfo
    # and re-runs Filter with the same CycleState: 0+1-0 = 1 passes; with one back, 1+1-0 = 2 fails.
    nodes = cluster({"n1": [FOO, FOO]})
    pl, state, pi, got = run_filter(pod("p", FOO, tsc=[tsc(HOST)]), nodes)
    assert got["n1"] == (U, [NOT_MATCH])
    n1 = nodes[0]
    victims = list(n1.pods.values())
    for v in victims:
        n1.remove_pod(v.key)
    assert pl.filter(state, pi, n1).is_success()
    n1.add_pod(victims[0])
    assert pl.filter(state, pi, n1).reasons == [NOT_MATCH]


def test_filter_reconciliation_updates_the_global_minimum():
    # zones a=1 (n1), b=2 (n3): n2 passes (1+1-1). A pod added to n2 (as AddPod does for a nominated
    # pod) raises a to 2 and with it the minimum: 2+1-2 = 1 still passes (a stale min 1 would give 2).
    nodes = cluster({"n1": [FOO], "n3": [FOO, FOO]})
    pl, state, pi, got = run_filter(pod("p", FOO, tsc=[tsc(ZONE)]), nodes)
    assert got["n2"][0] == OK and got["n3"][0] == U
    n2 = nodes[1]
    n2.add_pod(PodInfo(pod("nominated", FOO)))
    assert pl.filter(state, pi, n2).is_success()
    n2.add_pod(PodInfo(pod("nominated2", FOO)))            # a=3, min 2: 3+1-2 = 2 > 1
    assert pl.filter(state, pi, n2).code == U


# --- scoring ---------------------------------------------------------------------------------------------

LN4 = math.log(4)
SCORE_CASES = [
    # zone, 2 domains → w = ln 4 = 1.386; a has 3 pods, b has 1; maxSkew 1 adds 0
    # raw a = round(3·1.386) = 4, b = round(1.386) = 1; normalize 100·(4+1-s)/4 → a 25, b 100
    ("zone", [tsc(ZONE, when="ScheduleAnyway")], {"n1": [FOO, FOO], "n2": [FOO], "n3": [FOO]}, (),
     {"n1": 4, "n2": 4, "n3": 1, "n4": 1}, {"n1": 25, "n2": 25, "n3": 100, "n4": 100}),
    # hostname, 4 feasible nodes → w = ln 6 = 1.792; counts 2,1,1,0 → raw 4,2,2,0
    # normalize 100·(4+0-s)/4 → 0, 50, 50, 100
    ("hostname", [tsc(HOST, when="ScheduleAnyway")], {"n1": [FOO, FOO], "n2": [FOO], "n3": [FOO]}, (),
     {"n1": 4, "n2": 2, "n3": 2, "n4": 0}, {"n1": 0, "n2": 50, "n3": 50, "n4": 100}),
    # hostname (maxSkew 1) + zone (maxSkew 2, adds 1): n1 = 2·1.792 + 3·1.386 + 1 = 8.74 → 9,
    # n2 = 1.792 + 5.159 = 6.95 → 7, n3 = 1.792 + 1.386 + 1 = 4.18 → 4, n4 = 2.386 → 2
    # normalize 100·(9+2-s)/9 → 22, 44, 77, 100
    ("hostname and zone", [tsc(HOST, when="ScheduleAnyway"), tsc(ZONE, 2, when="ScheduleAnyway")],
     {"n1": [FOO, FOO], "n2": [FOO], "n3": [FOO]}, (),
     {"n1": 9, "n2": 7, "n3": 4, "n4": 2}, {"n1": 22, "n2": 44, "n3": 77, "n4": 100}),
    # no matching pods, maxSkew 1: every raw is 0 → max 0 → all 100
    ("nothing matches", [tsc(ZONE, when="ScheduleAnyway")], {"n1": [{"app": "bar"}]}, (),
     {"n1": 0, "n2": 0, "n3": 0, "n4": 0}, {"n1": 100, "n2": 100, "n3": 100, "n4": 100}),
    # maxSkew 3 adds 2 to every node: raw a = round(3·1.386 + 2) = 6, b = round(1.386 + 2) = 3
    # normalize 100·(6+3-s)/6 → a 50, b 100
    ("maxSkew softens", [tsc(ZONE, 3, when="ScheduleAnyway")], {"n1": [FOO, FOO], "n2": [FOO], "n3": [FOO]}, (),
     {"n1": 6, "n2": 6, "n3": 3, "n4": 3}, {"n1": 50, "n2": 50, "n3": 100, "n4": 100}),
    # n5 has no zone label: ignored (raw 0, normalized 0) and not a domain; zone w still ln 4
    ("ignored node", [tsc(ZONE, when="ScheduleAnyway")], {"n1": [FOO, FOO], "n2": [FOO], "n3": [FOO]},
     (node("n5"),), {"n1": 4, "n2": 4, "n3": 1, "n4": 1, "n5": 0},
     {"n1": 25, "n2": 25, "n3": 100, "n4": 100, "n5": 0}),
]


@pytest.mark.parametrize("constraints,existing,extra,want_raw,want_norm", [c[1:] for c in SCORE_CASES],
                         ids=[c[0] for c in SCORE_CASES])
def test_score(constraints, existing, extra, want_raw, want_norm):
    nodes = cluster(existing, extra)
    pl = PodTopologySpread(Handle(nodes))
    state, pi = CycleState(), PodInfo(pod("p", FOO, tsc=constraints))
    assert pl.pre_score(state, pi, nodes).is_success()
    raw = {ni.name: pl.score(state, pi, ni) for ni in nodes}
    assert raw == want_raw
    assert pl.normalize(state, pi, raw) == want_norm


def test_score_counts_pods_on_infeasible_nodes_but_domains_come_from_feasible_nodes():
    # Feasible: n1, n3. Zone counts use all nodes (a = n1 1 + n2 2 = 3, b = n4 1), domains from the
    # feasible ones (2 → w ln 4). raw n1 = round(3·1.386) = 4, n3 = round(1.386) = 1.
    # hostname w = ln(2 + 2) as 2 feasible nodes.
    nodes = cluster({"n1": [FOO], "n2": [FOO, FOO], "n4": [FOO]})
    feasible = [nodes[0], nodes[2]]
    pl = PodTopologySpread(Handle(nodes))
    state, pi = CycleState(), PodInfo(pod("p", FOO, tsc=[tsc(ZONE, when="ScheduleAnyway")]))
    assert pl.pre_score(state, pi, feasible).is_success()
    assert {ni.name: pl.score(state, pi, ni) for ni in feasible} == {"n1": 4, "n3": 1}
    assert state[podtopologyspread.PRE_SCORE_KEY].topology_normalizing_weight == [LN4]
    state2, pi2 = CycleState(), PodInfo(pod("p", FOO, tsc=[tsc(HOST, when="ScheduleAnyway")]))
    pl.pre_score(state2, pi2, feasible)
    assert state2[podtopologyspread.PRE_SCORE_KEY].topology_normalizing_weight == [LN4]
    assert {ni.name: pl.score(state2, pi2, ni) for ni in feasible} == {"n1": round(LN4), "n3": 0}


def test_factory_and_events():
    pl = podtopologyspread.new(None, None)
    assert pl.name == NAME == "PodTopologySpread"
    assert pl.events == {"Pod/Add", "Pod/Delete", "Node/Add", "Node/UpdateNodeLabel"}
    assert podtopologyspread.new({"defaultingType": "List"}).system_defaulted is False
