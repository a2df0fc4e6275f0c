"""gpusim.experiments.dynamicresources (course 05-8): the traced DynamicResources plugin and the device plugin vs DRA
comparisons. The messages asserted are upstream's: kubernetes 1.36 pkg/scheduler/framework/plugins/
dynamicresources/dynamicresources.go (``cannot allocate all claims``, ``resourceclaim not available on the node``,
``request %s: device class %s does not exist``), pkg/controller/resourceclaim (``ResourceClaim not created yet``),
the assume cache (``could not find ResourceClaim``), NodeResourcesFit (``Insufficient <resource>``)."""
from __future__ import annotations

from pathlib import Path

import pytest

import gpusim as gs
from gpusim.experiments import dynamicresources as dr

EXAMPLE = str(Path(__file__).resolve().parents[1] / "examples" / "dra-gpu.yaml")


@pytest.fixture(scope="module")
def traced():
    return dr.traced_run(EXAMPLE)


def test_tracing_does_not_change_the_run(traced):
    plain = gs.run(EXAMPLE)
    assert [(e.time, e.reason, e.object.name, e.message) for e in traced.result.events.log] == \
        [(e.time, e.reason, e.object.name, e.message) for e in plain.events.log]


def test_extension_points_in_the_default_profile(traced):
    rows = {r["point"]: r for r in dr.extension_points(traced)}
    assert [p for p, r in rows.items() if r["enabled"]] == ["PreEnqueue", "PreFilter", "Filter", "PostFilter",
                                                             "Reserve", "Unreserve", "PreBind"]
    # train-1 waits for train-0's GPU: each failed cycle's PostFilter finds no claim to deallocate
    post = [c for c in traced.calls if c.point == "PostFilter"]
    assert rows["PostFilter"]["modelled"] and rows["PostFilter"]["calls"] == len(post) > 0
    assert {(c.pod, c.code, c.message) for c in post} == {("train-1", "Unschedulable", "still not schedulable")}
    # four pods with claims, and classic: its nvidia.com/gpu is backed by the gpu.nvidia.com class
    # (DRAExtendedResource, on in 1.36), so PreFilter no longer skips it (it binds on the device-plugin node)
    assert rows["Reserve"]["calls"] == rows["PreBind"]["calls"] == 5


def test_one_claim_from_preenqueue_to_prebind(traced):
    calls = traced.calls_of("train-0")
    assert [(c.point, c.node, c.code) for c in calls] == [
        ("PreEnqueue", "", "UnschedulableAndUnresolvable"), ("PreEnqueue", "", "Success"), ("PreFilter", "", "Success"),
        ("Filter", "h100-dra-0", "Success"), ("Filter", "h100-dp-0", "UnschedulableAndUnresolvable"),
        ("Reserve", "h100-dra-0", "Success"), ("PreBind", "h100-dra-0", "Success")]
    assert calls[0].message == 'pod "default/train-0": ResourceClaim not created yet'
    assert calls[4].message == "cannot allocate all claims"
    assert calls[3].devices == calls[5].devices == calls[6].devices == ("gpu-0",)


def test_waiting_pod_retries_until_the_claim_is_freed(traced):
    filters = traced.calls_of("train-1", "Filter")
    dra = [c for c in filters if c.node == "h100-dra-0"]
    assert [c.code for c in dra] == ["UnschedulableAndUnresolvable"] * 6 + ["Success"]
    assert dra[-1].time == 1921 and dra[-1].devices == ("gpu-0",)
    table = dr.format_calls(traced, ("train-1",))
    assert "(5 attempts in between not shown)" in table


def test_shared_claim_is_not_reallocated(traced):
    # infer-b reuses infer-a's allocated claim: the allocator does not run, the other node is refused by nodeSelector
    by_node = {c.node: c for c in traced.calls_of("infer-b", "Filter")}
    assert by_node["h100-dp-0"].message == "resourceclaim not available on the node"
    assert by_node["h100-dra-0"].devices == ()
    assert [f for f in traced.funnels if f.pod == "infer-b"] == []
    assert traced.calls_of("infer-b", "PreBind")[0].devices == ("gpu-1",)


@pytest.mark.parametrize("pod,steps", [
    # H100 with dynamic MIG: 2 full GPUs + 2 × 18 MIG placements; the class keeps type == gpu; the memory selector
    # keeps both; infer-a holds gpu-1 when train-0 comes, and both when train-1 comes
    ("train-0", [38, 2, 2, 1, 1]),
    ("train-1", [38, 2, 2, 0, 0]),
])
def test_allocator_funnel(traced, pod, steps):
    f = dr.funnel(traced, pod, "h100-dra-0")
    assert [n for _, n in f.steps] == steps


