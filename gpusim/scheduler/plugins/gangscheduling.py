"""The in-tree ``GangScheduling`` plugin — **alpha**, Kubernetes 1.35 shape (mirrors kubernetes
pkg/scheduler/framework/plugins/gangscheduling/gangscheduling.go of 1.35, which reads
``scheduling.k8s.io/v1alpha1`` Workloads through pod ``spec.workloadRef``; the pod-group state and its
``defaultSchedulingTimeoutSeconds = 300`` live in the scheduler's workload manager). Enabled only with
the feature gates GenericWorkload and GangScheduling (the Simulation's ``spec.featureGates``); the
default profile then gets it appended to multiPoint (default_plugins.go applyFeatureGates).

A gang is the set of pods with the same namespace and ``workloadRef`` (name, podGroup,
podGroupReplicaKey) whose pod group has the ``gang`` policy; ``basic`` pods are not gated.

- PreEnqueue (UnschedulableAndUnresolvable, the pod waits outside activeQ and gets no
  FailedScheduling): Workload missing → 'waiting for pods's workload "<name>" to appear in scheduling
  queue'; pod group missing → 'pod group "<g>" doesn't exist for a workload "<w>"'; fewer than
  ``minCount`` pods exist → "waiting for minCount pods from a gang to appear in scheduling queue".
  With the gate on, every new unscheduled pod is a cluster event (Pod/Add), so the last sibling to
  appear lets the others in.
- Reserve marks the pod assumed in its gang; Unreserve forgets it.
- Permit: assumed ∪ bound < minCount → activate the gang's unscheduled pods and Wait ("waiting for
  minCount pods from a gang to be waiting on permit") until the gang's deadline: 300 s from the first
  Permit wait, shared by the gang (a new deadline once it passed). Quorum → Success and every waiting
  member is allowed at once. At the deadline every waiting member is rejected "rejected due to timeout
  after waiting 5m0s at plugin GangScheduling" (the timeout each one was given).
Not modelled: 1.36's v1alpha2 Workload/PodGroup API and its PodGroup scheduling cycle
(PlacementFeasible); the QueueingHint filters (any Pod/Add or Workload/Add event requeues).
"""
from __future__ import annotations

from typing import Any, Optional

from ...api.scheduling_v1alpha1 import Workload, pod_group_policy
from ..framework import Code, Status

NAME = "GangScheduling"
DEFAULT_SCHEDULING_TIMEOUT_SECONDS = 300.0       # workload manager: per pod-group deadline
MSG_NO_WORKLOAD = 'waiting for pods\'s workload "{}" to appear in scheduling queue'
MSG_NO_POD_GROUP = 'pod group "{}" doesn\'t exist for a workload "{}"'
MSG_PRE_ENQUEUE_MIN_COUNT = "waiting for minCount pods from a gang to appear in scheduling queue"
MSG_PERMIT_WAIT = "waiting for minCount pods from a gang to be waiting on permit"
TERMINAL = ("Succeeded", "Failed")

GangKey = tuple[str, str, str, str]   # namespace, workload, pod group, replica key


def gang_key(pod: Any) -> Optional[GangKey]:
    ref = pod.spec.workload_ref
    if ref is None:
        return None
    return pod.metadata.namespace, ref.name, ref.pod_group, ref.pod_group_replica_key


