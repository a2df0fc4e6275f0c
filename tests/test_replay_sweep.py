"""``gpusim sweep``: the same grid gives the same rows on local processes and on a Dask cluster (started
here, on this machine), and writes one table and the paper's bar figure."""
from __future__ import annotations

import contextlib
import csv
import io

import pytest

from gpusim.api.errors import InputError
from gpusim.cli import main
from gpusim.replay import sweep as sw

distributed = pytest.importorskip("distributed")

GRID = dict(traces=["default"], policies=["BestFit", "DotProd"], seeds=[42, 7], tune=0.25)


def _strip(docs):
    return [{k: v for k, v in d.items() if k != "wallSeconds"} for d in docs]


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        yield c


def test_local_processes_and_dask_agree(cluster):
    cells = sw.grid(**GRID)
    assert [(c.policy, c.seed) for c in cells] == [("BestFit", 42), ("BestFit", 7), ("DotProd", 42), ("DotProd", 7)]
    local = sw.sweep(cells, workers=2)
    remote = sw.sweep(cells, address=cluster.scheduler_address)
    assert _strip(remote) == _strip(local)
    assert [(d["policy"], d["seed"]) for d in remote] == [(c.policy, c.seed) for c in cells]
    assert all(d["atArrived"] == {} and 24 <= d["curve"][-1]["arrived"] <= 26 for d in remote)   # tuned to 25 %


def test_cli_sweep_on_dask_writes_the_table_and_figures(cluster, tmp_path):
    out, fig, curves = tmp_path / "runs.csv", tmp_path / "bars.png", tmp_path / "curves.png"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["sweep", "--traces", "default", "--policies", "BestFit,DotProd", "--seeds", "42",
                     "--tune", "1.0", "--address", cluster.scheduler_address, "--out", str(out),
                     "--figure", str(fig), "--curves", str(curves)])
    assert code == 0
    rows = list(csv.DictReader(out.open()))
    assert [(r["trace"], r["policy"], r["seed"]) for r in rows] == [("default", "BestFit", "42"),
                                                                    ("default", "DotProd", "42")]
    assert list(rows[0]) == list(sw.COLUMNS) and rows[0]["gpus"] == "6212" and rows[0]["unallocated_130"] == ""
    assert float(rows[0]["allocated_80"]) == pytest.approx(80, abs=0.5)
    assert float(rows[0]["unallocated_100"]) == pytest.approx(100 - float(rows[0]["allocated_100"]), abs=0.01)
    for f in (fig, curves):
        assert f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f.stat().st_size > 10_000
    text = buf.getvalue().splitlines()
    assert text[0].split() == ["TRACE", "POLICY", "RUNS", "UNALLOCATED@100%", "PUBLISHED", "WALL/RUN"]
    assert len(text) == 3


@pytest.mark.parametrize("argv, message", [
    (["sweep", "--traces", "nope"], '--traces: Invalid value: "nope": unknown trace'),
    (["sweep", "--policies", "Tetris"], '--policy: Invalid value: "Tetris"'),
    (["sweep", "--seeds", "x-y"], '--seeds: Invalid value: "x-y"'),
])
def test_sweep_rejects_bad_grids_before_running(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_parquet_needs_pyarrow(tmp_path):
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        with pytest.raises(InputError, match="writing Parquet needs pyarrow"):
            sw.write_table([], str(tmp_path / "x.parquet"))
    else:
        pytest.skip("pyarrow is installed")
