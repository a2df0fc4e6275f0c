"""Alpha native gang scheduling in its Kubernetes 1.35 shape (Workload scheduling.k8s.io/v1alpha1, pod
spec.workloadRef, the in-tree GangScheduling plugin), behind the feature gates GenericWorkload and
GangScheduling; the Simulation's ``kubernetesVersion: "1.35"`` selects it. The 1.36 shape (v1alpha2
Workload and PodGroup, spec.schedulingGroup) is tested in tests/test_gangscheduling_v1alpha2.py."""
from __future__ import annotations

import pytest

from gpusim.api.errors import InputError
from gpusim.cluster.scenario import load
from gpusim.cluster.simulation import Simulation


def simulation(version="1.35", gates="{GenericWorkload: true, GangScheduling: true}"):
    return f"""apiVersion: gpusim.io/v1alpha1
kind: Simulation
metadata: {{name: s}}
spec: {{kubernetesVersion: "{version}", featureGates: {gates}}}
"""


def workload(min_count=4, name="train", policy=None):
    policy = policy or f"{{gang: {{minCount: {min_count}}}}}"
    return f"""apiVersion: scheduling.k8s.io/v1alpha1
kind: Workload
metadata: {{name: {name}}}
spec:
  controllerRef: {{apiGroup: batch, kind: Job, name: train}}
  podGroups: [{{name: workers, policy: {policy}}}]
"""


POOL = """apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: a100}
spec: {count: 1, gpu: {model: A100-SXM4-80GB, count: 8}}
"""


def pod(name, gpus=2, at=None, workload="train", group="workers", replica=None):
    ann = "gpusim.io/duration: 1h" + (f", gpusim.io/submit-at: {at}" if at else "")
    rk = f", podGroupReplicaKey: '{replica}'" if replica is not None else ""
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: {name}, annotations: {{{ann}}}}}
spec:
  restartPolicy: Never
  workloadRef: {{name: {workload}, podGroup: {group}{rk}}}
  containers: [{{name: main, image: cuda, resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}}}]
