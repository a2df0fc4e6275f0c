"""A corpus of invalid scenarios and the errors a user gets for them.

The contract (DESIGN.md, gpusim/api/scenario.py): every input error is one paragraph that names
the file, the document, the object (kind and name) and the field, with upstream's message text
where upstream has one. The CLI prints it on one line to stderr and exits 2, without a traceback.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import pytest

from gpusim.api.errors import InputError
from gpusim.cluster.scenario import load
from gpusim.cli import main

FILE = "cluster/gpu-scenario.yaml"

SIM = """apiVersion: gpusim.io/v1alpha1
kind: Simulation
metadata: {name: demo}
spec: {seed: 1}
"""
POOL = """apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: a100}
spec:
  count: 2
  gpu: {model: A100-SXM4-80GB, count: 8}
"""


def pod(name: str = "train", *, meta: str = "", spec: str = "",
        resources: str = "{limits: {nvidia.com/gpu: 2}}", policy: str = "Never") -> str:
    return f"""apiVersion: v1
kind: Pod
metadata:
  name: {name}{meta}
spec:
  restartPolicy: {policy}{spec}
  containers:
  - name: trainer
    image: nvcr.io/nvidia/pytorch:24.08-py3
    resources: {resources}
"""


def pool(spec: str, name: str = "a100") -> str:
    return f"""apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {{name: {name}}}
spec: {spec}
"""


def fault(spec: str, name: str = "boom") -> str:
    return f"""apiVersion: gpusim.io/v1alpha1
kind: Fault
metadata: {{name: {name}}}
spec: {spec}
"""


def docs(*parts: str) -> str:
    return "---\n".join(parts)


JOB_ALWAYS = """apiVersion: batch/v1
kind: Job
metadata: {name: finetune, namespace: research}
spec:
  template:
    spec:
      restartPolicy: Always
      containers:
      - {name: trainer, image: x, resources: {limits: {nvidia.com/gpu: 1}}}
