"""NodeResourceTopology: the ``topology.node.k8s.io/v1alpha2`` API, scheduler-plugins'
NodeResourceTopologyMatch (Filter, Score strategies, args), and what NFD's topology-updater publishes.

Rows ported from:
- kubernetes-sigs/scheduler-plugins ``pkg/noderesourcetopology/filter_test.go`` @ 4f943be4eb97:
  TestNodeResourceTopology, TestNodeResourceTopologyMultiContainerPodScope,
  TestNodeResourceTopologyMultiContainerContainerScope.
- ``score_test.go`` @ 045a43d18473: TestNodeResourceScorePlugin, TestNodeResourceScorePluginLeastNUMA,
  TestNodeResourcePartialDataScorePlugin (fixtures defaultNUMANodes, fourNUMANodes).
- ``least_numa_test.go`` @ 23e7ea896720: TestNUMANodesRequired, TestNormalizeScore, TestMinDistance.
- k8stopologyawareschedwg/noderesourcetopology-api ``pkg/apis/topology/v1alpha2/helper/numanode/numanode_test.go``
  @ 97d6d87966d8: TestNameToID, TestIDToName.
"""
from __future__ import annotations

import random
from fractions import Fraction

import pytest
import simpy

from gpusim.api.core_v1 import Container, Node, NodeStatus, Pod, PodSpec, ResourceRequirements
from gpusim.api.errors import FieldError, InputError
from gpusim.api.meta import ObjectMeta
from gpusim.api.quantity import parse_quantity
from gpusim.api.topology_node_k8s_io_v1alpha2 import (API_VERSION, KIND, AttributeInfo, CostInfo, NodeResourceTopology,
                                                      ResourceInfo, Zone, decode_node_resource_topology, id_to_name,
                                                      name_to_id)
from gpusim.componenthelpers.qos import compute_pod_qos
from gpusim.controlplane.apiserver import APIServer
from gpusim.node.nfdtopologyupdater import detect_topology_policy, device_allocations, node_resource_topology, NUMAZone
from gpusim.scheduler.framework import CycleState, NodeInfo, PodInfo
from gpusim.scheduler.plugins import noderesourcetopology as nrtp
from gpusim.scheduler.plugins.noderesourcetopology import (NUMANode, NodeResourceTopologyMatch, fits,
                                                           nodes_avg_distance, normalize_least_numa_score,
                                                           numa_nodes_required, score, topology_manager_from_nrt)

CPU, MEMORY, HUGEPAGES_2MI = "cpu", "memory", "hugepages-2Mi"
EXTENDED, NIC = "namespace/extended", "vendor/nic1"
NOT_EXISTING_NIC, NIC_NO_NUMA = "vendor/notexistingnic", "vendor.com/old-nic-model"
GPU = "gpu"


# --- fixtures as upstream builds them -----------------------------------------------------------------
def res(name, capacity, available):
    """MakeTopologyResInfo(name, capacity, available)."""
    return ResourceInfo(name, capacity, 0, available)


def zone(name, resources, costs=None):
    return Zone(name, "Node", resources=resources, costs=[CostInfo(k, v) for k, v in (costs or {}).items()])


def nrt(name, policy, zones, attributes=None):
    return NodeResourceTopology(metadata=ObjectMeta(name=name), topology_policies=[policy] if policy else [],
                                zones=zones, attributes=[AttributeInfo(k, v) for k, v in (attributes or {}).items()])


def node_of(topology, extra=None):
    """makeResourceListFromZones: node capacity = allocatable = the zones' summed ``available``."""
    total: dict[str, Fraction] = {}
    for z in topology.zones:
        for r in z.resources:
            total[r.name] = total.get(r.name, Fraction(0)) + parse_quantity(r.available)
    alloc = {k: (str(v.numerator) if v.denominator == 1 else str(float(v))) for k, v in total.items()}
    alloc.update(extra or {})
    return Node(metadata=ObjectMeta(name=topology.metadata.name), status=NodeStatus(capacity=dict(alloc),
                                                                                   allocatable=dict(alloc)))


def container(name, requests=None, limits=None):
    return Container(name=name, resources=ResourceRequirements(limits=dict(limits or {}), requests=dict(requests or {})))


def pod_rl(rl):
    """makePodByResourceList: requests = limits."""
    return Pod(metadata=ObjectMeta(name="p", namespace="default", uid="u1"), spec=PodSpec(containers=[container("container1", rl, rl)]))


def pod_req(rl):
    """makePodWithReqByResourceList: requests only."""
    return Pod(metadata=ObjectMeta(name="p", namespace="default", uid="u1"), spec=PodSpec(containers=[container("container1", rl)]))


def pod_req_lim(req, lim):
    return Pod(metadata=ObjectMeta(name="p", namespace="default", uid="u1"),
               spec=PodSpec(containers=[container("container1", req, lim)]))


def pod_many(rl, n):
    """makePodByResourceListWithManyContainers."""
    return Pod(metadata=ObjectMeta(name="p", namespace="default", uid="u1"),
               spec=PodSpec(containers=[container(f"c{i}", rl, rl) for i in range(n)]))


def pod_multi(containers, init=()):
    """makePod + withMultiContainers / withMultiInitContainers: cnt-1.. and requests = limits."""
    return Pod(metadata=ObjectMeta(name="testpod", namespace="default", uid="u2"),
               spec=PodSpec(containers=[container(f"cnt-{i + 1}", rl, rl) for i, rl in enumerate(containers)],
                            init_containers=[container(f"cnt-{i + 1}", rl, rl) for i, rl in enumerate(init)]))


def empty_pod():
    return Pod(metadata=ObjectMeta(name="p", namespace="default", uid="u0"), spec=PodSpec(containers=[]))


SNC = "SingleNUMANodeContainerLevel"
SNP = "SingleNUMANodePodLevel"

