"""Chapter 06's call chains (gpusim/experiments/sourcechain.py, gpusim/views/sourcechain.py) and the trace
records they are read from: every frame names an upstream file and function that the table holds and that the
gpusim module recording it mirrors; the chains of real runs come out in upstream's order; the records added for
the chains (PreEnqueue, Permit success, WaitOnPermit, PostFilter, the plugins at each point, the operator's
``step``, Volcano's tiers) say what upstream does."""
from __future__ import annotations

import importlib

import matplotlib
import pytest

matplotlib.use("Agg")

from gpusim.cluster.scenario import load                              # noqa: E402
from gpusim.cluster.simulation import Simulation, run                  # noqa: E402
from gpusim.experiments import sourcechain as sc                       # noqa: E402
from gpusim.views import sourcechain as v                              # noqa: E402
from gpusim.views.sources import upstream_sources                      # noqa: E402

PROJECT_NAMES = {"kubernetes": "Kubernetes", "k8s-device-plugin": "NVIDIA k8s-device-plugin",
                 "gpu-operator": "NVIDIA GPU Operator", "scheduler-plugins": "scheduler-plugins",
                 "volcano": "Volcano"}


def is_subsequence(wanted: list, seq: list) -> bool:
    it = iter(seq)
    return all(any(x == y for y in it) for x in wanted)


def functions(frames: list[dict]) -> list[str]:
    return [f["function"] for f in frames]


@pytest.fixture(scope="module")
def bring_up():
    return sc.run_device_plugin_and_operator()


@pytest.fixture(scope="module")
def sp():
    return sc.run_scheduler_plugins()


@pytest.fixture(scope="module")
def volcano():
    return sc.run_volcano()


# --- the table -----------------------------------------------------------------------------------------------
def _resolve(target: str):
    mod, _, qual = target.partition(":")
    obj = importlib.import_module(mod)
    for part in qual.split(".") if qual else ():
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("row", sc.source_table(), ids=lambda r: r["trace"])
def test_every_row_names_an_upstream_place_and_a_gpusim_function_that_exists(row):
    assert row["project"] in sc.RELEASES and row["release"] == sc.RELEASES[row["project"]][1]
    assert row["file"].endswith(".go") and "/" in row["file"] and row["function"]
    assert callable(_resolve(row["gpusim"])) or isinstance(_resolve(row["gpusim"]), type)


def test_the_recording_module_mirrors_the_project_it_is_filed_under():
    """The gpusim module that records a step says (docstring) it mirrors the step's project, or, for an RPC,
    the caller's; the stand-ins say why not."""
    projects = {r["module"]: r["project"] for r in upstream_sources()}
    for row in sc.source_table():
        module = row["gpusim"].split(":")[0]
        allowed = {PROJECT_NAMES[row["project"]]}
        if row["caller"]:
            allowed.add("Kubernetes" if row["caller"].startswith("pkg/") else PROJECT_NAMES["k8s-device-plugin"])
        if row["trace"] in sc.STAND_INS:
            assert "DaemonSet" in (_resolve(row["gpusim"].split(":")[0]).__doc__ or "")
            continue
        assert projects[module] in allowed, (row["trace"], module, projects[module])


def test_every_record_of_the_followed_components_has_a_row(bring_up, sp, volcano):
    """Nothing the chains' components record is dropped silently: each function is in the table or is one of
    the steps the chapter leaves to chapters 02/04 (topology hints, validator files, the job controller's queue)."""
    elsewhere = {"topologymanager.(*scope).calculateAffinity", "main.(*Component).validate", "kubelet.(*Kubelet).Run",
                 "podgroup.(*pgcontroller).createNormalPodPGIfNotExist", "collectives.allreduce", "nodepool.join",
                 "fault.DriverFailure", "v1beta1.DevicePlugin/PreStartContainer", "kubelet.(*Kubelet).rejectPod",
                 "kubelet.(*Kubelet).killPod", "topologyupdater.(*nfdTopologyUpdater).updateNodeResourceTopology",
                 "main.start", "main.startPlugins"}
    for r in (bring_up, sp, volcano):
        for rec in r.trace.records:
            assert rec.function in sc.SOURCES or rec.function in elsewhere, rec.function


