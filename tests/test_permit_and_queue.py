"""The scheduling queue seen through event times, Permit's waiting pods, PreEnqueue on pod update
(schedulingGates), and nominated pods protecting the space their preemption freed.

Scenarios run through ``gpusim.cluster.simulation`` and are read as a user reads them: the
times and messages of FailedScheduling / Scheduled / Preempted events and the pods' status.
Permit is exercised by a test-only plugin plugged in through a custom Registry (out-of-tree
plugins register the same way in-tree ones do).
"""
from __future__ import annotations

from gpusim.api.kubescheduler_config_v1 import (KubeSchedulerConfiguration, KubeSchedulerProfile, PluginRef,
                                                Plugins, PluginSet)
from gpusim.cluster.scenario import load
from gpusim.cluster.simulation import Simulation
from gpusim.scheduler.framework import Code, CycleState, NodeInfo, PodInfo, Status
from gpusim.scheduler.registry import in_tree_registry
from gpusim.scheduler.runtime import MAX_PERMIT_TIMEOUT

GPU = "nvidia.com/gpu"
INSUFFICIENT = "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."
NO_VICTIMS = "no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."


# --- scenario helpers ------------------------------------------------------------------------------------

def classes(**values: int) -> str:
    return "---\n".join(f"""apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {{name: {name}}}
value: {value}
""" for name, value in values.items())


def pool(count=1, gpus=8):
    return f"""apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {{name: a100}}
spec: {{count: {count}, gpu: {{model: A100-SXM4-80GB, count: {gpus}}}}}
"""


