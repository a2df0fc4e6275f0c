"""NVIDIA's DRA driver ComputeDomains: the resource.nvidia.com/v1beta1 object and its validation, the
compute-domain controller (templates, IMEX daemons, status), the compute-domain kubelet plugin (slices, channel
prepare waiting for the node's daemon, CDI) and examples/compute-domain.yaml."""
from __future__ import annotations

import pytest

from gpusim.api import resource_nvidia_com_v1beta1 as cdapi
from gpusim.api.errors import InputError
from gpusim.cluster.scenario import load
from gpusim.cluster.simulation import Simulation, run
from gpusim.controllers.computedomain import (calculate_global_status, channel_allocation_mode_for,
                                              next_available_index)
from gpusim.views import computedomain as views

EXAMPLE = "examples/compute-domain.yaml"
POOLS = """apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: gb}
spec:
  count: 2
  gpu: {model: GB200, count: 4, topology: gb200-nvl72, allocation: dra}
---
apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec:
  count: 1
  gpu: {model: H100-SXM5-80GB, count: 8, allocation: dra}
"""
DOMAIN = """---
apiVersion: resource.nvidia.com/v1beta1
kind: ComputeDomain
metadata: {name: cd}
spec:
  numNodes: 2
  channel: {resourceClaimTemplate: {name: cd-channel}}
"""


def pod(name, duration="30m", selector=None):
    sel = f"\n  nodeSelector: {{kubernetes.io/hostname: {selector}}}" if selector else ""
    return f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, annotations: {{gpusim.io/duration: {duration}}}}}
spec:
  restartPolicy: Never{sel}
  resourceClaims: [{{name: ch, resourceClaimTemplateName: cd-channel}}]
  containers: [{{name: c, image: x, resources: {{claims: [{{name: ch}}]}}}}]
