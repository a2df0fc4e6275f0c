"""Kueue preemption against upstream's own tables: kubernetes-sigs/kueue pkg/scheduler/preemption/preemption_test.go
(read at commit 014d9490c7f3ca68120582ab72cbfec7c3194aa1, the stored version; v1beta1 API), functions TestPreemption
(classical preemption: within the ClusterQueue by priority, reclaimWithinCohort Any/LowerPriority, borrowWithinCohort
with maxPriorityThreshold, withinClusterQueue Never/LowerPriority/LowerOrNewerEqualPriority, lendingLimit, a Cohort
tree) and TestFairPreemptions (fair sharing) and TestHierarchicalPreemptions (classical preemption in a Cohort tree).

Upstream builds a cache holding the row's admitted workloads (``ReserveQuotaAt``/``SimpleReserveQuota``: explicit
flavors), then calls ``preemptor.GetTargets`` for the incoming workload with the row's flavor assignment and checks
the targets and their reasons (``targetKeyReason``) and that the snapshot is unchanged. Here gpusim's Kueue holds the
same admitted workloads (tests/kueue_upstream.py) and ``Preemptor.get_targets`` gets the row's assignment: the usage
of every assigned resource and the flavor-resources in Preempt mode. Namespace "" of upstream's workloads is
"default" here. The policies a row leaves empty are written LowerPriority (``upstream_preemption``).

TestFairPreemptions was written before the FairSharingPreemptWithinNominal gate (Kueue 0.19: on), which makes a
preemptor within its nominal quota reclaim without the strategies (reason InCohortReclamation); its rows run with
the gate off, the behaviour they were written for.
"""
from __future__ import annotations

import pytest

from tests.kueue_upstream import Cluster, cluster_queue, cohort, config, flavor, workload

LP, ANY, NEVER, LONEP = "LowerPriority", "Any", "Never", "LowerOrNewerEqualPriority"
IN_CQ, RECLAIM, FAIR, WHILE_BORROWING = ("InClusterQueue", "InCohortReclamation", "InCohortFairSharing",
                                         "InCohortReclaimWhileBorrowing")


def bwc(threshold: int) -> dict:
    return {"policy": LP, "maxPriorityThreshold": threshold}


# TestPreemption's defaultClusterQueues
DEFAULT_CQS = [
    cluster_queue("standalone", [[("default", [("cpu", "6")])],
                                 [("alpha", [("memory", "3Gi")]), ("beta", [("memory", "3Gi")])]],
                  preemption={"withinClusterQueue": LP}),
    cluster_queue("c1", [[("default", [("cpu", "6", "6"), ("memory", "3Gi", "3Gi")])]], cohort="cohort",
                  preemption={"withinClusterQueue": LP, "reclaimWithinCohort": LP}),
    cluster_queue("c2", [[("default", [("cpu", "6", "6"), ("memory", "3Gi", "3Gi")])]], cohort="cohort",
                  preemption={"withinClusterQueue": NEVER, "reclaimWithinCohort": ANY}),
    cluster_queue("d1", [[("default", [("cpu", "6"), ("memory", "3Gi")])]], cohort="cohort-no-limits",
                  preemption={"withinClusterQueue": LP, "reclaimWithinCohort": LP}),
    cluster_queue("d2", [[("default", [("cpu", "6"), ("memory", "3Gi")])]], cohort="cohort-no-limits",
                  preemption={"withinClusterQueue": NEVER, "reclaimWithinCohort": ANY}),
    cluster_queue("l1", [[("default", [("cpu", "6", "12"), ("memory", "3Gi", "6Gi")])]], cohort="legion",
                  preemption={"withinClusterQueue": LP, "reclaimWithinCohort": LP}),
    cluster_queue("preventStarvation", [[("default", [("cpu", "6")])]], preemption={"withinClusterQueue": LONEP}),
    cluster_queue("a_standard", [[("default", [("cpu", "1", "12")])]], cohort="with_shared_cq",
                  preemption={"withinClusterQueue": NEVER, "reclaimWithinCohort": LP, "borrowWithinCohort": bwc(0)}),
    cluster_queue("b_standard", [[("default", [("cpu", "1", "12")])]], cohort="with_shared_cq",
                  preemption={"withinClusterQueue": LP, "reclaimWithinCohort": ANY, "borrowWithinCohort": bwc(0)}),
    cluster_queue("a_best_effort", [[("default", [("cpu", "1", "12")])]], cohort="with_shared_cq",
                  preemption={"withinClusterQueue": NEVER, "reclaimWithinCohort": LP, "borrowWithinCohort": bwc(0)}),
    cluster_queue("b_best_effort", [[("default", [("cpu", "0", "13")])]], cohort="with_shared_cq",
                  preemption={"withinClusterQueue": NEVER, "reclaimWithinCohort": LP, "borrowWithinCohort": bwc(0)}),
    cluster_queue("shared", [[("default", [("cpu", "10")])]], cohort="with_shared_cq"),
    cluster_queue("lend1", [[("default", [("cpu", "6", "", "4")])]], cohort="cohort-lend",
                  preemption={"withinClusterQueue": LP, "reclaimWithinCohort": LP}),
    cluster_queue("lend2", [[("default", [("cpu", "6", "", "2")])]], cohort="cohort-lend",
                  preemption={"withinClusterQueue": LP, "reclaimWithinCohort": LP}),
    cluster_queue("a", [[("default", [("cpu", "2"), ("memory", "2")])]], cohort="cohort-three",
                  preemption={"withinClusterQueue": LP, "reclaimWithinCohort": ANY}),
    cluster_queue("b", [[("default", [("cpu", "2"), ("memory", "2")])]], cohort="cohort-three"),
    cluster_queue("c", [[("default", [("cpu", "2"), ("memory", "2")])]], cohort="cohort-three"),
]
FLAVORS = [flavor("default"), flavor("alpha"), flavor("beta")]


