"""Volcano network-topology-aware scheduling: the HyperNode API and its checks, the HyperNode tree the scheduler
builds, the network-topology-aware plugin's scores and gradients, and allocate's hard-topology search.

Tables ported from upstream (volcano-sh/volcano), named by file and test function:
- pkg/webhooks/admission/hypernodes/validate/admit_hypernode_test.go @ 1406749779dc, TestValidateHyperNode;
- pkg/scheduler/plugins/network-topology-aware/network_topology_aware_test.go (the version with normal-pod
  bin packing, stored id 46515413756 in the project's search index): TestNew, TestNetworkTopologyAwareNodeScore_Hard,
  TestBatchNodeOrderFn, TestHyperNodeOrderFn, Test_batchNodeOrderFnForNormalPods;
- docs/user-guide/how_to_use_network_topology_aware_scheduling.md §3.3.1 (the allocate example).
Upstream's tests build the session's HyperNode maps by hand; here the same trees are HyperNode objects with exact
members, and the session adds the virtual cluster top (tier max+1) as upstream's openSession does.
"""
from __future__ import annotations

import pytest

import gpusim as gs
from gpusim.api.errors import InputError
from gpusim.api.meta import LabelSelector, ObjectMeta
from gpusim.api.scheduling_volcano_sh_v1beta1 import NetworkTopologySpec, validate_network_topology
from gpusim.api.topology_volcano_sh_v1alpha1 import (ExactMatch, HyperNode, HyperNodeSpec, MemberSelector,
                                                     MemberSpec, RegexMatch, validate_hyper_node)
from gpusim.api.core_v1 import Node
from gpusim.volcano.api import PENDING, RUNNING, JobInfo, NodeInfo, TaskInfo, add, resource, sub
from gpusim.volcano.conf import parse
from gpusim.volcano.framework import Session
from gpusim.volcano.hypernodes import CLUSTER_TOP, HyperNodes
from gpusim.volcano.plugins import network_topology_aware as nta

FOO = "example.com/foo"
EPS = 1e-1                      # upstream's eps


# --- builders ------------------------------------------------------------------------------------------------

def hn(name: str, tier: int, nodes=(), children=(), tier_name: str = "") -> HyperNode:
    members = [MemberSpec("Node", MemberSelector(exact_match=ExactMatch(n))) for n in nodes]
    members += [MemberSpec("HyperNode", MemberSelector(exact_match=ExactMatch(c))) for c in children]
    return HyperNode(metadata=ObjectMeta(name=name), spec=HyperNodeSpec(tier=tier, tier_name=tier_name,
                                                                          members=members))


def node_obj(name: str) -> Node:
    return Node(metadata=ObjectMeta(name=name))


def res(cpu: float, gb: float, foo: float = 0) -> dict:
    r = resource({"cpu": cpu * 1000, "memory": gb * 1e9})
    if foo:
        r[FOO] = foo
    return r


def tree(s0_children=("s1", "s2")) -> list[HyperNode]:
    """s0 (tier 3) → s1, s2 (tier 2) → s3, s4 / s5, s6 (tier 1) → sN-n1, sN-n2 (upstream's fixture)."""
    return [hn("s0", 3, children=s0_children), hn("s1", 2, children=("s3", "s4")),
            hn("s2", 2, children=("s5", "s6")),
            *(hn(f"s{i}", 1, nodes=(f"s{i}-n1", f"s{i}-n2")) for i in range(3, 7))]


NODE_NAMES = [f"s{i}-n{j}" for i in range(3, 7) for j in (1, 2)]


def session(hyper_nodes, allocatable: dict[str, dict], job: JobInfo, args: dict):
    nodes = {n: NodeInfo(n, node_obj(n), None, dict(a), dict(a)) for n, a in allocatable.items()}
    for t in job.tasks.values():
        if t.node_name:
            sub(nodes[t.node_name].idle, t.resreq)
            add(nodes[t.node_name].used, t.resreq)
    conf = parse("actions: allocate\ntiers:\n- plugins:\n  - name: network-topology-aware\n")
    ssn = Session("1", None, conf, {job.uid: job}, nodes, {}, resource())
    ssn.set_hyper_nodes(HyperNodes(hyper_nodes, [n.node for n in nodes.values()]))
    plugin = nta.new(args)
    plugin.on_session_open(ssn)
    return ssn, plugin


