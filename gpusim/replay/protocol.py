"""The FGD paper's experiment on the Alibaba trace (mirrors hkust-adsl/kubernetes-scheduler-simulator
pkg/simulator/core.go ``Simulate``, simulator.go ``SortClusterPods``/``TunePodsByNodeTotalResource``/
``SchedulePods``, analysis.go ``ClusterGpuFragReport``, scripts/generate_config_and_run.py and
experiments/analysis/merge_{alloc,frag}_discrete*.py).

1. The cluster: the 1,213 GPU nodes. The target workload: the trace's typical pods (CPU pods included,
   95 %, step 1), from the original pods.
2. Order: the pods sorted by name, then shuffled with the run's seed.
3. Tuning to ``tune`` × cluster GPU capacity (1.3): while the requests fall short, append a copy of a
   pod drawn uniformly from the original trace, stopping before the next would pass the target (the
   simulator compares the copy's *per-GPU* milli-GPU there, and adds its total); if they exceed it, remove
   random pods instead. Copies come after the shuffled originals.
4. Each pod is scheduled once (``engine.OneShotScheduler``) with the policy's score plugin alone, Filter =
   NodeResourcesFit + Open-Gpu-Share, ``percentageOfNodesToScore: 100``; a pod that fits nowhere is
   dropped. The other default filters have nothing to check here (no taints, selectors, affinities,
   ports or spread constraints) and are left out of the profile, as PostFilter is (equal priorities:
   preemption never finds victims).
5. After every pod: arrived milli-GPU (failed pods included), allocated milli-GPU and the cluster's
   fragmentation against the target workload. The curve samples them at arrived = 0, 1, …, 130 % of
   GPU capacity as the authors' scripts do (events whose rounded arrival is that percentage, else within
   ±1, averaged).

One RNG (``random.Random(seed)``) drives the shuffle, the tuning and the scheduler's draws, as the
simulator's global ``math/rand``; Go's generator is not reproduced, so seeds 42…51 are not the
authors' exact runs, only runs of the same experiment.
"""
from __future__ import annotations

import dataclasses
import random
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from ..api.kubescheduler_config_v1 import KubeSchedulerConfiguration
from ..api.errors import InputError
from ..api.schema import decode
from ..scheduler.frag import TargetPod, get_typical_pods
from ..scheduler.gpushare import MILLI
from ..scheduler.plugins import (bestfitscore, dotproductscore, fgdscore, gpuclusteringscore, gpupackingscore,
                                 noderesources, opengpushare, randomscore)
from . import alibaba
from .engine import OneShotScheduler

DEFAULT_TUNE = 1.3
DEFAULT_SEEDS = tuple(range(42, 52))   # generate_run_scripts.py: tune_seed 42 … 51
CURVE_POINTS = range(0, 131)
TABLE_POINTS = (80, 90, 95, 100, 130)


@dataclass(frozen=True)
class Policy:
    """One of the study's six placement policies: its score plugin and Open-Gpu-Share's GPU selection
    (generate_run_scripts.py ``MethodList``)."""

    name: str
    score_plugin: str
    gpu_sel_method: str
    args: dict = field(default_factory=dict)
    pre_score: bool = False


POLICIES: dict[str, Policy] = {p.name: p for p in (
    Policy("Random", randomscore.NAME, opengpushare.SEL_RANDOM, pre_score=True),
    Policy("DotProd", dotproductscore.NAME, opengpushare.SEL_BEST,
           {"dimExtMethod": dotproductscore.MERGE, "normMethod": dotproductscore.NORM_MAX}),
    Policy("GpuClustering", gpuclusteringscore.NAME, opengpushare.SEL_BEST),
    Policy("GpuPacking", gpupackingscore.NAME, opengpushare.SEL_BEST),
    Policy("BestFit", bestfitscore.NAME, opengpushare.SEL_BEST),
    Policy("FGD", fgdscore.NAME, fgdscore.NAME),
)}

# experiments/analysis/expected_results (the authors' cached 10-seed results), default trace:
# unallocated GPU % at arrived = 100 %, mean and standard deviation over seeds 42…51
PUBLISHED_UNALLOCATED_DEFAULT = {"Random": (13.70, 0.33), "DotProd": (9.38, 0.19), "GpuClustering": (8.35, 0.61),
                                 "GpuPacking": (8.22, 0.53), "BestFit": (7.14, 0.14), "FGD": (4.77, 0.11)}
