"""gpusim.views.dra on examples/dra-gpu.yaml: each claim's path DeviceClass → ResourceSlice → device → CDI id."""
import matplotlib

matplotlib.use("Agg")

import pytest

import gpusim as gs
from gpusim.views.dra import claim_path_table, claim_paths, plot_claim_paths


@pytest.fixture(scope="module")
def run():
    return gs.run("examples/dra-gpu.yaml")


def test_every_prepared_claim_has_a_path(run):
    rows = {r["pod"]: r for r in claim_paths(run)}
    # classic asks for nvidia.com/gpu on the device-plugin node: no claim, no row
    assert sorted(rows) == ["default/infer-a", "default/infer-b", "default/train-0", "default/train-1"]
    # infer-a and infer-b share one named claim, so one device and one CDI id
    assert rows["default/infer-a"]["claim"] == rows["default/infer-b"]["claim"] == "shared-gpu"
    assert rows["default/infer-a"]["device"] == rows["default/infer-b"]["device"]
    # template claims: <pod>-<podClaimName>-<5 chars>, deleted with the pod but kept in the trace
    assert rows["default/train-0"]["claim"].startswith("train-0-gpu-")
    assert run.api.get("ResourceClaim", "default", rows["default/train-0"]["claim"]) is None
    # train-1 waited for train-0's GPU
    assert rows["default/train-1"]["device"] == rows["default/train-0"]["device"]
    assert rows["default/train-1"]["time"] > rows["default/train-0"]["time"]


@pytest.mark.parametrize("pod", ["default/infer-a", "default/train-0"])
def test_path_links_class_slice_device_and_cdi(run, pod):
    r = next(x for x in claim_paths(run) if x["pod"] == pod)
    assert r["deviceClass"] == "gpu.nvidia.com"
    assert "device.driver == 'gpu.nvidia.com'" in r["selectors"]
    assert r["node"] == r["pool"] == "h100-dra-0"
    sl = run.api.get("ResourceSlice", None, r["resourceSlice"])
    dev = next(d for d in sl.spec.devices if d.name == r["device"])
    assert r["attributes"]["uuid"] == dev.attributes["uuid"].value()
    assert r["attributes"]["productName"] == "NVIDIA H100 80GB HBM3"
    assert r["cdiDeviceIDs"] == [f"k8s.gpu.nvidia.com/device={r['device']}"]


def test_table_and_figure(run):
    text = claim_path_table(run).splitlines()
    assert text[0].split()[:4] == ["TIME", "POD", "CLAIM", "DEVICECLASS"]
    assert len(text) == 5 and all("k8s.gpu.nvidia.com/device=gpu-" in line for line in text[1:])
    ax = plot_claim_paths(run)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["DeviceClass", "ResourceSlice", "Device", "CDI id"]
    assert len(ax.get_yticklabels()) == 4


@pytest.fixture(scope="module")
def both():
    return gs.compare_allocation()


def test_device_plugin_vs_dra(both):
    dp = {r["pod"]: r for r in gs.allocation_rows(both["device-plugin"])}
    dra = {r["pod"]: r for r in gs.allocation_rows(both["dra"])}
    # the device plugin's scheduler sees a count; DRA's sees the device and its attributes
    assert {r["saw"] for r in dp.values()} == {"nvidia.com/gpu: 1"}
    assert dra["train-0"]["saw"].startswith("claim train-0-gpu-") and "NVIDIA H100 80GB HBM3" in dra["train-0"]["saw"]
    # one GPU per pod under the device plugin: the servers take both GPUs and both trainers wait
    assert dp["infer-a"]["gpus"] != dp["infer-b"]["gpus"]
    assert "Insufficient nvidia.com/gpu" in dp["train-0"]["pending"]
    # under DRA the servers share one claim's GPU, so train-0 starts at once and only train-1 waits
    assert dra["infer-a"]["gpus"] == dra["infer-b"]["gpus"] != dra["train-0"]["gpus"]
    assert dra["train-0"]["pending"] == ""
    assert "cannot allocate all claims" in dra["train-1"]["pending"]


def test_comparison_text_and_figure(both):
    text = gs.format_allocation_comparison(both)
    assert text.startswith("== device-plugin ==") and "== dra ==" in text
    axes = gs.plot_allocation_comparison(both)
    assert [a.get_title() for a in axes] == ["device-plugin: pods per GPU", "dra: pods per GPU"]


def test_bad_allocation_is_refused():
    with pytest.raises(ValueError, match="allocation must be one of device-plugin, dra"):
        gs.allocation_scenario("mig")