FILTER_NODES = [
    nrt("node1", SNC, [zone("node-0", [res(CPU, "20", "4"), res(MEMORY, "8Gi", "8Gi"), res(NIC, "30", "10")]),
                       zone("node-1", [res(CPU, "30", "8"), res(MEMORY, "8Gi", "8Gi"), res(NIC, "30", "10")])]),
    nrt("node2", SNC, [zone("node-0", [res(CPU, "20", "2"), res(MEMORY, "8Gi", "4Gi"), res(HUGEPAGES_2MI, "128Mi", "128Mi"),
                                       res(NIC, "30", "5")]),
                       zone("node-1", [res(CPU, "30", "4"), res(MEMORY, "8Gi", "4Gi"), res(HUGEPAGES_2MI, "128Mi", "128Mi"),
                                       res(NIC, "30", "2")])]),
    nrt("node3", SNP, [zone("node-0", [res(CPU, "20", "2"), res(MEMORY, "8Gi", "4Gi"), res(NIC, "30", "5")]),
                       zone("node-1", [res(CPU, "30", "4"), res(MEMORY, "8Gi", "4Gi"), res(NIC, "30", "2")])]),
    nrt("badly_formed_node", SNP, [zone("node-0", [res(CPU, "20", "2"), res(MEMORY, "8Gi", "4Gi"), res(NIC, "30", "5")]),
                                   zone("node-75", [res(CPU, "30", "4"), res(MEMORY, "8Gi", "4Gi"), res(NIC, "30", "2")])]),
    nrt("extended", SNC, [zone("node-0", [res(CPU, "20", "4"), res(MEMORY, "8Gi", "8Gi"), res(NIC, "30", "10")]),
                          zone("node-1", [res(CPU, "30", "8"), res(MEMORY, "8Gi", "8Gi"), res(NIC, "30", "10")])]),
]
FILTER_NODE_EXTRA = {1: {NIC_NO_NUMA: "4"}, 4: {EXTENDED: "1"}}

A_POD, A_CONT = "cannot align pod", "cannot align container"
G = lambda **kw: {k.replace("_", "/"): v for k, v in kw.items()}   # noqa: E731

FILTER_ROWS = [
    ("Guaranteed QoS, pod with extended resource fit", pod_rl({CPU: "2", MEMORY: "2Gi", EXTENDED: "1", NIC: "3"}), 4, None),
    ("Guaranteed QoS, pod with extended resource no devices; pod fit", pod_rl({CPU: "2", MEMORY: "2Gi", EXTENDED: "1"}), 4, None),
    ("Best effort QoS, pod fit", empty_pod(), 0, None),
    ("Best effort QoS requesting devices, Pod Scope Topology policy; pod fit", pod_rl({NIC: "5"}), 2, None),
    ("Best effort QoS requesting devices, Pod Scope Topology policy; pod doesn't fit", pod_rl({NIC: "20"}), 2, A_POD),
    ("Best effort QoS requesting devices, Container Scope Topology policy; pod fit", pod_rl({NIC: "5"}), 1, None),
    ("Best effort QoS requesting devices, Container Scope Topology policy; pod doesn't fit", pod_rl({NIC: "20"}), 0, A_CONT),
    ("Best effort QoS requesting devices and extended resources, Container Scope Topology policy; pod doesn't fit",
     pod_rl({EXTENDED: "1", NIC: "10"}), 4, None),
    ("Best effort QoS, requesting CPU, memory (enough on NUMA) and devices (not enough), Container Scope Topology policy; "
     "pod doesn't fit", pod_req_lim({CPU: "3", MEMORY: "3Gi", NIC: "11"}, {CPU: "4", MEMORY: "4Gi", NIC: "11"}), 1, A_CONT),
    ("Best effort QoS, requesting CPU, memory (enough on NUMA) and devices (not enough), Pod Scope Topology policy; "
     "pod doesn't fit", pod_req_lim({CPU: "1", MEMORY: "1Gi", NIC: "6"}, {CPU: "2", MEMORY: "2Gi", NIC: "6"}), 2, A_POD),
    ("Best effort QoS requesting CPU, memory (enough on NUMA) and devices, Pod Scope Topology policy; pod fit",
     pod_req_lim({CPU: "1", MEMORY: "1Gi", NIC: "5"}, {CPU: "2", MEMORY: "2Gi", NIC: "5"}), 2, None),
    ("Best effort QoS requesting CPU, memory (not enough on NUMA) and devices, Pod Scope Topology policy; pod fit",
     pod_req_lim({CPU: "19", MEMORY: "5Gi", NIC: "5"}, {CPU: "20", MEMORY: "6Gi", NIC: "5"}), 2, None),
    ("Best effort QoS requesting CPU, memory (enough on NUMA) and devices, Container Scope Topology policy; pod fit",
     pod_req_lim({CPU: "3", MEMORY: "3Gi", NIC: "5"}, {CPU: "4", MEMORY: "4Gi", NIC: "5"}), 1, None),
    ("Best effort QoS requesting CPU, memory (not enough on NUMA) and devices, Container Scope Topology policy; pod fit",
     pod_req_lim({CPU: "5", MEMORY: "5Gi", NIC: "5"}, {CPU: "6", MEMORY: "6Gi", NIC: "5"}), 1, None),
    ("Guaranteed QoS, minimal, pod fit", pod_rl({CPU: "2", MEMORY: "2Gi"}), 0, None),
    ("Guaranteed QoS, minimal, saturating zone, pod fit", pod_rl({CPU: "8", MEMORY: "8Gi"}), 0, None),
    ("Guaranteed QoS, zero quantity of unavailable resource, pod fit",
     pod_rl({CPU: "2", MEMORY: "2Gi", HUGEPAGES_2MI: "0", NIC: "3"}), 0, None),
    ("Guaranteed QoS, pod fit", pod_rl({CPU: "2", MEMORY: "2Gi", NIC: "3"}), 1, None),
    ("Guaranteed QoS, hugepages, pod fit", pod_rl({CPU: "2", MEMORY: "2Gi", HUGEPAGES_2MI: "64Mi", NIC: "3"}), 1, None),
    ("Burstable QoS, pod fit", pod_rl({CPU: "4", NIC: "3"}), 1, None),
    ("Burstable QoS, requesting CPU and devices (not enough), Container Scope Topology policy; pod doesn't fit",
     pod_rl({CPU: "4", NIC: "11"}), 1, A_CONT),
    ("Burstable QoS, requesting CPU and devices (not enough), Pod Scope Topology policy; pod doesn't fit",
     pod_rl({CPU: "2", NIC: "6"}), 2, A_POD),
    ("Burstable QoS requesting CPU (enough on NUMA) and devices, Pod Scope Topology policy; pod fit",
     pod_rl({CPU: "2", NIC: "5"}), 2, None),
    ("BurstableQoS requesting CPU (not enough on NUMA) and devices, Pod Scope Topology policy; pod fit",
     pod_rl({CPU: "20", NIC: "5"}), 2, None),
    ("Burstable QoS requesting CPU (enough on NUMA) and devices, Container Scope Topology policy; pod fit",
     pod_rl({CPU: "2", NIC: "5"}), 1, None),
    ("Burstable QoS requesting CPU (not enough on NUMA) and devices, Container Scope Topology policy; pod fit",
     pod_rl({CPU: "4", NIC: "5"}), 1, None),
    ("Burstable QoS, requesting memory (enough on NUMA) and devices (not enough), Container Scope Topology policy; "
     "pod doesn't fit", pod_rl({MEMORY: "2Gi", NIC: "11"}), 1, A_CONT),
    ("Burstable QoS, requesting memory (enough on NUMA) and devices (not enough), Pod Scope Topology policy; "
     "pod doesn't fit", pod_rl({MEMORY: "2Gi", NIC: "6"}), 2, A_POD),
    ("Burstable QoS requesting memory (enough on NUMA) and devices, Pod Scope Topology policy; pod fit",
     pod_rl({MEMORY: "2Gi", NIC: "5"}), 2, None),
    ("Burstable QoS requesting memory (not enough on NUMA) and devices, Pod Scope Topology policy; pod fit",
     pod_rl({MEMORY: "5Gi", NIC: "5"}), 2, None),
    ("Burstable QoS requesting memory (enough on NUMA) and devices, Container Scope Topology policy; pod fit",
     pod_rl({MEMORY: "4Gi", NIC: "5"}), 1, None),
    ("Burstable QoS requesting memory (not enough on NUMA) and devices, Container Scope Topology policy; pod fit",
     pod_rl({MEMORY: "5Gi", NIC: "5"}), 1, None),
    ("Burstable QoS, requesting CPU, memory (enough on NUMA) and devices (not enough), Container Scope Topology policy; "
     "pod doesn't fit", pod_req({CPU: "4", MEMORY: "4Gi", NIC: "11"}), 1, A_CONT),
    ("Burstable QoS, requesting CPU, memory (enough on NUMA) and devices (not enough), Pod Scope Topology policy; "
     "pod doesn't fit", pod_req({CPU: "2", MEMORY: "2Gi", NIC: "6"}), 2, A_POD),
    ("Burstable QoS requesting CPU, memory (enough on NUMA) and devices, Pod Scope Topology policy; pod fit",
     pod_req({CPU: "2", MEMORY: "2Gi", NIC: "5"}), 2, None),
    ("Burstable QoS requesting CPU, memory (not enough on NUMA) and devices, Pod Scope Topology policy; pod fit",
     pod_req({CPU: "20", MEMORY: "5Gi", NIC: "5"}), 2, None),
    ("Burstable QoS requesting CPU, memory (enough on NUMA) and devices, Container Scope Topology policy; pod fit",
     pod_req({CPU: "4", MEMORY: "4Gi", NIC: "5"}), 1, None),
    ("Burstable QoS requesting CPU, memory (not enough on NUMA) and devices, Container Scope Topology policy; pod fit",
     pod_req({CPU: "5", MEMORY: "5Gi", NIC: "5"}), 1, None),
    ("Burstable QoS with extended resources, pod fit", pod_rl({EXTENDED: "1", CPU: "4", NIC: "3"}), 4, None),
    ("Guaranteed QoS, hugepages, pod doesn't fit", pod_rl({CPU: "2", MEMORY: "2Gi", HUGEPAGES_2MI: "256Mi", NIC: "3"}), 1,
     A_CONT),
    ("Guaranteed QoS, pod doesn't fit", pod_rl({CPU: "9", MEMORY: "1Gi", NIC: "3"}), 0, A_CONT),
    ("Guaranteed QoS, pod fit (zero request of a missing device)", pod_rl({CPU: "2", MEMORY: "1Gi", NOT_EXISTING_NIC: "0"}),
     0, None),
    ("Guaranteed QoS Topology Scope, pod doesn't fit", pod_many({CPU: "3", MEMORY: "1Gi", NOT_EXISTING_NIC: "0"}, 3), 2,
     A_POD),
    ("Guaranteed QoS Topology Scope, minimal, pod fit", pod_rl({CPU: "1", MEMORY: "1Gi"}), 2, None),
    ("Guaranteed QoS TopologyScope, minimal, saturating zone, pod fit", pod_rl({CPU: "2", MEMORY: "4Gi"}), 3, None),
    ("Guaranteed QoS Topology Scope, pod fit", pod_many({CPU: "1", MEMORY: "1Gi", NOT_EXISTING_NIC: "0"}, 3), 2, None),
    ("Guaranteed QoS Topology Scope, invalid node", pod_many({CPU: "1", MEMORY: "1Gi", NOT_EXISTING_NIC: "0"}, 3), 3, A_POD),
    ("Guaranteed QoS, hugepages, non-NUMA affine NIC, pod fit",
     pod_rl({CPU: "2", MEMORY: "2Gi", HUGEPAGES_2MI: "64Mi", NIC_NO_NUMA: "3"}), 1, None),
    ("Guaranteed QoS, ephemeral-storage (non-NUMA), pod fit", pod_rl({CPU: "2", MEMORY: "2Gi", "ephemeral-storage": "100Mi"}),
     1, None),
]


