"""The GPU Operator (gpusim/operator, gpusim/node/operands.py): node labels, the operand order, bring-up of a
node that joins, the ClusterPolicy's status, and each operator fault's visible symptoms with upstream texts."""
from __future__ import annotations

import pytest

from gpusim.api.errors import InputError
from gpusim.api.nvidia_operands import (MSG_NO_GPU_RESOURCES, MSG_NO_RUNTIME, MSG_WAIT_STACK, NAMESPACE, OPERANDS)
from gpusim.cluster.scenario import load
from gpusim.cluster.simulation import Simulation, run
from gpusim.operator import state_manager
from gpusim.views import kubectl

POLICY = """
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {name: cluster-policy}
spec: {}
"""


def pool(name="gpu", count=1, model="A100-SXM4-80GB", gpus=2, join=None):
    j = f", joinAt: {join}" if join else ""
    return f"""---
apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {{name: {name}}}
spec: {{count: {count}, gpu: {{model: {model}, count: {gpus}}}{j}}}
"""


def fault(kind, at="0s", node="gpu-0", extra="", name="f"):
    return f"""---
apiVersion: gpusim.io/v1alpha1
kind: Fault
metadata: {{name: {name}}}
spec: {{at: {at}, type: {kind}, node: {node}{extra}}}
"""


def pod(name="train", gpus=1, submit="0s", extra_spec="", duration="10m", ann=""):
    return f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, annotations: {{gpusim.io/duration: {duration}, gpusim.io/submit-at: {submit}{ann}}}}}
spec:
  restartPolicy: Never
  {extra_spec}
  containers:
  - {{name: c, image: cuda, resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}}}
"""


def sim(*docs, until="30m"):
    text = f"""apiVersion: gpusim.io/v1alpha1