class GangScheduling:
    """Alpha (feature gate GangScheduling)."""

    name = NAME

    def __init__(self, args: Any, handle: Any):
        self.handle = handle
        self.events = {"Pod/Add", "Workload/Add"}     # EventsToRegister
        self.assumed: dict[GangKey, set[str]] = {}    # PodGroupInfo.AssumePod / ForgetPod
        self.deadline: dict[GangKey, float] = {}

    # --- workload manager (PodGroupInfo) ----------------------------------------------------------------
    def _workload(self, pod: Any) -> Optional[Workload]:
        return self.handle.api.get(Workload.RESOURCE, pod.metadata.namespace, pod.spec.workload_ref.name)

    def all_pods(self, key: GangKey) -> list:
        """AllPods: the gang's pods known to the scheduler (not terminal; UNVERIFIED for terminal pods)."""
        return sorted(self.handle.api.list("Pod", lambda p: gang_key(p) == key and p.status.phase not in TERMINAL),
                      key=lambda p: p.metadata.name)

    def assigned_pods(self, key: GangKey) -> set[str]:
        return {p.metadata.uid for p in self.all_pods(key) if p.spec.node_name}

    def unscheduled_pods(self, key: GangKey) -> list[str]:
        taken = self.assumed.get(key, set()) | self.assigned_pods(key)
        return [p.metadata.uid for p in self.all_pods(key) if p.metadata.uid not in taken]

    def scheduling_timeout(self, key: GangKey) -> float:
        """SchedulingTimeout: what is left of the gang's deadline, starting a new one once it passed."""
        now = self.handle.ctx.now
        # upstream renews when schedulingDeadline.Before(now); here the retry of a gang rejected at its
        # deadline happens at that same simulated instant (real time would have moved on), so a deadline
        # equal to now counts as passed too.
        if key not in self.deadline or self.deadline[key] <= now:
            self.deadline[key] = now + DEFAULT_SCHEDULING_TIMEOUT_SECONDS
        return self.deadline[key] - now

    # --- PreEnqueue ----------------------------------------------------------------------------------------
    def pre_enqueue(self, pod: Any) -> Status:
        key = gang_key(pod)
        if key is None:
            return Status()
        w = self._workload(pod)
        if w is None:
            return Status.new(Code.UnschedulableAndUnresolvable, MSG_NO_WORKLOAD.format(key[1]))
        policy = pod_group_policy(w, key[2])
        if policy is None:
            return Status.new(Code.UnschedulableAndUnresolvable, MSG_NO_POD_GROUP.format(key[2], w.metadata.name))
        if policy.gang is None:
            return Status()
        if len(self.all_pods(key)) < policy.gang.min_count:
            return Status.new(Code.UnschedulableAndUnresolvable, MSG_PRE_ENQUEUE_MIN_COUNT)
        return Status()

    # --- Reserve / Unreserve -------------------------------------------------------------------------------
    def reserve(self, state, pi, node: str) -> Status:
        key = gang_key(pi.pod)
        if key is not None:
            self.assumed.setdefault(key, set()).add(pi.key)
        return Status()

    def unreserve(self, state, pi, node: str) -> None:
        key = gang_key(pi.pod)
        if key is not None:
            self.assumed.get(key, set()).discard(pi.key)

    # --- Permit ------------------------------------------------------------------------------------------
    def permit(self, state, pi, node: str):
        pod = pi.pod
        key = gang_key(pod)
        if key is None:
            return Status(), 0.0
        w = self._workload(pod)
        if w is None:
            return Status.new(Code.Error, f"failed to get workload {key[0]}/{key[1]}: workload \"{key[1]}\" "
                              "not found"), 0.0
        policy = pod_group_policy(w, key[2])
        if policy is None:
            return Status.new(Code.Error, MSG_NO_POD_GROUP.format(key[2], w.metadata.name)), 0.0
        if policy.gang is None:
            return Status(), 0.0
        assumed = set(self.assumed.get(key, set()))
        if len(assumed | self.assigned_pods(key)) < policy.gang.min_count:
            self.handle.queue.activate(self.unscheduled_pods(key))
            return Status.new(Code.Wait, MSG_PERMIT_WAIT), self.scheduling_timeout(key)
        for uid in sorted(assumed):
            wp = self.handle.get_waiting_pod(uid)
            if wp is not None:
                wp.allow(NAME)
        return Status(), 0.0


def new(args: Any, handle: Any) -> GangScheduling:
    return GangScheduling(args, handle)


def install(sim: Any) -> Optional[list]:
    """Add-on install (gpusim.cluster.components): with GenericWorkload on, the apiserver serves Workloads; the scenario's are created
    before any workload is submitted. Returns them (None when there are none)."""
    workloads = sim.scenario.objects.get(Workload.RESOURCE, [])
    if not workloads:
        return None
    for w in workloads:
        sim.ctx.api.create(w)
    return workloads