def adm(name: str, cq: str, priority: int = 0, at: float = 0.0, created: float = 0.0, **req: str) -> tuple:
    """An admitted workload: one pod of ``req`` on flavor default (memory on alpha/beta via ``fl_memory``)."""
    flavors = {r: req.pop(f"fl_{r}", "default") for r in list(req) if not r.startswith("fl_")}
    return (name, cq, priority, req, flavors, at, created)


class Row:
    def __init__(self, name: str, admitted: list, incoming: tuple, target: str, assignment: list, want: dict,
                 cqs: list = None, cohorts: list = (), strategies: list = None, xfail: str = ""):
        self.name, self.admitted, self.incoming, self.target = name, admitted, incoming, target
        self.assignment, self.want = assignment, want
        self.cqs, self.cohorts, self.strategies, self.xfail = cqs, list(cohorts), strategies, xfail


def inc(priority: int = 0, created: float = 0.0, podsets: list = None, **req: str) -> tuple:
    return (priority, created, podsets or [("main", 1, req)])


def preempt(*res: str, fit: tuple = (), flavor_of: dict = None) -> list:
    """Upstream's singlePodSetAssignment: the resources in Preempt mode, ``fit`` in Fit mode, on flavor default
    unless ``flavor_of`` names another."""
    f = flavor_of or {}
    return [(0, r, f.get(r, "default"), "Preempt") for r in res] + [(0, r, f.get(r, "default"), "Fit") for r in fit]


CPU = preempt("cpu")

