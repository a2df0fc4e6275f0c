"""Kueue Topology-Aware Scheduling: the placement algorithm, the v1beta2 assignment encoding, the webhook checks
of the TAS annotations and the Topology object, and the whole path through a scenario (quota + placement,
the admission's topologyAssignment, the ``kueue.x-k8s.io/topology`` scheduling gate and the ungater).

Tables port upstream's own cases (kubernetes-sigs/kueue, main after v0.19.2):
- ``pkg/cache/scheduler/tas_cache_test.go`` TestFindTopologyAssignments (the rows without leader PodSets,
  node replacement or alpha gates; node sets ``defaultNodes``, ``scatteredNodes``, ``binaryTreesNodes``);
- ``pkg/cache/scheduler/tas_flavor_snapshot_test.go`` TestSortedDomains (rows with TASRespectNodeAffinityPreferred
  off, its 0.19 default);
- ``pkg/util/tas/tas_assignment_test.go`` TestV1Beta2FromInternal / TestInternalFromV1Beta2;
- ``pkg/controller/jobframework/tas_validation.go`` ValidateTASPodSetRequest (one row per message).
"""
from __future__ import annotations

import pytest

from gpusim.api.core_v1 import Node, NodeSpec, NodeStatus, PodSpec, Taint, Toleration
from gpusim.api.kueue_x_k8s_io import (PodSetTopologyRequest, Topology, TopologyLevel, TopologySpec,
                                       TopologyAssignment, TopologyAssignmentSlice,
                                       TopologyAssignmentSliceLevelValues as LV, validate_tas_pod_set_request,
                                       validate_topology)
from gpusim.api.meta import ObjectMeta
from gpusim.kueue.tas_flavor_snapshot import Domain, Placement, TASFlavorSnapshot, TASPodSetRequest, to_v1beta2

BLOCK, RACK, HOST = "cloud.com/topology-block", "cloud.com/topology-rack", "kubernetes.io/hostname"
ONE, TWO, THREE = [HOST], [BLOCK, RACK], [BLOCK, RACK, HOST]
GI = 2**30


def node(name: str, labels: dict, cpu: int, mem: int = GI, pods: int = 10, taints=()) -> tuple[Node, dict]:
    n = Node(metadata=ObjectMeta(name=name, labels=dict(labels)), spec=NodeSpec(taints=list(taints)),
             status=NodeStatus())
    return n, {"cpu": cpu, "memory": mem, "pods": pods}


def brh(name: str, b: str, r: str, h: str, cpu: int, mem: int = GI, pods: int = 10, **kw):
    return node(name, {BLOCK: b, RACK: r, HOST: h}, cpu, mem, pods, **kw)


# tas_cache_test.go defaultNodes (cpu in milli-cores):  b1: r1[x3] r2[x5 x1 x6]; b2: r1[x2] r2[x4 (2 cpu)]
DEFAULT = [brh("b1-r1-x3", "b1", "r1", "x3", 1000), brh("b1-r2-x5", "b1", "r2", "x5", 1000),
           brh("b1-r2-x1", "b1", "r2", "x1", 1000), brh("b1-r2-x6", "b1", "r2", "x6", 1000),
           brh("b2-r2-x2", "b2", "r1", "x2", 1000), brh("b2-r2-x4", "b2", "r2", "x4", 2000, 4 * GI, 40)]
# scatteredNodes: b1: r1[x3 (4 cpu) x5 x1]; b2: r1[x6 (2 cpu) x2]
SCATTERED = [brh("b1-r1-x3", "b1", "r1", "x3", 4000), brh("b1-r1-x5", "b1", "r1", "x5", 1000),
             brh("b1-r1-x1", "b1", "r1", "x1", 1000), brh("b2-r1-x6", "b2", "r1", "x6", 2000),
             brh("b2-r1-x2", "b2", "r1", "x2", 1000)]
# binaryTreesNodes: b1: r1[x3 x5] r2[x1 x6]; b2: r1[x2 x4] r2[x7 x8]
BINARY = [brh(f"{b}-{r}-{h}", b, r, h, 1000) for b, r, h in
          [("b1", "r1", "x3"), ("b1", "r1", "x5"), ("b1", "r2", "x1"), ("b1", "r2", "x6"),
           ("b2", "r1", "x2"), ("b2", "r1", "x4"), ("b2", "r2", "x7"), ("b2", "r2", "x8")]]
