"""The Volcano scheduler and controllers in a run, read as a user reads them (pods, events, PodGroup
conditions, Job status): gang all-or-nothing with the exact condition messages, the job controller's pods
and policies (RestartJob, maxRetry, AbortJob), overcommit in enqueue, reclaim between weighted queues,
bare pods for Volcano, the kube-scheduler leaving Volcano's pods alone but counting them, determinism."""
from __future__ import annotations

from pathlib import Path

import pytest

import gpusim as gs
from gpusim.workloads.training import training_report

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
GPU = "nvidia.com/gpu"
PG = "PodGroup.scheduling.volcano.sh"


def pool(gpus=8, count=1):
    return f"""apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {{name: a100}}
spec: {{count: {count}, gpu: {{model: A100-SXM4-80GB, count: {gpus}}}, cpu: "64", memory: 1Ti}}
"""


def vcjob(name, replicas, gpus=1, min_available=None, queue="default", ann="gpusim.io/duration: 10m", meta="",
          extra=""):
    ma = f"  minAvailable: {min_available}\n" if min_available is not None else ""
    return f"""apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {{name: {name}{meta}}}
spec:
  schedulerName: volcano
  queue: {queue}
{ma}{extra}  tasks:
  - name: worker
    replicas: {replicas}
    template:
      metadata: {{annotations: {{{ann}}}}}
      spec:
        restartPolicy: Never
        containers: [{{name: w, image: cuda, resources: {{limits: {{{GPU}: {gpus}}}}}}}]
"""


def pod(name, gpus, scheduler="", ann="gpusim.io/duration: 1h"):
    sn = f"\n  schedulerName: {scheduler}" if scheduler else ""
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: {name}, annotations: {{{ann}}}}}
spec:
  restartPolicy: Never{sn}
  containers: [{{name: c, image: cuda, resources: {{limits: {{{GPU}: {gpus}}}}}}}]
