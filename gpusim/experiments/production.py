"""Chapter 08 (企业生产实践): the production playbook, each piece measured on a gpusim run.

- ``selection_table``: the scheduler decision table, its numbers taken from chapter 05's
  ``gpusim.comparison`` measurements (passed in: comparison is a sibling module of this layer);
- ``FAILURES``: the troubleshooting playbook's cases (reference sheet dra-and-operations.md §3 a–h, and the
  outline's five failure scenarios) as small scenarios, each run and diagnosed by ``gpusim diagnose``
  (``gpusim.views.diagnose.diagnose_pod``) and pointed to the lab that fixes it; ``topology_case`` measures the
  fifth scenario (poor performance from placement) from the step time the training model computes;
- the tuning knobs (§4.4): ``percentageOfNodesToScore``, the NodeResourcesFit scoring strategy, ``parallelism``,
  Kueue's ``queueingStrategy`` and Volcano's ``overcommit-factor``, each as a pair of runs differing in that knob;
- ``dcgm_run``: one node whose GPUs show the DCGM exporter's counters and fire the reference's alerts (§4.5).
"""
from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence

from ..cluster.simulation import run
from ..metrics import pod_records
from ..views.diagnose import Diagnosis, diagnose_pod
from ..views.scoring import fragmentation, with_scoring_strategy
from ..workloads.training import training_report

GPU = "nvidia.com/gpu"
IMAGE = "nvcr.io/nvidia/pytorch:25.01-py3"


# --- scenario text -------------------------------------------------------------------------------------------
def simulation(name: str, until: str = "30m", seed: int = 0) -> str:
    return f"apiVersion: gpusim.io/v1alpha1\nkind: Simulation\nmetadata: {{name: {name}}}\nspec: {{seed: {seed}, until: {until}}}\n"


def cluster_policy(mig_strategy: Optional[str] = None) -> str:
    """A GPU Operator ClusterPolicy (chart defaults; ``mig.strategy`` when given)."""
    spec = f"{{mig: {{strategy: {mig_strategy}}}}}" if mig_strategy else "{}"
    return f"apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata: {{name: cluster-policy}}\nspec: {spec}\n"


def node_pool(name: str = "gpu", count: int = 1, model: str = "A100-SXM4-80GB", gpus: int = 2,
              join_at: Optional[str] = None) -> str:
    j = f", joinAt: {join_at}" if join_at else ""
    return (f"apiVersion: gpusim.io/v1alpha1\nkind: NodePool\nmetadata: {{name: {name}}}\n"
            f"spec: {{count: {count}, gpu: {{model: {model}, count: {gpus}}}, cpu: '64', memory: 512Gi{j}}}\n")


def fault(kind: str, node: str = "gpu-0", at: str = "0s", name: str = "fault", **extra: Any) -> str:
    more = "".join(f", {k}: {v}" for k, v in extra.items())
    return (f"apiVersion: gpusim.io/v1alpha1\nkind: Fault\nmetadata: {{name: {name}}}\n"
            f"spec: {{at: {at}, type: {kind}, node: {node}{more}}}\n")


def gpu_pod(name: str = "train", gpus: int = 1, submit_at: str = "0s", duration: str = "10m",
            resource: str = GPU, runtime_class: Optional[str] = None, annotations: Optional[dict] = None) -> str:
    ann = {"gpusim.io/submit-at": submit_at, "gpusim.io/duration": duration, **(annotations or {})}
    ann_text = ", ".join(f"{k}: {json.dumps(str(v))}" for k, v in ann.items())
    rc = f"  runtimeClassName: {runtime_class}\n" if runtime_class else ""
    return (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, annotations: {{{ann_text}}}}}\n"
            f"spec:\n  restartPolicy: Never\n{rc}  containers:\n"
            f"  - {{name: c, image: {IMAGE}, resources: {{limits: {{{resource}: {gpus}}}}}}}\n")


def scenario(*docs: str) -> str:
    return "---\n".join(d if d.endswith("\n") else d + "\n" for d in docs)