def job(tasks: list[tuple[str, dict, str]], topology=None, min_available=1, minres=None) -> JobInfo:
    j = JobInfo("ns1/pg1", "pg1", "ns1", "q1", None, "Inqueue", min_available, {}, 0, 0.0, minres,
                network_topology=topology)
    for i, (name, req, node) in enumerate(tasks):
        j.add_task(TaskInfo(f"ns1/{name}", name, "ns1", j.uid, None, RUNNING if node else PENDING, dict(req),
                            node_name=node, index=i))
    return j


HARD = NetworkTopologySpec("hard", 0)
UNIFORM = {n: res(2, 4) for n in NODE_NAMES}


# --- TestNew -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("args, weight, res_weights, enable, fading", [
    # build plugin with no arguments
    ({}, 1, {"cpu": 1, "memory": 1}, True, 0.8),
    # build plugin with customized valid arguments (a weight for an unlisted resource is ignored)
    ({"weight": 2, "hypernode.binpack.cpu": 3, "hypernode.binpack.memory": 4,
      "hypernode.binpack.resources": "nvidia.com/gpu, example.com/foo",
      "hypernode.binpack.resources.nvidia.com/gpuxxx": 5, "hypernode.binpack.resources.example.com/foo": 6,
      "hypernode.binpack.normal-pod.enable": False, "hypernode.binpack.normal-pod.fading": 0},
     2, {"cpu": 3, "memory": 4, "nvidia.com/gpu": 1, FOO: 6}, False, 0),
    # build plugin with customized invalid arguments
    ({"weight": -1, "hypernode.binpack.cpu": -1, "hypernode.binpack.memory": -1,
      "hypernode.binpack.resources": "nvidia.com/gpuxxx, example.com/foo",
      "hypernode.binpack.resources.nvidia.com/gpu": -1, "hypernode.binpack.resources.example.com/foo": -1,
      "hypernode.binpack.normal-pod.enable": "a", "hypernode.binpack.normal-pod.fading": -1},
     1, {"cpu": 1, "memory": 1, "nvidia.com/gpuxxx": 1, FOO: 1}, True, 0.8),
])
def test_new(args, weight, res_weights, enable, fading):
    p = nta.new(args)
    assert (p.weight, p.res_weights, p.normal_pod_enable, p.fading) == (weight, res_weights, enable, fading)
    assert p.max_hyper_nodes_for_eviction == 8


# --- TestNetworkTopologyAwareNodeScore_Hard -----------------------------------------------------------------

PENDING_T = [("p4", res(2, 4), "")]
RESCHEDULED = [("p1", res(2, 4), "s3-n1"), ("p2", res(2, 4), "s3-n2"), ("p3", res(2, 4), "")]


@pytest.mark.parametrize("name, hyper_nodes, tasks, allocated, args, expected", [
    ("Tasks in job first scheduler, score all nodes zero", tree(), PENDING_T, "", {"weight": 1},
     {"s3-n1": 0.0, "s4-n1": 0.0, "s5-n1": 0.0}),
    ("Tasks in job rescheduled, score zero when the hyperNode of node has empty LCA hyperNode with "
     "jobAllocatedHyperNode", tree(("s1",)), RESCHEDULED, "s3", {"weight": 1}, {"s5-n1": 0.0, "s6-n1": 0.0}),
    ("Tasks in job rescheduled, score nodes according to node hypernode LCA hyperNode tier", tree(), RESCHEDULED,
     "s3", {"weight": 1}, {"s3-n1": 100.0, "s4-n1": 66.7, "s5-n1": 33.3}),
    ("weight 2 doubles every score", tree(), RESCHEDULED, "s3", {"weight": 2},
     {"s3-n1": 200.0, "s4-n1": 133.3, "s5-n1": 66.7}),
    ("Tasks in job rescheduled, score nodes according to task num when the LCA tiers tie", tree(),
     [("p1", res(2, 4), "s3-n1"), ("p2", res(2, 4), "s3-n2"), ("p3", res(2, 4), "s4-n1"), ("p4", res(2, 4), "")],
     "s1", {"weight": 1}, {"s3-n1": 116.7, "s4-n1": 91.7, "s5-n1": 33.3}),
])
def test_network_topology_aware_node_score_hard(name, hyper_nodes, tasks, allocated, args, expected):
    j = job(tasks, HARD)
    ssn, plugin = session(hyper_nodes, UNIFORM, j, args)
    task = next(t for t in j.tasks.values() if not t.node_name)
    task.job_allocated_hyper_node = allocated
    got = plugin.batch_node_order(task, [ssn.nodes[n] for n in expected])
    assert {n: got.get(n, 0.0) for n in expected} == pytest.approx(expected, abs=EPS)


