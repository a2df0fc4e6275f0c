"""Node lifecycle and taint-based eviction (mirrors pkg/controller/nodelifecycle and
pkg/controller/tainteviction), for a node that stops posting status (``NodeDown``)."""
from __future__ import annotations

from typing import Generator

from ..api.core_v1 import Taint
from ..controlplane.context import Context
from ..controlplane.events import NORMAL
from ..componenthelpers.podutil import set_condition

NODE_MONITOR_GRACE_PERIOD = 50.0   # kube-controller-manager --node-monitor-grace-period (50s since 1.32)
DEFAULT_TOLERATION_SECONDS = 300   # DefaultTolerationSeconds admission plugin
TAINT_UNREACHABLE = "node.kubernetes.io/unreachable"
TAINT_NOT_READY = "node.kubernetes.io/not-ready"


class NodeLifecycleController:
    def __init__(self, ctx: Context):
        self.ctx = ctx
        self._outage: dict[str, int] = {}   # node → the number of its current outage (0: posting)
        self._count = 0

    def node_stopped_posting(self, node_name: str) -> None:
        self._count += 1
        self._outage[node_name] = self._count
        self.ctx.env.process(self._monitor(node_name, self._count))

    def node_resumed_posting(self, node_name: str) -> None:
        """The node's kubelet posts again (a rebooted node): the unreachable taints go, the node is Ready."""
        ctx = self.ctx
        self._outage[node_name] = 0
        node = ctx.api.get("Node", "", node_name)
        if node is None or not any(t.key == TAINT_UNREACHABLE for t in node.spec.taints):
            return
        node.spec.taints = [t for t in node.spec.taints if t.key != TAINT_UNREACHABLE]
        ctx.event(node, NORMAL, "NodeReady", f"Node {node_name} status is now: NodeReady", "node-controller")
        ctx.api.update(node)

    def _monitor(self, node_name: str, outage: int) -> Generator:
        ctx = self.ctx
        yield ctx.env.timeout(NODE_MONITOR_GRACE_PERIOD)
        node = ctx.api.get("Node", "", node_name)
        if node is None or self._outage.get(node_name) != outage:
            return
        for c in node.status.conditions:
            if c.type in ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure"):
                c.status, c.reason, c.message = "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status."
                c.last_transition_time = ctx.now
        for effect in ("NoSchedule", "NoExecute"):
            node.spec.taints.append(Taint(key=TAINT_UNREACHABLE, effect=effect, time_added=ctx.now))
        ctx.event(node, NORMAL, "NodeNotReady", f"Node {node_name} status is now: NodeNotReady", "node-controller")
        ctx.api.update(node)
        yield ctx.env.timeout(DEFAULT_TOLERATION_SECONDS)
        if self._outage.get(node_name) != outage:
            return
        for pod in sorted(ctx.api.list("Pod", lambda p: p.spec.node_name == node_name),
                          key=lambda p: (p.metadata.namespace, p.metadata.name)):
            if pod.status.phase in ("Succeeded", "Failed") or pod.metadata.deletion_timestamp is not None:
                continue
            set_condition(pod.status.conditions, "DisruptionTarget", "True", ctx.now, "DeletionByTaintManager",
                          "Taint manager: deleting due to NoExecute taint")
            pod.metadata.deletion_timestamp = ctx.now
            ctx.event(pod, NORMAL, "TaintManagerEviction",
                      f"Marking for deletion Pod {pod.metadata.namespace}/{pod.metadata.name}",
                      "taint-eviction-controller")
            ctx.api.update(pod)
