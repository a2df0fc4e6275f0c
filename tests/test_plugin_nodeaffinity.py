"""NodeAffinity: PreFilter (Skip, PreFilterResult node names, conflicts), Filter and Score, ported row by row
from kubernetes pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go (release 1.36; rows as in
kubernetes/kubernetes commit 022462cc): TestNodeAffinity and TestNodeAffinityPriority. Then the scheduler
honouring a PreFilterResult as schedule_one.go findNodesThatFitPod and framework.go RunPreFilterPlugins do."""
from __future__ import annotations

import pytest

import gpusim as gs
from gpusim.api.core_v1 import Node, Pod
from gpusim.api.schema import decode
from gpusim.scheduler.framework import Code, CycleState, NodeInfo, PodInfo
from gpusim.scheduler.plugins.nodeaffinity import (ERR_REASON_CONFLICT, ERR_REASON_ENFORCED, ERR_REASON_POD,
                                                   new, required_node_names)

U = Code.UnschedulableAndUnresolvable


def _pod(spec: dict) -> Pod:
    return decode(Pod, {"metadata": {"name": "p"}, "spec": {"containers": [], **spec}})


def _required(*terms) -> dict:
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                                          {"nodeSelectorTerms": list(terms)}}}}


def _expr(key, op, *values) -> dict:
    return {"key": key, "operator": op, **({"values": list(values)} if values else {})}


def _name_in(*names) -> dict:
    return {"key": "metadata.name", "operator": "In", "values": list(names)}


