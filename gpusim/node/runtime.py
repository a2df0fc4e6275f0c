"""The container runtime on a node (what containerd keeps while the kubelet restarts).

A container runs for the pod's ``gpusim.io/duration`` and exits with ``gpusim.io/exit-code``
(default 0); without a duration it runs until the simulation ends.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Generator, Optional

import simpy


@dataclass
class ContainerRecord:
    pod_uid: str
    name: str
    started_at: float
    finished_at: Optional[float] = None
    exit_code: Optional[int] = None
    killed: bool = False


class Runtime:
    def __init__(self, env: simpy.Environment):
        self.env = env
        self.containers: dict[tuple[str, str], ContainerRecord] = {}
        self.alive = True

    def running(self, pod_uid: str) -> bool:
        return any(c.pod_uid == pod_uid and c.finished_at is None for c in self.containers.values())

    def start(self, pod_uid: str, name: str, duration: Optional[float], exit_code: int,
              on_exit: Callable[[ContainerRecord], None]) -> ContainerRecord:
        rec = ContainerRecord(pod_uid, name, self.env.now)
        self.containers[(pod_uid, name)] = rec
        if duration is not None:
            self.env.process(self._run(rec, duration, exit_code, on_exit))
        return rec

    def _run(self, rec: ContainerRecord, duration: float, exit_code: int,
             on_exit: Callable[[ContainerRecord], None]) -> Generator:
        yield self.env.timeout(duration)
        if rec.finished_at is not None or not self.alive:
            return
        rec.finished_at, rec.exit_code = self.env.now, exit_code
        on_exit(rec)

    def kill_all(self) -> None:
        """Power loss: every container stops with the node."""
        self.alive = False
        for rec in self.containers.values():
            if rec.finished_at is None:
                rec.finished_at, rec.exit_code, rec.killed = self.env.now, 137, True
