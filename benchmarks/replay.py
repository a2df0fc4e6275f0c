"""The FGD experiment on the Alibaba GPU trace v2023: speed and results against the paper.

For each of the six policies, one FGD-protocol run of the default trace (1,213 nodes, ≈10.8k pods tuned
to 130 % of GPU capacity, every pod scheduled once, the fragmentation measured after every pod) in this
process, on one core: wall and CPU seconds. Then the unallocated GPU % at 100 % arrival, mean ± sd over
``--seeds`` seeds (42, 43, …), against the authors' published means, the ranking, the empty-cluster
fragmentation and the peak resident memory. Target (issue 15): ≤ 30 s wall per run on one core; the
authors' Go simulator takes about 600 s per run on 2 vCPU (experiments/README.md: "about 10 minutes").

    python benchmarks/replay.py                 # timing of seed 42, results over 10 seeds (about 5 minutes)
    python benchmarks/replay.py --seeds 2       # quicker
    python benchmarks/replay.py --workers 2     # the 10-seed part on 2 local processes
"""
from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time

from gpusim.replay import POLICIES, PUBLISHED_RANKING, PUBLISHED_UNALLOCATED_DEFAULT, run
from gpusim.replay.sweep import Cell, sweep

GO_REFERENCE_SECONDS = 600   # hkust-adsl/kubernetes-scheduler-simulator experiments/README.md, 2 vCPU


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", default="default")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--workers", type=int, default=1, help="local processes for the results over seeds")
    args = ap.parse_args()

    print(f"trace {args.trace}: one run per policy (seed 42), in this process")
    print(f"{'POLICY':14s} {'PODS':>6s} {'WALL':>7s} {'CPU':>7s} {'vs Go ~600 s':>13s}")
    first = {}
    for p in POLICIES:
        t0, c0 = time.perf_counter(), time.process_time()
        r = run(args.trace, p, 42)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        first[p] = r.to_json()
        print(f"{p:14s} {r.pods:6d} {wall:6.1f}s {cpu:6.1f}s {GO_REFERENCE_SECONDS / wall:11.0f}x", flush=True)
    rss_self = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of this process: {rss_self:.0f} MiB")
    print(f"empty-cluster fragmentation: {first['FGD']['emptyClusterFragTotal']:.2f}% of GPUs "
          "(paper: ≈14.0% on default, 5.6% on cpu050)")

    seeds = list(range(42, 42 + args.seeds))
    rest = [Cell(args.trace, p, s) for p in POLICIES for s in seeds if s != 42]
    if args.workers > 1:
        docs = sweep(rest, workers=args.workers)
    else:
        docs = []
        for c in rest:
            d = run(c.trace, c.policy, c.seed).to_json()
            docs.append(d)
    docs += list(first.values())
    print(f"\nunallocated GPU % at arrived = 100 %, mean ± sd over seeds {seeds[0]}…{seeds[-1]}")
    print(f"{'POLICY':14s} {'GPUSIM':>15s} {'PUBLISHED':>15s} {'DIFF':>6s}")
    means = {}
    for p in POLICIES:
        u = [100 - d["atArrived"]["100"]["allocated"] for d in docs if d["policy"] == p]
        means[p] = statistics.mean(u)
        sd = statistics.stdev(u) if len(u) > 1 else 0.0
        line = f"{p:14s} {means[p]:8.2f} ± {sd:4.2f}"
        if args.trace == "default":
            pm, ps = PUBLISHED_UNALLOCATED_DEFAULT[p]
            line += f" {pm:8.2f} ± {ps:4.2f} {means[p] - pm:+6.2f}"
        print(line)
    ranking = sorted(means, key=means.get)
    print("ranking (best first):", " < ".join(ranking))
    if args.trace == "default":
        print("published:           ", " < ".join(PUBLISHED_RANKING), "(Packing and Clustering swap from seed to seed)")
    rss_children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak RSS: {max(rss_self, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024):.0f} MiB in this "
          f"process" + (f", {rss_children:.0f} MiB in a worker" if args.workers > 1 else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
