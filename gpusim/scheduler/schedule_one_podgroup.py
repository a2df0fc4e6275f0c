"""The pod group scheduling cycle of Kubernetes 1.36 (mirrors kubernetes pkg/scheduler/schedule_one_podgroup.go,
read at commit 008b3652959ca58af8be3fb5b6ecfe9ae7638282, and its test file schedule_one_podgroup_test.go).

With the feature gate GenericWorkload on, ``ScheduleOne`` (schedule_one.go) sends a popped pod that names a
PodGroup in ``spec.schedulingGroup`` here instead of to the pod-by-pod cycle:

1. :func:`pod_group_info_for_pod` (podGroupInfoForPod) pops the group's other unscheduled pods from the
   scheduling queue (PopSpecificPod) and orders them by priority, then by their first attempt.
2. :func:`schedule_one_pod_group` (scheduleOnePodGroup): one profile for the whole group
   (:func:`framework_for_pod_group`), pods being deleted or already assumed are dropped
   (:func:`skip_pod_group_pod_schedule`), then :func:`pod_group_cycle` (podGroupCycle).
3. :func:`pod_group_scheduling_algorithm` (podGroupSchedulingAlgorithm → podGroupSchedulingDefaultAlgorithm) runs
   the scheduling algorithm for each pod in order against the same snapshot, in which the earlier pods of the
   group are assumed and reserved (:func:`pod_group_pod_scheduling_algorithm`); Permit runs for each, without
   making a waiting pod. The group is schedulable as soon as Permit returns Success for one pod (the
   GangScheduling plugin does once ``minCount`` pods are assumed). Every pod assumed on the way is
   unreserved and forgotten when the algorithm ends, whatever the outcome.
4. :func:`submit_pod_group_algorithm_result` (submitPodGroupAlgorithmResult): a schedulable group's feasible pods
   go through the real assume / Reserve / Permit (prepareForBindingCycle) and their binding cycles; every other
   pod goes back to the queue through the failure handler — a pod that fitted gets "pod group is unschedulable,
   <its Permit message>" (errPodGroupUnschedulable), a pod that did not fit its own FitError. The PodGroup's
   ``PodGroupScheduled`` condition is set (:func:`update_pod_group_condition`), never regressed from True.

The pods that fitted carry no rejecting plugin, so the queue sends them to backoffQ (queue/scheduling_queue.go
determineSchedulingHintForInFlightPod: no rejector plugins → queueAfterBackoff); the first to leave it brings
the group back, with its pod that did not fit, into the next pod group cycle.

Not modelled: workload-aware preemption (runWorkloadAwarePreemption, gate WorkloadAwarePreemption, alpha, off),
topology-aware placements (podGroupSchedulingPlacementAlgorithm, gate TopologyAwareWorkloadScheduling, alpha,
off), metrics. A pod that needs preemption is handled as upstream (nominated node taken as its host), but
gpusim's DefaultPreemption evicts its victims at once instead of only in the snapshot.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..api import scheduling_k8s_io_v1alpha2 as v1alpha2
from ..api.core_v1 import DEFAULT_SCHEDULER_NAME
from .framework import ERR_NO_NODES_AVAILABLE, Code, CycleState, Diagnosis, FitError, QueuedPodInfo, Status
from .plugins.queuesort import pod_priority

# errPodGroupUnschedulable
ERR_POD_GROUP_UNSCHEDULABLE = "pod group is unschedulable"
MSG_WAITING_ON_PREEMPTION = "pod group is waiting for preemption to complete"
POD_GROUP_CYCLE = "__pod_group_cycle"        # CycleState.SetPodGroupSchedulingCycle: Permit makes no waiting pod
SKIP_POST_FILTER = "__skip_post_filter"      # CycleState.SetSkipAllPostFilterPlugins
REASON_SCHEDULED = "Scheduled"
REASON_UNSCHEDULABLE = "Unschedulable"       # schedulingapi.PodGroupReasonUnschedulable
REASON_SCHEDULER_ERROR = "SchedulerError"    # schedulingapi.PodGroupReasonSchedulerError
RUN_ALL_POST_FILTERS, RUN_WITHOUT_POST_FILTERS = 0, 1   # podGroupPostFilterMode
FN_CYCLE = "scheduler.(*Scheduler).scheduleOnePodGroup"
FN_POD = "scheduler.(*Scheduler).podGroupPodSchedulingAlgorithm"
FN_SUBMIT = "scheduler.(*Scheduler).submitPodGroupAlgorithmResult"


@dataclass
class QueuedPodGroupInfo:
    """framework.QueuedPodGroupInfo: the PodGroup's name and the queued pods of this cycle, in cycle order."""

    namespace: str
    name: str
    queued_pod_infos: list[QueuedPodInfo] = field(default_factory=list)

    @property
    def unscheduled_pods(self) -> list:
        return [q.pod for q in self.queued_pod_infos]


