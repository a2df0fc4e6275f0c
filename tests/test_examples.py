"""The shipped examples, run through the CLI as a user runs them.

Each test states what the example is meant to teach (see the comment at the top of each
examples/*.yaml) and checks it in the JSON of ``gpusim run -o json``; the golden files pin the
default table output, and two runs of the same input must print the same bytes.
"""
from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import pytest

from gpusim.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
NAMES = ["lifecycle", "queueing", "admission-error", "xid-unhealthy", "inference-oom", "gang-partial-start",
         "capacity-reclaim", "native-gang", "native-gang-1.35",
         "volcano-gang", "volcano-queues", "volcano-hypernode",
         "kueue-fair-sharing", "kueue-tas", "dra-gpu",
         "compute-domain"]

GPU = "nvidia.com/gpu"
GRPC = 0.001             # Timing.grpc_latency default
CONTAINER_START = 1.0    # Timing.container_start default
# Scheduled → Running: GetPreferredAllocation + Allocate (two RPCs), then the container start.
ADMIT_TO_RUNNING = CONTAINER_START + 2 * GRPC


def cli(capsys, *argv: str) -> str:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    assert err == ""
    return out


def run_json(capsys, name: str, *extra: str) -> dict:
    return json.loads(cli(capsys, "run", str(EXAMPLES / f"{name}.yaml"), "-o", "json", *extra))


def pods_by_name(data: dict) -> dict:
    return {p["name"]: p for p in data["pods"]}


def events_of(data: dict, pod: str, reason: str | None = None) -> list[dict]:
    return [e for e in data["events"] if e["object"]["kind"] == "Pod" and e["object"]["name"] == pod
            and (reason is None or e["reason"] == reason)]


def durations(name: str) -> dict[str, float]:
    """gpusim.io/duration per pod, read from the example itself."""
    import yaml
    from gpusim.api.duration import parse_duration
    out = {}
    for doc in yaml.safe_load_all((EXAMPLES / f"{name}.yaml").read_text()):
        if doc and doc.get("kind") == "Pod":
            out[doc["metadata"]["name"]] = parse_duration(doc["metadata"]["annotations"]["gpusim.io/duration"])
    return out


def overlapping(a: dict, b: dict) -> bool:
    """Two allocation records [start, end) overlap (end None = held until the end)."""
    inf = float("inf")
    return a["start"] < (b["end"] if b["end"] is not None else inf) and \
        b["start"] < (a["end"] if a["end"] is not None else inf)


# --- lifecycle -------------------------------------------------------------------------------------------

def test_lifecycle(capsys):
    data = run_json(capsys, "lifecycle")
    pods = pods_by_name(data)
    dur = durations("lifecycle")
    assert set(pods) == {"train-a", "train-b", "infer"}
    wanted = {"train-a": 4, "train-b": 2, "infer": 1}
    for name, p in pods.items():
        assert p["phase"] == "Succeeded", p
        assert p["nodeName"] == "a100-0"
        assert p["restarts"] == 0
        devs = p["devices"][GPU]
        assert len(devs) == len(set(devs)) == wanted[name]
        assert all(d.startswith("GPU-") for d in devs)
        # The node has room for everything: scheduled the moment it is created.
        assert p["scheduledAt"] == p["createdAt"]
        assert p["startedAt"] == pytest.approx(p["scheduledAt"] + ADMIT_TO_RUNNING, abs=1e-9)
        assert p["finishedAt"] == pytest.approx(p["startedAt"] + dur[name], abs=1e-9)
    assert pods["train-b"]["createdAt"] == 30.0 and pods["infer"]["createdAt"] == 60.0
    # All three overlap in time (train-a runs 1s..601s), so their GPUs must be distinct.
    for a, b in combinations(pods.values(), 2):
        if a["startedAt"] < b["finishedAt"] and b["startedAt"] < a["finishedAt"]:
            assert not set(a["devices"][GPU]) & set(b["devices"][GPU]), (a["name"], b["name"])
    assert len({d for p in pods.values() for d in p["devices"][GPU]}) == 7
    for a, b in combinations(data["allocations"], 2):
        if a["device"] == b["device"] and a["pod"] != b["pod"]:
            assert not overlapping(a, b), (a, b)
    # Every device allocation record is released when its pod finishes.
    for rec in data["allocations"]:
        assert rec["end"] == pytest.approx(pods[rec["pod"]]["finishedAt"])
    (node,) = data["nodes"]
    assert node["capacity"][GPU] == node["allocatable"][GPU] == "8"
    assert node["allocated"] == {}
    assert data["end"] == pytest.approx(max(p["finishedAt"] for p in pods.values()))


