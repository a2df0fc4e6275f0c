"""The same workload placed by the device plugin path and by Dynamic Resource Allocation: ``--nodes`` nodes of
8 H100 each and ``--pods`` one-GPU pods arriving at t=0 (each asks ``nvidia.com/gpu: 1``, or a claim from a
ResourceClaimTemplate of the ``gpu.nvidia.com`` class), all of them fitting. Prints, for each path, the wall
time of the run, pods scheduled per second of wall time, and the machine's calibration line.

    python benchmarks/dra_scheduling.py [--nodes 32] [--pods 256]

The DRA path runs the structured allocator (CEL selectors on every candidate device) per pod and node, the
resourceclaim controller and the kubelet's prepare; the device-plugin path is the vectorised default profile.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibration import calibrate, calibration_line  # noqa: E402
from gpusim.cluster.scenario import load  # noqa: E402
from gpusim.cluster.simulation import Simulation  # noqa: E402


def scenario(nodes: int, pods: int, dra: bool) -> str:
    alloc = ", allocation: dra" if dra else ""
    docs = [f"""apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {{name: h100}}
spec: {{count: {nodes}, gpu: {{model: H100-SXM5-80GB, count: 8{alloc}}}}}
"""]
    if dra:
        docs.append("""apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]}}}
""")
    res = ("resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]\n  " if dra else "")
    limits = "{claims: [{name: gpu}]}" if dra else "{limits: {nvidia.com/gpu: 1}}"
    for i in range(pods):
        docs.append(f"""apiVersion: v1
kind: Pod
metadata: {{name: p{i}, annotations: {{gpusim.io/duration: 1h}}}}
spec:
  restartPolicy: Never
  {res}containers: [{{name: c, image: x, resources: {limits}}}]
""")
    return "---\n".join(docs)


def run(nodes: int, pods: int, dra: bool) -> tuple[float, int]:
    sim = Simulation(load(texts=[("bench.yaml", scenario(nodes, pods, dra))]))
    t0 = time.perf_counter()
    sim.ctx.env.run(until=60)
    wall = time.perf_counter() - t0
    placed = sum(1 for p in sim.ctx.api.list("Pod") if p.spec.node_name)
    return wall, placed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=32)
    ap.add_argument("--pods", type=int, default=256)
    a = ap.parse_args()
    print(calibration_line(calibrate()))
    for label, dra in (("device plugin", False), ("DRA", True)):
        wall, placed = run(a.nodes, a.pods, dra)
        print(f"{label:>13}: {a.nodes} nodes × 8 GPUs, {placed}/{a.pods} pods placed in {wall:.2f} s wall "
              f"({placed / wall:.0f} pods/s)")


if __name__ == "__main__":
    main()
