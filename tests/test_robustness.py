"""Robustness: any input ends in a clean run or in one paragraph and exit 2, never a traceback, a hang or a
blow-up; valid long runs do not crash.

Three parts: a table of the input classes that once crashed, hung or were silently accepted; a corpus of
mutated example scenarios (hypothesis picks the example, the place and the mutation: a deleted or renamed
field, a value of the wrong type, a huge or negative number, a long string, deep nesting, a duplicated
document) that must each load cleanly or be refused in one paragraph; and random valid scenarios with
priorities, preemption and faults that must run without an exception.
"""
from __future__ import annotations

import contextlib
import copy
import io
import signal
from pathlib import Path

import celpy
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpusim as gs
from gpusim.cli import main
from gpusim.cluster.simulation import DEFAULT_HORIZON

# cel-python raises the recursion limit to 2500 each time a CEL environment is made (celpy.Environment.__init__);
# made once here, before hypothesis runs, so its tests find the limit unchanged (else HypothesisWarning)
celpy.Environment()

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
NODE = """apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: a100}
spec: {count: 1, gpu: {model: A100-SXM4-80GB, count: 8}, cpu: "64", memory: 512Gi}
"""


def pod(name: str = "p", extra_meta: str = "", spec: str = "", gpus: int = 1, ann: str = "") -> str:
    return f"""apiVersion: v1
kind: Pod
metadata:
  name: {name}
  annotations: {{{ann}}}
{extra_meta}spec:
  restartPolicy: Never
{spec}  containers:
  - {{name: c, image: pytorch/pytorch, resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}}}
"""


def cli(tmp_path: Path, text: "str | bytes", *args: str) -> tuple[int, str, str]:
    path = tmp_path / "scenario.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["run", str(path), *args])
    return code, out.getvalue(), err.getvalue()


def refused(tmp_path: Path, text: "str | bytes", *expect: str) -> str:
    code, _, err = cli(tmp_path, text)
    assert code == 2, err
    line = err.strip()
    assert "\n" not in line and "Traceback" not in line and line.startswith("error: "), line
    for e in expect:
        assert e in line, line
    return line


