"""Chapter 08's production playbook (gpusim/experiments/production.py): every failure case is diagnosed with the
root cause it was built for, and every tuning knob changes what a run measures."""
from __future__ import annotations

import pytest

from gpusim import comparison
from gpusim.experiments import production as P
from gpusim.views import dcgm
from gpusim.views.diagnose import FIXES


@pytest.mark.parametrize("case", P.FAILURES, ids=lambda c: c.key)
def test_failure_is_diagnosed(case):
    r, d = P.run_failure(case)
    assert d.root_cause == case.cause, d.render()
    assert case.cause in FIXES
    assert d.render().splitlines()[-1].startswith("Fix: ")


def test_outline_failures_are_covered():
    assert {c.outline for c in P.FAILURES if c.outline} == {1, 2, 3, 4}   # 5 (topology) is topology_case
    assert {c.key: c.lab for c in P.FAILURES}["mig-not-applied"] == "实验 07"


def test_failure_status_texts():
    runs = P.run_failures()
    assert runs["admission-error"][1].status.startswith("UnexpectedAdmissionError")
    assert runs["runtime-class"][1].status.startswith("ContainerCreating")
    assert "resource in cluster is overused" in runs["volcano-gang"][1].render()
    assert "NVLINK_ERROR" in runs["nvlink"][1].render()
    text = runs["runtime-class"][1].render()
    assert 'no runtime for "nvidia" is configured' in text
    table = P.failure_table(runs)
    assert table.count("\n") == len(P.FAILURES) + 1
    assert "[实验 06](../labs/06-admission-error/README.md)" in table


def test_failure_lookup():
    assert P.failure("xid").cause == "unhealthy"
    with pytest.raises(KeyError, match="unknown failure case"):
        P.failure("nope")


def test_topology_packing_shortens_the_step():
    spread, packed = P.topology_case()
    assert len(spread["gpus_per_node"]) == 2 and packed["gpus_per_node"] == {"dgx-0": 8}
    assert packed["step_seconds"] < spread["step_seconds"]
    assert packed["completed_at"] < spread["completed_at"]


def test_percentage_of_nodes_to_score():
    full, adaptive, low = P.percentage_sweep((100, None, 5), nodes=1000, pods=128)
    # numFeasibleNodesToFind: 1000 nodes → adaptive 50 − 1000/125 = 42 %; 5 % → the 100-node floor
    assert adaptive["nodes_scored_mean"] == 420 and low["nodes_scored_mean"] == 100
    assert full["nodes_scored_mean"] > 990
    assert full["nodes_used"] == 16 and low["nodes_used"] > full["nodes_used"]


def test_parallelism_does_not_change_decisions():
    a, b = P.parallelism_pair()
    assert a["placements"] == b["placements"] and len(a["placements"]) == 32


def test_scoring_strategy_fragmentation():
    least, most = P.strategy_pair()
    assert least["pods8_fit"] == 0 and most["pods8_fit"] == 1
    assert most["big_wait"] < 5 and least["big_wait"] > 3000


def test_kueue_strict_fifo_blocks_the_small_job():
    best, strict = P.kueue_fifo_pair()
    assert best["waits"]["small"] < 5
    assert strict["waits"]["small"] > best["waits"]["big"]   # admitted only after big


def test_volcano_overcommit_factor():
    rows = {r["factor"]: r for r in P.volcano_overcommit()}
    assert rows[1.2]["podgroups"] == {"Pending": 2, "Running": 2} and rows[1.2]["pending"] == 0
    assert rows[2.0]["podgroups"] == {"Inqueue": 2, "Running": 2} and rows[2.0]["pending"] == 8


def test_selection_table_from_comparison():
    rows = comparison.compare(comparison.MultiTenant())
    table = P.selection_table(rows)
    assert table.count("\n") == 5 and "| kueue |" in table
    assert P.recommend(rows) == ["kueue"]


def test_dcgm_dashboard_alerts():
    r = P.dcgm_run()
    names = {(a.name, a.state) for a in dcgm.alerts(r, 35 * 60)}
    assert names == {("GPUIdleWhileAllocated", "firing"), ("GPUXidErrorSeen", "firing"),
                     ("GPUMemoryPressure", "firing")}
    assert "GPUXidErrorSeen" not in {a.name for a in dcgm.alerts(r, 90 * 60)}   # changes(...[10m]) has passed


def test_prometheus_rules_are_the_evaluated_rules():
    import yaml
    doc = yaml.safe_load(P.prometheus_rules())
    rules = doc["spec"]["groups"][0]["rules"]
    assert [x["alert"] for x in rules] == [r.name for r in dcgm.RULES]
    assert {x["alert"]: x.get("for") for x in rules}["GPUMemoryPressure"] == "5m"


def test_lab_links_resolve_from_course():
    from pathlib import Path
    course = Path(__file__).resolve().parent.parent / "course"
    for c in P.FAILURES:
        if c.lab_link:   # labs that exist are linked; 实验 7 (being written) and "—" are not
            assert (course / c.lab_link).exists() and c.lab_link.split("/")[2].startswith(c.lab[-2:]), c.key
        else:
            assert c.lab in ("—", "实验 7"), c.key
