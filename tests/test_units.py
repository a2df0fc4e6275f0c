"""Unit tests of the pieces the course explains one at a time: the FailedScheduling histogram,
numFeasibleNodesToFind, the scheduling queue's backoff, the NodeResourcesFit and TaintToleration
filters, the device manager's errors, XID handling, kubelet restarts, the Job controller and
pods that bypass the scheduler with ``spec.nodeName``.

Where a behaviour is only observable in a running cluster, the test drives a small Simulation
and reads what a user reads: pod status, events, node status and the trace.
"""
from __future__ import annotations

import random
import re

import pytest
import simpy

from gpusim.api.core_v1 import (Container, Node, NodeSpec, NodeStatus, Pod, PodSpec, ResourceRequirements,
                                Taint, Toleration)
from gpusim.api.meta import ObjectMeta
from gpusim.controllers.job import ALPHANUMS
from gpusim.controlplane.apiserver import APIServer
from gpusim.controlplane.context import Context
from gpusim.controlplane.events import EventRecorder
from gpusim.cluster.simulation import run
from gpusim.controlplane.trace import Trace
from gpusim.node.deviceplugin import IGNORED_XIDS
from gpusim.scheduler.framework import Code, Diagnosis, FitError, NodeInfo, PodInfo, QueuedPodInfo, Status, histogram
from gpusim.scheduler.plugins.noderesources import NodeResourcesFit
from gpusim.scheduler.plugins.tainttoleration import ERR_REASON_NOT_MATCH, TaintToleration
from gpusim.scheduler.queue import SchedulingQueue
from gpusim.scheduler.scheduler import num_feasible_nodes_to_find
from gpusim.views.kubectl import to_json

GPU = "nvidia.com/gpu"


# --- scenario helpers ------------------------------------------------------------------------------------

def pool(name="a100", count=1, gpus=8, model="A100-SXM4-80GB", extra=""):
    return f"""apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {{name: {name}}}
spec: {{count: {count}, gpu: {{model: {model}, count: {gpus}}}{extra}}}
"""


def pod(name, gpus=1, duration="1m", submit_at=None, node=None, extra_ann="", spec=""):
    ann = f"gpusim.io/duration: {duration}" + (f", gpusim.io/submit-at: {submit_at}" if submit_at else "") + extra_ann
    node_line = f"\n  nodeName: {node}" if node else ""
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: {name}, annotations: {{{ann}}}}}
spec:
  restartPolicy: Never{node_line}{spec}
  containers: [{{name: main, image: cuda, resources: {{limits: {{{GPU}: {gpus}}}}}}}]
"""


def fault(name, spec):
    return f"""apiVersion: gpusim.io/v1alpha1