RACKS = [brh("b1-r1-x3", "b1", "r1", "x3", 2000), brh("b1-r2-x5", "b1", "r2", "x5", 2000, pods=20),
         *[brh(f"b1-r3-{h}", "b1", "r3", h, 1000) for h in ("x1", "x6", "x2", "x4")]]
ONE_RACK = [brh("b1-r1-x3", "b1", "r1", "x3", 2000), brh("b1-r1-x5", "b1", "r1", "x5", 1000),
            brh("b1-r1-x1", "b1", "r1", "x1", 1000)]
BLOCKS = [node("b1", {BLOCK: "b1"}, 2000, pods=20), node("b2", {BLOCK: "b2"}, 1000),
          node("b3", {BLOCK: "b3"}, 4000, pods=40)]


def snapshot(nodes, levels, name: str = "default", tolerations=()) -> TASFlavorSnapshot:
    s = TASFlavorSnapshot(name, levels, list(tolerations))
    for n, alloc in nodes:
        s.add_node(n, alloc)
    s.initialize()
    return s


def req(count: int, cpu: int = 1000, memory: int = 0, spec: PodSpec | None = None, implied: bool = False,
        **topology) -> TASPodSetRequest:
    r = {"cpu": cpu} if cpu else {}
    if memory:
        r["memory"] = memory
    tr = PodSetTopologyRequest(**topology) if topology else None
    return TASPodSetRequest("main", spec or PodSpec(), r, count, tr, implied)


FIND_CASES = [
    ("minimize the number of used racks before optimizing the number of nodes; BestFit",
     RACKS, THREE, req(4, required=BLOCK), ONE, [(["x1"], 1), (["x2"], 1), (["x4"], 1), (["x6"], 1)], ""),
    ("choose the node that can accommodate all Pods",
     ONE_RACK, THREE, req(2, required=BLOCK), ONE, [(["x3"], 2)], ""),
    ("no annotation; implied default to unconstrained; 6 pods fit into hosts scattered across the whole "
     "datacenter even they could fit into single rack; BestFit",
     SCATTERED, THREE, req(6, implied=True), ONE,
     [(["x1"], 1), (["x3"], 1), (["x5"], 1), (["x2"], 1), (["x6"], 2)], ""),
    ("unconstrained; 6 pods fit into hosts scattered across the whole datacenter even they could fit into "
     "single rack; BestFit",
     SCATTERED, THREE, req(6, unconstrained=True), ONE,
     [(["x1"], 1), (["x3"], 1), (["x5"], 1), (["x2"], 1), (["x6"], 2)], ""),
    ("unconstrained; a single pod fits into each host; BestFit",
     DEFAULT, THREE, req(1, unconstrained=True), ONE, [(["x3"], 1)], ""),
    ("block required; 4 pods fit into one host each; BestFit",
     BINARY, THREE, req(4, required=BLOCK), ONE, [(["x3"], 1), (["x5"], 1), (["x1"], 1), (["x6"], 1)], ""),
    ("host required; single Pod fits in the host; BestFit",
     DEFAULT, THREE, req(1, required=HOST), ONE, [(["x3"], 1)], ""),
    ("rack required; single Pod fits in a rack; BestFit",
     DEFAULT, TWO, req(1, required=RACK), TWO, [(["b1", "r1"], 1)], ""),
    ("rack required; multiple Pods fit in a rack; BestFit",
     DEFAULT, TWO, req(3, required=RACK), TWO, [(["b1", "r2"], 3)], ""),
    ("block preferred; Pods fit in 2 blocks; BestFit",
     BLOCKS, [BLOCK], req(5, preferred=BLOCK), [BLOCK], [(["b2"], 1), (["b3"], 4)], ""),
    ("rack required; multiple Pods fit in some racks; BestFit",
     DEFAULT, TWO, req(2, required=RACK), TWO, [(["b2", "r2"], 2)], ""),
    ("rack required; too many pods to fit in any rack; BestFit",
     DEFAULT, TWO, req(4, required=RACK), None, None, 'topology "default" allows to fit only 3 out of 4 pod(s)'),
    ("block required; single Pod fits in a block and a single rack; BestFit",
     DEFAULT, TWO, req(1, required=BLOCK), TWO, [(["b2", "r1"], 1)], ""),
    ("block required; single Pod fits in a block spread across two racks; BestFit",
     DEFAULT, TWO, req(4, required=BLOCK), TWO, [(["b1", "r1"], 1), (["b1", "r2"], 3)], ""),
    ("block required; single Pod which cannot be split; BestFit",
     DEFAULT, TWO, req(1, cpu=4000, required=BLOCK), None, None,
     'topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 4; excluded: resource "cpu": 4'),
    ("block required; too many Pods to fit requested; BestFit",
     DEFAULT, TWO, req(5, required=BLOCK), None, None, 'topology "default" allows to fit only 4 out of 5 pod(s)'),
    ("rack required; single Pod requiring memory; BestFit",
     DEFAULT, TWO, req(4, cpu=0, memory=1024, required=RACK), TWO, [(["b1", "r1"], 4)], ""),
    ("rack preferred; but only block can accommodate the workload; BestFit",
     DEFAULT, TWO, req(4, preferred=RACK), TWO, [(["b1", "r1"], 1), (["b1", "r2"], 3)], ""),
    ("rack preferred; but only multiple blocks can accommodate the workload; BestFit",
     DEFAULT, TWO, req(6, preferred=RACK), TWO, [(["b1", "r1"], 1), (["b1", "r2"], 3), (["b2", "r2"], 2)], ""),
    ("block preferred; but only multiple blocks can accommodate the workload; BestFit",
     DEFAULT, TWO, req(6, preferred=BLOCK), TWO, [(["b1", "r1"], 1), (["b1", "r2"], 3), (["b2", "r2"], 2)], ""),
]


