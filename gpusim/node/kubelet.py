"""The kubelet of one node (mirrors kubernetes pkg/kubelet: kubelet.go HandlePodAdditions and
canAdmitPod, lifecycle/predicate.go, status manager, nodestatus setters, kuberuntime events).

Admission runs the handlers in upstream's order — allocate-resources (the Topology Manager's scope
``Admit``: per init container, then per app container, the hint providers' hints are merged by the policy
and, if the policy admits, the device manager ``Allocate``s with the chosen hint; policy ``none`` allocates
straight away, pkg/kubelet/cm/topologymanager scope*.go) then the predicate handler
(``UpdatePluginResources`` and GeneralPredicates). A rejected pod ends ``Failed`` with the reason and
``Pod was rejected: `` message (``TopologyAffinityError`` "Resources cannot be allocated with Topology
locality" when the policy cannot align it). Node status reaches the apiserver on the status period, so the
scheduler may act on stale allocatable, as in a real cluster.

The only hint provider is the device manager (gpusim.node.devicemanager_affinity): the CPU and memory
managers run their ``none`` policies, which give no hints.
"""
from __future__ import annotations

import math
from typing import Any, Generator, Optional

import simpy

from ..api.core_v1 import (ContainerState, ContainerStateRunning, ContainerStateTerminated,
                           ContainerStateWaiting, ContainerStatus, NodeCondition, Pod)
from ..api.duration import parse_duration
from ..api.gpusim_v1alpha1 import gate_default
from ..api.quantity import parse_quantity
from ..api.nvidia_operands import MSG_NO_RUNTIME, is_operand_pod
from ..api.v1helper import RESOURCE_DEVICE_CLASS_PREFIX, is_dra_extended_resource_name, is_extended_resource_name
from ..componenthelpers.nodeaffinity import node_matches_pod
from .computedomain import PrepareError
from ..componenthelpers.podutil import set_condition
from ..componenthelpers.resource import container_requests, pod_request_units, to_units
from ..api.validation import ANNOTATION_DURATION, ANNOTATION_EXIT_CODE
from ..controlplane.apiserver import DELETED
from ..controlplane.context import Context
from ..controlplane.events import NORMAL, WARNING
from ..hardware import topology as hwtopology
from . import checkpoint, topologymanager
from .deviceplugin import NvidiaDevicePlugin, mig_devices
from .devicemanager import AllocateError, DeviceManager
from .devicemanager_affinity import DeviceManagerHintProvider, DeviceState
from .grpc import Channel, RpcError
from .runtime import ContainerRecord, Runtime
from .sharing import OOM_EXIT_CODE, GPUMemory
from ..workloads.training import coordinator, is_training

# kubelet/events/event.go and kuberuntime messages
PULLED, CREATED, STARTED = "Pulled", "Created", "Started"
# pkg/kubelet/cm/admission/errors.go ErrorReasonUnexpected
UNEXPECTED_ADMISSION_ERROR = "UnexpectedAdmissionError"
# pkg/kubelet/container/helpers.go: back-off for restarting containers
CRASHLOOP_INITIAL, CRASHLOOP_MAX = 10.0, 300.0
# kubelet/events/event.go BackOffStartContainer; kuberuntime doBackOff's message
BACKOFF = "BackOff"
SANDBOX_RETRY_SECONDS = 10.0   # gpusim's pace for the pod worker's retries of a failed sandbox
_DEFAULT_PODS = 110


