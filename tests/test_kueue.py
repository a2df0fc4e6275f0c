"""Kueue in gpusim: quota tree, admission order, preemption, fungibility, fair sharing, waitForPodsReady,
the Job integration and the API (both served versions). Facts: reference sheet §8 and kubernetes-sigs/kueue."""
from __future__ import annotations

import pytest

import gpusim as gs
from gpusim.kueue.cache import Node, compute_subtree
from gpusim.kueue.jobframework import workload_name

WL = "Workload.kueue.x-k8s.io"

FLAVOR = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: %s}
"""


def cq(name: str, nominal: str, cohort: str = "", flavors: tuple = ("default",), borrowing: str | None = None,
       lending: str | None = None, strategy: str = "BestEffortFIFO", within: str = "Never", reclaim: str = "Never",
       extra: str = "", resource: str = "cpu") -> str:
    def limits() -> str:
        s = ""
        if borrowing is not None:
            s += f", borrowingLimit: {borrowing}"
        if lending is not None:
            s += f", lendingLimit: {lending}"
        return s
    fl = "\n".join(f"    - {{name: {f}, resources: [{{name: {resource}, nominalQuota: {nominal}{limits()}}}]}}"
                   for f in flavors)
    return f"""
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {name}}}
spec:
  {f"cohortName: {cohort}" if cohort else ""}
  namespaceSelector: {{}}
  queueingStrategy: {strategy}
  preemption: {{withinClusterQueue: {within}, reclaimWithinCohort: {reclaim}}}
  resourceGroups:
  - coveredResources: [{resource}]
    flavors:
{fl}
{extra}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: {name}}}
spec: {{clusterQueue: {name}}}
"""


def wl(name: str, queue: str, cpu: str, at: str = "0s", priority: int = 0, count: int = 1,
       selector: str = "") -> str:
    return f"""
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: {name}
  annotations: {{gpusim.io/submit-at: {at}}}
spec:
  queueName: {queue}
  priority: {priority}
  podSets:
  - name: main
    count: {count}
    template:
      spec:
        {f"nodeSelector: {selector}" if selector else ""}
        containers: [{{name: c, image: x, resources: {{requests: {{cpu: "{cpu}"}}}}}}]
"""


CONFIG = """
apiVersion: v1
kind: ConfigMap
metadata: {name: kueue-manager-config, namespace: kueue-system}
data:
  controller_manager_config.yaml: |