def test_first_schedule_returns_no_scores():
    """batchNodeOrderFnForNetworkAwarePods: an empty map before the job has a HyperNode."""
    j = job(PENDING_T, HARD)
    ssn, plugin = session(tree(), UNIFORM, j, {})
    assert plugin.batch_node_order(j.tasks["ns1/p4"], list(ssn.nodes.values())) == {}


# --- TestBatchNodeOrderFn (pods without a networkTopology) -----------------------------------------------------

SIZES = {"s3": (2, 4), "s4": (4, 4), "s5": (2, 8), "s6": (4, 8)}
CUSTOM = {"weight": 10, "hypernode.binpack.cpu": 1, "hypernode.binpack.memory": 4,
          "hypernode.binpack.resources": "nvidia.com/gpu, example.com/foo",
          "hypernode.binpack.resources.nvidia.com/gpu": 2, "hypernode.binpack.resources.example.com/foo": 3,
          "hypernode.binpack.normal-pod.enable": True, "hypernode.binpack.normal-pod.fading": 0}


def sized(foo: bool) -> dict:
    return {f"{s}-n{j}": res(c, g, (8 if g == 4 else 16) if foo else 0) for s, (c, g) in SIZES.items() for j in (1, 2)}


@pytest.mark.parametrize("name, foo, running, args, expected", [
    ("score empty nodes for single task with no network topology and no hypernode binpacking", False, [],
     {"hypernode.binpack.normal-pod.enable": False}, {}),
    ("score empty nodes for single task with no network topology and default plugin arguments", False, [], {},
     {"s3-n1": 25.8, "s3-n2": 25.8, "s4-n1": 21.6, "s4-n2": 21.6, "s5-n1": 19.9, "s5-n2": 19.9,
      "s6-n1": 15.7, "s6-n2": 15.7}),
    ("score empty nodes for single task with no network topology and customized plugin arguments", True, [],
     CUSTOM, {"s3-n1": 500.0, "s3-n2": 500.0, "s4-n1": 468.75, "s4-n2": 468.75, "s5-n1": 281.3, "s5-n2": 281.3,
              "s6-n1": 250.0, "s6-n2": 250.0}),
    ("score non-empty nodes for single task with no network topology and customized plugin arguments", True,
     [("p2", "s3-n1"), ("p3", "s3-n2")], CUSTOM,
     {"s3-n1": 0.0, "s3-n2": 0.0, "s4-n1": 468.8, "s4-n2": 468.8, "s5-n1": 281.3, "s5-n2": 281.3,
      "s6-n1": 250.0, "s6-n2": 250.0}),
])
def test_batch_node_order_fn(name, foo, running, args, expected):
    req = res(2, 4, 8 if foo else 0)
    j = job([("p1", req, ""), *((p, req, n) for p, n in running)])
    ssn, plugin = session(tree(), sized(foo), j, args)
    got = plugin.batch_node_order(j.tasks["ns1/p1"], list(ssn.nodes.values()))
    assert set(got) == set(expected)
    assert got == pytest.approx(expected, abs=EPS)


