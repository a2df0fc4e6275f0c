"""The container runtime on a node (what containerd keeps while the kubelet restarts).

A container runs for the pod's ``gpusim.io/duration`` and exits with ``gpusim.io/exit-code``
(default 0); without a duration it runs until the simulation ends. ``fail`` stops one early with an
exit code and message (the GPU memory model's ``CUDA error: out of memory``). Every way a container
stops is reported to ``on_stop`` listeners, so per-container resources (GPU memory) are released.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Generator, Optional

import simpy


@dataclass
class ContainerRecord:
    pod_uid: str
    name: str
    started_at: float
    finished_at: Optional[float] = None
    exit_code: Optional[int] = None
    killed: bool = False
    message: str = ""
    on_exit: Optional[Callable[["ContainerRecord"], None]] = field(default=None, repr=False, compare=False)
    timer: Any = field(default=None, repr=False, compare=False)   # the pending exit of a duration


class Runtime:
    def __init__(self, env: simpy.Environment, daemon_pending: Optional[list[int]] = None):
        self.env = env
        self.daemon_pending = daemon_pending   # Context.daemon_pending: see fail()
        self.containers: dict[tuple[str, str], ContainerRecord] = {}
        self.history: list[ContainerRecord] = []   # every container run, restarts included (what DCGM saw busy)
        self._by_pod: dict[str, dict[str, ContainerRecord]] = {}   # pod uid → container name → record
        self.alive = True
        self.on_stop: list[Callable[[ContainerRecord], None]] = []
        # RuntimeClass handlers containerd lacks (the NVIDIA toolkit configures nvidia, nvidia-cdi, nvidia-legacy)
        self.missing_handlers: set[str] = set()

    def running(self, pod_uid: str) -> bool:
        return any(c.finished_at is None for c in self._by_pod.get(pod_uid, {}).values())

    def pod_containers(self, pod_uid: str) -> list[ContainerRecord]:
        """The latest record of each container of a pod."""
        return list(self._by_pod.get(pod_uid, {}).values())

    def start(self, pod_uid: str, name: str, duration: Optional[float], exit_code: int,
              on_exit: Callable[[ContainerRecord], None]) -> ContainerRecord:
        rec = ContainerRecord(pod_uid, name, self.env.now, on_exit=on_exit)
        self.history.append(rec)
        self.containers[(pod_uid, name)] = rec
        self._by_pod.setdefault(pod_uid, {})[name] = rec
        if duration is not None:
            self.env.process(self._run(rec, duration, exit_code, on_exit))
        return rec

    def _run(self, rec: ContainerRecord, duration: float, exit_code: int,
             on_exit: Callable[[ContainerRecord], None]) -> Generator:
        if rec.finished_at is not None:   # failed before its process began
            return
        rec.timer = self.env.timeout(duration)
        yield rec.timer
        if rec.finished_at is not None or not self.alive:
            return
        rec.finished_at, rec.exit_code = self.env.now, exit_code
        self._stopped(rec)
        on_exit(rec)

    def _stopped(self, rec: ContainerRecord) -> None:
        for listener in self.on_stop:
            listener(rec)

    def fail(self, pod_uid: str, name: str, exit_code: int, message: str) -> None:
        """The process dies now (e.g. CUDA out of memory); the kubelet sees the exit."""
        rec = self.containers.get((pod_uid, name))
        if rec is None or rec.finished_at is not None or not self.alive:
            return
        rec.finished_at, rec.exit_code, rec.message = self.env.now, exit_code, message
        timer, pending = rec.timer, self.daemon_pending
        if timer is not None and not timer.processed and pending is not None:
            # the planned exit will be ignored: it must not keep a finished simulation running
            pending[0] += 1
            timer.callbacks.append(lambda _e: pending.__setitem__(0, pending[0] - 1))
        self._stopped(rec)
        if rec.on_exit is not None:
            rec.on_exit(rec)

    def kill(self, rec: ContainerRecord) -> None:
        """SIGKILL (pod deleted): exit 137, no exit callback."""
        if rec.finished_at is None:
            rec.finished_at, rec.exit_code, rec.killed = self.env.now, 137, True
            self._stopped(rec)

    def kill_all(self) -> None:
        """Power loss: every container stops with the node."""
        self.alive = False
        for rec in self.containers.values():
            if rec.finished_at is None:
                rec.finished_at, rec.exit_code, rec.killed = self.env.now, 137, True
                self._stopped(rec)
