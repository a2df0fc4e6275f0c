"""Topology experiments for chapters 02.3 (拓扑) and 05.7 (拓扑感知调度).

Chapter 02.3 works on the hardware model alone: a cluster of identical boards behind a fabric
(:mod:`gpusim.hardware.topology`, :mod:`gpusim.hardware.fabric`), a job's placement written as "which GPUs on
which node", and the ring all-reduce cost of that placement (:mod:`gpusim.hardware.collectives`, the topology
reference's §3.3 model, DERIVED from NCCL ``src/graph/tuning.cc``). Chapter 05.7 runs whole scenarios: the same
multi-node training job placed by kube-scheduler alone (topology-blind), by Kueue Topology-Aware Scheduling
(``kueue.x-k8s.io/podset-required-topology``, kueue ``pkg/cache/scheduler/tas_flavor_snapshot.go``) and by
Volcano's ``network-topology-aware`` plugin over HyperNodes (volcano
``pkg/scheduler/plugins/network-topology-aware``), and node-side demos of the device plugin's
GetPreferredAllocation, the kubelet's Topology Manager and NodeResourceTopologyMatch.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from ..cluster.simulation import run
from ..hardware import collectives, topology
from ..hardware.fabric import Fabric, FabricSpec, build_fabric
from ..views.topology import pod_gpus
from ..volcano.conf import DEFAULT_SCHEDULER_CONF, configmap_yaml

GRADIENT_BYTES = 14e9          # a 7B-parameter model in bf16: 7e9 × 2 bytes of gradients per step
COMPUTE_SECONDS = 1.0          # the step's compute time (gpusim.io/step-time)
BOARDS = ("dgx-1v", "dgx-a100", "dgx-h100", "hgx-h200", "gb200-nvl72", "pcie-l40s")

# Volcano's default configuration without overcommit, with binpack and the network-topology-aware plugin
# (volcano pkg/scheduler/plugins/network-topology-aware), as examples/volcano-hypernode.yaml configures it
NETWORK_TOPOLOGY_CONF = (DEFAULT_SCHEDULER_CONF.replace("  - name: overcommit\n", "")
                         + "  - name: binpack\n  - name: network-topology-aware\n")


# --- chapter 02.3: the hardware model --------------------------------------------------------------------------
@dataclass(frozen=True)
class Cluster:
    """``nodes`` identical boards (``board``) attached in order to ``fabric``."""
    board: str
    servers: tuple[tuple[str, Any], ...]
    fabric: Fabric

    def gpus_per_node(self) -> int:
        return len(topology.gpus(self.servers[0][1]))


def make_cluster(board: str = "dgx-h100", nodes: int = 32, fabric: str = "RailOptimized", scalable_unit: int = 8,
                 nodes_per_leaf: int = 8, oversubscription: float = 1.0, load: float = 0.0) -> Cluster:
    """Nodes ``node-0 … node-(n-1)`` on ``board`` (GB200 trays fill NVL72 racks of 18, as a NodePool does) behind a
    ``RailOptimized`` fabric (scalable units of ``scalable_unit`` nodes, a leaf per rail per unit) or a ``Tree``
    (``nodes_per_leaf`` nodes per leaf), with the spine's ``oversubscription`` and background ``load``."""
    if nodes < 1:
        raise ValueError(f"nodes: must be >= 1, got {nodes}")
    servers = tuple((f"node-{i}", topology.server_graph(board, **topology.node_board_params(board, {}, i)))
                    for i in range(nodes))
    spec = (FabricSpec(type="RailOptimized", scalable_unit=scalable_unit, oversubscription=oversubscription,
                       load=load, labels="none") if fabric == "RailOptimized" else
            FabricSpec(type="Tree", nodes_per_leaf=nodes_per_leaf, oversubscription=oversubscription, load=load,
                       labels="none"))
    return Cluster(board, servers, build_fabric(list(servers), spec))