def test_hyper_node_order_fn():
    """TestHyperNodeOrderFn, "score hypernodes for a subjob with customized plugin arguments": the job's two
    pending tasks (4 CPU, 4G, 8 foo each) bin-packed on every HyperNode, the cluster top included."""
    nodes = {f"{s}-n{j}": res(c, g, ((8 if g == 4 else 16) if j == 1 else 0)) for s, (c, g) in SIZES.items()
             for j in (1, 2)}
    j = job([("p1", res(4, 4, 8), ""), ("p2", res(4, 4, 8), "")], HARD, min_available=2)
    ssn, plugin = session(tree(), nodes, j, {**CUSTOM, "hypernode.binpack.cpu": 3})
    got = plugin.hyper_node_order(j, sorted(ssn.hyper_nodes.info))
    assert got == pytest.approx({"s0": 266.7, "s1": 700.0, "s2": 450.0, "s3": 0.0, "s4": 0.0, "s5": 0.0,
                                 "s6": 800.0, CLUSTER_TOP: 266.7}, abs=EPS)


def test_batch_node_order_fn_for_normal_pods_at_scale():
    """Test_batchNodeOrderFnForNormalPods: 2000 nodes, HyperNodes 200 / 40 / 5 / 1 per tier (node i in index
    i mod count), every node half used, fading 1: each node scores 0.515375 before scaling."""
    counts = [200, 40, 5, 1]
    hns = [hn(f"t1-{k}", 1, nodes=[f"node-{i}" for i in range(k, 2000, 200)]) for k in range(200)]
    for tier in (2, 3, 4):
        below, here = counts[tier - 2], counts[tier - 1]
        hns += [hn(f"t{tier}-{k}", tier, children=[f"t{tier - 1}-{c}" for c in range(below) if c % here == k])
                for k in range(here)]
    alloc = {f"node-{i}": {"cpu": 100000, "memory": 8000, FOO: 10} for i in range(2000)}
    j = job([("p1", {"cpu": 50000, "memory": 4000, FOO: 5}, "")])
    ssn, plugin = session(hns, alloc, j, {"weight": 10, "hypernode.binpack.cpu": 5, "hypernode.binpack.memory": 5,
                                          "hypernode.binpack.resources": FOO,
                                          "hypernode.binpack.resources.example.com/foo": 5,
                                          "hypernode.binpack.normal-pod.fading": 1})
    for n in ssn.nodes.values():
        sub(n.idle, {"cpu": 50000, "memory": 4000, FOO: 5})
        add(n.used, {"cpu": 50000, "memory": 4000, FOO: 5})
    plugin.on_session_open(ssn)
    plugin.min_tier, plugin.max_tier = 1, 4          # as upstream's test: the four real tiers only
    scores = plugin._normal(j.tasks["ns1/p1"], list(ssn.nodes.values())[:50])
    assert list(scores.values()) == pytest.approx([0.515375] * 50)


# --- the HyperNode tree (hyper_node_info.go, util.FindHyperNodeForNode, session.go addClusterTopHyperNode) ------

def test_tree_real_nodes_lca_and_cluster_top():
    t = HyperNodes(tree(), [node_obj(n) for n in NODE_NAMES + ["lonely"]])
    assert t.tiers == [1, 2, 3, 4] and t.info[CLUSTER_TOP].tier == 4
    assert t.real_nodes["s1"] == {"s3-n1", "s3-n2", "s4-n1", "s4-n2"}
    assert t.real_nodes[CLUSTER_TOP] == set(NODE_NAMES) | {"lonely"}
    assert t.ancestors("s3") == ["s3", "s1", "s0", CLUSTER_TOP]
    assert [t.lca("s3", "s4"), t.lca("s3", "s6"), t.lca("", "s5"), t.lca("s3", "s3")] == ["s1", "s0", "s5", "s3"]
    assert t.hyper_node_for_node("s5-n2") == "s5"
    assert t.hyper_node_for_node("lonely") == CLUSTER_TOP
    assert t.allocated_hyper_node(["s3-n1", "s3-n2"]) == "s3"
    assert t.allocated_hyper_node(["s3-n1", "s4-n2"]) == "s1"
    assert t.allocated_hyper_node([]) == ""


