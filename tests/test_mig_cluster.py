"""MIG on simulated nodes: the node label nvidia.com/mig.config applied by mig-manager, the device
plugin's strategies (single / mixed) with the resource names and GFD labels each exposes, and device
memory confined to the GPU instance."""
from __future__ import annotations

import pytest

from gpusim.api.errors import InputError
from gpusim.cluster.scenario import load
from gpusim.cluster.simulation import run
from gpusim.views.kubectl import to_json


def policy(strategy):
    return f"apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata: {{name: p}}\nspec: {{mig: {{strategy: {strategy}}}}}\n"


def pool(config, model="A100-SXM4-80GB", gpus=1):
    return (f"apiVersion: gpusim.io/v1alpha1\nkind: NodePool\nmetadata: {{name: g}}\n"
            f"spec: {{count: 1, gpu: {{model: {model}, count: {gpus}}}, labels: {{nvidia.com/mig.config: {config}}}}}\n")


def pod(name, resource, mem="", growth=""):
    ann = "gpusim.io/duration: 5m" + (f", gpusim.io/gpu-memory: {mem}" if mem else "") + \
        (f", gpusim.io/gpu-memory-growth: {growth}" if growth else "")
    return (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, annotations: {{{ann}}}}}\nspec:\n"
            f"  restartPolicy: Never\n  containers: [{{name: c, image: x, resources: {{limits: {{{resource}: 1}}}}}}]\n")


def node_of(r):
    return r.nodes()[0]


def test_mixed_strategy_advertises_one_resource_per_profile():
    r = run(text="---\n".join([policy("mixed"), pool("all-balanced", gpus=2)]))
    alloc = node_of(r).status.allocatable
    # all-balanced on A100-80GB: 2 × 1g.10gb + 1 × 2g.20gb + 1 × 3g.40gb per GPU
    assert (alloc["nvidia.com/mig-1g.10gb"], alloc["nvidia.com/mig-2g.20gb"], alloc["nvidia.com/mig-3g.40gb"]) == ("4", "2", "2")
    assert "nvidia.com/gpu" not in alloc
    labels = node_of(r).metadata.labels
    assert labels["nvidia.com/mig.config.state"] == "success" and labels["nvidia.com/mig.strategy"] == "mixed"
    assert labels["nvidia.com/mig-1g.10gb.count"] == "4"


