"""What the GPU Operator's operand containers do on a node's host (mirrors the operand images the
DaemonSets of NVIDIA/gpu-operator assets/ run: the driver container's ``nvidia-driver init``,
nvidia-container-toolkit, cmd/nvidia-validator, the device plugin, GFD, dcgm-exporter, mig-manager).

The kubelet admits an operand pod like any other and hands it here; each container runs by its name:

- ``k8s-driver-manager`` returns at once (no driver to uninstall); ``nvidia-driver-ctr`` builds and loads
  the kernel module for ``timing.driverLoad`` (default 2m), writes ``.driver-ctr-ready``, and becomes ready at
  its startup probe's next period (initialDelaySeconds 60, periodSeconds 10);
- ``driver-validation`` (nvidia-validator, WITH_WAIT) runs ``nvidia-smi`` every 5 s until the driver is
  loaded (``command failed, retrying after 5 seconds``), then writes ``driver-ready``;
- ``nvidia-container-toolkit-ctr`` configures containerd's ``nvidia`` runtime handlers in
  ``timing.toolkitSetup`` (default 10s);
- the validator's ``toolkit-validation`` writes ``toolkit-ready`` when the runtime is configured and exits 1
  otherwise (WITH_WAIT=false: the kubelet restarts it with back-off); ``cuda-validation`` runs the CUDA
  sample for 5 s (``cuda-ready``); ``plugin-validation`` waits up to 30 × 5 s for the node to advertise GPUs,
  else exits with ``GPU resources are not discovered by the node``, then writes ``plugin-ready``;
- every other operand's ``toolkit-validation`` loops ``until [ -f /run/nvidia/validations/toolkit-ready ]``
  printing ``waiting for nvidia container stack to be setup`` every 5 s;
- ``nvidia-device-plugin`` starts the plugin (Register with the kubelet); ``gpu-feature-discovery`` writes
  the GFD labels on a node that joined bare; ``nvidia-mig-manager`` starts mig-manager there; the DCGM
  exporter's running time is what ``gpusim metrics`` can scrape.

Crashing containers restart with the kubelet's back-off (10 s doubling to 5 m, CrashLoopBackOff). The host's
state (loaded driver, validation files, runtime handlers) is lost on power-off; ``/run`` is a tmpfs.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, Generator, Optional

import simpy

from ..api.core_v1 import (ContainerState, ContainerStateRunning, ContainerStateTerminated, ContainerStateWaiting,
                           ContainerStatus, Pod)
from ..api.nvidia_operands import (CUDA_READY, DEPLOY_PREFIX, DRIVER_CTR_READY, DRIVER_READY, MSG_NO_GPU_RESOURCES, MSG_RETRY,
                                   MSG_VALIDATED, MSG_WAIT_STACK, MSG_WAIT_TOOLKIT, PAUSED_VALUES, PLUGIN_READY,
                                   PLUGIN_VALIDATION_RETRIES, RUNTIME_HANDLERS, TOOLKIT_READY, VALIDATOR_SLEEP_SECONDS)
from ..componenthelpers.podutil import set_condition
from ..controlplane.events import NORMAL, WARNING

if TYPE_CHECKING:
    from .kubelet import Kubelet

ALL_FILES = (DRIVER_CTR_READY, DRIVER_READY, TOOLKIT_READY, CUDA_READY, PLUGIN_READY)
STARTUP_PROBE_DELAY, STARTUP_PROBE_PERIOD = 60.0, 10.0   # assets/state-driver startupProbe
CUDA_VALIDATION_SECONDS = 5.0                             # the cuda-vector-add sample (gpusim's figure)
CRASHLOOP_INITIAL, CRASHLOOP_MAX = 10.0, 300.0           # kubelet back-off (pkg/kubelet/container/helpers.go)
# the texts operand containers exit with when gpusim fails them
MSG_DRIVER_LOAD = "Unable to load the kernel module 'nvidia.ko'"                  # nvidia-installer
MSG_TOOLKIT = "unable to restart containerd: the nvidia runtime is not configured"  # gpusim's wording
MSG_NVML = "could not load NVML library: libnvidia-ml.so.1: cannot open shared object file: No such file or directory"
DRIVER_FAULT, TOOLKIT_FAULT, PLUGIN_FAULT, RUNTIME_FAULT = ("DriverFailure", "ToolkitFailure", "DevicePluginCrash",
                                                          "RuntimeClassMissing")


class OperandHost:
    """The host side of the operand pods on one GPU node."""

    def __init__(self, kubelet: "Kubelet", up: bool, host_driver: bool = False,
                 gfd_labels: Optional[dict[str, str]] = None):
        self.kl, self.ctx = kubelet, kubelet.ctx
        self.node = kubelet.node_name
        self.host_driver = host_driver                     # driver.enabled=false: a preinstalled driver
        self.files: set[str] = set(ALL_FILES) if up else set()
        self.driver_loaded = up or host_driver
        kubelet.runtime.missing_handlers = set() if up else set(RUNTIME_HANDLERS)
        self.gfd_labels = gfd_labels                       # written by GFD's first run (None: already there)
        self.mig_manager_factory: Optional[Callable[[], Any]] = None
        self.pending_xids: list[tuple[int, int]] = []      # XIDs reported before the plugin first started
        self.failures: dict[str, list[tuple[float, float]]] = {}
        self.logs: list[tuple[float, str, str, str]] = []  # (time, pod, container, line): kubectl logs
        self.exporter: list[tuple[float, Optional[float]]] = []   # dcgm-exporter running intervals
        self._procs: dict[str, int] = {}                    # pod uid → generation of its running process
        self._gen = 0
        self._main: dict[tuple[str, str], simpy.Event] = {} # (pod uid, container) → ends the running container
        self._waiters: dict[int, float] = {}                # polling loops → their next check
        self._poll_seq = 0
        self._plugin_pod: Optional[Pod] = None

    # --- faults ------------------------------------------------------------------------------------------
    def add_failure(self, kind: str, start: float, end: float) -> None:
        self.failures.setdefault(kind, []).append((start, end))

    def failing(self, kind: str) -> bool:
        now = self.ctx.now
        return any(a <= now < b for a, b in self.failures.get(kind, ()))

    def _timeout(self, delay: float) -> simpy.Timeout:
        """A crash-loop wait: housekeeping (the run may end meanwhile) unless a fault with a downtime ended or
        ends within the back-off ceiling, so the restart that recovers still happens."""
        now = self.ctx.now
        transient = any(b != math.inf and b > now - CRASHLOOP_MAX for w in self.failures.values() for _, b in w)
        return self.ctx.env.timeout(delay) if transient else self.ctx.daemon_timeout(delay)

    def _failure_end(self, kind: str) -> float:
        now = self.ctx.now
        return max((b for a, b in self.failures.get(kind, ()) if a <= now < b), default=now)

    def driver_failed(self) -> None:
        """DriverFailure on a node that is up: the driver container restarts and cannot load the module; the
        plugin loses NVML (internal/rm/health.go: an NVML error marks every device unhealthy)."""
        self.driver_loaded = self.host_driver and not self.failing(DRIVER_FAULT)
        if not self.driver_loaded:
            self.files.difference_update({DRIVER_CTR_READY, DRIVER_READY})
        self._crash_container("nvidia-driver-ctr", MSG_DRIVER_LOAD)
        plugin = self.kl.plugin
        if plugin is not None and plugin.running and not self.driver_loaded:
            plugin.nvml_lost(MSG_NVML)

    def toolkit_failed(self) -> None:
        """ToolkitFailure on a node that is up: the toolkit container crashes, the runtime config is reverted."""
        self.kl.runtime.missing_handlers |= set(RUNTIME_HANDLERS)
        self.files.discard(TOOLKIT_READY)
        self._crash_container("nvidia-container-toolkit-ctr", MSG_TOOLKIT)

    def runtime_handler_missing(self, until: float) -> None:
        self.add_failure(RUNTIME_FAULT, self.ctx.now, until)
        self.kl.runtime.missing_handlers.add("nvidia")

    def runtime_handler_restored(self) -> None:
        """The fault's downtime is over: containerd has the handler again if the toolkit had configured it."""
        missing = self.kl.runtime.missing_handlers
        if not self.failing(RUNTIME_FAULT) and "nvidia-cdi" not in missing:
            missing.discard("nvidia")

    def crash_plugin(self, downtime: float) -> Generator:
        """DevicePluginCrash: the plugin container exits; the kubelet starts it again after ``downtime``."""
        self._crash_container("nvidia-device-plugin", "crashed", delay=downtime)
        yield self.ctx.env.timeout(downtime)

    def _crash_container(self, name: str, message: str, delay: Optional[float] = None) -> None:
        for (uid, cname), ev in list(self._main.items()):
            if cname == name and not ev.triggered:
                ev.succeed((1, message, delay))

    # --- pods --------------------------------------------------------------------------------------------
    def plugin_container_running(self) -> bool:
        return any(c == "nvidia-device-plugin" and not ev.triggered for (_, c), ev in self._main.items())

    def adopt(self, pod: Pod) -> None:
        """A pod whose containers have run since before t=0 (Nodes present at the start)."""
        uid = pod.metadata.uid
        self._gen += 1
        self._procs[uid] = self._gen
        for i, c in enumerate(pod.spec.containers):
            self._main[(uid, c.name)] = simpy.Event(self.ctx.env)
            self.kl.runtime.start(uid, c.name, None, 0, lambda rec: None)
            if c.name == "nvidia-dcgm-exporter":
                self.exporter.append((self.ctx.now, None))
            if c.name == "nvidia-device-plugin":
                self._plugin_pod = pod
            self.ctx.env.process(self._run_main(pod, i, self._gen, adopted=True))

    def run(self, pod: Pod) -> None:
        uid = pod.metadata.uid
        if uid in self._procs:
            return   # still running (a restarted kubelet re-admits it)
        self._gen += 1
        self._procs[uid] = self._gen
        self.ctx.env.process(self._run_pod(pod, self._gen))

    def pod_deleted(self, pod: Pod) -> None:
        """The DaemonSet controller deleted the pod (its deploy label is no longer ``true``)."""
        uid = pod.metadata.uid
        self._procs.pop(uid, None)
        for c in pod.spec.containers:
            ev = self._main.pop((uid, c.name), None)
            if ev is not None and not ev.triggered:
                ev.succeed(None)
            if c.name == "nvidia-device-plugin":
                self._stop_plugin_for_deletion()
            if c.name == "nvidia-dcgm-exporter":
                self._exporter_stopped()

    def _host_driver_selected(self) -> bool:
        """A node relabelled ``nvidia.com/gpu.deploy.driver`` to anything but ``true`` loses its driver pod; the
        validator's driver-validation then checks the host's own driver (cmd/nvidia-validator validateDriver:
        ``chroot /`` when /run/nvidia/driver is absent), which gpusim takes as preinstalled."""
        node = self.ctx.api.get("Node", "", self.node)
        return node is not None and node.metadata.labels.get(DEPLOY_PREFIX + "driver", "true") != "true"

    def power_off(self) -> None:
        self.files.clear()
        self.driver_loaded = self.host_driver
        self._procs.clear()
        for ev in self._main.values():
            if not ev.triggered:
                ev.succeed(None)
        self._main.clear()
        self._exporter_stopped()

    def _alive(self, pod: Pod, gen: int) -> bool:
        return self._procs.get(pod.metadata.uid) == gen and not self.kl.node_down

    def _stop_plugin_for_deletion(self) -> None:
        plugin = self.kl.plugin
        node = self.ctx.api.get("Node", "", self.node)
        paused = node is not None and node.metadata.labels.get("nvidia.com/gpu.deploy.device-plugin") in PAUSED_VALUES
        if plugin is not None and plugin.running and not paused:   # mig-manager stops it itself when pausing
            plugin.stop("pod deleted")
        self._plugin_pod = None

    def _exporter_stopped(self) -> None:
        if self.exporter and self.exporter[-1][1] is None:
            self.exporter[-1] = (self.exporter[-1][0], self.ctx.now)

    # --- the pod's life ----------------------------------------------------------------------------------------
    def _run_pod(self, pod: Pod, gen: int) -> Generator:
        ctx, st = self.ctx, pod.status
        st.phase, st.host_ip, st.start_time, st.reason, st.message = "Pending", self.node, ctx.now, "", ""
        st.init_container_statuses = [ContainerStatus(c.name, image=c.image, state=ContainerState(
            waiting=ContainerStateWaiting("PodInitializing"))) for c in pod.spec.init_containers]
        st.container_statuses = [ContainerStatus(c.name, image=c.image, state=ContainerState(
            waiting=ContainerStateWaiting("PodInitializing"))) for c in pod.spec.containers]
        if pod.spec.init_containers:
            set_condition(st.conditions, "Initialized", "False", ctx.now, "ContainersNotInitialized",
                          "containers with incomplete status: [" + " ".join(c.name for c in pod.spec.init_containers)
                          + "]")
        set_condition(st.conditions, "Ready", "False", ctx.now, "ContainersNotReady", "containers with unready "
                      "status: [" + " ".join(c.name for c in pod.spec.containers) + "]")
        ctx.api.update(pod)
        for i, c in enumerate(pod.spec.init_containers):
            cs = st.init_container_statuses[i]
            while True:
                yield ctx.env.timeout(ctx.timing.container_start)
                if not self._alive(pod, gen):
                    return
                self._started(pod, cs, c)
                result = yield from self._program(pod, c.name, gen)
                if not self._alive(pod, gen):
                    return
                code, message, _ = result
                cs.state = ContainerState(terminated=ContainerStateTerminated(
                    code, "Completed" if code == 0 else "Error", message, cs.state.running.started_at, ctx.now))
                if code == 0:
                    cs.ready = True
                    ctx.api.update(pod)
                    break
                yield from self._back_off(pod, cs, None, gen)
                if not self._alive(pod, gen):
                    return
        set_condition(st.conditions, "Initialized", "True", ctx.now)
        set_condition(st.conditions, "PodReadyToStartContainers", "True", ctx.now)
        for cs in st.container_statuses:
            cs.state = ContainerState(waiting=ContainerStateWaiting("ContainerCreating"))
        ctx.api.update(pod)
        for i, c in enumerate(pod.spec.containers):
            ctx.env.process(self._run_main(pod, i, gen))

    def _run_main(self, pod: Pod, i: int, gen: int, adopted: bool = False) -> Generator:
        """One app container: start, run its program, and after a crash back off and start again. An adopted
        container (running since before t=0) only waits for a crash first."""
        ctx, c = self.ctx, pod.spec.containers[i]
        cs = pod.status.container_statuses[i]
        while True:
            if adopted:
                adopted = False
                rec = self.kl.runtime.containers[(pod.metadata.uid, c.name)]
                result = yield self._main[(pod.metadata.uid, c.name)]
                plugin = self.kl.plugin
                if result is not None and c.name == "nvidia-device-plugin" and plugin is not None and plugin.running:
                    plugin.stop(result[1])
            else:
                yield ctx.env.timeout(ctx.timing.container_start)
                if not self._alive(pod, gen):
                    return
                ev = self._main[(pod.metadata.uid, c.name)] = simpy.Event(ctx.env)
                rec = self.kl.runtime.start(pod.metadata.uid, c.name, None, 0, lambda rec: None)
                self._started(pod, cs, c, ready=c.name not in ("nvidia-driver-ctr", "nvidia-container-toolkit-ctr"))
                pod.status.phase = "Running"
                self._update_ready(pod)
                result = yield from self._program(pod, c.name, gen, ev)
            if result is None or not self._alive(pod, gen):
                return
            code, message, delay = result
            self.kl.runtime.kill(rec)
            if c.name == "nvidia-dcgm-exporter":
                self._exporter_stopped()
            cs.ready = False
            cs.state = ContainerState(terminated=ContainerStateTerminated(
                code, "Error", message, cs.state.running.started_at if cs.state.running else ctx.now, ctx.now))
            self._update_ready(pod)
            yield from self._back_off(pod, cs, delay, gen)
            if not self._alive(pod, gen):
                return

    def _started(self, pod: Pod, cs: ContainerStatus, c: Any, ready: bool = False) -> None:
        ctx = self.ctx
        if cs.restart_count == 0:
            ctx.event(pod, NORMAL, "Pulled", f'Container image "{c.image}" already present on machine', "kubelet")
        ctx.event(pod, NORMAL, "Created", f"Created container: {c.name}", "kubelet")
        ctx.event(pod, NORMAL, "Started", f"Started container {c.name}", "kubelet")
        ctx.trace.add(ctx.now, self.kl.component, "kuberuntime.(*kubeGenericRuntimeManager).startContainer",
                      f"Pod {pod.metadata.namespace}/{pod.metadata.name}", "Success", container=c.name)
        cs.state = ContainerState(running=ContainerStateRunning(ctx.now))
        cs.started, cs.ready = True, ready
        ctx.api.update(pod)

    def _update_ready(self, pod: Pod) -> None:
        st, now = pod.status, self.ctx.now
        if all(c.ready for c in st.container_statuses):
            set_condition(st.conditions, "Ready", "True", now)
            set_condition(st.conditions, "ContainersReady", "True", now)
        else:
            unready = "containers with unready status: [" + " ".join(
                c.name for c in st.container_statuses if not c.ready) + "]"
            set_condition(st.conditions, "Ready", "False", now, "ContainersNotReady", unready)
            set_condition(st.conditions, "ContainersReady", "False", now, "ContainersNotReady", unready)
        self.ctx.api.update(pod)

    def _back_off(self, pod: Pod, cs: ContainerStatus, delay: Optional[float], gen: int) -> Generator:
        """kubelet doBackOff: 10 s doubling to 5 m (or the fault's downtime), as CrashLoopBackOff."""
        ctx = self.ctx
        wait = delay if delay is not None else min(CRASHLOOP_INITIAL * 2 ** cs.restart_count, CRASHLOOP_MAX)
        ctx.event(pod, WARNING, "BackOff", f"Back-off restarting failed container {cs.name} in pod "
                  f"{pod.metadata.name}_{pod.metadata.namespace}({pod.metadata.uid})", "kubelet")
        cs.last_state = cs.state
        cs.state = ContainerState(waiting=ContainerStateWaiting(
            "CrashLoopBackOff", f"back-off {int(wait)}s restarting failed container={cs.name} "
            f"pod={pod.metadata.name}_{pod.metadata.namespace}({pod.metadata.uid})"))
        ctx.api.update(pod)
        yield self._timeout(wait) if delay is None else ctx.env.timeout(wait)
        cs.restart_count += 1

    # --- polling ---------------------------------------------------------------------------------------------
    def _log(self, pod: Pod, container: str, line: str) -> None:
        self.logs.append((self.ctx.now, pod.metadata.name, container, line))

    def _poll(self) -> Generator:
        """One 5 s sleep of a polling loop; it ends the simulation only if nothing else would wake the loop."""
        self._poll_seq += 1
        key = self._poll_seq
        self._waiters[key] = self.ctx.now + VALIDATOR_SLEEP_SECONDS
        yield self.ctx.daemon_timeout(VALIDATOR_SLEEP_SECONDS)
        self._waiters.pop(key, None)

    def kick(self) -> None:
        """Host state changed: keep the clock alive until every polling loop has looked again."""
        if self._waiters:
            self.ctx.env.timeout(max(0.0, max(self._waiters.values()) - self.ctx.now))

    def _write(self, name: str) -> None:
        if name not in self.files:
            self.files.add(name)
            self.ctx.trace.add(self.ctx.now, f"nvidia-validator/{self.node}", "main.(*Component).validate",
                               f"Node {self.node}", f"created /run/nvidia/validations/{name}")
            self.kick()

    # --- what each container runs --------------------------------------------------------------------------------
    def _program(self, pod: Pod, name: str, gen: int, ev: Optional[simpy.Event] = None) -> Generator:
        """Runs container ``name``; returns (exit code, message, restart delay or None), or None when the
        container was stopped from outside (pod deleted, power off)."""
        ctx = self.ctx
        alive = lambda: self._alive(pod, gen)   # noqa: E731
        if name in ("k8s-driver-manager", "config-manager-init"):
            return 0, "", None
        if name == "nvidia-driver-ctr":
            failing = self.failing(DRIVER_FAULT)
            if failing:
                yield self._timeout(STARTUP_PROBE_DELAY)
                return (1, MSG_DRIVER_LOAD, None) if alive() else None
            yield ctx.env.timeout(ctx.timing.driver_load)
            if not alive():
                return None
            self.driver_loaded = True
            self.files.add(DRIVER_CTR_READY)
            self.kick()
            start = pod.status.container_statuses[0].state.running.started_at
            probe = start + STARTUP_PROBE_DELAY + max(0.0, math.ceil((ctx.now - start - STARTUP_PROBE_DELAY)
                                                                     / STARTUP_PROBE_PERIOD)) * STARTUP_PROBE_PERIOD
            ctx.env.process(self._probe_ready(pod, 0, max(0.0, probe - ctx.now), gen))
            return (yield ev)
        if name == "driver-validation":
            while not self.driver_loaded:
                if self._host_driver_selected():
                    self.driver_loaded = True
                    break
                self._log(pod, name, "running command chroot with args [/run/nvidia/driver nvidia-smi]")
                self._log(pod, name, MSG_RETRY)
                yield from self._poll()
                if not alive():
                    return None
            self._write(DRIVER_READY)
            return 0, "", None
        if name == "nvidia-container-toolkit-ctr":
            yield ctx.env.timeout(ctx.timing.toolkit_setup) if not self.failing(TOOLKIT_FAULT) else \
                self._timeout(ctx.timing.toolkit_setup)
            if not alive():
                return None
            if self.failing(TOOLKIT_FAULT):
                return 1, MSG_TOOLKIT, None
            missing = self.kl.runtime.missing_handlers
            missing.difference_update(RUNTIME_HANDLERS)
            if self.failing(RUNTIME_FAULT):
                missing.add("nvidia")
            self.kick()
            pod.status.container_statuses[0].ready = True
            self._update_ready(pod)
            return (yield ev)
        if name == "toolkit-validation" and pod.metadata.labels.get("app") == "nvidia-operator-validator":
            if "nvidia" in self.kl.runtime.missing_handlers or not self.driver_loaded:
                self._log(pod, name, 'failed to validate the toolkit: no runtime for "nvidia" is configured')
                return 1, 'no runtime for "nvidia" is configured', None
            self._write(TOOLKIT_READY)
            return 0, "", None
        if name == "toolkit-validation":
            msg = MSG_WAIT_TOOLKIT if pod.metadata.labels.get("app") == "nvidia-mig-manager" else MSG_WAIT_STACK
            while TOOLKIT_READY not in self.files:
                self._log(pod, name, msg)
                yield from self._poll()
                if not alive():
                    return None
            return 0, "", None
        if name == "cuda-validation":
            yield ctx.env.timeout(CUDA_VALIDATION_SECONDS)
            if not alive():
                return None
            self._write(CUDA_READY)
            return 0, "", None
        if name == "plugin-validation":
            for _ in range(PLUGIN_VALIDATION_RETRIES):
                if self._gpus_advertised():
                    yield ctx.env.timeout(CUDA_VALIDATION_SECONDS)
                    if not alive():
                        return None
                    self._write(PLUGIN_READY)
                    return 0, "", None
                yield from self._poll()
                if not alive():
                    return None
            self._log(pod, name, MSG_NO_GPU_RESOURCES)
            return 1, MSG_NO_GPU_RESOURCES, None
        if name == "nvidia-operator-validator":
            self._log(pod, name, MSG_VALIDATED)
            return (yield ev)
        if name == "nvidia-device-plugin":
            return (yield from self._device_plugin(pod, ev, alive))
        if name == "gpu-feature-discovery" and self.gfd_labels:
            node = ctx.api.get("Node", "", self.node)
            node.metadata.labels.update(self.gfd_labels)
            self.gfd_labels = None
            ctx.api.update(node)
        if name == "nvidia-mig-manager" and self.mig_manager_factory is not None:
            factory, self.mig_manager_factory = self.mig_manager_factory, None
            factory()
        if name == "nvidia-dcgm-exporter":
            self.exporter.append((ctx.now, None))
        return (yield ev)

    def _probe_ready(self, pod: Pod, i: int, delay: float, gen: int) -> Generator:
        yield self.ctx.env.timeout(delay)
        if self._alive(pod, gen) and pod.status.container_statuses[i].state.running is not None:
            pod.status.container_statuses[i].ready = True
            self._update_ready(pod)

    def _device_plugin(self, pod: Pod, ev: simpy.Event, alive: Callable[[], bool]) -> Generator:
        kl, plugin = self.kl, self.kl.plugin
        if not self.driver_loaded:
            self._log(pod, "nvidia-device-plugin", MSG_NVML)
            return 1, MSG_NVML, None
        if self.failing(PLUGIN_FAULT):
            return 1, "crashed", max(0.0, self._failure_end(PLUGIN_FAULT) - self.ctx.now)
        self._plugin_pod = pod
        if plugin is not None and not plugin.running and kl.up and kl.dm is not None:
            plugin.start(kl.dm)
            for gpu, xid in self.pending_xids:
                plugin.xid_event(gpu, xid)
            self.pending_xids.clear()
        result = yield ev
        if result is not None and plugin is not None and plugin.running:
            plugin.stop(result[1])
        return result

    def _gpus_advertised(self) -> bool:
        node = self.ctx.api.get("Node", "", self.node)
        return node is not None and any((k == "nvidia.com/gpu" or k.startswith("nvidia.com/mig-")) and v not in ("0", "")
                                        for k, v in node.status.allocatable.items())