def test_tree_without_hyper_nodes_has_the_cluster_top_at_tier_1():
    t = HyperNodes([], [node_obj("a"), node_obj("b")])
    assert t.tiers == [1] and t.real_nodes[CLUSTER_TOP] == {"a", "b"}


def test_members_by_regex_and_labels():
    nodes = [Node(metadata=ObjectMeta(name=f"gpu-{i}", labels={"rack": "r1" if i < 2 else "r2"})) for i in range(4)]
    r1 = HyperNode(metadata=ObjectMeta(name="r1"), spec=HyperNodeSpec(tier=1, members=[
        MemberSpec("Node", MemberSelector(label_match=LabelSelector(match_labels={"rack": "r1"})))]))
    r2 = HyperNode(metadata=ObjectMeta(name="r2"), spec=HyperNodeSpec(tier=1, members=[
        MemberSpec("Node", MemberSelector(regex_match=RegexMatch("gpu-[23]")))]))
    t = HyperNodes([r1, r2], nodes)
    assert t.real_nodes["r1"] == {"gpu-0", "gpu-1"} and t.real_nodes["r2"] == {"gpu-2", "gpu-3"}


# --- gradients (hyperNodeGradientFn, getSearchRoot, isEligibleHyperNode) ----------------------------------------

@pytest.mark.parametrize("topology, allocated_on, minres, expected", [
    # first placement, tier ≤ 2, nothing needed: tier 1 first, then tier 2
    (NetworkTopologySpec("hard", 2), [], None, [["s3", "s4", "s5", "s6"], ["s1", "s2"]]),
    # minResources above one leaf (2 nodes × 2 CPU): only the tier-2 HyperNodes qualify
    (NetworkTopologySpec("hard", 3), [], res(6, 4), [["s1", "s2"], ["s0"]]),
    # more than the whole cluster: nothing
    (NetworkTopologySpec("hard", 3), [], res(64, 4), []),
    # tier 4 is the virtual cluster top, searched from itself
    (NetworkTopologySpec("hard", 4), [], res(10, 4), [["s0"], [CLUSTER_TOP]]),
    # partly placed in s3, tier ≤ 2: the search starts at s1 (its highest allowed ancestor), no resource filter
    (NetworkTopologySpec("hard", 2), ["s3-n1"], res(64, 4), [["s3", "s4"], ["s1"]]),
    # partly placed in s3, tier ≤ 1: s3 alone
    (NetworkTopologySpec("hard", 1), ["s3-n1"], None, [["s3"]]),
    # by tier name: at or below the HyperNode named "spine"
    (NetworkTopologySpec("hard", None, "spine"), [], None, [["s5", "s6"], ["s2"]]),
    # soft mode (and hard without a boundary) are not searched: the root alone
    (NetworkTopologySpec("soft"), [], None, [[CLUSTER_TOP]]),
    (NetworkTopologySpec("hard"), [], None, [[CLUSTER_TOP]]),
])
def test_hyper_node_gradient(topology, allocated_on, minres, expected):
    hyper_nodes = tree()
    hyper_nodes[2].spec.tier_name = "spine"                    # s2
    j = job([("p1", res(2, 4), n) for n in allocated_on] + [("p9", res(2, 4), "")], topology, minres=minres)
    ssn, plugin = session(hyper_nodes, UNIFORM, j, {})
    assert plugin.hyper_node_gradient(j) == expected
    assert ssn.hyper_node_gradient(j) == expected


def test_gradient_fails_when_the_allocated_hyper_node_is_above_the_limit():
    j = job([("p1", res(2, 4), "s3-n1"), ("p2", res(2, 4), "s5-n1"), ("p3", res(2, 4), "")],
            NetworkTopologySpec("hard", 2))
    ssn, plugin = session(tree(), UNIFORM, j, {})
    assert j.allocated_hyper_node == "s0"
    assert plugin.hyper_node_gradient(j) is None


# --- TestValidateHyperNode and the CRD's checks --------------------------------------------------------------

def member(**sel) -> HyperNode:
    return HyperNode(metadata=ObjectMeta(name="hypernode-1"),
                     spec=HyperNodeSpec(members=[MemberSpec(sel.pop("type", "Node"), MemberSelector(**sel))]))