@pytest.mark.parametrize("name,nodes,levels,request_,want_levels,want,reason", FIND_CASES,
                         ids=[c[0] for c in FIND_CASES])
def test_find_topology_assignments(name, nodes, levels, request_, want_levels, want, reason):
    got = snapshot(nodes, levels).find_topology_assignments([request_])["main"]
    placement, got_reason = got
    assert got_reason == reason
    if want is None:
        assert placement is None
    else:
        assert placement.levels == want_levels
        assert placement.domains == want


# gpusim's own rows: the messages and exclusions the ported table does not reach (derived from the same code)
OWN_CASES = [
    ("slice: 2 slices of 2 pods need a rack each; no block holds both, preferred spreads over blocks",
     DEFAULT, TWO, req(4, preferred=BLOCK, pod_set_slice_required_topology=RACK, pod_set_slice_size=2),
     [(["b1", "r2"], 2), (["b2", "r2"], 2)], ""),
    ("slice: required block fails with slice(s) as the unit",
     DEFAULT, TWO, req(4, required=BLOCK, pod_set_slice_required_topology=RACK, pod_set_slice_size=2), None,
     'topology "default" allows to fit only 1 out of 2 slice(s)'),
    ("slice size without enough whole slices: unit slice(s)",
     DEFAULT, TWO, req(6, required=BLOCK, pod_set_slice_required_topology=RACK, pod_set_slice_size=3), None,
     'topology "default" allows to fit only 1 out of 2 slice(s)'),
    ("slice topology above the podset topology",
     DEFAULT, THREE, req(2, required=RACK, pod_set_slice_required_topology=BLOCK, pod_set_slice_size=2), None,
     f"podset slice topology {BLOCK} is above the podset topology {RACK}"),
    ("level not in the topology", DEFAULT, TWO, req(1, required="zone"), None, "no requested topology level: zone"),
    ("taints exclude nodes when hostname is the lowest level",
     [brh("n1", "b1", "r1", "n1", 1000, taints=[Taint("gpu", "bad", "NoSchedule")]),
      brh("n2", "b1", "r1", "n2", 1000)],
     THREE, req(2, required=BLOCK), None,
     'topology "default" allows to fit only 1 out of 2 pod(s). Total nodes: 2; excluded: taint "gpu=bad:NoSchedule": 1'),
    ("a nodeSelector excludes nodes when hostname is the lowest level",
     [brh("n1", "b1", "r1", "n1", 1000), brh("n2", "b1", "r1", "n2", 1000)], THREE,
     req(2, required=BLOCK, spec=PodSpec(node_selector={HOST: "n1"})), None,
     'topology "default" allows to fit only 1 out of 2 pod(s). Total nodes: 2; excluded: nodeSelector: 1'),
]


@pytest.mark.parametrize("name,nodes,levels,request_,want,reason", OWN_CASES, ids=[c[0] for c in OWN_CASES])
def test_find_topology_assignments_slices_and_exclusions(name, nodes, levels, request_, want, reason):
    placement, got_reason = snapshot(nodes, levels).find_topology_assignments([request_])["main"]
    assert got_reason == reason
    assert (placement.domains if placement else None) == (sorted(want) if want else None)


