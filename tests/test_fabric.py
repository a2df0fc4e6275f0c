"""gpusim.hardware.fabric: rail-optimized and tree fabrics, the tier a flow crosses, fair shares under
oversubscription and load, node labels, and the spec of the proposed ``Fabric`` kind."""
from __future__ import annotations

import pytest

from gpusim.hardware import fabric as f
from gpusim.hardware import topology as t

H100 = t.server_graph("dgx-h100")


def servers(n: int, board=H100, prefix: str = "n"):
    return [(f"{prefix}{i}", board) for i in range(n)]


# DGX SuperPOD H100 reference architecture, compute fabric table (topology.md §2.1): SUs → leaf, spine, and
# leaf-spine cables (256 per SU: non-blocking). A full SU here holds 32 nodes (the RA gives one position to UFM).
@pytest.mark.parametrize("sus, leaves, spines, leaf_spine_cables", [(1, 8, 4, 256), (2, 16, 8, 512),
                                                                     (3, 24, 16, 768), (4, 32, 16, 1024)])
def test_superpod_table(sus, leaves, spines, leaf_spine_cables):
    fab = f.build_fabric(servers(32 * sus))
    s = fab.summary()
    assert (s["leaves"], s["spines"], s["cores"]) == (leaves, spines, 0)
    g = fab.graph
    up = sum(d["links"] for a, b, d in g.edges(data=True) if {g.nodes[a]["kind"], g.nodes[b]["kind"]} == {"leaf", "spine"})
    down = sum(1 for a, b, d in g.edges(data=True) if "nic" in (g.nodes[a]["kind"], g.nodes[b]["kind"]))
    assert up == leaf_spine_cables == down                      # down-links = up-links: 1:1


def test_rail_r_of_every_node_goes_to_leaf_r_of_its_su():
    fab = f.build_fabric(servers(8), f.FabricSpec(scalable_unit=4))
    assert fab.leaf_of("n1", 3) == "su0-rail3" and fab.leaf_of("n5", 3) == "su1-rail3"
    assert fab.rails["n0"] == list(range(8)) and fab.nic_speed["n0"] == 400


@pytest.mark.parametrize("a, b, tier, aligned", [
    (("n0", 0), ("n0", 3), "local", False),
    (("n0", 2), ("n3", 2), "leaf", True),          # same SU, same rail: one hop
    (("n0", 2), ("n3", 5), "spine", False),        # same SU, other rail
    (("n0", 2), ("n4", 2), "spine", True),         # other SU
])
def test_rail_optimized_crossing(a, b, tier, aligned):
    fab = f.build_fabric(servers(8), f.FabricSpec(scalable_unit=4))
    c = fab.crossing(*a, *b)
    assert (c.tier, c.rail_aligned) == (tier, aligned)
    assert c.crosses_up == (tier in ("spine", "core"))
    assert c.flow_share == 1.0                      # idle, non-blocking: only latency


@pytest.mark.parametrize("a, b, tier, switches", [
    ("n0", "n1", "leaf", ("leaf0",)),
    ("n0", "n2", "spine", ("leaf0", "spine0", "leaf1")),
    ("n0", "n5", "core", ("leaf0", "spine0", "core", "spine1", "leaf2")),
])
def test_tree_crossing(a, b, tier, switches):
    fab = f.build_fabric(servers(8), f.FabricSpec(type="Tree", nodes_per_leaf=2, leaves_per_spine=2))
    c = fab.crossing(a, 0, b, 0)
    assert (c.tier, c.switches) == (tier, switches)


@pytest.mark.parametrize("o, load, share", [
    (1, 0.0, 1.0), (2, 0.0, 1.0),                  # idle: one flow is never limited
    (2, 1.0, 0.5),                                 # loaded 2:1 fabric: 1/o (topology.md §3.3)
    (3, 1.0, 1 / 3),
    (2, 0.5, 4 / (2 * (1 + 0.5 * 3))),             # partial load: min(1, ports / (o · flows))
])
def test_single_flow_share(o, load, share):
    fab = f.build_fabric(servers(8), f.FabricSpec(scalable_unit=4, oversubscription=o, load=load))
    assert fab.crossing("n0", 0, "n4", 0).flow_share == pytest.approx(share)
    assert fab.crossing("n0", 0, "n1", 0).flow_share == 1.0       # rail-aligned inside the SU: never shared


def test_job_flows_share_the_uplinks():
    # 4 flows leave su0-rail0 towards su1; ports 4, o = 2: uplink carries 2 flows at full rate, 4 get half each.
    fab = f.build_fabric(servers(8), f.FabricSpec(scalable_unit=4, oversubscription=2))
    flows = [(("n0", 0), ("n4", 0)), (("n1", 0), ("n5", 0)), (("n2", 0), ("n6", 0)), (("n3", 0), ("n7", 0))]
    assert fab.flow_shares(flows) == [0.5] * 4
    assert fab.flow_shares(flows[:2]) == [1.0, 1.0]
    leaf_local = [(("n0", 0), ("n1", 0))] * 4
    assert fab.flow_shares(leaf_local) == [1.0] * 4


