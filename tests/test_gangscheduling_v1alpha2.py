"""Alpha native gang scheduling in its Kubernetes 1.36 shape: ``scheduling.k8s.io/v1alpha2`` Workload and
PodGroup, pod ``spec.schedulingGroup``, the in-tree GangScheduling plugin reading PodGroups; and the release
check (1.35 serves v1alpha1 only, 1.36 v1alpha2 only).

Ported rows: kubernetes pkg/scheduler/framework/plugins/gangscheduling/gangscheduling_test.go, the 1.36-era
revision importing k8s.io/api/scheduling/v1alpha2, function TestGangSchedulingFlow (all seven rows but
"final gang pod arrives at Permit during pod group scheduling cycle": the plugin's Permit here is the same in
and out of that cycle — the cycle itself, schedule_one_podgroup.go, is tested in test_schedule_one_podgroup.py). The QueueingHint tables (Test_isSchedulableAfterPodAdded / PodGroupAdded) are not ported: gpusim
requeues on any registered event (documented in gpusim/scheduler/plugins/gangscheduling.py).
Validation rows follow pkg/apis/scheduling/validation/validation.go ValidateWorkload / ValidatePodGroup.
"""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from gpusim.api.errors import InputError
from gpusim.cluster.scenario import load
from gpusim.cluster.simulation import Simulation
from gpusim.scheduler.plugins.gangscheduling import GangScheduling

ROOT = Path(__file__).resolve().parents[1]


def simulation(version="1.36", gates="{GenericWorkload: true, GangScheduling: true}"):
    return f"""apiVersion: gpusim.io/v1alpha1
kind: Simulation
metadata: {{name: s}}
spec: {{kubernetesVersion: "{version}", featureGates: {gates}}}
"""


NS = """apiVersion: v1
kind: Namespace
metadata: {name: ns1}
"""
# One GPU: the 2-GPU pods below never fit, so the test drives Reserve/Permit itself, as upstream's does.
SMALL_POOL = """apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: a100}
spec: {count: 1, gpu: {model: A100-SXM4-80GB, count: 1}}
"""
POOL = SMALL_POOL.replace("count: 1}}", "count: 8}}")


def pod_group(name, min_count=None, ns="ns1", template=("t1", "gang-wl"), policy=None):
    policy = policy or f"{{gang: {{minCount: {min_count}}}}}"
    ref = (f"\n  podGroupTemplateRef: {{workload: {{workloadName: {template[1]}, podGroupTemplateName: {template[0]}}}}}"
           if template else "")
    return f"""apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {{name: {name}, namespace: {ns}}}
spec:{ref}
  schedulingPolicy: {policy}
"""


def workload(name="gang-wl", templates="[{name: t1, schedulingPolicy: {gang: {minCount: 3}}}]"):
    return f"""apiVersion: scheduling.k8s.io/v1alpha2
kind: Workload
metadata: {{name: {name}, namespace: ns1}}
spec:
  controllerRef: {{apiGroup: batch, kind: Job, name: train}}
  podGroupTemplates: {templates}
"""


def pod(name, group=None, ns="ns1", gpus=2, at=None):
    ann = "gpusim.io/duration: 1h" + (f", gpusim.io/submit-at: {at}" if at else "")
    sg = f"\n  schedulingGroup: {{podGroupName: {group}}}" if group else ""
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {ns}, annotations: {{{ann}}}}}
spec:
  restartPolicy: Never{sg}
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


# --- TestGangSchedulingFlow (gangscheduling_test.go, 1.36) -------------------------------------------------------
GANG1 = pod_group("pg1", 3)
GANG2 = pod_group("pg2", 4, template=("t2", "gang-wl"))
BASIC = pod_group("pg3", template=("'1'", "basic-wl"), policy="{basic: {}}")
PODS = {"p1": pod("p1", "pg1"), "p2": pod("p2", "pg1"), "p3": pod("p3", "pg1"), "p4": pod("p4", "pg2"),
        "p5": pod("p5", "pg2"), "basic-pod": pod("basic-pod", "pg3"), "non-gang": pod("non-gang")}
