"""The kubelet Topology Manager: bitmasks, hint merging, policies, scopes, admission, and the device
manager as hint provider.

Rows ported from kubernetes/kubernetes ``pkg/kubelet/cm/topologymanager`` (v1.36 shape):
- ``bitmask/bitmask_test.go`` @ 05c351a9037b: TestNewEmptyiBitMask, TestNewBitMask, TestAdd, TestRemove,
  TestAnd, TestOr, TestFill, TestIsEmpty, TestIsSet, TestAnySet, TestIsEqual, TestCount, TestGetBits,
  TestIsNarrowerThan, TestIterateBitMasks.
- ``policy_test.go`` @ 2f3d1d323fac: commonPolicyMergeTestCases, (*bestEffortPolicy).mergeTestCases,
  mergeTestCasesNoPolicies, mergeTestCasesClosestNUMA, (*singleNumaNodePolicy).mergeTestCases,
  TestMaxOfMinAffinityCounts, TestCompareHintsNarrowest, commonNUMAInfo{Two,Four,Eight}Nodes; run as
  policy_best_effort_test.go TestPolicyBestEffortMerge / ...MergeClosestNUMA, policy_restricted_test.go
  TestPolicyRestrictedMerge / ...MergeClosestNUMA, policy_single_numa_node_test.go
  TestPolicySingleNumaNodeMerge and TestPolicySingleNumaNodeFilterHints (@ 95f08499d652), and the
  CanAdmitPodResult tests of each policy file.
- ``policy_options_test.go`` @ 3ee28e9701bf: TestNewTopologyManagerOptions, TestPolicyDefaultsAvailable,
  TestPolicyOptionsAvailable (rows adapted to 1.36, where both options are GA).
- ``topology_manager_test.go`` @ a0d8ee7954d1: TestNewManager, TestManagerScope, TestAdmit.
- ``scope_container_test.go`` / ``scope_pod_test.go``: TestContainerAccumulateProvidersHints,
  TestPodAccumulateProvidersHints.
- ``pkg/kubelet/cm/devicemanager/topology_hints_test.go`` @ 9efa0b0228c0: TestGetTopologyHints.
"""
from __future__ import annotations

import pytest

from gpusim.api.core_v1 import Container, Pod, PodSpec, ResourceRequirements
from gpusim.api.meta import ObjectMeta
from gpusim.node.devicemanager_affinity import DeviceManagerHintProvider, DeviceState
from gpusim.node.topologymanager import (BestEffortPolicy, BitMask, ContainerScope, HintMerger, NonePolicy, NUMAInfo,
                                         PodScope, PolicyOptions, RestrictedPolicy, SingleNumaNodePolicy,
                                         TopologyHint, TopologyManagerError, admit, check_policy_option_available,
                                         filter_single_numa_hints, iterate_bitmasks, manager_from_kubelet_config,
                                         max_of_min_affinity_counts, new_manager, new_policy_options,
                                         validate_kubelet_config)

E = "empty"      # NewTestBitMask() / NewEmptyBitMask(): a non-nil mask with no bits


def H(bits, preferred):
    """TopologyHint from (bits, preferred): bits a tuple, an int, None (nil mask) or E (empty mask)."""
    if bits is None:
        return TopologyHint(None, preferred)
    if bits == E:
        return TopologyHint(BitMask(), preferred)
    bits = (bits,) if isinstance(bits, int) else bits
    return TopologyHint(BitMask.new(*bits), preferred)


def providers(spec):
    """hp []HintProvider → the provider hints: None (mockHintProvider{}), {} or {resource: hints|None}."""
    out = []
    for p in spec:
        if p is None:
            out.append(None)
        else:
            out.append({r: (None if hs is None else [H(*h) for h in hs]) for r, hs in p.items()})
    return out


T, F = True, False
ALL = "all"      # expected mask = NewTestBitMask(numaNodes...)

# --- bitmask_test.go ----------------------------------------------------------------------------------
@pytest.mark.parametrize("bits,expected", [((), "00"), ((0,), "01"), ((1,), "10"), ((0, 1), "11")])
def test_new_bitmask(bits, expected):
    assert str(BitMask.new(*bits)) == expected


@pytest.mark.parametrize("bits,expected", [((0,), "01"), ((1,), "10"), ((0, 1), "11"), ((-1, 64), "00")])
def test_add(bits, expected):
    assert str(BitMask().add(*bits)) == expected


@pytest.mark.parametrize("bits_set,bits_remove,expected", [
    ((0,), (0,), "00"), ((0, 1), (1,), "01"), ((0, 1), (0, 1), "00"), ((0,), (-1, 64), "01")])
def test_remove(bits_set, bits_remove, expected):
    assert str(BitMask.new(*bits_set).remove(*bits_remove)) == expected


@pytest.mark.parametrize("masks,expected", [
    ([(0, 1), (0, 1)], "11"), ([(0, 1), (1,)], "10"), ([(0,), (0, 1)], "01"), ([(0, 1), (0, 1), (1,)], "10"),
    ([(0,), (0,), (1,), (0, 1)], "00"), ([(0, 1, 2, 3), (1, 2, 3), (2, 3), (3,)], "1000")])
def test_and(masks, expected):
    ms = [BitMask.new(*m) for m in masks]
    assert str(ms[0].and_(*ms)) == expected