# the published ranking, best first (Packing and Clustering swap places from seed to seed)
PUBLISHED_RANKING = ("FGD", "BestFit", "GpuPacking", "GpuClustering", "DotProd", "Random")


def policy(name: str) -> Policy:
    """A policy by its short name (``FGD``) or score plugin name (``FGDScore``), case-insensitively."""
    for p in POLICIES.values():
        if name.lower() in (p.name.lower(), p.score_plugin.lower()):
            return p
    raise InputError(f'--policy: Invalid value: "{name}": supported values: {", ".join(POLICIES)}')


def scheduler_config(p: Policy) -> dict:
    """The KubeSchedulerConfiguration the replay runs, as a YAML-shaped dict."""
    off = [{"name": "*"}]
    plugins = {
        "preFilter": {"disabled": off, "enabled": [{"name": noderesources.NAME}]},
        "filter": {"disabled": off, "enabled": [{"name": noderesources.NAME}, {"name": opengpushare.NAME}]},
        "postFilter": {"disabled": off},
        "preScore": {"disabled": off, "enabled": [{"name": p.score_plugin}] if p.pre_score else []},
        "score": {"disabled": off, "enabled": [{"name": p.score_plugin}]},
        "reserve": {"disabled": off, "enabled": [{"name": opengpushare.NAME}]},
        "permit": {"disabled": off},
    }
    config = [{"name": opengpushare.NAME, "args": {"gpuSelMethod": p.gpu_sel_method}}]
    if p.args:
        config.append({"name": p.score_plugin, "args": dict(p.args)})
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler", "percentageOfNodesToScore": 100,
                          "plugins": plugins, "pluginConfig": config}]}


def typical_pods(rows: list[alibaba.PodRow]) -> list[TargetPod]:
    """SetTypicalPods with the experiments' TypicalPodsConfig."""
    return get_typical_pods(r.resource() for r in rows)


def order_and_tune(rows: list[alibaba.PodRow], node_milli: int, tune: float, rng: random.Random) -> list[alibaba.PodRow]:
    """SortClusterPods (by name, then shuffled) and TunePodsByNodeTotalResource."""
    workload = sorted(rows, key=lambda r: r.name)
    pods = list(workload)
    rng.shuffle(pods)
    total = sum(r.gpu_milli * r.num_gpu for r in pods)
    target = tune * float(node_milli)
    if tune <= 0 or float(total) == target:
        return pods
    if float(total) > target:                               # tuneDownPods
        while float(total) > target:
            r = pods.pop(rng.randrange(len(pods)))
            total -= r.gpu_milli * r.num_gpu
        return pods
    i = 0                                                   # tuneUpPods
    while True:
        src = workload[rng.randrange(len(workload))]
        if float(total + src.gpu_milli) > target:
            break
        total += src.gpu_milli * src.num_gpu
        pods.append(src.clone(f"{src.name}-tuned-{i}"))
        i += 1
    return pods


@dataclass
class ReplayResult:
    """One run: per pod event (in arrival order) the arrived and allocated milli-GPU, the cluster's
    fragmentation (milli-GPU) and idle milli-GPU; plus the empty cluster's fragmentation."""

    trace: str
    policy: str
    seed: int
    tune: float
    nodes: int
    gpus: int
    pods: int
    failed: int
    empty_frag: float
    arrived: np.ndarray
    allocated: np.ndarray
    frag: np.ndarray
    idle: np.ndarray
    wall_seconds: float

    def curve(self) -> list[dict]:
        """The arrived = 0…130 % samples, as merge_alloc_discrete / merge_frag_discrete compute them."""
        total = self.gpus
        arrive = np.asarray([round(a / total / 10, 0) for a in self.arrived.tolist()])
        alloc = np.asarray([round(u / total / 10, 2) for u in self.allocated.tolist()])
        ratio = np.where(self.idle > 0, 100 * self.frag / np.where(self.idle > 0, self.idle, 1), 0.0)
        out = []
        for a in CURVE_POINTS:
            sel = arrive == a
            if not sel.any():
                sel = (arrive >= a - 1) & (arrive <= a + 1)
                if not sel.any():
                    continue
            out.append({"arrived": a, "allocated": round(float(alloc[sel].mean()), 2),
                        "fragTotal": round(100 * float(self.frag[sel].mean()) / 1000 / total, 2),
                        "fragIdle": round(float(ratio[sel].mean()), 2)})
        return out

    def at(self, arrived: int, curve: Optional[list[dict]] = None) -> Optional[dict]:
        for p in curve if curve is not None else self.curve():
            if p["arrived"] == arrived:
                return p
        return None

    def to_json(self) -> dict:
        """The ``-o json`` document: arrived, allocated and fragTotal in % of cluster GPU capacity;
        fragIdle, the paper's fragmentation ratio, in % of the idle GPUs."""
        curve = self.curve()
        at = {}
        for a in (100, 130):
            p = self.at(a, curve)
            if p is not None:
                at[str(a)] = {"allocated": p["allocated"], "unallocated": round(100 - p["allocated"], 2),
                              "fragTotal": p["fragTotal"]}
        return {"trace": self.trace, "policy": self.policy, "seed": self.seed, "nodes": self.nodes, "gpus": self.gpus,
                "pods": self.pods, "curve": curve, "atArrived": at,
                "emptyClusterFragTotal": round(100 * self.empty_frag / 1000 / self.gpus, 2),
                "wallSeconds": round(self.wall_seconds, 3)}