PREEMPTION_ROWS = [
    Row("preempt lowest priority",
        [adm("low", "standalone", -1, cpu="2"), adm("mid", "standalone", cpu="2"), adm("high", "standalone", 1, cpu="2")],
        inc(1, cpu="2"), "standalone", CPU, {"low": IN_CQ}),
    Row("preempt multiple",
        [adm("low", "standalone", -1, cpu="2"), adm("mid", "standalone", cpu="2"), adm("high", "standalone", 1, cpu="2")],
        inc(1, cpu="3"), "standalone", CPU, {"low": IN_CQ, "mid": IN_CQ}),
    Row("no preemption for low priority",
        [adm("low", "standalone", -1, cpu="3"), adm("mid", "standalone", cpu="3")],
        inc(-1, cpu="1"), "standalone", CPU, {}),
    Row("not enough low priority workloads",
        [adm("low", "standalone", -1, cpu="3"), adm("mid", "standalone", cpu="3")],
        inc(0, cpu="4"), "standalone", CPU, {}),
    Row("some free quota, preempt low priority",
        [adm("low", "standalone", -1, cpu="1"), adm("mid", "standalone", cpu="1"), adm("high", "standalone", 1, cpu="3")],
        inc(1, cpu="2"), "standalone", CPU, {"low": IN_CQ}),
    Row("minimal set excludes low priority",
        [adm("low", "standalone", -1, cpu="1"), adm("mid", "standalone", cpu="2"), adm("high", "standalone", 1, cpu="3")],
        inc(1, cpu="2"), "standalone", CPU, {"mid": IN_CQ}),
    Row("only preempt workloads using the chosen flavor",
        [adm("low", "standalone", -1, memory="2Gi", fl_memory="alpha"),
         adm("mid", "standalone", memory="1Gi", fl_memory="beta"),
         adm("high", "standalone", 1, memory="1Gi", fl_memory="beta")],
        inc(1, cpu="1", memory="2Gi"), "standalone", preempt("memory", fit=("cpu",), flavor_of={"memory": "beta"}),
        {"mid": IN_CQ}),
    Row("reclaim quota from borrower",
        [adm("c1-low", "c1", -1, cpu="3"), adm("c2-mid", "c2", cpu="3"), adm("c2-high", "c2", 1, cpu="6")],
        inc(1, cpu="3"), "c1", CPU, {"c2-mid": RECLAIM}),
    Row("reclaim quota if workload requests 0 resources for a resource at nominal quota",
        [adm("c1-low", "c1", -1, cpu="3", memory="3Gi"), adm("c2-mid", "c2", cpu="3"), adm("c2-high", "c2", 1, cpu="6")],
        inc(1, cpu="3", memory="0"), "c1", preempt("cpu", fit=("memory",)), {"c2-mid": RECLAIM}),
    Row("no workloads borrowing",
        [adm("c1-high", "c1", 1, cpu="4"), adm("c2-low-1", "c2", -1, cpu="4")],
        inc(1, cpu="4"), "c1", CPU, {}),
    Row("not enough workloads borrowing",
        [adm("c1-high", "c1", 1, cpu="4"), adm("c2-low-1", "c2", -1, cpu="4"), adm("c2-low-2", "c2", -1, cpu="4")],
        inc(1, cpu="4"), "c1", CPU, {}),
    Row("preempting locally and borrowing other resources in cohort, without cohort candidates",
        [adm("c1-low", "c1", -1, cpu="4"), adm("c2-low-1", "c2", -1, cpu="4"), adm("c2-high-2", "c2", 1, cpu="4")],
        inc(1, cpu="4", memory="5Gi"), "c1", preempt("cpu", "memory"), {"c1-low": IN_CQ}),
    Row("preempting locally and borrowing same resource in cohort",
        [adm("c1-med", "c1", 0, cpu="4"), adm("c1-low", "c1", -1, cpu="4"), adm("c2-low-1", "c2", -1, cpu="4")],
        inc(1, cpu="4"), "c1", CPU, {"c1-low": IN_CQ}),
    Row("preempting locally and borrowing same resource in cohort; no borrowing limit in the cohort",
        [adm("d1-med", "d1", 0, cpu="4"), adm("d1-low", "d1", -1, cpu="4"), adm("d2-low-1", "d2", -1, cpu="4")],
        inc(1, cpu="4"), "d1", CPU, {"d1-low": IN_CQ}),
    Row("preempting locally and borrowing other resources in cohort, with cohort candidates",
        [adm("c1-med", "c1", 0, cpu="4"), adm("c2-low-1", "c2", -1, cpu="5"), adm("c2-low-2", "c2", -1, cpu="1"),
         adm("c2-low-3", "c2", -1, cpu="1")],
        inc(1, cpu="2", memory="5Gi"), "c1", preempt("cpu", "memory"), {"c1-med": IN_CQ}),
    Row("preempting locally and not borrowing same resource in 1-queue cohort",
        [adm("l1-med", "l1", 0, cpu="4"), adm("l1-low", "l1", -1, cpu="2")],
        inc(1, cpu="4"), "l1", CPU, {"l1-med": IN_CQ}),
    Row("do not reclaim borrowed quota from same priority for withinCohort=ReclaimFromLowerPriority",
        [adm("c1", "c1", cpu="2"), adm("c2-1", "c2", cpu="4"), adm("c2-2", "c2", cpu="4")],
        inc(0, cpu="4"), "c1", CPU, {}),
    Row("reclaim borrowed quota from same priority for withinCohort=ReclaimFromAny",
        [adm("c1-1", "c1", cpu="4"), adm("c1-2", "c1", 1, cpu="4"), adm("c2", "c2", cpu="2")],
        inc(0, cpu="4"), "c2", CPU, {"c1-1": RECLAIM}),
    Row("preempt from all ClusterQueues in cohort",
        [adm("c1-low", "c1", -1, cpu="3"), adm("c1-mid", "c1", cpu="2"), adm("c2-low", "c2", -1, cpu="3"),
         adm("c2-mid", "c2", cpu="4")],
        inc(0, cpu="4"), "c1", CPU, {"c1-low": IN_CQ, "c2-low": RECLAIM}),
    Row("can't preempt workloads in ClusterQueue for withinClusterQueue=Never",
        [adm("c2-low", "c2", -1, cpu="3")], inc(1, cpu="4"), "c2", CPU, {}),
    Row("each podset preempts a different flavor",
        [adm("low-alpha", "standalone", -1, memory="2Gi", fl_memory="alpha"),
         adm("low-beta", "standalone", -1, memory="2Gi", fl_memory="beta")],
        inc(0, podsets=[("launcher", 1, {"memory": "2Gi"}), ("workers", 2, {"memory": "1Gi"})]), "standalone",
        [(0, "memory", "alpha", "Preempt"), (1, "memory", "beta", "Preempt")],
        {"low-alpha": IN_CQ, "low-beta": IN_CQ}),
    Row("preempt newer workloads with the same priority",
        [adm("wl1", "preventStarvation", 2, cpu="2"), adm("wl2", "preventStarvation", 1, at=1.0, cpu="2"),
         adm("wl3", "preventStarvation", 1, cpu="2")],
        inc(1, created=-15.0, podsets=[("launcher", 1, {"cpu": "2"})]), "preventStarvation", CPU, {"wl2": IN_CQ}),
    Row("use BorrowWithinCohort; allow preempting a lower-priority workload from another ClusterQueue while borrowing",
        [adm("a_best_effort_low", "a_best_effort", -1, cpu="10"), adm("b_best_effort_low", "b_best_effort", -1, cpu="1")],
        inc(0, cpu="10"), "a_standard", CPU, {"a_best_effort_low": WHILE_BORROWING}),
    Row("use BorrowWithinCohort; don't allow preempting a lower-priority workload with priority above "
        "MaxPriorityThreshold, if borrowing is required even after the preemption",
        [adm("b_standard", "b_standard", 1, cpu="10")], inc(2, cpu="10"), "a_standard", CPU, {}),
    Row("use BorrowWithinCohort; allow preempting a lower-priority workload with priority above MaxPriorityThreshold, "
        "if borrowing is not required after the preemption",
        [adm("b_standard", "b_standard", 1, cpu="13")], inc(2, cpu="1"), "a_standard", CPU, {"b_standard": RECLAIM}),
    Row("use BorrowWithinCohort; don't allow for preemption of lower-priority workload from the same ClusterQueue",
        [adm("a_standard", "a_standard", 1, cpu="13")], inc(2, cpu="1"), "a_standard", CPU, {}),
    Row("use BorrowWithinCohort; only preempt from CQ if no workloads below threshold and already above nominal",
        [adm("a_standard_1", "a_standard", 1, cpu="10"), adm("a_standard_2", "a_standard", 1, cpu="1"),
         adm("b_standard_1", "b_standard", 1, cpu="1"), adm("b_standard_2", "b_standard", 2, cpu="1")],
        inc(3, cpu="1"), "b_standard", CPU, {"b_standard_1": IN_CQ}),
    Row("use BorrowWithinCohort; preempt from CQ and from other CQs with workloads below threshold",
        [adm("b_standard_high", "b_standard", 2, cpu="10"), adm("b_standard_mid", "b_standard", 1, cpu="1"),
         adm("a_best_effort_low", "a_best_effort", -1, cpu="1"), adm("a_best_effort_lower", "a_best_effort", -2, cpu="1")],
        inc(2, cpu="2"), "b_standard", CPU, {"b_standard_mid": IN_CQ, "a_best_effort_lower": WHILE_BORROWING}),
    Row("reclaim quota from lender",
        [adm("lend1-low", "lend1", -1, cpu="3"), adm("lend2-mid", "lend2", cpu="3"), adm("lend2-high", "lend2", 1, cpu="4")],
        inc(1, cpu="3"), "lend1", CPU, {"lend2-mid": RECLAIM}),
    Row("preempt from all ClusterQueues in cohort-lend",
        [adm("lend1-low", "lend1", -1, cpu="3"), adm("lend1-mid", "lend1", cpu="2"), adm("lend2-low", "lend2", -1, cpu="3"),
         adm("lend2-mid", "lend2", cpu="4")],
        inc(0, cpu="4"), "lend1", CPU, {"lend1-low": IN_CQ, "lend2-low": RECLAIM}),
    Row("cannot preempt from other ClusterQueues if exceeds requestable quota including lending limit",
        [adm("lend2-low", "lend2", -1, cpu="10")], inc(0, cpu="9"), "lend1", CPU, {}),
    Row("preemptions from cq when target queue is exhausted for the single requested resource",
        [adm("a1", "a", -2, cpu="1"), adm("a2", "a", -2, cpu="1"), adm("a3", "a", -1, cpu="1"),
         adm("b1", "b", 0, cpu="1"), adm("b2", "b", 0, cpu="1"), adm("b3", "b", 0, cpu="1")],
        inc(0, cpu="2"), "a", CPU, {"a1": IN_CQ, "a2": IN_CQ}),
    Row("preemptions from cq when target queue is exhausted for two requested resources",
        [adm(n, q, p, cpu="1", memory="1") for n, q, p in
         [("a1", "a", -2), ("a2", "a", -2), ("a3", "a", -1), ("b1", "b", 0), ("b2", "b", 0), ("b3", "b", 0)]],
        inc(0, cpu="2", memory="2"), "a", preempt("cpu", "memory"), {"a1": IN_CQ, "a2": IN_CQ}),
    Row("preemptions from cq when target queue is exhausted for one requested resource, but not the other",
        [adm("a1", "a", -2, cpu="1"), adm("a2", "a", -2, cpu="1"), adm("a3", "a", -1, cpu="1"),
         adm("b1", "b", 0, cpu="1"), adm("b2", "b", 0, cpu="1"), adm("b3", "b", 0, cpu="1")],
        inc(0, cpu="2", memory="2"), "a", preempt("cpu", "memory"), {"a1": IN_CQ, "a2": IN_CQ}),
    Row("allow preemption from other cluster queues if target cq is not exhausted for the requested resource",
        [adm("a1", "a", -1, cpu="1")] + [adm(f"b{i}", "b", 0, cpu="1") for i in (1, 2, 3, 4)]
        + [adm("b5", "b", -1, cpu="1")],
        inc(0, cpu="2"), "a", CPU, {"a1": IN_CQ, "b5": RECLAIM}),
    Row("long range preemption",
        [adm("to-be-preempted", "cq-right", cpu="5")], inc(0, cpu="8"), "cq-left", CPU, {"to-be-preempted": RECLAIM},
        cqs=[cluster_queue("cq-left", [[("default", [("cpu", "10")])]], cohort="cohort-left",
                           preemption={"reclaimWithinCohort": ANY}),
             cluster_queue("cq-right", [[("default", [("cpu", "0")])]], cohort="cohort-right")],
        cohorts=[cohort("root"), cohort("cohort-left", "root"), cohort("cohort-right", "root")]),
]