def test_single_strategy_advertises_mig_devices_as_gpus():
    r = run(text="---\n".join([policy("single"), pool("all-1g.10gb"), pod("p", "nvidia.com/gpu")]), until=60)
    node = node_of(r)
    assert node.status.allocatable["nvidia.com/gpu"] == "7"
    assert node.metadata.labels["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb"
    devs = to_json(r)["pods"][0]["devices"]["nvidia.com/gpu"]
    assert len(devs) == 1 and devs[0].startswith("MIG-")


def test_memory_is_confined_to_the_instance():
    r = run(text="---\n".join([policy("mixed"), pool("all-balanced"),
                               pod("small", "nvidia.com/mig-1g.10gb", "8Gi", "12Gi/2m"),
                               pod("neighbour", "nvidia.com/mig-1g.10gb", "9Gi")]))
    assert r.pod("small").status.phase == "Failed"
    assert r.pod("neighbour").status.phase == "Succeeded"      # same GPU, another instance: untouched
    oom = [t for t in r.trace.records if t.function == "cuda.cudaMalloc"]
    assert len(oom) == 1 and "MIG: confined to the GPU instance's memory" in oom[0].result
    # 8Gi → 12Gi over 120 s crosses the 1g.10gb instance's 9728 MiB after (9728 − 8192) / 4096 × 120 = 45 s
    assert abs(oom[0].time - (1.002 + 45)) < 0.01


def test_strategy_none_keeps_whole_gpus():
    r = run(text="---\n".join([policy("none"), pool("all-1g.10gb", gpus=2)]))
    assert node_of(r).status.allocatable["nvidia.com/gpu"] == "2"


@pytest.mark.parametrize("docs, message", [
    ((policy("mixed"), pool("all-7g.90gb")), 'selected mig-config not present: all-7g.90gb'),
    ((policy("mixed"), pool("all-1g.10gb", model="T4")), "T4 does not support MIG"),
    ((policy("single"), pool("all-balanced")), "more than one MIG device type present on node"),
])
def test_bad_mig_configs(docs, message):
    with pytest.raises(InputError) as e:
        load(texts=[("m.yaml", "---\n".join(docs))])
    text = str(e.value)
    assert "metadata.labels[nvidia.com/mig.config]" in text and message in text, text


# --- mig-manager: reconfiguration at run time --------------------------------------------------------

def relabel(at, config):
    return (f"apiVersion: gpusim.io/v1alpha1\nkind: Action\nmetadata: {{name: relabel}}\n"
            f"spec: {{at: {at}, type: LabelNode, node: g-0, labels: {{nvidia.com/mig.config: {config}}}}}\n")


def allocatable_at(result, t):
    """Node allocatable as posted at or before t (from the kubelet's syncNodeStatus trace)."""
    posts = [r for r in result.trace.records if r.function == "kubelet.(*Kubelet).syncNodeStatus" and r.time <= t]
    return posts[-1].details["allocatable"]


def states(result):
    return [(round(r.time, 3), r.result) for r in result.trace.records
            if r.component.startswith("nvidia-mig-manager") and r.function.endswith("set_state")]


def test_reconfiguration_changes_allocatable():
    r = run(text="---\n".join([policy("mixed"), pool("all-disabled"), relabel("1m", "all-1g.10gb")]))
    assert allocatable_at(r, 59) == {"nvidia.com/gpu": "1"}
    assert states(r) == [(60.0, "pending"), (75.0, "success")]
    assert allocatable_at(r, 71)["nvidia.com/gpu"] == "0"          # plugin paused: devices unhealthy
    assert allocatable_at(r, 81)["nvidia.com/mig-1g.10gb"] == "7"
    labels = node_of(r).metadata.labels
    assert labels["nvidia.com/mig.config.state"] == "success"
    assert labels["nvidia.com/gpu.deploy.device-plugin"] == "true"
    assert labels["nvidia.com/mig-1g.10gb.count"] == "7"
    assert node_of(r).status.capacity["nvidia.com/gpu"] == "0"     # removed after the 5-minute grace period


def test_reconfiguration_fails_while_a_workload_holds_the_gpu():
    r = run(text="---\n".join([policy("mixed"), pool("all-disabled"), pod("busy", "nvidia.com/gpu"),
                               relabel("1m", "all-1g.10gb")]))
    assert node_of(r).metadata.labels["nvidia.com/mig.config.state"] == "failed"
    ev = next(e for e in r.events.log if e.reason == "MigConfigFailed")
    assert "In use by another client" in ev.message
    assert r.pod("busy").status.phase == "Succeeded"
    assert allocatable_at(r, 1000)["nvidia.com/gpu"] == "1"      # the plugin came back with whole GPUs


def test_unknown_config_label_fails():
    r = run(text="---\n".join([policy("mixed"), pool("all-disabled"), relabel("10s", "all-9g.99gb")]))
    assert node_of(r).metadata.labels["nvidia.com/mig.config.state"] == "failed"
    assert "selected mig-config not present: all-9g.99gb" in next(
        e.message for e in r.events.log if e.reason == "MigConfigFailed")


@pytest.mark.parametrize("spec, message", [
    ("{at: 1m, type: Relabel, node: g-0}", 'Unsupported value: "Relabel"'),
    ("{at: 1m, type: LabelNode, node: nope, labels: {a: b}}", 'Not found: "nope"'),
    ("{at: 1m, type: LabelNode, node: g-0}", "LabelNode sets or removes at least one label"),
])
def test_action_validation(spec, message):
    doc = f"apiVersion: gpusim.io/v1alpha1\nkind: Action\nmetadata: {{name: a}}\nspec: {spec}\n"
    with pytest.raises(InputError, match=message):
        load(texts=[("a.yaml", "---\n".join([pool("all-disabled"), doc]))])