@dataclass
class AlgorithmResult:
    """algorithmResult: one pod's outcome in the pod group algorithm. ``node`` is ScheduleResult.SuggestedHost;
    ``nominated`` the NominatingInfo (None: leave the nomination, "": clear it)."""

    pod: Any = None
    node: str = ""
    status: Status = field(default_factory=Status)
    permit_status: Optional[Status] = None
    requires_preemption: bool = False
    nominated: Optional[str] = ""
    state: Optional[CycleState] = None
    attempt: Any = None
    diagnosis: Optional[Diagnosis] = None


@dataclass
class PodGroupAlgorithmResult:
    """podGroupAlgorithmResult: Success (bind the feasible pods), Unschedulable (all back to the queue; with
    ``waiting_on_preemption`` when the group fits once its preemptions complete) or Error."""

    pod_results: list[AlgorithmResult] = field(default_factory=list)
    status: Status = field(default_factory=lambda: Status(Code.Unschedulable, [ERR_POD_GROUP_UNSCHEDULABLE]))
    waiting_on_preemption: bool = False
    assumed: int = 0       # gpusim: how many pods the algorithm assumed (and then reverted)


@dataclass
class PodGroupCycle:
    """gpusim's record of one pod group cycle (upstream logs "Successfully scheduled a pod group" / "Unable to
    schedule a pod group"): when, which group, the pods tried in order, how many were bound / sent back, the
    group's status message and how many pods the algorithm assumed before it was undone."""

    time: float
    pod_group: str
    pods: list[str]
    scheduled: int
    unschedulable: int
    status: str
    message: str
    assumed: int


def framework_for_pod_group(sched: Any, pgi: QueuedPodGroupInfo) -> Any:
    """frameworkForPodGroup: every pod of the group must name the same profile."""
    scheduler_name = ""
    for qpi in pgi.queued_pod_infos:
        name = qpi.pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME
        if not scheduler_name:
            scheduler_name = name
        elif name != scheduler_name:
            raise ValueError("all pods in a single pod group should have the same .spec.schedulerName set, "
                             f'got: "{name}" and "{scheduler_name}"')
    fw = sched.frameworks.get(scheduler_name)
    if fw is None:
        raise ValueError(f'profile not found for scheduler name "{scheduler_name}"')
    return fw


def unscheduled_pods(sched: Any, namespace: str, pod_group: str) -> list:
    """PodGroupState.UnscheduledPods: the group's pods that are neither bound nor assumed (nor terminal)."""
    def member(p: Any) -> bool:
        sg = p.spec.scheduling_group
        return (p.metadata.namespace == namespace and sg is not None and sg.pod_group_name == pod_group
                and not p.spec.node_name and p.metadata.uid not in sched.assumed
                and p.status.phase not in ("Succeeded", "Failed"))
    return sorted(sched.api.list("Pod", member), key=lambda p: (p.metadata.creation_timestamp or 0.0, p.metadata.name))