NOT_PORTED_PREEMPTION: dict[str, str] = {}     # every TestPreemption row of the stored version is ported


# --- TestFairPreemptions ---------------------------------------------------------------------------------------
def fair_cq(name: str, nominal: str = "3", weight: str = None, thr: bool = True, cohort_name: str = "all",
            preemption: dict = None) -> str:
    pre = preemption if preemption is not None else {"withinClusterQueue": LP, "reclaimWithinCohort": ANY,
                                                     **({"borrowWithinCohort": bwc(-3)} if thr else {})}
    return cluster_queue(name, [[("default", [("cpu", nominal)])]], cohort=cohort_name, preemption=pre or None,
                         weight=weight)


BASE_CQS = [fair_cq("a"), fair_cq("b"), fair_cq("c"), fair_cq("preemptible", "0", preemption={})]


def units(cq: str, *names: str, priority: int = 0) -> list:
    return [adm(n, cq, priority, cpu="1") for n in names]


def cpu_adm(name: str, cq: str, n: str, priority: int = 0) -> tuple:
    return adm(name, cq, priority, cpu=n)


A3 = units("a", "a1", "a2", "a3")
B5 = units("b", "b1", "b2", "b3", "b4", "b5")
WEIGHTED = [fair_cq("a", weight="2", thr=False), fair_cq("b", thr=False), fair_cq("c", thr=False)]
ZERO_B = [fair_cq("a", thr=False), fair_cq("b", weight="0", thr=False), fair_cq("c", thr=False)]

