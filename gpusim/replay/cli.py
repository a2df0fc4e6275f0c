"""``gpusim replay alibaba`` and ``gpusim sweep`` (hooked into gpusim.cli).

    gpusim replay alibaba [--trace NAME|FILE.csv] [--policy NAME] [--seed N] [--tune 1.3] [-o table|json]
                          [--plot FILE.png]
    gpusim sweep [--traces default,...|paper|all] [--policies all|FGD,...] [--seeds 42-51] [--tune 1.3]
                 [--workers N | --address tcp://HOST:8786] [--out results.csv|.parquet] [--figure bars.png]
                 [--curves curves.png]

A progress bar (tqdm, on stderr) shows only when stderr is a terminal.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..api.errors import InputError


def add_parsers(sub: Any) -> None:
    """Add the ``replay`` and ``sweep`` subcommands to gpusim's argument parser."""
    from . import alibaba, protocol
    rp = sub.add_parser("replay", help="replay a cluster trace under one placement policy (the FGD protocol)")
    src = rp.add_subparsers(dest="source", required=True)
    a = src.add_parser("alibaba", help="the Alibaba GPU cluster trace v2023: 1,213 GPU nodes, tuned to 130%% of "
                                       "GPU capacity, each pod scheduled once")
    a.add_argument("--trace", default="default", help=f"pod list: {', '.join(alibaba.traces())}, or a CSV path")
    a.add_argument("--policy", default="FGD", help=", ".join(protocol.POLICIES))
    a.add_argument("--seed", type=int, default=protocol.DEFAULT_SEEDS[0])
    a.add_argument("--tune", type=float, default=protocol.DEFAULT_TUNE,
                   help="inflate (or shrink) the workload to this multiple of GPU capacity")
    a.add_argument("-o", "--output", default="table", choices=["table", "json"])
    a.add_argument("--plot", metavar="FILE.png", help="also write the allocation and fragmentation curves")
    sw = sub.add_parser("sweep", help="FGD-protocol runs over traces x policies x seeds, on local processes or Dask")
    sw.add_argument("--traces", default="default", help="comma-separated trace names, 'paper' (the 17 of the "
                                                        "study) or 'all'")
    sw.add_argument("--policies", default="all", help="comma-separated policies or 'all'")
    sw.add_argument("--seeds", default="42-51", help="e.g. 42-51 or 42,43")
    sw.add_argument("--tune", type=float, default=protocol.DEFAULT_TUNE)
    sw.add_argument("--workers", type=int, help="local worker processes (default: one per CPU)")
    sw.add_argument("--address", help="a Dask scheduler to run on instead, e.g. tcp://10.0.0.5:8786")
    sw.add_argument("--out", metavar="FILE", help="write one row per run (.csv, or .parquet with pyarrow)")
    sw.add_argument("--figure", metavar="FILE.png", help="write the bar chart of unallocated GPUs at 100%% arrival")
    sw.add_argument("--curves", metavar="FILE.png", help="write the mean allocation and fragmentation curves")


def _seeds(text: str) -> list[int]:
    out: list[int] = []
    try:
        for part in text.split(","):
            if "-" in part.strip()[1:]:
                lo, hi = part.split("-", 1)
                out += list(range(int(lo), int(hi) + 1))
            elif part.strip():
                out.append(int(part))
    except ValueError:
        raise InputError(f'--seeds: Invalid value: "{text}": give seeds as 42-51 or 42,43') from None
    if not out or any(s < 0 for s in out):
        raise InputError(f'--seeds: Invalid value: "{text}": give non-negative seeds as 42-51 or 42,43')
    return out


def _list(text: str, every: tuple, flag: str) -> list[str]:
    if text in ("all", "*"):
        return list(every)
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise InputError(f'{flag}: Invalid value: "{text}": give at least one name')
    return items


def table(doc: dict, failed: int) -> str:
    """The run as text: one header row, then the curve at 80/90/95/100/130 % arrival."""
    from .protocol import TABLE_POINTS
    head = ["TRACE", "POLICY", "SEED", "NODES", "GPUS", "PODS", "FAILED", "EMPTY-FRAG", "WALL"]
    vals = [doc["trace"], doc["policy"], str(doc["seed"]), str(doc["nodes"]), str(doc["gpus"]), str(doc["pods"]),
            str(failed), f"{doc['emptyClusterFragTotal']:.2f}%", f"{doc['wallSeconds']:.1f}s"]
    curve = {p["arrived"]: p for p in doc["curve"]}
    rows = [["ARRIVED", "ALLOCATED", "UNALLOCATED", "FRAG-TOTAL", "FRAG-IDLE"]]
    for a in TABLE_POINTS:
        p = curve.get(a)
        if p is not None:
            rows.append([f"{a}%", f"{p['allocated']:.2f}%", f"{100 - p['allocated']:.2f}%", f"{p['fragTotal']:.2f}%",
                         f"{p['fragIdle']:.2f}%"])
    return _columns([head, vals]) + "\n\n" + _columns(rows)


def _columns(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("   ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


def main(args: argparse.Namespace) -> int:
    """Run a parsed ``replay``/``sweep`` command; InputError propagates to gpusim.cli (exit 2)."""
    progress = sys.stderr.isatty()
    if args.command == "replay":
        from .protocol import run
        r = run(args.trace, args.policy, args.seed, args.tune, progress=progress)
        doc = r.to_json()
        if args.plot:
            from .plots import plot_curves
            _save(args.plot, lambda: plot_curves([doc]))
        print(json.dumps(doc, indent=2) if args.output == "json" else table(doc, r.failed))
        return 0
    from . import alibaba, plots, protocol, sweep
    traces = list(alibaba.PAPER_TRACES) if args.traces == "paper" else _list(args.traces, alibaba.traces(), "--traces")
    cells = sweep.grid(traces, _list(args.policies, tuple(protocol.POLICIES), "--policies"), _seeds(args.seeds),
                       args.tune)
    if args.workers is not None and args.workers < 1:
        raise InputError(f"--workers: Invalid value: {args.workers}: must be at least 1")
    docs = sweep.sweep(cells, address=args.address, workers=args.workers, progress=progress)
    if args.out:
        sweep.write_table(docs, args.out)
    if args.figure:
        _save(args.figure, lambda: plots.plot_unallocated_bars(
            docs, protocol.PUBLISHED_UNALLOCATED_DEFAULT if traces[0] == "default" else None, traces=traces))
    if args.curves:
        _save(args.curves, lambda: plots.plot_curves([d for d in docs if d["trace"] == traces[0]]))
    rows = [["TRACE", "POLICY", "RUNS", "UNALLOCATED@100%", "PUBLISHED", "WALL/RUN"]]
    for s in sweep.summary(docs):
        pub = f"{s['published_mean']:.2f}%" if s["published_mean"] is not None else "-"
        rows.append([s["trace"], s["policy"], str(s["runs"]), f"{s['unallocated_mean']:.2f}% ± {s['unallocated_sd']:.2f}",
                     pub, f"{s['wall_mean']:.1f}s"])
    print(_columns(rows))
    return 0


def _save(path: str, draw) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ax = draw()
    fig = (ax[0] if hasattr(ax, "__len__") else ax).figure
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
