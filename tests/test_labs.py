"""Lab tooling (gpusim/labs): the student-notebook generator, its --check mode, and the lab checkers.

Lab 01's checker is tested on both outcomes from the same scenario the lab uses
(examples/inference-oom.yaml): the time-sliced run reproduces the cascade (all four die at
t = 1.008 + 480 s) and is not a fix; MPS (pinned 81920 / 4 = 20480 MiB per client) and one whole GPU
per pod are fixes; fixes that change the workload, drop a pod or stop the clock early are not.
"""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from gpusim.cluster.simulation import run
from gpusim.labs import STUB, check_inference_oom, make_student
from gpusim.labs.notebook import clear_solutions, main, stale

ROOT = Path(__file__).resolve().parents[1]
BROKEN = (ROOT / "examples" / "inference-oom.yaml").read_text()

MPS_KEY = """  mps-4: |
    version: v1
    sharing:
      mps:
        resources:
        - name: nvidia.com/gpu
          replicas: 4
"""


def with_mps(text: str = BROKEN) -> str:
    text = text.replace("data:\n", "data:\n" + MPS_KEY, 1)
    return text.replace("  gpu: {model: A100-SXM4-80GB, count: 1}\n",
                        "  gpu: {model: A100-SXM4-80GB, count: 1}\n  labels: {nvidia.com/device-plugin.config: mps-4}\n")


def whole_gpus(text: str = BROKEN) -> str:
    text = text.replace("data:\n", "data:\n  whole: |\n    version: v1\n", 1).replace("default: time-sliced", "default: whole")
    return text.replace("count: 1}", "count: 4}")


def with_mig(text: str = BROKEN) -> str:
    """Fix C: MIG strategy single (pods unchanged), no time-slicing, 2 GPUs split into 2g.20gb instances."""
    text = text.replace("data:\n", "data:\n  whole: |\n    version: v1\n", 1)
    text = text.replace("default: time-sliced}", "default: whole}\n  mig: {strategy: single}", 1)
    return text.replace("  gpu: {model: A100-SXM4-80GB, count: 1}\n",
                        "  gpu: {model: A100-SXM4-80GB, count: 2}\n  labels: {nvidia.com/mig.config: all-2g.20gb}\n")


@pytest.fixture(scope="module")
def broken():
    return run(text=BROKEN)


# --- the checker: reproduce --------------------------------------------------------------------------------

def test_broken_run_reproduces_the_cascade(broken):
    c = check_inference_oom(broken, expect="cascade")
    assert c.passed, str(c)
    assert str(c).startswith("PASS")
    assert any("t=481.008s 同时 OOM 的 Pod：llm-0, llm-1, llm-2, llm-3（4/4）" in line for line in c.lines)
    assert any("time-slicing" in line for line in c.lines)


def test_broken_run_is_not_a_fix(broken):
    c = check_inference_oom(broken)
    assert not c.passed and not c
    assert str(c).startswith("FAIL")
    bad = [line for line in c.lines if line.startswith("✗")]
    assert bad == [f"✗ llm-{i}: phase Running，OOM 2 次，重启 2 次" for i in range(3)]


def test_cascade_check_fails_when_nothing_goes_wrong():
    c = check_inference_oom(run(text=whole_gpus()), expect="cascade")
    assert not c.passed
    assert "✗ 没有任何容器 OOM：故障没有复现" in c.lines


# --- the checker: fix --------------------------------------------------------------------------------------

def test_mps_fix_passes_with_only_the_grower_failing():
    r = run(text=with_mps())
    c = check_inference_oom(r)
    assert c.passed, str(c)
    assert any(line.startswith("· llm-3: OOM 6 次（首次 t=121.008s）") for line in c.lines)   # 1.008 + 120 s
    assert any("每个客户端上限 20480 MiB" in line for line in c.lines)
    assert not check_inference_oom(r, expect="cascade").passed


def test_whole_gpu_per_pod_passes_with_no_failure():
    c = check_inference_oom(run(text=whole_gpus()))
    assert c.passed, str(c)
    assert "· llm-3: OOM 0 次，重启 0 次——没有失败" in c.lines


def test_mig_fix_passes_with_the_grower_confined_to_its_instance():
    r = run(text=with_mig())
    c = check_inference_oom(r)
    assert c.passed, str(c)
    assert any("MIG single（6 个实例：2g.20gb（19968 MiB）" in line for line in c.lines), str(c)
    oom = [t for t in r.trace.records if t.function == "cuda.cudaMalloc"]
    assert {t.object for t in oom} == {"Pod default/llm-3"}
    # 15Gi → 40Gi over 600 s crosses 19968 MiB after (19968 − 15360) / 25600 × 600 = 108 s
    assert "MIG: confined" in oom[0].result and abs(oom[0].time - min(t.time for t in oom)) < 1e-9


@pytest.mark.parametrize("edit, expected", [
    # shrinking the KV cache is not a fix
    (lambda t: t.replace("gpusim.io/gpu-memory-growth: 40Gi/10m", "gpusim.io/gpu-memory-growth: 35Gi/10m"),
     "✗ 负载被改动（gpu-memory 注解与实验不同）：llm-3"),
    # stopping before the cache has grown proves nothing
    (lambda t: t.replace("until: 20m", "until: 5m"), "✗ 模拟时长 300s ≥ 600s（KV cache 增长完成）"),
    # dropping a pod is not a fix
    (lambda t: t[: t.index("---\napiVersion: v1\nkind: Pod\nmetadata: {name: llm-2")]
     + t[t.index("---\napiVersion: v1\nkind: Pod\nmetadata: {name: llm-3"):], "✗ 缺少 Pod：llm-2"),
    # MPS with 2 replicas: two pods cannot be scheduled
    (lambda t: t.replace("replicas: 4", "replicas: 2"), "✗ 未调度（Pending）：llm-2, llm-3"),
])
def test_false_fixes_fail(edit, expected):
    c = check_inference_oom(run(text=edit(with_mps())))
    assert not c.passed
    assert expected in c.lines, str(c)


def test_expect_is_validated(broken):
    with pytest.raises(ValueError):
        check_inference_oom(broken, expect="maybe")


def test_plot_gpu_memory_draws_one_panel_per_used_gpu(broken):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from gpusim.labs import plot_gpu_memory
    fig = plot_gpu_memory(broken)
    assert len(fig.axes) == 1 and fig.axes[0].get_title() == "a100-0 GPU 0 (time-slicing)"
    plt.close(fig)
    fig = plot_gpu_memory(run(text=whole_gpus()))
    assert [ax.get_title() for ax in fig.axes] == [f"a100-0 GPU {i} (none)" for i in range(4)]
    plt.close(fig)


# --- the student notebook -----------------------------------------------------------------------------------

def tiny_solution(path: Path) -> Path:
    nb = new_notebook(cells=[
        new_markdown_cell("### BEGIN SOLUTION stays in markdown"),
        new_code_cell("import gpusim as gs\ngs.setup()", execution_count=1,
                      outputs=[nbformat.v4.new_output("stream", text="hi\n")]),
        new_code_cell("def f(x):\n    y = 1\n    ### BEGIN SOLUTION\n    y = x * 2\n    ### END SOLUTION\n    return y",
                      execution_count=2),
        new_code_cell("### BEGIN SOLUTION\nA = 1\n### END SOLUTION\nprint(A)\n### BEGIN SOLUTION\nB = 2\n### END SOLUTION",
                      execution_count=3),
    ])
    nbformat.write(nb, str(path))
    return path


def test_make_student_drops_the_reference_answers(tmp_path):
    path = tiny_solution(tmp_path / "solution.ipynb")
    nb = nbformat.read(str(path), as_version=4)
    answer = new_code_cell("assert 1 + 1 == 2", execution_count=4)
    answer.metadata = {"tags": ["answer"], "jupyter": {"source_hidden": True, "outputs_hidden": True}}
    nb.cells += [new_markdown_cell("## 练习\n\n1. Why?"),
                 new_markdown_cell("<details><summary>练习 1 参考答案</summary>\n\nBecause.\n\n</details>"),
                 answer, new_markdown_cell("A remark that mentions <details> later stays."),
                 new_code_cell("x = 1", metadata={"tags": ["nbval-ignore-output"]})]
    nbformat.write(nb, str(path))
    student = make_student(path)
    sources = [c.source for c in student.cells]
    assert "## 练习\n\n1. Why?" in sources and "A remark that mentions <details> later stays." in sources
    assert not any(s.startswith("<details><summary>练习") or s == "assert 1 + 1 == 2" for s in sources)
    assert sources[-1] == "x = 1" and len(student.cells) == len(nb.cells) - 2


