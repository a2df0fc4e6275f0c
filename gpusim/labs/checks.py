"""Lab checkers: read a finished simulation (a :class:`gpusim.Result`) and say whether the learner
reproduced or fixed the failure. Each returns a :class:`CheckResult` whose lines quote the figures it
checked, so a FAIL tells the learner what to look at. Checkers never drive the simulation.

``check_inference_oom`` — lab 01 (``labs/01-inference-oom``): four vLLM servers ``llm-0`` … ``llm-3``
share one A100-80GB; ``llm-3``'s KV cache grows from 15Gi to 40Gi over 10m.

- ``expect="cascade"`` (the broken, time-sliced run): all four containers are killed by
  ``CUDA error: out of memory`` at the same instant — time-slicing has no memory isolation.
- ``expect="fixed"`` (the learner's run): every pod is scheduled, at most ``llm-3`` fails, and the other
  three run to completion or keep running without an OOM or a restart. The workload itself (the memory
  annotations) must stay as it was and the run must last until the KV cache has finished growing —
  a fix that shrinks the cache or stops the clock early does not count.

``check_gang`` — lab 02 (``labs/02-gang-deadlock``): an 8-worker training group never starts partially
(Coscheduling PodGroup or Volcano Job).

``check_fairness`` — lab 03 (``labs/03-multi-tenant-fairness``): the workload of
:class:`gpusim.comparison.MultiTenant`; team B gets its guaranteed GPUs within a bound of submitting, while
both teams' Jobs, team A's completed gangs and the cluster stay as the lab defines them.

``check_bring_up`` — lab 05 (``labs/05-node-bring-up``): three H100 nodes join at 5m and the GPU Operator brings
them up; on the one whose image ships a driver, the operator's driver container crash-loops and the node never
advertises GPUs. Fixed when every node advertises its 8 GPUs and each training pod runs on one, with the
operator's driver kept where there is no preinstalled one.

``check_admission`` — lab 06 (``labs/06-admission-error``): a kubelet restart; the pods bound meanwhile fail
``UnexpectedAdmissionError``. Fixed when every workload still runs to completion on its GPUs with the restart
kept (a Job that recreates the pod, or the node cordoned until the device plugin is back).

``check_allreduce`` — lab 04 (``labs/04-allreduce-cliff``): a 128-GPU data-parallel job placed by a topology-blind
bin-packing scheduler leaves two ranks alone on nearly full nodes, and the ring all-reduce drops to one NIC's
bandwidth. Fixed when the step time is within 3% of the packed placement's (16 whole nodes of one scalable
unit) with the job, the cluster, the fabric and the other tenants as the lab defines them.
``check_mig`` — lab 07 (``labs/07-mig-not-applied``): ``nvidia.com/mig.config`` is changed while a training pod
holds the GPUs; mig-manager sets ``nvidia.com/mig.config.state=failed`` and the MIG instances never appear.
Fixed when the config is applied once the GPUs are free and every workload ran on what it asked for.
``check_dra_mig`` — lab 09 (``labs/09-dra-mig``), in :mod:`gpusim.labs.dramig`: two containers of a pod share one
MIG device through one ResourceClaim.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..api.validation import (ANNOTATION_ALLREDUCE_BYTES, ANNOTATION_ALLREDUCE_OVERLAP, ANNOTATION_DURATION,
                              ANNOTATION_GPU_MEMORY, ANNOTATION_GPU_MEMORY_GROWTH,
                              ANNOTATION_STEP_TIME, ANNOTATION_SUBMIT_AT, ANNOTATION_TRAINING_STEPS,
                              ANNOTATION_TRAINING_WORKERS)
from ..api.validation import OOM_MESSAGE

OOM_FUNCTION = "cuda.cudaMalloc"   # the trace record gpusim/node/sharing.py writes for each victim

INFERENCE_PODS = ("llm-0", "llm-1", "llm-2", "llm-3")
INFERENCE_GROWER = "llm-3"
INFERENCE_MEMORY = "15Gi"
INFERENCE_GROWTH = "40Gi/10m"
INFERENCE_MIN_SECONDS = 600.0      # the growth lasts 10m; a shorter run proves nothing


@dataclass
class CheckResult:
    """``passed`` and the checked facts, one line each (``✓``/``✗`` + figures)."""

    passed: bool
    lines: list[str] = field(default_factory=list)
    title: str = ""

    def __str__(self) -> str:
        head = ("PASS" if self.passed else "FAIL") + (f": {self.title}" if self.title else "")
        return "\n".join([head] + ["  " + line for line in self.lines])

    def __bool__(self) -> bool:
        return self.passed


class _Lines:
    def __init__(self):
        self.lines: list[str] = []
        self.ok = True

    def add(self, ok: bool, text: str) -> None:
        self.ok = self.ok and ok
        self.lines.append(("✓ " if ok else "✗ ") + text)


def _ooms(result, namespace: str = "default") -> dict[str, list[float]]:
    """Pod name → the instants its containers got ``CUDA error: out of memory`` (from the trace)."""
    out: dict[str, list[float]] = {}
    prefix = f"Pod {namespace}/"
    for rec in result.trace.records:
        if rec.function == OOM_FUNCTION and rec.object.startswith(prefix):
            out.setdefault(rec.object[len(prefix):], []).append(rec.time)
    return out


def _restarts(pod) -> int:
    return sum(cs.restart_count for cs in (pod.status.container_statuses or []))


def _last_messages(pod) -> list[str]:
    """The message of each container's most recent termination (current or last state)."""
    out = []
    for cs in pod.status.container_statuses or []:
        term = cs.state.terminated or (cs.last_state.terminated if cs.last_state else None)
        out.append(term.message if term else "")
    return out


def _strategies(result) -> str:
    parts = []
    for name, kl in sorted(result.kubelets.items()):
        mem = getattr(kl, "gpu_memory", None)
        if mem is None:
            continue
        migs = kl.plugin.mig_devices if kl.plugin is not None else []
        if migs:
            kinds = "、".join(sorted({f"{m.profile}（{m.memory_mib} MiB）" for m in migs}))
            parts.append(f"{name}: MIG {kl.plugin.mig_strategy}（{len(migs)} 个实例：{kinds}）")
            continue
        limit = f"，每个客户端上限 {mem.client_limit_mib} MiB" if mem.strategy == "mps" else ""
        parts.append(f"{name}: {mem.strategy}（{len(mem.gpus)} 张 GPU，每张 {mem.total_mib} MiB{limit}）")
    return "；".join(parts) or "没有 GPU 节点"


def check_inference_oom(result, expect: str = "fixed") -> CheckResult:
    """Check lab 01 from a finished run. ``expect``: ``"cascade"`` (reproduce) or ``"fixed"``."""
    if expect not in ("cascade", "fixed"):
        raise ValueError(f'expect must be "cascade" or "fixed", not {expect!r}')
    c = _Lines()
    pods = {name: result.pod(name) for name in INFERENCE_PODS}
    missing = [n for n, p in pods.items() if p is None]
    c.add(not missing, "4 个推理 Pod 都在：" + ", ".join(INFERENCE_PODS) if not missing
          else "缺少 Pod：" + ", ".join(missing))
    present = {n: p for n, p in pods.items() if p is not None}

    unscheduled = [n for n, p in present.items() if not p.spec.node_name]
    c.add(not unscheduled and not missing,
          "每个 Pod 都已调度：" + ", ".join(f"{n}→{p.spec.node_name}" for n, p in present.items() if p.spec.node_name)
          if not unscheduled else "未调度（Pending）：" + ", ".join(unscheduled))

    changed = []
    for n, p in present.items():
        ann = p.metadata.annotations
        want_growth = INFERENCE_GROWTH if n == INFERENCE_GROWER else None
        if ann.get(ANNOTATION_GPU_MEMORY) != INFERENCE_MEMORY or ann.get(ANNOTATION_GPU_MEMORY_GROWTH) != want_growth:
            changed.append(n)
    c.add(not changed, f"负载未改动：每个 Pod {INFERENCE_MEMORY}，{INFERENCE_GROWER} 增长到 {INFERENCE_GROWTH}"
          if not changed else "负载被改动（gpu-memory 注解与实验不同）：" + ", ".join(changed))

    c.add(result.end >= INFERENCE_MIN_SECONDS,
          f"模拟时长 {result.end:g}s ≥ {INFERENCE_MIN_SECONDS:g}s（KV cache 增长完成）")
    c.lines.append("· 共享方式 " + _strategies(result))

    ooms = _ooms(result)
    if expect == "cascade":
        title = "实验 01 · 复现级联 OOM"
        first = min((t for ts in ooms.values() for t in ts), default=None)
        if first is None:
            c.add(False, "没有任何容器 OOM：故障没有复现")
        else:
            together = sorted(n for n in INFERENCE_PODS if first in ooms.get(n, []))
            c.add(len(together) == len(INFERENCE_PODS),
                  f"t={first:g}s 同时 OOM 的 Pod：{', '.join(together)}（{len(together)}/{len(INFERENCE_PODS)}）")
        wrong = [n for n, p in present.items() if OOM_MESSAGE not in _last_messages(p)]
        c.add(not wrong, f'4 个容器最后一次退出都是 "{OOM_MESSAGE}"' if not wrong
              else f'这些 Pod 的容器没有因 "{OOM_MESSAGE}" 退出：' + ", ".join(wrong))
        for n in INFERENCE_PODS:
            if n in present:
                c.lines.append(f"· {n}: OOM {len(ooms.get(n, []))} 次，重启 {_restarts(present[n])} 次，"
                               f"phase {present[n].status.phase or 'Pending'}")
    else:
        title = "实验 01 · 修复（最多只有 llm-3 失败）"
        for n in INFERENCE_PODS:
            p = present.get(n)
            if p is None:
                continue
            times = ooms.get(n, [])
            if n == INFERENCE_GROWER:
                c.lines.append(f"· {n}: OOM {len(times)} 次" + (f"（首次 t={times[0]:g}s）" if times else "")
                               + f"，重启 {_restarts(p)} 次"
                               + ("——允许：失控的正是它" if times else "——没有失败"))
                continue
            ok = not times and _restarts(p) == 0 and p.status.phase in ("Running", "Succeeded")
            detail = f"phase {p.status.phase or 'Pending'}，OOM {len(times)} 次，重启 {_restarts(p)} 次"
            c.add(ok, f"{n}: {detail}")
    return CheckResult(c.ok, c.lines, title)