KUEUE_ONE_GPU = """apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-a}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: default-flavor
      resources: [{name: nvidia.com/gpu, nominalQuota: 1}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: team-a, namespace: default}
spec: {clusterQueue: team-a}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  labels: {kueue.x-k8s.io/queue-name: team-a}
spec:
  template:
    metadata: {annotations: {gpusim.io/duration: 10m}}
    spec:
      restartPolicy: Never
      containers:
      - {name: c, image: nvcr.io/nvidia/pytorch:25.01-py3, resources: {limits: {nvidia.com/gpu: 2}}}
"""
MIG_LABEL = """apiVersion: gpusim.io/v1alpha1
kind: Action
metadata: {name: set-mig-config}
spec: {at: 1m, type: LabelNode, node: gpu-0, labels: {nvidia.com/mig.config: all-1g.10gb}}
"""


# --- scenarios shared by the failure cases and the tuning knobs ---------------------------------------------
def volcano_gang_docs(factor: float = 1.2) -> tuple[str, ...]:
    """One 8-GPU node under Volcano with the overcommit plugin's ``overcommit-factor`` (volcano
    pkg/scheduler/plugins/overcommit/overcommit.go, default 1.2; gpusim.volcano.plugins.overcommit): four gangs of 4
    one-GPU workers (minAvailable 4, 1 h) submitted at once; enqueue admits a gang (Inqueue: its pods are created)
    only while ``inqueue + minResources ≤ total × factor − used``."""
    import yaml
    from ..volcano.conf import CONFIGMAP_KEY, CONFIGMAP_NAME, CONFIGMAP_NAMESPACE, DEFAULT_SCHEDULER_CONF
    conf = DEFAULT_SCHEDULER_CONF.replace("  - name: overcommit\n",
                                          f"  - name: overcommit\n    arguments: {{overcommit-factor: {factor}}}\n")
    cm = {"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": CONFIGMAP_NAME, "namespace": CONFIGMAP_NAMESPACE},
          "data": {CONFIGMAP_KEY: conf}}
    docs = [node_pool("a100", gpus=8), "apiVersion: v1\nkind: Namespace\nmetadata: {name: volcano-system}\n",
            yaml.safe_dump(cm, sort_keys=False)]
    for i in range(4):
        docs.append(f"""apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {{name: gang-{i}}}
spec:
  schedulerName: volcano
  queue: default
  minAvailable: 4
  tasks:
  - name: worker
    replicas: 4
    template:
      metadata: {{annotations: {{gpusim.io/duration: 1h}}}}
      spec:
        restartPolicy: Never
        containers:
        - {{name: worker, image: {IMAGE}, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}
""")
    return tuple(docs)


def volcano_overcommit_scenario(factor: float) -> str:
    """``volcano_gang_docs(factor)`` run for 30 minutes."""
    return scenario(simulation(f"overcommit-{factor}", "30m"), *volcano_gang_docs(factor))


# --- the playbook's failure cases ----------------------------------------------------------------------------
@dataclass(frozen=True)
class FailureCase:
    """One failure of the playbook: the scenario that produces it, the pod a user would look at, the root cause
    ``gpusim diagnose`` must name (a ``gpusim.views.diagnose.FIXES`` key) and the lab that fixes it."""

    key: str
    title: str                   # Chinese title, as the chapter shows it
    playbook: str                # dra-and-operations.md §3 case letter
    outline: Optional[int]       # the outline's failure scenario (1–5), if it is one
    docs: tuple[str, ...]
    pod: str
    cause: str
    lab: str                     # "实验 NN" or "—"
    lab_link: Optional[str] = None   # relative to course/
    namespace: str = "default"
    until: str = "30m"

    def yaml(self) -> str:
        return scenario(simulation(self.key, self.until), *self.docs)


