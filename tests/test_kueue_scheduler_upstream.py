"""Kueue's scheduling cycle against upstream's own table: kubernetes-sigs/kueue pkg/scheduler/scheduler_test.go,
functions TestSchedule and TestLastSchedulingContext (read at commit 005e97cfe1cce0acdb52e8ee3f06136503d6333d, the
stored version; its API is v1beta1, the rows are written here with the v1beta2 objects gpusim models for Kueue 0.19:
``whenCanPreempt: Preempt`` is ``MayStopSearch``).

Each row builds the row's ClusterQueues, Cohorts, LocalQueues and Namespaces, admits the row's ``ReserveQuota``
workloads with their flavors, queues the pending ones and runs ONE scheduling cycle (``scheduler.schedule``) of
gpusim's Kueue (tests/kueue_upstream.py). It then compares what upstream compares: the workloads admitted in the
cycle and their flavors (``wantScheduled``), every workload holding quota afterwards (``wantAssignments``; upstream
keeps preempted workloads in its cache until their update arrives, gpusim evicts them at once, so they are left
out here), the preempted workloads (``wantPreempted``), the workloads left in the ClusterQueues' heaps
(``wantLeft``; gpusim also requeues the preempted workloads, which are not compared) and the inadmissible ones
(``wantInadmissibleLeft``). ``wantEvents`` is compared where the row has it.

Translation notes: names the apiserver refuses (``ClusterQueueA``, ``cq_a``, Cohort ``A``) are lowered and '_'
becomes '-'; a ``borrowingLimit`` on a ClusterQueue without a cohort is dropped (the webhook requires it nil; it has
no effect); a preemption policy a row leaves empty is written LowerPriority, as Kueue's code treats it
(tests/kueue_upstream.py ``upstream_preemption``). Rows gpusim cannot express are in ``NOT_PORTED``.
"""
from __future__ import annotations

import pytest

from tests.kueue_upstream import (Cluster, cluster_queue, cohort, config, flavor, k8s, local_queue, namespace,
                                  workload)


def sel(dep: str) -> dict:
    return {"matchExpressions": [{"key": "dep", "operator": "In", "values": [dep]}]}


LP, ANY, NEVER = "LowerPriority", "Any", "Never"
FAIR = config("fairSharing: {}\n")

# TestSchedule's shared objects
BASE = [
    flavor("default"), flavor("on-demand"), flavor("spot"), flavor("model-a"),
    namespace("eng-alpha", {"dep": "eng"}), namespace("eng-beta", {"dep": "eng"}),
    namespace("eng-gamma", {"dep": "eng"}), namespace("sales", {"dep": "sales"}), namespace("lend", {"dep": "lend"}),
    cluster_queue("sales", [[("default", [("cpu", "50", "0")])]], selector=sel("sales"), strategy="StrictFIFO"),
    cluster_queue("eng-alpha", [[("on-demand", [("cpu", "50", "50")]), ("spot", [("cpu", "100", "0")])]],
                  cohort="eng", selector=sel("eng"), strategy="StrictFIFO"),
    cluster_queue("eng-beta", [[("on-demand", [("cpu", "50", "10")]), ("spot", [("cpu", "0", "100")])],
                               [("model-a", [("example.com/gpu", "20", "0")])]],
                  cohort="eng", selector=sel("eng"), strategy="StrictFIFO",
                  preemption={"reclaimWithinCohort": ANY, "withinClusterQueue": LP}),
    cluster_queue("lend-a", [[("default", [("cpu", "3", "", "2")])]], cohort="lend", selector=sel("lend")),
    cluster_queue("lend-b", [[("default", [("cpu", "2", "", "2")])]], cohort="lend", selector=sel("lend")),
    local_queue("main", "sales", "sales"), local_queue("blocked", "sales", "eng-alpha"),
    local_queue("main", "eng-alpha", "eng-alpha"), local_queue("main", "eng-beta", "eng-beta"),
    local_queue("lend-a-queue", "lend", "lend-a"), local_queue("lend-b-queue", "lend", "lend-b"),
]


def cpu(n: str) -> dict:
    return {"cpu": n}


def ps(name: str, count: int, req: dict = None, **kw: str) -> tuple:
    return (name, count, {**(req or {}), **kw})


GPU = "example.com/gpu"
ON, SPOT = {"cpu": "on-demand"}, {"cpu": "spot"}


class Row:
    def __init__(self, name: str, workloads: list, reserved: list = (), pending: list = (), cqs: list = (),
                 lqs: list = (), cohorts: list = (), fair: bool = False, scheduled: dict = None,
                 preempted: set = frozenset(), left: dict = None, inadmissible: dict = None,
                 events: list = None, xfail: str = ""):
        self.name, self.workloads, self.reserved, self.pending = name, workloads, list(reserved), list(pending)
        self.cqs, self.lqs, self.cohorts, self.fair = list(cqs), list(lqs), list(cohorts), fair
        self.scheduled, self.preempted = scheduled or {}, set(preempted)
        self.left, self.inadmissible, self.events, self.xfail = left or {}, inadmissible or {}, events, xfail


def other_cqs(*specs) -> list:
    """ClusterQueues other-alpha/-beta/-gamma... in cohort "other" (one flavor), with LocalQueue "other" in the
    namespace eng-alpha/-beta/-gamma."""
    return [cluster_queue(name, [[(fl, res)]], cohort="other", preemption=pre) for name, fl, res, pre in specs]


OTHER_LQS = [local_queue("other", "eng-alpha", "other-alpha"), local_queue("other", "eng-beta", "other-beta"),
             local_queue("other", "eng-gamma", "other-gamma")]
LP_BOTH = {"withinClusterQueue": LP, "reclaimWithinCohort": LP}
ANY_LP = {"reclaimWithinCohort": ANY, "withinClusterQueue": LP}

