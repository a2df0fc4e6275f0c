"""Property tests: random clusters, random GPU workloads, random faults; invariants that must hold
whatever the scheduler, kubelets and device plugins decide.

- a GPU is never held by two pods at overlapping times;
- at every allocation instant no node has more GPUs held than it has;
- a pod holds exactly the GPUs it asked for, all on its own node;
- every pod ends in a real phase, and a Succeeded pod ran exactly its ``gpusim.io/duration``;
- the run ends only when nothing more can happen (no pod left Running or stuck while it fits).

Scenarios are written as YAML text, the way a user writes them, and run with
``gpusim.cluster.simulation.run(text=...)``.
"""
from __future__ import annotations

from collections import defaultdict

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpusim.cluster.simulation import run
from gpusim.hardware import CATALOG

GPU = "nvidia.com/gpu"
PHASES = {"Pending", "Running", "Succeeded", "Failed"}
XIDS = [13, 31, 43, 45, 48, 63, 64, 68, 74, 79, 92, 94, 95, 109]

pool_st = st.fixed_dictionaries({
    "nodes": st.integers(1, 3),
    "gpus": st.integers(1, 8),
    "model": st.sampled_from(sorted(CATALOG)),
})
pod_st = st.fixed_dictionaries({
    "gpus": st.integers(0, 8),
    "duration": st.integers(1, 30 * 60),      # seconds
    "submit_at": st.integers(0, 10 * 60),     # seconds
})


@st.composite
def scenarios(draw):
    pools = draw(st.lists(pool_st, min_size=1, max_size=4))
    nodes = [(f"pool{i}-{j}", p["gpus"]) for i, p in enumerate(pools) for j in range(p["nodes"])]
    pods = draw(st.lists(pod_st, min_size=1, max_size=12))
    faults = []
    for _ in range(draw(st.integers(0, 3))):
        node, gpus = draw(st.sampled_from(nodes))
        kind = draw(st.sampled_from(["KubeletRestart", "XidError", "DevicePluginCrash"]))
        spec = {"at": f"{draw(st.integers(0, 12 * 60))}s", "type": kind, "node": node}
        if kind == "XidError":
            spec["gpu"] = draw(st.integers(0, gpus - 1))
            spec["xid"] = draw(st.sampled_from(XIDS))
        elif draw(st.booleans()):
            spec["downtime"] = f"{draw(st.integers(1, 120))}s"
        faults.append(spec)
    seed = draw(st.integers(0, 2**16))
    return pools, pods, faults, seed


def to_yaml(pools, pods, faults, seed) -> str:
    docs = [{"apiVersion": "gpusim.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "prop"},
             "spec": {"seed": seed}}]
    for i, p in enumerate(pools):
        docs.append({"apiVersion": "gpusim.io/v1alpha1", "kind": "NodePool", "metadata": {"name": f"pool{i}"},
                     "spec": {"count": p["nodes"], "gpu": {"model": p["model"], "count": p["gpus"]}}})
    for i, f in enumerate(faults):
        docs.append({"apiVersion": "gpusim.io/v1alpha1", "kind": "Fault", "metadata": {"name": f"fault-{i}"},
                     "spec": f})
    for i, p in enumerate(pods):
        limits = {GPU: p["gpus"]} if p["gpus"] else {"cpu": "1"}
        docs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"pod-{i}", "annotations": {
                         "gpusim.io/duration": f"{p['duration']}s", "gpusim.io/submit-at": f"{p['submit_at']}s"}},
                     "spec": {"restartPolicy": "Never", "containers": [
                         {"name": "main", "image": "cuda", "resources": {"limits": limits}}]}})
    return yaml.safe_dump_all(docs, sort_keys=False)