def api_with(*topologies):
    api = APIServer(simpy.Environment(), random.Random(0))
    for t in topologies:
        api.create(t)
    return api


class Handle:
    def __init__(self, api):
        self.api = api


def run_filter(plugin, pod, node):
    return plugin.filter(CycleState(), PodInfo(pod), NodeInfo(node))


@pytest.mark.parametrize("name,pod,node_index,want", [pytest.param(*r, id=r[0]) for r in FILTER_ROWS])
def test_filter_node_resource_topology(name, pod, node_index, want):
    plugin = NodeResourceTopologyMatch(None, Handle(api_with(*FILTER_NODES)))
    st = run_filter(plugin, pod, node_of(FILTER_NODES[node_index], FILTER_NODE_EXTRA.get(node_index)))
    if want is None:
        assert st.is_success(), st
    else:
        assert (st.code.name, st.reasons) == ("Unschedulable", [want])


HOST0_ZONES = [zone("node-0", [res(CPU, "32", "30"), res(MEMORY, "64Gi", "60Gi"), res(HUGEPAGES_2MI, "384Mi", "384Mi"),
                               res(NIC, "16", "16")]),
               zone("node-1", [res(CPU, "32", "32"), res(MEMORY, "64Gi", "64Gi"), res(HUGEPAGES_2MI, "512Mi", "512Mi"),
                               res(NIC, "32", "32")])]


