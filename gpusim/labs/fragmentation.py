"""GPU fragmentation for lab 08: the workload, and the fragmentation measure of FGD for whole GPUs.

The measure is the one of *Beware of Fragmentation* (Weng et al., USENIX ATC '23), as its reference
simulator implements it (hkust-adsl/kubernetes-scheduler-simulator ``pkg/utils/frag.go``), restricted
to whole-GPU tasks. A *target workload* M is the mix of GPU counts the cluster typically serves, each
size ``k`` with a popularity ``p_k``. Seen by a task of ``k`` GPUs, the idle GPUs of a node are a
fragment when the node cannot host the task (fewer than ``k`` free GPUs); with whole GPUs there are no
partial GPUs, so a node that can host the task has no fragment for it. So, for a node with ``f`` free
GPUs::

    F_n(M) = Σ_k p_k · f · [f < k]            (GPUs)

and the cluster's fragmentation is ``Σ_n F_n(M)``. Picture a car park: eight empty spaces scattered
one per row hold no bus, eight in one row do. CPU and memory are left out: the lab's nodes have far
more of both than their GPUs' pods ask for.

:func:`plugin_workload` writes the lab's scenario for one seed — a stream of GPU pods drawn from
:data:`TARGET` with random arrivals and run times — so that a plugin must do well on the *kind* of
workload, not on one draw of it. :func:`fragmentation_report` reads a finished run (``holdings``,
pods) and never drives it.
"""
from __future__ import annotations

import functools
import math
import random
from dataclasses import dataclass
from typing import Optional

import yaml

from ..api.core_v1 import NVIDIA_GPU

# the lab's target workload: GPU count → popularity (share of pods)
TARGET: dict[int, float] = {1: 0.4, 2: 0.25, 4: 0.2, 8: 0.15}
NODES, GPUS_PER_NODE = 6, 8
MODEL = "A100-SXM4-80GB"
CPU_PER_GPU, MEMORY_PER_GPU_GI = 4, 32           # requests per GPU; a node has 128 CPUs and 1Ti
ARRIVAL_WINDOW_S = 4 * 3600                       # pods arrive during the first 4 hours
MEAN_INTERARRIVAL_S = 150.0
RUN_TIME_S = (15 * 60, 75 * 60)                   # uniform run time of a pod once it runs
IMAGE = "nvcr.io/nvidia/pytorch:24.08-py3"


def node_fragmentation(free: int, target: Optional[dict[int, float]] = None) -> float:
    """``F_n(M)`` in GPUs: the free GPUs of a node weighted by the share of target pods that cannot use them."""
    t = TARGET if target is None else target
    return sum(p * free for k, p in t.items() if free < k)


def fgd_score(delta: float) -> int:
    """FGD's node score (``fgd_score.go``): ``⌊100 · sigmoid(−Δ)⌋``, Δ = the node's change in fragmentation
    (GPUs) if the pod lands there. No change scores 50; a node whose fragmentation shrinks scores more."""
    return int(100.0 / (1.0 + math.exp(delta)))


def plugin_workload(seed: int = 0, nodes: int = NODES, gpus: int = GPUS_PER_NODE,
                    target: Optional[dict[int, float]] = None) -> str:
    """The lab's scenario for ``seed``: ``nodes`` × ``gpus`` A100s and pods ``job-000`` … whose GPU count
    follows ``target``, arriving at random (mean :data:`MEAN_INTERARRIVAL_S`) during
    :data:`ARRIVAL_WINDOW_S` and each running a random :data:`RUN_TIME_S`. Same seed, same YAML."""
    t = TARGET if target is None else target
    return _plugin_workload(seed, nodes, gpus, tuple(t.items()))


@functools.lru_cache(maxsize=32)
def _plugin_workload(seed: int, nodes: int, gpus: int, target: tuple[tuple[int, float], ...]) -> str:
    """plugin_workload's YAML, made once per argument set (the lab's checks run each seed's workload under
    several schedulers; YAML emitting is pure Python and cost more than a run)."""
    rng = random.Random(seed)
    sizes, weights = [k for k, _ in target], [p for _, p in target]
    docs: list[dict] = [
        {"apiVersion": "gpusim.io/v1alpha1", "kind": "Simulation", "metadata": {"name": f"fragmentation-{seed}"},
         "spec": {"seed": seed}},
        {"apiVersion": "gpusim.io/v1alpha1", "kind": "NodePool", "metadata": {"name": "a100"},
         "spec": {"count": nodes, "gpu": {"model": MODEL, "count": gpus}, "cpu": "128", "memory": "1Ti"}}]
    at, i = 0.0, 0
    while True:
        at += rng.expovariate(1.0 / MEAN_INTERARRIVAL_S)
        if at >= ARRIVAL_WINDOW_S:
            break
        k = rng.choices(sizes, weights)[0]
        run = rng.randint(*RUN_TIME_S)
        docs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"job-{i:03d}",
                                  "annotations": {"gpusim.io/submit-at": f"{int(at)}s", "gpusim.io/duration": f"{run}s"}},
                     "spec": {"restartPolicy": "Never", "containers": [{
                         "name": "worker", "image": IMAGE,
                         "resources": {"requests": {"cpu": str(CPU_PER_GPU * k), "memory": f"{MEMORY_PER_GPU_GI * k}Gi"},
                                       "limits": {NVIDIA_GPU: k}}}]}})
        i += 1
    return yaml.safe_dump_all(docs, sort_keys=False)