"""
NAMESPACE_RESEARCH = """apiVersion: v1
kind: Namespace
metadata: {name: research}
"""


@dataclass
class Case:
    id: str
    text: str
    document: int
    obj: Optional[str]          # 'Kind "name"' as the error renders it
    path: Optional[str]         # field path
    message: list[str] = field(default_factory=list)


CASES = [
    Case("unknown-kind", docs(SIM, "apiVersion: v1\nkind: Foo\nmetadata: {name: bar}\nspec: {}\n"), 2,
         'Foo "bar"', None, ['no matches for kind "Foo" in version "v1"']),
    Case("unknown-field", docs(SIM, POOL, pod(spec="\n  foo: 1")), 3,
         'Pod "default/train"', None, ['strict decoding error: unknown field "spec.foo"']),
    Case("unknown-field-nested", docs(POOL, pool("{count: 1, gpu: {model: T4, count: 2, memory: 16Gi}}", "t4")), 2,
         'NodePool "t4"', None, ['unknown field "spec.gpu.memory"']),
    Case("wrong-type", docs(SIM, pool('{count: "two", gpu: {model: T4}}')), 2,
         'NodePool "a100"', "spec.count", ["Invalid value", "expected integer"]),
    Case("gpu-fraction", docs(POOL, pod(resources='{limits: {nvidia.com/gpu: "0.5"}}')), 2,
         'Pod "default/train"', "spec.containers[0].resources.limits[nvidia.com/gpu]",
         ['Invalid value: "0.5": must be an integer']),
    Case("request-not-limit", docs(POOL, pod(resources="{requests: {nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 2}}")), 2,
         'Pod "default/train"', "spec.containers[0].resources.requests[nvidia.com/gpu]",
         ['Invalid value: "1": must be equal to nvidia.com/gpu limit of 2']),
    Case("request-without-limit", docs(POOL, pod(resources="{requests: {nvidia.com/gpu: 1}}")), 2,
         'Pod "default/train"', "spec.containers[0].resources.limits",
         ["spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources"]),
    Case("unknown-gpu-model", docs(SIM, pool("{count: 1, gpu: {model: B200}}")), 2,
         'NodePool "a100"', "spec.gpu.model", ['Unsupported value: "B200"', '"A100-SXM4-80GB"', '"H100-SXM5-80GB"']),
    Case("pool-count-zero", docs(SIM, pool("{count: 0, gpu: {model: T4}}")), 2,
         'NodePool "a100"', "spec.count", ["Invalid value: 0"]),
    Case("pool-gpu-count-too-big", docs(SIM, pool("{count: 1, gpu: {model: T4, count: 17}}")), 2,
         'NodePool "a100"', "spec.gpu.count", ["Invalid value: 17"]),
    Case("pool-bad-memory", docs(SIM, pool("{count: 1, memory: 1TB}")), 2,
         'NodePool "a100"', "spec.memory", ['Invalid value: "1TB"', "quantities must match the regular expression"]),
    Case("fault-missing-node", docs(POOL, fault("{at: 1m, type: KubeletRestart, node: a100-7}")), 2,
         'Fault "boom"', "spec.node", ['"a100-7"']),
    Case("fault-xid-without-gpu", docs(POOL, fault("{at: 1m, type: XidError, node: a100-0, xid: 79}")), 2,
         'Fault "boom"', "spec.gpu", ["Required value"]),
    Case("fault-xid-gpu-out-of-range", docs(POOL, fault("{at: 1m, type: XidError, node: a100-1, gpu: 8}")), 2,
         'Fault "boom"', "spec.gpu", ["Invalid value: 8", "a100-1 has 8 GPU(s)"]),
    Case("fault-unknown-type", docs(POOL, fault("{at: 1m, type: Meteor, node: a100-0}")), 2,
         'Fault "boom"', "spec.type", ['Unsupported value: "Meteor"', '"KubeletRestart"']),
    Case("fault-bad-at", docs(POOL, fault("{at: '1', type: KubeletRestart, node: a100-0}")), 2,
         'Fault "boom"', "spec.at", ['time: missing unit in duration "1"']),
    Case("missing-priority-class", docs(POOL, pod(spec="\n  priorityClassName: x")), 2,
         'Pod "default/train"', "spec.priorityClassName", ["no PriorityClass with name x was found"]),
    Case("missing-namespace", docs(POOL, pod(meta="\n  namespace: x")), 2,
         'Pod "x/train"', "metadata.namespace", ['namespaces "x" not found']),
    Case("bad-duration-annotation", docs(POOL, pod(meta="\n  annotations: {gpusim.io/duration: 10x}")), 2,
         'Pod "default/train"', "metadata.annotations[gpusim.io/duration]",
         ['Invalid value: "10x"', 'time: unknown unit "x" in duration "10x"']),
    Case("bad-submit-at", docs(POOL, pod(meta="\n  annotations: {gpusim.io/submit-at: '90'}")), 2,
         'Pod "default/train"', "metadata.annotations[gpusim.io/submit-at]",
         ['time: missing unit in duration "90"']),
    Case("unknown-gpusim-annotation", docs(POOL, pod(meta="\n  annotations: {gpusim.io/durration: 10m}")), 2,
         'Pod "default/train"', "metadata.annotations[gpusim.io/durration]",
         ["unknown gpusim annotation", "gpusim.io/duration"]),
    Case("duplicate-pod", docs(POOL, pod("p"), pod("p")), 3,
         'Pod "default/p"', "metadata.name", ['Duplicate value: "p"', f"first defined in {FILE}, document 2"]),
    Case("pool-node-name-taken", docs(pool("{count: 1}", "gpu-0"),
                                      "apiVersion: v1\nkind: Node\nmetadata: {name: gpu-0-0}\n"), 1,
         'NodePool "gpu-0"', "metadata.name", ['node "gpu-0-0" already exists']),
    Case("two-simulations", docs(SIM, POOL, SIM.replace("demo", "again")), 3,
         'Simulation "again"', None, ["at most one Simulation", f"{FILE}, document 1"]),
    Case("job-restart-always", docs(NAMESPACE_RESEARCH, POOL, JOB_ALWAYS), 3,
         'Job "research/finetune"', "spec.template.spec.restartPolicy",
         ['Required value: valid values: "OnFailure", "Never"']),
    Case("bad-pod-name", docs(POOL, pod("Train_1")), 2,
         'Pod "default/Train_1"', "metadata.name", ['Invalid value: "Train_1"', "RFC 1123"]),
    Case("yaml-syntax", docs(SIM, "apiVersion: v1\nkind: Pod\nmetadata: {name: p\nspec: [\n"), 2,
         None, None, ["YAML syntax error (line 9, column 5)"]),
]


def _params():
    for c in CASES:
        yield pytest.param(c, id=c.id)


def _error(text: str) -> str:
    with pytest.raises(InputError) as exc:
        load(texts=[(FILE, text)])
    return str(exc.value)


@pytest.mark.parametrize("case", list(_params()))
def test_invalid_input_names_file_document_object_field(case: Case):
    msg = _error(case.text)
    assert "\n" not in msg.strip(), f"not one paragraph: {msg!r}"
    assert msg.startswith("error: "), msg
    assert f"{FILE}, document {case.document}:" in msg, msg
    if case.obj is not None:
        assert f"{case.obj} is invalid" in msg, msg
    if case.path is not None:
        assert f"{case.path}: " in msg, msg
    for part in case.message:
        assert part in msg, msg
    if case.id == "yaml-syntax":
        assert "document 0" not in msg, msg


def test_corpus_texts_are_valid_once_the_mistake_is_fixed():
    """Guard the corpus itself: each text is invalid only because of its one deliberate mistake."""
    fixed = {
        "unknown-field": docs(SIM, POOL, pod()),
        "gpu-fraction": docs(POOL, pod()),
        "missing-namespace": docs(POOL, pod(meta="\n  namespace: default")),
        "job-restart-always": docs(NAMESPACE_RESEARCH, POOL, JOB_ALWAYS.replace("Always", "Never")),
        "two-simulations": docs(SIM, POOL),
        "fault-xid-without-gpu": docs(POOL, fault("{at: 1m, type: XidError, node: a100-0, gpu: 7, xid: 79}")),
    }
    for cid, text in fixed.items():
        load(texts=[(FILE, text)])   # no error
    assert {c.id for c in CASES} >= set(fixed)


def test_error_names_the_right_file_among_several():
    """Document numbers restart per file, and the error names the file that holds the object."""
    with pytest.raises(InputError) as exc:
        load(texts=[("cluster.yaml", docs(SIM, POOL)), ("workload.yaml", docs(pod("a"), pod("b", spec="\n  priorityClassName: high")))])
    msg = str(exc.value)
    assert "workload.yaml, document 2:" in msg
    assert 'Pod "default/b" is invalid: spec.priorityClassName: no PriorityClass with name high was found' in msg
    assert "cluster.yaml" not in msg


def test_duplicate_across_files_names_both(tmp_path):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(docs(POOL, pod("same")))
    b.write_text(pod("same"))
    with pytest.raises(InputError) as exc:
        load([str(a), str(b)])
    msg = str(exc.value)
    assert msg.startswith(f"error: {b}, document 1:")
    assert f"first defined in {a}, document 2" in msg


def test_priority_class_defined_in_scenario_is_accepted():
    pc = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n"
    sc = load(texts=[(FILE, docs(POOL, pc, pod(spec="\n  priorityClassName: high")))])
    assert [p.metadata.name for p in sc.pods] == ["train"]
    assert [n.metadata.name for n in sc.nodes] == ["a100-0", "a100-1"]


# --- the CLI -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", [c for c in CASES if c.id in (
    "unknown-field", "request-without-limit", "missing-namespace", "duplicate-pod", "yaml-syntax",
    "unknown-kind", "wrong-type")], ids=lambda c: c.id)
def test_cli_bad_file_one_line_exit_2(case: Case, tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text(case.text)
    code = main(["run", str(path)])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert "Traceback" not in err
    assert err.endswith("\n") and err.count("\n") == 1, repr(err)
    assert err.startswith(f"error: {path}, document ")
    for part in case.message:
        assert part.replace(FILE, str(path)) in err


@pytest.mark.parametrize("argv_tail, fragment", [
    (["--until", "5"], '--until: Invalid value: "5": time: missing unit in duration "5"'),
    (["--until", "0s"], '--until: Invalid value: "0s": must be greater than 0'),
    (["--seed", "-1"], "--seed: Invalid value: -1: must be greater than or equal to 0"),
])
def test_cli_bad_flags_exit_2(argv_tail, fragment, tmp_path, capsys):
    path = tmp_path / "ok.yaml"
    path.write_text(docs(POOL, pod()))
    code = main(["run", str(path), *argv_tail])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and fragment in err and "Traceback" not in err


def test_cli_missing_file_exit_2(tmp_path, capsys):
    missing = tmp_path / "nope.yaml"
    code = main(["run", str(missing)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert str(missing) in err and "No such file or directory" in err


def test_cli_valid_file_exit_0(tmp_path, capsys):
    path = tmp_path / "ok.yaml"
    path.write_text(docs(POOL, pod(meta="\n  annotations: {gpusim.io/duration: 1m}")))
    assert main(["run", str(path)]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out.splitlines()[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert out.splitlines()[1].split()[:3] == ["train", "0/1", "Completed"]


def test_plain_node_gets_the_kubelet_registration_labels():
    """kubelet_node_status.go initialNode: a plain v1 Node carries kubernetes.io/hostname, os and arch, so a
    pod pinned by hostname lands on it; a label the scenario sets is kept."""
    from gpusim.cluster.simulation import run as run_sim
    text = """apiVersion: v1
kind: Node
metadata: {name: plain-0, labels: {kubernetes.io/arch: arm64}}
status: {capacity: {cpu: "8", memory: 32Gi, pods: "110"}, allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  nodeSelector: {kubernetes.io/hostname: plain-0, kubernetes.io/os: linux}
  containers: [{name: c, image: x}]
"""
    r = run_sim(text=text)
    assert r.pod("p").spec.node_name == "plain-0"
    labels = next(n for n in r.api.list("Node") if n.metadata.name == "plain-0").metadata.labels
    assert labels["kubernetes.io/arch"] == "arm64"