ROWS = [
    Row("use second flavor when the first has no preemption candidates; WhenCanPreempt: Preempt",
        cqs=[cluster_queue("other-alpha", [[("on-demand", [("cpu", "50", "50")]), ("spot", [("cpu", "100", "0")])]],
                           preemption={"withinClusterQueue": LP}, fungibility={"whenCanPreempt": "MayStopSearch"})],
        lqs=[local_queue("other", "eng-alpha", "other-alpha")],
        workloads=[workload("admitted", "eng-alpha", "other", requests=cpu("50")),
                   workload("new", "eng-alpha", "other", requests=cpu("20"))],
        reserved=[("eng-alpha/admitted", "other-alpha", ON)], pending=["eng-alpha/new"],
        scheduled={"eng-alpha/new": ("other-alpha", [SPOT])}),
    # the row's Workload carries an AdmissionCheck in state Ready, which gpusim cannot express (no admission
    # checks); a Ready check lets the workload be Admitted right after QuotaReserved, as a workload without checks
    Row("workload fits in single clusterQueue, with check state ready",
        workloads=[workload("foo", "sales", "main", podsets=[ps("one", 10, cpu="1")])], pending=["sales/foo"],
        scheduled={"sales/foo": ("sales", [{"cpu": "default"}])},
        events=[("sales/foo", "Normal", "QuotaReserved"), ("sales/foo", "Normal", "Admitted")]),
    Row("single clusterQueue full",
        workloads=[workload("new", "sales", "main", podsets=[ps("one", 11, cpu="1")]),
                   workload("assigned", "sales", podsets=[ps("one", 40, cpu="1")])],
        reserved=[("sales/assigned", "sales", {"cpu": "default"})], pending=["sales/new"],
        left={"sales": ["sales/new"]}),
    Row("failed to match clusterQueue selector",
        workloads=[workload("new", "sales", "blocked", podsets=[ps("one", 1, cpu="1")])], pending=["sales/new"],
        inadmissible={"eng-alpha": ["sales/new"]}),
    Row("admit in different cohorts",
        workloads=[workload("new", "sales", "main", podsets=[ps("one", 1, cpu="1")]),
                   workload("new", "eng-alpha", "main", podsets=[ps("one", 51, cpu="1")])],
        pending=["sales/new", "eng-alpha/new"],
        scheduled={"sales/new": ("sales", [{"cpu": "default"}]), "eng-alpha/new": ("eng-alpha", [ON])}),
    Row("admit in same cohort with no borrowing",
        workloads=[workload("new", "eng-alpha", "main", podsets=[ps("one", 40, cpu="1")]),
                   workload("new", "eng-beta", "main", podsets=[ps("one", 40, cpu="1")])],
        pending=["eng-alpha/new", "eng-beta/new"],
        scheduled={"eng-alpha/new": ("eng-alpha", [ON]), "eng-beta/new": ("eng-beta", [ON])}),
    Row("assign multiple resources and flavors",
        workloads=[workload("new", "eng-beta", "main", podsets=[ps("one", 10, {"cpu": "6", GPU: "1"}),
                                                                ps("two", 40, cpu="1")])],
        pending=["eng-beta/new"],
        scheduled={"eng-beta/new": ("eng-beta", [{"cpu": "on-demand", GPU: "model-a"}, SPOT])}),
    Row("cannot borrow if cohort was assigned and would result in overadmission",
        workloads=[workload("new", "eng-alpha", "main", podsets=[ps("one", 45, cpu="1")]),
                   workload("new", "eng-beta", "main", podsets=[ps("one", 56, cpu="1")])],
        pending=["eng-alpha/new", "eng-beta/new"],
        scheduled={"eng-alpha/new": ("eng-alpha", [ON])}, left={"eng-beta": ["eng-beta/new"]}),
    Row("can borrow if cohort was assigned and will not result in overadmission",
        workloads=[workload("new", "eng-alpha", "main", podsets=[ps("one", 45, cpu="1")]),
                   workload("new", "eng-beta", "main", podsets=[ps("one", 55, cpu="1")])],
        pending=["eng-alpha/new", "eng-beta/new"],
        scheduled={"eng-alpha/new": ("eng-alpha", [ON]), "eng-beta/new": ("eng-beta", [ON])}),
    Row("can borrow if needs reclaim from cohort in different flavor",
        workloads=[workload("can-reclaim", "eng-alpha", "main", requests=cpu("100")),
                   workload("needs-to-borrow", "eng-beta", "main", requests=cpu("1")),
                   workload("user-on-demand", "eng-beta", requests=cpu("50")),
                   workload("user-spot", "eng-beta", requests=cpu("1"))],
        reserved=[("eng-beta/user-on-demand", "eng-beta", ON), ("eng-beta/user-spot", "eng-beta", SPOT)],
        pending=["eng-alpha/can-reclaim", "eng-beta/needs-to-borrow"],
        scheduled={"eng-beta/needs-to-borrow": ("eng-beta", [ON])}, left={"eng-alpha": ["eng-alpha/can-reclaim"]}),
    Row("workload exceeds lending limit when borrow in cohort",
        workloads=[workload("a", "lend", requests=cpu("2")), workload("b", "lend", "lend-b-queue", requests=cpu("3"))],
        reserved=[("lend/a", "lend-b", {"cpu": "default"})], pending=["lend/b"],
        inadmissible={"lend-b": ["lend/b"]}),
    Row("preempt workloads in ClusterQueue and cohort",
        workloads=[workload("preemptor", "eng-beta", "main", requests=cpu("20")),
                   workload("use-all-spot", "eng-alpha", requests=cpu("100")),
                   workload("low-1", "eng-beta", priority=-1, requests=cpu("30")),
                   workload("low-2", "eng-beta", priority=-2, requests=cpu("10")),
                   workload("borrower", "eng-alpha", requests=cpu("60"))],
        reserved=[("eng-alpha/use-all-spot", "eng-alpha", SPOT), ("eng-beta/low-1", "eng-beta", ON),
                  ("eng-beta/low-2", "eng-beta", ON), ("eng-alpha/borrower", "eng-alpha", ON)],
        pending=["eng-beta/preemptor"],
        preempted={"eng-alpha/borrower", "eng-beta/low-2"}, left={"eng-beta": ["eng-beta/preemptor"]}),
    Row("multiple CQs need preemption",
        cqs=[cluster_queue("other-alpha", [[("on-demand", [("cpu", "50", "50")])]], cohort="other"),
             cluster_queue("other-beta", [[("on-demand", [("cpu", "50", "10")])]], cohort="other",
                           preemption=ANY_LP)],
        lqs=OTHER_LQS[:2],
        workloads=[workload("preemptor", "eng-beta", "other", priority=-1, requests=cpu("1")),
                   workload("pending", "eng-alpha", "other", priority=1, requests=cpu("1")),
                   workload("use-all", "eng-alpha", requests=cpu("100"))],
        reserved=[("eng-alpha/use-all", "other-alpha", ON)], pending=["eng-beta/preemptor", "eng-alpha/pending"],
        preempted={"eng-alpha/use-all"}, left={"other-beta": ["eng-beta/preemptor"]},
        inadmissible={"other-alpha": ["eng-alpha/pending"]}),
    Row("cannot borrow resource not listed in clusterQueue",
        workloads=[workload("new", "eng-alpha", "main", requests={GPU: "1"})], pending=["eng-alpha/new"],
        left={"eng-alpha": ["eng-alpha/new"]}),
    Row("not enough resources to borrow, fallback to next flavor; WhenCanPreempt: TryNextFlavor",
        workloads=[workload("new", "eng-alpha", "main", podsets=[ps("one", 60, cpu="1")]),
                   workload("existing", "eng-beta", podsets=[ps("one", 45, cpu="1")])],
        reserved=[("eng-beta/existing", "eng-beta", ON)], pending=["eng-alpha/new"],
        scheduled={"eng-alpha/new": ("eng-alpha", [SPOT])}),
    Row("no overadmission while borrowing",
        cqs=[cluster_queue("eng-gamma", [[("on-demand", [("cpu", "50", "10")]), ("spot", [("cpu", "0", "100")])]],
                           cohort="eng", preemption=ANY_LP)],
        lqs=[local_queue("main", "eng-gamma", "eng-gamma")],
        workloads=[workload("new", "eng-beta", "main", podsets=[ps("one", 50, cpu="1")]),
                   workload("new-alpha", "eng-alpha", "main", podsets=[ps("one", 1, cpu="1")]),
                   workload("new-gamma", "eng-gamma", "main", podsets=[ps("one", 50, cpu="1")]),
                   workload("existing", "eng-gamma", podsets=[ps("borrow-on-demand", 51, cpu="1"),
                                                              ps("use-all-spot", 100, cpu="1")])],
        reserved=[("eng-gamma/existing", "eng-gamma", [ON, SPOT])],
        pending=[("eng-beta/new", -2), ("eng-alpha/new-alpha", -1), ("eng-gamma/new-gamma", 0)],
        scheduled={"eng-beta/new": ("eng-beta", [ON]), "eng-alpha/new-alpha": ("eng-alpha", [ON])},
        inadmissible={"eng-gamma": ["eng-gamma/new-gamma"]}),
]


