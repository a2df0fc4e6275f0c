"""How gpusim's cost grows with the cluster (issue 17): `gpusim run` end to end on N nodes with 2 pods per
node (the basic cpu/memory Job of scheduler_throughput.py), each size in a fresh process, printing wall
time, time per pod and peak RSS (getrusage ru_maxrss of that process) as a table with the machine's
calibration time beside it, and saving a log-log plot (benchmarks/scaling.png, shown in the README's
performance section). Target: time per pod grows no faster than linearly in nodes, 10,000 nodes /
100,000 pods in ≤ 2 GB peak RSS (`--memory-target` adds that run).

    python benchmarks/scaling.py                   # 1,000 / 5,000 / 10,000 / 20,000 nodes
    python benchmarks/scaling.py 1000 5000         # chosen sizes
    python benchmarks/scaling.py --memory-target   # plus 10,000 nodes / 100,000 pods
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

from calibration import calibrate, calibration_line
from scheduler_throughput import _scenario_file

HERE = os.path.dirname(os.path.abspath(__file__))
PLOT = os.path.join(HERE, "scaling.png")
SIZES = (1000, 5000, 10000, 20000)
PODS_PER_NODE = 2

CHILD = """
import io, json, resource, sys, time
from gpusim import cli
real, sys.stdout = sys.stdout, io.StringIO()
t0 = time.perf_counter()
cli.main(["run", sys.argv[1]])
wall = time.perf_counter() - t0
out, sys.stdout = sys.stdout.getvalue(), real
running = sum(1 for line in out.splitlines()[1:] if line.split()[2] == "Running")
print(json.dumps({"wall": wall, "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "running": running}))
"""


def measure(nodes: int, pods: int) -> dict:
    """One run in a fresh interpreter: wall seconds of cli.main (imports excluded) and peak RSS in KiB."""
    f = _scenario_file(nodes, pods, "basic")
    try:
        out = subprocess.run([sys.executable, "-c", CHILD, f], capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(f)
    row = json.loads(out.splitlines()[-1])
    assert row["running"] == pods, f"only {row['running']} of {pods} pods running"
    return row


def plot(rows: list[tuple[int, int, dict]], calibration: float) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    nodes = [n for n, _, _ in rows]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    per_pod = [r["wall"] / p * 1e3 for _, p, r in rows]
    ax1.loglog(nodes, [r["wall"] for _, _, r in rows], "o-", label="wall time (s)")
    ax1.loglog(nodes, per_pod, "s-", label="time per pod (ms)")
    ref = rows[0][2]["calibration"]
    ax1.loglog(nodes, [t * ref / r["calibration"] for t, (_, _, r) in zip(per_pod, rows)], "^--",
               label="time per pod (ms), at the first row's machine speed")
    lin = [per_pod[0] * n / nodes[0] for n in nodes]
    ax1.loglog(nodes, lin, ":", color="grey", label="per pod ∝ nodes (linear)")
    ax1.set_xlabel("nodes (2 pods per node)")
    ax1.set_title("gpusim run: time")
    ax1.legend(fontsize=8)
    ax2.loglog(nodes, [r["rss_kib"] / 1024 for _, _, r in rows], "o-", color="C2")
    ax2.set_xlabel("nodes (2 pods per node)")
    ax2.set_ylabel("peak RSS (MiB)")
    ax2.set_title("gpusim run: peak memory")
    cals = [r["calibration"] for _, _, r in rows]
    fig.suptitle(f"calibration loop {min(cals):.3f}–{max(cals):.3f} s across the rows "
                 f"({calibration:.3f} s at its quietest)", fontsize=9)
    fig.tight_layout()
    fig.savefig(PLOT, dpi=100)


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    sizes = [(int(a), int(a) * PODS_PER_NODE) for a in args] if args else [(n, n * PODS_PER_NODE) for n in SIZES]
    if "--memory-target" in sys.argv:
        sizes.append((10000, 100000))
    cal = calibrate()
    print(calibration_line(cal), flush=True)
    # a shared machine's speed drifts during the table: each row has its own calibration beside it
    print(f"{'nodes':>7} {'pods':>7} {'wall s':>8} {'ms/pod':>7} {'pods/s':>7} {'peak RSS MiB':>13} {'calibration s':>14}")
    rows = []
    for nodes, pods in sizes:
        c = calibrate(1)
        r = measure(nodes, pods)
        r["calibration"] = c
        rows.append((nodes, pods, r))
        print(f"{nodes:>7} {pods:>7} {r['wall']:>8.2f} {r['wall'] / pods * 1e3:>7.3f} {pods / r['wall']:>7.0f} "
              f"{r['rss_kib'] / 1024:>13.0f} {c:>14.3f}", flush=True)
    cal_after = calibrate()
    print(calibration_line(cal_after), flush=True)
    curve = [(n, p, r) for n, p, r in rows if p == n * PODS_PER_NODE]
    if len(curve) >= 2:
        plot(curve, min(cal, cal_after))
        print(f"plot: {os.path.relpath(PLOT)}")


if __name__ == "__main__":
    main()
