"""Topology in the scenario contract: NodePool ``spec.gpu.topology`` boards, the ``Fabric`` kind and its node
labels, ``spec.kubelet`` (KubeletConfiguration's topology fields), NodeResourceTopology documents, and the
errors each gives (file, document, object, field)."""
from __future__ import annotations

import pytest

from gpusim.api.errors import InputError
from gpusim.cluster.scenario import load
from gpusim.hardware import topology as hw

FILE = "cluster/topo.yaml"


def pool(name: str, gpu: str, extra: str = "", count: int = 2) -> str:
    return f"""apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {{name: {name}}}
spec:
  count: {count}
  gpu: {gpu}
{extra}"""


def fabric(spec: str, name: str = "compute") -> str:
    return f"""apiVersion: gpusim.io/v1alpha1
kind: Fabric
metadata: {{name: {name}}}
spec: {spec}
"""


def docs(*parts: str) -> str:
    return "---\n".join(parts)


def error(text: str) -> str:
    with pytest.raises(InputError) as exc:
        load(texts=[(FILE, text)])
    return str(exc.value)


H100 = pool("h100", "{model: H100-SXM5-80GB, count: 8}")
A100 = pool("a100", "{model: A100-SXM4-80GB, count: 8}")


# --- boards ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("gpu, board", [
    ("{model: H100-SXM5-80GB, count: 8}", "dgx-h100"),
    ("{model: H200-141GB, count: 8}", "hgx-h200"),
    ("{model: A100-SXM4-40GB, count: 8}", "dgx-a100"),
    ("{model: V100-SXM2-32GB, count: 8}", "dgx-1v"),
    ("{model: L40S, count: 8}", "pcie-l40s"),
    ("{model: A100-SXM4-80GB, count: 4}", "pcie"),        # not the 8-GPU SXM shape: the documented default
    ("{model: T4, count: 4}", "pcie"),
    ("{model: H100-SXM5-80GB, count: 8, topology: hgx-h200}", "hgx-h200"),
    ("{model: H200-141GB, count: 8, topology: dgx-h100}", "dgx-h100"),
])
def test_pool_board_default_and_choice(gpu, board):
    sc = load(texts=[(FILE, pool("p", gpu))])
    assert [sc.boards[f"p-{i}"][0] for i in range(2)] == [board, board]
    g = sc.board_graphs[sc.boards["p-0"]]
    assert len(hw.gpus(g)) == int(gpu.split("count: ")[1].split(",")[0].rstrip("}"))


def test_topology_options_reach_the_board():
    sc = load(texts=[(FILE, pool("a", "{model: A100-SXM4-80GB, count: 8, topologyOptions: {nps: 1}}"))])
    assert hw.numa_nodes(sc.board_graphs[sc.boards["a-0"]]) == [0, 1]
    sc = load(texts=[(FILE, A100)])
    assert hw.numa_nodes(sc.board_graphs[sc.boards["a100-0"]]) == list(range(8))      # NPS4: the observed default


def test_plain_node_gets_the_default_board_and_vgpu_vm_none():
    node = """apiVersion: v1
kind: Node
metadata: {name: gpu-7, labels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}
status: {capacity: {nvidia.com/gpu: "8", cpu: "224", memory: 2Ti}, allocatable: {nvidia.com/gpu: "8"}}
"""
    vm = pool("vm", "{model: A100-SXM4-80GB, count: 1, vgpu: {type: A100D-10C}}", count=1)
    sc = load(texts=[(FILE, docs(node, vm))])
    assert sc.boards["gpu-7"][0] == "dgx-h100"
    assert "vm-0" not in sc.boards


@pytest.mark.parametrize("gpu, path, parts", [
    ("{model: H100-SXM5-80GB, count: 8, topology: dgx-b300}", "spec.gpu.topology",
     ['Invalid value: "dgx-b300"', 'unknown server topology "dgx-b300"', "dgx-h100"]),
    ("{model: L40S, count: 8, topology: dgx-h100}", "spec.gpu.model",
     ['Invalid value: "L40S"', 'board "dgx-h100" carries H100-SXM5-80GB or H200-141GB GPUs, not L40S']),
    ("{model: H100-SXM5-80GB, count: 4, topology: dgx-h100}", "spec.gpu.count",
     ['Invalid value: "4"', 'board "dgx-h100" has 8 GPUs, the pool asks for 4']),
    ("{model: A100-SXM4-80GB, count: 8, topologyOptions: {nps: 2}}", "spec.gpu.topologyOptions",
     ["dgx-a100: nps must be 1 or 4, got 2"]),
    ("{model: A100-SXM4-80GB, count: 8, topologyOptions: {numa: 2}}", "spec.gpu.topologyOptions",
     ['unknown option "numa" for board "dgx-a100" (known: nps)']),
    ("{model: A100-SXM4-80GB, count: 1, vgpu: {type: A100D-10C}, topology: pcie}", "spec.gpu.topology",
     ["Forbidden: a vGPU VM sees no server board"]),
])
def test_bad_board_names_the_field(gpu, path, parts):
    msg = error(pool("p", gpu))
    assert msg.startswith(f"error: {FILE}, document 1: NodePool \"p\" is invalid: {path}: "), msg
    for part in parts:
        assert part in msg, msg