FAIR_ROWS = [
    Row("reclaim nominal from user using the most", A3 + B5 + units("c", "c1"), inc(cpu="1"), "c", CPU, {"b1": FAIR}),
    Row("can reclaim from queue using less, if taking the latest workload from user using the most isn't enough",
        [cpu_adm("a1", "a", "3"), cpu_adm("a2", "a", "1"), cpu_adm("b1", "b", "2"), cpu_adm("b2", "b", "3")],
        inc(cpu="3"), "c", CPU, {"a1": FAIR}),
    Row("reclaim borrowable quota from user using the most", A3 + B5 + units("c", "c1"), inc(cpu="1"), "a", CPU,
        {"b1": FAIR}),
    Row("preempt one from each CQ borrowing",
        [cpu_adm("a1", "a", "0.5"), cpu_adm("a2", "a", "0.5"), cpu_adm("a3", "a", "3"), cpu_adm("b1", "b", "0.5"),
         cpu_adm("b2", "b", "0.5"), cpu_adm("b3", "b", "3")],
        inc(cpu="2"), "c", CPU, {"a1": FAIR, "b1": FAIR}),
    Row("can't preempt when everyone under nominal", A3 + units("b", "b1", "b2", "b3") + units("c", "c1", "c2", "c3"),
        inc(cpu="1"), "c", CPU, {}),
    Row("can't preempt when it would switch the imbalance", A3 + B5, inc(cpu="2"), "a", CPU, {}),
    Row("can preempt lower priority workloads from same CQ",
        units("a", "a1_low", "a2_low", priority=-1) + units("a", "a3", "a4") + B5, inc(cpu="2"), "a", CPU,
        {"a1_low": IN_CQ, "a2_low": IN_CQ}),
    Row("can preempt a combination of same CQ and highest user",
        units("a", "a_low", priority=-1) + units("a", "a2", "a3") + B5 + units("b", "b6"), inc(cpu="2"), "a", CPU,
        {"a_low": IN_CQ, "b1": FAIR}),
    Row("preempt huge workload if there is no other option, as long as the target CQ gets a lower share",
        [cpu_adm("b1", "b", "9")], inc(cpu="2"), "a", CPU, {"b1": FAIR}),
    Row("can't preempt huge workload if the incoming is also huge",
        [cpu_adm("a1", "a", "2"), cpu_adm("b1", "b", "7")], inc(cpu="5"), "a", CPU, {}),
    Row("can't preempt 2 smaller workloads if the incoming is huge",
        [cpu_adm("b1", "b", "2"), cpu_adm("b2", "b", "2"), cpu_adm("b3", "b", "3")], inc(cpu="6"), "a", CPU, {}),
    Row("preempt from target and others even if over nominal",
        [cpu_adm("a1_low", "a", "2", -1), cpu_adm("a2_low", "a", "1", -1), cpu_adm("b1", "b", "3"),
         cpu_adm("b2", "b", "3")],
        inc(cpu="4"), "a", CPU, {"a1_low": IN_CQ, "b1": FAIR}),
    Row("prefer to preempt workloads that don't make the target CQ have the biggest share",
        [cpu_adm("b1", "b", "2"), cpu_adm("b2", "b", "1"), cpu_adm("b3", "b", "2"), cpu_adm("c1", "c", "1")],
        inc(cpu="3.5"), "a", CPU, {"b2": FAIR}),
    Row("preempt from different cluster queues if the end result has a smaller max share",
        [cpu_adm("b1", "b", "2"), cpu_adm("b2", "b", "2.5"), cpu_adm("c1", "c", "2"), cpu_adm("c2", "c", "2.5")],
        inc(cpu="3.5"), "a", CPU, {"b1": FAIR, "c1": FAIR}),
    Row("scenario above does not flap",
        [cpu_adm("a1", "a", "3.5"), cpu_adm("b2", "b", "2.5"), cpu_adm("c2", "c", "2.5")], inc(cpu="2"), "b", CPU, {}),
    Row("cannot preempt if it would make the candidate CQ go under nominal after preempting one element",
        [cpu_adm("b1", "b", "3"), cpu_adm("b2", "b", "3"), cpu_adm("c1", "c", "3")], inc(cpu="4"), "a", CPU, {}),
    Row("workloads under priority threshold not capriciously preempted",
        A3 + units("b", "b1", "b2", "b3") + units("preemptible", "preemptible1", "preemptible2", "preemptible3",
                                                  priority=-3),
        inc(cpu="2"), "a", CPU, {}),
    Row("preempt lower priority first, even if big",
        [cpu_adm("a1", "a", "3"), cpu_adm("b_low", "b", "5", 0), cpu_adm("b_high", "b", "1", 1)],
        inc(cpu="1"), "a", CPU, {"b_low": FAIR}, strategies=["LessThanInitialShare"]),
    Row("preempt workload that doesn't transfer the imbalance, even if high priority",
        [cpu_adm("a1", "a", "3"), cpu_adm("b_low", "b", "5", 0), cpu_adm("b_high", "b", "1", 1)],
        inc(cpu="1"), "a", CPU, {"b_high": FAIR}, strategies=["LessThanOrEqualToFinalShare"]),
    Row("CQ with higher weight can preempt more", A3 + B5 + units("b", "b6"), inc(cpu="2"), "a", CPU,
        {"b1": FAIR, "b2": FAIR}, cqs=WEIGHTED),
    Row("can preempt anything borrowing from CQ with 0 weight", A3 + B5 + units("b", "b6"), inc(cpu="3"), "a", CPU,
        {"b1": FAIR, "b2": FAIR, "b3": FAIR}, cqs=ZERO_B),
    Row("can't preempt nominal from CQ with 0 weight", A3 + units("b", "b1", "b2", "b3"), inc(cpu="1"), "a", CPU, {},
        cqs=ZERO_B[:2]),
    Row("can't preempt nominal from Cohort with 0 weight", units("right-cq", "right-1"), inc(cpu="1"), "left-cq", CPU,
        {}, cqs=[fair_cq("left-cq", "0", cohort_name="root", preemption={"reclaimWithinCohort": ANY}),
                 fair_cq("right-cq", "0", weight="0", cohort_name="right-cohort",
                         preemption={"reclaimWithinCohort": ANY})],
        cohorts=[cohort("root"), cohort("right-cohort", "root", groups=[[("default", [("cpu", "1")])]], weight="0")]),
    Row("can preempt within cluster queue when no cohort", units("a", "a1"), inc(1000, cpu="1"), "a", CPU,
        {"a1": IN_CQ},
        cqs=[cluster_queue("a", [[("default", [("cpu", "1")])]], preemption={"withinClusterQueue": LP})]),
    Row("hierarchical preemption",
        [adm(f"{q}{i}", q, i, cpu="1") for q in "bcde" for i in range(1, 6)], inc(cpu="5"), "a", CPU,
        {"b1": FAIR, "b2": FAIR, "c1": FAIR, "c2": FAIR, "e1": FAIR},
        cqs=[fair_cq("a", "1", weight="2", cohort_name="LEFT", preemption={"reclaimWithinCohort": ANY}),
             fair_cq("b", "1", cohort_name="LEFT", preemption={}), fair_cq("c", "1", cohort_name="ROOT", preemption={}),
             fair_cq("d", "1", cohort_name="RIGHT", preemption={}),
             fair_cq("e", "1", weight="0.99", cohort_name="RIGHT", preemption={})],
        cohorts=[cohort("ROOT", groups=[[("default", [("cpu", "5")])]]),
                 cohort("LEFT", "ROOT", groups=[[("default", [("cpu", "5")])]], weight="2"),
                 cohort("RIGHT", "ROOT", groups=[[("default", [("cpu", "5")])]])]),
    Row("borrowing cq in non-borrowing cohort is protected",
        units("a", "a1", "a2", "a3", priority=-1) + units("b", "b1", priority=-1), inc(cpu="5"), "a", CPU,
        {"a1": IN_CQ, "a2": IN_CQ, "a3": IN_CQ},
        cqs=[fair_cq("a", "5", weight="10", cohort_name="ROOT",
                     preemption={"reclaimWithinCohort": ANY, "withinClusterQueue": LP}),
             cluster_queue("b", [[("default", [("cpu", "0")])]], cohort="RIGHT", weight="0.1")],
        cohorts=[cohort("ROOT"), cohort("RIGHT", "ROOT", groups=[[("default", [("cpu", "1")])]], weight="0.1")]),
    Row("forced to preempt within clusterqueue because borrowing workload too important",
        units("a", "a1", "a2", "a3", priority=-1) + [cpu_adm("b1", "b", "4", 100)], inc(cpu="4"), "a", CPU,
        {"a1": IN_CQ, "a2": IN_CQ, "a3": IN_CQ},
        cqs=[fair_cq("a", "5", weight="10", cohort_name="ROOT",
                     preemption={"reclaimWithinCohort": LP, "withinClusterQueue": LP}),
             cluster_queue("b", [[("default", [("cpu", "0")])]], cohort="RIGHT", weight="0.1")],
        cohorts=[cohort("ROOT"), cohort("RIGHT", "ROOT", groups=[[("default", [("cpu", "3")])]], weight="0.1")]),
    Row("deep preemption", units("b", "b1"), inc(cpu="1"), "a", CPU, {"b1": FAIR},
        cqs=[fair_cq("a", "0", cohort_name="AAA", preemption={"reclaimWithinCohort": ANY}),
             fair_cq("b", "0", cohort_name="BBB", preemption={})],
        cohorts=[cohort("ROOT"), cohort("A", "ROOT", weight="1.01"), cohort("AA", "A"), cohort("AAA", "AA"),
                 cohort("B", "ROOT", weight="0.99"), cohort("BB", "B"), cohort("BBB", "BB"), cohort("C", "ROOT"),
                 cohort("CC", "C"), cohort("CCC", "CC"),
                 cohort("CCCC", "CCC", groups=[[("default", [("cpu", "1")])]])]),
    Row("cq with zero weight can reclaim nominal quota", units("b", "b1"), inc(cpu="1"), "a", CPU, {"b1": FAIR},
        cqs=[fair_cq("a", "1", weight="0.0", cohort_name="ROOT", preemption={"reclaimWithinCohort": ANY}),
             fair_cq("b", "0", weight="1.0", cohort_name="ROOT", preemption={})]),
    Row("cohort with zero weight can reclaim nominal quota", units("b", "b1"), inc(cpu="1"), "a", CPU, {"b1": FAIR},
        cqs=[fair_cq("a", "0", weight="0.0", cohort_name="A", preemption={"reclaimWithinCohort": ANY}),
             fair_cq("b", "0", weight="1.0", cohort_name="ROOT", preemption={})],
        cohorts=[cohort("A", "ROOT", groups=[[("default", [("cpu", "1")])]], weight="0.0")]),
]


