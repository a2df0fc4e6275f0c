"""Lab 08's checker (``labs/08-write-a-plugin``): the learner's Score plugin, run through the real
scheduler framework, must reduce GPU fragmentation against the default profile on every seed, without
bending the Filter rules.

``check_plugin(build)`` takes a :class:`gpusim.labs.outoftree.SchedulerBuild` — the scheduler compiled
with the learner's plugin (``build(config, with_plugin(NAME, new))``, as ``app.WithPlugin`` does) — and:

1. reads its ``default-scheduler`` profile: an out-of-tree plugin must run at Score, and only at
   PreScore/Score (a Score plugin ranks nodes, it does not filter, reserve or bind); every PreFilter and
   Filter plugin of the default profile must still be there, and binding must stay DefaultBinder's;
2. for each seed of :data:`PLUGIN_SEEDS` runs :func:`gpusim.labs.fragmentation.plugin_workload` under
   the default profile (LeastAllocated, cached in ``baseline``) and under the build, and requires on
   **every** seed a time-averaged fragmentation at least :data:`PLUGIN_MIN_REDUCTION` below the
   default's, and 8-GPU pods that do not wait longer on average (plus :data:`PLUGIN_WAIT_SLACK_S`):
   a plugin that wins on the seed its author tried, or by random scores, loses on another;
3. checks what happened in each run: every pod ran and succeeded, none was refused by the kubelet
   (``OutOf…``, ``UnexpectedAdmissionError``), each was bound to the node its scheduling attempt chose
   among the nodes that passed Filter, and no node ever held more GPUs than it has.
"""
from __future__ import annotations

from typing import Optional

from ..api.core_v1 import NVIDIA_GPU
from .checks import CheckResult, _Lines
from .fragmentation import FragmentationReport, fragmentation_report, plugin_workload
from .outoftree import SchedulerBuild, build

PLUGIN_SEEDS = (0, 1, 2, 3, 4)
PLUGIN_MIN_REDUCTION = 0.25      # the plugin's mean fragmentation ≤ 75 % of the default's, on every seed
PLUGIN_WAIT_SLACK_S = 60.0       # 8-GPU pods may wait at most this much longer on average than by default
SCORE_POINTS = ("PreScore", "Score")
BIG = 8                          # the pod size whose wait is compared (a whole node)
ADMISSION_REASONS = ("UnexpectedAdmissionError",)   # plus OutOf<resource> (kubelet lifecycle/predicate.go)


def plugin_baseline(seeds: tuple[int, ...] = PLUGIN_SEEDS) -> dict[int, FragmentationReport]:
    """The default profile's fragmentation per seed (what :func:`check_plugin` compares against)."""
    default = build(None)
    return {s: fragmentation_report(default.run(text=plugin_workload(s))) for s in seeds}


def _profile_lines(c: _Lines, sched: SchedulerBuild, default: SchedulerBuild) -> None:
    mine, base = sched.profile(), default.profile()
    ours = set(sched.out_of_tree)
    scoring = [n for n in mine.points["Score"] if n in ours]
    c.add(bool(scoring), "Score 扩展点上的树外插件：" + "、".join(
        f"{n}（权重 {mine.weights.get(n, 1)}）" for n in scoring) if scoring
          else "default-scheduler 的 Score 扩展点上没有树外插件（用 with_plugin 注册，并在 profile 里启用）")
    elsewhere = sorted({f"{n} @ {pt}" for pt, names in mine.points.items() if pt not in SCORE_POINTS
                        for n in names if n in ours})
    c.add(not elsewhere, "树外插件只在 PreScore/Score 上运行" if not elsewhere
          else "Score 插件不应参与 Filter、Reserve、Permit 或 Bind：" + "，".join(elsewhere))
    missing = [f"{n} @ {pt}" for pt in ("PreFilter", "Filter") for n in base.points[pt] if n not in mine.points[pt]]
    c.add(not missing, f"Filter 规则完整：默认 profile 的 {len(base.points['Filter'])} 个 Filter 插件都在"
          if not missing else "profile 关掉了默认的过滤插件：" + "，".join(missing))
    c.add(mine.points["Bind"] == base.points["Bind"], "绑定仍由 DefaultBinder 完成" if mine.points["Bind"] == base.points["Bind"]
          else f"Bind 扩展点被改成 {mine.points['Bind']}（应为 {base.points['Bind']}）")