ANSWERS_PENDING: set[str] = set()   # labs whose exercises still lack answers (as in test_notebook_lint.py)


def test_committed_student_notebooks_hold_no_answers_and_solutions_do():
    from gpusim.labs.notebook import is_answer
    for lab in sorted((ROOT / "labs").glob("*/lab.ipynb")):
        student = nbformat.read(str(lab), as_version=4)
        solution = nbformat.read(str(lab.with_name("solution.ipynb")), as_version=4)
        assert not [c for c in student.cells if is_answer(c)], lab
        if lab.parent.name not in ANSWERS_PENDING:
            assert any(is_answer(c) for c in solution.cells), lab.with_name("solution.ipynb")


def test_make_student_replaces_blocks_and_clears_outputs(tmp_path):
    nb = make_student(tiny_solution(tmp_path / "solution.ipynb"))
    md, setup, func, two = nb.cells
    assert md.source == "### BEGIN SOLUTION stays in markdown"
    assert setup.source == "import gpusim as gs\ngs.setup()"
    assert func.source == f"def f(x):\n    y = 1\n    {STUB}\n    return y"
    assert two.source == f"{STUB}\nprint(A)\n{STUB}"
    assert all(c.outputs == [] and c.execution_count is None for c in nb.cells if c.cell_type == "code")


@pytest.mark.parametrize("source", ["### BEGIN SOLUTION\nx = 1", "x = 1\n### END SOLUTION",
                                    "### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION"])
def test_unbalanced_markers_are_an_error(source):
    with pytest.raises(ValueError):
        clear_solutions(source)


def test_check_mode_detects_stale_and_missing_copies(tmp_path, capsys):
    lab = tmp_path / "01-demo"
    lab.mkdir()
    tiny_solution(lab / "solution.ipynb")
    assert main(["--check", str(tmp_path)]) == 1                       # lab.ipynb missing
    assert "stale: " in capsys.readouterr().err
    assert main([str(tmp_path)]) == 0 and (lab / "lab.ipynb").exists()
    assert main(["--check", str(tmp_path)]) == 0
    nb = nbformat.read(str(lab / "solution.ipynb"), as_version=4)      # the solution changes …
    nb.cells[3].source += "\nprint(B)"
    nbformat.write(nb, str(lab / "solution.ipynb"))
    capsys.readouterr()
    assert main(["--check", str(tmp_path)]) == 1                       # … so the copy is stale
    assert str(lab / "lab.ipynb") in capsys.readouterr().err
    assert stale(tmp_path) == [lab / "lab.ipynb"]


def test_committed_student_notebooks_are_up_to_date():
    assert (ROOT / "labs" / "01-inference-oom" / "solution.ipynb").exists()
    assert stale(ROOT / "labs") == [], "regenerate with: .venv/bin/python -m gpusim.labs"