LAB05 = "../labs/05-node-bring-up/README.md"
FAILURES: tuple[FailureCase, ...] = (
    FailureCase("pending-plugin", "Pod 卡在 Pending：Insufficient nvidia.com/gpu（device plugin 没注册）", "a", 1,
                (cluster_policy(), node_pool(join_at="1m"), fault("DevicePluginCrash", downtime="1h"), gpu_pod()),
                "train", "plugin", "实验 05", LAB05),
    FailureCase("admission-error", "UnexpectedAdmissionError（kubelet 重启后 device plugin 尚未重新注册）", "b", 2,
                (cluster_policy(), node_pool(), fault("KubeletRestart", at="60s"), gpu_pod(submit_at="60s")),
                "train", "kubelet-restart", "实验 06", "../labs/06-admission-error/README.md"),
    FailureCase("mig-not-applied", "MIG 配置不生效（mig-manager 应用失败，GPU 需要重置）", "d", 3,
                (cluster_policy("mixed"), node_pool(), fault("MigConfigFailure"), MIG_LABEL,
                 gpu_pod(submit_at="2m", resource="nvidia.com/mig-1g.10gb")),
                "train", "mig", "实验 07", "../labs/07-mig-not-applied/README.md"),
    FailureCase("queue-starvation", "队列饿死：Workload 等配额（ClusterQueue 的 nominalQuota 不够）", "e", 4,
                (node_pool(), KUEUE_ONE_GPU), "train", "kueue-quota", "实验 03",
                "../labs/03-multi-tenant-fairness/README.md"),
    FailureCase("volcano-gang", "Volcano gang 进不了队：resource in cluster is overused", "e", 4,
                volcano_gang_docs(), "gang-2", "volcano-queue", "实验 02", "../labs/02-gang-deadlock/README.md"),
    FailureCase("driver-init", "GPU Operator 组件卡在 Init（驱动容器加载不了内核模块）", "h", None,
                (cluster_policy(), node_pool(join_at="1m"), fault("DriverFailure"), gpu_pod()),
                "train", "driver", "实验 05", LAB05),
    FailureCase("toolkit", "容器工具包没配置好 containerd（toolkit-validation 失败）", "h", None,
                (cluster_policy(), node_pool(join_at="1m"), fault("ToolkitFailure"), gpu_pod()),
                "train", "toolkit", "实验 05", LAB05),
    FailureCase("runtime-class", "no runtime for \"nvidia\"：RuntimeClass 的 handler 不存在", "c", None,
                (cluster_policy(), node_pool(), fault("RuntimeClassMissing"), gpu_pod(runtime_class="nvidia")),
                "train", "runtime", "—"),
    FailureCase("xid", "XID 79：GPU 掉卡，device plugin 标 Unhealthy", "g", None,
                (cluster_policy(), node_pool(), fault("XidError", at="1m", gpu=0, xid=79),
                 fault("XidError", at="1m", gpu=1, xid=79, name="fault-1"), gpu_pod(submit_at="2m")),
                "train", "unhealthy", "—"),
    FailureCase("nvlink", "XID 74：NVLink 错误，GPU 被标 Unhealthy", "g", None,
                (cluster_policy(), node_pool(), fault("NVLinkError", at="1m", gpu=0),
                 fault("NVLinkError", at="1m", gpu=1, name="fault-1"), gpu_pod(submit_at="2m")),
                "train", "unhealthy", "—"),
    FailureCase("oom", "CUDA error: out of memory（进程要的显存超过整卡）", "—", None,
                (node_pool(), gpu_pod(annotations={"gpusim.io/gpu-memory": "90Gi"})),
                "train", "oom", "实验 01", "../labs/01-inference-oom/README.md"),
    FailureCase("node-down", "节点宕机：NotReady 后 Pod 被驱逐", "—", None,
                (cluster_policy(), node_pool(), fault("NodeDown", at="1m"), gpu_pod(submit_at="2m")),
                "train", "node-down", "—"),
)


def failure(key: str) -> FailureCase:
    for c in FAILURES:
        if c.key == key:
            return c
    raise KeyError(f"unknown failure case {key!r}; choose one of {', '.join(c.key for c in FAILURES)}")


def run_failure(case: FailureCase) -> tuple[Any, Diagnosis]:
    """Run the case's scenario and diagnose its pod: (Result, Diagnosis)."""
    r = run(text=case.yaml())
    return r, diagnose_pod(r, case.pod, case.namespace)


def run_failures(cases: Iterable[FailureCase] = FAILURES) -> dict[str, tuple[Any, Diagnosis]]:
    return {c.key: run_failure(c) for c in cases}