def _three_cqs(r1: str) -> tuple:
    pre = ANY_LP
    rg = [[("default", [("r1", "10", "10"), ("r2", "10", "10")])]]
    return ([cluster_queue(n, rg, cohort="co", preemption=pre) for n in ("cq1", "cq2", "cq3")],
            [local_queue(f"lq{i}", "sales", f"cq{i}") for i in (1, 2, 3)])


for _name, _wl2, _both in [
        ("two workloads can borrow different resources from the same flavor in the same cycle", {"r2": "16"}, True),
        ("two workloads can borrow the same resources from the same flavor in the same cycle if fits in the cohort "
         "quota", {"r1": "14"}, True),
        ("only one workload can borrow one resources from the same flavor in the same cycle if cohort quota cannot "
         "fit", {"r1": "16"}, False)]:
    _cqs, _lqs = _three_cqs("r1")
    _sched = {"sales/wl1": ("cq1", [{"r1": "default"}])}
    if _both:
        _sched["sales/wl2"] = ("cq2", [{next(iter(_wl2)): "default"}])
    ROWS.append(Row(_name, cqs=_cqs, lqs=_lqs,
                    workloads=[workload("wl1", "sales", "lq1", priority=-1, requests={"r1": "16"}),
                               workload("wl2", "sales", "lq2", priority=-2, requests=_wl2)],
                    pending=["sales/wl1", "sales/wl2"], scheduled=_sched,
                    left={} if _both else {"cq2": ["sales/wl2"]}))

ROWS += [
    Row("preemption while borrowing, workload waiting for preemption should not block a borrowing workload in "
        "another CQ",
        cqs=[cluster_queue("cq_shared", [[("default", [("cpu", "4", "0")])]], cohort="preemption-while-borrowing"),
             cluster_queue("cq_a", [[("default", [("cpu", "0", "3")])]], cohort="preemption-while-borrowing",
                           preemption={"reclaimWithinCohort": LP, "borrowWithinCohort": {"policy": LP}}),
             cluster_queue("cq_b", [[("default", [("cpu", "0")])]], cohort="preemption-while-borrowing",
                           preemption={"reclaimWithinCohort": LP, "borrowWithinCohort": {"policy": LP}})],
        lqs=[local_queue("lq_a", "eng-alpha", "cq_a"), local_queue("lq_b", "eng-beta", "cq_b")],
        workloads=[workload("a", "eng-alpha", "lq_a", requests=cpu("3")),
                   workload("b", "eng-beta", "lq_b", requests=cpu("1")),
                   workload("admitted_a", "eng-alpha", "lq_a", requests=cpu("2"))],
        reserved=[("eng-alpha/admitted_a", "cq_a", {"cpu": "default"})],
        pending=[("eng-alpha/a", 1), ("eng-beta/b", 2)],
        scheduled={"eng-beta/b": ("cq_b", [{"cpu": "default"}])}, inadmissible={"cq_a": ["eng-alpha/a"]}),
    Row("with fair sharing: schedule workload with lowest share first", fair=True,
        cqs=[cluster_queue("eng-shared", [[("on-demand", [("cpu", "10", "0")])]], cohort="eng")],
        workloads=[workload("all_nominal", "eng-alpha", "main", podsets=[ps("one", 50, cpu="1")]),
                   workload("borrowing", "eng-beta", "main", podsets=[ps("one", 55, cpu="1")]),
                   workload("older_new", "eng-beta", "main", podsets=[ps("one", 1, cpu="1")]),
                   workload("new", "eng-alpha", "main", podsets=[ps("one", 5, cpu="1")])],
        reserved=[("eng-alpha/all_nominal", "eng-alpha", ON), ("eng-beta/borrowing", "eng-beta", ON)],
        pending=[("eng-beta/older_new", -60), ("eng-alpha/new", 0)],
        scheduled={"eng-alpha/new": ("eng-alpha", [ON])}, left={"eng-beta": ["eng-beta/older_new"]}),
]

# --- fair sharing rows with Cohort objects: queues lq-x in eng-alpha for ClusterQueue x ------------------------
ODCPU = lambda n: [[("on-demand", [("cpu", n)])]]  # noqa: E731


def fs_cqs(**cohorts: str) -> tuple:
    """ClusterQueue name → Cohort (on-demand cpu 0 each), LocalQueue lq-<name> in eng-alpha."""
    return ([cluster_queue(n, ODCPU("0"), cohort=c) for n, c in cohorts.items()],
            [local_queue(f"lq-{n}", "eng-alpha", n) for n in cohorts])


def one(name: str, queue: str, n: str, priority: int = 0) -> str:
    return workload(name, "eng-alpha", queue, podsets=[ps("one", 1, cpu=n)], priority=priority)


_c, _l = fs_cqs(d="B", e="B", f="C", g="C")
ROWS.append(Row(
    "hierarchical fair sharing schedule workload which wins tournament", fair=True, cqs=_c, lqs=_l,
    cohorts=[cohort("A", groups=ODCPU("200")), cohort("B", "A"), cohort("C", "A")],
    workloads=[one("d0", "lq-d", "10"), one("e0", "lq-e", "20"), one("g0", "lq-g", "100"), one("d1", "lq-d", "70"),
               one("e1", "lq-e", "61"), one("f1", "lq-f", "1"), one("g1", "lq-g", "1")],
    reserved=[("eng-alpha/d0", "d", ON), ("eng-alpha/e0", "e", ON), ("eng-alpha/g0", "g", ON)],
    pending=["eng-alpha/d1", "eng-alpha/e1", "eng-alpha/f1", "eng-alpha/g1"],
    scheduled={"eng-alpha/d1": ("d", [ON])},
    left={"e": ["eng-alpha/e1"], "g": ["eng-alpha/g1"], "f": ["eng-alpha/f1"]}))
_c, _l = fs_cqs(b="A", c="A")
ROWS.append(Row(
    "fair sharing schedule workload with lowest drf after admission", fair=True, cqs=_c, lqs=_l,
    cohorts=[cohort("A", groups=ODCPU("100"))],
    workloads=[one("b0", "lq-b", "10"), one("b1", "lq-b", "50"), one("c1", "lq-c", "75")],
    reserved=[("eng-alpha/b0", "b", ON)], pending=["eng-alpha/b1", "eng-alpha/c1"],
    scheduled={"eng-alpha/b1": ("b", [ON])}, left={"c": ["eng-alpha/c1"]}))
ROWS.append(Row(
    "fair sharing schedule singleton cqs and cq without cohort", fair=True,
    cqs=[cluster_queue("a", ODCPU("0"), cohort="A"), cluster_queue("b", ODCPU("10"), cohort="B"),
         cluster_queue("c", ODCPU("10"))],
    lqs=[local_queue(f"lq-{n}", "eng-alpha", n) for n in "abc"],
    cohorts=[cohort("A", groups=ODCPU("10")), cohort("B")],
    workloads=[one("a1", "lq-a", "10"), one("b1", "lq-b", "10"), one("c1", "lq-c", "10")],
    pending=["eng-alpha/a1", "eng-alpha/b1", "eng-alpha/c1"],
    scheduled={"eng-alpha/a1": ("a", [ON]), "eng-alpha/b1": ("b", [ON]), "eng-alpha/c1": ("c", [ON])}))