def _run_violations(result) -> list[str]:
    """What in one run breaks the rules: pods that did not run or succeed, kubelet refusals, bindings
    that are not the scheduler's choice among Filter-feasible nodes, GPUs held beyond a node's count."""
    out = []
    last: dict[str, object] = {}
    for a in result.scheduler.attempts:
        if a.node:
            last[a.pod] = a
    refused, unbound, wrong, failed = [], [], [], []
    for p in result.pods():
        ref = f"{p.metadata.namespace}/{p.metadata.name}"
        reason = p.status.reason or ""
        if p.status.phase == "Failed" and (reason.startswith("OutOf") or reason in ADMISSION_REASONS):
            refused.append(f"{p.metadata.name} {reason}")
        elif p.status.phase != "Succeeded":
            (unbound if not p.spec.node_name else failed).append(f"{p.metadata.name} {p.status.phase}")
        a = last.get(ref)
        if p.spec.node_name and (a is None or a.node != p.spec.node_name or a.node not in a.feasible):
            wrong.append(f"{p.metadata.name} → {p.spec.node_name}"
                         + (f"（调度器选的是 {a.node}）" if a is not None and a.node != p.spec.node_name else
                            "（不在通过 Filter 的节点里）" if a is not None else "（没有经过调度周期）"))
    if refused:
        out.append(f"kubelet 拒绝了 {len(refused)} 个 Pod：" + "，".join(refused[:3]))
    if wrong:
        out.append(f"{len(wrong)} 个 Pod 没有绑定到调度器在 Filter 之后选出的节点：" + "，".join(wrong[:3]))
    if unbound:
        out.append(f"{len(unbound)} 个 Pod 始终没有被调度：" + "，".join(unbound[:3]))
    if failed:
        out.append(f"{len(failed)} 个 Pod 没有成功结束：" + "，".join(failed[:3]))
    capacity = {n: c for n, (_m, c) in result.scenario.gpus.items()}
    deltas: dict[str, list[tuple[float, int]]] = {}
    for h in result.ctx.holdings:
        if h.resource == NVIDIA_GPU:
            deltas.setdefault(h.node, []).append((h.start, 1))
            if h.end is not None:
                deltas[h.node].append((h.end, -1))
    for node, ds in sorted(deltas.items()):
        level = peak = 0
        for _t, d in sorted(ds):
            level += d
            peak = max(peak, level)
        if peak > capacity.get(node, 0):
            out.append(f"{node} 同时持有 {peak} 张 GPU，超过它的 {capacity.get(node, 0)} 张")
    return out


def check_plugin(sched: SchedulerBuild, seeds: tuple[int, ...] = PLUGIN_SEEDS,
                 baseline: Optional[dict[int, FragmentationReport]] = None) -> CheckResult:
    """Check lab 08: ``sched`` (a scheduler built with the learner's Score plugin) reduces fragmentation
    against the default profile on every seed, and keeps the Filter rules (see the module docstring)."""
    title = f"实验 08 · Score 插件：{len(seeds)} 个种子上 GPU 碎片都比默认 profile 少 {PLUGIN_MIN_REDUCTION:.0%} 以上"
    c = _Lines()
    default = build(None)
    _profile_lines(c, sched, default)
    if not c.ok:
        return CheckResult(False, c.lines, title)
    base = dict(baseline or {})
    for s in seeds:
        if s not in base:
            base[s] = fragmentation_report(default.run(text=plugin_workload(s)))
    reductions = []
    for s in seeds:
        try:
            r = sched.run(text=plugin_workload(s))
        except Exception as e:   # a plugin error (e.g. a score outside [0, 100]) stops the run
            c.add(False, f"种子 {s}：运行失败：{type(e).__name__}: {e}")
            continue
        bad = _run_violations(r)
        for v in bad:
            c.add(False, f"种子 {s}：{v}")
        if bad:
            continue
        rep, ref = fragmentation_report(r), base[s]
        cut = 1 - rep.fragmentation / ref.fragmentation if ref.fragmentation else 0.0
        reductions.append(cut)
        w, wref = rep.wait_by_size.get(BIG, 0.0), ref.wait_by_size.get(BIG, 0.0)
        ok = cut >= PLUGIN_MIN_REDUCTION and w <= wref + PLUGIN_WAIT_SLACK_S
        c.add(ok, f"种子 {s}：碎片 {rep.fragmentation:.2f} 张 GPU，默认 {ref.fragmentation:.2f}（{rep.fragmentation / ref.fragmentation - 1 if ref.fragmentation else 0:+.0%}）；"
                  f"{BIG} 卡 Pod 平均等待 {w / 60:.0f} 分钟，默认 {wref / 60:.0f}"
                  + ("" if cut >= PLUGIN_MIN_REDUCTION else f"——碎片应至少少 {PLUGIN_MIN_REDUCTION:.0%}")
                  + ("" if w <= wref + PLUGIN_WAIT_SLACK_S else f"——{BIG} 卡 Pod 等得更久"))
    if reductions:
        c.lines.append(f"· 碎片平均减少 {sum(reductions) / len(reductions):.0%}，最少 {min(reductions):.0%}"
                       f"（{len(reductions)}/{len(seeds)} 个种子的运行没有违规）")
    return CheckResult(c.ok, c.lines, title)