def pod(name, gpus=0, prio=None, at=None, node=None, labels=None, duration="1h", gates=(), cpu=None):
    ann = f"gpusim.io/duration: {duration}" + (f", gpusim.io/submit-at: {at}" if at else "")
    lines = "  restartPolicy: Never\n"
    if prio:
        lines += f"  priorityClassName: {prio}\n"
    if node:
        lines += f"  nodeName: {node}\n"
    if gates:
        lines += f"  schedulingGates: [{', '.join('{name: ' + g + '}' for g in gates)}]\n"
    lab = f", labels: {labels}" if labels else ""
    limits = f"{GPU}: {gpus}" if gpus else f"cpu: {cpu or '100m'}"
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: {name}, annotations: {{{ann}}}{lab}}}
spec:
{lines}  containers: [{{name: main, image: cuda, resources: {{limits: {{{limits}}}}}}}]
"""


def text(*docs: str) -> str:
    return "---\n".join(docs)


def events(sim, name, reason=None):
    return [e for e in sim.ctx.recorder.log if e.object.name == name and (reason is None or e.reason == reason)]


def failed(sim, name):
    return [(e.time, e.message) for e in events(sim, name, "FailedScheduling")]


def scheduled_at(sim, name):
    return [e.time for e in events(sim, name, "Scheduled")]


def get(sim, name):
    return sim.ctx.api.get("Pod", "default", name)


# --- a test-only Permit plugin ----------------------------------------------------------------------------

class WaitingPermit:
    """Permit: pods labelled ``permit: wait`` wait (``timeout`` seconds), ``permit: deny`` are rejected."""

    def __init__(self, name: str, handle, timeout: float, events=frozenset()):
        self.name, self.handle, self.timeout = name, handle, timeout
        self.events = set(events)            # the cluster events whose QueueingHint says Queue

    def permit(self, state, pi, node):
        mode = pi.pod.metadata.labels.get("permit")
        if mode == "wait":
            return Status(Code.Wait), self.timeout
        if mode == "deny":
            return Status.new(Code.Unschedulable, "denied by the test plugin"), 0.0
        return Status(), 0.0


def permit_simulation(yaml_text: str, timeout: float = 60.0, names=("TestPermit",), events=()) -> Simulation:
    registry = in_tree_registry()
    for n in names:
        registry.register(n, lambda args, handle, n=n: WaitingPermit(n, handle, timeout, events))
    sc = load(texts=[("<text>", yaml_text)])
    sc.scheduler_config = KubeSchedulerConfiguration(profiles=[KubeSchedulerProfile(
        plugins=Plugins(multi_point=PluginSet(enabled=[PluginRef(n) for n in names])))])
    return Simulation(sc, registry=registry)


def simulation(yaml_text: str) -> Simulation:
    return Simulation(load(texts=[("<text>", yaml_text)]))


def run(sim, until):
    sim.ctx.env.run(until=until)


# --- the queue: backoff and the unschedulable-pods flush --------------------------------------------------

def test_pod_rejected_while_nothing_changes_retries_after_the_five_minute_flush():
    # 16 GPUs never fit an 8-GPU node and no event concerns NodeResourcesFit: the pod stays in
    # unschedulablePods until flushUnschedulablePodsLeftover (every 30s) finds it older than 5 minutes.
    sim = simulation(text(pool(), pod("big", 16, at="7s")))
    run(sim, 1000)
    times = [t for t, _ in failed(sim, "big")]
    assert times == [7.0, 330.0, 660.0, 990.0]
    assert all(300 < b - a <= 330 for a, b in zip(times, times[1:]))


def test_event_during_backoff_requeues_after_1s_2s_4s_8s_10s():
    # a100-0 is full (blocker, 8 GPUs). Each time the test deletes a small pod from the node, the
    # Pod/Delete event (NodeResourcesFit registers it) moves "want" out of unschedulablePods; it is
    # still backing off, so it waits in backoffQ until last failure + 1s, 2s, 4s, 8s, 10s, 10s.
    fillers = [pod(f"f{i}", node="a100-0") for i in range(6)]
    sim = simulation(text(pool(), pod("blocker", 8, node="a100-0"), *fillers, pod("want", 1, at="5s")))
    for i, t in enumerate([5.5, 6.5, 8.5, 12.5, 20.5, 30.5]):
        run(sim, t)
        sim.ctx.api.delete(get(sim, f"f{i}"))
    run(sim, 300)
    assert [t for t, _ in failed(sim, "want")] == [5.0, 6.0, 8.0, 12.0, 20.0, 30.0, 40.0]
    assert {m for _, m in failed(sim, "want")} == {f"{INSUFFICIENT} {NO_VICTIMS}"}


# --- Permit: waiting pods ---------------------------------------------------------------------------------

def test_waiting_pod_holds_its_gpus_until_allowed():
    sim = permit_simulation(text(pool(), pod("a", 4, labels={"permit": "wait"}), pod("b", 8, at="1s")))
    sched = sim.scheduler
    run(sim, 2)
    a = get(sim, "a")
    wp = sched.get_waiting_pod(a.metadata.uid)
    assert wp is not None and wp.get_pod() is a and wp.get_pending_plugins() == ["TestPermit"]
    seen = []
    sched.iterate_over_waiting_pods(lambda w: seen.append(w.pod.metadata.name))
    assert seen == ["a"]
    # assumed on a100-0 but not bound; NominatedNodeNameForExpectation shows where it is going
    assert not a.spec.node_name and a.status.nominated_node_name == "a100-0"
    assert not events(sim, "a") and sched.nodes["a100-0"].requested.get(GPU) == 4
    assert failed(sim, "b") == [(1.0, f"{INSUFFICIENT} {NO_VICTIMS}")]
    run(sim, 3)
    wp.allow("TestPermit")
    run(sim, 4)
    assert scheduled_at(sim, "a") == [3.0] and a.spec.node_name == "a100-0"
    assert a.status.nominated_node_name == "" and sched.get_waiting_pod(a.metadata.uid) is None
    assert not failed(sim, "a")


def test_every_waiting_plugin_must_allow():
    sim = permit_simulation(text(pool(), pod("a", 4, labels={"permit": "wait"})), names=("PermitA", "PermitB"))
    run(sim, 1)
    wp = sim.scheduler.get_waiting_pod(get(sim, "a").metadata.uid)
    assert sorted(wp.get_pending_plugins()) == ["PermitA", "PermitB"]
    wp.allow("PermitA")
    run(sim, 2)
    assert not scheduled_at(sim, "a") and wp.get_pending_plugins() == ["PermitB"]
    wp.allow("PermitB")
    run(sim, 3)
    assert scheduled_at(sim, "a") == [2.0]


def test_rejected_waiting_pod_is_unreserved_and_requeued():
    sim = permit_simulation(text(pool(), pod("a", 4, labels={"permit": "wait"}), pod("b", 8, at="1s")))
    sched = sim.scheduler
    run(sim, 3)
    a = get(sim, "a")
    assert sched.get_waiting_pod(a.metadata.uid).reject("TestPermit", "gang is incomplete")
    assert not sched.get_waiting_pod(a.metadata.uid).reject("TestPermit", "again")   # first outcome wins
    run(sim, 4)
    assert failed(sim, "a") == [(3.0, "0/1 nodes are available: 1 gang is incomplete.")]
    cond = a.status.condition("PodScheduled")
    assert (cond.status, cond.reason) == ("False", "Unschedulable")
    assert a.status.nominated_node_name == "" and not a.spec.node_name
    # forgetting the assumed pod is a Pod/Delete event: "b" (rejected by NodeResourcesFit) moves
    assert scheduled_at(sim, "b") == [3.0]
    # TestPermit registers no event: "a" waits for the flush, then finds the node full
    run(sim, 400)
    assert failed(sim, "a")[1:] == [(330.0, f"{INSUFFICIENT} {NO_VICTIMS}")]


def test_waiting_pod_times_out_at_its_plugin_timeout():
    sim = permit_simulation(text(pool(), pod("a", 4, labels={"permit": "wait"})), timeout=10)
    run(sim, 11)
    assert failed(sim, "a") == [
        (10.0, "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin TestPermit.")]
    assert sim.scheduler.nodes["a100-0"].requested.get(GPU) == 0 and not sim.scheduler.waiting_pods


def test_permit_wait_is_capped_at_15_minutes():
    assert MAX_PERMIT_TIMEOUT == 900
    sim = permit_simulation(text(pool(), pod("a", 4, labels={"permit": "wait"})), timeout=3600)
    run(sim, 1000)
    assert failed(sim, "a") == [
        (900.0, "0/1 nodes are available: 1 rejected due to timeout after waiting 15m0s at plugin TestPermit.")]


def test_allowed_pod_leaves_no_timer_keeping_the_run_alive():
    sim = permit_simulation(text(pool(), pod("a", 4, labels={"permit": "wait"}, duration="10s")), timeout=600)
    run(sim, 1)
    sim.scheduler.get_waiting_pod(get(sim, "a").metadata.uid).allow("TestPermit")
    r = sim.run()
    assert r.pod("a").status.phase == "Succeeded" and r.end < 600


def test_permit_rejection_in_the_scheduling_cycle():
    sim = permit_simulation(text(pool(), pod("a", 4, labels={"permit": "deny"})))
    run(sim, 1)
    assert failed(sim, "a") == [(0.0, "0/1 nodes are available: 1 denied by the test plugin.")]
    assert not sim.scheduler.waiting_pods and sim.scheduler.nodes["a100-0"].requested.get(GPU) == 0


def test_deleting_a_waiting_pod_rejects_it_and_frees_its_gpus():
    sim = permit_simulation(text(pool(), pod("a", 4, labels={"permit": "wait"}), pod("b", 8, at="1s")))
    sched = sim.scheduler
    run(sim, 2)
    a = get(sim, "a")
    sim.ctx.api.delete(a)
    run(sim, 3)
    assert sched.get_waiting_pod(a.metadata.uid) is None and not sched.reject_waiting_pod(a.metadata.uid)
    assert failed(sim, "a") == [(2.0, "0/1 nodes are available: 1 removed.")]
    assert scheduled_at(sim, "b") == [2.0]


def test_reject_waiting_pod_through_the_handle():
    sim = permit_simulation(text(pool(), pod("a", 4, labels={"permit": "wait"}), pod("f", node="a100-0")))
    run(sim, 1)
    assert sim.scheduler.reject_waiting_pod(get(sim, "a").metadata.uid)
    run(sim, 2)
    assert failed(sim, "a") == [(1.0, "0/1 nodes are available: 1 removed.")]
    # rejected with no plugin named: no event's QueueingHint moves it, only the flush does
    sim.ctx.api.delete(get(sim, "f"))
    run(sim, 329)
    assert len(failed(sim, "a")) == 1 and sim.scheduler.get_waiting_pod(get(sim, "a").metadata.uid) is None
    run(sim, 331)
    assert sim.scheduler.get_waiting_pod(get(sim, "a").metadata.uid) is not None   # waiting again from t=330


def test_event_seen_while_waiting_requeues_the_rejected_pod():
    # The plugin registers Pod/Delete. A pod deleted while "a" waits is remembered (in-flight event):
    # when the timeout rejects "a" at t=10 it goes to backoffQ (1s), not to unschedulablePods.
    sim = permit_simulation(text(pool(), pod("a", 4, labels={"permit": "wait"}), pod("f", node="a100-0")),
                            timeout=10, events={"Pod/Delete"})
    run(sim, 5)
    sim.ctx.api.delete(get(sim, "f"))
    run(sim, 100)
    timeout = "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin TestPermit."
    # retried at 11, waited again and timed out at 21; nothing happened meanwhile: back to the pool
    assert failed(sim, "a") == [(10.0, timeout), (21.0, timeout)]


def test_without_an_event_while_waiting_the_rejected_pod_waits_for_the_flush():
    sim = permit_simulation(text(pool(), pod("a", 4, labels={"permit": "wait"})), timeout=10, events={"Pod/Delete"})
    run(sim, 100)
    assert [t for t, _ in failed(sim, "a")] == [10.0]


def test_preempting_a_waiting_pod_sends_it_back_without_deleting_it():
    sim = permit_simulation(text(classes(low=10, high=1000), pool(),
                                 pod("a", 8, "low", labels={"permit": "wait"}), pod("h", 8, "high", at="2s")))
    run(sim, 4)
    a, h = get(sim, "a"), get(sim, "h")
    assert a is not None and not a.spec.node_name          # not deleted: preempted out of Permit
    assert [e.message for e in events(sim, "a", "Preempted")] == [f"Preempted by pod {h.metadata.uid} on node a100-0"]
    assert failed(sim, "a")[0] == (2.0, "waiting on permit for pod: preempted")
    assert scheduled_at(sim, "h") == [3.0]


# --- PreEnqueue on update: schedulingGates ----------------------------------------------------------------

def test_removing_the_last_scheduling_gate_moves_the_pod_to_the_active_queue():
    sim = simulation(text(pool(), pod("g1", 1, gates=("example.com/a", "example.com/b")),
                          pod("g2", 1, gates=("example.com/c",))))
    api = sim.ctx.api
    run(sim, 10)
    g1 = get(sim, "g1")
    g1.spec.scheduling_gates = [g for g in g1.spec.scheduling_gates if g.name != "example.com/a"]
    api.update(g1)
    run(sim, 20)
    assert not events(sim, "g1")                 # still gated: never attempted, no event
    g1.spec.scheduling_gates = []
    api.update(g1)
    run(sim, 400)
    assert scheduled_at(sim, "g1") == [20.0] and not failed(sim, "g1")
    assert not events(sim, "g2") and not get(sim, "g2").spec.node_name   # the 5-minute flush skips gated pods
    assert not sim.scheduler.attempts or all(a.pod != "default/g2" for a in sim.scheduler.attempts)


# --- nominated pods ---------------------------------------------------------------------------------------

def preemption_scenario(*late):
    return text(classes(low=10, high=1000, vip=2000), pool(),
                pod("low-1", 8, "low"), pod("high-1", 8, "high", at="10s", duration="1m"), *late)


def test_lower_priority_pod_cannot_take_the_gpus_freed_for_a_nominated_pod():
    sim = simulation(preemption_scenario(pod("low-2", 1, "low", at="10.5s")))
    sched = sim.scheduler
    run(sim, 10.6)
    high = get(sim, "high-1")
    assert get(sim, "low-1") is None                                     # the victim is gone at t=10
    assert sched.nominator == {high.metadata.uid: "a100-0"}
    assert sched.nodes["a100-0"].requested.get(GPU) == 0             # the GPUs are free ...
    assert failed(sim, "low-2") == [(10.5, f"{INSUFFICIENT} {NO_VICTIMS}")]   # ... but held for high-1
    run(sim, 12)
    assert scheduled_at(sim, "high-1") == [11.0] and not sched.nominator


def test_equal_priority_pod_also_respects_the_nomination():
    sim = simulation(preemption_scenario(pod("high-2", 1, "high", at="10.5s")))
    run(sim, 12)
    assert failed(sim, "high-2") == [(10.5, f"{INSUFFICIENT} {NO_VICTIMS}")]
    assert scheduled_at(sim, "high-1") == [11.0]


def test_higher_priority_pod_ignores_a_lower_priority_nomination():
    sim = simulation(preemption_scenario(pod("vip", 8, "vip", at="10.5s")))
    run(sim, 12)
    assert scheduled_at(sim, "vip") == [10.5]
    assert not scheduled_at(sim, "high-1")


class RecordingFramework:
    """Stands in for a profile: records which pods each Filter run saw on the node."""

    def __init__(self, fail_with_extra=False):
        self.calls, self.fail_with_extra = [], fail_with_extra

    def run_filters(self, state, pi, ni):
        self.calls.append(sorted(p.pod.metadata.name for p in ni.pods.values()))
        if self.fail_with_extra and len(ni.pods) > 1:
            return Status.new(Code.Unschedulable, "Insufficient nvidia.com/gpu")
        return Status()


def test_filters_run_with_then_without_the_nominated_pods():
    sim = simulation(text(pool(), pod("x", 1)))
    sched = sim.scheduler
    run(sim, 1)
    ni: NodeInfo = sched.nodes["a100-0"]
    x = get(sim, "x")
    def gpu_pod(name: str, priority: int) -> PodInfo:
        p = load(texts=[("<t>", pod(name, 1))]).pods[0]
        p.metadata.uid, p.spec.priority = f"uid-{name}", priority
        return PodInfo(p)
    nominated, low_nom, me = gpu_pod("nom", 100), gpu_pod("low-nom", 5), gpu_pod("me", 100)
    # none nominated: one pass
    fw = RecordingFramework()
    assert sched.run_filters_with_nominated_pods(CycleState(), me, ni, fw).is_success()
    assert fw.calls == [["x"]]
    sched._add_nominated_pod(nominated, "a100-0")
    sched._add_nominated_pod(low_nom, "a100-0")
    # equal priority nominated pod added (the lower one is not); it passed, so once more without
    fw = RecordingFramework()
    assert sched.run_filters_with_nominated_pods(CycleState(), me, ni, fw).is_success()
    assert fw.calls == [["nom", "x"], ["x"]]
    # the first pass fails: no second pass, and the cache's NodeInfo was not touched
    fw = RecordingFramework(fail_with_extra=True)
    st = sched.run_filters_with_nominated_pods(CycleState(), me, ni, fw)
    assert st.reasons == ["Insufficient nvidia.com/gpu"] and fw.calls == [["nom", "x"]]
    assert list(ni.pods) == [x.metadata.uid]
    # a pod never counts its own nomination
    fw = RecordingFramework()
    sched.run_filters_with_nominated_pods(CycleState(), nominated, ni, fw)
    assert fw.calls == [["x"]]


# --- node events: spec.unschedulable --------------------------------------------------------------------------
# Ported from kubernetes v1.36 pkg/scheduler/backend/queue/events_test.go TestNodeSchedulingPropertiesChange's
# spec.unschedulable rows (nodeSpecUnschedulableChanged is true only when the node becomes schedulable): the
# event is visible as when a pod NodeUnschedulable rejected is scheduled again.
import pytest  # noqa: E402

from gpusim.cluster.simulation import run as run_text  # noqa: E402


def _cordoned(*actions: tuple[str, str]) -> str:
    docs = [pool(count=1, gpus=8), """apiVersion: v1
