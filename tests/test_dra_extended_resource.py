"""Extended resources backed by DRA (KEP-5004, feature gate DRAExtendedResource, beta and on in 1.36).

Table rows ported from kubernetes/kubernetes (stored copies read with the search tools; the newest stored
versions carry the extended-resource rows: dynamicresources_test.go listed at commit c366b3458f8b, fit_test.go
the copy with ``draExtendedResourceEnabled`` rows):
- pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go, TestPlugin: the rows whose names start
  with ``extended-resource`` / ``implicit-extended-resource`` / ``non-DRA-extended-resource``, with its fixtures
  (node "worker", driver "some-driver", class "my-resource-class" with ``extendedResourceName: example.com/gpu``,
  pod "my-pod", slices of "instance-1" … "instance-4").
- pkg/scheduler/framework/plugins/noderesources/fit_test.go, TestEnoughRequests: the ``draExtendedResourceEnabled``
  rows (``extended.resource.dra.io/something`` backed by class "device-class-name").
Rows gpusim cannot express:
- extended-resource-name-with-resources-fail-patch, extended-resource-name-claim-creation-failure: they inject
  apiserver errors (a failing pod-status patch, a failing claim create) through client-go reactors; gpusim's
  apiserver has no fault injection for writes.
- The ``metrics`` checks (scheduler_resourceclaim_creates_total): gpusim has no scheduler metrics; the row checks
  instead whether a claim was written to the apiserver.
- fit_test.go "extended resource backed by DRA, nil draManager" (the kubelet admission path delegating every
  resource missing from allocatable): ported as NodeResourcesFit without a handle (no DeviceClass lister); the
  kubelet's own admission skips extended resources missing from allocatable (removeMissingExtendedResources).
Then gpusim's own checks: the request naming with init containers and sidecars (createRequestsAndMappings), the
class precedence, the gate's default per release, and scenarios: the same workload as ``nvidia.com/gpu`` and as
an explicit ResourceClaimTemplate lands on the same devices; a device-plugin node and a DRA node side by side.
"""
from __future__ import annotations

import random
from types import SimpleNamespace

import pytest
import simpy

from gpusim.api.core_v1 import Container, Node, NodeStatus, Pod, PodSpec, ResourceRequirements
from gpusim.api.gpusim_v1alpha1 import SimulationSpec, gate_default, gate_enabled, validate_feature_gates
from gpusim.api.meta import ObjectMeta
from gpusim.api.resource_k8s_io_v1 import DeviceClass, ResourceClaim, ResourceSlice
from gpusim.api.schema import decode
from gpusim.cluster.scenario import load
from gpusim.cluster.simulation import Simulation
from gpusim.controlplane.apiserver import APIServer
from gpusim.scheduler.dra import extended
from gpusim.scheduler.framework import Code, CycleState, NodeInfo, PodInfo
from gpusim.scheduler.plugins.dynamicresources import SPECIAL_CLAIM_IN_MEM_NAME, DynamicResources
from gpusim.scheduler.plugins.noderesources import NodeResourcesFit

# --- dynamicresources_test.go fixtures ----------------------------------------------------------------------
POD_UID, WORKER, WORKER2, DRIVER = "1234", "worker", "worker-2", "some-driver"
CLASS_NAME = "my-resource-class"
ERN, ERN2 = "example.com/gpu", "example.com/gpu2"
IMPLICIT = "deviceclass.resource.kubernetes.io/my-resource-class"
ANNOTATION = "resource.kubernetes.io/extended-resource-claim"


def device_class(name=CLASS_NAME, ern=None) -> DeviceClass:
    return decode(DeviceClass, {"metadata": {"name": name},
                                "spec": {"extendedResourceName": ern} if ern else {}})


CLASS_PLAIN = device_class()                          # deviceClass
CLASS_ERN = device_class(ern=ERN)                     # deviceClassWithExtendResourceName
CLASS_ERN2 = device_class(CLASS_NAME + "2", ERN2)     # deviceClassWithExtendResourceName2


def make_pod(*containers: dict, name="my-pod") -> Pod:
    """st.MakePod().Req(...): one container per request map."""
    return decode(Pod, {"metadata": {"name": name, "namespace": "default", "uid": POD_UID}, "spec": {"containers": [
        {"name": f"c{i}", "image": "x", "resources": {"requests": dict(r)}} for i, r in enumerate(containers)]}})


