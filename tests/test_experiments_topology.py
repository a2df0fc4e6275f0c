"""The topology experiments of chapters 02.3 and 05.7 (gpusim/experiments/topology.py): placements built on the
hardware model behave as the topology reference's §3.3 says, and the scenario runs place the same job blind and
topology-aware as kube-scheduler, Kueue TAS and Volcano's network-topology-aware plugin do."""
from __future__ import annotations

import re

import matplotlib
import pytest

import gpusim as gs
from gpusim.experiments import topology as T

matplotlib.use("Agg")


def test_packed_whole_nodes_reproduce_the_h100_anchor_and_beat_every_scattered_layout():
    rows = {r["label"]: r for r in T.placement_rows(gpus=32)}
    packed = rows["packed: 4 nodes x 8"]
    assert packed["bandwidth"] == pytest.approx(384, rel=0.02)            # DGX H100 multi-node anchor
    assert rows["8 nodes x 4, same rails"]["bandwidth"] == pytest.approx(packed["bandwidth"] / 2)   # 4 NICs
    assert rows["32 nodes x 1"]["bandwidth"] == pytest.approx(48)          # one NDR NIC caps the ring
    mismatch = rows["8 nodes x 4, rail mismatch"]
    assert mismatch["f_fabric"] < 1 and mismatch["bottleneck"].startswith("fabric")
    for label, r in rows.items():
        assert r["step"] >= packed["step"] - 1e-12, label
    assert rows["packed across 2 SUs"]["bandwidth"] == pytest.approx(packed["bandwidth"])   # idle own leaves


def test_a100_anchor_through_the_same_helpers():
    c = T.make_cluster("dgx-a100", 2)
    assert T.allreduce_row("x", c, T.placement(c, 16))["bandwidth"] == pytest.approx(192, rel=0.02)


@pytest.mark.parametrize("kwargs, message", [
    ({"gpus": 16, "per_node": 9}, "per_node: must be in 1..8"),
    ({"gpus": 16, "rails": "diagonal"}, "rails: must be aligned or mismatch"),
    ({"gpus": 512}, "need 64 nodes; the cluster has 32"),
])
def test_placement_rejects_impossible_layouts(kwargs, message):
    with pytest.raises(ValueError, match=message):
        T.placement(T.make_cluster("dgx-h100", 32), **kwargs)


def test_rail_mismatch_uses_the_other_half_of_every_other_node():
    where = T.placement(T.make_cluster("dgx-h100", 4), 16, 4, "mismatch")
    assert [w[2] for w in where] == [(0, 1, 2, 3), (4, 5, 6, 7), (0, 1, 2, 3), (4, 5, 6, 7)]


def test_the_cliff_is_at_the_size_where_the_free_whole_nodes_run_out():
    rows = T.cliff_rows(sizes=(32, 64, 128))
    by = {(r["gpus"], r["policy"]): r for r in rows}
    for gpus in (32, 64):           # 8 whole nodes free: both policies get whole nodes
        assert by[(gpus, "topology-blind")]["step"] == pytest.approx(by[(gpus, "topology-aware")]["step"])
    blind, aware = by[(128, "topology-blind")], by[(128, "topology-aware")]
    assert aware["bandwidth"] == pytest.approx(384, rel=0.02)
    assert blind["bandwidth"] < aware["bandwidth"] / 3
    assert blind["nodes"] == 8 + 16 and blind["step"] > aware["step"] + 0.2
    more = {(r["gpus"], r["policy"]): r for r in T.cliff_rows(sizes=(128,), free_whole_nodes=16)}
    assert more[(128, "topology-blind")]["step"] == pytest.approx(more[(128, "topology-aware")]["step"])


def test_widget_shows_what_its_static_twin_shows_and_follows_the_board(capsys):
    """The widget's first rendering (its default controls) prints exactly what the notebook's static twin call
    prints; moving the board dropdown reruns it for that board."""
    T.explore_allreduce("dgx-h100", gpus=64, per_node=8)
    twin = capsys.readouterr().out
    w = T.allreduce_widget().widget
    assert re.sub(r"\r|\x1b\[2K", "", capsys.readouterr().out) == twin     # clear_output's terminal codes
    assert "B = 384.0 GB/s" in twin
    w.children[0].value = "dgx-a100"
    assert "B = 192.0 GB/s" in capsys.readouterr().out
    assert T.explore_allreduce(**w.kwargs, show=False) == T.explore_allreduce("dgx-a100", 64, 8, show=False)
    assert T.explore_allreduce("dgx-h100", 64, 4, show=False)["bandwidth"] == pytest.approx(192, rel=0.02)
    loaded = T.explore_allreduce("dgx-h100", 64, 8, spread=True, oversubscription=4, load=1, show=False)
    assert loaded["bandwidth"] < 384


