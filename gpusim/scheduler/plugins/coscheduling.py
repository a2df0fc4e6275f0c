"""scheduler-plugins' Coscheduling (gang scheduling), as of kubernetes-sigs/scheduler-plugins master
(pkg/coscheduling/coscheduling.go, pkg/coscheduling/core/core.go, apis/config/v1/defaults.go,
pkg/util/podgroup.go). Opt-in: registered in the in-tree registry, not in DEFAULT_PLUGINS; a
KubeSchedulerConfiguration enables it as upstream's manifests/coscheduling/scheduler-config.yaml does
(``multiPoint.enabled: [Coscheduling]`` + ``queueSort.enabled: [Coscheduling], disabled: ["*"]``).

- QueueSort: higher priority first; then the group's timestamp (the PodGroup's creationTimestamp, or
  the group's last failure time once it failed; a pod without a group: its initial-attempt
  timestamp); then ``namespace/name``. Siblings therefore come out of activeQ together.
- PreFilter (UnschedulableAndUnresolvable): group in backoff → "podGroup <ns/pg> failed recently";
  fewer labelled pods than minMember → "pre-filter pod <pod> cannot find enough sibling pods, ...";
  enough pods but fewer than minMember without ``schedulingGates`` → "pre-filter pod <pod> cannot proceed due
  to gated pods in the same PodGroup" (kubernetes-sigs/scheduler-plugins#952, merged March 2026);
  ``minResources`` (plus ``pods: minMember``) not covered by the cluster's free resources, this
  group's own pods not counted → "resource gap: <remaining>". A group passing the resource check is
  remembered for the schedule timeout.
- PostFilter: if fewer than minMember siblings are assigned and the unassigned fraction exceeds
  ``podGroupRejectPercentage`` %, every waiting sibling is rejected ("optimistic rejection in
  PostFilter"), the group backs off ``podGroupBackoffSeconds`` (if > 0) and the pod gets
  "PodGroup <ns/pg> gets rejected due to Pod <pod> is unschedulable even after PostFilter".
- Permit: assigned siblings (assumed or bound) + this pod ≥ minMember → Success and every waiting
  sibling is allowed; else Wait for ``scheduleTimeoutSeconds`` (else ``permitWaitingTimeSeconds``,
  60s); the first pod to wait activates its siblings. Label without PodGroup → "PodGroup not found".
- Reserve is a no-op; Unreserve rejects every waiting sibling ("rejection in Unreserve"), so one
  Permit timeout fails the whole gang.
"""
from __future__ import annotations

from typing import Any, Optional

from ...api.quantity import parse_quantity
from ...api.scheduling_x_k8s_io_v1alpha1 import POD_GROUP_LABEL
from ..framework import Code, Status, to_units
from .queuesort import pod_priority

NAME = "Coscheduling"
DEFAULT_PERMIT_WAITING_TIME_SECONDS = 60
DEFAULT_POD_GROUP_BACKOFF_SECONDS = 0
DEFAULT_POD_GROUP_REJECT_PERCENTAGE = 10
MSG_NOT_FOUND = "PodGroup not found"
MSG_REJECT_POSTFILTER = "optimistic rejection in PostFilter"
MSG_REJECT_UNRESERVE = "rejection in Unreserve"


def group_name(pod: Any) -> str:
    return pod.metadata.labels.get(POD_GROUP_LABEL, "")


def group_full_name(pod: Any) -> str:
    g = group_name(pod)
    return f"{pod.metadata.namespace}/{g}" if g else ""