def _cell(text: str, limit: int = 110) -> str:
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def failure_table(runs: dict[str, tuple[Any, Diagnosis]], cases: Iterable[FailureCase] = FAILURES) -> str:
    """Markdown: per case, the pod's status, the root cause ``gpusim diagnose`` names and the lab that fixes it."""
    lines = ["| case | playbook | pod status | root cause (gpusim diagnose) | fixed in |", "|---|---|---|---|---|"]
    for c in cases:
        _, d = runs[c.key]
        root = d.root
        found = f"[{root.layer}] {_cell(root.summary)}" if root else "—"
        lab = f"[{c.lab}]({c.lab_link})" if c.lab_link else c.lab
        tag = c.title + (f"（大纲故障 {c.outline}）" if c.outline else "")
        lines.append(f"| {tag} | {c.playbook} | `{_cell(d.status, 60)}` | {found} | {lab} |")
    return "\n".join(lines)


# --- the fifth scenario: topology ----------------------------------------------------------------------------
def topology_scenario(strategy: str = "default", workers: int = 8, allreduce: str = "14G") -> str:
    """Two empty 8-GPU DGX A100 nodes and one data-parallel Job of ``workers`` one-GPU workers that all-reduce
    ``allreduce`` bytes per step; ``strategy`` is the NodeResourcesFit scoring (``default`` spreads)."""
    job = f"""apiVersion: batch/v1
kind: Job
metadata: {{name: train}}
spec:
  parallelism: {workers}
  completions: {workers}
  template:
    metadata:
      annotations: {{gpusim.io/training-workers: "{workers}", gpusim.io/training-steps: "200",
                     gpusim.io/step-time: 300ms, gpusim.io/allreduce-bytes: {allreduce}}}
    spec:
      restartPolicy: Never
      containers:
      - {{name: worker, image: {IMAGE}, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}
"""
    text = scenario(simulation("topology"), node_pool("dgx", count=2, gpus=8), job)
    return with_scoring_strategy(text, strategy, gpu_weight=5)


def topology_case(strategies: Sequence[str] = ("default", "MostAllocated")) -> list[dict]:
    """Per strategy: GPUs per node the workers got and the measured step time (compute + ring all-reduce)."""
    out = []
    for s in strategies:
        r = run(text=topology_scenario(s))
        rep = training_report(r)[0]
        per_node: dict[str, int] = {}
        for rec in pod_records(r):
            pod = r.pod(rec.name, rec.namespace)
            if pod is not None and pod.spec.node_name:
                per_node[pod.spec.node_name] = per_node.get(pod.spec.node_name, 0) + 1
        out.append({"strategy": s, "gpus_per_node": dict(sorted(per_node.items())), "step_seconds": rep["step_seconds"],
                    "compute_seconds": rep["step_time"], "completed_at": rep["completed_at"], "result": r})
    return out


def format_topology(rows: list[dict]) -> str:
    return "\n".join(f"{r['strategy']:14s} workers per node {r['gpus_per_node']}: step {r['step_seconds'] * 1000:.0f} ms "
                     f"(compute {r['compute_seconds'] * 1000:.0f} ms), job done at {r['completed_at']:.0f} s" for r in rows)


# --- scheduler selection --------------------------------------------------------------------------------------
PICK_WHEN = {
    "default": ("kube-scheduler alone (+ DRA; native gang alpha)",
                "单团队、以推理和单卡任务为主、没有排队和配额需求；不装任何组件"),
    "scheduler-plugins": ("Coscheduling + CapacityScheduling in kube-scheduler",
                          "要 gang 和弹性配额、又想只运行一个调度器；能接受按 Pod 抢占（训练作业要配 podFailurePolicy）"),
    "volcano": ("a second scheduler (Volcano)",
                "批处理作业多（MPI/Spark/PyTorch Job）、要队列权重、DRF、作业级生命周期策略；Pod 要写 schedulerName: volcano"),
    "kueue": ("admission above kube-scheduler (Kueue)",
              "多团队共享配额、cohort 借用与回收、整作业抢占、拓扑感知（TAS）、多集群（MultiKueue）"),
}