# --- lab 02 (labs/02-gang-deadlock) ------------------------------------------------------------------------

GANG_PARTIAL_TOLERANCE_S = 1.0    # binding N pods one after another takes milliseconds: not a partial start
GANG_WASTE_TOLERANCE_H = 0.01     # each worker's container starts ~1 s after its GPU is admitted: ≈ 0


def _partial_spans(over_time, workers: int, end: float) -> list[tuple[float, float, int]]:
    """Spans ``(start, stop, level)`` where the group held some but not all of its ``workers`` GPUs."""
    spans = []
    for i, (t, level) in enumerate(over_time):
        stop = over_time[i + 1][0] if i + 1 < len(over_time) else end
        if 0 < level < workers and stop > t:
            spans.append((t, stop, level))
    return spans


def check_gang(result, group: str, namespace: str = "default") -> CheckResult:
    """Check lab 02 from a finished run: the training group ``group`` never started partially.

    The group is what :func:`gpusim.workloads.training.training_group` says: a batch/v1 Job's pods
    (``batch.kubernetes.io/job-name``) or a Volcano Job's (``volcano.sh/job-name``), so the check is the
    same whichever fix the learner chose — Coscheduling in kube-scheduler or a Volcano Job.

    PASS when at no moment (longer than :data:`GANG_PARTIAL_TOLERANCE_S`) some but not all of the
    group's workers held GPUs, and the wasted GPU-hours of :func:`training_report` are ≈ 0 (below
    :data:`GANG_WASTE_TOLERANCE_H`: the ~1 s container start after admission). Whether the job
    completed is reported; a group that never appeared fails."""
    from ..workloads.training import training_report
    c = _Lines()
    title = f"实验 02 · gang：{group} 没有部分启动"
    rep = next((g for g in training_report(result) if g["group"] == group and g["namespace"] == namespace), None)
    if rep is None:
        c.add(False, f"找不到训练组 {namespace}/{group}（没有带 gpusim.io/training-* 注解的 Pod）")
        return CheckResult(False, c.lines, title)
    n = rep["workers"]
    c.add(len(rep["pods"]) >= n, f"训练组 {namespace}/{group}：{n} 个 worker，{len(rep['pods'])} 个 Pod")
    by = {}
    for name in rep["pods"]:
        pod = result.pod(name, namespace)
        if pod is not None:
            by[pod.spec.scheduler_name] = by.get(pod.spec.scheduler_name, 0) + 1
    if by:
        c.lines.append("· 调度器（Pod 的 schedulerName）：" + "，".join(f"{k} × {v}" for k, v in sorted(by.items())))
    spans = _partial_spans(rep["gpus_held_over_time"], n, result.end)
    long = [s for s in spans if s[1] - s[0] > GANG_PARTIAL_TOLERANCE_S]
    if long:
        t0, t1, level = max(long, key=lambda s: s[1] - s[0])
        c.add(False, f"部分启动：t={t0:g}s～{t1:g}s 只有 {level}/{n} 个 worker 占着 GPU（{t1 - t0:.0f} s），"
                     f"其余在等")
    else:
        longest = max((s[1] - s[0] for s in spans), default=0.0)
        c.add(True, f"没有部分启动：持有 0 < GPU < {n} 的时段最长 {longest:.3f} s（≤ {GANG_PARTIAL_TOLERANCE_S:g} s）")
    wasted = rep["wasted_gpu_hours"]
    c.add(wasted < GANG_WASTE_TOLERANCE_H,
          f"浪费 {wasted:.2f} GPU 小时（持有 {rep['gpu_seconds_held'] / 3600:.2f}，"
          f"有效 {rep['gpu_seconds_useful'] / 3600:.2f}）" + ("" if wasted < GANG_WASTE_TOLERANCE_H
                                                             else f"，应 < {GANG_WASTE_TOLERANCE_H:g}"))
    if rep["completed_at"] is not None:
        c.lines.append(f"· 已完成：t={rep['completed_at']:.0f}s，{rep['steps_done']}/{rep['steps']} 步，"
                       f"作业完成时间 {rep['job_completion_time']:.0f} s（理想 {rep['ideal_run_time']:.0f} s），"
                       f"首个 worker 启动于 t={rep['first_start']:.0f}s")
    else:
        c.lines.append(f"· 未完成：{rep['steps_done']}/{rep['steps']} 步（模拟结束于 t={result.end:g}s）")
    return CheckResult(c.ok, c.lines, title)


# --- lab 03 (labs/03-multi-tenant-fairness) -----------------------------------------------------------------

FAIRNESS_WAIT_BOUND_S = 120.0      # every team-b Job has all its replicas running within 2 minutes
FAIRNESS_WASTE_TOLERANCE_H = 0.1   # partial-gang GPU-hours of team-a: a preempted gang's grace period, not more


@dataclass(frozen=True)
class _Unit:
    """One workload as submitted: a batch/v1 Job, a Volcano Job or a bare Pod."""

    kind: str
    submit_at: float
    pods: int
    gpus_per_pod: float
    annotations: tuple          # the pod template's annotations, sorted (key, value) pairs


def _pod_gpus(spec) -> float:
    from ..api.quantity import parse_quantity
    total = 0.0
    for c in spec.containers:
        limits = c.resources.limits if c.resources is not None else {}
        total += float(parse_quantity(limits.get("nvidia.com/gpu", 0)))
    return total


def _submitted(result, namespaces: tuple[str, ...]) -> dict[tuple[str, str], _Unit]:
    """(namespace, name) → the workload submitted in one of ``namespaces`` (read from the run's scenario)."""
    from ..api.duration import parse_duration
    sc = result.scenario

    def at(meta) -> float:
        return parse_duration(meta.annotations.get(ANNOTATION_SUBMIT_AT, "0s"))

    def ann(meta) -> tuple:
        return tuple(sorted(meta.annotations.items()))

    out: dict[tuple[str, str], _Unit] = {}
    for j in sc.jobs:
        n = j.spec.parallelism if j.spec.parallelism is not None else 1
        out[(j.metadata.namespace, j.metadata.name)] = _Unit("Job", at(j.metadata), n, _pod_gpus(j.spec.template.spec),
                                                             ann(j.spec.template.metadata))
    for j in sc.objects.get("Job.batch.volcano.sh", []):
        tasks = j.spec.tasks
        gpus = {_pod_gpus(t.template.spec) for t in tasks}
        anns = {ann(t.template.metadata) for t in tasks}
        out[(j.metadata.namespace, j.metadata.name)] = _Unit(
            "Job.batch.volcano.sh", at(j.metadata), sum(t.replicas for t in tasks),
            gpus.pop() if len(gpus) == 1 else -1.0, anns.pop() if len(anns) == 1 else ())
    for p in sc.pods:
        out[(p.metadata.namespace, p.metadata.name)] = _Unit("Pod", at(p.metadata), 1, _pod_gpus(p.spec),
                                                             ann(p.metadata))
    return {k: v for k, v in out.items() if k[0] in namespaces}