# --- TestHierarchicalPreemptions ---------------------------------------------------------------------------------
# A ClusterQueue upstream gives flavor "default" without resources has nominal 0 for what the rows request.
def hq(name: str, cohort_name: str, nominal: str = "0", preemption: dict = None, mem: str = None, lending: str = None
       ) -> str:
    res = [("cpu", nominal, None, lending)] + ([("memory", mem)] if mem is not None else [])
    return cluster_queue(name, [[("default", res)]], cohort=cohort_name,
                         preemption=preemption if preemption is not None else {"withinClusterQueue": LP,
                                                                                "reclaimWithinCohort": ANY})


def hcohort(name: str, parent: str = "", cpu: str = None, mem: str = None) -> str:
    res = ([("cpu", cpu)] if cpu is not None else []) + ([("memory", mem)] if mem is not None else [])
    return cohort(name, parent, groups=[[("default", res)]] if res else None)


BWC_Q = {"withinClusterQueue": LP, "reclaimWithinCohort": ANY, "borrowWithinCohort": bwc(0)}
BWC_Q_LP = {"withinClusterQueue": LP, "reclaimWithinCohort": LP, "borrowWithinCohort": bwc(0)}
R_C2 = [hcohort("r"), hcohort("c", "r", cpu="2")]

HIERARCHICAL_ROWS = [
    Row("preempt with hierarchical advantage", [cpu_adm("admitted2", "q_borrowing", "2")], inc(0, cpu="2"), "q", CPU,
        {"admitted2": RECLAIM}, cqs=[hq("q", "c"), hq("q_borrowing", "r")], cohorts=R_C2),
    Row("avoid queues within nominal quota",
        [cpu_adm("admitted1", "q_nominal", "2", -10), cpu_adm("admitted2", "q_borrowing", "2")], inc(0, cpu="2"), "q",
        CPU, {"admitted2": RECLAIM}, cqs=[hq("q_nominal", "r", "2"), hq("q", "c"), hq("q_borrowing", "r")],
        cohorts=R_C2),
    Row("preempt multiple with hierarchical advantage",
        [cpu_adm("admitted1", "q_borrowing", "1", 1), cpu_adm("admitted2", "q_borrowing", "1", 2)], inc(0, cpu="2"),
        "q", CPU, {"admitted1": RECLAIM, "admitted2": RECLAIM}, cqs=[hq("q", "c"), hq("q_borrowing", "r")],
        cohorts=R_C2),
    # admitted_preemptible requests 1 cpu but its admission holds 2 (upstream's ReserveQuota assignment)
    Row("preempt in cohort and own CQ",
        [cpu_adm("admitted_not_preemptible", "q_same_cohort", "1", 1), cpu_adm("admitted_preemptible", "q_same_cohort", "2", 0),
         cpu_adm("admitted_own_queue", "q", "1", -1)], inc(1, cpu="2"), "q", CPU,
        {"admitted_preemptible": WHILE_BORROWING, "admitted_own_queue": IN_CQ},
        cqs=[hq("q", "c", preemption=BWC_Q), hq("q_same_cohort", "c")], cohorts=[hcohort("r"), hcohort("c", "r", cpu="3")]),
    Row("prefer to preempt hierarchical candidate",
        [cpu_adm("admitted_borrowing", "q_borrowing", "1", 1), cpu_adm("admitted_same_queue", "q", "1", -2)],
        inc(0, cpu="1"), "q", CPU, {"admitted_borrowing": RECLAIM}, cqs=[hq("q", "c"), hq("q_borrowing", "r")],
        cohorts=R_C2),
    Row("forced to preempt priority candidate",
        [cpu_adm("admitted_nominal", "q_nominal", "2", -10), cpu_adm("admitted_same_cohort", "q_same_cohort", "2", -1)],
        inc(0, cpu="2"), "q", CPU, {"admitted_same_cohort": WHILE_BORROWING},
        cqs=[hq("q", "c", preemption=BWC_Q), hq("q_nominal", "r", "2"), hq("q_same_cohort", "c")], cohorts=R_C2),
    Row("incoming workload fits in CQ nominal quota",
        [cpu_adm("admitted_borrowing", "q_borrowing", "3", 10), cpu_adm("admitted_same_cohort", "q_same_cohort", "3", 10)],
        inc(0, cpu="4"), "q", CPU, {"admitted_borrowing": RECLAIM, "admitted_same_cohort": RECLAIM},
        cqs=[hq("q", "c", "4"), hq("q_borrowing", "r"), hq("q_same_cohort", "c")], cohorts=R_C2),
    Row("preempt hierarchical and priority candidates",
        [cpu_adm("admitted_borrowing", "q_borrowing", "2", -1),
         cpu_adm("admitted_same_cohort_preemptible", "q_same_cohort", "1", -1),
         cpu_adm("admitted_borrowing_not_preemptible", "q_borrowing", "2", 1)],
        inc(0, cpu="3"), "q", CPU, {"admitted_borrowing": RECLAIM, "admitted_same_cohort_preemptible": WHILE_BORROWING},
        cqs=[hq("q", "c", preemption=BWC_Q_LP), hq("q_borrowing", "r"), hq("q_same_cohort", "c")],
        cohorts=[hcohort("r", cpu="1"), hcohort("c", "r", cpu="4")]),
    Row("preempt hierarchical candidates and inside CQ",
        [cpu_adm("admitted_borrowing", "q_borrowing", "2", -1), cpu_adm("admitted_same_queue_preemptible", "q", "1", -1),
         cpu_adm("admitted_borrowing_not_preemptible", "q_borrowing", "2", 1)],
        inc(0, cpu="3"), "q", CPU, {"admitted_borrowing": RECLAIM, "admitted_same_queue_preemptible": IN_CQ},
        cqs=[hq("q", "c", preemption=BWC_Q_LP), hq("q_borrowing", "r"), hq("q_same_cohort", "c")],
        cohorts=[hcohort("r", cpu="1"), hcohort("c", "r", cpu="4")]),
    Row("reclaim nominal quota from lowest priority workload, excluding non-borrowing",
        [cpu_adm("admitted_borrowing_prio_8", "q_borrowing", "1", 8), cpu_adm("admitted_borrowing_prio_9", "q_borrowing", "1", 9),
         cpu_adm("admitted_borrowing_prio_10", "q_borrowing", "1", 9), cpu_adm("admitted_nominal", "q_nominal", "2", -2)],
        inc(0, cpu="1"), "q", CPU, {"admitted_borrowing_prio_8": RECLAIM},
        cqs=[hq("q", "c"), hq("q_borrowing", "r"), hq("q_nominal", "r", "2")],
        cohorts=[hcohort("r"), hcohort("c", "r", cpu="3")]),
    Row("infeasible preemption all available workloads in pruned subtrees",
        [cpu_adm("admitted_other_1", "q_other", "1", -10), cpu_adm("admitted_other_2", "q_other", "1", -10),
         cpu_adm("admitted_same_cohort", "q_same_cohort", "2", 0)], inc(0, cpu="2"), "q", CPU, {},
        cqs=[hq("q_other", "c_other"), hq("q", "c"), hq("q_same_cohort", "c")],
        cohorts=[hcohort("r"), hcohort("c", "r", cpu="2"), hcohort("c_other", "r", cpu="2")]),
    Row("hiearchical preemption with multiple resources",
        [adm("admitted_borrowing", "q_borrowing", 0, cpu="3", memory="1Gi"),
         adm("admitted_same_cohort", "q_same_cohort", -2, cpu="1", memory="3Gi")],
        inc(-2, cpu="2", memory="1Gi"), "q", preempt("cpu", "memory"), {"admitted_borrowing": RECLAIM},
        cqs=[hq("q", "c", mem="0"), hq("q_borrowing", "r", mem="0"), hq("q_same_cohort", "c", mem="0")],
        cohorts=[hcohort("r", cpu="3"), hcohort("c", "r", cpu="4", mem="4Gi")]),
    Row("respect lending limits", [cpu_adm("admitted_borrowing", "q_borrowing", "4", 0)], inc(-2, cpu="5"), "q", CPU,
        {"admitted_borrowing": RECLAIM}, cqs=[hq("q", "c", "3", lending="2"), hq("q_borrowing", "r")], cohorts=R_C2),
    Row("reclaim in complex hierarchy",
        [cpu_adm("admitted_borrowing_1", "q1", "4", -6), cpu_adm("admitted_borrowing_2", "q1", "4", -5),
         cpu_adm("admitted_borrowing_3", "q2", "4", -9), cpu_adm("admitted_borrowing_4", "q2", "4", -10),
         cpu_adm("admitted_borrowing_5", "q3", "4", -4), cpu_adm("admitted_borrowing_6", "q3", "3", -3),
         cpu_adm("admitted_borrowing_7", "q4", "2", 4), cpu_adm("admitted_borrowing_8", "q4", "3", 2)],
        inc(-2, cpu="7"), "q5", CPU, {"admitted_borrowing_1": RECLAIM, "admitted_borrowing_4": RECLAIM},
        cqs=[hq(q, c) for q, c in (("q1", "c12"), ("q2", "c23"), ("q3", "c22"), ("q4", "c32"), ("q5", "c31"))],
        cohorts=[hcohort("r")] + [hcohort(n, p, cpu="4") for n, p in (("c11", "r"), ("c12", "r"), ("c21", "c11"),
                                                                        ("c22", "c11"), ("c23", "c11"), ("c31", "c21"),
                                                                        ("c32", "c21"))]),
]
NOT_PORTED_HIERARCHICAL = {
    "prefer to preempt evicted workloads": "the row's candidate holds quota while its Evicted condition is True "
                                           "(eviction not yet observed); gpusim releases a workload's quota as it "
                                           "evicts it, so such a workload cannot be expressed",
}

