"""gpusim.comparison: the knobs reach the YAML each policy stack reads, Volcano's reclaim switch really
changes who gets the GPUs, and the chapter's summaries and plots show the measured numbers."""
import matplotlib
import pytest
import yaml

matplotlib.use("Agg")

from gpusim import comparison as c  # noqa: E402


def _docs(policy, w):
    return [d for d in yaml.safe_load_all(c.scenario(policy, w)) if d]


def _kind(docs, kind):
    return [d for d in docs if d.get("kind") == kind]


@pytest.mark.parametrize("limit, expect_max", [(None, 32), (0, 8), (4, 12)])
def test_borrowing_limit_sets_elastic_quota_max(limit, expect_max):
    w = c.with_knobs(guaranteed=(24, 8), borrowing_limit=limit)
    eq = {d["metadata"]["namespace"]: d["spec"] for d in _kind(_docs("scheduler-plugins", w), "ElasticQuota")}
    assert eq["team-b"]["min"] == {c.GPU: 8}
    assert eq["team-b"]["max"] == {c.GPU: expect_max}


@pytest.mark.parametrize("limit", [None, 0, 4])
def test_borrowing_limit_and_weights_in_kueue_and_volcano(limit):
    w = c.with_knobs(weights=(1, 3), borrowing_limit=limit)
    cqs = {d["metadata"]["name"]: d["spec"] for d in _kind(_docs("kueue", w), "ClusterQueue")}
    res = cqs["team-b"]["resourceGroups"][0]["flavors"][0]["resources"][0]
    assert res.get("borrowingLimit") == limit and cqs["team-b"]["fairSharing"] == {"weight": 3}
    queues = {d["metadata"]["name"]: d["spec"] for d in _kind(_docs("volcano", w), "Queue")}
    assert queues["team-b"]["weight"] == 3 and queues["team-a"]["weight"] == 1
    assert ("capability" in queues["team-b"]) == (limit is not None)


@pytest.mark.parametrize("kwargs, message", [
    ({"weights": (1,)}, "weight: 1 values for 2 teams"),
    ({"guaranteed": (-1, 4)}, "guaranteed: values must be ≥ 0"),
    ({"borrowing_limit": -2}, "borrowing_limit must be ≥ 0 or None"),
])
def test_with_knobs_rejects_bad_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        c.with_knobs(**kwargs)


@pytest.mark.parametrize("reclaim, preemptable", [(True, True), (True, False), (False, True), (False, False)])
def test_volcano_reclaim_action_and_preemptable_jobs(reclaim, preemptable):
    docs = _docs("volcano", c.with_knobs(reclaim=reclaim, volcano_preemptable=preemptable))
    conf = _kind(docs, "ConfigMap")[0]["data"]["volcano-scheduler.conf"]
    jobs = [d for d in _kind(docs, "Job") if d["apiVersion"].startswith("batch.volcano.sh")]
    assert ("reclaim" in conf.split("\n")[0]) == reclaim
    # unmarked Jobs are preemptable (Volcano's default since v1.7.0); the knob off marks them "false"
    assert all((j["metadata"]["annotations"].get("volcano.sh/preemptable") == "false") != preemptable for j in jobs)


def test_volcano_reclaims_only_preemptable_tasks():
    plain, = c.compare(c.with_knobs(reclaim=True), ("volcano",))
    spared, = c.compare(c.with_knobs(reclaim=True, volcano_preemptable=False), ("volcano",))
    assert spared.evictions == 0 and plain.evictions > 0
    # reclaim serves a job only up to its minAvailable (1 for team B's inference Jobs): one GPU each, early
    assert plain.shares["team-b"] > spared.shares["team-b"]


@pytest.fixture(scope="module")
def rows():
    return c.compare(policies=("default", "scheduler-plugins"))


def test_describe_and_selection_table_show_the_measurements(rows):
    text = c.describe(rows[0])
    assert text.startswith("policy: default — kube-scheduler alone")
    assert f"{rows[0].b_wait_mean:,.0f} s" in text and f"wasted {rows[0].wasted_gpu_hours:.2f} GPU-h" in text
    table = c.selection_table(rows).split("\n")
    assert len(table) == 2 + len(rows) and table[2].startswith("| default |")


def test_plot_outcomes_bars_are_the_measured_values(rows):
    a, b = c.plot_outcomes(rows)
    assert [p.get_height() for p in a.patches] == pytest.approx([m.b_wait_mean / 60 for m in rows])
    assert [p.get_height() for p in b.patches] == pytest.approx([m.wasted_gpu_hours for m in rows])
    assert [t.get_text() for t in b.get_xticklabels()] == ["default", "scheduler-plugins"]


def test_plot_shares_one_panel_per_policy(rows):
    axes = c.plot_shares(rows)
    assert [ax.get_title() for ax in axes] == ["default: GPU share per team", "scheduler-plugins: GPU share per team"]
    assert all(ax.get_xlim()[1] < rows[0].result.end for ax in axes)   # cut at the last allocation, not at `until`


def test_plot_outcomes_labels(rows):
    a, _ = c.plot_outcomes(rows, labels=["kube", "plugins"])
    assert [t.get_text() for t in a.get_xticklabels()] == ["kube", "plugins"]
    with pytest.raises(ValueError, match="1 labels for 2 runs"):
        c.plot_outcomes(rows, labels=["one"])


def test_plot_outcomes_never_served_is_a_bar_to_the_top_not_zero(rows):
    """A run where team B is never served has no wait to draw: a hatched bar reaches the top of the axes and
    says how many Jobs were never served (a zero-height bar would read as "no wait at all")."""
    from dataclasses import replace
    never = replace(rows[0], b_wait_mean=None, b_wait_max=None, b_unserved=4)
    bars = c.outcome_bars([rows[0], never])
    assert bars[1] == {"label": "default", "wait_mean": None, "wait_max": None, "never": 4,
                       "wasted": rows[0].wasted_gpu_hours}
    a, _ = c.plot_outcomes([rows[0], never], labels=["served", "never"])
    hatched = [p for p in a.patches if p.get_hatch()]
    assert len(hatched) == 1 and hatched[0].get_height() == pytest.approx(a.get_ylim()[1])
    assert any(t.get_text() == "4 Jobs\nnever\nserved" for t in a.texts)