kind: Simulation
metadata: {{name: s}}
spec: {{until: {until}}}
""" + "".join("\n---\n" + d.strip().removeprefix("---") for d in docs)
    return run(text=text)


def operand(r, ds, node="gpu-0"):
    return next(p for p in r.operand_pods() if p.metadata.labels["app"] == ds and p.spec.node_name == node)


def status(r, ds, node="gpu-0"):
    return kubectl.pod_status_text(operand(r, ds, node))


def logs(r, node="gpu-0"):
    return [line for _, _, _, line in r.kubelets[node].operands.logs]


# --- controllers/state_manager_test.go (NVIDIA/gpu-operator @ 06faaf0) ---------------------------------------
NFD = "feature.node.kubernetes.io/"


@pytest.mark.parametrize("labels, want", [   # TestHasGPULabels
    ({NFD + "pci-10de.present": "true"}, True),
    ({NFD + "pci-0302_10de.present": "true"}, True),
    ({NFD + "pci-0300_10de.present": "true"}, True),
    ({NFD + "pci-10de.present": "false"}, False),
    ({"other": "true"}, False),
])
def test_has_gpu_labels(labels, want):
    assert state_manager.has_gpu(labels) is want


@pytest.mark.parametrize("labels, want", [   # TestHasMIGCapableGPU
    ({"nvidia.com/mig.capable": "true"}, True),
    ({"nvidia.com/mig.capable": "false"}, False),
    ({"nvidia.com/gpu.product": "NVIDIA-A100"}, True),
    ({"nvidia.com/gpu.product": "NVIDIA-H100"}, True),
    ({"nvidia.com/gpu.product": "NVIDIA-A30"}, True),
    ({"nvidia.com/gpu.product": "NVIDIA-T4"}, False),
    ({"nvidia.com/vgpu.host-driver-version": "535.54"}, False),
    ({}, False),
])
def test_has_mig_capable_gpu(labels, want):
    assert state_manager.mig_capable(labels) is want


@pytest.mark.parametrize("labels, want", [   # TestHasOperandsDisabled
    ({"nvidia.com/gpu.deploy.operands": "false"}, True),
    ({"nvidia.com/gpu.deploy.operands": "true"}, False),
    ({}, False),
])
def test_has_operands_disabled(labels, want):
    assert state_manager.operands_disabled(labels) is want


def test_operands_in_state_manager_order():
    """controllers/state_manager.go addState: driver → toolkit → validator → device plugin → DCGM →
    dcgm-exporter → GFD → mig-manager → node status exporter."""
    assert [o.state for o in OPERANDS] == [
        "state-driver", "state-container-toolkit", "state-operator-validation", "state-device-plugin",
        "state-dcgm", "state-dcgm-exporter", "gpu-feature-discovery", "state-mig-manager",
        "state-node-status-exporter"]
    assert [o.daemonset for o in state_manager.enabled_operands(load(texts=[("p", POLICY)]).cluster_policy.spec)] \
        == ["nvidia-driver-daemonset", "nvidia-container-toolkit-daemonset", "nvidia-operator-validator",
            "nvidia-device-plugin-daemonset", "nvidia-dcgm-exporter", "gpu-feature-discovery", "nvidia-mig-manager"]


def test_nodes_present_at_start_are_up_and_unchanged_for_workloads():
    r = sim(POLICY, pool(), pod())
    assert r.operator.policy.status.state == "ready"
    pods = r.operand_pods()
    assert {p.metadata.labels["app"] for p in pods} == {o.daemonset for o in r.operator.operands}
    assert all(kubectl.pod_status_text(p) == "Running" and p.metadata.namespace == NAMESPACE for p in pods)
    assert not [e for e in r.events.log if e.object.namespace == NAMESPACE]   # up before the scenario began
    assert [p.metadata.name for p in r.pods()] == ["train"]
    node = r.api.get("Node", "", "gpu-0")
    assert node.metadata.labels["nvidia.com/gpu.deploy.device-plugin"] == "true"
    assert node.metadata.labels["nvidia.com/gpu.deploy.mig-manager"] == "true"   # A100: MIG capable
    bare = sim(pool(), pod())
    assert kubectl.get_pods(r) == kubectl.get_pods(bare)                          # the same workload result
    assert kubectl.get_events(r) == kubectl.get_events(bare)
    assert [p.metadata.uid for p in r.pods()] == [p.metadata.uid for p in bare.pods()]   # same random stream


def test_bring_up_of_a_node_that_joins_follows_the_order():
    r = sim(POLICY, pool(join="5m"), pod())
    assert r.api.get("Node", "", "gpu-0").metadata.creation_timestamp == 300
    started = {}
    for rec in r.trace.records:
        if rec.function == "kuberuntime.(*kubeGenericRuntimeManager).startContainer" and NAMESPACE in rec.object:
            started.setdefault(rec.details["container"], rec.time)
    assert started["k8s-driver-manager"] < started["nvidia-driver-ctr"] < started["nvidia-container-toolkit-ctr"]
    assert started["nvidia-container-toolkit-ctr"] < started["nvidia-device-plugin"] < started["plugin-validation"]
    assert started["nvidia-device-plugin"] < started["nvidia-operator-validator"]
    assert started["nvidia-driver-ctr"] + 120 <= started["nvidia-container-toolkit-ctr"]   # timing.driverLoad 2m
    states = r.operator.state_log
    assert states[0][1] == "ready" and states[1] == (300.0, "notReady") and states[-1][1] == "ready"
    ready_at = states[-1][0]
    registered = min(rec.time for rec in r.trace.records if rec.function == "plugin.(*nvidiaDevicePlugin).Start")
    assert 300 + 120 < registered < ready_at < 300 + 240
    train = r.pod("train")
    assert train.status.phase == "Succeeded" and r.pod("train").status.start_time > registered
    labels = r.api.get("Node", "", "gpu-0").metadata.labels
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-80GB"   # written by GFD after it started


def test_joining_node_without_a_cluster_policy_has_its_components_preinstalled():
    r = sim(pool(join="5m"), pod())
    assert r.operand_pods() == []
    starts = [rec.time for rec in r.trace.records if rec.function == "plugin.(*nvidiaDevicePlugin).Start"]
    assert starts == [300.0]
    assert r.pod("train").status.phase == "Succeeded"


def test_deploy_label_false_removes_the_device_plugin():
    action = """---
