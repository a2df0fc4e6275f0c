"""The FGD study's curves for chapter 08, precomputed: the six policies on the ``default`` trace over seeds,
cached as gzipped JSON beside the trace so the chapter loads them in milliseconds instead of replaying ~60 runs.

The cache holds each run's ``ReplayResult.to_json()`` document (the ``gpusim replay alibaba -o json``
contract) without ``wallSeconds``, the one field that changes from run to run; everything else is a pure
function of (trace, policy, seed, tune). Regenerate it with::

    .venv/bin/python -m gpusim.replay.study            # 6 policies × seeds 42…51, about 5 min on one core

and ``tests/test_replay_study.py`` checks one cached document against a fresh run. The comparison with the
paper uses its published means (Weng et al., ATC '23, Fig. 11(a); ``protocol.PUBLISHED_UNALLOCATED_DEFAULT``).
"""
from __future__ import annotations

import gzip
import json
import statistics
import sys
from pathlib import Path
from typing import Any, Optional, Sequence

from . import alibaba, plots, protocol

CACHE = Path(__file__).parent / "data" / "fgd-default-curves.json.gz"
REGENERATE = "python -m gpusim.replay.study"


def cached_doc(doc: dict) -> dict:
    """``doc`` as the cache stores it: the run's JSON document without ``wallSeconds``."""
    return {k: v for k, v in doc.items() if k != "wallSeconds"}


def compute(trace: str = "default", policies: Sequence[str] = tuple(protocol.POLICIES),
            seeds: Sequence[int] = protocol.DEFAULT_SEEDS, tune: float = protocol.DEFAULT_TUNE) -> dict:
    """Run every (policy, seed) of ``trace`` and return the cache document."""
    docs = [cached_doc(protocol.run(trace, p, s, tune).to_json()) for p in policies for s in seeds]
    return {"trace": trace, "tune": tune, "seeds": list(seeds), "policies": list(policies),
            "command": REGENERATE, "docs": docs}


def load(path: Optional[Path] = None) -> dict:
    """The cached study (``compute``'s document)."""
    return json.loads(gzip.decompress((path or CACHE).read_bytes()))


def write(study: dict, path: Optional[Path] = None) -> None:
    """Write ``study`` gzipped, byte-for-byte reproducible (no timestamp in the gzip header)."""
    (path or CACHE).write_bytes(gzip.compress((json.dumps(study, separators=(",", ":")) + "\n").encode(), mtime=0))


def find(study: dict, policy: str, seed: int) -> dict:
    """The cached run of ``policy`` with ``seed``."""
    for d in study["docs"]:
        if d["policy"] == policy and d["seed"] == seed:
            return d
    raise KeyError(f"no cached run for policy {policy!r} seed {seed} (seeds: {study['seeds']})")


def unallocated_at_100(doc: dict) -> float:
    """Unallocated GPU % of cluster capacity when arrived workload = 100 %."""
    return doc["atArrived"]["100"]["unallocated"]


def against_paper(study: dict) -> list[dict]:
    """Per policy: gpusim's mean ± sd of unallocated GPU % at 100 % arrival over the cached seeds, the paper's
    published mean ± sd, and the difference (percentage points); best policy first."""
    rows = []
    for pol in study["policies"]:
        u = [unallocated_at_100(d) for d in study["docs"] if d["policy"] == pol]
        pm, ps = protocol.PUBLISHED_UNALLOCATED_DEFAULT[pol]
        mean = statistics.mean(u)
        rows.append({"policy": pol, "runs": len(u), "gpusim_mean": round(mean, 2),
                     "gpusim_sd": round(statistics.stdev(u), 2) if len(u) > 1 else 0.0,
                     "published_mean": pm, "published_sd": ps, "diff": round(mean - pm, 2)})
    return sorted(rows, key=lambda r: r["gpusim_mean"])


def format_against_paper(rows: list[dict]) -> str:
    """``against_paper`` as a Markdown table."""
    lines = ["| policy | runs | gpusim unallocated @100% | paper (ATC '23) | diff (pp) |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['policy']} | {r['runs']} | {r['gpusim_mean']:.2f} ± {r['gpusim_sd']:.2f} % | "
                     f"{r['published_mean']:.2f} ± {r['published_sd']:.2f} % | {r['diff']:+.2f} |")
    return "\n".join(lines)


def ranking(rows: list[dict]) -> list[str]:
    """Policies best (fewest unallocated GPUs) first."""
    return [r["policy"] for r in sorted(rows, key=lambda r: r["gpusim_mean"])]