def _fmt_quantity(name: str, units: int) -> str:
    """A remaining amount as resource.Quantity prints it (cpu in milli-units when not whole)."""
    if name == "cpu":
        return str(units // 1000) if units % 1000 == 0 else f"{units}m"
    return str(units)


class Coscheduling:
    name = NAME

    def __init__(self, args: Optional[dict], handle: Any):
        args = args or {}
        self.handle = handle
        self.permit_waiting_time = float(args.get("permitWaitingTimeSeconds", DEFAULT_PERMIT_WAITING_TIME_SECONDS))
        self.backoff_seconds = float(args.get("podGroupBackoffSeconds", DEFAULT_POD_GROUP_BACKOFF_SECONDS))
        self.reject_percentage = int(args.get("podGroupRejectPercentage", DEFAULT_POD_GROUP_REJECT_PERCENTAGE))
        self.events = {"Pod/Add", "PodGroup/Add", "PodGroup/Update"}   # EventsToRegister
        self.backed_off: dict[str, float] = {}     # full name → backoff expiry
        self.permitted: dict[str, float] = {}      # full name → minResources check valid until
        self.last_failure: dict[str, float] = {}   # full name → time the group last failed

    # --- helpers ---------------------------------------------------------------------------------------
    @property
    def _now(self) -> float:
        return self.handle.ctx.now

    def _pod_group(self, pod: Any) -> Optional[Any]:
        g = group_name(pod)
        return self.handle.api.get("PodGroup", pod.metadata.namespace, g) if g else None

    def _siblings(self, pod: Any) -> list:
        """The group's pods, as upstream's pod informer lists them (not terminal)."""
        g, ns = group_name(pod), pod.metadata.namespace
        return self.handle.api.list("Pod", lambda p: p.metadata.namespace == ns and group_name(p) == g
                                    and p.status.phase not in ("Succeeded", "Failed"))

    def _assigned(self, pod: Any) -> int:
        """CalculateAssignedPods: siblings other than ``pod`` that are assumed or bound."""
        g, ns, uid = group_name(pod), pod.metadata.namespace, pod.metadata.uid
        return sum(1 for ni in self.handle.nodes.values() for pi in ni.pods.values()
                   if pi.pod.metadata.uid != uid and pi.pod.metadata.namespace == ns and group_name(pi.pod) == g)

    def _timeout(self, pg: Any) -> float:
        t = pg.spec.schedule_timeout_seconds
        return float(t) if t else self.permit_waiting_time

    def _reject_waiting_siblings(self, full: str, msg: str) -> None:
        def fn(wp):
            if group_full_name(wp.get_pod()) == full:
                wp.reject(NAME, msg)
        self.handle.iterate_over_waiting_pods(fn)

    def _mark_failure(self, full: str) -> None:
        self.last_failure[full] = self._now
        self.permitted.pop(full, None)

    # --- QueueSort ---------------------------------------------------------------------------------------
    def _timestamp(self, qpi: Any) -> float:
        pod = qpi.pod
        full = group_full_name(pod)
        pg = self._pod_group(pod) if full else None
        if pg is None:
            ts = qpi.initial_attempt_timestamp
            return qpi.timestamp if ts is None else ts
        return self.last_failure.get(full, pg.metadata.creation_timestamp or 0.0)

    def less(self, a: Any, b: Any) -> bool:
        pa, pb = pod_priority(a.pod), pod_priority(b.pod)
        if pa != pb:
            return pa > pb
        ta, tb = self._timestamp(a), self._timestamp(b)
        if ta == tb:
            ka = f"{a.pod.metadata.namespace}/{a.pod.metadata.name}"
            kb = f"{b.pod.metadata.namespace}/{b.pod.metadata.name}"
            return ka < kb
        return ta < tb

    # --- PreFilter ---------------------------------------------------------------------------------------
    def pre_filter(self, state, pi, nodes):
        pod = pi.pod
        pg = self._pod_group(pod)
        if pg is None:
            return None, Status()
        full = group_full_name(pod)
        if self.backed_off.get(full, -1.0) > self._now:
            return None, Status.new(Code.UnschedulableAndUnresolvable, f"podGroup {full} failed recently")
        siblings = self._siblings(pod)
        count = len(siblings)
        if count < pg.spec.min_member:
            return None, Status.new(Code.UnschedulableAndUnresolvable,
                                    f"pre-filter pod {pod.metadata.name} cannot find enough sibling pods, "
                                    f"current pods number: {count}, minMember of group: {pg.spec.min_member}")
        # scheduler-plugins#952: gated siblings cannot be scheduled yet, so they do not count toward the quorum
        if sum(1 for p in siblings if not p.spec.scheduling_gates) < pg.spec.min_member:
            return None, Status.new(Code.UnschedulableAndUnresolvable,
                                    f"pre-filter pod {pod.metadata.name} cannot proceed due to gated pods in the "
                                    "same PodGroup")
        if pg.spec.min_resources is None or self.permitted.get(full, -1.0) > self._now:
            return None, Status()
        need = {k: to_units(k, parse_quantity(v)) for k, v in pg.spec.min_resources.items()}
        need["pods"] = pg.spec.min_member
        for ni in nodes:                              # CheckClusterResource, node by node
            own = [p for p in ni.pods.values() if group_full_name(p.pod) == full]
            for k in list(need):
                if k == "pods":
                    free = ni.allocatable.get("pods") - (len(ni.pods) - len(own))
                else:
                    free = ni.allocatable.get(k) - ni.requested.get(k) + sum(p.requests.get(k, 0) for p in own)
                need[k] -= free
                if need[k] <= 0:
                    del need[k]
            if not need:
                self.permitted[full] = self._now + self._timeout(pg)
                return None, Status()
        gap = " ".join(f"{k}:{_fmt_quantity(k, v)}" for k, v in sorted(need.items()))
        return None, Status.new(Code.UnschedulableAndUnresolvable, f"resource gap: map[{gap}]")

    # --- PostFilter --------------------------------------------------------------------------------------
    def post_filter(self, state, pi, statuses):
        pod = pi.pod
        pg = self._pod_group(pod)
        if pg is None:
            return None, Status.new(Code.Unschedulable, "can not find pod group")
        full = group_full_name(pod)
        assigned = self._assigned(pod)
        if assigned >= pg.spec.min_member:
            return None, Status(Code.Unschedulable)
        if (pg.spec.min_member - assigned) * 100 <= self.reject_percentage * pg.spec.min_member:
            return None, Status(Code.Unschedulable)
        if self.backoff_seconds > 0 and len(self._siblings(pod)) >= pg.spec.min_member:
            self.backed_off[full] = self._now + self.backoff_seconds
        self._reject_waiting_siblings(full, MSG_REJECT_POSTFILTER)
        self._mark_failure(full)
        return None, Status.new(Code.Unschedulable, f"PodGroup {full} gets rejected due to Pod "
                                f"{pod.metadata.name} is unschedulable even after PostFilter")

    # --- Reserve / Unreserve -----------------------------------------------------------------------------
    def reserve(self, state, pi, node):
        return Status()

    def unreserve(self, state, pi, node):
        pod = pi.pod
        if self._pod_group(pod) is None:
            return
        full = group_full_name(pod)
        self._reject_waiting_siblings(full, MSG_REJECT_UNRESERVE)
        self._mark_failure(full)

    # --- Permit ------------------------------------------------------------------------------------------
    def permit(self, state, pi, node):
        pod = pi.pod
        full = group_full_name(pod)
        if not full:
            return Status(), 0.0
        pg = self._pod_group(pod)
        if pg is None:
            return Status.new(Code.Unschedulable, MSG_NOT_FOUND), 0.0
        assigned = self._assigned(pod)
        if assigned + 1 >= pg.spec.min_member:
            def allow(wp):
                if group_full_name(wp.get_pod()) == full:
                    wp.allow(NAME)
            self.handle.iterate_over_waiting_pods(allow)
            return Status(), 0.0
        if assigned == 0:
            self._activate_siblings(pod)
        return Status(Code.Wait), self._timeout(pg)

    def _activate_siblings(self, pod: Any) -> None:
        """ActivateSiblings: the group's other pods move to activeQ (from backoffQ/unschedulablePods)."""
        uids = [p.metadata.uid for p in self._siblings(pod) if p.metadata.uid != pod.metadata.uid]
        self.handle.queue.activate(uids)


def new(args: Any, handle: Any) -> Coscheduling:
    return Coscheduling(args, handle)