@pytest.mark.parametrize("masks,expected", [
    ([(0,), ()], "01"), ([(1,), (1,)], "10"), ([(0,), (1,)], "11"), ([(0, 1), (0, 1)], "11"),
    ([(0,), (1,), (0, 1)], "11"), ([(3,), (2,), (1,), (0,)], "1111")])
def test_or(masks, expected):
    ms = [BitMask.new(*m) for m in masks]
    assert str(ms[0].or_(*ms)) == expected


def test_fill_empty_set_count_bits():
    assert str(BitMask.fill()) == "1" * 64
    assert BitMask().is_empty() and not BitMask.new(0).is_empty()
    assert [BitMask.new(*b).count() for b in ((), (0,), (0, 1))] == [0, 1, 2]
    assert [BitMask.new(*b).get_bits() for b in ((), (0,), (0, 1))] == [[], [0], [0, 1]]
    with pytest.raises(ValueError, match="bit number must be in range 0-63"):
        BitMask.new(64)


@pytest.mark.parametrize("mask,bit,expected", [((), 0, F), ((0,), 0, T), ((0, 1), 1, T), ((0, 1), 64, F)])
def test_is_set(mask, bit, expected):
    assert BitMask.new(*mask).is_set(bit) is expected


@pytest.mark.parametrize("mask,bits,expected", [
    ((), (0, 1), F), ((0,), (0, 1), T), ((0, 1), (0, 1), T), ((0, 1), (64, 65), F), ((1, 2), (0, 3), F)])
def test_any_set(mask, bits, expected):
    assert BitMask.new(*mask).any_set(bits) is expected


@pytest.mark.parametrize("first,second,expected", [
    ((), (), T), ((), (0,), F), ((0,), (0,), T), ((0,), (1,), F), ((0, 1), (0, 1), T)])
def test_is_equal(first, second, expected):
    assert BitMask.new(*first).is_equal(BitMask.new(*second)) is expected


@pytest.mark.parametrize("first,second,expected", [((0,), (0, 1), T), ((0, 1), (0,), F), ((0,), (1,), T), ((1,), (0,), F)])
def test_is_narrower_than(first, second, expected):
    assert BitMask.new(*first).is_narrower_than(BitMask.new(*second)) is expected


@pytest.mark.parametrize("numbits", [1, 2, 4, 8])
def test_iterate_bitmasks(numbits):
    masks = list(iterate_bitmasks(list(range(numbits))))
    assert len(masks) == (1 << numbits) - 1
    assert [m.count() for m in masks] == sorted(m.count() for m in masks)   # by size, then in order