def test_plot_cliff_draws_one_pair_of_lines_per_policy():
    ax = gs.plot_cliff(T.cliff_rows(sizes=(64, 128)))
    assert len(ax.get_lines()) == 2 and len(ax.figure.axes[1].get_lines()) == 2


# --- chapter 05.7: whole runs ---------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [1, 2])
def test_topology_aware_placement_keeps_the_job_in_one_rack_and_beats_blind(seed):
    rows = {r["mode"]: r for r in T.compare_placement(seed=seed)}
    for mode in ("kueue-tas", "volcano-hypernode"):
        assert len(rows[mode]["racks"]) == 1, rows[mode]
        assert rows[mode]["busbw"] == pytest.approx(382.5, rel=0.01)
    blind = rows["blind"]
    assert len(blind["racks"]) > 1 and blind["step"] > rows["kueue-tas"]["step"]
    assert blind["finished"] > rows["kueue-tas"]["finished"]
    table = T.format_placement(rows.values())
    assert table.splitlines()[0].startswith("MODE") and "kueue-tas" in table


def test_placement_scenario_rejects_an_unknown_mode():
    with pytest.raises(ValueError, match="mode: must be blind, kueue-tas or volcano-hypernode"):
        T.placement_scenario("random")


def test_preferred_allocation_and_the_nvswitch_blind_spot():
    rows = {(r["board"], r["pod"]): r for r in T.preferred_allocation_demo()}
    assert rows[("dgx-a100", "two")]["gpus"] == [2, 3] and rows[("dgx-a100", "two")]["numa"] == [1]
    assert rows[("dgx-a100", "two")]["lowestIndex"] == [1, 2]
    assert rows[("dgx-h100", "two")]["gpus"] == [4, 5, 6, 7]       # NUMA only: NVLink through NVSwitch unseen
    assert all(r["asked"] for r in rows.values())


def test_topology_manager_policies_on_dgx_a100():
    rows = {r["policy"]: r for r in T.topology_manager_demo()}
    assert rows["none"]["phase"] == "Succeeded" and rows["none"]["numa"] == [1, 3]
    snn = rows["single-numa-node"]
    assert (snn["phase"], snn["reason"]) == ("Failed", "TopologyAffinityError")
    assert snn["message"] == "Pod was rejected: Resources cannot be allocated with Topology locality"
    assert [r["policy"] for r in T.topology_manager_demo(gpus=2) if r["phase"] != "Succeeded"] == []


def test_nrt_keeps_the_pod_pending_and_publishes_the_zones():
    mid = T.nrt_demo(until="5s")
    assert T.nrt_zones(mid) == [{"zone": "node-0", "nvidia.com/gpu": "1/4"}, {"zone": "node-1", "nvidia.com/gpu": "1/4"}]
    assert gs.pod_json(mid, "big")["phase"] == "Pending"
    done = T.nrt_demo()
    ev = [e for e in done.events.log if e.object.name == "big" and e.reason == "FailedScheduling"]
    assert ev and "cannot align container" in ev[0].message
    assert gs.pod_json(done, "big")["phase"] == "Succeeded"


def test_the_kubelet_asks_the_plugin_only_when_aligned_devices_leave_a_choice():
    rows = [(r["policy"], r["gpus"], r["asked"], r["got"]) for r in T.preferred_allocation_rules()]
    assert rows == [("none", 2, True, [0, 1]), ("single-numa-node", 2, False, [2, 3]),
                    ("best-effort", 4, False, [0, 1, 2, 3]), ("best-effort", 3, True, [0, 1, 2])]


def test_topology_manager_run_passes_the_scope_and_records_the_event():
    r = T.topology_manager_run("single-numa-node", 2, scope="pod")
    assert gs.pod_json(r, "p")["phase"] == "Succeeded"
    ev = [e for e in T.topology_manager_run("single-numa-node", 4).events.log if e.reason == "TopologyAffinityError"]
    assert [(e.type, e.message) for e in ev] == [("Warning", "Resources cannot be allocated with Topology locality")]