def test_gb200_trays_fill_racks_and_share_a_clique():
    """node_board_params puts 18 trays in a rack; GFD's nvidia.com/gpu.clique is the rack's NVLink domain
    (ClusterUUID.CliqueID), so trays 0-17 share one value and tray 18 starts another."""
    labels = [hw.node_labels(hw.server_graph("gb200-nvl72", **hw.node_board_params("gb200-nvl72", {}, i)))
              for i in (0, 17, 18)]
    assert labels[0] == labels[1] != labels[2]
    cluster, clique = labels[0][hw.CLIQUE_LABEL].rsplit(".", 1)
    assert clique == str(hw.DEFAULT_CLIQUE_ID) and len(cluster) == 36
    assert hw.node_labels(hw.server_graph("dgx-h100")) == {}


# --- the Fabric kind ---------------------------------------------------------------------------------------------
def test_default_fabric_attaches_every_gpu_node_and_writes_no_labels():
    sc = load(texts=[(FILE, docs(H100, pool("t4", "{model: T4, count: 4}", count=1)))])
    assert sc.fabric is None and sc.fabric_spec.labels == "none"
    assert sc.fabric_nodes == ["h100-0", "h100-1", "t4-0"]
    assert not any(k.startswith("network.topology.nvidia.com/") for n in sc.nodes for k in n.metadata.labels)


@pytest.mark.parametrize("style, keys", [
    ("topograph", {"network.topology.nvidia.com/leaf", "network.topology.nvidia.com/spine"}),
    ("kueue", {"cloud.provider.com/topology-block", "cloud.provider.com/topology-rack"}),
    ("aws", {f"topology.k8s.aws/network-node-layer-{i}" for i in (1, 2, 3)}),
    ("volcano", {"volcano.sh/hypercluster", "volcano.sh/hypernode", "volcano.sh/tor"}),
])
def test_fabric_writes_its_labels_on_the_attached_nodes(style, keys):
    sc = load(texts=[(FILE, docs(H100, A100, fabric(f"{{nodePools: [h100], labels: {style}}}")))])
    assert sc.fabric_nodes == ["h100-0", "h100-1"]
    by = {n.metadata.name: n.metadata.labels for n in sc.nodes}
    assert keys <= set(by["h100-0"]) and not keys & set(by["a100-0"])


def test_tree_fabric_puts_racks_in_leaves():
    sc = load(texts=[(FILE, docs(pool("h", "{model: H100-SXM5-80GB, count: 8}", count=3),
                                 fabric("{type: Tree, nodesPerLeaf: 2, labels: kueue}")))])
    racks = [n.metadata.labels["cloud.provider.com/topology-rack"] for n in sc.nodes]
    assert racks == ["r1", "r1", "r2"]


@pytest.mark.parametrize("spec, path, parts", [
    ("{type: Mesh}", "spec.type", ["must be one of RailOptimized, Tree, got 'Mesh'"]),
    ("{oversubscription: 0.5}", "spec.oversubscription", ["must be a number >= 1"]),
    ("{load: 2}", "spec.load", ["must be a number in [0, 1]"]),
    ("{nicSpeed: 300G}", "spec.nicSpeed", ["must be one of 100G, 200G, 400G, 800G"]),
    ("{labels: azure}", "spec.labels", ["must be one of topograph, aws"]),
    ("{nodesPerLeaf: 4}", "spec.nodesPerLeaf", ["only for type Tree"]),
    ("{type: Tree, scalableUnit: 16}", "spec.scalableUnit", ["only for type RailOptimized"]),
    ("{nodePools: [b200]}", "spec.nodePools[0]", ['Not found: "b200": no such NodePool']),
])
def test_bad_fabric_names_the_field(spec, path, parts):
    msg = error(docs(H100, fabric(spec)))
    assert msg.startswith(f"error: {FILE}, document 2: Fabric \"compute\" is invalid: {path}: "), msg
    for part in parts:
        assert part in msg, msg


def test_fabric_unknown_field_and_at_most_one():
    assert 'unknown field "spec.leaves"' in error(docs(H100, fabric("{leaves: 2}")))
    msg = error(docs(H100, fabric("{}"), fabric("{}", "other")))
    assert "at most one Fabric object is allowed" in msg and "document 3" in msg