%s
"""


def config(body: str) -> str:
    return CONFIG % "\n".join("    " + line for line in ("apiVersion: config.kueue.x-k8s.io/v1beta2\n"
                                                          "kind: Configuration\n" + body).splitlines())


def observability() -> str:
    """The Kueue Configuration turning on UnadmittedWorkloadsObservability (off in 0.19)."""
    return config("featureGates: {UnadmittedWorkloadsObservability: true}\n")


def run(*docs: str, until: str = "1h", seed: int = 0):
    return gs.run(text="\n---\n".join(docs), until=until, seed=seed)


def workload(r, name: str, ns: str = "default"):
    return r.api.get(WL, ns, name)


def cond(w, ctype: str):
    return w.condition(ctype)


def admitted(r) -> list[str]:
    return sorted(w.metadata.name for w in r.api.list(WL) if w.is_true("Admitted"))


# --- quota tree ------------------------------------------------------------------------------------------

def tree(a_nominal: int, a_borrow, a_lend, b_nominal: int, b_lend, b_usage: int) -> tuple[Node, Node]:
    fr = ("f", "cpu")
    cohort = Node("c", False)
    a = Node("a", True, cohort, nominal={fr: a_nominal}, borrowing_limit={fr: a_borrow}, lending_limit={fr: a_lend})
    b = Node("b", True, cohort, nominal={fr: b_nominal}, borrowing_limit={fr: None}, lending_limit={fr: b_lend})
    cohort.children = [a, b]
    compute_subtree(cohort)
    b.add_usage(fr, b_usage)
    return a, b


@pytest.mark.parametrize("a_nominal,a_borrow,a_lend,b_nominal,b_lend,b_usage,available,potential", [
    (10, None, None, 10, None, 0, 20, 20),     # borrow everything the cohort has
    (10, 5, None, 10, None, 0, 15, 15),        # borrowingLimit caps what can come from the cohort
    (10, None, None, 10, 4, 0, 14, 14),        # b lends at most 4; keeps 6 for itself
    (10, None, None, 10, None, 7, 13, 20),     # b's usage is taken from the shared pool
    (10, None, None, 10, 4, 5, 14, 14),        # b's usage within its guaranteed 6 does not touch the pool
    (10, None, None, 10, 4, 8, 12, 14),        # 2 above guaranteed comes out of the pool
    (10, None, 3, 10, None, 12, 8, 20),        # a keeps 7 guaranteed; the pool is 3 + 10, b took 12 of it
    (0, None, None, 10, None, 0, 10, 10),      # a zero quota still borrows
])
def test_available_and_potential_available(a_nominal, a_borrow, a_lend, b_nominal, b_lend, b_usage, available,
                                           potential):
    a, _ = tree(a_nominal, a_borrow, a_lend, b_nominal, b_lend, b_usage)
    assert a.available(("f", "cpu")) == available
    assert a.potential_available(("f", "cpu")) == potential


def test_usage_propagates_only_above_guaranteed():
    a, b = tree(10, None, None, 10, 4, 0)
    fr = ("f", "cpu")
    b.add_usage(fr, 5)
    assert b.parent.usage.get(fr, 0) == 0      # within guaranteed 6
    b.add_usage(fr, 3)
    assert b.parent.usage[fr] == 2
    b.add_usage(fr, -8)
    assert b.parent.usage[fr] == 0


# --- admission, borrowing and lending end to end -----------------------------------------------------------

@pytest.mark.parametrize("borrowing,lending,want", [
    (None, None, 4),      # a borrows all of b's 2 → 4 one-cpu workloads
    ("1", None, 3),       # borrowingLimit 1
    (None, "1", 3),       # b lends only 1
    ("0", None, 2),
])
def test_borrowing_and_lending_limits_admit(borrowing, lending, want):
    docs = [FLAVOR % "default", cq("a", "2", "c", borrowing=borrowing), cq("b", "2", "c", lending=lending)]
    docs += [wl(f"w{i}", "a", "1") for i in range(5)]
    r = run(*docs)
    assert len(admitted(r)) == want
    status = r.api.get("ClusterQueue", "", "a").status
    assert status.admitted_workloads == want and status.pending_workloads == 5 - want
    used = status.flavors_usage[0]["resources"][0]
    assert used == {"name": "cpu", "total": str(want), "borrowed": str(want - 2)}


@pytest.mark.parametrize("gate,big_reason,w2_reason", [
    # Kueue 0.19 default: UnadmittedWorkloadsObservability off, the scheduler writes "Pending" (same message)
    (False, "Pending", "Pending"),
    (True, "ExceedsMaxQuota", "WaitingForQuota"),
])
def test_pending_messages_exact(gate, big_reason, w2_reason):
    docs = [FLAVOR % "default", cq("a", "2"), wl("big", "a", "3"), wl("w1", "a", "2"), wl("w2", "a", "1", at="1s")]
    r = run(*([observability()] if gate else []), *docs)
    c = cond(workload(r, "big"), "QuotaReserved")
    assert (c.status, c.reason) == ("False", big_reason)
    assert c.message == ("couldn't assign flavors to pod set main: insufficient quota for cpu in flavor default, "
                         "previously considered podsets requests (0) + current podset request (3) > maximum "
                         "capacity (2)")
    assert [e.reason for e in r.events.log if e.object.name == "big"] == [big_reason]   # the Warning event too
    c = cond(workload(r, "w2"), "QuotaReserved")
    assert (c.status, c.reason, c.message) == ("False", w2_reason, "couldn't assign flavors to pod set main: "
                                               "insufficient unused quota for cpu in flavor default, 1 more needed")
    ok = workload(r, "w1")
    assert cond(ok, "QuotaReserved").message == "Quota reserved in ClusterQueue a"
    assert cond(ok, "Admitted").message == "The workload is admitted"
    ev = [(e.reason, e.message) for e in r.events.log if e.object.name == "w1"]
    assert ev == [("QuotaReserved", "Quota reserved in ClusterQueue a, wait time since queued was 0s"),
                  ("Admitted", "Admitted by ClusterQueue a, wait time since reservation was 0s")]
    assert workload(r, "w1").status.admission.pod_set_assignments[0].flavors == {"cpu": "default"}


def test_namespace_selector_nil_selects_nothing():
    text = cq("a", "2").replace("namespaceSelector: {}", "")
    r = run(FLAVOR % "default", text, wl("w", "a", "1"))
    c = cond(workload(r, "w"), "QuotaReserved")
    assert c.status == "False" and c.message == "Workload namespace doesn't match ClusterQueue selector"


# --- queueing strategy -----------------------------------------------------------------------------------

@pytest.mark.parametrize("strategy,want", [("StrictFIFO", ["first"]), ("BestEffortFIFO", ["first", "small"])])
def test_strict_fifo_blocks_best_effort_does_not(strategy, want):
    docs = [FLAVOR % "default", cq("a", "4", strategy=strategy), wl("first", "a", "3"),
            wl("big", "a", "2", at="1s"), wl("small", "a", "1", at="2s")]
    r = run(*docs)
    assert admitted(r) == want


def test_priority_then_fifo_order():
    docs = [FLAVOR % "default", cq("a", "1", strategy="StrictFIFO"), wl("hold", "a", "1")]
    docs += [wl("old-low", "a", "1", at="1s", priority=1), wl("new-high", "a", "1", at="2s", priority=5),
             wl("newer-high", "a", "1", at="3s", priority=5)]
    r = run(*docs, until="10s")
    order = r.addons["kueue"].queues["a"].pending()
    assert [i.obj.metadata.name for i in order] == ["new-high", "newer-high", "old-low"]


# --- preemption --------------------------------------------------------------------------------------------

def test_preemption_within_cluster_queue_takes_lowest_priority_most_recent():
    docs = [FLAVOR % "default", cq("a", "3", within="LowerPriority"),
            wl("low-old", "a", "1", priority=1), wl("low-new", "a", "1", at="1s", priority=1),
            wl("mid", "a", "1", at="2s", priority=3), wl("high", "a", "1", at="10s", priority=10)]
    r = run(*docs)
    assert admitted(r) == ["high", "low-old", "mid"]
    victim = workload(r, "low-new")
    hi = workload(r, "high")
    p = cond(victim, "Preempted")
    assert (p.status, p.reason) == ("True", "InClusterQueue")
    assert p.message == (f"Preempted to accommodate a workload (UID: {hi.metadata.uid}, JobUID: UNKNOWN) due to "
                         "prioritization in the ClusterQueue; preemptor path: /a; preemptee path: /a")
    e = cond(victim, "Evicted")
    assert (e.status, e.reason, e.message) == ("True", "Preempted", p.message)
    assert cond(victim, "QuotaReserved").status == "False"
    # the preemptor was told why it waited, then admitted
    assert any(ev.message.endswith(". Pending the preemption of 1 workload(s)") for ev in r.events.log
               if ev.object.name == "high")


def test_never_policy_does_not_preempt():
    docs = [FLAVOR % "default", cq("a", "1"), wl("low", "a", "1", priority=1), wl("high", "a", "1", at="1s", priority=9)]
    assert admitted(run(*docs)) == ["low"]


def test_minimal_set_of_victims():
    docs = [FLAVOR % "default", cq("a", "4", within="LowerPriority"),
            wl("small", "a", "1", priority=1), wl("big", "a", "3", at="1s", priority=1),
            wl("high", "a", "3", at="5s", priority=9)]
    r = run(*docs)
    # greedy takes big (most recent) first; it alone frees enough, small stays
    assert admitted(r) == ["high", "small"]


def test_reclaim_within_cohort():
    docs = [FLAVOR % "default", cq("a", "2", "c", reclaim="Any"), cq("b", "2", "c"),
            wl("b1", "b", "1"), wl("b2", "b", "1"), wl("b3", "b", "1", at="1s"), wl("b4", "b", "1", at="2s"),
            wl("a1", "a", "2", at="10s", priority=-5)]
    r = run(*docs)
    assert admitted(r) == ["a1", "b1", "b2"]
    for name in ("b3", "b4"):
        p = cond(workload(r, name), "Preempted")
        assert p.reason == "InCohortReclamation"
        assert "due to reclamation within the cohort; preemptor path: /c/a; preemptee path: /c/b" in p.message


def test_reclaim_lower_priority_only_spares_higher():
    docs = [FLAVOR % "default", cq("a", "2", "c", reclaim="LowerPriority"), cq("b", "2", "c"),
            wl("b1", "b", "2", priority=5), wl("b2", "b", "2", priority=5, at="1s"),
            wl("a1", "a", "2", at="10s", priority=1)]
    assert admitted(run(*docs)) == ["b1", "b2"]


# --- flavor fungibility ------------------------------------------------------------------------------------

def fungibility(when_can_borrow: str = "MayStopSearch", when_can_preempt: str = "TryNextFlavor") -> list[str]:
    extra = f"  flavorFungibility: {{whenCanBorrow: {when_can_borrow}, whenCanPreempt: {when_can_preempt}}}"
    a = cq("a", "2", "c", flavors=("on-demand", "spot"), within="LowerPriority", extra=extra)
    b = cq("b", "2", "c", flavors=("on-demand",))
    r = run(FLAVOR % "on-demand", FLAVOR % "spot", a, b, wl("a1", "a", "2"), wl("a2", "a", "2", at="1s", priority=5))
    return [workload(r, n).status.admission.pod_set_assignments[0].flavors["cpu"] if workload(r, n).is_true("Admitted")
            else "-" for n in ("a1", "a2")]


@pytest.mark.parametrize("when_can_borrow,want", [
    ("MayStopSearch", ["on-demand", "on-demand"]),   # a2 borrows b's on-demand quota
    ("TryNextFlavor", ["on-demand", "spot"]),        # a2 prefers spot without borrowing
])
def test_when_can_borrow(when_can_borrow, want):
    assert fungibility(when_can_borrow) == want


def test_when_can_preempt_may_stop_search():
    extra = "  flavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: %s}"
    out = {}
    for policy in ("MayStopSearch", "TryNextFlavor"):
        a = cq("a", "2", flavors=("on-demand", "spot"), within="LowerPriority", extra=extra % policy)
        r = run(FLAVOR % "on-demand", FLAVOR % "spot", a, wl("a1", "a", "2"), wl("a2", "a", "2", at="1s", priority=5))
        p = next((e for e in r.events.log if e.object.name == "a1" and e.reason == "Preempted"), None)
        out[policy] = (admitted(r), workload(r, "a2").status.admission.pod_set_assignments[0].flavors["cpu"],
                       workload(r, "a1").status.admission.pod_set_assignments[0].flavors["cpu"],
                       p.message.split(" due to ")[1].split(";")[0] if p is not None else None)
    # MayStopSearch: a2 preempts a1 in the first flavor; a1 comes back on spot
    assert out["MayStopSearch"] == (["a1", "a2"], "on-demand", "spot",
                                     "prioritization in the ClusterQueue")
    # TryNextFlavor: a free flavor beats preemption
    assert out["TryNextFlavor"] == (["a1", "a2"], "spot", "on-demand", None)


def test_flavor_taint_and_affinity_messages():
    tainted = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: gpu}
spec:
  nodeLabels: {pool: gpu}
  nodeTaints: [{key: dedicated, value: gpu, effect: NoSchedule}]
"""
    a = cq("a", "4", flavors=("gpu",))
    r = run(observability(), tainted, a, wl("w", "a", "1"), wl("v", "a", "1", selector="{pool: cpu}"))
    # flavorassigner.go prints the corev1.Taint value with %s: {key value effect timeAdded}
    assert cond(workload(r, "w"), "QuotaReserved").message == \
        "couldn't assign flavors to pod set main: untolerated taint {dedicated gpu NoSchedule <nil>} in flavor gpu"
    assert cond(workload(r, "w"), "QuotaReserved").reason == "NoMatchingFlavor"