_c, _l = fs_cqs(b="A", c="A")
ROWS.append(Row(
    "fair sharing schedule highest priority first", fair=True, cqs=_c, lqs=_l,
    cohorts=[cohort("A", groups=ODCPU("10")), cohort("B")],
    workloads=[one("b1", "lq-b", "10", 99), one("c1", "lq-c", "10", 101)],
    pending=["eng-alpha/b1", "eng-alpha/c1"], scheduled={"eng-alpha/c1": ("c", [ON])},
    left={"b": ["eng-alpha/b1"]}))
ROWS.append(Row(
    "fair sharing schedule earliest timestamp first", fair=True, cqs=_c, lqs=_l,
    cohorts=[cohort("A", groups=ODCPU("10")), cohort("B")],
    workloads=[one("b1", "lq-b", "10", 101), one("c1", "lq-c", "10", 101)],
    pending=[("eng-alpha/b1", 1), ("eng-alpha/c1", 0)], scheduled={"eng-alpha/c1": ("c", [ON])},
    left={"b": ["eng-alpha/b1"]}))


def w(name: str, ns: str, n: str, priority: int = 0, queue: str = "other", res: str = "cpu") -> str:
    return workload(name, ns, queue, priority=priority, requests={res: n})


ROWS += [
    Row("minimal preemptions when target queue is exhausted",
        cqs=other_cqs(("other-alpha", "on-demand", [("cpu", "2")], ANY_LP), ("other-beta", "on-demand", [("cpu", "2")], None),
                      ("other-gamma", "on-demand", [("cpu", "2")], None)),
        lqs=OTHER_LQS,
        workloads=[w("a1", "eng-alpha", "1", -2), w("a2", "eng-alpha", "1", -2), w("a3", "eng-alpha", "1", -1),
                   w("b1", "eng-beta", "1"), w("b2", "eng-beta", "1"), w("b3", "eng-beta", "1"),
                   w("incoming", "eng-alpha", "2")],
        reserved=[(f"eng-alpha/a{i}", "other-alpha", ON) for i in (1, 2, 3)]
        + [(f"eng-beta/b{i}", "other-beta", ON) for i in (1, 2, 3)],
        pending=["eng-alpha/incoming"], preempted={"eng-alpha/a1", "eng-alpha/a2"},
        left={"other-alpha": ["eng-alpha/incoming"]}),
    Row("A workload is only eligible to do preemptions if it fits fully within nominal quota",
        cqs=other_cqs(("other-alpha", "on-demand", [("cpu", "2")], ANY_LP),
                      ("other-beta", "on-demand", [("cpu", "2")], None)),
        lqs=OTHER_LQS[:2],
        workloads=[w("a1", "eng-alpha", "1", -1), w("b1", "eng-beta", "1", -1), w("incoming", "eng-alpha", "3", 1)],
        reserved=[("eng-alpha/a1", "other-alpha", ON), ("eng-beta/b1", "other-beta", ON)],
        pending=["eng-alpha/incoming"], inadmissible={"other-alpha": ["eng-alpha/incoming"]}),
    Row("with fair sharing: preempt workload from CQ with the highest share", fair=True,
        cqs=[cluster_queue("eng-gamma", [[("on-demand", [("cpu", "50", "0")])]], cohort="eng")],
        workloads=[workload("all_spot", "eng-alpha", requests=cpu("100"))]
        + [workload(f"alpha{i}", "eng-alpha", requests=cpu("20")) for i in (1, 2, 3, 4)]
        + [workload("gamma1", "eng-gamma", requests=cpu("10"))]
        + [workload(f"gamma{i}", "eng-gamma", requests=cpu("20")) for i in (2, 3, 4)]
        + [workload("preemptor", "eng-beta", "main", requests=cpu("30"))],
        reserved=[("eng-alpha/all_spot", "eng-alpha", SPOT)]
        + [(f"eng-alpha/alpha{i}", "eng-alpha", ON) for i in (1, 2, 3, 4)]
        + [(f"eng-gamma/gamma{i}", "eng-gamma", ON) for i in (1, 2, 3, 4)],
        pending=["eng-beta/preemptor"], preempted={"eng-alpha/alpha1", "eng-gamma/gamma1"},
        left={"eng-beta": ["eng-beta/preemptor"]}),
    Row("multiple preemptions without borrowing",
        cqs=other_cqs(("other-alpha", "default", [("cpu", "2")], {"withinClusterQueue": LP}),
                      ("other-beta", "default", [("cpu", "2")], {"withinClusterQueue": LP})),
        lqs=OTHER_LQS[:2],
        workloads=[w("a1", "eng-alpha", "2"), w("b1", "eng-beta", "2"), w("preemptor", "eng-alpha", "2", 100),
                   w("preemptor", "eng-beta", "2", 100)],
        reserved=[("eng-alpha/a1", "other-alpha", {"cpu": "default"}), ("eng-beta/b1", "other-beta", {"cpu": "default"})],
        pending=["eng-alpha/preemptor", "eng-beta/preemptor"], preempted={"eng-alpha/a1", "eng-beta/b1"},
        left={"other-alpha": ["eng-alpha/preemptor"], "other-beta": ["eng-beta/preemptor"]}),
    Row("multiple preemptions preemption possible after earlier workload fits",
        cqs=other_cqs(("other-alpha", "default", [("cpu", "1")], {"withinClusterQueue": LP}),
                      ("other-beta", "default", [("cpu", "2")], {"withinClusterQueue": LP})),
        lqs=OTHER_LQS[:2],
        workloads=[w("b1", "eng-beta", "2"), w("fit", "eng-alpha", "1", 100), w("preemptor", "eng-beta", "2", 99)],
        reserved=[("eng-beta/b1", "other-beta", {"cpu": "default"})],
        pending=["eng-alpha/fit", "eng-beta/preemptor"], preempted={"eng-beta/b1"},
        scheduled={"eng-alpha/fit": ("other-alpha", [{"cpu": "default"}])},
        left={"other-beta": ["eng-beta/preemptor"]}),
    Row("multiple preemptions skip preemption when shared limited resource",
        cqs=other_cqs(("other-alpha", "default", [("cpu", "2")], {"withinClusterQueue": LP, "borrowWithinCohort": {"policy": LP}}),
                      ("other-beta", "default", [("cpu", "2")], {"withinClusterQueue": LP, "borrowWithinCohort": {"policy": LP}}),
                      ("resource-bank", "default", [("cpu", "1")], None)),
        lqs=OTHER_LQS[:2],
        workloads=[w("a1", "eng-alpha", "2"), w("b1", "eng-beta", "2"), w("preemptor", "eng-alpha", "3", 100),
                   w("pretending-preemptor", "eng-beta", "3", 99)],
        reserved=[("eng-alpha/a1", "other-alpha", {"cpu": "default"}), ("eng-beta/b1", "other-beta", {"cpu": "default"})],
        pending=["eng-alpha/preemptor", "eng-beta/pretending-preemptor"], preempted={"eng-alpha/a1"},
        left={"other-alpha": ["eng-alpha/preemptor"], "other-beta": ["eng-beta/pretending-preemptor"]}),
    Row("multiple preemptions within cq when fair sharing", fair=True,
        cqs=other_cqs(*[(f"other-{x}", "default", [("cpu", "2")], {"withinClusterQueue": LP})
                        for x in ("alpha", "beta", "gamma")], ("resource-bank", "default", [("cpu", "3")], None)),
        lqs=OTHER_LQS,
        workloads=[w("a1", "eng-alpha", "3"), w("b1", "eng-beta", "3"), w("c1", "eng-gamma", "3")]
        + [w("preemptor", ns, "3", 100) for ns in ("eng-alpha", "eng-beta", "eng-gamma")],
        reserved=[("eng-alpha/a1", "other-alpha", {"cpu": "default"}), ("eng-beta/b1", "other-beta", {"cpu": "default"}),
                  ("eng-gamma/c1", "other-gamma", {"cpu": "default"})],
        pending=["eng-alpha/preemptor", "eng-beta/preemptor", "eng-gamma/preemptor"],
        preempted={"eng-alpha/a1", "eng-beta/b1", "eng-gamma/c1"},
        left={f"other-{x}": [f"eng-{x}/preemptor"] for x in ("alpha", "beta", "gamma")}),
    Row("multiple preemptions skip overlapping preemption targets", fair=True,
        cqs=other_cqs(*[(f"other-{x}", "default", [("cpu", "0"), (f"{x}-resource", "1")], {"withinClusterQueue": LP})
                        for x in ("alpha", "beta", "gamma")], ("resource-bank", "default", [("cpu", "9")], None)),
        lqs=OTHER_LQS,
        workloads=[w("a1", "eng-alpha", "1", res="alpha-resource"), w("b1", "eng-beta", "1", res="beta-resource"),
                   workload("c1", "eng-gamma", "other", requests={"cpu": "9", "gamma-resource": "1"}),
                   workload("preemptor", "eng-alpha", "other", priority=100, requests={"cpu": "3", "alpha-resource": "1"}),
                   workload("pretending-preemptor", "eng-beta", "other", priority=99,
                            requests={"cpu": "3", "beta-resource": "1"})],
        reserved=[("eng-alpha/a1", "other-alpha", {"alpha-resource": "default"}),
                  ("eng-beta/b1", "other-beta", {"beta-resource": "default"}),
                  ("eng-gamma/c1", "other-gamma", {"cpu": "default"})],
        pending=["eng-alpha/preemptor", "eng-beta/pretending-preemptor"],
        preempted={"eng-alpha/a1", "eng-gamma/c1"},
        left={"other-alpha": ["eng-alpha/preemptor"], "other-beta": ["eng-beta/pretending-preemptor"]}),
    Row("not enough resources",
        workloads=[workload("new", "sales", "main", podsets=[ps("one", 1, cpu="100")])], pending=["sales/new"],
        left={"sales": ["sales/new"]}),
    Row("container resource requests exceed limits",
        workloads=[workload("new", "sales", "main", podsets=[ps("one", 1, cpu="200m")]).replace(
            'requests: {"cpu": "200m"}', 'requests: {"cpu": "200m"}, limits: {"cpu": "100m"}')],
        pending=["sales/new"], left={"sales": ["sales/new"]},
        events=[("sales/new", "Warning", "Pending", 'resources validation failed: spec.podSets[0].template.spec.'
                 'containers[0]: Invalid value: ["cpu"]: requests must not exceed its limits')]),
    Row("not enough resources with fair sharing enabled", fair=True,
        workloads=[workload("new", "sales", "main", podsets=[ps("one", 1, cpu="100")])], pending=["sales/new"],
        left={"sales": ["sales/new"]}),
]


