"""Fair-sharing preemption with the FairSharingPreemptWithinNominal feature gate (Kueue 0.19 default on),
run end to end through gpusim's Kueue.

Ported rows: kubernetes-sigs/kueue pkg/scheduler/preemption/strategy_test.go TestFairSharingPreemptionPlan
(commit 3e8c9f51cd1f1bb3e18952a30f791e9ad8f9ff9b, after release-0.19; the gate and the reasons are as in 0.19's
fair_strategy.go iterateWithFirstFsStrategy). Upstream checks the plan (every target the iterator yields);
the rows ported are those where the preemptor needs every yielded target, so the plan is the final target set
gpusim's Kueue preempts. ClusterQueues are in cohort "all" with withinClusterQueue LowerPriority and
reclaimWithinCohort Any, one flavor "default", fair sharing on with the default strategies.
"""
from __future__ import annotations

import pytest

from tests.test_kueue import FLAVOR, WL, cond, config, cq, run, wl

GATE_OFF = "featureGates: {FairSharingPreemptWithinNominal: false}\n"

ROWS = [
    # (upstream case, feature gates, preemptor CQ nominal, other CQ, admitted (name, cpu, priority, at),
    #  incoming (cpu, priority), want [(victim, reason)] in yield order)
    ("F4 preemptor within nominal reclaims every candidate", "", "preemptible",
     [("p1", "1", 0, "0s"), ("p2", "1", 0, "0s")], ("3", 0),
     [("p1", "InCohortReclamation"), ("p2", "InCohortReclamation")]),
    ("F5 preemptor within nominal follows the strategy path when the gate is disabled", GATE_OFF, "preemptible",
     [("p1", "1", 0, "0s"), ("p2", "1", 0, "0s")], ("3", 0),
     [("p1", "InCohortFairSharing"), ("p2", "InCohortFairSharing")]),
    ("F10 the reevaluation gate adds nothing without a target in the preemptor ClusterQueue", "", "b",
     [("b1", "1", 0, "0s"), ("b2", "1", 0, "0s")], ("3", 5),
     [("b1", "InCohortReclamation"), ("b2", "InCohortReclamation")]),
    ("F11 candidates within a ClusterQueue follow the candidates ordering", "", "b",
     [("b-old", "1", 0, "0s"), ("b-new", "1", 0, "5s"), ("b-low", "1", -5, "5s")], ("3", 5),
     [("b-low", "InCohortReclamation"), ("b-new", "InCohortReclamation"), ("b-old", "InCohortReclamation")]),
]


@pytest.mark.parametrize("case,gates,other,admitted,incoming,want", ROWS, ids=[r[0].split()[0] for r in ROWS])
def test_fair_sharing_preemption_plan(case, gates, other, admitted, incoming, want):
    docs = [config(gates + "fairSharing: {}"), FLAVOR % "default",
            cq("a", "3", "all", within="LowerPriority", reclaim="Any"),
            cq(other, "0", "all", within="LowerPriority", reclaim="Any")]
    docs += [wl(n, other, cpu, at=at, priority=p) for n, cpu, p, at in admitted]
    docs += [wl("in", "a", incoming[0], at="10s", priority=incoming[1])]
    r = run(*docs)
    order = [e.object.name for e in r.events.log if e.reason == "Preempted"]
    assert order == [n for n, _ in want]
    for name, reason in want:
        p = cond(r.api.get(WL, "default", name), "Preempted")
        assert (p.status, p.reason) == ("True", reason)
    assert cond(r.api.get(WL, "default", "in"), "QuotaReserved").status == "True"

