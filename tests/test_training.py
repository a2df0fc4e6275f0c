"""Distributed training workers (gpusim/workloads/training.py): progress only while all N run."""
from __future__ import annotations

import pytest

from gpusim.api.errors import InputError
from gpusim.cluster.scenario import load
from gpusim.cluster.simulation import Simulation, run
from gpusim.workloads import training_report

from test_examples import EXAMPLES

CLUSTER = """
apiVersion: gpusim.io/v1alpha1
kind: Simulation
metadata: {{name: t}}
spec: {{seed: 3{until}}}
---
apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {{name: a100}}
spec:
  count: 1
  gpu: {{model: A100-SXM4-80GB, count: {gpus}}}
  cpu: "64"
  memory: 1Ti
---
apiVersion: batch/v1
kind: Job
metadata: {{name: train}}
spec:
  parallelism: {workers}
  completions: {workers}
  backoffLimit: 3
  template:
    metadata:
      annotations: {{gpusim.io/training-workers: "{workers}", gpusim.io/training-steps: "{steps}",
                    gpusim.io/step-time: {step_time}}}
    spec:
      restartPolicy: OnFailure
      containers:
      - {{name: worker, image: pytorch, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}
"""


def scenario(gpus=4, workers=4, steps=100, step_time="2s", until=""):
    return CLUSTER.format(gpus=gpus, workers=workers, steps=steps, step_time=step_time,
                          until=f", until: {until}" if until else "")


def started(result) -> list[float]:
    return sorted(p.status.container_statuses[0].state.terminated.started_at
                  if p.status.container_statuses[0].state.terminated else
                  p.status.container_statuses[0].state.running.started_at for p in result.pods())


def test_all_workers_running_complete_after_steps_times_step_time():
    result = run(text=scenario())
    (rep,) = training_report(result)
    starts = started(result)
    assert len(starts) == 4
    assert rep["group"] == "train" and rep["workers"] == 4 and rep["steps_done"] == 100
    assert rep["first_start"] == starts[0]
    # the 4th worker's start opens the barrier; 100 steps × 2s later everyone exits 0 together
    assert rep["completed_at"] == pytest.approx(starts[-1] + 100 * 2.0, abs=1e-9)
    for p in result.pods():
        assert p.status.phase == "Succeeded"
        term = p.status.container_statuses[0].state.terminated
        assert term.exit_code == 0 and term.finished_at == rep["completed_at"]
    assert rep["gpu_seconds_useful"] == pytest.approx(4 * 200.0, abs=1e-6)
    assert (result.jobs()[0].status.succeeded or 0) == 4


def test_three_of_four_running_make_no_progress_and_waste_every_gpu_second():
    result = run(text=scenario(gpus=3, until="1h"))
    (rep,) = training_report(result)
    assert len([p for p in result.pods() if p.status.phase == "Running"]) == 3
    assert rep["steps_done"] == 0 and rep["completed_at"] is None
    assert rep["gpu_seconds_useful"] == 0
    held = [h for h in result.ctx.holdings if h.pod.startswith("train-")]
    assert len(held) == 3 and all(h.end is None for h in held)
    assert rep["gpu_seconds_held"] == pytest.approx(sum(3600.0 - h.start for h in held))
    assert rep["wasted_gpu_hours"] == pytest.approx(3 * 1.0, abs=0.01)   # 3 GPUs × (1h - ~10ms)
    assert rep["gpus_held_over_time"][-1][1] == 3


