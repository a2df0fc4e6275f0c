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
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..api.validation import ANNOTATION_GPU_MEMORY, ANNOTATION_GPU_MEMORY_GROWTH
from ..node.sharing import OOM_MESSAGE

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
                               f"phase {present[n].status.phase}")
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
            detail = f"phase {p.status.phase}，OOM {len(times)} 次，重启 {_restarts(p)} 次"
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