"""


def run(*docs, until=None, seed=None):
    return gs.run(text="---\n".join(docs), until=until, seed=seed)


def events(r, reason=None, kind=None):
    return [e for e in r.events.log if (reason is None or e.reason == reason)
            and (kind is None or e.object.kind == kind)]


def vc_job(r, name, ns="default"):
    return r.api.get("Job.batch.volcano.sh", ns, name)


def test_gang_keeps_all_workers_pending_then_binds_them_together():
    r = gs.run(str(EXAMPLES / "volcano-gang.yaml"), until="30m")
    workers = [p for p in r.pods() if p.metadata.name.startswith("llm-pretrain-worker-")]
    assert len(workers) == 8 and all(not p.spec.node_name for p in workers)   # no partial start
    pg = r.api.list(PG)[0]
    job = vc_job(r, "llm-pretrain")
    assert pg.metadata.name == f"llm-pretrain-{job.metadata.uid}" and pg.status.phase == "Inqueue"
    cond = next(c for c in pg.status.conditions if c.type == "Unschedulable")
    assert (cond.status, cond.reason) == ("True", "NotEnoughResources")
    assert cond.message == ("1/8 tasks in gang unschedulable: pod group is not ready, 8 Pending, 8 minAvailable; "
                            "Pending: 1 Unschedulable, 7 Schedulable. Origin reason is llm-pretrain-worker-7: "
                            "0/1 nodes are unavailable: 1 Insufficient nvidia.com/gpu.")
    failed = {e.object.name: e.message for e in events(r, "FailedScheduling")}
    assert failed["llm-pretrain-worker-7"] == "0/1 nodes are unavailable: 1 Insufficient nvidia.com/gpu."
    assert failed["llm-pretrain-worker-0"] == ("Pod default/llm-pretrain-worker-0 can possibly be assigned to dgx-0, "
                                               "once minAvailable is satisfied")
    pending = [e.message for e in events(r, "PodGroupPending")]
    assert f"PodGroup default:llm-pretrain unschedule,reason: {cond.message}" in pending
    assert job.status.state.phase == "Pending"


def test_gang_completes_without_waste():
    r = gs.run(str(EXAMPLES / "volcano-gang.yaml"))
    scheduled = {e.time for e in events(r, "Scheduled", "Pod") if e.object.name.startswith("llm-pretrain")}
    assert len(scheduled) == 1 and min(scheduled) > 3600          # one session, after the notebook ended
    rep = next(g for g in training_report(r) if g["group"] == "llm-pretrain")
    assert rep["wasted_gpu_hours"] == pytest.approx(0, abs=0.01)
    assert rep["steps_done"] == 1000
    assert vc_job(r, "llm-pretrain").status.state.phase == "Completed"
    assert [(c.status) for c in vc_job(r, "llm-pretrain").status.conditions] == ["Pending", "Running", "Completed"]


def test_job_pods_carry_volcano_names_labels_and_annotations():
    r = run(pool(), vcjob("train", 2, ann="gpusim.io/duration: 1m, team: nlp"), until="5s")
    job = vc_job(r, "train")
    pods = {p.metadata.name: p for p in r.pods()}
    assert sorted(pods) == ["train-worker-0", "train-worker-1"]
    p = pods["train-worker-1"]
    assert p.spec.scheduler_name == "volcano"
    assert p.metadata.annotations["scheduling.k8s.io/group-name"] == f"train-{job.metadata.uid}"
    assert p.metadata.annotations["team"] == "nlp"
    assert {k: p.metadata.annotations[k] for k in ("volcano.sh/task-spec", "volcano.sh/task-index",
                                                  "volcano.sh/job-name", "volcano.sh/queue-name",
                                                  "volcano.sh/job-version")} == {
        "volcano.sh/task-spec": "worker", "volcano.sh/task-index": "1", "volcano.sh/job-name": "train",
        "volcano.sh/queue-name": "default", "volcano.sh/job-version": "0"}
    assert {k: p.metadata.labels[k] for k in ("volcano.sh/job-name", "volcano.sh/job-namespace",
                                             "volcano.sh/task-spec", "volcano.sh/queue-name")} == {
        "volcano.sh/job-name": "train", "volcano.sh/job-namespace": "default", "volcano.sh/task-spec": "worker",
        "volcano.sh/queue-name": "default"}
    owner = p.metadata.owner_references[0]
    assert (owner.api_version, owner.kind, owner.name, owner.controller) == ("batch.volcano.sh/v1alpha1", "Job",
                                                                            "train", True)
    pg = r.api.get(PG, "default", f"train-{job.metadata.uid}")
    assert (pg.spec.min_member, pg.spec.min_task_member, pg.spec.min_resources) == (2, {"worker": 2}, {GPU: "2"})
    sched = events(r, "Scheduled", "Pod")
    assert {e.source for e in sched} == {"volcano"}


def test_pods_are_created_only_once_the_pod_group_is_inqueue():
    # 8 GPUs busy; overcommit: idle = 8 × 1.2 − 8 = 1.6 < 2 → the job stays Pending and has no pods
    r = run(pool(), pod("hog", 8), vcjob("late", 2), until="2m")
    pg = r.api.list(PG)[0]
    assert pg.status.phase == "Pending"
    assert [p.metadata.name for p in r.pods()] == ["hog"]
    msgs = {e.message for e in events(r, "Unschedulable", "PodGroup")}
    assert "resource in cluster is overused: overused nvidia.com/gpu" in msgs


CM = """apiVersion: v1
kind: ConfigMap
metadata: {{name: volcano-scheduler-configmap, namespace: volcano-system}}
data:
  volcano-scheduler.conf: |
    actions: "enqueue, allocate, backfill"
    tiers:
    - plugins: [{{name: priority}}, {{name: gang}}, {{name: conformance}}]
    - plugins: [{{name: overcommit, arguments: {{overcommit-factor: {factor}}}}}, {{name: drf}}, {{name: predicates}},
                {{name: proportion}}, {{name: nodeorder}}]
