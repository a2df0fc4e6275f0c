"""Step time that depends on placement: the training workload with ``gpusim.io/allreduce-bytes`` costs each
step's ring all-reduce (gpusim.hardware.collectives, topology reference §3.3) at the placement the workers
actually got; the ``-o json`` record (``gpus`` per node, ``training``), ``describe node``, ``gpusim topo -m`` and
the views read it back."""
from __future__ import annotations

import json

import matplotlib
import pytest

import gpusim as gs
from gpusim.api.errors import InputError
from gpusim.cli import main
from gpusim.cluster.scenario import load
from gpusim.hardware import topology as hw

matplotlib.use("Agg")


def pool(model: str, count: int, nodes: int, name: str = "n", extra: str = "") -> str:
    return f"""apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {{name: {name}}}
spec: {{count: {nodes}, gpu: {{model: {model}, count: {count}{extra}}}, cpu: "224", memory: 2Ti}}
"""


def job(name: str, workers: int, gpus: int, step: str = "1s", steps: int = 100, allreduce: str = "14G",
        overlap: str = "", pods_per_node: str = "") -> str:
    ann = {"gpusim.io/training-workers": str(workers), "gpusim.io/training-steps": str(steps),
           "gpusim.io/step-time": step}
    if allreduce:
        ann["gpusim.io/allreduce-bytes"] = allreduce
    if overlap:
        ann["gpusim.io/allreduce-overlap"] = overlap
    return f"""---
apiVersion: batch/v1
kind: Job
metadata: {{name: {name}}}
spec:
  completions: {workers}
  parallelism: {workers}
  completionMode: Indexed
  template:
    metadata:
      annotations: {json.dumps(ann)}
    spec:
      restartPolicy: Never{pods_per_node}
      containers:
      - {{name: main, image: train, resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}}}
"""


def training(result, group: str) -> dict:
    return next(g for g in gs.to_json(result)["training"] if g["group"] == group)


# --- the anchors, through the whole simulation ----------------------------------------------------------------
@pytest.mark.parametrize("model, measured", [
    ("A100-SXM4-80GB", 192.0),     # DGX A100 multi-node, 8x HDR (nccl#812 via nccl#1576)
    ("H100-SXM5-80GB", 384.0),     # DGX H100 multi-node, 8x NDR (topology.md §3.3: 368-392 measured)
])
def test_two_full_nodes_reproduce_the_measured_bus_bandwidth(model, measured):
    r = gs.run(text=pool(model, 8, 2) + job("llm", 2, 8))
    g = training(r, "llm")
    assert [p["gpus"] for p in g["placement"]] == [list(range(8))] * 2
    cost = gs.group_allreduce(r, "llm")
    assert cost.bandwidth == pytest.approx(measured, rel=0.02)
    assert g["busBandwidthGBps"] == pytest.approx(measured, rel=0.02)      # 14 GB: latency is negligible
    t = 14e9 * 2 * 15 / 16 / (cost.bandwidth * 1e9) + cost.latency_us * 1e-6
    assert g["allreduceSeconds"] == pytest.approx(t, abs=1e-6)         # the record rounds to the microsecond
    assert g["stepSeconds"] == pytest.approx(1 + t, abs=1e-6)


def test_steps_pay_the_allreduce_and_the_job_takes_longer():
    base = gs.run(text=pool("H100-SXM5-80GB", 8, 2) + job("llm", 2, 8, allreduce=""))
    comm = gs.run(text=pool("H100-SXM5-80GB", 8, 2) + job("llm", 2, 8))
    half = gs.run(text=pool("H100-SXM5-80GB", 8, 2) + job("llm", 2, 8, overlap="0.5"))
    b, c, h = (training(x, "llm") for x in (base, comm, half))
    assert b["stepSeconds"] == 1.0 and b["allreduceSeconds"] == 0.0 and b["busBandwidthGBps"] is None
    assert h["stepSeconds"] - 1 == pytest.approx((c["stepSeconds"] - 1) / 2, abs=1e-6)
    ends = [max(p["finishedAt"] for p in gs.to_json(x)["pods"]) for x in (base, comm)]
    first_start = 1.002
    assert ends[0] == pytest.approx(first_start + 100 * 1.0, abs=1e-3)
    assert ends[1] == pytest.approx(first_start + 100 * c["stepSeconds"], abs=1e-3)


