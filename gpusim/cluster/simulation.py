"""The simulation: builds every component from a scenario on one simpy clock and runs it.

Node components bootstrap at t=0 before any workload is submitted (the cluster is up when the
scenario starts): each device plugin registers and the kubelet posts its first node status.
Without ``until`` the run ends when nothing but periodic housekeeping remains to happen.
"""
from __future__ import annotations

import copy
import dataclasses
import gc
import pickle
import random
from dataclasses import dataclass, fields
from typing import Any, Generator, Optional

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
from ..api.topology_node_k8s_io_v1alpha2 import KIND as NRT_KIND
from ..hardware.cluster import ClusterTopology
from ..hardware.fabric import FabricSpec
from ..hardware.mig import Layout
from ..hardware.migparted import default_configs
from ..node.deviceplugin import NvidiaDevicePlugin, gpu_uuids, mig_devices
from ..node.hami import HamiDevicePlugin
from ..node.kubelet import Kubelet
from ..node.migmanager import MigManager
from ..scheduler.scheduler import Scheduler
from .components import COMPONENTS
from .scenario import Scenario, load

DEFAULT_DOWNTIME = {"KubeletRestart": 10.0, "DevicePluginCrash": 10.0}


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
    try:   # a pickle round trip is a deep copy, several times faster than copy.deepcopy for many objects
        out = pickle.loads(pickle.dumps(rest, pickle.HIGHEST_PROTOCOL))
    except (pickle.PicklingError, TypeError, AttributeError):
        out = copy.deepcopy(rest)
    out.nodes = [_copy_node(n) for n in nodes]
    out.sources = sc.sources
    return out


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
        return sorted(self.api.list("Pod"), key=lambda p: (p.metadata.namespace, p.metadata.name))

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


