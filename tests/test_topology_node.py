"""Topology on the node, end to end: device NUMA from the board into the kubelet (ListAndWatch, the checkpoint),
the NVIDIA plugin's GetPreferredAllocation (go-gpuallocator best-effort) and when the kubelet calls it
(devicesToAllocate), the Topology Manager's admission, and NFD's topology-updater with the NRT plugin."""
from __future__ import annotations

import random

import pytest

import gpusim as gs
from gpusim.hardware import topology as hw
from gpusim.node import gpuallocator as ga
from gpusim.node import gpuboard
from gpusim.node.deviceplugin import NvidiaDevicePlugin

GET_PREFERRED = "v1beta1.DevicePlugin/GetPreferredAllocation"


def pool(gpu: str, kubelet: str = "", count: int = 1, name: str = "n") -> str:
    extra = f"\n  kubelet: {kubelet}" if kubelet else ""
    return f"""apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {{name: {name}}}
spec:
  count: {count}
  gpu: {gpu}{extra}
"""


def pod(name: str, gpus: int, at: str = "0s", duration: str = "1h", init_gpus: int = 0) -> str:
    init = (f"\n  initContainers:\n  - {{name: init, image: x, resources: {{limits: {{nvidia.com/gpu: {init_gpus}}}}}}}"
            if init_gpus else "")
    return f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, annotations: {{gpusim.io/duration: {duration}, gpusim.io/submit-at: {at}}}}}
spec:
  restartPolicy: Never{init}
  containers:
  - {{name: main, image: cuda, resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}}}
"""


A100 = "{model: A100-SXM4-80GB, count: 8}"
H100 = "{model: H100-SXM5-80GB, count: 8}"


def gpu_indices(result, name: str) -> list[int]:
    return gs.pod_gpus(result, name)[1]


# --- device NUMA ---------------------------------------------------------------------------------------------
def test_listandwatch_reports_each_gpus_numa_node_and_the_checkpoint_groups_by_it():
    r = gs.run(text=pool(A100) + pod("a", 2) + pod("b", 2, "1s"), until="10m")
    kl = r.kubelets["n-0"]
    topo = kl.dm.device_topology["nvidia.com/gpu"]
    uuids = r.ctx.topology.uuids["n-0"]
    assert [topo[u] for u in uuids] == [[3], [3], [1], [1], [7], [7], [5], [5]]   # dgx-a100 NPS4 (DCGM#149)
    entries = {e["PodUID"]: e["DeviceIDs"] for e in kl.checkpoint_entries()}
    per_pod = {r.pod(n).metadata.uid: n for n in ("a", "b")}
    groups = {per_pod[uid]: ids for uid, ids in entries.items()}
    assert groups["a"] == {"3": [uuids[0], uuids[1]]}          # checkpoint.DevicesPerNUMA keyed by NUMA node
    assert groups["b"] == {"1": [uuids[2], uuids[3]]}


def test_replicas_and_vgpu_devices_carry_the_parent_topology():
    ts = """---
apiVersion: v1
kind: ConfigMap
metadata: {name: plugin, namespace: gpu-operator}
data:
  ts: |
    version: v1
    sharing:
      timeSlicing:
        resources: [{name: nvidia.com/gpu, replicas: 2}]