def pod_group_info_for_pod(sched: Any, qpi: QueuedPodInfo) -> QueuedPodGroupInfo:
    """podGroupInfoForPod: the popped pod plus the group's other unscheduled pods popped from the queue
    (PopSpecificPod; a pod not in the queue is skipped), sorted by priority (higher first), then by
    InitialAttemptTimestamp (earlier first). Python's sort is stable: ties keep pop order."""
    pod = qpi.pod
    name = pod.spec.scheduling_group.pod_group_name
    pgi = QueuedPodGroupInfo(pod.metadata.namespace, name, [qpi])
    for other in unscheduled_pods(sched, pod.metadata.namespace, name):
        if other.metadata.name == pod.metadata.name:
            continue
        popped = sched.queue.pop_specific_pod(other.metadata.uid)
        if popped is None:
            continue
        if popped.initial_attempt_timestamp is None:
            popped.initial_attempt_timestamp = sched.ctx.now
        pgi.queued_pod_infos.append(popped)
    pgi.queued_pod_infos.sort(key=lambda q: (-pod_priority(q.pod), q.initial_attempt_timestamp or 0.0))
    return pgi


def skip_pod_group_pod_schedule(sched: Any, pgi: QueuedPodGroupInfo) -> None:
    """skipPodGroupPodSchedule: drop the pods being deleted, gone, bound or already assumed."""
    kept = []
    for qpi in pgi.queued_pod_infos:
        pod = qpi.pod
        current = sched.api.get("Pod", pod.metadata.namespace, pod.metadata.name)
        if (current is not pod or pod.metadata.deletion_timestamp is not None or pod.spec.node_name
                or pod.metadata.uid in sched.assumed):
            continue
        kept.append(qpi)
    pgi.queued_pod_infos = kept


def schedule_one_pod_group(sched: Any, pgi: QueuedPodGroupInfo) -> Optional[PodGroupCycle]:
    """scheduleOnePodGroup: the whole workload-aware workflow for one pod group."""
    try:
        fw = framework_for_pod_group(sched, pgi)
    except ValueError as err:
        for qpi in pgi.queued_pod_infos:
            sched._fail(qpi, Status(Code.Error, [str(err)]), str(err), _attempt(sched, qpi), clear_nomination=True)
        return None
    skip_pod_group_pod_schedule(sched, pgi)
    if not pgi.queued_pod_infos:
        return None
    for qpi in pgi.queued_pod_infos:
        qpi.attempts += 1
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = sched.ctx.now
    sched.ctx.trace.add(sched.ctx.now, sched.name, FN_CYCLE, f"PodGroup {pgi.namespace}/{pgi.name}",
                        "Attempting to schedule pod group", pods=[q.pod.metadata.name for q in pgi.queued_pod_infos])
    return pod_group_cycle(sched, fw, pgi)


def pod_group_cycle(sched: Any, fw: Any, pgi: QueuedPodGroupInfo) -> PodGroupCycle:
    """podGroupCycle: the algorithm over one snapshot, then its result submitted."""
    result = pod_group_scheduling_algorithm(sched, fw, pgi, RUN_ALL_POST_FILTERS)
    return submit_pod_group_algorithm_result(sched, fw, pgi, result)


def pod_group_scheduling_algorithm(sched: Any, fw: Any, pgi: QueuedPodGroupInfo,
                                   post_filter_mode: int = RUN_ALL_POST_FILTERS) -> PodGroupAlgorithmResult:
    """podGroupSchedulingAlgorithm with TopologyAwareWorkloadScheduling off, i.e. podGroupSchedulingDefaultAlgorithm:
    each pod in order; a rejected pod does not stop the others; an error does; Success as soon as one pod's Permit
    succeeds (Unschedulable "pod group is waiting for preemption to complete" if some pod so far needs
    preemption). Every assumed pod is reverted at the end, last first."""
    result = PodGroupAlgorithmResult()
    reverts: list[Callable[[], None]] = []
    requires_preemption = False
    try:
        for qpi in pgi.queued_pod_infos:
            pr, revert = pod_group_pod_scheduling_algorithm(sched, fw, pgi, qpi, post_filter_mode)
            result.pod_results.append(pr)
            if not pr.status.is_success() and not pr.requires_preemption:
                if pr.status.is_rejected():
                    continue
                result.status = Status(Code.Error, [f"failed to schedule other pod from a pod group: {pr.status.message()}"])
                result.waiting_on_preemption = False
                break
            if revert is not None:
                reverts.append(revert)
            requires_preemption = requires_preemption or pr.requires_preemption
            if pr.permit_status is not None and pr.permit_status.is_success():
                if requires_preemption:
                    result.status = Status(Code.Unschedulable, [ERR_POD_GROUP_UNSCHEDULABLE, MSG_WAITING_ON_PREEMPTION])
                    result.waiting_on_preemption = True
                else:
                    result.status = Status()
    finally:
        for revert in reversed(reverts):
            revert()
    result.assumed = len(reverts)
    return result