# --- policy_test.go tables ----------------------------------------------------------------------------
COMMON = [
    ("Two providers, 1 hint each, same mask, both preferred 1/2", [{"resource1": [(0, T)]}, {"resource2": [(0, T)]}], (0, T)),
    ("Two providers, 1 hint each, same mask, both preferred 2/2", [{"resource1": [(1, T)]}, {"resource2": [(1, T)]}], (1, T)),
    ("Two providers, 1 no hints, 1 single hint preferred 1/2", [None, {"resource": [(0, T)]}], (0, T)),
    ("Two providers, 1 no hints, 1 single hint preferred 2/2", [None, {"resource": [(1, T)]}], (1, T)),
    ("Two providers, 1 with 2 hints, 1 with single hint matching 1/2",
     [{"resource1": [(0, T), (1, T)]}, {"resource2": [(0, T)]}], (0, T)),
    ("Two providers, 1 with 2 hints, 1 with single hint matching 2/2",
     [{"resource1": [(0, T), (1, T)]}, {"resource2": [(1, T)]}], (1, T)),
    ("Two providers, both with 2 hints, matching narrower preferred hint from both",
     [{"resource1": [(0, T), (1, T)]}, {"resource2": [(0, T), ((0, 1), F)]}], (0, T)),
    ("Ensure less narrow preferred hints are chosen over narrower non-preferred hints",
     [{"resource1": [(1, T), ((0, 1), F)]}, {"resource2": [(0, T), (1, T), ((0, 1), F)]}], (1, T)),
    ("Multiple resources, same provider",
     [{"resource1": [(1, T), ((0, 1), F)], "resource2": [(0, T), (1, T), ((0, 1), F)]}], (1, T)),
]
BEST_EFFORT = [
    ("Two providers, 2 hints each, same mask (some with different bits), same preferred",
     [{"resource1": [((0, 1), T), ((0, 2), T)]}, {"resource2": [((0, 1), T), ((0, 2), T)]}], ((0, 1), T)),
    ("TopologyHint not set", [], (ALL, T)),
    ("HintProvider returns empty non-nil map[string][]TopologyHint", [{}], (ALL, T)),
    ("HintProvider returns -nil map[string][]TopologyHint from provider", [{"resource": None}], (ALL, T)),
    ("HintProvider returns empty non-nil map[string][]TopologyHint from provider", [{"resource": []}], (ALL, F)),
    ("Single TopologyHint with Preferred as true and NUMANodeAffinity as nil", [{"resource": [(None, T)]}], (ALL, T)),
    ("Single TopologyHint with Preferred as false and NUMANodeAffinity as nil", [{"resource": [(None, F)]}], (ALL, F)),
    ("Two providers, 1 hint each, no common mask", [{"resource1": [(0, T)]}, {"resource2": [(1, T)]}], (ALL, F)),
    ("Two providers, 1 hint each, same mask, 1 preferred, 1 not 1/2", [{"resource1": [(0, T)]}, {"resource2": [(0, F)]}], (0, F)),
    ("Two providers, 1 hint each, same mask, 1 preferred, 1 not 2/2", [{"resource1": [(1, T)]}, {"resource2": [(1, F)]}], (1, F)),
    ("Two providers, 1 hint each, 1 wider mask, both preferred 1/2",
     [{"resource1": [(0, T)]}, {"resource2": [((0, 1), T)]}], (0, F)),
    ("Two providers, 1 with 2 hints, 1 with single non-preferred hint matching",
     [{"resource1": [(0, T), (1, T)]}, {"resource2": [((0, 1), F)]}], (0, F)),
    ("Two providers, 1 hint each, 1 wider mask, both preferred 2/2",
     [{"resource1": [(1, T)]}, {"resource2": [((0, 1), T)]}], (1, F)),
    ("bestNonPreferredAffinityCount (1)",
     [{"resource1": [((0, 1, 2, 3), F), ((0, 1), F)]}, {"resource2": [((0, 1), F)]}], ((0, 1), F)),
    ("bestNonPreferredAffinityCount (2)",
     [{"resource1": [((0, 1, 2, 3), F), ((0, 1), F)]}, {"resource2": [((0, 3), F)]}], ((0, 3), F)),
    ("bestNonPreferredAffinityCount (3)",
     [{"resource1": [((0, 1, 2, 3), F), ((0, 1), F)]}, {"resource2": [((1, 2), F)]}], ((1, 2), F)),
    ("bestNonPreferredAffinityCount (4)",
     [{"resource1": [((0, 1, 2, 3), F), ((0, 1), F)]}, {"resource2": [((2, 3), F)]}], ((2, 3), F)),
]
_R1_WIDE = {"resource1": [((0, 1, 2, 3), F), ((0, 1), F)]}
NO_POLICIES = [
    ("bestNonPreferredAffinityCount (5)", [_R1_WIDE, {"resource2": [((1, 2), F), ((2, 3), F)]}], ((1, 2), F)),
    ("bestNonPreferredAffinityCount (6)",
     [_R1_WIDE, {"resource2": [((1, 2, 3), F), ((1, 2), F), ((1, 3), F), ((2, 3), F)]}], ((1, 2), F)),
]
CLOSEST_NUMA = [
    ("Two providers, 2 hints each, same mask (some with different bits), same preferred",
     [{"resource1": [((0, 4), T), ((0, 2), T)]}, {"resource2": [((0, 4), T), ((0, 2), T)]}], ((0, 2), T)),
    ("Two providers, 2 hints each, different mask",
     [{"resource1": [(4, T), ((0, 2), T)]}, {"resource2": [(4, T), ((0, 2), T)]}], (4, T)),
    ("bestNonPreferredAffinityCount (5)", [_R1_WIDE, {"resource2": [((1, 2), F), ((2, 3), F)]}], ((2, 3), F)),
    ("bestNonPreferredAffinityCount (6)",
     [_R1_WIDE, {"resource2": [((1, 2, 3), F), ((1, 2), F), ((1, 3), F), ((2, 3), F)]}], ((2, 3), F)),
]
SINGLE_NUMA = [
    ("TopologyHint not set", [], (None, T)),
    ("HintProvider returns empty non-nil map[string][]TopologyHint", [{}], (None, T)),
    ("HintProvider returns -nil map[string][]TopologyHint from provider", [{"resource": None}], (None, T)),
    ("HintProvider returns empty non-nil map[string][]TopologyHint from provider", [{"resource": []}], (None, F)),
    ("Single TopologyHint with Preferred as true and NUMANodeAffinity as nil", [{"resource": [(None, T)]}], (None, T)),
    ("Single TopologyHint with Preferred as false and NUMANodeAffinity as nil", [{"resource": [(None, F)]}], (None, F)),
    ("Two providers, 1 hint each, no common mask", [{"resource1": [(0, T)]}, {"resource2": [(1, T)]}], (None, F)),
    ("Two providers, 1 hint each, same mask, 1 preferred, 1 not 1/2", [{"resource1": [(0, T)]}, {"resource2": [(0, F)]}], (None, F)),
    ("Two providers, 1 hint each, same mask, 1 preferred, 1 not 2/2", [{"resource1": [(1, T)]}, {"resource2": [(1, F)]}], (None, F)),
    ("Two providers, 1 with 2 hints, 1 with single non-preferred hint matching",
     [{"resource1": [(0, T), (1, T)]}, {"resource2": [((0, 1), F)]}], (None, F)),
    ("Single NUMA hint generation", [{"resource1": [((0, 1), T)], "resource2": [(0, T), (1, T), ((0, 1), F)]}], (None, F)),
    ("One no-preference provider", [{"resource1": [(0, T), (1, T), ((0, 1), F)]}, None], (0, T)),
]

TWO_NODES = NUMAInfo([0, 1], {0: [10, 11], 1: [11, 10]})
FOUR_NODES = NUMAInfo([0, 1, 2, 3], {0: [10, 11, 12, 12], 1: [11, 10, 12, 12], 2: [12, 12, 10, 11],
                                      3: [12, 12, 11, 10]})
EIGHT_NODES = NUMAInfo(list(range(8)), {
    0: [10, 11, 12, 12, 30, 30, 30, 30], 1: [11, 10, 12, 12, 30, 30, 30, 30], 2: [12, 12, 10, 11, 30, 30, 30, 30],
    3: [12, 12, 11, 10, 30, 30, 30, 30], 4: [30, 30, 30, 30, 10, 11, 12, 12], 5: [30, 30, 30, 30, 11, 10, 12, 12],
    6: [30, 30, 30, 30, 12, 12, 10, 11], 7: [30, 30, 30, 30, 12, 12, 13, 10]})