POD_ERN = lambda: make_pod({ERN: "1"})                             # podWithExtendedResourceName
POD_ERN2 = lambda: make_pod({ERN: "1", ERN2: "1"})                 # podWithExtendedResourceName2
POD_IMPLICIT = lambda: make_pod({IMPLICIT: "1", ERN: "2"})         # podWithImplicitExtendedResourceName
POD_IMPLICIT_TWO = lambda: make_pod({IMPLICIT: "1"}, {ERN: "2"})   # ...TwoContainers


def worker_node(capacity=None, name=WORKER) -> Node:
    """workerNode / workerNodeWithExtendedResource(ZeroAllocatable)."""
    alloc = {"cpu": "64", "memory": "256Gi", "pods": "110", **(capacity or {})}
    return Node(metadata=ObjectMeta(name=name, labels={"kubernetes.io/hostname": name}),
                status=NodeStatus(capacity=dict(alloc), allocatable=dict(alloc)))


def worker_slice(*devices: str, node=WORKER) -> ResourceSlice:
    """workerNodeSlice (instance-1) / largeWorkerNodeSlice (instance-1 … instance-4)."""
    return decode(ResourceSlice, {"metadata": {"name": f"{node}-{DRIVER}"}, "spec": {
        "driver": DRIVER, "pool": {"name": node, "resourceSliceCount": 1}, "nodeName": node,
        "devices": [{"name": d} for d in devices or ("instance-1",)]}})


LARGE = ("instance-1", "instance-2", "instance-3", "instance-4")