def test_flavor_tolerations_tolerate_node_taints():
    nodes = [brh("n1", "b1", "r1", "n1", 1000, taints=[Taint("gpu", "bad", "NoSchedule")])]
    s = snapshot(nodes, THREE, tolerations=[Toleration(key="gpu", operator="Exists")])
    placement, reason = s.find_topology_assignment(req(1, required=BLOCK))
    assert reason == "" and placement.domains == [(["n1"], 1)]


def test_tas_usage_and_simulate_empty():
    """Capacity is free − TAS usage; with simulate_empty (what upstream asks before preempting) it is not."""
    s = snapshot(DEFAULT, TWO)
    s.add_tas_usage("b1,r2", {"cpu": 3000, "pods": 3})
    placement, reason = s.find_topology_assignment(req(3, required=RACK))
    assert placement is None and reason == ('topology "default" allows to fit only 2 out of 3 pod(s). '
                                            'Total nodes: 4; excluded: resource "cpu": 1')
    placement, reason = s.find_topology_assignment(req(3, required=RACK), simulate_empty=True)
    assert reason == "" and placement.domains == [(["b1", "r2"], 3)]


def test_podsets_see_the_usage_assumed_by_earlier_podsets():
    s = snapshot(DEFAULT, TWO)
    a, b = req(3, required=RACK), req(3, required=RACK)
    b.name = "second"
    got = s.find_topology_assignments([a, b])
    assert got["main"][0].domains == [(["b1", "r2"], 3)]
    assert got["second"] == (None, 'topology "default" allows to fit only 2 out of 3 pod(s). '
                                   'Total nodes: 4; excluded: resource "cpu": 1')


def dom(id_, slice_state, state, value):
    return Domain(id_, (value,), slice_state=slice_state, state=state)


SORT_CASES = [
    ("affinityScore ignored when feature gate is disabled",
     [dom("low-affinity", 5, 10, "a"), dom("high-affinity", 5, 10, "b")], False, ["low-affinity", "high-affinity"]),
    ("BestFit: sliceState descending", [dom("a", 3, 1, "a"), dom("b", 1, 1, "b"), dom("c", 2, 1, "c")], False,
     ["a", "c", "b"]),
    ("LeastFreeCapacity: sliceState ascending", [dom("a", 3, 1, "a"), dom("b", 1, 1, "b"), dom("c", 2, 1, "c")],
     True, ["b", "c", "a"]),
    ("BestFit: state ascending as tiebreaker",
     [dom("large", 5, 100, "a"), dom("small", 5, 10, "b"), dom("medium", 5, 50, "c")], False,
     ["small", "medium", "large"]),
    ("LeastFreeCapacity: state ascending as tiebreaker",
     [dom("large", 5, 100, "a"), dom("small", 5, 10, "b"), dom("medium", 5, 50, "c")], True,
     ["small", "medium", "large"]),
    ("levelValues ascending as final tiebreaker", [dom("c", 5, 10, "c"), dom("a", 5, 10, "a"), dom("b", 5, 10, "b")],
     False, ["a", "b", "c"]),
]


@pytest.mark.parametrize("name,domains,unconstrained,want", SORT_CASES, ids=[c[0] for c in SORT_CASES])
def test_sorted_domains(name, domains, unconstrained, want):
    s = TASFlavorSnapshot("test", ["block"])
    assert [d.id for d in s._sorted(domains, unconstrained)] == want


def sl(count, values, pod_counts=None, universal=None):
    return TopologyAssignmentSlice(count, values, pod_counts, universal)


