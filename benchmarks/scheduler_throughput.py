"""Scheduler throughput, measured end to end as a user meets it: wall time of `gpusim run` (default
`kubectl get pods`-style output, checked for every pod Running) on a
NodePool of N nodes and a Job of P pods (SchedulingBasic-like: cpu/memory pods; extended-resource-like:
one nvidia.com/gpu each). Prints pods per second of wall time, the machine's calibration time beside them
(benchmarks/calibration.py: compare runs as ratios), and the warm-up figure: scheduling cycles per second
over the first 1,000 pods and over the rest, from an in-process run timing each
`Scheduler.schedule_one`. Target (issue 17): ≥3,000 pods/s at 5,000 nodes / 10,000 pods, no warm-up
cliff. kube-scheduler's own CI floors at 5,000 nodes: 680–810 pods/s basic, 180 pods/s with an
extended resource.

    python benchmarks/scheduler_throughput.py            # 500, 1000 and 5000 nodes
    python benchmarks/scheduler_throughput.py 5000 10000 # one size
    python benchmarks/scheduler_throughput.py 5000 10000 --profile   # plus a cProfile summary per workload
"""
from __future__ import annotations

import cProfile
import io
import os
import pstats
import subprocess
import sys
import tempfile
import time

from calibration import calibrate, calibration_line

SCENARIO = """apiVersion: gpusim.io/v1alpha1
kind: Simulation
metadata: {{name: throughput}}
spec: {{seed: 1}}
---
apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {{name: node}}
spec: {{count: {nodes}, gpu: {{model: H100-SXM5-80GB, count: 8}}, cpu: "96", memory: 1Ti}}
---
apiVersion: batch/v1
kind: Job
metadata: {{name: load}}
spec:
  parallelism: {pods}
  completions: {pods}
  template:
    spec:
      restartPolicy: Never
      containers: [{{name: w, image: busybox, resources: {{limits: {limits}}}}}]
"""
WORKLOADS = {"basic": "{cpu: 900m, memory: 2Gi}", "extended-resource": "{nvidia.com/gpu: 1, cpu: 900m, memory: 2Gi}"}


def _scenario_file(nodes: int, pods: int, workload: str) -> str:
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(SCENARIO.format(nodes=nodes, pods=pods, limits=WORKLOADS[workload]))
    return f.name


def measure(nodes: int, pods: int, workload: str) -> float:
    f = _scenario_file(nodes, pods, workload)
    gpusim = os.path.join(os.path.dirname(sys.executable), "gpusim")
    t0 = time.perf_counter()
    out = subprocess.run([gpusim, "run", f], capture_output=True, text=True, check=True).stdout
    dt = time.perf_counter() - t0
    os.unlink(f)
    running = sum(1 for line in out.splitlines()[1:] if line.split()[2] == "Running")
    assert running == pods, f"only {running} of {pods} pods running"
    return dt


WARMUP_PODS = 1000


def in_process(nodes: int, pods: int, workload: str,
               profile: bool = False) -> tuple[float, list[float], str, float]:
    """One `gpusim run` in this process: wall seconds, the perf_counter of each scheduling cycle's start,
    (with `profile`) the top of a cProfile summary sorted by own time, and the first cycle's own seconds."""
    from gpusim import cli
    from gpusim.scheduler.scheduler import Scheduler
    f = _scenario_file(nodes, pods, workload)
    stamps: list[float] = []
    first_cycle: list[float] = []
    original = Scheduler.schedule_one

    def timed(self, qpi):
        stamps.append(time.perf_counter())
        out = original(self, qpi)
        if len(stamps) == 1:
            first_cycle.append(time.perf_counter() - stamps[0])
        return out
    Scheduler.schedule_one = timed
    prof = cProfile.Profile() if profile else None
    real_stdout, sys.stdout = sys.stdout, io.StringIO()
    try:
        t0 = time.perf_counter()
        if prof:
            prof.enable()
        cli.main(["run", f])
        if prof:
            prof.disable()
        dt = time.perf_counter() - t0
    finally:
        sys.stdout = real_stdout
        Scheduler.schedule_one = original
        os.unlink(f)
    summary = ""
    if prof:
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(25)
        summary = buf.getvalue()
    return dt, [s - t0 for s in stamps], summary, first_cycle[0] if first_cycle else 0.0


def warmup(nodes: int, pods: int, workload: str) -> str:
    """Setup seconds before the first cycle, and cycles/s over the first WARMUP_PODS cycles and the rest."""
    dt, stamps, _, build = in_process(nodes, pods, workload)
    if len(stamps) <= WARMUP_PODS + 1:
        return f"{workload}: only {len(stamps)} scheduling cycles"
    first = WARMUP_PODS / (stamps[WARMUP_PODS] - stamps[0])
    rest = (len(stamps) - 1 - WARMUP_PODS) / (stamps[-1] - stamps[WARMUP_PODS])
    # the first cycle builds the node table (as kube-scheduler's first UpdateSnapshot clones every NodeInfo)
    after_build = (WARMUP_PODS - 1) / (stamps[WARMUP_PODS] - stamps[0] - build)
    return (f"{workload:<18} setup {stamps[0]:.2f} s, first {WARMUP_PODS} pods {first:.0f} cycles/s "
            f"({after_build:.0f} after the first cycle's {build * 1e3:.0f} ms node-table build), "
            f"the rest {rest:.0f} cycles/s, after the last cycle {dt - stamps[-1]:.2f} s")


REPEATS = 3   # wall time on a shared VM varies by ±20%: report the median and the best of three


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--profile"]
    sizes = [(int(args[0]), int(args[1]))] if len(args) == 2 else [(500, 1000), (1000, 2000), (5000, 10000)]
    print(calibration_line(calibrate()), flush=True)
    print(f"{'workload':<18} {'nodes':>6} {'pods':>6} {'median s':>9} {'pods/s':>7} {'best pods/s':>12}")
    for nodes, pods in sizes:
        for workload in WORKLOADS:
            runs = sorted(measure(nodes, pods, workload) for _ in range(REPEATS))
            med = runs[len(runs) // 2]
            print(f"{workload:<18} {nodes:>6} {pods:>6} {med:>9.2f} {pods / med:>7.0f} {pods / runs[0]:>12.0f}",
                  flush=True)
    nodes, pods = sizes[-1]
    print(f"warm-up at {nodes} nodes / {pods} pods (in process, each Scheduler.schedule_one timed):")
    for workload in WORKLOADS:
        print("  " + warmup(nodes, pods, workload), flush=True)
    if "--profile" in sys.argv:
        for workload in WORKLOADS:
            print(f"cProfile, {workload}, {nodes} nodes / {pods} pods, by own time:")
            print(in_process(nodes, pods, workload, profile=True)[2], flush=True)
    print(calibration_line(calibrate()), flush=True)


if __name__ == "__main__":
    main()