def gpu_cqs(alpha: str, beta: str, beta_pre: dict = None) -> list:
    return [cluster_queue("other-alpha", [[("on-demand", [("gpu", alpha)]), ("spot", [("gpu", alpha)])]],
                          cohort="other", preemption=LP_BOTH),
            cluster_queue("other-beta", [[("on-demand", [("gpu", beta)]), ("spot", [("gpu", beta)])]],
                          cohort="other", preemption=beta_pre)]


GON, GSPOT = {"gpu": "on-demand"}, {"gpu": "spot"}
ROWS += [
    Row("prefer reclamation over cq priority based preemption",
        cqs=gpu_cqs("10", "0", LP_BOTH), lqs=OTHER_LQS[:2],
        workloads=[w("a1", "eng-alpha", "5", 50, res="gpu"), w("b1", "eng-beta", "5", 50, res="gpu"),
                   w("preemptor", "eng-alpha", "6", 100, res="gpu")],
        reserved=[("eng-alpha/a1", "other-alpha", GON), ("eng-beta/b1", "other-beta", GSPOT)],
        pending=["eng-alpha/preemptor"], preempted={"eng-beta/b1"}, left={"other-alpha": ["eng-alpha/preemptor"]}),
    Row("with fair sharing: prefer reclamation over cq priority based preemption; with preemption while borrowing",
        fair=True, cqs=gpu_cqs("7", "3"), lqs=OTHER_LQS[:2],
        workloads=[w("a1", "eng-alpha", "5", 50, res="gpu"), w("b1", "eng-beta", "5", 50, res="gpu"),
                   w("preemptor", "eng-alpha", "8", 100, res="gpu")],
        reserved=[("eng-alpha/a1", "other-alpha", GON), ("eng-beta/b1", "other-beta", GSPOT)],
        pending=["eng-alpha/preemptor"], preempted={"eng-beta/b1"}, left={"other-alpha": ["eng-alpha/preemptor"]}),
    Row("prefer first preemption flavor when second flavor requires both reclaim and cq priority preemption",
        cqs=gpu_cqs("10", "0"), lqs=OTHER_LQS[:2],
        workloads=[w("a1", "eng-alpha", "5", 50, res="gpu"), w("a2", "eng-alpha", "5", 50, res="gpu"),
                   w("b1", "eng-beta", "5", 50, res="gpu"), w("preemptor", "eng-alpha", "6", 100, res="gpu")],
        reserved=[("eng-alpha/a1", "other-alpha", GON), ("eng-alpha/a2", "other-alpha", GSPOT),
                  ("eng-beta/b1", "other-beta", GSPOT)],
        pending=["eng-alpha/preemptor"], preempted={"eng-alpha/a1"}, left={"other-alpha": ["eng-alpha/preemptor"]}),
    Row("prefer first preemption flavor when second flavor also requires cq preemption",
        cqs=gpu_cqs("10", "0"), lqs=OTHER_LQS[:2],
        workloads=[w("a1", "eng-alpha", "6", 50, res="gpu"), w("a2", "eng-alpha", "5", 50, res="gpu"),
                   w("b1", "eng-beta", "5", 9001, res="gpu"), w("preemptor", "eng-alpha", "5", 100, res="gpu")],
        reserved=[("eng-alpha/a1", "other-alpha", GON), ("eng-alpha/a2", "other-alpha", GSPOT),
                  ("eng-beta/b1", "other-beta", GSPOT)],
        pending=["eng-alpha/preemptor"], preempted={"eng-alpha/a1"}, left={"other-alpha": ["eng-alpha/preemptor"]}),
    Row("workload requiring reclaimation prioritized over wl in another full cq",
        cqs=[cluster_queue("CQ1", [[("on-demand", [("gpu", "10")])]], cohort="other"),
             cluster_queue("CQ2", [[("on-demand", [("gpu", "10")])]], cohort="other",
                           preemption={"reclaimWithinCohort": ANY}),
             cluster_queue("CQ3", [[("on-demand", [("gpu", "0")])]], cohort="other")],
        lqs=[local_queue("lq", "eng-alpha", "CQ1"), local_queue("lq", "eng-beta", "CQ2"),
             local_queue("lq", "eng-gamma", "CQ3")],
        workloads=[w("Admitted-Workload-1", "eng-alpha", "5", queue="lq", res="gpu"),
                   w("WL1", "eng-alpha", "10", queue="lq", res="gpu"), w("WL2", "eng-beta", "10", queue="lq", res="gpu"),
                   w("Admitted-Workload-2", "eng-gamma", "5", 0, queue="lq", res="gpu"),
                   w("Admitted-Workload-3", "eng-gamma", "5", 1, queue="lq", res="gpu")],
        reserved=[("eng-alpha/Admitted-Workload-1", "CQ1", GON), ("eng-gamma/Admitted-Workload-2", "CQ3", GON),
                  ("eng-gamma/Admitted-Workload-3", "CQ3", GON)],
        pending=[("eng-alpha/WL1", 0), ("eng-beta/WL2", 1)], preempted={"eng-gamma/Admitted-Workload-2"},
        left={"CQ2": ["eng-beta/WL2"]}, inadmissible={"CQ1": ["eng-alpha/WL1"]}),
]


