"""Time-slicing and MPS configuration as the GPU Operator wires it: ClusterPolicy → ConfigMap key →
per-node label; replicated device IDs, resource names, GFD labels, admission errors."""
from __future__ import annotations

import pytest

from gpusim.api.errors import InputError
from gpusim.cluster.scenario import load
from gpusim.cluster.simulation import run
from gpusim.node.deviceplugin import parent_id
from gpusim.views.kubectl import to_json

POLICY = """apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {name: cluster-policy}
spec:
  devicePlugin:
    config: {name: dp-config, default: whole}
"""


def configmap(**keys: str) -> str:
    data = "\n".join(f"  {k}: |\n" + "\n".join("    " + line for line in v.strip().splitlines()) for k, v in keys.items())
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: dp-config, namespace: gpu-operator}}\ndata:\n{data}\n"


def sharing(kind="timeSlicing", replicas=4, rename=False, fail=None):
    extra = f"\n    renameByDefault: {str(rename).lower()}" + (f"\n    failRequestsGreaterThanOne: {str(fail).lower()}"
                                                           if fail is not None else "")
    return f"""version: v1
sharing:
  {kind}:{extra}
    resources:
    - name: nvidia.com/gpu
      replicas: {replicas}
"""


def pool(label="ts", model="A100-SXM4-80GB", gpus=2):
    lab = f", labels: {{nvidia.com/device-plugin.config: {label}}}" if label else ""
    return (f"apiVersion: gpusim.io/v1alpha1\nkind: NodePool\nmetadata: {{name: g}}\n"
            f"spec: {{count: 1, gpu: {{model: {model}, count: {gpus}}}{lab}}}\n")