# --- device plugin and kubelet ---------------------------------------------------------------------------------
def test_device_plugin_chain_runs_in_upstream_order(bring_up):
    frames = sc.chain(bring_up, ["Node h100-0", "Pod default/train-0"], chains=["device-plugin", "kubelet"])
    assert is_subsequence(["(*nvidiaDevicePlugin).Start", "(*server).Register",
                           "(*nvidiaDevicePlugin).GetDevicePluginOptions", "(*nvidiaDevicePlugin).ListAndWatch",
                           "(*ManagerImpl).genericDeviceUpdateCallback", "(*Kubelet).syncNodeStatus",
                           "(*nvidiaDevicePlugin).GetPreferredAllocation", "(*nvidiaDevicePlugin).Allocate",
                           "(*ManagerImpl).Allocate", "(*Kubelet).canAdmitPod",
                           "(*kubeGenericRuntimeManager).startContainer"], functions(frames))
    rpc = next(f for f in frames if f["function"] == "(*nvidiaDevicePlugin).Allocate")
    assert rpc["repo"] == "NVIDIA/k8s-device-plugin" and rpc["release"] == "v0.20.0"
    assert rpc["caller"] == "pkg/kubelet/cm/devicemanager/manager.go (*ManagerImpl).allocateContainerResources"
    assert v.lane_of(rpc) == "nvidia-device-plugin"


def test_health_check_chain_marks_the_gpu_and_the_kubelet_counts_it():
    """examples/xid-unhealthy.yaml: Xid 13 is skipped, a critical one marks the GPU Unhealthy; ListAndWatch
    resends the list and the kubelet's callback counts one unhealthy device."""
    r = run("examples/xid-unhealthy.yaml")
    node = "t4-0"
    gpus = [f"GPU {d.id}" for d in r.kubelets[node].plugin.devices]
    frames = sc.chain(r, [f"Node {node}", *gpus], chains=["device-plugin"])
    checks = [f for f in frames if f["function"] == "(*nvmlResourceManager).checkHealth"]
    assert checks[0]["result"] == "Skipping non-critical Xid=13"
    critical = next(i for i, f in enumerate(frames) if "XidCriticalError" in f["result"])
    after = frames[critical:]
    update = next(f for f in after if f["function"] == "(*ManagerImpl).genericDeviceUpdateCallback")
    assert "unhealthy=1" in update["detail"] and frames[critical]["file"] == "internal/rm/health.go"


# --- GPU Operator ------------------------------------------------------------------------------------------------
def test_operator_steps_follow_the_operands_and_reconcile_ends_ready():
    """Without the driver fault every state becomes ready in dependency order (driver before toolkit before
    device plugin) and Reconcile reports ready after the last one."""
    r = sc.run_bring_up_without_fault()
    frames = sc.chain(r, ["ClusterPolicy cluster-policy"], chains=["gpu-operator"])
    steps = sc.step_results(r)
    assert sorted(s for _, s, res in steps if res == "ready") == sorted(s for _, s, res in steps if res == "notReady")
    ready = [f["detail"] for f in frames if f["function"] == "(*ClusterPolicyController).step" and f["result"] == "ready"]
    states = [d.split(",")[0].removeprefix("state=") for d in ready]
    assert is_subsequence(["state-driver", "state-container-toolkit", "state-device-plugin"], states)
    last = frames[-1]
    assert last["function"] == "(*ClusterPolicyReconciler).Reconcile" and last["result"] == "ready"
    assert last["file"] == "controllers/clusterpolicy_controller.go"


def test_operator_state_stays_not_ready_while_one_node_cannot_load_the_driver(bring_up):
    frames = sc.chain(bring_up, ["ClusterPolicy cluster-policy", "Node h100-0"], chains=["gpu-operator"])
    assert functions(frames)[0] == "(*ClusterPolicyController).labelGPUNodes"
    driver = [f["result"] for f in frames if f.get("note") == "state-driver"]
    assert driver == [f["result"] for f in frames if "state=state-driver," in f["detail"]]
    assert driver == ["notReady"]                              # h100-1's driver never loads
    assert [f["result"] for f in frames if f["function"] == "(*ClusterPolicyReconciler).Reconcile"] == ["notReady"]
    objs = sc.operand_objects(bring_up, "h100-0", ["nvidia-device-plugin-daemonset"])
    assert len(objs) == 1 and objs[0].startswith("Pod gpu-operator/nvidia-device-plugin-daemonset-")


# --- scheduler-plugins ----------------------------------------------------------------------------------------------
def test_coscheduling_and_nrt_chain_of_the_pod_that_completes_the_quorum(sp):
    frames = sc.chain(sp, ["Pod default/a-1"], chains=["scheduler"])
    plugin_steps = [(f["plugin"], f["point"]) for f in frames if "plugin" in f]
    assert plugin_steps == [("Coscheduling", "PreFilter"), ("NodeResourceTopologyMatch", "Filter"),
                            ("NodeResourceTopologyMatch", "Score"), ("Coscheduling", "Permit")]
    nrt_filter = next(f for f in frames if f.get("point") == "Filter")
    assert nrt_filter["detail"] == "rejected 1 node(s)" and nrt_filter["file"] == "pkg/noderesourcetopology/filter.go"
    assert functions(frames)[-1] == "(*DefaultBinder).Bind"
    permit = next(f for f in frames if f["function"] == "(*frameworkImpl).RunPermitPlugins")
    assert permit["result"] == "Success"