UU = "UnschedulableAndUnresolvable"


class Handle:
    """The framework handle of upstream's test: the real apiserver, a podActivatorMock, the waiting pods."""

    def __init__(self, sim):
        self.api, self.ctx, self.k8s_version = sim.ctx.api, sim.ctx, (1, 36)
        self.activated: list[str] = []
        self.waiting: dict[str, SimpleNamespace] = {}
        self.queue = SimpleNamespace(activate=self.activated.extend)

    def get_waiting_pod(self, uid):
        return self.waiting.get(uid)


@pytest.mark.parametrize("name, target, initial, groups, waiting, want_pre_enqueue, want_permit, activated, allowed", [
    ("non-gang pod succeeds immediately", "non-gang", [], [GANG1, GANG2, BASIC], [], None, None, [], []),
    ("basic policy pod succeeds immediately", "basic-pod", [], [GANG1, GANG2, BASIC], [], None, None, [], []),
    ("gang pod fails PreEnqueue when pod group is not yet created", "p1", ["p2", "p3", "p4", "p5"], [], [],
     (UU, 'waiting for pods\'s pod group "pg1" to appear in scheduling queue'), None, [], []),
    ("gang pod fails PreEnqueue when quorum is not met", "p1", ["p2", "p4", "p5"], [GANG1, GANG2], [],
     (UU, "waiting for minCount pods from a gang to appear in scheduling queue"), None, [], []),
    ("gang pod passes PreEnqueue, but waits at Permit", "p1", ["p2", "p3", "p4", "p5"], [GANG1, GANG2],
     ["p2", "p4", "p5"], None, ("Wait", "waiting for minCount pods from a gang to be scheduled"), ["p3"], []),
    ("final gang pod arrives at Permit and allows all waiting pods from a gang", "p1", ["p2", "p3", "p4", "p5"],
     [GANG1, GANG2], ["p2", "p3", "p4", "p5"], None, None, [], ["p2", "p3"]),
])
def test_gang_scheduling_flow(name, target, initial, groups, waiting, want_pre_enqueue, want_permit, activated,
                              allowed):
    sim = sim_of(simulation(), NS, SMALL_POOL, *groups, *(PODS[p] for p in [*initial, target]), until=1)
    handle = Handle(sim)
    pl = GangScheduling(None, handle)
    get = {n: sim.ctx.api.get("Pod", "ns1", n) for n in [*initial, target]}
    st = pl.pre_enqueue(get[target])
    assert ((st.code.name, st.message()) if not st.is_success() else None) == want_pre_enqueue
    if want_pre_enqueue:
        return
    allows: list[str] = []
    for n in waiting:        # other pods already hit Permit and wait there
        info = SimpleNamespace(pod=get[n], key=get[n].metadata.uid)
        pl.reserve(None, info, "some-node")
        wst, _ = pl.permit(None, info, "some-node")
        assert wst.code.name == "Wait", n
        handle.waiting[info.key] = SimpleNamespace(allow=lambda plugin, n=n: allows.append(n))
    handle.activated.clear()
    info = SimpleNamespace(pod=get[target], key=get[target].metadata.uid)
    pl.reserve(None, info, "some-node")
    st, timeout = pl.permit(None, info, "some-node")
    assert ((st.code.name, st.message()) if not st.is_success() else None) == want_permit
    uid_name = {p.metadata.uid: n for n, p in get.items()}
    assert [uid_name[u] for u in handle.activated] == activated
    assert sorted(allows) == allowed
    assert timeout == (300.0 if want_permit else 0.0)     # permitTimeoutDuration = 5m


