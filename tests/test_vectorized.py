"""The vectorised Filter/Score path makes the same decisions as the per-node plugin path: same
events (placements, FailedScheduling messages), same statuses and scores in every attempt."""
from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st

from gpusim.cluster.scenario import load
from gpusim.cluster.simulation import Simulation
from gpusim.views.kubectl import to_json

MODELS = ["A100-SXM4-80GB", "H100-SXM5-80GB", "T4", "L40S"]
STRATEGIES = ["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]


@st.composite
def scenarios(draw):
    docs = []
    strategy = draw(st.sampled_from(STRATEGIES + [None]))
    version = draw(st.sampled_from(["1.33", "1.36"]))
    docs.append(f"apiVersion: gpusim.io/v1alpha1\nkind: Simulation\nmetadata: {{name: s}}\n"
                f"spec: {{seed: {draw(st.integers(0, 5))}, kubernetesVersion: \"{version}\"}}\n")
    balanced = draw(st.sampled_from([None, "cpu, memory, nvidia.com/gpu", "cpu, memory, ephemeral-storage, nvidia.com/gpu"]))
    if strategy or balanced:
        strategy = strategy or "LeastAllocated"
        extra = ("\n        requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]}"
                 if strategy == "RequestedToCapacityRatio" else "")
        docs.append(f"""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: {strategy}
        resources: [{{name: cpu, weight: 1}}, {{name: memory, weight: 2}}, {{name: nvidia.com/gpu, weight: {draw(st.integers(1, 9))}}}]{extra}
""" + (f"""  - name: NodeResourcesBalancedAllocation
    args:
      resources: [{", ".join(f"{{name: {r}, weight: 1}}" for r in balanced.split(", "))}]
""" if balanced else ""))
    for i in range(draw(st.integers(1, 4))):
        taint = draw(st.sampled_from(["", "NoSchedule", "PreferNoSchedule"]))
        taints = f", taints: [{{key: dedicated, value: x, effect: {taint}}}]" if taint else ""
        zone = draw(st.sampled_from(["a", "b"]))
        docs.append(f"apiVersion: gpusim.io/v1alpha1\nkind: NodePool\nmetadata: {{name: p{i}}}\n"
                    f"spec: {{count: {draw(st.integers(1, 40))}, gpu: {{model: {draw(st.sampled_from(MODELS))}, "
                    f"count: {draw(st.integers(1, 8))}}}, cpu: \"{draw(st.sampled_from([16, 64, 96]))}\", "
                    f"labels: {{zone: {zone}}}{taints}}}\n")
    for j in range(draw(st.integers(1, 60))):
        gpus, cpu = draw(st.integers(0, 8)), draw(st.sampled_from(["0", "500m", "4", "32"]))
        sel = draw(st.sampled_from(["", "\n  nodeSelector: {zone: a}"]))
        tol = draw(st.sampled_from(["", "\n  tolerations: [{key: dedicated, operator: Exists}]"]))
        # gpus == -1: no nvidia.com/gpu key at all (BalancedAllocation must skip the unrequested scalar)
        gpus = draw(st.sampled_from([gpus, -1]))
        lim = ", ".join(([f"nvidia.com/gpu: {gpus}"] if gpus >= 0 else []) + ([f"cpu: \"{cpu}\""] if cpu != "0" else []))
        docs.append(f"""apiVersion: v1
kind: Pod
metadata: {{name: w{j}, annotations: {{gpusim.io/duration: {draw(st.integers(1, 600))}s, gpusim.io/submit-at: {draw(st.integers(0, 300))}s}}}}
spec:
  restartPolicy: Never{sel}{tol}
  containers: [{{name: c, image: x, resources: {{limits: {{{lim}}}}}}}]
""")
    return "---\n".join(docs)


def run(text: str, vectorize: bool, numpy_updates: bool = False):
    sim = Simulation(load(texts=[("v.yaml", text)]))
    sim.scheduler.vectorize = vectorize
    sim.scheduler.vectorize_min_nodes = 0    # the vectorised path at every size (the default skips small clusters)
    if numpy_updates:
        sim.scheduler.table.per_node_rows = -1   # the shape cache recomputes changed rows with numpy, not per node
    r = sim.run()
    attempts = [(a.time, a.pod, a.node, a.message, sorted(a.feasible), a.statuses, a.scores)
                for a in r.scheduler.attempts]
    return json.dumps(to_json(r), sort_keys=True), attempts


@settings(max_examples=40, deadline=None)
@given(scenarios(), st.booleans())
def test_vectorised_path_decides_like_the_per_node_path(text, numpy_updates):
    per_node, attempts_a = run(text, vectorize=False)
    vectorised, attempts_b = run(text, vectorize=True, numpy_updates=numpy_updates)
    assert vectorised == per_node
    assert attempts_b == attempts_a