def expected_hint(exp, numa: NUMAInfo) -> TopologyHint:
    bits, pref = exp
    return H(tuple(numa.nodes), pref) if bits == ALL else H(bits, pref)


def _cases(*tables):
    return [pytest.param(name, hp, exp, id=name) for table in tables for name, hp, exp in table]


MERGE_SUITES = {
    # test function → (policy class, NUMA info, options, tables)
    "TestPolicyBestEffortMerge": (BestEffortPolicy, FOUR_NODES, PolicyOptions(), (COMMON, BEST_EFFORT, NO_POLICIES)),
    "TestPolicyBestEffortMergeClosestNUMA": (BestEffortPolicy, EIGHT_NODES, PolicyOptions(prefer_closest_numa=True),
                                             (COMMON, BEST_EFFORT, CLOSEST_NUMA)),
    "TestPolicyRestrictedMerge": (RestrictedPolicy, FOUR_NODES, PolicyOptions(), (COMMON, BEST_EFFORT, NO_POLICIES)),
    "TestPolicyRestrictedMergeClosestNUMA": (RestrictedPolicy, EIGHT_NODES, PolicyOptions(prefer_closest_numa=True),
                                             (COMMON, BEST_EFFORT, CLOSEST_NUMA)),
    "TestPolicySingleNumaNodeMerge": (SingleNumaNodePolicy, FOUR_NODES, PolicyOptions(), (COMMON, SINGLE_NUMA)),
}


@pytest.mark.parametrize("suite,name,hp,exp", [
    pytest.param(suite, name, hp, exp, id=f"{suite}:{name}")
    for suite, (_, _, _, tables) in MERGE_SUITES.items() for table in tables for name, hp, exp in table])
def test_policy_merge(suite, name, hp, exp):
    cls, numa, opts, _ = MERGE_SUITES[suite]
    policy = cls(numa, opts)
    got, admit_ = policy.merge(providers(hp))
    want = expected_hint(exp, numa)
    assert got.is_equal(want), f"{got} != {want}"
    assert admit_ is (True if cls is BestEffortPolicy else want.preferred)


@pytest.mark.parametrize("cls,h,expected", [
    (BestEffortPolicy, H(None, F), T), (BestEffortPolicy, H(None, T), T),
    (RestrictedPolicy, H(None, F), F), (RestrictedPolicy, H(None, T), T),
    (SingleNumaNodePolicy, H(None, F), F)])
def test_can_admit_pod_result(cls, h, expected):
    assert cls(TWO_NODES).can_admit_pod_result(h) is expected


def test_policy_names_and_none_merge():
    assert [NonePolicy().name(), BestEffortPolicy(TWO_NODES).name(), RestrictedPolicy(TWO_NODES).name(),
            SingleNumaNodePolicy(TWO_NODES).name()] == ["none", "best-effort", "restricted", "single-numa-node"]
    assert NonePolicy().merge(providers([{"resource": [((0, 1), F)]}])) == (TopologyHint(), True)


@pytest.mark.parametrize("hints,expected", [
    ([], 0), ([[(E, T)]], 0), ([[(0, T)]], 1), ([[((0, 1), T)]], 2), ([[((0, 1), T), ((0, 1, 2), T)]], 2),
    ([[((0, 1), T), ((0, 1, 2), T)], [((0, 1, 2), T)]], 3),
    ([[((0, 1), T), ((0, 1, 2), T)], [((0, 1, 2), T), ((0, 1, 2, 3), T)]], 3)])
def test_max_of_min_affinity_counts(hints, expected):
    assert max_of_min_affinity_counts([[H(*h) for h in hs] for hs in hints]) == expected


