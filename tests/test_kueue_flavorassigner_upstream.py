"""Kueue flavor assignment against upstream's own tables: kubernetes-sigs/kueue
pkg/scheduler/flavorassigner/flavorassigner_test.go (release-0.19, v1beta2 API), functions TestAssignFlavors
(the borrowing/preemption rows and "each podset requires preemption on a different flavor"),
TestReclaimBeforePriorityPreemption, TestHierarchical and TestIsNoFitDueToCapacityAndLimits (NoFitReason).

Each row builds the same quota tree and usage as the upstream row and calls gpusim's ``assign`` with the
row's fake preemption oracle (upstream's ``testOracle``: the simulation result per flavor-resource, and
``NoCandidates`` with the current borrowing level for every other one). Rows translate upstream's expected
flavors, representative mode, ``Assignment.Borrowing`` and status reasons."""
from __future__ import annotations

from types import SimpleNamespace
from typing import Optional

import pytest

from gpusim.kueue.cache import Node, compute_subtree
from gpusim.kueue.flavorassigner import FIT, MODE_NAMES, NO_FIT, PREEMPT, ClusterQueueSpecView, assign

CPU, PODS = "cpu", "pods"


def flavor(name: str) -> SimpleNamespace:
    return SimpleNamespace(metadata=SimpleNamespace(name=name),
                           spec=SimpleNamespace(node_taints=[], tolerations=[], node_labels={}, topology_name=None))


def cq_node(name: str, quotas: dict, borrowing: Optional[dict] = None) -> Node:
    """A ClusterQueue node; ``quotas``: {(flavor, resource): nominal}, values in Kueue's int units."""
    n = Node(name, True)
    for fr, q in quotas.items():
        n.nominal[fr] = q
        n.borrowing_limit[fr] = (borrowing or {}).get(fr)
        n.lending_limit[fr] = None
    return n


def tree(test: Node, others: list[Node], cohorts: list[tuple[str, Optional[str], dict]],
         cq_cohort: dict[str, str]) -> None:
    """Wire ClusterQueues into Cohorts (name, parent, own quotas) and compute the subtree quotas."""
    nodes = {}
    for name, _, quotas in cohorts:
        c = nodes[name] = Node(name, False)
        for fr, q in quotas.items():
            c.nominal[fr] = q
    for name, parent, _ in cohorts:
        if parent:
            nodes[name].parent = nodes[parent]
            nodes[parent].children.append(nodes[name])
    for cq in [test, *others]:
        c = nodes[cq_cohort[cq.name]]
        cq.parent = c
        c.children.append(cq)
    compute_subtree(test.root())


def oracle_from(simulation: dict):
    """flavorassigner_test.go testOracle: the row's simulation result, else (Preempt, 0)."""
    return lambda fr, val: simulation.get(fr, ("Preempt", 0))


def pod_spec() -> SimpleNamespace:
    return SimpleNamespace(tolerations=[], node_selector={})


def run_assign(test: Node, groups, flavors, requests: dict, simulation: dict, borrow="MayStopSearch",
               preempt="TryNextFlavor", preference="BorrowingOverPreemption", while_borrowing=False):
    spec = ClusterQueueSpecView(groups, borrow, preempt, preference, while_borrowing)
    return assign([("main", requests, pod_spec())], test, spec, {f: flavor(f) for f in flavors},
                  oracle_from(simulation))


