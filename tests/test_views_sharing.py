"""gpusim.views.sharing: isolation facts from the catalog, the OOM comparison, MIG slice maps, the
throughput model."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

import gpusim as gs  # noqa: E402
from gpusim.api.errors import InputError  # noqa: E402
from gpusim.cluster.scenario import load  # noqa: E402
from gpusim.hardware.catalog import CATALOG  # noqa: E402
from gpusim.views import sharing  # noqa: E402


def _row(name):
    return next(r for r in sharing.isolation_table() if r["mechanism"].startswith(name))


def test_isolation_table_has_every_mechanism():
    names = [r["mechanism"] for r in sharing.isolation_table()]
    assert names == ["none (whole GPU)", "time-slicing", "MPS", "MIG", "vGPU (C-series)", "HAMi"]
    text = sharing.format_isolation_table()
    assert text.count("\n") == len(names) + 1 and "`nvidia.com/gpumem`" in text


def test_mig_only_for_mig_capable_models():
    mig_row = _row("MIG")
    assert set(mig_row["gpus"]) == {m.name for m in CATALOG.values() if m.mig_capable}
    assert "T4" not in mig_row["gpus"] and "L40S" not in mig_row["gpus"]
    assert mig_row["max_tenants"]["A100-SXM4-80GB"] == 7 and mig_row["max_tenants"]["A30-24GB"] == 4


@pytest.mark.parametrize("model, cap", [("A100-SXM4-80GB", 48), ("T4", 48), ("H100-SXM5-80GB", 48),
                                        ("V100-SXM2-32GB", 16)])
def test_mps_cap(model, cap):
    assert sharing.mps_max_clients(model) == cap
    assert _row("MPS")["max_tenants"][model] == cap


@pytest.mark.parametrize("model", ["A100-SXM4-80GB", "V100-SXM2-32GB"])
def test_mps_cap_matches_scenario_validation(model):
    cap = sharing.mps_max_clients(model)

    def scenario(replicas):
        return sharing.with_sharing_mode(sharing.sharing_scenario("whole", tenants=1, model=model), "mps", replicas)

    load(texts=[("ok.yaml", scenario(cap))])
    with pytest.raises(InputError, match=f"maximum allowed replicas exceeded: {cap + 1} > {cap}"):
        load(texts=[("bad.yaml", scenario(cap + 1))])


def test_time_slicing_unbounded():
    assert set(_row("time-slicing")["max_tenants"].values()) == {None}


@pytest.fixture(scope="module")
def comparison():
    return gs.compare_sharing()


def test_compare_sharing_figures(comparison):
    rows = {r["mode"]: r for r in sharing.sharing_summary(comparison)}
    ts, mps, whole = rows["time-slicing"], rows["mps"], rows["whole"]
    assert (ts["oom_events"], ts["oom_instants"], ts["pods_failed"], ts["restarts"]) == (8, 2, 4, 8)
    assert ts["first_oom"] == pytest.approx(481.008)
    assert (mps["oom_events"], mps["pods_failed"], mps["restarts"], mps["running"]) == (6, 1, 5, 4)
    assert mps["first_oom"] == pytest.approx(121.008)
    assert {x.object for x in sharing.oom_records(comparison["mps"])} == {"Pod default/llm-3"}
    assert (whole["oom_events"], whole["running"], whole["pending"]) == (0, 1, 3)


def test_compare_sharing_on_the_example_matches_the_builder(comparison):
    with open("examples/inference-oom.yaml") as f:
        from_example = gs.compare_sharing(f.read(), modes=("time-slicing", "mps"))
    built = {r["mode"]: r for r in sharing.sharing_summary(comparison)}
    for row in sharing.sharing_summary(from_example):
        assert row == built[row["mode"]]


def test_memory_stack_draws(comparison):
    for mode in ("time-slicing", "mps", "whole"):
        ax = sharing.memory_stack(comparison[mode])
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        assert "GPU memory 80 GiB" in labels and ("OOM" in labels) is (mode != "whole")
        assert ("MPS pinned limit 20 GiB" in labels) is (mode == "mps")
        plt.close("all")


def test_unknown_mode():
    with pytest.raises(ValueError, match="unknown sharing mode"):
        sharing.sharing_scenario("mig")


@pytest.mark.parametrize("model, profiles, valid", [
    ("A100-SXM4-80GB", ["4g.40gb", "3g.40gb"], True),
    ("A100-SXM4-80GB", ["4g.40gb", "4g.40gb"], False),
    ("A100-SXM4-80GB", ["3g.40gb", "3g.40gb", "1g.10gb"], False),
    ("A30-24GB", ["2g.12gb", "2g.12gb"], True),
    ("A100-SXM4-40GB", [], True),
])
def test_mig_slice_map(model, profiles, valid):
    ax = sharing.mig_slice_map(model, profiles)
    title = ax.get_title()
    assert ("INVALID" in title) is (not valid)
    assert ("valid" in title.lower()) and len(ax.get_xticks()) == (4 if model.startswith("A30") else 8)
    plt.close("all")


def test_throughput_model_properties():
    tp = sharing.throughput_vs_tenants(("time-slicing", "mps", "mig", "whole"))
    ts = tp["time-slicing"]
    assert ts[0] == (1, 1.0, 1.0)
    assert all(a[1] > b[1] and a[2] > b[2] for a, b in zip(ts, ts[1:]))      # per-tenant and aggregate fall
    for mode in ("mps", "mig"):
        aggs = [agg for _, _, agg in tp[mode] if agg is not None]
        assert all(a < b for a, b in zip(aggs, aggs[1:]))                    # concurrency adds up
    assert all(agg <= 1.0 for rows in tp.values() for _, _, agg in rows if agg is not None)
    assert tp["mps"][-1][1] == pytest.approx(0.12)                           # 100 // 8 = 12 %
    assert tp["mig"][6][2] == pytest.approx(7 * 14 / 108) and tp["mig"][7] == (8, None, None)
    assert [row[1] for row in tp["whole"]] == [1.0] + [None] * 7
    small = sharing.throughput_vs_tenants(("time-slicing",), demand=0.25)["time-slicing"]
    assert all(agg <= 0.25 for _, _, agg in small)


def test_plot_throughput_and_exports():
    axes = gs.plot_throughput()
    assert len(axes) == 2 and axes[0].get_lines()
    plt.close("all")
    for name in ("compare_sharing", "sharing_summary", "memory_stack", "mig_slice_map", "isolation_table",
                 "throughput_vs_tenants", "sharing_widget", "mig_layout_widget"):
        assert callable(getattr(gs, name))