def _added(*terms) -> dict:
    return {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


SKIP = "skip"
# (name, pod spec, node labels, node name, want PreFilter status (None = Success), want PreFilterResult,
#  want Filter reason (None = Success), plugin args, run PreFilter)
ROWS = [
    ("missing labels", {"nodeSelector": {"foo": "bar"}}, {}, "", None, None, ERR_REASON_POD, None, True),
    ("same labels", {"nodeSelector": {"foo": "bar"}}, {"foo": "bar"}, "", None, None, None, None, True),
    ("node labels are superset", {"nodeSelector": {"foo": "bar"}}, {"foo": "bar", "baz": "blah"}, "",
     None, None, None, None, True),
    ("node labels are subset", {"nodeSelector": {"foo": "bar", "baz": "blah"}}, {"foo": "bar"}, "",
     None, None, ERR_REASON_POD, None, True),
    ("matchExpressions In matches", _required({"matchExpressions": [_expr("foo", "In", "bar", "value2")]}),
     {"foo": "bar"}, "", None, None, None, None, True),
    ("matchExpressions Gt matches", _required({"matchExpressions": [_expr("kernel-version", "Gt", "0204")]}),
     {"kernel-version": "0206"}, "", None, None, None, None, True),
    ("matchExpressions NotIn matches", _required({"matchExpressions": [_expr("mem-type", "NotIn", "DDR", "DDR2")]}),
     {"mem-type": "DDR3"}, "", None, None, None, None, True),
    ("matchExpressions Exists matches", _required({"matchExpressions": [_expr("GPU", "Exists")]}),
     {"GPU": "NVIDIA-GRID-K1"}, "", None, None, None, None, True),
    ("affinity that doesn't match the node's labels", _required({"matchExpressions": [
        _expr("foo", "In", "value1", "value2")]}), {"foo": "bar"}, "", None, None, ERR_REASON_POD, None, True),
    ("empty MatchExpressions match no objects", _required({"matchExpressions": []}), {"foo": "bar"}, "",
     None, None, ERR_REASON_POD, None, True),
    ("no Affinity", {}, {"foo": "bar"}, "", SKIP, None, None, None, True),
    ("Affinity but nil NodeSelector", {"affinity": {"nodeAffinity": {}}}, {"foo": "bar"}, "", SKIP, None, None,
     None, True),
    ("multiple matchExpressions ANDed that match", _required({"matchExpressions": [
        _expr("GPU", "Exists"), _expr("GPU", "NotIn", "AMD", "INTER")]}), {"GPU": "NVIDIA-GRID-K1"}, "",
     None, None, None, None, True),
    ("multiple matchExpressions ANDed that don't match", _required({"matchExpressions": [
        _expr("GPU", "Exists"), _expr("GPU", "In", "AMD", "INTER")]}), {"GPU": "NVIDIA-GRID-K1"}, "",
     None, None, ERR_REASON_POD, None, True),
    ("multiple NodeSelectorTerms ORed, one matches", _required(
        {"matchExpressions": [_expr("foo", "In", "bar", "value2")]},
        {"matchExpressions": [_expr("diffkey", "In", "wrong", "value2")]}), {"foo": "bar"}, "",
     None, None, None, None, True),
    ("Affinity and nodeSelector both satisfied", {"nodeSelector": {"foo": "bar"}, **_required(
        {"matchExpressions": [_expr("foo", "Exists")]})}, {"foo": "bar"}, "", None, None, None, None, True),
    ("Affinity matches but nodeSelector is not satisfied", {"nodeSelector": {"foo": "bar"}, **_required(
        {"matchExpressions": [_expr("foo", "Exists")]})}, {"foo": "barrrrrr"}, "", None, None, ERR_REASON_POD,
     None, True),
    ("invalid value in an Affinity term", _required({"matchExpressions": [
        _expr("foo", "NotIn", "invalid value: ___@#$%^")]}), {"foo": "bar"}, "", None, None, ERR_REASON_POD,
     None, True),
    ("matchFields In matches the node", _required({"matchFields": [_name_in("node1")]}), {}, "node1",
     None, {"node1"}, None, None, True),
    ("matchFields In does not match the node", _required({"matchFields": [_name_in("node1")]}), {}, "node2",
     None, {"node1"}, ERR_REASON_POD, None, True),
    ("two terms: matchFields does not match, matchExpressions does", _required(
        {"matchFields": [_name_in("node1"), _name_in("node2")]},
        {"matchExpressions": [_expr("foo", "In", "bar")]}), {"foo": "bar"}, "node2", None, None, None, None, True),
    ("one term: matchFields does not match, matchExpressions does", _required(
        {"matchFields": [_name_in("node1")], "matchExpressions": [_expr("foo", "In", "bar")]}), {"foo": "bar"},
     "node2", None, {"node1"}, ERR_REASON_POD, None, True),
    ("one term: both matchFields and matchExpressions match", _required(
        {"matchFields": [_name_in("node1")], "matchExpressions": [_expr("foo", "In", "bar")]}), {"foo": "bar"},
     "node1", None, {"node1"}, None, None, True),
    ("two terms: neither matches", _required(
        {"matchFields": [_name_in("node1")]}, {"matchExpressions": [_expr("foo", "In", "not-match-to-bar")]}),
     {"foo": "bar"}, "node2", None, None, ERR_REASON_POD, None, True),
    ("two terms of node.Name affinity", _required({"matchFields": [_name_in("node1")]},
                                                  {"matchFields": [_name_in("node2")]}), {}, "node2",
     None, {"node1", "node2"}, None, None, True),
    ("two conflicting matchFields requirements", _required({"matchFields": [_name_in("node1"), _name_in("node2")]}),
     {"foo": "bar"}, "node2", ERR_REASON_CONFLICT, None, ERR_REASON_POD, None, True),
    ("matches added affinity and the pod's node affinity", _required({"matchExpressions": [
        _expr("zone", "In", "foo")]}), {"zone": "foo"}, "node2", None, None, None,
     _added({"matchFields": [_name_in("node2")]}), True),
    ("matches added affinity but not the pod's node affinity", _required({"matchExpressions": [
        _expr("zone", "In", "bar")]}), {"zone": "foo"}, "node2", None, None, ERR_REASON_POD,
     _added({"matchFields": [_name_in("node2")]}), True),
    ("doesn't match added affinity", {}, {"zone": "foo"}, "node2", None, None, ERR_REASON_ENFORCED,
     _added({"matchExpressions": [_expr("zone", "In", "bar")]}), True),
    ("matches node selector even if PreFilter is not called", {"nodeSelector": {"foo": "bar"}},
     {"foo": "bar", "baz": "blah"}, "", None, None, None, None, False),
    ("matches node affinity even if PreFilter is not called", _required({"matchExpressions": [
        _expr("GPU", "Exists"), _expr("GPU", "NotIn", "AMD", "INTER")]}), {"GPU": "NVIDIA-GRID-K1"}, "",
     None, None, None, None, False),
]


@pytest.mark.parametrize("name, spec, labels, node_name, want_pre, want_names, want_filter, args, run_pre",
                         ROWS, ids=[r[0] for r in ROWS])
def test_node_affinity(name, spec, labels, node_name, want_pre, want_names, want_filter, args, run_pre):
    pod, pl, state = PodInfo(_pod(spec)), new(args), CycleState()
    node = NodeInfo(decode(Node, {"metadata": {"name": node_name, "labels": labels}}))
    if run_pre:
        names, st = pl.pre_filter(state, pod, [node])
        if want_pre == SKIP:
            assert st.code == Code.Skip
        elif want_pre is None:
            assert st.is_success(), st.reasons
        else:
            assert (st.code, st.reasons) == (U, [want_pre])
        assert names == want_names
    st = pl.filter(state, pod, node)
    if want_filter is None:
        assert st.is_success(), st.reasons
    else:
        assert (st.code, st.reasons) == (U, [want_filter])


def _pref(weight, *exprs) -> dict:
    return {"weight": weight, "preference": {"matchExpressions": list(exprs)}}


AFFINITY1 = [_pref(2, _expr("foo", "In", "bar"))]
AFFINITY2 = [_pref(2, _expr("foo", "In", "bar")), _pref(4, _expr("key", "In", "value")),
             _pref(5, _expr("foo", "In", "bar"), _expr("key", "In", "value"), _expr("az", "In", "az1"))]
L1, L2, L3 = {"foo": "bar"}, {"key": "value"}, {"az": "az1"}
L4, L5 = {"abc": "az11", "def": "az22"}, {"foo": "bar", "key": "value", "az": "az1"}


# TestNodeAffinityPriority: (name, preferred terms, nodes, expected normalised scores, added preferred terms)
@pytest.mark.parametrize("name, preferred, nodes, expected, added", [
    ("all nodes are same priority as NodeAffinity is nil", None, [("node1", L1), ("node2", L2), ("node3", L3)],
     [0, 0, 0], None),
    ("no node matches preferred scheduling requirements", AFFINITY1, [("node1", L4), ("node2", L2), ("node3", L3)],
     [0, 0, 0], None),
    ("only node1 matches the preferred scheduling requirements", AFFINITY1,
     [("node1", L1), ("node2", L2), ("node3", L3)], [100, 0, 0], None),
    ("all nodes match the preferred requirements with different priorities", AFFINITY2,
     [("node1", L1), ("node5", L5), ("node2", L2)], [18, 100, 36], None),
    ("added affinity", None, [("node1", L1), ("node2", L2)], [100, 0], AFFINITY1),
    ("added affinity and pod has default affinity", AFFINITY1, [("node1", L1), ("node2", L2), ("node3", L5)],
     [40, 60, 100], [_pref(3, _expr("key", "In", "value"))]),
])
def test_node_affinity_priority(name, preferred, nodes, expected, added):
    spec = {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": preferred}}} \
        if preferred else {}
    pl = new({"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": added}} if added else None)
    pod, state = PodInfo(_pod(spec)), CycleState()
    infos = [NodeInfo(decode(Node, {"metadata": {"name": n, "labels": lb}})) for n, lb in nodes]
    skip = pl.pre_score(state, pod, infos).code == Code.Skip
    raw = {ni.name: 0 if skip else pl.score(state, pod, ni) for ni in infos}
    norm = raw if skip else pl.normalize(state, pod, raw)
    assert [norm[n] for n, _ in nodes] == expected


@pytest.mark.parametrize("terms, names", [
    ([{"matchFields": [_name_in("a", "b")]}], {"a", "b"}),
    ([{"matchFields": [_name_in("a", "b"), _name_in("b", "c")]}], {"b"}),          # ANDed: intersection
    ([{"matchFields": [_name_in("a")]}, {"matchFields": [_name_in("c")]}], {"a", "c"}),   # ORed: union
    ([{"matchFields": [_name_in("a")]}, {"matchExpressions": [_expr("x", "Exists")]}], None),
    ([{"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["a"]}]}], None),
])
def test_required_node_names(terms, names):
    assert required_node_names(_pod(_required(*terms))) == names


# --- the scheduler honours the PreFilterResult -------------------------------------------------------------

def _cluster(pod_spec: str) -> str:
    return f"""apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {{name: gpu}}
spec: {{count: 4, gpu: {{model: A100-SXM4-80GB, count: 8}}}}
---
apiVersion: v1
kind: Pod
metadata: {{name: hog}}
spec:
  nodeSelector: {{kubernetes.io/hostname: gpu-1}}
  containers: [{{name: c, image: x, resources: {{limits: {{nvidia.com/gpu: 8}}}}}}]
---
apiVersion: v1
kind: Pod
metadata: {{name: p, annotations: {{gpusim.io/submit-at: 5s}}}}
spec:
{pod_spec}
  containers: [{{name: c, image: x, resources: {{limits: {{nvidia.com/gpu: 4}}}}}}]
"""


def _by_name(*names) -> str:
    """One term per node name (the apiserver allows one value per field requirement); the terms are ORed."""
    terms = "".join(f"\n        - matchFields: [{{key: metadata.name, operator: In, values: [{n}]}}]" for n in names)
    return ("  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
            "        nodeSelectorTerms:" + terms)


def test_prefilter_result_restricts_the_nodes_filtered():
    r = gs.run(text=_cluster(_by_name("gpu-2")))
    assert r.pod("p").spec.node_name == "gpu-2"
    (a,) = gs.attempts_for(r, "p")
    assert a.feasible == ["gpu-2"]
    absent = "NodeAffinity: node(s) didn't satisfy plugin(s) [NodeAffinity]"
    assert a.statuses == {"gpu-0": absent, "gpu-1": absent, "gpu-3": absent}


def test_nodes_outside_the_result_share_one_absent_status_in_the_message():
    r = gs.run(text=_cluster(_by_name("gpu-1", "no-such-node")))
    assert r.pod("p").spec.node_name == ""
    (a,) = gs.attempts_for(r, "p")
    assert a.statuses["gpu-1"] == "NodeResourcesFit: Insufficient nvidia.com/gpu"
    msg = a.message
    assert msg.startswith("0/4 nodes are available: 1 Insufficient nvidia.com/gpu, "
                          "3 node(s) didn't satisfy plugin(s) [NodeAffinity]. no new claims to deallocate, preemption: 0/4 nodes are available:")


def test_conflicting_names_fail_in_prefilter():
    spec = ("  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
            "        nodeSelectorTerms:\n        - matchFields: [{key: metadata.name, operator: In, values: [gpu-0]},"
            " {key: metadata.name, operator: In, values: [gpu-2]}]")
    r = gs.run(text=_cluster(spec))
    (a,) = gs.attempts_for(r, "p")
    assert a.message.startswith(f"0/4 nodes are available: {ERR_REASON_CONFLICT}.")
    assert set(a.statuses.values()) == {f"NodeAffinity: {ERR_REASON_CONFLICT}"}


def test_pods_without_affinity_skip_node_affinity_at_prefilter_and_filter():
    from gpusim.scheduler.runtime import Framework
    fw = Framework(gs.load_profiles()["default-scheduler"], None)
    pod = PodInfo(_pod({}))
    allowed, st, skipped, with_nodes = fw.run_pre_filter(CycleState(), pod, [])
    assert st.is_success() and allowed is None and "NodeAffinity" in skipped and not with_nodes


@pytest.mark.parametrize("key, op, values, message", [
    ("metadata.name", "In", ["a", "b"], "Required value: must be only one value when `operator` is 'In' or "
                                        "'NotIn' for node field selector"),
    ("metadata.name", "Exists", [], 'Invalid value: "Exists": not a valid selector operator'),
    ("metadata.labels", "In", ["a"], 'Invalid value: "metadata.labels": not a valid field selector key'),
])
def test_match_fields_are_validated_as_the_apiserver_does(key, op, values, message):
    spec = ("  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
            f"        nodeSelectorTerms:\n        - matchFields: [{{key: {key}, operator: {op}, values: {values}}}]")
    with pytest.raises(gs.InputError) as e:
        gs.load(texts=[("p.yaml", _cluster(spec))])
    assert message in str(e.value) and "nodeSelectorTerms[0].matchFields[0]" in str(e.value)