# --- TestAssignFlavors: "borrow before try next flavor" and "when borrowing while preemption is needed" ------
# test-clusterqueue: flavor one (cpu nominal N1, borrowingLimit BL1), flavor two (cpu 12) in test-cohort;
# test-secondary-clusterqueue: flavor one cpu S1, usage U1 of it. The test ClusterQueue's preemption has
# borrowWithinCohort LowerPriority (canPreemptWhileBorrowing).
ASSIGN_ROWS = [
    # name, request cpu (cores), one nominal, one borrowingLimit, secondary one, secondary usage,
    # whenCanBorrow, whenCanPreempt, simulation for (one, cpu), want flavor, want mode, want Borrowing, want reasons
    ("when borrowing while preemption is needed for flavor one; WhenCanBorrow=MayStopSearch",
     12, 0, 12, 12, 10, "MayStopSearch", "MayStopSearch", ("Preempt", 1), "one", PREEMPT, 1,
     ["insufficient unused quota for cpu in flavor one, 10 more needed"]),
    ("when borrowing while preemption is needed for flavor one; WhenCanBorrow=MayStopSearch,WhenCanPreempt=MayStopSearch",
     12, 0, 12, 12, 10, "MayStopSearch", "MayStopSearch", ("Preempt", 1), "one", PREEMPT, 1,
     ["insufficient unused quota for cpu in flavor one, 10 more needed"]),
    ("when borrowing while preemption is needed for flavor one, no borrowingLimit; WhenCanBorrow=MayStopSearch",
     12, 0, None, 12, 10, "MayStopSearch", "MayStopSearch", ("Preempt", 1), "one", PREEMPT, 1,
     ["insufficient unused quota for cpu in flavor one, 10 more needed"]),
    ("when borrowing while preemption is needed for flavor one; WhenCanBorrow=TryNextFlavor",
     12, 0, 12, 12, 0, "TryNextFlavor", "MayStopSearch", None, "two", FIT, 0, []),
]


@pytest.mark.parametrize("name, req, n1, bl1, s1, u1, borrow, preempt, sim, want_flavor, want_mode, want_borrow, "
                         "want_reasons", ASSIGN_ROWS, ids=[r[0] for r in ASSIGN_ROWS])
def test_assign_flavors_borrowing_rows(name, req, n1, bl1, s1, u1, borrow, preempt, sim, want_flavor, want_mode,
                                       want_borrow, want_reasons):
    one, two = ("one", CPU), ("two", CPU)
    test = cq_node("test-clusterqueue", {one: n1 * 1000, two: 12_000},
                   {one: bl1 * 1000 if bl1 is not None else None})
    secondary = cq_node("test-secondary-clusterqueue", {one: s1 * 1000})
    tree(test, [secondary], [("test-cohort", None, {})],
         {"test-clusterqueue": "test-cohort", "test-secondary-clusterqueue": "test-cohort"})
    if u1:
        secondary.add_usage(one, u1 * 1000)
    a = run_assign(test, [([CPU], ["one", "two"])], ["one", "two"], {CPU: req * 1000},
                   {one: sim} if sim else {}, borrow, preempt, while_borrowing=True)
    ps = a.pod_sets[0]
    assert ps.flavors == {CPU: want_flavor}
    assert MODE_NAMES[a.mode] == MODE_NAMES[want_mode]
    assert a.borrow == want_borrow
    assert sorted(ps.reasons) == want_reasons


def test_assign_flavors_borrow_before_try_next_flavor():
    """TestAssignFlavors "borrow before try next flavor": one has cpu 10 (borrowingLimit 1) and pods 10, usage 2
    cpu; the secondary lends 1 cpu of one: 9 cpu fit in one by borrowing (Borrowing 1), whenCanBorrow
    MayStopSearch keeps one."""
    one, two = ("one", CPU), ("two", CPU)
    test = cq_node("test-clusterqueue", {("one", PODS): 10, one: 10_000, ("two", PODS): 10, two: 10_000},
                   {one: 1000})
    secondary = cq_node("test-secondary-clusterqueue", {one: 1000})
    tree(test, [secondary], [("test-cohort", None, {})],
         {"test-clusterqueue": "test-cohort", "test-secondary-clusterqueue": "test-cohort"})
    test.add_usage(one, 2000)
    a = run_assign(test, [([CPU, PODS], ["one", "two"])], ["one", "two"], {CPU: 9000, PODS: 1}, {})
    assert a.pod_sets[0].flavors == {CPU: "one", PODS: "one"}
    assert a.mode == FIT
    assert a.borrow == 1


