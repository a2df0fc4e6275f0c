"""examples/kueue-fair-sharing.yaml teaches borrowing and fair-sharing reclaim between two teams."""
from __future__ import annotations

from pathlib import Path

import gpusim as gs

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "kueue-fair-sharing.yaml"


def test_borrow_then_reclaim_by_fair_sharing():
    r = gs.run(str(EXAMPLE))
    rows = {row["name"].rsplit("-", 1)[0]: row for row in gs.kueue_workloads(r)}
    # team-a borrows team-b's idle 8 GPUs at 0s, team-b gets them back at 10m
    assert [rows[f"job-train-a{i}"]["admittedAt"] for i in range(1, 5)] == [0, 60, 120, 180]
    assert [rows[f"job-train-b{i}"]["admittedAt"] for i in (1, 2)] == [600, 600]
    preempted = sorted(n for n, row in rows.items() if row["preemptions"])
    assert preempted == ["job-train-a3", "job-train-a4"]
    msgs = [e.message for e in r.events.log if e.reason == "Preempted"]
    assert all("due to reclamation within the cohort; preemptor path: /research/team-b; "
               "preemptee path: /research/team-a" in m for m in msgs)
    usage = gs.cluster_queue_usage(r, "nvidia.com/gpu")
    assert usage["team-a/a100/nvidia.com/gpu"][:5] == [(0, 4), (60, 8), (120, 12), (180, 16), (600, 8)]
    # the preempted Jobs were suspended (pods deleted, not failed) and ran to completion later
    for name in ("train-a3", "train-a4"):
        job = r.api.get("Job", "team-a", name)
        assert job.status.failed == 0 and job.status.succeeded == 1
        reasons = [e.reason for e in r.events.log if e.object.kind == "Job" and e.object.name == name]
        assert reasons.count("Suspended") == 2 and reasons.count("Resumed") == 2
    text = gs.kueue_summary(r)
    assert text.splitlines()[0].split() == ["NAMESPACE", "NAME", "QUEUE", "CLUSTERQUEUE", "PRIORITY", "ADMITTED",
                                            "WAIT", "EVICTED", "FINISHED"]


def test_weighted_share_while_borrowing():
    r = gs.run(str(EXAMPLE), until="5m")
    cq = r.api.get("ClusterQueue", "", "team-a")
    assert cq.status.fair_sharing == {"weightedShare": 500}     # 8 borrowed · 1000 / 16 lendable
    assert cq.status.flavors_usage[0]["resources"][0] == {"name": "nvidia.com/gpu", "total": "16", "borrowed": "8"}
    assert cq.status.admitted_workloads == 4