def selection_table(rows: Sequence[Any]) -> str:
    """The decision table: per stack, the measurements of chapter 05's workload (``comparison.Measured`` rows:
    team B's mean wait, GPU-hours wasted by broken gangs, evictions, fairness) and when to pick it."""
    lines = ["| stack | where it runs | team-b wait (mean) | wasted GPU-h | evictions | fairness | pick it when |",
             "|---|---|---|---|---|---|---|"]
    for m in rows:
        where, when = PICK_WHEN[m.policy]
        wait = "never" if m.b_wait_mean is None else f"{m.b_wait_mean:.0f} s"
        lines.append(f"| {m.policy} | {where} | {wait} | {m.wasted_gpu_hours:.2f} | {m.evictions} | "
                     f"{m.fairness:.2f} | {when} |")
    return "\n".join(lines)


def recommend(rows: Sequence[Any], max_wait: float = 60.0, max_waste: float = 0.5) -> list[str]:
    """The stacks that serve team B within ``max_wait`` seconds without wasting more than ``max_waste`` GPU-hours."""
    return [m.policy for m in rows if m.b_wait_mean is not None and m.b_wait_mean <= max_wait
            and m.wasted_gpu_hours <= max_waste]


# --- tuning knobs ---------------------------------------------------------------------------------------------
def _config(profile_extra: str = "", top: str = "", strategy: str = "MostAllocated") -> str:
    return f"""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
{top}profiles:
- schedulerName: default-scheduler
{profile_extra}  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: {strategy}
        resources: [{{name: cpu, weight: 1}}, {{name: memory, weight: 1}}, {{name: nvidia.com/gpu, weight: 5}}]
"""


def packing_scenario(nodes: int = 400, pods: int = 64, percentage: Optional[int] = None, parallelism: int = 16,
                     strategy: str = "MostAllocated", seed: int = 0) -> str:
    """``nodes`` 8-GPU nodes and ``pods`` one-GPU pods arriving one per second, MostAllocated scoring, with
    ``percentageOfNodesToScore`` (None = the adaptive default of kube-scheduler's schedule_one.go
    numFeasibleNodesToFind) and ``parallelism`` (KubeSchedulerConfiguration v1, default 16)."""
    top = f"parallelism: {parallelism}\n"
    if percentage is not None:
        top += f"percentageOfNodesToScore: {percentage}\n"
    docs = [simulation("packing", "1h", seed), node_pool("a100", count=nodes, gpus=8), _config(top=top, strategy=strategy)]
    docs += [gpu_pod(f"infer-{i:03d}", submit_at=f"{i}s", duration="1h") for i in range(pods)]
    return scenario(*docs)


_FEASIBLE = re.compile(r"^(\d+) feasible$")


def nodes_scored(result: Any) -> list[int]:
    """Per scheduling cycle, how many feasible nodes the scheduler went on to score (findNodesThatFitPod)."""
    out = []
    for rec in result.trace.records:
        if rec.function == "scheduler.(*Scheduler).findNodesThatFitPod":
            m = _FEASIBLE.match(rec.result)
            if m:
                out.append(int(m.group(1)))
    return out


def placements(result: Any) -> dict[str, str]:
    """Pod → node, for every scheduled workload pod."""
    return {p.metadata.name: p.spec.node_name for p in result.pods() if p.spec.node_name}


def measure_packing(text: str) -> dict:
    """Run a packing scenario: nodes scored per pod (mean), nodes the pods landed on, and the run's wall time."""
    t0 = time.perf_counter()
    r = run(text=text)
    wall = time.perf_counter() - t0
    scored = nodes_scored(r)
    where = placements(r)
    return {"nodes_scored_mean": sum(scored) / len(scored) if scored else 0.0, "nodes_used": len(set(where.values())),
            "pods": len(where), "placements": where, "wall_seconds": wall}


def percentage_sweep(percentages: Sequence[Optional[int]] = (100, None, 5), nodes: int = 400, pods: int = 64) -> list[dict]:
    """percentageOfNodesToScore → nodes scored per pod and nodes used by ``pods`` one-GPU pods (ideal: pods/8)."""
    return [{"percentage": "adaptive" if p is None else f"{p}%", **measure_packing(packing_scenario(nodes, pods, p))}
            for p in percentages]


