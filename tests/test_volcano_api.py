"""Volcano's objects as a user writes them: strict decoding, the admission webhooks' defaults and checks,
references that must resolve, the scheduler configuration (default and ConfigMap), and Volcano installed
only when a scenario uses it."""
from __future__ import annotations

import pytest

from gpusim.api.errors import InputError
from gpusim.cluster.scenario import load
from gpusim.cluster.simulation import Simulation
from gpusim.volcano import conf as vconf

GPU = "nvidia.com/gpu"
POOL = """apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: a100}
spec: {count: 1, gpu: {model: A100-SXM4-80GB, count: 8}}
"""


def vcjob(name="train", spec="", tasks=None, meta=""):
    tasks = tasks if tasks is not None else """
  - name: worker
    replicas: 2
    template:
      spec:
        restartPolicy: Never
        containers: [{name: w, image: cuda, resources: {limits: {nvidia.com/gpu: 1}}}]"""
    return f"""apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {{name: {name}{meta}}}
spec:
{spec}  tasks:{tasks}
"""


def queue(name, spec="{}"):
    return f"""apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {{name: {name}}}
spec: {spec}
"""


def scenario(*docs):
    return load(texts=[("s.yaml", "---\n".join([POOL, *docs]))])


def error_of(*docs) -> InputError:
    with pytest.raises(InputError) as e:
        scenario(*docs)
    return e.value


def test_webhook_defaults_of_a_job():
    sc = scenario(vcjob(tasks="""
  - replicas: 3
    template: {spec: {containers: [{name: w, image: cuda}]}}
  - replicas: 2
    minAvailable: 1
    template: {spec: {containers: [{name: w, image: cuda}]}}"""))
    job = sc.objects["Job.batch.volcano.sh"][0]
    assert (job.spec.scheduler_name, job.spec.queue, job.spec.max_retry) == ("volcano", "default", 3)
    assert [t.name for t in job.spec.tasks] == ["default0", "default1"]
    assert [t.min_available for t in job.spec.tasks] == [3, 1]
    assert job.spec.min_available == 4          # Σ of the tasks' minAvailable


def test_queue_defaults_weight_and_reclaimable():
    q = scenario(queue("team-a")).objects["Queue"][0]
    assert (q.spec.weight, q.spec.reclaimable) == (1, True)


@pytest.mark.parametrize("doc, path, message", [
    (vcjob(tasks=" []"), "spec.tasks", "No task specified in job spec"),
    (vcjob(spec="  minAvailable: 5\n"), "spec.minAvailable",
     "job 'minAvailable' should not be greater than total replicas in tasks;"),
    (vcjob(tasks="""
  - name: w
    replicas: 1
    minAvailable: 2
    template: {spec: {containers: [{name: w, image: cuda}]}}"""), "spec.tasks[0].minAvailable",
     "'minAvailable' is greater than 'replicas' in task: w, job: train"),
    (vcjob(spec="  maxRetry: -1\n"), "spec.maxRetry", "'maxRetry' cannot be less than zero."),
    (vcjob(spec="  policies: [{event: PodEvicted, exitCode: 3, action: RestartJob}]\n"), "spec.policies[0]",
     "must not specify event and exitCode simultaneously"),
    (vcjob(spec="  policies: [{exitCode: 0, action: AbortJob}]\n"), "spec.policies[0].exitCode",
     "0 is not a valid error code"),
    (vcjob(spec="  policies: [{event: PodEvicted, action: SyncJob}]\n"), "spec.policies[0].action",
     'Invalid value: "SyncJob": invalid policy action'),
    (vcjob(spec="  plugins: {magic: []}\n"), "spec.plugins[magic]", "unable to find job plugin: magic"),
    (vcjob(spec="  queue: research\n"), "spec.queue",
     'unable to find job queue: queues.scheduling.volcano.sh "research" not found'),
    (vcjob(spec="  schedulerName: volcano\n  foo: 1\n"), "", 'unknown field "spec.foo"'),
    (queue("q", "{weight: -1}"), "spec.weight", "queue weight must be a positive integer"),
])
def test_invalid_volcano_objects_name_the_field(doc, path, message):
    e = error_of(doc)
    assert message in str(e)
    assert path in str(e)


def test_a_closed_queue_rejects_jobs():
    closed = queue("frozen") + "status: {state: Closed}\n"
    e = error_of(closed, vcjob(spec="  queue: frozen\n"))
    assert "can only submit job to queue with state `Open`, queue `frozen` status is `Closed`" in str(e)