def _cluster(row: Row, fair: bool) -> tuple:
    cqs = row.cqs if row.cqs is not None else (BASE_CQS if fair else DEFAULT_CQS)
    docs = FLAVORS + cqs + row.cohorts
    if fair:
        strategies = f"{{preemptionStrategies: {row.strategies}}}" if row.strategies else "{}"
        docs.append(config(f"fairSharing: {strategies}\nfeatureGates: {{FairSharingPreemptWithinNominal: false}}\n"))
    for name, _, priority, req, _, _, _ in row.admitted:
        docs.append(workload(name, "default", priority=priority, requests=req))
    priority, _, podsets = row.incoming
    docs.append(workload("incoming", "default", priority=priority, podsets=podsets))
    c = Cluster(docs)
    for name, cq, _, _, flavors, at, created in row.admitted:
        c.reserve(f"default/{name}", cq, flavors, at=at, created=created)
    info = c.incoming("default/incoming", row.target, created=row.incoming[1])
    return c, info


def _params(rows: list) -> list:
    return [pytest.param(r, id=r.name, marks=[pytest.mark.xfail(strict=True, reason=r.xfail)] if r.xfail else [])
            for r in rows]


def _want(row: Row) -> set[str]:
    from tests.kueue_upstream import k8s
    return {f"default/{k8s(k)}:{reason}" for k, reason in row.want.items()}


@pytest.mark.parametrize("row", _params(PREEMPTION_ROWS))
def test_preemption(row: Row):
    c, info = _cluster(row, fair=False)
    assert c.get_targets(info, row.assignment) == _want(row)


@pytest.mark.parametrize("row", _params(HIERARCHICAL_ROWS))
def test_hierarchical_preemptions(row: Row):
    c, info = _cluster(row, fair=False)
    assert c.get_targets(info, row.assignment) == _want(row)


@pytest.mark.parametrize("row", _params(FAIR_ROWS))
def test_fair_preemptions(row: Row):
    c, info = _cluster(row, fair=True)
    assert c.get_targets(info, row.assignment) == _want(row)


def test_every_row_is_ported():
    """TestPreemption has 36 rows, TestFairPreemptions 30 and TestHierarchicalPreemptions 15 in the stored version."""
    assert len(PREEMPTION_ROWS) + len(NOT_PORTED_PREEMPTION) == 36
    assert len({r.name for r in PREEMPTION_ROWS}) == len(PREEMPTION_ROWS)
    assert len(FAIR_ROWS) == 30
    assert len(HIERARCHICAL_ROWS) + len(NOT_PORTED_HIERARCHICAL) == 15
