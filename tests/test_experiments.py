"""gpusim.experiments (edits, workflow, gang, volcano) and the text views the course's cells call instead of
holding logic: each edit changes exactly the field it names, a missing object is a KeyError naming it, and the
runs behind the chapters' exercises give the answers the notebooks assert."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import gpusim as gs
import gpusim.labs  # noqa: F401  (gs.labs)
from gpusim import comparison
from gpusim.experiments import edits
from gpusim.experiments.gang import run_coscheduling
from gpusim.experiments.volcano import weight_sweep
from gpusim.experiments.workflow import downtime_sweep, format_downtime_sweep

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def text(name: str) -> str:
    return (EXAMPLES / f"{name}.yaml").read_text()


def obj(t: str, kind: str, name: str) -> dict:
    return edits.find(edits.docs(t), kind, name)


@pytest.mark.parametrize("example,edit,kind,name,path,value", [
    ("lifecycle", lambda t: edits.with_pod_gpus(t, "infer", 3), "Pod", "infer",
     ("spec", "containers", 0, "resources", "limits", "nvidia.com/gpu"), 3),
    ("xid-unhealthy", lambda t: edits.with_fault(t, "fallen-off-the-bus", xid=43), "Fault", "fallen-off-the-bus",
     ("spec", "xid"), 43),
    ("admission-error", lambda t: edits.with_fault(t, "kubelet-restart", downtime="8s"), "Fault", "kubelet-restart",
     ("spec", "downtime"), "8s"),
    ("queueing", lambda t: edits.with_priority_class(t, "train-3", 1000), "Pod", "train-3",
     ("spec", "priorityClassName"), "high-priority"),
    ("volcano-queues", lambda t: edits.with_queue_weights(t, {"team-b": 2}), "Queue", "team-b", ("spec", "weight"), 2),
    ("volcano-gang", lambda t: edits.with_min_available(t, "llm-pretrain", 7), "Job", "llm-pretrain",
     ("spec", "minAvailable"), 7),
    ("kueue-fair-sharing", lambda t: edits.with_cluster_queue_quota(t, "team-b", lendingLimit=0), "ClusterQueue",
     "team-b", ("spec", "resourceGroups", 0, "flavors", 0, "resources", 0, "lendingLimit"), 0),
])
def test_an_edit_changes_the_field_it_names_and_nothing_else(example, edit, kind, name, path, value):
    before, after = edits.docs(text(example)), edits.docs(edit(text(example)))
    target = edits.find(after, kind, name)
    for key in path:
        target = target[key]
    assert target == value
    untouched = [d for d in after if not (d.get("kind") == kind and d["metadata"]["name"] == name)
                 and d.get("kind") != "PriorityClass"]
    assert untouched == [d for d in before if not (d.get("kind") == kind and d["metadata"]["name"] == name)]
    gs.load(texts=[("<edited>", edit(text(example)))])                    # still a valid scenario


@pytest.mark.parametrize("call,message", [
    (lambda: edits.with_pod_gpus(text("lifecycle"), "nope", 1), "no Pod named 'nope'"),
    (lambda: edits.with_fault(text("lifecycle"), "restart", downtime="1s"), "no Fault named 'restart'"),
    (lambda: edits.with_elastic_quota(text("lifecycle"), "team-a", max={}), "no ElasticQuota in namespace 'team-a'"),
])
def test_an_edit_of_a_missing_object_names_it(call, message):
    with pytest.raises(KeyError, match=message):
        call()


def test_with_pod_and_with_annotation():
    t = edits.with_annotation(edits.with_pod(text("lifecycle"), "extra", 2, submit_at="20s", duration="1m"),
                              "Pod", "extra", "gpusim.io/duration", "2m")
    p = obj(t, "Pod", "extra")
    assert p["metadata"]["annotations"] == {"gpusim.io/submit-at": "20s", "gpusim.io/duration": "2m"}
    assert p["spec"]["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": 2}


def test_with_pod_groups_labels_each_job_into_its_own_group():
    jobs = text("gang-partial-start") + yaml.safe_dump(
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "other"},
         "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}}},
        explicit_start=True)
    t = edits.with_pod_groups(jobs, {"llm-pretrain": 8, "other": 1})
    groups = {d["metadata"]["name"]: d["spec"]["minMember"] for d in edits.docs(t) if d["kind"] == "PodGroup"}
    assert groups == {"llm-pretrain": 8, "other": 1}
    for job in groups:
        labels = obj(t, "Job", job)["spec"]["template"]["metadata"]["labels"]
        assert labels["scheduling.x-k8s.io/pod-group"] == job
    assert sum(d["kind"] == "KubeSchedulerConfiguration" for d in edits.docs(t)) == 1


def test_downtime_sweep_finds_the_admission_error_threshold():
    base = text("admission-error")
    rows = downtime_sweep(base, ["4s", "8s"])
    by = {(x["downtime"], x["pod"]): x for x in rows}
    assert by[("4s", "bound-during-restart-1")]["phase"] == "Succeeded"
    assert by[("4s", "bound-during-restart-1")]["failedScheduling"]
    assert by[("8s", "bound-during-restart-1")]["reason"] == "UnexpectedAdmissionError"
    table = format_downtime_sweep(rows).splitlines()
    assert table[0].startswith("DOWNTIME") and len(table) == 1 + len(rows)


def test_run_coscheduling_min_member_below_the_gang_starts_partially():
    base = text("gang-partial-start")
    assert gs.labs.check_gang(run_coscheduling(base, "llm-pretrain", 8), "llm-pretrain").passed
    assert not gs.labs.check_gang(run_coscheduling(base, "llm-pretrain", 7), "llm-pretrain").passed


def test_weight_sweep_gang_starts_only_when_deserved_covers_it():
    rows = weight_sweep(text("volcano-queues"), [(1, 2), (1, 3)], job="finetune")
    assert [(x["weights"], x["started"], x["evicted"]) for x in rows] == [((1, 2), False, 0), ((1, 3), True, 6)]
    assert rows[1]["deserved"] == (2.0, 6.0)


def test_text_views_the_cells_print():
    rq = gs.run(str(EXAMPLES / "volcano-queues.yaml"))
    table = gs.format_queue_shares(rq, times=(602,)).splitlines()
    assert table[0].split() == ["TIME", "QUEUE", "WEIGHT", "DESERVED", "ALLOCATED", "REQUEST", "SHARE"]
    assert [line.split()[:4] for line in table[1:]] == [["602s", "team-a", "1", "2"], ["602s", "team-b", "3", "6"]]
    evict = gs.get_events(rq, reason="Evict").splitlines()
    assert len(evict) == 1 + 7 and all(" Evict " in line for line in evict[1:])
    rv = gs.run(str(EXAMPLES / "volcano-gang.yaml"), until="20m")
    assert "reason=NotEnoughResources" in gs.format_pod_group_conditions(rv, "llm-pretrain")
    rk = gs.run(str(EXAMPLES / "kueue-fair-sharing.yaml"))
    history = gs.events_for(rk, "Job", "train-a4", "team-a", exclude=("SuccessfulCreate",)).splitlines()
    assert [line.split()[1] for line in history] == ["CreatedWorkload:", "Suspended:", "Started:", "Resumed:",
                                                      "Stopped:", "Suspended:", "Started:", "Resumed:", "Completed:"]
    assert gs.events_for(rk, "Job", "nope") == "No events found."
    assert gs.get_events(rk, kind="Job", name="train-a4", namespace="team-b") == "No events found."


def test_interpretation_quotes_the_measurements():
    w = comparison.MultiTenant()
    rows = comparison.compare(w)
    vs, = comparison.compare(comparison.with_knobs(w, volcano_preemptable=False), ("volcano",))
    lines = comparison.interpretation(rows, vs).splitlines()
    assert [line.split("：", 1)[0] for line in lines] == [
        "default", "scheduler-plugins", "volcano", 'volcano，训练 Job 标 `volcano.sh/preemptable: "false"`', "kueue"]
    sp, vc = rows[1], rows[2]
    assert f"驱逐了 {sp.evictions} 个训练 worker" in lines[1] and f"{sp.wasted_gpu_hours:.2f} GPU 小时" in lines[1]
    assert "v1.15.0" in lines[2] and "#5067" in lines[2] and f"驱逐 {vc.evictions} 个 worker" in lines[2]
    assert vc.evictions > 0 and vs.evictions == 0 and f"驱逐 {vs.evictions} 次" in lines[3]


def test_lab_reports():
    r = gs.run(str(EXAMPLES / "gang-partial-start.yaml"))
    line, = gs.labs.gang_report({"broken": r}, "llm-pretrain").splitlines()
    assert line.startswith("broken") and line.endswith("wasted 6.98 GPU-h")
    assert gs.labs.job_failures(r, "default") == ""