def test_lifecycle_events_tell_the_journey(capsys):
    data = run_json(capsys, "lifecycle")
    reasons = [(e["reason"], e["source"]) for e in events_of(data, "train-a")]
    assert reasons == [("Scheduled", "default-scheduler"), ("Pulled", "kubelet"), ("Created", "kubelet"),
                       ("Started", "kubelet")]
    scheduled = events_of(data, "train-a", "Scheduled")[0]
    assert scheduled["message"] == "Successfully assigned default/train-a to a100-0"
    assert events_of(data, "train-a", "Started")[0]["message"] == "Started container trainer"
    assert not [e for e in data["events"] if e["type"] == "Warning"]


# --- queueing --------------------------------------------------------------------------------------------

QUEUEING_MSG = ("0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: 0/2 nodes are available: "
                "2 No preemption victims found for incoming pod.")


def test_queueing(capsys):
    data = run_json(capsys, "queueing")
    pods = pods_by_name(data)
    t1, t2, t3 = pods["train-1"], pods["train-2"], pods["train-3"]
    # train-1 and train-2 land on different nodes (6 of 8 GPUs each); train-3 fits on neither.
    assert {t1["nodeName"], t2["nodeName"]} == {"h100-0", "h100-1"}
    failed = events_of(data, "train-3", "FailedScheduling")
    assert failed, "train-3 should have waited with FailedScheduling"
    assert {e["message"] for e in failed} == {QUEUEING_MSG}
    assert all(e["type"] == "Warning" and e["source"] == "default-scheduler" for e in failed)
    assert failed[0]["time"] == t3["createdAt"] == 20.0
    # It starts right after train-2 (20m), the first GPU holder to finish, frees its node.
    assert t2["finishedAt"] == pytest.approx(t2["startedAt"] + 20 * 60)
    assert t2["finishedAt"] < t1["finishedAt"]
    assert t3["scheduledAt"] == pytest.approx(t2["finishedAt"], abs=1e-9)
    assert t3["nodeName"] == t2["nodeName"]
    assert t3["startedAt"] == pytest.approx(t3["scheduledAt"] + ADMIT_TO_RUNNING, abs=1e-9)
    assert all(e["time"] < t3["scheduledAt"] for e in failed)
    assert t3["phase"] == "Succeeded"
    assert t3["finishedAt"] == pytest.approx(t3["startedAt"] + 10 * 60)
    assert len(set(t3["devices"][GPU])) == 6
    assert [e["reason"] for e in events_of(data, "train-3")][-4:] == ["Scheduled", "Pulled", "Created", "Started"]


# --- admission-error -------------------------------------------------------------------------------------

NO_HEALTHY = ("Allocate failed due to no healthy devices present; cannot allocate unhealthy devices "
              "nvidia.com/gpu, which is unexpected")