apiVersion: gpusim.io/v1alpha1
kind: Action
metadata: {name: unlabel}
spec: {at: 1m, type: LabelNode, node: gpu-0, labels: {nvidia.com/gpu.deploy.device-plugin: "false"}}
"""
    r = sim(POLICY, pool(), action, until="5m")
    assert not [p for p in r.operand_pods() if p.metadata.labels["app"] == "nvidia-device-plugin-daemonset"]
    assert r.api.get("Node", "", "gpu-0").status.allocatable["nvidia.com/gpu"] == "0"
    assert r.operator.policy.status.state == "ready"   # the DaemonSet selects no node there any more


@pytest.mark.parametrize("label, driver_pod, bring_up", [
    (None, True, None),         # the operator's driver container: the fault breaks it, the node stays bare
    ("false", False, 320.0),    # the DaemonSet's nodeSelector skips the node: the host's preinstalled driver serves
    ("pre-installed", False, 320.0),   # any value but "true" (labelGPUNodes keeps a value set beforehand)
])
def test_deploy_driver_label_selects_the_host_driver(label, driver_pod, bring_up):
    """state_manager.go labelGPUNodes only adds missing nvidia.com/gpu.deploy.* labels, and the driver DaemonSet
    selects nvidia.com/gpu.deploy.driver=true: a node labelled otherwise runs on its preinstalled driver."""
    labels = f', labels: {{nvidia.com/gpu.deploy.driver: "{label}"}}' if label else ""
    text = pool(join="5m").replace("joinAt: 5m}", "joinAt: 5m" + labels + "}")
    r = sim(POLICY, text, fault("DriverFailure"), pod())
    pods = [p for p in r.operand_pods() if p.metadata.labels["app"] == "nvidia-driver-daemonset"]
    assert bool(pods) == driver_pod
    if driver_pod:   # the fault breaks the operator's driver container; the host driver is not the operator's
        assert kubectl.pod_status_text(r.pod("train")) == "Pending" and r.ctx.holdings == []
    else:
        assert r.api.get("Node", "", "gpu-0").metadata.labels["nvidia.com/gpu.deploy.driver"] == label
        assert r.operator.policy.status.state == "ready"
        assert min(h.start for h in r.ctx.holdings if h.pod == "train") == pytest.approx(bring_up, abs=1.0)


def test_seed_and_input_give_the_same_operand_pods():
    a, b = sim(POLICY, pool(join="1m")), sim(POLICY, pool(join="1m"))
    assert kubectl.get_pods(a, namespace=NAMESPACE) == kubectl.get_pods(b, namespace=NAMESPACE)
    assert "nvidia-driver-daemonset-" in kubectl.get_pods(a, namespace=NAMESPACE)


# --- faults -----------------------------------------------------------------------------------------------------
def test_driver_failure_at_bring_up():
    r = sim(POLICY, pool(join="1m"), fault("DriverFailure"), pod())
    drv = operand(r, "nvidia-driver-daemonset").status.container_statuses[0]
    assert drv.restart_count >= 3 and not drv.ready
    term = drv.state.terminated or drv.last_state.terminated
    assert term.exit_code == 1 and term.message == "Unable to load the kernel module 'nvidia.ko'"
    assert status(r, "nvidia-container-toolkit-daemonset") == "Init:0/1"
    assert status(r, "nvidia-operator-validator") == "Init:0/4"
    for ds in ("nvidia-device-plugin-daemonset", "nvidia-dcgm-exporter", "gpu-feature-discovery"):
        assert status(r, ds) == "Init:0/1"
    assert MSG_WAIT_STACK in logs(r) and "command failed, retrying after 5 seconds" in logs(r)
    assert "nvidia.com/gpu" not in r.api.get("Node", "", "gpu-0").status.capacity
    assert r.operator.policy.status.state == "notReady"
    assert kubectl.pod_status_text(r.pod("train")) == "Pending"


def test_driver_failure_on_a_running_node_loses_nvml_and_recovers_the_driver():
    r = sim(POLICY, pool(), fault("DriverFailure", at="1m", extra=", downtime: 5m"), until="20m")
    assert r.api.get("Node", "", "gpu-0").status.allocatable["nvidia.com/gpu"] == "0"
    assert any("marking all devices as unhealthy" in rec.result for rec in r.trace.records)
    drv = operand(r, "nvidia-driver-daemonset").status.container_statuses[0]
    assert drv.restart_count >= 1 and drv.ready   # the module loads again after the downtime


def test_toolkit_failure_at_bring_up():
    r = sim(POLICY, pool(join="1m"), fault("ToolkitFailure"))
    tk = operand(r, "nvidia-container-toolkit-daemonset").status.container_statuses[0]
    assert tk.restart_count >= 2 and not tk.ready
    assert status(r, "nvidia-operator-validator") == "Init:CrashLoopBackOff"
    assert status(r, "nvidia-device-plugin-daemonset") == "Init:0/1"
    assert "toolkit-ready" not in r.kubelets["gpu-0"].operands.files
    assert r.operator.policy.status.state == "notReady"


@pytest.mark.parametrize("operator", [True, False])
def test_runtime_class_missing(operator):
    r = sim(*( [POLICY] if operator else []), pool(), fault("RuntimeClassMissing"),
            pod(extra_spec="runtimeClassName: nvidia"), pod("plain"))
    ev = [e for e in r.events.for_object("Pod", "default", "train") if e.reason == "FailedCreatePodSandBox"]
    assert ev and ev[0].type == "Warning"
    assert ev[0].message == ('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox '
                             'runtime: no runtime for "nvidia" is configured') == MSG_NO_RUNTIME.format(handler="nvidia")
    assert kubectl.pod_status_text(r.pod("train")) == "ContainerCreating"
    assert r.pod("plain").status.phase == "Succeeded"   # no runtimeClassName: unaffected


def test_runtime_class_missing_with_downtime_recovers():
    r = sim(POLICY, pool(), fault("RuntimeClassMissing", extra=", downtime: 1m"), pod(extra_spec="runtimeClassName: nvidia"))
    assert r.pod("train").status.phase == "Succeeded"


def test_device_plugin_crash_at_bring_up():
    r = sim(POLICY, pool(join="1m"), fault("DevicePluginCrash", extra=", downtime: 1h"))
    assert status(r, "nvidia-device-plugin-daemonset") == "CrashLoopBackOff"
    assert MSG_NO_GPU_RESOURCES in logs(r)
    assert "Init:" in status(r, "nvidia-operator-validator")


def test_device_plugin_crash_with_operator_restarts_the_container():
    r = sim(POLICY, pool(), fault("DevicePluginCrash", at="1m"), until="5m")
    cs = operand(r, "nvidia-device-plugin-daemonset").status.container_statuses[0]
    assert cs.restart_count == 1 and cs.ready and cs.last_state.terminated.message == "crashed"
    assert r.api.get("Node", "", "gpu-0").status.allocatable["nvidia.com/gpu"] == "2"


def test_kubelet_restart_gives_unexpected_admission_error():
    r = sim(POLICY, pool(), fault("KubeletRestart", at="60s"), pod(submit="60s"))
    p = r.pod("train")
    assert p.status.reason == "UnexpectedAdmissionError"
    assert p.status.message == ("Pod was rejected: Allocate failed due to no healthy devices present; cannot "
                                "allocate unhealthy devices nvidia.com/gpu, which is unexpected")


IGNORED = (13, 31, 43, 45, 68, 109)   # internal/rm/health.go: application XIDs


@pytest.mark.parametrize("xid, unhealthy", [(x, False) for x in IGNORED] + [(x, True) for x in (48, 63, 64, 74, 79, 94, 95)])
def test_xid_critical_or_ignored(xid, unhealthy):
    r = sim(POLICY, pool(), fault("XidError", at="1m", extra=f", gpu: 1, xid: {xid}"), until="3m")
    assert r.api.get("Node", "", "gpu-0").status.allocatable["nvidia.com/gpu"] == ("1" if unhealthy else "2")
    plugin = [rec.result for rec in r.trace.records if rec.function == "rm.(*nvmlResourceManager).checkHealth"]
    uuid = r.kubelets["gpu-0"].plugin.devices[1].id
    assert plugin == ([f"XidCriticalError: Xid={xid} on Device={uuid}; marking device as unhealthy."] if unhealthy
                      else [f"Skipping non-critical Xid={xid}"])
    dmesg = [rec.result for rec in r.trace.records if rec.function == "dmesg"]
    assert dmesg[0].startswith(f"NVRM: Xid (PCI:0000:28:00): {xid}, pid='<unknown>', name=<unknown>, ")


def test_nvlink_error_is_xid_74_and_critical():
    r = sim(POLICY, pool(), fault("NVLinkError", at="1m", extra=", gpu: 0"), until="3m")
    assert r.api.get("Node", "", "gpu-0").status.allocatable["nvidia.com/gpu"] == "1"
    assert [rec.result for rec in r.trace.records if rec.function == "dmesg"] == [
        "NVRM: Xid (PCI:0000:18:00): 74, pid='<unknown>', name=<unknown>, NVLink Error"]


def test_xid_before_join_hits_the_bring_up():
    r = sim(POLICY, pool(join="2m"), fault("XidError", at="0s", extra=", gpu: 0, xid: 79"))
    assert r.api.get("Node", "", "gpu-0").status.allocatable["nvidia.com/gpu"] == "1"


def test_node_down_with_downtime_boots_and_brings_operands_up_again():
    r = sim(POLICY, pool(), fault("NodeDown", at="1m", extra=", downtime: 2m"), until="20m")
    node = r.api.get("Node", "", "gpu-0")
    assert node.status.condition("Ready").status == "True"
    assert not [t for t in node.spec.taints if t.key == "node.kubernetes.io/unreachable"]
    reasons = [e.reason for e in r.events.log if e.object.kind == "Node"]
    assert reasons.index("NodeNotReady") < reasons.index("NodeReady")
    assert node.status.allocatable["nvidia.com/gpu"] == "2"
    drv = operand(r, "nvidia-driver-daemonset")
    assert drv.status.start_time == 180.0   # the driver pod ran again from the boot
    assert r.operator.policy.status.state == "ready"


def test_node_down_without_downtime_stays_down():
    r = sim(pool(), fault("NodeDown", at="1m"), until="5m")
    assert r.api.get("Node", "", "gpu-0").status.condition("Ready").status == "Unknown"


def test_mig_config_failure():
    mig = POLICY.replace("spec: {}", "spec: {mig: {strategy: mixed}}")
    action = """---