@pytest.mark.parametrize("description,best_count,current,candidate,expected", [
    ("candidate.NUMANodeAffinity.Count() == 0 (1)", -1, None, (E, F), "current"),
    ("candidate.NUMANodeAffinity.Count() == 0 (2)", -1, (E, T), (E, F), "current"),
    ("current == nil (1)", -1, None, (0, T), "candidate"),
    ("current == nil (2)", -1, None, (0, F), "candidate"),
    ("!current.Preferred && candidate.Preferred", -1, (0, F), (0, T), "candidate"),
    ("current.Preferred && !candidate.Preferred", -1, (0, T), (0, F), "current"),
    ("current.Preferred && candidate.Preferred (1)", -1, (0, T), (0, T), "current"),
    ("current.Preferred && candidate.Preferred (2)", -1, ((0, 1), T), (0, T), "candidate"),
    ("current.Preferred && candidate.Preferred (3)", -1, (0, T), ((0, 1), T), "current"),
    ("!current.Preferred && !candidate.Preferred (1.1)", 1, ((0, 1), F), ((0, 1), F), "current"),
    ("!current.Preferred && !candidate.Preferred (1.2)", 1, ((1, 2), F), ((0, 1), F), "candidate"),
    ("!current.Preferred && !candidate.Preferred (1.3)", 1, ((0, 1), F), ((1, 2), F), "current"),
    ("!current.Preferred && !candidate.Preferred (2.1)", 2, ((0, 1), F), (0, F), "current"),
    ("!current.Preferred && !candidate.Preferred (2.2)", 2, ((0, 1), F), ((0, 1), F), "current"),
    ("!current.Preferred && !candidate.Preferred (2.3)", 2, ((1, 2), F), ((0, 1), F), "candidate"),
    ("!current.Preferred && !candidate.Preferred (2.4)", 2, ((0, 1), F), ((1, 2), F), "current"),
    ("!current.Preferred && !candidate.Preferred (3a)", 2, (0, F), ((0, 1, 2), F), "current"),
    ("!current.Preferred && !candidate.Preferred (3b)", 2, (0, F), ((0, 1), F), "candidate"),
    ("!current.Preferred && !candidate.Preferred (3ca.1)", 3, (0, F), ((0, 1), F), "candidate"),
    ("!current.Preferred && !candidate.Preferred (3ca.2)", 3, (0, F), ((1, 2), F), "candidate"),
    ("!current.Preferred && !candidate.Preferred (3ca.3)", 4, ((0, 1), F), ((1, 2, 3), F), "candidate"),
    ("!current.Preferred && !candidate.Preferred (3cb)", 4, ((1, 2, 3), F), ((0, 1), F), "current"),
    ("!current.Preferred && !candidate.Preferred (3cc.1)", 4, ((0, 1, 2), F), ((0, 1, 2), F), "current"),
    ("!current.Preferred && !candidate.Preferred (3cc.2)", 4, ((0, 1, 2), F), ((1, 2, 3), F), "current"),
    ("!current.Preferred && !candidate.Preferred (3cc.3)", 4, ((1, 2, 3), F), ((0, 1, 2), F), "candidate"),
])
def test_compare_hints_narrowest(description, best_count, current, candidate, expected):
    merger = HintMerger(NUMAInfo([]), [], "best-effort", PolicyOptions())
    merger.best_non_preferred_affinity_count = best_count
    cur = None if current is None else H(*current)
    cand = H(*candidate)
    result = merger.compare(cur, cand)
    assert result is (cur if expected == "current" else cand)


@pytest.mark.parametrize("name,all_resources,expected", [
    ("filter empty resources", [], []),
    ("filter hints with nil socket mask 1/2", [[(None, F)], [(None, T)]], [[], [(None, T)]]),
    ("filter hints with nil socket mask 2/2", [[(0, T), (None, F)], [(1, T), (None, T)]],
     [[(0, T)], [(1, T), (None, T)]]),
    ("filter hints with empty resource socket mask", [[(1, T), (0, T), (None, F)], []], [[(1, T), (0, T)], []]),
    ("filter hints with wide sockemask",
     [[(0, T), (1, T), ((1, 2), F), ((0, 1, 2), F), (None, F)], [((1, 2), F), ((0, 1, 2), F), ((0, 2), F), (3, F)],
      [((1, 2), F), ((0, 1, 2), F), ((0, 2), F)]],
     [[(0, T), (1, T)], [], []]),
])
def test_single_numa_node_filter_hints(name, all_resources, expected):
    got = filter_single_numa_hints([[H(*h) for h in hs] for hs in all_resources])
    assert got == [[H(*h) for h in hs] for hs in expected]


# --- policy_options_test.go ---------------------------------------------------------------------------
@pytest.mark.parametrize("description,options,expected,error", [
    ("return TopologyManagerOptions with PreferClosestNUMA set to true",
     {"prefer-closest-numa-nodes": "true", "max-allowable-numa-nodes": "8"}, PolicyOptions(True, 8), None),
    ("return TopologyManagerOptions with MaxAllowableNUMANodes set to 12", {"max-allowable-numa-nodes": "12"},
     PolicyOptions(False, 12), None),
    ("return empty TopologyManagerOptions", {}, PolicyOptions(False, 8), None),
    ("fail to parse options with error PreferClosestNUMANodes", {"prefer-closest-numa-nodes": "not a boolean"}, None,
     "bad value for option"),
    ("fail to parse options with error MaxAllowableNUMANodes", {"max-allowable-numa-nodes": "can't parse to int"},
     None, "unable to convert policy option to integer"),
    ("max-allowable-numa-nodes below the default", {"max-allowable-numa-nodes": "4"}, None,
     'the minimum value of "max-allowable-numa-nodes" should not be less than 8'),
    ("unknown option", {"this-option-does-not-exist": "true"}, None,
     'unknown Topology Manager Policy option: "this-option-does-not-exist"'),
])
def test_new_policy_options(description, options, expected, error):
    if error:
        with pytest.raises(TopologyManagerError, match=error):
            new_policy_options(options)
    else:
        assert new_policy_options(options) == expected


@pytest.mark.parametrize("option,alpha,beta,gates,available", [
    ("prefer-closest-numa-nodes", frozenset(), frozenset(), {"TopologyManagerPolicyBetaOptions": False}, True),
    ("max-allowable-numa-nodes", frozenset(), frozenset(), {"TopologyManagerPolicyAlphaOptions": False}, True),
    ("this-option-does-not-exist", frozenset(), frozenset(), {"TopologyManagerPolicyBetaOptions": True}, False),
    ("fancy-alpha-option", frozenset({"fancy-alpha-option"}), frozenset(), {"TopologyManagerPolicyAlphaOptions": True}, True),
    ("fancy-alpha-option", frozenset({"fancy-alpha-option"}), frozenset(), {}, False),
    ("fancy-new-option", frozenset(), frozenset({"fancy-new-option"}), {"TopologyManagerPolicyBetaOptions": True}, True),
    ("fancy-new-option", frozenset(), frozenset({"fancy-new-option"}), {"TopologyManagerPolicyBetaOptions": False}, False),
])
def test_policy_options_available(option, alpha, beta, gates, available):
    try:
        check_policy_option_available(option, gates, alpha, beta)
        ok = True
    except TopologyManagerError:
        ok = False
    assert ok is available


