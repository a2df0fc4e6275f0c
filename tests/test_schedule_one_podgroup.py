"""The 1.36 pod group scheduling cycle (gpusim/scheduler/schedule_one_podgroup.py).

Ported rows: kubernetes pkg/scheduler/schedule_one_podgroup_test.go at commit
008b3652959ca58af8be3fb5b6ecfe9ae7638282 — TestPodGroupInfoForPod (2 rows), TestFrameworkForPodGroup (3),
TestSkipPodGroupPodSchedule (1), TestPodGroupSchedulingAlgorithm (12 of 14 rows, TopologyAwareWorkloadScheduling
off), TestSubmitPodGroupAlgorithmResult (16 of 16 rows), TestUpdatePodGroupCondition (12 of 12 rows). As upstream,
a fake plugin (Filter, PostFilter, Permit by pod name) runs in a real scheduler with one node; pods carry a
scheduling gate so that only the test drives them.

Rows not ported:
- TestPodGroupSchedulingAlgorithm "Any filter returned Error" and "Any filter returned Error while waiting on
  preemption": gpusim's findNodesThatFitPod keeps a Filter Error as that node's status (a FitError) instead of
  aborting the cycle with the error.
- Every TopologyAwareWorkloadScheduling=true variant, TestPodGroupSchedulingPlacementAlgorithm,
  TestPodGroupCycle_PodGroupPostFilter (workload-aware preemption), TestPodGroupCycle_UpdateSnapshotError: gpusim
  models neither placements nor workload-aware preemption nor a failing snapshot.
"""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from gpusim.api.kubescheduler_config_v1 import (KubeSchedulerConfiguration, KubeSchedulerProfile, PluginRef,
                                                Plugins, PluginSet)
from gpusim.cluster.scenario import load
from gpusim.cluster.simulation import Simulation
from gpusim.scheduler import schedule_one_podgroup as pg
from gpusim.scheduler.framework import Code, CycleState, QueuedPodInfo, Status
from gpusim.scheduler.registry import in_tree_registry

NODE = "a100-0"
U, UU, E, W, S = Code.Unschedulable, Code.UnschedulableAndUnresolvable, Code.Error, Code.Wait, Code.Success


class FakePodGroupPlugin:
    """fakePodGroupPlugin: Filter, PostFilter and Permit answer per pod name; a missing name fails."""

    name = "FakePodGroupPlugin"

    def __init__(self, filter_status=None, post_filter=None, permit=None):
        self.filter_status, self.post_filter_status, self.permit_status = filter_status or {}, post_filter or {}, permit or {}

    def filter(self, state, pi, ni):
        code = self.filter_status.get(pi.pod.metadata.name, "missing")
        return Status.new(U, "default fake filter failure") if code == "missing" else Status(code or S)

    def post_filter(self, state, pi, statuses):
        name = pi.pod.metadata.name
        if name in self.post_filter_status:
            nominated, code = self.post_filter_status[name]
            return nominated, Status(code or S)
        return None, Status.new(U, "default fake postfilter failure")

    def permit(self, state, pi, node):
        code = self.permit_status.get(pi.pod.metadata.name, "missing")
        return (Status.new(U, "default fake permit failure") if code == "missing" else Status(code or S)), 0.0


def pod(name, prio=None, sched="test-scheduler", group="pg"):
    p = f"\n  priorityClassName: p{prio}" if prio else ""
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: {name}, annotations: {{gpusim.io/duration: 1h}}}}
spec:
  restartPolicy: Never
  schedulerName: {sched}{p}
  schedulingGroup: {{podGroupName: {group}}}
  schedulingGates: [{{name: test}}]
  containers: [{{name: main, image: cuda, resources: {{limits: {{cpu: 100m}}}}}}]