apiVersion: gpusim.io/v1alpha1
kind: Action
metadata: {name: a}
spec: {at: 1m, type: LabelNode, node: gpu-0, labels: {nvidia.com/mig.config: all-1g.10gb}}
"""
    r = sim(mig, pool(), fault("MigConfigFailure"), action, until="5m")
    node = r.api.get("Node", "", "gpu-0")
    assert node.metadata.labels["nvidia.com/mig.config.state"] == "failed"
    ev = [e for e in r.events.log if e.reason == "MigConfigFailed"]
    assert ev and "NVML_ERROR_RESET_REQUIRED" in ev[0].message
    assert node.status.allocatable["nvidia.com/gpu"] == "2" and "nvidia.com/mig-1g.10gb" not in node.status.allocatable


@pytest.mark.parametrize("doc, field, message", [
    (pool() + fault("DriverFailure"), "spec.type", "needs a ClusterPolicy"),
    (POLICY + pool() + fault("NodeDown", extra=", xid: 48"), "spec.xid", "only XidError faults take an XID"),
    (POLICY + pool() + fault("NVLinkError"), "spec.gpu", "Required value"),
    (POLICY + pool() + fault("XidError", extra=", gpu: 0, downtime: 1m"), "spec.downtime", "has no downtime"),
    (POLICY + pool(model="T4") + fault("MigConfigFailure"), "spec.node", "does not support MIG"),
    (POLICY + pool(join="soon"), "spec.joinAt", "Invalid value"),
    (POLICY.replace("spec: {}", "spec: {driver: {enabled: yes-please}}") + pool(), "spec.driver.enabled",
     "must be a boolean"),
])
def test_invalid_input(doc, field, message):
    with pytest.raises(InputError) as e:
        load(texts=[("s.yaml", doc)])
    assert field in str(e.value) and message in str(e.value)


def test_operand_sections_can_be_disabled():
    r = sim(POLICY.replace("spec: {}", "spec: {dcgmExporter: {enabled: false}, dcgm: {enabled: true}}"), pool())
    apps = {p.metadata.labels["app"] for p in r.operand_pods()}
    assert "nvidia-dcgm-exporter" not in apps and "nvidia-dcgm" in apps


def test_simulation_is_deterministic():
    sc = load(texts=[("s", POLICY + pool(join="1m") + fault("DriverFailure", node="gpu-0") + pod())])
    a, b = Simulation(sc, seed=3).run(), Simulation(sc, seed=3).run()
    assert kubectl.get_pods(a, all_namespaces=True) == kubectl.get_pods(b, all_namespaces=True)


def test_relabel_driver_false_removes_the_driver_pod_and_validates_the_host_driver():
    """`kubectl label node gpu-0 nvidia.com/gpu.deploy.driver=false --overwrite` on a node whose driver container
    crash-loops: the DaemonSet drops its pod, driver-validation finds the host's driver at its next 5 s retry and
    the stack after it comes up."""
    action = """---
apiVersion: gpusim.io/v1alpha1
kind: Action
metadata: {name: relabel}
spec: {at: 10m, type: LabelNode, node: gpu-0, labels: {nvidia.com/gpu.deploy.driver: "false"}}
"""
    r = sim(POLICY, pool(join="5m"), fault("DriverFailure"), pod(), action)
    assert not [p for p in r.operand_pods() if p.metadata.labels["app"] == "nvidia-driver-daemonset"]
    assert r.operator.policy.status.state == "ready"
    start = min(h.start for h in r.ctx.holdings if h.pod == "train")
    assert 600.0 < start < 660.0
    assert r.api.get("Node", "", "gpu-0").status.allocatable["nvidia.com/gpu"] == "2"