---
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {name: cluster-policy}
spec: {devicePlugin: {config: {name: plugin, default: ts}}}
"""
    r = gs.run(text=pool(H100) + ts, until="1s")
    topo = r.kubelets["n-0"].dm.device_topology["nvidia.com/gpu"]
    assert len(topo) == 16 and {tuple(v) for k, v in topo.items() if k.endswith("::0")} == {(0,), (1,)}
    vm = gs.run(text=pool("{model: A100-SXM4-80GB, count: 1, vgpu: {type: A100D-10C}}"), until="1s")
    assert list(vm.kubelets["n-0"].dm.device_topology["nvidia.com/gpu"].values()) == [None]


# --- GetPreferredAllocation -----------------------------------------------------------------------------------
def test_best_effort_keeps_the_pcie_pair_together_on_dgx_a100():
    """GPU 0 taken: lowest-index would give {1, 2} (across NUMA nodes); go-gpuallocator splits the free GPUs into
    pairs with the best total and returns the first best pair, {2, 3} (same PCIe switch, PXB). GPU 1 stays
    for a later 1-GPU pod."""
    r = gs.run(text=pool(A100) + pod("one", 1) + pod("two", 2, "1s"))
    assert gpu_indices(r, "one") == [0]
    assert gpu_indices(r, "two") == [2, 3]
    calls = [x for x in r.trace.records if x.function == GET_PREFERRED and x.object == "Pod default/two"]
    assert len(calls) == 1


def test_best_effort_uses_nvlink_on_dgx_1v():
    """DGX-1V (direct NVLinks, which go-gpuallocator sees): on the empty board a 2-GPU pod gets a doubly linked
    pair from the best pairing of all eight, {0, 3} (NV2 + PHB = 230); a 1-GPU pod then takes GPU 1; with
    {2, 4, 5, 6, 7} free the next pair is {4, 7} (NV2), where lowest-index would give {2, 4} (SYS, no NVLink)."""
    r = gs.run(text=pool("{model: V100-SXM2-32GB, count: 8}") + pod("a", 2) + pod("b", 1, "1s") + pod("c", 2, "2s"))
    g = hw.server_graph("dgx-1v")
    assert gpu_indices(r, "a") == [0, 3] and hw.gpu_pair_class(g, 0, 3) == "NV2"
    assert gpu_indices(r, "b") == [1]
    assert gpu_indices(r, "c") == [4, 7] and hw.gpu_pair_class(g, 4, 7) == "NV2"
    assert hw.gpu_pair_class(g, 2, 4) == "SYS"


def test_nvswitch_blind_spot_all_pairs_score_by_pcie_only():
    """On DGX H100 every pair's NVLinks end on an NVSwitch: go-gpuallocator scores by PCIe/NUMA only, so a
    4-GPU pod after a 1-GPU pod takes the free same-socket GPUs first (NODE 20 beats SYS 10)."""
    r = gs.run(text=pool(H100) + pod("one", 1) + pod("four", 4, "1s"))
    assert gpu_indices(r, "one") == [0]
    assert gpu_indices(r, "four") == [4, 5, 6, 7]


def test_replicas_keep_the_distributed_policy():
    plugin = NvidiaDevicePlugin(None, "n", gs.load(texts=[("x", pool(A100))]).gpus["n-0"][0],
                                [f"GPU-{i}" for i in range(8)], trace=None, board=hw.server_graph("dgx-a100"))
    srv = plugin.servers["nvidia.com/gpu"]
    assert srv.aligned_allocation_supported()
    assert srv.get_preferred_allocation(["GPU-1", "GPU-2", "GPU-3"], [], 2) == ["GPU-2", "GPU-3"]
    ids = [f"GPU-{i}::{k}" for i in range(2) for k in range(2)]
    assert srv.get_preferred_allocation(ids, [], 2) == ["GPU-0::0", "GPU-1::0"]   # spread over physical GPUs


# go-gpuallocator gpuallocator/besteffort_policy.go Allocate: the memoised search returns what the literal walk
# over every partition returns (random boards, free sets in index and shuffled order, required GPUs).
@pytest.mark.parametrize("board, params", [("dgx-1v", {}), ("dgx-a100", {}), ("dgx-a100", {"nps": 1}),
                                           ("dgx-h100", {}), ("pcie-l40s", {}), ("pcie", {"model": "T4", "gpus": 6})])
def test_best_effort_search_equals_the_exhaustive_walk(board, params):
    rng = random.Random(board + str(params))
    devs = gpuboard.board_devices(hw.server_graph(board, **params))
    policy = ga.BestEffortPolicy()
    for _ in range(80):
        k = rng.randint(1, len(devs))
        avail = rng.sample(devs, k)
        if rng.random() < 0.6:
            avail.sort(key=lambda d: d.index)
        size = rng.randint(0, k + 1)
        req = rng.sample(avail, rng.randint(0, min(size, k))) if size and rng.random() < 0.5 else []
        assert policy.allocate(avail, req, size) == policy.allocate_exhaustive(avail, req, size)


def test_best_effort_search_handles_sixteen_gpus():
    devs = gpuboard.board_devices(hw.server_graph("pcie", model="L40S", gpus=16))
    got = ga.BestEffortPolicy().allocate(devs[1:], [], 2)
    assert [d.index for d in got] == [2, 3]        # a PIX pair; GPU 1's partner is gone


# --- devicesToAllocate: when the plugin is asked ----------------------------------------------------------------
# kubernetes pkg/kubelet/cm/devicemanager/manager.go devicesToAllocate (v1.36): with a hint, aligned devices first;
# the plugin is asked only when more aligned devices are free than needed.
@pytest.mark.parametrize("kubelet, gpus, asked, where", [
    ("", 2, True, [0, 1]),                                                  # no hint: all noAffinity → asked
    ("{topologyManagerPolicy: single-numa-node}", 2, False, [2, 3]),       # needed == |aligned| → taken, no RPC
    ("{topologyManagerPolicy: single-numa-node, topologyManagerScope: pod}", 1, True, [2]),  # 1 < 2 aligned
    ("{topologyManagerPolicy: best-effort}", 4, False, [0, 1, 2, 3]),       # hint NUMA {1, 3}: 4 aligned, taken
    ("{topologyManagerPolicy: best-effort}", 3, True, [0, 1, 2]),           # same hint, 3 < 4 aligned → asked
])
def test_get_preferred_allocation_is_called_by_the_kubelets_rules(kubelet, gpus, asked, where):
    r = gs.run(text=pool(A100, kubelet) + pod("p", gpus))
    calls = [x for x in r.trace.records if x.function == GET_PREFERRED]
    assert bool(calls) is asked
    assert gpu_indices(r, "p") == where


# --- Topology Manager admission ---------------------------------------------------------------------------------
# pkg/kubelet/cm/topologymanager scope_container.go / scope_pod.go Admit with the device manager as hint provider
# (topology_hints.go): on DGX A100 NPS4 (2 GPUs per NUMA node) and DGX H100 (4 per NUMA node).
@pytest.mark.parametrize("gpu, kubelet, gpus, admitted", [
    (A100, "", 4, True),
    (A100, "{topologyManagerPolicy: best-effort}", 4, True),
    (A100, "{topologyManagerPolicy: restricted}", 2, True),
    (A100, "{topologyManagerPolicy: restricted}", 4, True),        # 2 NUMA nodes is the minimum: preferred
    (A100, "{topologyManagerPolicy: single-numa-node}", 2, True),
    (A100, "{topologyManagerPolicy: single-numa-node}", 4, False),
    (H100, "{topologyManagerPolicy: single-numa-node}", 4, True),
    (H100, "{topologyManagerPolicy: single-numa-node, topologyManagerScope: pod}", 5, False),
    (H100, "{topologyManagerPolicy: restricted}", 8, True),
])
def test_topology_manager_admission(gpu, kubelet, gpus, admitted):
    r = gs.run(text=pool(gpu, kubelet) + pod("p", gpus))
    p = gs.pod_json(r, "p")
    if admitted:
        assert p["phase"] == "Succeeded", p
    else:
        assert p["phase"] == "Failed" and p["reason"] == "TopologyAffinityError"
        assert p["message"] == "Pod was rejected: Resources cannot be allocated with Topology locality"
        ev = [e for e in r.events.log if e.object.name == "p" and e.reason == "TopologyAffinityError"]
        assert [(e.type, e.message) for e in ev] == [("Warning", "Resources cannot be allocated with Topology locality")]
        assert p["devices"] == {}


def test_restricted_rejects_when_the_free_gpus_sit_on_two_numa_nodes():
    """restricted: 1-GPU pods are packed NUMA node by NUMA node (the narrowest, lowest preferred hint); when the
    short ones end, the two free GPUs sit on NUMA 1 and NUMA 3. The scheduler binds a 2-GPU pod there (it is not
    topology-aware); the only hint spans two NUMA nodes while one would do, so it is not preferred: rejected."""
    text = pool(A100, "{topologyManagerPolicy: restricted}")
    text += pod("a", 1) + pod("b", 1, "1s", "10s") + pod("c", 1, "2s") + pod("d", 1, "3s", "10s")
    text += pod("e", 2, "4s") + pod("f", 2, "5s") + pod("late", 2, "100s")
    r = gs.run(text=text)
    assert [gpu_indices(r, n) for n in "abcdef"] == [[2], [3], [0], [1], [6, 7], [4, 5]]
    late = gs.pod_json(r, "late")
    assert late["nodeName"] == "n-0" and late["reason"] == "TopologyAffinityError"
    relaxed = gs.run(text=text.replace("restricted", "best-effort"))
    assert gs.pod_json(relaxed, "late")["phase"] == "Succeeded" and gpu_indices(relaxed, "late") == [1, 3]


def test_container_scope_aligns_each_container_init_first():
    r = gs.run(text=pool(H100, "{topologyManagerPolicy: single-numa-node}") + pod("p", 4, init_gpus=4))
    assert gs.pod_json(r, "p")["phase"] == "Succeeded"
    hints = [x for x in r.trace.records if x.function == "topologymanager.(*scope).calculateAffinity"]
    assert [x.details["container"] for x in hints] == ["init", "main"]
    assert gpu_indices(r, "p") == [0, 1, 2, 3]     # the init container's devices are reused


# --- NFD topology-updater and NodeResourceTopologyMatch ------------------------------------------------------
NRT_PROFILE = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins: {multiPoint: {enabled: [{name: NodeResourceTopologyMatch}]}}
---
"""


