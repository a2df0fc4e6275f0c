"""The in-tree ``GangScheduling`` plugin — **alpha**, in its Kubernetes 1.36 shape and, with the Simulation's
``kubernetesVersion: "1.35"``, its 1.35 shape (mirrors kubernetes
pkg/scheduler/framework/plugins/gangscheduling/gangscheduling.go). Enabled only with the feature gates
GenericWorkload and GangScheduling (the Simulation's ``spec.featureGates``); the default profile then gets it
appended to multiPoint (default_plugins.go applyFeatureGates).

**1.36** (``scheduling.k8s.io/v1alpha2``): a gang is the set of pods of one namespace whose
``spec.schedulingGroup.podGroupName`` names the same PodGroup, when its ``spec.schedulingPolicy`` is ``gang``
(``basic`` pods are not gated). The plugin reads PodGroups, never Workloads.

- PreEnqueue (UnschedulableAndUnresolvable, the pod waits outside activeQ and gets no FailedScheduling):
  PodGroup missing → 'waiting for pods's pod group "<pg>" to appear in scheduling queue'; fewer than
  ``minCount`` pods exist → "waiting for minCount pods from a gang to appear in scheduling queue".
- Permit: PodGroup missing → Error "failed to get podGroup <ns>/<pg>: ..."; scheduled (assumed ∪ bound) <
  ``minCount`` → activate the gang's unscheduled pods and Wait "waiting for minCount pods from a gang to be
  scheduled" for ``permitTimeoutDuration`` (5m, each pod's own timeout); quorum → Success and every waiting
  member is allowed at once. A pod still waiting after 5m is rejected by the framework ("rejected due to
  timeout after waiting 5m0s at plugin GangScheduling").
- EventsToRegister: Pod/Add, PodGroup/Add, PodGroup/Update.
Upstream code read: the 1.36-era gangscheduling_test.go (scheduling/v1alpha2 imports, TestGangSchedulingFlow)
for the messages above, and the next revision of gangscheduling.go (same PreEnqueue/Permit, v1alpha3 types).

**1.35** (``scheduling.k8s.io/v1alpha1``): the gang is the pods with the same ``spec.workloadRef`` (name,
podGroup, podGroupReplicaKey) whose Workload pod group has the ``gang`` policy. PreEnqueue: Workload missing
→ 'waiting for pods's workload "<name>" to appear in scheduling queue'; pod group missing → 'pod group "<g>"
doesn't exist for a workload "<w>"'; too few pods → as 1.36. Permit waits "waiting for minCount pods from a
gang to be waiting on permit" until the gang's deadline, 300 s from the first Permit wait and shared by the
gang (the workload manager's ``defaultSchedulingTimeoutSeconds``; a new deadline once it passed).

With the gate on, every new unscheduled pod is a cluster event (Pod/Add), so the last sibling to appear
lets the others in. In 1.36 the pods then take the pod group scheduling cycle
(gpusim/scheduler/schedule_one_podgroup.py, kube-scheduler schedule_one_podgroup.go): Permit runs there for
each pod of the group in one snapshot without making a waiting pod, and the group binds only when it returns
Success for one of them (``minCount`` assumed); the Permit Wait and its 5m timeout above then matter only to
the binding of a group already found schedulable (its last pod's Permit allows the others at once). 1.35 keeps
the pod-by-pod Permit wait. Not modelled: the PlacementFeasible extension point (TopologyAwareWorkloadScheduling);
the QueueingHint filters (any registered event requeues); PodGroup/Workload events after the start (the
scenario's objects are created before any workload is submitted).
"""
from __future__ import annotations

from typing import Any, Optional

from ...api import scheduling_k8s_io_v1alpha2 as v1alpha2
from ...api.scheduling_v1alpha1 import Workload, pod_group_policy
from ..framework import Code, Status

NAME = "GangScheduling"
DEFAULT_SCHEDULING_TIMEOUT_SECONDS = 300.0       # 1.35 workload manager: per pod-group deadline
PERMIT_TIMEOUT_SECONDS = 300.0                   # 1.36 permitTimeoutDuration = 5 * time.Minute, per pod
MSG_NO_WORKLOAD = 'waiting for pods\'s workload "{}" to appear in scheduling queue'
MSG_NO_POD_GROUP = 'pod group "{}" doesn\'t exist for a workload "{}"'
MSG_NO_POD_GROUP_OBJECT = 'waiting for pods\'s pod group "{}" to appear in scheduling queue'   # 1.36
MSG_PRE_ENQUEUE_MIN_COUNT = "waiting for minCount pods from a gang to appear in scheduling queue"
MSG_PERMIT_WAIT = "waiting for minCount pods from a gang to be waiting on permit"                # 1.35
MSG_PERMIT_WAIT_SCHEDULED = "waiting for minCount pods from a gang to be scheduled"             # 1.36
TERMINAL = ("Succeeded", "Failed")

GangKey = tuple[str, ...]   # 1.36: (namespace, pod group); 1.35: (namespace, workload, pod group, replica key)


def gang_key(pod: Any) -> Optional[GangKey]:
    """The pod's gang under either shape (the loader admits only the field of the simulated release)."""
    group = pod.spec.scheduling_group
    if group is not None and group.pod_group_name:
        return pod.metadata.namespace, group.pod_group_name
    ref = pod.spec.workload_ref
    if ref is None:
        return None
    return pod.metadata.namespace, ref.name, ref.pod_group, ref.pod_group_replica_key