def stale_claim(node=WORKER) -> ResourceClaim:
    """extendedResourceClaim / extendedResourceClaimNode2: written in an earlier cycle, allocated."""
    return decode(ResourceClaim, {
        "metadata": {"name": "my-pod-extended-resources-0", "generateName": "my-pod-extended-resources-",
                     "namespace": "default", "annotations": {ANNOTATION: "true"},
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "my-pod", "uid": POD_UID,
                                          "controller": True}]},
        "spec": {"devices": {"requests": [{"name": "container-0-request-0",
                                           "exactly": {"deviceClassName": CLASS_NAME}}]}},
        "status": {"allocation": {
            "devices": {"results": [{"request": "container-0-request-0", "driver": DRIVER, "pool": WORKER,
                                     "device": "instance-1"}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}})


def setup(pod, classes, slices=(), claims=(), gates=None):
    env = simpy.Environment()
    api = APIServer(env, random.Random(0))
    for o in [*classes, *slices, *claims, pod]:
        api.create(o)
    handle = SimpleNamespace(api=api, ctx=SimpleNamespace(now=0.0), k8s_version=(1, 36),
                             feature_gates=gates or {})
    return DynamicResources(None, handle), api


def schedule(pod, node, classes, slices=(), claims=(), gates=None):
    """PreFilter, Filter on ``node``, Reserve and PreBind; returns (plugin, api, state, {phase: status})."""
    pl, api = setup(pod, classes, slices, claims, gates)
    pi, ni, state = PodInfo(pod), NodeInfo(node), CycleState()
    out = {}
    _, out["prefilter"] = pl.pre_filter(state, pi, [ni])
    if out["prefilter"].code == Code.Skip:
        return pl, api, state, out
    out["filter"] = pl.filter(state, pi, ni)
    if not out["filter"].is_success():
        return pl, api, state, out
    out["reserve"] = pl.reserve(state, pi, ni.name)
    out["prebind"] = pl.pre_bind(state, pi, ni.name)
    return pl, api, state, out


def written_claims(api):
    return api.list("ResourceClaim", lambda c: c.metadata.annotations.get(ANNOTATION) == "true")


def results(claim):
    return [(r.request, r.device) for r in claim.status.allocation.devices.results]


# (row, pod, node capacity, classes, slices, claims, want)
# want: "skip" | ("filter", code, message) | None (nothing written) | {request: count}, [(request, device)]
PLUGIN_ROWS = [
    ("extended-resource-name-with-node-resource", POD_ERN, {ERN: "1"}, (CLASS_ERN,), (), (), None),
    ("extended-resource-one-device-plugin-one-dra", POD_ERN2, {ERN: "1"}, (CLASS_ERN, CLASS_ERN2),
     (worker_slice(),), (),
     ({"container-0-request-1": (1, CLASS_NAME + "2")}, [("container-0-request-1", "instance-1")])),
    ("extended-resource-name-with-zero-allocatable", POD_ERN, {ERN: "0"}, (CLASS_ERN,), (worker_slice(),), (),
     ({"container-0-request-0": (1, CLASS_NAME)}, [("container-0-request-0", "instance-1")])),
    ("non-DRA-extended-resource-name-with-zero-allocatable", POD_ERN, {ERN: "0"}, (CLASS_PLAIN,), (worker_slice(),),
     (), "skip"),
    ("extended-resource-name-no-resource", POD_ERN, {}, (CLASS_ERN,), (), (),
     ("filter", Code.UnschedulableAndUnresolvable, "cannot allocate all claims")),
    ("extended-resource-name-with-resources", POD_ERN, {}, (CLASS_ERN,), (worker_slice(),), (),
     ({"container-0-request-0": (1, CLASS_NAME)}, [("container-0-request-0", "instance-1")])),
    ("implicit-extended-resource-name-with-resources", POD_IMPLICIT, {}, (CLASS_ERN,), (worker_slice(*LARGE),), (),
     ({"container-0-request-0": (1, CLASS_NAME), "container-0-request-1": (2, CLASS_NAME)},
      [("container-0-request-0", "instance-1"), ("container-0-request-1", "instance-2"),
       ("container-0-request-1", "instance-3")])),
    ("implicit-extended-resource-name-two-containers-with-resources", POD_IMPLICIT_TWO, {}, (CLASS_ERN,),
     (worker_slice(*LARGE),), (),
     ({"container-0-request-0": (1, CLASS_NAME), "container-1-request-0": (2, CLASS_NAME)},
      [("container-0-request-0", "instance-1"), ("container-1-request-0", "instance-2"),
       ("container-1-request-0", "instance-3")])),
    ("extended-resource-name-with-resources-has-claim", POD_ERN, {}, (CLASS_ERN,), (worker_slice(),),
     (stale_claim(),), ("filter", Code.UnschedulableAndUnresolvable, "cannot schedule extended resource claim")),
    ("extended-resource-name-with-resources-delete-claim", POD_ERN, {}, (CLASS_ERN,), (worker_slice(),),
     (stale_claim(WORKER2),), ("filter", Code.UnschedulableAndUnresolvable, "cannot schedule extended resource claim")),
]


@pytest.mark.parametrize("row, pod, capacity, classes, slices, claims, want", PLUGIN_ROWS,
                         ids=[r[0] for r in PLUGIN_ROWS])
def test_plugin_rows(row, pod, capacity, classes, slices, claims, want):
    pod = pod()
    pl, api, state, out = schedule(pod, worker_node(capacity), classes, slices, claims)
    if want == "skip":
        assert out["prefilter"].code == Code.Skip
        return
    assert out["prefilter"].is_success()
    if isinstance(want, tuple) and want[0] == "filter":
        st = out["filter"]
        assert (st.code, st.message()) == want[1:]
        return
    assert out["filter"].is_success() and out["reserve"].is_success() and out["prebind"].is_success()
    before = {c.metadata.name for c in claims}
    made = [c for c in written_claims(api) if c.metadata.name not in before]
    if want is None:   # the node's device plugin provides everything: no claim, no status
        assert made == [] and pod.status.extended_resource_claim_status is None
        return
    requests, allocated = want
    (claim,) = made
    # <pod>-extended-resources-<5 random characters>, owned by the pod, annotated
    assert claim.metadata.name.startswith("my-pod-extended-resources-") and len(claim.metadata.name) == 31
    assert claim.metadata.generate_name == "my-pod-extended-resources-"
    assert claim.metadata.annotations == {ANNOTATION: "true"}
    (owner,) = claim.metadata.owner_references
    assert (owner.kind, owner.name, owner.uid, owner.controller) == ("Pod", "my-pod", POD_UID, True)
    assert {r.name: (r.exactly.count, r.exactly.device_class_name) for r in claim.spec.devices.requests} == requests
    assert results(claim) == allocated
    assert claim.metadata.finalizers == ["resource.kubernetes.io/delete-protection"]
    assert [r.uid for r in claim.status.reserved_for] == [POD_UID]
    ext = pod.status.extended_resource_claim_status
    assert ext.resource_claim_name == claim.metadata.name
    assert {(m.container_name, m.request_name) for m in ext.request_mappings} == \
        {(f"c{r[len('container-'):].split('-')[0]}", r) for r in requests}
    assert pl.in_flight == {}


POST_FILTER_ROWS = [   # the same rows' want.postfilter: (row, slices, claims, message, claim left in the apiserver)
    ("extended-resource-name-no-resource", (), (), "still not schedulable", False),
    ("extended-resource-name-with-resources-has-claim", (worker_slice(),), (stale_claim(),),
     "deletion of ResourceClaim completed", False),
    ("extended-resource-name-with-resources-delete-claim", (worker_slice(),), (stale_claim(WORKER2),),
     "deletion of ResourceClaim completed", False),
]


@pytest.mark.parametrize("row, slices, claims, message, left", POST_FILTER_ROWS, ids=[r[0] for r in POST_FILTER_ROWS])
def test_plugin_rows_post_filter(row, slices, claims, message, left):
    pod = POD_ERN()
    pl, api, state, out = schedule(pod, worker_node(), (CLASS_ERN,), slices, claims)
    assert not out["filter"].is_success()
    _, st = pl.post_filter(state, PodInfo(pod), {})
    assert (st.code, st.message()) == (Code.Unschedulable, message)
    assert bool(written_claims(api)) == left


def test_extended_resource_name_bind_failure_deletes_the_claim():
    """extended-resource-name-bind-failure: Unreserve after PreBind removes the claim it wrote."""
    pod = POD_ERN()
    pl, api, state, out = schedule(pod, worker_node(), (CLASS_ERN,), (worker_slice(),))
    assert out["prebind"].is_success() and len(written_claims(api)) == 1
    pl.unreserve(state, PodInfo(pod), WORKER)
    assert written_claims(api) == []


def test_extended_resource_name_skip_bind_leaves_nothing_in_flight():
    """extended-resource-name-skip-bind: Reserve puts the in-memory claim in flight (its devices count as used
    for other pods at once); Unreserve before PreBind drops it and nothing was written."""
    pod = POD_ERN()
    pl, api = setup(pod, (CLASS_ERN,), (worker_slice(),))
    pi, ni, state = PodInfo(pod), NodeInfo(worker_node()), CycleState()
    pl.pre_filter(state, pi, [ni])
    assert pl.filter(state, pi, ni).is_success()
    assert pl.reserve(state, pi, WORKER).is_success()
    (alloc,) = pl.in_flight.values()
    assert [r.device for r in alloc.devices.results] == ["instance-1"]
    other = decode(Pod, {"metadata": {"name": "other", "namespace": "default", "uid": "5678"},
                         "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {ERN: "1"}}}]}})
    opi, ostate = PodInfo(other), CycleState()
    pl.pre_filter(ostate, opi, [ni])
    assert pl.filter(ostate, opi, ni).message() == "cannot allocate all claims"
    pl.unreserve(state, pi, WORKER)
    assert pl.in_flight == {} and written_claims(api) == []


def test_in_memory_claim_shape():
    """preFilterExtendedResources: the special claim before Filter: ``<extended-resources>``, no requests."""
    pod = POD_ERN()
    pl, _ = setup(pod, (CLASS_ERN,), (worker_slice(),))
    state = CycleState()
    pl.pre_filter(state, PodInfo(pod), [])
    special = state["PreFilterDynamicResources"].extended
    assert special.metadata.name == SPECIAL_CLAIM_IN_MEM_NAME == "<extended-resources>"
    assert special.metadata.generate_name == "my-pod-extended-resources-"
    assert special.spec.devices.requests == []


def test_cannot_fit_resource_neither_device_plugin_nor_class():
    """filterExtendedResources: an extended resource the node does not have and no class backs →
    "cannot fit resource" (gpusim's own row, from the upstream branch)."""
    pod = make_pod({ERN: "1", "example.com/other": "1"})
    _, _, _, out = schedule(pod, worker_node(), (CLASS_ERN,), (worker_slice(),))
    assert (out["filter"].code, out["filter"].message()) == (Code.UnschedulableAndUnresolvable, "cannot fit resource")


def test_gate_off_skips():
    _, _, _, out = schedule(POD_ERN(), worker_node(), (CLASS_ERN,), (worker_slice(),),
                            gates={"DRAExtendedResource": False})
    assert out["prefilter"].code == Code.Skip


# --- fit_test.go TestEnoughRequests, the draExtendedResourceEnabled rows ------------------------------------------
EXT_A, EXT_B, EXT_DRA = "example.com/aaa", "example.com/bbb", "extended.resource.dra.io/something"
ENOUGH_ALLOC = {"cpu": "10m", "memory": "20", "pods": "32", EXT_A: "5", "ephemeral-storage": "20",
                "hugepages-2Mi": "5"}   # makeAllocatableResources(10, 20, 32, 5, 20, 5)
FIT_CLASS = device_class("device-class-name", EXT_DRA)   # deviceClassWithExtendResourceName


def fit_pod(requests: dict) -> Pod:
    return Pod(metadata=ObjectMeta(name="p", uid="p"), spec=PodSpec(containers=[Container(
        name="c", image="x", resources=ResourceRequirements(requests=dict(requests)))]))


# (name, gate, nil DRA manager, pod requests, requests of the pod already on the node, want code, want reasons)
FIT_ROWS = [
    ("extended resource backed by device plugin", True, False, {EXT_A: "1"}, {}, None, []),
    ("extended resource backed by DRA", True, False, {"cpu": "1m", "memory": "1", EXT_DRA: "1"}, {}, None, []),
    ("extended resource backed by DRA, nil draManager", True, True, {"cpu": "1m", "memory": "1", EXT_A: "1"}, {},
     None, []),
    ("extended resource backed by DRA not enabled", False, False, {"cpu": "1m", "memory": "1", EXT_DRA: "1"}, {},
     Code.UnschedulableAndUnresolvable, [f"Insufficient {EXT_DRA}"]),
    ("extended resource NOT backed by DRA", True, False, {"cpu": "1m", "memory": "1", EXT_B: "1"}, {},
     Code.UnschedulableAndUnresolvable, [f"Insufficient {EXT_B}"]),
    ("extended resource was backed by Device Plugin (Allocatable: 0)", True, False, {EXT_DRA: "1"}, {EXT_DRA: "0"},
     None, []),
    ("extended resource was backed by Device Plugin (Allocatable: 0), global cache", True, False, {EXT_A: "1"},
     {EXT_A: "0"}, None, []),
]


@pytest.mark.parametrize("name, gate, nil_manager, requests, on_node, code, reasons", FIT_ROWS,
                         ids=[r[0] for r in FIT_ROWS])
def test_enough_requests_dra_rows(name, gate, nil_manager, requests, on_node, code, reasons):
    env = simpy.Environment()
    api = APIServer(env, random.Random(0))
    api.create(device_class("device-class-name", EXT_DRA))
    handle = None if nil_manager else SimpleNamespace(api=api, k8s_version=(1, 36),
                                                      feature_gates={"DRAExtendedResource": gate})
    fit = NodeResourcesFit({}, (1, 36), handle)
    node = Node(metadata=ObjectMeta(name="n"), status=NodeStatus(capacity=dict(ENOUGH_ALLOC),
                                                                 allocatable=dict(ENOUGH_ALLOC)))
    ni = NodeInfo(node)
    ni.add_pod(PodInfo(fit_pod(on_node)))
    pi, state = PodInfo(fit_pod(requests)), CycleState()
    fit.pre_filter(state, pi, [ni])
    st = fit.filter(state, pi, ni)
    if code is None:
        assert st.is_success(), st.reasons
    else:
        assert (st.code, st.reasons) == (code, reasons)


# --- gpusim's own: createRequestsAndMappings with init containers and sidecars, class precedence, the gate -----
def pod_with(init: list[tuple[str, dict, bool]], containers: list[tuple[str, dict]]) -> Pod:
    return decode(Pod, {"metadata": {"name": "p", "namespace": "default", "uid": "u"}, "spec": {
        "initContainers": [{"name": n, "image": "x", "resources": {"requests": r},
                            **({"restartPolicy": "Always"} if sidecar else {})} for n, r, sidecar in init],
        "containers": [{"name": n, "image": "x", "resources": {"requests": r}} for n, r in containers]}})


def test_requests_and_mappings_init_containers_reuse_and_share():
    """Regular init containers reuse later long-lived requests and share the largest of their own; a sidecar
    counts as long-lived; indices run over initContainers + containers; names sort the container's resources."""
    mapping = extended.device_class_mapping([CLASS_ERN])
    pod = pod_with([("init-a", {ERN: "4"}, False), ("init-b", {"cpu": "1", ERN: "5"}, False),
                    ("side", {ERN: "1"}, True)],
                   [("main", {"cpu": "1", "memory": "1Gi", ERN: "2"})])
    reqs, maps = extended.requests_and_mappings(pod, [ERN], mapping)
    # main's resources sort cpu < example.com/gpu < memory: request index 1; init-b's own 5 − 3 = 2 is the larger
    # init request, so init-a's (4 − 3 = 1) is folded into it
    assert [(r.name, r.exactly.count) for r in reqs] == [("container-1-request-1", 2), ("container-2-request-0", 1),
                                                          ("container-3-request-1", 2)]
    assert [(m.container_name, m.request_name) for m in maps] == [
        ("side", "container-2-request-0"), ("main", "container-3-request-1"),
        ("init-a", "container-2-request-0"), ("init-a", "container-3-request-1"), ("init-a", "container-1-request-1"),
        ("init-b", "container-2-request-0"), ("init-b", "container-3-request-1"), ("init-b", "container-1-request-1")]
    # an init container the long-lived requests after it cover gets no request of its own
    small = pod_with([("init", {ERN: "3"}, False)], [("main", {ERN: "3"})])
    reqs, maps = extended.requests_and_mappings(small, [ERN], mapping)
    assert [(r.name, r.exactly.count) for r in reqs] == [("container-1-request-0", 3)]
    assert [(m.container_name, m.request_name) for m in maps] == [("main", "container-1-request-0"),
                                                                   ("init", "container-1-request-0")]


def test_class_precedence_newest_then_name():
    a, b, c = device_class("b-class", ERN), device_class("a-class", ERN), device_class("c-class", ERN)
    a.metadata.creation_timestamp, b.metadata.creation_timestamp, c.metadata.creation_timestamp = 5, 5, 1
    mapping = extended.device_class_mapping([a, b, c])
    assert mapping[ERN].metadata.name == "a-class"      # created last (5), lexicographically first of those
    assert mapping["deviceclass.resource.kubernetes.io/c-class"].metadata.name == "c-class"


def test_gate_defaults_per_release():
    """kube_features.go: DRAExtendedResource alpha 1.34 (off), beta 1.36 (on)."""
    assert [gate_default("DRAExtendedResource", (1, m)) for m in (33, 34, 35, 36)] == [False, False, False, True]
    assert gate_enabled(SimulationSpec(kubernetes_version="1.36"), "DRAExtendedResource")
    assert not gate_enabled(SimulationSpec(kubernetes_version="1.35"), "DRAExtendedResource")
    assert gate_enabled(SimulationSpec(kubernetes_version="1.35", feature_gates={"DRAExtendedResource": True}),
                        "DRAExtendedResource")
    errs = list(validate_feature_gates(SimulationSpec(kubernetes_version="1.33",
                                                      feature_gates={"DRAExtendedResource": True})))
    assert errs == [("spec.featureGates[DRAExtendedResource]", "Forbidden: feature gate DRAExtendedResource exists "
                     "from Kubernetes 1.34 on; spec.kubernetesVersion is 1.33")]


# --- scenarios -----------------------------------------------------------------------------------------------
HEAD = """apiVersion: gpusim.io/v1alpha1
kind: Simulation
metadata: {name: ext}
spec: {seed: 3%s}
---
apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: h100-dra}
spec:
  count: 2
  gpu: {model: H100-SXM5-80GB, count: 2, allocation: dra}
"""
TEMPLATE = """---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com}
"""


def workload(as_claims: bool, pods=3, extra="", pools="") -> str:
    docs = [HEAD % extra, pools, TEMPLATE]   # the template in both: its object (uid) keeps the random streams alike
    for i in range(pods):
        # cpu and memory requests make the scores differ per node (no tie for selectHost to break at random)
        res = ("resources: {requests: {cpu: '16', memory: 64Gi}, "
               + ("claims: [{name: gpu}]}" if as_claims else "limits: {nvidia.com/gpu: 1}}"))
        claims = "  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]\n" if as_claims else ""
        docs.append(f"""---
apiVersion: v1
kind: Pod
metadata: {{name: p{i}, annotations: {{gpusim.io/duration: 10m, gpusim.io/submit-at: {i}s}}}}
spec:
  restartPolicy: Never
{claims}  containers:
  - {{name: main, image: x, {res}}}
""")
    return "".join(docs)


def run(text: str, until: float):
    sim = Simulation(load(texts=[("ext.yaml", text)]))
    sim.ctx.env.run(until=until)
    return sim


def placement(sim):
    claims = {c.metadata.owner_references[0].name: c for c in sim.ctx.api.list("ResourceClaim")}
    cdi = {u: c for kl in sim.kubelets.values() for u, c in kl.dra_cdi_devices.items()}
    return {p.metadata.name: (p.spec.node_name, [(r.pool, r.device) for r in claims[p.metadata.name].status
                                                  .allocation.devices.results], cdi[p.metadata.uid]["main"])
            for p in sim.ctx.api.list("Pod")}


def test_extended_resource_and_explicit_claim_land_on_the_same_devices():
    as_resource, as_claim = run(workload(False), 60), run(workload(True), 60)
    got = placement(as_resource)
    assert got == placement(as_claim)
    assert sorted(d for _, devs, _ in got.values() for d in devs) == \
        [("h100-dra-0", "gpu-0"), ("h100-dra-0", "gpu-1"), ("h100-dra-1", "gpu-0")]
    assert all(cdi == [f"k8s.gpu.nvidia.com/device={devs[0][1]}"] for _, devs, cdi in got.values())
    # the extended resource path: the claim is the pod's, named after it, and recorded in its status
    for p in as_resource.ctx.api.list("Pod"):
        ext = p.status.extended_resource_claim_status
        assert ext.resource_claim_name.startswith(f"{p.metadata.name}-extended-resources-")
        assert [(m.container_name, m.resource_name, m.request_name) for m in ext.request_mappings] == \
            [("main", "nvidia.com/gpu", "container-0-request-2")]   # cpu, memory, nvidia.com/gpu


def test_claims_freed_with_their_pods():
    sim = run(workload(False, pods=5), 60)
    pending = [p.metadata.name for p in sim.ctx.api.list("Pod") if not p.spec.node_name]
    assert pending == ["p4"]
    sim.ctx.env.run(until=2000)
    assert {p.status.phase for p in sim.ctx.api.list("Pod")} == {"Succeeded"}
    assert sim.ctx.api.list("ResourceClaim") == []
    assert not any(h.end is None for h in sim.ctx.holdings)


def test_gate_off_or_1_35_leaves_the_pods_pending():
    for extra in (", featureGates: {DRAExtendedResource: false}", ', kubernetesVersion: "1.35"'):
        sim = run(workload(False, pods=1, extra=extra), 60)
        (pod,) = sim.ctx.api.list("Pod")
        assert pod.spec.node_name == "" and sim.ctx.api.list("ResourceClaim") == []
        msgs = {e.message for e in sim.ctx.recorder.log if e.reason == "FailedScheduling"}
        assert msgs == {"0/2 nodes are available: 2 Insufficient nvidia.com/gpu. no new claims to deallocate, preemption: 0/2 nodes are "
                        "available: 2 Preemption is not helpful for scheduling."}, msgs


def test_device_plugin_node_and_dra_node_side_by_side():
    """The same nvidia.com/gpu pods: on the device-plugin node the device plugin serves them (no claim), on
    the DRA node a claim does; NodeResourcesFit counts the device plugin's GPUs as before."""
    text = workload(False, pods=6, pools="""---
apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: h100-dp}
spec:
  count: 1
  gpu: {model: H100-SXM5-80GB, count: 2}
""")
    sim = run(text, 60)
    pods = {p.metadata.name: p for p in sim.ctx.api.list("Pod")}
    by_node: dict[str, list[str]] = {}
    for p in pods.values():
        by_node.setdefault(p.spec.node_name, []).append(p.metadata.name)
    assert sorted(len(v) for v in by_node.values()) == [2, 2, 2]
    for p in pods.values():
        ext = p.status.extended_resource_claim_status
        assert (ext is None) == (p.spec.node_name == "h100-dp-0")
    assert len(sim.ctx.api.list("ResourceClaim")) == 4


def test_experiment_same_pod_on_a_device_plugin_node_and_a_dra_node():
    """gpusim.experiments.dra (course 02-4 §4): on-dp gets its GPU from the device plugin (env), on-dra from an
    extended resource claim (CDI); with the gate off on-dra waits with NodeResourcesFit's message."""
    import gpusim as gs
    rows = {r["pod"]: r for r in gs.extended_resource_rows(gs.compare_extended_resource())}
    dp, dra = rows["on-dp"], rows["on-dra"]
    assert (dp["node"], dp["allocatable"], dra["node"], dra["allocatable"]) == ("h100-dp-0", "2", "h100-dra-0", "-")
    assert dp["preFilter"] == dra["preFilter"] == "Success"   # the gpu.nvidia.com class backs nvidia.com/gpu
    assert dp["filter"] == "Success (nothing from DRA)" and dp["claim"] == dp["requestMappings"] == "-"
    assert dp["container"].startswith("NVIDIA_VISIBLE_DEVICES=GPU-")
    assert dra["claim"].startswith("on-dra-extended-resources-") and dra["claim"].endswith(": container-0-request-2 → "
                                                                                          + dra["filter"].split()[1])
    assert dra["requestMappings"] == "trainer/nvidia.com/gpu → container-0-request-2"
    assert dra["container"] == f"CDI k8s.gpu.nvidia.com/device={dra['filter'].split()[1]}; NVIDIA_VISIBLE_DEVICES=void"
    off = {r["pod"]: r for r in gs.extended_resource_rows(gs.compare_extended_resource(gate=False))}
    assert off["on-dp"]["preFilter"] == off["on-dra"]["preFilter"] == "Skip" and off["on-dra"]["node"] == "-"
    assert off["on-dra"]["waiting"] == (
        "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) didn't match Pod's node affinity/selector. "
        "no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
    assert "DRAExtendedResource: false" in gs.extended_resource_scenario(gate=False)


def test_implicit_device_class_name_end_to_end():
    """``deviceclass.resource.kubernetes.io/gpu.nvidia.com: 2`` (the class's implicit name, not an extended resource
    name): scheduled through DRA, and admitted by the kubelet, whose fit check delegates a DRA extended resource
    the node has no allocatable of (fit.go shouldDelegateResourceToDRA with no DRA manager)."""
    text = HEAD % "" + """---
apiVersion: v1
kind: Pod
metadata: {name: p, annotations: {gpusim.io/duration: 1m}}
spec:
  restartPolicy: Never
  containers:
  - {name: c, image: x, resources: {limits: {deviceclass.resource.kubernetes.io/gpu.nvidia.com: 2}}}
"""
    sim = run(text, 30)
    (pod,) = sim.ctx.api.list("Pod")
    assert pod.status.phase == "Running", pod.status.reason
    (claim,) = sim.ctx.api.list("ResourceClaim")
    assert [(r.name, r.exactly.count, r.exactly.device_class_name) for r in claim.spec.devices.requests] == \
        [("container-0-request-0", 2, "gpu.nvidia.com")]
    assert len({r.device for r in claim.status.allocation.devices.results}) == 2
    cdi = next(kl.dra_cdi_devices[pod.metadata.uid] for kl in sim.kubelets.values()
               if pod.metadata.uid in kl.dra_cdi_devices)
    assert len(cdi["c"]) == 2