def test_permit_error_when_the_pod_group_disappeared():
    sim = sim_of(simulation(), NS, SMALL_POOL, GANG1, *(PODS[p] for p in ("p1", "p2", "p3")), until=1)
    handle = Handle(sim)
    pl = GangScheduling(None, handle)
    sim.ctx.api.delete(sim.ctx.api.get("PodGroup.scheduling.k8s.io", "ns1", "pg1"))
    p1 = sim.ctx.api.get("Pod", "ns1", "p1")
    st, _ = pl.permit(None, SimpleNamespace(pod=p1, key=p1.metadata.uid), "n")
    assert st.code.name == "Error"
    assert st.message() == 'failed to get podGroup ns1/pg1: podgroup.scheduling.k8s.io "pg1" not found'


# --- the plugin in a running cluster ----------------------------------------------------------------------------
def test_gang_waits_in_pre_enqueue_then_binds_together():
    sim = sim_of(simulation(), NS, POOL, pod_group("pg1", 3), pod("w0", "pg1"), pod("w1", "pg1", at="10s"),
                 pod("w2", "pg1", at="20s"), until=60)
    assert scheduled(sim) == {"w0": 20.0, "w1": 20.0, "w2": 20.0}
    assert failed(sim) == []


def test_pod_group_cycle_undoes_a_partial_gang_without_permit_waits():
    """Four 3-GPU workers on 8 GPUs, 1.36's pod group cycle (schedule_one_podgroup.go): two fit and pass Permit with
    Wait, two do not fit; the group is unschedulable, both assumed pods are undone in the same cycle (no waiting pod,
    no 5m Permit timeout, no GPU held), the fitting ones get "pod group is unschedulable, <Permit message>" and go
    to backoffQ, so the group is retried at 1, 3, 7, 15, 25 s, ... (backoff 1s doubling to 10s)."""
    sim = sim_of(simulation(), NS, POOL, pod_group("pg1", 4), pod("w0", "pg1", gpus=3), pod("w1", "pg1", gpus=3),
                 pod("w2", "pg1", gpus=3), pod("w3", "pg1", gpus=3), until=400)
    assert scheduled(sim) == {}
    assert not [m for _, _, m in failed(sim) if "rejected due to timeout" in m]
    first = {n: m for t, n, m in failed(sim) if t == 0}
    wait = 'pod group is unschedulable, one or more plugins asked to wait and no plugin rejected pod "{}"'
    fit = ("0/1 nodes are available: 1 Insufficient nvidia.com/gpu. no new claims to deallocate, preemption: 0/1 nodes are available: 1 No "
           "preemption victims found for incoming pod.")
    assert first == {"w3": wait.format("w3"), "w0": wait.format("w0"), "w1": fit, "w2": fit}
    cycles = sim.scheduler.pod_group_cycles
    assert [c.time for c in cycles[:7]] == [0, 1.0, 3.0, 7.0, 15.0, 25.0, 35.0]
    assert all((c.pods, c.assumed, c.scheduled, c.message) == (["w3", "w0", "w1", "w2"], 2, 0,
                                                                 "pod group is unschedulable") for c in cycles)
    assert len(sim.scheduler.waiting_pods) == 0 and not sim.scheduler.assumed
    pg = sim.ctx.api.get("PodGroup.scheduling.k8s.io", "ns1", "pg1")
    assert [(c["type"], c["status"], c["reason"], c["message"], c["lastTransitionTime"]) for c in pg.status.conditions] \
        == [("PodGroupScheduled", "False", "Unschedulable", "pod group is unschedulable", 0)]