def _workload_diff(got: dict[str, _Unit], want: dict[str, tuple[float, int, dict]]) -> list[str]:
    """What differs between the submitted units of one team and the lab's: name → (submit, pods, annotations)."""
    from ..api.duration import parse_duration
    out = [f"缺少 {n}" for n in sorted(set(want) - set(got))]
    out += [f"多出 {n}" for n in sorted(set(got) - set(want))]
    for n in sorted(set(want) & set(got)):
        submit, pods, anns = want[n]
        u = got[n]
        have = dict(u.annotations)
        if u.pods != pods:
            out.append(f"{n}: {u.pods} 个 Pod（应为 {pods}）")
        if u.gpus_per_pod != 1:
            out.append(f"{n}: 每个 Pod {u.gpus_per_pod:g} 张 GPU（应为 1）")
        if abs(u.submit_at - submit) > 1e-9:
            out.append(f"{n}: 提交于 {u.submit_at:g}s（应为 {submit:g}s）")
        for k, v in anns.items():
            h = have.get(k)
            same = h is not None and (abs(parse_duration(h) - parse_duration(v)) < 1e-9
                                      if k in (ANNOTATION_STEP_TIME, ANNOTATION_DURATION) else h == v)
            if not same:
                out.append(f"{n}: {k} = {h}（应为 {v}）")
    return out


def _job_of(rec, jobs: set[str]) -> Optional[str]:
    """The Job a pod record belongs to: its job-name label, else (a deleted pod) its name's prefix."""
    from ..workloads.training import JOB_NAME_LABELS
    for k in JOB_NAME_LABELS:
        if rec.labels.get(k) in jobs:
            return rec.labels[k]
    for cut in (1, 2):   # batch/v1 <job>-<5 chars>, Volcano <job>-<task>-<index>
        head = rec.name.rsplit("-", cut)[0]
        if head in jobs:
            return head
    return None


def _all_running_at(spans: list[tuple[float, float]], n: int, after: float) -> Optional[float]:
    """First instant ≥ ``after`` at which ``n`` of the (start, stop) spans overlap."""
    running = 0
    for t, d in sorted([(a, 1) for a, b in spans if b > a] + [(b, -1) for a, b in spans if b > a]):
        running += d
        if running >= n and t >= after:
            return t
    return None


def check_fairness(result, workload=None, within: float = FAIRNESS_WAIT_BOUND_S) -> CheckResult:
    """Check lab 03 from a finished run: team B gets its guaranteed share promptly, and nothing was faked.

    ``workload`` is the lab's :class:`gpusim.comparison.MultiTenant` (default: its defaults, the workload of
    ``labs/03-multi-tenant-fairness/cluster.yaml``); the first team trains, the second serves.

    PASS when every team-B Job has all its replicas running within ``within`` seconds of its submission
    (so B holds its guaranteed GPUs — its whole demand — within ``within`` of its last submission), and the
    fix is not a fake one: both teams' Jobs are the lab's (same names, pod counts, one GPU per pod,
    submission times, training / duration annotations), every team-A training Job completes before the
    run ends with at most :data:`FAIRNESS_WASTE_TOLERANCE_H` GPU-hours of partial-gang waste, and the
    cluster is the lab's (same GPU nodes, models and allocatable GPUs)."""
    from .. import metrics
    from ..api.duration import parse_duration
    from ..workloads.training import training_report
    if workload is None:
        from ..comparison import MultiTenant
        workload = MultiTenant()
    a, b = workload.teams[0], workload.teams[1]
    c = _Lines()
    title = f"实验 03 · 公平：{b.name} 在 {within:g} s 内拿到保证份额，{a.name} 的训练完好"

    # the cluster
    nodes = {n: (m.name, k) for n, (m, k) in sorted(result.scenario.gpus.items())}
    models = sorted({m for m, _ in nodes.values()})
    cap = float(metrics.capacity(result))
    ok = (len(nodes) == workload.nodes and models == [workload.model]
          and all(k == workload.gpus_per_node for _, k in nodes.values()) and cap == workload.total_gpus)
    c.add(ok, f"集群未改动：{len(nodes)} 台 GPU 节点 × {workload.gpus_per_node} 张 {workload.model}，"
              f"可分配 {cap:g} 张 nvidia.com/gpu" if ok else
          f"集群被改动：{len(nodes)} 台 GPU 节点（{', '.join(models) or '无'}，每台 "
          f"{'/'.join(str(k) for k in sorted({k for _, k in nodes.values()})) or 0} 张），可分配 {cap:g} 张 "
          f"nvidia.com/gpu；应为 {workload.nodes} × {workload.gpus_per_node} 张 {workload.model} = {workload.total_gpus}")

    # the workloads as submitted
    units = _submitted(result, (a.name, b.name))
    for team, want in (
        (a, {j.name: (parse_duration(j.submit_at), j.workers,
                      {ANNOTATION_TRAINING_WORKERS: str(j.workers), ANNOTATION_TRAINING_STEPS: str(j.steps),
                       ANNOTATION_STEP_TIME: j.step_time}) for j in a.training}),
        (b, {j.name: (parse_duration(j.submit_at), j.replicas, {ANNOTATION_DURATION: j.duration})
             for j in b.inference}),
    ):
        got = {name: u for (ns, name), u in units.items() if ns == team.name}
        diff = _workload_diff(got, want)
        sizes = sorted({p for _, p, _ in want.values()})
        c.add(not diff, f"{team.name} 的负载未改动：{len(want)} 个 Job（{', '.join(sorted(want))}），"
                        f"每个 {'/'.join(map(str, sizes))} 个 Pod × 1 张 GPU" if not diff
              else f"{team.name} 的负载被改动：" + "；".join(diff[:4])
              + (f"……（共 {len(diff)} 处）" if len(diff) > 4 else ""))

    # team B: submission → all replicas running
    b_jobs = {j.name: (parse_duration(j.submit_at), j.replicas) for j in b.inference}
    spans: dict[str, list[tuple[float, float]]] = {}
    live = set()
    for rec in metrics.pod_records(result):
        if rec.namespace != b.name or rec.started is None:
            continue
        job = _job_of(rec, set(b_jobs))
        if job is not None:
            live.add(rec.name)
            spans.setdefault(job, []).append((rec.started, rec.finished if rec.finished is not None else result.end))
    for h in metrics.allocations(result):   # deleted pods are known only by the devices they held
        if h.namespace == b.name and h.pod not in live:
            job = _job_of(metrics.PodRecord(h.namespace, h.pod), set(b_jobs))
            if job is not None:
                spans.setdefault(job, []).append((h.start, h.end))
    waits: dict[str, Optional[float]] = {}
    for name, (submit, n) in sorted(b_jobs.items()):
        t = _all_running_at(spans.get(name, []), n, submit)
        waits[name] = None if t is None else t - submit
    slow = {n: w for n, w in waits.items() if w is None or w > within}
    shown = "，".join(f"{n} {'从未' if w is None else f'{w:.0f} s'}" for n, w in waits.items())
    c.add(not slow, f"{b.name} 每个 Job 提交后 {within:g} s 内全部副本运行：{shown}" if not slow
          else f"{b.name} 有 Job 超过 {within:g} s 才全部运行：{shown}")
    served = [w for w in waits.values() if w is not None]
    if served:
        c.lines.append(f"· {b.name} 排队时间：平均 {sum(served) / len(served):.0f} s，最长 {max(served):.0f} s"
                       + (f"，{len(waits) - len(served)} 个 Job 从未全部运行" if len(served) < len(waits) else ""))

    # team B's share: the GPUs it holds against its guaranteed ones
    target = min(b.guaranteed, sum(n for _, n in b_jobs.values()))
    last_submit = max((s for s, _ in b_jobs.values()), default=0.0)
    changes: dict[float, int] = {}
    for h in metrics.allocations(result):
        if h.namespace == b.name:
            changes[h.start] = changes.get(h.start, 0) + 1
            changes[h.end] = changes.get(h.end, 0) - 1
    level, reached = 0, None
    for t in sorted(changes):
        level += changes[t]
        if level >= target and reached is None:
            reached = t
    if reached is None:
        c.add(False, f"{b.name} 从未持有保证份额 {target} 张 GPU（{b.guaranteed}/{workload.total_gpus}）")
    else:
        late = max(0.0, reached - last_submit)
        c.add(late <= within, f"{b.name} 在 t={reached:.0f}s 持有 {target} 张 GPU（保证 {b.guaranteed}/"
                              f"{workload.total_gpus}），最后一个 {b.name} Job 提交后 {late:.0f} s")

    # team A: every training Job completes, no gang is held partially
    reports = {g["group"]: g for g in training_report(result) if g["namespace"] == a.name}
    names = [j.name for j in a.training]
    undone = [n for n in names if reports.get(n, {}).get("completed_at") is None]
    done = [reports[n]["completed_at"] for n in names if n not in undone]
    c.add(not undone, f"{a.name} 的 {len(names)} 个训练 Job 都在模拟结束（t={result.end:g}s）前完成，"
                      f"最后一个在 t={max(done, default=0):.0f}s" if not undone
          else f"{a.name} 有训练 Job 没有完成（模拟结束于 t={result.end:g}s）：" + ", ".join(
              f"{n} {reports[n]['steps_done']}/{reports[n]['steps']} 步" if n in reports else f"{n} 从未启动"
              for n in undone))
    wasted = sum(g["wasted_gpu_hours"] for g in reports.values())
    c.add(wasted <= FAIRNESS_WASTE_TOLERANCE_H,
          f"{a.name} 部分 gang 浪费 {wasted:.2f} GPU 小时（≤ {FAIRNESS_WASTE_TOLERANCE_H:g}）"
          if wasted <= FAIRNESS_WASTE_TOLERANCE_H else
          f"{a.name} 部分 gang 浪费 {wasted:.2f} GPU 小时（应 ≤ {FAIRNESS_WASTE_TOLERANCE_H:g}）：有 worker "
          f"占着 GPU 而同组没有到齐")
    if done:
        jct = [reports[n]["completed_at"] - parse_duration(j.submit_at) for n, j in zip(names, a.training)
               if n not in undone]
        c.lines.append(f"· {a.name} 平均作业完成时间 {sum(jct) / len(jct):.0f} s（理想 "
                       f"{reports[names[0]]['ideal_run_time']:.0f} s）")
    from ..comparison import EVICTED_KINDS, EVICTION_REASONS
    evictions = sum(1 for e in result.events.log if e.reason in EVICTION_REASONS and e.object.kind in EVICTED_KINDS)
    c.lines.append(f"· 驱逐 / 抢占事件 {evictions} 次")
    return CheckResult(c.ok, c.lines, title)