# --- fair sharing ----------------------------------------------------------------------------------------





@pytest.mark.parametrize("weight,used,share", [("1", 8, 300), ("2", 8, 150), ("1", 5, 0), ("1", 6, 100),
                                               ("0.5", 7, 400)])
def test_fair_sharing_weighted_share(weight, used, share):
    extra = f"  fairSharing: {{weight: \"{weight}\"}}"
    docs = [config("fairSharing: {preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]}"),
            FLAVOR % "default", cq("a", "5", "c", extra=extra), cq("b", "5", "c")]
    docs += [wl(f"w{i}", "a", "1") for i in range(used)]
    r = run(*docs)
    assert r.api.get("ClusterQueue", "", "a").status.fair_sharing == {"weightedShare": share}


@pytest.mark.parametrize("gates,reason,human", [
    # Kueue 0.19 default (FairSharingPreemptWithinNominal on): a0 stays within a's nominal quota, so it reclaims
    ("", "InCohortReclamation", "due to reclamation within the cohort"),
    ("featureGates: {FairSharingPreemptWithinNominal: false}\n", "InCohortFairSharing",
     "due to Fair Sharing within the cohort"),
])
def test_fair_sharing_preempts_the_queue_with_highest_share(gates, reason, human):
    docs = [config(gates + "fairSharing: {}"), FLAVOR % "default",
            cq("a", "3", "c", reclaim="Any"), cq("b", "3", "c", reclaim="Any"), cq("d", "3", "c", reclaim="Any")]
    docs += [wl(f"b{i}", "b", "1", at=f"{i}s") for i in range(6)]     # b borrows d's and a's quota
    docs += [wl(f"d{i}", "d", "1", at="10s") for i in range(3)]
    docs += [wl("a0", "a", "1", at="20s")]
    r = run(*docs)
    assert admitted(r) == ["a0", "b0", "b1", "b2", "b3", "b4", "d0", "d1", "d2"]
    p = cond(workload(r, "b5"), "Preempted")
    assert (p.status, p.reason) == ("True", reason)
    assert human in p.message
    assert r.api.get("ClusterQueue", "", "b").status.fair_sharing == {"weightedShare": 223}   # ceil(2·1000/9)


