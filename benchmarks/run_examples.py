"""Wall time of `gpusim run` on each example and on a larger generated cluster (prints figures)."""
from __future__ import annotations

import glob
import time

import gpusim as gs

BIG = """
apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec: {count: 200, gpu: {model: H100-SXM5-80GB, count: 8}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: sweep}
spec:
  parallelism: 1000
  completions: 1000
  template:
    metadata: {annotations: {gpusim.io/duration: 10m}}
    spec:
      restartPolicy: Never
      containers: [{name: w, image: busybox, resources: {limits: {nvidia.com/gpu: 1, cpu: "2"}}}]
"""


def main() -> None:
    for path in sorted(glob.glob("examples/*.yaml")):
        t0 = time.perf_counter()
        r = gs.run(path)
        print(f"{path:<36} {len(r.pods()):>5} pods  {time.perf_counter() - t0:7.3f} s wall")
    t0 = time.perf_counter()
    r = gs.run(text=BIG)
    dt = time.perf_counter() - t0
    print(f"{'200 nodes x 8 GPUs, 1000-pod Job':<36} {len(r.pods()):>5} pods  {dt:7.3f} s wall "
          f"({len(r.pods()) / dt:.0f} pods/s end to end)")


if __name__ == "__main__":
    main()