@pytest.mark.parametrize("name,containers,want", [
    ("gu pod fits only on a numa node", [{CPU: "2", MEMORY: "2Gi"}, {CPU: "4", MEMORY: "8Gi"},
                                         {CPU: "26", MEMORY: "32Gi", HUGEPAGES_2MI: "512Mi", NIC: "26"}], None),
    ("gu pod does not fit - not enough CPUs available on any NUMA node",
     [{CPU: "2", MEMORY: "2Gi"}, {CPU: "8", MEMORY: "8Gi"}, {CPU: "26", MEMORY: "26Gi", HUGEPAGES_2MI: "52Mi", NIC: "26"}], A_POD),
    ("gu pod does not fit - not enough memory available on any NUMA node",
     [{CPU: "2", MEMORY: "4Gi"}, {CPU: "4", MEMORY: "16Gi"}, {CPU: "26", MEMORY: "52Gi", HUGEPAGES_2MI: "52Mi", NIC: "26"}], A_POD),
    ("gu pod does not fit - not enough Hugepages available on any NUMA node",
     [{CPU: "2", MEMORY: "2Gi"}, {CPU: "4", MEMORY: "8Gi"}, {CPU: "26", MEMORY: "32Gi", HUGEPAGES_2MI: "3328Mi", NIC: "26"}],
     A_POD),
    ("gu pod does not fit - not enough devices available on any NUMA node",
     [{CPU: "2", MEMORY: "2Gi"}, {CPU: "4", MEMORY: "8Gi"}, {CPU: "26", MEMORY: "26Gi", HUGEPAGES_2MI: "52Mi", NIC: "52"}], A_POD),
])
def test_filter_multi_container_pod_scope(name, containers, want):
    host = nrt("host0", SNP, HOST0_ZONES)
    plugin = NodeResourceTopologyMatch(None, Handle(api_with(host)))
    st = run_filter(plugin, pod_multi(containers), node_of(host))
    assert st.is_success() if want is None else st.reasons == [want]


def cnt(cpu, mem, **extra):
    d = {CPU: cpu, MEMORY: mem}
    d.update({HUGEPAGES_2MI if k == "hp" else NIC: v for k, v in extra.items()})
    return d


A_INIT = "cannot align init container"


@pytest.mark.parametrize("description,init,containers,want", [
    ("[1][tier3] single container with good allocation - fit", [], [cnt("2", "4G")], None),
    ("[2][tier3] single container with cpu over allocation - fit", [], [cnt("40", "4G")], A_CONT),
    ("[2][tier3] single container with memory over allocation - fit", [], [cnt("2", "100G")], A_CONT),
    ("[2][tier3] single container with cpu and memory over allocation - fit", [], [cnt("40", "100G")], A_CONT),
    ("[4][tier2] multi-containers with good allocation, spread across NUMAs - fit", [],
     [cnt("20", "40G"), cnt("20", "40G")], None),
    ("[4][tier1] multi containers with good devices and hugepages allocation, spread across NUMAs - fit", [],
     [cnt("2", "6G", hp="500Mi", nic="16"), cnt("2", "6G", hp="50Mi", nic="8")], None),
    ("[7][tier1] init container with cpu over allocation, multi-containers with good allocation - not fit",
     [cnt("40", "40G")], [cnt("1", "4G"), cnt("1", "4G")], A_INIT),
    ("[7][tier1] init container with memory over allocation, multi-containers with good allocation - not fit",
     [cnt("4", "70G")], [cnt("1", "4G"), cnt("1", "4G")], A_INIT),
    ("[11][tier1] init container with good allocation, multi-containers spread across NUMAs - fit",
     [cnt("4", "10G")], [cnt("20", "40G"), cnt("20", "40G")], None),
    ("[17][tier1] multi init containers with good allocation, multi-containers spread across NUMAs - fit",
     [cnt("4", "10G")] * 3, [cnt("20", "40G"), cnt("20", "40G"), cnt("6", "10G")], None),
    ("[24][tier1] multi init containers with good allocation, multi-containers with over cpu allocation - not fit",
     [cnt("30", "10G")] * 2, [cnt("20", "40G"), cnt("20", "40G"), cnt("20", "6G")], A_CONT),
    ("[27][tier1] multi init containers with good allocation, container with cpu over allocation - not fit",
     [cnt("30", "10G")] * 2, [cnt("35", "40G")], A_CONT),
    ("[28][tier1] multi init containers with good allocation, multi-containers with good allocation - fit",
     [cnt("30", "10G")] * 2, [cnt("20", "40G"), cnt("20", "40G")], None),
    ("[29][tier1] multi init containers when sum of their cpus requests (together) is over allocatable, "
     "multi-containers with good allocation - fit", [cnt("30", "10G")] * 3,
     [cnt("20", "40G"), cnt("20", "40G"), cnt("2", "6G")], None),
    ("[29][tier1] multi init containers when sum of their memory requests (together) is over allocatable, "
     "multi-containers with good allocation - fit", [cnt("3", "50G")] * 3,
     [cnt("20", "40G"), cnt("20", "40G"), cnt("2", "6G")], None),
    ("[32][tier1] multi init containers with over cpu allocation - not fit",
     [cnt("40", "50G"), cnt("3", "50G"), cnt("3", "50G")], [cnt("20", "40G"), cnt("2", "6G")], A_INIT),
    ("[32][tier1] multi init containers with over memory allocation - not fit",
     [cnt("20", "50G"), cnt("40", "50G"), cnt("3", "50G")], [cnt("20", "40G"), cnt("2", "6G")], A_INIT),
])
def test_filter_multi_container_container_scope(description, init, containers, want):
    host = nrt("host0", SNC, HOST0_ZONES)
    plugin = NodeResourceTopologyMatch(None, Handle(api_with(host)))
    st = run_filter(plugin, pod_multi(containers, init), node_of(host))
    assert st.is_success() if want is None else st.reasons == [want]


def test_filter_passes_without_nrt_or_without_single_numa_node_policy():
    pod = pod_rl({CPU: "64", MEMORY: "1Gi", NIC: "100"})
    plugin = NodeResourceTopologyMatch(None, Handle(api_with()))
    assert run_filter(plugin, pod, node_of(FILTER_NODES[0])).is_success()      # no NRT object
    best_effort = nrt("node1", "", FILTER_NODES[0].zones, {"topologyManagerPolicy": "best-effort"})
    assert fits(pod, best_effort, frozenset({CPU, MEMORY, NIC})).is_success()


# --- score_test.go ------------------------------------------------------------------------------------
def default_numa_nodes(policy):
    return [nrt("Node1", policy, [zone("node-0", [res(CPU, "4", "4"), res(MEMORY, "500Mi", "500Mi")]),
                                  zone("node-1", [res(CPU, "4", "4"), res(MEMORY, "500Mi", "500Mi")])]),
            nrt("Node2", policy, [zone("node-0", [res(CPU, "2", "2"), res(MEMORY, "50Mi", "50Mi")]),
                                  zone("node-1", [res(CPU, "2", "2"), res(MEMORY, "50Mi", "50Mi")])]),
            nrt("Node3", policy, [zone("node-0", [res(CPU, "6", "6"), res(MEMORY, "60Mi", "60Mi")]),
                                  zone("node-1", [res(CPU, "6", "6"), res(MEMORY, "60Mi", "60Mi")])])]


