"""``gpusim diagnose`` names the root cause of each documented fault (the playbook's cases) with evidence."""
from __future__ import annotations

import pytest

from gpusim.cli import main
from gpusim.views.diagnose import diagnose_pod
from test_gpu_operator import POLICY, fault, pod, pool, sim

MIG = POLICY.replace("spec: {}", "spec: {mig: {strategy: mixed}}")
LABEL_MIG = """---
apiVersion: gpusim.io/v1alpha1
kind: Action
metadata: {name: a}
spec: {at: 1m, type: LabelNode, node: gpu-0, labels: {nvidia.com/mig.config: all-1g.10gb}}
"""
MIG_POD = pod("train", submit="2m").replace("nvidia.com/gpu: 1", "nvidia.com/mig-1g.10gb: 1")
CUSTOM_MIG = """---
apiVersion: v1
kind: ConfigMap
metadata: {name: custom-mig, namespace: gpu-operator}
data:
  config.yaml: |
    version: v1
    mig-configs:
      all-disabled:
      - {devices: all, mig-enabled: false}
      all-1g.5gb:
      - {devices: all, mig-enabled: true, mig-devices: {1g.5gb: 7}}
"""
KUEUE = """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: default
      resources: [{name: nvidia.com/gpu, nominalQuota: 1}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: big
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  template:
    metadata: {annotations: {gpusim.io/duration: 10m}}
    spec:
      restartPolicy: Never
      containers:
      - {name: c, image: cuda, resources: {limits: {nvidia.com/gpu: 2}}}
"""