def test_the_first_pod_of_the_gang_waits_at_permit_until_its_sibling_arrives(sp):
    frames = sc.chain(sp, ["Pod default/a-0"], chains=["scheduler"])
    results = [(f["function"], f["result"]) for f in frames if "plugin" not in f]
    assert is_subsequence([("(*frameworkImpl).RunPermitPlugins",
                            'one or more plugins asked to wait and no plugin rejected pod "a-0"'),
                           ("(*frameworkImpl).WaitOnPermit", "Success"), ("(*DefaultBinder).Bind", "Success")], results)
    rejected = sp.scheduler.attempts
    split = [a for a in rejected if a.pod == "default/a-0"][0].statuses
    assert list(split) == ["h100-0"] and split["h100-0"].startswith("NodeResourceTopologyMatch: cannot align")


def test_postfilter_rejects_the_waiting_siblings(sp):
    failing, waiting = sc.gang_failure(sp)
    name = failing.split("/")[1]
    frames = sc.first_attempt(sc.chain(sp, [failing], chains=["scheduler"]), "scheduler.(*Scheduler).schedulePod")
    post = frames[-1]
    assert (post["plugin"], post["point"], post["file"]) == ("Coscheduling", "PostFilter",
                                                              "pkg/coscheduling/coscheduling.go")
    assert f"PodGroup default/gang-b gets rejected due to Pod {name} is unschedulable even after PostFilter" \
        in post["result"]
    assert 2 <= len(waiting) <= 3                   # every sibling assumed before it, waiting at Permit
    for sibling in waiting:
        first = sc.first_attempt(sc.chain(sp, [sibling], chains=["scheduler"]), "runtime.(*frameworkImpl).WaitOnPermit")
        assert [(f["function"], f["result"]) for f in first if "plugin" not in f][-2:] == [
            ("(*frameworkImpl).RunPermitPlugins",
             f'one or more plugins asked to wait and no plugin rejected pod "{sibling.split("/")[1]}"'),
            ("(*frameworkImpl).WaitOnPermit", "optimistic rejection in PostFilter")]
    bound = {p.metadata.name: p.spec.node_name for p in sp.api.list("Pod") if p.metadata.name.startswith("b-")}
    assert len(bound) == 4 and all(bound.values())       # the gang binds after gang-a ends


# --- Volcano -----------------------------------------------------------------------------------------------------
def test_volcano_chain_opens_a_session_runs_actions_and_closes_it(volcano):
    pg = sc.pod_group_of(volcano, "llm-pretrain-worker-0")
    frames = sc.chain(volcano, ["Pod default/llm-pretrain-worker-0", pg], chains=["volcano"])
    fs = [(f["function"], f.get("plugin", ""), f["result"]) for f in frames]
    assert is_subsequence([("OpenSession", "", "Success"), ("OnSessionOpen", "gang", "Success"),
                           ("(*Action).Execute", "", "Inqueue"), ("CloseSession", "", "Success"),
                           ("(*jobcontroller).syncJob", "", "Created"), ("(*Action).Execute", "", "Discard"),
                           ("(*DefaultBinder).Bind", "", "Success"), ("(*Action).Execute", "", "Commit"),
                           ("CloseSession", "", "Success")], fs)
    assert sum(f.get("point") == "OnSessionOpen" for f in frames) == 8    # the plugins once, not every session
    enqueue = next(f for f in frames if f["trace"] == "enqueue.(*Action).Execute")
    assert enqueue["file"] == "pkg/scheduler/actions/enqueue/enqueue.go" and enqueue["release"] == "master"


def test_open_session_records_the_tiers_and_actions(volcano):
    rec = next(r for r in volcano.trace.records if r.function == "framework.OpenSession")
    assert rec.details["actions"] == ["enqueue", "allocate", "backfill"]
    assert rec.details["tiers"][0] == ["priority", "gang", "conformance"]


