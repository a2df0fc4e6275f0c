"""scheduler-plugins' CapacityScheduling against rows of its own test file:
kubernetes-sigs/scheduler-plugins pkg/capacityscheduling/capacity_scheduling_test.go (master @ 075daae, the
v0.35 line).

- TestPreFilter (3 rows), TestReserve (1 row, 2 steps), TestUnreserve (1 row, 3 steps), TestAddElasticQuota
  (4 rows): on the plugin's own objects, as upstream calls them (``ElasticQuotaInfo`` with ``used`` set, no
  apiserver).
- TestDryRunPreemption (2 rows) and TestPostFilter (3 rows): as scenarios, because gpusim's PostFilter runs
  inside a scheduling cycle: node-a with 150 bytes of memory full of 50-byte pods, ElasticQuotas whose ``used``
  is what those pods add up to, a 50-byte preemptor; DryRunPreemption's victims are the pods the run preempts,
  PostFilter's nominated node-a is where the preemptor then runs.
Not ported: TestPodEligibleToPreemptOthers (terminating pods and a nominated node's status from the previous
cycle cannot be set up in a scenario).
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Optional

import pytest

from gpusim.api.core_v1 import Container, Pod, PodSpec, ResourceRequirements
from gpusim.api.meta import ObjectMeta
from gpusim.cluster.scenario import load
from gpusim.cluster.simulation import Simulation
from gpusim.scheduler.framework import Code, PodInfo
from gpusim.scheduler.plugins.capacityscheduling import (LOWER_BOUND_OF_MIN, UPPER_BOUND_OF_MAX, CapacityScheduling,
                                                          ElasticQuotaInfo)
from test_capacityscheduling import CONFIG as PROFILE, events, namespace


def make_pod(name: str, ns: str, mem: int) -> PodInfo:
    """makePod(name, ns, memReq, 0, 0, 0, uid=name, node)."""
    c = Container(name="c", image="x", resources=ResourceRequirements(requests={"memory": str(mem)}))
    return PodInfo(Pod(metadata=ObjectMeta(name=name, namespace=ns, uid=name), spec=PodSpec(containers=[c])))


def eq(ns: str, min_mem: int, max_mem: int, used_mem: int, pods: tuple[str, ...] = ()) -> ElasticQuotaInfo:
    info = ElasticQuotaInfo(ns, {"memory": str(min_mem)}, {"memory": str(max_mem)})
    info.used = {"memory": used_mem}
    info.pods = {uid: {"memory": 0} for uid in pods}
    return info


def plugin(infos: dict[str, ElasticQuotaInfo]) -> CapacityScheduling:
    cs = CapacityScheduling(None, SimpleNamespace(api=None, nominated_pods_for_node=lambda node: []))
    cs.infos = infos
    return cs


# --- TestPreFilter ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("pods, infos, want", [
    pytest.param([("ns1-p1", "ns1", 500), ("ns1-p2", "ns1", 1800)], {"ns1": eq("ns1", 1000, 2000, 300)},
                 [Code.Success, Code.Unschedulable], id="pod subjects to ElasticQuota"),
    pytest.param([("ns2-p1", "ns2", 500)], {"ns1": eq("ns1", 1000, 2000, 1800), "ns2": eq("ns2", 1000, 2000, 200)},
                 [Code.Unschedulable], id="the sum of used is bigger than the sum of min"),
    pytest.param([("ns2-p1", "ns2", 500)], {}, [Code.Success], id="without elasticQuotaInfo"),
])
def test_pre_filter(pods, infos, want):
    cs = plugin(infos)
    got = [cs.pre_filter({}, make_pod(*p), [])[1].code for p in pods]
    assert got == want


# --- TestReserve / TestUnreserve ----------------------------------------------------------------------------
def test_reserve():
    cs = plugin({"ns1": eq("ns1", 1000, 2000, 300)})
    for pod in (make_pod("t1-p1", "ns1", 50), make_pod("t1-p2", "ns2", 50)):
        assert cs.reserve({}, pod, "node-a").code == Code.Success
        assert set(cs.infos["ns1"].pods) == {"t1-p1"} and cs.infos["ns1"].used == {"memory": 350}


def test_unreserve():
    cs = plugin({"ns1": eq("ns1", 1000, 2000, 300, pods=("t1-p3", "t1-p4"))})
    cs.infos["ns1"].pods["t1-p3"] = {"memory": 50}         # t1-p3 was counted with its 50 bytes
    want = [({"t1-p3", "t1-p4"}, 300), ({"t1-p3", "t1-p4"}, 300), ({"t1-p4"}, 250)]
    for pod, (pods, used) in zip((make_pod("t1-p1", "ns1", 50), make_pod("t1-p2", "ns2", 50),
                                  make_pod("t1-p3", "ns1", 50)), want):
        cs.unreserve({}, pod, "node-a")
        assert set(cs.infos["ns1"].pods) == pods and cs.infos["ns1"].used["memory"] == used


# --- TestAddElasticQuota ------------------------------------------------------------------------------------
BOUND = ("cpu", "memory", "ephemeral-storage")


@pytest.mark.parametrize("max_, min_, want_max, want_min", [
    pytest.param({"cpu": "100m", "memory": "1000"}, {"cpu": "10m", "memory": "100"}, {"cpu": 100, "memory": 1000},
                 {"cpu": 10, "memory": 100}, id="Add ElasticQuota"),
    pytest.param(None, {"cpu": "10m", "memory": "100"}, {k: UPPER_BOUND_OF_MAX for k in BOUND},
                 {"cpu": 10, "memory": 100}, id="Add ElasticQuota without Max"),
    pytest.param({"cpu": "100m", "memory": "1000"}, None, {"cpu": 100, "memory": 1000},
                 {k: LOWER_BOUND_OF_MIN for k in BOUND}, id="Add ElasticQuota without Min"),
    pytest.param(None, None, {k: UPPER_BOUND_OF_MAX for k in BOUND}, {k: LOWER_BOUND_OF_MIN for k in BOUND},
                 id="Add ElasticQuota without Max and Min"),
])
def test_add_elastic_quota(max_, min_, want_max, want_min):
    info = ElasticQuotaInfo("ns1", min_, max_)
    assert info.max == want_max
    assert {k: info.min.get(k, LOWER_BOUND_OF_MIN) for k in want_min} == want_min and info.used == {}


# --- TestDryRunPreemption / TestPostFilter, as scenarios ----------------------------------------------------
CONFIG = PROFILE + """---
apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {allocatable: {cpu: "4", memory: "150", pods: "110"}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: mid}
value: 100
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
"""


def mem_pod(name: str, ns: str, prio: str, at: Optional[str] = None) -> str:
    ann = "gpusim.io/duration: 1h" + (f", gpusim.io/submit-at: {at}" if at else "")
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {ns}, annotations: {{{ann}}}}}
spec:
  priorityClassName: {prio}
  containers: [{{name: c, image: x, resources: {{requests: {{memory: "50"}}}}}}]
"""