def _costs(i):
    near = {0: 1, 1: 0, 2: 3, 3: 2}
    return {f"node-{j}": (10 if j == i else 12 if j == near[i] else 20) for j in range(4)}


def four_numa_nodes():
    gpus = {"Node1": (1, 1, 0, 0), "Node2": (1, 0, 1, 0)}
    return [nrt(name, "BestEffortContainerLevel",
                [zone(f"node-{i}", [res(CPU, "2", "2"), res(MEMORY, "50Mi", "50Mi"), res(GPU, str(g), str(g))], _costs(i))
                 for i, g in enumerate(gs)]) for name, gs in gpus.items()]


POD1 = {CPU: "2", MEMORY: str(20 * 1024 * 1024)}


def scores_for(topologies, pod, strategy, weights=None, available=None):
    by_name = {t.metadata.name: t for t in topologies}
    return {n: score(pod, by_name[n] if available is None or n in available else None, strategy, weights or {})
            for n in sorted(by_name)}


def find_max_score_node(scores):
    """findMaxScoreNode: the last node (in map order) with the maximum score; ties are absent from the
    upstream rows, so sorted order gives the same answer."""
    best, elected = 0, ""
    for n, s in sorted(scores.items()):
        if best <= s:
            best, elected = s, n
    return elected


@pytest.mark.parametrize("name,strategy,wanted", [
    ("MostAllocated strategy", "MostAllocated", ("Node2", 70)),
    ("BalancedAllocation strategy", "BalancedAllocation", ("Node3", 100)),
    ("LeastAllocated strategy", "LeastAllocated", ("Node1", 73)),
])
def test_node_resource_score_plugin(name, strategy, wanted):
    scores = scores_for(default_numa_nodes(SNC), pod_rl(POD1), strategy)
    node = find_max_score_node(scores)
    assert (node, scores[node]) == wanted


@pytest.mark.parametrize("name,strategy,available,wanted", [
    ("No data at all, MostAllocated strategy", "MostAllocated", set(), None),
    ("No data at all, LeastAllocated strategy", "LeastAllocated", set(), None),
    ("No data at all, BalancedAllocation strategy", "BalancedAllocation", set(), None),
    ("One node with NRT data, MostAllocated strategy", "MostAllocated", {"Node1"}, ("Node1", 27)),
    ("One node with NRT data, LeastAllocated strategy", "LeastAllocated", {"Node1"}, ("Node1", 73)),
    ("One node with NRT data, BalancedAllocation strategy", "BalancedAllocation", {"Node1"}, ("Node1", 89)),
])
def test_node_resource_partial_data_score_plugin(name, strategy, available, wanted):
    scores = scores_for(default_numa_nodes(SNC), pod_rl(POD1), strategy, available=available)
    if wanted is None:
        assert set(scores.values()) == {0}
    else:
        node = find_max_score_node(scores)
        assert (node, scores[node]) == wanted and all(s == 0 for n, s in scores.items() if n != node)


def pod_lists(*rls):
    """makePodByResourceLists: one container per list, requests = limits."""
    return Pod(metadata=ObjectMeta(name="p", namespace="default", uid="u3"),
               spec=PodSpec(containers=[container(f"c{i}", rl, rl) for i, rl in enumerate(rls)]))


BEC, BEP = "BestEffortContainerLevel", "BestEffortPodLevel"


@pytest.mark.parametrize("name,requests,wanted,nodes", [
    ("container scope, one container case 1", [{CPU: "2", MEMORY: "50Mi"}], (94, 94, 94), lambda: default_numa_nodes(BEC)),
    ("container scope, one container case 2", [{CPU: "4", MEMORY: "50Mi"}], (94, 82, 94), lambda: default_numa_nodes(BEC)),
    ("container scope, one container case 3", [{CPU: "6", MEMORY: "50Mi"}], (82, 0, 94), lambda: default_numa_nodes(BEC)),
    ("container scope, two containers case 1", [{CPU: "2", MEMORY: "50Mi"}] * 2, (94, 94, 94), lambda: default_numa_nodes(BEC)),
    ("container scope, two containers case 2", [{CPU: "1", MEMORY: "50Mi"}, {CPU: "3", MEMORY: "50Mi"}], (94, 82, 94),
     lambda: default_numa_nodes(BEC)),
    ("container scope, two containers case 3", [{CPU: "5", MEMORY: "50Mi"}, {CPU: "3", MEMORY: "50Mi"}], (82, 0, 94),
     lambda: default_numa_nodes(BEC)),
    ("container scope, two containers non NUMA resource", [{"non-numa-resource": "1"}, {"non-numa-resource": "2"}],
     (100, 100, 100), lambda: default_numa_nodes(BEC)),
    ("pod scope, two containers case 1", [{CPU: "2", MEMORY: "50Mi"}] * 2, (94, 82, 82), lambda: default_numa_nodes(BEP)),
    ("pod scope, two containers case 2", [{CPU: "1", MEMORY: "50Mi"}, {CPU: "3", MEMORY: "50Mi"}], (94, 82, 82),
     lambda: default_numa_nodes(BEP)),
    ("pod scope, two containers case 3", [{CPU: "5", MEMORY: "50Mi"}, {CPU: "3", MEMORY: "50Mi"}], (82, 0, 82),
     lambda: default_numa_nodes(BEP)),
    ("pod scope, one containers non NUMA resource", [{"non-numa-resource": "1"}], (100, 100, 100),
     lambda: default_numa_nodes(BEP)),
    ("container scope, one container, 4 NUMA nodes, 1 gpu ", [{CPU: "2", MEMORY: "50Mi", GPU: "1"}], (94, 94),
     four_numa_nodes),
    ("container scope, one container, 4 NUMA nodes, 2 gpu ", [{CPU: "2", MEMORY: "50Mi", GPU: "2"}], (82, 76),
     four_numa_nodes),
    ("container scope, 2 containers, 4 NUMA nodes, 2 gpu in one container ",
     [{CPU: "2", MEMORY: "50Mi", GPU: "2"}, {CPU: "2", MEMORY: "50Mi"}], (82, 76), four_numa_nodes),
])
def test_node_resource_score_plugin_least_numa(name, requests, wanted, nodes):
    scores = scores_for(nodes(), pod_lists(*requests), "LeastNUMANodes")
    assert tuple(scores[n] for n in sorted(scores)) == wanted


