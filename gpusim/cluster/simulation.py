"""The simulation: builds every component from a scenario on one simpy clock and runs it.

Node components bootstrap at t=0 before any workload is submitted (the cluster is up when the
scenario starts): each device plugin registers and the kubelet posts its first node status.
Without ``until`` the run ends when nothing but periodic housekeeping remains to happen.
"""
from __future__ import annotations

import contextlib
import copy
import dataclasses
import gc
import math
import pickle
import random
import warnings
from dataclasses import dataclass, fields
from typing import Any, Generator, Iterator, Optional

import simpy

from ..api.core_v1 import Node, NodeSpec, NodeStatus
from ..api.duration import parse_duration
from ..api.meta import ObjectMeta
from ..api.scheduling_v1 import SYSTEM_PRIORITY_CLASSES
from ..api.validation import ANNOTATION_SUBMIT_AT
from ..controllers.job import JobController
from ..controllers.nodelifecycle import NodeLifecycleController
from ..controllers.podgroup import PodGroupController
from ..controlplane.admission import admit_pod
from ..controlplane.apiserver import APIServer
from ..controlplane.context import Context, Timing
from ..controlplane.events import EventRecorder
from ..controlplane.trace import Trace
from ..api.gpusim_v1alpha1 import NVLINK_XID, effective_feature_gates
from ..api.nvidia_operands import DEPLOY_PREFIX, NFD_PCI_LABELS, is_operand_pod
from ..api.resource_nvidia_com_v1beta1 import DRIVER_NAMESPACE
from ..hardware.topology import CLIQUE_LABEL
from ..api.nvidia_v1 import DEFAULT_DRIVER_VERSION, driver_version, section_enabled
from ..api.topology_node_k8s_io_v1alpha2 import KIND as NRT_KIND
from ..hardware import xid as xids
from ..hardware.cluster import ClusterTopology
from ..hardware.fabric import FabricSpec
from ..hardware.mig import Layout, full_gpu_labels
from ..hardware.migparted import default_configs
from ..node.deviceplugin import NvidiaDevicePlugin, gpu_uuids, mig_devices
from ..node.hami import HamiDevicePlugin
from ..node import dra
from ..node import computedomain as cdplugin
from ..node.kubelet import Kubelet
from ..node.labels import sharing_labels
from ..node.migmanager import MigManager
from ..node.operands import OperandHost
from ..scheduler.scheduler import Scheduler
from .components import COMPONENTS
from .scenario import Scenario, load

DRIVER_DEPLOY_LABEL = DEPLOY_PREFIX + "driver"
DEFAULT_DOWNTIME = {"KubeletRestart": 10.0, "DevicePluginCrash": 10.0}
# A run without spec.until ends when nothing but housekeeping is left, or at this horizon, whichever comes
# first: some scenarios never settle (a Workload that waitForPodsReady evicts and requeues for ever, a Job with
# two billion completions), and a run must end.
DEFAULT_HORIZON = 30 * 24 * 3600.0
HORIZON_WARNING = ("the run was stopped at 720h (30 days of simulated time), gpusim's limit for a scenario "
                   "without Simulation spec.until that never settles; set spec.until (or --until) to choose")
# well-known labels a node has when it registers, before NFD or GFD label it
REGISTRATION_LABELS = ("kubernetes.io/hostname", "kubernetes.io/os", "kubernetes.io/arch", "gpusim.io/node-pool")


def _copy_node(n: Node) -> Node:
    """A fresh Node for this run: what the simulation mutates (labels, taints, status) is copied."""
    return Node(n.api_version, n.kind,
                ObjectMeta(name=n.metadata.name, labels=dict(n.metadata.labels),
                           annotations=dict(n.metadata.annotations)),
                NodeSpec(unschedulable=n.spec.unschedulable, taints=[copy.copy(t) for t in n.spec.taints]),
                NodeStatus(capacity=dict(n.status.capacity), allocatable=dict(n.status.allocatable)))


