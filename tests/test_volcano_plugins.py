"""Volcano's plugins as pure functions, checked against the reference sheet (§7.4): gang's JobValid /
JobReady / JobPipelined / JobStarving, proportion's water-filling of deserved shares, DRF's dominant
share and job order, binpack's score formula, and how a session combines plugins tier by tier."""
from __future__ import annotations

import pytest

from gpusim import water_filling
from gpusim.volcano.api import (ALLOCATED, BOUND, PENDING, PIPELINED, RUNNING, SUCCEEDED, FitErrors, JobInfo,
                                TaskInfo, resource)
from gpusim.volcano.conf import parse
from gpusim.volcano.framework import PERMIT, Session
from gpusim.volcano.plugins import binpack, drf, gang

GPU = "nvidia.com/gpu"


def job(statuses: list[str], min_available: int, uid="ns/j", per_task=None, roles=None) -> JobInfo:
    j = JobInfo(uid, uid.split("/")[1], "ns", "default", None, "Inqueue", min_available, per_task or {}, 0, 0.0, None)
    for i, s in enumerate(statuses):
        j.add_task(TaskInfo(f"{uid}-{i}", f"t{i}", "ns", uid, None, s, resource({GPU: 1}),
                            task_role=(roles[i] if roles else "worker"), index=i))
    return j


@pytest.mark.parametrize("statuses, min_available, valid, ready, pipelined, starving", [
    ([PENDING] * 4, 4, True, False, False, True),
    ([RUNNING] * 3 + [PENDING], 4, True, False, False, True),
    ([RUNNING] * 4, 4, True, True, True, False),
    ([ALLOCATED, ALLOCATED, BOUND, SUCCEEDED], 4, True, True, True, False),
    ([RUNNING, RUNNING, PIPELINED, PIPELINED], 4, True, False, True, False),
    ([RUNNING, "Failed", "Failed", "Failed"], 2, False, False, False, True),
    ([RUNNING, RUNNING], 1, True, True, True, False),
])
def test_gang_job_valid_ready_pipelined(statuses, min_available, valid, ready, pipelined, starving):
    j = job(statuses, min_available)
    assert (gang.job_valid(j) is None) == valid
    assert gang.job_ready(j) == ready
    assert (gang.job_pipelined(j) == PERMIT) == pipelined
    assert gang.job_starving(j) == starving


def test_gang_job_valid_messages():
    assert gang.job_valid(job([RUNNING, "Failed", "Failed"], 2)) == (
        False, "NotEnoughTasks", "Not enough valid tasks for gang-scheduling, valid: 1, min: 2")
    j = job([PENDING, PENDING, "Failed"], 2, per_task={"ps": 1, "worker": 1}, roles=["worker", "worker", "ps"])
    assert gang.job_valid(j) == (False, "NotEnoughPodsOfTask", "Not enough valid pods of each task for gang-scheduling")


def test_gang_condition_message_counts_tasks_allocated_this_session():
    j = job([PENDING] * 8, 8)
    for t in list(j.tasks.values())[:7]:
        t.last_tx = (ALLOCATED, "a100-0")                  # allocated, then discarded
    last = list(j.tasks.values())[7]
    j.nodes_fit_errors[last.uid] = FitErrors({"a100-0": ["Insufficient nvidia.com/gpu"],
                                              "a100-1": ["Insufficient nvidia.com/gpu"]})
    assert gang.unschedulable_message(j) == ("1/8 tasks in gang unschedulable: pod group is not ready, "
                                             "8 Pending, 8 minAvailable; Pending: 1 Unschedulable, 7 Schedulable. "
                                             "Origin reason is t7: 0/2 nodes are unavailable: 2 Insufficient nvidia.com/gpu.")
    assert j.task_scheduling_reason(last) == ("Unschedulable", "0/2 nodes are unavailable: 2 Insufficient nvidia.com/gpu.")
    first = list(j.tasks.values())[0]
    assert j.task_scheduling_reason(first) == (
        "Schedulable", "Pod ns/t0 can possibly be assigned to a100-0, once minAvailable is satisfied")
    first.last_tx = ("Pipelined", "a100-1")
    assert j.task_scheduling_reason(first) == ("Unschedulable", "Pod ns/t0 can possibly be assigned to a100-1, "
                                                                "once resource is released and minAvailable is satisfied")


# proportion: queue → (weight, request[, capability[, guarantee]]), GPUs; total 8 GPUs
@pytest.mark.parametrize("queues, deserved", [
    ({"a": (1, {GPU: 8}), "b": (3, {GPU: 6})}, {"a": 2, "b": 6}),
    ({"a": (1, {GPU: 2}), "b": (1, {GPU: 10})}, {"a": 2, "b": 6}),        # a is met, b gets the rest
    ({"a": (1, {GPU: 8}, {GPU: 3}), "b": (1, {GPU: 8})}, {"a": 3, "b": 5}),  # a is capped by its capability
    ({"a": (1, {GPU: 1}, None, {GPU: 2}), "b": (1, {GPU: 8})}, {"a": 2, "b": 6}),  # a keeps its guarantee
    ({"a": (1, {GPU: 3}), "b": (1, {GPU: 3})}, {"a": 3, "b": 3}),          # enough for both: 2 GPUs stay free
    ({"a": (2, {GPU: 8}), "b": (1, {GPU: 8}), "c": (1, {GPU: 8})}, {"a": 4, "b": 2, "c": 2}),
])
def test_proportion_water_filling(queues, deserved):
    rows = water_filling(queues, {GPU: 8})
    last = {r["queue"]: r["deserved"].get(GPU, 0) for r in rows if r["round"] == rows[-1]["round"]}
    assert last == pytest.approx(deserved)