# --- waitForPodsReady ------------------------------------------------------------------------------------

NODES = """
apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: n}
spec: {count: 1, cpu: "8", memory: 32Gi, labels: {pool: a}}
"""

JOB = """
apiVersion: batch/v1
kind: Job
metadata:
  name: %s
  labels: {kueue.x-k8s.io/queue-name: a}
spec:
  parallelism: %d
  completions: %d
  template:
    metadata: {annotations: {gpusim.io/duration: 10m}}
    spec:
      restartPolicy: Never
      %s
      containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
"""

LABELLED_FLAVOR = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
spec:
  nodeLabels: {pool: %s}
  tolerations: [{key: spot, operator: Exists, effect: NoSchedule}]
"""


def test_job_admission_injects_flavor_and_runs():
    r = run(NODES, LABELLED_FLAVOR % "a", cq("a", "4"), JOB % ("train", 2, 2, ""), until="2h")
    job = r.api.get("Job", "default", "train")
    name = workload_name("train", job.metadata.uid)
    w = workload(r, name)
    assert name.startswith("job-train-") and len(name) == len("job-train-") + 5
    assert [p.spec.node_selector for p in r.pods()] == [{"pool": "a"}] * 2
    assert all(any(t.key == "spot" for t in p.spec.tolerations) for p in r.pods())
    assert cond(w, "PodsReady").reason == "Started"
    assert cond(w, "PodsReady").message == "All pods reached readiness and the workload is running"
    assert cond(w, "Finished").reason == "Succeeded"
    assert r.api.get("ClusterQueue", "", "a").status.admitted_workloads == 0


def test_pods_ready_timeout_requeue_backoff_and_deactivation():
    cfg = config("waitForPodsReady:\n  timeout: 5m\n  requeuingStrategy: {backoffLimitCount: 2, backoffBaseSeconds: 60}")
    # the flavor sends pods to pool b, which has no node: they never become ready
    r = run(cfg, NODES, LABELLED_FLAVOR % "b", cq("a", "4"), JOB % ("stuck", 1, 1, ""), until="2h")
    job = r.api.get("Job", "default", "stuck")
    w = workload(r, workload_name("stuck", job.metadata.uid))
    evictions = [e.time for e in r.events.log if e.reason == "EvictedDueToPodsReadyTimeout"]
    admissions = [e.time for e in r.events.log if e.reason == "Admitted" and e.object.kind == "Workload"]
    assert admissions[0] == 0 and evictions[0] == pytest.approx(300)
    # requeued after 60s·2^(n−1) (plus Kueue's 0.0001 jitter), then 5m of waiting each time
    assert admissions[1] == pytest.approx(360, rel=1e-3) and evictions[1] == pytest.approx(660, rel=1e-3)
    assert admissions[2] == pytest.approx(780, rel=1e-3) and evictions[2] == pytest.approx(1080, rel=1e-3)
    assert len(admissions) == 3
    assert w.spec.active is False and w.status.requeue_state.count == 2
    e = cond(w, "Evicted")
    assert (e.reason, e.message) == ("DeactivatedDueToRequeuingLimitExceeded", "The workload is deactivated")
    assert job.spec.suspend is True and not r.pods()
    assert [p.spec.node_selector for p in [job.spec.template]] == [{}]   # template restored


def test_pods_ready_timeout_message():
    cfg = config("waitForPodsReady: {timeout: 1m}")
    r = run(cfg, NODES, LABELLED_FLAVOR % "b", cq("a", "4"), JOB % ("stuck", 1, 1, ""), until="61s")
    job = r.api.get("Job", "default", "stuck")
    w = workload(r, workload_name("stuck", job.metadata.uid))
    e = cond(w, "Evicted")
    assert (e.reason, e.message) == ("PodsReadyTimeout", f"Exceeded the PodsReady timeout default/{w.metadata.name}")
    assert cond(w, "Requeued").status == "False"
    assert w.status.requeue_state.count == 1


# --- API --------------------------------------------------------------------------------------------------

V1BETA1 = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: a}
spec:
  cohort: c
  namespaceSelector: {}
  flavorFungibility: {whenCanBorrow: Borrow, whenCanPreempt: Preempt}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: default, resources: [{name: cpu, nominalQuota: 2, borrowingLimit: 1}]}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: a}
spec: {clusterQueue: a}
"""