# --- the trace records added for the chains ----------------------------------------------------------------------
GATED = """apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: a100}
spec: {count: 1, gpu: {model: A100-SXM4-80GB, count: 8}}
---
apiVersion: v1
kind: Pod
metadata: {name: gated, annotations: {gpusim.io/duration: 1h}}
spec:
  schedulingGates: [{name: example.com/quota}]
  containers: [{name: main, image: cuda, resources: {limits: {nvidia.com/gpu: 1}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: free, annotations: {gpusim.io/duration: 1h}}
spec:
  containers: [{name: main, image: cuda, resources: {limits: {nvidia.com/gpu: 1}}}]
"""


def test_pre_enqueue_is_traced_when_it_gates_and_when_it_lets_the_pod_in():
    sim = Simulation(load(texts=[("<text>", GATED)]))
    sim.ctx.env.run(until=5)
    pod = sim.ctx.api.get("Pod", "default", "gated")
    pod.spec.scheduling_gates = []
    sim.ctx.api.update(pod)
    sim.ctx.env.run(until=10)
    pre = [(r.object, r.result, r.details["plugin"]) for r in sim.ctx.trace.records
           if r.function == "queue.(*PriorityQueue).runPreEnqueuePlugins"]
    assert pre == [("Pod default/gated", "waiting for scheduling gates: [example.com/quota]", "SchedulingGates"),
                   ("Pod default/gated", "Success", "")]          # "free" passes the default gate: not traced


def test_default_profile_keeps_its_trace_rows():
    """No Permit plugin, no gate: the default profile's pods get no PreEnqueue, Permit or WaitOnPermit rows (the
    trace chapter 04 reads is unchanged), only details on the rows it had."""
    r = run("examples/lifecycle.yaml")
    fns = {x.function for x in r.trace.records}
    assert not fns & {"queue.(*PriorityQueue).runPreEnqueuePlugins", "runtime.(*frameworkImpl).RunPermitPlugins",
                      "runtime.(*frameworkImpl).WaitOnPermit"}
    pre = next(x for x in r.trace.records if x.function == "runtime.(*frameworkImpl).RunPreFilterPlugins")
    assert "NodeResourcesFit" in pre.details["plugins"]


# --- views ----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("result,expected", [
    ("Success", "ok"), ("2 feasible", "ok"), ("0 feasible", "failed"), ("notReady", "waiting"),
    ('one or more plugins asked to wait and no plugin rejected pod "a-0"', "waiting"),
    ("optimistic rejection in PostFilter", "failed"), ("Discard", "failed"), ("h100-2", "ok"),
    ("0/3 nodes are available: 3 Insufficient nvidia.com/gpu.", "failed"),
])
def test_outcome_of_a_result(result, expected):
    assert v.outcome(result) == expected


def test_views_draw_and_print_every_frame(sp):
    frames = sc.chain(sp, ["Pod default/a-1"], chains=["scheduler", "device-plugin", "kubelet"])
    ax = v.plot_chain(frames, "Scheduler chain of a-1", current=3)
    boxes = [t for t in ax.texts if "\n" in t.get_text()]
    assert len(boxes) == len(frames)
    assert [t.get_text() for t in ax.get_xticklabels()] == v.lanes(frames)
    table = v.format_chain(frames)
    assert len(table.splitlines()) == len(frames) + 1 and "pkg/noderesourcetopology/score.go" in table
    text = v.format_frame(frames[0], 0)
    assert "kubernetes/kubernetes @ release-1.36" in text and "gpusim.scheduler.scheduler:Scheduler.schedule_pod" in text
    md = v.format_sources(sc.source_table(), chains=["scheduler"])
    assert md.count("\n") == sum(r["chain"] == "scheduler" for r in sc.source_table()) + 1
    with pytest.raises(ValueError, match="no frames"):
        v.chain_stepper([])


def test_select_host_records_each_plugins_weighted_score_on_the_chosen_node(sp):
    """Both scoring paths (per node, and over node arrays for the default plugins) record the chosen node's
    weighted score per plugin, equal to the attempt's breakdown and summing to the total."""
    vector = run(text=GATED.replace("count: 1,", "count: 12,").replace("  schedulingGates: [{name: example.com/quota}]\n", ""))
    assert all(callable(a._scores) for a in vector.scheduler.attempts)   # the numpy path, breakdown not built yet
    for r in (sp, vector):
        picks = [x for x in r.trace.records if x.function == "scheduler.selectHost"]
        attempts = [a for a in r.scheduler.attempts if a.node and a.scores]
        assert picks and len(picks) == len(attempts)
        for rec, a in zip(picks, attempts):
            assert rec.result == a.node
            assert rec.details["plugins"] == {pl: v[2] for pl, v in a.scores[a.node].items()}
            assert sum(rec.details["plugins"].values()) == rec.details["score"]