ENCODING_CASES = [
    ("empty", Placement(["a", "b"], []), TopologyAssignment(["a", "b"], [])),
    ("one domain", Placement(["a", "b"], [(["a1", "b1"], 1)]),
     TopologyAssignment(["a", "b"], [sl(1, [LV(universal_value="a1"), LV(universal_value="b1")], universal=1)])),
    ("multiple domains, same counts, no common prefix", Placement(["a", "b"], [(["a1", "b1"], 1), (["a2", "b2"], 1)]),
     TopologyAssignment(["a", "b"], [sl(2, [LV(prefix="a", roots=["1", "2"]), LV(prefix="b", roots=["1", "2"])],
                                        universal=1)])),
    ("multiple domains, different counts, common prefix and suffix",
     Placement(["a", "b"], [(["p.a1.s", "p.b1.s"], 1), (["p.a2.s", "p.b2.s"], 2)]),
     TopologyAssignment(["a", "b"], [sl(2, [LV(prefix="p.a", suffix=".s", roots=["1", "2"]),
                                           LV(prefix="p.b", suffix=".s", roots=["1", "2"])], pod_counts=[1, 2])])),
    ("multiple domains, universal value", Placement(["a", "b"], [(["a1", "x"], 1), (["a1", "y"], 2)]),
     TopologyAssignment(["a", "b"], [sl(2, [LV(universal_value="a1"), LV(roots=["x", "y"])], pod_counts=[1, 2])])),
    ("multiple domains, same counts, shrinking prefix",
     Placement(["a"], [(["a123"], 1), (["a12"], 1), (["a1"], 1), (["a13"], 1)]),
     TopologyAssignment(["a"], [sl(4, [LV(prefix="a1", roots=["23", "2", "", "3"])], universal=1)])),
    ("multiple domains, same counts, shrinking suffix",
     Placement(["a"], [(["123b"], 1), (["23b"], 1), (["3b"], 1), (["13b"], 1)]),
     TopologyAssignment(["a"], [sl(4, [LV(suffix="3b", roots=["12", "2", "", "1"])], universal=1)])),
    ("multiple domains, same counts, max prefix & suffix overlap partially",
     Placement(["a"], [(["abacacada"], 1), (["abacada"], 1)]),
     TopologyAssignment(["a"], [sl(2, [LV(prefix="ab", suffix="acada", roots=["ac", ""])], universal=1)])),
    ("multiple domains, same counts, max prefix & suffix overlap fully", Placement(["a"], [(["ababa"], 1), (["aba"], 1)]),
     TopologyAssignment(["a"], [sl(2, [LV(suffix="aba", roots=["ab", ""])], universal=1)])),
]


@pytest.mark.parametrize("name,internal,v1beta2", ENCODING_CASES, ids=[c[0] for c in ENCODING_CASES])
def test_v1beta2_encoding_round_trip(name, internal, v1beta2):
    assert to_v1beta2(internal) == v1beta2              # TestV1Beta2FromInternal
    assert v1beta2.domains() == internal.domains          # TestInternalFromV1Beta2


P = "spec.template.metadata.annotations"
REQ, PREF, UNC = ("kueue.x-k8s.io/podset-required-topology", "kueue.x-k8s.io/podset-preferred-topology",
                  "kueue.x-k8s.io/podset-unconstrained-topology")
SLICE, SIZE, GROUP = ("kueue.x-k8s.io/podset-slice-required-topology", "kueue.x-k8s.io/podset-slice-size",
                      "kueue.x-k8s.io/podset-group-name")
VALIDATION_CASES = [
    ("valid required", {REQ: RACK}, 4, []),
    ("more than one topology annotation", {REQ: RACK, PREF: RACK}, 4,
     [(P, f'Invalid value: must not contain more than one topology annotation: ["{REQ}", "{PREF}", "{UNC}"]')]),
    ("invalid label", {REQ: "not a label"}, 4,
     [(f"{P}[{REQ}]", 'Invalid value: "not a label": name part must consist of alphanumeric characters, '
       "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
       "or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")]),
    ("unconstrained must be a boolean", {UNC: "yes"}, 4, [(f"{P}[{UNC}]", 'Invalid value: "yes": must be a boolean value')]),
    ("slice size missing", {REQ: BLOCK, SLICE: RACK}, 4,
     [(f"{P}[{SIZE}]", f"Required value: must be set when '{SLICE}' is specified")]),
    ("slice size without slice topology", {REQ: BLOCK, SIZE: "2"}, 4,
     [(f"{P}[{SIZE}]", f"Forbidden: may not be set when '{SLICE}' is not specified")]),
    ("slice size not numeric", {REQ: BLOCK, SLICE: RACK, SIZE: "two"}, 4,
     [(f"{P}[{SIZE}]", 'Invalid value: "two": must be a numeric value')]),
    ("slice size below 1", {REQ: BLOCK, SLICE: RACK, SIZE: "0"}, 4,
     [(f"{P}[{SIZE}]", 'Invalid value: "0": must be greater than or equal to 1')]),
    ("slice size above the pod set count", {REQ: BLOCK, SLICE: RACK, SIZE: "8"}, 4,
     [(f"{P}[{SIZE}]", 'Invalid value: "8": must not be greater than pod set count 4')]),
    ("group name must not be a number", {REQ: BLOCK, GROUP: "12"}, 4,
     [(f"{P}[{GROUP}]", 'Invalid value: "12": must not be a number')]),
    ("group name without required or preferred", {GROUP: "g"}, 4,
     [(f"{P}[{GROUP}]", f"Forbidden: may not be set when neither '{PREF}' nor '{REQ}' is specified")]),
]