def test_v1beta1_and_v1beta2_both_accepted():
    r = run(V1BETA1, cq("b", "2", "c"), wl("w", "a", "3"))
    assert admitted(r) == ["w"]       # 2 own + 1 borrowed from b (v1beta1 cohort = v1beta2 cohortName)
    assert r.addons["kueue"].specs["a"].when_can_borrow == "MayStopSearch"


@pytest.mark.parametrize("doc,where", [
    (cq("a", "2", borrowing="1"), 'ClusterQueue "a" is invalid: spec.resourceGroups[0].flavors[0].resources[0]'
                                  ".borrowingLimit: Invalid value: must be nil when cohort is empty"),
    (cq("a", "2", flavors=("missing",)), 'spec.resourceGroups[0].flavors[0].name: Not found: "missing"'),
    (cq("a", "2", strategy="LIFO"), 'spec.queueingStrategy: Unsupported value: "LIFO": supported values: '
                                    '"StrictFIFO", "BestEffortFIFO"'),
    (cq("a", "2", "c", lending="3"), 'lendingLimit: Invalid value: "3": must be less than or equal to the nominalQuota'),
    (cq("a", "2").replace("clusterQueue: a", "clusterQueue: nope"), 'LocalQueue "default/a" is invalid: '
                                                                     'spec.clusterQueue: Not found: "nope"'),
    (cq("a", "2").replace("queueingStrategy", "queueingStrategyy"), 'unknown field "spec.queueingStrategyy"'),
    (cq("a", "2").replace("cohortName", "cohort"), ""),
])
def test_validation_errors(doc, where):
    text = "\n---\n".join([FLAVOR % "default", doc, wl("w", "a", "1")])
    if not where:
        gs.load(texts=[("t.yaml", text)])
        return
    with pytest.raises(gs.InputError) as e:
        gs.load(texts=[("t.yaml", text)])
    assert where in str(e.value)


