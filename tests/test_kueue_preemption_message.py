"""Kueue preemptionMessage (pkg/scheduler/preemption/preemption.go, release-0.19): the JobUID comes from the
preemptor Workload's ``kueue.x-k8s.io/job-uid`` label, and every empty part reads ``UNKNOWN`` (``cmp.Or``).
These rows exercise that function's format and fallbacks; they are written from the upstream function, not
copied from an upstream test table."""
from __future__ import annotations

import pytest

from gpusim.kueue.preemption import preemption_message

ROWS = [
    ("uid and job-uid label", "wl-in", {"kueue.x-k8s.io/job-uid": "job-in"}, "InClusterQueue", "/cq", "/cq",
     "Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to prioritization in the ClusterQueue; "
     "preemptor path: /cq; preemptee path: /cq"),
    ("no job-uid label", "wl-in", {}, "InCohortReclamation", "/cohort/a", "/cohort/b",
     "Preempted to accommodate a workload (UID: wl-in, JobUID: UNKNOWN) due to reclamation within the cohort; "
     "preemptor path: /cohort/a; preemptee path: /cohort/b"),
    ("empty uid and empty label", "", {"kueue.x-k8s.io/job-uid": ""}, "InCohortFairSharing", "/c/a", "/c/b",
     "Preempted to accommodate a workload (UID: UNKNOWN, JobUID: UNKNOWN) due to Fair Sharing within the cohort; "
     "preemptor path: /c/a; preemptee path: /c/b"),
    ("unknown reason and paths", "wl", {"kueue.x-k8s.io/job-uid": "j"}, "", "", "",
     "Preempted to accommodate a workload (UID: wl, JobUID: j) due to UNKNOWN; preemptor path: UNKNOWN; "
     "preemptee path: UNKNOWN"),
    ("reclaim while borrowing", "wl", {"kueue.x-k8s.io/job-uid": "j"}, "InCohortReclaimWhileBorrowing", "/r/a", "/r/b",
     "Preempted to accommodate a workload (UID: wl, JobUID: j) due to reclamation within the cohort while "
     "borrowing; preemptor path: /r/a; preemptee path: /r/b"),
]


@pytest.mark.parametrize("name, uid, labels, reason, src, dst, want", ROWS, ids=[r[0] for r in ROWS])
def test_preemption_message(name, uid, labels, reason, src, dst, want):
    assert preemption_message(uid, labels, reason, src, dst) == want
