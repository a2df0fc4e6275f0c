"""Chapter 06 (源码分析): the call chains of the NVIDIA device plugin, the GPU Operator, scheduler-plugins'
Coscheduling and NodeResourceTopologyMatch, and the Volcano scheduler, read from the trace of a real run.

Every trace record names the upstream function it mirrors (:mod:`gpusim.controlplane.trace`). :data:`SOURCES`
maps each of those names to the upstream project, release, file and function (paths checked against the
source trees; see :data:`RELEASES`) and to the gpusim function that records it. :func:`chain` turns the records
of one object into *frames*: one per record, plus one per plugin at the scheduler's extension points (their
names travel in the records' ``plugins`` detail) and per Volcano plugin at ``OpenSession``. Each frame names
its upstream place; the views (:mod:`gpusim.views.sourcechain`) draw them and step through them.

The scenarios are small: :data:`DEVICE_PLUGIN_AND_OPERATOR` is ``examples/node-bring-up.yaml`` (a GPU node
joins, the operator brings up its operands, the plugin registers, a pod is allocated GPUs);
:func:`scheduler_plugins_scenario` builds a run where Coscheduling holds gang-a at Permit until its quorum
and rejects gang-b in PostFilter, while NodeResourceTopologyMatch rejects a node whose free GPUs are split
across NUMA nodes; :data:`VOLCANO` is ``examples/volcano-gang.yaml``.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Optional

import yaml

from ..cluster.simulation import Result, run

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DEVICE_PLUGIN_AND_OPERATOR = EXAMPLES / "node-bring-up.yaml"
VOLCANO = EXAMPLES / "volcano-gang.yaml"

# project → (repository, the release whose files the table names, how it was read)
RELEASES: dict[str, tuple[str, str]] = {
    "kubernetes": ("kubernetes/kubernetes", "release-1.36"),
    "k8s-device-plugin": ("NVIDIA/k8s-device-plugin", "v0.20.0"),
    "gpu-operator": ("NVIDIA/gpu-operator", "v26.3 (versions.mk VERSION v26.3.2)"),
    "scheduler-plugins": ("kubernetes-sigs/scheduler-plugins", "v0.35 (release-1.35)"),
    "volcano": ("volcano-sh/volcano", "master"),
}

K_SCHED = "pkg/scheduler/schedule_one.go"
K_FWK = "pkg/scheduler/framework/runtime/framework.go"
K_DM = "pkg/kubelet/cm/devicemanager/manager.go"
DP_SERVER = "internal/plugin/server.go"


@dataclass(frozen=True)
class Source:
    """Where one traced step lives upstream, and which gpusim function records it."""

    project: str          # a key of RELEASES
    file: str             # path in the upstream repository
    function: str         # the upstream function (Go receiver form)
    gpusim: str           # module:qualname of the gpusim function that records the step
    chain: str            # which of the chapter's chains it belongs to
    caller: str = ""      # for an RPC: the upstream caller ("file function")


# trace function → upstream place. Chains: "device-plugin", "kubelet" (steps of the kubelet any pod goes
# through), "gpu-operator", "scheduler", "volcano".
SOURCES: dict[str, Source] = {
    # --- NVIDIA device plugin and the kubelet device manager --------------------------------------------------
    "plugin.(*nvidiaDevicePlugin).Start": Source(
        "k8s-device-plugin", DP_SERVER, "(*nvidiaDevicePlugin).Start",
        "gpusim.node.deviceplugin:NvidiaDevicePlugin.start", "device-plugin"),
    "plugin.(*nvidiaDevicePlugin).Stop": Source(
        "k8s-device-plugin", DP_SERVER, "(*nvidiaDevicePlugin).Stop",
        "gpusim.node.deviceplugin:NvidiaDevicePlugin.stop", "device-plugin"),
    "devicemanager.(*server).Register": Source(
        "kubernetes", "pkg/kubelet/cm/devicemanager/plugin/v1beta1/server.go", "(*server).Register",
        "gpusim.node.devicemanager:DeviceManager.register", "device-plugin",
        caller=f"{DP_SERVER} (*nvidiaDevicePlugin).Register"),
    "v1beta1.DevicePlugin/GetDevicePluginOptions": Source(
        "k8s-device-plugin", DP_SERVER, "(*nvidiaDevicePlugin).GetDevicePluginOptions",
        "gpusim.node.devicemanager:DeviceManager._connect", "device-plugin",
        caller=f"{K_DM} (*ManagerImpl).PluginConnected"),
    "v1beta1.DevicePlugin/ListAndWatch": Source(
        "k8s-device-plugin", DP_SERVER, "(*nvidiaDevicePlugin).ListAndWatch",
        "gpusim.node.devicemanager:DeviceManager._connect", "device-plugin",
        caller="pkg/kubelet/cm/devicemanager/plugin/v1beta1/client.go (*client).Run"),
    "devicemanager.(*ManagerImpl).genericDeviceUpdateCallback": Source(
        "kubernetes", K_DM, "(*ManagerImpl).genericDeviceUpdateCallback",
        "gpusim.node.devicemanager:DeviceManager.update_devices", "device-plugin"),
    "devicemanager.(*ManagerImpl).markResourceUnhealthy": Source(
        "kubernetes", K_DM, "(*ManagerImpl).markResourceUnhealthy",
        "gpusim.node.devicemanager:DeviceManager.disconnected", "device-plugin"),
    "rm.(*nvmlResourceManager).checkHealth": Source(
        "k8s-device-plugin", "internal/rm/health.go", "(*nvmlResourceManager).checkHealth",
        "gpusim.node.deviceplugin:NvidiaDevicePlugin.xid_event", "device-plugin"),
    "kubelet.(*Kubelet).syncNodeStatus": Source(
        "kubernetes", "pkg/kubelet/kubelet_node_status.go", "(*Kubelet).syncNodeStatus",
        "gpusim.node.kubelet:Kubelet.post_node_status", "kubelet"),
    "v1beta1.DevicePlugin/GetPreferredAllocation": Source(
        "k8s-device-plugin", DP_SERVER, "(*nvidiaDevicePlugin).GetPreferredAllocation",
        "gpusim.node.devicemanager:DeviceManager._devices_to_allocate", "device-plugin",
        caller=f"{K_DM} (*ManagerImpl).callGetPreferredAllocationIfAvailable"),
    "v1beta1.DevicePlugin/Allocate": Source(
        "k8s-device-plugin", DP_SERVER, "(*nvidiaDevicePlugin).Allocate",
        "gpusim.node.devicemanager:DeviceManager.allocate", "device-plugin",
        caller=f"{K_DM} (*ManagerImpl).allocateContainerResources"),
    "devicemanager.(*ManagerImpl).Allocate": Source(
        "kubernetes", K_DM, "(*ManagerImpl).Allocate",
        "gpusim.node.devicemanager:DeviceManager.allocate", "device-plugin"),
    "kubelet.(*Kubelet).canAdmitPod": Source(
        "kubernetes", "pkg/kubelet/kubelet.go", "(*Kubelet).canAdmitPod",
        "gpusim.node.kubelet:Kubelet._admit", "kubelet"),
    "kuberuntime.(*kubeGenericRuntimeManager).startContainer": Source(
        "kubernetes", "pkg/kubelet/kuberuntime/kuberuntime_container.go", "(*kubeGenericRuntimeManager).startContainer",
        "gpusim.node.kubelet:Kubelet._run_containers", "kubelet"),
    "kubelet.(*Kubelet).syncTerminatedPod": Source(
        "kubernetes", "pkg/kubelet/kubelet.go", "(*Kubelet).syncTerminatedPod",
        "gpusim.node.kubelet:Kubelet._container_exited", "kubelet"),
    "devicemanager.(*ManagerImpl).UpdateAllocatedDevices": Source(
        "kubernetes", K_DM, "(*ManagerImpl).UpdateAllocatedDevices",
        "gpusim.node.kubelet:Kubelet._release", "kubelet"),
    # --- GPU Operator ----------------------------------------------------------------------------------------
    "controllers.(*ClusterPolicyController).labelGPUNodes": Source(
        "gpu-operator", "controllers/state_manager.go", "(*ClusterPolicyController).labelGPUNodes",
        "gpusim.operator.clusterpolicy_controller:ClusterPolicyReconciler._reconcile_node", "gpu-operator"),
    "controllers.(*ClusterPolicyController).step": Source(
        "gpu-operator", "controllers/state_manager.go", "(*ClusterPolicyController).step",
        "gpusim.operator.clusterpolicy_controller:ClusterPolicyReconciler._step", "gpu-operator"),
    "controllers.(*ClusterPolicyReconciler).Reconcile": Source(
        "gpu-operator", "controllers/clusterpolicy_controller.go", "(*ClusterPolicyReconciler).Reconcile",
        "gpusim.operator.clusterpolicy_controller:ClusterPolicyReconciler._set_state", "gpu-operator"),
    "daemon.(*DaemonSetsController).syncNodes": Source(
        "kubernetes", "pkg/controller/daemon/daemon_controller.go", "(*DaemonSetsController).syncNodes",
        "gpusim.operator.clusterpolicy_controller:ClusterPolicyReconciler._create", "gpu-operator"),
    # --- kube-scheduler framework (the points scheduler-plugins extend) ---------------------------------------
    "queue.(*PriorityQueue).runPreEnqueuePlugins": Source(
        "kubernetes", "pkg/scheduler/backend/queue/scheduling_queue.go", "(*PriorityQueue).runPreEnqueuePlugins",
        "gpusim.scheduler.scheduler:Scheduler._pre_enqueue", "scheduler"),
    "runtime.(*frameworkImpl).RunPreFilterPlugins": Source(
        "kubernetes", K_FWK, "(*frameworkImpl).RunPreFilterPlugins",
        "gpusim.scheduler.scheduler:Scheduler.schedule_pod", "scheduler"),
    "scheduler.(*Scheduler).findNodesThatFitPod": Source(
        "kubernetes", K_SCHED, "(*Scheduler).findNodesThatFitPod",
        "gpusim.scheduler.scheduler:Scheduler.schedule_pod", "scheduler"),
    "scheduler.selectHost": Source(
        "kubernetes", K_SCHED, "selectHost", "gpusim.scheduler.scheduler:Scheduler.schedule_pod", "scheduler"),
    "scheduler.(*Scheduler).schedulePod": Source(
        "kubernetes", K_SCHED, "(*Scheduler).schedulingCycle",
        "gpusim.scheduler.scheduler:Scheduler.schedule_one", "scheduler"),
    "runtime.(*frameworkImpl).RunPostFilterPlugins": Source(
        "kubernetes", K_FWK, "(*frameworkImpl).RunPostFilterPlugins",
        "gpusim.scheduler.runtime:Framework.run_post_filter", "scheduler"),
    "scheduler.(*Scheduler).assume": Source(
        "kubernetes", K_SCHED, "(*Scheduler).assume", "gpusim.scheduler.scheduler:Scheduler.schedule_one", "scheduler"),
    "runtime.(*frameworkImpl).RunPermitPlugins": Source(
        "kubernetes", K_FWK, "(*frameworkImpl).RunPermitPlugins",
        "gpusim.scheduler.scheduler:Scheduler.schedule_one", "scheduler"),
    "runtime.(*frameworkImpl).WaitOnPermit": Source(
        "kubernetes", K_FWK, "(*frameworkImpl).WaitOnPermit",
        "gpusim.scheduler.scheduler:Scheduler._binding_cycle", "scheduler"),
    "defaultbinder.(*DefaultBinder).Bind": Source(
        "kubernetes", "pkg/scheduler/framework/plugins/defaultbinder/default_binder.go", "(*DefaultBinder).Bind",
        "gpusim.scheduler.scheduler:Scheduler._binding_cycle", "scheduler"),
    # --- Volcano -------------------------------------------------------------------------------------------
    "job.(*jobcontroller).syncJob": Source(
        "volcano", "pkg/controllers/job/job_controller_actions.go", "(*jobcontroller).syncJob",
        "gpusim.volcano.job_controller:JobController._create_pod", "volcano"),
    "job.(*jobcontroller).killJob": Source(
        "volcano", "pkg/controllers/job/job_controller_actions.go", "(*jobcontroller).killJob",
        "gpusim.volcano.job_controller:JobController.kill_job", "volcano"),
    "job.(*jobcontroller).createOrUpdatePodGroup": Source(
        "volcano", "pkg/controllers/job/job_controller_actions.go", "(*jobcontroller).createOrUpdatePodGroup",
        "gpusim.volcano.job_controller:JobController._ensure_pod_group", "volcano"),
    "job.(*jobcontroller).processNextReq": Source(
        "volcano", "pkg/controllers/job/job_controller.go", "(*jobcontroller).processNextReq",
        "gpusim.volcano.job_controller:JobController.handle", "volcano"),
    "framework.OpenSession": Source(
        "volcano", "pkg/scheduler/framework/framework.go", "OpenSession",
        "gpusim.volcano.scheduler:VolcanoScheduler.run_once", "volcano"),
    "enqueue.(*Action).Execute": Source(
        "volcano", "pkg/scheduler/actions/enqueue/enqueue.go", "(*Action).Execute",
        "gpusim.volcano.actions.enqueue:execute", "volcano"),
    "allocate.(*Action).Execute": Source(
        "volcano", "pkg/scheduler/actions/allocate/allocate.go", "(*Action).Execute",
        "gpusim.volcano.actions.allocate:execute", "volcano"),
    "preempt.(*Action).Execute": Source(
        "volcano", "pkg/scheduler/actions/preempt/preempt.go", "(*Action).Execute",
        "gpusim.volcano.actions.preempt:execute", "volcano"),
    "reclaim.(*Action).Execute": Source(
        "volcano", "pkg/scheduler/actions/reclaim/reclaim.go", "(*Action).Execute",
        "gpusim.volcano.actions.reclaim:execute", "volcano"),
    "backfill.(*Action).Execute": Source(
        "volcano", "pkg/scheduler/actions/backfill/backfill.go", "(*Action).Execute",
        "gpusim.volcano.actions.backfill:execute", "volcano"),
    "cache.(*DefaultBinder).Bind": Source(
        "volcano", "pkg/scheduler/cache/cache.go", "(*DefaultBinder).Bind",
        "gpusim.volcano.cache:SchedulerCache.bind", "volcano"),
    "cache.(*SchedulerCache).Evict": Source(
        "volcano", "pkg/scheduler/cache/cache.go", "(*SchedulerCache).Evict",
        "gpusim.volcano.cache:SchedulerCache.evict", "volcano"),
    "cache.(*SchedulerCache).UpdateJobStatus": Source(
        "volcano", "pkg/scheduler/cache/cache.go", "(*SchedulerCache).UpdateJobStatus",
        "gpusim.volcano.cache:SchedulerCache.update_job_status", "volcano"),
    "framework.CloseSession": Source(
        "volcano", "pkg/scheduler/framework/framework.go", "CloseSession",
        "gpusim.volcano.scheduler:VolcanoScheduler.run_once", "volcano"),
}

# steps gpusim records in a module that mirrors another project: why (checked by the tests)
STAND_INS = {
    "daemon.(*DaemonSetsController).syncNodes":
        "gpusim has no DaemonSet controller: the ClusterPolicy reconciler creates each operand pod as its DaemonSet would",
}

# (plugin, extension point) → upstream place, for the plugins the chapter follows (scheduler-plugins v0.35).
# Coscheduling implements QueueSort, PreFilter, PostFilter, Permit and Reserve, not PreEnqueue.
COSCHEDULING = "pkg/coscheduling/coscheduling.go"
NRT = "pkg/noderesourcetopology"
PLUGIN_SOURCES: dict[tuple[str, str], Source] = {
    ("Coscheduling", "PreFilter"): Source("scheduler-plugins", COSCHEDULING, "(*Coscheduling).PreFilter",
                                          "gpusim.scheduler.plugins.coscheduling:Coscheduling.pre_filter", "scheduler"),
    ("Coscheduling", "PostFilter"): Source("scheduler-plugins", COSCHEDULING, "(*Coscheduling).PostFilter",
                                           "gpusim.scheduler.plugins.coscheduling:Coscheduling.post_filter", "scheduler"),
    ("Coscheduling", "Permit"): Source("scheduler-plugins", COSCHEDULING, "(*Coscheduling).Permit",
                                       "gpusim.scheduler.plugins.coscheduling:Coscheduling.permit", "scheduler"),
    ("NodeResourceTopologyMatch", "Filter"): Source(
        "scheduler-plugins", f"{NRT}/filter.go", "(*TopologyMatch).Filter",
        "gpusim.scheduler.plugins.noderesourcetopology:NodeResourceTopologyMatch.filter", "scheduler"),
    ("NodeResourceTopologyMatch", "Score"): Source(
        "scheduler-plugins", f"{NRT}/score.go", "(*TopologyMatch).Score",
        "gpusim.scheduler.plugins.noderesourcetopology:NodeResourceTopologyMatch.score", "scheduler"),
}
# the extension point whose plugins a trace function names in its ``plugins`` detail
POINT_OF = {"runtime.(*frameworkImpl).RunPreFilterPlugins": "PreFilter",
            "scheduler.(*Scheduler).findNodesThatFitPod": "Filter", "scheduler.selectHost": "Score",
            "runtime.(*frameworkImpl).RunPermitPlugins": "Permit"}

# Volcano plugins: each registers its callbacks in OnSessionOpen (pkg/scheduler/plugins/<dir>/<file>.go)
VOLCANO_PLUGIN_FILES = {
    "priority": "pkg/scheduler/plugins/priority/priority.go", "gang": "pkg/scheduler/plugins/gang/gang.go",
    "conformance": "pkg/scheduler/plugins/conformance/conformance.go",
    "overcommit": "pkg/scheduler/plugins/overcommit/overcommit.go", "drf": "pkg/scheduler/plugins/drf/drf.go",
    "predicates": "pkg/scheduler/plugins/predicates/predicates.go",
    "proportion": "pkg/scheduler/plugins/proportion/proportion.go",
    "nodeorder": "pkg/scheduler/plugins/nodeorder/nodeorder.go", "binpack": "pkg/scheduler/plugins/binpack/binpack.go",
    "network-topology-aware": "pkg/scheduler/plugins/network-topology-aware/network_topology_aware.go",
}


# the detail that tells frames of one function apart (the operator's state, the DaemonSet, the container)
NOTE_KEYS = ("state", "daemonset", "container")


def frame(time: float, component: str, src: Source, trace_function: str, obj: str, result: str,
          detail: str = "", **extra: Any) -> dict:
    """One frame: a step of a chain with its upstream place (project, release, file, function)."""
    repo, release = RELEASES[src.project]
    return {"time": time, "component": component, "trace": trace_function, "object": obj, "result": result,
            "project": src.project, "repo": repo, "release": release, "file": src.file,
            "function": src.function, "caller": src.caller, "gpusim": src.gpusim, "chain": src.chain,
            "detail": detail, **extra}


def _plugin_frames(r: Any, point: str) -> list[dict]:
    """Frames of the followed plugins that ran at ``point`` in record ``r``."""
    named = r.details.get("plugins") or ()
    if point == "Filter":
        rejected = r.details.get("rejected_by") or {}
    out = []
    for pl in named:
        src = PLUGIN_SOURCES.get((pl, point))
        if src is None:
            continue
        if point == "Score":
            detail = f"weighted score {named[pl]} on {r.result}"
        elif point == "Filter":
            detail = f"rejected {rejected.get(pl, 0)} node(s)"
        else:
            detail = f"{point} of {pl}"
        out.append(frame(r.time, r.component, src, r.function, r.object, r.result, detail, plugin=pl, point=point))
    return out


def _expand(r: Any, seq: int = 0) -> list[dict]:
    """The frames of one record (``seq``: its index in the trace): the record's own, then those of the plugins
    it names."""
    out = _frames_of(r)
    for f in out:
        f["seq"] = seq
    return out


def _frames_of(r: Any) -> list[dict]:
    src = SOURCES.get(r.function)
    if src is None:
        return []
    detail = ", ".join(f"{k}={v}" for k, v in r.details.items()
                       if k not in ("plugins", "tiers", "rejected_by", "labels", "devices") and v not in ("", [], {}))
    note = next((str(r.details[k]) for k in NOTE_KEYS if r.details.get(k)), "")
    out = [frame(r.time, r.component, src, r.function, r.object, r.result, detail, note=note)]
    point = POINT_OF.get(r.function)
    if point:
        out += _plugin_frames(r, point)
    if r.function == "scheduler.(*Scheduler).schedulePod" and r.details.get("post_filter"):
        pf = SOURCES["runtime.(*frameworkImpl).RunPostFilterPlugins"]
        names = r.details["post_filter"]
        out.append(frame(r.time, r.component, pf, "runtime.(*frameworkImpl).RunPostFilterPlugins", r.object,
                         r.details.get("post_filter_result", ""), "plugins=" + ", ".join(names)))
        if "Coscheduling" in names:
            out.append(frame(r.time, r.component, PLUGIN_SOURCES[("Coscheduling", "PostFilter")],
                             "runtime.(*frameworkImpl).RunPostFilterPlugins", r.object,
                             r.details.get("post_filter_result", ""), "PostFilter of Coscheduling",
                             plugin="Coscheduling", point="PostFilter"))
    if r.function == "framework.OpenSession":
        repo, release = RELEASES["volcano"]
        for tier in r.details.get("tiers", ()):
            for pl in tier:
                path = VOLCANO_PLUGIN_FILES.get(pl)
                if path:
                    out.append(frame(r.time, r.component, Source("volcano", path, "OnSessionOpen",
                                                                 f"gpusim.volcano.plugins.{pl.replace('-', '_')}",
                                                                 "volcano"),
                                     r.function, r.object, "Success", f"plugin {pl} registers its callbacks",
                                     plugin=pl, point="OnSessionOpen"))
    return out


def chain(result: Result, objects: Iterable[str], chains: Optional[Iterable[str]] = None,
          start: Optional[float] = None, end: Optional[float] = None) -> list[dict]:
    """The frames of the records about ``objects`` (``"Pod default/a-1"``, ``"Node h100-0"``, ...), in trace
    order, optionally only of some ``chains`` and in ``[start, end]``. A Volcano session that touched one of
    the objects contributes its OpenSession (with its plugins) and CloseSession frames."""
    objs = set(objects)
    keep = set(chains) if chains is not None else None
    records = result.trace.records
    sessions: set[float] = {r.time for r in records if r.object in objs and r.component == "volcano"}
    out = []
    plugins_shown = False      # a Volcano session's plugins are expanded once: they are the same every session
    for seq, r in enumerate(records):
        if start is not None and r.time < start or end is not None and r.time > end:
            continue
        session_edge = r.function in ("framework.OpenSession", "framework.CloseSession") and r.time in sessions
        if r.object not in objs and not session_edge:
            continue
        frames = _expand(r, seq)
        if r.function == "framework.OpenSession":
            if plugins_shown:
                frames = [f for f in frames if f.get("point") != "OnSessionOpen"]
            plugins_shown = True
        for f in frames:
            if keep is None or f["chain"] in keep:
                out.append(f)
    return out


def pod_group_of(result: Result, pod: str, namespace: str = "default") -> Optional[str]:
    """The trace object of a Volcano pod's PodGroup (``PodGroup <ns>/<name>``), from its annotation."""
    p = result.pod(pod, namespace)
    if p is None:
        return None
    name = p.metadata.annotations.get("scheduling.k8s.io/group-name")
    return f"PodGroup {namespace}/{name}" if name else None