def _attempt(sched: Any, qpi: QueuedPodInfo) -> Any:
    """An Attempt record for a pod that the algorithm did not reach (group-level failure)."""
    return sched.record_attempt(qpi.pod)


def _rejected_after_assume(qpi: QueuedPodInfo, node: str, st: Status) -> tuple[Status, Optional[Diagnosis]]:
    """A Reserve or Permit rejection as a FitError over the one node (schedulingCycle / podGroupPodSchedulingAlgorithm)."""
    if not st.is_rejected():
        return st, None
    diag = Diagnosis(node_to_status={node: st})
    if st.plugin:
        diag.unschedulable_plugins.add(st.plugin)
        if st.code == Code.Pending:
            diag.pending_plugins.add(st.plugin)
    return Status(st.code, [FitError(qpi.pod, 1, diag).error()], st.plugin), diag


def pod_group_pod_scheduling_algorithm(sched: Any, fw: Any, pgi: QueuedPodGroupInfo, qpi: QueuedPodInfo,
                                       post_filter_mode: int = RUN_ALL_POST_FILTERS
                                       ) -> tuple[AlgorithmResult, Optional[Callable[[], None]]]:
    """podGroupPodSchedulingAlgorithm: the scheduling algorithm (PostFilter included unless skipped) for one pod;
    a pod that fits — or that PostFilter nominated somewhere (requiresPreemption) — is assumed and reserved in the
    snapshot and Permit runs for it. Returns its result and, when it stays assumed, the revert (unreserveAndForget,
    restoring its nomination)."""
    ctx = sched.ctx
    pi, pod = qpi.pod_info, qpi.pod
    ref = f"Pod {pod.metadata.namespace}/{pod.metadata.name}"
    state = CycleState()
    state[POD_GROUP_CYCLE] = f"{pgi.namespace}/{pgi.name}"
    if post_filter_mode == RUN_WITHOUT_POST_FILTERS:
        state[SKIP_POST_FILTER] = True
    qpi.unschedulable_plugins, qpi.pending_plugins = set(), set()
    node, fit_error, attempt = sched.schedule_pod(state, pi)
    attempt.pod_group = f"{pgi.namespace}/{pgi.name}"
    requires_preemption = False
    if node is None:
        if fit_error is None:
            st = Status(Code.UnschedulableAndUnresolvable, [ERR_NO_NODES_AVAILABLE])
            attempt.message = ERR_NO_NODES_AVAILABLE
            return AlgorithmResult(pod, status=st, state=state, attempt=attempt), None
        nominated, msg = sched.post_filter(state, fw, pi, fit_error, attempt,
                                           run=post_filter_mode == RUN_ALL_POST_FILTERS)
        st = Status(Code.Unschedulable, [msg])
        if not nominated:
            return AlgorithmResult(pod, status=st, nominated=None, state=state, attempt=attempt,
                                   diagnosis=fit_error.diagnosis), None
        node, requires_preemption = nominated, True
        status, diag = st, fit_error.diagnosis
    else:
        status, diag = Status(), None
    # assumeAndReserve (in the snapshot)
    had_nomination = sched.assume(pi, node)
    st = fw.run_reserve(state, pi, node)

    def revert() -> None:
        fw.run_unreserve(state, pi, node)
        sched._forget(pi, node)
        if had_nomination:
            sched._add_nominated_pod(pi, had_nomination)

    if not st.is_success():
        revert()
        st, rdiag = _rejected_after_assume(qpi, node, st)
        return AlgorithmResult(pod, status=st, state=state, attempt=attempt, diagnosis=rdiag), None
    permit = fw.run_permit(state, pi, node)
    ctx.trace.add(ctx.now, sched.name, FN_POD, ref, "Success" if permit.is_success() else permit.message(),
                  node=node, pod_group=f"{pgi.namespace}/{pgi.name}", preemption=requires_preemption)
    if permit.code != Code.Wait and not permit.is_success():
        revert()
        st, rdiag = _rejected_after_assume(qpi, node, permit)
        return AlgorithmResult(pod, status=st, state=state, attempt=attempt, diagnosis=rdiag), None
    attempt.node = node
    return AlgorithmResult(pod, node=node, status=status, permit_status=permit, requires_preemption=requires_preemption,
                           nominated=node if requires_preemption else "", state=state, attempt=attempt,
                           diagnosis=diag), revert