@pytest.mark.parametrize("name, obj, errors", [
    ("validate valid hypernode", member(exact_match=ExactMatch("node-1")), []),
    ("validate invalid hypernode with empty exactMatch", member(exact_match=ExactMatch("")),
     [("spec.members[0].selector.exactMatch.name", 'Invalid value: "": member exactMatch name is required')]),
    ("validate invalid hypernode with empty regexMatch", member(regex_match=RegexMatch("")),
     [("spec.members[0].selector.regexMatch.pattern", 'Invalid value: "": member regexMatch pattern is required')]),
    ("validate invalid hypernode with invalid regexMatch", member(regex_match=RegexMatch("a(b")),
     [("spec.members[0].selector.regexMatch.pattern",
       'Invalid value: "a(b": member regexMatch pattern is invalid: missing ), unterminated subpattern at '
       'position 1')]),
    ("validate invalid hypernode with both regexMatch and exactMatch",
     member(regex_match=RegexMatch("node.*"), exact_match=ExactMatch("node-1")),
     [("spec.members[0].selector", 'Invalid value: "object": Only one of ExactMatch, RegexMatch, or LabelMatch '
                                   "can be specified")]),
    ("validate invalid hypernode with neither regexMatch nor exactMatch", member(),
     [("spec.members[0].selector", 'Invalid value: "object": Either ExactMatch or RegexMatch or LabelMatch must '
                                   "be specified")]),
    ("unknown member type", member(type="Switch", exact_match=ExactMatch("x")),
     [("spec.members[0].type", 'Unsupported value: "Switch": supported values: "Node", "HyperNode"')]),
    ("exactMatch name not a qualified name", member(exact_match=ExactMatch("Bad_Name!")),
     [("spec.members[0].selector.exactMatch.name",
       'Invalid value: "Bad_Name!": member exactMatch validate failed [name part must consist of alphanumeric '
       "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
       "'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')]")]),
    ("a HyperNode member by label", member(type="HyperNode", label_match=LabelSelector({"a": "b"})),
     [("spec.members[0].selector", "Invalid value: a HyperNode member must be selected by exactMatch (Volcano's "
                                   "scheduler cache links child HyperNodes by exactMatch.name only)")]),
])
def test_validate_hyper_node(name, obj, errors):
    assert list(validate_hyper_node(obj)) == errors


def test_validate_hyper_node_tier_and_members():
    h = HyperNode(metadata=ObjectMeta(name="h"), spec=HyperNodeSpec(tier=-1))
    assert list(validate_hyper_node(h)) == [
        ("spec.tier", "Invalid value: -1: spec.tier in body should be greater than or equal to 0"),
        ("spec.members", "Invalid value: 0: spec.members in body should have at least 1 items")]


@pytest.mark.parametrize("spec, errors", [
    (NetworkTopologySpec("hard", 1), []),
    (NetworkTopologySpec("soft"), []),
    (NetworkTopologySpec("strict", 1), [("n.mode", 'Unsupported value: "strict": supported values: "hard", "soft"')]),
    (NetworkTopologySpec("hard", -1), [("n.highestTierAllowed", "Invalid value: -1: n.highestTierAllowed in body "
                                                                "should be greater than or equal to 0")]),
    (NetworkTopologySpec("hard", 1, "spine"),
     [("n", "Invalid value: highestTierAllowed and highestTierName cannot be set simultaneously")]),
    (NetworkTopologySpec("hard", None, "Spine"),
     [("n.highestTierName", "Invalid value: \"Spine\": n.highestTierName in body should match "
                            "'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'")]),
])
def test_validate_network_topology(spec, errors):
    assert list(validate_network_topology(spec, "n")) == errors


# --- scenarios -----------------------------------------------------------------------------------------------

NTA_CONF = """---
apiVersion: v1
kind: ConfigMap
metadata: {name: volcano-scheduler-configmap, namespace: volcano-system}
data:
  volcano-scheduler.conf: |
    actions: "enqueue, allocate, backfill"
    tiers:
    - plugins:
      - name: priority
      - name: gang
      - name: conformance
    - plugins:
      - name: drf
      - name: predicates
      - name: proportion
      - name: nodeorder
      - name: binpack
      - name: network-topology-aware
"""


