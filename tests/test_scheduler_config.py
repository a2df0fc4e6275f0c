"""KubeSchedulerConfiguration: profiles, multiPoint merging, plugin args, validation messages,
scoring strategies against hand-computed upstream values, and kubernetesVersion switches."""
from __future__ import annotations

from fractions import Fraction

import pytest

from gpusim.api.core_v1 import Container, Node, NodeStatus, Pod, PodSpec, ResourceRequirements, Taint
from gpusim.api.errors import InputError
from gpusim.api.meta import ObjectMeta
from gpusim.cluster.scenario import load
from gpusim.cluster.simulation import Simulation, run
from gpusim.scheduler.framework import Code, NodeInfo, PodInfo
from gpusim.scheduler.plugins import noderesources as nr
from gpusim.scheduler.plugins.tainttoleration import TaintToleration
from gpusim.scheduler.profile import build_profiles
from gpusim.scheduler.registry import DEFAULT_PLUGINS, in_tree_registry
from gpusim.views.explain import explain_pod

CFG = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
POOL = """apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: a100}
spec: {count: 3, gpu: {model: A100-SXM4-80GB, count: 8}}
"""


def gpu_pod(name, gpus, submit="0s", scheduler=None, cpu="8", mem="32Gi"):
    sn = f"\n  schedulerName: {scheduler}" if scheduler else ""
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: {name}, annotations: {{gpusim.io/duration: 1h, gpusim.io/submit-at: {submit}}}}}
spec:{sn}
  containers: [{{name: c, image: x, resources: {{limits: {{nvidia.com/gpu: {gpus}, cpu: "{cpu}", memory: {mem}}}}}}}]
"""


def profiles(cfg_yaml: str | None):
    sc = load(texts=[("cfg.yaml", CFG + cfg_yaml)]) if cfg_yaml is not None else load()
    return sc.scheduler_profiles


# --- profiles ----------------------------------------------------------------------------------------

def test_default_profile_expands_multipoint():
    (p,) = profiles(None)
    assert p.scheduler_name == "default-scheduler"
    assert p.points["QueueSort"] == ["PrioritySort"]
    assert p.points["Filter"] == ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
                                  "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity", "DynamicResources"]
    # as upstream's multiPoint expansion: every default plugin that implements PreFilter, in the default order
    assert p.points["PreFilter"] == ["NodeAffinity", "NodePorts", "NodeResourcesFit", "PodTopologySpread",
                                     "InterPodAffinity", "DynamicResources"]
    assert p.points["Score"] == ["TaintToleration", "NodeAffinity", "NodeResourcesFit", "PodTopologySpread",
                                 "InterPodAffinity", "NodeResourcesBalancedAllocation"]
    assert p.weights["PodTopologySpread"] == 2 and p.weights["InterPodAffinity"] == 2
    assert p.points["PostFilter"] == ["DynamicResources", "DefaultPreemption"] and p.points["Bind"] == ["DefaultBinder"]
    assert p.weights["TaintToleration"] == 3 and p.weights["NodeAffinity"] == 2
    assert p.weights["NodeResourcesFit"] == 1 and p.weights["NodeResourcesBalancedAllocation"] == 1
    assert {n for n, _ in DEFAULT_PLUGINS} == {n for names in p.points.values() for n in names}


def test_score_weight_override_and_disable():
    (p,) = profiles("""profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      enabled: [{name: NodeResourcesFit, weight: 5}]
      disabled: [{name: NodeResourcesBalancedAllocation}]
""")
    # explicitly enabled plugins come first, then the multiPoint ones (expandMultiPointPlugins)
    assert p.points["Score"] == ["NodeResourcesFit", "TaintToleration", "NodeAffinity", "PodTopologySpread",
                                 "InterPodAffinity"]
    assert p.weights["NodeResourcesFit"] == 5
    # disabled at Score only: its PreScore still runs, as upstream's per-point expansion does
    assert "NodeResourcesBalancedAllocation" in p.points["PreScore"]


def test_disable_star_at_a_point_drops_all_defaults_there():
    (p,) = profiles("""profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      disabled: [{name: "*"}]
""")
    assert p.points["Score"] == []
    assert p.points["Filter"][-1] == "DynamicResources"


def test_two_profiles():
    ps = profiles("""profiles:
- schedulerName: default-scheduler
- schedulerName: gpu-binpack
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
""")
    assert [p.scheduler_name for p in ps] == ["default-scheduler", "gpu-binpack"]
    assert ps[1].args["NodeResourcesFit"]["scoringStrategy"]["type"] == "MostAllocated"


@pytest.mark.parametrize("cfg, path, message", [
    ("percentageOfNodesToScore: 120\n", "percentageOfNodesToScore", "not in valid range [0-100]"),
    ("podInitialBackoffSeconds: 0\n", "podInitialBackoffSeconds", "must be greater than 0"),
    ("podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 2\n", "podMaxBackoffSeconds",
     "must be greater than or equal to PodInitialBackoffSeconds"),
    ("profiles: [{schedulerName: a}, {schedulerName: a}]\n", "profiles[1].schedulerName", 'Duplicate value: "a"'),
    ("profiles: [{schedulerName: a, plugins: {score: {enabled: [{name: Nope}]}}}]\n",
     "profiles[0].plugins.score.enabled[0].name", 'plugin "Nope" does not exist'),
    ("profiles: [{schedulerName: a, plugins: {queueSort: {disabled: [{name: '*'}]}}}]\n",
     "profiles[0].plugins.queueSort", "exactly one queue sort plugin must be enabled"),
    ("profiles: [{schedulerName: a, pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {type: Best}}}]}]\n",
     "profiles[0].pluginConfig[0].args.scoringStrategy.type", 'Unsupported value: "Best"'),
    ("profiles: [{schedulerName: a, pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: "
     "{resources: [{name: nvidia.com/gpu, weight: 200}]}}}]}]\n",
     "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight",
     "resource weight of nvidia.com/gpu not in valid range [1, 100]"),
    ("profiles: [{schedulerName: a, pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: "
     "{type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: [{utilization: 50, score: 5}, "
     "{utilization: 10, score: 1}]}}}}]}]\n",
     "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape[1].utilization",
     "utilization values must be sorted in increasing order"),
    ("profiles: [{schedulerName: a, pluginConfig: [{name: NodeResourcesFit, args: {bogus: 1}}]}]\n",
     "", 'unknown field "profiles[0].pluginConfig[0].args.bogus"'),
])
def test_config_validation(cfg, path, message):
    with pytest.raises(InputError) as e:
        profiles(cfg)
    text = str(e.value)
    assert "cfg.yaml, document 1" in text and "KubeSchedulerConfiguration" in text
    assert message in text
    if path:
        assert f"{path}: " in text


def test_at_most_one_configuration():
    with pytest.raises(InputError, match="at most one KubeSchedulerConfiguration"):
        load(texts=[("x.yaml", CFG + "---\n" + CFG)])


# --- scoring functions (hand-computed with upstream's integer arithmetic) --------------------------------

@pytest.mark.parametrize("requested, capacity, least, most", [
    (0, 8, 100, 0), (2, 8, 75, 25), (3, 8, 62, 37), (8, 8, 0, 100), (9, 8, 0, 100), (1, 0, 0, 0),
])
def test_least_and_most_allocated(requested, capacity, least, most):
    assert nr.least_allocated(requested, capacity) == least
    assert nr.most_allocated(requested, capacity) == most


def test_requested_to_capacity_ratio_shape():
    f = nr.requested_to_capacity_ratio([(0, 0), (100, 10)])      # bin packing: score = utilization
    assert [f(r, 8) for r in (0, 2, 3, 8, 9)] == [0, 25, 37, 100, 100]
    g = nr.requested_to_capacity_ratio([(0, 10), (100, 0)])      # spreading, decreasing shape
    assert [g(r, 8) for r in (0, 3, 8)] == [100, 63, 0]         # 100 + (−100 × 37)/100 truncated toward 0
    h = nr.requested_to_capacity_ratio([(50, 2), (80, 8)])
    # below the first point; between (util 62: 20 + 60 × 12 / 30 = 44); above the last
    assert h(1, 8) == 20 and h(5, 8) == 44 and h(8, 8) == 80


def node(gpus=8, cpu="64", mem="512Gi", name="n"):
    alloc = {"cpu": cpu, "memory": mem, "pods": "110", "nvidia.com/gpu": str(gpus)}
    return NodeInfo(Node(metadata=ObjectMeta(name=name), status=NodeStatus(capacity=alloc, allocatable=alloc)))


def pinfo(gpus=2, cpu="8", mem="32Gi", name="p"):
    c = Container(name="c", resources=ResourceRequirements(limits={"nvidia.com/gpu": gpus, "cpu": cpu, "memory": mem},
                                                           requests={"nvidia.com/gpu": gpus, "cpu": cpu, "memory": mem}))
    return PodInfo(Pod(metadata=ObjectMeta(name=name, uid=name), spec=PodSpec(containers=[c])))


def test_most_allocated_with_gpu_weight_matches_hand_computation():
    plugin = nr.NodeResourcesFit({"scoringStrategy": {"type": "MostAllocated", "resources": [
        {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": "nvidia.com/gpu", "weight": 5}]}})
    empty, used = node(), node()
    used.add_pod(pinfo(name="other"))
    p = pinfo()
    # used node after the pod: cpu 16/64 → 25, memory 64Gi/512Gi → 12, gpu 4/8 → 50: (25+12+250)/7 = 41
    assert plugin.score(None, p, used) == 41
    # empty node: cpu 12, memory 6, gpu 25: (12+6+125)/7 = 20
    assert plugin.score(None, p, empty) == 20


def test_gpu_not_scored_unless_listed_or_requested():
    least = nr.NodeResourcesFit()
    n = node()
    n.add_pod(pinfo(gpus=6, cpu="1", mem="1Gi", name="o"))
    # default resources are cpu and memory only: 6 busy GPUs do not lower the score
    assert least.score(None, pinfo(gpus=1, cpu="1", mem="1Gi"), n) == least.score(None, pinfo(gpus=1, cpu="1", mem="1Gi"), node()) - 1
    listed = nr.NodeResourcesFit({"scoringStrategy": {"resources": [{"name": "nvidia.com/gpu", "weight": 1}]}})
    assert listed.score(None, pinfo(gpus=1), n) == 12      # (8 − 7) × 100 / 8
    assert listed.score(None, pinfo(gpus=0), n) == 0       # not requested: skipped, no resource left


def test_balanced_allocation_versions():
    n = node()
    n.add_pod(pinfo(gpus=0, cpu="8", mem="32Gi", name="o"))   # cpu .125, memory .0625
    p = pinfo(gpus=0, cpu="8", mem="32Gi")                    # after: .25, .125
    assert nr.BalancedAllocation(version=(1, 36)).score(None, p, n) == 73   # 50 + (50 + 93 − 96)/2
    assert nr.BalancedAllocation(version=(1, 35)).score(None, p, n) == 93


@pytest.mark.parametrize("version, reason", [
    ((1, 36), "node(s) had untolerated taint(s)"),
    ((1, 33), "node(s) had untolerated taint {dedicated: infer}"),
])
def test_taint_message_by_version(version, reason):
    ni = node()
    ni.node.spec.taints = [Taint(key="dedicated", value="infer", effect="NoSchedule")]
    st = TaintToleration(version).filter(None, pinfo(), ni)
    assert st.code == Code.UnschedulableAndUnresolvable and st.reasons == [reason]


@pytest.mark.parametrize("version, code", [((1, 36), Code.UnschedulableAndUnresolvable), ((1, 33), Code.Unschedulable)])
def test_request_over_allocatable_by_version(version, code):
    st = nr.NodeResourcesFit(version=version).filter(None, pinfo(gpus=9), node())
    assert st.code == code and st.reasons == ["Insufficient nvidia.com/gpu"]


def test_kubernetes_version_changes_failed_scheduling_message():
    doc = """apiVersion: gpusim.io/v1alpha1
