"""Kueue scheduling cycles (pkg/scheduler/scheduler.go, release-0.19): which heads a cycle sees and in which
order it admits them. These are gpusim scenarios written from the upstream functions named in each test
(schedule / makeClassicalIterator / entryOrdering), not rows copied from scheduler_test.go."""
from __future__ import annotations

import pytest

from test_kueue import FLAVOR, cq, observability, run, wl, workload


def admitted(r, names):
    return sorted(n for n in names if workload(r, n).is_true("QuotaReserved"))


def test_workloads_created_together_are_nominated_together():
    """Six workloads created at t=0 in two ClusterQueues sharing a cohort of 8 cpu: upstream's queue manager
    holds all of them when the first cycle takes the heads, so the four highest-priority ones are admitted.
    Before the fix gpusim ran a cycle per arriving workload and admitted the first four to arrive."""
    docs = [FLAVOR % "default", cq("a", "4", cohort="c"), cq("b", "4", cohort="c")]
    docs += [wl(f"w{i}", "a" if i % 2 else "b", "2", priority=i) for i in range(6)]
    r = run(*docs)
    assert admitted(r, [f"w{i}" for i in range(6)]) == ["w2", "w3", "w4", "w5"]
    assert r.addons["kueue"].cycles == 3       # heads (w4, w5), (w2, w3), (w0, w1)


def test_jobs_created_together_are_nominated_together():
    """The same with Jobs: the webhook suspends them and the job reconciler creates their Workloads at the
    same instant; the cycle still sees every Workload."""
    docs = [FLAVOR % "default", cq("a", "2")]
    for i, prio in enumerate([0, 5, 3]):
        docs.append(f"""
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {{name: p{i}}}
value: {prio}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: j{i}
  labels: {{kueue.x-k8s.io/queue-name: a, kueue.x-k8s.io/priority-class: p{i}}}
spec:
  template:
    metadata: {{annotations: {{gpusim.io/duration: 60s}}}}
    spec:
      restartPolicy: Never
      containers: [{{name: c, image: x, resources: {{requests: {{cpu: "2"}}}}}}]
""")
    docs.append("""
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {capacity: {cpu: "8", memory: 16Gi, pods: "110"}, allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
""")
    r = run(*docs, until="30s")
    reserved = sorted(w.metadata.name for w in r.api.list("Workload.kueue.x-k8s.io") if w.is_true("QuotaReserved"))
    assert len(reserved) == 1 and reserved[0].startswith("job-j1-")


NESTED = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: root}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: child}
spec:
  parentName: root
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - {name: default, resources: [{name: cpu, nominalQuota: "4"}]}
"""


@pytest.mark.parametrize("near_priority, far_priority", [(0, 10), (10, 0)])
def test_entries_ordered_by_borrowing_level(near_priority, far_priority):
    """makeClassicalIterator / entryOrdering: ``Assignment.Borrows()`` is the height of the lowest cohort subtree
    that fits the workload. ``near`` (in Cohort child) borrows at level 1, ``far`` (directly under root) at
    level 2; both want the same 4 cpu that only Cohort child holds. The lower level goes first whatever the
    priorities (gpusim compared a yes/no borrowing flag, a tie here, and let priority decide)."""
    r = run(FLAVOR % "default", NESTED, cq("near", "0", cohort="child"), cq("far", "0", cohort="root"),
            wl("near-wl", "near", "4", priority=near_priority), wl("far-wl", "far", "4", priority=far_priority))
    assert admitted(r, ["near-wl", "far-wl"]) == ["near-wl"]


def _ns_scenario(strategy: str) -> list[str]:
    selector = "namespaceSelector: {matchLabels: {team: ml}}"
    docs = [FLAVOR % "default", cq("a", "4", strategy=strategy).replace("namespaceSelector: {}", selector)]
    docs.append("""