class GangScheduling:
    """Alpha (feature gate GangScheduling)."""

    name = NAME

    def __init__(self, args: Any, handle: Any):
        self.handle = handle
        self.v1alpha2 = (getattr(handle, "k8s_version", None) or (1, 36)) >= (1, 36)
        # EventsToRegister
        self.events = {"Pod/Add", "PodGroup/Add", "PodGroup/Update"} if self.v1alpha2 else {"Pod/Add", "Workload/Add"}
        self.assumed: dict[GangKey, set[str]] = {}    # PodGroupInfo.AssumePod / ForgetPod
        self.deadline: dict[GangKey, float] = {}

    # --- workload manager (PodGroupInfo) ----------------------------------------------------------------
    def _workload(self, pod: Any) -> Optional[Workload]:
        return self.handle.api.get(Workload.RESOURCE, pod.metadata.namespace, pod.spec.workload_ref.name)

    def _pod_group(self, key: GangKey) -> Optional[v1alpha2.PodGroup]:
        """1.36: the podGroupLister's PodGroup named by the pod's spec.schedulingGroup."""
        return self.handle.api.get(v1alpha2.PodGroup.RESOURCE, key[0], key[1])

    def _gang_policy(self, pod: Any, key: GangKey, at: str) -> tuple[Optional[Status], Any]:
        """The gang policy of the pod's group: (None, GangSchedulingPolicy), (None, None) for ``basic``, or
        (rejection, None) when the object is missing (``at``: "PreEnqueue" or "Permit", whose messages differ)."""
        if self.v1alpha2:
            pg = self._pod_group(key)
            if pg is None:
                if at == "PreEnqueue":
                    return Status.new(Code.UnschedulableAndUnresolvable, MSG_NO_POD_GROUP_OBJECT.format(key[1])), None
                # fmt.Errorf("failed to get podGroup %s/%s: %w") around the lister's NotFound
                return Status.new(Code.Error, f"failed to get podGroup {key[0]}/{key[1]}: podgroup.scheduling.k8s.io "
                                  f'"{key[1]}" not found'), None
            return None, pg.spec.scheduling_policy.gang
        w = self._workload(pod)
        if w is None:
            if at == "PreEnqueue":
                return Status.new(Code.UnschedulableAndUnresolvable, MSG_NO_WORKLOAD.format(key[1])), None
            return Status.new(Code.Error, f"failed to get workload {key[0]}/{key[1]}: workload \"{key[1]}\" "
                              "not found"), None
        policy = pod_group_policy(w, key[2])
        if policy is None:
            code = Code.UnschedulableAndUnresolvable if at == "PreEnqueue" else Code.Error
            return Status.new(code, MSG_NO_POD_GROUP.format(key[2], w.metadata.name)), None
        return None, policy.gang

    def all_pods(self, key: GangKey) -> list:
        """AllPods: the gang's pods known to the scheduler (not terminal; UNVERIFIED for terminal pods). In 1.36
        the pod group state holds only the pods the scheduler's informer has delivered (``knows_pod``), so a
        Job's pods created together pass PreEnqueue once the last of them reached the scheduler."""
        known = getattr(self.handle, "knows_pod", None) if self.v1alpha2 else None
        return sorted(self.handle.api.list("Pod", lambda p: gang_key(p) == key and p.status.phase not in TERMINAL
                                           and (known is None or known(p.metadata.uid))),
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
        rejected, gang = self._gang_policy(pod, key, "PreEnqueue")
        if rejected is not None:
            return rejected
        if gang is None:
            return Status()
        if len(self.all_pods(key)) < gang.min_count:
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
        rejected, gang = self._gang_policy(pod, key, "Permit")
        if rejected is not None:
            return rejected, 0.0
        if gang is None:
            return Status(), 0.0
        assumed = set(self.assumed.get(key, set()))
        if len(assumed | self.assigned_pods(key)) < gang.min_count:     # ScheduledPodsCount
            self.handle.queue.activate(self.unscheduled_pods(key))
            if self.v1alpha2:
                return Status.new(Code.Wait, MSG_PERMIT_WAIT_SCHEDULED), PERMIT_TIMEOUT_SECONDS
            return Status.new(Code.Wait, MSG_PERMIT_WAIT), self.scheduling_timeout(key)
        for uid in sorted(assumed):
            wp = self.handle.get_waiting_pod(uid)
            if wp is not None:
                wp.allow(NAME)
        return Status(), 0.0


def new(args: Any, handle: Any) -> GangScheduling:
    return GangScheduling(args, handle)


def install(sim: Any) -> Optional[list]:
    """Add-on install (gpusim.cluster.components): with GenericWorkload on, the apiserver serves Workloads (and,
    in 1.36, PodGroups); the scenario's are created before any workload is submitted. Returns them (None
    when there are none)."""
    objs = [*sim.scenario.objects.get(Workload.RESOURCE, []), *sim.scenario.objects.get(v1alpha2.PodGroup.RESOURCE, [])]
    if not objs:
        return None
    for obj in objs:
        sim.ctx.api.create(obj)
    return objs
