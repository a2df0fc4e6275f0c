"""What every component of one simulation shares: clock, apiserver, recorder, trace, seeded RNG, timing."""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import simpy

from .apiserver import APIServer
from .events import EventRecorder
from .trace import Trace


@dataclass
class Timing:
    """Resolved latencies in seconds (see gpusim.api.gpusim_v1alpha1.Timing for the YAML names).

    - grpc_latency: one kubelet ↔ device-plugin RPC (unix-socket gRPC: sub-millisecond upstream).
    - container_start: admission → containers running (image present; sandbox + create + start).
    - node_status_update_frequency: kubelet --node-status-update-frequency, upstream default 10s.
    - device_plugin_restart_delay: gpusim's own default, not an upstream constant. Upstream the NVIDIA plugin
      restarts at once when fsnotify reports kubelet.sock re-created (cmd/nvidia-device-plugin/main.go);
      this delay stands for the restart itself until Register reaches the kubelet (stop the gRPC servers,
      reload the config, NVML init and device discovery, serve the sockets again), during which the
      restarted kubelet has no healthy device of the plugin.
    - driver_load: gpusim's default for the driver container's build and load (``nvidia-driver init``:
      kernel module build or precompiled load); the startup probe (initialDelaySeconds 60, period 10) then
      sees it ready at its next probe.
    - toolkit_setup: gpusim's default for the toolkit container to install and configure the runtime and
      restart containerd.
    """

    grpc_latency: float = 0.001
    container_start: float = 1.0
    node_status_update_frequency: float = 10.0
    device_plugin_restart_delay: float = 5.0
    driver_load: float = 120.0
    toolkit_setup: float = 10.0


@dataclass
class Holding:
    """A device held by a pod on a node over [start, end) (end None = still held); ``gpu`` is the index of the
    physical GPU behind the device (None when unknown)."""

    node: str
    resource: str
    device: str
    namespace: str
    pod: str
    start: float
    end: float | None = None
    gpu: int | None = None


@dataclass
class Context:
    env: simpy.Environment
    api: APIServer
    recorder: EventRecorder
    trace: Trace
    rng: random.Random
    timing: Timing = field(default_factory=Timing)
    daemon_pending: list[int] = field(default_factory=lambda: [0])
    holdings: list[Holding] = field(default_factory=list)
    training: Any = None   # gpusim.workloads.training.TrainingCoordinator, created on first use
    topology: Any = None   # gpusim.hardware.cluster.ClusterTopology: boards, GPU UUIDs, fabric
    feature_gates: dict = field(default_factory=dict)   # the components' --feature-gates (set and defaulted)
    _open: dict = field(default_factory=dict, repr=False)
    _open_by_pod: dict = field(default_factory=dict, repr=False)   # pod uid → its open holdings

    def hold(self, node: str, resource: str, device: str, pod, gpu: int | None = None) -> None:
        key = (node, device, pod.metadata.uid)
        if key not in self._open:
            h = Holding(node, resource, device, pod.metadata.namespace, pod.metadata.name, self.env.now, gpu=gpu)
            self._open[key] = h
            self._open_by_pod.setdefault(pod.metadata.uid, []).append(h)
            self.holdings.append(h)

    def release(self, pod) -> None:
        uid = pod.metadata.uid
        for h in self._open_by_pod.pop(uid, ()):
            self._open.pop((h.node, h.device, uid)).end = self.env.now

    def held_by(self, pod_uid: str) -> list[Holding]:
        """The devices ``pod_uid`` holds now."""
        return list(self._open_by_pod.get(pod_uid, ()))

    @property
    def now(self) -> float:
        return self.env.now

    def event(self, obj, type_: str, reason: str, message: str, source: str) -> None:
        self.recorder.record(self.env.now, obj, type_, reason, message, source)

    def daemon_timeout(self, delay: float) -> simpy.Timeout:
        """A timer of periodic housekeeping: the simulation may end while only such timers remain."""
        self.daemon_pending[0] += 1
        t = self.env.timeout(delay)
        t.callbacks.append(lambda _e: self.daemon_pending.__setitem__(0, self.daemon_pending[0] - 1))
        return t
