"""DefaultPreemption and PodDisruptionBudgets, with hand-computed expectations.

Whole scenarios run through ``gpusim.cluster.simulation`` (PriorityClasses, NodePools, pods
bound with ``spec.nodeName``) and are read as a user reads them: events, FailedScheduling messages,
pod status. The selection rules (pickOneNodeForPreemption, filterPodsWithPDBViolation, the dry run's
offset and candidate count) and the disruption controller's arithmetic are tested directly.
"""
from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from gpusim.api.core_v1 import (Container, Node, NodeSpec, NodeStatus, Pod, PodCondition, PodSpec,
                                ResourceRequirements)
from gpusim.api.errors import InputError
from gpusim.api.meta import LabelSelector, ObjectMeta, OwnerReference
from gpusim.api.policy_v1 import (PodDisruptionBudget, PodDisruptionBudgetSpec, PodDisruptionBudgetStatus,
                                  compute_status, disruptions_allowed, scaled_value)
from gpusim.cluster.scenario import load
from gpusim.cluster.simulation import Simulation, run
from gpusim.scheduler.framework import Code, CycleState, NodeInfo, PodInfo, Status
from gpusim.scheduler.plugins.defaultpreemption import (MAX_INT32, Candidate, DefaultPreemption,
                                                        filter_pods_with_pdb_violation, pick_one_node)
from gpusim.scheduler.plugins.noderesources import NodeResourcesFit
from gpusim.views.kubectl import to_json

GPU = "nvidia.com/gpu"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"


# --- scenario helpers ------------------------------------------------------------------------------------

def classes(**values: int) -> str:
    return "---\n".join(f"""apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {{name: {name}}}
value: {value}
""" for name, value in values.items())


def pool(count=1, gpus=8, extra=""):
    return f"""apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {{name: a100}}
spec: {{count: {count}, gpu: {{model: A100-SXM4-80GB, count: {gpus}}}{extra}}}
"""


def pod(name, gpus, prio=None, at=None, node=None, labels=None, duration="1h", spec=""):
    ann = f"gpusim.io/duration: {duration}" + (f", gpusim.io/submit-at: {at}" if at else "")
    lines = "  restartPolicy: Never\n"
    if prio:
        lines += f"  priorityClassName: {prio}\n"
    if node:
        lines += f"  nodeName: {node}\n"
    lab = f", labels: {labels}" if labels else ""
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: {name}, annotations: {{{ann}}}{lab}}}
spec:
{lines}{spec}  containers: [{{name: main, image: cuda, resources: {{limits: {{{GPU}: {gpus}}}}}}}]
"""


def pdb(name, labels, min_available=None, max_unavailable=None, extra=""):
    body = f"  minAvailable: {min_available}\n" if min_available is not None else ""
    body += f"  maxUnavailable: {max_unavailable}\n" if max_unavailable is not None else ""
    return f"""apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {{name: {name}}}
