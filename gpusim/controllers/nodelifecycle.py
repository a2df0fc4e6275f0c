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

    def node_stopped_posting(self, node_name: str) -> None:
        self.ctx.env.process(self._monitor(node_name))

    def _monitor(self, node_name: str) -> Generator:
        ctx = self.ctx
        yield ctx.env.timeout(NODE_MONITOR_GRACE_PERIOD)
        node = ctx.api.get("Node", "", node_name)
        if node is None:
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