def named_nodes(rows: list[alibaba.NodeRow], rng: random.Random) -> list:
    """syncClusterResourceList: the nodes sorted by name, each renamed ``%04d-<name>`` by a random
    permutation (``rand.Perm``), and created in that order."""
    rows = sorted(rows, key=lambda r: r.name)
    perm = list(range(len(rows)))
    rng.shuffle(perm)
    out = []
    for r, p in zip(rows, perm):
        out.append(alibaba.node_object(dataclasses.replace(r, name=f"{p:04d}-{r.name}")))
    return out


def run(trace: str = "default", policy_name: str = "FGD", seed: int = 42, tune: float = DEFAULT_TUNE,
        nodes: str = "gpu_node", vectorize: bool = True, progress: bool = False, tie_break: str = "name",
        on_pod: Optional[Callable[[int], None]] = None) -> ReplayResult:
    """One FGD-protocol run of ``trace`` under ``policy_name`` with ``seed``."""
    t0 = time.perf_counter()
    if seed < 0:
        raise InputError(f"--seed: Invalid value: {seed}: must be greater than or equal to 0")
    if not tune >= 0:
        raise InputError(f"--tune: Invalid value: {tune}: must be greater than or equal to 0")
    pol = policy(policy_name)
    node_rows = alibaba.read_nodes(nodes)
    rows = alibaba.read_pods(trace)
    typical = typical_pods(rows)
    rng = random.Random(seed)
    node_milli = sum(r.gpu * MILLI for r in node_rows)
    order = order_and_tune(rows, node_milli, tune, rng)
    config = decode(KubeSchedulerConfiguration, scheduler_config(pol), "KubeSchedulerConfiguration")
    sched = OneShotScheduler(named_nodes(node_rows, rng), config, typical, rng, vectorize=vectorize,
                             tie_break=tie_break)
    table = sched.table
    gpus = int(table.ngpu.sum())
    capacity = gpus * MILLI
    empty = table.total_frag()
    n = len(order)
    arrived, allocated = np.zeros(n, np.int64), np.zeros(n, np.int64)
    frag, idle = np.zeros(n, np.float64), np.zeros(n, np.int64)
    bar = _progress(n, f"{trace} {pol.name} seed {seed}") if progress else None
    acc, failed = 0, 0
    for k, r in enumerate(order):
        acc += r.gpu_milli * r.num_gpu
        pod = alibaba.pod_object(r)
        if sched.schedule(pod) is None:
            failed += 1
        table.refresh()
        arrived[k], frag[k] = acc, table.total_frag()
        idle[k] = table.total_idle()
        allocated[k] = capacity - idle[k]
        if bar is not None:
            bar.update(1)
        if on_pod is not None:
            on_pod(k)
    if bar is not None:
        bar.close()
    return ReplayResult(trace, pol.name, seed, tune, len(node_rows), gpus, n, failed, empty, arrived, allocated,
                        frag, idle, time.perf_counter() - t0)


def _progress(total: int, desc: str) -> Any:
    from tqdm import tqdm
    return tqdm(total=total, desc=desc, unit="pod", leave=False)