# --- TestReclaimBeforePriorityPreemption -------------------------------------------------------------------
# Flavors uno, due, tre with 10 compute and 10 gpu each, provided by test-clusterqueue (withinClusterQueue and
# reclaimWithinCohort LowerPriority, whenCanPreempt TryNextFlavor); other-clusterqueue has 0 of each.
RECLAIM_ROWS = [
    ("Select first flavor which fits", {"gpu": 10}, {("uno", "gpu"): 1}, {("due", "gpu"): 1}, {}, None,
     FIT, {"gpu": "tre"}),
    ("Select first flavor where gpu reclamation is possible", {"gpu": 10}, {("uno", "gpu"): 1},
     {("due", "gpu"): 1, ("tre", "gpu"): 1},
     {("uno", "gpu"): ("Preempt", 0), ("due", "gpu"): ("Reclaim", 0)}, None, PREEMPT, {"gpu": "due"}),
    ("Select first flavor when flavor fungibility is disabled", {"gpu": 10}, {("uno", "gpu"): 1},
     {("due", "gpu"): 1, ("tre", "gpu"): 1}, {}, "MayStopSearch", PREEMPT, {"gpu": "uno"}),
    ("Select first flavor where priority based preemption is possible", {"gpu": 10},
     {("uno", "gpu"): 1, ("due", "gpu"): 1, ("tre", "gpu"): 1}, {}, {}, None, PREEMPT, {"gpu": "uno"}),
    ("Select second flavor where gpu reclamation is possible, as compute Fits", {"gpu": 10, "compute": 10},
     {("uno", "gpu"): 1, ("uno", "compute"): 1, ("due", "compute"): 1}, {("due", "gpu"): 1, ("tre", "gpu"): 1},
     {("uno", "gpu"): ("Preempt", 0), ("due", "gpu"): ("Reclaim", 0), ("tre", "gpu"): ("Reclaim", 0)}, None,
     PREEMPT, {"gpu": "tre", "compute": "tre"}),
]


@pytest.mark.parametrize("name, req, test_usage, other_usage, sim, when_can_preempt, want_mode, want",
                         RECLAIM_ROWS, ids=[r[0] for r in RECLAIM_ROWS])
def test_reclaim_before_priority_preemption(name, req, test_usage, other_usage, sim, when_can_preempt, want_mode,
                                            want):
    flavors = ["uno", "due", "tre"]
    test = cq_node("test-clusterqueue", {(f, r): 10 for f in flavors for r in ("compute", "gpu")})
    other = cq_node("other-clusterqueue", {(f, r): 0 for f in flavors for r in ("compute", "gpu")})
    tree(test, [other], [("cohort", None, {})], {"test-clusterqueue": "cohort", "other-clusterqueue": "cohort"})
    for fr, v in test_usage.items():
        test.add_usage(fr, v)
    for fr, v in other_usage.items():
        other.add_usage(fr, v)
    a = run_assign(test, [(["compute", "gpu"], flavors)], flavors, req, sim,
                   preempt=when_can_preempt or "TryNextFlavor")
    assert {r: f for r, f in a.pod_sets[0].flavors.items()} == want
    assert MODE_NAMES[a.mode] == MODE_NAMES[want_mode]


# --- TestHierarchical -----------------------------------------------------------------------------------------
# Cohorts three (root, 4 cpu of flavor three) ← two (4 cpu of two) ← one (4 cpu of one); test-clusterqueue in
# cohort one and other-clusterqueue in cohort two, both with 0 of every flavor.
HIERARCHY_ROWS = [
    ("Select the top flavor", {("one", CPU): 4000}, {("two", CPU): 4000}, "three", 3),
    ("Select the first flavor which fits", {("one", CPU): 4000}, {}, "two", 2),
]


@pytest.mark.parametrize("name, test_usage, other_usage, want, want_borrow", HIERARCHY_ROWS,
                         ids=[r[0] for r in HIERARCHY_ROWS])
def test_hierarchical(name, test_usage, other_usage, want, want_borrow):
    flavors = ["one", "two", "three"]
    test = cq_node("test-clusterqueue", {(f, CPU): 0 for f in flavors})
    other = cq_node("other-clusterqueue", {(f, CPU): 0 for f in flavors})
    tree(test, [other], [("three", None, {("three", CPU): 4000}), ("two", "three", {("two", CPU): 4000}),
                         ("one", "two", {("one", CPU): 4000})],
         {"test-clusterqueue": "one", "other-clusterqueue": "two"})
    for fr, v in test_usage.items():
        test.add_usage(fr, v)
    for fr, v in other_usage.items():
        other.add_usage(fr, v)
    a = run_assign(test, [([CPU], flavors)], flavors, {CPU: 4000}, {})
    assert a.pod_sets[0].flavors == {CPU: want}
    assert a.mode == FIT
    # the borrowing level is the height of the cohort whose subtree holds the quota (getNodeHeight)
    assert a.borrow == want_borrow