def test_fabric_node_pool_without_gpus_is_an_error():
    cpu = """apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: cpu}
spec: {count: 1}
"""
    msg = error(docs(H100, cpu, fabric("{nodePools: [cpu]}")))
    assert 'spec.nodePools[0]: Invalid value: "cpu": the pool has no GPU node with a compute NIC' in msg


# --- spec.kubelet ------------------------------------------------------------------------------------------------
# kubernetes pkg/kubelet/apis/config/validation/validation_test.go (v1.36) TestValidateKubeletConfiguration rows
# "invalid TopologyManagerPolicy" and "invalid TopologyManagerScope"; the options and NUMA-limit rows are
# topologymanager NewManager's (policy_options.go, topology_manager.go).
@pytest.mark.parametrize("kubelet, path, message", [
    ("{topologyManagerPolicy: invalid-policy}", "spec.kubelet.topologyManagerPolicy",
     'invalid configuration: topologyManagerPolicy (--topology-manager-policy) "invalid-policy" must be one of: '
     '["none" "best-effort" "restricted" "single-numa-node"]'),
    ("{topologyManagerScope: invalid-scope}", "spec.kubelet.topologyManagerScope",
     'invalid configuration: topologyManagerScope (--topology-manager-scope) "invalid-scope" must be one of: '
     '"container", or "pod"'),
    ("{topologyManagerPolicy: restricted, topologyManagerPolicyOptions: {prefer-closest: 'true'}}",
     "spec.kubelet.topologyManagerPolicyOptions", 'unknown Topology Manager Policy option: "prefer-closest"'),
    ("{topologyManagerPolicy: restricted, topologyManagerPolicyOptions: {max-allowable-numa-nodes: '4'}}",
     "spec.kubelet.topologyManagerPolicyOptions",
     'the minimum value of "max-allowable-numa-nodes" should not be less than 8'),
    ("{cpuManagerPolicy: static}", "spec.kubelet.cpuManagerPolicy", 'Unsupported value: "static"'),
    ("{cpuManagerPolicy: dynamic}", "spec.kubelet.cpuManagerPolicy", 'unknown policy: "dynamic"'),
])
def test_bad_kubelet_config_names_the_field(kubelet, path, message):
    msg = error(pool("a100", "{model: A100-SXM4-80GB, count: 8}", f"  kubelet: {kubelet}\n"))
    assert f'NodePool "a100" is invalid: {path}: {message}' in msg, msg


def test_kubelet_config_recorded_per_node():
    sc = load(texts=[(FILE, pool("a100", "{model: A100-SXM4-80GB, count: 8}",
                                 "  kubelet: {topologyManagerPolicy: single-numa-node, topologyManagerScope: pod}\n"))])
    assert sc.kubelet_configs["a100-1"]["topologyManagerPolicy"] == "single-numa-node"
    assert sc.kubelet_configs["a100-1"]["topologyManagerScope"] == "pod"
    assert load(texts=[(FILE, A100)]).kubelet_configs == {}


# --- NodeResourceTopology documents ------------------------------------------------------------------------------
def nrt(name: str, available: str = '"4"') -> str:
    return f"""apiVersion: topology.node.k8s.io/v1alpha2
kind: NodeResourceTopology
metadata: {{name: {name}}}
topologyPolicies: [SingleNUMANodeContainerLevel]
zones:
- name: node-0
  type: Node
  resources: [{{name: nvidia.com/gpu, capacity: "4", allocatable: "4", available: {available}}}]
"""


def test_nrt_documents_load_and_are_checked():
    sc = load(texts=[(FILE, docs(H100, nrt("h100-0")))])
    assert [o.metadata.name for o in sc.objects["NodeResourceTopology"]] == ["h100-0"]
    msg = error(docs(H100, nrt("h100-9")))
    assert 'NodeResourceTopology "h100-9" is invalid: metadata.name: Not found: "h100-9"' in msg
    msg = error(docs(H100, nrt("h100-0", '"four"')))
    assert "zones[0].resources[0].available: Invalid value" in msg
    assert 'unknown field "zones[0].size"' in error(docs(H100, nrt("h100-0").replace("type: Node", "type: Node\n  size: 1")))


def test_nrt_plugin_args_are_checked_at_load_time():
    cfg = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins: {multiPoint: {enabled: [{name: NodeResourceTopologyMatch}]}}
  pluginConfig:
  - name: NodeResourceTopologyMatch
    args: {scoringStrategy: {type: Fewest}}
"""
    msg = error(docs(cfg, H100))
    assert "document 1: KubeSchedulerConfiguration" in msg
    assert 'profiles[0].pluginConfig[0].args.scoringStrategy.type: Invalid value: "Fewest": invalid ScoringStrategyType' in msg