def with_priority_class(text: str, gpus: int, value: int, name: str = "gpu-priority",
                        preemption_policy: str = "Never") -> str:
    """A :func:`plugin_workload` scenario in which every pod asking for ``gpus`` GPUs uses a new
    PriorityClass ``name`` (``value``, ``preemptionPolicy``; ``Never`` only moves the pods ahead in the
    scheduling queue, as PrioritySort orders by priority, and evicts nobody)."""
    docs = [d for d in yaml.safe_load_all(text) if d]
    for d in docs:
        if d.get("kind") == "Pod" and sum(int((c.get("resources") or {}).get("limits", {}).get(NVIDIA_GPU, 0))
                                          for c in d["spec"]["containers"]) == gpus:
            d["spec"]["priorityClassName"] = name
    docs.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                 "value": value, "preemptionPolicy": preemption_policy})
    return yaml.safe_dump_all(docs, sort_keys=False)


@dataclass(frozen=True)
class FragmentationReport:
    """One run measured over ``[0, until)``: time-averaged cluster fragmentation (GPUs), its share of the
    idle GPUs, GPUs allocated on average, and how long pods waited from creation to running, by size."""

    fragmentation: float
    fragmentation_of_idle: float
    allocated: float
    capacity: int
    wait_by_size: dict[int, float]
    unscheduled: int
    until: float

    def line(self) -> str:
        waits = ", ".join(f"{k} GPU {w / 60:.1f} min" for k, w in sorted(self.wait_by_size.items()))
        return (f"fragmentation {self.fragmentation:.2f} GPUs ({self.fragmentation_of_idle:.0%} of idle), "
                f"allocated {self.allocated:.1f}/{self.capacity} GPUs; mean wait {waits}")


def fragmentation_over_time(result, target: Optional[dict[int, float]] = None) -> list[tuple[float, float, int]]:
    """``(time, cluster fragmentation, allocated GPUs)`` at every change of the GPUs pods hold."""
    capacity = {n: c for n, (_m, c) in result.scenario.gpus.items()}
    changes: dict[float, dict[str, int]] = {}
    for h in result.ctx.holdings:
        if h.resource != NVIDIA_GPU or h.node not in capacity:
            continue
        changes.setdefault(h.start, {}).setdefault(h.node, 0)
        changes[h.start][h.node] += 1
        if h.end is not None:
            changes.setdefault(h.end, {}).setdefault(h.node, 0)
            changes[h.end][h.node] -= 1
    used = {n: 0 for n in capacity}
    out = [(0.0, sum(node_fragmentation(c, target) for c in capacity.values()), 0)]
    for t in sorted(changes):
        for n, d in changes[t].items():
            used[n] += d
        frag = sum(node_fragmentation(capacity[n] - used[n], target) for n in capacity)
        out.append((t, frag, sum(used.values())))
    return out


def fragmentation_report(result, until: float = ARRIVAL_WINDOW_S,
                         target: Optional[dict[int, float]] = None) -> FragmentationReport:
    """Measure a finished run over ``[0, until)`` (default: while pods arrive)."""
    series = fragmentation_over_time(result, target)
    capacity = sum(c for _m, c in result.scenario.gpus.values())
    frag = alloc = idle = 0.0
    for (t0, f, a), nxt in zip(series, series[1:] + [(math.inf, 0.0, 0)]):
        span = max(0.0, min(nxt[0], until) - min(t0, until))
        frag += f * span
        alloc += a * span
        idle += (capacity - a) * span
    from ..metrics import pod_records
    sizes = {p.metadata.name: _gpus(p) for p in result.pods()}
    waits: dict[int, list[float]] = {}
    unscheduled = 0
    for rec in pod_records(result):
        if rec.created is None or rec.created >= until or rec.name not in sizes:
            continue
        if rec.started is None:
            unscheduled += 1
        waits.setdefault(sizes[rec.name], []).append((rec.started if rec.started is not None else result.end)
                                                     - rec.created)
    return FragmentationReport(frag / until, frag / idle if idle else 0.0, alloc / until, capacity,
                               {k: sum(v) / len(v) for k, v in waits.items()}, unscheduled, until)


def _gpus(pod) -> int:
    from ..api.quantity import parse_quantity
    return sum(int(parse_quantity((c.resources.limits if c.resources else {}).get(NVIDIA_GPU, 0)))
               for c in pod.spec.containers)


def compare(builds: dict, seeds: tuple[int, ...] = (0,), until: float = ARRIVAL_WINDOW_S,
            target: Optional[dict[int, float]] = None) -> dict:
    """Run :func:`plugin_workload` for every seed under every scheduler build (name → ``SchedulerBuild``):
    name → seed → (Result, FragmentationReport). ``target`` (default :data:`TARGET`) is both the workload's
    mix of GPU counts and the mix the fragmentation is measured against."""
    return {name: {s: (r := b.run(text=plugin_workload(s, target=target)), fragmentation_report(r, until, target))
                   for s in seeds}
            for name, b in builds.items()}


def format_comparison(cmp: dict, size: int = 8) -> str:
    """One row per scheduler: time-averaged fragmentation (GPUs) per seed, the mean, and the mean wait of
    ``size``-GPU pods over the seeds."""
    from ..views.kubectl import _table
    seeds = sorted(next(iter(cmp.values())))
    rows = [["SCHEDULER"] + [f"SEED {s}" for s in seeds] + ["MEAN FRAGMENTATION", "ALLOCATED", f"{size}-GPU WAIT"]]
    for name, by_seed in cmp.items():
        reps = [by_seed[s][1] for s in seeds]
        rows.append([name] + [f"{r.fragmentation:.2f}" for r in reps]
                    + [f"{sum(r.fragmentation for r in reps) / len(reps):.2f} GPUs",
                       f"{sum(r.allocated for r in reps) / len(reps):.1f}/{reps[0].capacity}",
                       f"{sum(r.wait_by_size.get(size, 0.0) for r in reps) / len(reps) / 60:.0f} min"])
    return _table(rows)