# --- lab 06 (labs/06-admission-error) ----------------------------------------------------------------------

ADMISSION_NODE = "a100-0"
ADMISSION_MODEL = "A100-SXM4-80GB"
ADMISSION_GPUS = 8
# the kubelet restart the lab injects: (type, node, at, downtime), as examples/admission-error.yaml declares it
ADMISSION_FAULT = ("KubeletRestart", ADMISSION_NODE, 60.0, 20.0)
# workload name → (submitted at s, nvidia.com/gpu per pod, gpusim.io/duration s); a Pod or a one-pod Job
ADMISSION_WORKLOADS: dict[str, tuple[float, int, float]] = {
    "running-before": (0.0, 2, 300.0),
    "bound-during-restart-1": (65.0, 1, 120.0),
    "bound-during-restart-2": (70.0, 2, 120.0),
    "after-restart": (82.0, 1, 120.0),
    "much-later": (180.0, 4, 120.0),
}
ADMISSION_VICTIMS = ("bound-during-restart-1", "bound-during-restart-2")
ADMISSION_REASON = "UnexpectedAdmissionError"        # kubelet lifecycle: the admit handler's reason
ADMISSION_NO_HEALTHY = "no healthy devices present"  # devicemanager: devicesToAllocate after a restart


def _admission_fault_kept(result) -> tuple[bool, str]:
    from ..api.duration import parse_duration
    kind, node, at, down = ADMISSION_FAULT
    faults = [f for f in result.scenario.faults if f.spec.type == kind and f.spec.node == node]
    same = [f for f in faults if abs(parse_duration(f.spec.at) - at) < 1e-9
            and abs(parse_duration(f.spec.downtime or "0s") - down) < 1e-9]
    injected = [r for r in result.trace.records if r.function == f"fault.{kind}" and r.object == f"Node {node}"]
    if same and injected:
        return True, f"故障仍在：{kind} {node} t={at:g}s，停机 {down:g}s（trace t={injected[0].time:g}s 注入）"
    if not faults:
        return False, f"故障被删掉了：场景里没有 {node} 上的 {kind}——kubelet 升级/重启是运维的日常，修复必须扛得住它"
    f = faults[0]
    return False, f"故障被改动：{kind} at {f.spec.at}，downtime {f.spec.downtime}（应为 at {at:g}s，downtime {down:g}s）"


def _admission_held(result) -> dict[str, list[tuple[str, int, float, float]]]:
    """Workload → the pods of it that held GPUs: (pod, GPUs held, first start, last end)."""
    from .. import metrics
    by_pod: dict[str, list] = {}
    for h in metrics.allocations(result):
        if h.namespace == "default":
            by_pod.setdefault(h.pod, []).append(h)
    out: dict[str, list] = {}
    for pod, hs in sorted(by_pod.items()):
        job = pod if pod in ADMISSION_WORKLOADS else _job_of(metrics.PodRecord("default", pod), set(ADMISSION_WORKLOADS))
        if job is not None:
            out.setdefault(job, []).append((pod, len({h.device for h in hs}), min(h.start for h in hs),
                                            max(h.end for h in hs)))
    return out


def check_admission(result, expect: str = "fixed") -> CheckResult:
    """Check lab 06 from a finished run. ``expect``: ``"broken"`` (reproduce) or ``"fixed"``.

    The lab's node restarts its kubelet at 60 s for 20 s; the pods bound meanwhile are admitted before the
    NVIDIA device plugin registers again and fail ``UnexpectedAdmissionError`` (pkg/kubelet/cm/devicemanager
    manager.go devicesToAllocate: ``no healthy devices present; cannot allocate unhealthy devices``), and a
    Failed bare pod is never retried.

    - ``"broken"``: both :data:`ADMISSION_VICTIMS` end ``Failed`` with that reason and never hold a GPU.
    - ``"fixed"``: every workload of :data:`ADMISSION_WORKLOADS` (a bare Pod or a one-pod batch/v1 Job of that
      name) ran to completion on its GPUs for its whole duration. Rejected as false fixes: dropping or moving
      the kubelet restart, changing the cluster, submitting later, requesting fewer GPUs (a pod without the
      ``nvidia.com/gpu`` limit runs, but its container sees no GPU) or shortening the work."""
    if expect not in ("broken", "fixed"):
        raise ValueError(f'expect must be "broken" or "fixed", not {expect!r}')
    from ..api.duration import parse_duration
    c = _Lines()
    nodes = {n: (m.name, k) for n, (m, k) in sorted(result.scenario.gpus.items())}
    ok = nodes == {ADMISSION_NODE: (ADMISSION_MODEL, ADMISSION_GPUS)}
    c.add(ok, f"集群未改动：1 台 {ADMISSION_NODE}，{ADMISSION_GPUS} 张 {ADMISSION_MODEL}" if ok else
          "集群被改动：" + ("，".join(f"{n} {k} 张 {m}" for n, (m, k) in nodes.items()) or "没有 GPU 节点")
          + f"（应为 1 台 {ADMISSION_NODE}，{ADMISSION_GPUS} 张 {ADMISSION_MODEL}）")
    ok, text = _admission_fault_kept(result)
    c.add(ok, text)

    units = _submitted(result, ("default",))
    diff = []
    for name, (submit, gpus, duration) in ADMISSION_WORKLOADS.items():
        u = units.get(("default", name))
        if u is None:
            diff.append(f"缺少 {name}")
            continue
        if u.pods != 1:
            diff.append(f"{name}: {u.pods} 个 Pod（应为 1）")
        if u.gpus_per_pod != gpus:
            diff.append(f"{name}: 申请 {u.gpus_per_pod:g} 张 nvidia.com/gpu（应为 {gpus}）"
                        + ("——没有 limit 的容器里 nvidia-smi 看不到 GPU" if u.gpus_per_pod == 0 else ""))
        if abs(u.submit_at - submit) > 1e-9:
            diff.append(f"{name}: 提交于 {u.submit_at:g}s（应为 {submit:g}s）")
        have = dict(u.annotations).get(ANNOTATION_DURATION)
        if have is None or abs(parse_duration(have) - duration) > 1e-9:
            diff.append(f"{name}: {ANNOTATION_DURATION} = {have}（应为 {duration:g}s）")
    diff += [f"多出 {n}" for (_, n) in sorted(units) if n not in ADMISSION_WORKLOADS]
    c.add(not diff, f"负载未改动：{len(ADMISSION_WORKLOADS)} 个负载的提交时间、GPU 数、时长与实验相同" if not diff
          else "负载被改动：" + "；".join(diff[:4]) + (f"……（共 {len(diff)} 处）" if len(diff) > 4 else ""))

    held = _admission_held(result)
    rejected = sorted(p.metadata.name for p in result.pods() if p.status.reason == ADMISSION_REASON)
    if expect == "broken":
        title = "实验 06 · 复现 UnexpectedAdmissionError"
        for name in ADMISSION_VICTIMS:
            p = result.pod(name)
            msg = (p.status.message or "") if p is not None else ""
            ok = (p is not None and p.status.phase == "Failed" and p.status.reason == ADMISSION_REASON
                  and ADMISSION_NO_HEALTHY in msg and name not in held)
            c.add(ok, f"{name}: phase {p.status.phase if p else '不存在'}，reason {p.status.reason if p else ''}"
                      + ("，从未拿到 GPU" if name not in held else f"，却持有过 GPU"))
        if result.pod(ADMISSION_VICTIMS[0]) is not None:
            c.lines.append(f"· status.message: {result.pod(ADMISSION_VICTIMS[0]).status.message}")
    else:
        title = "实验 06 · 修复：kubelet 重启后每个负载都在自己的 GPU 上跑完"
        for name, (submit, gpus, duration) in ADMISSION_WORKLOADS.items():
            runs = held.get(name, [])
            done = [(pod, k, t0, t1) for pod, k, t0, t1 in runs if k == gpus and t1 - t0 >= duration - 1e-6
                    and (result.pod(pod) is None or result.pod(pod).status.phase == "Succeeded")]
            if done:
                pod, k, t0, t1 = done[0]
                c.add(True, f"{name}: {pod} 在 t={t0:.0f}s～{t1:.0f}s 用 {k} 张 GPU 跑完（提交后等待 {t0 - submit:.0f} s）")
            elif runs:
                pod, k, t0, t1 = runs[-1]
                c.add(False, f"{name}: {pod} 用 {k} 张 GPU 跑了 {t1 - t0:.0f} s（应为 {gpus} 张、{duration:g} s，并成功结束）")
            else:
                p = result.pod(name)
                why = "没有 Pod 拿到 GPU" if p is None else f"phase {p.status.phase or 'Pending'}" + (
                    f"，reason {p.status.reason}" if p.status.reason else "")
                c.add(False, f"{name}: 从未在 GPU 上运行（{why}）")
        c.lines.append(f"· 被 kubelet 以 {ADMISSION_REASON} 拒绝的 Pod：{len(rejected)} 个"
                       + (f"（{', '.join(rejected)}；由控制器重建的可以接受）" if rejected else ""))
    return CheckResult(c.ok, c.lines, title)