def test_every_lab_has_the_layout():
    for folder in sorted(p for p in (ROOT / "labs").iterdir() if p.is_dir() and not p.name.startswith(".")):
        for name in ("README.md", "solution.ipynb", "lab.ipynb"):
            assert (folder / name).exists(), f"{folder.name}/{name}"
        nb = nbformat.read(str(folder / "solution.ipynb"), as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert code[0].source == "import gpusim as gs\ngs.setup()"
        assert any("### BEGIN SOLUTION" in c.source for c in code)
        assert all(c.execution_count is not None for c in code), "solution.ipynb is committed executed"


# --- lab 02: check_gang (examples/gang-partial-start.yaml, with and without Coscheduling) -----------------

GANG = (ROOT / "examples" / "gang-partial-start.yaml").read_text()
COSCHEDULING = """---
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint: {enabled: [{name: Coscheduling}]}
    queueSort: {enabled: [{name: Coscheduling}], disabled: [{name: "*"}]}
"""


def gang_fixed(min_member: int = 8, label: bool = True, config: bool = True) -> str:
    text = GANG + (COSCHEDULING if config else "") + (
        f"---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {{name: llm-pretrain}}\n"
        f"spec: {{minMember: {min_member}}}\n")
    if label:
        text = text.replace("    metadata:\n      annotations: {gpusim.io/training-workers",
                            "    metadata:\n      labels: {scheduling.x-k8s.io/pod-group: llm-pretrain}\n"
                            "      annotations: {gpusim.io/training-workers", 1)
    return text


def test_gang_partial_start_fails_with_the_figures():
    from gpusim.labs import check_gang
    c = check_gang(run(text=GANG), "llm-pretrain")
    assert not c.passed and str(c).startswith("FAIL")
    assert "✗ 部分启动：t=10.008s～3601s 只有 7/8 个 worker 占着 GPU（3591 s），其余在等" in c.lines
    assert any(line.startswith("✗ 浪费 6.98 GPU 小时") for line in c.lines)
    assert any(line.startswith("· 已完成：t=5402s") for line in c.lines)


def test_gang_with_coscheduling_passes():
    from gpusim.labs import check_gang
    c = check_gang(run(text=gang_fixed()), "llm-pretrain")
    assert c.passed, str(c)
    assert "· 调度器（Pod 的 schedulerName）：default-scheduler × 8" in c.lines
    assert any(line.startswith("✓ 浪费 0.00 GPU 小时") for line in c.lines)
    assert any(line.startswith("· 已完成：t=5406s") and "首个 worker 启动于 t=3606s" in line for line in c.lines)


@pytest.mark.parametrize("kwargs", [dict(label=False), dict(config=False), dict(min_member=4)])
def test_gang_false_fixes_fail(kwargs):
    # a PodGroup the pods do not join, no Coscheduling profile, or minMember below the workers: 7 still start
    from gpusim.labs import check_gang
    c = check_gang(run(text=gang_fixed(**kwargs)), "llm-pretrain")
    assert not c.passed, str(c)


def test_gang_unknown_group_fails():
    from gpusim.labs import check_gang
    c = check_gang(run(text=GANG), "nope")
    assert not c.passed and c.lines == ["✗ 找不到训练组 default/nope（没有带 gpusim.io/training-* 注解的 Pod）"]


# --- lab 02, the Volcano fix: the same workload as a Volcano Job (batch.volcano.sh/v1alpha1) ----------------

def gang_volcano(min_available: int = 8, scheduler_name: str | None = "volcano") -> str:
    job = GANG.index("---\napiVersion: batch/v1\nkind: Job")
    spec = (f"  schedulerName: {scheduler_name}\n" if scheduler_name else "") + f"  minAvailable: {min_available}\n"
    return GANG[:job] + (
        "---\napiVersion: batch.volcano.sh/v1alpha1\nkind: Job\n"
        "metadata: {name: llm-pretrain, annotations: {gpusim.io/submit-at: 10s}}\n"
        "spec:\n" + spec +
        "  tasks:\n  - name: worker\n    replicas: 8\n    template:\n      metadata:\n"
        '        annotations: {gpusim.io/training-workers: "8", gpusim.io/training-steps: "1000", '
        "gpusim.io/step-time: 1.8s}\n"
        "      spec:\n        restartPolicy: Never\n        containers:\n"
        "        - {name: worker, image: nvcr.io/nvidia/pytorch:24.08-py3, "
        "resources: {limits: {nvidia.com/gpu: 1}}}\n")


@pytest.mark.parametrize("kwargs", [dict(), dict(scheduler_name=None)])
def test_gang_with_a_volcano_job_passes(kwargs):
    # schedulerName left out is defaulted to volcano by the Job webhook (mutate_job.go patchDefaultScheduler)
    from gpusim.labs import check_gang
    r = run(text=gang_volcano(**kwargs))
    c = check_gang(r, "llm-pretrain")
    assert c.passed, str(c)
    assert "✓ 训练组 default/llm-pretrain：8 个 worker，8 个 Pod" in c.lines       # grouped by volcano.sh/job-name
    assert "· 调度器（Pod 的 schedulerName）：volcano × 8" in c.lines
    assert any(line.startswith("· 已完成：t=5403s") and "首个 worker 启动于 t=3603s" in line for line in c.lines)
    assert sorted(p.metadata.name for p in r.pods() if p.metadata.name.startswith("llm")) == \
        [f"llm-pretrain-worker-{i}" for i in range(8)]


@pytest.mark.parametrize("kwargs, scheduler", [
    (dict(min_available=4), "volcano × 8"),                      # a gang of 4: 7 workers fit, so they start
    (dict(scheduler_name="default-scheduler"), "default-scheduler × 8"),   # kube-scheduler places one at a time
])
def test_gang_volcano_false_fixes_fail(kwargs, scheduler):
    from gpusim.labs import check_gang
    c = check_gang(run(text=gang_volcano(**kwargs)), "llm-pretrain")
    assert not c.passed, str(c)
    assert any(line.startswith("✗ 部分启动：") and "只有 7/8 个 worker 占着 GPU" in line for line in c.lines), str(c)
    assert f"· 调度器（Pod 的 schedulerName）：{scheduler}" in c.lines


# --- lab 03: check_fairness (labs/03-multi-tenant-fairness/cluster.yaml) --------------------------------------

FAIR = (ROOT / "labs" / "03-multi-tenant-fairness" / "cluster.yaml").read_text()
KUEUE_CQ = """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {team}}}
spec:
  namespaceSelector: {{}}
  cohortName: org
  preemption: {{reclaimWithinCohort: {reclaim}, withinClusterQueue: LowerPriority}}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: a100
      resources: [{{name: nvidia.com/gpu, nominalQuota: 16}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: {team}, namespace: {team}}}
spec: {{clusterQueue: {team}}}
"""
PRIORITY_CLASS = "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: inference}\nvalue: 100000\n"


def fair_kueue(text: str = FAIR, reclaim: str = "Any", label: tuple[str, ...] = ("team-a", "team-b")) -> str:
    """The reference fix: a ClusterQueue (nominalQuota 16, cohort org) and a LocalQueue per team, Jobs labelled."""
    for team in label:
        text = text.replace(f"namespace: {team},", f"namespace: {team}, labels: {{kueue.x-k8s.io/queue-name: {team}}},")
    return (text + "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: a100}\nspec: {}\n"
            + "".join(KUEUE_CQ.format(team=t, reclaim=reclaim) for t in ("team-a", "team-b")))


def _drop_jobs(text: str, names: tuple[str, ...]) -> str:
    return "---\n".join(d for d in text.split("---\n") if not any(f"name: {n}," in d for n in names))


def _bad(c) -> list[str]:
    return [line for line in c.lines if line.startswith("✗")]


def test_fairness_scenario_is_the_comparison_default():
    import yaml

    from gpusim.comparison import scenario

    def docs(text: str) -> list[dict]:
        out = list(yaml.safe_load_all(text))
        for d in out:   # an empty labels map means nothing
            meta = d.get("spec", {}).get("template", {}).get("metadata", {})
            if meta.get("labels") == {}:
                del meta["labels"]
        return out
    assert docs(FAIR) == docs(scenario("default"))


def test_fairness_broken_scenario_fails_on_team_b_only():
    from gpusim.labs import check_fairness
    c = check_fairness(run(text=FAIR))
    assert not c.passed
    assert _bad(c) == ["✗ team-b 有 Job 超过 120 s 才全部运行：serve-0 3311 s，serve-1 3262 s，serve-2 3212 s，serve-3 3152 s",
                       "✗ team-b 在 t=3631s 持有 16 张 GPU（保证 16/32），最后一个 team-b Job 提交后 3151 s"], str(c)
    assert "· team-b 排队时间：平均 3234 s，最长 3311 s" in c.lines


def test_fairness_kueue_reference_fix_passes():
    from gpusim.labs import check_fairness
    c = check_fairness(run(text=fair_kueue()))
    assert c.passed, str(c)
    assert "✓ team-b 每个 Job 提交后 120 s 内全部副本运行：serve-0 1 s，serve-1 1 s，serve-2 1 s，serve-3 1 s" in c.lines
    assert "· 驱逐 / 抢占事件 2 次" in c.lines   # two borrowing training Jobs evicted whole, re-admitted later
    assert any(line.startswith("✓ team-a 部分 gang 浪费 0.02 GPU 小时") for line in c.lines)


@pytest.mark.parametrize("edit, expected", [
    # deleting team-a's Jobs: B would still queue (FIFO), and the workload is not the lab's
    (lambda t: _drop_jobs(t, ("train-4", "train-5")), "✗ team-a 的负载被改动：缺少 train-4；缺少 train-5"),
    # more nodes: a different cluster (and B still queues behind A's 48 workers)
    (lambda t: t.replace("  count: 4\n", "  count: 6\n"),
     "✗ 集群被改动：6 台 GPU 节点（A100-SXM4-80GB，每台 8 张），可分配 48 张 nvidia.com/gpu；"
     "应为 4 × 8 张 A100-SXM4-80GB = 32"),
    # B preempts A through a PriorityClass: kube-scheduler evicts single workers, gangs break, train-3 fails
    (lambda t: t.replace("      annotations: {gpusim.io/duration: 30m}\n    spec:\n",
                         "      annotations: {gpusim.io/duration: 30m}\n    spec:\n      priorityClassName: inference\n")
     + PRIORITY_CLASS, "✗ team-a 有训练 Job 没有完成（模拟结束于 t=21600s）：train-3 89/1200 步"),
    # shrinking A's gangs
    (lambda t: t.replace("parallelism: 8\n  completions: 8", "parallelism: 4\n  completions: 4")
     .replace('training-workers: "8"', 'training-workers: "4"'),
     "✗ team-a 的负载被改动：train-0: 4 个 Pod（应为 8）；train-0: gpusim.io/training-workers = 4（应为 8）；"
     "train-1: 4 个 Pod（应为 8）；train-1: gpusim.io/training-workers = 4（应为 8）……（共 12 处）"),
    # shorter inference
    (lambda t: fair_kueue(t.replace("{gpusim.io/duration: 30m}", "{gpusim.io/duration: 10m}")),
     "✗ team-b 的负载被改动：serve-0: gpusim.io/duration = 10m（应为 30m）；serve-1: gpusim.io/duration = 10m（应为 30m）；"
     "serve-2: gpusim.io/duration = 10m（应为 30m）；serve-3: gpusim.io/duration = 10m（应为 30m）"),
    # stopping the clock before A is done
    (lambda t: fair_kueue(t.replace("until: 6h", "until: 1h")),
     "✗ team-a 有训练 Job 没有完成（模拟结束于 t=3600s）：train-0 1199/1200 步, train-1 1196/1200 步, "
     "train-2 611/1200 步, train-3 528/1200 步, train-4 从未启动, train-5 从未启动"),
], ids=["delete-a-jobs", "more-nodes", "priority-class", "shrink-a", "shorter-inference", "short-run"])
def test_fairness_false_fixes_fail(edit, expected):
    from gpusim.labs import check_fairness
    c = check_fairness(run(text=edit(FAIR)))
    assert not c.passed
    assert expected in c.lines, str(c)


def test_fairness_priority_class_breaks_gangs():
    from gpusim.labs import check_fairness
    text = FAIR.replace("      annotations: {gpusim.io/duration: 30m}\n    spec:\n",
                        "      annotations: {gpusim.io/duration: 30m}\n    spec:\n      priorityClassName: inference\n")
    r = run(text=text + PRIORITY_CLASS)
    c = check_fairness(r)
    assert any(line.startswith("✓ team-b 每个 Job 提交后 120 s 内") for line in c.lines)   # B is served …
    assert any(line.startswith("✗ team-a 部分 gang 浪费 7.92 GPU 小时") for line in c.lines)   # … A pays
    failed = {j.metadata.name: j.status.conditions[-1].reason for j in r.jobs() if j.status.failed}
    assert failed["train-3"] == "BackoffLimitExceeded"


@pytest.mark.parametrize("kwargs", [
    dict(reclaim="Never"),       # the quota is lent out and never taken back: B waits ~1 h
    dict(label=("team-b",)),     # only B is queued: A's pods still fill kube-scheduler's FIFO first
])
def test_fairness_wrong_kueue_fixes_fail(kwargs):
    from gpusim.labs import check_fairness
    c = check_fairness(run(text=fair_kueue(**kwargs)))
    assert not c.passed
    assert any(line.startswith("✗ team-b 有 Job 超过 120 s 才全部运行") for line in c.lines), str(c)


@pytest.mark.parametrize("cap, passed", [(None, False), (0, True)])
def test_fairness_volcano_queues(cap, passed):
    # weights + reclaim alone: A's unmarked pods are preemptable (the default since Volcano v1.7.0), reclaim splits
    # A's gangs and serves B's Jobs only up to minAvailable; a capability of 16 on A's queue serves B
    from gpusim.comparison import MultiTenant, scenario
    from gpusim.labs import check_fairness
    w = MultiTenant()
    c = check_fairness(run(text=scenario("volcano", w if cap is None else w.with_team("team-a", borrowing_limit=cap))))
    assert c.passed is passed, str(c)
    assert "✓ team-a 的负载未改动：6 个 Job（train-0, train-1, train-2, train-3, train-4, train-5），每个 8 个 Pod × 1 张 GPU" \
        in c.lines                                                      # Volcano Jobs read as the same workload


# --- lab 06: UnexpectedAdmissionError after a kubelet restart ------------------------------------------------

from gpusim.labs import check_admission  # noqa: E402
from gpusim.labs.admission import as_jobs, with_cordon  # noqa: E402
from gpusim.views.diagnose import diagnose_pod  # noqa: E402

ADMISSION = (ROOT / "labs" / "06-admission-error" / "cluster.yaml").read_text()


def admission_cordoned(cordon: str = "55s", uncordon: str = "95s", text: str = ADMISSION) -> str:
    return with_cordon(text, cordon, uncordon)


def admission_jobs(text: str = ADMISSION) -> str:
    return as_jobs(text)


@pytest.fixture(scope="module")
def admission_broken():
    return run(text=ADMISSION)


def test_admission_broken_reproduces_and_is_not_a_fix(admission_broken):
    c = check_admission(admission_broken, expect="broken")
    assert c.passed, str(c)
    assert any("no healthy devices present; cannot allocate unhealthy devices nvidia.com/gpu" in x for x in c.lines)
    f = check_admission(admission_broken)
    assert not f.passed
    assert [x for x in f.lines if x.startswith("✗")] == [
        "✗ bound-during-restart-1: 从未在 GPU 上运行（phase Failed，reason UnexpectedAdmissionError）",
        "✗ bound-during-restart-2: 从未在 GPU 上运行（phase Failed，reason UnexpectedAdmissionError）"]


def test_admission_diagnose_names_the_kubelet_restart(admission_broken):
    for name in ("bound-during-restart-1", "bound-during-restart-2"):
        d = diagnose_pod(admission_broken, name)
        assert d.root_cause == "kubelet-restart"
        assert d.root.layer == "kubelet"
        assert "trace t=60s fault.KubeletRestart on a100-0" in d.root.evidence
    assert diagnose_pod(admission_broken, "after-restart").findings == []


def test_admission_cordon_until_the_plugin_is_back_passes():
    r = run(text=admission_cordoned())
    c = check_admission(r)
    assert c.passed, str(c)
    assert "✓ bound-during-restart-1: bound-during-restart-1 在 t=95s～216s 用 1 张 GPU 跑完（提交后等待 30 s）" in c.lines
    assert not any(p.status.reason == "UnexpectedAdmissionError" for p in r.pods())
    assert not check_admission(r, expect="broken").passed


def test_uncordon_requeues_pods_nodeunschedulable_rejected():
    """queue/events.go NodeSpecUnschedulableChange: uncordon moves the pods at once (not after the 5 m flush)."""
    r = run(text=admission_cordoned())
    starts = {h.pod: h.start for h in r.ctx.holdings}
    assert 95.0 <= starts["bound-during-restart-1"] < 95.1


def test_admission_job_that_recreates_the_pod_passes():
    r = run(text=admission_jobs())
    c = check_admission(r)
    assert c.passed, str(c)
    rejected = [p.metadata.name for p in r.pods() if p.status.reason == "UnexpectedAdmissionError"]
    assert len(rejected) == 2 and all(n.startswith("bound-during-restart-") for n in rejected)


@pytest.mark.parametrize("edit, expected", [
    (lambda t: t.split("---\napiVersion: gpusim.io/v1alpha1\nkind: Fault")[0] + "---\n" + t.split(
        "downtime: 20s}\n---\n")[1], "✗ 故障被删掉了"),
    (lambda t: t.replace("downtime: 20s", "downtime: 1s"), "✗ 故障被改动"),
    (lambda t: t.replace("gpusim.io/submit-at: 65s", "gpusim.io/submit-at: 90s")
     .replace("gpusim.io/submit-at: 70s", "gpusim.io/submit-at: 90s"), "bound-during-restart-1: 提交于 90s（应为 65s）"),
    (lambda t: t.replace("name: worker, image: nvcr.io/nvidia/pytorch:24.08-py3, resources: {limits: {nvidia.com/gpu: 1}}",
                         "name: worker, image: nvcr.io/nvidia/pytorch:24.08-py3"), "没有 limit 的容器里 nvidia-smi 看不到 GPU"),
    (lambda t: t.replace("count: 1\n", "count: 2\n"), "✗ 集群被改动"),
    (lambda t: t.replace("gpusim.io/duration: 2m, gpusim.io/submit-at: 65s", "gpusim.io/duration: 1s, gpusim.io/submit-at: 65s"),
     "gpusim.io/duration = 1s"),
    (lambda t: t.replace("restartPolicy: Never", "restartPolicy: OnFailure"), "✗ bound-during-restart-1: 从未在 GPU 上运行"),
    (lambda t: admission_cordoned(uncordon="75s", text=t), "✗ bound-during-restart-1: 从未在 GPU 上运行"),
], ids=["no-fault", "shorter-restart", "submit-later", "no-gpu-limit", "second-node", "shorter-work", "restart-policy",
        "uncordon-too-early"])
def test_admission_false_fixes_fail(edit, expected):
    c = check_admission(run(text=edit(ADMISSION)))
    assert not c.passed
    assert any(expected in x for x in c.lines), str(c)


def test_admission_expect_is_validated(admission_broken):
    with pytest.raises(ValueError, match="expect"):
        check_admission(admission_broken, expect="cascade")


# --- lab 05: a node whose GPUs never appear ------------------------------------------------------------------

from gpusim.labs import check_bring_up  # noqa: E402
from gpusim.labs.bringup import relabel, with_pool_label  # noqa: E402

BRING_UP = (ROOT / "labs" / "05-node-bring-up" / "cluster.yaml").read_text()
IMG_POOL = """metadata: {name: h100-img}
spec:
  count: 1
  joinAt: 5m
  gpu: {model: H100-SXM5-80GB, count: 8}
"""


def bring_up_labelled(pool: str = "h100-img", value: str = "false", text: str = BRING_UP) -> str:
    return with_pool_label(text, pool, value=value)


@pytest.fixture(scope="module")
def bring_up_broken():
    return run(text=BRING_UP)


def test_bring_up_broken_reproduces_and_is_not_a_fix(bring_up_broken):
    c = check_bring_up(bring_up_broken, expect="broken")
    assert c.passed, str(c)
    f = check_bring_up(bring_up_broken)
    assert [x for x in f.lines if x.startswith("✗")] == [
        "✗ 每台节点 allocatable nvidia.com/gpu = h100-0 8，h100-1 8，h100-img-0 0（应为 8）",
        "✗ train-2: 没有拿到 GPU（Pending）", "✗ ClusterPolicy status.state = notReady"]


def test_bring_up_diagnose_names_the_driver(bring_up_broken):
    d = diagnose_pod(bring_up_broken, "train-2")
    assert [f.layer for f in d.findings] == ["scheduler", "gpu-operator", "gpu-operator"]
    assert d.root_cause == "driver"
    assert d.root.summary.startswith("nvidia-driver-daemonset-") and "CrashLoopBackOff" in d.root.summary
    assert any("Unable to load the kernel module 'nvidia.ko'" in e for e in d.root.evidence)


def test_bring_up_label_on_the_preinstalled_pool_passes():
    r = run(text=bring_up_labelled())
    c = check_bring_up(r)
    assert c.passed, str(c)
    assert "✓ train-0: 在 h100-img-0 上用 8 张 GPU，t=320s 开始（节点加入后 20 s）" in c.lines
    assert not [p for p in r.operand_pods() if p.spec.node_name == "h100-img-0"
                and p.metadata.labels["app"] == "nvidia-driver-daemonset"]
    assert not check_bring_up(r, expect="broken").passed


def test_bring_up_relabel_the_live_node_passes():
    """The day-2 fix: `kubectl label node h100-img-0 nvidia.com/gpu.deploy.driver=false --overwrite` at 10m."""
    c = check_bring_up(run(text=relabel(BRING_UP)))
    assert c.passed, str(c)
    assert "✓ train-2: 在 h100-img-0 上用 8 张 GPU，t=620s 开始（节点加入后 320 s）" in c.lines


@pytest.mark.parametrize("edit, expected", [
    (lambda t: t.replace("spec: {at: 0s, type: DriverFailure, node: h100-img-0}",
                         "spec: {at: 0s, type: DriverFailure, node: h100-img-0, downtime: 1s}"), "✗ 故障被改动"),
    (lambda t: t.split("---\napiVersion: gpusim.io/v1alpha1\nkind: Fault")[0] + "---\n" + t.split(
        "node: h100-img-0}\n---\n")[1], "✗ 故障被删掉了"),
    (lambda t: t.replace('driver: {enabled: true, version: "580.95.05"}', "driver: {enabled: false}"),
     "✗ ClusterPolicy spec.driver.enabled: false"),
    (lambda t: bring_up_labelled("h100", text=bring_up_labelled(text=t)), "h100-0 的 nvidia.com/gpu.deploy.driver=false"),
    (lambda t: relabel(t, key="nvidia.com/gpu.deploy.operands"), "✗ train-2: 没有拿到 GPU"),
    (lambda t: t.replace("  count: 2\n", "  count: 3\n"), "✗ 集群被改动"),
    (lambda t: t.replace(IMG_POOL, IMG_POOL.replace("joinAt: 5m", "joinAt: 0s")), "✗ 集群被改动"),
    (lambda t: t.replace("gpusim.io/duration: 2h}}\nspec:\n  restartPolicy: Never\n  containers:\n  - {name: trainer, "
                         "image: nvcr.io/nvidia/pytorch:25.01-py3, resources: {limits: {nvidia.com/gpu: 8}}}",
                         "gpusim.io/duration: 2h}}\nspec:\n  restartPolicy: Never\n  containers:\n  - {name: trainer, "
                         "image: nvcr.io/nvidia/pytorch:25.01-py3, resources: {limits: {nvidia.com/gpu: 4}}}"),
     "✗ 负载被改动"),
], ids=["fault-downtime", "no-fault", "driver-disabled", "label-every-pool", "operands-off", "more-nodes",
        "join-earlier", "fewer-gpus"])
def test_bring_up_false_fixes_fail(edit, expected):
    c = check_bring_up(run(text=edit(BRING_UP)))
    assert not c.passed
    assert any(expected in x for x in c.lines), str(c)


def test_bring_up_expect_is_validated(bring_up_broken):
    with pytest.raises(ValueError, match="expect"):
        check_bring_up(bring_up_broken, expect="cascade")


# --- lab 04: the all-reduce cliff ----------------------------------------------------------------------------

from gpusim.labs import allreduce_reference, check_allreduce  # noqa: E402
from gpusim.labs.allreduce import at_scale, compute_seconds, with_kueue_tas, with_volcano_hypernodes  # noqa: E402
from gpusim.workloads.training import training_records  # noqa: E402

CLIFF = (ROOT / "labs" / "04-allreduce-cliff" / "cluster.yaml").read_text()
CLIFF_TENANTS = CLIFF[CLIFF.index("---\napiVersion: v1\nkind: Namespace"):CLIFF.index("---\napiVersion: batch/v1")]


def _per_node(result) -> dict[str, int]:
    rec = training_records(result.ctx)[0]
    return {p["node"]: len(p["gpus"]) for p in rec["placement"]}


@pytest.fixture(scope="module")
def cliff_broken():
    return run(text=CLIFF)


def test_allreduce_broken_reproduces_the_cliff_and_is_not_a_fix(cliff_broken):
    c = check_allreduce(cliff_broken, expect="broken")
    assert c.passed, str(c)
    per_node = _per_node(cliff_broken)
    # the bin packer fills the 14 preferred nodes, then the last free GPU of each shared node, then the pool
    assert per_node["shared-0"] == per_node["shared-1"] == 1
    assert sum(per_node.values()) == 128 and all(per_node[f"vision-{i}"] == 8 for i in range(14))
    # one rank alone on a node caps the ring at one NDR NIC (topology.md §3.3: r_i · B_nic = 1 · 48 GB/s)
    assert "busbw 48 GB/s，瓶颈 1 NIC(s) at shared-0" in c.lines[-1]
    f = check_allreduce(cliff_broken)
    assert not f.passed
    assert [x for x in f.lines if x.startswith("✗")] == [
        "✗ llama-7b: 每步 0.977 s = 计算 0.418 s + all-reduce 559 ms（busbw 48 GB/s，瓶颈 1 NIC(s) at shared-0），"
        "是紧凑放置的 2.00 倍；18 台节点，其中 3 台不满 8 张（shared-0 1 张、shared-1 1 张、pool-7 6 张）（允许 ≤ 1.03 倍）"]


def test_allreduce_reference_is_the_model_of_16_whole_nodes(cliff_broken):
    step, cost = allreduce_reference(cliff_broken)
    # B = min(370 · 8/7, 8 NICs · 48) = 384 GB/s; T = L + 13.5e9 · 2 · 127/128 / 384e9
    assert cost.bandwidth == pytest.approx(384.0)
    assert cost.seconds == pytest.approx(13.5e9 * 2 * 127 / 128 / 384e9 + cost.latency_us * 1e-6)
    assert step == pytest.approx(0.418 + cost.seconds)


def test_allreduce_blind_placement_is_fine_at_64_gpus():
    r = run(text=at_scale(CLIFF, 64))
    rec = training_records(r.ctx)[0]
    ref, _ = allreduce_reference(r, 64)
    assert rec["workers"] == 64 and set(_per_node(r).values()) == {8}
    assert rec["stepSeconds"] == pytest.approx(ref, rel=0.01)
    assert compute_seconds(64) == pytest.approx(0.836)


@pytest.mark.parametrize("fix", [with_kueue_tas, with_volcano_hypernodes], ids=["kueue-tas", "volcano-hypernode"])
def test_allreduce_topology_aware_fixes_pass(fix):
    r = run(text=fix(CLIFF))
    c = check_allreduce(r)
    assert c.passed, str(c)
    assert _per_node(r) == {f"pool-{i}": 8 for i in range(16)}
    assert not check_allreduce(r, expect="broken").passed


def test_allreduce_pinning_the_job_to_the_idle_su_passes():
    """A nodeSelector on the second SU's rack label is a (manual) topology-aware placement: accepted."""
    text = CLIFF.replace("      affinity:\n", "      nodeSelector: {cloud.provider.com/topology-rack: r2}\n      affinity:\n", 1)
    r = run(text=text)
    assert check_allreduce(r).passed
    assert _per_node(r) == {f"pool-{i}": 8 for i in range(16)}


def test_allreduce_whole_node_workers_pass():
    """16 workers of 8 GPUs (torchrun --nproc-per-node 8): the same 128 GPUs, no node can hold a lone rank."""
    text = at_scale(CLIFF, 16).replace('gpusim.io/step-time: 3344ms', 'gpusim.io/step-time: 418ms').replace(
        "pytorch:24.08-py3, resources: {limits: {nvidia.com/gpu: 1}}", "pytorch:24.08-py3, resources: {limits: {nvidia.com/gpu: 8}}")
    r = run(text=text)
    c = check_allreduce(r)
    assert c.passed, str(c)
    assert "✓ 训练 Job 未改动：llama-7b 共 128 张 GPU（16 个 worker × 8），每步 13.5G 梯度、418 ms 计算、2000 步" in c.lines


@pytest.mark.parametrize("edit, expected", [
    (lambda t: at_scale(t, 64), "64 个 worker × 1 张 = 64 张 GPU（应为 128）"),
    (lambda t: at_scale(t, 112), "112 个 worker × 1 张 = 112 张 GPU（应为 128）"),
    (lambda t: t.replace("gpusim.io/allreduce-bytes: 13.5G", "gpusim.io/allreduce-bytes: 2G"),
     "gpusim.io/allreduce-bytes = 2G（应为 13.5G"),
    (lambda t: t.replace("        gpusim.io/allreduce-bytes: 13.5G\n", ""), "gpusim.io/allreduce-bytes = None"),
    (lambda t: t.replace("gpusim.io/step-time: 418ms", "gpusim.io/step-time: 4s"), "gpusim.io/step-time = 4s"),
    (lambda t: t.replace('gpusim.io/training-steps: "2000"', 'gpusim.io/training-steps: "200"'),
     "gpusim.io/training-steps = 200"),
    (lambda t: t.replace("gpusim.io/allreduce-bytes: 13.5G", "gpusim.io/allreduce-bytes: 13.5G\n"
                         "        gpusim.io/allreduce-overlap: \"0.9\""), "gpusim.io/allreduce-overlap = 0.9"),
    (lambda t: t.replace("  labels: kueue\n", "  labels: kueue\n  nicSpeed: 800G\n"), "fabric 被改动：nic_speed = 800"),
    (lambda t: t.replace("scalableUnit: 16", "scalableUnit: 32"), "fabric 被改动：scalable_unit = 32"),
    (lambda t: t.replace(CLIFF_TENANTS, ""), "其他租户被改动：缺少 vllm-70b-0"),
    (lambda t: t.replace("count: 16\n", "count: 17\n"), "集群被改动：多出 pool-16"),
    (lambda t: with_kueue_tas(t, level="kubernetes.io/hostname"), "llama-7b 的 worker 从未全部运行"),
], ids=["64-gpus", "112-gpus", "smaller-model", "no-allreduce", "longer-compute", "fewer-steps", "overlap",
        "faster-nics", "one-big-su", "evict-tenants", "more-nodes", "tas-one-node"])
def test_allreduce_false_fixes_fail(edit, expected):
    c = check_allreduce(run(text=edit(CLIFF)))
    assert not c.passed
    assert any(expected in x for x in c.lines), str(c)


# --- lab 07: a MIG config that never takes effect ----------------------------------------------------------

from gpusim.labs import check_mig  # noqa: E402
from gpusim.labs.migconfig import relabel_again, relabel_at  # noqa: E402

MIG_LAB = (ROOT / "labs" / "07-mig-not-applied" / "cluster.yaml").read_text()
INFER_LIMIT = "resources: {limits: {nvidia.com/mig-1g.10gb: 1}}"


@pytest.fixture(scope="module")
def mig_broken():
    return run(text=MIG_LAB)


def test_mig_broken_reproduces_and_is_not_a_fix(mig_broken):
    c = check_mig(mig_broken, expect="broken")
    assert c.passed, str(c)
    assert ("✓ mig-manager: Unable to apply MIG config all-1g.10gb: nvidia-smi mig: In use by another client "
            "(GPU workloads are still running)") in c.lines
    f = check_mig(mig_broken)
    assert [x for x in f.lines if x.startswith("✗")] == [
        "✗ a100-0: nvidia.com/mig.config=all-1g.10gb，nvidia.com/mig.config.state=failed，allocatable "
        "nvidia.com/mig-1g.10gb = 0（应为 all-1g.10gb、success、56）"] + [
        f"✗ infer-{i}: 从未拿到 nvidia.com/mig-1g.10gb（phase Pending）" for i in range(4)]


def test_mig_diagnose_names_the_pod_that_held_the_gpus(mig_broken):
    for name in ("infer-0", "infer-3"):
        d = diagnose_pod(mig_broken, name)
        assert [f.layer for f in d.findings] == ["scheduler", "mig-manager"]
        assert d.root_cause == "mig-in-use"
        assert d.root.summary.endswith("pods held the GPUs when mig-manager tried to reset them: default/train")
        assert any("In use by another client" in e for e in d.root.evidence)
    assert diagnose_pod(mig_broken, "train").findings == []


def test_mig_relabel_after_the_training_passes():
    c = check_mig(run(text=relabel_at(MIG_LAB)))
    assert c.passed, str(c)
    assert "✓ infer-0: t=3680s～5481s 用 1 个 nvidia.com/mig-1g.10gb 跑完（提交后等待 2780 s）" in c.lines
    assert "· MigConfigFailed 事件 0 个" in c.lines


def test_mig_label_away_and_back_once_the_gpus_are_free_passes():
    r = run(text=relabel_again(MIG_LAB))
    c = check_mig(r)
    assert c.passed, str(c)
    assert "✓ train: t=0s～3601s 用 8 个 nvidia.com/gpu 跑完（提交后等待 0 s）" in c.lines
    assert not check_mig(r, expect="broken").passed


def test_relabel_at_needs_the_labs_action():
    with pytest.raises(ValueError, match="LabelNode"):
        relabel_at(MIG_LAB.replace("at: 10m, type: LabelNode", "at: 11m, type: LabelNode"))


@pytest.mark.parametrize("edit, expected", [
    (lambda t: t.replace(INFER_LIMIT, "resources: {limits: {nvidia.com/gpu: 1}}"),
     "infer-0: 申请 1 个 nvidia.com/gpu（应为 1 个 nvidia.com/mig-1g.10gb）——整卡不是 MIG 实例"),
    (lambda t: t.replace(", " + INFER_LIMIT, ""), "infer-0: 申请 没有 GPU limit"),
    (lambda t: t.replace("count: 1\n", "count: 2\n"), "✗ 集群被改动"),
    (lambda t: t.replace("{name: train, annotations: {gpusim.io/duration: 1h}}",
                         "{name: train, annotations: {gpusim.io/duration: 5m}}"), "train: gpusim.io/duration = 5m"),
    (lambda t: t.replace("{name: train, annotations: {gpusim.io/duration: 1h}}",
                         "{name: train, annotations: {gpusim.io/duration: 1h, gpusim.io/submit-at: 2h}}"),
     "train: 提交于 7200s（应为 0s）"),
    (lambda t: t.replace("mig: {strategy: mixed}", "mig: {strategy: single}"), "✗ ClusterPolicy spec.mig.strategy = single"),
    (lambda t: relabel_again(t, away="30m", back="31m"), "✗ infer-0: 从未拿到 nvidia.com/mig-1g.10gb"),
    (lambda t: relabel_at(t).replace("nvidia.com/mig.config: all-1g.10gb}}", "nvidia.com/mig.config: all-balanced}}"),
     "✗ a100-0: nvidia.com/mig.config=all-balanced"),
    (lambda t: t.replace("labels: {nvidia.com/mig.config: all-disabled}", "labels: {nvidia.com/mig.config: all-1g.10gb}"),
     "✗ train: 从未拿到 nvidia.com/gpu"),
], ids=["whole-gpus", "no-gpu-limit", "second-node", "shorter-train", "train-later", "single-strategy",
        "relabel-while-busy", "other-config", "mig-from-the-start"])
def test_mig_false_fixes_fail(edit, expected):
    c = check_mig(run(text=edit(MIG_LAB)))
    assert not c.passed
    assert any(expected in x for x in c.lines), str(c)


def test_allreduce_helpers_validate():
    with pytest.raises(ValueError, match="gpus"):
        at_scale(CLIFF, 0)
    with pytest.raises(ValueError, match="no batch/v1 Job 'llama-7b'"):
        with_kueue_tas(CLIFF.replace("name: llama-7b", "name: other"))
    with pytest.raises(ValueError, match="expect"):
        check_allreduce(run(text=at_scale(CLIFF, 8)), expect="cascade")


def test_mig_expect_is_validated(mig_broken):
    with pytest.raises(ValueError, match="expect"):
        check_mig(mig_broken, expect="cascade")


def test_get_nodes_label_and_resource_columns(mig_broken):
    """`kubectl get nodes -L nvidia.com/mig.config,...`: one column per label, headed by the key's last path
    segment upper-cased (kubectl's decorateTable), and one alloc/cap column per extended resource."""
    from gpusim.views.kubectl import get_nodes
    head, row = get_nodes(mig_broken, label_columns=("nvidia.com/mig.config", "nvidia.com/mig.config.state"),
                          resources=("nvidia.com/gpu", "nvidia.com/mig-1g.10gb")).splitlines()
    assert head.split()[-6:] == ["GPU", "(alloc/cap)", "MIG-1G.10GB", "(alloc/cap)", "MIG.CONFIG", "MIG.CONFIG.STATE"]
    assert row.split()[-4:] == ["8/8", "0/0", "all-1g.10gb", "failed"]


# --- lab 09: two containers of a pod share one MIG device through DRA ---------------------------------------

from gpusim.labs import check_dra_mig, dramig  # noqa: E402

DRA_MIG = (ROOT / "labs" / "09-dra-mig" / "cluster.yaml").read_text()


@pytest.fixture(scope="module")
def dra_mig_broken():
    return run(text=DRA_MIG)


@pytest.fixture(scope="module")
def dra_mig_fixed():
    return run(text=dramig.shared_claim(DRA_MIG))


def test_dra_mig_broken_reproduces_and_is_not_a_fix(dra_mig_broken):
    c = check_dra_mig(dra_mig_broken, expect="broken")
    assert c.passed, str(c)
    assert ("✓ infer-0: Running，server → gpu-0-mig-3g40gb-9-0；preprocess → gpu-0-mig-3g40gb-9-4——两个容器在两个"
            "不同的 MIG 设备上") in c.lines
    assert "✓ gpu-0: infer-0 占了 2 个 3g.40gb（gpu-0-mig-3g40gb-9-0, gpu-0-mig-3g40gb-9-4），memory slice 8/8" in c.lines
    assert any(x.startswith("✓ infer-1: Pending（0/1 nodes are available: 1 cannot allocate all claims.") for x in c.lines)
    f = check_dra_mig(dra_mig_broken)
    bad = [x for x in f.lines if x.startswith("✗")]
    assert len(bad) == 3
    assert bad[0] == ("✗ infer-0: server → gpu-0-mig-3g40gb-9-0；preprocess → gpu-0-mig-3g40gb-9-4——两个容器不是同一个设备"
                      "（CUDA IPC 跨 MIG 实例不可用）")
    assert bad[1].startswith("✗ infer-1: Pending（0/1 nodes are available: 1 cannot allocate all claims.")
    assert bad[2] == ("✗ gpu-0: 已分配 2 个设备（infer-0 → gpu-0-mig-3g40gb-9-0, gpu-0-mig-3g40gb-9-4，infer-1 → 无），"
                      "memory slice 8/8（应为每个 Pod 正好 1 个）")


def test_dra_mig_broken_claims_and_devices(dra_mig_broken):
    """Two pod claims from one template are two ResourceClaims (``<pod>-<pod claim>-<5 characters>``), each with its
    own device; infer-1's two claims stay ``pending`` (printers.go resourceClaimState)."""
    table = dramig.get_resourceclaims(dra_mig_broken).splitlines()
    assert table[0].split() == ["NAME", "STATE", "AGE"]
    states = {row.split()[0].rsplit("-", 1)[0]: row.split()[1] for row in table[1:]}
    assert states == {"infer-0-server-mig": "allocated,reserved", "infer-0-sidecar-mig": "allocated,reserved",
                      "infer-1-server-mig": "pending", "infer-1-sidecar-mig": "pending"}
    rows = {(r.pod, r.container): r for r in dramig.container_devices(dra_mig_broken)}
    a, b = rows["infer-0", "server"], rows["infer-0", "preprocess"]
    assert a.uuid.startswith("MIG-") and b.uuid.startswith("MIG-") and a.uuid != b.uuid and a.claim != b.claim
    assert (a.cdi, b.cdi) == ("k8s.gpu.nvidia.com/device=gpu-0-mig-3g40gb-9-0", "k8s.gpu.nvidia.com/device=gpu-0-mig-3g40gb-9-4")
    assert rows["infer-1", "server"].device is None


def test_dra_mig_one_pod_claim_for_both_containers_passes(dra_mig_fixed):
    c = check_dra_mig(dra_mig_fixed)
    assert c.passed, str(c)
    rows = {(r.pod, r.container): r for r in dramig.container_devices(dra_mig_fixed)}
    for pod, dev in (("infer-0", "gpu-0-mig-3g40gb-9-0"), ("infer-1", "gpu-0-mig-3g40gb-9-4")):
        server, side = rows[pod, "server"], rows[pod, "preprocess"]
        assert (server.device, server.cdi, server.uuid, server.claim) == (side.device, side.cdi, side.uuid, side.claim)
        assert server.device == dev and server.profile == "3g.40gb"
        assert f"✓ {pod}: Running，server 和 preprocess 都看到 {dev}（3g.40gb，{server.uuid}，claim {server.claim}）" in c.lines
    assert "✓ gpu-0: 已分配 2 个设备（infer-0 → gpu-0-mig-3g40gb-9-0，infer-1 → gpu-0-mig-3g40gb-9-4），memory slice 8/8" in c.lines
    parts = dramig.gpu_partitions(dra_mig_fixed)
    assert [(p.device, p.memory_slices, p.pods) for p in parts] == [
        ("gpu-0-mig-3g40gb-9-0", (0, 1, 2, 3), ("infer-0",)), ("gpu-0-mig-3g40gb-9-4", (4, 5, 6, 7), ("infer-1",))]
    assert not check_dra_mig(dra_mig_fixed, expect="broken").passed


@pytest.mark.parametrize("edit, expected", [
    (lambda t: dramig.whole_gpu(dramig.shared_claim(t)),
     "✗ infer-0: 两个容器共用 gpu-0，但它是整卡（type gpu），应为一个 3g.40gb MIG 设备"),
    (dramig.device_plugin_limits, "✗ infer-0: 容器申请了 nvidia.com/mig-3g.40gb——这是 device plugin 的扩展资源"),
    (lambda t: t, "✗ infer-0: server → gpu-0-mig-3g40gb-9-0；preprocess → gpu-0-mig-3g40gb-9-4——两个容器不是同一个设备"),
    (lambda t: dramig.with_profile(t, "1g.10gb"), "✗ infer-0: server → gpu-0-mig-1g10gb-19-0；preprocess → gpu-0-mig-1g10gb-19-1"),
    (lambda t: dramig.with_profile(dramig.shared_claim(t), "1g.10gb"), "✗ infer-0: 两个容器共用 gpu-0-mig-1g10gb-19-0，profile 1g.10gb"),
    (lambda t: dramig.with_profile(dramig.shared_claim(t), "4g.40gb"), "✗ infer-1: Pending（0/1 nodes are available: 1 cannot allocate all claims."),
    (lambda t: dramig.without_selector(dramig.shared_claim(t)), "✗ infer-1: 两个容器共用 gpu-0-mig-1g10gb-19-1，profile 1g.10gb"),
    (lambda t: dramig.shared_claim(t).replace(
        "preprocess, image: nvcr.io/nvidia/tritonserver:25.01-py3-sdk, resources: {claims: [{name: mig}]}",
        "preprocess, image: nvcr.io/nvidia/tritonserver:25.01-py3-sdk"), "✗ infer-0: preprocess 看不到 GPU"),
    (dramig.named_claim, "——gpu-0-mig-3g40gb-9-0 被 infer-0、infer-1 共用（一个命名 ResourceClaim）"),
    (lambda t: dramig.shared_claim(t).replace("deviceClassName: mig.nvidia.com\n", "deviceClassName: mig.nvidia.com\n          count: 2\n"),
     "✗ infer-0: server → gpu-0-mig-3g40gb-9-0, gpu-0-mig-3g40gb-9-4；preprocess → gpu-0-mig-3g40gb-9-0, gpu-0-mig-3g40gb-9-4——server、preprocess 看到 2 个设备"),
    (lambda t: t.replace("count: 1, allocation: dra", "count: 2, allocation: dra"), "✗ 集群被改动：a100-0 2 张 A100-SXM4-80GB（DRA）"),
    (lambda t: dramig.shared_claim(t).replace("{name: infer-1, annotations: {gpusim.io/submit-at: 1m}}", "{name: infer-1}")
     .replace("{name: infer-0}", "{name: infer-0, annotations: {gpusim.io/duration: 5m}}"),
     "✗ 负载被改动：infer-0: 加了 gpusim.io/duration=5m（推理服务一直运行）；infer-1: 提交于 0s（应为 60s）"),
], ids=["whole-gpu", "device-plugin-resource", "two-claims", "two-claims-1g", "wrong-profile", "4g-one-per-gpu",
        "no-selector", "sidecar-without-claim", "named-claim-for-both-pods", "count-2", "second-gpu", "workload-changed"])
def test_dra_mig_false_fixes_fail(edit, expected):
    c = check_dra_mig(run(text=edit(DRA_MIG)))
    assert not c.passed
    assert any(expected in x for x in c.lines), str(c)


def test_dra_mig_helpers_validate(dra_mig_broken):
    with pytest.raises(ValueError, match="expect"):
        check_dra_mig(dra_mig_broken, expect="cascade")
    with pytest.raises(ValueError, match="two pod claims"):
        dramig.shared_claim(dramig.shared_claim(DRA_MIG))
    with pytest.raises(ValueError, match="CEL selector"):
        dramig.with_profile(dramig.without_selector(DRA_MIG), "1g.10gb")


def test_dra_mig_resource_claim_state_column():
    """printers.go resourceClaimState: deleted / pending / allocated[,reserved]."""
    from types import SimpleNamespace as NS
    def claim(alloc, reserved, deleted):
        return NS(metadata=NS(deletion_timestamp=1.0 if deleted else None),
                  status=NS(allocation=object() if alloc else None, reserved_for=[1] if reserved else []))
    assert [dramig.claim_state(claim(*x)) for x in [(False, False, False), (True, False, False), (True, True, False),
                                                    (False, False, True), (True, True, True)]] == [
        "pending", "allocated", "allocated,reserved", "deleted", "deleted,allocated,reserved"]


# --- lab 09, part 2: a multi-node NVLink job placed with a ComputeDomain -----------------------------------

from gpusim.labs import check_compute_domain, computedomain  # noqa: E402
from gpusim.labs.mnnvl import MSG_NO_CHANNEL, Rank, mnnvl_check  # noqa: E402

NVL_JOB = (ROOT / "labs" / "09-dra-mig" / "compute-domain.yaml").read_text()
CLIQUE_1, CLIQUE_2 = "u.1", "u.2"


def _ranks(nodes: list[tuple[str, str | None]], gpus: int = 4, channel: bool = False, enable: int = 2) -> list[Rank]:
    out = []
    for node, clique in nodes:
        for g in range(gpus):
            out.append(Rank(len(out), f"pod-{node}", node, g, clique, channel, enable))
    return out


# NVIDIA/nccl src/init.cc initTransportsRank (the MNNVL gate) and src/mnnvl.cc ncclMnnvlCheck at commit
# 192610c9321b23deb0fad81cf51b99bc06849e85 (NCCL has no unit test for it): one row per branch. Not expressible: cuMem disabled and no FABRIC-handle
# support (gpusim's GB200 has both), a zero cluster UUID (a fabric without one is not COMPLETED here), the export/
# import failure with a channel present (the IMEX domain is down: gpusim's prepare waits for the daemon instead).
@pytest.mark.parametrize("ranks, checked, mnnvl, sizes, error", [
    (_ranks([("a", CLIQUE_1)]), False, False, {}, None),                                 # nNodes == 1, auto: no check
    (_ranks([("a", CLIQUE_1)], channel=True, enable=1), True, True, {CLIQUE_1: 4}, None),  # enable == 1 forces it
    (_ranks([("a", CLIQUE_1), ("b", CLIQUE_1)], enable=0), False, False, {}, None),      # NCCL_MNNVL_ENABLE=0
    (_ranks([("a", CLIQUE_1), ("b", None)]), True, False, {}, None),                     # a fabric not COMPLETED
    (_ranks([("a", CLIQUE_1), ("b", CLIQUE_2)], gpus=1), True, False, {CLIQUE_1: 1, CLIQUE_2: 1}, None),  # cliques of 1
    (_ranks([("a", CLIQUE_1), ("b", CLIQUE_1)]), True, False, {CLIQUE_1: 8}, MSG_NO_CHANNEL.format(size=8)),
    (_ranks([("a", CLIQUE_1), ("b", CLIQUE_1)], channel=True), True, True, {CLIQUE_1: 8}, None),
    (_ranks([("a", CLIQUE_1), ("b", CLIQUE_2)], channel=True), True, True, {CLIQUE_1: 4, CLIQUE_2: 4}, None),
], ids=["one-node-auto", "one-node-forced", "disabled", "fabric-not-completed", "cliques-of-one", "no-imex-channel",
        "one-clique", "two-cliques"])
def test_nccl_mnnvl_check_rows(ranks, checked, mnnvl, sizes, error):
    init = mnnvl_check(ranks)
    assert (init.checked, init.mnnvl, init.clique_sizes, init.error) == (checked, mnnvl, sizes, error)


def test_nccl_mnnvl_message_is_nccls():
    assert MSG_NO_CHANNEL.format(size=16) == (
        "MNNVL (cliqueSize 16) is available but not working on this system. Check the IMEX channel configuration "
        "(/dev/nvidia-caps-imex-channels). Set NCCL_MNNVL_ENABLE=0 to ignore this issue.")


@pytest.fixture(scope="module")
def nvl_broken():
    return run(text=NVL_JOB)


@pytest.fixture(scope="module")
def nvl_fixed():
    return run(text=computedomain.with_compute_domain(NVL_JOB))


def test_compute_domain_broken_reproduces_and_is_not_a_fix(nvl_broken):
    c = check_compute_domain(nvl_broken, expect="broken")
    assert c.passed, str(c)
    assert "✓ Worker 分在 2 个 clique 上（clique 1: train-0, train-3；clique 2: train-1, train-2）" in c.lines
    assert ("✓ NCCL: MNNVL 0 (NCCL_MNNVL_ENABLE=0: check skipped); all-reduce 14 GB over 16 ranks: bus bandwidth "
            "191.8 GB/s, 136.9 ms, bottleneck 4 NIC(s) at gb200-p1-0") in c.lines
    f = check_compute_domain(nvl_broken)
    assert [x.split("：")[0].split(" ")[1] for x in f.lines if x.startswith("✗")] == [
        "ComputeDomain", "没有", "Worker", "NCCL:"]


def test_compute_domain_fix_passes(nvl_fixed):
    c = check_compute_domain(nvl_fixed)
    assert c.passed, str(c)
    assert ("✓ NCCL: MNNVL 1, cliques [16]; all-reduce 14 GB over 16 ranks: bus bandwidth 718.8 GB/s, 36.5 ms, "
            "bottleneck NVLink domain") in c.lines
    (cd,) = nvl_fixed.api.list("ComputeDomain")
    assert cd.status.status == "Ready" and sorted(n.index for n in cd.status.nodes) == [0, 1, 2, 3]
    assert len({n.clique_id for n in cd.status.nodes}) == 1
    table = computedomain.placement_table(nvl_fixed)
    assert table.count("k8s.compute-domain.nvidia.com/claim=") == 4 and "<none>" not in table
    assert not check_compute_domain(nvl_fixed, expect="broken").passed


def test_compute_domain_node_selector_on_the_clique_is_a_fix_too():
    """Pinning the workers to one partition by its clique label (instead of the pod affinity) also keeps them
    in one clique: the checker judges the outcome, not the mechanism."""
    r0 = run(text=NVL_JOB)
    clique = next(n.metadata.labels["nvidia.com/gpu.clique"] for n in r0.nodes() if n.metadata.name == "gb200-p2-0")
    text = computedomain.with_compute_domain(NVL_JOB, affinity=False).replace(
        "  containers:\n  - name: trainer\n", f"  nodeSelector: {{nvidia.com/gpu.clique: {clique}}}\n  containers:\n  - name: trainer\n")
    c = check_compute_domain(run(text=text))
    assert c.passed, str(c)
    assert "✓ Worker 都在一个 clique 上（clique 2: train-0, train-1, train-2, train-3）" in c.lines


@pytest.mark.parametrize("edit, expected", [
    (lambda t: computedomain.with_compute_domain(t, channel=False),
     "✗ NCCL: NCCL WARN MNNVL (cliqueSize 16) is available but not working on this system."),
    (lambda t: computedomain.with_compute_domain(t, channel=False, drop_env=False),
     "✗ NCCL: MNNVL 0 (NCCL_MNNVL_ENABLE=0: check skipped); all-reduce 14 GB over 16 ranks: bus bandwidth 191.8 GB/s"),
    (lambda t: computedomain.with_compute_domain(t, affinity=False), "✗ NCCL: MNNVL 1, cliques ["),
    (lambda t: computedomain.with_compute_domain(t, affinity=False), "✗ Worker 分在 2 个 clique 上"),
    (lambda t: computedomain.with_compute_domain(t, drop_env=False), "✗ NCCL: MNNVL 0 (NCCL_MNNVL_ENABLE=0: check skipped)"),
    (lambda t: t.replace(computedomain.ENV_LINE, ""), "✗ NCCL: NCCL WARN MNNVL (cliqueSize 8)"),
    (lambda t: computedomain.with_compute_domain(t).replace("cliqueId: 2}", "cliqueId: 1}"), "✗ 集群被改动"),
    (lambda t: computedomain.with_compute_domain(t).replace("exactly: {deviceClassName: gpu.nvidia.com, count: 4}",
                                                            "exactly: {deviceClassName: gpu.nvidia.com, count: 2}"),
     "✗ Worker 没有全部在 4 张 GPU 上运行：train-0 Running，2 个 GPU"),
    (lambda t: computedomain.with_compute_domain(t).replace("metadata: {name: train-3, labels: {job: llm-pretrain}}",
                                                            "metadata: {name: train-9, labels: {job: llm-pretrain}}"),
     "✗ 负载被改动：缺少 train-3；多出 train-9"),
], ids=["affinity-no-compute-domain", "affinity-and-mnnvl-off", "compute-domain-two-cliques",
        "compute-domain-two-cliques-line", "mnnvl-off-kept", "env-dropped-only", "one-clique-cluster", "two-gpus-each",
        "worker-renamed"])
def test_compute_domain_false_fixes_fail(edit, expected):
    c = check_compute_domain(run(text=edit(NVL_JOB)))
    assert not c.passed
    assert any(x.startswith(expected) or expected in x for x in c.lines), str(c)


def test_compute_domain_helpers_validate(nvl_broken):
    with pytest.raises(ValueError, match="expect"):
        check_compute_domain(nvl_broken, expect="cascade")
    with pytest.raises(ValueError, match="workers"):
        computedomain.with_compute_domain(NVL_JOB.replace("four-gb200}", "other}"))