spec:
{body}  selector: {{matchLabels: {labels}}}
{extra}"""


def text(*docs: str) -> str:
    return "---\n".join(docs)


def events(result, name, reason=None):
    return [e for e in result.events.log if e.object.name == name and (reason is None or e.reason == reason)]


def failed_messages(result, name):
    return [e.message for e in events(result, name, "FailedScheduling")]


def simulation(yaml_text: str, until: float) -> Simulation:
    return Simulation(load(texts=[("<text>", yaml_text)]), until=until)


# --- whole scenarios -------------------------------------------------------------------------------------

def test_lower_priority_victim_is_evicted_and_preemptor_nominated_then_scheduled():
    sim = simulation(text(classes(low=10, high=1000), pool(),
                          pod("low-1", 8, "low"), pod("high-1", 8, "high", at="10s", duration="1m")), until=300)
    env, api = sim.ctx.env, sim.ctx.api
    env.run(until=5)
    victim = api.get("Pod", "default", "low-1")
    assert victim.status.phase == "Running"
    env.run(until=10.5)
    high = api.get("Pod", "default", "high-1")
    # t=10: no node fits → PostFilter preempts; the preemptor is nominated, not yet bound.
    assert high.status.nominated_node_name == "a100-0" and not high.spec.node_name
    assert api.get("Pod", "default", "low-1") is None
    cond = victim.status.condition("DisruptionTarget")
    assert (cond.status, cond.reason, cond.message) == (
        "True", "PreemptionByScheduler", "default-scheduler: preempting to accommodate a higher priority pod")
    r = sim.run()
    assert [e.message for e in events(r, "low-1", "Preempted")] == [
        f"Preempted by pod {high.metadata.uid} on node a100-0"]
    assert [e.message for e in events(r, "low-1", "Killing")] == ["Stopping container main"]
    # A successful preemption adds no PostFilter message to the FailedScheduling event.
    assert failed_messages(r, "high-1") == ["0/1 nodes are available: 1 Insufficient nvidia.com/gpu."]
    sched = events(r, "high-1", "Scheduled")
    assert [(e.time, e.message) for e in sched] == [(11.0, "Successfully assigned default/high-1 to a100-0")]
    assert r.pod("high-1").status.phase == "Succeeded"
    assert not events(r, "high-1", "UnexpectedAdmissionError")   # the victim's GPUs were freed


def test_reprieve_keeps_back_the_most_important_victims_that_still_fit():
    # 8 GPUs: p20 (2 GPUs), p15 (4), p5 (2) all running; the preemptor wants 4.
    # Remove all three (8 free), then reprieve by importance: p20 → 6 free, fits, kept;
    # p15 → 2 free, no fit, victim; p5 → 4 free, fits, kept. Only p15 goes — not the lowest priority.
    r = run(text=text(classes(p5=5, p15=15, p20=20, p100=100), pool(),
                      pod("p20", 2, "p20", node="a100-0"), pod("p15", 4, "p15", node="a100-0"),
                      pod("p5", 2, "p5", node="a100-0"), pod("want", 4, "p100", at="10s", duration="1m")),
            until=120)
    assert [e.object.name for e in r.events.log if e.reason == "Preempted"] == ["p15"]
    assert r.pod("p15") is None
    assert r.pod("p20").status.phase == r.pod("p5").status.phase == "Running"
    assert r.pod("want").spec.node_name == "a100-0"


def _two_nodes(with_pdb: bool) -> str:
    # a100-0: a1, a2 (4 GPUs each, priority 10, app=train); a100-1: b1, b2 (4 GPUs each, priority 20).
    docs = [classes(p10=10, p20=20, p100=100), pool(count=2),
            pod("a1", 4, "p10", node="a100-0", labels="{app: train}"),
            pod("a2", 4, "p10", node="a100-0", labels="{app: train}"),
            pod("b1", 4, "p20", node="a100-1"), pod("b2", 4, "p20", node="a100-1"),
            pod("big", 8, "p100", at="10s", duration="1m")]
    if with_pdb:
        docs.append(pdb("train", "{app: train}", min_available=1))
    return text(*docs)


def test_without_budget_the_node_with_the_lower_priority_victims_wins():
    r = run(text=_two_nodes(with_pdb=False), until=120)
    # criterion 2: highest victim priority 10 (a100-0) beats 20 (a100-1)
    assert sorted(e.object.name for e in r.events.log if e.reason == "Preempted") == ["a1", "a2"]
    assert r.pod("big").spec.node_name == "a100-0"


def test_pdb_makes_the_node_with_fewer_violations_win():
    # PDB train: minAvailable 1 over a1, a2 (both Ready) → disruptionsAllowed = 2 − 1 = 1.
    # a100-0: a1 decrements to 0 (fine), a2 to −1 (violating) → both must go → 1 violation.
    # a100-1: b1, b2 match no budget → 0 violations. Criterion 1 picks a100-1 although its victims
    # have the higher priority.
    r = run(text=_two_nodes(with_pdb=True), until=120)
    assert sorted(e.object.name for e in r.events.log if e.reason == "Preempted") == ["b1", "b2"]
    assert r.pod("big").spec.node_name == "a100-1"
    assert r.pod("a1").status.phase == r.pod("a2").status.phase == "Running"
    data = to_json(r)    # the PDB object is an ordinary API object for the views
    assert data


def test_preemption_policy_never():
    r = run(text=text(classes(low=10, high=1000), pool(), pod("low-1", 8, "low"),
                      pod("polite", 8, "high", at="10s", spec="  preemptionPolicy: Never\n")), until=30)
    assert failed_messages(r, "polite")[0] == ("0/1 nodes are available: 1 Insufficient nvidia.com/gpu. "
                                               "no new claims to deallocate, preemption: not eligible due to preemptionPolicy=Never.")
    assert not [e for e in r.events.log if e.reason == "Preempted"]


def test_no_lower_priority_pods_means_no_victims():
    r = run(text=text(classes(same=10), pool(), pod("first", 8, "same"), pod("second", 8, "same", at="10s")),
            until=30)
    assert failed_messages(r, "second")[0] == (
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. "
        f"no new claims to deallocate, preemption: 0/1 nodes are available: 1 {NO_VICTIMS}.")


def test_node_whose_allocatable_is_below_the_request_is_not_helpful():
    # 16 GPUs > 8 allocatable: UnschedulableAndUnresolvable (≥1.34), so no dry run at all.
    r = run(text=text(classes(low=10, high=1000), pool(), pod("low-1", 2, "low"), pod("huge", 16, "high", at="10s")),
            until=30)
    assert failed_messages(r, "huge")[0] == (
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. "
        f"no new claims to deallocate, preemption: 0/1 nodes are available: 1 {NOT_HELPFUL}.")
    assert r.pod("low-1").status.phase == "Running"


def test_before_1_34_an_oversized_request_is_dry_run_and_still_fails():
    sim = """apiVersion: gpusim.io/v1alpha1
