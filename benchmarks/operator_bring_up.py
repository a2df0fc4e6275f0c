"""Bring-up of GPU nodes by the GPU Operator (gpusim.operator): N 8-GPU nodes join at 1m; prints the wall time of
the run, the simulated time the last healthy node's device plugin registered (h100-0's driver cannot load), and the wall time of the DCGM
exporter's series (every 30 s scrape of every GPU) and of one ``gpusim diagnose``.

    .venv/bin/python benchmarks/operator_bring_up.py [N ...]   (default 10 50 200)
"""
from __future__ import annotations

import sys
import time

from gpusim.cluster.simulation import run
from gpusim.records import dcgm_series
from gpusim.views.diagnose import diagnose_pod


def scenario(n: int) -> str:
    return f"""apiVersion: gpusim.io/v1alpha1
kind: Simulation
metadata: {{name: bench}}
spec: {{until: 30m}}
---
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {{name: cluster-policy}}
spec: {{}}
---
apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {{name: h100}}
spec: {{count: {n}, joinAt: 1m, gpu: {{model: H100-SXM5-80GB, count: 8}}}}
---
apiVersion: gpusim.io/v1alpha1
kind: Fault
metadata: {{name: broken}}
spec: {{at: 0s, type: DriverFailure, node: h100-0}}
---
apiVersion: v1
kind: Pod
metadata: {{name: train, annotations: {{gpusim.io/duration: 10m}}}}
spec:
  restartPolicy: Never
  nodeSelector: {{kubernetes.io/hostname: h100-0}}
  containers:
  - {{name: c, image: cuda, resources: {{limits: {{nvidia.com/gpu: 8}}}}}}
"""


def main(sizes: list[int]) -> None:
    print(f"{'nodes':>6} {'run s':>8} {'operand pods':>13} {'last plugin up (sim s)':>23} {'dcgm series s':>14} "
          f"{'samples':>9} {'diagnose s':>11}")
    for n in sizes:
        t0 = time.perf_counter()
        r = run(text=scenario(n))
        t1 = time.perf_counter()
        series = dcgm_series(r)
        t2 = time.perf_counter()
        assert diagnose_pod(r, "train").root_cause == "driver"
        t3 = time.perf_counter()
        up = max(rec.time for rec in r.trace.records if rec.function == "plugin.(*nvidiaDevicePlugin).Start")
        print(f"{n:>6} {t1 - t0:>8.2f} {len(r.operand_pods()):>13} {up:>23.1f} {t2 - t1:>14.2f} "
              f"{sum(len(v) for v in series.values()):>9} {t3 - t2:>11.2f}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10, 50, 200])