def test_admission_error(capsys):
    data = run_json(capsys, "admission-error")
    pods = pods_by_name(data)
    for name in ("bound-during-restart-1", "bound-during-restart-2"):
        p = pods[name]
        assert p["phase"] == "Failed"
        assert p["reason"] == "UnexpectedAdmissionError"
        assert p["message"] == "Pod was rejected: " + NO_HEALTHY
        assert p["nodeName"] == "a100-0"
        assert p["startedAt"] is None and p["devices"] == {}
        # Bound while the kubelet was down (60s..80s) ...
        assert 60 <= p["scheduledAt"] < 80
        warn = events_of(data, name, "UnexpectedAdmissionError")
        assert len(warn) == 1
        # ... rejected when it comes back, the event carrying the bare message.
        assert warn[0] == {"time": 80.0, "type": "Warning", "reason": "UnexpectedAdmissionError",
                           "object": {"kind": "Pod", "namespace": "default", "name": name},
                           "message": NO_HEALTHY, "source": "kubelet"}
    # The pod that was running survives the kubelet restart and runs its full 5 minutes.
    rb = pods["running-before"]
    assert rb["phase"] == "Succeeded" and rb["restarts"] == 0
    assert rb["finishedAt"] == pytest.approx(rb["startedAt"] + 300)
    for name in ("after-restart", "much-later"):
        assert pods[name]["phase"] == "Succeeded", pods[name]
        assert pods[name]["finishedAt"] == pytest.approx(pods[name]["startedAt"] + 120)
    # after-restart waits until the device plugin has re-registered (80s + 5s) and the node status
    # carries the GPUs again.
    assert pods["after-restart"]["scheduledAt"] >= 85


# --- xid-unhealthy ---------------------------------------------------------------------------------------

def test_xid_unhealthy(capsys):
    data = run_json(capsys, "xid-unhealthy")
    pods = pods_by_name(data)
    a, b, c = pods["infer-a"], pods["infer-b"], pods["infer-c"]
    assert b["phase"] == "Failed" and b["reason"] == "UnexpectedAdmissionError"
    assert "Requested: 1, Available: 0" in b["message"]
    assert b["message"] == ("Pod was rejected: Allocate failed due to requested number of devices unavailable "
                            "for nvidia.com/gpu. Requested: 1, Available: 0, which is unexpected")
    assert b["devices"] == {}
    assert a["phase"] == c["phase"] == "Succeeded"
    # infer-c waits for infer-a: the only healthy GPU is the one infer-a holds.
    assert c["scheduledAt"] == pytest.approx(a["finishedAt"], abs=1e-9)
    assert c["devices"] == a["devices"]
    (node,) = data["nodes"]
    assert node["capacity"][GPU] == "2"
    assert node["allocatable"][GPU] == "1"      # XID 79 took one GPU out; XID 13 did not


# --- volcano-hypernode -----------------------------------------------------------------------------------

def test_volcano_hypernode(capsys):
    data = run_json(capsys, "volcano-hypernode")
    pods = pods_by_name(data)
    leaf = {n: n.rsplit("-", 1)[0] for n in (p["nodeName"] for p in data["pods"])}
    assert all(p["phase"] == "Succeeded" for p in data["pods"])
    # allreduce: the HyperNode bin packing picks leaf1, where the notebook already holds a GPU.
    assert {leaf[pods[f"allreduce-worker-{i}"]["nodeName"]] for i in range(2)} == {"leaf1"}
    # pretrain: its gang of 4 in leaf0; workers 4 and 5 never leave leaf0 (tier 1), though leaf1 has free nodes
    # from 30m, and start only after wide (which took leaf0 when the gang ended) has finished.
    gang = [pods[f"pretrain-worker-{i}"] for i in range(4)]
    rest = [pods[f"pretrain-worker-{i}"] for i in (4, 5)]
    assert {leaf[p["nodeName"]] for p in gang + rest} == {"leaf0"}
    assert all(p["startedAt"] < 20 for p in gang)
    wide = [pods[f"wide-worker-{i}"] for i in range(5)]
    gang_end = max(p["finishedAt"] for p in gang)
    assert all(gang_end < p["startedAt"] < gang_end + 5 for p in wide)
    # wide spans the spine (tier 2): 4 workers in one leaf, the 5th in the other.
    assert sorted(sum(leaf[p["nodeName"]] == x for p in wide) for x in ("leaf0", "leaf1")) == [1, 4]
    wide_end = max(p["finishedAt"] for p in wide)
    assert all(wide_end < p["startedAt"] < wide_end + 5 for p in rest)
    msgs = {e["message"] for e in events_of(data, "pretrain-worker-4", "FailedScheduling")}
    assert "In hyperNode leaf0: 0/4 nodes are unavailable: 4 Insufficient nvidia.com/gpu." in msgs