kind: Pod
metadata: {name: p, annotations: {gpusim.io/duration: 1m, gpusim.io/submit-at: 10s}}
spec:
  restartPolicy: Never
  containers:
  - {name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}
"""]
    docs += [f"""apiVersion: gpusim.io/v1alpha1
kind: Action
metadata: {{name: a{i}}}
spec: {{at: {at}, type: {kind}, node: a100-0}}
""" for i, (kind, at) in enumerate(actions)]
    return "---\n".join(docs)


@pytest.mark.parametrize("actions, bound_at", [
    # "only node spec unavailable changed" (unschedulable → schedulable): NodeSpecUnschedulableChange at once
    ([("CordonNode", "0s"), ("UncordonNode", "40s")], 40.0),
    # schedulable → unschedulable is no event: the pod stays in unschedulablePods until the uncordon
    ([("CordonNode", "0s"), ("CordonNode", "20s"), ("UncordonNode", "50s")], 50.0),
    # never uncordoned: no event; the 5 m flush retries it and NodeUnschedulable rejects it again
    ([("CordonNode", "0s")], None),
], ids=["uncordon", "cordon-again-is-no-event", "never-uncordoned"])
def test_uncordon_is_an_update_node_taint_event(actions, bound_at):
    r = run_text(text=_cordoned(*actions) + "---\napiVersion: gpusim.io/v1alpha1\nkind: Simulation\nmetadata: {name: s}\n"
            "spec: {until: 10m}\n")
    scheduled = [e.last_timestamp for e in r.events.events if e.reason == "Scheduled"]
    assert scheduled == ([] if bound_at is None else [bound_at])