def nodes_yaml(n: int = 8, cpu: str = "4") -> str:
    return "".join(f"""---
apiVersion: v1
kind: Node
metadata: {{name: node{i}}}
status: {{allocatable: {{cpu: "{cpu}", memory: 16Gi, pods: "110"}}}}
""" for i in range(n))


HYPERNODES = """---
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: hypernode0}
spec:
  tier: 1
  members: [{type: Node, selector: {regexMatch: {pattern: "^node[0-3]$"}}}]
---
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: hypernode1}
spec:
  tier: 1
  members: [{type: Node, selector: {regexMatch: {pattern: "^node[4-7]$"}}}]
---
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: hypernode2}
spec:
  tier: 2
  tierName: spine
  members:
  - {type: HyperNode, selector: {exactMatch: {name: hypernode0}}}
  - {type: HyperNode, selector: {exactMatch: {name: hypernode1}}}
"""


def vcjob(topology: str, replicas: int = 8, min_available: int = 4, cpu: str = "4", name="network-topology-job"):
    return f"""---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {{name: {name}, namespace: default}}
spec:
  schedulerName: volcano
  minAvailable: {min_available}
  networkTopology: {topology}
  tasks:
  - name: t0
    replicas: {replicas}
    template:
      metadata: {{annotations: {{gpusim.io/duration: 1h}}}}
      spec:
        containers:
        - {{name: c0, image: nginx:latest, resources: {{requests: {{cpu: "{cpu}"}}, limits: {{cpu: "{cpu}"}}}}}}
"""


def placed(r, prefix="network-topology-job"):
    return {p.metadata.name: p.spec.node_name for p in r.api.list("Pod") if p.metadata.name.startswith(prefix)}


def test_doc_example_hard_tier_1_keeps_the_job_in_one_hypernode():
    """how_to_use_network_topology_aware_scheduling.md §3.3.1: 8 pods of a full node each, minAvailable 4,
    hard, highestTierAllowed 1: 4 pods run in one tier-1 HyperNode, the other 4 stay Pending."""
    r = gs.run(text=nodes_yaml() + HYPERNODES + NTA_CONF + vcjob("{mode: hard, highestTierAllowed: 1}"),
               until="10m")
    nodes = placed(r)
    bound = sorted(n for n in nodes.values() if n)
    assert len(bound) == 4
    assert bound in (["node0", "node1", "node2", "node3"], ["node4", "node5", "node6", "node7"])
    pending = [p for p in r.api.list("Pod") if p.metadata.name.startswith("network-topology-job")
               and not p.spec.node_name]
    leaf = "hypernode0" if bound[0] == "node0" else "hypernode1"
    msg = next(c.message for c in pending[0].status.conditions if c.type == "PodScheduled")
    assert msg.startswith(f"In hyperNode {leaf}: 0/4 nodes are unavailable")
    (row,) = gs.hypernode_placement(r)
    assert row["hyperNodes"][0]["hyperNode"] == leaf and row["pending"] == 4
    assert row["waiting"] == f"tried {leaf}: the job fits in none"


def test_tier_2_lets_the_job_span_both_leaves():
    r = gs.run(text=nodes_yaml() + HYPERNODES + NTA_CONF +
               vcjob("{mode: hard, highestTierAllowed: 2}", min_available=8), until="10m")
    assert sorted(placed(r).values()) == [f"node{i}" for i in range(8)]
    (row,) = gs.hypernode_placement(r)
    assert [h["hyperNode"] for h in row["hyperNodes"]] == ["hypernode2"]


def test_tier_name_bounds_like_the_tier():
    r = gs.run(text=nodes_yaml() + HYPERNODES + NTA_CONF +
               vcjob("{mode: hard, highestTierName: spine}", min_available=8), until="10m")
    assert all(placed(r).values())


