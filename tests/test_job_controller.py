"""batch/v1 Job controller corner cases."""
import gpusim as gs

# Two workers of a backoffLimit-0 Job are preempted in the same instant by a higher-priority pod:
# the first deletion fails the Job, whose controller then deletes its remaining active pods — one of
# which the scheduler has already deleted. Upstream gets NotFound and moves on; so must gpusim.
SCENARIO = """
apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: a100}
spec: {count: 1, gpu: {model: A100-SXM4-80GB, count: 2}, cpu: "64", memory: 512Gi}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  parallelism: 2
  completions: 2
  backoffLimit: 0
  template:
    metadata: {annotations: {gpusim.io/duration: 1h}}
    spec:
      restartPolicy: Never
      containers: [{name: w, image: busybox, resources: {limits: {nvidia.com/gpu: 1}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: urgent, annotations: {gpusim.io/submit-at: 60s, gpusim.io/duration: 10m}}
spec:
  priorityClassName: high
  restartPolicy: Never
  containers: [{name: c, image: busybox, resources: {limits: {nvidia.com/gpu: 2}}}]
"""


def test_job_fails_cleanly_when_its_pods_are_preempted_together():
    r = gs.run(text=SCENARIO)
    job = r.api.get("Job", "default", "train")
    failed = [c for c in job.status.conditions if c.type == "Failed" and c.status == "True"]
    assert failed and failed[0].reason == "BackoffLimitExceeded"
    assert r.pod("urgent").status.phase == "Succeeded"
    assert not [p for p in r.pods() if p.metadata.name.startswith("train-") and p.status.phase == "Running"]