def capacity_row(name: str, policy: str, blocked: bool) -> Row:
    return Row(
        name,
        cqs=[cluster_queue("ClusterQueueA", [[("on-demand", [("gpu", "2")])]], cohort="root",
                           preemption={"reclaimWithinCohort": policy}),
             cluster_queue("ClusterQueueB", [[("on-demand", [("gpu", "0")])]], cohort="root")],
        lqs=[local_queue("lq", "eng-alpha", "ClusterQueueA"), local_queue("lq", "eng-beta", "ClusterQueueB")],
        workloads=[w("a1-admitted", "eng-alpha", "1", queue="lq", res="gpu"),
                   w("a2-pending", "eng-alpha", "2", queue="lq", res="gpu"),
                   w("b1-pending", "eng-beta", "1", queue="lq", res="gpu")],
        reserved=[("eng-alpha/a1-admitted", "ClusterQueueA", GON)], pending=["eng-alpha/a2-pending", "eng-beta/b1-pending"],
        scheduled={} if blocked else {"eng-beta/b1-pending": ("ClusterQueueB", [GON])},
        left={"ClusterQueueB": ["eng-beta/b1-pending"]} if blocked else {},
        inadmissible={"ClusterQueueA": ["eng-alpha/a2-pending"]})


ROWS += [
    capacity_row("capacity not blocked when lending clusterqueue can reclaim (ReclaimWithinCohort=Any)", ANY, False),
    capacity_row("capacity blocked when lending clusterqueue not guaranteed to reclaim (ReclaimWithinCohort="
                 "LowerPriority)", LP, True),
    capacity_row("capacity blocked when lending clusterqueue not guaranteed to reclaim (ReclaimWithinCohort=Never)",
                 NEVER, True),
    Row("in a hierarchical cohort, workload borrowing less is scheduled first",
        cohorts=[cohort("root"), cohort("guaranteed", "root", groups=[[("default", [("cpu", "4")])]])],
        cqs=[cluster_queue("guaranteed", [[("default", [("cpu", "0")])]], cohort="guaranteed"),
             cluster_queue("best-effort", [[("default", [("cpu", "0")])]], cohort="root")],
        lqs=[local_queue("lq-guaranteed", "eng-alpha", "guaranteed"),
             local_queue("lq-best-effort", "eng-alpha", "best-effort")],
        workloads=[workload("guaranteed", "eng-alpha", "lq-guaranteed", podsets=[ps("one", 1, cpu="4")]),
                   workload("best-effort", "eng-alpha", "lq-best-effort", priority=3, podsets=[ps("one", 1, cpu="4")])],
        pending=["eng-alpha/guaranteed", "eng-alpha/best-effort"],
        scheduled={"eng-alpha/guaranteed": ("guaranteed", [{"cpu": "default"}])},
        left={"best-effort": ["eng-alpha/best-effort"]}),
    Row("don't assign flavor if there are no candidates for preemption",
        cqs=[cluster_queue("cq1", [[("on-demand", [("cpu", "0", "1")]), ("spot", [("cpu", "0", "1")])]],
                           cohort="cohort", preemption={"withinClusterQueue": LP, "reclaimWithinCohort": ANY,
                                                        "borrowWithinCohort": {"policy": LP}},
                           fungibility={"whenCanPreempt": "MayStopSearch", "whenCanBorrow": "MayStopSearch"}),
             cluster_queue("cq2", [[("on-demand", [("cpu", "1")]), ("spot", [("cpu", "1")])]], cohort="cohort")],
        lqs=[local_queue("lq1", "eng-alpha", "cq1"), local_queue("lq2", "eng-alpha", "cq2")],
        workloads=[workload("admitted", "eng-alpha", "lq2", requests=cpu("1")),
                   workload("new", "eng-alpha", "lq1", priority=100, requests=cpu("1"))],
        reserved=[("eng-alpha/admitted", "cq2", ON, -1.0)], pending=["eng-alpha/new"],
        scheduled={"eng-alpha/new": ("cq1", [SPOT])}),
]

# Rows gpusim cannot express, with the reason.
NOT_PORTED = {
    "workload fits in single clusterQueue, with check state pending":
        "AdmissionChecks are not modelled: a Workload cannot carry admissionChecks states",
    "skip workload with missing or deleted ClusterQueue (NoFit)":
        "gpusim's loader rejects a Workload whose LocalQueue does not exist (spec.queueName: Not found)",
    "error during admission": "the row injects an API error into applyAdmission; gpusim's apiserver has no fault "
                              "injection for status updates",
    "lendingLimit should not affect assignments when feature disabled":
        "the LendingLimit feature gate is not modelled (lendingLimit always applies, as with the gate on)",
    "workload should not fit in nonexistent clusterQueue":
        "gpusim's loader rejects a LocalQueue naming a ClusterQueue that does not exist",
    "workload should not fit in clusterQueue with nonexistent flavor":
        "gpusim's loader rejects a ClusterQueue naming a ResourceFlavor that does not exist (Kueue keeps it inactive)",
    "partial admission single variable pod set": "partial admission (PodSet minCount) is not modelled",
    "partial admission single variable pod set, preempt first": "partial admission (PodSet minCount) is not modelled",
    "partial admission single variable pod set, preempt with partial admission":
        "partial admission (PodSet minCount) is not modelled",
    "partial admission multiple variable pod sets": "partial admission (PodSet minCount) is not modelled",
    "partial admission disabled, multiple variable pod sets": "partial admission (PodSet minCount) is not modelled",
    "container does not satisfy limitRange constraints": "LimitRanges are not modelled",
    "workload-slice fits in single clusterQueue": "ElasticJobsViaWorkloadSlices is not modelled",
}


def _run(row: Row) -> Cluster:
    docs = BASE + row.cqs + row.lqs + row.cohorts + ([FAIR] if row.fair else []) + row.workloads
    c = Cluster(docs)
    for r in row.reserved:
        key, cq, flavors = r[:3]
        c.reserve(key, cq, flavors, at=r[3] if len(r) > 3 else 0.0)
    for p in row.pending:
        key, created = (p, 0.0) if isinstance(p, str) else p
        c.add(key, created=float(created))
    c.schedule()
    return c


def _norm(flavors) -> list:
    return flavors if isinstance(flavors, list) else [flavors]


@pytest.mark.parametrize("row", [pytest.param(r, id=r.name, marks=[pytest.mark.xfail(strict=True, reason=r.xfail)]
                                              if r.xfail else []) for r in ROWS])