"""


@pytest.mark.parametrize("factor, used, want, enqueued", [
    (1.2, 4, 6, False),     # idle 8 × 1.2 − 4 = 5.6 < 6
    (1.2, 4, 5, True),      # 5 ≤ 5.6
    (1.5, 4, 6, True),      # 8 × 1.5 − 4 = 8 ≥ 6
    (0.5, 4, 6, False),     # below 1.0: back to 1.2
])
def test_overcommit_gates_enqueue(factor, used, want, enqueued):
    r = run(pool(), CM.format(factor=factor), pod("busy", used),
            vcjob("big", want, min_available=want, meta=", annotations: {gpusim.io/submit-at: 5s}"), until="1m")
    pg = r.api.list(PG)[0]
    assert (pg.status.phase == "Inqueue") == enqueued
    assert bool([p for p in r.pods() if p.metadata.name.startswith("big-")]) == enqueued
    assert r.addons["volcano"].scheduler.sessions[-1].record["overcommit"]["factor"] == (
        factor if factor >= 1 else 1.2)


def test_reclaim_between_weighted_queues():
    r = gs.run(str(EXAMPLES / "volcano-queues.yaml"))
    evicted = sorted(e.object.name for e in events(r, "Evict", "Pod"))
    assert len(evicted) == 6 and all(n.startswith("sweep-trial-") for n in evicted)
    assert {e.message for e in events(r, "Evict", "Pod")} == {"Pod is evicted, because of reclaim"}
    fine = [e.time for e in events(r, "Scheduled", "Pod") if e.object.name.startswith("finetune")]
    assert len(fine) == 6 and len(set(fine)) == 1 and 600 < fine[0] < 610
    shares = [s for s in gs.queue_shares(r) if s["time"] == fine[0] - 1]
    assert {s["queue"]: (s["deserved"], s["allocated"]) for s in shares} == {"team-a": (2, 2), "team-b": (6, 6)}
    for name in ("sweep", "finetune"):
        assert vc_job(r, name).status.state.phase == "Completed"
    # the evicted trials restart only after finetune released its GPUs
    last_fine_end = max(p.status.container_statuses[0].state.terminated.finished_at for p in r.pods()
                        if p.metadata.name.startswith("finetune"))
    restarts = [e.time for e in events(r, "Scheduled", "Pod") if e.object.name.startswith("sweep") and e.time > 600]
    assert len(restarts) == 6 and min(restarts) >= last_fine_end


def test_pod_evicted_restart_job_policy():
    text = (EXAMPLES / "volcano-queues.yaml").read_text().replace(
        "  queue: team-a\n", "  queue: team-a\n  policies: [{event: PodEvicted, action: RestartJob}]\n")
    r = gs.run(text=text, until="15m")
    job = vc_job(r, "sweep")
    assert job.status.retry_count == 1 and job.status.version >= 1
    assert [e.message for e in events(r, "ExecuteAction")] == ["Start to execute action RestartJob "]
    assert [c.status for c in job.status.conditions] == ["Pending", "Running", "Restarting", "Pending", "Running"]
    # every sweep pod was killed with the restart (not only the 6 reclaim evicted); the new generation gets
    # team-a's deserved 2 GPUs, which is its minAvailable
    sweep = [p for p in r.pods() if p.metadata.name.startswith("sweep")]
    assert len(sweep) == 8 and all(p.metadata.creation_timestamp > 600 for p in sweep)
    assert all(p.metadata.annotations["volcano.sh/job-version"] == str(job.status.version) for p in sweep)
    assert sum(1 for p in sweep if p.spec.node_name) == 2


def test_pod_failed_restart_job_until_max_retry():
    r = run(pool(), vcjob("flaky", 2, ann="gpusim.io/duration: 30s, gpusim.io/exit-code: \"3\"",
                          extra="  maxRetry: 2\n  policies: [{event: PodFailed, action: RestartJob}]\n"))
    job = vc_job(r, "flaky")
    assert job.status.state.phase == "Failed" and job.status.retry_count == 2
    assert [c.status for c in job.status.conditions] == [
        "Pending", "Running", "Restarting", "Pending", "Running", "Restarting", "Failed"]
    assert len(events(r, "ExecuteAction")) == 2


@pytest.mark.parametrize("policy, phase", [
    ("[{exitCode: 3, action: AbortJob}]", "Aborted"),
    ("[{event: PodFailed, action: TerminateJob}]", "Terminated"),
    ("[{exitCode: 4, action: AbortJob}]", "Failed"),            # no match: SyncJob; all pods failed → Failed
])
def test_failure_policies(policy, phase):
    r = run(pool(), vcjob("j", 2, ann="gpusim.io/duration: 30s, gpusim.io/exit-code: \"3\"",
                          extra=f"  policies: {policy}\n"))
    assert vc_job(r, "j").status.state.phase == phase


def test_bare_pod_for_volcano_gets_its_own_pod_group():
    r = run(pool(4), pod("solo", 4, scheduler="volcano"), pod("other", 1, ann="gpusim.io/submit-at: 10s"),
            until="1m")
    solo, other = r.pod("solo"), r.pod("other")
    pg = r.api.get(PG, "default", f"podgroup-{solo.metadata.uid}")
    assert pg is not None and pg.spec.min_member == 1 and pg.spec.queue == "default"
    assert solo.metadata.annotations["scheduling.k8s.io/group-name"] == pg.metadata.name
    assert solo.status.phase == "Running"
    assert next(e for e in events(r, "Scheduled", "Pod") if e.object.name == "solo").source == "volcano"
    # the kube-scheduler left solo alone but counts its 4 GPUs: nothing is left for "other"
    assert not other.spec.node_name
    fs = [e for e in events(r, "FailedScheduling") if e.object.name == "other"]
    assert fs and fs[0].source == "default-scheduler" and "Insufficient nvidia.com/gpu" in fs[0].message


def test_same_seed_same_run():
    a = gs.run(str(EXAMPLES / "volcano-queues.yaml"))
    b = gs.run(str(EXAMPLES / "volcano-queues.yaml"))
    assert [(e.time, e.reason, e.object.name, e.message) for e in a.events.log] == \
        [(e.time, e.reason, e.object.name, e.message) for e in b.events.log]
    assert [(t.time, t.function, t.object, t.result) for t in a.trace.records] == \
        [(t.time, t.function, t.object, t.result) for t in b.trace.records]


def test_trace_names_upstream_functions():
    r = gs.run(str(EXAMPLES / "volcano-queues.yaml"), until="11m")
    fns = {t.function for t in r.trace.records if t.component in ("volcano", "vc-controller-manager")}
    assert {"framework.OpenSession", "framework.CloseSession", "enqueue.(*Action).Execute",
            "allocate.(*Action).Execute", "reclaim.(*Action).Execute", "cache.(*DefaultBinder).Bind",
            "cache.(*SchedulerCache).Evict", "job.(*jobcontroller).createOrUpdatePodGroup"} <= fns


def test_summary_views():
    r = gs.run(str(EXAMPLES / "volcano-queues.yaml"), until="20m")
    text = gs.volcano_summary(r)
    assert text.splitlines()[0].split() == ["NAMESPACE", "NAME", "QUEUE", "PHASE", "MIN", "PENDING", "RUNNING",
                                            "SUCCEEDED", "FAILED", "RETRIES", "PODGROUP"]
    rows = {j["name"]: j for j in gs.volcano_jobs(r)}
    assert rows["finetune"]["running"] == 6 and rows["sweep"]["running"] == 2 and rows["sweep"]["pending"] == 6
    assert rows["finetune"]["podGroupPhase"] == "Running"
    conds = gs.pod_group_conditions(r, "finetune")
    assert [(c["type"], c["reason"]) for c in conds] == [("Unschedulable", "NotEnoughResources"),
                                                         ("Scheduled", "tasks in gang are ready to be scheduled")]


PREEMPT_CM = """apiVersion: v1
kind: ConfigMap
metadata: {name: volcano-scheduler-configmap, namespace: volcano-system}
data:
  volcano-scheduler.conf: |
    actions: "enqueue, allocate, preempt, backfill"
    tiers:
    - plugins: [{name: priority}, {name: gang}, {name: conformance}]
    - plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