def source_table() -> list[dict]:
    """One row per traced step and per followed plugin point: trace name, chain, upstream place, gpusim function."""
    rows = []
    for name, s in SOURCES.items():
        rows.append({"trace": name, "chain": s.chain, "project": s.project, "release": RELEASES[s.project][1],
                     "file": s.file, "function": s.function, "caller": s.caller, "gpusim": s.gpusim})
    for (pl, point), s in PLUGIN_SOURCES.items():
        rows.append({"trace": f"{pl} {point}", "chain": s.chain, "project": s.project,
                     "release": RELEASES[s.project][1], "file": s.file, "function": s.function, "caller": "",
                     "gpusim": s.gpusim})
    return rows


# --- the scheduler-plugins scenario ---------------------------------------------------------------------------
def _pod(name: str, gpus: int, at: str, duration: str, group: Optional[str] = None,
         node: Optional[str] = None) -> dict:
    meta: dict[str, Any] = {"name": name, "annotations": {"gpusim.io/submit-at": at, "gpusim.io/duration": duration}}
    if group:
        meta["labels"] = {"scheduling.x-k8s.io/pod-group": group}
    spec: dict[str, Any] = {"restartPolicy": "Never", "containers": [
        {"name": "worker", "image": "nvcr.io/nvidia/pytorch:25.01-py3",
         "resources": {"limits": {"nvidia.com/gpu": gpus}}}]}
    if node:
        spec["nodeSelector"] = {"kubernetes.io/hostname": node}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def scheduler_plugins_scenario(seed: int = 7) -> str:
    """Three DGX H100 nodes (4 GPUs per NUMA node, kubelet Topology Manager ``single-numa-node``) and one profile
    with Coscheduling (queueSort too) and NodeResourceTopologyMatch, as upstream's sample configurations enable
    them. At 0 s two 3-GPU pods pinned to h100-0 leave it 1 free GPU on each NUMA node. At 10 s gang-a (minMember
    2, two 2-GPU pods): NodeResourcesFit lets h100-0 through (2 GPUs free) but NodeResourceTopologyMatch's Filter
    rejects it (no single NUMA node has 2); a-0 waits at Permit, a-1 completes the quorum and both bind. At 20 s
    gang-b (minMember 4, four 4-GPU pods) finds room for at most three on the NUMA nodes still whole: those wait
    at Permit, the next fails Filter and Coscheduling's PostFilter rejects its waiting siblings (a quarter
    missing is more than its 10 % gap); gang-b binds once gang-a ends."""
    docs: list[dict] = [
        {"apiVersion": "gpusim.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "source-chain-scheduler-plugins"},
         "spec": {"until": "10m", "seed": seed}},
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [
            {"schedulerName": "default-scheduler", "plugins": {
                "multiPoint": {"enabled": [{"name": "Coscheduling"}, {"name": "NodeResourceTopologyMatch"}]},
                "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]}}}]},
        {"apiVersion": "gpusim.io/v1alpha1", "kind": "NodePool", "metadata": {"name": "h100"},
         "spec": {"count": 3, "gpu": {"model": "H100-SXM5-80GB", "count": 8},
                  "kubelet": {"topologyManagerPolicy": "single-numa-node"}}},
        {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": {"name": "gang-a"},
         "spec": {"minMember": 2, "scheduleTimeoutSeconds": 60}},
        {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": {"name": "gang-b"},
         "spec": {"minMember": 4, "scheduleTimeoutSeconds": 60}},
        _pod("filler-0", 3, "0s", "2m", node="h100-0"), _pod("filler-1", 3, "0s", "2m", node="h100-0"),
        _pod("a-0", 2, "10s", "2m", "gang-a"), _pod("a-1", 2, "10s", "2m", "gang-a"),
    ]
    docs += [_pod(f"b-{i}", 4, "20s", "5m", "gang-b") for i in range(4)]
    return yaml.safe_dump_all(docs, sort_keys=False)


def run_scheduler_plugins(seed: int = 7) -> Result:
    return run(text=scheduler_plugins_scenario(seed))


def run_device_plugin_and_operator() -> Result:
    return run(str(DEVICE_PLUGIN_AND_OPERATOR))


def run_volcano() -> Result:
    return run(str(VOLCANO))


def first_attempt(frames: list[dict], until_trace: str) -> list[dict]:
    """The frames up to and including those of the first record of ``until_trace`` (e.g. the first
    ``schedulePod`` failure, with its PostFilter: one scheduling cycle)."""
    end = next((f["seq"] for f in frames if f["trace"] == until_trace), None)
    return frames if end is None else [f for f in frames if f["seq"] <= end]


def operand_objects(result: Result, node: str, daemonsets: Optional[Iterable[str]] = None) -> list[str]:
    """The trace objects of the operand pods the GPU Operator's DaemonSets created on ``node`` (optionally only
    those of ``daemonsets``), in creation order."""
    want = set(daemonsets) if daemonsets is not None else None
    return [r.object for r in result.trace.records
            if r.function == "daemon.(*DaemonSetsController).syncNodes" and r.result == "Created"
            and r.details.get("node") == node and (want is None or r.details.get("daemonset") in want)]


def run_bring_up_without_fault() -> Result:
    """examples/node-bring-up.yaml without its Fault: both nodes come up and every state of the operator ends
    ready (the contrast to the example, where h100-1's driver cannot load)."""
    from .edits import docs, dump
    text = DEVICE_PLUGIN_AND_OPERATOR.read_text(encoding="utf-8")
    return run(text=dump([d for d in docs(text) if d.get("kind") != "Fault"]))


def step_results(result: Result) -> list[tuple[float, str, str]]:
    """The operator's traced ``step`` outcomes: ``(time, state, ready|notReady)`` in trace order."""
    return [(r.time, r.details["state"], r.result) for r in result.trace.records
            if r.function == "controllers.(*ClusterPolicyController).step"]


def gang_failure(result: Result, prefix: str = "Pod default/b-") -> tuple[str, list[str]]:
    """A gang's first failure in a run: the pod whose scheduling cycle failed (its PostFilter ran) and the
    siblings waiting at Permit that the failure rejected at that instant."""
    fail = next(r for r in result.trace.records if r.function == "scheduler.(*Scheduler).schedulePod"
                and r.object.startswith(prefix))
    waiting = [r.object for r in result.trace.records if r.function == "runtime.(*frameworkImpl).WaitOnPermit"
               and r.time == fail.time and r.result == "optimistic rejection in PostFilter"]
    return fail.object, waiting