def _copy_scenario(sc: Scenario) -> Scenario:
    """Each run mutates its objects, so it gets its own; nodes (often thousands) are copied cheaply."""
    nodes = sc.nodes
    rest = dataclasses.replace(sc, nodes=[], sources={})
    # The cyclic garbage collector is paused meanwhile, as in run(): the copy allocates one object per API
    # object field and nothing in it is garbage, so generation scans (which grow with the heap) cost three
    # quarters of the copy's time for tens of thousands of objects.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        try:   # a pickle round trip is a deep copy, several times faster than copy.deepcopy for many objects
            out = pickle.loads(pickle.dumps(rest, pickle.HIGHEST_PROTOCOL))
        except (pickle.PicklingError, TypeError, AttributeError):
            out = copy.deepcopy(rest)
        out.nodes = [_copy_node(n) for n in nodes]
        # The copy lives as long as the run: it goes straight to the oldest generation (freeze, then unfreeze),
        # where the collector would move it after scanning it once in each younger one; counted as new there,
        # it would also set off a full collection of the whole heap as soon as the collector runs again.
        gc.freeze()
        gc.unfreeze()
    finally:
        if gc_was_enabled:
            gc.enable()
    out.sources = sc.sources
    return out


def is_system_pod(pod: Any) -> bool:
    return is_operand_pod(pod) or pod.metadata.namespace == DRIVER_NAMESPACE


@dataclass
class Result:
    """What a run leaves behind; views and the CLI read it."""

    scenario: Scenario
    ctx: Context
    scheduler: Scheduler
    kubelets: dict[str, Kubelet]
    end: float
    seed: int = 0
    addons: dict = dataclasses.field(default_factory=dict)   # component name → installed add-on (components.py)
    stopped_at_horizon: bool = False   # the run never settled and was cut at DEFAULT_HORIZON

    @property
    def api(self) -> APIServer:
        return self.ctx.api

    @property
    def events(self):
        return self.ctx.recorder

    @property
    def trace(self) -> Trace:
        return self.ctx.trace

    def pods(self) -> list:
        """The workload pods (every pod but the GPU Operator's operand pods and the pods of NVIDIA's DRA driver in its
        namespace, e.g. the IMEX daemons of ComputeDomains, which ``operand_pods`` gives)."""
        return sorted(self.api.list("Pod", lambda p: not is_system_pod(p)),
                      key=lambda p: (p.metadata.namespace, p.metadata.name))

    def operand_pods(self) -> list:
        """The pods of the GPU Operator's DaemonSets in namespace gpu-operator (``kubectl get pods -n gpu-operator``)
        and of NVIDIA's DRA driver in nvidia-dra-driver-gpu."""
        return sorted(self.api.list("Pod", is_system_pod), key=lambda p: (p.metadata.namespace, p.metadata.name))

    @property
    def operator(self) -> Any:
        """The GPU Operator's ClusterPolicy reconciler (gpusim.operator), or None without a ClusterPolicy."""
        return self.addons.get("gpu-operator")

    def pod(self, name: str, namespace: str = "default"):
        return self.api.get("Pod", namespace, name)

    def nodes(self) -> list:
        return sorted(self.api.list("Node"), key=lambda n: n.metadata.name)

    def gpu_memory(self, node: str) -> Any:
        """The GPU memory record of ``node`` (gpusim.node.sharing.GPUMemory: per-GPU usage history), or None."""
        kl = self.kubelets.get(node)
        return kl.gpu_memory if kl is not None else None

    def jobs(self) -> list:
        return sorted(self.api.list("Job"), key=lambda j: (j.metadata.namespace, j.metadata.name))


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """The cyclic garbage collector paused (and restored after): building and running a simulation allocate
    millions of long- and short-lived objects, none of them in cycles that matter until the run ends, and
    generation scans (which grow with the heap) cost more than they free. What survives goes straight to the
    oldest generation (freeze, then unfreeze) before the collector runs again: left in the youngest, all of it
    would be scanned by the first collection after the run (a second for a 15,000-Job run), and its garbage
    cycles wait for the next full collection instead."""
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc_was_enabled:
            gc.freeze()
            gc.unfreeze()
            gc.enable()