"""


def test_preempt_within_a_queue_by_job_priority():
    low = vcjob("batch", 8, min_available=2, ann="gpusim.io/duration: 1h",
                meta=', annotations: {volcano.sh/preemptable: "true"}')
    high = vcjob("urgent", 4, min_available=4, ann="gpusim.io/duration: 10m",
                 meta=", annotations: {gpusim.io/submit-at: 5m}", extra="  priorityClassName: high\n")
    r = run(pool(), PREEMPT_CM, low, high, until="12m")
    evicted = [e for e in events(r, "Evict", "Pod")]
    assert len(evicted) == 4 and {e.message for e in evicted} == {"Pod is evicted, because of preempt"}
    urgent = [p for p in r.pods() if p.metadata.name.startswith("urgent")]
    assert len(urgent) == 4 and all(p.status.phase == "Running" for p in urgent)
    batch = [p for p in r.pods() if p.metadata.name.startswith("batch") and p.status.phase == "Running"]
    assert len(batch) == 4              # gang: batch may lose 6 (down to minAvailable 2); 4 were enough


def test_preempt_spares_pods_marked_not_preemptable():
    low = vcjob("batch", 8, min_available=2, ann="gpusim.io/duration: 1h",
                meta=', annotations: {volcano.sh/preemptable: "false"}')
    high = vcjob("urgent", 4, min_available=4, meta=", annotations: {gpusim.io/submit-at: 5m}",
                 extra="  priorityClassName: high\n")
    r = run(pool(), PREEMPT_CM, low, high, until="20m")
    assert events(r, "Evict") == []
    assert all(not p.spec.node_name for p in r.pods() if p.metadata.name.startswith("urgent"))


def test_preempt_evicts_unmarked_pods_as_volcano_master_does():
    # GetPodPreemptable defaults to true since v1.7.0 (volcano#2545): an unmarked task is a victim
    low = vcjob("batch", 8, min_available=2, ann="gpusim.io/duration: 1h")
    high = vcjob("urgent", 4, min_available=4, meta=", annotations: {gpusim.io/submit-at: 5m}",
                 extra="  priorityClassName: high\n")
    r = run(pool(), PREEMPT_CM, low, high, until="20m")
    assert len(events(r, "Evict", "Pod")) == 4
    assert all(p.spec.node_name for p in r.pods() if p.metadata.name.startswith("urgent"))


def test_backfill_places_best_effort_tasks():
    job = vcjob("side", 3, gpus=0).replace(f"resources: {{limits: {{{GPU}: 0}}}}", "resources: {}")
    r = run(pool(), pod("hog", 8), job, until="1m")
    side = [p for p in r.pods() if p.metadata.name.startswith("side")]
    assert len(side) == 3 and all(p.status.phase == "Running" for p in side)
    assert any(t.function == "backfill.(*Action).Execute" for t in r.trace.records)


def test_queue_status_counts_pod_groups_per_phase():
    q = """apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: research}