def test_schedule(row: Row):
    before = {k8s(r[0]) for r in row.reserved}
    preempted = {k8s(k) for k in row.preempted}
    c = _run(row)
    got = c.assignments()
    scheduled = {k8s(k): (k8s(cq), [dict(f) for f in fl]) for k, (cq, fl) in row.scheduled.items()}
    want = {k8s(r[0]): (k8s(r[1]), [dict(f) for f in _norm(r[2])]) for r in row.reserved if k8s(r[0]) not in preempted}
    want.update(scheduled)
    assert {k: v for k, v in got.items() if k not in before} == scheduled      # wantScheduled
    assert got == want                                                         # wantAssignments
    assert set(c.preempted()) == preempted                                     # wantPreempted
    left = {cq: [k for k in keys if k not in preempted] for cq, keys in c.left().items()}
    assert {cq: keys for cq, keys in left.items() if keys} == \
        {k8s(cq): sorted(k8s(k) for k in keys) for cq, keys in row.left.items()}   # wantLeft
    assert c.inadmissible() == \
        {k8s(cq): sorted(k8s(k) for k in keys) for cq, keys in row.inadmissible.items()}   # wantInadmissibleLeft
    if row.events is not None:
        got_events = [(f"{e.event.involved_object.namespace}/{e.event.involved_object.name}", e.event.type,
                       e.event.reason, e.event.message) for e in c.ctx.recorder.log
                      if e.event.involved_object.kind == "Workload"]
        # upstream ignores the message where the row's event has none (it holds a duration)
        assert [g[:len(w)] for g, w in zip(got_events, row.events)] == row.events
        assert len(got_events) == len(row.events)


def test_not_ported_rows_are_named():
    """Every TestSchedule row is either ported or listed with its reason."""
    ported = {r.name for r in ROWS}
    assert not ported & set(NOT_PORTED)
    assert len(ported) + len(NOT_PORTED) == 60


def test_fractional_cpu_requests_are_admitted():
    """A pod requesting a fraction of a cpu (500m, 2.5): its requests are Kueue's milli-values (ResourceValue);
    gpusim used to fail on the parsed amount."""
    c = Cluster(BASE + [workload("half", "sales", "main", podsets=[ps("one", 3, cpu="500m")]),
                        workload("more", "sales", "main", podsets=[ps("one", 1, cpu="2.5")])])
    c.add("sales/half")
    c.schedule()
    c.add("sales/more")
    c.schedule()
    assert c.infos["sales/half"].usage == {("default", "cpu"): 1500}
    assert c.infos["sales/more"].usage == {("default", "cpu"): 2500}


# --- TestLastSchedulingContext: two cycles, the row's workloads deleted in between --------------------------------
# kubernetes-sigs/kueue pkg/scheduler/scheduler_test.go (same commit), function TestLastSchedulingContext.
COHORT_FUNGIBILITY = {"whenCanPreempt": "MayStopSearch", "whenCanBorrow": "MayStopSearch"}
TRY_NEXT = {"whenCanPreempt": "TryNextFlavor", "whenCanBorrow": "TryNextFlavor"}
OD_SPOT = [[("on-demand", [("cpu", "50", "50")]), ("spot", [("cpu", "100", "0")])]]
COHORT_CQS = [
    cluster_queue(n, OD_SPOT, cohort="cohort", strategy="StrictFIFO",
                  preemption={"withinClusterQueue": NEVER, "reclaimWithinCohort": LP}, fungibility=f)
    for n, f in (("eng-cohort-alpha", COHORT_FUNGIBILITY), ("eng-cohort-beta", COHORT_FUNGIBILITY),
                 ("eng-cohort-theta", TRY_NEXT))]
CONTEXT_BASE = [flavor("on-demand"), flavor("spot")]
# upstream adds these LocalQueues to the queue manager whether their ClusterQueue exists or not; gpusim's loader
# refuses a LocalQueue of a missing ClusterQueue, so a row gets those of its own ClusterQueues
CONTEXT_LQS = [("main-alpha", "eng-cohort-alpha"), ("main-beta", "eng-cohort-beta"), ("main-theta", "eng-cohort-theta")]


def d(name: str, n: str, priority: int = 0, queue: str = "") -> str:
    return workload(name, "default", queue, priority=priority, requests=cpu(n))


CONTEXT_ROWS = [
    # name, ClusterQueues, workloads, admitted [(name, cq, flavor, reserved at)], pending [name], deleted,
    # want preempted, want admissions after the first cycle (new ones), after the second (all)
    ("scheduling on the first flavor is unblocked after some workloads were deleted",
     [cluster_queue("eng-alpha", [[("on-demand", [("cpu", "50", "50")]), ("spot", [("cpu", "10", "0")])]],
                    preemption={"withinClusterQueue": LP}, fungibility={"whenCanPreempt": "MayStopSearch"}),
      local_queue("main", "default", "eng-alpha")],
     [d("low-1", "50", queue="main"), d("preemptor", "20", queue="main")],
     [("low-1", "eng-alpha", ON, 0.0)], ["preemptor"], ["low-1"], set(), {},
     {"preemptor": ("eng-alpha", ON)}),
    ("borrow before next flavor", COHORT_CQS,
     [d("placeholder", "50"), d("borrower", "20", queue="main-alpha"), d("workload1", "20", queue="main-beta")],
     [("placeholder", "eng-cohort-alpha", ON, 0.0)], ["borrower", "workload1"], [], set(),
     {"workload1": ("eng-cohort-beta", ON), "borrower": ("eng-cohort-alpha", ON)},
     {"placeholder": ("eng-cohort-alpha", ON), "workload1": ("eng-cohort-beta", ON),
      "borrower": ("eng-cohort-alpha", ON)}),
    ("borrow after all flavors", COHORT_CQS,
     [d("placeholder", "50"), d("placeholder1", "50"), d("workload", "20", queue="main-theta")],
     [("placeholder", "eng-cohort-alpha", ON, 0.0), ("placeholder1", "eng-cohort-theta", ON, 0.0)], ["workload"],
     [], set(), {"workload": ("eng-cohort-theta", SPOT)},
     {"placeholder": ("eng-cohort-alpha", ON), "placeholder1": ("eng-cohort-theta", ON),
      "workload": ("eng-cohort-theta", SPOT)}),
    ("when the next flavor is full, but can borrow on first", COHORT_CQS,
     [d("placeholder", "40"), d("placeholder1", "40"), d("placeholder2", "100"), d("workload", "20", queue="main-theta")],
     [("placeholder", "eng-cohort-alpha", ON, 0.0), ("placeholder1", "eng-cohort-theta", ON, 0.0),
      ("placeholder2", "eng-cohort-theta", SPOT, 0.0)], ["workload"], [], set(),
     {"workload": ("eng-cohort-theta", ON)},
     {"placeholder": ("eng-cohort-alpha", ON), "placeholder1": ("eng-cohort-theta", ON),
      "placeholder2": ("eng-cohort-theta", SPOT), "workload": ("eng-cohort-theta", ON)}),
    ("when the next flavor is full, but can preempt on first", COHORT_CQS,
     [d("placeholder-alpha", "150", -1), d("placeholder-theta-spot", "100"), d("new", "20", queue="main-theta")],
     [("placeholder-alpha", "eng-cohort-alpha", ON, 0.0), ("placeholder-theta-spot", "eng-cohort-theta", SPOT, 0.0)],
     ["new"], ["placeholder-alpha"], {"placeholder-alpha"}, {},
     {"placeholder-theta-spot": ("eng-cohort-theta", SPOT), "new": ("eng-cohort-theta", ON)}),
    ("TryNextFlavor, but second flavor is full and can preempt on first",
     [cluster_queue("eng-cohort-alpha", [[("on-demand", [("cpu", "0", "60")]), ("spot", [("cpu", "30", "30")])]],
                    cohort="cohort", preemption={"withinClusterQueue": LP, "reclaimWithinCohort": ANY},
                    fungibility=TRY_NEXT),
      cluster_queue("eng-cohort-beta", [[("on-demand", [("cpu", "30", "30")]), ("spot", [("cpu", "30", "30")])]],
                    cohort="cohort", preemption={"withinClusterQueue": LP, "reclaimWithinCohort": ANY},
                    fungibility=TRY_NEXT),
      cluster_queue("eng-cohort-shared", [[("on-demand", [("cpu", "30")])]], cohort="cohort")],
     [d("alpha1", "22"), d("alpha2", "22"), d("alpha3", "22"), d("beta1", "22"), d("new", "22", queue="main-beta")],
     [("alpha1", "eng-cohort-alpha", ON, -1.0), ("alpha2", "eng-cohort-alpha", ON, 0.0),
      ("alpha3", "eng-cohort-alpha", SPOT, 0.0), ("beta1", "eng-cohort-beta", SPOT, 0.0)],
     ["new"], ["alpha2"], {"alpha2"}, {},
     {"alpha1": ("eng-cohort-alpha", ON), "alpha3": ("eng-cohort-alpha", SPOT), "beta1": ("eng-cohort-beta", SPOT),
      "new": ("eng-cohort-beta", ON)}),
]