# --- lab 05 (labs/05-node-bring-up) ------------------------------------------------------------------------

BRINGUP_MODEL = "H100-SXM5-80GB"
BRINGUP_GPUS = 8
BRINGUP_JOIN_AT = 300.0
BRINGUP_NODES = ("h100-0", "h100-1", "h100-img-0")
BRINGUP_PREINSTALLED = ("h100-img-0",)     # the node image ships the NVIDIA driver; the others have none
BRINGUP_FAULT = ("DriverFailure", "h100-img-0", 0.0)
BRINGUP_PODS = ("train-0", "train-1", "train-2")
BRINGUP_DURATION = 7200.0
DRIVER_DAEMONSET = "nvidia-driver-daemonset"
DRIVER_DEPLOY = "nvidia.com/gpu.deploy.driver"


def _operand_pod_on(result, daemonset: str, node: str):
    return next((p for p in result.api.list("Pod", lambda p: p.metadata.namespace == "gpu-operator")
                 if p.metadata.labels.get("app") == daemonset and p.spec.node_name == node), None)


def check_bring_up(result, expect: str = "fixed") -> CheckResult:
    """Check lab 05 from a finished run. ``expect``: ``"broken"`` (reproduce) or ``"fixed"``.

    - ``"broken"``: :data:`BRINGUP_PREINSTALLED`'s driver pod (``nvidia-driver-daemonset-…``) is in
      CrashLoopBackOff, the node advertises no ``nvidia.com/gpu``, one training pod stays Pending and the
      ClusterPolicy is ``notReady``.
    - ``"fixed"``: every node of :data:`BRINGUP_NODES` advertises its 8 GPUs, each training pod runs on its own
      node with 8 GPUs and the ClusterPolicy is ``ready``. Rejected as false fixes: removing the fault,
      changing the cluster (nodes, models, ``joinAt``), changing the pods, and turning the operator's driver
      off where no driver is preinstalled (``spec.driver.enabled: false`` for the whole cluster, or the
      label on the ``h100`` pool): those nodes would have no driver at all."""
    if expect not in ("broken", "fixed"):
        raise ValueError(f'expect must be "broken" or "fixed", not {expect!r}')
    from ..api.duration import parse_duration
    from ..api.nvidia_v1 import section_enabled
    from ..views.kubectl import pod_status_text
    c = _Lines()
    sc = result.scenario
    nodes = {n: (m.name, k) for n, (m, k) in sorted(sc.gpus.items())}
    want = {n: (BRINGUP_MODEL, BRINGUP_GPUS) for n in BRINGUP_NODES}
    joins = {n: sc.join_at.get(n, 0.0) for n in nodes}
    ok = nodes == want and all(abs(joins[n] - BRINGUP_JOIN_AT) < 1e-9 for n in BRINGUP_NODES)
    c.add(ok, f"集群未改动：{len(BRINGUP_NODES)} 台节点（{', '.join(BRINGUP_NODES)}）各 {BRINGUP_GPUS} 张 "
              f"{BRINGUP_MODEL}，都在 t={BRINGUP_JOIN_AT:g}s 加入" if ok else
          "集群被改动：" + ("，".join(f"{n} {k} 张 {m} 于 t={joins[n]:g}s 加入" for n, (m, k) in nodes.items())
                          or "没有 GPU 节点") + f"（应为 {', '.join(BRINGUP_NODES)} 各 {BRINGUP_GPUS} 张 {BRINGUP_MODEL}，"
                                               f"t={BRINGUP_JOIN_AT:g}s 加入）")
    kind, fnode, at = BRINGUP_FAULT
    faults = [f for f in sc.faults if f.spec.type == kind and f.spec.node == fnode]
    kept = [f for f in faults if abs(parse_duration(f.spec.at) - at) < 1e-9 and not f.spec.downtime]
    c.add(bool(kept), f"故障仍在：{kind} {fnode} t={at:g}s（预装驱动与 Operator 的驱动容器冲突，一直存在）" if kept
          else (f"故障被改动：{kind} at {faults[0].spec.at}，downtime {faults[0].spec.downtime}" if faults
                else f"故障被删掉了：场景里没有 {fnode} 上的 {kind}——节点镜像里的驱动不会因为删掉一行 YAML 消失"))

    cp = sc.cluster_policy
    if cp is None:   # the fault needs one: the loader rejects such a scenario before this runs
        c.add(False, "没有 ClusterPolicy：GPU Operator 不再管理这些节点")
    else:
        enabled = section_enabled(cp.spec, "driver", True)
        managed = [n for n in BRINGUP_NODES if n not in BRINGUP_PREINSTALLED]
        labels = {n: (result.api.get("Node", "", n).metadata.labels.get(DRIVER_DEPLOY)
                      if result.api.get("Node", "", n) is not None else None) for n in managed}
        off = [n for n in managed if labels[n] != "true"]
        c.add(enabled and not off, f"没有预装驱动的节点（{', '.join(managed)}）仍由 Operator 安装驱动"
                                   f"（spec.driver.enabled，{DRIVER_DEPLOY}=true）" if enabled and not off else
              ("ClusterPolicy spec.driver.enabled: false——" if not enabled else
               f"{', '.join(f'{n} 的 {DRIVER_DEPLOY}={labels[n]}' for n in off)}——")
              + f"{', '.join(managed)} 没有预装驱动，关掉 Operator 的驱动它们就没有驱动了")

    units = _submitted(result, ("default",))
    diff = []
    for name in BRINGUP_PODS:
        u = units.get(("default", name))
        if u is None:
            diff.append(f"缺少 {name}")
            continue
        if u.kind != "Pod" or u.gpus_per_pod != BRINGUP_GPUS:
            diff.append(f"{name}: {u.kind}，申请 {u.gpus_per_pod:g} 张 nvidia.com/gpu（应为 Pod、{BRINGUP_GPUS} 张）")
        have = dict(u.annotations).get(ANNOTATION_DURATION)
        if have is None or abs(parse_duration(have) - BRINGUP_DURATION) > 1e-9:
            diff.append(f"{name}: {ANNOTATION_DURATION} = {have}（应为 2h）")
    diff += [f"多出 {n}" for (_, n) in sorted(units) if n not in BRINGUP_PODS]
    c.add(not diff, f"负载未改动：{len(BRINGUP_PODS)} 个训练 Pod 各 {BRINGUP_GPUS} 张 GPU、2h" if not diff
          else "负载被改动：" + "；".join(diff[:4]))

    alloc = {}
    for n in BRINGUP_NODES:
        node = result.api.get("Node", "", n)
        alloc[n] = int(float(node.status.allocatable.get("nvidia.com/gpu", "0"))) if node is not None else 0
    held: dict[str, dict] = {}
    from .. import metrics
    for h in metrics.allocations(result):
        if h.namespace == "default" and h.pod in BRINGUP_PODS:
            held.setdefault(h.pod, {"node": h.node, "gpus": set(), "start": h.start})["gpus"].add(h.device)
    state = result.operator.policy.status.state if getattr(result, "operator", None) is not None else "<none>"
    if expect == "broken":
        title = "实验 05 · 复现：一台节点的 GPU 始终没有出现"
        for n in BRINGUP_PREINSTALLED:
            drv = _operand_pod_on(result, DRIVER_DAEMONSET, n)
            text = pod_status_text(drv) if drv is not None else "没有驱动 Pod"
            c.add(drv is not None and text == "CrashLoopBackOff", f"{n}: {drv.metadata.name if drv else ''} {text}")
            c.add(alloc.get(n, 0) == 0, f"{n}: allocatable nvidia.com/gpu = {alloc.get(n, 0)}")
        pending = [p for p in BRINGUP_PODS if result.pod(p) is not None and not result.pod(p).spec.node_name]
        c.add(len(pending) == 1, f"Pending 的训练 Pod：{', '.join(pending) or '无'}")
        c.add(state == "notReady", f"ClusterPolicy status.state = {state}")
    else:
        title = "实验 05 · 修复：3 台节点都亮出 8 张 GPU，3 个训练 Pod 都在跑"
        short = {n: k for n, k in alloc.items() if k != BRINGUP_GPUS}
        c.add(not short, "每台节点 allocatable nvidia.com/gpu = " + "，".join(f"{n} {k}" for n, k in alloc.items())
              + ("" if not short else f"（应为 {BRINGUP_GPUS}）"))
        used = set()
        for name in BRINGUP_PODS:
            h = held.get(name)
            ok = h is not None and len(h["gpus"]) == BRINGUP_GPUS and h["node"] not in used
            if h is not None:
                used.add(h["node"])
            p = result.pod(name)
            c.add(ok, f"{name}: 在 {h['node']} 上用 {len(h['gpus'])} 张 GPU，t={h['start']:.0f}s 开始（节点加入后 "
                      f"{h['start'] - BRINGUP_JOIN_AT:.0f} s）" if h is not None else
                  f"{name}: 没有拿到 GPU（{pod_status_text(p) if p is not None else '不存在'}）")
        c.add(state == "ready", f"ClusterPolicy status.state = {state}")
    return CheckResult(c.ok, c.lines, title)


