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