CASES = {
    "DriverFailure": ((POLICY, pool(join="1m"), fault("DriverFailure"), pod()), "train", "driver",
                      "Unable to load the kernel module 'nvidia.ko'"),
    "ToolkitFailure": ((POLICY, pool(join="1m"), fault("ToolkitFailure"), pod()), "train", "toolkit",
                       "nvidia-container-toolkit-ctr"),
    "RuntimeClassMissing": ((POLICY, pool(), fault("RuntimeClassMissing"), pod(extra_spec="runtimeClassName: nvidia")),
                            "train", "runtime", 'no runtime for "nvidia" is configured'),
    "RuntimeClassMissing at bring-up": ((POLICY, pool(join="1m"), fault("RuntimeClassMissing"), pod()), "train",
                                        "runtime", 'no runtime for "nvidia" is configured'),
    "DevicePluginCrash at bring-up": ((POLICY, pool(join="1m"), fault("DevicePluginCrash", extra=", downtime: 1h"), pod()),
                                      "train", "plugin", "nvidia-device-plugin"),
    "KubeletRestart": ((POLICY, pool(), fault("KubeletRestart", at="60s"), pod(submit="60s")), "train",
                       "kubelet-restart", "no healthy devices present"),
    "XidError": ((POLICY, pool(), fault("XidError", at="1m", extra=", gpu: 0, xid: 79"),
                  fault("XidError", at="1m", extra=", gpu: 1, xid: 79", name="g"), pod(submit="2m")), "train",
                 "unhealthy", "GPU has fallen off the bus"),
    "NVLinkError": ((POLICY, pool(), fault("NVLinkError", at="1m", extra=", gpu: 0"),
                     fault("NVLinkError", at="1m", extra=", gpu: 1", name="g"), pod(submit="2m")), "train",
                    "unhealthy", "NVLINK_ERROR"),
    "NodeDown": ((POLICY, pool(), fault("NodeDown", at="1m"), pod(submit="2m")), "train", "node-down",
                 "Kubelet stopped posting node status."),
    "MigConfigFailure": ((MIG, pool(), fault("MigConfigFailure"), LABEL_MIG, MIG_POD), "train", "mig",
                         "NVML_ERROR_RESET_REQUIRED"),
    # mig-manager (reconfigure-mig.sh) cannot reset GPUs a pod holds: the holder is named (lab 07's root cause)
    "MIG config while a pod holds the GPUs": ((MIG, pool(), pod("busy", gpus=2, duration="1h"), LABEL_MIG, MIG_POD),
                                              "train", "mig-in-use", "pods held the GPUs when mig-manager tried to "
                                              "reset them: default/busy"),
    # mig-parted: a profile the model does not have (1g.5gb is a 40GB part's profile, not an 80GB one's)
    "MIG profile not on this model": ((MIG.replace("spec: {mig: {strategy: mixed}}", "spec: {mig: {strategy: mixed}, "
                                                   "migManager: {config: {name: custom-mig}}}"), CUSTOM_MIG, pool(),
                                       LABEL_MIG.replace("all-1g.10gb", "all-1g.5gb"), MIG_POD), "train", "mig-config",
                                      'MIG profile "1g.5gb" does not exist on A100-SXM4-80GB'),
    # mig-parted: a label naming a config the ConfigMap does not define
    "MIG config not in the ConfigMap": ((MIG, pool(), LABEL_MIG.replace("all-1g.10gb", "all-1g.12gb"), MIG_POD),
                                        "train", "mig-config", "selected mig-config not present: all-1g.12gb"),
    "time-slicing OOM": ((pool(), pod(ann=", gpusim.io/gpu-memory: 90Gi")), "train", "oom", "CUDA error: out of memory"),
    "all GPUs in use": ((pool(), pod("a", gpus=2, duration="1h"), pod(submit="1m")), "train", "gpus-busy",
                        "Insufficient nvidia.com/gpu"),
    "Kueue quota": ((pool(), KUEUE), "big", "kueue-quota", "QuotaReserved=False"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_root_cause(case):
    docs, name, cause, evidence = CASES[case]
    r = sim(*docs)
    d = diagnose_pod(r, name)
    text = d.render()
    assert d.root_cause == cause, text
    assert evidence in text
    assert text.splitlines()[-1].startswith("Fix: ")


def test_healthy_pod_has_no_findings():
    d = diagnose_pod(sim(POLICY, pool(), pod()), "train")
    assert d.findings == [] and "No problem found" in d.render()


def test_diagnose_cli(capsys, tmp_path):
    f = tmp_path / "s.yaml"
    f.write_text(POLICY + pool(join="1m") + fault("DriverFailure") + pod())
    assert main(["diagnose", "pod", "train", "-f", str(f), "--until", "20m"]) == 0
    out = capsys.readouterr().out
    assert "Root cause: [gpu-operator] nvidia-driver-daemonset-" in out
    assert "waiting for nvidia container stack to be setup" in out
    assert main(["diagnose", "pod", "nope", "-f", str(f)]) == 1
    assert 'pods "nope" not found' in capsys.readouterr().err


def test_node_bring_up_example(capsys):
    assert main(["diagnose", "pod", "train-1", "-f", "examples/node-bring-up.yaml"]) == 0
    out = capsys.readouterr().out
    assert "on h100-1" in out and "Unable to load the kernel module 'nvidia.ko'" in out
    assert main(["run", "examples/node-bring-up.yaml", "-n", "gpu-operator"]) == 0
    table = capsys.readouterr().out
    assert "Init:0/4" in table and "CrashLoopBackOff" in table


JOB3 = """---
apiVersion: batch/v1
kind: Job
metadata: {name: workers}
spec:
  parallelism: 3
  completions: 3
  template:
    metadata: {annotations: {gpusim.io/duration: 10m}}
    spec:
      restartPolicy: Never
      containers:
      - {name: w, image: pytorch/pytorch, resources: {limits: {nvidia.com/gpu: 1}}}
"""


def test_job_name_diagnoses_its_first_pod_that_is_not_running():
    r = sim(POLICY, pool(gpus=2), JOB3, until="5m")
    d = diagnose_pod(r, "workers")
    pending = [p for p in r.api.list("Pod", lambda p: p.metadata.name.startswith("workers-"))
               if not p.spec.node_name]
    assert len(pending) == 1
    assert d.target.startswith("Job default/workers (3 pods), Pod default/" + pending[0].metadata.name)
    assert d.root_cause == "gpus-busy" and "Insufficient nvidia.com/gpu" in d.render()


def test_job_name_with_all_pods_running_has_no_findings():
    d = diagnose_pod(sim(POLICY, pool(gpus=4), JOB3), "workers")
    assert d.findings == [] and d.target.startswith("Job default/workers (3 pods), Pod default/workers-")


def test_native_gang_1_36_member_that_fitted_blames_its_pod_group(capsys):
    """examples/native-gang.yaml at 10m: the job's first pod fitted in every pod group cycle and was undone; the
    root cause is the PodGroup that does not fit as a whole (1.36's cycle), not a scheduler filter. The worker that
    did not fit shows its own FitError under the gang finding."""
    import gpusim
    r = gpusim.run("examples/native-gang.yaml", until="10m")
    d = diagnose_pod(r, "train")
    assert d.root_cause == "native-gang" and [f.layer for f in d.findings] == ["gang"]
    text = d.render()
    assert "pod group scheduling cycles, the last at t=595s: 4 pods tried, 3 placed (minCount 4) and undone" in text
    assert "PodGroupScheduled=False Unschedulable: pod group is unschedulable" in text
    unfit = next(p for p in r.pods() if p.metadata.name.startswith("train-") and any(
        "Insufficient" in e.message for e in r.events.events if e.involved_object.name == p.metadata.name))
    d2 = diagnose_pod(r, unfit.metadata.name)
    assert [f.layer for f in d2.findings] == ["gang", "scheduler"] and d2.root_cause == "gpus-busy"