# --- lab 04 (labs/04-allreduce-cliff) ----------------------------------------------------------------------

ALLREDUCE_JOB = "llama-7b"
ALLREDUCE_GPUS = 128
ALLREDUCE_COMPUTE_S = 0.418          # 6 x 6.74e9 x 4096 FLOP per GPU at 40% of 989 TFLOP/s (README)
ALLREDUCE_BYTES = "13.5G"            # Llama-2-7B: 6.74e9 parameters x 2 bytes (bf16 gradients)
ALLREDUCE_STEPS = 2000
ALLREDUCE_RACK_LABEL = "cloud.provider.com/topology-rack"   # Fabric labels: kueue -> one value per scalable unit
ALLREDUCE_RACKS = ("r1", "r2")
ALLREDUCE_MODEL = "H100-SXM5-80GB"
ALLREDUCE_BOARD = "dgx-h100"
ALLREDUCE_POOLS = (("vision", 14), ("shared", 2), ("pool", 16))   # NodePools in fabric order: SU0 = vision + shared
ALLREDUCE_FABRIC = {"type": "RailOptimized", "nic_speed": None, "scalable_unit": 16, "spines": None,
                    "oversubscription": 1, "load": 0}
# other tenants' pods (namespace inference): name -> (nvidia.com/gpu, node they are pinned to)
ALLREDUCE_TENANTS = {f"{name}-{k}": (gpus, f"shared-{k}") for k in (0, 1)
                     for name, gpus in (("vllm-70b", 4), ("vllm-8b", 2), ("notebook", 1))}
ALLREDUCE_TOLERANCE = 0.03           # fixed: step time at most 3% above the packed placement's
ALLREDUCE_CLIFF = 1.5                # broken: at least 1.5x the packed placement's step time


def _allreduce_nodes() -> list[str]:
    return [f"{pool}-{i}" for pool, count in ALLREDUCE_POOLS for i in range(count)]


def allreduce_reference(result, gpus: int = ALLREDUCE_GPUS):
    """The packed placement of lab 04's job on ``gpus`` GPUs: whole nodes of the idle scalable unit (the ``pool``
    NodePool), ranks node after node. Returns ``(step seconds, AllReduceCost)`` on the run's boards and fabric
    (gpusim.hardware.collectives, topology reference §3.3), with the lab's compute per step at that size."""
    from ..api.quantity import parse_quantity
    from ..hardware.collectives import step_time
    full, rest = divmod(gpus, 8)
    nodes = [(f"pool-{i}", range(8)) for i in range(full)] + ([(f"pool-{full}", range(rest))] if rest else [])
    cost = result.ctx.topology.allreduce(nodes, float(parse_quantity(ALLREDUCE_BYTES)))
    return step_time(ALLREDUCE_COMPUTE_S * ALLREDUCE_GPUS / gpus, cost.seconds), cost


def _allreduce_cluster(result, c: "_Lines") -> None:
    sc = result.scenario
    want = _allreduce_nodes()
    nodes = {n: (m.name, k, sc.boards.get(n, (None,))[0]) for n, (m, k) in sorted(sc.gpus.items())}
    bad = [f"{n} {k} 张 {m}（{b}）" for n, (m, k, b) in nodes.items() if n in want and (m, k, b) != (
        ALLREDUCE_MODEL, 8, ALLREDUCE_BOARD)]
    extra, missing = sorted(set(nodes) - set(want)), [n for n in want if n not in nodes]
    ok = not (bad or extra or missing)
    c.add(ok, f"集群未改动：{len(want)} 台 {ALLREDUCE_BOARD}（8 × {ALLREDUCE_MODEL}），NodePool "
              + "、".join(f"{p} {k} 台" for p, k in ALLREDUCE_POOLS) if ok else
          "集群被改动：" + "；".join(([f"多出 {', '.join(extra[:3])}"] if extra else [])
                                  + ([f"缺少 {', '.join(missing[:3])}"] if missing else []) + bad[:3])
          + f"（应为 {len(want)} 台 8 卡 {ALLREDUCE_MODEL} 的 {ALLREDUCE_BOARD}）")
    spec = sc.fabric_spec
    diff = [f"{k} = {getattr(spec, k, None)!r}（应为 {v!r}）" for k, v in ALLREDUCE_FABRIC.items()
            if spec is None or getattr(spec, k) != v]
    if list(sc.fabric_nodes) != want:
        diff.append("接入 fabric 的节点或顺序变了（前 16 台是第一个 scalable unit，后 16 台是第二个）")
    c.add(not diff, "fabric 未改动：RailOptimized，每个 scalable unit 16 台，每 GPU 一块 NDR 400G，无超额订阅、空闲"
          if not diff else "fabric 被改动：" + "；".join(diff[:3]) + "——换一张更大/更快的网不是调度的修复")


def _allreduce_tenants(result, c: "_Lines") -> None:
    from ..api.duration import parse_duration
    units = _submitted(result, ("inference",))
    diff = [f"缺少 {n}" for n in ALLREDUCE_TENANTS if ("inference", n) not in units]
    diff += [f"多出 {n}" for (_, n) in sorted(units) if n not in ALLREDUCE_TENANTS]
    for name, (gpus, node) in ALLREDUCE_TENANTS.items():
        u, p = units.get(("inference", name)), result.pod(name, "inference")
        if u is None:
            continue
        dur = dict(u.annotations).get(ANNOTATION_DURATION)
        if u.gpus_per_pod != gpus or dur is None or abs(parse_duration(dur) - 86400) > 1e-9 or u.submit_at != 0:
            diff.append(f"{name}: {u.gpus_per_pod:g} 张 GPU，{ANNOTATION_DURATION} = {dur}（应为 {gpus} 张、24h、0 s 提交）")
        elif p is None or p.spec.node_name != node:
            diff.append(f"{name}: 运行在 {p.spec.node_name if p is not None else '—'}（应为 {node}）")
    c.add(not diff, f"其他租户未改动：{len(ALLREDUCE_TENANTS)} 个推理/notebook Pod 仍在 shared-0、shared-1 上各占 7 张 GPU"
          if not diff else "其他租户被改动：" + "；".join(diff[:3])
          + "——把别人的推理服务挤走不是修复")


