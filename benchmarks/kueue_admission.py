"""Kueue admission benchmark in the shape of Kueue's own scheduler performance baseline.

Source of the shape: kubernetes-sigs/kueue test/performance/scheduler/configs/baseline/generator.yaml
(5 cohorts × 6 ClusterQueues; each CQ: nominalQuota 20 cpu, borrowingLimit 100, reclaimWithinCohort Any,
withinClusterQueue LowerPriority; per CQ 350 "small" (1 cpu, 200 ms, priority 50, one every 100 ms),
100 "medium" (5 cpu, 500 ms, priority 100, every 500 ms), 50 "large" (20 cpu, 1000 ms, priority 200, every
1200 ms)) = 15,000 Workloads. As upstream's runner (test/performance/scheduler/runner/controller), a runner
marks each Workload Finished ``runtimeMs`` after its admission; there are no pods (upstream runs
"minimalkueue" without kube-scheduler too). Upstream's thresholds (configs/baseline/rangespec.yaml, real
time on a real apiserver): avg time to admission large ≤ 11 s, medium ≤ 90 s, small ≤ 260 s.

    python benchmarks/kueue_admission.py [--profile] [--jobs]

``--jobs`` runs the full path instead: batch/v1 Jobs through Kueue's webhook and Job reconciler, the Job
controller, kube-scheduler and kubelets on 2 nodes of 64 cpu per cohort (much slower; ``--cohorts 1`` runs a
fifth of the shape).
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibration import calibrate, calibration_line  # noqa: E402
from gpusim.api.batch_v1 import Job, JobSpec, PodTemplateSpec  # noqa: E402
from gpusim.api.core_v1 import Container, Namespace, PodSpec, ResourceRequirements  # noqa: E402
from gpusim.api.kueue_x_k8s_io import (ClusterQueue, ClusterQueuePreemption, ClusterQueueSpecV1beta2,  # noqa: E402
                                       FlavorQuotas, KueueConfig, LocalQueue, LocalQueueSpec, PodSet,
                                       ResourceFlavor, ResourceGroup, ResourceQuota, Workload, WorkloadSpecV1beta2)
from gpusim.api.meta import LabelSelector, ObjectMeta  # noqa: E402
from gpusim.cluster.scenario import Scenario  # noqa: E402
from gpusim.controlplane.apiserver import DELETED  # noqa: E402
from gpusim.cluster.simulation import Simulation  # noqa: E402

COHORTS, QUEUES = 5, 6
CLASSES = [  # (class, count, interval s, runtime s, priority, cpu)
    ("small", 350, 0.1, 0.2, 50, 1),
    ("medium", 100, 0.5, 0.5, 100, 5),
    ("large", 50, 1.2, 1.0, 200, 20),
]
CLASS_LABEL = "kueue.x-k8s.io/performance-scheduler-class"
RUNTIME_LABEL = "kueue.x-k8s.io/performance-scheduler-running-ms"


def template(cpu: int) -> PodTemplateSpec:
    return PodTemplateSpec(spec=PodSpec(containers=[Container(
        name="c", image="x", resources=ResourceRequirements(requests={"cpu": str(cpu)}))], restart_policy="Never"))


def scenario(jobs: bool, cohorts: int = COHORTS) -> Scenario:
    sc = Scenario()
    sc.kueue_config = KueueConfig(wait_for_pods_ready=jobs)
    flavor = ResourceFlavor(metadata=ObjectMeta(name="rf"))
    cqs, lqs, wls = [], [], []
    for c in range(cohorts):
        for q in range(QUEUES):
            name = f"cq-0-{q}-cohort-{c}"
            cqs.append(ClusterQueue(metadata=ObjectMeta(name=name), spec=ClusterQueueSpecV1beta2(
                cohort_name=f"cohort-{c}", namespace_selector=LabelSelector(),
                preemption=ClusterQueuePreemption("Any", "LowerPriority"),
                resource_groups=[ResourceGroup(["cpu"], [FlavorQuotas("rf", [ResourceQuota("cpu", "20", "100")])])])))
            sc.namespaces.append(Namespace(metadata=ObjectMeta(name=name)))
            lqs.append(LocalQueue(metadata=ObjectMeta(name=name, namespace=name), spec=LocalQueueSpec(name)))
            for set_idx, (cls, count, interval, runtime, prio, cpu) in enumerate(CLASSES):
                for i in range(count):
                    meta = ObjectMeta(name=f"{cls}-{set_idx}-{i}-0", namespace=name,
                                      labels={CLASS_LABEL: cls, RUNTIME_LABEL: str(int(runtime * 1000))},
                                      annotations={"gpusim.io/submit-at": f"{(i + 1) * interval:.1f}s",
                                                   "gpusim.io/duration": f"{runtime}s"})
                    if jobs:
                        meta.labels["kueue.x-k8s.io/queue-name"] = name
                        t = template(cpu)
                        t.metadata.annotations = {"gpusim.io/duration": f"{runtime}s"}
                        t.spec.priority_class_name = cls
                        sc.jobs.append(Job(metadata=meta, spec=JobSpec(template=t, parallelism=1, completions=1)))
                        continue
                    wls.append(Workload(metadata=meta, spec=WorkloadSpecV1beta2(
                        [PodSet("main", 1, template(cpu))], queue_name=name, priority=prio)))
    sc.objects = {"ResourceFlavor": [flavor], "ClusterQueue": cqs, "LocalQueue": lqs}
    if jobs:
        from gpusim.api.core_v1 import Node, NodeStatus
        from gpusim.api.scheduling_v1 import PriorityClass
        sc.priority_classes = [PriorityClass(metadata=ObjectMeta(name=c[0]), value=c[4]) for c in CLASSES]
        for n in range(2 * cohorts):
            sc.nodes.append(Node(metadata=ObjectMeta(name=f"node-{n}", labels={"kubernetes.io/hostname": f"node-{n}"}),
                                 status=NodeStatus(capacity={"cpu": "64", "memory": "256Gi", "pods": "110"},
                                                   allocatable={"cpu": "64", "memory": "256Gi", "pods": "110"})))
    return sc, wls


def generator(ctx, workloads: list):
    """runner/generator: a client that creates the Workloads at their times (all queues concurrently)."""
    from gpusim.cluster.simulation import parse_duration
    for wl in sorted(workloads, key=lambda w: parse_duration(w.metadata.annotations["gpusim.io/submit-at"])):
        at = parse_duration(wl.metadata.annotations["gpusim.io/submit-at"])
        if at > ctx.env.now:
            yield ctx.env.timeout(at - ctx.env.now)
        ctx.api.create(wl)


class Runner:
    """test/performance/scheduler/runner/controller: finish each admitted Workload after its runtime."""

    def __init__(self, ctx):
        self.ctx = ctx
        self._watch = ctx.api.watch(Workload.RESOURCE)
        self._running: dict[str, object] = {}
        ctx.env.process(self._loop())

    def _loop(self):
        while True:
            ev = yield self._watch.get()
            wl = ev.obj
            key = f"{wl.metadata.namespace}/{wl.metadata.name}"
            if ev.type == DELETED or wl.status.admission is None:
                self._running.pop(key, None)
                continue
            if self._running.get(key) is wl.status.admission or wl.is_true("Finished"):
                continue
            self._running[key] = adm = wl.status.admission
            runtime = int(wl.metadata.labels[RUNTIME_LABEL]) / 1000
            t = self.ctx.env.timeout(runtime)
            t.callbacks.append(lambda _e, w=wl, a=adm, k=key: self._finish(w, a, k))

    def _finish(self, wl, adm, key) -> None:
        if wl.status.admission is not adm:
            return
        from gpusim.kueue.workload import set_condition
        set_condition(wl, "Finished", "True", "Succeeded", "Job finished successfully", self.ctx.now)
        self._running.pop(key, None)
        self.ctx.api.update(wl)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--jobs", action="store_true", help="full path: Jobs, pods, kube-scheduler, kubelets")
    ap.add_argument("--cohorts", type=int, default=COHORTS, help="scale: cohorts of 6 ClusterQueues (default 5)")
    args = ap.parse_args()
    print(calibration_line(calibrate()), flush=True)
    sc, workloads = scenario(args.jobs, args.cohorts)
    t0 = time.perf_counter()
    prof = cProfile.Profile() if args.profile else None
    if prof:
        prof.enable()
    sim = Simulation(sc, seed=1)
    sim.ctx.trace.enabled = False
    if not args.jobs:
        Runner(sim.ctx)
        sim.ctx.env.process(generator(sim.ctx, workloads))
    result = sim.run()
    if prof:
        prof.disable()
    wall = time.perf_counter() - t0
    kueue = result.addons["kueue"]
    first: dict[str, float] = {}
    admissions = 0
    for e in result.events.log:
        if e.reason == "Admitted" and e.object.kind == "Workload":
            admissions += 1
            first.setdefault(f"{e.object.namespace}/{e.object.name}", e.time)
    per_class: dict[str, list[float]] = {}
    for info in kueue.workloads.values():
        wl = info.obj
        cls = wl.metadata.labels.get(CLASS_LABEL) or (info.job.metadata.labels[CLASS_LABEL] if info.job else "?")
        if info.key in first:
            per_class.setdefault(cls, []).append(first[info.key] - wl.metadata.creation_timestamp)
    finished = sum(1 for i in kueue.workloads.values() if i.obj.is_true("Finished"))
    preempted = sum(1 for e in result.events.log if e.reason == "Preempted")
    print(f"path: {'Jobs + pods + kube-scheduler' if args.jobs else 'Workloads (as upstream minimalkueue)'}")
    print(f"workloads: {len(kueue.workloads)}  finished: {finished}  admissions: {admissions}  "
          f"preemptions: {preempted}  scheduling cycles: {kueue.cycles}")
    print(f"wall time: {wall:.1f} s   simulated time: {result.end:.1f} s   admissions/s (wall): {admissions / wall:.0f}")
    for cls, *_ in CLASSES:
        xs = per_class.get(cls, [])
        avg = sum(xs) / len(xs) if xs else float("nan")
        print(f"  {cls:<7} avg time to admission {avg:8.2f} s (simulated)   max {max(xs, default=0):8.2f} s")
    print(calibration_line(calibrate()))
    if prof:
        pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
        pstats.Stats(prof).sort_stats("tottime").print_stats(30)


if __name__ == "__main__":
    main()
