"""PrioritySort (plugins/queuesort/priority_sort.go): higher priority first, then earlier timestamp."""
from __future__ import annotations

from ..framework import QueuedPodInfo

NAME = "PrioritySort"


def pod_priority(pod) -> int:
    """corev1helpers.PodPriority: spec.priority, 0 when unset."""
    return pod.spec.priority or 0


class PrioritySort:
    name = NAME

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        pa, pb = pod_priority(a.pod), pod_priority(b.pod)
        return pa > pb or (pa == pb and a.timestamp < b.timestamp)


def new(args: dict | None = None, handle=None) -> PrioritySort:
    return PrioritySort()