def prepare_for_binding_cycle(sched: Any, fw: Any, qpi: QueuedPodInfo, pr: AlgorithmResult) -> Status:
    """prepareForBindingCycle: the real assume, Reserve and Permit of a feasible pod of a schedulable group (a
    Wait now makes a waiting pod, which the group's last Permit allows), then its binding cycle."""
    state, node = pr.state, pr.node
    state.pop(POD_GROUP_CYCLE, None)     # SetPodGroupSchedulingCycle(nil) before binding
    st = sched.assume_reserve_permit(state, fw, qpi.pod_info, node)
    if not st.is_success() and st.code != Code.Wait:
        return st
    sched.ctx.env.process(sched._binding_cycle(state, qpi, node, pr.attempt))
    return Status()


def _failure(sched: Any, qpi: QueuedPodInfo, st: Status, attempt: Any, nominated: Optional[str],
             diagnosis: Optional[Diagnosis] = None) -> None:
    """FailureHandler (handleSchedulingFailure): a FitError's plugins become the pod's rejectors; a pod with none
    (the group was unschedulable) is queued after backoff; ``nominated`` "" clears, None keeps, a name sets."""
    if diagnosis is not None:
        qpi.unschedulable_plugins = set(diagnosis.unschedulable_plugins)
        qpi.pending_plugins = set(diagnosis.pending_plugins)
    backoff = st.code != Code.Error and not (qpi.unschedulable_plugins or qpi.pending_plugins)
    sched._fail(qpi, st, st.message(), attempt or _attempt(sched, qpi), nominated=nominated or None,
                clear_nomination=nominated == "", queue_after_backoff=backoff)


