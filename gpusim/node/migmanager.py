"""NVIDIA mig-manager (mirrors NVIDIA/mig-parted cmd/nvidia-mig-manager and
deployments/container/reconfigure-mig.sh, deployed by the GPU Operator on MIG-capable nodes).

It watches its node's ``nvidia.com/mig.config`` label. On a change it validates the config, sets
``nvidia.com/mig.config.state=pending``, stops the GPU clients (the device plugin is paused with
``nvidia.com/gpu.deploy.device-plugin=paused-for-mig-change``), applies the new layout with
mig-parted and, once done, restarts the clients and sets ``success``; the node's allocatable follows
through the device plugin. It fails (``failed``) when the config is unknown or invalid for the GPU, or
when a workload still holds a GPU (``In use by another client``) — the usual reasons a new MIG config
does not take effect. Durations are a model: the plugin pod takes ``CLIENT_STOP_SECONDS`` to go away,
and ``APPLY_SECONDS`` covers the GPU reset and instance creation (seconds on bare metal).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generator, Optional

from ..controlplane.apiserver import DELETED
from ..controlplane.events import NORMAL, WARNING
from ..hardware import mig, migparted

if TYPE_CHECKING:
    from ..controlplane.context import Context
    from .kubelet import Kubelet

CONFIG_LABEL = "nvidia.com/mig.config"
STATE_LABEL = "nvidia.com/mig.config.state"
DEPLOY_PLUGIN_LABEL = "nvidia.com/gpu.deploy.device-plugin"
PAUSED = "paused-for-mig-change"
CLIENT_STOP_SECONDS = 5.0
APPLY_SECONDS = 10.0
SOURCE = "nvidia-mig-manager"
# the MigConfigFailure fault: mig-parted cannot apply the mode change on a node that cannot reset its GPUs live
RESET_REQUIRED = ("nvidia-mig-parted apply: the MIG mode change needs a GPU reset that this node cannot do while "
                  "it runs (NVML_ERROR_RESET_REQUIRED; mig-manager has WITH_REBOOT=false)")


class MigManager:
    def __init__(self, ctx: "Context", kubelet: "Kubelet", configs: migparted.MigPartedConfig, strategy: str,
                 applied: Optional[str], layouts: list):
        self.ctx, self.kubelet, self.configs, self.strategy = ctx, kubelet, configs, strategy
        self.node = kubelet.node_name
        self.applied = applied                 # the config name in effect
        self.layouts = layouts
        self.component = f"nvidia-mig-manager/{self.node}"
        self.busy = False
        self.failures_pending = 0              # MigConfigFailure faults still to hit an apply
        self._watch = ctx.api.watch("Node")
        ctx.env.process(self._loop())

    def _loop(self) -> Generator:
        while True:
            ev = yield self._watch.get()
            node = ev.obj
            if ev.type == DELETED or node.metadata.name != self.node or self.busy:
                continue
            wanted = node.metadata.labels.get(CONFIG_LABEL)
            if wanted and wanted != self.applied:
                self.busy = True
                self.ctx.env.process(self._reconfigure(wanted))

    def _set_labels(self, **labels: Optional[str]) -> Any:
        node = self.ctx.api.get("Node", "", self.node)
        for k, v in labels.items():
            if v is None:
                node.metadata.labels.pop(k, None)
            else:
                node.metadata.labels[k] = v
        self.ctx.api.update(node)
        return node

    def _trace(self, step: str, result: str) -> None:
        self.ctx.trace.add(self.ctx.now, self.component, f"reconfigure-mig.sh/{step}", f"Node {self.node}", result)

    def _fail(self, wanted: str, why: str) -> None:
        self._trace("exit_failed", why)
        node = self._set_labels(**{STATE_LABEL: "failed"})
        self.ctx.event(node, WARNING, "MigConfigFailed", f"Unable to apply MIG config {wanted}: {why}", SOURCE)
        self.applied = wanted          # mig-manager waits for the next label change
        self.busy = False

    def _reconfigure(self, wanted: str) -> Generator:
        kl, plugin = self.kubelet, self.kubelet.plugin
        model, count = plugin.model, len(plugin.devices)
        try:
            if not model.mig_capable and wanted != "all-disabled":
                raise mig.MigError(f"{model.name} does not support MIG")
            layouts = migparted.apply(self.configs, wanted, model, count)
        except (mig.MigError, ValueError) as e:
            self._fail(wanted, str(e))
            return
        if [g.counts() if g.mig_enabled else None for g in layouts] == \
                [g.counts() if g.mig_enabled else None for g in self.layouts]:
            self._trace("assert", f"MIG configuration {wanted} already applied")
            self._set_labels(**{STATE_LABEL: "success"})
            self.applied, self.busy = wanted, False
            return
        self._set_labels(**{STATE_LABEL: "pending"})
        self._trace("set_state", "pending")
        # stop the GPU clients: the device plugin DaemonSet pod is taken off the node
        self._set_labels(**{DEPLOY_PLUGIN_LABEL: PAUSED})
        yield self.ctx.env.timeout(CLIENT_STOP_SECONDS)
        if plugin.running:
            plugin.stop(PAUSED)
        busy = kl.dm.pod_devices if kl.dm is not None else {}
        if self.failures_pending:
            self.failures_pending -= 1
            yield self.ctx.env.timeout(APPLY_SECONDS)
            self._fail(wanted, RESET_REQUIRED)
            self._set_labels(**{DEPLOY_PLUGIN_LABEL: "true"})
            if kl.up and kl.dm is not None:
                plugin.start(kl.dm)
            return
        if any(busy.values()):
            yield self.ctx.env.timeout(APPLY_SECONDS)
            self._fail(wanted, "nvidia-smi mig: In use by another client (GPU workloads are still running)")
            self._set_labels(**{DEPLOY_PLUGIN_LABEL: "true"})
            if kl.up and kl.dm is not None:
                plugin.start(kl.dm)
            return
        yield self.ctx.env.timeout(APPLY_SECONDS)
        self._trace("apply", f"applied MIG configuration {wanted}")
        self.layouts = layouts
        kl.reconfigure_mig(layouts, self.strategy)
        labels: dict[str, Optional[str]] = {k: None for k in self.ctx.api.get("Node", "", self.node).metadata.labels
                                            if k.startswith("nvidia.com/mig-") or k == "nvidia.com/mig.strategy"}
        if self.strategy != "none" and any(g.mig_enabled for g in layouts):
            labels.update(mig.gfd_labels(self.strategy, model, layouts))
        else:
            from .labels import gfd_labels
            labels.update(gfd_labels(model, count))
        labels.update({DEPLOY_PLUGIN_LABEL: "true", STATE_LABEL: "success"})
        node = self._set_labels(**labels)
        self._trace("set_state", "success")
        self.ctx.event(node, NORMAL, "MigConfigApplied", f"Applied MIG config {wanted}", SOURCE)
        self.applied, self.busy = wanted, False