kind: Simulation
metadata: {name: s}
spec: {kubernetesVersion: "1.33"}
"""
    r = run(text=text(sim, classes(low=10, high=1000), pool(), pod("low-1", 2, "low"),
                      pod("huge", 16, "high", at="10s")), until=30)
    # Unschedulable → dry run: removing low-1 still leaves 8 < 16, so the node keeps its Filter reason.
    assert failed_messages(r, "huge")[0] == (
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. "
        "preemption: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu.")
    assert r.pod("low-1").status.phase == "Running"


def test_nested_histogram_over_mixed_nodes():
    # a100-0 tainted (U&U → not helpful), a100-1 busy with an equal-priority pod (no victims),
    # a100-2 busy with an equal-priority pod too.
    taint = ", taints: [{key: dedicated, value: x, effect: NoSchedule}]"
    docs = [classes(same=10), pool(count=3),
            """apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: tainted}
spec: {count: 1, gpu: {model: A100-SXM4-80GB, count: 8}""" + taint + "}\n",
            pod("x1", 8, "same", node="a100-1"), pod("x2", 8, "same", node="a100-2"),
            pod("x0", 8, "same", node="a100-0"), pod("late", 8, "same", at="10s")]
    r = run(text=text(*docs), until=30)
    assert failed_messages(r, "late")[0] == (
        "0/4 nodes are available: 1 node(s) had untolerated taint(s), 3 Insufficient nvidia.com/gpu. "
        f"no new claims to deallocate, preemption: 0/4 nodes are available: 1 {NOT_HELPFUL}, 3 {NO_VICTIMS}.")


def test_pdb_validation_messages():
    both = """apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: both}
spec:
  minAvailable: 10%
  maxUnavailable: 1
  selector: {matchLabels: {app: web}}
