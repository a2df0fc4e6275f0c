"""The ClusterPolicy reconciler (mirrors NVIDIA/gpu-operator controllers/clusterpolicy_controller.go
``Reconcile`` and controllers/state_manager.go ``step``): on every Node or operand-pod change it

1. labels the GPU nodes (``labelGPUNodes``: ``nvidia.com/gpu.present`` and the ``nvidia.com/gpu.deploy.*``
   labels, state_manager.py);
2. walks the states in order and, as each state's DaemonSet would, creates the operand pod on every node
   whose deploy label is ``true`` and deletes it where the label is gone or paused
   (``paused-for-mig-change``); pods are named ``<daemonset>-<5 characters>`` as the DaemonSet controller's
   generateName does;
3. sets ``status.state``: ``ready`` when every enabled operand is available on every node it selects, else
   ``notReady`` (the reconciler requeues until then).

Traced: ``labelGPUNodes`` when it adds labels to a node; ``step`` when a state's outcome over the cluster
changes (``ready`` ↔ ``notReady``: every pod of its DaemonSet available on every node it selects, a DaemonSet
that selects no node counting as ready), in addState order; ``Reconcile`` when ``status.state`` changes; the
DaemonSet controller's ``syncNodes`` for each pod it creates or deletes.

Nodes present at t=0 start reconciled: their operand pods are created Running before the clock starts, like
the nodes themselves (``bootstrap``), so a scenario that holds a ClusterPolicy runs as the cluster it
describes, already up.
"""
from __future__ import annotations

import hashlib
import uuid
from typing import Any, Generator, Optional

from ..api.core_v1 import ContainerState, ContainerStateRunning, ContainerStateTerminated, ContainerStatus, Node, Pod
from ..api.nvidia_operands import NAMESPACE, Operand, is_operand_pod
from ..api.nvidia_v1 import STATE_NOT_READY, STATE_READY, ClusterPolicy, ClusterPolicyStatus
from ..componenthelpers.podutil import set_condition
from ..controlplane.context import Context
from . import state_manager

COMPONENT = "gpu-operator"
NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"   # k8s.io/apiserver storage names generator alphabet