class Kubelet:
    def __init__(self, ctx: Context, node_name: str, plugin: Optional[NvidiaDevicePlugin], board=None,
                 config: Optional[dict] = None):
        """``board``: the node's server graph (its NUMA nodes and CPUs; None: one NUMA node); ``config``: the
        KubeletConfiguration topology fields (``topologyManagerPolicy``, ``topologyManagerScope``,
        ``topologyManagerPolicyOptions``; default: policy ``none``)."""
        self.ctx, self.node_name, self.plugin = ctx, node_name, plugin
        self.config = dict(config or {})
        self.numa_nodes = hwtopology.numa_nodes(board) if board is not None else [0]
        self.numa_distances = hwtopology.numa_distances(board) if board is not None else {0: [10]}
        self.numa_cpu_counts = hwtopology.numa_cpu_counts(board) if board is not None else {}
        self.topology_manager: Optional[topologymanager.Manager] = None
        self.state_listeners: list = []      # called when the kubelet's state files change (checkpoint)
        self.component = f"kubelet/{node_name}"
        self._alloc_parsed: tuple = (None, {})   # ((node id, resourceVersion), parsed status.allocatable)
        self.source = "kubelet"
        self.channel = Channel(ctx.env, ctx.timing.grpc_latency, ctx.trace)
        self.disk: dict = {}                 # survives kubelet restarts (checkpoint lives here)
        self.runtime = Runtime(ctx.env, ctx.daemon_pending)      # survives kubelet restarts (containerd)
        # device memory of the GPUs (node/sharing.py): follows the containers, not the kubelet
        self.gpu_memory: Optional[GPUMemory] = None
        if plugin is not None:
            self.gpu_memory = mem = GPUMemory(ctx, node_name, plugin, self._cuda_oom)
            self.runtime.on_stop.append(lambda rec: mem.container_stopped(rec.pod_uid, rec.name))
        self.up = False
        self.node_down = False
        self.started_at = 0.0
        self.dm: Optional[DeviceManager] = None
        # DRA kubelet plugins by driver name (node/dra.py), and what the DRA manager prepared per pod:
        # pod uid → claim uid → devices; container CDI device ids per pod (cm/dra manager.go)
        self.dra_plugins: dict[str, Any] = {}
        self.dra_prepared: dict[str, dict[str, list]] = {}
        self.dra_cdi_devices: dict[str, dict[str, list[str]]] = {}
        self.operands: Any = None            # node.operands.OperandHost when the GPU Operator manages the node
        self._dra_retry: dict[str, Any] = {}  # pod uid → event after which a failed prepare may succeed
        self.active: dict[str, Pod] = {}     # admitted, not terminated
        # in framework.Resource units (milliCPU, bytes, devices), as the admission's noderesources.Fits counts
        self._active_requests: dict[str, Any] = {}   # uid → requests of an active pod
        self._used: dict[str, int] = {}              # Σ requests of the active pods
        self.known: set[str] = set()         # pod UIDs the kubelet has seen
        self.restarts: dict[str, int] = {}
        self._adds: simpy.Store = simpy.Store(ctx.env)
        self._status_post: Optional[simpy.Event] = None
        self._pending_exits: list[ContainerRecord] = []
        self._generation = 0
        self.watch = ctx.api.watch_node_pods(node_name)
        ctx.env.process(self._watch_loop())
        ctx.env.process(self._admission_loop())

    # --- lifecycle ----------------------------------------------------------------------------------

    def checkpoint_entries(self) -> list[dict]:
        """The device manager checkpoint's PodDeviceEntries on this node's disk (what ``describe pod`` reads)."""
        return checkpoint.pod_device_entries(self.disk)
    def start(self) -> None:
        """Kubelet start: device manager from checkpoint, immediate node status, pods re-admitted."""
        ctx = self.ctx
        self.up, self.started_at = True, ctx.now
        self._generation += 1
        restarted = bool(self.disk)
        self.dm = DeviceManager(ctx.env, self.node_name, self.channel, ctx.trace, self.disk, self._capacity_changed,
                                self._state_changed)
        self.topology_manager = topologymanager.manager_from_kubelet_config(self.config, self.numa_nodes,
                                                                            self.numa_distances)
        ctx.trace.add(ctx.now, self.component, "kubelet.(*Kubelet).Run", f"Node {self.node_name}", "Success",
                      restarted=restarted)
        if restarted:
            self.dm.restore_checkpoint()
            self.dm.sources_ready = False
        self.post_node_status()
        self._publish_resource_slices()
        if restarted:
            pods = sorted(ctx.api.list("Pod", lambda p: p.spec.node_name == self.node_name),
                          key=lambda p: (p.metadata.creation_timestamp, p.metadata.name))
            for rec in self._pending_exits:
                self._container_exited(rec)
            self._pending_exits.clear()
            self.active.clear()
            self._active_requests.clear()
            self._used.clear()
            for pod in pods:
                if pod.status.phase not in ("Succeeded", "Failed") and pod.metadata.deletion_timestamp is None:
                    self.known.add(pod.metadata.uid)
                    self._adds.put(pod)
            self._adds.put("sources-ready")
        if self.plugin is not None:
            # with the GPU Operator the plugin is a container of the device-plugin pod (node/operands.py)
            container = self.operands is None or self.operands.plugin_container_running()
            if restarted and container:
                ctx.env.process(self._plugin_reregisters())
            elif not restarted and container and not self.plugin.running:
                self.plugin.start(self.dm)

    def _publish_resource_slices(self) -> None:
        """A registered DRA kubelet plugin publishes its node's ResourceSlice (kubeletplugin's ResourceSlice
        controller); an existing slice of the driver for this node is kept."""
        for driver, plugin in sorted(self.dra_plugins.items()):
            mine = self.ctx.api.list("ResourceSlice", lambda s: s.spec.driver == driver
                                     and s.spec.node_name == self.node_name)
            if not mine:
                for s in plugin.resource_slices(self.ctx.api.rng):
                    self.ctx.api.create(s)
                self.ctx.trace.add(self.ctx.now, f"{driver}/{self.node_name}", "resourceslice.(*Controller).sync",
                                   f"Node {self.node_name}", "Success")

    def _prepare_dynamic_resources(self, pod: Pod) -> Optional[str]:
        """cm/dra ManagerImpl.PrepareResources: every claim of the pod must be allocated and reserved for it; the
        drivers' NodePrepareResources return CDI device ids, which go to the containers that reference the
        claim (``resources.claims``, optionally one request). The extended resource claim the scheduler wrote in
        ``status.extendedResourceClaimStatus`` (KEP-5004) is prepared like the others; a container gets the CDI
        ids of the requests mapped to its requested extended resources (GetResources). Returns an error text,
        or None."""
        ns, uid = pod.metadata.namespace, pod.metadata.uid
        claims = []
        ext = pod.status.extended_resource_claim_status
        refs = [(rc.name, rc.resource_claim_name or next((s.resource_claim_name
                                                          for s in pod.status.resource_claim_statuses
                                                          if s.name == rc.name), None))
                for rc in pod.spec.resource_claims]
        if ext is not None:
            refs.append((None, ext.resource_claim_name))
        for pod_claim, name in refs:
            if name is None:
                continue
            claim = self.ctx.api.get("ResourceClaim", ns, name)
            if claim is None:
                return f'fetch ResourceClaim {ns}/{name}: resourceclaims.resource.k8s.io "{name}" not found'
            if not any(r.uid == uid for r in claim.status.reserved_for) or claim.status.allocation is None:
                return f"pod {ns}/{pod.metadata.name} ({uid}) is not allowed to use ResourceClaim {ns}/{name}"
            claims.append((pod_claim, claim))
        prepared: dict[str, list] = {}
        for _, claim in claims:
            for driver in sorted({r.driver for r in claim.status.allocation.devices.results}):
                plugin = self.dra_plugins.get(driver)
                if plugin is None:
                    return f"DRA driver {driver} is not registered"
                try:
                    prepared.update(plugin.node_prepare_resources([claim]))
                except PrepareError as e:   # a driver's per-claim error (NodePrepareResourceResponse.Error),
                    # as cm/dra manager.go prepareResources reports it
                    if e.retry is not None:
                        self._dra_retry[uid] = e.retry
                    return f"NodePrepareResources failed for claim {ns}/{claim.metadata.name}: {e}"
        self.dra_prepared[uid] = prepared
        by_name = dict(claims)
        cdi: dict[str, list[str]] = {}
        for c in pod.spec.containers:
            for ref in (c.resources.claims if c.resources else []):
                claim = by_name.get(ref.name)
                for dev in prepared.get(claim.metadata.uid, []) if claim is not None else []:
                    if not ref.request or ref.request in dev.request_names or \
                            any(r.startswith(ref.request + "/") for r in dev.request_names):
                        cdi.setdefault(c.name, []).extend(i for i in dev.cdi_device_ids if i not in cdi.get(c.name, []))
        if ext is not None:
            ext_claim = next(claim for pod_claim, claim in claims if pod_claim is None)
            for c in [*pod.spec.init_containers, *pod.spec.containers]:
                wanted = {r for r, q in container_requests(c).items() if q and is_dra_extended_resource_name(r)}
                for m in ext.request_mappings:
                    if m.container_name != c.name or m.resource_name not in wanted:
                        continue
                    for dev in prepared.get(ext_claim.metadata.uid, []):
                        if m.request_name in dev.request_names:
                            cdi.setdefault(c.name, []).extend(i for i in dev.cdi_device_ids
                                                              if i not in cdi.get(c.name, []))
        self.dra_cdi_devices[uid] = cdi
        for devs in prepared.values():
            for dev in devs:
                if dev.uuid is None:
                    continue   # no GPU behind the device (an IMEX channel or daemon)
                self.ctx.hold(self.node_name, "gpu.nvidia.com", dev.uuid, pod, dev.minor)
        self.ctx.trace.add(self.ctx.now, self.component, "dra.(*ManagerImpl).PrepareResources",
                           f"Pod {ns}/{pod.metadata.name}", "Success",
                           cdi_devices=cdi, env={"NVIDIA_VISIBLE_DEVICES": "void"} if cdi else {},
                           claims=[{"claim": claim.metadata.name, "podClaimName": pod_claim, "request": r.request,
                                    "deviceClassName": _device_class(claim, r.request), "driver": r.driver, "pool": r.pool, "device": r.device,
                                    "cdiDeviceIDs": [i for d in prepared.get(claim.metadata.uid, [])
                                                     if d.device_name == r.device for i in d.cdi_device_ids],
                                    "deviceNodes": [n for d in prepared.get(claim.metadata.uid, [])
                                                    if d.device_name == r.device for n in getattr(d, "device_nodes", ())]}
                                   for pod_claim, claim in claims for r in claim.status.allocation.devices.results])
        return None

    def _unprepare_dynamic_resources(self, pod: Pod) -> None:
        """cm/dra ManagerImpl.UnprepareResources: a claim no other active pod on the node uses is unprepared."""
        prepared = self.dra_prepared.pop(pod.metadata.uid, None)
        self.dra_cdi_devices.pop(pod.metadata.uid, None)
        if not prepared:
            return
        in_use = {c for u, claims in self.dra_prepared.items() if u in self.active for c in claims}
        done = [c for c in prepared if c not in in_use]
        for plugin in self.dra_plugins.values():
            plugin.node_unprepare_resources(done)
        self.ctx.trace.add(self.ctx.now, self.component, "dra.(*ManagerImpl).UnprepareResources",
                           f"Pod {pod.metadata.namespace}/{pod.metadata.name}", "Success", claims=sorted(done))

    def _state_changed(self) -> None:
        for listener in list(self.state_listeners):
            listener()

    def _plugin_reregisters(self) -> Generator:
        """NVIDIA plugin, cmd/nvidia-device-plugin/main.go ``start``: the fsnotify watch on the device-plugin
        directory sees kubelet.sock created by the restarted kubelet and restarts at once ('inotify:
        /var/lib/kubelet/device-plugins/kubelet.sock created, restarting.'); ``startPlugins`` then reloads the
        config, rebuilds the resource managers and Starts each plugin, whose last step is Register. How long that
        takes is gpusim's ``devicePluginRestartDelay`` (not an upstream constant)."""
        gen = self._generation
        if self.plugin is not None:
            self.ctx.trace.add(self.ctx.now, self.plugin.component, "main.start", f"Node {self.node_name}",
                               "inotify: /var/lib/kubelet/device-plugins/kubelet.sock created, restarting.")
        yield self.ctx.env.timeout(self.ctx.timing.device_plugin_restart_delay)
        if self.up and gen == self._generation and self.plugin is not None:
            self.ctx.trace.add(self.ctx.now, self.plugin.component, "main.startPlugins", f"Node {self.node_name}",
                               "Success")
            self.plugin.running = False
            self.plugin.start(self.dm)

    def stop(self, reason: str) -> None:
        """The kubelet process exits; containers keep running; the plugin's stream breaks."""
        self.up = False
        self._generation += 1
        self.ctx.trace.add(self.ctx.now, self.component, "kubelet.(*Kubelet).Run", f"Node {self.node_name}", reason)
        if self.plugin is not None:
            self.plugin.break_streams()
        self.dm = None

    def power_off(self) -> None:
        self.stop("node down")
        self.node_down = True
        self.runtime.kill_all()
        if self.plugin is not None:
            self.plugin.running = False
        if self.operands is not None:
            self.operands.power_off()

    def power_on(self) -> None:
        """The node boots again (NodeDown with a downtime): containerd starts empty, the kubelet starts with
        its checkpoint and re-admits the pods bound here."""
        self.node_down = False
        self.runtime.alive = True
        self.start()

    def adopt_operand_pod(self, pod: Pod) -> None:
        """An operand pod running since before t=0: known and active, its containers in the runtime."""
        self.known.add(pod.metadata.uid)
        self._activate(pod)
        self.operands.adopt(pod)

    def restart_plugin(self, downtime: float) -> Generator:
        """DevicePluginCrash: the plugin's stream ends; its DaemonSet pod comes back after ``downtime``."""
        if self.plugin is None:
            return
        if self.operands is not None:
            yield from self.operands.crash_plugin(downtime)
            return
        self.plugin.stop("crashed")
        yield self.ctx.env.timeout(downtime)
        if self.up and self.plugin is not None and not self.plugin.running:
            self.plugin.start(self.dm)

    # --- node status -----------------------------------------------------------------------------------
    def _capacity_changed(self) -> None:
        if self._status_post is None and self.up:
            period = self.ctx.timing.node_status_update_frequency
            elapsed = self.ctx.now - self.started_at
            next_tick = self.started_at + math.ceil(elapsed / period + 1e-9) * period if period else self.ctx.now
            self._status_post = self.ctx.env.timeout(max(0.0, next_tick - self.ctx.now))
            gen = self._generation
            def post(_e, gen=gen):
                self._status_post = None
                if self.up and gen == self._generation:
                    self.post_node_status()
            self._status_post.callbacks.append(post)

    def post_node_status(self) -> None:
        """nodestatus.MachineInfo + ReadyCondition: capacity/allocatable with device-plugin resources."""
        node = self.ctx.api.get("Node", "", self.node_name)
        if node is None or self.dm is None:
            return
        cap, alloc, removed = self.dm.get_capacity()
        new_cap = {k: v for k, v in node.status.capacity.items() if not is_extended_resource_name(k)}
        new_alloc = {k: v for k, v in node.status.allocatable.items() if not is_extended_resource_name(k)}
        for res in sorted(cap):
            new_cap[res], new_alloc[res] = str(cap[res]), str(alloc[res])
        for res in removed:   # a resource the plugin once managed is written as 0, not dropped
            new_cap[res], new_alloc[res] = "0", "0"
        for res, q in node.status.capacity.items():   # cluster-level extended resources stay
            if is_extended_resource_name(res) and res not in new_cap and not self.dm.is_device_plugin_resource(res) \
                    and res not in removed and (self.plugin is None or res not in self.plugin.servers):
                new_cap[res], new_alloc[res] = q, node.status.allocatable.get(res, q)
        ready = node.status.condition("Ready")
        changed = (new_cap != node.status.capacity or new_alloc != node.status.allocatable or ready is None
                   or ready.status != "True")
        if not changed:
            return
        node.status.capacity, node.status.allocatable = new_cap, new_alloc
        if ready is None:
            ready = NodeCondition("Ready", "True", "KubeletReady", "kubelet is posting ready status",
                                  self.ctx.now, self.ctx.now)
            node.status.conditions.append(ready)
        elif ready.status != "True":
            ready.status, ready.reason, ready.message = "True", "KubeletReady", "kubelet is posting ready status"
            ready.last_transition_time = self.ctx.now
        ready.last_heartbeat_time = self.ctx.now
        self.ctx.trace.add(self.ctx.now, self.component, "kubelet.(*Kubelet).syncNodeStatus", f"Node {self.node_name}",
                           "Success", allocatable={k: v for k, v in new_alloc.items() if "/" in k})
        self.ctx.api.update(node)

    # --- pod sources -------------------------------------------------------------------------------------
    def _watch_loop(self) -> Generator:
        while True:
            ev = yield self.watch.get()
            pod = ev.obj
            if ev.type == DELETED:
                if self.up and pod.metadata.uid in self.active:
                    self._kill_deleted_pod(pod)
                continue
            if not self.up or pod.metadata.uid in self.known:
                continue
            if pod.status.phase in ("Succeeded", "Failed"):
                continue
            self.known.add(pod.metadata.uid)
            self._adds.put(pod)

    def _admission_loop(self) -> Generator:
        """HandlePodAdditions: pods are admitted one at a time, in arrival order."""
        while True:
            item = yield self._adds.get()
            if item == "sources-ready":
                if self.dm is not None:
                    self.dm.sources_ready = True
                continue
            if not self.up or self.dm is None:
                continue
            yield from self._admit(item)

    def _hint_provider(self, reusable: dict[str, list[str]], uid: str) -> DeviceManagerHintProvider:
        """The device manager as a hint provider (GetTopologyHints / GetPodTopologyHints) over its state now."""
        dm = self.dm
        state = DeviceState(list(self.numa_nodes),
                            {r: dict(t) for r, t in dm.device_topology.items() if r in dm.healthy},
                            {r: set(h) for r, h in dm.healthy.items()},
                            {u: {c: {r: list(v[0]) for r, v in res.items()} for c, res in conts.items()}
                             for u, conts in dm.pod_devices.items()})
        for r in dm.healthy:                       # a resource without a device list yet (after a restart)
            state.topology.setdefault(r, {})
        provider = DeviceManagerHintProvider(state)
        provider.reusable = {uid: {r: list(ids) for r, ids in reusable.items()}}
        return provider

    def _admit_containers(self, pod: Pod, dm: DeviceManager, running: bool) -> Generator:
        """The Topology Manager scope's Admit (scope_container.go / scope_pod.go / scope_none.go) with the
        device manager as the hint provider: returns a PodAdmitResult-like (reason, message) or None."""
        tm = self.topology_manager
        uid = pod.metadata.uid
        policy = tm.policy.name() if tm is not None else topologymanager.POLICY_NONE
        scope = tm.scope.name if tm is not None else topologymanager.SCOPE_NONE
        reusable: dict[str, list[str]] = {}
        pod_hint = None
        if policy != topologymanager.POLICY_NONE and scope == topologymanager.SCOPE_POD:
            pod_hint, ok = tm.policy.merge([self._hint_provider(reusable, uid).get_pod_topology_hints(pod)])
            self._trace_hint(pod, "", pod_hint, ok)
            if not ok:
                return topologymanager.ERROR_TOPOLOGY_AFFINITY, topologymanager.TOPOLOGY_AFFINITY_MESSAGE
        init = {c.name for c in pod.spec.init_containers}
        for c in [*pod.spec.init_containers, *pod.spec.containers]:
            hint = None
            if policy != topologymanager.POLICY_NONE:
                if scope == topologymanager.SCOPE_POD:
                    hint = pod_hint
                else:
                    hint, ok = tm.policy.merge([self._hint_provider(reusable, uid).get_topology_hints(pod, c)])
                    self._trace_hint(pod, c.name, hint, ok)
                    if not ok:
                        return topologymanager.ERROR_TOPOLOGY_AFFINITY, topologymanager.TOPOLOGY_AFFINITY_MESSAGE
                tm.scope.set_topology_hints(uid, c.name, hint)
            yield from dm.allocate(pod, c, reusable, running, hint)
            if c.name in init and c.restart_policy != "Always":   # sidecar devices are not reusable
                for res, ids in dm.pod_devices.get(uid, {}).get(c.name, {}).items():
                    reusable.setdefault(res, []).extend(ids[0])
        return None

    def _trace_hint(self, pod: Pod, container: str, hint, admit: bool) -> None:
        tm = self.topology_manager
        self.ctx.trace.add(self.ctx.now, self.component, "topologymanager.(*scope).calculateAffinity",
                           f"Pod {pod.metadata.namespace}/{pod.metadata.name}",
                           "Admit" if admit else topologymanager.ERROR_TOPOLOGY_AFFINITY,
                           **({"container": container} if container else {}), policy=tm.policy.name(),
                           scope=tm.scope.name, hint=str(hint))

    def _admit(self, pod: Pod) -> Generator:
        ctx, dm = self.ctx, self.dm
        ref = f"Pod {pod.metadata.namespace}/{pod.metadata.name}"
        running = self.runtime.running(pod.metadata.uid)
        try:
            rejected = yield from self._admit_containers(pod, dm, running)
        except (AllocateError, RpcError) as e:
            if dm is not self.dm:   # the kubelet went down mid-admission
                return
            self._reject(pod, UNEXPECTED_ADMISSION_ERROR, f"Allocate failed due to {e}, which is unexpected")
            return
        if dm is not self.dm:
            return
        if rejected is not None:
            self._reject(pod, *rejected)
            return
        fail = self._general_predicates(pod)
        if fail is not None:
            self._reject(pod, *fail)
            return
        ctx.trace.add(ctx.now, self.component, "kubelet.(*Kubelet).canAdmitPod", ref, "Success")
        self._activate(pod)
        for res, ids in sorted(dm.devices_of(pod.metadata.uid).items()):
            for dev in ids:
                ctx.hold(self.node_name, res, dev, pod, self.plugin.gpu_index(dev) if self.plugin else None)
        if running:
            return
        if self.operands is not None and is_operand_pod(pod):
            self.operands.run(pod)
            return
        ctx.env.process(self._start_pod(pod))

    def _general_predicates(self, pod: Pod) -> Optional[tuple[str, str]]:
        """predicateAdmitHandler: UpdatePluginResources (sanitizeNodeAllocatable), then the resource fit
        against node allocatable and the node-affinity/selector check of GeneralPredicates. With
        DRAExtendedResource a DRA extended resource name (an extended resource or a DeviceClass's implicit
        ``deviceclass.resource.kubernetes.io/<class>``) the node has no allocatable of is not checked: the
        scheduler's extended resource claim provides it (noderesources.Fits without a DRA manager)."""
        node = self.ctx.api.get("Node", "", self.node_name)
        key = (id(node), node.metadata.resource_version)
        if self._alloc_parsed[0] != key:     # the node's allocatable, parsed once per node status written
            self._alloc_parsed = (key, {k: to_units(k, parse_quantity(v)) for k, v in node.status.allocatable.items()})
        alloc = dict(self._alloc_parsed[1])
        for res in list(self.dm.healthy):
            alloc[res] = max(alloc.get(res, 0), len(self.dm.allocated(res)))
        if not node_matches_pod(pod, node):
            return "NodeAffinity", "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"
        # integer units (fit.go fitsRequest: MilliCPU, Memory, ScalarResources of framework.Resource)
        req = pod_request_units(pod)
        dra_extended = self.ctx.feature_gates.get("DRAExtendedResource", gate_default("DRAExtendedResource", (1, 36)))
        used = dict(self._used)   # the other active pods' requests
        for k, v in self._active_requests.get(pod.metadata.uid, {}).items():
            used[k] -= v
        if len(self.active) + 1 > alloc.get("pods", _DEFAULT_PODS):
            return "OutOfpods", (f"Node didn't have enough resource: pods, requested: 1, used: {len(self.active)}, "
                                 f"capacity: {alloc.get('pods', _DEFAULT_PODS)}")
        for res in sorted(req):
            if req[res] == 0:
                continue
            if is_extended_resource_name(res) and res not in alloc:
                continue   # removeMissingExtendedResources
            if dra_extended and is_dra_extended_resource_name(res) and alloc.get(res, 0) <= 0 \
                    and self._device_class_backs(res):
                # fit.go ShouldDelegateResourceToDRA with a DeviceClass lookup (the newer form; an older one
                # delegated every resource missing from allocatable when it had no DRA manager, which let a pod
                # bound by nodeName to a node whose device plugin was gone start without its GPU)
                continue
            have = alloc.get(res, 0)
            if req[res] > have - used.get(res, 0):
                # lifecycle/predicate.go: reason OutOf<resource>, InsufficientResourceError's int64 message
                return f"OutOf{res}", (f"Node didn't have enough resource: {res}, requested: {req[res]}, "
                                       f"used: {used.get(res, 0)}, capacity: {have}")
        return None

    def _device_class_backs(self, resource: str) -> bool:
        """A DeviceClass names ``resource`` as its extendedResourceName, or it is the implicit
        ``deviceclass.resource.kubernetes.io/<class>`` name of one."""
        for c in self.ctx.api.list("DeviceClass"):
            if c.spec.extended_resource_name == resource or \
                    resource == RESOURCE_DEVICE_CLASS_PREFIX + c.metadata.name:
                return True
        return False

    def _reject(self, pod: Pod, reason: str, message: str) -> None:
        """kubelet.rejectPod: Warning event with the bare message; status Failed with the prefix."""
        ctx = self.ctx
        ctx.trace.add(ctx.now, self.component, "kubelet.(*Kubelet).rejectPod",
                      f"Pod {pod.metadata.namespace}/{pod.metadata.name}", f"{reason}: {message}")
        ctx.event(pod, WARNING, reason, message, self.source)
        pod.status.phase, pod.status.reason = "Failed", reason
        pod.status.message = "Pod was rejected: " + message
        ctx.api.update(pod)
        self._release(pod)

    # --- pod workers --------------------------------------------------------------------------------------
    def _start_pod(self, pod: Pod) -> Generator:
        ctx = self.ctx
        st = pod.status
        st.phase, st.host_ip, st.start_time = "Pending", self.node_name, ctx.now
        st.container_statuses = [ContainerStatus(c.name, image=c.image, state=ContainerState(
            waiting=ContainerStateWaiting("ContainerCreating"))) for c in pod.spec.containers]
        set_condition(st.conditions, "PodReadyToStartContainers", "False", ctx.now)
        set_condition(st.conditions, "Initialized", "True", ctx.now)
        set_condition(st.conditions, "Ready", "False", ctx.now, "ContainersNotReady",
                      "containers with unready status: [" + " ".join(c.name for c in pod.spec.containers) + "]")
        set_condition(st.conditions, "ContainersReady", "False", ctx.now, "ContainersNotReady",
                      "containers with unready status: [" + " ".join(c.name for c in pod.spec.containers) + "]")
        if ctx.api.get_by_uid("Pod", pod.metadata.uid) is None:
            return   # deleted (preempted, evicted) in the same instant: nothing to start
        ctx.api.update(pod)
        handler = pod.spec.runtime_class_name
        while handler and handler in self.runtime.missing_handlers:
            # kuberuntime createPodSandbox: containerd has no such runtime handler; the pod worker retries
            ctx.event(pod, WARNING, "FailedCreatePodSandBox", MSG_NO_RUNTIME.format(handler=handler), self.source)
            yield ctx.daemon_timeout(SANDBOX_RETRY_SECONDS)
            if not self.up or pod.metadata.uid not in self.active:
                return
        while pod.spec.resource_claims or pod.status.extended_resource_claim_status is not None:
            err = self._prepare_dynamic_resources(pod)
            if err is None:
                break
            # the pod worker retries; the pod stays ContainerCreating (not Failed, unlike an admission error)
            # kuberuntime SyncPod's event around cm/dra manager.go Manager.PrepareResources, which wraps every error
            # of prepareResources as "prepare dynamic resources: %w"
            ctx.event(pod, WARNING, "FailedPrepareDynamicResources",
                      f"Failed to prepare dynamic resources: prepare dynamic resources: {err}", self.source)
            timer, wake = ctx.daemon_timeout(SANDBOX_RETRY_SECONDS), self._dra_retry.pop(pod.metadata.uid, None)
            yield timer if wake is None else timer | wake
            if not self.up or pod.metadata.uid not in self.active:
                return
        plugin, dm = self.plugin, self.dm
        for res, srv in (plugin.servers.items() if plugin is not None and dm is not None else ()):
            ep = dm.endpoints.get(res)
            if ep is None or ep.options is None or not ep.options.pre_start_required:
                continue
            for c in pod.spec.containers:
                ids = dm.pod_devices.get(pod.metadata.uid, {}).get(c.name, {}).get(res, ([], None))[0]
                if ids:
                    yield from self.channel.call(self.component, "v1beta1.DevicePlugin/PreStartContainer",
                                                 f"Pod {pod.metadata.namespace}/{pod.metadata.name}",
                                                 lambda: plugin.running, srv.pre_start_container, ids)
        yield ctx.env.timeout(ctx.timing.container_start)
        if not self.up or pod.metadata.uid not in self.active:
            return
        self._run_containers(pod)

    def _run_containers(self, pod: Pod) -> None:
        ctx = self.ctx
        ann = pod.metadata.annotations
        duration = self._duration(pod)
        exit_code = int(ann.get(ANNOTATION_EXIT_CODE, "0"))
        for i, c in enumerate(pod.spec.containers):
            if pod.status.container_statuses[i].restart_count == 0:
                ctx.event(pod, NORMAL, PULLED, f'Container image "{c.image}" already present on machine', self.source)
            ctx.event(pod, NORMAL, CREATED, f"Created container: {c.name}", self.source)
            ctx.event(pod, NORMAL, STARTED, f"Started container {c.name}", self.source)
            self.runtime.start(pod.metadata.uid, c.name, duration, exit_code, self._on_exit)
            self._track_gpu_memory(pod, c.name)
            self._track_training(pod, c.name)
            cs = pod.status.container_statuses[i]
            cs.state = ContainerState(running=ContainerStateRunning(ctx.now))
            cs.ready, cs.started = True, True
        st = pod.status
        st.phase = "Running"
        set_condition(st.conditions, "PodReadyToStartContainers", "True", ctx.now)
        set_condition(st.conditions, "Ready", "True", ctx.now)
        set_condition(st.conditions, "ContainersReady", "True", ctx.now)
        ctx.trace.add(ctx.now, self.component, "kuberuntime.(*kubeGenericRuntimeManager).startContainer",
                      f"Pod {pod.metadata.namespace}/{pod.metadata.name}", "Success",
                      devices=self.dm.devices_of(pod.metadata.uid) if self.dm else {})
        ctx.api.update(pod)

    def reconfigure_mig(self, layouts: list, strategy: str) -> None:
        """mig-manager applied ``layouts``: the GPUs now hold new MIG devices; the plugin restarts with them."""
        plugin = self.plugin
        plugin.set_mig_devices(strategy, mig_devices(self.ctx.rng, layouts))
        if self.gpu_memory is not None:
            self.gpu_memory = GPUMemory(self.ctx, self.node_name, plugin, self._cuda_oom)
        if self.up and self.dm is not None:
            plugin.start(self.dm)

    def _track_gpu_memory(self, pod: Pod, container: str) -> None:
        """The started process holds ``gpusim.io/gpu-memory`` on each physical GPU it was given."""
        if self.gpu_memory is None or self.dm is None or self.plugin is None:
            return
        held = self.dm.pod_devices.get(pod.metadata.uid, {}).get(container, {})
        domains, limits = self.plugin.memory_claims(held)
        if domains:
            self.gpu_memory.container_started(pod, container, domains, limits)

    @staticmethod
    def _duration(pod: Pod) -> Optional[float]:
        """gpusim.io/duration; a training worker has none: its group's coordinator ends it."""
        ann = pod.metadata.annotations
        if ANNOTATION_DURATION not in ann or is_training(pod):
            return None
        return parse_duration(ann[ANNOTATION_DURATION])

    def _track_training(self, pod: Pod, container: str) -> None:
        """A training worker (workloads/training.py) progresses only while its whole group runs."""
        if is_training(pod):
            coordinator(self.ctx).register(self.runtime, pod, container)

    def _cuda_oom(self, pod_uid: str, container: str, message: str) -> None:
        self.runtime.fail(pod_uid, container, OOM_EXIT_CODE, message)

    def _on_exit(self, rec: ContainerRecord) -> None:
        if not self.up:
            self._pending_exits.append(rec)   # seen by PLEG's relist when the kubelet is back
            return
        self._container_exited(rec)

    def _container_exited(self, rec: ContainerRecord) -> None:
        ctx = self.ctx
        pod = ctx.api.get_by_uid("Pod", rec.pod_uid)
        if pod is None or pod.status.phase in ("Succeeded", "Failed"):
            return
        idx = next(i for i, c in enumerate(pod.spec.containers) if c.name == rec.name)
        cs = pod.status.container_statuses[idx]
        reason = "Completed" if rec.exit_code == 0 else "Error"
        cs.state = ContainerState(terminated=ContainerStateTerminated(
            rec.exit_code, reason, rec.message, rec.started_at, rec.finished_at))
        cs.ready, cs.started = False, False
        policy = pod.spec.restart_policy or "Always"
        if policy == "Always" or (policy == "OnFailure" and rec.exit_code != 0):
            self._containers_ready_conditions(pod)
            ctx.api.update(pod)
            ctx.env.process(self._restart_container(pod, idx))
            return
        if any(c.state.terminated is None for c in pod.status.container_statuses):
            ctx.api.update(pod)
            return
        failed = any(c.state.terminated.exit_code != 0 for c in pod.status.container_statuses)
        st = pod.status
        st.phase = "Failed" if failed else "Succeeded"
        for ctype in ("Ready", "ContainersReady"):
            set_condition(st.conditions, ctype, "False", ctx.now, "PodFailed" if failed else "PodCompleted")
        set_condition(st.conditions, "PodReadyToStartContainers", "False", ctx.now)
        ctx.trace.add(ctx.now, self.component, "kubelet.(*Kubelet).syncTerminatedPod",
                      f"Pod {pod.metadata.namespace}/{pod.metadata.name}", st.phase)
        ctx.api.update(pod)
        self._release(pod)

    def _restart_container(self, pod: Pod, idx: int) -> Generator:
        """Container restart with CrashLoopBackOff's doubling delay (10s … 5m)."""
        ctx = self.ctx
        cs = pod.status.container_statuses[idx]
        # pkg/util/flowcontrol Backoff: the delay doubles per restart up to the maximum (the exponent is capped, so
        # a container that restarts a thousand times does not overflow)
        delay = min(CRASHLOOP_INITIAL * 2 ** min(cs.restart_count, 32), CRASHLOOP_MAX)
        ctx.event(pod, WARNING, BACKOFF, f"Back-off restarting failed container {cs.name} in pod "
                  f"{pod.metadata.name}_{pod.metadata.namespace}({pod.metadata.uid})", self.source)
        cs.last_state = cs.state
        cs.state = ContainerState(waiting=ContainerStateWaiting(
            "CrashLoopBackOff", f"back-off {int(delay)}s restarting failed container={cs.name} "
            f"pod={pod.metadata.name}_{pod.metadata.namespace}({pod.metadata.uid})"))
        ctx.api.update(pod)
        yield ctx.daemon_timeout(delay)
        if not self.up or pod.metadata.uid not in self.active:
            return
        cs.restart_count += 1
        c = pod.spec.containers[idx]
        ann = pod.metadata.annotations
        duration = self._duration(pod)
        ctx.event(pod, NORMAL, CREATED, f"Created container: {c.name}", self.source)
        ctx.event(pod, NORMAL, STARTED, f"Started container {c.name}", self.source)
        self.runtime.start(pod.metadata.uid, c.name, duration, int(ann.get(ANNOTATION_EXIT_CODE, "0")), self._on_exit)
        self._track_gpu_memory(pod, c.name)
        self._track_training(pod, c.name)
        cs.state = ContainerState(running=ContainerStateRunning(ctx.now))
        cs.ready = cs.started = True
        self._containers_ready_conditions(pod)
        ctx.api.update(pod)

    def _containers_ready_conditions(self, pod: Pod) -> None:
        """status.generateContainersReadyCondition / GeneratePodReadyCondition: Ready and ContainersReady are
        True only while every container is ready; a container waiting in back-off makes both False."""
        st, now = pod.status, self.ctx.now
        unready = [cs.name for cs in st.container_statuses if not cs.ready]
        if unready:
            msg = "containers with unready status: [" + " ".join(unready) + "]"
            set_condition(st.conditions, "Ready", "False", now, "ContainersNotReady", msg)
            set_condition(st.conditions, "ContainersReady", "False", now, "ContainersNotReady", msg)
        else:
            set_condition(st.conditions, "Ready", "True", now)
            set_condition(st.conditions, "ContainersReady", "True", now)

    def _kill_deleted_pod(self, pod: Pod) -> None:
        """The pod object is gone (deleted without a grace period, as gpusim's deletions are): stop its
        containers (event Killing "Stopping container <name>") and free its devices."""
        ctx = self.ctx
        for rec in self.runtime.pod_containers(pod.metadata.uid):
            if rec.finished_at is None:
                self.runtime.kill(rec)
                ctx.event(pod, NORMAL, "Killing", f"Stopping container {rec.name}", self.source)
        if self.operands is not None and is_operand_pod(pod):
            self.operands.pod_deleted(pod)
        ctx.trace.add(ctx.now, self.component, "kubelet.(*Kubelet).killPod",
                      f"Pod {pod.metadata.namespace}/{pod.metadata.name}", "Success")
        self._release(pod)

    def _activate(self, pod: Pod) -> None:
        """An admitted pod counts against the node's allocatable until it is released."""
        uid = pod.metadata.uid
        self.active[uid] = pod
        if uid not in self._active_requests:
            req = self._active_requests[uid] = pod_request_units(pod)
            for k, v in req.items():
                self._used[k] = self._used.get(k, 0) + v

    def _release(self, pod: Pod) -> None:
        """The pod is terminal: the device manager frees its devices (UpdateAllocatedDevices)."""
        self.active.pop(pod.metadata.uid, None)
        for k, v in self._active_requests.pop(pod.metadata.uid, {}).items():
            self._used[k] -= v
        if self.topology_manager is not None:
            self.topology_manager.remove_pod(pod.metadata.uid)
        self._unprepare_dynamic_resources(pod)
        if self.dm is not None:
            freed = self.dm.devices_of(pod.metadata.uid)
            self.dm.update_allocated_devices(set(self.active))
            self.ctx.release(pod)
            if freed:
                self.ctx.trace.add(self.ctx.now, self.component, "devicemanager.(*ManagerImpl).UpdateAllocatedDevices",
                                   f"Pod {pod.metadata.namespace}/{pod.metadata.name}", "Success", freed=freed)


def _device_class(claim, request: str) -> str:
    """The DeviceClass of an allocation result's request (``<request>`` or ``<request>/<subrequest>``)."""
    top, _, sub = request.partition("/")
    for r in claim.spec.devices.requests:
        if r.name == top:
            if r.exactly is not None:
                return r.exactly.device_class_name
            return next((s.device_class_name for s in r.first_available if s.name == sub), "")
    return ""