def zone_available(nrt) -> dict[str, dict[str, str]]:
    return {z.name: {r.name: r.available for r in z.resources} for z in nrt.zones}


def test_updater_is_installed_only_with_the_plugin():
    assert "nfd-topology-updater" not in gs.run(text=pool(H100), until="1s").addons
    r = gs.run(text=NRT_PROFILE + pool(H100), until="1s")
    assert sorted(r.addons["nfd-topology-updater"]) == ["n-0"]


def test_updater_publishes_and_follows_allocations():
    """The NRT's zones follow the device manager: 4 GPUs per NUMA node on DGX H100; a 3-GPU pod takes them from
    NUMA 0 while it runs, and the updater gives them back when it ends (checkpoint watch)."""
    r = gs.run(text=NRT_PROFILE + pool(H100, "{topologyManagerPolicy: single-numa-node, topologyManagerScope: pod}")
               + pod("p", 3, duration="10m"), until="5m")
    nrt = r.api.get("NodeResourceTopology", "", "n-0")
    assert nrt.topology_policies == ["SingleNUMANodePodLevel"]
    assert [(a.name, a.value) for a in nrt.attributes] == [("topologyManagerPolicy", "single-numa-node"),
                                                           ("topologyManagerScope", "pod")]
    assert zone_available(nrt) == {"node-0": {"nvidia.com/gpu": "1"}, "node-1": {"nvidia.com/gpu": "4"}}
    assert [(c.name, c.value) for c in nrt.zones[0].costs] == [("node-0", 10), ("node-1", 21)]
    done = gs.run(text=NRT_PROFILE + pool(H100) + pod("p", 3, duration="10m"))
    assert zone_available(done.api.get("NodeResourceTopology", "", "n-0"))["node-0"] == {"nvidia.com/gpu": "4"}