@pytest.mark.parametrize("name, cqs, wls, reserved, pending, deleted, want_preempted, want_first, want_second",
                         CONTEXT_ROWS, ids=[r[0] for r in CONTEXT_ROWS])
def test_last_scheduling_context(name, cqs, wls, reserved, pending, deleted, want_preempted, want_first,
                                 want_second):
    lqs = [local_queue(lq, "default", cq) for lq, cq in CONTEXT_LQS if any(f"name: {cq}}}" in doc for doc in cqs)]
    c = Cluster(CONTEXT_BASE + cqs + lqs + wls)
    for n, cq, fl, at in reserved:
        c.reserve(f"default/{n}", cq, fl, at=at)
    for n in pending:
        c.add(f"default/{n}")
    c.schedule()
    first = {k: v for k, v in c.assignments().items() if k not in {f"default/{r[0]}" for r in reserved}}
    assert first == {f"default/{k}": (cq, [fl]) for k, (cq, fl) in want_first.items()}
    for n in deleted:
        c.delete(f"default/{n}")
    c.schedule()
    assert set(c.preempted()) == {f"default/{n}" for n in want_preempted}
    assert c.assignments() == {f"default/{k}": (cq, [fl]) for k, (cq, fl) in want_second.items()}


# --- TestEntryOrdering ------------------------------------------------------------------------------------------
# kubernetes-sigs/kueue pkg/scheduler/scheduler_test.go (same commit), function TestEntryOrdering: the iterator's
# order of nominated entries. Each input is (name, creation offset, priority, borrowing level, conditions); a
# condition is (type, reason, transition offset). gpusim computes the queue-order timestamp with
# workload.queue_order_timestamp (GetQueueOrderTimestamp) and sorts with Kueue.entry_key (entryOrdering).
EVICTED_PODS_READY = ("Evicted", "PodsReadyTimeout", 2.0)
ENTRY_INPUT = [
    ("old_borrowing", 0.0, 0, 1, []), ("old", 1.0, 0, 0, []), ("new", 3.0, 0, 0, []),
    ("high_pri_borrowing", 3.0, 1, 1, []), ("new_high_pri", 4.0, 1, 0, []), ("new_borrowing", 3.0, 0, 1, []),
    ("evicted_borrowing", 1.0, 0, 1, [EVICTED_PODS_READY]), ("recently_evicted", 0.0, 0, 0, [EVICTED_PODS_READY]),
    ("high_pri_borrowing_more", 3.0, 1, 2, []),
]
ENTRY_INPUT_PREEMPTED = [
    ("old-mid-recently-preempted-in-queue", 0.0, 1, 0, [("Preempted", "InClusterQueue", 5.0)]),
    ("old-mid-recently-reclaimed-while-borrowing", 0.0, 1, 0, [("Preempted", "InCohortReclaimWhileBorrowing", 6.0)]),
    ("old-mid-more-recently-reclaimed-while-borrowing", 0.0, 1, 0,
     [("Preempted", "InCohortReclaimWhileBorrowing", 7.0)]),
    ("old-mid-not-preempted-yet", 1.0, 1, 0, []),
    ("preemptor", 7.0, 2, 0, []),
]
ENTRY_ROWS = [
    ("Priority sorting is enabled (default) using pods-ready Eviction timestamp (default)", ENTRY_INPUT, "Eviction",
     ["new_high_pri", "old", "recently_evicted", "new", "high_pri_borrowing", "old_borrowing", "evicted_borrowing",
      "new_borrowing", "high_pri_borrowing_more"]),
    ("Priority sorting is enabled (default) using pods-ready Creation timestamp", ENTRY_INPUT, "Creation",
     ["new_high_pri", "recently_evicted", "old", "new", "high_pri_borrowing", "old_borrowing", "evicted_borrowing",
      "new_borrowing", "high_pri_borrowing_more"]),
    ("Some workloads are preempted; Priority sorting is enabled", ENTRY_INPUT_PREEMPTED, "Eviction",
     ["preemptor", "old-mid-recently-preempted-in-queue", "old-mid-recently-reclaimed-while-borrowing",
      "old-mid-more-recently-reclaimed-while-borrowing", "old-mid-not-preempted-yet"]),
]
NOT_PORTED_ENTRY_ORDERING = {
    "Priority sorting is disabled using pods-ready Eviction timestamp":
        "the PrioritySortingWithinCohort feature gate is not modelled (always on, the Kueue 0.19 default)",
    "Priority sorting is disabled using pods-ready Creation timestamp":
        "the PrioritySortingWithinCohort feature gate is not modelled (always on, the Kueue 0.19 default)",
    "Some workloads are preempted; Priority sorting is disabled":
        "the PrioritySortingWithinCohort feature gate is not modelled (always on, the Kueue 0.19 default)",
}


@pytest.mark.parametrize("name, entries, timestamp, want", ENTRY_ROWS, ids=[r[0] for r in ENTRY_ROWS])
def test_entry_ordering(name, entries, timestamp, want):
    from types import SimpleNamespace

    from gpusim.kueue.workload import queue_order_timestamp, set_condition
    c = Cluster(BASE + [workload(n, "sales", "main", priority=p, requests=cpu("1")) for n, _, p, _, _ in entries])
    c.kueue.config.requeuing_timestamp = timestamp
    got = []
    for n, created, _, borrow, conditions in entries:
        c.add(f"sales/{n}", created=created)
        info = c.infos[k8s(f"sales/{n}")]
        for ctype, reason, at in conditions:
            set_condition(info.obj, ctype, "True", reason, "", at)
        info.queued_at = queue_order_timestamp(info.obj, timestamp)
        got.append((info, SimpleNamespace(borrow=borrow)))
    got.sort(key=lambda e: c.kueue.entry_key(*e))
    assert [i.obj.metadata.name for i, _ in got] == [k8s(n) for n in want]
