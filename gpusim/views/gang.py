"""Helpers for the gang-scheduling chapter and lab: turn a scenario into a Coscheduling one, and
summarise what a training group did (reads records; never drives the simulation)."""
from __future__ import annotations

from typing import Optional

import yaml

POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"   # scheduler-plugins apis/scheduling/v1alpha1

# The profile of scheduler-plugins' sample config (manifests/coscheduling/scheduler-config.yaml):
# Coscheduling everywhere it implements an extension point, and as the only QueueSort.
COSCHEDULING_PROFILE = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler",
                  "plugins": {"multiPoint": {"enabled": [{"name": "Coscheduling"}]},
                              "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]}}}],
}


def with_coscheduling(text: str, group: str, min_member: int, timeout: Optional[int] = None,
                      args: Optional[dict] = None) -> str:
    """The scenario with a PodGroup ``group`` (minMember, scheduleTimeoutSeconds), every Job's pods
    labelled into it, and the Coscheduling profile (with ``args`` as its pluginConfig)."""
    docs = [d for d in yaml.safe_load_all(text) if d is not None]
    for d in docs:
        if d.get("kind") == "Job":
            meta = d["spec"]["template"].setdefault("metadata", {}) or {}
            d["spec"]["template"]["metadata"] = meta
            meta.setdefault("labels", {})[POD_GROUP_LABEL] = group
    profile = yaml.safe_load(yaml.safe_dump(COSCHEDULING_PROFILE))
    if args:
        profile["profiles"][0]["pluginConfig"] = [{"name": "Coscheduling", "args": dict(args)}]
    spec = {"minMember": min_member}
    if timeout is not None:
        spec["scheduleTimeoutSeconds"] = timeout
    pod_group = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                 "metadata": {"name": group}, "spec": spec}
    return yaml.safe_dump_all(docs + [profile, pod_group], sort_keys=False)


def training_summary(result) -> str:
    """One line per training group: first start, completion, GPU-hours held / useful / wasted."""
    from ..workloads.training import training_report
    lines = []
    for g in training_report(result):
        done = f"{g['completed_at']:.0f}s" if g["completed_at"] is not None else "not finished"
        start = f"{g['first_start']:.0f}s" if g["first_start"] is not None else "never"
        lines.append(f"{g['group']}: first worker t={start}, done t={done}, held {g['gpu_seconds_held'] / 3600:.2f} "
                     f"GPU-h, useful {g['gpu_seconds_useful'] / 3600:.2f}, wasted {g['wasted_gpu_hours']:.2f}")
    return "\n".join(lines)


def failed_scheduling(result, n: int = 3, contains: str = "") -> list[str]:
    """The first ``n`` FailedScheduling messages (optionally only those containing ``contains``)."""
    out = [f"t={e.time:g}s {e.object.name}: {e.message}" for e in result.events.log
           if e.reason == "FailedScheduling" and contains in e.message]
    return out[:n]