def check_invariants(pools, pods, faults, seed) -> None:
    text = to_yaml(pools, pods, faults, seed)
    result = run(text=text)
    capacity = {f"pool{i}-{j}": p["gpus"] for i, p in enumerate(pools) for j in range(p["nodes"])}
    holdings = result.ctx.holdings
    inf = float("inf")
    end = lambda h: inf if h.end is None else h.end

    # 1. No device is held by two pods at overlapping times.
    by_device = defaultdict(list)
    for h in holdings:
        assert h.resource == GPU
        assert h.start <= end(h), h
        by_device[(h.node, h.device)].append(h)
    for (node, dev), hs in by_device.items():
        hs.sort(key=lambda h: h.start)
        for a, b in zip(hs, hs[1:]):
            assert b.start >= end(a), f"{dev} on {node} held by {a.pod} and {b.pod} at once\n{text}"

    # 2. At every allocation start instant, no node holds more devices than it has.
    for t in sorted({h.start for h in holdings}):
        held = defaultdict(set)
        for h in holdings:
            if h.start <= t < end(h):
                held[h.node].add(h.device)
        for node, devs in held.items():
            assert len(devs) <= capacity[node], f"{node} holds {len(devs)} GPUs at t={t}\n{text}"

    # 3. A pod holds exactly the GPUs it asked for, on its own node; devices are node-local.
    node_devices = defaultdict(set)
    for h in holdings:
        node_devices[h.node].add(h.device)
    owner = {}
    for node, devs in node_devices.items():
        assert len(devs) <= capacity[node]
        for d in devs:
            assert owner.setdefault(d, node) == node, f"{d} appears on two nodes"
    pods_by_name = {p.metadata.name: p for p in result.pods()}
    assert set(pods_by_name) == {f"pod-{i}" for i in range(len(pods))}
    for i, spec in enumerate(pods):
        pod = pods_by_name[f"pod-{i}"]
        mine = [h for h in holdings if h.pod == pod.metadata.name]
        if pod.status.phase in ("Running", "Succeeded"):
            assert len({h.device for h in mine}) == spec["gpus"], f"{pod.metadata.name}\n{text}"
            assert {h.node for h in mine} <= {pod.spec.node_name}

    # 4. Phases, and Succeeded pods ran exactly their duration.
    for i, spec in enumerate(pods):
        pod = pods_by_name[f"pod-{i}"]
        phase = pod.status.phase or "Pending"
        assert phase in PHASES, phase
        if phase == "Succeeded":
            (cs,) = pod.status.container_statuses
            term = cs.state.terminated
            assert term is not None and term.exit_code == 0
            assert abs((term.finished_at - term.started_at) - spec["duration"]) < 1e-6, f"{pod.metadata.name}\n{text}"
            assert all(h.end is not None for h in holdings if h.pod == pod.metadata.name)
        if phase == "Failed":
            assert not [h for h in holdings if h.pod == pod.metadata.name and h.end is None]

    # 5. The run ends only when nothing more can happen: every pod has a duration, so none is left
    #    Running, and a pod left Pending is unbound and asks for more GPUs than any node offers now.
    free_now = max(int(n.status.allocatable.get(GPU, "0")) for n in result.nodes())
    for i, spec in enumerate(pods):
        pod = pods_by_name[f"pod-{i}"]
        phase = pod.status.phase or "Pending"
        assert phase != "Running", f"{pod.metadata.name} still Running at the end ({result.end})\n{text}"
        if phase == "Pending":
            assert not pod.spec.node_name, f"{pod.metadata.name} bound but never admitted\n{text}"
            assert spec["gpus"] > free_now, f"{pod.metadata.name} fits but stayed Pending\n{text}"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_gpu_invariants_hold(scenario):
    check_invariants(*scenario)


def test_invariants_on_a_busy_cluster_with_every_fault_type():
    """A hand-written case that exercises each fault and queueing at once (runs even when
    hypothesis happens to draw easy clusters)."""
    pools = [{"nodes": 2, "gpus": 4, "model": "A100-SXM4-80GB"}, {"nodes": 1, "gpus": 2, "model": "T4"}]
    pods = [{"gpus": g, "duration": d, "submit_at": s} for g, d, s in [
        (4, 600, 0), (2, 300, 0), (2, 120, 5), (1, 60, 10), (4, 200, 20), (3, 90, 30), (1, 30, 31),
        (8, 60, 0), (0, 45, 2), (2, 400, 100), (1, 100, 65), (1, 20, 70)]]
    faults = [{"at": "60s", "type": "KubeletRestart", "node": "pool0-0", "downtime": "20s"},
              {"at": "30s", "type": "XidError", "node": "pool1-0", "gpu": 1, "xid": 79},
              {"at": "90s", "type": "DevicePluginCrash", "node": "pool0-1", "downtime": "15s"}]
    check_invariants(pools, pods, faults, 7)