def test_volcano_pod_group_needs_its_queue():
    pg = """apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: g}
spec: {minMember: 2, queue: nowhere}
"""
    e = error_of(pg)
    assert 'PodGroup "default/g" is invalid' in str(e) and "spec.queue" in str(e) and '"nowhere" not found' in str(e)


def test_both_pod_group_kinds_coexist():
    sp = """apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: g}
spec: {minMember: 1}
"""
    vc = """apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: g}
spec: {minMember: 1}
"""
    sc = scenario(sp, vc)
    assert len(sc.pod_groups) == 1 and sc.objects["PodGroup.scheduling.volcano.sh"][0].spec.queue == "default"


def test_default_scheduler_conf():
    c = vconf.default()
    assert c.actions == ["enqueue", "allocate", "backfill"]
    assert [[p.name for p in t.plugins] for t in c.tiers] == [
        ["priority", "gang", "conformance"], ["overcommit", "drf", "predicates", "proportion", "nodeorder"]]


CM = """apiVersion: v1
kind: ConfigMap
metadata: {name: volcano-scheduler-configmap, namespace: volcano-system}
data:
  volcano-scheduler.conf: |
"""


def test_configmap_conf_is_used():
    text = CM + """    actions: "enqueue, allocate, reclaim, backfill"
    tiers:
    - plugins: [{name: priority}, {name: gang, enablePreemptable: false}]
    - plugins: [{name: predicates}, {name: proportion}, {name: binpack, arguments: {binpack.weight: 10}}]
"""
    sc = scenario(text, vcjob())
    r = Simulation(sc).run()
    c = r.addons["volcano"].conf
    assert c.actions == ["enqueue", "allocate", "reclaim", "backfill"]
    assert c.plugin("gang").enabled("preemptable") is False and c.plugin("gang").enabled("job_order")
    assert c.plugin("binpack").arguments == {"binpack.weight": 10}
    assert c.source == "volcano-system/volcano-scheduler-configmap"


@pytest.mark.parametrize("conf, path, message", [
    ('    actions: "enqueue, shuffle-all"\n', "data[volcano-scheduler.conf].actions",
     "failed to find Action shuffle-all, ignore it"),
    ('    actions: "allocate"\n    tiers: [{plugins: [{name: capacity}]}]\n',
     "data[volcano-scheduler.conf].tiers[0].plugins[0].name", "Failed to get plugin capacity"),
])
def test_bad_scheduler_conf_is_an_input_error(conf, path, message):
    e = error_of(CM + conf, vcjob())
    assert path in str(e) and message in str(e)


def test_volcano_is_installed_only_when_the_scenario_uses_it():
    plain = """apiVersion: v1
kind: Pod
metadata: {name: p, annotations: {gpusim.io/duration: 1m}}
spec: {containers: [{name: c, image: cuda}]}
"""
    r = Simulation(scenario(plain)).run()
    assert "volcano" not in r.addons and r.api.list("Queue") == []
    r = Simulation(scenario(queue("team-a"))).run()
    assert "volcano" in r.addons
    assert sorted(q.metadata.name for q in r.api.list("Queue")) == ["default", "team-a"]
    assert all(q.status.state == "Open" for q in r.api.list("Queue"))
    assert r.api.get("Namespace", "", "volcano-system") is not None


@pytest.mark.parametrize("annotations, labels, expected", [
    # vc:pkg/scheduler/api/pod_info.go GetPodPreemptable (master): annotation first, then label, parsed with
    # strconv.ParseBool; a value that does not parse is false; absent, true (since v1.7.0, volcano#2545)
    ({}, {}, True),
    ({"volcano.sh/preemptable": "true"}, {}, True),
    ({"volcano.sh/preemptable": "false"}, {}, False),
    ({"volcano.sh/preemptable": "F"}, {}, False),
    ({"volcano.sh/preemptable": "1"}, {}, True),
    ({"volcano.sh/preemptable": "yes"}, {}, False),
    ({}, {"volcano.sh/preemptable": "false"}, False),
    ({}, {"volcano.sh/preemptable": "TRUE"}, True),
    ({"volcano.sh/preemptable": "true"}, {"volcano.sh/preemptable": "false"}, True),
    ({"volcano.sh/preemptable": "tRuE"}, {"volcano.sh/preemptable": "true"}, False),
])
def test_get_pod_preemptable(annotations, labels, expected):
    from types import SimpleNamespace

    from gpusim.volcano.api import preemptable
    pod = SimpleNamespace(metadata=SimpleNamespace(annotations=annotations, labels=labels))
    assert preemptable(pod) is expected