def test_a_worker_restart_pauses_everybody():
    # until: the back-off before the restart is housekeeping, which a run without ``until`` does not wait for
    sim = Simulation(load(texts=[("<t>", scenario(until="30m"))]))
    sim.ctx.env.run(until=100.0)
    (kl,) = sim.kubelets.values()
    victim = sorted(sim.ctx.api.list("Pod"), key=lambda p: p.metadata.name)[0]
    coord = sim.ctx.training
    (g,) = coord.groups.values()
    t0 = g.run_since
    done_at_pause = int((100.0 - t0) // 2.0)
    kl.runtime.fail(victim.metadata.uid, "worker", 1, "NCCL error")
    assert g.run_since is None and g.steps_done == done_at_pause
    result = sim.run()
    (rep,) = training_report(result)
    restarted = kl.runtime.containers[(victim.metadata.uid, "worker")]
    assert restarted.started_at == pytest.approx(100.0 + 10.0)   # CrashLoopBackOff's first 10s
    # resumes from the last completed step: the step in flight at the failure is redone
    assert rep["completed_at"] == pytest.approx(restarted.started_at + (100 - done_at_pause) * 2.0, abs=1e-9)
    assert rep["steps_done"] == 100
    assert result.pod(victim.metadata.name).status.container_statuses[0].restart_count == 1
    # the 10s of the restart: 3 GPUs (4 minus the failed worker's, still held) idle → waste
    assert rep["gpu_seconds_held"] - rep["gpu_seconds_useful"] >= 4 * 10.0
    assert result.ctx.daemon_pending[0] >= 0


@pytest.mark.parametrize("annotations, field, detail", [
    ({"gpusim.io/training-workers": "0", "gpusim.io/training-steps": "1", "gpusim.io/step-time": "1s"},
     "gpusim.io/training-workers", "must be an integer greater than or equal to 1"),
    ({"gpusim.io/training-workers": "2", "gpusim.io/training-steps": "x", "gpusim.io/step-time": "1s"},
     "gpusim.io/training-steps", "must be an integer greater than or equal to 1"),
    ({"gpusim.io/training-workers": "2", "gpusim.io/training-steps": "3", "gpusim.io/step-time": "0s"},
     "gpusim.io/step-time", "must be greater than 0"),
    ({"gpusim.io/training-workers": "2", "gpusim.io/training-steps": "3"},
     "gpusim.io/step-time", "Required value: the training annotations go together"),
    ({"gpusim.io/training-workers": "2", "gpusim.io/training-steps": "3", "gpusim.io/step-time": "1s",
      "gpusim.io/duration": "5m"}, "gpusim.io/duration", "may not be set together with the training annotations"),
    ({"gpusim.io/training-group": "Bad_Name", "gpusim.io/training-workers": "2", "gpusim.io/training-steps": "3",
      "gpusim.io/step-time": "1s"}, "gpusim.io/training-group", "RFC 1123 label"),
    ({"gpusim.io/training-workers": "2", "gpusim.io/training-steps": "3", "gpusim.io/step-time": "1s"},
     "gpusim.io/training-group", "Required value: a training worker outside a Job names its group"),
])
def test_validation_errors(annotations, field, detail):
    ann = ", ".join(f'{k}: "{v}"' for k, v in annotations.items())
    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: w, annotations: {" + ann + "}}\n"
            "spec: {containers: [{name: c, image: i}]}\n")
    with pytest.raises(InputError) as exc:
        load(texts=[("<t>", text)])
    msg = str(exc.value)
    assert f"metadata.annotations[{field}]" in msg and detail in msg, msg


def test_bare_pods_with_a_group_are_valid():
    text = "\n---\n".join(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: w%d, annotations: {gpusim.io/training-group: g, "
        "gpusim.io/training-workers: \"2\", gpusim.io/training-steps: \"3\", gpusim.io/step-time: 1s}}\n"
        "spec: {restartPolicy: Never, containers: [{name: c, image: i}]}" % i for i in range(2))
    result = run(text=scenario(gpus=2, workers=1).split("---\napiVersion: batch/v1")[0] + "---\n" + text)
    (rep,) = training_report(result)
    assert rep["group"] == "g" and rep["steps_done"] == 3 and rep["pods"] == ["w0", "w1"]
    assert all(p.status.phase == "Succeeded" for p in result.pods())


def test_deterministic():
    first, second = (training_report(run(text=scenario(gpus=3, until="10m"))) for _ in range(2))
    assert first == second
    a = training_report(run(str(EXAMPLES / "gang-partial-start.yaml")))
    assert a == training_report(run(str(EXAMPLES / "gang-partial-start.yaml")))


def test_gang_partial_start_example():
    result = run(str(EXAMPLES / "gang-partial-start.yaml"))
    (rep,) = training_report(result)
    starts = sorted(
        p.status.container_statuses[0].state.terminated.started_at for p in result.pods()
        if p.metadata.name.startswith("llm-pretrain-"))
    assert len(starts) == 8
    assert all(s < 12 for s in starts[:7])                 # 7 workers start at once ...
    notebook = result.pod("notebook").status.container_statuses[0].state.terminated
    assert starts[7] > notebook.finished_at                # ... the 8th only after the notebook ends
    assert rep["completed_at"] == pytest.approx(starts[7] + 1000 * 1.8, abs=1e-9)
    assert rep["steps_done"] == 1000
    assert 6.9 < rep["wasted_gpu_hours"] < 7.0