def test_water_filling_rounds():
    rows = water_filling({"a": (1, {GPU: 8}, {GPU: 3}), "b": (1, {GPU: 8})}, {GPU: 8})
    by_round = [(r["round"], r["queue"], r["deserved"].get(GPU, 0), r["remaining"].get(GPU, 0)) for r in rows]
    assert by_round == [(1, "a", 3, 1), (1, "b", 4, 1), (2, "a", 3, 0.5), (2, "b", 4.5, 0.5),
                        (3, "a", 3, 0), (3, "b", 5, 0)]


# binpack: request cpu 1 core + 1 GPU on a node with 8 cores / 4 GPUs, 2 cores / 2 GPUs used
REQ = {"cpu": 1000, "memory": 0, GPU: 1}
ALLOC = {"cpu": 8000, "memory": 64 * 2**30, GPU: 4}


@pytest.mark.parametrize("args, used, expected", [
    ({}, {"cpu": 2000, GPU: 2}, 100 * (3000 / 8000)),                                   # only cpu is weighted
    ({"binpack.resources": GPU, f"binpack.resources.{GPU}": 5}, {"cpu": 2000, GPU: 2},
     100 * (1 * 3000 / 8000 + 5 * 3 / 4) / (1 + 5)),
    ({"binpack.weight": 10, "binpack.resources": GPU, f"binpack.resources.{GPU}": 5}, {"cpu": 2000, GPU: 2},
     10 * 100 * (3000 / 8000 + 5 * 3 / 4) / 6),
    ({"binpack.resources": GPU}, {"cpu": 2000, GPU: 0}, 100 * (3000 / 8000 + 1 / 4) / 2),
    ({"binpack.resources": GPU}, {"cpu": 2000, GPU: 4}, 100 * (3000 / 8000 + 0) / 2),   # GPU over capacity: 0, weight counts
    ({"binpack.cpu": 0, "binpack.resources": GPU}, {"cpu": 2000, GPU: 2}, 100 * (0 + 3 / 4) / 1),
    ({"binpack.resources": GPU, f"binpack.resources.{GPU}": -3}, {"cpu": 2000, GPU: 2}, 100 * (3000 / 8000 + 3 / 4) / 2),
])
def test_binpack_score(args, used, expected):
    w, res = binpack.weights(args)
    assert binpack.score(REQ, ALLOC, used, w, res) == pytest.approx(expected)


def session(conf_text: str, jobs: dict, total: dict) -> Session:
    from gpusim.volcano.plugins import BUILDERS
    c = parse(conf_text)
    ssn = Session("1", None, c, jobs, {}, {}, total)
    for t in c.tiers:
        for p in t.plugins:
            BUILDERS[p.name](p.arguments).on_session_open(ssn)
    return ssn


def test_drf_orders_jobs_by_dominant_share():
    total = resource({"cpu": 64000, "memory": 256 * 2**30, GPU: 8})
    a = job([RUNNING] * 4, 1, uid="ns/a")                # 4 of 8 GPUs: share 0.5
    b = job([RUNNING], 1, uid="ns/b")                    # 1 GPU: 0.125
    b.allocated["cpu"] = 32000                          # half the CPUs: dominant share 0.5 as well
    c = job([RUNNING] * 2, 1, uid="ns/c")               # 0.25
    assert drf.dominant_share(a.allocated, total) == 0.5
    assert drf.dominant_share(b.allocated, total) == 0.5
    ssn = session("actions: allocate\ntiers: [{plugins: [{name: drf}]}]", {"ns/a": a, "ns/b": b, "ns/c": c}, total)
    order = sorted([a, b, c], key=__import__("functools").cmp_to_key(
        lambda l, r: -1 if ssn.job_order_fn(l, r) else 1))
    assert [j.uid for j in order] == ["ns/c", "ns/a", "ns/b"]   # lowest share first; ties by creation, uid


def test_gang_before_drf_in_job_order():
    total = resource({GPU: 8})
    ready = job([RUNNING] * 2, 2, uid="ns/ready")       # ready, share 0.25
    starving = job([RUNNING] * 3 + [PENDING], 4, uid="ns/starving")   # not ready, share 0.375
    ssn = session("actions: allocate\ntiers: [{plugins: [{name: gang}]}, {plugins: [{name: drf}]}]",
                  {"ns/ready": ready, "ns/starving": starving}, total)
    assert ssn.job_order_fn(starving, ready)              # tier 1 (gang) decides: not-ready first
    ssn = session("actions: allocate\ntiers: [{plugins: [{name: drf}]}]",
                  {"ns/ready": ready, "ns/starving": starving}, total)
    assert ssn.job_order_fn(ready, starving)              # DRF alone: lower share first


