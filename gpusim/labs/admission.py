"""Lab 06 (``labs/06-admission-error``): the two fixes as edits of the lab's scenario text, so the notebook,
its exercise answers and the tests build the same YAML.

- :func:`with_cordon` — ``kubectl cordon`` before the kubelet restart and ``kubectl uncordon`` after it, as
  gpusim ``Action`` documents (``CordonNode`` / ``UncordonNode``; the scheduler's NodeUnschedulable plugin,
  pkg/scheduler/framework/plugins/nodeunschedulable, keeps new pods off the node meanwhile).
- :func:`as_jobs` — the pods bound during the restart run under batch/v1 Jobs, whose controller
  (pkg/controller/job) recreates a Failed pod after its back-off.
"""
from __future__ import annotations

from .checks import ADMISSION_NODE, ADMISSION_VICTIMS, ADMISSION_WORKLOADS

POD_IMAGE = "nvcr.io/nvidia/pytorch:24.08-py3"


def with_cordon(text: str, cordon: str = "55s", uncordon: str = "95s", node: str = ADMISSION_NODE) -> str:
    """``text`` plus two Actions: cordon ``node`` at ``cordon``, uncordon it at ``uncordon``."""
    return text + "".join(f"""---
apiVersion: gpusim.io/v1alpha1
kind: Action
metadata: {{name: {kind.lower()}}}
spec: {{at: {at}, type: {kind}, node: {node}}}
""" for kind, at in (("CordonNode", cordon), ("UncordonNode", uncordon)))


def as_jobs(text: str, names: tuple[str, ...] = ADMISSION_VICTIMS) -> str:
    """``text`` with each bare Pod of ``names`` replaced by a one-pod batch/v1 Job of the same name, submit time,
    GPUs and duration (``gpusim.io/submit-at`` on the Job, ``gpusim.io/duration`` on the pod template)."""
    docs = text.split("---\n")
    for i, doc in enumerate(docs):
        for name in names:
            if f"kind: Pod\nmetadata: {{name: {name}," not in doc:
                continue
            submit, gpus, duration = ADMISSION_WORKLOADS[name]
            docs[i] = f"""apiVersion: batch/v1
kind: Job
metadata: {{name: {name}, annotations: {{gpusim.io/submit-at: {submit:g}s}}}}
spec:
  template:
    metadata: {{annotations: {{gpusim.io/duration: {duration:g}s}}}}
    spec:
      restartPolicy: Never
      containers:
      - {{name: worker, image: {POD_IMAGE}, resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}}}
"""
    return "---\n".join(docs)