def test_numa_node_without_devices_reports_its_cpus_as_reserved():
    """NFD's Aggregate: a NUMA node with no allocatable resource gets cpu 0/0 with its CPUs as capacity (the CPU
    manager's none policy reports no CPUs). DGX A100 NPS4: NUMA 0, 2, 4, 6 hold no GPU."""
    r = gs.run(text=NRT_PROFILE + pool(A100), until="1s")
    z = {z.name: {x.name: (x.capacity, x.allocatable, x.available) for x in z.resources}
         for z in r.api.get("NodeResourceTopology", "", "n-0").zones}
    assert z["node-0"] == {"cpu": ("32", "0", "0")} and z["node-3"] == {"nvidia.com/gpu": ("2", "2", "2")}


def test_pending_pod_is_requeued_on_an_nrt_update_and_lands():
    """single-numa-node: two 3-GPU pods take NUMA 0 and NUMA 1 (one GPU left on each), so a 2-GPU pod fits the
    node's free count but no single NUMA node, and stays Pending with the plugin's reason instead of being
    rejected by the kubelet. When the first pod ends, the updater's NRT update requeues it
    (NodeResourceTopology/Update) and it runs on NUMA 0."""
    text = (NRT_PROFILE + pool(H100, "{topologyManagerPolicy: single-numa-node}") + pod("a", 3, duration="10m")
            + pod("b", 3, "1s") + pod("big", 2, "2s", duration="10m"))
    r = gs.run(text=text)
    assert gpu_indices(r, "a") == [0, 1, 2] and gpu_indices(r, "b") == [4, 5, 6]
    big = gs.pod_json(r, "big")
    assert big["phase"] == "Succeeded" and gpu_indices(r, "big") == [0, 1]
    fails = [e for e in r.events.log if e.object.name == "big" and e.reason == "FailedScheduling"]
    assert fails and fails[0].message.startswith("0/1 nodes are available: 1 cannot align container.")
    a_end = gs.pod_json(r, "a")["finishedAt"]
    assert a_end <= big["scheduledAt"] < a_end + 1
    assert [x for x in r.trace.records if x.function.startswith("topologyupdater.") and x.time == a_end]