# --- least_numa_test.go -------------------------------------------------------------------------------
def numa(numa_id, costs=None, **resources):
    return NUMANode(numa_id, {(GPU if k == "gpu" else k): parse_quantity(v) for k, v in resources.items()}, costs or {})


SEQ4 = {0: {0: 10, 1: 12, 2: 20, 3: 20}, 1: {0: 12, 1: 10, 2: 20, 3: 20}, 2: {0: 20, 1: 20, 2: 10, 3: 12},
        3: {0: 20, 1: 20, 2: 10, 3: 12}}
SEQ4_FIXED = {**SEQ4, 3: {0: 20, 1: 20, 2: 12, 3: 10}}
ALT4 = {0: {0: 10, 2: 12, 4: 20, 6: 20}, 2: {0: 12, 2: 10, 4: 20, 6: 20}, 4: {0: 20, 2: 20, 4: 10, 6: 12},
        6: {0: 20, 2: 20, 4: 12, 6: 10}}
COSTS8 = {0: [10, 20, 40, 30, 20, 30, 50, 40], 3: [30, 40, 20, 10, 30, 20, 40, 50], 5: [30, 20, 50, 20, 50, 10, 50, 40],
          7: [40, 50, 30, 50, 20, 40, 30, 10], 1: [20, 10, 30, 40, 50, 20, 40, 50], 6: [50, 40, 20, 40, 30, 50, 10, 30],
          2: [40, 30, 10, 20, 40, 50, 20, 30], 4: [20, 50, 40, 30, 10, 50, 30, 20]}
ORDER8 = [0, 3, 5, 7, 1, 6, 2, 4]


def eight(without_memory=()):
    return [numa(i, dict(enumerate(COSTS8[i])), gpu="1", cpu="4", **({} if i in without_memory else {"memory": "5Gi"}))
            for i in ORDER8]


@pytest.mark.parametrize("description,nodes,pod,expected_bits,expected_min", [
    ("simple case, fit on 1 NUMA node", [numa(0, cpu="8", memory="10Gi")], {CPU: "2", MEMORY: "2Gi"}, [0], True),
    ("simple case, fit on 2 NUMA node", [numa(0, cpu="8", memory="10Gi"), numa(1, cpu="8", memory="10Gi")],
     {CPU: "12", MEMORY: "2Gi"}, [0, 1], True),
    ("can't fit", [numa(0, cpu="8", memory="10Gi"), numa(1, cpu="8", memory="10Gi")], {CPU: "22", MEMORY: "2Gi"}, None, False),
    ("4 NUMA node optimal distance", [numa(i, SEQ4[i], gpu=g, cpu="4", memory="5Gi") for i, g in enumerate("1100")],
     {CPU: "2", MEMORY: "2Gi", GPU: "2"}, [0, 1], True),
    ("4 NUMA node non optimal distance", [numa(i, SEQ4_FIXED[i], gpu=g, cpu="4", memory="5Gi") for i, g in enumerate("1010")],
     {CPU: "2", MEMORY: "2Gi", GPU: "2"}, [0, 2], False),
    ("8 NUMA node optimal distance, not sorted ids", eight(), {CPU: "3", MEMORY: "2Gi", GPU: "3"}, [0, 1, 5], True),
    ("8 NUMA node non optimal distance, not sorted ids, odd digit NUMA node without memory", eight((3, 5, 7, 1)),
     {CPU: "3", MEMORY: "2Gi", GPU: "3"}, [2, 4, 6], False),
    ("4 NUMA node optimal distance, non sequential ids",
     [numa(i, ALT4[i], gpu=g, cpu="4", memory="5Gi") for i, g in zip((0, 2, 4, 6), "1100")],
     {CPU: "2", MEMORY: "2Gi", GPU: "2"}, [0, 2], True),
    ("4 NUMA node non optimal distance, non sequential ids",
     [numa(i, ALT4[i], gpu=g, cpu="4", memory="5Gi") for i, g in zip((0, 2, 4, 6), "1001")],
     {CPU: "2", MEMORY: "2Gi", GPU: "2"}, [0, 6], False),
    ("4 NUMA node non optimal distance, non sequential ids, NUMA node-2 and node-6 without memory",
     [numa(i, ALT4[i], gpu="1", cpu="4", **({} if i in (2, 6) else {"memory": "5Gi"})) for i in (0, 2, 4, 6)],
     {CPU: "2", MEMORY: "2Gi", GPU: "2"}, [0, 4], False),
])
def test_numa_nodes_required(description, nodes, pod, expected_bits, expected_min):
    bits, closest = numa_nodes_required("Guaranteed", nodes, {k: parse_quantity(v) for k, v in pod.items()})
    assert bits == expected_bits and closest is expected_min


@pytest.mark.parametrize("count,optimal,expected", [(1, False, 88), (2, False, 76), (8, False, 4), (1, True, 94),
                                                    (2, True, 82), (8, True, 10)])
def test_normalize_score(count, optimal, expected):
    assert normalize_least_numa_score(count, optimal, 8) == expected


@pytest.mark.parametrize("description,combinations,costs,expected", [
    ("single numa node combination", [(0,), (1,), (2,), (3,)], True, 10),
    ("two numa node combination", [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)], True, 11),
    ("three numa node combination", [(0, 1, 2), (1, 2, 3), (0, 2, 3)], True, 14.888889),
    ("two numa node combination, no costs", [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)], False, 255),
])
def test_min_distance(description, combinations, costs, expected):
    nodes = [NUMANode(i, {}, SEQ4_FIXED[i] if costs else {}) for i in range(4)]
    got = min(nrtp._f32(nodes_avg_distance(nodes, c)) for c in combinations)
    assert got == pytest.approx(expected, abs=1e-6)


def test_max_numa_nodes_attribute_changes_the_least_numa_unit():
    topo = default_numa_nodes(BEC)[0]
    topo.attributes = [AttributeInfo("topologyManagerMaxNUMANodes", "4")]
    assert score(pod_lists({CPU: "2", MEMORY: "50Mi"}), topo, "LeastNUMANodes", {}) == 100 - 25 + 12


def test_non_guaranteed_pods_score_max_everywhere():
    burstable = pod_rl({CPU: "2", NIC: "1"})
    assert {score(burstable, t, s, {}) for t in default_numa_nodes(SNC) for s in nrtp.SCORING_STRATEGIES} == {100}


