"""Helpers for the gang-scheduling chapter and lab: turn a scenario into a Coscheduling one,
summarise what a training group did, follow a gang's pods through Permit (Coscheduling, or the
alpha native GangScheduling with ``workload=``, the PodGroup or 1.35 Workload), and list 1.36's pod group
scheduling cycles of a native gang (``pod_group_cycles``). Reads records; never drives the simulation."""
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


def with_native_gang_alpha(text: str, workload: str, min_count: int, kubernetes_version: str = "1.36") -> str:
    """**Alpha** native gang scheduling: the scenario with the feature gates GenericWorkload and GangScheduling
    on (in its Simulation, created if absent) and every Job's pods in one gang of ``gang.minCount``. Kubernetes
    1.36 (default): a ``scheduling.k8s.io/v1alpha2`` Workload ``workload`` with the pod group template
    ``workers``, the PodGroup ``workload`` made from it, and the pod templates' ``spec.schedulingGroup``.
    ``kubernetes_version="1.35"``: a ``v1alpha1`` Workload whose pod group ``workers`` has the policy, and
    ``spec.workloadRef``."""
    docs = [d for d in yaml.safe_load_all(text) if d is not None]
    sim = next((d for d in docs if d.get("kind") == "Simulation"), None)
    if sim is None:
        sim = {"apiVersion": "gpusim.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "native-gang"}}
        docs.insert(0, sim)
    spec = sim.setdefault("spec", {}) or {}
    sim["spec"] = spec
    spec["kubernetesVersion"] = kubernetes_version
    spec.setdefault("featureGates", {}).update({"GenericWorkload": True, "GangScheduling": True})
    policy = {"gang": {"minCount": min_count}}
    if kubernetes_version == "1.35":
        ref = {"workloadRef": {"name": workload, "podGroup": "workers"}}
        extra = [{"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload", "metadata": {"name": workload},
                  "spec": {"podGroups": [{"name": "workers", "policy": policy}]}}]
    else:
        ref = {"schedulingGroup": {"podGroupName": workload}}
        extra = [{"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload", "metadata": {"name": workload},
                  "spec": {"podGroupTemplates": [{"name": "workers", "schedulingPolicy": policy}]}},
                 {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": workload},
                  "spec": {"podGroupTemplateRef": {"workload": {"workloadName": workload,
                                                                "podGroupTemplateName": "workers"}},
                           "schedulingPolicy": policy}}]
    for d in docs:
        if d.get("kind") == "Job":
            d["spec"]["template"]["spec"].update(ref)
    return yaml.safe_dump_all(docs + extra, sort_keys=False)


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


# --- 1.36: a native gang's pod group scheduling cycles --------------------------------------------------------
def pod_group_cycles(result, pod_group: str = "", namespace: str = "default") -> list[dict]:
    """The pod group scheduling cycles of a 1.36 run (kube-scheduler schedule_one_podgroup.go), in time order;
    ``pod_group`` limits them to one PodGroup. Each: ``time``, ``pod_group`` ("ns/name"), ``pods`` (tried, in
    cycle order), ``placed`` (assumed in the cycle's snapshot), ``bound`` (sent to binding; 0 when the cycle
    undid the group), ``status`` (Success / Unschedulable / Error) and ``message``."""
    key = f"{namespace}/{pod_group}" if pod_group else ""
    return [{"time": c.time, "pod_group": c.pod_group, "pods": list(c.pods), "placed": c.assumed,
             "bound": c.scheduled, "status": c.status, "message": c.message}
            for c in getattr(result.scheduler, "pod_group_cycles", ()) if not key or c.pod_group == key]


def pod_group_cycle_summary(result, pod_group: str = "", namespace: str = "default", head: int = 3) -> str:
    """The cycles in a few lines: how many, the first ``head`` and the last, each as "t=…s: placed P of N, bound
    (or undone: message)"."""
    rows = pod_group_cycles(result, pod_group, namespace)
    if not rows:
        return "no pod group scheduling cycles"

    def line(c: dict) -> str:
        done = "bound" if c["bound"] else f"undone ({c['message']})"
        return f"t={c['time']:g}s {c['pod_group']}: placed {c['placed']} of {len(c['pods'])}, {done}"
    shown = rows[:head] + (rows[-1:] if len(rows) > head else [])
    out = [f"{len(rows)} pod group scheduling cycles"] + [line(c) for c in shown[:head]]
    if len(rows) > head + 1:
        out.append(f"... {len(rows) - head - 1} more ...")
    if len(rows) > head:
        out.append(line(rows[-1]))
    return "\n".join(out)


# --- a gang's pods through Permit (Coscheduling, or alpha GangScheduling) -------------------------------------
FN_PERMIT_WAIT = "runtime.(*frameworkImpl).RunPermitPlugins"     # the pod became a waiting pod
FN_WAIT_FAILED = "runtime.(*frameworkImpl).WaitOnPermit"         # its result: Success, or why rejected / timed out
FN_BIND = "defaultbinder.(*DefaultBinder).Bind"
PERMIT_COLORS = {"pending": "#d9d9d9", "permit-wait": "#fdae6b", "bound": "#9ecae1", "running": "#31a354"}


def gang_pods(result, group: str = "", namespace: str = "default", workload: str = "") -> list:
    """The gang's pods, by name: a Coscheduling PodGroup (label ``scheduling.x-k8s.io/pod-group``) or,
    with ``workload``, the pods of that native gang: alpha ``spec.schedulingGroup.podGroupName`` (1.36) or
    ``spec.workloadRef.name`` (1.35) equal to it."""
    def member(p) -> bool:
        if p.metadata.namespace != namespace:
            return False
        if workload:
            sg, ref = p.spec.scheduling_group, p.spec.workload_ref
            return (sg is not None and sg.pod_group_name == workload) or (ref is not None and ref.name == workload)
        return p.metadata.labels.get(POD_GROUP_LABEL) == group
    return sorted(result.api.list("Pod", member), key=lambda p: p.metadata.name)


def permit_timeline(result, group: str = "", namespace: str = "default", workload: str = "") -> list[dict]:
    """Per pod of the gang: ``segments`` [(start, end, state)] with state pending (created, in the
    queue) → permit-wait (assumed, waiting on Permit for its siblings) → bound (binding done, kubelet
    starting the containers) → running; a Permit rejection sends the pod back to pending and is listed
    in ``rejections`` [(time, message)]. Read from the scheduler's trace and the pods' status."""
    from ..records import to_json
    started = {(d["namespace"], d["name"]): (d["startedAt"], d["finishedAt"]) for d in to_json(result)["pods"]}
    rows = []
    for pod in gang_pods(result, group, namespace, workload):
        ref = f"Pod {namespace}/{pod.metadata.name}"
        marks = [(r.time, r.function, r.result) for r in result.trace.records
                 if r.object == ref and r.function in (FN_PERMIT_WAIT, FN_WAIT_FAILED, FN_BIND)]
        segments: list[tuple[float, float, str]] = []
        rejections: list[tuple[float, str]] = []
        state, since = "pending", pod.metadata.creation_timestamp or 0.0

        def move(t: float, new: str) -> None:
            nonlocal state, since
            if t > since:
                if segments and segments[-1][2] == state and segments[-1][1] == since:
                    segments[-1] = (segments[-1][0], t, state)      # merge: still the same state
                else:
                    segments.append((since, t, state))
            state, since = new, t

        for t, fn, res in marks:
            if fn == FN_PERMIT_WAIT:
                move(t, "permit-wait")
            elif fn == FN_WAIT_FAILED:
                if res == "Success":          # WaitOnPermit returned: the siblings arrived, Bind follows
                    continue
                move(t, "pending")
                rejections.append((t, res))
            else:
                move(t, "bound")
        t_start, t_end = started.get((namespace, pod.metadata.name), (None, None))
        if t_start is not None and state == "bound":
            move(t_start, "running")
        move(t_end if t_end is not None else result.end, "done")
        rows.append({"pod": pod.metadata.name, "segments": segments, "rejections": rejections})
    return rows


MIN_MARKER_GAP = 1 / 80   # of the visible time span: rejections closer than this are counted, not drawn


def rejection_marks(rows: list[dict], span: tuple[float, float]) -> dict:
    """How :func:`plot_permit_timeline` shows the Permit rejections inside ``span``: ``{"draw": [(row, time)],
    "count": {row: n}}`` — every rejection as an × when those of each row are at least ``MIN_MARKER_GAP`` of the
    span apart (they would merge into a band otherwise); else only their number per row."""
    lo, hi = span
    gap = MIN_MARKER_GAP * max(hi - lo, 1e-9)
    visible = [[t for t, _ in row["rejections"] if lo <= t <= hi] for row in rows]
    dense = any(b - a < gap for ts in visible for a, b in zip(ts, ts[1:]))
    if dense:
        return {"draw": [], "count": {i: len(ts) for i, ts in enumerate(visible) if ts}}
    return {"draw": [(i, t) for i, ts in enumerate(visible) for t in ts], "count": {}}


def plot_permit_timeline(result, group: str = "", namespace: str = "default", workload: str = "", ax=None,
                         xlim: Optional[tuple[float, float]] = None, legend: bool = True):
    """One row per gang member: pending, Permit wait, bound, running; × marks a Permit rejection (when they are
    too dense to tell apart at this scale, each row says how many instead — draw a second panel with ``xlim`` to
    see them). The legend sits outside the axes."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    rows = permit_timeline(result, group, namespace, workload)
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 0.35 * max(len(rows), 2) + 1.2))
    span = xlim if xlim is not None else (0, max(result.end, 1))
    for i, row in enumerate(rows):
        for t0, t1, state in row["segments"]:
            ax.barh(i, t1 - t0, left=t0, color=PERMIT_COLORS[state], edgecolor="black", linewidth=0.3)
    marks = rejection_marks(rows, span)
    for i, t in marks["draw"]:
        ax.plot([t], [i], marker="x", color="black", markersize=6, linestyle="none")
    for i, n in marks["count"].items():
        ax.text(span[0] + 0.01 * (span[1] - span[0]), i, f"{n} rejections", va="center", fontsize=7,
                bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none", "alpha": 0.8})
    ax.set_yticks(range(len(rows)), [r["pod"] for r in rows])
    ax.invert_yaxis()
    ax.set_xlim(*span)
    ax.set_xlabel("simulated time (s)")
    ax.set_title(f"Gang {workload or group}: pods through Permit"
                 + (f" (t = {xlim[0]:g}–{xlim[1]:g} s)" if xlim is not None else ""))
    if legend:
        handles = [Patch(color=c, label=k) for k, c in PERMIT_COLORS.items()]
        handles.append(Line2D([], [], marker="x", color="black", linestyle="none", label="rejected at Permit"))
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return ax