def test_preemptable_victims_are_intersected_within_a_tier():
    total = resource({GPU: 8})
    big = job([RUNNING] * 4, 2, uid="ns/big")            # may lose 2 tasks (gang)
    small = job([PENDING], 1, uid="ns/small")
    ssn = session("actions: preempt\ntiers: [{plugins: [{name: gang}, {name: conformance}]}]",
                  {"ns/big": big, "ns/small": small}, total)
    for t in big.tasks.values():
        t.pod = type("P", (), {"spec": type("S", (), {"priority_class_name": ""})()})()
    victims = ssn.preemptable(next(iter(small.tasks.values())), list(big.tasks.values()))
    assert len(victims) == 2
    ssn = session("actions: preempt\ntiers: [{plugins: [{name: gang, enablePreemptable: false}, {name: conformance}]}]",
                  {"ns/big": big, "ns/small": small}, total)
    assert len(ssn.preemptable(next(iter(small.tasks.values())), list(big.tasks.values()))) == 4


@pytest.mark.parametrize("votes, expected", [
    ([[1, 0]], True),             # a Permit in the tier
    ([[0, 0], [0]], True),        # nobody decides: yes
    ([[1, -1]], False),           # a Reject anywhere in the deciding tier rejects
    ([[1], [-1]], True),          # tier 1 permitted: tier 2 is not asked
    ([[0], [-1]], False),         # tier 1 abstained: tier 2 rejects
])
def test_pipelined_and_enqueueable_votes(votes, expected):
    names = [[f"p{i}{j}" for j in range(len(t))] for i, t in enumerate(votes)]
    ssn = Session("1", None, parse("actions: allocate\ntiers: []"), {}, {}, {}, resource())
    from gpusim.volcano.conf import PluginOption, Tier
    ssn.tiers = [Tier([PluginOption(n) for n in t]) for t in names]
    for t, vs in zip(names, votes):
        for n, v in zip(t, vs):
            ssn.add_fn("job_pipelined", n, lambda job, v=v: v)
            ssn.add_fn("job_enqueueable", n, lambda job, v=v: v)
    assert ssn.job_pipelined(None) == expected and ssn.job_enqueueable(None) == expected


def test_ready_allocatable_are_and_overused_is_or():
    from gpusim.volcano.conf import PluginOption, Tier
    ssn = Session("1", None, parse("actions: allocate\ntiers: []"), {}, {}, {}, resource())
    ssn.tiers = [Tier([PluginOption("a"), PluginOption("b", {"job_ready": False})])]
    ssn.add_fn("job_ready", "a", lambda j: True)
    ssn.add_fn("job_ready", "b", lambda j: False)          # switched off by enableJobReady: false
    ssn.add_fn("overused", "a", lambda q: False)
    ssn.add_fn("overused", "b", lambda q: True)
    ssn.add_fn("allocatable", "a", lambda q, t: True)
    ssn.add_fn("allocatable", "b", lambda q, t: False)
    assert ssn.job_ready(None) and ssn.overused(None) and not ssn.allocatable(None, None)


def test_build_victims_priority_queue_orders_by_queue_then_job_then_task():
    # framework/session_plugins.go BuildVictimsPriorityQueue (master): victims of one job by reverse TaskOrder,
    # of jobs in different queues by VictimQueueOrder (no plugin: reverse QueueOrder), else reverse JobOrder
    from types import SimpleNamespace

    from gpusim.volcano.api import QueueInfo
    x = job([RUNNING] * 2, 1, uid="ns/x")
    y = job([RUNNING], 1, uid="ns/y")
    z = job([RUNNING], 1, uid="ns/z")
    p = job([PENDING], 1, uid="ns/p")
    for j, q, created in ((x, "q1", 0.0), (y, "q1", 1.0), (z, "q2", 0.0), (p, "q3", 0.0)):
        j.queue, j.creation_timestamp = q, created
    for t in (*x.tasks.values(), *y.tasks.values(), *z.tasks.values()):
        t.pod = SimpleNamespace(metadata=SimpleNamespace(creation_timestamp=0.0))
    queues = {n: QueueInfo(n, n, 1, 0, None, float(i)) for i, n in enumerate(("q1", "q2", "q3"))}
    c = parse("actions: reclaim\ntiers: [{plugins: [{name: gang}]}]")
    ssn = Session("1", None, c, {j.uid: j for j in (x, y, z, p)}, {}, queues, resource({GPU: 8}))
    victims = [*x.tasks.values(), *y.tasks.values(), *z.tasks.values()]
    order = ssn.build_victims_priority_queue(victims, next(iter(p.tasks.values())))
    popped = []
    while not order.empty():
        popped.append(order.pop().uid)
    # q2 (created later) before q1; in q1 job y (created later) before x; in x task 1 before task 0
    assert popped == ["ns/z-0", "ns/y-0", "ns/x-1", "ns/x-0"]