def parallelism_pair(values: Sequence[int] = (1, 16), nodes: int = 200, pods: int = 32) -> list[dict]:
    """The same packing run with different ``parallelism``: placements are compared (gpusim runs Filter/Score
    serially, so parallelism can only change latency, as upstream; parallel Filter may stop at different
    nodes upstream when percentageOfNodesToScore cuts the search short)."""
    return [{"parallelism": v, **measure_packing(packing_scenario(nodes, pods, 100, v))} for v in values]


def strategy_scenario() -> str:
    """Four 8-GPU nodes; twelve 2-GPU pods, then an 8-GPU pod ``big`` at 1 min (chapter 03's fragmentation)."""
    docs = [simulation("strategy", "2h"), node_pool("a100", count=4, gpus=8)]
    docs += [gpu_pod(f"small-{i:02d}", gpus=2, submit_at=f"{i}s", duration="1h") for i in range(12)]
    docs.append(gpu_pod("big", gpus=8, submit_at="1m", duration="30m"))
    return scenario(*docs)


def strategy_pair(strategies: Sequence[str] = ("LeastAllocated", "MostAllocated")) -> list[dict]:
    """Per strategy: free GPUs per node at 59 s, how many 8-GPU pods would still fit, and when ``big`` started."""
    out = []
    for s in strategies:
        r = run(text=with_scoring_strategy(strategy_scenario(), s, gpu_weight=5))
        frag = fragmentation(r, 59.0, 8)
        big = next(rec for rec in pod_records(r) if rec.name == "big")
        out.append({"strategy": s, "free_per_node": {n: d["free"] for n, d in frag["nodes"].items()},
                    "pods8_fit": frag["pods_fit"], "big_started": big.started, "big_wait": (
                        None if big.started is None else big.started - big.created), "result": r})
    return out


def kueue_fifo_scenario(strategy: str) -> str:
    """One ClusterQueue of 4 GPUs with ``queueingStrategy`` (kueue site/content/en/docs/concepts/cluster_queue.md:
    StrictFIFO blocks newer workloads behind an older one that cannot be admitted; BestEffortFIFO, the default,
    does not): ``running`` (2 GPUs, 30 min) at 0 s, ``big`` (4 GPUs) at 1 min, ``small`` (1 GPU) at 2 min."""
    cq = f"""apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: default-flavor}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: team-a}}
spec:
  namespaceSelector: {{}}
  queueingStrategy: {strategy}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: default-flavor
      resources: [{{name: nvidia.com/gpu, nominalQuota: 4}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: team-a, namespace: default}}
spec: {{clusterQueue: team-a}}
"""
    jobs = [_kueue_job("running", 2, "0s", "30m"), _kueue_job("big", 4, "1m", "10m"), _kueue_job("small", 1, "2m", "10m")]
    return scenario(simulation(f"kueue-{strategy}", "2h"), node_pool("a100", count=1, gpus=8), cq, *jobs)


def _kueue_job(name: str, gpus: int, submit_at: str, duration: str) -> str:
    return f"""apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  labels: {{kueue.x-k8s.io/queue-name: team-a}}
  annotations: {{gpusim.io/submit-at: {submit_at}}}
spec:
  template:
    metadata: {{annotations: {{gpusim.io/duration: {duration}}}}}
    spec:
      restartPolicy: Never
      containers:
      - {{name: c, image: {IMAGE}, resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}}}
"""


def job_waits(result: Any) -> dict[str, Optional[float]]:
    """Job → seconds from creation of its first pod's Job to that pod running (None: never ran)."""
    out: dict[str, Optional[float]] = {}
    created = {j.metadata.name: j.metadata.creation_timestamp for j in result.api.list("Job")}
    for rec in pod_records(result):
        if rec.job is not None and rec.job not in out:
            out[rec.job] = None if rec.started is None else rec.started - created[rec.job]
    for j in created:
        out.setdefault(j, None)
    return dict(sorted(out.items()))


def kueue_fifo_pair(strategies: Sequence[str] = ("BestEffortFIFO", "StrictFIFO")) -> list[dict]:
    """Per queueingStrategy: each Job's wait (creation → its pod running)."""
    return [{"strategy": s, "waits": job_waits(run(text=kueue_fifo_scenario(s)))} for s in strategies]