# --- topology_manager_test.go -------------------------------------------------------------------------
@pytest.mark.parametrize("description,policy,options,nodes,distances,expected_policy,error", [
    ("Policy is set to none", "none", None, [0], None, "none", None),
    ("Policy is set to best-effort", "best-effort", None, [0], None, "best-effort", None),
    ("Policy is set to restricted", "restricted", None, [0], None, "restricted", None),
    ("Policy is set to single-numa-node", "single-numa-node", None, [0], None, "single-numa-node", None),
    ("Policy is set to unknown", "unknown", None, [0], None, None, 'unknown policy: "unknown"'),
    ("Unknown policy name best-effort policy", "best-effort", {"unknown-option": "true"}, [0], None, None,
     "unknown Topology Manager Policy option:"),
    ("Unknown policy name restricted policy", "restricted", {"unknown-option": "true"}, [0], None, None,
     "unknown Topology Manager Policy option:"),
    ("can't get NUMA distances", "best-effort", {"prefer-closest-numa-nodes": "true"}, [0], None, None,
     "error getting NUMA distances from cadvisor"),
    ("more than 8 NUMA nodes", "best-effort", None, list(range(9)), None, None,
     "unsupported on machines with more than 8 NUMA Nodes"),
    ("9 NUMA nodes with max-allowable-numa-nodes 9", "best-effort", {"max-allowable-numa-nodes": "9"},
     list(range(9)), None, "best-effort", None),
])
def test_new_manager(description, policy, options, nodes, distances, expected_policy, error):
    if error:
        with pytest.raises(TopologyManagerError, match=error):
            new_manager(nodes, policy, "container", options, distances)
    else:
        assert new_manager(nodes, policy, "container", options, distances).policy.name() == expected_policy


@pytest.mark.parametrize("scope,expected,error", [
    ("container", "container", None), ("pod", "pod", None), ("unknown", None, 'unknown scope: "unknown"')])
def test_manager_scope(scope, expected, error):
    if error:
        with pytest.raises(TopologyManagerError, match=error):
            new_manager([], "best-effort", scope)
    else:
        assert new_manager([], "best-effort", scope).scope.name == expected


class MockHintProvider:
    """mockHintProvider: the same hints for any container or pod; Allocate records the stored hint."""

    def __init__(self, th=None, store=None):
        self.th, self.store, self.allocated = th, store, []

    def get_topology_hints(self, pod, container):
        return self.th

    def get_pod_topology_hints(self, pod):
        return self.th

    def allocate(self, pod, container):
        self.allocated.append(container.name)


def make_pod(containers, init=(), uid="pod-uid"):
    def c(spec):
        name, limits = spec
        return Container(name=name, resources=ResourceRequirements(limits=dict(limits)))
    return Pod(metadata=ObjectMeta(name="p", namespace="default", uid=uid),
               spec=PodSpec(containers=[c(s) for s in containers], init_containers=[c(s) for s in init]))


PREFERRED_0 = {"resource": [(0, T), ((0, 1), F)]}
MORE_PREFERRED = {"resource": [(0, T), (1, T), ((0, 1), F)]}
NOT_PREFERRED = {"resource": [((0, 1), F)]}


@pytest.mark.parametrize("name,policy,hp,expected", [
    ("QOSClass set as BestEffort. None Policy. No Hints.", "none", [], T),
    ("QOSClass set as Guaranteed. None Policy. No Hints.", "none", [], T),
    ("QOSClass set as BestEffort. single-numa-node Policy. No Hints.", "single-numa-node", [None], T),
    ("QOSClass set as BestEffort. Restricted Policy. No Hints.", "restricted", [None], T),
    ("QOSClass set as Guaranteed. BestEffort Policy. Preferred Affinity.", "best-effort", [PREFERRED_0], T),
    ("QOSClass set as Guaranteed. BestEffort Policy. More than one Preferred Affinity.", "best-effort", [MORE_PREFERRED], T),
    ("QOSClass set as Burstable. BestEffort Policy. More than one Preferred Affinity.", "best-effort", [MORE_PREFERRED], T),
    ("QOSClass set as Guaranteed. BestEffort Policy. No Preferred Affinity.", "best-effort", [NOT_PREFERRED], T),
    ("QOSClass set as Guaranteed. Restricted Policy. Preferred Affinity.", "restricted", [PREFERRED_0], T),
    ("QOSClass set as Burstable. Restricted Policy. Preferred Affinity.", "restricted", [PREFERRED_0], T),
    ("QOSClass set as Guaranteed. Restricted Policy. More than one Preferred affinity.", "restricted", [MORE_PREFERRED], T),
    ("QOSClass set as Burstable. Restricted Policy. More than one Preferred affinity.", "restricted", [MORE_PREFERRED], T),
    ("QOSClass set as Guaranteed. Restricted Policy. No Preferred affinity.", "restricted", [NOT_PREFERRED], F),
    ("QOSClass set as Burstable. Restricted Policy. No Preferred affinity.", "restricted", [NOT_PREFERRED], F),
])
@pytest.mark.parametrize("scope", ["container", "pod"])
def test_admit(name, policy, hp, expected, scope):
    pod = make_pod([("c0", {})])
    hints = providers(hp)
    ok, reason, message = admit(pod, [MockHintProvider(h) for h in hints], [0, 1], policy, scope)
    assert ok is expected
    if not ok:
        assert (reason, message) == ("TopologyAffinityError", "Resources cannot be allocated with Topology locality")