"""
    with pytest.raises(InputError) as e:
        load(texts=[("t.yaml", both)])
    assert str(e.value) == (
        'error: t.yaml, document 1: PodDisruptionBudget "default/both" is invalid: spec: Invalid value: '
        '{"MinAvailable":"10%","Selector":{"matchLabels":{"app":"web"}},"MaxUnavailable":1,'
        '"UnhealthyPodEvictionPolicy":null}: minAvailable and maxUnavailable cannot be both set')
    cases = [
        (pdb("p", "{app: web}", min_available='"150%"'), "spec.minAvailable",
         'Invalid value: "150%": must not be greater than 100%'),
        (pdb("p", "{app: web}", max_unavailable=-1), "spec.maxUnavailable",
         "Invalid value: -1: must be greater than or equal to 0"),
        (pdb("p", "{app: web}", min_available="nope"), "spec.minAvailable",
         "Invalid value: \"nope\": a valid percent string must be a numeric string followed by an ending '%' "
         "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"),
        (pdb("p", "{app: web}", min_available=1, extra="  unhealthyPodEvictionPolicy: Sometimes\n"),
         "spec.unhealthyPodEvictionPolicy",
         'Unsupported value: "Sometimes": supported values: "AlwaysAllow", "IfHealthyBudget"'),
    ]
    for doc, path, msg in cases:
        with pytest.raises(InputError) as e:
            load(texts=[("t.yaml", doc)])
        assert (e.value.path, e.value.message) == (path, msg)
    ok = pdb("p", "{app: web}", min_available='"100%"', extra="  unhealthyPodEvictionPolicy: AlwaysAllow\n")
    assert load(texts=[("t.yaml", ok)]).pdbs[0].spec.min_available == "100%"
    other_ns = ok.replace("metadata: {name: p}", "metadata: {name: p, namespace: team}")
    with pytest.raises(InputError) as e:
        load(texts=[("t.yaml", other_ns)])
    assert (e.value.namespace, e.value.message) == ("team", 'namespaces "team" not found')


# --- pickOneNodeForPreemption ------------------------------------------------------------------------------

def vpod(name, prio, start=None, labels=None, ns="default") -> PodInfo:
    p = Pod(metadata=ObjectMeta(name=name, namespace=ns, uid=name, labels=dict(labels or {})),
            spec=PodSpec(containers=[Container(name="c")], priority=prio))
    p.status.start_time = start
    return PodInfo(p)


def cand(name, *victims, violations=0) -> Candidate:
    return Candidate(name, list(victims), violations)


def test_pick_criterion_1_fewest_pdb_violations():
    a = cand("a", vpod("a1", 1), violations=1)
    b = cand("b", vpod("b1", 100), vpod("b2", 100), violations=0)
    assert pick_one_node([a, b]).name == "b"


def test_pick_criterion_2_lowest_highest_priority():
    a = cand("a", vpod("a1", 50))
    b = cand("b", vpod("b1", 40), vpod("b2", 40), vpod("b3", 40))
    assert pick_one_node([a, b]).name == "b"


def test_pick_criterion_3_sum_of_shifted_priorities():
    # Both highest -10; sums 2·(2^31 − 10) vs 2^31 − 10: the single negative victim wins
    # (without the MaxInt32+1 shift, the pair's −20 would look "smaller").
    a = cand("a", vpod("a1", -10), vpod("a2", -10))
    b = cand("b", vpod("b1", -10))
    assert pick_one_node([a, b]).name == "b"
    c = cand("c", vpod("c1", 5), vpod("c2", 1))
    d = cand("d", vpod("d1", 5), vpod("d2", 2))
    assert pick_one_node([d, c]).name == "c"


def test_pick_criterion_4_fewest_victims():
    # equal highest (0) and equal sums: (0 + 2^31) + (−2^31 + 2^31) = 2^31 = (0 + 2^31)
    a = cand("a", vpod("a1", 0), vpod("a2", -MAX_INT32 - 1))
    b = cand("b", vpod("b1", 0))
    assert sum(v.pod.spec.priority + MAX_INT32 + 1 for v in a.victims) == \
        sum(v.pod.spec.priority + MAX_INT32 + 1 for v in b.victims)
    assert pick_one_node([a, b]).name == "b"


def test_pick_criterion_5_latest_earliest_start_of_highest_priority_victims():
    # Ties on 1–4. Among the priority-10 victims, a's earliest start is 100, b's 50 → a (started later).
    # a's lower-priority victim started at 1, earlier than anything on b: it does not count.
    a = cand("a", vpod("a1", 10, start=100), vpod("a2", 5, start=1))
    b = cand("b", vpod("b1", 10, start=50), vpod("b2", 5, start=200))
    assert pick_one_node([b, a]).name == "a"
    # GetEarliestPodStartTime takes the minimum over all highest-priority victims
    c = cand("c", vpod("c1", 10, start=300), vpod("c2", 10, start=20))
    d = cand("d", vpod("d1", 10, start=30), vpod("d2", 10, start=40))
    assert pick_one_node([c, d]).name == "d"
    # a victim without a start time counts as starting now
    e = cand("e", vpod("e1", 10, start=None))
    f = cand("f", vpod("f1", 10, start=70))
    assert pick_one_node([f, e], now=60).name == "f"
    assert pick_one_node([f, e], now=80).name == "e"


def test_pick_criterion_6_first_candidate():
    a = cand("a", vpod("a1", 10, start=5))
    b = cand("b", vpod("b1", 10, start=5))
    assert pick_one_node([a, b]).name == "a" and pick_one_node([b, a]).name == "b"
    assert pick_one_node([]) is None


# --- filterPodsWithPDBViolation --------------------------------------------------------------------------

def budget(name, selector, allowed, ns="default", disrupted=None) -> PodDisruptionBudget:
    return PodDisruptionBudget(metadata=ObjectMeta(name=name, namespace=ns),
                               spec=PodDisruptionBudgetSpec(min_available=1, selector=selector),
                               status=PodDisruptionBudgetStatus(disruptions_allowed=allowed,
                                                                disrupted_pods=dict(disrupted or {})))


def test_filter_pods_with_pdb_violation_decrements_per_victim():
    web = LabelSelector(match_labels={"app": "web"})
    pods = [vpod(f"w{i}", 1, labels={"app": "web"}) for i in range(3)] + [vpod("x", 1, labels={"app": "x"})]
    violating, ok = filter_pods_with_pdb_violation(pods, [budget("b", web, 1)])
    assert [p.pod.metadata.name for p in violating] == ["w1", "w2"]     # 1 → 0 → −1 → −2
    assert [p.pod.metadata.name for p in ok] == ["w0", "x"]
    # already in disruptedPods: not decremented again
    violating, _ = filter_pods_with_pdb_violation(pods, [budget("b", web, 1, disrupted={"w0": 0.0})])
    assert [p.pod.metadata.name for p in violating] == ["w2"]
    # another namespace, an empty or nil selector, and unlabelled pods match nothing
    assert not filter_pods_with_pdb_violation(pods, [budget("b", web, 0, ns="other")])[0]
    assert not filter_pods_with_pdb_violation(pods, [budget("b", LabelSelector(), 0)])[0]
    assert not filter_pods_with_pdb_violation(pods, [budget("b", None, 0)])[0]
    assert not filter_pods_with_pdb_violation([vpod("bare", 1)], [budget("b", LabelSelector(), 0)])[0]


# --- the disruption controller's arithmetic -------------------------------------------------------------

def live_pod(name, ready=True, labels=None, owner=None, ns="default", deleting=False) -> Pod:
    p = Pod(metadata=ObjectMeta(name=name, namespace=ns, labels=dict(labels or {"app": "web"})))
    if owner:
        p.metadata.owner_references = [OwnerReference(*owner, controller=True)]
    p.status.phase = "Running"
    p.status.conditions = [PodCondition("Ready", "True" if ready else "False")]
    if deleting:
        p.metadata.deletion_timestamp = 1.0
    return p


def spec_pdb(min_available=None, max_unavailable=None, selector=LabelSelector(match_labels={"app": "web"})):
    return PodDisruptionBudget(metadata=ObjectMeta(name="b", namespace="default"),
                               spec=PodDisruptionBudgetSpec(min_available=min_available, selector=selector,
                                                            max_unavailable=max_unavailable))


def test_scaled_value_rounds_up():
    assert scaled_value("50%", 3, True) == 2 and scaled_value("50%", 3, False) == 1
    assert scaled_value("15%", 10, True) == 2 and scaled_value(4, 10, True) == 4


def test_integer_min_available_counts_ready_pods():
    pods = [live_pod("a"), live_pod("b"), live_pod("c", ready=False), live_pod("d", deleting=True),
            live_pod("e", labels={"app": "db"}), live_pod("f", ns="other")]
    s = compute_status(spec_pdb(min_available=1), pods)
    # expected = 4 matching pods in the namespace; healthy = a, b; desired 1 → 1 allowed
    assert (s.expected_pods, s.current_healthy, s.desired_healthy, s.disruptions_allowed) == (4, 2, 1, 1)
    assert (s.conditions[0].type, s.conditions[0].status, s.conditions[0].reason) == (
        "DisruptionAllowed", "True", "SufficientPods")
    assert disruptions_allowed(spec_pdb(min_available=2), pods) == 0
    assert compute_status(spec_pdb(min_available=2), pods).conditions[0].reason == "InsufficientPods"
    # policy/v1: an empty selector selects every pod of the namespace, a nil one none
    assert compute_status(spec_pdb(min_available=0, selector=LabelSelector()), pods).expected_pods == 5
    assert compute_status(spec_pdb(min_available=0, selector=None), pods).expected_pods == 0


def test_percentages_use_the_controllers_scale():
    rs = ("apps/v1", "ReplicaSet", "rs", "rs-uid")
    pods = [live_pod(f"p{i}", owner=rs) for i in range(3)]
    scale = lambda ref, pod: 4 if ref.kind == "ReplicaSet" else None   # noqa: E731
    s = compute_status(spec_pdb(min_available="50%"), pods, scale_of=scale)
    # expected = scale 4; desired = ceil(4 × 50%) = 2; healthy 3 → 1 allowed
    assert (s.expected_pods, s.desired_healthy, s.disruptions_allowed) == (4, 2, 1)
    s = compute_status(spec_pdb(max_unavailable="30%"), pods, scale_of=scale)
    # maxUnavailable = ceil(4 × 30%) = 2; desired = 4 − 2 = 2; healthy 3 → 1 allowed
    assert (s.expected_pods, s.desired_healthy, s.disruptions_allowed) == (4, 2, 1)
    # bare pods are unmanaged: expected 0 → nothing allowed
    assert compute_status(spec_pdb(max_unavailable=1), [live_pod("x"), live_pod("y")]).disruptions_allowed == 0


def test_job_pods_under_a_percentage_fail_the_sync():
    job = ("batch/v1", "Job", "train", "job-uid")
    s = compute_status(spec_pdb(min_available="50%"), [live_pod("j0", owner=job), live_pod("j1", owner=job)])
    assert s.disruptions_allowed == 0
    assert (s.conditions[0].status, s.conditions[0].reason, s.conditions[0].message) == (
        "False", "SyncFailed", "jobs.batch does not implement the scale subresource")
    # an integer minAvailable needs no scale
    assert disruptions_allowed(spec_pdb(min_available=1), [live_pod("j0", owner=job), live_pod("j1", owner=job)]) == 1


# --- the plugin with a hand-made handle -----------------------------------------------------------------

def gpu_node(name, gpus=8) -> NodeInfo:
    return NodeInfo(Node(metadata=ObjectMeta(name=name), spec=NodeSpec(),
                         status=NodeStatus(allocatable={"cpu": "64", "memory": "512Gi", "pods": "110",
                                                        GPU: str(gpus)})))


def gpu_pod(name, gpus, prio, node="") -> PodInfo:
    p = Pod(metadata=ObjectMeta(name=name, namespace="default", uid=name),
            spec=PodSpec(containers=[Container(name="c", resources=ResourceRequirements(
                limits={GPU: str(gpus)}, requests={GPU: str(gpus)}))], priority=prio, node_name=node))
    p.status.start_time = 1.0 if node else None
    return PodInfo(p)


class Handle:
    def __init__(self, nodes, seed=7):
        self.nodes = nodes
        self.fit = NodeResourcesFit()
        self.ctx = SimpleNamespace(rng=random.Random(seed), now=50.0, api=None)
        self.preempted = []
        self.filtered = []

    def node_infos(self):
        return list(self.nodes)

    def run_filters(self, state, pi, ni):
        self.filtered.append(ni.name)
        return self.fit.filter(state, pi, ni).with_plugin("NodeResourcesFit")

    def preempt(self, pi, node, victims):
        self.preempted.append((node, [v.pod.metadata.name for v in victims]))
        pi.pod.status.nominated_node_name = node


def full_nodes(n):
    nodes = []
    for i in range(n):
        ni = gpu_node(f"n{i}")
        ni.add_pod(gpu_pod(f"v{i}", 8, 1, node=f"n{i}"))
        nodes.append(ni)
    return nodes


def unschedulable(nodes):
    return {ni.name: Status(Code.Unschedulable, ["Insufficient nvidia.com/gpu"]) for ni in nodes}


def test_candidate_count_clamp_and_args():
    pl = DefaultPreemption(Handle([]))
    assert [pl.calculate_num_candidates(n) for n in (1, 50, 100, 1000, 2000)] == [1, 50, 100, 100, 200]
    pl = DefaultPreemption(Handle([]), {"minCandidateNodesPercentage": 50, "minCandidateNodesAbsolute": 1})
    assert pl.calculate_num_candidates(10) == 5 and pl.calculate_num_candidates(1) == 1
    with pytest.raises(ValueError, match=r"minCandidateNodesPercentage: Invalid value: 101: not in valid range"):
        DefaultPreemption(Handle([]), {"minCandidateNodesPercentage": 101})
    with pytest.raises(ValueError, match="cannot be zero at the same time"):
        DefaultPreemption(Handle([]), {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0})


def test_dry_run_starts_at_a_seeded_random_offset_and_stops_at_enough_candidates():
    nodes = full_nodes(10)
    h = Handle(nodes, seed=7)
    pl = DefaultPreemption(h, {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 3})
    offset = random.Random(7).randrange(10)
    node, st = pl.post_filter(CycleState(), gpu_pod("p", 8, 100), unschedulable(nodes))
    assert st.is_success()
    # three candidates, dry-run from the offset; all tie down to criterion 6 → the first one found
    assert h.filtered[::2] == [f"n{(offset + i) % 10}" for i in range(3)]
    assert node == f"n{offset}" and h.preempted == [(node, [f"v{offset}"])]


def test_terminating_victim_on_the_nominated_node_blocks_another_preemption():
    nodes = full_nodes(2)
    victim = nodes[0].pods["v0"].pod
    victim.metadata.deletion_timestamp = 40.0
    victim.status.conditions = [PodCondition("DisruptionTarget", "True", "PreemptionByScheduler")]
    pre = gpu_pod("p", 8, 100)
    pre.pod.status.nominated_node_name = "n0"
    h = Handle(nodes)
    node, st = DefaultPreemption(h).post_filter(CycleState(), pre, unschedulable(nodes))
    assert (node, st.code, st.reasons) == (
        None, Code.Unschedulable, ["preemption: not eligible due to a terminating pod on the nominated node."])
    assert pre.pod.status.nominated_node_name == "n0" and not h.preempted
    # a nominated node that is now UnschedulableAndUnresolvable does not block
    statuses = unschedulable(nodes)
    statuses["n0"] = Status(Code.UnschedulableAndUnresolvable, ["node(s) were unschedulable"])
    node, st = DefaultPreemption(Handle(nodes)).post_filter(CycleState(), pre, statuses)
    assert st.is_success() and node == "n1"
    # a terminating pod of equal priority does not block either
    victim.spec.priority = 100
    node, st = DefaultPreemption(Handle(nodes)).post_filter(CycleState(), pre, unschedulable(nodes))
    assert st.is_success() and node == "n1"


def test_failed_preemption_clears_the_nomination():
    nodes = [gpu_node("n0")]
    nodes[0].add_pod(gpu_pod("same", 8, 100, node="n0"))
    pre = gpu_pod("p", 8, 100)
    pre.pod.status.nominated_node_name = "gone"
    node, st = DefaultPreemption(Handle(nodes)).post_filter(CycleState(), pre, unschedulable(nodes))
    assert (node, st.reasons) == (None, [f"preemption: 0/1 nodes are available: 1 {NO_VICTIMS}."])
    assert pre.pod.status.nominated_node_name == ""


def test_select_victims_does_not_touch_the_cache():
    nodes = full_nodes(1)
    before = list(nodes[0].pods)
    victims, nviol, st = DefaultPreemption(Handle(nodes)).select_victims_on_node(
        CycleState(), gpu_pod("p", 4, 100), nodes[0], [])
    assert st.is_success() and [v.pod.metadata.name for v in victims] == ["v0"] and nviol == 0
    assert list(nodes[0].pods) == before and nodes[0].requested.get(GPU) == 8


def test_disrupted_pods_are_not_healthy_until_the_deletion_timeout():
    pods = [live_pod("a"), live_pod("b"), live_pod("c")]
    b = spec_pdb(min_available=1)
    b.status.disrupted_pods = {"a": 100.0, "z": 100.0, "c": "2024-01-01T00:00:00Z"}
    s = compute_status(b, pods, now=150.0)
    # a was disrupted 50 s ago (< 2 min): not healthy, kept; z is gone; c's foreign time has expired
    assert (s.current_healthy, s.disruptions_allowed, s.disrupted_pods) == (2, 1, {"a": 100.0})
    s = compute_status(b, pods, now=221.0)
    assert (s.current_healthy, s.disrupted_pods) == (3, {})