# --- preemption that ends within nominal does not count as borrowing (issue 13) ------------------------------
@pytest.mark.parametrize("preference, want_flavor, want_mode", [
    ("BorrowingOverPreemption", "two", FIT),
    ("PreemptionOverBorrowing", "one", PREEMPT),
])
def test_preempt_within_nominal_is_not_borrowing(preference, want_flavor, want_mode):
    """isPreferred with borrowAfterPreemptions: flavor one is full of the ClusterQueue's own lower-priority work
    (preempting it leaves the workload within nominal: level 0), flavor two fits only by borrowing (level 1).
    PreemptionOverBorrowing compares the borrowing level first and preempts on one; BorrowingOverPreemption
    compares the mode first and borrows on two. Before the fix gpusim counted the preempt option on one as
    borrowing (usage + request above nominal) and borrowed on two under both preferences."""
    one, two = ("one", CPU), ("two", CPU)
    test = cq_node("test-clusterqueue", {one: 4000, two: 0})
    lender = cq_node("lender", {one: 0, two: 4000})
    tree(test, [lender], [("c", None, {})], {"test-clusterqueue": "c", "lender": "c"})
    test.add_usage(one, 4000)
    a = run_assign(test, [([CPU], ["one", "two"])], ["one", "two"], {CPU: 4000}, {one: ("Preempt", 0)},
                   borrow="TryNextFlavor", preempt="TryNextFlavor", preference=preference)
    assert a.pod_sets[0].flavors == {CPU: want_flavor}
    assert a.mode == want_mode
    assert a.borrow == (0 if want_flavor == "one" else 1)


def test_no_fit_row_message():
    """A flavor that cannot hold the request at all is NoFit with upstream's maximum-capacity message."""
    test = cq_node("test-clusterqueue", {("one", CPU): 1000})
    tree(test, [], [("c", None, {})], {"test-clusterqueue": "c"})
    a = run_assign(test, [([CPU], ["one"])], ["one"], {CPU: 2000}, {})
    assert a.mode == NO_FIT
    assert a.pod_sets[0].reasons == ["insufficient quota for cpu in flavor one, previously considered podsets "
                                     "requests (0) + current podset request (2) > maximum capacity (1)"]


# --- TestIsNoFitDueToCapacityAndLimits: Assignment.NoFitReason (resolveNoFitReason / mostSevereReason) --------
# kubernetes-sigs/kueue pkg/scheduler/flavorassigner/flavorassigner_test.go, function
# TestIsNoFitDueToCapacityAndLimits (v1beta2 API; the rows run with UnadmittedWorkloadsObservability on). Flavors:
# flavor-a (nodeLabels type=a), flavor-b (taint key=val:NoSchedule), flavor-tas (topology-tas, level rack).
# cq: flavor-a and flavor-b with cpu nominal 2, borrowingLimit 4, no cohort (so the maximum capacity is 2).
# Left out: the rows needing ElasticJobsViaWorkloadSlices or ConcurrentAdmission (not modelled), "flavor
# spanning multiple resource groups" (a flavor in two resource groups, which ClusterQueue validation refuses);
# the TAS rows run as scenarios below (test_no_fit_reason_tas_rows).
def taint(key: str, value: str, effect: str = "NoSchedule") -> SimpleNamespace:
    return SimpleNamespace(key=key, value=value, effect=effect, time_added=None)


def rich_flavor(name: str, labels: Optional[dict] = None, taints: Optional[list] = None) -> SimpleNamespace:
    return SimpleNamespace(metadata=SimpleNamespace(name=name),
                           spec=SimpleNamespace(node_taints=taints or [], tolerations=[], node_labels=labels or {},
                                                topology_name=None))