def pod(name, n=1, resource="nvidia.com/gpu", at="0s"):
    return (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, annotations: {{gpusim.io/duration: 10m, "
            f"gpusim.io/submit-at: {at}}}}}\nspec:\n  restartPolicy: Never\n"
            f"  containers: [{{name: c, image: x, resources: {{limits: {{{resource}: {n}}}}}}}]\n")


def simulate(*docs):
    return run(text="---\n".join(docs), until=300)


def test_time_slicing_replicates_devices_and_labels():
    r = simulate(POLICY, configmap(whole="version: v1", ts=sharing(replicas=4)), pool(), pod("a"), pod("b"), pod("c"))
    node = r.nodes()[0]
    assert node.status.allocatable["nvidia.com/gpu"] == "8" and node.status.capacity["nvidia.com/gpu"] == "8"
    labels = node.metadata.labels
    assert labels["nvidia.com/gpu.replicas"] == "4" and labels["nvidia.com/gpu.sharing-strategy"] == "time-slicing"
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-80GB-SHARED"
    devs = {p["name"]: p["devices"]["nvidia.com/gpu"][0] for p in to_json(r)["pods"]}
    assert all("::" in d for d in devs.values())
    # distributed policy: the second pod goes to the other GPU, the third back to the first
    gpus = [parent_id(devs[n]) for n in "abc"]
    assert gpus[0] != gpus[1] and gpus[2] == gpus[0]
    env = r.kubelets["g-0"].disk["kubelet_internal_checkpoint"]["Data"]["PodDeviceEntries"][0]["AllocResp"]["envs"]
    assert "::" not in env["NVIDIA_VISIBLE_DEVICES"]


def test_rename_by_default_advertises_gpu_shared():
    r = simulate(POLICY, configmap(whole="version: v1", ts=sharing(replicas=3, rename=True)), pool(gpus=1),
                 pod("a", resource="nvidia.com/gpu.shared"), pod("b"))
    node = r.nodes()[0]
    assert node.status.allocatable["nvidia.com/gpu.shared"] == "3" and "nvidia.com/gpu" not in node.status.allocatable
    assert node.metadata.labels["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-80GB"   # no -SHARED when renamed
    assert r.pod("a").status.phase == "Running"
    msg = next(e.message for e in r.events.log if e.reason == "FailedScheduling" and e.object.name == "b")
    assert msg.startswith("0/1 nodes are available: 1 Insufficient nvidia.com/gpu.")


def test_fail_requests_greater_than_one_rejects_at_admission():
    r = simulate(POLICY, configmap(whole="version: v1", ts=sharing(replicas=4, fail=True)), pool(), pod("two", n=2))
    p = r.pod("two")
    assert p.status.phase == "Failed" and p.status.reason == "UnexpectedAdmissionError"
    assert p.status.message == ('Pod was rejected: Allocate failed due to rpc error: code = Unknown desc = invalid '
                                'allocation request for "nvidia.com/gpu": invalid request: maximum request size for '
                                'shared resources is 1; found 2, which is unexpected')


def test_without_the_flag_two_replicas_are_allowed():
    r = simulate(POLICY, configmap(whole="version: v1", ts=sharing(replicas=4)), pool(), pod("two", n=2))
    assert r.pod("two").status.phase == "Running"


def test_mps_defaults_to_one_replica_per_request_and_sets_the_pipe():
    r = simulate(POLICY, configmap(whole="version: v1", ts=sharing("mps", replicas=4)), pool(), pod("two", n=2),
                 pod("one", at="1s"))
    assert r.pod("two").status.reason == "UnexpectedAdmissionError"
    assert r.pod("one").status.phase == "Running"
    node = r.nodes()[0]
    assert node.metadata.labels["nvidia.com/gpu.sharing-strategy"] == "mps"
    entries = r.kubelets["g-0"].disk["kubelet_internal_checkpoint"]["Data"]["PodDeviceEntries"]
    assert entries[0]["AllocResp"]["envs"]["CUDA_MPS_PIPE_DIRECTORY"] == "/mps/nvidia.com/gpu/pipe"


def test_default_key_applies_to_unlabelled_nodes():
    r = simulate(POLICY.replace("default: whole", "default: ts"), configmap(whole="version: v1", ts=sharing()),
                 pool(label=""))
    assert r.nodes()[0].status.allocatable["nvidia.com/gpu"] == "8"


@pytest.mark.parametrize("docs, path, message", [
    ((POLICY, configmap(whole="version: v1", ts=sharing(replicas=1)), pool()),
     "data[ts].sharing.timeSlicing.resources[0].replicas", "number of replicas must be >= 2"),
    ((POLICY, configmap(whole="version: v1", ts="version: v2"), pool()), "data[ts].version", "unknown version: v2"),
    ((POLICY, configmap(whole="version: v1", ts="version: v1\nsharing:\n  timeSlicing:\n    resources: []"), pool()),
     "data[ts].sharing.timeSlicing.resources", "no resources specified"),
    ((POLICY, configmap(whole="version: v1"), pool()), "metadata.labels[nvidia.com/device-plugin.config]",
     'Not found: "ts": ConfigMap "dp-config" has keys: whole'),
    ((POLICY, pool()), "spec.devicePlugin.config.name", 'no ConfigMap "dp-config" in namespace "gpu-operator"'),
    ((POLICY, configmap(whole="version: v1", ts=sharing("mps", replicas=20)), pool(model="V100-SXM2-32GB")),
     "data[ts].sharing.mps.resources", "invalid device maximum allowed replicas exceeded: 20 > 16"),
    ((POLICY, configmap(whole="version: v1", ts="version: v1\nsharing:\n  timeSlicing:\n    bogus: 1"), pool()),
     "data[ts]", 'unknown field "sharing.timeSlicing.bogus"'),
])
def test_bad_configs(docs, path, message):
    with pytest.raises(InputError) as e:
        load(texts=[("s.yaml", "---\n".join(docs))])
    text = str(e.value)
    assert path in text and message in text, text


def test_packed_policy_fills_one_gpu_first():
    env = "    env: [{name: SHARED_DEVICES_ALLOCATION_POLICY, value: packed}]\n"
    packed_policy = POLICY + env
    r = simulate(packed_policy, configmap(whole="version: v1", ts=sharing(replicas=4)), pool(),
                 pod("a"), pod("b", at="1s"), pod("c", at="2s"))
    devs = {p["name"]: parent_id(p["devices"]["nvidia.com/gpu"][0]) for p in to_json(r)["pods"]}
    assert devs["a"] == devs["b"] == devs["c"]            # packed: the same GPU until it is full


def test_bad_allocation_policy():
    bad = POLICY + "    env: [{name: SHARED_DEVICES_ALLOCATION_POLICY, value: tight}]\n"
    with pytest.raises(InputError, match='spec.devicePlugin.env\\[0\\].value: Unsupported value: "tight"'):
        load(texts=[("s.yaml", "---\n".join([bad, configmap(whole="version: v1", ts=sharing()), pool()]))])
