"""gpusim.experiments.operator: the bring-up of a node that joins under a ClusterPolicy (chapter 05.6), read back
as per-operand timelines, `kubectl get pods -n gpu-operator` at an instant, milestones and the plugin's RPCs.
The component order is NVIDIA/gpu-operator controllers/state_manager.go addState (v25.x); the STATUS strings
are kubectl's printPod (pkg/printers/internalversion/printers.go: Init:k/n, Init:<reason>, <reason>)."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from gpusim.experiments import operator as op  # noqa: E402

UPSTREAM_ORDER = ["nvidia-driver-daemonset", "nvidia-container-toolkit-daemonset", "nvidia-operator-validator",
                  "nvidia-device-plugin-daemonset", "nvidia-dcgm-exporter", "gpu-feature-discovery",
                  "nvidia-mig-manager"]


@pytest.fixture(scope="module")
def runs():
    return op.run_faults()


def test_operands_in_upstream_order_and_ready_in_dependency_order(runs):
    rows = op.bring_up_timeline(runs["none"])
    assert [r.daemonset for r in rows] == UPSTREAM_ORDER
    ready = {r.daemonset: r.ready for r in rows}
    assert all(v is not None for v in ready.values())
    assert ready["nvidia-driver-daemonset"] < ready["nvidia-container-toolkit-daemonset"] \
        < ready["nvidia-device-plugin-daemonset"] < ready["nvidia-operator-validator"]
    # mig-manager is created only once GFD labelled the node nvidia.com/mig.capable=true
    created = {r.daemonset: r.created for r in rows}
    assert created["nvidia-mig-manager"] >= ready["gpu-feature-discovery"] > created["gpu-feature-discovery"] == 300


def test_milestones_of_a_healthy_bring_up(runs):
    m = op.milestones(runs["none"])
    assert list(m) == ["node joined", "driver-ready", "toolkit-ready", "device plugin Register", "cuda-ready",
                       "first workload on GPUs", "plugin-ready", "ClusterPolicy ready"]
    assert m["node joined"] == 300 and 120 <= m["driver-ready"] - 300 <= 180   # timing.driverLoad 2m + probe
    assert m["device plugin Register"] < m["first workload on GPUs"]


@pytest.mark.parametrize("fault, t, expected", [
    ("none", 299, {}),
    ("none", 310, {"nvidia-driver-daemonset": ("0/1", "Running"), "nvidia-operator-validator": ("0/1", "Init:0/4"),
                   "nvidia-device-plugin-daemonset": ("0/1", "Init:0/1"),
                   "nvidia-container-toolkit-daemonset": ("0/1", "Init:0/1")}),
    ("none", 441, {"nvidia-operator-validator": ("0/1", "Init:2/4"), "nvidia-driver-daemonset": ("1/1", "Running")}),
    ("none", 900, {d: ("1/1", "Running") for d in UPSTREAM_ORDER}),
    ("DriverFailure", 890, {"nvidia-driver-daemonset": ("0/1", "CrashLoopBackOff"),
                            "nvidia-container-toolkit-daemonset": ("0/1", "Init:0/1"),
                            "nvidia-operator-validator": ("0/1", "Init:0/4"),
                            "gpu-feature-discovery": ("0/1", "Init:0/1")}),
    ("ToolkitFailure", 890, {"nvidia-driver-daemonset": ("1/1", "Running"),
                             "nvidia-device-plugin-daemonset": ("0/1", "Init:0/1")}),
], ids=["before-join", "just-joined", "validator-init", "all-ready", "driver-crashloop", "toolkit-failure"])
def test_status_at(runs, fault, t, expected):
    got = {r.daemonset: r.status_at(t) for r in op.bring_up_timeline(runs[fault])}
    got = {k: v for k, v in got.items() if v is not None}
    if not expected:
        assert got == {}
    for ds, st in expected.items():
        assert got[ds] == st, (ds, got[ds])


def test_operand_pods_at_reads_like_kubectl(runs):
    assert op.operand_pods_at(runs["none"], 100) == "No resources found in gpu-operator namespace."
    table = op.operand_pods_at(runs["DriverFailure"], 890).splitlines()
    assert table[0].split() == ["NAME", "READY", "STATUS", "AGE"]
    driver = next(line for line in table if line.startswith("nvidia-driver-daemonset-"))
    assert driver.split()[1:] == ["0/1", "CrashLoopBackOff", "590s"]


def test_faults_leave_the_node_without_gpus(runs):
    for fault in ("DriverFailure", "ToolkitFailure", "DevicePluginCrash"):
        m = op.milestones(runs[fault])
        assert "first workload on GPUs" not in m and "ClusterPolicy ready" not in m, fault
    assert "driver-ready" not in op.milestones(runs["DriverFailure"])
    assert "toolkit-ready" not in op.milestones(runs["ToolkitFailure"])


def test_plugin_rpcs_in_device_plugin_api_order(runs):
    lines = op.plugin_rpcs(runs["none"]).splitlines()[1:]
    funcs = [line.split()[1] for line in lines]
    want = ["devicemanager.(*server).Register", "v1beta1.DevicePlugin/GetDevicePluginOptions",
            "v1beta1.DevicePlugin/ListAndWatch", "v1beta1.DevicePlugin/GetPreferredAllocation",
            "v1beta1.DevicePlugin/Allocate"]
    assert [f for f in funcs if f in want] == want
    assert all("gpu-operator/" not in line for line in lines)


def test_xid_rule_table_follows_the_plugin_default_ignore_list():
    rows = {r.split()[0]: r.split()[-1] for r in op.xid_rule_table().splitlines()[1:]}
    assert {x for x, v in rows.items() if v == "ignored"} == {"13", "31", "43", "45", "68", "109"}
    assert rows["79"] == rows["48"] == rows["74"] == rows["94"] == "Unhealthy"


def test_scenario_is_deterministic_and_checks_the_fault():
    a, b = (op.bring_up_timeline(op.run_faults(("none",))["none"]) for _ in range(2))
    assert [(r.pod, r.ready) for r in a] == [(r.pod, r.ready) for r in b]
    with pytest.raises(ValueError, match="fault must be one of"):
        op.bring_up_scenario("XidError")


def test_plot_bring_up_draws_one_row_per_operand(runs):
    ax = op.plot_bring_up(runs["none"], at=450)
    assert [t.get_text() for t in ax.get_yticklabels()] == UPSTREAM_ORDER
    assert ax.get_xlabel() == "simulated time (s)"


def test_allocate_response_is_the_envvar_strategy(runs):
    resp = op.allocate_response(runs["none"], "train")
    (res,) = resp["trainer"].values()
    assert len(res["devices"]) == 8 and all(d.startswith("GPU-") for d in res["devices"])
    assert res["envs"] == {"NVIDIA_VISIBLE_DEVICES": ",".join(res["devices"])}
    with pytest.raises(KeyError):
        op.allocate_response(runs["none"], "nope")