spec: {weight: 2}
"""
    r = run(pool(), q, vcjob("a", 4, queue="research"), vcjob("b", 8, queue="research", min_available=8), until="2m")
    st = r.api.get("Queue", "", "research").status
    assert (st.state, st.running, st.inqueue + st.pending) == ("Open", 1, 1)


def test_queue_capability_gates_enqueue():
    q = """apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: small}
spec: {capability: {nvidia.com/gpu: 2}}
"""
    r = run(pool(), q, vcjob("fits", 2, queue="small"), vcjob("big", 4, queue="small"), until="1m")
    phases = {pg.metadata.name.rsplit("-", 5)[0]: pg.status.phase for pg in r.api.list(PG)}
    assert phases == {"fits": "Running", "big": "Pending"}
    assert "queue resource quota insufficient: insufficient nvidia.com/gpu" in {
        e.message for e in events(r, "Unschedulable", "PodGroup") if e.object.name.startswith("big")}


def conf_cm(actions: str, tier1: str, tier2: str) -> str:
    return f"""apiVersion: v1
kind: ConfigMap
metadata: {{name: volcano-scheduler-configmap, namespace: volcano-system}}
data:
  volcano-scheduler.conf: |
    actions: "{actions}"
    tiers:
    - plugins: [{tier1}]
    - plugins: [{tier2}]