def test_an_nrt_update_alone_moves_the_rejected_pod():
    """EventsToRegister: only the NRT changes (a scenario-given NRT, edited through the apiserver at t=100s);
    the pod rejected with "cannot align container" is moved and scheduled right after its backoff."""
    from gpusim.cluster.scenario import load
    from gpusim.cluster.simulation import Simulation
    nrt = """---
apiVersion: topology.node.k8s.io/v1alpha2
kind: NodeResourceTopology
metadata: {name: n-0}
topologyPolicies: [SingleNUMANodeContainerLevel]
zones:
- {name: node-0, type: Node, resources: [{name: nvidia.com/gpu, capacity: "4", allocatable: "4", available: "1"}]}
- {name: node-1, type: Node, resources: [{name: nvidia.com/gpu, capacity: "4", allocatable: "4", available: "1"}]}
"""
    sim = Simulation(load(texts=[("t", NRT_PROFILE + pool(H100) + nrt + pod("p", 2))]))
    env, api = sim.ctx.env, sim.ctx.api

    def edit():
        yield env.timeout(100)
        obj = api.get("NodeResourceTopology", "", "n-0")
        obj.zones[0].resources[0].available = "4"
        api.update(obj)
    env.process(edit())
    r = sim.run()
    p = gs.pod_json(r, "p")
    assert 100 <= p["scheduledAt"] <= 111 and p["phase"] == "Succeeded"
    assert "cannot align container" in next(e.message for e in r.events.log if e.reason == "FailedScheduling")