def test_configuration_errors_name_the_configmap_key():
    bad = config("waitForPodsReady: {requeuingStrategy: {timestamp: Later}}")
    with pytest.raises(gs.InputError) as e:
        gs.load(texts=[("t.yaml", "\n---\n".join([bad, FLAVOR % "default", cq("a", "1")]))])
    assert ("data[controller_manager_config.yaml].waitForPodsReady.requeuingStrategy.timestamp: "
            'Unsupported value: "Later"') in str(e.value)


def test_installed_only_when_needed():
    plain = run(NODES, until="1m")
    assert "kueue" not in plain.addons
    r = run(FLAVOR % "default", cq("a", "1"), until="1m")
    assert "kueue" in r.addons


def test_unlabelled_jobs_are_not_suspended():
    job = (JOB % ("free", 1, 1, "")).replace("labels: {kueue.x-k8s.io/queue-name: a}", "labels: {}")
    r = run(NODES, FLAVOR % "default", cq("a", "1"), job, until="1m")
    assert r.api.get("Job", "default", "free").spec.suspend is False and len(r.pods()) == 1


def test_deterministic_event_log():
    docs = [FLAVOR % "default", cq("a", "2", "c", reclaim="Any", within="LowerPriority"), cq("b", "2", "c")]
    docs += [wl(f"w{i}", "ab"[i % 2], "1", at=f"{i}s", priority=i % 3) for i in range(12)]

    def log(seed):
        r = run(*docs, seed=seed)
        return [(e.time, e.reason, e.object.name, e.message) for e in r.events.log]
    assert log(3) == log(3)