NOFIT_FLAVORS = {"flavor-a": rich_flavor("flavor-a", {"type": "a"}),
                 "flavor-b": rich_flavor("flavor-b", taints=[taint("key", "val")])}
TOLERATE_B = [SimpleNamespace(key="key", operator="Equal", value="val", effect="NoSchedule")]
GI = 1024 ** 3

# name, requests, nodeSelector, tolerations, flavors (None: NOFIT_FLAVORS), cohort setup, want NoFitReason,
# want NoFitReason per attempted flavor (only the flavors gpusim tried)
NOFIT_ROWS = [
    ("succeeds to schedule on flavor-a", {CPU: 1000}, {}, [], None, None, "", {"flavor-a": ""}),
    ("insufficient quota", {CPU: 3000}, {}, [], None, None, "ExceedsMaxQuota",
     {"flavor-a": "ExceedsMaxQuota", "flavor-b": "NoMatchingFlavor"}),
    ("exceeds max capacity limits", {CPU: 5000}, {}, [], None, None, "ExceedsMaxQuota",
     {"flavor-a": "ExceedsMaxQuota", "flavor-b": "NoMatchingFlavor"}),
    ("taints mismatch", {CPU: 1000}, {"type": "wrong"}, [], None, None, "NoMatchingFlavor",
     {"flavor-a": "NoMatchingFlavor", "flavor-b": "NoMatchingFlavor"}),
    ("succeeds to schedule on flavor-b with a tolerated taint", {CPU: 1000}, {"type": "non-existent"}, TOLERATE_B,
     None, None, "", {"flavor-a": "NoMatchingFlavor", "flavor-b": ""}),
    ("node affinity mismatch when both flavors declare same key", {CPU: 1000}, {"type": "non-existent"}, [],
     {"flavor-a": rich_flavor("flavor-a", {"type": "a"}), "flavor-b": rich_flavor("flavor-b", {"type": "b"})},
     None, "NoMatchingFlavor", {"flavor-a": "NoMatchingFlavor", "flavor-b": "NoMatchingFlavor"}),
    ("prioritization of structural mismatch over capacity mismatch", {CPU: 3000, "memory": 20 * GI},
     {"type": "wrong"}, [], None, None, "NoMatchingFlavor",
     {"flavor-a": "NoMatchingFlavor", "flavor-b": "NoMatchingFlavor"}),
    # cq and sibling in "cohort", each with flavor-a/flavor-b cpu nominal 2 (borrowingLimit per row)
    ("insufficient capacity, cohort has available capacity (waiting for quota)", {CPU: 3000}, {}, [], None,
     (2000, 2000, 2000, {("flavor-a", CPU): 2000, ("flavor-b", CPU): 2000}), "WaitingForQuota",
     {"flavor-a": "WaitingForQuota", "flavor-b": "NoMatchingFlavor"}),
    ("exceeds cohort max capacity limits", {CPU: 5000}, {}, [], None, (2000, 2000, 2000, {}), "ExceedsMaxQuota",
     {"flavor-a": "ExceedsMaxQuota", "flavor-b": "NoMatchingFlavor"}),
    ("exceeds borrowing limit but cohort has capacity", {CPU: 4000}, {}, [], None, (1000, 5000, 5000, {}),
     "ExceedsMaxQuota", {"flavor-a": "ExceedsMaxQuota", "flavor-b": "NoMatchingFlavor"}),
]


@pytest.mark.parametrize("name, req, selector, tolerations, flavors, cohort, want, want_attempts", NOFIT_ROWS,
                         ids=[r[0] for r in NOFIT_ROWS])