@pytest.mark.parametrize("style, keys", [
    ("topograph", {"network.topology.nvidia.com/leaf", "network.topology.nvidia.com/spine",
                   "network.topology.nvidia.com/core"}),
    ("aws", {"topology.k8s.aws/network-node-layer-1", "topology.k8s.aws/network-node-layer-2",
             "topology.k8s.aws/network-node-layer-3"}),
    ("gcp", {"cloud.google.com/gce-topology-block", "cloud.google.com/gce-topology-subblock",
             "cloud.google.com/gce-topology-host"}),
    ("oci", {"oci.oraclecloud.com/host.network_block_id", "oci.oraclecloud.com/host.rack_id"}),
    ("kueue", {"cloud.provider.com/topology-block", "cloud.provider.com/topology-rack"}),
    ("volcano", {"volcano.sh/hypercluster", "volcano.sh/hypernode", "volcano.sh/tor"}),
    ("none", set()),
])
def test_label_styles(style, keys):
    fab = f.build_fabric(servers(8), f.FabricSpec(type="Tree", nodes_per_leaf=2, leaves_per_spine=2, labels=style))
    labels = fab.node_labels()
    assert set(labels["n0"]) == keys
    if keys:
        def shared(n):   # the host label (GKE) names the node itself
            return {k: v for k, v in labels[n].items() if not k.endswith("gce-topology-host")}
        assert shared("n0") == shared("n1") != shared("n2")     # same rack, different rack
    assert f.build_fabric(servers(8), fab.spec).node_labels() == labels   # deterministic


def test_kueue_rack_values_restart_in_every_block_and_aws_values_look_like_aws():
    fab = f.build_fabric(servers(8), f.FabricSpec(type="Tree", nodes_per_leaf=2, leaves_per_spine=2))
    kq = fab.node_labels("kueue")
    pairs = [(kq[n]["cloud.provider.com/topology-block"], kq[n]["cloud.provider.com/topology-rack"])
             for n in ("n0", "n2", "n4", "n6")]
    assert pairs == [("b1", "r1"), ("b1", "r2"), ("b2", "r1"), ("b2", "r2")]
    aws = fab.node_labels("aws")["n0"]
    assert all(v.startswith("nn-") and len(v) == 20 for v in aws.values())
    assert aws["topology.k8s.aws/network-node-layer-1"] == fab.node_labels("aws")["n7"]["topology.k8s.aws/network-node-layer-1"]


def test_rail_optimized_leaf_label_names_the_scalable_unit():
    fab = f.build_fabric(servers(8), f.FabricSpec(scalable_unit=4))
    labels = fab.node_labels()
    assert labels["n0"]["network.topology.nvidia.com/leaf"] == labels["n3"]["network.topology.nvidia.com/leaf"] == "su0"
    assert labels["n4"]["network.topology.nvidia.com/leaf"] == "su1"


def test_default_fabric_is_idle_non_blocking_rail_optimized_with_the_boards_nics():
    a100 = t.server_graph("dgx-a100")
    fab = f.default_fabric(servers(2) + servers(2, a100, "a"))
    assert (fab.spec.type, fab.spec.oversubscription, fab.spec.load) == ("RailOptimized", 1.0, 0.0)
    assert fab.nic_speed == {"n0": 400, "n1": 400, "a0": 200, "a1": 200}   # NDR on DGX H100, HDR on DGX A100
    assert all(len(r) == 8 for r in fab.rails.values())


def test_nvlink_domain_members_do_not_cross_the_fabric():
    trays = [(f"gb{i}", t.server_graph("gb200-nvl72", rack="r1" if i < 2 else "r2", tray=i % 2)) for i in range(4)]
    fab = f.build_fabric(trays, f.FabricSpec(scalable_unit=2))
    assert fab.crossing("gb0", 0, "gb1", 0).tier == "nvlink"
    assert fab.crossing("gb1", 0, "gb2", 0).tier == "spine"


@pytest.mark.parametrize("spec, message", [
    ({"type": "Clos"}, "spec.type: must be one of RailOptimized, Tree"),
    ({"oversubscription": 0.5}, "spec.oversubscription: must be a number >= 1"),
    ({"load": 1.5}, r"spec.load: must be a number in \[0, 1\]"),
    ({"nicSpeed": "300G"}, "spec.nicSpeed: must be one of 100G, 200G, 400G, 800G"),
    ({"nicSpeed": "fast"}, "spec.nicSpeed: must be a NIC speed such as 400G"),
    ({"scalableUnit": 0}, "spec.scalableUnit: must be a positive integer"),
    ({"spines": -1}, "spec.spines: must be a positive integer"),
    ({"labels": "azure"}, "spec.labels: must be one of topograph"),
    ({"nodePools": "h100"}, "spec.nodePools: must be a list of NodePool names"),
    ({"racks": 4}, 'spec.racks: unknown field "racks"'),
    ({"type": "Tree", "scalableUnit": 8}, "spec.scalableUnit: only for type RailOptimized"),
    ({"nodesPerLeaf": 8}, "spec.nodesPerLeaf: only for type Tree"),
    ({"type": "Tree", "leavesPerSpine": 0}, "spec.leavesPerSpine: must be a positive integer"),
])
def test_spec_errors_name_the_field(spec, message):
    with pytest.raises(ValueError, match=message):
        f.spec_from_dict(spec)


def test_spec_from_dict():
    spec = f.spec_from_dict({"type": "RailOptimized", "nodePools": ["h100"], "nicSpeed": "200G", "scalableUnit": 16,
                             "oversubscription": 2, "load": 0.25, "labels": "aws"})
    assert spec == f.FabricSpec(nic_speed=200, scalable_unit=16, oversubscription=2, load=0.25, labels="aws",
                                node_pools=("h100",))
    assert f.spec_from_dict({}) == f.FabricSpec()
    fab = f.fabric_from_dict({"nicSpeed": "200G"}, servers(2))
    assert fab.nic_speed == {"n0": 200, "n1": 200}


def test_a_node_without_compute_nics_cannot_attach():
    with pytest.raises(ValueError, match='node "p0": board pcie-l40s has no compute NIC'):
        f.build_fabric([("p0", t.server_graph("pcie-l40s", nics_per_socket=0))])