def test_example_native_gang():
    """examples/native-gang.yaml (1.36 shape): while the notebook holds a GPU, each pod group cycle fits three
    workers, undoes them and sends the group back; no Permit wait or timeout; the cycle after the notebook ends
    binds all four at once, none ran before."""
    sim = Simulation(load([str(ROOT / "examples" / "native-gang.yaml")]))
    r = sim.run()
    notebook_end = r.pod("notebook").status.container_statuses[0].state.terminated.finished_at
    times = {n: t for n, t in scheduled(sim).items() if n.startswith("train-")}
    assert len(times) == 4 and len(set(times.values())) == 1 and next(iter(times.values())) >= notebook_end
    assert not [m for _, _, m in failed(sim) if "rejected due to timeout" in m]
    cycles = r.scheduler.pod_group_cycles
    assert [(c.time, c.assumed, c.scheduled) for c in cycles[:3]] == [(10.0, 3, 0), (11.0, 3, 0), (13.0, 3, 0)]
    assert (cycles[-1].time, cycles[-1].assumed, cycles[-1].scheduled) == (1205.0, 4, 4)
    assert all(c.scheduled == 0 and c.assumed == 3 for c in cycles[:-1]) and len(cycles) == 123
    assert {p.metadata.name for p in r.api.list("PodGroup.scheduling.k8s.io")} == {"train"}
    [cond] = r.api.get("PodGroup.scheduling.k8s.io", "default", "train").status.conditions
    assert (cond["status"], cond["reason"], cond["lastTransitionTime"]) == ("True", "Scheduled", 1205.0)


def test_with_native_gang_alpha_1_36_starts_the_partial_start_scenario_together():
    import gpusim as gs
    from gpusim.views.gang import with_native_gang_alpha
    text = (ROOT / "examples" / "gang-partial-start.yaml").read_text()
    r = gs.run(text=with_native_gang_alpha(text, "llm", 8))
    assert r.scenario.simulation.spec.kubernetes_version == "1.36"
    starts = {p.status.condition("PodScheduled").last_transition_time for p in r.pods()
              if p.metadata.name.startswith("llm-pretrain-")}
    assert len(starts) == 1 and starts.pop() > 3600


# --- which release serves which shape, and validation -------------------------------------------------------------
V1ALPHA1_WORKLOAD = """apiVersion: scheduling.k8s.io/v1alpha1
kind: Workload
metadata: {name: train}
spec:
  podGroups: [{name: workers, policy: {gang: {minCount: 2}}}]
"""