# --- determinism, seeds and golden files -----------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_runs_are_byte_identical(name, capsys):
    path = str(EXAMPLES / f"{name}.yaml")
    first = cli(capsys, "run", path, "-o", "json")
    second = cli(capsys, "run", path, "-o", "json")
    assert first == second
    assert cli(capsys, "run", path, "-o", "events") == cli(capsys, "run", path, "-o", "events")


def test_output_does_not_depend_on_the_process(tmp_path):
    """Same input, same bytes, across interpreter processes with different string-hash seeds
    (set and dict iteration order must not leak into scheduling or device choices)."""
    import os
    import subprocess
    import sys
    script = ("from gpusim.cli import main\n"
              f"for n in {NAMES!r}:\n"
              f"    main(['run', {str(EXAMPLES)!r} + '/' + n + '.yaml', '-o', 'json'])\n")
    outs = []
    for hashseed in ("0", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=hashseed)
        proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                              cwd=tmp_path, timeout=60)
        assert proc.returncode == 0, proc.stderr
        outs.append(proc.stdout)
    assert outs[0] == outs[1]
    assert outs[0].count('"seed": ') == len(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_seed_changes_gpu_uuids(name, capsys):
    default = run_json(capsys, name)
    other = run_json(capsys, name, "--seed", "12345")
    assert other["seed"] == 12345 and default["seed"] != 12345
    uuids = lambda d: {dev for p in d["pods"] for ids in p["devices"].values() for dev in ids}
    assert uuids(default) and uuids(other)
    assert not uuids(default) & uuids(other)
    # The seed picks names, not outcomes: phases and times are the same (a Job's pods are compared
    # without their random 5-character suffix, which the seed also picks).
    import re
    job_pod = lambda n: re.sub(r"-[bcdfghjklmnpqrstvwxz2456789]{5}$", "-*", n)
    strip = lambda d: sorted((job_pod(p["name"]), p["phase"], p["startedAt"], p["finishedAt"]) for p in d["pods"])
    assert strip(default) == strip(other)


@pytest.mark.parametrize("name", NAMES)
def test_golden_table_output(name, capsys):
    golden = EXAMPLES / f"{name}.out"
    regen = f"regenerate with: .venv/bin/gpusim run examples/{name}.yaml > examples/{name}.out"
    assert golden.exists(), f"missing golden file {golden}; {regen}"
    out = cli(capsys, "run", str(EXAMPLES / f"{name}.yaml"))
    assert out == golden.read_text(), (
        f"`gpusim run examples/{name}.yaml` no longer prints examples/{name}.out.\n"
        f"If the change is intended, {regen} and review the diff.")


def test_describe_pod_through_cli(capsys):
    out = cli(capsys, "describe", "pod", "bound-during-restart-1", "-f", str(EXAMPLES / "admission-error.yaml"))
    assert "Status:           Failed" in out
    assert "Reason:           UnexpectedAdmissionError" in out
    assert "Message:          Pod was rejected: " + NO_HEALTHY in out
    assert "Warning   UnexpectedAdmissionError" in out


def test_describe_missing_pod_is_not_found(capsys):
    code = main(["describe", "pod", "nope", "-f", str(EXAMPLES / "lifecycle.yaml")])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert err == 'Error from server (NotFound): pods "nope" not found\n'


def test_event_times_keep_millisecond_precision(capsys):
    out = cli(capsys, "run", str(EXAMPLES / "queueing.yaml"), "-o", "events")
    scheduled = next(line for line in out.splitlines() if "Scheduled" in line and "train-3" in line)
    assert scheduled.startswith("t=1211.002s"), scheduled


def test_wide_output_shows_nodes(capsys):
    out = cli(capsys, "run", str(EXAMPLES / "queueing.yaml"), "-o", "wide")
    header, *rows = out.splitlines()
    assert header.split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED", "NODE",
                              "READINESS", "GATES"]
    nodes = {row.split()[0]: row.split()[6] for row in rows}
    assert nodes["train-3"] == nodes["train-2"] != nodes["train-1"]
    assert set(nodes.values()) == {"h100-0", "h100-1"}