def test_no_fit_reason_rows(name, req, selector, tolerations, flavors, cohort, want, want_attempts):
    fa, fb = ("flavor-a", CPU), ("flavor-b", CPU)
    if cohort is None:
        test = cq_node("cq", {fa: 2000, fb: 2000}, {fa: 4000, fb: 4000})    # no cohort: its own root
        compute_subtree(test)
    else:
        borrowing, sibling_nominal, sibling_borrowing, sibling_usage = cohort
        test = cq_node("cq", {fa: 2000, fb: 2000}, {fa: borrowing, fb: borrowing})
        sibling = cq_node("sibling", {fa: sibling_nominal, fb: sibling_nominal},
                          {fa: sibling_borrowing, fb: sibling_borrowing})
        tree(test, [sibling], [("cohort", None, {})], {"cq": "cohort", "sibling": "cohort"})
        for fr, v in sibling_usage.items():
            sibling.add_usage(fr, v)
    spec = ClusterQueueSpecView([([CPU], ["flavor-a", "flavor-b"])])
    pod = SimpleNamespace(tolerations=tolerations, node_selector=selector)
    a = assign([("main", req, pod)], test, spec, flavors or NOFIT_FLAVORS, oracle_from({}))
    assert a.no_fit_reason() == want
    got = {att.flavor: att.no_fit_reason for att in a.pod_sets[0].attempts}
    assert got == want_attempts


def test_most_severe_reason_order():
    """flavorassigner.go reasonSeverity: NoMatchingFlavor > ExceedsMaxQuota > WaitingForQuota >
    TopologyPlacementFailed > anything else; ties keep the first."""
    from gpusim.kueue.flavorassigner import most_severe_reason
    order = ["", "TopologyPlacementFailed", "WaitingForQuota", "ExceedsMaxQuota", "NoMatchingFlavor"]
    for i, low in enumerate(order):
        for high in order[i + 1:]:
            assert most_severe_reason(low, high) == high and most_severe_reason(high, low) == high
    assert most_severe_reason("Other", "") == "Other"


# --- TestAssignFlavors "each podset requires preemption on a different flavor": the taint as upstream prints it --
def test_each_podset_requires_preemption_on_a_different_flavor():
    """flavorassigner_test.go TestAssignFlavors row: launcher (1 × 2 cpu, no toleration) and workers (10 × 1 cpu,
    tolerating instance=spot:NoSchedule); flavors one (cpu 4, usage 3) and tainted (cpu 10, usage 3, taint
    instance=spot:NoSchedule). The launcher preempts on one and names the taint of tainted as Go prints the
    corev1.Taint value; the workers exceed one's maximum capacity and preempt on tainted."""
    one, tainted = ("one", CPU), ("tainted", CPU)
    test = cq_node("test-clusterqueue", {one: 4000, tainted: 10_000})
    tree(test, [], [("c", None, {})], {"test-clusterqueue": "c"})
    test.add_usage(one, 3000)
    test.add_usage(tainted, 3000)
    flavors = {"one": rich_flavor("one", {"type": "one"}),
               "tainted": rich_flavor("tainted", taints=[taint("instance", "spot")])}
    spot = [SimpleNamespace(key="instance", operator="Equal", value="spot", effect="NoSchedule")]
    spec = ClusterQueueSpecView([([CPU], ["one", "tainted"])])
    a = assign([("launcher", {CPU: 2000}, SimpleNamespace(tolerations=[], node_selector={})),
                ("workers", {CPU: 10_000}, SimpleNamespace(tolerations=spot, node_selector={}))],
               test, spec, flavors, oracle_from({}))
    assert a.mode == PREEMPT
    launcher, workers = a.pod_sets
    assert (launcher.flavors, launcher.mode) == ({CPU: "one"}, PREEMPT)
    assert sorted(launcher.reasons) == ["insufficient unused quota for cpu in flavor one, 1 more needed",
                                        "untolerated taint {instance spot NoSchedule <nil>} in flavor tainted"]
    assert (workers.flavors, workers.mode) == ({CPU: "tainted"}, PREEMPT)
    assert sorted(workers.reasons) == [
        "insufficient quota for cpu in flavor one, previously considered podsets requests (2) + current podset "
        "request (10) > maximum capacity (4)",
        "insufficient unused quota for cpu in flavor tainted, 3 more needed"]


def test_taint_time_added_prints_as_go_time():
    from gpusim.componenthelpers.taints import taint_value_string
    t = SimpleNamespace(key="k", value="", effect="NoExecute", time_added="2026-01-02T03:04:05Z")
    assert taint_value_string(t) == "{k  NoExecute 2026-01-02 03:04:05 +0000 UTC}"
