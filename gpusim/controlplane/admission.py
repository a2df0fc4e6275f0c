"""The admission plugins that change a pod on create (mirrors plugin/pkg/admission/priority and
defaulttolerationseconds, plus the core/v1 defaults of pkg/apis/core/v1/defaults.go)."""
from __future__ import annotations

from ..api.core_v1 import DEFAULT_SCHEDULER_NAME, Pod, Toleration
from ..api.scheduling_v1 import PriorityClass



def admit_pod(pod: Pod, classes: dict[str, PriorityClass], system: dict[str, int]) -> None:
    s = pod.spec
    # registry/core/pod/strategy.go PrepareForCreate: a new pod's status starts at phase Pending.
    pod.status.phase = pod.status.phase or "Pending"
    s.scheduler_name = s.scheduler_name or DEFAULT_SCHEDULER_NAME
    s.restart_policy = s.restart_policy or "Always"
    if s.termination_grace_period_seconds is None:
        s.termination_grace_period_seconds = 30
    for c in [*s.init_containers, *s.containers]:   # limits default the requests
        for k, v in c.resources.limits.items():
            c.resources.requests.setdefault(k, v)
    # Priority admission: the class's value, or the global default, or 0.
    if s.priority_class_name:
        pc = classes.get(s.priority_class_name)
        s.priority = pc.value if pc is not None else system[s.priority_class_name]
        if s.preemption_policy is None:
            s.preemption_policy = (pc.preemption_policy if pc is not None else None) or "PreemptLowerPriority"
    else:
        default = next((c for c in classes.values() if c.global_default), None)
        if default is not None:
            s.priority_class_name, s.priority = default.metadata.name, default.value
            s.preemption_policy = s.preemption_policy or default.preemption_policy or "PreemptLowerPriority"
        else:
            s.priority = 0
            s.preemption_policy = s.preemption_policy or "PreemptLowerPriority"
    # DefaultTolerationSeconds: tolerate not-ready/unreachable NoExecute for 300s.
    for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
        if not any(t.key == key and t.effect in ("", "NoExecute") for t in s.tolerations):
            s.tolerations.append(Toleration(key=key, operator="Exists", effect="NoExecute", toleration_seconds=300))