def test_views_read_the_run():
    import matplotlib
    matplotlib.use("Agg")
    docs = [FLAVOR % "default", cq("a", "2"), wl("w1", "a", "2"), wl("w2", "a", "1", at="5s")]
    r = run(*docs, until="1m")
    rows = {x["name"]: x for x in gs.kueue_workloads(r)}
    assert rows["w1"]["admittedAt"] == 0 and rows["w2"]["admittedAt"] is None
    assert rows["w2"]["message"].endswith("1 more needed")
    assert gs.cluster_queue_usage(r) == {"a/default/cpu": [(0, 2000)]}
    ax = gs.plot_cluster_queue_usage(r)
    assert ax.get_title().startswith("ClusterQueue usage")
    assert "Pending" in gs.describe_workload(r, "w2")
    lq = r.api.get("LocalQueue", "default", "a").status
    assert (lq.pending_workloads, lq.admitted_workloads) == (1, 1)
    plain = gs.run(text=NODES, until="1s")
    with pytest.raises(ValueError):
        gs.kueue_summary(plain)


def test_v1beta1_workload_with_workload_priority_class():
    wpc = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: urgent}
value: 1000
"""
    w1 = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: old-api, annotations: {gpusim.io/submit-at: 1s}}
spec:
  queueName: a
  priorityClassName: urgent
  priorityClassSource: kueue.x-k8s.io/workloadpriorityclass
  podSets:
  - name: main
    count: 1
    template:
      spec:
        containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
"""
    r = run(FLAVOR % "default", cq("a", "1", within="LowerPriority"), wpc, w1, wl("low", "a", "1"))
    assert admitted(r) == ["old-api"]
    assert cond(workload(r, "low"), "Preempted").reason == "InClusterQueue"
    with pytest.raises(gs.InputError) as e:
        gs.load(texts=[("t.yaml", "\n---\n".join([FLAVOR % "default", cq("a", "1"), w1]))])
    assert 'spec.priorityClassName: Not found: "urgent"' in str(e.value)