"""


def test_without_gang_in_the_conf_a_job_starts_partially():
    cm = conf_cm("enqueue, allocate, backfill", "{name: priority}, {name: conformance}",
                 "{name: predicates}, {name: proportion}, {name: nodeorder}")
    r = run(pool(), cm, pod("notebook", 1), vcjob("train", 8, ann="gpusim.io/duration: 10m",
                                                  meta=", annotations: {gpusim.io/submit-at: 5s}"), until="2m")
    bound = [p for p in r.pods() if p.metadata.name.startswith("train") and p.spec.node_name]
    assert len(bound) == 7                     # the partial start gang scheduling prevents
    r = run(pool(), pod("notebook", 1), vcjob("train", 8, ann="gpusim.io/duration: 10m",
                                              meta=", annotations: {gpusim.io/submit-at: 5s}"), until="2m")
    assert not [p for p in r.pods() if p.metadata.name.startswith("train") and p.spec.node_name]


@pytest.mark.parametrize("tier2, nodes_used", [
    ("{name: predicates}, {name: proportion}, {name: nodeorder}", 2),     # leastrequested spreads
    ("{name: predicates}, {name: proportion}, {name: nodeorder}, "
     "{name: binpack, arguments: {binpack.weight: 10, binpack.resources: nvidia.com/gpu}}", 1),
])
def test_binpack_packs_gpu_pods_onto_one_node(tier2, nodes_used):
    cm = conf_cm("enqueue, allocate, backfill", "{name: priority}, {name: gang}", tier2)
    jobs = [vcjob(f"j{i}", 1, meta=f", annotations: {{gpusim.io/submit-at: {i * 10}s}}",
                  ann="gpusim.io/duration: 1h").replace(f"{{{GPU}: 1}}", f"{{{GPU}: 1}}, requests: {{cpu: '4'}}")
            for i in range(3)]
    r = run(pool(4, count=2), cm, *jobs, until="1m")
    used = {p.spec.node_name for p in r.pods()}
    assert all(used) and len(used) == nodes_used


def test_reclaim_is_a_transaction_per_job():
    """Master's reclaim (after volcano-sh/volcano#5067) commits its evictions only if the reclaiming job is
    then JobPipelined: at weights 1:1 team-b deserves 4 GPUs, less than its gang of 6, so reclaim may find
    victims for some tasks but never pipelines the whole gang — and evicts nobody (the older action evicted
    at once, every session, without ever serving the job)."""
    text = (EXAMPLES / "volcano-queues.yaml").read_text().replace("spec: {weight: 3}", "spec: {weight: 1}")
    r = gs.run(text=text, until="20m")
    assert [e for e in r.events.log if e.reason == "Evict"] == []
    assert not [p for p in r.pods() if p.metadata.name.startswith("finetune") and p.spec.node_name]
    assert any(rec.function == "reclaim.(*Action).Execute" and rec.result == "Discard" for rec in r.trace.records)


@pytest.mark.parametrize("capability, runs", [
    ("{nvidia.com/gpu: 8}", True),                          # cpu and memory left out: not limited
    ("{cpu: \"4\", memory: 1Ti, nvidia.com/gpu: 8}", False),   # 4 CPUs < the job's 2 × 8
])
def test_queue_capability_without_cpu_does_not_limit_cpu(capability, runs):
    # proportion.go OnSessionOpen: a capability whose MilliCPU/Memory is <= 0 gets math.MaxFloat64 there,
    # so JobEnqueueable compares only the dimensions the capability names
    queue = f"apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {{name: q}}\nspec: {{weight: 1, capability: {capability}}}\n"
    job = vcjob("j", 2, min_available=2, queue="q").replace("resources: {limits: {nvidia.com/gpu: 1}}",
                                                             'resources: {requests: {cpu: "8"}, limits: {nvidia.com/gpu: 1}}')
    assert 'requests: {cpu: "8"}' in job
    r = gs.run(text="---\n".join([pool(), queue, job]), until="5m")
    pods = [p for p in r.pods() if p.metadata.name.startswith("j-")]
    assert len(pods) == (2 if runs else 0) and all(p.status.phase == "Running" for p in pods)
    msgs = {e.message for e in r.events.log if e.reason == "Unschedulable"}
    assert ("queue resource quota insufficient: insufficient cpu" in msgs) is not runs


RECLAIM_QUEUES = """apiVersion: v1
kind: ConfigMap
metadata: {name: volcano-scheduler-configmap, namespace: volcano-system}
data:
  volcano-scheduler.conf: |
    actions: "enqueue, allocate, reclaim, backfill"
    tiers:
    - plugins: [{name: priority}, {name: conformance}, {name: proportion}]
    - plugins: [{name: drf}, {name: predicates}, {name: nodeorder}]
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: qa}
spec: {weight: 1}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: qb}
spec: {weight: 1}
"""


def test_reclaim_takes_a_victim_whose_queue_holds_less_cpu_than_the_reclaimer_asks():
    # volcano-sh/volcano#4160 removed proportion's LessPartly guard (queue allocated partly below the
    # reclaimer's request → skip the queue): qa holds 4 CPUs, qb's task asks 5 CPUs and 1 GPU. qa is over
    # its deserved GPUs (4 > 3), so one of its tasks is reclaimed although 4 CPUs < 5. proportion sits in the
    # first tier, without gang, so that its victims decide.
    hog = vcjob("hog", 4, min_available=1, queue="qa", ann="gpusim.io/duration: 1h").replace(
        f"resources: {{limits: {{{GPU}: 1}}}}", f"resources: {{requests: {{cpu: '1'}}, limits: {{{GPU}: 1}}}}")
    small = vcjob("small", 1, queue="qb", meta=", annotations: {gpusim.io/submit-at: 60s}").replace(
        f"resources: {{limits: {{{GPU}: 1}}}}", f"resources: {{requests: {{cpu: '5'}}, limits: {{{GPU}: 1}}}}")
    assert "cpu: '1'" in hog and "cpu: '5'" in small
    r = run(pool(4).replace('cpu: "64"', 'cpu: "16"'), RECLAIM_QUEUES, hog, small, until="5m")
    evicted = events(r, "Evict", "Pod")
    assert len(evicted) == 1 and evicted[0].object.name.startswith("hog-")
    assert evicted[0].message == "Pod is evicted, because of reclaim"
    [p] = [p for p in r.pods() if p.metadata.name.startswith("small-")]
    assert p.status.phase == "Running"