"""


def sim(text):
    return Simulation(load(texts=[("cd.yaml", text)]))


def domain(s):
    return s.ctx.api.get("ComputeDomain", "default", "cd")


# --- the object -------------------------------------------------------------------------------------------------
def test_compute_domain_decodes_with_crd_defaults():
    sc = load(texts=[("cd.yaml", POOLS + DOMAIN)])
    (cd,) = sc.objects["ComputeDomain"]
    assert (cd.spec.num_nodes, cd.spec.channel.resource_claim_template.name, cd.spec.channel.allocation_mode,
            cd.status.status) == (2, "cd-channel", "Single", "NotReady")


@pytest.mark.parametrize("spec, field, message", [
    ("{channel: {resourceClaimTemplate: {name: t}}}", "spec.numNodes", "Required value"),
    ("{numNodes: 1}", "spec.channel", "Required value"),
    ("{numNodes: 1, channel: {}}", "spec.channel.resourceClaimTemplate", "Required value"),
    ("{numNodes: 1, channel: {resourceClaimTemplate: {}}}", "spec.channel.resourceClaimTemplate.name",
     "Required value"),
    ("{numNodes: 0, channel: {resourceClaimTemplate: {name: Bad_Name}}}", "spec.channel.resourceClaimTemplate.name",
     "lowercase RFC 1123 subdomain"),
    ("{numNodes: 0, channel: {resourceClaimTemplate: {name: t}, allocationMode: Some}}",
     "spec.channel.allocationMode", 'Unsupported value: "Some": supported values: "All", "Single"'),
    ("{numNodes: 0, channel: {resourceClaimTemplate: {name: t}}, nodes: 3}", "spec.nodes", "unknown field"),
])
def test_validation_names_file_object_and_field(spec, field, message):
    text = POOLS + f"---\napiVersion: resource.nvidia.com/v1beta1\nkind: ComputeDomain\nmetadata: {{name: cd}}\nspec: {spec}\n"
    with pytest.raises(InputError) as e:
        load(texts=[("cd.yaml", text)])
    msg = str(e.value)
    assert "cd.yaml" in msg and 'ComputeDomain "default/cd"' in msg and field in msg and message in msg, msg


def test_negative_num_nodes_is_accepted_as_the_crd_does():
    sc = load(texts=[("cd.yaml", POOLS + DOMAIN.replace("numNodes: 2", "numNodes: -1"))])
    assert sc.objects["ComputeDomain"][0].spec.num_nodes == -1


def test_gb200_needs_its_board():
    with pytest.raises(InputError, match="spec.gpu.topology: Required value: GB200 GPUs come only on"):
        load(texts=[("cd.yaml", POOLS.replace(", topology: gb200-nvl72", ""))])


# --- calculateGlobalStatus / getNextAvailableIndex --------------------------------------------------------------
def _cd(num_nodes, *statuses):
    cd = cdapi.ComputeDomain(spec=cdapi.ComputeDomainSpec(num_nodes=num_nodes))
    cd.status.nodes = [cdapi.ComputeDomainNode(name=f"n{i}", status=s) for i, s in enumerate(statuses)]
    return cd


@pytest.mark.parametrize("num_nodes, statuses, want", [
    # dims/dra-driver-nvidia-gpu (a fork of kubernetes-sigs/dra-driver-nvidia-gpu, NVIDIA/k8s-dra-driver-gpu's new
    # home) cmd/compute-domain-controller/computedomain_test.go at 0ff7de088f0ecd71ff70fd854be90521c67ae5c3,
    # TestCalculateGlobalStatusDriverManagedUnaffected: numNodes 8, no nodes
    (8, (), "NotReady"),
    # not expressible: TestCalculateGlobalStatusHostManaged (HostManagedIMEX is not modelled) and the
    # ControllerV1/PersistentAgent clique-protocol rows (the ComputeDomainCliques protocols are not modelled)
    (2, ("Ready",), "NotReady"),                 # fewer nodes than numNodes
    (2, ("Ready", "NotReady"), "NotReady"),      # one node not ready
    (2, ("Ready", "Ready"), "Ready"),
    (0, (), "Ready"),                            # numNodes 0: nothing to wait for
    (1, ("Ready", "Failed"), "Ready"),           # only NotReady counts against the domain
])
def test_calculate_global_status(num_nodes, statuses, want):
    assert calculate_global_status(_cd(num_nodes, *statuses)) == want


@pytest.mark.parametrize("mode", ["All", "Single"])
def test_channel_allocation_mode_for_passes_the_domains_mode_through(mode):
    """dims/dra-driver-nvidia-gpu cmd/compute-domain-controller/resourceclaimtemplate_test.go at
    0c019579b39a0a427028109e1c840c2437a49410, TestChannelAllocationModeFor: the two driver-managed rows ("passes
    through the ComputeDomain's AllocationMode unchanged (All)" / "(Single)"). Not expressible: the two host-managed
    rows (HostManagedIMEX, which forces Single, is not modelled)."""
    cd = _cd(0)
    cd.spec.channel = cdapi.ComputeDomainChannelSpec(allocation_mode=mode)
    assert channel_allocation_mode_for(cd) == mode


def test_next_available_index_fills_gaps_per_clique():
    nodes = [cdapi.ComputeDomainNode(name="a", clique_id="c.1", index=0),
             cdapi.ComputeDomainNode(name="b", clique_id="c.1", index=2),
             cdapi.ComputeDomainNode(name="c", clique_id="c.2", index=1)]
    assert next_available_index("c.1", nodes) == 1
    assert next_available_index("c.2", nodes) == 0
    assert next_available_index("c.3", nodes) == 0


# --- the controller ---------------------------------------------------------------------------------------------
def test_controller_creates_the_workload_and_daemon_templates():
    s = sim(POOLS + DOMAIN)
    s.ctx.env.run(until=1)
    cd = domain(s)
    assert cd.metadata.finalizers == ["resource.nvidia.com/computeDomain"]
    rct = s.ctx.api.get("ResourceClaimTemplate", "default", "cd-channel")
    assert rct.metadata.labels == {"resource.nvidia.com/computeDomain": cd.metadata.uid,
                                   "app.kubernetes.io/name": "nvidia-dra-driver-gpu",
                                   "resource.nvidia.com/computeDomainTarget": "Workload"}
    (req,) = rct.spec.spec.devices.requests
    assert (req.name, req.exactly.device_class_name) == ("channel", "compute-domain-default-channel.nvidia.com")
    assert rct.spec.spec.devices.config == [{"requests": ["channel"], "opaque": {
        "driver": "compute-domain.nvidia.com", "parameters": {
            "apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomainChannelConfig",
            "domainID": cd.metadata.uid, "allocationMode": "Single"}}}]
    (daemon,) = [t for t in s.ctx.api.list("ResourceClaimTemplate") if t.metadata.namespace == "nvidia-dra-driver-gpu"]
    assert daemon.metadata.name.startswith("cd-daemon-claim-template-")
    assert daemon.spec.spec.devices.requests[0].exactly.device_class_name == "compute-domain-daemon.nvidia.com"
    assert daemon.spec.spec.devices.config[0]["opaque"]["parameters"]["kind"] == "ComputeDomainDaemonConfig"
    # no workload yet: no node is labelled, so no daemon runs
    assert [p for p in s.ctx.api.list("Pod")] == []
    assert cd.status.status == "NotReady"


def test_kubelet_plugin_publishes_channel_and_daemon_on_clique_nodes_only():
    s = sim(POOLS + DOMAIN)
    s.ctx.env.run(until=1)
    slices = [sl for sl in s.ctx.api.list("ResourceSlice") if sl.spec.driver == "compute-domain.nvidia.com"]
    assert sorted(sl.spec.node_name for sl in slices) == ["gb-0", "gb-1"]
    assert [(d.name, {k: a.value() for k, a in d.attributes.items()}) for d in slices[0].spec.devices] == [
        ("channel-0", {"type": "channel", "id": 0}), ("daemon-0", {"type": "daemon", "id": 0})]
    classes = {dc.metadata.name: dc.spec.selectors[0].cel.expression for dc in s.ctx.api.list("DeviceClass")}
    assert classes["compute-domain-default-channel.nvidia.com"] == (
        "device.driver == 'compute-domain.nvidia.com' && device.attributes['compute-domain.nvidia.com'].type == "
        "'channel' && device.attributes['compute-domain.nvidia.com'].id == 0")
    assert classes["compute-domain-daemon.nvidia.com"].endswith(".type == 'daemon'")


def test_channel_waits_for_the_nodes_daemon_then_the_container_gets_it():
    s = sim(POOLS + DOMAIN + pod("w0") + pod("w1"))
    s.ctx.env.run(until=0.5)
    # both workers bound, ContainerCreating: prepare labelled their nodes and found no Ready daemon yet
    workers = {n: s.ctx.api.get("Pod", "default", n) for n in ("w0", "w1")}
    assert all(p.status.container_statuses[0].state.waiting.reason == "ContainerCreating" for p in workers.values())
    uid = domain(s).metadata.uid
    nodes = sorted(p.spec.node_name for p in workers.values())
    assert nodes == ["gb-0", "gb-1"]
    assert all(s.ctx.api.get("Node", "", n).metadata.labels["resource.nvidia.com/computeDomain"] == uid for n in nodes)
    msgs = [e.message for e in s.ctx.recorder.log if e.reason == "FailedPrepareDynamicResources"]
    assert msgs and msgs[0].startswith("Failed to prepare dynamic resources: prepare dynamic resources: "
                                       "NodePrepareResources failed for claim default/w")
    assert msgs[0].endswith("prepare devices failed: error applying config: error asserting ComputeDomain Ready: "
                            "current node not ready in ComputeDomain")
    # the daemons: one per labelled node, in the driver's namespace
    daemons = [p for p in s.ctx.api.list("Pod") if p.metadata.namespace == "nvidia-dra-driver-gpu"]
    assert sorted(p.spec.node_name for p in daemons) == nodes
    s.ctx.env.run(until=3)
    assert [(n.name, n.status) for n in domain(s).status.nodes] == [("gb-0", "NotReady"), ("gb-1", "NotReady")]
    assert domain(s).status.status == "NotReady"
    s.ctx.env.run(until=30)
    cd = domain(s)
    assert [(n.name, n.status, n.index) for n in sorted(cd.status.nodes, key=lambda n: n.name)] == [
        ("gb-0", "Ready", 0), ("gb-1", "Ready", 1)]
    assert {n.clique_id for n in cd.status.nodes} == {s.ctx.api.get("Node", "", "gb-0").metadata.labels[
        "nvidia.com/gpu.clique"]}
    assert cd.status.status == "Ready"
    assert all(p.status.phase == "Running" for p in workers.values())
    for w in workers.values():
        cdi = s.kubelets[w.spec.node_name].dra_cdi_devices[w.metadata.uid]["c"]
        claim = s.ctx.api.get("ResourceClaim", "default", w.status.resource_claim_statuses[0].resource_claim_name)
        assert cdi == [f"k8s.compute-domain.nvidia.com/claim={claim.metadata.uid}-channel-0"]
    r = s.run()
    rows = views.channel_paths(r, "cd")
    assert {(x["pod"], x["device"], tuple(x["deviceNodes"])) for x in rows} == {
        ("w0", "channel-0", ("/dev/nvidia-caps-imex-channels/channel0",)),
        ("w1", "channel-0", ("/dev/nvidia-caps-imex-channels/channel0",))}


def test_node_without_clique_gets_no_channel():
    s = sim(POOLS + DOMAIN + pod("stray", selector="h100-0"))
    s.ctx.env.run(until=30)
    p = s.ctx.api.get("Pod", "default", "stray")
    assert p.status.phase == "Pending" and not p.spec.node_name
    msg = [e.message for e in s.ctx.recorder.log if e.reason == "FailedScheduling"][0]
    assert msg.startswith("0/3 nodes are available: 1 cannot allocate all claims, 2 node(s) didn't match Pod's "
                          "node affinity/selector.")


def test_allocation_mode_all_injects_every_channel():
    s = sim(POOLS + DOMAIN.replace("{resourceClaimTemplate: {name: cd-channel}}",
                                   "{resourceClaimTemplate: {name: cd-channel}, allocationMode: All}") + pod("w0"))
    r = s.run()
    (row,) = views.channel_paths(r, "cd")
    assert row["device"] == "channel-0" and len(row["cdiDeviceIDs"]) == 1
    assert len(row["deviceNodes"]) == 2048 and row["deviceNodes"][-1] == "/dev/nvidia-caps-imex-channels/channel2047"
    assert "/dev/nvidia-caps-imex-channels/channel0 … channel2047 (2048)" in views.channel_path_table(r, "cd")


def test_one_channel_per_node_a_third_worker_waits():
    """Single mode: channel-0 is the node's one default channel, so two trays serve two pods."""
    s = sim(POOLS + DOMAIN + pod("w0") + pod("w1") + pod("w2"))
    s.ctx.env.run(until=30)
    phases = {n: s.ctx.api.get("Pod", "default", n).status.phase for n in ("w0", "w1", "w2")}
    assert sorted(phases.values()) == ["Pending", "Running", "Running"]


def test_workers_done_daemons_go_and_the_domain_drops_its_nodes():
    s = sim(POOLS + DOMAIN + pod("w0", "10m") + pod("w1", "10m"))
    r = s.run()
    cd = r.api.get("ComputeDomain", "default", "cd")
    assert not any("resource.nvidia.com/computeDomain" in n.metadata.labels for n in r.api.list("Node"))
    assert [p for p in r.api.list("Pod") if p.metadata.namespace == "nvidia-dra-driver-gpu"] == []
    assert cd.status.nodes == [] and cd.status.status == "NotReady"
    steps = [f for _, f, _ in views.domain_timeline(r, "cd")]
    assert steps.count("(*DaemonSetPodManager).onPodDelete") == 2


def test_deleting_the_domain_deletes_its_templates_and_daemons():
    s = sim(POOLS + DOMAIN + pod("w0", "1h"))
    s.ctx.env.run(until=30)
    assert len([p for p in s.ctx.api.list("Pod") if p.metadata.namespace == "nvidia-dra-driver-gpu"]) == 1
    s.ctx.api.delete(domain(s))
    s.ctx.env.run(until=31)
    assert s.ctx.api.list("ResourceClaimTemplate") == []
    assert [p for p in s.ctx.api.list("Pod") if p.metadata.namespace == "nvidia-dra-driver-gpu"] == []


def test_example_and_views():
    r = run(EXAMPLE, until="30m")
    assert views.get_computedomains(r) == "NAME       AGE\ntrain-cd   30m"
    text = views.describe_computedomain(r, "train-cd")
    assert "  Num Nodes:  4" in text and text.count("    Status:      Ready") == 4 and "  Status:  Ready" in text
    assert len(views.channel_paths(r, "train-cd")) == 4
    assert {p.metadata.name: p.status.phase for p in r.pods()} == {
        "stray": "Pending", "worker-0": "Running", "worker-1": "Running", "worker-2": "Running",
        "worker-3": "Running"}
    with pytest.raises(KeyError, match='computedomains.resource.nvidia.com "nope" not found'):
        views.describe_computedomain(r, "nope")


def test_example_is_deterministic():
    def trace():
        r = run(EXAMPLE, until="10m")
        return views.domain_timeline(r, "train-cd")
    assert trace() == trace()


# --- the kubelet plugin's Prepare, one claim at a time ------------------------------------------------------------
def _plugin_world(node_labels=None, node_status=None, cd_ns="default"):
    import random

    import simpy

    from gpusim.api.core_v1 import Node
    from gpusim.api.meta import ObjectMeta
    from gpusim.controlplane.apiserver import APIServer
    from gpusim.node.computedomain import ComputeDomainKubeletPlugin

    api = APIServer(simpy.Environment(), random.Random(1))
    api.create(Node(metadata=ObjectMeta(name="gb-0", labels=dict(node_labels or {}))))
    cd = cdapi.ComputeDomain(metadata=ObjectMeta(name="cd", namespace=cd_ns),
                             spec=cdapi.ComputeDomainSpec(num_nodes=1, channel=cdapi.ComputeDomainChannelSpec()))
    api.create(cd)
    if node_status:
        cd.status.nodes = [cdapi.ComputeDomainNode(name="gb-0", status=node_status)]
    return api, cd, ComputeDomainKubeletPlugin(api, "gb-0", "uuid.32766")


def _channel_claim(domain_uid, ns="default", kind="ComputeDomainChannelConfig"):
    from gpusim.api.meta import ObjectMeta
    from gpusim.api.resource_k8s_io_v1 import (AllocationResult, DeviceAllocationResult, DeviceClaim,
                                               DeviceRequestAllocationResult, ResourceClaim, ResourceClaimSpec)
    claim = ResourceClaim(metadata=ObjectMeta(name="c", namespace=ns, uid="claim-uid"), spec=ResourceClaimSpec(
        devices=DeviceClaim(config=[{"requests": ["channel"], "opaque": {
            "driver": "compute-domain.nvidia.com", "parameters": cdapi.channel_config(domain_uid, kind)}}])))
    claim.status.allocation = AllocationResult(devices=DeviceAllocationResult(results=[
        DeviceRequestAllocationResult("channel", "compute-domain.nvidia.com", "gb-0", "channel-0")]))
    return claim


PREFIX = "error preparing devices for claim claim-uid: prepare devices failed: "


@pytest.mark.parametrize("case, labels, status, cd_ns, permanent, message", [
    ("not ready yet", {}, None, "default", False,
     "error applying config: error asserting ComputeDomain Ready: current node not ready in ComputeDomain"),
    ("daemon failed", {}, "Failed", "default", False,
     "error applying config: error asserting ComputeDomain Ready: current node failed in ComputeDomain"),
    ("node serves another domain", {"resource.nvidia.com/computeDomain": "other"}, "Ready", "default", False,
     "error applying config: error adding Node label for ComputeDomain: label already exists for a different "
     "ComputeDomain"),
    ("claim in another namespace", {}, "Ready", "team-b", True,
     "error applying config: error asserting ComputeDomain's namespace: the ResourceClaim's namespace is different "
     "than the ComputeDomain's namespace"),
])
def test_prepare_channel_errors(case, labels, status, cd_ns, permanent, message):
    from gpusim.node.computedomain import PrepareError
    api, cd, plugin = _plugin_world(labels, status, cd_ns)
    with pytest.raises(PrepareError) as e:
        plugin.node_prepare_resources([_channel_claim(cd.metadata.uid)])
    assert str(e.value) == PREFIX + message and e.value.permanent == permanent
    assert plugin.prepared == {}


def test_prepare_channel_ready_labels_the_node_and_unprepare_removes_the_label():
    api, cd, plugin = _plugin_world(node_status="Ready")
    (dev,) = plugin.node_prepare_resources([_channel_claim(cd.metadata.uid)])["claim-uid"]
    assert dev.cdi_device_ids == ("k8s.compute-domain.nvidia.com/claim=claim-uid-channel-0",)
    assert dev.device_nodes == ("/dev/nvidia-caps-imex-channels/channel0",)
    assert api.get("Node", "", "gb-0").metadata.labels["resource.nvidia.com/computeDomain"] == cd.metadata.uid
    plugin.node_unprepare_resources(["claim-uid"])
    assert "resource.nvidia.com/computeDomain" not in api.get("Node", "", "gb-0").metadata.labels


def test_prepare_rejects_a_config_of_another_kind():
    from gpusim.node.computedomain import PrepareError
    api, cd, plugin = _plugin_world(node_status="Ready")
    with pytest.raises(PrepareError, match="runtime object is not a recognized configuration") as e:
        plugin.node_prepare_resources([_channel_claim(cd.metadata.uid, kind="GpuConfig")])
    assert e.value.permanent


def test_cli_describe_computedomain_and_driver_namespace_pods(capsys):
    from gpusim.cli import main
    assert main(["describe", "computedomain", "train-cd", "-f", EXAMPLE, "--until", "30m"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Name:         train-cd\nNamespace:    default\n") and "  Status:  Ready" in out
    assert main(["describe", "computedomain", "nope", "-f", EXAMPLE]) == 1
    assert 'computedomains.resource.nvidia.com "nope" not found' in capsys.readouterr().err
    assert main(["run", EXAMPLE, "-n", "nvidia-dra-driver-gpu", "--until", "30m"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 5 and all(line.startswith("computedomain-daemon-") and " Running " in line
                                   for line in lines[1:])


def test_device_plugin_gpus_with_a_dra_channel():
    """The driver installed for ComputeDomains only (resources.gpus.enabled=false): GPUs from NVIDIA's device
    plugin (``nvidia.com/gpu`` limits), the IMEX channel from the compute-domain kubelet plugin."""
    pools = POOLS.replace("topology: gb200-nvl72, allocation: dra}", "topology: gb200-nvl72}")
    worker = pod("w0").replace("containers: [{name: c, image: x, resources: {claims: [{name: ch}]}}]",
                               "containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 4}, "
                               "claims: [{name: ch}]}}]")
    s = sim(pools + DOMAIN + worker)
    s.ctx.env.run(until=30)
    p = s.ctx.api.get("Pod", "default", "w0")
    assert p.status.phase == "Running" and p.spec.node_name.startswith("gb-")
    assert sorted(kl for kl, k in s.kubelets.items() if "compute-domain.nvidia.com" in k.dra_plugins) == ["gb-0", "gb-1"]
    assert "gpu.nvidia.com" not in s.kubelets["gb-0"].dra_plugins
    classes = {dc.metadata.name for dc in s.ctx.api.list("DeviceClass")}
    assert classes == {"compute-domain-default-channel.nvidia.com", "compute-domain-daemon.nvidia.com",
                       "gpu.nvidia.com", "mig.nvidia.com"}   # the H100 pool is still a DRA pool
    (row,) = views.channel_paths(s.run(), "cd")
    assert row["pod"] == "w0" and row["deviceNodes"] == ["/dev/nvidia-caps-imex-channels/channel0"]