apiVersion: v1
kind: Namespace
metadata: {name: ml, labels: {team: ml}}
---
apiVersion: v1
kind: Namespace
metadata: {name: web}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: a, namespace: ml}
spec: {clusterQueue: a}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: a, namespace: web}
spec: {clusterQueue: a}
""")
    for name, ns, prio in (("stranger", "web", 10), ("member", "ml", 0)):
        docs.append(wl(name, "a", "1", priority=prio).replace("  name: " + name, f"  name: {name}\n  namespace: {ns}"))
    return docs


@pytest.mark.parametrize("strategy", ["StrictFIFO", "BestEffortFIFO"])
def test_namespace_mismatch_is_inadmissible_and_does_not_block(strategy):
    """scheduler.go nominate: a namespace the ClusterQueue's selector does not match gives the message
    "Workload namespace doesn't match ClusterQueue selector" and RequeueReasonNamespaceMismatch, which
    cluster_queue.go RequeueIfNotPresent never requeues immediately, StrictFIFO included: the higher-priority
    stranger goes to the inadmissible workloads and the member behind it is admitted (gpusim's StrictFIFO
    kept the stranger as a blocking head)."""
    r = run(*_ns_scenario(strategy))
    assert workload(r, "member", "ml").is_true("QuotaReserved")
    c = workload(r, "stranger", "web").condition("QuotaReserved")
    assert (c.status, c.reason, c.message) == ("False", "Pending", "Workload namespace doesn't match ClusterQueue selector")
    q = r.addons["kueue"].queues["a"]
    assert [i.obj.metadata.name for i in q.pending()] == ["stranger"] and not q.has_heads()


# --- the pending reason of a NoFit nomination (scheduler.go requeueAndUpdate; flavorassigner.go
# resolveNoFitReason / mostSevereReason) ----------------------------------------------------------------------
LABELLED = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: %s}
spec: {nodeLabels: {type: %s}}
"""
TWO_PODSETS = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: w}
spec:
  queueName: a
  podSets:
%s
"""
PODSET = """  - name: %s
    count: 1
    template:
      spec:
        nodeSelector: {type: %s}
        containers: [{name: c, image: x, resources: {requests: {cpu: "%s"}}}]"""


@pytest.mark.parametrize("gate, podsets, want", [
    # big asks for 4 cpu on type a: flavor a (nominal 2) ExceedsMaxQuota, flavor b NoMatchingFlavor; the resource
    # group takes its least severe flavor: ExceedsMaxQuota
    (True, [("big", "a", "4")], "ExceedsMaxQuota"),
    # small matches no flavor (type c): NoMatchingFlavor on both; across PodSets the most severe wins
    (True, [("big", "a", "4"), ("small", "c", "1")], "NoMatchingFlavor"),
    # big fits on a; a second PodSet on a exceeds what is left of the maximum capacity (1 + 2 > 2)
    (True, [("first", "a", "1"), ("second", "a", "2")], "ExceedsMaxQuota"),
    # Kueue 0.19 default (UnadmittedWorkloadsObservability off): the reason is Pending, whatever the cause
    (False, [("big", "a", "4"), ("small", "c", "1")], "Pending"),
])
def test_no_fit_reason_is_the_most_severe(gate, podsets, want):
    cqa = cq("a", "2", flavors=("fa", "fb")).replace("nominalQuota: 2}]}\n    - {name: fb, resources: [{name: cpu, nominalQuota: 2",
                                                      "nominalQuota: 2}]}\n    - {name: fb, resources: [{name: cpu, nominalQuota: 8")
    assert "nominalQuota: 8" in cqa          # fb holds 8 cpu, fa 2
    docs = [LABELLED % ("fa", "a"), LABELLED % ("fb", "b"), cqa,
            TWO_PODSETS % "\n".join(PODSET % p for p in podsets)]
    r = run(*([observability()] if gate else []), *docs)
    c = workload(r, "w").condition("QuotaReserved")
    assert (c.status, c.reason) == ("False", want)
    assert c.message.startswith("couldn't assign flavors to pod set ")


def test_an_identical_preempt_nomination_is_memoised(monkeypatch):
    """gpusim's shortcut (scheduler.py Kueue._nominate): w1 and w2 need quota that only preemption could free, and
    nothing can be preempted (w0 has the higher priority). w2 arrives while the cohort tree's usage is unchanged: it
    gets w1's assignment without a flavor assignment or a preemption-target search of its own, and the outcome
    and message a fresh nomination gives."""
    from gpusim.kueue import preemption, scheduler
    assigned, searched = [], []
    real_assign, real_targets = scheduler.assign, preemption.Preemptor.get_targets
    monkeypatch.setattr(scheduler, "assign", lambda *a, **k: assigned.append(1) or real_assign(*a, **k))
    monkeypatch.setattr(preemption.Preemptor, "get_targets",
                        lambda self, wl, *a, **k: searched.append(wl.key) or real_targets(self, wl, *a, **k))
    docs = [FLAVOR % "default", cq("a", "2", within="LowerPriority"), wl("w0", "a", "2", priority=5),
            wl("w1", "a", "2", at="1s"), wl("w2", "a", "2", at="2s")]
    r = run(*docs, until="1m")
    assert admitted(r, ["w0", "w1", "w2"]) == ["w0"]
    assert len(assigned) == 2                           # w0 (fits), w1; not w2
    assert searched == ["default/w1", "default/w1"]     # the oracle's search, then nominate's (memoised)
    msg = "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 2 more needed"
    assert [workload(r, n).condition("QuotaReserved").message for n in ("w1", "w2")] == [msg, msg]