# --- nodeconfig / args --------------------------------------------------------------------------------
@pytest.mark.parametrize("policies,attributes,expected", [
    ([], {}, ("none", "container", 8)),
    (["SingleNUMANodePodLevel"], {}, ("single-numa-node", "pod", 8)),
    (["RestrictedContainerLevel"], {}, ("restricted", "container", 8)),
    (["Restricted"], {}, ("none", "container", 8)),              # legacy names without a level are ignored
    (["SingleNUMANodePodLevel"], {"topologyManagerScope": "container"}, ("single-numa-node", "container", 8)),
    ([], {"topologyManagerPolicy": "best-effort", "topologyManagerMaxNUMANodes": "16"}, ("best-effort", "container", 16)),
    ([], {"topologyManagerPolicy": "bogus", "topologyManagerMaxNUMANodes": "1"}, ("none", "container", 8)),
    ([], {"topologyManagerMaxNUMANodes": "99999"}, ("none", "container", 1024)),
])
def test_topology_manager_from_nrt(policies, attributes, expected):
    t = NodeResourceTopology(metadata=ObjectMeta(name="n"), topology_policies=policies,
                             attributes=[AttributeInfo(k, v) for k, v in attributes.items()])
    c = topology_manager_from_nrt(t)
    assert (c.policy, c.scope, c.max_numa_nodes) == expected


@pytest.mark.parametrize("args,error", [
    ({"scoringStrategy": {"type": "Nope"}}, 'args.scoringStrategy.type: Invalid value: "Nope": invalid ScoringStrategyType'),
    ({"scoringStrategy": {"resources": [{"name": "cpu"}]}},
     'args.scoringStrategy.type: Invalid value: "": invalid ScoringStrategyType'),
    ({"preemptionMode": "Sometimes"}, 'args.preemptionMode: Invalid value: "Sometimes": invalid PreemptionMode'),
    ({"cacheResyncPeriodSeconds": 5}, "args.cacheResyncPeriodSeconds: Invalid value: 5: the OverReserve cache"),
    ({"scoringStrategy": {"typo": "LeastAllocated"}}, 'unknown field "args.scoringStrategy.typo"'),
])
def test_args_validation(args, error):
    with pytest.raises(FieldError) as e:
        NodeResourceTopologyMatch(args, Handle(None))
    assert error in str(e.value)


def test_args_defaults():
    a = NodeResourceTopologyMatch(None, Handle(None)).args
    assert (a.scoring_type, a.resources, a.discard_reserved_nodes, dict(a.cache), a.preemption_mode) == (
        "LeastAllocated", (("cpu", 1), ("memory", 1)), False,
        {"foreignPodsDetect": "All", "resyncMethod": "Autodetect", "informerMode": "Dedicated"}, "Disabled")
    a = NodeResourceTopologyMatch({"scoringStrategy": {"type": "MostAllocated", "resources": [
        {"name": "nvidia.com/gpu", "weight": 3}, {"name": "cpu"}]}}, Handle(None)).args
    assert a.resources == (("nvidia.com/gpu", 3), ("cpu", 1))


def test_weights_change_most_allocated_score():
    pod = pod_rl({CPU: "2", MEMORY: "100Mi", "nvidia.com/gpu": "1"})
    t = nrt("n", SNC, [zone("node-0", [res(CPU, "4", "4"), res(MEMORY, "1000Mi", "1000Mi"),
                                       res("nvidia.com/gpu", "4", "1")])])
    # cpu 50, memory 10, gpu 100 → equal weights 160/3 = 53; gpu weight 5 → (50+10+500)/7 = 80
    assert score(pod, t, "MostAllocated", {}) == 53
    assert score(pod, t, "MostAllocated", {"nvidia.com/gpu": 5}) == 80


def test_discard_reserved_nodes_reports_stale_data_until_post_bind():
    host = nrt("host0", SNC, HOST0_ZONES)
    plugin = NodeResourceTopologyMatch({"discardReservedNodes": True}, Handle(api_with(host)))
    pi = PodInfo(pod_multi([cnt("2", "4G")]))
    ni = NodeInfo(node_of(host))
    assert plugin.filter(CycleState(), pi, ni).is_success()
    plugin.reserve(CycleState(), pi, "host0")
    st = plugin.filter(CycleState(), pi, ni)
    assert (st.code.name, st.reasons) == ("Unschedulable", ["invalid node topology data"])
    assert plugin.score(CycleState(), pi, ni) == 0
    plugin.post_bind(CycleState(), pi, "host0")
    assert plugin.filter(CycleState(), pi, ni).is_success()


# --- API ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,expected", [
    ("node-0", 0), ("node-7", 7), ("node-65535", 65535), ("node--1", None), ("cell-1", None), ("Node-1", None),
    ("NODE-2", None), ("node_3", None), ("node 4", None), ("node-5-1", None), ("node6", None), ("--node-7", None)])
def test_name_to_id(name, expected):
    if expected is None:
        with pytest.raises(ValueError):
            name_to_id(name)
    else:
        assert name_to_id(name) == expected


def test_id_to_name():
    assert [id_to_name(i) for i in (0, 7, 65535)] == ["node-0", "node-7", "node-65535"]
    with pytest.raises(ValueError):
        id_to_name(-1)


GOOD_DOC = {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": "gpu-0"}, "topologyPolicies": ["None"],
            "attributes": [{"name": "topologyManagerPolicy", "value": "single-numa-node"}],
            "zones": [{"name": "node-0", "type": "Node", "costs": [{"name": "node-0", "value": 10}],
                       "resources": [{"name": "nvidia.com/gpu", "capacity": 4, "allocatable": "4", "available": "2"}]}]}


def test_decode_accepts_the_upstream_shape():
    t = decode_node_resource_topology(GOOD_DOC)
    assert t.zones[0].resources[0].available == "2" and t.attribute("topologyManagerPolicy") == "single-numa-node"
    assert topology_manager_from_nrt(t).policy == "single-numa-node"


@pytest.mark.parametrize("mutate,message", [
    (lambda d: d.pop("zones"), 'NodeResourceTopology "gpu-0" is invalid: zones: Required value'),
    (lambda d: d.pop("topologyPolicies"), "topologyPolicies: Required value"),
    (lambda d: d["zones"][0].pop("type"), "zones[0].type: Required value"),
    (lambda d: d["zones"][0]["resources"][0].pop("available"), "zones[0].resources[0].available: Required value"),
    (lambda d: d["zones"][0]["resources"][0].update(capacity="four"),
     'zones[0].resources[0].capacity: Invalid value: "four": quantities must match'),
    (lambda d: d["zones"][0].update(numa=0), 'unknown field "zones[0].numa"'),
    (lambda d: d["metadata"].update(namespace="default"), "NodeResourceTopology is cluster-scoped"),
])
def test_decode_rejects_bad_objects(mutate, message):
    import copy
    doc = copy.deepcopy(GOOD_DOC)
    mutate(doc)
    with pytest.raises(InputError) as e:
        decode_node_resource_topology(doc)
    assert message in str(e.value)