def test_node_fragmentation_caps_the_ring_at_one_nic():
    """16 workers of 1 GPU: packed on two DGX H100 (8 per node, 8 NICs each) vs one per node on 16 nodes (one NIC
    each): §3.3's r_i · B_nic drops from 8 × 48 to 48 GB/s, and the all-reduce takes 8 times as long."""
    packed = gs.run(text=pool("H100-SXM5-80GB", 8, 2) + job("llm", 16, 1))
    spread = gs.run(text=pool("H100-SXM5-80GB", 1, 16) + job("llm", 16, 1))
    p, s = training(packed, "llm"), training(spread, "llm")
    assert len(p["placement"]) == 2 and len(s["placement"]) == 16
    assert gs.group_allreduce(packed, "llm").bandwidth == pytest.approx(384, rel=0.02)
    assert gs.group_allreduce(spread, "llm").bandwidth == pytest.approx(48, rel=1e-6)
    assert s["allreduceSeconds"] > 7.5 * p["allreduceSeconds"]
    assert s["stepSeconds"] == pytest.approx(1 + s["allreduceSeconds"], abs=1e-6)


def test_oversubscribed_loaded_fabric_slows_a_ring_that_crosses_the_spine():
    """A Tree fabric with 1 node per leaf, 2:1 oversubscription and full background load: every ring flow
    crosses the spine and gets half the NIC rate (f_fabric = 1/o)."""
    fab = """---
apiVersion: gpusim.io/v1alpha1
kind: Fabric
metadata: {name: compute}
spec: {type: Tree, nodesPerLeaf: 1, oversubscription: 2, load: 1, labels: none}
"""
    idle = gs.run(text=pool("H100-SXM5-80GB", 8, 2) + job("llm", 2, 8))
    busy = gs.run(text=pool("H100-SXM5-80GB", 8, 2) + fab + job("llm", 2, 8))
    assert gs.group_allreduce(busy, "llm").f_fabric == pytest.approx(0.5)
    assert training(busy, "llm")["busBandwidthGBps"] == pytest.approx(training(idle, "llm")["busBandwidthGBps"] / 2,
                                                                       rel=0.01)


@pytest.mark.parametrize("annotations, path, part", [
    ({"gpusim.io/allreduce-bytes": "14G"}, "gpusim.io/allreduce-bytes", "only for training workers"),
    ({"gpusim.io/training-workers": "2", "gpusim.io/training-steps": "1", "gpusim.io/step-time": "1s",
      "gpusim.io/allreduce-bytes": "lots"}, "gpusim.io/allreduce-bytes", 'Invalid value: "lots"'),
    ({"gpusim.io/training-workers": "2", "gpusim.io/training-steps": "1", "gpusim.io/step-time": "1s",
      "gpusim.io/allreduce-bytes": "0"}, "gpusim.io/allreduce-bytes", "must be greater than 0"),
    ({"gpusim.io/training-workers": "2", "gpusim.io/training-steps": "1", "gpusim.io/step-time": "1s",
      "gpusim.io/allreduce-bytes": "1G", "gpusim.io/allreduce-overlap": "1"}, "gpusim.io/allreduce-overlap",
     "must be in [0, 1)"),
    ({"gpusim.io/training-workers": "2", "gpusim.io/training-steps": "1", "gpusim.io/step-time": "1s",
      "gpusim.io/allreduce-overlap": "0.3"}, "gpusim.io/allreduce-overlap", "requires gpusim.io/allreduce-bytes"),
])
def test_allreduce_annotations_are_validated(annotations, path, part):
    ann = dict(annotations)
    if "gpusim.io/training-workers" in ann:
        ann["gpusim.io/training-group"] = "g"        # a bare Pod names its group
    text = pool("H100-SXM5-80GB", 8, 1) + f"""---
apiVersion: v1
kind: Pod
metadata: {{name: w, annotations: {json.dumps(ann)}}}
spec:
  containers: [{{name: main, image: x, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}]
"""
    with pytest.raises(InputError) as exc:
        load(texts=[("t.yaml", text)])
    assert f"metadata.annotations[{path}]: " in str(exc.value) and part in str(exc.value), str(exc.value)


