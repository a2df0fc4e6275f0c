"""A grid of FGD-protocol runs — traces × policies × seeds — on local processes or on a Dask cluster,
through one code path: a ``concurrent.futures`` executor (a ``ProcessPoolExecutor``, or a Dask
``Client.get_executor()`` when given a scheduler address) runs ``run_cell`` for every cell. The paper's
study is 17 traces × 6 policies × 10 seeds = 1,020 runs (experiments/run_scripts/generate_run_scripts.py).

Why Dask and not Ray: every run is an independent, CPU-bound Python function of a few seconds returning a
small dict, which is exactly ``Executor.submit``; ``distributed`` is pure Python (a few MB from PyPI, no
platform wheels, starts a local cluster in about a second), and its ``Client.get_executor()`` *is* a
``concurrent.futures.Executor``, so local processes and a cluster share the code below line for line. Ray
would bring a large native wheel and its own object store and dashboard for no gain on this workload.
"""
from __future__ import annotations

import csv
import io
import os
import statistics
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

from ..api.errors import InputError
from . import alibaba, protocol

COLUMNS = ("trace", "policy", "seed", "tune", "nodes", "gpus", "pods", "failedPods", "emptyClusterFragTotal",
           *[f"allocated_{a}" for a in protocol.TABLE_POINTS], "unallocated_100", "unallocated_130",
           "fragTotal_100", "fragTotal_130", "fragIdle_100", "wallSeconds")


@dataclass(frozen=True)
class Cell:
    trace: str
    policy: str
    seed: int
    tune: float = protocol.DEFAULT_TUNE


def grid(traces: Sequence[str], policies: Sequence[str], seeds: Sequence[int],
         tune: float = protocol.DEFAULT_TUNE) -> list[Cell]:
    """Every (trace, policy, seed), traces outermost; names are checked before anything runs."""
    known = alibaba.traces()
    for t in traces:
        if t not in known and not t.endswith((".csv", ".csv.gz")):
            raise InputError(f'--traces: Invalid value: "{t}": unknown trace (known: {", ".join(known)})')
    pols = [protocol.policy(p).name for p in policies]
    return [Cell(t, p, s, tune) for t in traces for p in pols for s in seeds]


def run_cell(cell: Cell) -> dict:
    """One run, as a dict: the ``gpusim replay alibaba -o json`` document plus the number of failed pods."""
    r = protocol.run(cell.trace, cell.policy, cell.seed, cell.tune)
    out = r.to_json()
    out["failedPods"] = r.failed
    out["tune"] = cell.tune
    return out


def row(doc: dict) -> dict:
    """The table row of one run."""
    curve = {p["arrived"]: p for p in doc["curve"]}
    out = {k: doc.get(k) for k in ("trace", "policy", "seed", "tune", "nodes", "gpus", "pods", "failedPods",
                                   "emptyClusterFragTotal", "wallSeconds")}
    for a in protocol.TABLE_POINTS:
        out[f"allocated_{a}"] = curve[a]["allocated"] if a in curve else None
    for a in (100, 130):
        out[f"unallocated_{a}"] = round(100 - curve[a]["allocated"], 2) if a in curve else None
        out[f"fragTotal_{a}"] = curve[a]["fragTotal"] if a in curve else None
    out["fragIdle_100"] = curve[100]["fragIdle"] if 100 in curve else None
    return {k: out[k] for k in COLUMNS}


def executor(address: Optional[str] = None, workers: Optional[int] = None) -> tuple[Executor, Any]:
    """Local processes, or the Dask cluster at ``address`` (``tcp://host:8786``). Returns the executor and
    the Dask client to close (None locally)."""
    if address:
        try:
            from distributed import Client
        except ImportError:
            raise InputError("--address needs Dask's distributed scheduler: pip install 'gpusim[dask]'") from None
        client = Client(address)
        return client.get_executor(), client
    return ProcessPoolExecutor(max_workers=workers or os.cpu_count() or 1), None


def sweep(cells: Iterable[Cell], address: Optional[str] = None, workers: Optional[int] = None,
          progress: bool = False) -> list[dict]:
    """Run every cell; the documents come back in grid order (traces, then policies, then seeds)."""
    cells = list(cells)
    ex, client = executor(address, workers)
    try:
        futures = {ex.submit(run_cell, c): i for i, c in enumerate(cells)}
        docs: list[Optional[dict]] = [None] * len(cells)
        bar = None
        if progress:
            from tqdm import tqdm
            bar = tqdm(total=len(cells), desc="sweep", unit="run", leave=False)
        for f in as_completed(futures):
            docs[futures[f]] = f.result()
            if bar is not None:
                bar.update(1)
        if bar is not None:
            bar.close()
    finally:
        ex.shutdown(wait=True)
        if client is not None:
            client.close()
    return [d for d in docs if d is not None]


def write_table(docs: Sequence[dict], path: str) -> None:
    """One row per run: CSV, or Parquet for a ``.parquet`` path (needs pyarrow)."""
    rows = [row(d) for d in docs]
    if path.endswith(".parquet"):
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise InputError(f'--out: Invalid value: "{path}": writing Parquet needs pyarrow (pip install pyarrow); '
                             "give a .csv path instead") from None
        pq.write_table(pa.Table.from_pylist(rows), path)
        return
    Path(path).write_text(to_csv(rows))


def to_csv(rows: Sequence[dict]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(COLUMNS), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def summary(docs: Sequence[dict]) -> list[dict]:
    """Per (trace, policy): unallocated GPU % at arrived = 100 % over the seeds (mean, sample sd), runs, the
    mean wall time per run; with the published mean for the default trace."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for d in docs:
        groups.setdefault((d["trace"], d["policy"]), []).append(d)
    out = []
    for (trace, pol), ds in groups.items():
        u = [100 - {p["arrived"]: p for p in d["curve"]}[100]["allocated"] for d in ds]
        pub = protocol.PUBLISHED_UNALLOCATED_DEFAULT.get(pol) if trace == "default" else None
        out.append({"trace": trace, "policy": pol, "runs": len(ds), "unallocated_mean": round(statistics.mean(u), 2),
                    "unallocated_sd": round(statistics.stdev(u), 2) if len(u) > 1 else 0.0,
                    "published_mean": pub[0] if pub else None,
                    "wall_mean": round(statistics.mean(d["wallSeconds"] for d in ds), 2)})
    return out
