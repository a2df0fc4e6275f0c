"""DCGM exporter metrics of a run (gpusim.records.dcgm_samples, gpusim.views.dcgm): the Prometheus text
exposition parsed back with prometheus_client, the values from the simulation, the labels, the alert rules."""
from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from gpusim.cli import main
from gpusim.records import DCGM_COUNTERS
from gpusim.views import dcgm
from test_gpu_operator import POLICY, fault, pod, pool, sim


def families(text):
    return {f.name: f for f in text_string_to_metric_families(text)}


def value(fams, metric, **labels):
    vals = [s.value for s in fams[metric].samples if all(s.labels.get(k) == v for k, v in labels.items())]
    assert vals, (metric, labels)
    return vals[0]


def test_exposition_parses_with_the_default_counters_help_and_types():
    r = sim(POLICY, pool(), pod(ann=", gpusim.io/gpu-memory: 20Gi"))
    fams = families(dcgm.exposition(r, 300))
    assert set(fams) == {m for m, _, _ in DCGM_COUNTERS}
    for metric, kind, help_text in DCGM_COUNTERS:
        assert fams[metric].type == kind and fams[metric].documentation == help_text
    held = [s for s in fams["DCGM_FI_DEV_GPU_UTIL"].samples if s.labels.get("pod")]
    assert len(held) == 1
    labels = held[0].labels
    uuid = r.kubelets["gpu-0"].plugin.devices[int(labels["gpu"])].id
    assert labels == {"gpu": labels["gpu"], "UUID": uuid, "pci_bus_id": labels["pci_bus_id"],
                      "device": f"nvidia{labels['gpu']}", "modelName": "NVIDIA A100-SXM4-80GB", "Hostname": "gpu-0",
                      "DCGM_FI_DRIVER_VERSION": "580.95.05", "container": "c", "namespace": "default", "pod": "train"}
    assert held[0].value == 100
    assert value(fams, "DCGM_FI_DEV_FB_USED", pod="train") == 20480
    assert value(fams, "DCGM_FI_DEV_FB_FREE", pod="train") == 81920 - 20480
    idle = [s for s in fams["DCGM_FI_DEV_GPU_UTIL"].samples if "pod" not in s.labels]
    assert len(idle) == 1 and idle[0].value == 0
    assert value(fams, "DCGM_FI_DEV_FB_USED", gpu=idle[0].labels["gpu"]) == 0


def test_utilization_annotation_and_the_end_of_the_pod():
    r = sim(POLICY, pool(), pod(ann=", gpusim.io/gpu-utilization: '37'"))
    assert value(families(dcgm.exposition(r, 120)), "DCGM_FI_DEV_GPU_UTIL", pod="train") == 37
    after = families(dcgm.exposition(r, 900))   # the 10-minute pod has finished: no pod label, idle
    assert all("pod" not in s.labels and s.value == 0 for s in after["DCGM_FI_DEV_GPU_UTIL"].samples)


def test_xid_gauge_holds_the_last_xid():
    r = sim(POLICY, pool(), fault("XidError", at="1m", extra=", gpu: 1, xid: 48"),
            fault("XidError", at="2m", extra=", gpu: 1, xid: 13", name="g"), until="5m")
    assert value(families(dcgm.exposition(r, 30)), "DCGM_FI_DEV_XID_ERRORS", gpu="1") == 0
    assert value(families(dcgm.exposition(r, 90)), "DCGM_FI_DEV_XID_ERRORS", gpu="1") == 48
    assert value(families(dcgm.exposition(r, 150)), "DCGM_FI_DEV_XID_ERRORS", gpu="1") == 13   # ignored, still last
    assert value(families(dcgm.exposition(r, 150)), "DCGM_FI_DEV_XID_ERRORS", gpu="0") == 0


def test_no_exporter_no_metrics_until_it_runs():
    r = sim(POLICY, pool(join="1m"), until="10m")
    assert families(dcgm.exposition(r, 120)) == {}   # bring-up: the exporter pod waits in Init
    assert "DCGM_FI_DEV_GPU_UTIL" in families(dcgm.exposition(r, 600))
    r = sim(POLICY, pool(join="1m"), fault("DriverFailure"), until="10m")
    assert families(dcgm.exposition(r, 600)) == {}


def test_no_cluster_policy_exporter_runs_with_the_node():
    r = sim(pool(), pod(), until="5m")
    assert value(families(dcgm.exposition(r, 60)), "DCGM_FI_DEV_GPU_UTIL", pod="train") == 100


@pytest.mark.parametrize("docs, at, alert, state", [
    ((pool(), pod(duration="3h", ann=", gpusim.io/gpu-utilization: '2'")), "2h", "GPUIdleWhileAllocated", "firing"),
    ((pool(), pod(duration="3h", ann=", gpusim.io/gpu-utilization: '50'")), "2h", "GPUIdleWhileAllocated", None),
    ((pool(), fault("XidError", at="1m", extra=", gpu: 0, xid: 79")), "5m", "GPUXidErrorSeen", "firing"),
    ((pool(), fault("XidError", at="1m", extra=", gpu: 0, xid: 79")), "20m", "GPUXidErrorSeen", None),
    ((pool(), pod(duration="1h", ann=", gpusim.io/gpu-memory: 79Gi")), "10m", "GPUMemoryPressure", "firing"),
    ((pool(), pod(duration="1h", ann=", gpusim.io/gpu-memory: 79Gi")), "3m", "GPUMemoryPressure", "pending"),
    ((pool(), pod(duration="1h", ann=", gpusim.io/gpu-memory: 60Gi")), "10m", "GPUMemoryPressure", None),
])
def test_alert_rules(docs, at, alert, state):
    from gpusim.api.duration import parse_duration
    r = sim(*docs, until="3h")
    found = [a for a in dcgm.alerts(r, parse_duration(at)) if a.name == alert]
    assert (found[0].state if found else None) == state


def test_metrics_cli(capsys, tmp_path):
    f = tmp_path / "s.yaml"
    f.write_text(POLICY + pool() + pod(ann=", gpusim.io/gpu-memory: 1Gi"))
    assert main(["metrics", "-f", str(f), "--at", "5m"]) == 0
    fams = families(capsys.readouterr().out)
    assert value(fams, "DCGM_FI_DEV_FB_USED", pod="train") == 1024
    assert main(["metrics", "-f", str(f), "--alerts"]) == 0
    assert capsys.readouterr().out.strip() == "No alerts pending or firing."
    assert main(["metrics", "-f", str(f), "--at", "99h"]) == 2
    assert "--at" in capsys.readouterr().err