def test_a_gang_larger_than_any_leaf_waits_under_tier_1():
    r = gs.run(text=nodes_yaml() + HYPERNODES + NTA_CONF +
               vcjob("{mode: hard, highestTierAllowed: 1}", min_available=5), until="10m")
    assert not any(placed(r).values())
    (row,) = gs.hypernode_placement(r)
    assert row["waiting"] == "no HyperNode within the limit has the job's minResources idle"


def test_soft_mode_is_placed_anywhere_and_kept_together():
    """Soft mode is not searched by HyperNode; the plugin's node order keeps the tasks near the first one."""
    r = gs.run(text=nodes_yaml() + HYPERNODES + NTA_CONF +
               vcjob("{mode: soft}", replicas=4, min_available=1, cpu="1"), until="10m")
    nodes = set(placed(r).values())
    assert all(nodes)
    assert nodes <= {f"node{i}" for i in range(4)} or nodes <= {f"node{i}" for i in range(4, 8)}


def test_without_the_plugin_a_hard_job_is_not_bound_to_a_hypernode():
    """No plugin registers a HyperNode gradient: the cluster top is the only candidate (session_plugins.go)."""
    r = gs.run(text=nodes_yaml() + HYPERNODES + vcjob("{mode: hard, highestTierAllowed: 1}", min_available=8),
               until="10m")
    assert all(placed(r).values())


def test_hypernode_status_and_views():
    r = gs.run(text=nodes_yaml() + HYPERNODES + NTA_CONF + vcjob("{mode: hard, highestTierAllowed: 1}"),
               until="1m")
    assert {h.metadata.name: h.status.node_count for h in r.api.list("HyperNode")} == \
        {"hypernode0": 4, "hypernode1": 4, "hypernode2": 8}
    assert [(h["name"], h["tier"], h["parent"], h["nodeCount"]) for h in gs.hyper_nodes(r)] == [
        ("hypernode0", 1, "hypernode2", 4), ("hypernode1", 1, "hypernode2", 4), ("hypernode2", 2, "", 8)]
    text = gs.hypernode_summary(r)
    assert text.splitlines()[0].split() == ["NAME", "TIER", "TIERNAME", "PARENT", "NODECOUNT"]
    assert "network-topology-job   hard tier≤1" in text and "(pending 4: tried hypernode" in text


@pytest.mark.parametrize("extra, where, message", [
    ("""---
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: top}
spec:
  tier: 3
  members: [{type: HyperNode, selector: {exactMatch: {name: nowhere}}}]
""", "spec.members[0].selector.exactMatch.name", 'Not found: "nowhere": hypernodes.topology.volcano.sh "nowhere"'),
    ("""---
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: other}
spec:
  tier: 3
  members: [{type: HyperNode, selector: {exactMatch: {name: hypernode0}}}]
""", "spec.members[0].selector.exactMatch.name", "HyperNode hypernode0 is already a member of HyperNode"),
    ("""---
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: leafx}
spec:
  tier: 1
  members: [{type: Node, selector: {exactMatch: {name: node99}}}]
""", "spec.members[0].selector.exactMatch.name", 'Not found: "node99": nodes "node99" not found'),
    (vcjob("{mode: hard, highestTierName: core}", name="j2"), "spec.networkTopology.highestTierName",
     'Not found: "core": no HyperNode has spec.tierName "core"'),
    (vcjob("{mode: strict, highestTierAllowed: 1}", name="j3"), "spec.networkTopology.mode",
     'Unsupported value: "strict"'),
])
def test_invalid_input_names_object_and_field(extra, where, message):
    with pytest.raises(InputError) as e:
        gs.run(text=nodes_yaml() + HYPERNODES + NTA_CONF + extra, until="1m")
    assert where in str(e.value) and message in str(e.value)


def test_hyper_node_cycle_is_rejected():
    cyc = """---
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: a}
spec:
  tier: 2
  members: [{type: HyperNode, selector: {exactMatch: {name: b}}}]
---
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: b}
spec:
  tier: 3
  members: [{type: HyperNode, selector: {exactMatch: {name: a}}}]
"""
    with pytest.raises(InputError) as e:
        gs.run(text=nodes_yaml() + cyc, until="1m")
    assert "the HyperNode hierarchy has a cycle" in str(e.value)