class Simulation:
    def __init__(self, scenario: Scenario, seed: Optional[int] = None, until: Optional[float] = None,
                 registry: Any = None):
        self.scenario = sc = _copy_scenario(scenario)
        spec = sc.simulation.spec
        self.seed = spec.seed if seed is None else seed
        self.until = until if until is not None else (parse_duration(spec.until) if spec.until else None)
        timing = Timing(**{f.name: parse_duration(getattr(spec.timing, f.name)) for f in fields(spec.timing)})
        env = simpy.Environment()
        rng = random.Random(self.seed)
        self.ctx = ctx = Context(env, APIServer(env, rng), EventRecorder(), Trace(), rng, timing)
        classes = {pc.metadata.name: pc for pc in sc.priority_classes}
        ctx.api.admission["Pod"] = lambda pod: admit_pod(pod, classes, SYSTEM_PRIORITY_CLASSES)
        for obj in [*sc.namespaces, *sc.priority_classes, *sc.configmaps, *sc.pdbs, *sc.pod_groups,
                    *sc.objects.get(NRT_KIND, [])]:
            ctx.api.create(obj)
        ctx.topology = ClusterTopology(fabric_spec=sc.fabric_spec or FabricSpec(labels="none"),
                                       fabric_nodes=list(sc.fabric_nodes))
        self.kubelets: dict[str, Kubelet] = {}
        self.mig_managers: list[MigManager] = []
        for node in sc.nodes:
            ctx.api.create(node)
            plugin = None
            name = node.metadata.name
            board = sc.board_graphs[sc.boards[name]] if name in sc.boards else None
            if board is not None:
                ctx.topology.servers[name] = board
            if name in sc.gpus:
                model, count = sc.gpus[name]
                uuids = gpu_uuids(rng, count)
                ctx.topology.uuids[name] = uuids
                if name in sc.hami:
                    plugin = HamiDevicePlugin(ctx, name, model, uuids, sc.hami[name])
                else:
                    plugin = NvidiaDevicePlugin(env, name, model, uuids, ctx.trace,
                        config=sc.plugin_configs.get(name),
                        mig_strategy=sc.mig_strategies.get(name, "none"),
                        mig_devices=mig_devices(rng, sc.mig_layouts.get(name, [])),
                        shared_allocation_policy=sc.shared_devices_allocation_policy, board=board)
            self.kubelets[name] = Kubelet(ctx, name, plugin, board, sc.kubelet_configs.get(name))
            if plugin is not None and sc.cluster_policy is not None and model.mig_capable:
                # the operator deploys mig-manager on nodes labelled nvidia.com/mig.capable=true
                layouts = sc.mig_layouts.get(node.metadata.name) or [Layout.disabled(model)] * count
                self.mig_managers.append(MigManager(
                    ctx, self.kubelets[node.metadata.name], sc.mig_parted_config or default_configs(model),
                    sc.mig_strategies.get(node.metadata.name, "none"),
                    node.metadata.labels.get("nvidia.com/mig.config"), layouts))
        version = tuple(int(x) for x in spec.kubernetes_version.split("."))
        self.scheduler = Scheduler(ctx, sc.scheduler_profiles or None, sc.scheduler_queue or None,
                                   k8s_version=version, registry=registry, config=sc.scheduler_config,
                                   feature_gates=spec.feature_gates)
        self.jobs = JobController(ctx)
        self.node_lifecycle = NodeLifecycleController(ctx)
        self.pod_groups = PodGroupController(ctx) if sc.pod_groups else None
        self.addons: dict[str, Any] = {}
        for c in COMPONENTS:
            installed = c.install(self) if c.install is not None else None
            if installed is not None:
                self.addons[c.name] = installed
        # Bootstrap with zero-latency RPCs: Register, ListAndWatch, first node status — all at t=0.
        for kl in self.kubelets.values():
            kl.channel.latency = 0.0
            kl.start()
        while env.peek() == 0:
            env.step()
        for kl in self.kubelets.values():
            kl.post_node_status()
            kl.channel.latency = timing.grpc_latency
        while env.peek() == 0:   # the scheduler's informers see every node before workloads arrive
            env.step()
        for obj in [*sc.pods, *sc.jobs]:
            env.process(self.submit(obj))
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

    def _fault(self, fault: Any) -> Generator:
        s, ctx = fault.spec, self.ctx
        yield ctx.env.timeout(parse_duration(s.at))
        kl = self.kubelets[s.node]
        downtime = parse_duration(s.downtime) if s.downtime else DEFAULT_DOWNTIME.get(s.type)
        ctx.trace.add(ctx.now, "gpusim", f"fault.{s.type}", f"Node {s.node}", "Injected",
                      **({"gpu": s.gpu, "xid": s.xid} if s.type == "XidError" else {"downtime": downtime}))
        if kl.node_down:
            return
        if s.type == "KubeletRestart":
            kl.stop("stopped (KubeletRestart)")
            yield ctx.env.timeout(downtime)
            kl.start()
        elif s.type == "DevicePluginCrash":
            yield from kl.restart_plugin(downtime)
        elif s.type == "XidError":
            if kl.plugin is not None:
                kl.plugin.xid_event(s.gpu, s.xid)
        elif s.type == "NodeDown":
            kl.power_off()
            self.node_lifecycle.node_stopped_posting(s.node)

    def run(self) -> Result:
        """Run to ``until`` or to quiescence. The cyclic garbage collector is paused meanwhile: a run
        allocates millions of short-lived objects and generation scans cost more than they free."""
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            return self._run()
        finally:
            if gc_was_enabled:
                gc.enable()

    def _run(self) -> Result:
        env, ctx = self.ctx.env, self.ctx
        if self.until is not None:
            env.run(until=self.until)
        else:
            # Stop when only daemon timers (periodic housekeeping) remain; simpy keeps its
            # schedule in Environment._queue.
            while env._queue and len(env._queue) > ctx.daemon_pending[0]:
                env.step()
        return Result(self.scenario, ctx, self.scheduler, self.kubelets, env.now, self.seed, self.addons)


def run(*paths: str, seed: Optional[int] = None, until: Optional[str | float] = None,
        text: Optional[str] = None) -> Result:
    """Load and run a scenario from files (and/or YAML ``text``)."""
    sc = load(paths, [("<text>", text)] if text else [])
    u = parse_duration(until) if isinstance(until, str) else until
    return Simulation(sc, seed=seed, until=u).run()