# --- QoS ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("pod,expected", [
    (empty_pod(), "BestEffort"), (pod_rl({NIC: "1"}), "BestEffort"), (pod_rl({CPU: "1", MEMORY: "1Gi"}), "Guaranteed"),
    (pod_rl({CPU: "1"}), "Burstable"), (pod_req({CPU: "1", MEMORY: "1Gi"}), "Burstable"),
    (pod_req_lim({CPU: "1", MEMORY: "1Gi"}, {CPU: "2", MEMORY: "1Gi"}), "Burstable"),
    (pod_req_lim({}, {CPU: "1", MEMORY: "1Gi", "nvidia.com/gpu": "1"}), "Guaranteed"),   # requests default to limits
])
def test_qos(pod, expected):
    assert compute_pod_qos(pod) == expected


# --- NFD topology-updater -----------------------------------------------------------------------------
def dgx_h100_zones():
    return [NUMAZone(0, {"cpu": 110, "memory": 1 << 40, "nvidia.com/gpu": 4}, {"cpu": 2}, [10, 21]),
            NUMAZone(1, {"cpu": 112, "memory": 1 << 40, "nvidia.com/gpu": 4}, {}, [21, 10])]


def test_topology_updater_publishes_zones_costs_and_attributes():
    held = device_allocations({"nvidia.com/gpu": ["GPU-1", "GPU-2", "GPU-5"]},
                              {"nvidia.com/gpu": {f"GPU-{i}": i // 4 for i in range(8)}})
    assert held == {0: {"nvidia.com/gpu": 2}, 1: {"nvidia.com/gpu": 1}}
    t = node_resource_topology("gpu-0", dgx_h100_zones(), held, "single-numa-node", "pod")
    assert t.topology_policies == ["SingleNUMANodePodLevel"]
    assert [(a.name, a.value) for a in t.attributes] == [("topologyManagerPolicy", "single-numa-node"),
                                                          ("topologyManagerScope", "pod")]
    z0 = t.zones[0]
    assert (z0.name, z0.type, [(c.name, c.value) for c in z0.costs]) == ("node-0", "Node", [("node-0", 10), ("node-1", 21)])
    assert [(r.name, r.capacity, r.allocatable, r.available) for r in z0.resources] == [
        ("cpu", "112", "110", "110"), ("memory", "1099511627776", "1099511627776", "1099511627776"),
        ("nvidia.com/gpu", "4", "4", "2")]
    assert t.zones[1].resources[2].available == "3"


def test_published_nrt_drives_the_filter():
    """8 GPUs (4 per NUMA node), 3 taken on NUMA 0: a 2-GPU Guaranteed pod goes to NUMA 1, 4 GPUs still fit
    (NUMA 1), 5 do not fit any single NUMA node."""
    held = {0: {"nvidia.com/gpu": 3}}
    t = node_resource_topology("gpu-0", dgx_h100_zones(), held, "single-numa-node", "container")
    alloc = frozenset({"cpu", "memory", "nvidia.com/gpu"})
    for gpus, ok in ((2, True), (4, True), (5, False)):
        pod = pod_rl({CPU: "8", MEMORY: "64Gi", "nvidia.com/gpu": str(gpus)})
        assert fits(pod, t, alloc).is_success() is ok
    assert detect_topology_policy("none", "container") == "None"


# --- the plugin inside the scheduler ------------------------------------------------------------------
SCENARIO = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint: {enabled: [{name: NodeResourceTopologyMatch}]}
  pluginConfig:
  - name: NodeResourceTopologyMatch
    args: {scoringStrategy: {type: LeastNUMANodes}}
---
apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec: {count: 2, gpu: {model: H100-SXM5-80GB, count: 8}, cpu: "224", memory: 2Ti}
---
apiVersion: v1
kind: Pod
metadata: {name: train, annotations: {gpusim.io/duration: 1h}}
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: cuda
    resources: {limits: {nvidia.com/gpu: 8, cpu: "16", memory: 64Gi}}
"""


def nrt_yaml(name: str) -> str:
    """dgx_h100_zones() as the topology-updater would publish it, written as a YAML document."""
    return f"""---
apiVersion: topology.node.k8s.io/v1alpha2
kind: NodeResourceTopology
metadata: {{name: {name}}}
topologyPolicies: [SingleNUMANodeContainerLevel]
attributes:
- {{name: topologyManagerPolicy, value: single-numa-node}}
- {{name: topologyManagerScope, value: container}}
zones:
- name: node-0
  type: Node
  costs: [{{name: node-0, value: 10}}, {{name: node-1, value: 21}}]
  resources:
  - {{name: cpu, capacity: "112", allocatable: "110", available: "110"}}
  - {{name: memory, capacity: "1Ti", allocatable: "1Ti", available: "1Ti"}}
  - {{name: nvidia.com/gpu, capacity: "4", allocatable: "4", available: "4"}}
- name: node-1
  type: Node
  costs: [{{name: node-0, value: 21}}, {{name: node-1, value: 10}}]
  resources:
  - {{name: cpu, capacity: "112", allocatable: "112", available: "112"}}
  - {{name: memory, capacity: "1Ti", allocatable: "1Ti", available: "1Ti"}}
  - {{name: nvidia.com/gpu, capacity: "4", allocatable: "4", available: "4"}}
"""


def test_scheduler_keeps_an_unalignable_pod_pending_with_upstream_reason():
    """NRTs given in the scenario (the topology-updater leaves those nodes alone): an 8-GPU pod fits no single
    NUMA node of a 4+4 board, so the plugin's Filter rejects both nodes with its reason."""
    from gpusim.cluster.scenario import load
    from gpusim.cluster.simulation import Simulation
    sim = Simulation(load(texts=[("<text>", SCENARIO + nrt_yaml("h100-0") + nrt_yaml("h100-1"))]))
    assert sorted(sim.addons["nfd-topology-updater"]) == []
    sim.ctx.env.run(until=5)
    failed = [e.message for e in sim.ctx.recorder.log if e.reason == "FailedScheduling"]
    assert failed and failed[0].startswith("0/2 nodes are available: 2 cannot align container.")
