"""Chapter 00's example scenario (the YAML the guide shows, without its comments), run as written or with
another exit code; tests/test_course_examples.py keeps it equal to the YAML in the chapter."""
from __future__ import annotations

from ..cluster.simulation import run

GUIDE_SCENARIO = """apiVersion: gpusim.io/v1alpha1
kind: Simulation
metadata: {name: demo}
spec: {seed: 0, until: 2h}
---
apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: a100}
spec:
  count: 2
  gpu: {model: A100-SXM4-80GB, count: 8}
---
apiVersion: v1
kind: Pod
metadata:
  name: train-0
  annotations:
    gpusim.io/submit-at: 5m
    gpusim.io/duration: 1h
    gpusim.io/gpu-memory: 60Gi
    gpusim.io/exit-code: "0"
spec:
  restartPolicy: Never
  containers:
  - name: trainer
    image: pytorch/pytorch
    resources:
      limits: {nvidia.com/gpu: 8}
---
apiVersion: gpusim.io/v1alpha1
kind: Fault
metadata: {name: restart}
spec: {at: 30m, type: KubeletRestart, node: a100-0, downtime: 10s}
"""


def guide_run(exit_code: int = 0):
    """Run the guide's scenario, with ``gpusim.io/exit-code`` set to ``exit_code``."""
    return run(text=GUIDE_SCENARIO.replace('gpusim.io/exit-code: "0"', f'gpusim.io/exit-code: "{exit_code}"'))