def _allreduce_job(result, c: "_Lines") -> Optional[_Unit]:
    from ..api.duration import parse_duration
    from ..api.quantity import parse_quantity
    units = _submitted(result, ("default",))
    u = units.get(("default", ALLREDUCE_JOB))
    extra = sorted(n for (_, n) in units if n != ALLREDUCE_JOB)
    if u is None:
        c.add(False, f"找不到训练 Job {ALLREDUCE_JOB}（batch/v1 或 Volcano Job）")
        return None
    ann = dict(u.annotations)
    diff = []
    total = u.pods * u.gpus_per_pod
    if total != ALLREDUCE_GPUS:
        diff.append(f"{u.pods} 个 worker × {u.gpus_per_pod:g} 张 = {total:g} 张 GPU（应为 {ALLREDUCE_GPUS}）——少用 GPU 不是扩展到 128 卡")
    workers = ann.get(ANNOTATION_TRAINING_WORKERS)
    if workers != str(u.pods):
        diff.append(f"{ANNOTATION_TRAINING_WORKERS} = {workers}（应为 worker 数 {u.pods}）")
    got = ann.get(ANNOTATION_ALLREDUCE_BYTES)
    if got is None or float(parse_quantity(got)) != float(parse_quantity(ALLREDUCE_BYTES)):
        diff.append(f"{ANNOTATION_ALLREDUCE_BYTES} = {got}（应为 {ALLREDUCE_BYTES}，Llama-2-7B 的 bf16 梯度）"
                    "——换小模型或少报梯度不是修复")
    step = ann.get(ANNOTATION_STEP_TIME)
    if step is None or abs(parse_duration(step) - ALLREDUCE_COMPUTE_S) > 1e-9:
        diff.append(f"{ANNOTATION_STEP_TIME} = {step}（应为 {ALLREDUCE_COMPUTE_S * 1000:g}ms，每步的计算时间）")
    if ann.get(ANNOTATION_TRAINING_STEPS) != str(ALLREDUCE_STEPS):
        diff.append(f"{ANNOTATION_TRAINING_STEPS} = {ann.get(ANNOTATION_TRAINING_STEPS)}（应为 {ALLREDUCE_STEPS}）")
    overlap = ann.get(ANNOTATION_ALLREDUCE_OVERLAP)
    if overlap is not None and float(overlap) != 0:
        diff.append(f"{ANNOTATION_ALLREDUCE_OVERLAP} = {overlap}（实验里为 0：注解只是告诉模拟器重叠了多少，"
                    "并不会让 all-reduce 变快）")
    diff += [f"多出 {n}" for n in extra]
    c.add(not diff, f"训练 Job 未改动：{ALLREDUCE_JOB} 共 {ALLREDUCE_GPUS} 张 GPU（{u.pods} 个 worker × "
                    f"{u.gpus_per_pod:g}），每步 {ALLREDUCE_BYTES} 梯度、{ALLREDUCE_COMPUTE_S * 1000:g} ms 计算、"
                    f"{ALLREDUCE_STEPS} 步" if not diff else "训练 Job 被改动：" + "；".join(diff[:3]))
    return u


def check_allreduce(result, expect: str = "fixed") -> CheckResult:
    """Check lab 04 from a finished run. ``expect``: ``"broken"`` (reproduce) or ``"fixed"``.

    The lab's Llama-2-7B job (128 GPUs, one rank per pod, 13.5 GB of bf16 gradients per step) is placed by a
    GPU bin-packing default scheduler that knows nothing about topology: two of its ranks land alone on nodes
    where other tenants hold 7 of 8 GPUs, and the ring all-reduce runs at one NIC's bandwidth (topology reference
    §3.3, "node fragmentation"). The reference is :func:`allreduce_reference`: 16 whole nodes of one scalable unit.

    - ``"broken"``: the job ran all 128 ranks, some node holds fewer than 8 of them, and its step time is at least
      :data:`ALLREDUCE_CLIFF` × the reference.
    - ``"fixed"``: the job finished its steps with a step time at most :data:`ALLREDUCE_TOLERANCE` above the
      reference. Rejected as false fixes: fewer GPUs, a smaller model (``allreduce-bytes``), a different compute
      time or steps, declaring an all-reduce overlap, a bigger or faster fabric (or other boards / more nodes), and
      moving or removing the other tenants' pods."""
    if expect not in ("broken", "fixed"):
        raise ValueError(f'expect must be "broken" or "fixed", not {expect!r}')
    from ..workloads.training import training_report
    c = _Lines()
    _allreduce_cluster(result, c)
    _allreduce_tenants(result, c)
    _allreduce_job(result, c)
    ref, cost = allreduce_reference(result)
    c.lines.append(f"· 紧凑放置（16 台整机、同一个 scalable unit）：all-reduce {cost.seconds * 1000:.0f} ms"
                   f"（busbw {cost.bus_bandwidth:.0f} GB/s），每步 {ref:.3f} s")
    rep = next((g for g in training_report(result) if g["namespace"] == "default" and g["group"] == ALLREDUCE_JOB), None)
    placement = rep["placements"][-1] if rep is not None and rep["placements"] else None
    if placement is None or rep["step_seconds"] is None:
        c.add(False, f"{ALLREDUCE_JOB} 的 worker 从未全部运行，没有测到步长")
        title = "实验 04 · " + ("复现" if expect == "broken" else "修复") + "：all-reduce 断崖"
        return CheckResult(False, c.lines, title)
    step = rep["step_seconds"]
    per_node = [(node, len(ids)) for node, ids in placement.nodes]
    partial = [(n, k) for n, k in per_node if k < 8]
    where = (f"{len(per_node)} 台节点" + (f"，其中 {len(partial)} 台不满 8 张（"
             + "、".join(f"{n} {k} 张" for n, k in sorted(partial, key=lambda x: x[1])[:4]) + "）" if partial else "，都是整机"))
    bw = placement.bus_bandwidth
    line = (f"{ALLREDUCE_JOB}: 每步 {step:.3f} s = 计算 {rep['step_time']:.3f} s + all-reduce "
            f"{(placement.allreduce_seconds or 0) * 1000:.0f} ms（busbw {bw or 0:.0f} GB/s，瓶颈 {placement.bottleneck}），"
            f"是紧凑放置的 {step / ref:.2f} 倍；{where}")
    if expect == "broken":
        title = "实验 04 · 复现：128 卡的 all-reduce 掉下断崖"
        c.add(bool(partial) and step >= ALLREDUCE_CLIFF * ref, line)
    else:
        title = "实验 04 · 修复：128 卡的步长回到紧凑放置"
        c.add(step <= (1 + ALLREDUCE_TOLERANCE) * ref, line + (f"（允许 ≤ {1 + ALLREDUCE_TOLERANCE:.2f} 倍）"))
        done = rep["steps_done"] >= ALLREDUCE_STEPS and rep["completed_at"] is not None
        c.add(done, f"{ALLREDUCE_JOB}: 跑完 {rep['steps_done']}/{ALLREDUCE_STEPS} 步" + (
            f"，{rep['completed_at']:.0f} s 完成（提交后 {rep['completed_at'] - (rep['created'] or 0):.0f} s）" if done else ""))
    return CheckResult(c.ok, c.lines, title)


# --- lab 07 (labs/07-mig-not-applied) ----------------------------------------------------------------------

MIG_NODE = "a100-0"
MIG_MODEL = "A100-SXM4-80GB"
MIG_GPUS = 8
MIG_STRATEGY = "mixed"                   # ClusterPolicy spec.mig.strategy: one resource per profile
MIG_CONFIG = "all-1g.10gb"               # the operator's default config: seven 1g.10gb instances per 80GB GPU
MIG_RESOURCE = "nvidia.com/mig-1g.10gb"  # what the device plugin advertises for it under the mixed strategy
MIG_INSTANCES = 56
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
MIG_STATE_LABEL = "nvidia.com/mig.config.state"
MIG_IN_USE = "In use by another client"  # NVML_ERROR_IN_USE as nvidia-smi / mig-parted print it
# workload name → (submitted at s, resource, count per pod, gpusim.io/duration s); all bare Pods
MIG_WORKLOADS: dict[str, tuple[float, str, int, float]] = {
    "train": (0.0, "nvidia.com/gpu", 8, 3600.0),
    **{f"infer-{i}": (900.0, MIG_RESOURCE, 1, 1800.0) for i in range(4)},
}
MIG_INFERENCE = tuple(n for n in MIG_WORKLOADS if n.startswith("infer-"))