kind: Fault
metadata: {{name: {name}}}
spec: {spec}
"""


def simulate(*docs, until=None):
    return run(text="---\n".join(docs), until=until)


def events(result, name, reason=None):
    return [e for e in result.events.log if e.object.name == name and (reason is None or e.reason == reason)]


def gpu_alloc(result, node="a100-0"):
    n = next(n for n in result.nodes() if n.metadata.name == node)
    return n.status.allocatable.get(GPU), n.status.capacity.get(GPU)


# --- FitError and its histogram ------------------------------------------------------------------------

def st(code, *reasons):
    return Status(code, list(reasons))


def test_histogram_sorts_as_strings():
    statuses = {f"n{i}": st(Code.Unschedulable, "Insufficient nvidia.com/gpu") for i in range(10)}
    statuses |= {"t0": st(Code.UnschedulableAndUnresolvable, "node(s) had untolerated taint(s)"),
                 "t1": st(Code.UnschedulableAndUnresolvable, "node(s) had untolerated taint(s)")}
    # sort.Strings on "<count> <reason>": "10 …" sorts before "2 …" (not by count, not by reason).
    assert histogram(statuses) == " 10 Insufficient nvidia.com/gpu, 2 node(s) had untolerated taint(s)."


def test_histogram_lexicographic_beats_reason_order():
    statuses = {f"a{i}": st(Code.Unschedulable, "Insufficient cpu") for i in range(2)}
    statuses |= {f"z{i}": st(Code.Unschedulable, "Too many pods") for i in range(12)}
    assert histogram(statuses) == " 12 Too many pods, 2 Insufficient cpu."


def test_histogram_counts_every_reason_of_a_node():
    statuses = {"n0": st(Code.Unschedulable, "Insufficient cpu", "Insufficient nvidia.com/gpu"),
                "n1": st(Code.Unschedulable, "Insufficient nvidia.com/gpu")}
    assert histogram(statuses) == " 1 Insufficient cpu, 2 Insufficient nvidia.com/gpu."
    assert histogram({}) == ""


def test_fit_error_message():
    diag = Diagnosis(node_to_status={"a": st(Code.Unschedulable, "Insufficient nvidia.com/gpu"),
                                     "b": st(Code.Unschedulable, "Insufficient nvidia.com/gpu")},
                     post_filter_msg="preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")
    fe = FitError(Pod(), 3, diag)
    assert fe.error() == ("0/3 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are "
                          "available: 3 Preemption is not helpful for scheduling.")
    pre = FitError(Pod(), 4, Diagnosis(pre_filter_msg="node(s) didn't satisfy plugin(s) [X]"))
    assert pre.error() == "0/4 nodes are available: node(s) didn't satisfy plugin(s) [X]."


# --- numFeasibleNodesToFind ----------------------------------------------------------------------------

@pytest.mark.parametrize("nodes, expected", [
    (1, 1), (50, 50), (99, 99), (100, 100),
    (200, 100),        # 200 * 49% = 98, raised to minFeasibleNodesToFind
    (1000, 420),       # 50 - 1000/125 = 42%
    (5000, 500),       # 10%
    (6000, 300),       # 50 - 48 = 2%, raised to the 5% floor
    (10000, 500),
])
def test_num_feasible_nodes_to_find(nodes, expected):
    assert num_feasible_nodes_to_find(nodes) == expected


def upstream_num_feasible(n: int, percentage: int = 0) -> int:
    """schedule_one.go numFeasibleNodesToFind, transcribed."""
    if n < 100:
        return n
    if percentage == 0:
        percentage = 50 - n // 125
        if percentage < 5:
            percentage = 5
    k = n * percentage // 100
    return 100 if k < 100 else k


def test_num_feasible_nodes_matches_upstream_formula():
    for n in list(range(0, 3000)) + list(range(3000, 20000, 37)):
        assert num_feasible_nodes_to_find(n) == upstream_num_feasible(n), n
    for n, p in [(1000, 30), (1000, 5), (500, 100), (5000, 1), (250, 50)]:
        assert num_feasible_nodes_to_find(n, p) == upstream_num_feasible(n, p), (n, p)


def test_scheduler_stops_after_enough_feasible_nodes():
    """With 300 fitting nodes the scheduler evaluates 300 * 48% = 144 and starts the next pod's
    search where the last one stopped (nextStartNodeIndex)."""
    r = simulate(pool("t4", count=300, gpus=1, model="T4"), pod("p", submit_at="1s"), pod("q", submit_at="2s"))
    found = [x for x in r.trace.records if x.function == "scheduler.(*Scheduler).findNodesThatFitPod"]
    assert [x.result for x in found] == ["144 feasible", "144 feasible"]
    assert r.scheduler.next_start_node_index == 288
    assert r.pod("p").spec.node_name != r.pod("q").spec.node_name


# --- scheduling queue backoff --------------------------------------------------------------------------

def make_ctx():
    env = simpy.Environment()
    rng = random.Random(0)
    return Context(env, APIServer(env, rng), EventRecorder(), Trace(), rng)


def make_pod(name="p", limits=None, tolerations=()):
    return Pod(metadata=ObjectMeta(name=name, namespace="default", uid=f"uid-{name}"),
               spec=PodSpec(containers=[Container(name="c", resources=ResourceRequirements(limits=dict(limits or {})))],
                            tolerations=list(tolerations)))


def test_backoff_durations_double_from_1s_to_10s():
    ctx = make_ctx()
    q = SchedulingQueue(ctx, lambda a, b: False)
    qpi = QueuedPodInfo(PodInfo(make_pod()), 0.0)
    assert q.backoff_duration(qpi) == 0.0     # never failed: no penalty
    got = []
    for _ in range(6):
        qpi.unschedulable_count += 1
        got.append(q.backoff_duration(qpi))
    assert got == [1, 2, 4, 8, 10, 10]


def test_backoff_of_a_pod_retried_thousands_of_times_is_the_cap():
    """calculateBackoffDuration doubles step by step and stops at the cap (no 2**count overflow)."""
    q = SchedulingQueue(make_ctx(), lambda a, b: False)
    assert q.backoff_duration(QueuedPodInfo(PodInfo(make_pod()), 0.0, unschedulable_count=5000)) == 10


def test_backoff_uses_consecutive_errors_when_present():
    q = SchedulingQueue(make_ctx(), lambda a, b: False)
    qpi = QueuedPodInfo(PodInfo(make_pod()), 0.0, unschedulable_count=5, consecutive_errors=2)
    assert q.backoff_duration(qpi) == 2


def test_backed_off_pod_returns_to_active_queue_at_expiry():
    ctx = make_ctx()
    q = SchedulingQueue(ctx, lambda a, b: False)
    qpi = QueuedPodInfo(PodInfo(make_pod()), 0.0, unschedulable_count=3)
    popped = []

    def scheduler():
        item = yield from q.pop()
        popped.append((ctx.now, item))

    ctx.env.process(scheduler())
    q.add_unschedulable(qpi, error=True)   # fails at t=0 with 3 failures: 4s backoff
    assert len(q) == 1 and not q.active
    ctx.env.run(until=3.9)
    assert popped == []
    ctx.env.run(until=5)
    assert popped == [(4.0, qpi)]


# --- NodeResourcesFit ----------------------------------------------------------------------------------

def node_info(gpus=8, cpu="64", pods="110", taints=()):
    node = Node(metadata=ObjectMeta(name="n0"), spec=NodeSpec(taints=list(taints)),
                status=NodeStatus(allocatable={"cpu": cpu, "memory": "512Gi", "pods": pods, GPU: str(gpus)}))
    return NodeInfo(node)


def test_node_resources_fit_insufficient_is_unschedulable():
    ni = node_info(gpus=8)
    ni.add_pod(PodInfo(make_pod("busy", {GPU: "6"})))
    s = NodeResourcesFit().filter(None, PodInfo(make_pod("p", {GPU: "4"})), ni)
    assert s.code == Code.Unschedulable          # preemption could free the GPUs
    assert s.reasons == ["Insufficient nvidia.com/gpu"]
    assert NodeResourcesFit().filter(None, PodInfo(make_pod("p", {GPU: "2"})), ni).is_success()


def test_node_resources_fit_over_allocatable_is_unresolvable():
    ni = node_info(gpus=8)
    s = NodeResourcesFit().filter(None, PodInfo(make_pod("p", {GPU: "9"})), ni)
    assert s.code == Code.UnschedulableAndUnresolvable   # no preemption can help
    assert s.reasons == ["Insufficient nvidia.com/gpu"]


def test_node_resources_fit_reason_order():
    ni = node_info(gpus=8, cpu="8", pods="1")
    ni.add_pod(PodInfo(make_pod("busy", {GPU: "8", "cpu": "4"})))
    s = NodeResourcesFit().filter(None, PodInfo(make_pod("p", {GPU: "1", "cpu": "6", "memory": "1Gi"})), ni)
    assert s.reasons == ["Too many pods", "Insufficient cpu", "Insufficient nvidia.com/gpu"]
    assert s.code == Code.Unschedulable


def test_no_gpu_node_is_unresolvable_for_gpu_pod():
    ni = NodeInfo(Node(metadata=ObjectMeta(name="cpu-only"),
                       status=NodeStatus(allocatable={"cpu": "64", "memory": "64Gi", "pods": "110"})))
    s = NodeResourcesFit().filter(None, PodInfo(make_pod("p", {GPU: "1"})), ni)
    assert (s.code, s.reasons) == (Code.UnschedulableAndUnresolvable, ["Insufficient nvidia.com/gpu"])


def test_oversized_request_message_says_preemption_is_not_helpful():
    r = simulate(pool(count=2), pod("huge", gpus=9, submit_at="1s"))
    assert {e.message for e in events(r, "huge", "FailedScheduling")} == {"0/2 nodes are available: 2 Insufficient nvidia.com/gpu. no new claims to deallocate, preemption: 0/2 nodes are available: "
                  "2 Preemption is not helpful for scheduling."}
    assert (r.pod("huge").status.phase or "Pending") == "Pending" and not r.pod("huge").spec.node_name
    cond = r.pod("huge").status.condition("PodScheduled")
    assert (cond.status, cond.reason) == ("False", "Unschedulable")


# --- TaintToleration -----------------------------------------------------------------------------------

def test_taint_toleration_filter():
    taint = Taint(key="nvidia.com/gpu", value="present", effect="NoSchedule")
    ni = node_info(taints=[taint])
    plugin = TaintToleration()
    s = plugin.filter(None, PodInfo(make_pod("p", {GPU: "1"})), ni)
    assert s.code == Code.UnschedulableAndUnresolvable
    assert s.reasons == [ERR_REASON_NOT_MATCH] == ["node(s) had untolerated taint(s)"]
    for tol in (Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule"),
                Toleration(key="nvidia.com/gpu", operator="Equal", value="present"),
                Toleration(operator="Exists")):
        assert plugin.filter(None, PodInfo(make_pod("p", {GPU: "1"}, [tol])), ni).is_success(), tol
    wrong = Toleration(key="nvidia.com/gpu", operator="Equal", value="absent", effect="NoSchedule")
    assert not plugin.filter(None, PodInfo(make_pod("p", {GPU: "1"}, [wrong])), ni).is_success()
    soft = node_info(taints=[Taint(key="spot", value="true", effect="PreferNoSchedule")])
    assert plugin.filter(None, PodInfo(make_pod("p")), soft).is_success()


def test_taint_failed_scheduling_message():
    tainted = pool("a100", count=2, extra=", taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]")
    tolerant = pod("tolerant", submit_at="1s",
                   spec="\n  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]")
    r = simulate(tainted, pod("plain", submit_at="1s"), tolerant)
    msgs = {e.message for e in events(r, "plain", "FailedScheduling")}
    assert msgs == {"0/2 nodes are available: 2 node(s) had untolerated taint(s). no new claims to deallocate, preemption: 0/2 nodes are "
                    "available: 2 Preemption is not helpful for scheduling."}
    assert r.pod("tolerant").status.phase == "Succeeded"


# --- device manager errors -----------------------------------------------------------------------------

def rejected(result, name):
    p = result.pod(name)
    (ev,) = events(result, name, p.status.reason)
    assert ev.type == "Warning" and ev.source == "kubelet"
    assert p.status.phase == "Failed"
    assert p.status.message == "Pod was rejected: " + ev.message
    return p.status.reason, ev.message


def test_device_plugin_crash_then_pod_no_healthy_devices():
    r = simulate(pool(), fault("crash", "{at: 10s, type: DevicePluginCrash, node: a100-0, downtime: 30s}"),
                 pod("late", submit_at="12s"))
    assert rejected(r, "late") == ("UnexpectedAdmissionError", "Allocate failed due to no healthy devices present; "
                                   "cannot allocate unhealthy devices nvidia.com/gpu, which is unexpected")
    # The scheduler still believed the stale node status: it bound the pod.
    assert [e.reason for e in events(r, "late")] == ["Scheduled", "UnexpectedAdmissionError"]


def test_device_plugin_crash_marks_devices_unhealthy_until_it_returns():
    r = simulate(pool(), fault("crash", "{at: 10s, type: DevicePluginCrash, node: a100-0, downtime: 30s}"),
                 until="35s")
    assert gpu_alloc(r) == ("0", "8")    # capacity keeps the unhealthy devices, allocatable drops
    r = simulate(pool(), fault("crash", "{at: 10s, type: DevicePluginCrash, node: a100-0, downtime: 30s}"),
                 pod("after", submit_at="55s"))
    assert gpu_alloc(r) == ("8", "8")
    assert r.pod("after").status.phase == "Succeeded"


def test_requested_more_than_healthy_free_devices():
    r = simulate(pool(gpus=2, model="T4", name="t4"), fault("xid", "{at: 5s, type: XidError, node: t4-0, gpu: 1, xid: 79}"),
                 pod("holder", duration="5m"), pod("victim", submit_at="6s"))
    assert rejected(r, "victim") == ("UnexpectedAdmissionError", "Allocate failed due to requested number of devices "
                                     "unavailable for nvidia.com/gpu. Requested: 1, Available: 0, which is unexpected")


def test_unregistered_device_after_endpoint_grace_period():
    """5 minutes after the plugin went away the kubelet forgets the resource (endpointStopGracePeriod);
    a GPU still held by a running pod keeps it a device-plugin resource, so Allocate fails."""
    r = simulate(pool(), fault("crash", "{at: 10s, type: DevicePluginCrash, node: a100-0, downtime: 10m}"),
                 pod("holder", duration="20m"), pod("direct", submit_at="6m", node="a100-0"))
    assert rejected(r, "direct") == ("UnexpectedAdmissionError", "Allocate failed due to cannot allocate "
                                     "unregistered device nvidia.com/gpu, which is unexpected")
    assert r.pod("holder").status.phase == "Succeeded"


def test_removed_resource_is_out_of_gpu_at_admission():
    """With no GPU pod left, the removed resource is reported with capacity 0 and the predicate
    admit handler rejects a GPU pod with OutOfnvidia.com/gpu."""
    r = simulate(pool(), fault("crash", "{at: 10s, type: DevicePluginCrash, node: a100-0, downtime: 10m}"),
                 pod("direct", submit_at="6m", node="a100-0"))
    assert rejected(r, "direct") == ("OutOfnvidia.com/gpu", "Node didn't have enough resource: nvidia.com/gpu, "
                                     "requested: 1, used: 0, capacity: 0")


# --- XIDs ----------------------------------------------------------------------------------------------

def test_ignored_xids_are_upstreams():
    assert IGNORED_XIDS == frozenset({13, 31, 43, 45, 68, 109})


@pytest.mark.parametrize("xid", sorted(IGNORED_XIDS))
def test_application_xid_is_ignored(xid):
    r = simulate(pool(), fault("x", f"{{at: 3s, type: XidError, node: a100-0, gpu: 2, xid: {xid}}}"), until="30s")
    assert gpu_alloc(r) == ("8", "8")
    assert any(x.result == f"Skipping non-critical Xid={xid}" for x in r.trace.records)


@pytest.mark.parametrize("xid", [79, 48])
def test_critical_xid_drops_allocatable_at_next_status_tick(xid):
    docs = (pool(), fault("x", f"{{at: 3s, type: XidError, node: a100-0, gpu: 2, xid: {xid}}}"))
    assert gpu_alloc(simulate(*docs, until="9.9s")) == ("8", "8")    # not yet posted
    r = simulate(*docs, until="10.5s")
    assert gpu_alloc(r) == ("7", "8")
    posts = [x for x in r.trace.records if x.function == "kubelet.(*Kubelet).syncNodeStatus" and x.time > 0]
    assert [(x.time, x.details["allocatable"]) for x in posts] == [(10.0, {GPU: "7"})]


def test_unhealthy_gpu_is_never_allocated_again():
    r = simulate(pool(gpus=2, model="T4", name="t4"), fault("xid", "{at: 5s, type: XidError, node: t4-0, gpu: 0, xid: 79}"),
                 *[pod(f"p{i}", duration="30s", submit_at=f"{20 + 40 * i}s") for i in range(3)])
    bad = r.kubelets["t4-0"].plugin.devices[0].id
    assert all(p.status.phase == "Succeeded" for p in r.pods())
    assert bad not in {h.device for h in r.ctx.holdings}


# --- kubelet restart -----------------------------------------------------------------------------------

RESTART = fault("restart", "{at: 30s, type: KubeletRestart, node: a100-0, downtime: 20s}")


def test_kubelet_restart_keeps_running_pods_and_their_devices():
    before = simulate(pool(), RESTART, pod("trainer", gpus=3, duration="2m"), until="29s")
    devices = sorted(h.device for h in before.ctx.holdings)
    for until in ("40s", "60s"):   # during the downtime, and after the restart
        r = simulate(pool(), RESTART, pod("trainer", gpus=3, duration="2m"), until=until)
        p = r.pod("trainer")
        assert p.status.phase == "Running"
        assert p.status.container_statuses[0].restart_count == 0
        assert sorted(h.device for h in r.ctx.holdings) == devices
        assert all(h.end is None for h in r.ctx.holdings)
    r = simulate(pool(), RESTART, pod("trainer", gpus=3, duration="2m"))
    p = r.pod("trainer")
    assert p.status.phase == "Succeeded"
    term = p.status.container_statuses[0].state.terminated
    assert term.finished_at - term.started_at == pytest.approx(120)
    assert sorted(h.device for h in r.ctx.holdings) == devices
    # No second Allocate for the running pod: it was re-admitted from the checkpoint.
    allocs = [x for x in r.trace.records if x.function == "v1beta1.DevicePlugin/Allocate"]
    assert len(allocs) == 1
    ckpt = [x for x in r.trace.records if x.function == "devicemanager.(*ManagerImpl).readCheckpoint"]
    assert [(x.time, x.details["pods"]) for x in ckpt] == [(50.0, 1)]


def test_kubelet_restart_node_reports_no_gpus_until_plugin_registers():
    assert gpu_alloc(simulate(pool(), RESTART, until="52s")) == ("0", "0")
    r = simulate(pool(), RESTART, until="61s")    # plugin back at 55s, next status tick at 60s
    assert gpu_alloc(r) == ("8", "8")


# --- Job controller ------------------------------------------------------------------------------------

JOB = """apiVersion: batch/v1
kind: Job
metadata: {{name: {name}}}
spec:
  parallelism: {parallelism}{extra}
  template:
    metadata: {{annotations: {{gpusim.io/duration: {duration}{ann}}}}}
    spec:
      restartPolicy: Never
      containers: [{{name: worker, image: cuda, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}]
"""


def job(name="job", parallelism=1, duration="1m", ann="", extra=""):
    return JOB.format(name=name, parallelism=parallelism, duration=duration, ann=ann, extra=extra)


def test_job_parallelism_creates_named_pods_and_completes():
    r = simulate(pool(), job(parallelism=3))
    pods = r.pods()
    assert len(pods) == 3
    pattern = re.compile(f"^job-[{ALPHANUMS}]{{5}}$")
    assert ALPHANUMS == "bcdfghjklmnpqrstvwxz2456789"
    assert all(pattern.match(p.metadata.name) for p in pods), [p.metadata.name for p in pods]
    assert len({p.metadata.name for p in pods}) == 3
    assert all(p.status.phase == "Succeeded" for p in pods)
    (j,) = r.jobs()
    assert [(c.type, c.status) for c in j.status.conditions] == [("SuccessCriteriaMet", "True"), ("Complete", "True")]
    assert j.status.succeeded == 3 and j.status.failed == 0 and j.status.active == 0
    last = max(p.status.container_statuses[0].state.terminated.finished_at for p in pods)
    assert j.status.completion_time == pytest.approx(last)
    created = [e.message for e in events(r, "job", "SuccessfulCreate")]
    assert sorted(created) == sorted(f"Created pod: {p.metadata.name}" for p in pods)
    assert [e.message for e in events(r, "job", "Completed")] == ["Job completed"]
    owners = {o.name for p in pods for o in p.metadata.owner_references if o.kind == "Job" and o.controller}
    assert owners == {"job"}
    assert to_json(r)["jobs"][0]["conditions"] == ["SuccessCriteriaMet", "Complete"]


def test_job_backoff_limit_exceeded():
    r = simulate(pool(), job(name="flaky", duration="10s", ann=', gpusim.io/exit-code: "1"', extra="\n  backoffLimit: 1"))
    pods = sorted(r.pods(), key=lambda p: p.metadata.creation_timestamp)
    assert len(pods) == 2      # backoffLimit 1: one retry, then the Job gives up
    for p in pods:
        assert p.status.phase == "Failed"
        term = p.status.container_statuses[0].state.terminated
        assert (term.exit_code, term.reason) == (1, "Error")
    # The replacement waits the controller's pod-failure back-off (10s) after the first failure.
    first_end = pods[0].status.container_statuses[0].state.terminated.finished_at
    assert pods[1].metadata.creation_timestamp == pytest.approx(first_end + 10)
    (j,) = r.jobs()
    assert [(c.type, c.reason) for c in j.status.conditions] == [("FailureTarget", "BackoffLimitExceeded"),
                                                                 ("Failed", "BackoffLimitExceeded")]
    assert j.status.failed == 2 and j.status.succeeded == 0
    (ev,) = events(r, "flaky", "BackoffLimitExceeded")
    assert (ev.type, ev.message) == ("Warning", "Job has reached the specified backoff limit")


# --- spec.nodeName -------------------------------------------------------------------------------------

def test_node_name_pod_skips_the_scheduler():
    r = simulate(pool(), pod("pinned", gpus=2, node="a100-0", submit_at="5s"))
    p = r.pod("pinned")
    assert p.status.phase == "Succeeded"
    assert events(r, "pinned", "Scheduled") == []
    assert not [a for a in r.scheduler.attempts if a.pod == "default/pinned"]
    assert [e.reason for e in events(r, "pinned")] == ["Pulled", "Created", "Started"]


def test_node_name_pod_over_capacity_rejected_by_kubelet():
    """9 GPUs on an 8-GPU node. The kubelet runs its admit handlers in upstream's order: the
    allocate-resources handler (device manager) before the predicate handler, so the device
    manager's error is what the pod reports, not OutOfnvidia.com/gpu."""
    r = simulate(pool(), pod("greedy", gpus=9, node="a100-0"))
    assert events(r, "greedy", "Scheduled") == []
    assert rejected(r, "greedy") == ("UnexpectedAdmissionError", "Allocate failed due to requested number of "
                                     "devices unavailable for nvidia.com/gpu. Requested: 9, Available: 8, "
                                     "which is unexpected")
    assert r.ctx.holdings == []


def test_node_name_pod_out_of_cpu():
    r = simulate(pool(), """apiVersion: v1
kind: Pod
metadata: {name: cpu-hog}
spec:
  nodeName: a100-0
  restartPolicy: Never
  containers: [{name: main, image: x, resources: {limits: {cpu: "200"}}}]
""")
    assert rejected(r, "cpu-hog") == ("OutOfcpu", "Node didn't have enough resource: cpu, requested: 200000, "
                                      "used: 0, capacity: 64000")


# --- the cluster is up at t=0 ----------------------------------------------------------------------------

def test_pod_at_t0_sees_every_node():
    r = simulate(pool("small", count=3, gpus=1, model="T4"), pool("big", count=1, gpus=8),
                 pod("train", gpus=8))
    assert events(r, "train", "FailedScheduling") == []
    assert r.pod("train").spec.node_name == "big-0"
    assert to_json(r)["pods"][0]["scheduledAt"] == 0.0