@pytest.mark.parametrize("name,hp,expected", [
    ("TopologyHint not set", [], []),
    ("HintProvider returns empty non-nil map[string][]TopologyHint", [{}], [{}]),
    ("HintProvider returns - nil map[string][]TopologyHint from provider", [{"resource": None}], [{"resource": None}]),
    ("2 HintProviders with 1 resource returns hints", [{"resource1": [(0, T)]}, {"resource2": [(1, T)]}],
     [{"resource1": [(0, T)]}, {"resource2": [(1, T)]}]),
    ("2 HintProviders 1 with 1 resource 1 with nil hints", [{"resource1": [(0, T)]}, None], [{"resource1": [(0, T)]}, None]),
    ("2 HintProviders 1 with 1 resource 1 empty hints", [{"resource1": [(0, T)]}, {}], [{"resource1": [(0, T)]}, {}]),
    ("HintProvider with 2 resources returns hints", [{"resource1": [(0, T)], "resource2": [(1, T)]}],
     [{"resource1": [(0, T)], "resource2": [(1, T)]}]),
])
@pytest.mark.parametrize("scope_cls", [ContainerScope, PodScope])
def test_accumulate_providers_hints(name, hp, expected, scope_cls):
    scope = scope_cls(NonePolicy())
    for h in providers(hp):
        scope.add_hint_provider(MockHintProvider(h))
    pod = make_pod([("c0", {})])
    got = scope.accumulate_providers_hints(pod, pod.spec.containers[0]) if scope_cls is ContainerScope \
        else scope.accumulate_providers_hints(pod)
    assert got == providers(expected)


def test_scopes_store_the_affinity_per_container_and_allocate_in_order():
    init = [("init", {})]
    pod = make_pod([("a", {}), ("b", {})], init=init)
    for scope, policy in (("container", "best-effort"), ("pod", "best-effort")):
        m = new_manager([0, 1], policy, scope)
        p = MockHintProvider(providers([{"resource": [(1, T), ((0, 1), F)]}])[0])
        m.add_hint_provider(p)
        assert tuple(m.admit(pod)) == (True, "", "")
        assert p.allocated == ["init", "a", "b"]
        assert all(m.get_affinity("pod-uid", c).is_equal(H(1, T)) for c in ("init", "a", "b"))


def test_allocation_error_becomes_unexpected_admission_error():
    class Failing(MockHintProvider):
        def allocate(self, pod, container):
            raise RuntimeError("boom")
    ok, reason, message = admit(make_pod([("c0", {})]), [Failing({})], [0, 1], "none")
    assert (ok, reason, message) == (False, "UnexpectedAdmissionError", "Allocate failed due to boom, which is unexpected")


@pytest.mark.parametrize("config,errors", [
    ({}, []),
    ({"topologyManagerPolicy": "invalid-policy"},
     ['invalid configuration: topologyManagerPolicy (--topology-manager-policy) "invalid-policy" must be one of: '
      '["none" "best-effort" "restricted" "single-numa-node"]']),
    ({"topologyManagerScope": "invalid-scope"},
     ['invalid configuration: topologyManagerScope (--topology-manager-scope) "invalid-scope" must be one of: '
      '"container", or "pod"']),
])
def test_validate_kubelet_config(config, errors):
    assert validate_kubelet_config(config) == errors