# --- DCGM dashboards ------------------------------------------------------------------------------------------
def dcgm_scenario() -> str:
    """One 4-GPU A100 node for 90 minutes: a busy trainer, an idle notebook holding a GPU (2 % utilisation), an
    inference server whose KV cache grows to 78 GiB of the 80 GiB, and a critical XID 79 on the free GPU at 30 min."""
    return scenario(
        simulation("dcgm-dashboard", "90m"), node_pool("a100", gpus=4),
        gpu_pod("trainer", duration="2h"),
        gpu_pod("notebook", duration="2h", annotations={"gpusim.io/gpu-utilization": "2"}),
        gpu_pod("kv-cache", duration="2h", annotations={"gpusim.io/gpu-utilization": "60", "gpusim.io/gpu-memory": "20Gi",
                                                        "gpusim.io/gpu-memory-growth": "78Gi/20m"}),
        fault("XidError", node="a100-0", at="30m", gpu=3, xid=79))


def dcgm_run() -> Any:
    return run(text=dcgm_scenario())


DASHBOARD = ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_XID_ERRORS")


def plot_dashboard(result: Any, metrics: Sequence[str] = DASHBOARD) -> Any:
    """A Grafana-like row of panels: one ``plot_gpu_metric`` per metric."""
    import matplotlib.pyplot as plt

    from ..views.dcgm import plot_gpu_metric
    fig, axes = plt.subplots(len(metrics), 1, figsize=(9, 2.3 * len(metrics)), sharex=True)
    for ax, m in zip(axes, metrics):
        plot_gpu_metric(result, m, ax=ax)
        ax.set_title(m, fontsize=9)
        ax.set_xlabel("")
    axes[-1].set_xlabel("simulated time (min)")
    return axes


def prometheus_rules(name: str = "gpu-alerts", namespace: str = "monitoring") -> str:
    """The DCGM alert rules gpusim evaluates (``gpusim.views.dcgm.RULES``) as a prometheus-operator PrometheusRule."""
    import yaml

    from ..views.dcgm import RULES
    rules = []
    for r in RULES:
        rule: dict = {"alert": r.name, "expr": r.expr}
        if r.for_seconds:
            rule["for"] = f"{int(r.for_seconds // 60)}m"
        rule["labels"] = {"severity": r.severity}
        rules.append(rule)
    doc = {"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
           "metadata": {"name": name, "namespace": namespace},
           "spec": {"groups": [{"name": "dcgm", "rules": rules}]}}
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


# --- Volcano: overcommit-factor ---------------------------------------------------------------------------
def volcano_overcommit(factors: Sequence[float] = (1.0, 1.2, 2.0), at: float = 600.0) -> list[dict]:
    """Per overcommit-factor: PodGroups by phase and pods Running / Pending at ``at`` seconds (after the
    first sessions)."""
    out = []
    for f in factors:
        r = run(text=volcano_overcommit_scenario(f), until=at)
        phases: dict[str, int] = {}
        for pg in r.api.list("PodGroup.scheduling.volcano.sh"):
            phase = pg.status.phase or "Pending"
            phases[phase] = phases.get(phase, 0) + 1
        pods = r.pods()
        out.append({"factor": f, "podgroups": dict(sorted(phases.items())),
                    "running": sum(p.status.phase == "Running" for p in pods),
                    "pending": sum(p.status.phase in ("", "Pending") for p in pods)})
    return out


def xid_table() -> str:
    """Markdown: the XIDs gpusim models, the catalog's immediate action, and what the NVIDIA device plugin does
    (k8s-device-plugin internal/rm/health.go: application XIDs ignored, every other one marks the GPU Unhealthy)."""
    from ..hardware.xid import CATALOG
    from ..views.diagnose import IGNORED_XIDS
    lines = ["| XID | mnemonic | meaning | catalog action | device plugin |", "|---|---|---|---|---|"]
    for n, x in sorted(CATALOG.items()):
        plugin = "ignored (application error)" if n in IGNORED_XIDS else "**Unhealthy** until the plugin restarts"
        lines.append(f"| {n} | `{x.mnemonic}` | {x.meaning} | `{x.action}` | {plugin} |")
    return "\n".join(lines)