@pytest.mark.parametrize("name,annotations,count,want", VALIDATION_CASES, ids=[c[0] for c in VALIDATION_CASES])
def test_validate_tas_pod_set_request(name, annotations, count, want):
    assert list(validate_tas_pod_set_request(annotations, P, count)) == want


TOPOLOGY_CASES = [
    ("valid", [BLOCK, RACK, HOST], []),
    ("no levels", [], [("spec.levels", "Required value")]),
    ("duplicate level", [BLOCK, BLOCK], [("spec.levels", 'Invalid value: "array": must be unique')]),
    ("hostname not the lowest", [HOST, RACK],
     [("spec.levels", 'Invalid value: "array": the kubernetes.io/hostname label can only be used at the lowest level '
       "of topology")]),
    ("too many levels", [f"l{i}" for i in range(17)], [("spec.levels", "Too many: 17: must have at most 16 items")]),
]


@pytest.mark.parametrize("name,levels,want", TOPOLOGY_CASES, ids=[c[0] for c in TOPOLOGY_CASES])
def test_validate_topology(name, levels, want):
    t = Topology(metadata=ObjectMeta(name="t"), spec=TopologySpec([TopologyLevel(k) for k in levels]))
    assert list(validate_topology(t)) == want


# --- the whole path, through scenarios -------------------------------------------------------------------

from pathlib import Path  # noqa: E402

import gpusim as gs  # noqa: E402
from gpusim.api.errors import InputError  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "kueue-tas.yaml"


OBSERVABILITY = """
---
apiVersion: v1
kind: ConfigMap
metadata: {name: kueue-manager-config, namespace: kueue-system}
data:
  controller_manager_config.yaml: |
    apiVersion: config.kueue.x-k8s.io/v1beta2
    kind: Configuration
    featureGates: {UnadmittedWorkloadsObservability: true}
"""


@pytest.mark.parametrize("gate", [False, True])
def test_example_placements_and_messages(gate):
    """The example as a Kueue 0.19 user sees it (reason Pending), and with UnadmittedWorkloadsObservability on
    (TopologyPlacementFailed); the message is the same."""
    r = gs.run(text=EXAMPLE.read_text() + (OBSERVABILITY if gate else ""))
    rows = {row["workload"].rsplit("-", 1)[0]: row for row in gs.topology_assignments(r)}
    assert [d["path"] for d in rows["job-train-b"]["domains"]] == ["b1/r1/b1-r1-0", "b1/r1/b1-r1-1", "b1/r2/b1-r2-0"]
    assert [d["path"] for d in rows["job-train-c"]["domains"]] == [
        "b2/r1/b2-r1-0", "b2/r1/b2-r1-1", "b2/r2/b2-r2-0", "b2/r2/b2-r2-1"]
    assert [d["path"] for d in rows["job-train-d"]["domains"]] == ["b1/r1/b1-r1-0", "b1/r1/b1-r1-1"]
    assert not rows["job-train-a"]["admitted"]
    wl_a = next(w for w in r.api.list("Workload.kueue.x-k8s.io") if w.metadata.name.startswith("job-train-a"))
    qr = wl_a.condition("QuotaReserved")
    reason = "TopologyPlacementFailed" if gate else "Pending"
    assert (qr.status, qr.reason) == ("False", reason)
    assert qr.message == ('couldn\'t assign flavors to pod set main: topology "default" allows to fit only 2 out of 3 '
                          "pod(s)")
    d_events = [e for e in r.events.log if e.object.name.startswith("job-train-d")]
    assert d_events[0].reason == reason and d_events[0].time == 60
    assert d_events[0].message.endswith('allows to fit only 1 out of 2 pod(s). Total nodes: 8; excluded: resource '
                                        '"nvidia.com/gpu": 7')
    # the pods ran where the assignment put them: gated at creation, ungated 1 s later with a hostname selector
    pods = {p.metadata.name: p for p in r.api.list("Pod")}
    for row in rows.values():
        job = row["workload"].split("-")[1] + "-" + row["workload"].split("-")[2]
        placed = sorted(p.spec.node_name for n, p in pods.items() if n.startswith(job))
        assert placed == sorted(v for d in row["domains"] for v in d["values"])
    b_pod = next(p for n, p in pods.items() if n.startswith("train-b"))
    assert b_pod.spec.scheduling_gates == [] and set(b_pod.spec.node_selector) >= {"kubernetes.io/hostname"}
    assert b_pod.metadata.labels["kueue.x-k8s.io/podset"] == "main"
    ungated = [t for t in r.trace.records if t.function == "tas.(*topologyUngater).Reconcile"
               and t.object.startswith("Pod default/train-b")]
    assert [t.time for t in ungated] == [11.0] * 3
    assert "b1-r1-0: 1" in gs.describe_workload(r, rows["job-train-b"]["workload"])