# --- records, describe, topo -m -------------------------------------------------------------------------------
def test_json_nodes_carry_the_gpu_map():
    r = gs.run(text=pool("A100-SXM4-80GB", 8, 1) + "---\n" + pool("T4", 2, 1, "t4"), until="1s")
    nodes = {n["name"]: n for n in gs.to_json(r)["nodes"]}
    gpus = nodes["n-0"]["gpus"]
    assert [g["numaNode"] for g in gpus] == [3, 3, 1, 1, 7, 7, 5, 5]
    assert [g["nic"] for g in gpus] == [f"mlx5_{i}" for i in range(8)]
    assert [g["uuid"] for g in gpus] == r.ctx.topology.uuids["n-0"]
    assert [set(g) for g in gpus] == [{"index", "uuid", "numaNode", "nic"}] * 8
    assert [g["index"] for g in nodes["t4-0"]["gpus"]] == [0, 1]
    assert gs.to_json(r)["training"] == []


def test_describe_node_prints_index_uuid_numa_nic():
    r = gs.run(text=pool("H100-SXM5-80GB", 8, 1), until="1s")
    text = gs.describe_node(r, "n-0")
    block = text[text.index("GPUs:"):text.index("Events:")].splitlines()
    assert block[0] == "GPUs:               (board dgx-h100)"
    assert block[1].split() == ["Index", "UUID", "NUMA", "NIC"]
    rows = [line.split() for line in block[2:]]
    uuids = r.ctx.topology.uuids["n-0"]
    assert rows[0] == ["0", uuids[0], "0", "mlx5_0"] and rows[7] == ["7", uuids[7], "1", "mlx5_11"]


def test_cli_topo_m_prints_nvidia_smi_matrix(tmp_path, capsys):
    f = tmp_path / "s.yaml"
    f.write_text(pool("H100-SXM5-80GB", 8, 1) + "---\n" + "apiVersion: v1\nkind: Node\nmetadata: {name: cpu-0}\n")
    assert main(["topo", "-m", "n-0", "-f", str(f)]) == 0
    assert capsys.readouterr().out == hw.format_topo_m(hw.server_graph("dgx-h100"))
    assert main(["topo", "-m", "nope", "-f", str(f)]) == 1
    assert 'nodes "nope" not found' in capsys.readouterr().err
    assert main(["topo", "-m", "cpu-0", "-f", str(f)]) == 1
    assert "has no NVIDIA GPUs" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text(pool("H100-SXM5-80GB", 8, 1, extra=", topology: dgx-b300"))
    assert main(["topo", "-m", "n-0", "-f", str(bad)]) == 2


# --- views from a result ------------------------------------------------------------------------------------------
def test_views_read_the_run():
    import matplotlib.pyplot as plt
    r = gs.run(text=pool("H100-SXM5-80GB", 8, 2) + job("llm", 4, 4))
    node, gpus = gs.pod_gpus(r, next(p.metadata.name for p in r.pods() if p.spec.node_name == "n-1"))
    assert node == "n-1" and len(gpus) == 4
    ax = gs.draw_node(r, "n-1", next(p.metadata.name for p in r.pods() if p.spec.node_name == "n-1"))
    assert "holds GPU " + ", ".join(map(str, gpus)) in ax.get_title()
    ax = gs.draw_group_ring(r, "llm")
    cost = gs.group_allreduce(r, "llm")
    red = [ln for ln in ax.get_lines() if ln.get_color() == "#d62728"]
    green = [ln for ln in ax.get_lines() if ln.get_color() == "#2ca02c"]
    assert len(red) + len(green) == len(cost.flows) and "bus bandwidth" in ax.get_title()
    ax = gs.plot_run_step_time(r)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["llm (2 nodes)"]
    assert gs.topo_m(r, "n-0") == hw.format_topo_m(hw.server_graph("dgx-h100"))
    plt.close("all")