class ClusterPolicyReconciler:
    def __init__(self, ctx: Context, policy: ClusterPolicy, seed: int = 0):
        self.ctx, self.policy, self.seed = ctx, policy, seed
        self.operands = state_manager.enabled_operands(policy.spec)
        self.pods: dict[tuple[str, str], Pod] = {}       # (daemonset, node) → current pod
        self._created: dict[tuple[str, str], int] = {}   # how many pods each (daemonset, node) got
        self._pending = False
        self._dirty: set[str] = set()                    # nodes to reconcile at the next pass
        self._node_ready: dict[str, bool] = {}
        # per state: the nodes its DaemonSet selects, those whose pod is not available yet, its last traced outcome
        self._selected: dict[str, set[str]] = {op.state: set() for op in self.operands}
        self._waiting: dict[str, set[str]] = {op.state: set() for op in self.operands}
        self._state_result: dict[str, str] = {op.state: STATE_READY for op in self.operands}
        policy.status = ClusterPolicyStatus(state=STATE_NOT_READY, namespace=NAMESPACE)
        self.state_log: list[tuple[float, str]] = []     # (time, state) at every change
        # a uid of its own (not from the run's random stream, which the workloads' uids come from)
        policy.metadata.uid = policy.metadata.uid or str(uuid.UUID(
            bytes=hashlib.sha256(f"{seed}/ClusterPolicy/{policy.metadata.name}".encode()).digest()[:16], version=4))
        ctx.api.create(policy)
        self._nodes = ctx.api.watch("Node")
        self._pod_events = ctx.api.watch("Pod")
        ctx.env.process(self._watch(self._nodes, lambda ev: ev.obj.metadata.name))
        ctx.env.process(self._watch(self._pod_events,
                                    lambda ev: ev.obj.spec.node_name if is_operand_pod(ev.obj) else None))

    # --- t=0 ---------------------------------------------------------------------------------------------
    def bootstrap(self) -> list[Pod]:
        """Label every GPU node present now and create its operand pods already Running and ready, without
        events (the cluster was brought up before the scenario starts). Returns the pods for the kubelets."""
        out = []
        for node in sorted(self.ctx.api.list("Node"), key=lambda n: n.metadata.name):
            self._node_ready[node.metadata.name] = True
            if not state_manager.has_gpu(node.metadata.labels):
                continue
            node.metadata.labels.update(state_manager.gpu_node_labels(node.metadata.labels))
            for op in self.operands:
                if state_manager.wanted_on(op, node.metadata.labels):
                    out.append(self._create(op, node.metadata.name, running=True))
                    self._selected[op.state].add(node.metadata.name)
        self._set_state(STATE_READY, trace=False)
        return out

    # --- reconcile ---------------------------------------------------------------------------------------
    def _watch(self, store: Any, node_of: Any) -> Generator:
        while True:
            ev = yield store.get()
            node = node_of(ev)
            if not node:
                continue
            self._dirty.add(node)
            if not self._pending:
                self._pending = True
                self.ctx.env.process(self._reconcile_soon())

    def _reconcile_soon(self) -> Generator:
        """Changes in one instant are coalesced into one Reconcile of the nodes they touched (the workqueue)."""
        yield self.ctx.env.timeout(0)
        self._pending = False
        dirty, self._dirty = self._dirty, set()
        self.reconcile(sorted(dirty))

    def reconcile(self, names: Optional[list[str]] = None) -> None:
        """Reconcile ``names`` (every node when None) and recompute status.state."""
        ctx = self.ctx
        nodes = sorted(ctx.api.list("Node"), key=lambda n: n.metadata.name) if names is None else \
            [n for n in (ctx.api.get("Node", "", name) for name in names) if n is not None]
        for node in nodes:
            self._node_ready[node.metadata.name] = self._reconcile_node(node)
        gone = set(names or ()) - {n.metadata.name for n in nodes}   # deleted nodes leave every DaemonSet
        for op in self.operands:
            self._selected[op.state] -= gone
            self._waiting[op.state] -= gone
            self._step(op)
        self._set_state(STATE_READY if all(self._node_ready.values()) else STATE_NOT_READY)

    def _step(self, op: Operand) -> None:
        """state_manager.go ``step`` for one state: its outcome over every node its DaemonSet selects; traced
        when it changes."""
        result = STATE_NOT_READY if self._waiting[op.state] else STATE_READY
        if result != self._state_result[op.state]:
            self._state_result[op.state] = result
            selected = len(self._selected[op.state])
            self.ctx.trace.add(self.ctx.now, COMPONENT, "controllers.(*ClusterPolicyController).step",
                               f"ClusterPolicy {self.policy.metadata.name}", result, state=op.state,
                               daemonset=op.daemonset, desired=selected,
                               available=selected - len(self._waiting[op.state]))

    def _reconcile_node(self, node: Node) -> bool:
        """labelGPUNodes for the node, then each state's DaemonSet on it; True when every operand it selects is ready."""
        ctx, name, labels = self.ctx, node.metadata.name, node.metadata.labels
        if not state_manager.has_gpu(labels):
            return True
        add = state_manager.gpu_node_labels(labels)
        if add:
            labels.update(add)
            ctx.trace.add(ctx.now, COMPONENT, "controllers.(*ClusterPolicyController).labelGPUNodes", f"Node {name}", "Success",
                          labels=add)
            ctx.api.update(node)
        ready = True
        for op in self.operands:
            key = (op.daemonset, name)
            pod = self.pods.get(key)
            if pod is not None and ctx.api.get("Pod", NAMESPACE, pod.metadata.name) is None:
                self.pods.pop(key)
                pod = None
            wanted = state_manager.wanted_on(op, labels)
            if wanted and pod is None:
                pod = self._create(op, name)
            elif not wanted and pod is not None:
                self._delete(op, pod)
                pod = None
            if wanted and (pod is None or not state_manager.pod_ready(pod)):
                ready = False
                self._waiting[op.state].add(name)
            else:
                self._waiting[op.state].discard(name)
            (self._selected[op.state].add if wanted else self._selected[op.state].discard)(name)
        return ready

    def _set_state(self, state: str, trace: bool = True) -> None:
        st = self.policy.status
        if st.state == state and self.state_log:
            return
        st.state = state
        self.state_log.append((self.ctx.now, state))
        if trace:
            self.ctx.trace.add(self.ctx.now, COMPONENT, "controllers.(*ClusterPolicyReconciler).Reconcile",
                               f"ClusterPolicy {self.policy.metadata.name}", state)
        self.ctx.api.update(self.policy)

    # --- DaemonSet controller's part -------------------------------------------------------------------------
    def _name_and_uid(self, op: Operand, node: str) -> tuple[str, str]:
        """A stable generateName suffix and uid from (seed, daemonset, node, nth pod): operand pods draw
        nothing from the run's random stream, so workloads keep theirs."""
        n = self._created.get((op.daemonset, node), 0)
        self._created[(op.daemonset, node)] = n + 1
        digest = hashlib.sha256(f"{self.seed}/{op.daemonset}/{node}/{n}".encode()).digest()
        suffix = "".join(NAME_CHARS[b % len(NAME_CHARS)] for b in digest[:5])
        return f"{op.daemonset}-{suffix}", str(uuid.UUID(bytes=digest[16:32], version=4))

    def _create(self, op: Operand, node: str, running: bool = False) -> Pod:
        ctx = self.ctx
        name, uid = self._name_and_uid(op, node)
        pod = state_manager.operand_pod(op, node, name, uid, self.policy.spec)
        if running:
            _mark_running(pod, ctx.now)
        else:
            ctx.trace.add(ctx.now, COMPONENT, "daemon.(*DaemonSetsController).syncNodes", f"Pod {NAMESPACE}/{name}",
                          "Created", daemonset=op.daemonset, node=node)
        self.pods[(op.daemonset, node)] = pod
        ctx.api.create(pod)
        return pod

    def _delete(self, op: Operand, pod: Pod) -> None:
        ctx = self.ctx
        self.pods.pop((op.daemonset, pod.spec.node_name), None)
        if ctx.api.get("Pod", NAMESPACE, pod.metadata.name) is not None:
            ctx.trace.add(ctx.now, COMPONENT, "daemon.(*DaemonSetsController).syncNodes",
                          f"Pod {NAMESPACE}/{pod.metadata.name}", "Deleted", daemonset=op.daemonset,
                          node=pod.spec.node_name)
            ctx.api.delete(pod)

    # --- readers -------------------------------------------------------------------------------------------
    def pod_of(self, daemonset: str, node: str) -> Optional[Pod]:
        return self.pods.get((daemonset, node))


def _mark_running(pod: Pod, now: float) -> None:
    """Status of a pod whose containers have been running since before the scenario began."""
    st = pod.status
    st.phase, st.host_ip, st.start_time = "Running", pod.spec.node_name, now
    st.init_container_statuses = [ContainerStatus(c.name, ready=True, image=c.image, state=ContainerState(
        terminated=ContainerStateTerminated(0, "Completed", "", now, now))) for c in pod.spec.init_containers]
    st.container_statuses = [ContainerStatus(c.name, ready=True, started=True, image=c.image,
                                             state=ContainerState(running=ContainerStateRunning(now)))
                             for c in pod.spec.containers]
    for ctype in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"):
        set_condition(st.conditions, ctype, "True", now)