def plot_study(study: dict, axes: Any = None, lo: int = 60) -> Any:
    """The allocation and fragmentation curves per policy (mean over seeds), from arrived = ``lo`` %."""
    return plots.plot_curves(study["docs"], axes=axes, lo=lo)


def plot_bars(study: dict, ax: Any = None) -> Any:
    """Unallocated GPUs at 100 % arrival per policy (mean ± sd over the seeds), with the paper's means as black
    ticks; one trace, so one wide group with room above the bars for the legend."""
    import matplotlib.pyplot as plt
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 4))
    plots.plot_unallocated_bars(study["docs"], protocol.PUBLISHED_UNALLOCATED_DEFAULT, ax=ax)
    top = max(unallocated_at_100(d) for d in study["docs"])
    ax.set_ylim(0, top * 1.4)
    ax.set_title(f"Unallocated GPUs at 100% arrival on {study['trace']}: gpusim (bars, {len(study['seeds'])} seeds) "
                 "vs paper (black ticks)", fontsize=10)
    ax.legend(fontsize=8, ncol=3, loc="upper right")
    return ax


def replay_doc(trace: str, policy: str, seed: int, study: Optional[dict] = None) -> dict:
    """One run's JSON document: from the cache when it holds (trace, policy, seed), else a fresh replay
    (a few seconds)."""
    if study is not None and trace == study["trace"] and seed in study["seeds"] and policy in study["policies"]:
        return find(study, policy, seed)
    return protocol.run(trace, policy, seed).to_json()


def describe_run(doc: dict) -> str:
    """A few lines on one run: size, empty-cluster fragmentation, and the points at 100 % / 130 % arrival."""
    a100, a130 = doc["atArrived"]["100"], doc["atArrived"]["130"]
    return (f"{doc['trace']} / {doc['policy']} / seed {doc['seed']}: {doc['nodes']} nodes, {doc['gpus']} GPUs, "
            f"{doc['pods']} pods; empty-cluster fragmentation {doc['emptyClusterFragTotal']:.2f}% of GPUs\n"
            f"  arrived 100%: allocated {a100['allocated']:.2f}%, unallocated {a100['unallocated']:.2f}%, "
            f"fragmented {a100['fragTotal']:.2f}%\n"
            f"  arrived 130%: allocated {a130['allocated']:.2f}%, unallocated {a130['unallocated']:.2f}%, "
            f"fragmented {a130['fragTotal']:.2f}%")


def show_run(doc: dict, axes: Any = None) -> Any:
    """Print ``describe_run`` and draw the run's two curves."""
    print(describe_run(doc))
    return plots.plot_curves([doc], axes=axes, lo=0)


def study_widget(study: dict) -> Any:
    """Dropdowns for trace variant, policy and seed; each change shows that run (cached for the default
    trace's cached seeds, otherwise replayed, a few seconds)."""
    import ipywidgets as w
    import matplotlib.pyplot as plt
    from IPython.display import clear_output

    from ..views.display import Shown

    trace = w.Dropdown(options=list(alibaba.traces()), value=study["trace"], description="trace")
    pol = w.Dropdown(options=list(protocol.POLICIES), value="FGD", description="policy")
    seed = w.BoundedIntText(value=study["seeds"][0], min=0, max=10_000, description="seed")
    out = w.Output()

    def redraw(*_: Any) -> None:
        with out:
            clear_output(wait=True)
            show_run(replay_doc(trace.value, pol.value, int(seed.value), study))
            plt.tight_layout()
            plt.show()

    for c in (trace, pol, seed):
        c.observe(redraw, names="value")
    redraw()
    return Shown(w.VBox([w.HBox([trace, pol, seed]), out]),
                 "Interactive: pick a trace variant, a policy and a seed (needs a running Jupyter kernel); "
                 "the static figure above shows FGD on default with seed 42.")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Regenerate the cache (``python -m gpusim.replay.study [--seeds 42-51] [--out PATH]``)."""
    import argparse
    ap = argparse.ArgumentParser(description="Regenerate the FGD study cache of chapter 08.")
    ap.add_argument("--seeds", default="42-51")
    ap.add_argument("--out", default=str(CACHE))
    args = ap.parse_args(argv)
    lo, _, hi = args.seeds.partition("-")
    seeds = list(range(int(lo), int(hi or lo) + 1))
    study = compute(seeds=seeds)
    write(study, Path(args.out))
    print(format_against_paper(against_paper(study)))
    print("ranking:", " < ".join(ranking(against_paper(study))), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