kind: Simulation
metadata: {name: s}
spec: {kubernetesVersion: "1.33"}
---
""" + POOL + "---\n" + gpu_pod("big", 9)
    r = run(text=doc)
    msg = next(e.message for e in r.events.log if e.reason == "FailedScheduling")
    assert msg == ("0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: "
                   "3 No preemption victims found for incoming pod.")
    r = run(text=doc.replace('"1.33"', '"1.36"'))
    msg = next(e.message for e in r.events.log if e.reason == "FailedScheduling")
    assert msg.endswith("preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")


# --- end to end ---------------------------------------------------------------------------------------

BINPACK = CFG + """profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}, {name: nvidia.com/gpu, weight: 5}]
"""


def test_most_allocated_packs_gpu_pods_onto_one_node():
    pods = [gpu_pod(f"p{i}", 2, submit=f"{i * 10}s") for i in range(4)]
    packed = run(text="---\n".join([BINPACK, POOL, *pods]))
    assert len({p.spec.node_name for p in packed.pods()}) == 1
    spread = run(text="---\n".join([POOL, *pods]))
    assert len({p.spec.node_name for p in spread.pods()}) == 3


def test_explain_shows_weighted_scores():
    r = run(text="---\n".join([BINPACK, POOL, gpu_pod("first", 2), gpu_pod("second", 2, submit="10s")]))
    text = explain_pod(r, "second")
    assert "NodeResourcesFit" in text and "41 → 41 → 41" in text and "20 → 20 → 20" in text
    a = r.scheduler.attempts[-1]
    assert a.node == r.pod("first").spec.node_name
    assert a.scores[a.node]["TaintToleration"] == (0, 100, 300)


def test_pod_for_unknown_scheduler_is_left_pending_and_second_profile_schedules():
    cfg = CFG + "profiles: [{schedulerName: default-scheduler}, {schedulerName: gpu-binpack}]\n"
    r = run(text="---\n".join([cfg, POOL, gpu_pod("mine", 1, scheduler="gpu-binpack"),
                               gpu_pod("nobody", 1, scheduler="my-scheduler")]))
    assert r.pod("mine").status.phase == "Running"
    sched = next(e for e in r.events.log if e.reason == "Scheduled")
    assert sched.source == "gpu-binpack"
    assert r.pod("nobody").status.phase in ("", "Pending") and not r.pod("nobody").spec.node_name
    assert "no profile is named" in explain_pod(r, "nobody")


# --- the DynamicResourceAllocation gate (default_plugins.go applyFeatureGates; kube_features.go) ----------------

def _dra_scenario(version: str, gates: str = "", extra: str = "") -> str:
    return (f'apiVersion: gpusim.io/v1alpha1\nkind: Simulation\nmetadata: {{name: s}}\n'
            f'spec: {{kubernetesVersion: "{version}"{gates}}}\n---\n' + POOL + extra)


@pytest.mark.parametrize("version, gates, has", [
    ("1.33", "", False),                                                     # beta, off by default
    ("1.33", ", featureGates: {DynamicResourceAllocation: true}", True),
    ("1.34", "", True), ("1.36", "", True)])                                 # GA
def test_dynamic_resources_is_in_the_default_profile_with_its_gate(version, gates, has):
    """TestApplyFeatureGates: the DynamicResources plugin is in the default profile only while
    DynamicResourceAllocation is on; off, a FailedScheduling message gets no DRA PostFilter reason."""
    sim = Simulation(load(texts=[("s.yaml", _dra_scenario(version, gates))]))
    assert ("DynamicResources" in sim.scheduler.framework.names["PreFilter"]) is has


def test_dynamic_resource_allocation_is_locked_on_from_1_34():
    with pytest.raises(InputError, match="cannot set feature gate DynamicResourceAllocation to false, "
                                         "feature is locked to true"):
        load(texts=[("s.yaml", _dra_scenario("1.34", ", featureGates: {DynamicResourceAllocation: false}"))])


@pytest.mark.parametrize("extra, field, message", [
    ("---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.example.com}\nspec: {}\n",
     "apiVersion", 'no matches for kind "DeviceClass" in version "resource.k8s.io/v1": served from Kubernetes 1.34 on'),
    ("---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  resourceClaims: [{name: g, resourceClaimName: g}]\n"
     "  containers: [{name: c, image: x}]\n",
     "spec.resourceClaims", "Forbidden: needs the DynamicResourceAllocation feature gate"),
    ("---\napiVersion: gpusim.io/v1alpha1\nkind: NodePool\nmetadata: {name: d}\n"
     "spec: {count: 1, gpu: {model: H100-SXM5-80GB, count: 8, allocation: dra}}\n",
     "spec.gpu.allocation", "served from Kubernetes 1.34 on"),
])
def test_dra_before_1_34_is_refused_not_run_without_devices(extra, field, message):
    with pytest.raises(InputError) as e:
        load(texts=[("s.yaml", _dra_scenario("1.33", extra=extra))])
    assert e.value.path == field and message in str(e.value)