"""


HEAD = """apiVersion: gpusim.io/v1alpha1
kind: Simulation
metadata: {name: s}
spec: {kubernetesVersion: "1.36", featureGates: {GenericWorkload: true}}
---
apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: a100}
spec: {count: 1, gpu: {model: A100-SXM4-80GB, count: 8}}
---
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: pg}
spec: {schedulingPolicy: {basic: {}}}
"""
CLASSES = "".join(f"---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: p{v}}}\nvalue: {v}\n"
                  for v in (100, 150, 200))


def cluster(plugin=None, pods=("p1", "p2", "p3"), extra=""):
    """A real 1.36 scheduler with the default profile and "test-scheduler": QueueSort, PreFilter, Reserve, Bind as
    default, Filter / PostFilter / Permit only the fake plugin."""
    plugin = plugin or FakePodGroupPlugin()
    registry = in_tree_registry()
    registry.register(plugin.name, lambda args, handle: plugin)
    only = PluginSet(enabled=[PluginRef(plugin.name)], disabled=[PluginRef("*")])
    text = HEAD + CLASSES + extra + "".join("---\n" + (pod(p) if isinstance(p, str) else pod(*p)) for p in pods)
    sc = load(texts=[("<text>", text)])
    sc.scheduler_config = KubeSchedulerConfiguration(profiles=[
        KubeSchedulerProfile(),
        KubeSchedulerProfile(scheduler_name="test-scheduler", plugins=Plugins(filter=only, post_filter=only,
                                                                              permit=only))])
    sim = Simulation(sc, registry=registry)
    sim.ctx.env.run(until=1)
    return sim


def qpis(sim, names):
    return [sim.scheduler.qpis[sim.ctx.api.get("Pod", "default", n).metadata.uid] for n in names]


def group(sim, names=("p1", "p2", "p3")):
    return pg.QueuedPodGroupInfo("default", "pg", qpis(sim, names))


# --- TestPodGroupInfoForPod -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, not_in_state, not_in_queue, expected", [
    ("Success with multiple pods, sorted by priority and timestamp", [], [], ["p2", "p4", "p3", "p1"]),
    ("Pods not in state or not in queue are skipped", ["p4"], ["p3"], ["p2", "p1"]),
])
def test_pod_group_info_for_pod(name, not_in_state, not_in_queue, expected):
    sim = cluster(pods=[("p1", 100), ("p2", 200), ("p3", 150), ("p4", 150)])
    s = sim.scheduler
    q1, q2, q3, q4 = qpis(sim, ["p1", "p2", "p3", "p4"])
    for q, t in ((q1, 0.0), (q2, 1.0), (q3, 2.0), (q4, 1.0)):
        q.initial_attempt_timestamp, q.gated = t, False      # AddUnschedulableIfNotPresent: in the queue, not gated
    s.queue.delete(q1.pod_info.key)                           # p1 is the popped pod
    for n in not_in_state:                                     # the pod group state does not list it
        s.assumed.add(qpis(sim, [n])[0].pod_info.key)
    for n in not_in_queue:
        s.queue.delete(qpis(sim, [n])[0].pod_info.key)
    info = pg.pod_group_info_for_pod(s, q1)
    assert info.name == "pg"
    assert [q.pod.metadata.name for q in info.queued_pod_infos] == expected
    assert [p.metadata.name for p in info.unscheduled_pods] == expected


# --- TestFrameworkForPodGroup ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, schedulers, profiles, error", [
    ("success for same scheduler name", ["sched1", "sched1"], {"sched1"}, ""),
    ("failure for different scheduler names", ["sched1", "sched2"], {"sched1", "sched2"},
     'all pods in a single pod group should have the same .spec.schedulerName set, got: "sched2" and "sched1"'),
    ("failure when profile not found", ["sched1"], {"other"}, 'profile not found for scheduler name "sched1"'),
])
def test_framework_for_pod_group(name, schedulers, profiles, error):
    sched = SimpleNamespace(frameworks={p: object() for p in profiles})
    info = pg.QueuedPodGroupInfo("default", "pg", [
        SimpleNamespace(pod=SimpleNamespace(spec=SimpleNamespace(scheduler_name=n))) for n in schedulers])
    if error:
        with pytest.raises(ValueError, match=None) as e:
            pg.framework_for_pod_group(sched, info)
        assert str(e.value) == error
    else:
        assert pg.framework_for_pod_group(sched, info) is sched.frameworks["sched1"]


# --- TestSkipPodGroupPodSchedule ---------------------------------------------------------------------------------
def test_skip_pod_group_pod_schedule_drops_terminating_and_assumed_pods():
    sim = cluster()
    s = sim.scheduler
    info = group(sim)
    info.queued_pod_infos[1].pod.metadata.deletion_timestamp = 0.5      # p2 Terminating
    s.assumed.add(info.queued_pod_infos[2].pod_info.key)                # p3 assumed
    pg.skip_pod_group_pod_schedule(s, info)
    assert [q.pod.metadata.name for q in info.queued_pod_infos] == ["p1"]
    assert [p.metadata.name for p in info.unscheduled_pods] == ["p1"]


# --- TestPodGroupSchedulingAlgorithm (TopologyAwareWorkloadScheduling=false) -------------------------------------
ALL = ("p1", "p2", "p3")
N = (NODE, None)      # PostFilter nominates the node (status nil)


def each(*values):
    return dict(zip(ALL, values))


@pytest.mark.parametrize("name, filters, post_filter, permits, group_code, waiting, pod_codes, preemption", [
    ("All pods feasible", each(None, None, None), {}, each(None, None, None), S, False, [S, S, S], {}),
    ("All pods feasible, two waiting", each(None, None, None), {}, each(W, W, None), S, False, [S, S, S], {}),
    ("All pods feasible, but all waiting", each(None, None, None), {}, each(W, W, W), U, False, [S, S, S], {}),
    ("All pods feasible, but last waiting", each(None, None, None), {}, each(None, None, W), S, False, [S, S, S], {}),
    ("All pods feasible, one waiting, one unschedulable", each(None, None, None), {}, each(W, U, None), S, False,
     [S, U, S], {}),
    ("All pods require preemption", each(U, U, U), each(N, N, N), each(None, None, None), U, True, [U, U, U],
     each(True, True, True)),
    ("All pods require preemption, but waiting", each(U, U, U), each(N, N, N), each(W, W, W), U, False, [U, U, U],
     each(True, True, True)),
    ("One pod requires preemption, but waiting, two are feasible", each(U, None, None), {"p1": N}, each(W, W, None),
     U, True, [U, S, S], each(True, False, False)),
    ("One pod unschedulable, one requires preemption, one feasible", each(U, U, None),
     {"p1": N, "p2": (None, U)}, {"p1": None, "p3": None}, U, True, [U, U, S], each(True, False, False)),
    ("All pods unschedulable", each(UU, U, U), {}, {}, U, False, [U, U, U], {}),
    ("Any permit returned Error", each(None, None, None), {}, each(None, E, None), E, False, [S, E], {}),
    ("Any permit returned Error while waiting on preemption", each(U, None, None), {"p1": N}, each(None, E, None),
     E, False, [U, E], {}),
])
def test_pod_group_scheduling_algorithm(name, filters, post_filter, permits, group_code, waiting, pod_codes,
                                        preemption):
    plugin = FakePodGroupPlugin(filters, post_filter, permits)
    sim = cluster(plugin)
    s = sim.scheduler
    info = group(sim)
    def usage():
        return {n: {k: v for k, v in ni.requested.values.items() if v} for n, ni in s.nodes.items()}
    before = usage()
    result = pg.pod_group_scheduling_algorithm(s, s.frameworks["test-scheduler"], info)
    assert result.status.code == group_code, result.status
    assert result.waiting_on_preemption == waiting
    assert [r.status.code for r in result.pod_results] == pod_codes
    for r in result.pod_results:
        n = r.pod.metadata.name
        if r.status.is_success() or r.requires_preemption:
            assert r.node == NODE
            if n in permits:
                assert r.permit_status.code == (permits[n] or S)
        else:
            assert r.node == "" and r.permit_status is None
        if n in preemption:
            assert r.requires_preemption == preemption[n]
    # every pod the algorithm assumed is forgotten again, and no Permit made a waiting pod
    assert not s.assumed and len(s.waiting_pods) == 0
    assert usage() == before


# --- TestSubmitPodGroupAlgorithmResult --------------------------------------------------------------------------
def ok(node=NODE, permit=None):
    return ("ok", node, permit)


def preempt(permit=None):
    return ("preempt", NODE, permit)


def bad(code=U, msg="", nominated=""):
    """An unschedulable (or failed) pod: ``nominated`` "" is clearNominatedNode, None a nil NominatingInfo."""
    return ("bad", code, msg, nominated)


BOUND, PREEMPTING, FAILED = "bound", "preempting", "failed"
SCHEDULED_TRUE = ("True", "Scheduled", "")


@pytest.mark.parametrize("name, existing, status, waiting, results, expect, condition", [
    ("All pods feasible", None, None, False, [ok(), ok(), ok()], [BOUND] * 3, SCHEDULED_TRUE),
    ("All pods feasible, but all waiting", None, (U, "not enough capacity for the gang"), False,
     [ok(permit=W)] * 3, [FAILED] * 3, ("False", "Unschedulable", "not enough capacity for the gang")),
    ("All pods feasible, but last waiting", None, None, False, [ok(), ok(), ok(permit=W)], [BOUND] * 3, SCHEDULED_TRUE),
    ("All pods feasible, one waiting, one unschedulable", None, None, False, [ok(permit=W), bad(), ok()],
     [BOUND, FAILED, BOUND], SCHEDULED_TRUE),
    ("All pods require preemption", None, (U, "waiting for preemption to complete"), True, [preempt()] * 3,
     [PREEMPTING] * 3, ("False", "Unschedulable", "waiting for preemption to complete")),
    ("All pods require preemption, but waiting", None, (U, "preemption required but not feasible"), False,
     [preempt(W)] * 3, [FAILED] * 3, ("False", "Unschedulable", "preemption required but not feasible")),
    ("One pod requires preemption, but waiting, two are feasible", None, (U, "waiting for preemption to complete"),
     True, [preempt(W), ok(permit=W), ok()], [PREEMPTING] * 3,
     ("False", "Unschedulable", "waiting for preemption to complete")),
    ("One pod unschedulable, one requires preemption, one feasible", None, (U, "waiting for preemption to complete"),
     True, [preempt(), bad(), ok()], [PREEMPTING, FAILED, PREEMPTING],
     ("False", "Unschedulable", "waiting for preemption to complete")),
    ("All pods unschedulable", None, (U, "0/3 nodes are available: insufficient cpu"), False, [bad()] * 3,
     [FAILED] * 3, ("False", "Unschedulable", "0/3 nodes are available: insufficient cpu")),
    ("All pods unschedulable with nil nominatingInfo", None, (U, "0/3 nodes are available: insufficient cpu"), False,
     [bad(nominated=None)] * 3, [FAILED] * 3, ("False", "Unschedulable", "0/3 nodes are available: insufficient cpu")),
    ("Unschedulable for the entire pod group", None, (U, "node affinity mismatch"), False, [], [FAILED] * 3,
     ("False", "Unschedulable", "node affinity mismatch")),
    ("Error for one pod", None, (E, "plugin returned error"), False, [ok(), bad(E, "plugin returned error")],
     [FAILED] * 3, ("False", "SchedulerError", "plugin returned error")),
    ("Error for one pod while waiting on preemption", None, (E, "internal failure"), False,
     [preempt(), bad(E, "internal failure")], [FAILED] * 3, ("False", "SchedulerError", "internal failure")),
    ("Already Scheduled, successful cycle keeps condition", "True", None, False, [ok(), ok(), ok()], [BOUND] * 3,
     SCHEDULED_TRUE),
    ("Already Scheduled, rejected cycle does not regress condition", "True", (U, "extra pods could not be placed"),
     False, [bad()] * 3, [FAILED] * 3, ("True", "Scheduled", "All pods scheduled")),
    ("Already Scheduled, error cycle does not regress condition", "True", (E, ""), False, [ok(), bad(E)],
     [FAILED] * 3, ("True", "Scheduled", "All pods scheduled")),
])
def test_submit_pod_group_algorithm_result(name, existing, status, waiting, results, expect, condition):
    sim = cluster(FakePodGroupPlugin(permit=each(None, None, None)))   # upstream's profile there has no Permit plugin
    s = sim.scheduler
    fw = s.frameworks["test-scheduler"]
    info = group(sim)
    pgo = sim.ctx.api.get("PodGroup.scheduling.k8s.io", "default", "pg")
    if existing:
        pgo.status.conditions = [{"type": "PodGroupScheduled", "status": "True", "reason": "Scheduled",
                                  "message": "All pods scheduled", "lastTransitionTime": 0.5}]
    pod_results = []
    for q, (kind, a, b, *rest) in zip(info.queued_pod_infos, results):
        if kind == "bad":
            pod_results.append(pg.AlgorithmResult(q.pod, status=Status.new(a, b) if b else Status(a), state=CycleState(),
                                                  nominated=rest[0]))
        else:
            pod_results.append(pg.AlgorithmResult(
                q.pod, node=a, status=Status(U) if kind == "preempt" else Status(), permit_status=Status(b or S),
                requires_preemption=kind == "preempt", nominated=a if kind == "preempt" else "", state=CycleState()))
    group_status = Status.new(*status) if status else Status()
    pg.submit_pod_group_algorithm_result(s, fw, info, pg.PodGroupAlgorithmResult(pod_results, group_status, waiting))
    sim.ctx.env.run(until=5)
    got = []
    for q in info.queued_pod_infos:
        events = [e.reason for e in sim.ctx.recorder.log if e.object.name == q.pod.metadata.name
                  and e.reason in ("Scheduled", "FailedScheduling")]
        if events == ["Scheduled"]:
            got.append(BOUND)
        elif events == ["FailedScheduling"]:
            got.append(PREEMPTING if q.pod.status.nominated_node_name else FAILED)
        else:
            got.append(events)
    assert got == expect
    [cond] = pgo.status.conditions
    assert (cond["type"], cond["status"], cond["reason"], cond["message"]) == ("PodGroupScheduled", *condition)


def test_submit_rejects_a_fitting_pod_with_its_permit_message_after_the_group_error():
    """errPodGroupUnschedulable: Message() puts the error before the Permit message; the pod has no rejecting
    plugin, so it goes to backoffQ (queueAfterBackoff), not unschedulablePods."""
    sim = cluster()
    s = sim.scheduler
    info = group(sim, ("p1",))
    q = info.queued_pod_infos[0]
    q.pod.spec.scheduling_gates = []
    s.queue.delete(q.pod_info.key)                       # popped: out of the queue, PreEnqueue passed, rejectors cleared
    q.gated, q.unschedulable_plugins = False, set()
    pr = pg.AlgorithmResult(q.pod, node=NODE, status=Status(), permit_status=Status.new(W, "waiting for minCount"),
                            state=CycleState())
    pg.submit_pod_group_algorithm_result(s, s.frameworks["test-scheduler"], info, pg.PodGroupAlgorithmResult([pr]))
    [msg] = [e.message for e in sim.ctx.recorder.log if e.reason == "FailedScheduling"]
    assert msg == "pod group is unschedulable, waiting for minCount"
    assert q.pod_info.key in s.queue.backoff and q.pod_info.key not in s.queue.unschedulable


# --- TestUpdatePodGroupCondition ---------------------------------------------------------------------------------
T, F = "True", "False"


@pytest.mark.parametrize("name, existing, generation, condition, expect, ltt_kept", [
    ("set Scheduled condition to True on empty status", None, 0, (T, "SomeReason", "All required pods have been "
     "successfully scheduled"), (T, "SomeReason", "All required pods have been successfully scheduled"), False),
    ("set Scheduled condition to False with Unschedulable reason", None, 0,
     (F, "Unschedulable", "0/3 nodes are available: insufficient cpu"),
     (F, "Unschedulable", "0/3 nodes are available: insufficient cpu"), False),
    ("set Scheduled condition to False with SchedulerError reason", None, 0,
     (F, "SchedulerError", "Internal scheduling error"), (F, "SchedulerError", "Internal scheduling error"), False),
    ("transition from Unschedulable to Scheduled", (F, "Unschedulable", "previously unschedulable"), 0,
     (T, "Scheduled", "All required pods have been successfully scheduled"),
     (T, "Scheduled", "All required pods have been successfully scheduled"), False),
    ("transition from SchedulerError to Scheduled", (F, "SchedulerError", "internal error"), 0,
     (T, "Scheduled", "All required pods have been successfully scheduled"),
     (T, "Scheduled", "All required pods have been successfully scheduled"), False),
    ("do not regress Scheduled to Unschedulable", (T, "Scheduled", "All pods scheduled"), 0,
     (F, "Unschedulable", "extra pods could not be placed"), (T, "Scheduled", "All pods scheduled"), True),
    ("do not regress Scheduled to SchedulerError", (T, "Scheduled", "All pods scheduled"), 0,
     (F, "SchedulerError", "internal error"), (T, "Scheduled", "All pods scheduled"), True),
    ("transition from Unschedulable to SchedulerError preserves LastTransitionTime",
     (F, "Unschedulable", "not enough resources"), 0, (F, "SchedulerError", "internal error"),
     (F, "SchedulerError", "internal error"), True),
    ("transition from SchedulerError to Unschedulable preserves LastTransitionTime",
     (F, "SchedulerError", "internal error"), 0, (F, "Unschedulable", "not enough resources"),
     (F, "Unschedulable", "not enough resources"), True),
    ("Scheduled to Scheduled preserves LastTransitionTime", (T, "Scheduled", "All pods scheduled"), 0,
     (T, "Scheduled", "New condition message"), (T, "Scheduled", "New condition message"), True),
    ("ObservedGeneration is set from PodGroup generation", None, 7, (T, "Scheduled", "All pods scheduled"),
     (T, "Scheduled", "All pods scheduled"), False),
])
def test_update_pod_group_condition(name, existing, generation, condition, expect, ltt_kept):
    sim = cluster(pods=())
    sim.ctx.env.run(until=3)
    pgo = sim.ctx.api.get("PodGroup.scheduling.k8s.io", "default", "pg")
    pgo.metadata.generation = generation
    if existing:
        pgo.status.conditions = [{"type": "PodGroupScheduled", "status": existing[0], "reason": existing[1],
                                  "message": existing[2], "lastTransitionTime": 1.0}]
    c = dict(zip(("status", "reason", "message"), condition), type="PodGroupScheduled")
    pg.update_pod_group_condition(sim.scheduler, pg.QueuedPodGroupInfo("default", "pg"), c)
    [got] = pgo.status.conditions
    assert (got["status"], got["reason"], got["message"]) == expect
    assert got["lastTransitionTime"] == (1.0 if ltt_kept else 3.0)
    regressed = existing is not None and existing[0] == "True" and condition[0] != "True"
    assert got.get("observedGeneration") == (None if regressed else generation)


def test_update_pod_group_condition_without_the_pod_group_writes_nothing():
    """Row "PodGroup not found does not panic"."""
    sim = cluster(pods=())
    assert pg.update_pod_group_condition(sim.scheduler, pg.QueuedPodGroupInfo("default", "nonexistent"),
                                         {"type": "PodGroupScheduled", "status": "True", "reason": "SomeReason",
                                          "message": "test"}) is False
    assert sim.ctx.api.get("PodGroup.scheduling.k8s.io", "default", "nonexistent") is None