"""


def sim_of(*docs, until=None):
    sim = Simulation(load(texts=[("<text>", "---\n".join(docs))]))
    if until is not None:
        sim.ctx.env.run(until=until)
    return sim


def scheduled(sim):
    return {e.object.name: e.time for e in sim.ctx.recorder.log if e.reason == "Scheduled"}


def failed(sim):
    return [(e.time, e.object.name, e.message) for e in sim.ctx.recorder.log if e.reason == "FailedScheduling"]


def plugin(sim):
    return next(p for p in sim.scheduler.framework.plugins if p.name == "GangScheduling")


def test_gang_waits_in_pre_enqueue_until_min_count_pods_exist():
    sim = sim_of(simulation(), workload(4), POOL, pod("w0"), pod("w1", at="10s"), pod("w2", at="20s"),
                 pod("w3", at="30s"), until=60)
    assert scheduled(sim) == {"w0": 30.0, "w1": 30.0, "w2": 30.0, "w3": 30.0}
    assert failed(sim) == []          # gated pods are never attempted, so no FailedScheduling


@pytest.mark.parametrize("docs, pod_name, message", [
    ([pod("p", workload="nope")], "p", 'waiting for pods\'s workload "nope" to appear in scheduling queue'),
    ([workload(2), pod("p", group="ps")], "p", 'pod group "ps" doesn\'t exist for a workload "train"'),
    ([workload(2), pod("p")], "p", "waiting for minCount pods from a gang to appear in scheduling queue"),
    ([workload(1), pod("p")], "p", ""),
    ([workload(policy="{basic: {}}"), pod("p")], "p", ""),
])
def test_pre_enqueue_messages(docs, pod_name, message):
    sim = sim_of(simulation(), POOL, *docs, until=1)
    st = plugin(sim).pre_enqueue(sim.ctx.api.get("Pod", "default", pod_name))
    assert st.message() == message
    assert (st.code.name == "UnschedulableAndUnresolvable") == bool(message)
    qpi = sim.scheduler.qpis.get(sim.ctx.api.get("Pod", "default", pod_name).metadata.uid)
    assert (qpi is not None and qpi.gated) == bool(message)


def test_permit_waits_for_min_count_and_times_out_together_after_300s():
    """Four 3-GPU workers on 8 GPUs: two are assumed and wait in Permit; at the gang's 300 s deadline both
    are rejected at once and nothing binds."""
    sim = sim_of(simulation(), workload(4), POOL, *[pod(f"w{i}", gpus=3) for i in range(4)], until=400)
    assert scheduled(sim) == {}
    timeouts = [(t, n) for t, n, m in failed(sim) if m == "0/1 nodes are available: 1 rejected due to timeout after "
                                                         "waiting 5m0s at plugin GangScheduling."]
    assert sorted(timeouts) == [(300.0, "w0"), (300.0, "w1")]
    assert [m for t, n, m in failed(sim) if t == 0.0] == [
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. no new claims to deallocate, preemption: 0/1 nodes are available: 1 No "
        "preemption victims found for incoming pod."] * 2


def test_quorum_allows_all_waiting_members_at_once():
    sim = sim_of(simulation(), workload(3), POOL, pod("w0"), pod("w1"), pod("w2"), until=10)
    assert scheduled(sim) == {"w0": 0.0, "w1": 0.0, "w2": 0.0}
    permits = [(r.object, r.result) for r in sim.ctx.trace.records
               if r.function == "runtime.(*frameworkImpl).RunPermitPlugins"]
    waits = [o for o, res in permits if res != "Success"]
    assert len(waits) == 2          # the first two waited, the third reached the quorum
    assert [o for o, res in permits if res == "Success"] == ["Pod default/w2"]


def test_replica_keys_split_a_pod_group_into_independent_gangs():
    sim = sim_of(simulation(), workload(2), POOL, pod("a0", replica="a"), pod("a1", replica="a", at="5s"),
                 pod("b0", replica="b"), until=60)
    assert scheduled(sim) == {"a0": 5.0, "a1": 5.0}      # b has one of its two pods


def test_default_profile_gets_gang_scheduling_only_with_the_gate():
    with_gate = sim_of(simulation(), POOL).scheduler.framework.spec.points
    without = sim_of(simulation(gates="{}"), POOL).scheduler.framework.spec.points
    for point in ("PreEnqueue", "Reserve", "Permit"):
        assert "GangScheduling" in with_gate[point] and "GangScheduling" not in without[point]


@pytest.mark.parametrize("docs, path, message", [
    ([simulation(gates="{}"), workload()], "", 'no matches for kind "Workload" in version "scheduling.k8s.io/v1alpha1"'),
    ([simulation(gates="{}"), pod("p")], "spec.workloadRef", "Forbidden: alpha field; enable the feature gate "
                                                             "GenericWorkload"),
    ([simulation(version="1.34", gates="{GenericWorkload: true}")], "spec.featureGates[GenericWorkload]",
     "Forbidden: feature gate GenericWorkload exists from Kubernetes 1.35 on; spec.kubernetesVersion is 1.34"),
    ([simulation(gates="{GangScheduling: true}")], "spec.featureGates[GangScheduling]",
     "Forbidden: feature gate GangScheduling requires GenericWorkload=true"),
    ([simulation(gates="{GangSchedulin: true}")], "spec.featureGates[GangSchedulin]",
     "unrecognized feature gate: GangSchedulin"),
    ([simulation(), workload(0)], "spec.podGroups[0].policy.gang.minCount",
     "Invalid value: 0: must be greater than zero"),
    ([simulation(), workload(policy="{gang: {}}")], "spec.podGroups[0].policy.gang.minCount",
     "Invalid value: 0: must be greater than zero"),
    ([simulation(), workload(policy="{basic: {}, gang: {minCount: 2}}")], "spec.podGroups[0].policy",
     'Invalid value: "{`basic`, `gang`}": exactly one of `basic`, `gang` is required, but multiple fields are set'),
    ([simulation(), workload(policy="{}")], "spec.podGroups[0].policy",
     "Required value: exactly one of `basic`, `gang` is required"),
    ([simulation(), workload().replace("podGroups: [{name: workers, policy: {gang: {minCount: 4}}}]", "podGroups: []")],
     "spec.podGroups", "Required value: must have at least one item"),
    ([simulation(), workload().replace("podGroups: [{name: workers, policy: {gang: {minCount: 4}}}]",
                                       "podGroups: [" + ", ".join(f"{{name: g{i}, policy: {{basic: {{}}}}}}"
                                                                  for i in range(9)) + "]")],
     "spec.podGroups", "Too many: 9: must have at most 8 items"),
    ([simulation(), workload().replace("{name: workers, policy: {gang: {minCount: 4}}}",
                                       "{name: w, policy: {basic: {}}}, {name: w, policy: {basic: {}}}")],
     "spec.podGroups[1].name", 'Duplicate value: "w"'),
    ([simulation(), workload().replace("kind: Job, ", "")], "spec.controllerRef.kind", "Required value"),
    ([simulation(), pod("p").replace("podGroup: workers", "pod_group: workers")], "",
     'unknown field "spec.workloadRef.pod_group"'),
])
def test_gates_and_validation(docs, path, message):
    with pytest.raises(InputError) as e:
        load(texts=[("<text>", "---\n".join([POOL, *docs]))])
    assert e.value.path == path and message in str(e.value)


def test_example_native_gang_1_35():
    """examples/native-gang-1.35.yaml: three workers time out in Permit every 300 s while the notebook holds a
    GPU; all four bind at the same instant once it ends, and none ran before."""
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "examples" / "native-gang-1.35.yaml"
    sim = Simulation(load([str(path)]))
    r = sim.run()
    workers = [p for p in r.pods() if p.metadata.name.startswith("train-")]
    notebook_end = r.pod("notebook").status.container_statuses[0].state.terminated.finished_at
    times = {n: t for n, t in scheduled(sim).items() if n.startswith("train-")}
    assert len(times) == 4 and len(set(times.values())) == 1
    assert next(iter(times.values())) >= notebook_end
    assert all(p.status.phase == "Succeeded" for p in workers)
    timeouts = [t for t, n, m in failed(sim) if "rejected due to timeout after waiting 5m0s at plugin GangScheduling" in m]
    assert sorted(set(timeouts)) == [310.0, 610.0, 910.0] and len(timeouts) == 9


def test_with_native_gang_alpha_turns_the_partial_start_into_an_all_or_nothing_start():
    """The course's partial-start scenario, made an alpha native gang: the 8 workers start together."""
    from pathlib import Path

    import gpusim as gs
    from gpusim.views.gang import with_native_gang_alpha
    from gpusim.workloads.training import training_report
    text = (Path(__file__).resolve().parents[1] / "examples" / "gang-partial-start.yaml").read_text()
    r = gs.run(text=with_native_gang_alpha(text, "llm", 8, kubernetes_version="1.35"))
    assert r.scenario.simulation.spec.feature_gates == {"GenericWorkload": True, "GangScheduling": True}
    starts = {p.status.condition("PodScheduled").last_transition_time for p in r.pods()
              if p.metadata.name.startswith("llm-pretrain-")}
    assert len(starts) == 1 and starts.pop() > 3600               # after the notebook's hour, all at once
    (report,) = training_report(r)
    assert report["wasted_gpu_hours"] < 0.01 and report["completed_at"] is not None