SCENARIO = """
apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {{name: r1}}
spec: {{count: 2, gpu: {{model: A100-SXM4-80GB, count: 8}}, cpu: "64", memory: 512Gi,
        labels: {{cloud.provider.com/topology-rack: r1}}}}
---
apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {{name: r2}}
spec: {{count: 2, gpu: {{model: A100-SXM4-80GB, count: 8}}, cpu: "64", memory: 512Gi,
        labels: {{cloud.provider.com/topology-rack: r2}}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {{name: racks}}
spec: {{levels: [{{nodeLabel: cloud.provider.com/topology-rack}}, {{nodeLabel: kubernetes.io/hostname}}]}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: tas}}
spec: {{topologyName: {topology}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: cq}}
spec:
  namespaceSelector: {{}}
  preemption: {{withinClusterQueue: LowerPriority}}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{{name: tas, resources: [{{name: nvidia.com/gpu, nominalQuota: 64}}]}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: q, namespace: default}}
spec: {{clusterQueue: cq}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {{name: high}}
value: 100
{jobs}
"""

JOB = """---
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  labels: {{kueue.x-k8s.io/queue-name: q{extra_labels}}}
  annotations: {{gpusim.io/submit-at: {at}}}
spec:
  parallelism: {pods}
  completions: {pods}
  template:
    metadata:
      annotations: {{gpusim.io/duration: 10m{annotations}}}
    spec:
      restartPolicy: Never
      nodeSelector: {{{selector}}}
      containers: [{{name: c, image: i, resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}}}]
"""


def scenario(tmp_path, jobs: str, topology: str = "racks", extra: str = "") -> str:
    p = tmp_path / "s.yaml"
    p.write_text(SCENARIO.format(topology=topology, jobs=jobs) + extra)
    return str(p)


def job(name: str, pods: int, gpus: int = 8, at: str = "0s", annotations: str = "", labels: str = "",
        selector: str = "") -> str:
    return JOB.format(name=name, pods=pods, gpus=gpus, at=at, annotations=annotations, extra_labels=labels,
                      selector=selector)


RACK_REQ = ", kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-rack"


def test_implied_tas_in_a_tas_only_cluster_queue_uses_least_free_capacity(tmp_path):
    """No annotation, but every flavor of the ClusterQueue is a TAS flavor: TAS is implied (unconstrained, at
    the lowest level, LeastFreeCapacity) and the pods get the unconstrained annotation."""
    r = gs.run(scenario(tmp_path, job("small", 1, gpus=2) + job("next", 1, gpus=2, at="5s")))
    rows = {row["workload"].split("-")[1]: row for row in gs.topology_assignments(r)}
    # LeastFreeCapacity: the second pod goes to the node the first one already half-fills
    assert rows["small"]["domains"][0]["values"] == rows["next"]["domains"][0]["values"]
    pod = next(p for p in r.api.list("Pod") if p.metadata.name.startswith("next"))
    assert pod.metadata.annotations["kueue.x-k8s.io/podset-unconstrained-topology"] == "true"


def test_preemption_frees_the_topology_domain(tmp_path):
    """A high-priority Job that needs a whole rack preempts the low-priority pods that break every rack,
    although the quota alone would fit it (TAS placement fails → Preempt)."""
    jobs = (job("low-a", 1, at="0s") + job("low-b", 1, at="1s", selector="kubernetes.io/hostname: r2-0") +
            job("big", 2, at="30s", annotations=RACK_REQ, labels=", kueue.x-k8s.io/priority-class: high"))
    r = gs.run(scenario(tmp_path, jobs, extra=OBSERVABILITY))
    rows = {row["name"].split("-")[1]: row for row in gs.kueue_workloads(r)}
    assert rows["big"]["admittedAt"] is not None
    preempted = [e for e in r.events.log if e.reason == "Preempted"]
    assert len(preempted) == 1 and "prioritization in the ClusterQueue" in preempted[0].message
    assert preempted[0].object.name.startswith("job-low-b")       # the most recently admitted candidate
    big = next(row for row in gs.topology_assignments(r) if row["workload"].startswith("job-big"))
    assert [d["path"] for d in big["domains"]] == ["r2/r2-0", "r2/r2-1"]
    first = next(e for e in r.events.log if e.object.name.startswith("job-big") and e.type == "Warning")
    assert first.reason == "WaitingForPreemptedWorkloads"
    assert first.message.startswith('couldn\'t assign flavors to pod set main: topology "racks" allows to fit only '
                                    "1 out of 2 pod(s)")