def mem_quota(ns: str, min_: int, max_: int) -> str:
    return f"""apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata: {{name: eq, namespace: {ns}}}
spec: {{min: {{memory: "{min_}"}}, max: {{memory: "{max_}"}}}}
"""


def preempt(pods: list[str], quotas: list[str]) -> tuple[list[str], str]:
    """(the pods preempted for t1-p, the node t1-p then runs on)."""
    docs = [CONFIG, namespace("ns1"), namespace("ns2"), *quotas, *pods, mem_pod("t1-p", "ns1", "high", at="10s")]
    sim = Simulation(load(texts=[("<text>", "---\n".join(docs))]))
    sim.ctx.env.run(until=60)
    assert [n for _, n, _ in events(sim, "FailedScheduling") if n == "t1-p"], "the preemptor first fails to fit"
    victims = sorted(f"{ns}/{n}" for ns, n, _ in events(sim, "Preempted"))
    return victims, sim.ctx.api.get("Pod", "ns1", "t1-p").spec.node_name


MID3 = [mem_pod("t1-p1", "ns1", "mid"), mem_pod("t1-p2", "ns2", "mid"), mem_pod("t1-p3", "ns2", "mid")]


@pytest.mark.parametrize("pods, quotas, want", [
    pytest.param(MID3, [mem_quota("ns1", 50, 200), mem_quota("ns2", 200, 200)], ["ns1/t1-p1"],
                 id="in-namespace preemption"),
    pytest.param([mem_pod("t1-p1", "ns1", "mid"), mem_pod("t1-p2", "ns2", "high"), mem_pod("t1-p3", "ns2", "mid")],
                 [mem_quota("ns1", 150, 200), mem_quota("ns2", 50, 200)], ["ns2/t1-p3"],
                 id="cross-namespace preemption"),
])
def test_dry_run_preemption(pods, quotas, want):
    """TestDryRunPreemption: the candidate's victims on node-a."""
    assert preempt(pods, quotas) == (want, "node-a")


@pytest.mark.parametrize("quotas", [
    pytest.param([mem_quota("ns1", 50, 200), mem_quota("ns2", 200, 200)], id="in-namespace preemption"),
    pytest.param([mem_quota("ns1", 150, 200), mem_quota("ns2", 50, 200)], id="cross-namespace preemption"),
    pytest.param([], id="without elasticQuotas"),
])
def test_post_filter(quotas):
    """TestPostFilter: Success with node-a nominated (upstream checks the result, not the victims): one 50-byte
    victim goes and the preemptor runs on node-a."""
    victims, node = preempt(MID3, quotas)
    assert len(victims) == 1 and node == "node-a"