def test_visibility_count_vs_devices():
    v = dr.visibility()
    assert v["device-plugin"]["allocatable"] == {"nvidia.com/gpu": "2"} and v["device-plugin"]["devices"] == 0
    d = v["dra"]
    assert (d["numbers"], d["slices"], d["devices"], d["gpus"], d["mig placements"], d["counter sets"]) == \
        (0, 3, 38, 2, 36, 2)
    assert sorted(d["example"].attributes) == ["architecture", "cudaComputeCapability", "driverVersion",
                                              "productName", "type", "uuid"]


def test_sharing_two_containers_and_two_pods():
    s = dr.sharing_comparison()
    assert (s["device-plugin"]["gpus used"], s["dra"]["gpus used"]) == (4, 2)
    assert (s["device-plugin"]["two-containers"], s["dra"]["two-containers"]) == (2, 1)
    assert s["dra"]["held"]["pair-a"] == s["dra"]["held"]["pair-b"]
    cdi = s["dra"]["cdi"]
    assert set(cdi) == {"server", "sidecar"} and cdi["server"] == cdi["sidecar"]


def test_mig_layout_per_node_vs_per_claim():
    m = dr.mig_comparison()
    got = {s: (o["completed"], o["pending"]) for s, o in m.items()}
    assert got == {"device plugin, mig.config=all-1g.10gb": (7, 1), "device plugin, mig.config=all-disabled": (1, 7),
                   "DRA, dynamic MIG": (8, 0)}
    assert "Insufficient nvidia.com/gpu" in m["device plugin, mig.config=all-1g.10gb"]["pending messages"]["train"]
    assert "Insufficient nvidia.com/mig-1g.10gb" in m["device plugin, mig.config=all-disabled"]["pending messages"][
        "infer-0"]
    slices = dr.memory_slices_at(m["DRA, dynamic MIG"]["result"], 90)
    assert slices == {"gpu-0": [f"infer-{i}" for i in range(7)] + [""], "gpu-1": ["train"] * 8}


def test_mig_scenario_rejects_unknown_setup():
    with pytest.raises(ValueError, match="setup must be one of"):
        dr.mig_scenario("device plugin, mig.config=all-7g.80gb")


@pytest.mark.parametrize("count,case,parents,refused", [
    (2, "device plugin", [0, 0], False),
    (2, "DRA matchAttribute", [0, 0], False),
    (2, "DRA distinctAttribute", [0, 1], False),
    (7, "DRA matchAttribute", [0] * 7, False),
    (7, "DRA distinctAttribute", None, True),     # only 2 GPUs to spread 7 instances over
    (8, "device plugin", [0] * 7 + [1], False),  # a count: the 8th instance comes from the other GPU
    (8, "DRA matchAttribute", None, True),        # an A100 has 7 1g.10gb placements
])
def test_constraints(count, case, parents, refused):
    row = dr.constraint_row(count, case)
    assert row["parents"] == parents
    assert ("cannot allocate all claims" in row["message"]) == refused


@pytest.fixture(scope="module")
def failures():
    return {r["case"]: r for r in dr.failure_messages()}


@pytest.mark.parametrize("case,point,message,event", [
    ("too many GPUs (device plugin)", "-", "-", "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."),
    ("too many GPUs (DRA)", "Filter", "cannot allocate all claims",
     "0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, preemption: 0/1 nodes are available: 1 Preemption is "
     "not helpful for scheduling."),
    ("no device matches the selector", "Filter", "cannot allocate all claims", "1 cannot allocate all claims."),
    ("named claim missing", "PreEnqueue", 'could not find ResourceClaim "default/nope"', ""),
    ("DeviceClass missing", "PreFilter", "request gpu: device class example.com does not exist",
     "0/1 nodes are available: request gpu: device class example.com does not exist."),
    ("CEL error", "Filter", "selector #0: CEL runtime error: no such key: x", "selector #0"),
    ("claim allocated on another node", "Filter", "resourceclaim not available on the node",
     "1 resourceclaim not available on the node."),
])
def test_failure_messages(failures, case, point, message, event):
    r = failures[case]
    assert r["point"] == point and message in r["plugin message"]
    assert (event in r["event"]) if event else r["event"] == ""