@pytest.mark.parametrize("docs, path, message", [
    ([simulation(), V1ALPHA1_WORKLOAD], "", 'no matches for kind "Workload" in version "scheduling.k8s.io/v1alpha1" '
     "(Kubernetes 1.36 serves scheduling.k8s.io/v1alpha2: write a scheduling.k8s.io/v1alpha2 PodGroup"),
    ([simulation(version="1.35"), pod_group("pg1", 2)], "", 'no matches for kind "PodGroup" in version '
     '"scheduling.k8s.io/v1alpha2" (Kubernetes 1.35 serves scheduling.k8s.io/v1alpha1'),
    ([simulation(version="1.35"), workload()], "", 'no matches for kind "Workload" in version "scheduling.k8s.io/v1alpha2"'),
    ([simulation(), pod("p").replace("restartPolicy: Never", "restartPolicy: Never\n  workloadRef: {name: w, podGroup: g}")],
     "spec.workloadRef", "Forbidden: Kubernetes 1.36 has no field workloadRef; Kubernetes 1.36 replaced it with "
     "spec.schedulingGroup.podGroupName"),
    ([simulation(version="1.35"), pod("p", "pg1")], "spec.schedulingGroup",
     "Forbidden: Kubernetes 1.35 has no field schedulingGroup; it exists from Kubernetes 1.36 on"),
    ([simulation(gates="{}"), pod_group("pg1", 2)], "", 'no matches for kind "PodGroup" in version '
     '"scheduling.k8s.io/v1alpha2" (alpha: enable it with spec.featureGates.GenericWorkload: true'),
    ([simulation(gates="{}"), pod("p", "pg1")], "spec.schedulingGroup", "Forbidden: alpha field"),
    ([simulation(), pod("p", "''")], "spec.schedulingGroup.podGroupName", "Required value"),
    ([simulation(), pod("p", "Bad_Name")], "spec.schedulingGroup.podGroupName", 'Invalid value: "Bad_Name"'),
    ([simulation(), pod_group("pg1", 0)], "spec.schedulingPolicy.gang.minCount", "Required value"),
    ([simulation(), pod_group("pg1", -1)], "spec.schedulingPolicy.gang.minCount",
     "Invalid value: -1: must be greater than zero"),
    ([simulation(), pod_group("pg1", policy="{}")], "spec.schedulingPolicy",
     'Invalid value: "": must specify one of: `basic`, `gang`'),
    ([simulation(), pod_group("pg1", policy="{basic: {}, gang: {minCount: 2}}")], "spec.schedulingPolicy",
     'Invalid value: "{`basic`, `gang`}": exactly one of `basic`, `gang` is required, but multiple fields are set'),
    ([simulation(), pod_group("pg1", 2, template=("", "wl"))], "spec.podGroupTemplateRef.workload.podGroupTemplateName",
     "Required value"),
    ([simulation(), pod_group("pg1", 2).replace("schedulingPolicy:", "schedulingConstraints: {}\n  schedulingPolicy:")],
     "", 'unknown field "spec.schedulingConstraints"'),
    ([simulation(), workload(templates="[]")], "spec.podGroupTemplates", "Required value: must have at least one item"),
    ([simulation(), workload(templates="[" + ", ".join(f"{{name: g{i}, schedulingPolicy: {{basic: {{}}}}}}"
                                                        for i in range(9)) + "]")],
     "spec.podGroupTemplates", "Too many: 9: must have at most 8 items"),
    ([simulation(), workload(templates="[{name: w, schedulingPolicy: {basic: {}}}, {name: w, schedulingPolicy: "
                                       "{basic: {}}}]")], "spec.podGroupTemplates[1]", 'Duplicate value: "w"'),
    ([simulation(), workload(templates="[{schedulingPolicy: {basic: {}}}]")], "spec.podGroupTemplates[0].name",
     "Required value"),
    ([simulation(), workload().replace("kind: Job, ", "")], "spec.controllerRef.kind", "Required value"),
])
def test_release_shape_and_validation(docs, path, message):
    with pytest.raises(InputError) as e:
        load(texts=[("<text>", "---\n".join([NS, SMALL_POOL, *docs]))])
    assert e.value.path == path and message in str(e.value), str(e.value)


def test_default_profile_gets_gang_scheduling_with_its_1_36_events():
    sim = sim_of(simulation(), SMALL_POOL)
    pl = next(p for p in sim.scheduler.framework.plugins if p.name == "GangScheduling")
    assert pl.v1alpha2 and pl.events == {"Pod/Add", "PodGroup/Add", "PodGroup/Update"}


def test_pod_group_cycles_helper_lists_and_summarises_the_cycles():
    import gpusim as gs
    r = gs.run(str(ROOT / "examples" / "native-gang.yaml"))
    rows = gs.pod_group_cycles(r, "train")
    assert rows == gs.pod_group_cycles(r) and len(rows) == 123 and gs.pod_group_cycles(r, "other") == []
    assert {k: rows[0][k] for k in ("time", "placed", "bound", "status", "message")} == {
        "time": 10.0, "placed": 3, "bound": 0, "status": "Unschedulable", "message": "pod group is unschedulable"}
    assert (rows[-1]["time"], rows[-1]["placed"], rows[-1]["bound"], rows[-1]["status"]) == (1205.0, 4, 4, "Success")
    assert gs.pod_group_cycle_summary(r, "train").splitlines() == [
        "123 pod group scheduling cycles",
        "t=10s default/train: placed 3 of 4, undone (pod group is unschedulable)",
        "t=11s default/train: placed 3 of 4, undone (pod group is unschedulable)",
        "t=13s default/train: placed 3 of 4, undone (pod group is unschedulable)",
        "... 119 more ...",
        "t=1205s default/train: placed 4 of 4, bound"]