def submit_pod_group_algorithm_result(sched: Any, fw: Any, pgi: QueuedPodGroupInfo,
                                      result: PodGroupAlgorithmResult) -> PodGroupCycle:
    """submitPodGroupAlgorithmResult: bind the feasible pods of a schedulable group; send every other pod back
    through the failure handler; set the PodGroup's PodGroupScheduled condition."""
    ctx = sched.ctx
    scheduled = unschedulable = 0
    group = result.status
    for i, qpi in enumerate(pgi.queued_pod_infos):
        pr = result.pod_results[i] if i < len(result.pod_results) else AlgorithmResult(
            qpi.pod, status=Status(group.code, list(group.reasons), group.plugin))
        if group.code == Code.Error:
            st = pr.status if pr.status.code == Code.Error else group
            _failure(sched, qpi, st, pr.attempt, "")
            continue
        if pr.status.is_success():
            if group.is_success():
                st = prepare_for_binding_cycle(sched, fw, qpi, pr)
                if not st.is_success():
                    st, diag = _rejected_after_assume(qpi, pr.node, st)
                    _failure(sched, qpi, st, pr.attempt, "", diag)
                    unschedulable += 1
                    continue
                scheduled += 1
            elif group.is_rejected():
                if result.waiting_on_preemption:
                    _failure(sched, qpi, group, pr.attempt, pr.node)
                else:
                    _failure(sched, qpi, _unschedulable_with_permit(pr), pr.attempt, "")
                unschedulable += 1
            else:
                msg = f"received unexpected pod group scheduling algorithm status code: {group.code.name}"
                _failure(sched, qpi, Status(Code.Error, [msg]), pr.attempt, "")
                unschedulable += 1
        else:
            if pr.requires_preemption and not result.waiting_on_preemption:
                _failure(sched, qpi, _unschedulable_with_permit(pr), pr.attempt, "")
            else:
                _failure(sched, qpi, pr.status, pr.attempt, pr.nominated, pr.diagnosis)
            unschedulable += 1
    if group.is_success():
        condition = {"type": v1alpha2.CONDITION_SCHEDULED, "status": "True", "reason": REASON_SCHEDULED,
                     "message": group.message()}
        outcome = "Successfully scheduled a pod group"
    elif group.is_rejected():
        condition = {"type": v1alpha2.CONDITION_SCHEDULED, "status": "False", "reason": REASON_UNSCHEDULABLE,
                     "message": group.message()}
        outcome = "Pod group is waiting for preemption" if result.waiting_on_preemption else \
            "Unable to schedule a pod group"
    else:
        condition = {"type": v1alpha2.CONDITION_SCHEDULED, "status": "False", "reason": REASON_SCHEDULER_ERROR,
                     "message": group.message()}
        outcome = "Error scheduling pod group"
    update_pod_group_condition(sched, pgi, condition)
    assumed = result.assumed
    ctx.trace.add(ctx.now, sched.name, FN_SUBMIT, f"PodGroup {pgi.namespace}/{pgi.name}", outcome,
                  scheduledPods=scheduled, unschedulablePods=unschedulable, assumed=assumed, message=group.message())
    cycle = PodGroupCycle(ctx.now, f"{pgi.namespace}/{pgi.name}", [q.pod.metadata.name for q in pgi.queued_pod_infos],
                          scheduled, unschedulable, group.code.name, group.message(), assumed)
    sched.pod_group_cycles.append(cycle)
    return cycle


def _unschedulable_with_permit(pr: AlgorithmResult) -> Status:
    """fwk.NewStatus(Unschedulable, <permit message>).WithError(errPodGroupUnschedulable): its Message() puts the
    error first."""
    permit = pr.permit_status.message() if pr.permit_status is not None else ""
    return Status(Code.Unschedulable, [ERR_POD_GROUP_UNSCHEDULABLE, permit])


def set_status_condition(conditions: list[dict], condition: dict, now: float) -> bool:
    """apimeta.SetStatusCondition: add, or update in place (lastTransitionTime moves only when the status
    changes); returns whether anything changed."""
    for existing in conditions:
        if existing.get("type") != condition["type"]:
            continue
        changed = False
        if existing.get("status") != condition["status"]:
            existing["status"] = condition["status"]
            existing["lastTransitionTime"] = condition.get("lastTransitionTime", now)
            changed = True
        for key in ("reason", "message", "observedGeneration"):
            if existing.get(key) != condition.get(key):
                existing[key] = condition.get(key)
                changed = True
        return changed
    new = dict(condition)
    new.setdefault("lastTransitionTime", now)
    conditions.append(new)
    return True


def update_pod_group_condition(sched: Any, pgi: QueuedPodGroupInfo, condition: dict) -> bool:
    """updatePodGroupCondition: patch the condition on the PodGroup (observedGeneration = its generation), unless
    the PodGroup is missing or it is already scheduled (True) and the new condition is not. Returns whether the
    PodGroup was written."""
    pg = sched.api.get(v1alpha2.PodGroup.RESOURCE, pgi.namespace, pgi.name)
    if pg is None:
        return False
    existing = next((c for c in pg.status.conditions if c.get("type") == condition["type"]), None)
    if existing is not None and existing.get("status") == "True" and condition["status"] != "True":
        return False
    condition = dict(condition, observedGeneration=getattr(pg.metadata, "generation", 0) or 0)
    if not set_status_condition(pg.status.conditions, condition, sched.ctx.now):
        return False
    sched.api.update(pg)
    return True