def test_a_non_tas_podset_skips_tas_flavors(tmp_path):
    """A ClusterQueue with a TAS and a plain flavor: a PodSet without a topology request takes the plain one
    (checkPodSetAndFlavorMatchForTAS: the TAS flavor "supports only TopologyAwareScheduling")."""
    text = SCENARIO.format(topology="racks", jobs=job("plain", 1)).replace(
        "flavors: [{name: tas, resources: [{name: nvidia.com/gpu, nominalQuota: 64}]}]",
        "flavors: [{name: tas, resources: [{name: nvidia.com/gpu, nominalQuota: 64}]}, "
        "{name: plain, resources: [{name: nvidia.com/gpu, nominalQuota: 64}]}]")
    text += "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: plain}\n"
    (tmp_path / "s.yaml").write_text(text)
    r = gs.run(str(tmp_path / "s.yaml"))
    wl = r.api.list("Workload.kueue.x-k8s.io")[0]
    assert wl.status.admission.pod_set_assignments[0].flavors == {"nvidia.com/gpu": "plain"}
    assert wl.status.admission.pod_set_assignments[0].topology_assignment is None


@pytest.mark.parametrize("jobs,topology,message", [
    (job("bad", 2, annotations=", kueue.x-k8s.io/podset-slice-size: \"2\"" + RACK_REQ), "racks",
     "spec.template.metadata.annotations[kueue.x-k8s.io/podset-slice-size]: Forbidden: may not be set when "
     "'kueue.x-k8s.io/podset-slice-required-topology' is not specified"),
    (job("ok", 1), "missing", 'spec.topologyName: Not found: "missing": no Topology "missing" in the scenario'),
])
def test_invalid_input_names_the_field(tmp_path, jobs, topology, message):
    with pytest.raises(InputError) as e:
        gs.run(scenario(tmp_path, jobs, topology))
    assert message in str(e.value)


# --- flavorassigner_test.go TestIsNoFitDueToCapacityAndLimits, the TAS rows (UnadmittedWorkloadsObservability on) ---
NOFIT_TAS = OBSERVABILITY + """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {name: topology-tas}
spec: {levels: [{nodeLabel: rack}]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: flavor-a}
spec: {nodeLabels: {type: a}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: flavor-b}
spec: {nodeTaints: [{key: key, value: val, effect: NoSchedule}]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: flavor-tas}
spec: {topologyName: topology-tas}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
%s
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: default}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: wl, namespace: default}
spec:
  queueName: q
  podSets:
  - name: main
    count: 1
    %s
    template:
      spec:
        %s
        containers: [{name: c, image: x, resources: {requests: {cpu: "%s"}}}]
"""
CQ_FLAVORS = "    - {name: %s, resources: [{name: cpu, nominalQuota: 2}]}"


@pytest.mark.parametrize("name, flavors, topology, selector, cpu, want", [
    ("TAS not supported", ("flavor-a",), "topologyRequest: {required: rack}", "", "1", "NoMatchingFlavor"),
    ("TAS level not supported", ("flavor-a", "flavor-b", "flavor-tas"), "topologyRequest: {required: block}", "",
     "1", "NoMatchingFlavor"),
    ("TAS only flavor mismatch", ("flavor-a", "flavor-b", "flavor-tas"), "", "nodeSelector: {type: wrong}", "1",
     "NoMatchingFlavor"),
    ("tas placement fails", ("flavor-a", "flavor-b", "flavor-tas"), "topologyRequest: {required: rack}", "", "1",
     "TopologyPlacementFailed"),
    ("tas placement fails, cohort has no capacity", ("flavor-a", "flavor-b", "flavor-tas"),
     "topologyRequest: {required: rack}", "", "3", "ExceedsMaxQuota"),
])
def test_no_fit_reason_tas_rows(name, flavors, topology, selector, cpu, want):
    """No node carries the rack label, so a TAS placement never fits; the other flavors are not TAS flavors
    (NoMatchingFlavor for a PodSet that asks for TAS), flavor-b's taint is not tolerated."""
    text = NOFIT_TAS % ("\n".join(CQ_FLAVORS % f for f in flavors), topology, selector, cpu)
    r = gs.run(text=text, until="1m")
    qr = r.api.get("Workload.kueue.x-k8s.io", "default", "wl").condition("QuotaReserved")
    assert (qr.status, qr.reason) == ("False", want)