def placement(cluster: Cluster, gpus: int, per_node: Optional[int] = None, rails: str = "aligned",
              stride: int = 1) -> list[tuple[str, Any, tuple[int, ...]]]:
    """A job of ``gpus`` GPUs, ``per_node`` on each node it uses (default: whole nodes). Nodes are taken every
    ``stride``-th node (1 = neighbours, i.e. packed under the same leaves; more = spread over the fabric).
    ``rails``: ``aligned`` — every node gives the same GPU indices (0…per_node−1), so ring flows stay on their
    rails; ``mismatch`` — every other node gives the upper indices instead (what two independent device-plugin
    choices produce when the lower half of those nodes is busy)."""
    size = cluster.gpus_per_node()
    per_node = per_node or min(size, gpus)
    if not 1 <= per_node <= size:
        raise ValueError(f"per_node: must be in 1..{size}, got {per_node}")
    if rails not in ("aligned", "mismatch"):
        raise ValueError(f"rails: must be aligned or mismatch, got {rails!r}")
    count = -(-gpus // per_node)
    picked = list(range(0, len(cluster.servers), stride))[:count]
    if len(picked) < count:
        raise ValueError(f"{gpus} GPUs at {per_node} per node (stride {stride}) need {count} nodes; "
                         f"the cluster has {len(cluster.servers)}")
    out, left = [], gpus
    for k, i in enumerate(picked):
        take = min(per_node, left)
        low = rails == "mismatch" and k % 2 == 1
        ids = tuple(range(size - take, size)) if low else tuple(range(take))
        name, g = cluster.servers[i]
        out.append((name, g, ids))
        left -= take
    return out


def allreduce_row(label: str, cluster: Cluster, where: Sequence[Any], size_bytes: float = GRADIENT_BYTES,
                  compute: float = COMPUTE_SECONDS, overlap: float = 0.0) -> dict[str, Any]:
    """One row for :func:`gpusim.views.topology.plot_step_time`: the all-reduce of ``where`` on the cluster."""
    cost = collectives.allreduce(where, size_bytes, cluster.fabric)
    return {"label": label, "gpus": cost.ranks, "nodes": len(where), "compute": compute,
            "allreduce": (1.0 - overlap) * cost.seconds, "busbw": cost.bus_bandwidth,
            "bandwidth": cost.bandwidth, "bottleneck": cost.bottleneck, "f_fabric": cost.f_fabric,
            "step": collectives.step_time(compute, cost.seconds, overlap), "cost": cost}


def placement_rows(board: str = "dgx-h100", gpus: int = 32, oversubscription: float = 2.0, load: float = 0.5,
                   size_bytes: float = GRADIENT_BYTES, compute: float = COMPUTE_SECONDS) -> list[dict[str, Any]]:
    """The same ``gpus``-GPU job placed six ways on 32 nodes (scalable units of 8, spine ``oversubscription``:1,
    background ``load``): packed whole nodes; packed but crossing a scalable unit; half nodes with the same rails;
    half nodes with mismatched rails; one GPU per node; and whole nodes spread over the scalable units."""
    c = make_cluster(board, 32, oversubscription=oversubscription, load=load)
    per = c.gpus_per_node()
    n = -(-gpus // per)
    cross = [c.servers[i] for i in range(8 - n // 2, 8 - n // 2 + n)]      # straddles the first SU boundary
    return [
        allreduce_row(f"packed: {n} nodes x {per}", c, placement(c, gpus), size_bytes, compute),
        allreduce_row("packed across 2 SUs", c, [(s[0], s[1], tuple(range(per))) for s in cross], size_bytes,
                      compute),
        allreduce_row(f"{2 * n} nodes x {per // 2}, same rails", c, placement(c, gpus, per // 2), size_bytes,
                      compute),
        allreduce_row(f"{2 * n} nodes x {per // 2}, rail mismatch", c, placement(c, gpus, per // 2, "mismatch"),
                      size_bytes, compute),
        allreduce_row(f"{min(gpus, 32)} nodes x 1", c, placement(c, min(gpus, 32), 1), size_bytes, compute),
        allreduce_row(f"spread: {n} nodes x {per}, 1 per SU", c, placement(c, gpus, stride=8), size_bytes,
                      compute),
    ]


def cliff_rows(sizes: Sequence[int] = (8, 16, 32, 64, 128, 256), board: str = "dgx-h100",
               free_whole_nodes: int = 8, oversubscription: float = 2.0, load: float = 0.5,
               size_bytes: float = GRADIENT_BYTES, compute: float = COMPUTE_SECONDS) -> list[dict[str, Any]]:
    """Step time against job size in a shared 64-node cluster (scalable units of 8 nodes, spine
    ``oversubscription``:1 with background ``load``) where only the first ``free_whole_nodes`` nodes are entirely
    free and every other node has half of its GPUs busy: the lower half free on even-numbered nodes, the upper
    half on odd ones. A topology-blind scheduler counts free GPUs: it takes the whole free nodes, then the
    half-free ones in node order, whatever half they offer (rail mismatch between neighbours). Topology-aware
    placement takes whole nodes only, scalable unit after scalable unit (it waits for them rather than accept
    halves)."""
    c = make_cluster(board, 64, oversubscription=oversubscription, load=load)
    per = c.gpus_per_node()
    rows = []
    for gpus in sizes:
        aware = placement(c, gpus)
        blind: list[tuple[str, Any, tuple[int, ...]]] = []
        left = gpus
        for i, (name, g) in enumerate(c.servers):
            if left <= 0:
                break
            if i < free_whole_nodes:
                ids = tuple(range(min(per, left)))
            else:
                half = per // 2
                start = 0 if i % 2 == 0 else half
                ids = tuple(range(start, start + min(half, left)))
            blind.append((name, g, ids))
            left -= len(ids)
        for policy, where in (("topology-aware", aware), ("topology-blind", blind)):
            row = allreduce_row(f"{gpus} GPUs, {policy}", c, where, size_bytes, compute)
            rows.append({**row, "policy": policy})
    return rows


def explore_allreduce(board: str = "dgx-h100", gpus: int = 64, per_node: int = 8, rails: str = "aligned",
                      spread: bool = False, oversubscription: float = 1.0, load: float = 0.0,
                      size_bytes: float = GRADIENT_BYTES, show: bool = True) -> dict[str, Any]:
    """One placement on 64 nodes of ``board`` (scalable units of 8): bus bandwidth, its bottleneck and the step
    time; prints them and draws the step bar (``show``). The widget's function and its static twin."""
    from ..views.topology import plot_step_time
    c = make_cluster(board, 64, oversubscription=oversubscription, load=load)
    per_node = min(per_node, c.gpus_per_node())
    where = placement(c, gpus, per_node, rails, stride=8 if spread else 1)
    row = allreduce_row(f"{board}: {len(where)} nodes x {per_node}", c, where, size_bytes)
    if show:
        print(f"{board}, {gpus} GPUs on {len(where)} nodes ({per_node} per node, rails {rails}, "
              f"{'spread over SUs' if spread else 'packed'}), spine {oversubscription:g}:1, load {load:g}")
        print(f"bus bandwidth B = {row['bandwidth']:.1f} GB/s ({row['bottleneck']}); "
              f"all-reduce {row['allreduce']:.3f} s; step {row['step']:.3f} s")
        plot_step_time([row], title=f"Step time, {gpus} GPUs on {board}")
    return {k: v for k, v in row.items() if k != "cost"}


def allreduce_widget(board: str = "dgx-h100", gpus: int = 64):
    """Pick the board and the placement; reruns :func:`explore_allreduce` (needs a running kernel; its static
    twin is one direct call)."""
    import ipywidgets as w

    from ..views.display import Shown
    return Shown(w.interactive(
        lambda board, gpus, per_node, rails, spread, oversubscription, load: explore_allreduce(
            board, gpus, per_node, rails, spread, oversubscription, load) and None,
        board=w.Dropdown(options=list(BOARDS), value=board),
        gpus=w.SelectionSlider(options=[8, 16, 32, 64, 128, 256], value=gpus),
        per_node=w.IntSlider(value=8, min=1, max=8), rails=w.Dropdown(options=["aligned", "mismatch"]),
        spread=w.Checkbox(value=False, description="spread over SUs"),
        oversubscription=w.Dropdown(options=[1.0, 2.0, 4.0], value=1.0),
        load=w.FloatSlider(value=0.0, min=0.0, max=1.0, step=0.25)))


# --- chapter 05.7: scenarios ----------------------------------------------------------------------------------
def _training_annotations(workers: int, steps: int, step_time: str, allreduce: str) -> dict[str, str]:
    return {"gpusim.io/training-workers": str(workers), "gpusim.io/training-steps": str(steps),
            "gpusim.io/step-time": step_time, "gpusim.io/allreduce-bytes": allreduce}


def placement_scenario(mode: str = "blind", workers: int = 4, nodes: int = 16, nodes_per_leaf: int = 4,
                       oversubscription: float = 4.0, load: float = 0.75, steps: int = 100, step_time: str = "1s",
                       allreduce: str = "14G", seed: int = 1) -> str:
    """YAML of one multi-node training job (``workers`` pods of 8 GPUs, ``allreduce`` bytes reduced per step) on
    ``nodes`` DGX H100 nodes behind a Tree fabric (``nodes_per_leaf`` per leaf = one rack; the spine
    ``oversubscription``:1 and loaded by other tenants). ``mode``: ``blind`` (a batch/v1 Job, kube-scheduler
    alone), ``kueue-tas`` (the Job through Kueue with ``podset-required-topology`` rack; Topology levels block,
    rack, hostname from the fabric's Kueue-style labels) or ``volcano-hypernode`` (a Volcano Job,
    ``networkTopology: {mode: hard, highestTierAllowed: 1}``, one tier-1 HyperNode per leaf from the fabric's
    ``volcano.sh/tor`` labels and a tier-2 spine)."""
    if mode not in ("blind", "kueue-tas", "volcano-hypernode"):
        raise ValueError(f"mode: must be blind, kueue-tas or volcano-hypernode, got {mode!r}")
    labels = "volcano" if mode == "volcano-hypernode" else "kueue"
    docs = [f"""apiVersion: gpusim.io/v1alpha1
kind: Simulation
metadata: {{name: placement-{mode}}}
spec: {{seed: {seed}}}
---
apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {{name: h100}}
spec: {{count: {nodes}, gpu: {{model: H100-SXM5-80GB, count: 8}}, cpu: "224", memory: 2Ti}}
---
apiVersion: gpusim.io/v1alpha1
kind: Fabric
metadata: {{name: compute}}
spec: {{type: Tree, nodesPerLeaf: {nodes_per_leaf}, oversubscription: {oversubscription}, load: {load}, labels: {labels}}}
"""]
    ann = _training_annotations(workers, steps, step_time, allreduce)
    container = "{name: trainer, image: trainer:1, resources: {limits: {nvidia.com/gpu: 8}}}"
    if mode == "volcano-hypernode":
        leaves = -(-nodes // nodes_per_leaf)
        for i in range(leaves):
            docs.append(f"""apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {{name: leaf{i}}}
spec:
  tier: 1
  tierName: leaf
  members:
  - type: Node
    selector:
      labelMatch:
        matchLabels: {{volcano.sh/tor: leaf{i}}}
""")
        members = "\n".join(f"  - {{type: HyperNode, selector: {{exactMatch: {{name: leaf{i}}}}}}}" for i in range(leaves))
        docs.append(f"""apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {{name: spine}}
spec:
  tier: 2
  tierName: spine
  members:
{members}
""")
        docs.append(configmap_yaml(NETWORK_TOPOLOGY_CONF))
        docs.append(f"""apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {{name: llm}}
spec:
  schedulerName: volcano
  minAvailable: {workers}
  networkTopology: {{mode: hard, highestTierAllowed: 1}}
  tasks:
  - name: worker
    replicas: {workers}
    template:
      metadata:
        annotations: {json.dumps({**ann, "gpusim.io/training-group": "llm"})}
      spec:
        restartPolicy: Never
        containers:
        - {container}
""")
        return "---\n".join(docs)
    if mode == "kueue-tas":
        ann["kueue.x-k8s.io/podset-required-topology"] = "cloud.provider.com/topology-rack"
        docs.append(f"""apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {{name: default}}
spec:
  levels:
  - nodeLabel: cloud.provider.com/topology-block
  - nodeLabel: cloud.provider.com/topology-rack
  - nodeLabel: kubernetes.io/hostname
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: h100}}
spec:
  nodeLabels: {{nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}
  topologyName: default
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: training}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: h100
      resources: [{{name: nvidia.com/gpu, nominalQuota: {8 * nodes}}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: training, namespace: default}}
spec: {{clusterQueue: training}}
""")
    queue = "\n  labels: {kueue.x-k8s.io/queue-name: training}" if mode == "kueue-tas" else ""
    docs.append(f"""apiVersion: batch/v1
kind: Job
metadata:
  name: llm{queue}
spec:
  completions: {workers}
  parallelism: {workers}
  completionMode: Indexed
  template:
    metadata:
      annotations: {json.dumps(ann)}
    spec:
      restartPolicy: Never
      containers:
      - {container}
""")
    return "---\n".join(docs)


def rack_of(result: Any, node: str) -> str:
    """The node's rack (leaf) label, in the Kueue or Volcano label style the fabric wrote."""
    labels = result.api.get("Node", "", node).metadata.labels
    return labels.get("cloud.provider.com/topology-rack") or labels.get("volcano.sh/tor") or "-"


def compare_placement(modes: Sequence[str] = ("blind", "kueue-tas", "volcano-hypernode"),
                      **kwargs: Any) -> list[dict[str, Any]]:
    """Run :func:`placement_scenario` once per mode → one row each: nodes and racks the workers got, bus
    bandwidth, step time, all-reduce time per step and when the job finished (seconds)."""
    from ..records import to_json
    rows = []
    for mode in modes:
        r = run(text=placement_scenario(mode, **kwargs))
        rec = to_json(r)
        group = next(g for g in rec["training"] if g["group"] == "llm")
        nodes = [p["node"] for p in group["placement"]]
        finished = [p["finishedAt"] for p in rec["pods"] if p.get("finishedAt") is not None and
                    p["name"].startswith("llm")]
        rows.append({"mode": mode, "nodes": nodes, "racks": sorted({rack_of(r, n) for n in nodes}),
                     "busbw": group["busBandwidthGBps"], "step": group["stepSeconds"],
                     "allreduce": group["allreduceSeconds"], "finished": max(finished) if finished else None,
                     "result": r})
    return rows


def format_placement(rows: Sequence[dict[str, Any]]) -> str:
    """:func:`compare_placement`'s rows as a table."""
    out = [f"{'MODE':<18} {'RACKS':<10} {'BUSBW GB/s':>10} {'STEP s':>9} {'FINISHED s':>11}  NODES"]
    for r in rows:
        out.append(f"{r['mode']:<18} {','.join(r['racks']):<10} {r['busbw']:>10.1f} {r['step']:>9.4f} "
                   f"{r['finished']:>11.1f}  {', '.join(r['nodes'])}")
    return "\n".join(out)


def placement_step_rows(rows: Sequence[dict[str, Any]], compute: float = COMPUTE_SECONDS) -> list[dict[str, Any]]:
    """:func:`compare_placement`'s rows for :func:`gpusim.views.topology.plot_step_time`."""
    return [{"label": f"{r['mode']} ({len(r['racks'])} rack{'s' if len(r['racks']) > 1 else ''})",
             "compute": compute, "allreduce": r["step"] - compute, "busbw": r["busbw"]} for r in rows]


# --- chapter 05.7: node-side demos ------------------------------------------------------------------------------
def _pool(gpu: str, kubelet: str = "", profile: str = "") -> str:
    extra = f"\n  kubelet: {kubelet}" if kubelet else ""
    return f"""{profile}apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {{name: n}}
spec:
  count: 1
  gpu: {gpu}{extra}
"""


def _pod(name: str, gpus: int, at: str = "0s", duration: str = "1h") -> str:
    return f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, annotations: {{gpusim.io/duration: {duration}, gpusim.io/submit-at: {at}}}}}
spec:
  restartPolicy: Never
  containers:
  - {{name: main, image: cuda, resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}}}
"""


A100 = "{model: A100-SXM4-80GB, count: 8}"
H100 = "{model: H100-SXM5-80GB, count: 8}"
V100 = "{model: V100-SXM2-32GB, count: 8}"
GET_PREFERRED = "v1beta1.DevicePlugin/GetPreferredAllocation"
NRT_PROFILE = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins: {multiPoint: {enabled: [{name: NodeResourceTopologyMatch}]}}
---
"""


def preferred_allocation_demo(second: Optional[int] = None) -> list[dict[str, Any]]:
    """GetPreferredAllocation (go-gpuallocator best-effort) on three boards, each a 1-GPU pod then a bigger one:
    the GPUs each pod got, their pair class, NUMA nodes, whether the kubelet called the plugin, and what taking
    the lowest free indices would have given (``lowestIndex``). ``second``: the second pod's GPU count on every
    board (default 2, 2 and 4)."""
    cases = [(b, g, second or n) for b, g, n in (("dgx-a100", A100, 2), ("dgx-1v", V100, 2), ("dgx-h100", H100, 4))]
    rows = []
    for board, gpu, n in cases:
        r = run(text=_pool(gpu) + _pod("one", 1) + _pod("two", n, "1s"))
        g = topology.server_graph(board)
        for name in ("one", "two"):
            ids = pod_gpus(r, name)[1]
            calls = [x for x in r.trace.records if x.function == GET_PREFERRED and x.object == f"Pod default/{name}"]
            pairs = sorted({topology.gpu_pair_class(g, a, b) for a in ids for b in ids if a < b})
            numa = sorted({topology.gpu_numa(g)[i] for i in ids})
            rows.append({"board": board, "pod": name, "gpus": ids, "pairs": pairs, "numa": numa,
                         "asked": bool(calls), "lowestIndex": list(range(1, 1 + len(ids))) if name == "two" else [0]})
    return rows


def preferred_allocation_rules() -> list[dict[str, Any]]:
    """When the kubelet asks the plugin (kubernetes pkg/kubelet/cm/devicemanager/manager.go devicesToAllocate): one
    pod on an empty DGX A100 under a Topology Manager policy; whether GetPreferredAllocation was called and the
    GPUs the pod got. With a hint, the plugin is asked only if more aligned devices are free than needed."""
    cases = [("none", 2), ("single-numa-node", 2), ("best-effort", 4), ("best-effort", 3)]
    rows = []
    for policy, gpus in cases:
        r = topology_manager_run(policy, gpus)
        calls = [x for x in r.trace.records if x.function == GET_PREFERRED]
        rows.append({"policy": policy, "gpus": gpus, "asked": bool(calls), "got": pod_gpus(r, "p")[1]})
    return rows


def topology_manager_run(policy: str = "single-numa-node", gpus: int = 4, scope: str = "container") -> Any:
    """Run one pod of ``gpus`` GPUs (10 minutes) on a DGX A100 whose kubelet has ``topologyManagerPolicy: policy``
    and ``topologyManagerScope: scope`` (KubeletConfiguration field names)."""
    kubelet = "" if policy == "none" and scope == "container" else (
        f"{{topologyManagerPolicy: {policy}, topologyManagerScope: {scope}}}")
    return run(text=_pool(A100, kubelet) + _pod("p", gpus, duration="10m"))


def topology_manager_demo(gpus: int = 4, policies: Sequence[str] = ("none", "best-effort", "restricted",
                                                                      "single-numa-node")) -> list[dict[str, Any]]:
    """One pod of ``gpus`` GPUs on a DGX A100 (NPS4: two GPUs per NUMA node) under each Topology Manager policy:
    its phase, reason and the NUMA nodes of the GPUs it got."""
    g = topology.server_graph("dgx-a100")
    rows = []
    for policy in policies:
        r = topology_manager_run(policy, gpus)
        pod = r.api.get("Pod", "default", "p")
        ids = pod_gpus(r, "p")[1]
        rows.append({"policy": policy, "phase": pod.status.phase, "reason": pod.status.reason or "",
                     "message": pod.status.message or "", "gpus": ids,
                     "numa": sorted({topology.gpu_numa(g)[i] for i in ids})})
    return rows


def nrt_demo(until: Optional[str] = None) -> Any:
    """NodeResourceTopologyMatch on a DGX H100 with ``single-numa-node``: two 3-GPU pods leave one GPU on each
    NUMA node, so a 2-GPU pod fits the node's count but no NUMA node. The scheduler keeps it Pending (``cannot
    align container``) instead of letting the kubelet fail it; it lands when the first pod ends. ``until``: stop
    the run there (a Go duration) to look at the NRT while the pods hold their GPUs."""
    text = (NRT_PROFILE + _pool(H100, "{topologyManagerPolicy: single-numa-node}") + _pod("a", 3, duration="10m")
            + _pod("b", 3, "1s") + _pod("big", 2, "2s", duration="10m"))
    return run(text=text, until=until)


def nrt_zones(result: Any, node: str = "n-0") -> list[dict[str, Any]]:
    """The node's NodeResourceTopology zones: GPUs capacity/available per NUMA zone."""
    nrt = result.api.get("NodeResourceTopology", "", node)
    return [{"zone": z.name, **{r.name: f"{r.available}/{r.capacity}" for r in z.resources}} for z in nrt.zones]


def board_table(boards: Sequence[str] = BOARDS) -> str:
    """Markdown table of the boards gpusim models: GPUs, model, GPU0–GPU1 link class, NUMA nodes, compute NICs and
    their speed, and the §3.3 all-reduce bus bandwidth of all the board's GPUs on one node and on two nodes."""
    rows = {r["board"]: r for r in topology.boards_summary()}
    out = ["| board | GPUs | model | GPU0-GPU1 | NUMA nodes | compute NICs | B, 1 node (GB/s) | B, 2 nodes (GB/s) |",
           "|---|---|---|---|---|---|---|---|"]
    for name in boards:
        r = rows[name]
        c = make_cluster(name, 2 if name != "gb200-nvl72" else 19)
        one = collectives.allreduce([placement(c, r["gpus"])[0]], GRADIENT_BYTES, c.fabric).bandwidth
        ends = [c.servers[0], c.servers[-1]]       # for GB200: trays in two racks (two NVLink domains)
        two = collectives.allreduce([(s[0], s[1], tuple(range(r["gpus"]))) for s in ends], GRADIENT_BYTES,
                                    c.fabric).bandwidth
        out.append(f"| `{name}` | {r['gpus']} | {r['model']} | {r['gpu0-gpu1']} | {r['numa']} | "
                   f"{r['computeNics']} x {r['nicGbps']}G | {one:.0f} | {two:.0f} |")
    return "\n".join(out)