# --- devicemanager topology_hints_test.go TestGetTopologyHints ----------------------------------------
@pytest.mark.parametrize("description,request_,devices,allocated,expected", [
    ("Single Request, no alignment", {"testdevice": 1}, {"testdevice": [("Dev1", None), ("Dev2", None)]}, {},
     {"testdevice": None}),
    ("Single Request, only one with alignment", {"testdevice": 1}, {"testdevice": [("Dev1", None), ("Dev2", 1)]}, {},
     {"testdevice": [(1, T), ((0, 1), F)]}),
    ("Single Request, one device per socket", {"testdevice": 1}, {"testdevice": [("Dev1", 0), ("Dev2", 1)]}, {},
     {"testdevice": [(0, T), (1, T), ((0, 1), F)]}),
    ("Request for 2, one device per socket", {"testdevice": 2}, {"testdevice": [("Dev1", 0), ("Dev2", 1)]}, {},
     {"testdevice": [((0, 1), T)]}),
    ("Request for 2, 2 devices per socket", {"testdevice": 2},
     {"testdevice": [("Dev1", 0), ("Dev2", 1), ("Dev3", 0), ("Dev4", 1)]}, {},
     {"testdevice": [(0, T), (1, T), ((0, 1), F)]}),
    ("Request for 2, optimal on 1 NUMA node, forced cross-NUMA", {"testdevice": 2},
     {"testdevice": [("Dev1", 0), ("Dev2", 1), ("Dev3", 0), ("Dev4", 1)]},
     {"fakeOtherContainer": {"testdevice": ["Dev1", "Dev2"]}}, {"testdevice": [((0, 1), F)]}),
    ("2 device types, mixed configuration", {"testdevice1": 2, "testdevice2": 1},
     {"testdevice1": [("Dev1", 0), ("Dev2", 1), ("Dev3", 0), ("Dev4", 1)], "testdevice2": [("Dev1", 0)]}, {},
     {"testdevice1": [(0, T), (1, T), ((0, 1), F)], "testdevice2": [(0, T), ((0, 1), F)]}),
    ("Single device type, more requested than available", {"testdevice": 6},
     {"testdevice": [("Dev1", 0), ("Dev2", 0), ("Dev3", 1), ("Dev4", 1)]}, {}, {"testdevice": []}),
    ("Single device type, all already allocated to container", {"testdevice": 2},
     {"testdevice": [("Dev1", 0), ("Dev2", 0)]}, {"fakeContainer": {"testdevice": ["Dev1", "Dev2"]}},
     {"testdevice": [(0, T), ((0, 1), F)]}),
    ("Single device type, less already allocated to container than requested", {"testdevice": 4},
     {"testdevice": [("Dev1", 0), ("Dev2", 0), ("Dev3", 1), ("Dev4", 1)]},
     {"fakeContainer": {"testdevice": ["Dev1", "Dev2"]}}, {"testdevice": []}),
    ("Single device type, more already allocated to container than requested", {"testdevice": 2},
     {"testdevice": [("Dev1", 0), ("Dev2", 0), ("Dev3", 1), ("Dev4", 1)]},
     {"fakeContainer": {"testdevice": ["Dev1", "Dev2", "Dev3", "Dev4"]}}, {"testdevice": []}),
])
def test_device_manager_get_topology_hints(description, request_, devices, allocated, expected):
    state = DeviceState([0, 1])
    for r, devs in devices.items():
        state.topology[r] = {d: (None if n is None else [n]) for d, n in devs}
        state.healthy[r] = {d for d, _ in devs}
    state.pod_devices = {"fakePod": allocated}
    pod = make_pod([("fakeContainer", {r: str(q) for r, q in request_.items()})], uid="fakePod")
    hints = DeviceManagerHintProvider(state).get_topology_hints(pod, pod.spec.containers[0])
    for r, exp in expected.items():
        if exp is None:
            assert hints[r] is None
        else:
            key = lambda h: (not h.preferred, h.numa_node_affinity.count(), h.numa_node_affinity.value)  # LessThan
            assert sorted(hints[r], key=key) == sorted((H(*h) for h in exp), key=key)


# --- GPUs through the whole path: device manager hints → merge → admit → aligned allocation -----------
def gpu_node(used=()):
    """Two NUMA nodes, 4 GPUs each (DGX H100 layout), ``used`` already taken by another pod."""
    state = DeviceState([0, 1])
    state.topology["nvidia.com/gpu"] = {f"GPU-{i}": [i // 4] for i in range(8)}
    state.healthy["nvidia.com/gpu"] = set(state.topology["nvidia.com/gpu"])
    state.pod_devices = {"other": {"main": {"nvidia.com/gpu": [f"GPU-{i}" for i in used]}}}
    return state


@pytest.mark.parametrize("policy,scope,gpus,used,admitted,numa_of_allocation", [
    ("single-numa-node", "container", 8, (), False, None),          # 8 GPUs never fit one NUMA node
    ("restricted", "container", 8, (), True, {0, 1}),               # {0,1} is the narrowest possible: preferred
    ("single-numa-node", "pod", 4, (0, 1), True, {1}),              # NUMA 0 has only 2 free
    ("single-numa-node", "container", 2, (0, 1), True, {0}),        # narrowest, lowest NUMA id wins
    ("restricted", "container", 4, (0, 1, 4), False, None),         # 2+3 free: only {0,1}, not preferred
    ("best-effort", "container", 4, (0, 1, 4), True, {0, 1}),       # best-effort admits anyway
])
def test_gpu_alignment_through_the_device_manager(policy, scope, gpus, used, admitted, numa_of_allocation):
    state = gpu_node(used)
    m = new_manager([0, 1], policy, scope)
    m.add_hint_provider(DeviceManagerHintProvider(state, store=m))
    pod = make_pod([("main", {"nvidia.com/gpu": str(gpus)})])
    result = m.admit(pod)
    assert result.admit is admitted
    if not admitted:
        assert (result.reason, result.message) == ("TopologyAffinityError",
                                                   "Resources cannot be allocated with Topology locality")
        return
    got = state.pod_devices["pod-uid"]["main"]["nvidia.com/gpu"]
    assert len(got) == gpus and {int(g.split("-")[1]) // 4 for g in got} == numa_of_allocation


def test_allocate_error_under_policy_none_is_unexpected_admission_error():
    state = gpu_node(used=(0, 1, 2, 3))
    m = manager_from_kubelet_config({}, [0, 1])
    m.add_hint_provider(DeviceManagerHintProvider(state, store=m))
    r = m.admit(make_pod([("main", {"nvidia.com/gpu": "8"})]))
    assert tuple(r) == (False, "UnexpectedAdmissionError", "Allocate failed due to requested number of devices "
                        "unavailable for nvidia.com/gpu. Requested: 8, Available: 4, which is unexpected")


def test_init_container_devices_are_reused_by_app_containers():
    state = gpu_node()
    m = new_manager([0, 1], "single-numa-node", "container")
    m.add_hint_provider(DeviceManagerHintProvider(state, store=m))
    pod = make_pod([("main", {"nvidia.com/gpu": "2"})], init=[("warmup", {"nvidia.com/gpu": "2"})])
    assert m.admit(pod).admit
    devices = state.pod_devices["pod-uid"]
    assert devices["main"]["nvidia.com/gpu"] == devices["warmup"]["nvidia.com/gpu"]