class Simulation:
    def __init__(self, scenario: Scenario, seed: Optional[int] = None, until: Optional[float] = None,
                 registry: Any = None):
        with _gc_paused():
            self._init(scenario, seed, until, registry)

    def _init(self, scenario: Scenario, seed: Optional[int], until: Optional[float], registry: Any) -> None:
        self.scenario = sc = _copy_scenario(scenario)
        spec = sc.simulation.spec
        self.seed = spec.seed if seed is None else seed
        self.until = until if until is not None else (parse_duration(spec.until) if spec.until else None)
        self.stopped_at_horizon = False
        timing = Timing(**{f.name: parse_duration(getattr(spec.timing, f.name)) for f in fields(spec.timing)})
        env = simpy.Environment()
        rng = random.Random(self.seed)
        self.ctx = ctx = Context(env, APIServer(env, rng), EventRecorder(), Trace(), rng, timing)
        ctx.feature_gates = effective_feature_gates(spec)
        classes = {pc.metadata.name: pc for pc in sc.priority_classes}
        ctx.api.admission["Pod"] = lambda pod: admit_pod(pod, classes, SYSTEM_PRIORITY_CLASSES)
        for obj in [*sc.namespaces, *sc.priority_classes, *sc.configmaps, *sc.pdbs, *sc.pod_groups,
                    *sc.objects.get(NRT_KIND, [])]:
            ctx.api.create(obj)
        ctx.topology = ClusterTopology(fabric_spec=sc.fabric_spec or FabricSpec(labels="none"),
                                       fabric_nodes=list(sc.fabric_nodes))
        self.kubelets: dict[str, Kubelet] = {}
        self.mig_managers: list[MigManager] = []
        self.mig_manager_of: dict[str, MigManager] = {}
        self._mig_failures: dict[str, int] = {}       # MigConfigFailures waiting for a mig-manager still to start
        self._later: dict[str, Node] = {}             # NodePool joinAt nodes, created at their time
        cp = sc.cluster_policy
        for node in sc.nodes:
            name = node.metadata.name
            joins = name in sc.join_at
            managed = cp is not None and name in sc.gpus     # the GPU Operator brings this node's GPUs up
            if managed:
                node.metadata.labels[NFD_PCI_LABELS[0]] = "true"   # NFD (deployed with the operator) found the GPU
            if not joins:
                ctx.api.create(node)
            plugin = None
            bare = joins and managed     # joins with the operator: no MIG layout, no GFD labels yet
            board = sc.board_graphs[sc.boards[name]] if name in sc.boards else None
            if board is not None:
                ctx.topology.servers[name] = board
            if name in sc.gpus:
                model, count = sc.gpus[name]
                uuids = gpu_uuids(rng, count)
                ctx.topology.uuids[name] = uuids
                if name in sc.dra_nodes:
                    pass   # NVIDIA's DRA kubelet plugin serves the GPUs instead of the device plugin (below)
                elif name in sc.hami:
                    plugin = HamiDevicePlugin(ctx, name, model, uuids, sc.hami[name])
                else:
                    plugin = NvidiaDevicePlugin(env, name, model, uuids, ctx.trace,
                        config=sc.plugin_configs.get(name),
                        mig_strategy=sc.mig_strategies.get(name, "none"),
                        mig_devices=[] if bare else mig_devices(rng, sc.mig_layouts.get(name, [])),
                        shared_allocation_policy=sc.shared_devices_allocation_policy, board=board)
            kl = self.kubelets[name] = Kubelet(ctx, name, plugin, board, sc.kubelet_configs.get(name))
            if name in sc.dra_nodes:
                version = driver_version(cp.spec) if cp is not None else DEFAULT_DRIVER_VERSION
                kl.dra_plugins[dra.DRIVER_NAME] = dra.GpuKubeletPlugin(name, model, uuids, version)
            clique = node.metadata.labels.get(CLIQUE_LABEL) if name in sc.gpus else None
            if clique and (name in sc.dra_nodes or sc.objects.get("ComputeDomain")):
                # NVIDIA's DRA driver's compute-domain kubelet plugin on multi-node NVLink trays
                # (node/computedomain.py): on DRA nodes, and on device-plugin nodes when the scenario uses
                # ComputeDomains (the driver installed with resources.gpus.enabled=false)
                kl.dra_plugins[cdplugin.DRIVER_NAME] = cdplugin.ComputeDomainKubeletPlugin(ctx.api, name, clique)
            if joins:
                self._later[name] = node
            if managed:
                gfd = None
                if bare:
                    gfd = self._gfd_labels(node, model, count)
                    for k in gfd:
                        node.metadata.labels.pop(k, None)
                    node.metadata.labels.pop("nvidia.com/mig.config.state", None)
                # the driver DaemonSet selects nvidia.com/gpu.deploy.driver=true (labelGPUNodes keeps a value set
                # beforehand): with the driver section off, or a node labelled otherwise, the host's own driver serves
                host_driver = not section_enabled(cp.spec, "driver", True) or \
                    node.metadata.labels.get(DRIVER_DEPLOY_LABEL, "true") != "true"
                kl.operands = OperandHost(kl, up=not joins, host_driver=host_driver, gfd_labels=gfd)
            if plugin is not None and cp is not None and model.mig_capable \
                    and section_enabled(cp.spec, "mig_manager", True):
                # the operator deploys mig-manager on nodes labelled nvidia.com/mig.capable=true
                if bare:
                    kl.operands.mig_manager_factory = lambda kl=kl, model=model, count=count: self._mig_manager(
                        kl, model, None, [Layout.disabled(model)] * count)
                else:
                    layouts = sc.mig_layouts.get(name) or [Layout.disabled(model)] * count
                    self._mig_manager(kl, model, node.metadata.labels.get("nvidia.com/mig.config"), layouts)
        # the DeviceClasses the DRA driver's Helm chart installs (for its GPUs, for its ComputeDomains), unless the
        # scenario wrote them
        written = {c.metadata.name for c in sc.objects.get("DeviceClass", [])}
        device_classes = [dra.device_class(n) for n in dra.DEVICE_CLASSES] if sc.dra_nodes else []
        if any(cdplugin.DRIVER_NAME in kl.dra_plugins for kl in self.kubelets.values()):
            device_classes += [cdplugin.device_class(n) for n in cdplugin.DEVICE_CLASSES]
        for dc in device_classes:
            if dc.metadata.name not in written:
                ctx.api.create(dc)
        version = tuple(int(x) for x in spec.kubernetes_version.split("."))
        self.scheduler = Scheduler(ctx, sc.scheduler_profiles or None, sc.scheduler_queue or None,
                                   k8s_version=version, registry=registry, config=sc.scheduler_config,
                                   feature_gates=ctx.feature_gates)
        self.jobs = JobController(ctx)
        self.node_lifecycle = NodeLifecycleController(ctx)
        self.pod_groups = PodGroupController(ctx) if sc.pod_groups else None
        self.addons: dict[str, Any] = {}
        for c in COMPONENTS:
            installed = c.install(self) if c.install is not None else None
            if installed is not None:
                self.addons[c.name] = installed
        operator = self.addons.get("gpu-operator")
        if operator is not None:   # nodes present at t=0 come up with their operands already running
            for pod in operator.bootstrap():
                self.kubelets[pod.spec.node_name].adopt_operand_pod(pod)
        # Bootstrap with zero-latency RPCs: Register, ListAndWatch, first node status — all at t=0.
        present = [kl for name, kl in self.kubelets.items() if name not in self._later]
        for kl in present:
            kl.channel.latency = 0.0
            kl.start()
        while env.peek() == 0:
            env.step()
        for kl in present:
            kl.post_node_status()
            kl.channel.latency = timing.grpc_latency
        while env.peek() == 0:   # the scheduler's informers see every node before workloads arrive
            env.step()
        for obj in [*sc.pods, *sc.jobs]:
            env.process(self.submit(obj))
        for name in sorted(self._later, key=lambda n: (sc.join_at[n], n)):
            env.process(self._join(name))
        for fault in sc.faults:
            env.process(self._fault(fault))
        for action in sc.actions:
            env.process(self._action(action))

    def submit(self, obj: Any) -> Generator:
        """Create ``obj`` at its ``gpusim.io/submit-at`` time (a process on the clock)."""
        at = parse_duration(obj.metadata.annotations.get(ANNOTATION_SUBMIT_AT, "0s"))
        if at:
            yield self.ctx.env.timeout(at)
        self.ctx.api.create(obj)

    def _action(self, action: Any) -> Generator:
        """``kubectl label node`` / ``kubectl cordon`` / ``uncordon`` at ``spec.at``."""
        s, ctx = action.spec, self.ctx
        yield ctx.env.timeout(parse_duration(s.at))
        node = ctx.api.get("Node", "", s.node)
        if s.type == "LabelNode":
            for k, v in s.labels.items():
                if v is None:
                    node.metadata.labels.pop(k, None)
                else:
                    node.metadata.labels[k] = v
        else:
            node.spec.unschedulable = s.type == "CordonNode"
        ctx.trace.add(ctx.now, "kubectl", f"action.{s.type}", f"Node {s.node}", "Success",
                      **({"labels": dict(s.labels)} if s.labels else {}))
        ctx.api.update(node)

    def _mig_manager(self, kl: Kubelet, model: Any, applied: Any, layouts: list) -> MigManager:
        sc = self.scenario
        mm = MigManager(self.ctx, kl, sc.mig_parted_config or default_configs(model),
                        sc.mig_strategies.get(kl.node_name, "none"), applied, layouts)
        mm.failures_pending = self._mig_failures.pop(kl.node_name, 0)
        self.mig_managers.append(mm)
        self.mig_manager_of[kl.node_name] = mm
        return mm

    def _gfd_labels(self, node: Node, model: Any, count: int) -> dict[str, str]:
        """What GFD writes on a node that joined bare: the whole-GPU labels and the sharing config's."""
        labels = full_gpu_labels(model, count)
        cfg = self.scenario.plugin_configs.get(node.metadata.name)
        if cfg is not None and cfg.strategy != "none":
            labels.update(sharing_labels(model, cfg))
        return labels

    def _join(self, name: str) -> Generator:
        """A NodePool's ``joinAt``: the node registers (as a cluster autoscaler's new node does) and its kubelet
        starts; with a ClusterPolicy the operator then brings its GPUs up."""
        ctx = self.ctx
        yield ctx.env.timeout(self.scenario.join_at[name])
        node = self._later.pop(name)
        node.metadata.creation_timestamp = None
        ctx.api.create(node)
        ctx.trace.add(ctx.now, "gpusim", "nodepool.join", f"Node {name}", "Registered")
        self.kubelets[name].start()

    def _joined(self, name: str) -> bool:
        return name not in self._later

    def _fault(self, fault: Any) -> Generator:
        s, ctx = fault.spec, self.ctx
        yield ctx.env.timeout(parse_duration(s.at))
        kl = self.kubelets[s.node]
        host = kl.operands
        downtime = parse_duration(s.downtime) if s.downtime else DEFAULT_DOWNTIME.get(s.type)
        ctx.trace.add(ctx.now, "gpusim", f"fault.{s.type}", f"Node {s.node}", "Injected",
                      **({"gpu": s.gpu, "xid": s.xid} if s.type == "XidError" else
                         {"gpu": s.gpu, "xid": NVLINK_XID} if s.type == "NVLinkError" else {"downtime": downtime}))
        if kl.node_down:
            return
        end = ctx.now + downtime if downtime else math.inf
        if s.type in ("DriverFailure", "ToolkitFailure", "RuntimeClassMissing") or (
                s.type == "DevicePluginCrash" and host is not None and not host.plugin_container_running()):
            yield from self._operand_fault(s.type, kl, end)
            return
        if s.type == "MigConfigFailure":
            mm = self.mig_manager_of.get(s.node)
            if mm is None:
                self._mig_failures[s.node] = self._mig_failures.get(s.node, 0) + 1
            else:
                mm.failures_pending += 1
            return
        if s.type in ("XidError", "NVLinkError"):
            xid = s.xid if s.type == "XidError" else NVLINK_XID
            ctx.trace.add(ctx.now, f"kernel/{s.node}", "dmesg", f"GPU {s.gpu}", xids.kernel_log(xid, s.gpu))
            if kl.plugin is not None and not kl.plugin.running and host is not None:
                host.pending_xids.append((s.gpu, xid))   # the plugin's health check sees it when it starts
            elif kl.plugin is not None:
                kl.plugin.xid_event(s.gpu, xid)
            return
        while not self._joined(s.node):   # kubelet and node faults before the node exists hit it once it joins
            yield ctx.env.timeout(self.scenario.join_at[s.node] - ctx.now)
        if s.type == "KubeletRestart":
            kl.stop("stopped (KubeletRestart)")
            yield ctx.env.timeout(downtime)
            kl.start()
        elif s.type == "DevicePluginCrash":
            yield from kl.restart_plugin(downtime)
        elif s.type == "NodeDown":
            kl.power_off()
            self.node_lifecycle.node_stopped_posting(s.node)
            if s.downtime:
                yield ctx.env.timeout(downtime)
                self.node_lifecycle.node_resumed_posting(s.node)
                kl.power_on()

    def _operand_fault(self, kind: str, kl: Kubelet, end: float) -> Generator:
        """A fault of an operand on [now, end): it hits a running node at once, a bring-up when it comes."""
        ctx, host = self.ctx, kl.operands
        if host is None:   # no operator: only the runtime handler can go missing
            if kind == "RuntimeClassMissing":
                kl.runtime.missing_handlers.add("nvidia")
                if end != math.inf:
                    yield ctx.env.timeout(end - ctx.now)
                    kl.runtime.missing_handlers.discard("nvidia")
            elif kind == "DevicePluginCrash":
                yield from kl.restart_plugin(end - ctx.now)
            return
        if kind == "RuntimeClassMissing":
            host.runtime_handler_missing(end)
        else:
            host.add_failure(kind, ctx.now, end)
            up = self._joined(kl.node_name)
            if kind == "DriverFailure" and up and host.driver_loaded:
                host.driver_failed()
            elif kind == "ToolkitFailure" and up and "nvidia-cdi" not in kl.runtime.missing_handlers:
                host.toolkit_failed()
        if end != math.inf:
            yield ctx.env.timeout(end - ctx.now)
            if kind == "RuntimeClassMissing":
                host.runtime_handler_restored()
            host.kick()

    def run(self) -> Result:
        """Run to ``until`` or to quiescence. The cyclic garbage collector is paused meanwhile: a run
        allocates millions of short-lived objects and generation scans cost more than they free."""
        with _gc_paused():
            return self._run()

    def _run(self) -> Result:
        env, ctx = self.ctx.env, self.ctx
        if self.until is not None:
            env.run(until=self.until)
        else:
            # Stop when only daemon timers (periodic housekeeping) remain; simpy keeps its
            # schedule in Environment._queue.
            queue, daemon_pending, step = env._queue, ctx.daemon_pending, env.step
            while queue and len(queue) > daemon_pending[0]:
                if queue[0][0] > DEFAULT_HORIZON:     # env.peek(), inlined: this loop runs once per event
                    self.stopped_at_horizon = True
                    if env.now < DEFAULT_HORIZON:
                        env.run(until=DEFAULT_HORIZON)
                    warnings.warn(HORIZON_WARNING, stacklevel=3)
                    break
                step()
        return Result(self.scenario, ctx, self.scheduler, self.kubelets, env.now, self.seed, self.addons,
                      self.stopped_at_horizon)


def run(*paths: str, seed: Optional[int] = None, until: Optional[str | float] = None,
        text: Optional[str] = None) -> Result:
    """Load and run a scenario from files (and/or YAML ``text``)."""
    sc = load(paths, [("<text>", text)] if text else [])
    u = parse_duration(until) if isinstance(until, str) else until
    return Simulation(sc, seed=seed, until=u).run()