def _gpu_limits(spec) -> dict[str, float]:
    """``nvidia.com/*`` limits summed over the pod's containers."""
    from ..api.quantity import parse_quantity
    out: dict[str, float] = {}
    for c in spec.containers:
        for r, q in (c.resources.limits if c.resources is not None else {}).items():
            if r.startswith("nvidia.com/"):
                out[r] = out.get(r, 0.0) + float(parse_quantity(q))
    return out


def _mig_workload_diff(result) -> list[str]:
    from ..api.duration import parse_duration
    sc = result.scenario
    pods = {p.metadata.name: p for p in sc.pods if p.metadata.namespace == "default"}
    diff = [f"{j.metadata.name}: 换成了 Job（应为裸 Pod）" for j in sc.jobs if j.metadata.name in MIG_WORKLOADS]
    for name, (submit, resource, count, duration) in MIG_WORKLOADS.items():
        p = pods.get(name)
        if p is None:
            if not any(j.metadata.name == name for j in sc.jobs):
                diff.append(f"缺少 {name}")
            continue
        limits = _gpu_limits(p.spec)
        if limits != {resource: float(count)}:
            asked = "、".join(f"{v:g} 个 {r}" for r, v in limits.items()) or "没有 GPU limit"
            why = ""
            if resource == MIG_RESOURCE and "nvidia.com/gpu" in limits:
                why = "——整卡不是 MIG 实例，服务要的是 MIG 的硬隔离和一卡七份的密度"
            elif not limits:
                why = "——没有 limit 的容器里 nvidia-smi 看不到 GPU"
            diff.append(f"{name}: 申请 {asked}（应为 {count} 个 {resource}）{why}")
        at = parse_duration(p.metadata.annotations.get(ANNOTATION_SUBMIT_AT, "0s"))
        if abs(at - submit) > 1e-9:
            diff.append(f"{name}: 提交于 {at:g}s（应为 {submit:g}s）")
        have = p.metadata.annotations.get(ANNOTATION_DURATION)
        if have is None or abs(parse_duration(have) - duration) > 1e-9:
            diff.append(f"{name}: {ANNOTATION_DURATION} = {have}（应为 {duration:g}s）")
    diff += [f"多出 {n}" for n in sorted(pods) if n not in MIG_WORKLOADS]
    diff += [f"多出 Job {j.metadata.name}" for j in sc.jobs if j.metadata.name not in MIG_WORKLOADS]
    return diff


def _mig_held(result) -> dict[str, tuple[str, int, float, float]]:
    """Pod → (resource, devices held, first start, last end) of its GPU holdings."""
    out: dict[str, list] = {}
    for h in result.ctx.holdings:
        if h.namespace == "default" and h.resource.startswith("nvidia.com/"):
            out.setdefault(h.pod, []).append(h)
    return {p: (hs[0].resource, len({h.device for h in hs}), min(h.start for h in hs),
                max(h.end if h.end is not None else result.end for h in hs)) for p, hs in out.items()}


def check_mig(result, expect: str = "fixed") -> CheckResult:
    """Check lab 07 from a finished run. ``expect``: ``"broken"`` (reproduce) or ``"fixed"``.

    The lab relabels :data:`MIG_NODE` ``nvidia.com/mig.config=all-1g.10gb`` at 10m while a training pod holds
    all 8 GPUs; mig-manager (NVIDIA/mig-parted ``reconfigure-mig.sh``) cannot reset them (``In use by another
    client``), sets ``nvidia.com/mig.config.state=failed`` and waits for the next change of the label.

    - ``"broken"``: the state is ``failed`` with that reason, the node advertises no :data:`MIG_RESOURCE`, and
      the inference pods never get a GPU.
    - ``"fixed"``: the node ends with ``all-1g.10gb`` applied (``success``, 56 × :data:`MIG_RESOURCE`), the
      training pod ran its hour on 8 whole GPUs, and each inference pod ran its 30 minutes on a 1g.10gb
      instance. Rejected as false fixes: changing the cluster or ``mig.strategy``, requesting whole GPUs (or
      nothing) instead of the MIG instance, shortening, moving or deleting the training, another MIG config,
      and relabelling again while the GPUs are still busy."""
    if expect not in ("broken", "fixed"):
        raise ValueError(f'expect must be "broken" or "fixed", not {expect!r}')
    c = _Lines()
    sc = result.scenario
    nodes = {n: (m.name, k) for n, (m, k) in sorted(sc.gpus.items())}
    ok = nodes == {MIG_NODE: (MIG_MODEL, MIG_GPUS)} and not sc.join_at.get(MIG_NODE)
    c.add(ok, f"集群未改动：1 台 {MIG_NODE}，{MIG_GPUS} 张 {MIG_MODEL}" if ok else
          "集群被改动：" + ("，".join(f"{n} {k} 张 {m}" for n, (m, k) in nodes.items()) or "没有 GPU 节点")
          + f"（应为 1 台 {MIG_NODE}，{MIG_GPUS} 张 {MIG_MODEL}，t=0 就在）")
    cp = sc.cluster_policy
    strategy = cp.spec.mig.strategy if cp is not None else "<没有 ClusterPolicy>"
    c.add(strategy == MIG_STRATEGY, f"ClusterPolicy spec.mig.strategy = {strategy}"
          + ("" if strategy == MIG_STRATEGY else f"（应为 {MIG_STRATEGY}：推理 Pod 申请的是 {MIG_RESOURCE}，"
                                                 "只有 mixed 策略按 profile 起名）"))
    diff = _mig_workload_diff(result)
    c.add(not diff, f"负载未改动：train（8 张整卡，1h）和 {len(MIG_INFERENCE)} 个推理 Pod（各 1 个 {MIG_RESOURCE}，"
                    "15m 提交，30m）" if not diff
          else "负载被改动：" + "；".join(diff[:4]) + (f"……（共 {len(diff)} 处）" if len(diff) > 4 else ""))

    node = result.api.get("Node", "", MIG_NODE)
    labels = node.metadata.labels if node is not None else {}
    config, state = labels.get(MIG_CONFIG_LABEL), labels.get(MIG_STATE_LABEL)
    alloc = int(float(node.status.allocatable.get(MIG_RESOURCE, "0"))) if node is not None else 0
    failures = [e for e in result.events.events if e.reason == "MigConfigFailed"
                and e.involved_object.name == MIG_NODE]
    held = _mig_held(result)
    if expect == "broken":
        title = "实验 07 · 复现：MIG 配置始终没有生效"
        in_use = [e for e in failures if MIG_IN_USE in e.message]
        c.add(config == MIG_CONFIG and state == "failed",
              f"{MIG_NODE}: {MIG_CONFIG_LABEL}={config}，{MIG_STATE_LABEL}={state}")
        c.add(bool(in_use), f"mig-manager: {in_use[0].message}" if in_use
              else f"mig-manager 没有报 {MIG_IN_USE}（MigConfigFailed 事件 {len(failures)} 个）")
        c.add(alloc == 0, f"{MIG_NODE}: allocatable {MIG_RESOURCE} = {alloc}")
        never = [n for n in MIG_INFERENCE if n not in held]
        c.add(len(never) == len(MIG_INFERENCE), f"从未拿到 GPU 的推理 Pod：{', '.join(never) or '无'}")
    else:
        title = f"实验 07 · 修复：{MIG_CONFIG} 生效，训练和推理都跑完"
        ok = config == MIG_CONFIG and state == "success" and alloc == MIG_INSTANCES
        c.add(ok, f"{MIG_NODE}: {MIG_CONFIG_LABEL}={config}，{MIG_STATE_LABEL}={state}，allocatable {MIG_RESOURCE} = "
                  f"{alloc}" + ("" if ok else f"（应为 {MIG_CONFIG}、success、{MIG_INSTANCES}）"))
        for name, (submit, resource, count, duration) in MIG_WORKLOADS.items():
            h = held.get(name)
            p = result.pod(name)
            done = (h is not None and h[0] == resource and h[1] == count and h[3] - h[2] >= duration - 1e-6
                    and p is not None and p.status.phase == "Succeeded")
            if done:
                c.add(True, f"{name}: t={h[2]:.0f}s～{h[3]:.0f}s 用 {count} 个 {resource} 跑完"
                            f"（提交后等待 {h[2] - submit:.0f} s）")
            elif h is not None:
                c.add(False, f"{name}: 用 {h[1]} 个 {h[0]} 跑了 {h[3] - h[2]:.0f} s（应为 {count} 个 {resource}、"
                             f"{duration:g} s，并成功结束）")
            else:
                c.add(False, f"{name}: 从未拿到 {resource}（phase {(p.status.phase or 'Pending') if p is not None else '不存在'}）")
        c.lines.append(f"· MigConfigFailed 事件 {len(failures)} 个"
                       + (f"（最后一个 t={failures[-1].last_timestamp:g}s：{failures[-1].message}）" if failures else ""))
    return CheckResult(c.ok, c.lines, title)