# ---------------------------------------------------------------- the classes that once crashed or slipped
REFUSED = [
    ("not UTF-8", b"apiVersion: v1\nkind: Pod\nmetadata: {name: \xff}\n", ("not UTF-8 text",)),
    ("metadata a string", "apiVersion: v1\nkind: Pod\nmetadata: oops\n", ("metadata: Invalid value: string",)),
    ("kind a list", "apiVersion: v1\nkind: [Pod]\nmetadata: {name: p}\n", ("kind: Invalid value: array: expected string",)),
    ("apiVersion a map", "apiVersion: {v: 1}\nkind: Pod\n", ("apiVersion: Invalid value: object",)),
    ("YAML nested 3,000 deep", "a: " + "[" * 3000 + "]" * 3000 + "\n", ("nested too deeply",)),
    ("node memory 2^63", NODE.replace("512Gi", "9223372036854775808"), ("spec.memory", "2^53")),
    ("quantity 1e999999999", NODE.replace("512Gi", "1e999999999"), ("quantity too large",)),
    ("duration past Go's maximum", pod(ann="gpusim.io/duration: 2562048h") + "---\n" + NODE,
     ('time: invalid duration "2562048h"',)),
    ("Job completions past int32", """apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  completions: 3000000000
  template: {spec: {restartPolicy: Never, containers: [{name: c, image: x}]}}
""", ("cannot unmarshal number 3000000000", "of type int32")),
    ("Job parallelism past int32", """apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  parallelism: 2147483648
  template: {spec: {restartPolicy: Never, containers: [{name: c, image: x}]}}
""", ("spec.parallelism of type int32",)),
    ("Volcano replicas past int32", """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vj}
spec:
  schedulerName: volcano
  tasks:
  - {name: w, replicas: 4294967296, template: {spec: {restartPolicy: Never, containers: [{name: c, image: x}]}}}
""", ("replicas of type int32",)),
    ("invalid label key", pod(extra_meta="  labels: {'bad key!': v}\n"),
     ('metadata.labels: Invalid value: "bad key!": name part must consist of alphanumeric characters',)),
    ("invalid label value", pod(extra_meta="  labels: {team: 'a b'}\n"),
     ('Invalid value: "a b": a valid label must be an empty string',)),
    ("invalid annotation key", pod(ann="'x/y/z': v"), ("a qualified name must consist of",)),
    ("container without image", pod().replace("image: pytorch/pytorch, ", ""),
     ("spec.containers[0].image: Required value",)),
    ("duplicate key", pod().replace("  name: p\n", "  name: p\n  name: q\n"), ('key "name" already set in map',)),
    ("ConfigMap over 1 MiB", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata: {k: '" + "x" * (1 << 20)
     + "'}\n", ("Too long: must have at most 1048576 bytes",)),
    ("Volcano task on a missing node", """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vj}
spec:
  schedulerName: volcano
  tasks:
  - {name: w, replicas: 1, template: {spec: {nodeName: nowhere, restartPolicy: Never, containers: [{name: c, image: x}]}}}
""", ('spec.tasks[0].template.spec.nodeName: Not found: "nowhere"',)),
]


@pytest.mark.parametrize("name,text,expect", REFUSED, ids=[r[0] for r in REFUSED])
def test_bad_input_is_one_paragraph_and_exit_2(tmp_path, name, text, expect):
    refused(tmp_path, text, *expect)


def test_a_50_megabyte_name_is_cut_in_the_message(tmp_path):
    line = refused(tmp_path, pod(name="A" * 5_000_000))
    assert len(line) < 2_000 and "characters)" in line


def test_kubectl_get_yaml_output_loads_like_a_fresh_manifest(tmp_path):
    """System fields (uid, creationTimestamp, resourceVersion) and a Pod's status are the apiserver's: two pods
    exported with the same uid both run, and an exported Running phase does not make a pod Running."""
    meta = '  uid: "1234"\n  creationTimestamp: "2024-05-01T10:00:00Z"\n  resourceVersion: "99"\n'
    text = (pod("a", meta) + "---\n" + pod("b", meta) + "status: {phase: Running, hostIP: 10.0.0.1}\n---\n" + NODE)
    r = gs.run(text=text)
    a, b = r.pod("a"), r.pod("b")
    assert a.metadata.uid != b.metadata.uid and a.metadata.uid != "1234"
    assert a.status.phase == b.status.phase == "Running" and b.status.host_ip == "a100-0"
    assert a.metadata.creation_timestamp == 0.0
    assert "Running" in gs.describe_pod(r, "a")


def test_a_run_that_never_settles_stops_at_the_documented_horizon(tmp_path):
    text = """apiVersion: batch/v1
kind: Job
metadata: {name: forever}
spec:
  completions: 2000000000
  template:
    metadata: {annotations: {gpusim.io/duration: 10h}}
    spec: {restartPolicy: Never, containers: [{name: c, image: x}]}
---
""" + NODE
    code, out, err = cli(tmp_path, text)
    assert code == 0 and err.startswith("warning: the run was stopped at 720h") and "forever-" in out
    with pytest.warns(UserWarning, match="720h"):
        r = gs.run(text=text)
    assert r.stopped_at_horizon and r.end == DEFAULT_HORIZON


def test_a_thousand_container_restarts_do_not_overflow_the_back_off():
    """pkg/util/flowcontrol: the back-off doubles to 5 minutes and stays there."""
    text = pod(ann="gpusim.io/duration: 0s, gpusim.io/exit-code: '1'").replace("restartPolicy: Never",
                                                                               "restartPolicy: Always")
    r = gs.run(text=text + "---\n" + NODE, until="100h")
    cs = r.pod("p").status.container_statuses[0]
    assert cs.restart_count > 1000
    assert "back-off 5m0s" in cs.state.waiting.message or "back-off 300s" in cs.state.waiting.message


def test_crash_loop_shows_when_the_container_started_and_is_not_ready():
    text = pod(ann="gpusim.io/duration: 30s, gpusim.io/exit-code: '1'").replace("restartPolicy: Never",
                                                                                "restartPolicy: Always")
    r = gs.run(text=text + "---\n" + NODE, until="20m")
    p = r.pod("p")
    assert p.status.container_statuses[0].state.waiting.reason == "CrashLoopBackOff"
    assert gs.to_json(r)["pods"][0]["startedAt"] is not None
    ready = p.status.condition("Ready")
    assert ready.status == "False" and ready.reason == "ContainersNotReady"


def test_attempts_are_bounded_per_pod():
    """Waiting pods are retried on every freed GPU, as upstream does; gpusim keeps each pod's first and last
    attempts (with the total count) instead of every one."""
    docs = [NODE] + [pod(f"p{i}", gpus=1, ann="gpusim.io/duration: 10m") for i in range(120)]
    r = gs.run(text="---\n".join(docs))
    log = r.scheduler.attempts
    last = "default/p119"
    assert log.count(last) > log.keep + 1
    kept = [a for a in log if a.pod == last]
    assert len(kept) == log.keep + 1 and kept[0].number == 1 and kept[-1].number == log.count(last)
    text = gs.explain_pod(r, "p119")
    assert f"{log.count(last)} scheduling attempt(s)" in text and "not kept" in text


# ---------------------------------------------------------------- mutated examples
WEIRD = [None, [], {}, "x", -1, 0, 2**63, 1e300, "1e999999999", "💥", True, "9999999999h", 3_000_000_000,
         "a" * 3000, "-5", "0.5", {"a": [1, {"b": None}]}]


def _paths(o, p=()):
    yield p
    if isinstance(o, dict):
        for k, v in o.items():
            yield from _paths(v, p + (k,))
    elif isinstance(o, list):
        for i, v in enumerate(o):
            yield from _paths(v, p + (i,))


@st.composite
def mutated(draw):
    example = draw(st.sampled_from(EXAMPLES))
    docs = [d for d in yaml.safe_load_all(example.read_text(encoding="utf-8")) if d is not None]
    docs = copy.deepcopy(docs)
    for _ in range(draw(st.integers(1, 3))):
        d = draw(st.integers(0, len(docs) - 1))
        paths = [p for p in _paths(docs[d]) if p]
        if not paths:
            continue
        path = draw(st.sampled_from(paths))
        parent = docs[d]
        for k in path[:-1]:
            parent = parent[k]
        key = path[-1]
        how = draw(st.sampled_from(["delete", "rename", "replace", "replace", "duplicate"]))
        if how == "delete" and isinstance(parent, dict):
            del parent[key]
        elif how == "rename" and isinstance(parent, dict):
            parent[f"{key}x"] = parent.pop(key)
        elif how == "duplicate":
            docs.append(copy.deepcopy(docs[d]))
        else:
            parent[key] = copy.deepcopy(draw(st.sampled_from(WEIRD)))
    return example.name, yaml.safe_dump_all(docs, sort_keys=False)


class _Hang(Exception):
    pass


def _alarm(*_):
    raise _Hang


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated())
def test_mutated_examples_load_cleanly_or_are_refused_in_one_paragraph(tmp_path_factory, case):
    name, text = case
    tmp = tmp_path_factory.mktemp("fuzz")
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(60)
    try:
        code, _, err = cli(tmp, text, "--until", "3h")
    except _Hang:
        pytest.fail(f"mutated {name} ran for over 60 s:\n{text[:2000]}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert code in (0, 2), (name, code, err)
    if code == 2:
        line = err.strip()
        assert line.startswith("error: ") and "\n" not in line and len(line) < 4000, (name, line)


# ---------------------------------------------------------------- random valid runs with preemption and faults
@st.composite
def busy_clusters(draw):
    nodes = draw(st.integers(1, 3))
    docs = [NODE.replace("count: 1,", f"count: {nodes},"),
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n"]
    for i in range(draw(st.integers(2, 14))):
        high = draw(st.booleans())
        spec = "  priorityClassName: high\n" if high else ""
        ann = (f"gpusim.io/submit-at: {draw(st.integers(0, 600))}s, "
               f"gpusim.io/duration: {draw(st.integers(1, 1800))}s")
        docs.append(pod(f"p{i}", spec=spec, gpus=draw(st.integers(1, 8)), ann=ann))
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["KubeletRestart", "DevicePluginCrash", "XidError", "NodeDown"]))
        spec = {"at": f"{draw(st.integers(0, 900))}s", "type": kind, "node": f"a100-{draw(st.integers(0, nodes - 1))}"}
        if kind == "XidError":
            spec.update(gpu=draw(st.integers(0, 7)), xid=draw(st.sampled_from([13, 48, 79])))
        docs.append(yaml.safe_dump({"apiVersion": "gpusim.io/v1alpha1", "kind": "Fault",
                                    "metadata": {"name": f"f{len(docs)}"}, "spec": spec}))
    return "---\n".join(docs), draw(st.integers(0, 1000))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(busy_clusters())
def test_random_valid_runs_with_preemption_and_faults_end_cleanly(case):
    text, seed = case
    r = gs.run(text=text, seed=seed)
    assert {p.status.phase or "Pending" for p in r.pods()} <= {"Pending", "Running", "Succeeded", "Failed"}
    for node in r.nodes():
        held = [h for h in r.ctx.holdings if h.node == node.metadata.name and h.end is None]
        assert len({h.device for h in held}) == len(held)   # no GPU held twice at the end