@pytest.mark.parametrize("block,second_at_zero", [(True, False), (False, True)])
def test_block_admission_waits_for_pods_ready(block, second_at_zero):
    cfg = config(f"waitForPodsReady: {{timeout: 5m, blockAdmission: {str(block).lower()}}}")
    r = run(cfg, NODES, LABELLED_FLAVOR % "a", cq("a", "4"), JOB % ("one", 1, 1, ""), JOB % ("two", 1, 1, ""),
            until="5m")
    times = sorted(e.time for e in r.events.log if e.reason == "Admitted" and e.object.kind == "Workload")
    ready = min(c.last_transition_time for w in r.api.list(WL) for c in w.status.conditions
                if c.type == "PodsReady" and c.status == "True")
    assert times[0] == 0
    assert (times[1] == 0) is second_at_zero
    if block:
        assert times[1] == ready      # the next admission waits for the first workload's pods


# --- partial admission and featureGates: refused, not ignored -------------------------------------------

def test_partial_admission_min_count_is_rejected():
    doc = wl("w", "a", "1", count=2).replace("    count: 2\n", "    count: 2\n    minCount: 1\n")
    with pytest.raises(Exception) as e:
        run(FLAVOR % "default", cq("a", "4"), doc)
    assert 'Workload "default/w" is invalid: spec.podSets[0].minCount: Forbidden: partial admission' in str(e.value)


def test_partial_admission_job_annotation_is_rejected():
    job = """
apiVersion: batch/v1
kind: Job
metadata:
  name: j
  labels: {kueue.x-k8s.io/queue-name: a}
  annotations: {kueue.x-k8s.io/job-min-parallelism: "1"}
spec:
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
"""
    with pytest.raises(Exception) as e:
        run(FLAVOR % "default", cq("a", "4"), job)
    assert "metadata.annotations[kueue.x-k8s.io/job-min-parallelism]: Forbidden: partial admission" in str(e.value)


def test_unknown_feature_gate_is_rejected():
    with pytest.raises(Exception) as e:
        run(config("featureGates: {NoSuchGate: true}\n"), FLAVOR % "default", cq("a", "1"), wl("w", "a", "1"))
    assert "featureGates.NoSuchGate: Unsupported value" in str(e.value)
    assert "FairSharingPreemptWithinNominal" in str(e.value)


def test_kueue_gate_in_the_simulation_points_to_the_configuration():
    """UnadmittedWorkloadsObservability belongs to kueue-controller-manager: the Simulation's featureGates
    (Kubernetes' gates) refuse it and say where it goes."""
    sim = ("apiVersion: gpusim.io/v1alpha1\nkind: Simulation\nmetadata: {name: x}\n"
           "spec: {featureGates: {UnadmittedWorkloadsObservability: true}}\n")
    with pytest.raises(gs.InputError) as e:
        run(sim, FLAVOR % "default", cq("a", "1"), wl("w", "a", "1"))
    assert "it is a Kueue feature gate: set it in Kueue's Configuration (ConfigMap kueue-system/" \
           "kueue-manager-config" in str(e.value)
