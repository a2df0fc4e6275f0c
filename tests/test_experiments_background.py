"""Chapter 01's failure scenarios (gpusim/experiments/background.py; scenario 4 through gpusim.comparison): each
reproduces the failure it names."""
import pytest

from gpusim import comparison
from gpusim.experiments import background as bg


def test_partial_start_wastes_the_gpus_held_before_the_last_worker_starts():
    s = bg.partial_start()
    held = s["gpus_held_over_time"]
    assert max(n for t, n in held if t < 3600) == 7          # 7 of 8 workers hold a GPU for the notebook's hour
    seven_at = next(t for t, n in held if n == 7)
    eight_at = next(t for t, n in held if n == 8)
    assert s["wasted_gpu_hours"] == pytest.approx(7 * (eight_at - seven_at) / 3600, abs=0.01)
    assert s["completed_at"] - s["first_start"] > 2 * s["ideal_run_time"]


def test_scattering_128_gpus_collapses_bus_bandwidth_packing_does_not():
    packed64, packed128, scattered = bg.allreduce_cliff()
    assert packed128["busbw"] == pytest.approx(packed64["busbw"], rel=0.05)
    assert scattered["busbw"] < packed128["busbw"] / 3
    assert scattered["step"] > 1.5 * packed128["step"]
    assert scattered["bottleneck"].startswith("2 NIC")


def test_time_slicing_oom_kills_every_server_sharing_the_gpu():
    ooms = bg.oom_cascade()["ooms"]
    assert len(ooms) >= 2 and all(pods == ["llm-0", "llm-1", "llm-2", "llm-3"] for _, pods in ooms)


def test_team_b_waits_behind_team_a_only_without_queues():
    w = {m.policy: m for m in comparison.compare(policies=("default", "kueue"))}
    assert w["default"].shares["team-b"] == 0.0 and w["default"].b_wait_mean > 1800
    assert w["kueue"].b_wait_mean < 60 and w["kueue"].shares["team-b"] > 0.4


def test_pods_bound_during_kubelet_restart_fail_admission():
    rejected = bg.admission_errors()["rejected"]
    assert sorted(rejected) == ["bound-during-restart-1", "bound-during-restart-2"]
    assert all("no healthy devices present" in m for m in rejected.values())
