"""scheduler-plugins' CapacityScheduling with ElasticQuota (mirrors kubernetes-sigs/scheduler-plugins
pkg/capacityscheduling/capacity_scheduling.go and elasticquota.go). Opt-in: registered in the in-tree
registry, not in DEFAULT_PLUGINS; a KubeSchedulerConfiguration enables it as upstream's README does:
``multiPoint.enabled: [CapacityScheduling]`` and ``postFilter.enabled: [CapacityScheduling], disabled:
["*"]`` (its preemption replaces DefaultPreemption). The older sample
manifests/capacityscheduling/scheduler-config.yaml enables preFilter, postFilter and reserve one by one,
which resolves to the same profile. The plugin takes no args.

Picture a shared GPU pool lent between teams: ``min`` is what a namespace is guaranteed, ``max`` how
far it may borrow, and everybody together may never hold more than the sum of all ``min``.

- Quota bookkeeping (ElasticQuotaInfo): ``used`` = requests of the namespace's pods that are bound
  (not terminal) or reserved in this scheduler. A missing ``min`` counts as 0 for cpu, memory and
  ephemeral-storage; a missing ``max`` as unlimited for them. Within an explicit list, an absent cpu,
  memory, ephemeral-storage or pods bound is **0** (so a quota listing only ``nvidia.com/gpu`` rejects
  pods requesting cpu: the trap of the reference sheet); an absent extended resource (GPU) is 0 in
  ``min`` and unlimited in ``max`` (``cmp2`` with LowerBoundOfMin / UpperBoundOfMax).
- PreFilter (pods of a namespace with an ElasticQuota; others pass): the request plus the requests
  of pods nominated anywhere from the same namespace with priority ≥ the pod's (and, for the total,
  nominated pods of other quotas that are within their min) must keep ``used ≤ max`` — else
  Unschedulable "Pod <ns>/<name> is rejected in PreFilter because ElasticQuota <ns> is more than Max" —
  and Σused ≤ Σmin over all quotas — else "Pod <ns>/<name> is rejected in PreFilter because total
  ElasticQuota used is more than min". Both are Unschedulable, so PostFilter may preempt.
- Reserve / Unreserve add / remove the pod to / from its quota's used.
- PostFilter: the preemption Evaluator with this plugin's rules, over every node (offset 0, all
  candidates). Victims on a node: if the preemptor's used + request > min, lower-priority pods of its
  own namespace; else (its guarantee is lent out) pods of *other* quotas that are over their min, any
  priority; a preemptor without quota: lower-priority pods of namespaces without quota. None →
  UnschedulableAndUnresolvable "No victims found on node <node> for preemptor pod <name>"; still over
  max or Σmin after removing them all → Unschedulable "global quota max exceeded". Then the reprieve of
  DefaultPreemption (PDB-violating victims first, most important first), where a reprieved pod that
  pushes the preemptor's quota over max or the total over Σmin is a victim again. The node is picked as
  DefaultPreemption picks. The message has no "preemption: " prefix (that prefix is DefaultPreemption's).
"""
from __future__ import annotations

from typing import Any, Optional

from ...api.quantity import parse_quantity
from ..framework import Code, NodeInfo, PodInfo, Status, to_units
from .defaultpreemption import (MSG_NOT_ELIGIBLE_NEVER, MSG_NOT_ELIGIBLE_TERMINATING, DefaultPreemption,
                                filter_pods_with_pdb_violation, more_important_key, snapshot)
from .queuesort import pod_priority

NAME = "CapacityScheduling"
PREFILTER_STATE_KEY = "PreFilter" + NAME
SNAPSHOT_KEY = "ElasticQuotaSnapshot"
UPPER_BOUND_OF_MAX = 2**63 - 1      # math.MaxInt64
LOWER_BOUND_OF_MIN = 0
NATIVE = ("cpu", "memory", "ephemeral-storage", "pods")     # framework.Resource's own fields
MSG_OVER_MAX = "Pod {}/{} is rejected in PreFilter because ElasticQuota {} is more than Max"
MSG_OVER_MIN = "Pod {}/{} is rejected in PreFilter because total ElasticQuota used is more than min"
MSG_NO_VICTIMS = "No victims found on node {} for preemptor pod {}"
MSG_GLOBAL_MAX = "global quota max exceeded"
MSG_NO_SNAPSHOT = "Failed to read elasticQuotaSnapshot from cycleState"


def is_scalar(name: str) -> bool:
    """v1helper.IsScalarResourceName, roughly: extended (domain-prefixed) resources and hugepages."""
    return "/" in name or name.startswith("hugepages-")


def resource_of(values: Optional[dict[str, Any]]) -> dict[str, int]:
    """framework.NewResource(ResourceList) in integer units (milliCPU for cpu)."""
    return {k: to_units(k, parse_quantity(v)) for k, v in (values or {}).items() if k in NATIVE or is_scalar(k)}


def over(x1: dict[str, int], x2: dict[str, int], y: dict[str, int], bound: int) -> bool:
    """elasticquota.go cmp2: x1 + x2 > y in any dimension. The native dimensions compare with y's value
    (0 when y does not list it); an extended resource of x1 that y does not list compares with ``bound``."""
    for k in NATIVE:
        if x1.get(k, 0) + x2.get(k, 0) > y.get(k, 0):
            return True
    for k, v in x1.items():
        if k not in NATIVE and v + x2.get(k, 0) > y.get(k, bound):
            return True
    return False


def _add(a: dict[str, int], b: dict[str, int], sign: int = 1) -> None:
    for k, v in b.items():
        a[k] = a.get(k, 0) + sign * v


class ElasticQuotaInfo:
    """One namespace's quota: min, max, used and the pods counted in used (by uid)."""

    __slots__ = ("namespace", "min", "max", "used", "pods")

    def __init__(self, namespace: str, min_: Optional[dict], max_: Optional[dict]):
        self.namespace = namespace
        bound_max = {k: UPPER_BOUND_OF_MAX for k in ("cpu", "memory", "ephemeral-storage")}
        self.min = resource_of(min_) if min_ is not None else {}
        self.max = resource_of(max_) if max_ is not None else bound_max
        self.used: dict[str, int] = {}
        self.pods: dict[str, dict[str, int]] = {}       # uid → requests counted

    def clone(self) -> "ElasticQuotaInfo":
        c = ElasticQuotaInfo.__new__(ElasticQuotaInfo)
        c.namespace, c.min, c.max = self.namespace, self.min, self.max
        c.used, c.pods = dict(self.used), dict(self.pods)
        return c

    def add_pod_if_not_present(self, pi: PodInfo) -> None:
        if pi.key not in self.pods:
            self.pods[pi.key] = pi.requests
            _add(self.used, pi.requests)

    def delete_pod_if_present(self, uid: str) -> None:
        req = self.pods.pop(uid, None)
        if req is not None:
            _add(self.used, req, -1)

    def used_over_min_with(self, req: dict[str, int]) -> bool:
        return over(req, self.used, self.min, LOWER_BOUND_OF_MIN)

    def used_over_max_with(self, req: dict[str, int]) -> bool:
        return over(req, self.used, self.max, UPPER_BOUND_OF_MAX)

    def used_over_min(self) -> bool:
        return over(self.used, {}, self.min, LOWER_BOUND_OF_MIN)


def aggregated_used_over_min_with(infos: dict[str, ElasticQuotaInfo], req: dict[str, int]) -> bool:
    """ElasticQuotaInfos.aggregatedUsedOverMinWith: Σused + req > Σmin."""
    used: dict[str, int] = {}
    mins: dict[str, int] = {}
    for ns in sorted(infos):
        _add(used, infos[ns].used)
        _add(mins, infos[ns].min)
    _add(used, req)
    return over(used, {}, mins, LOWER_BOUND_OF_MIN)


class PreFilterState:
    __slots__ = ("pod_req", "nominated_in_eq_with_pod_req", "nominated_with_pod_req")

    def __init__(self, pod_req: dict[str, int], in_eq: Optional[dict] = None, total: Optional[dict] = None):
        self.pod_req = pod_req
        self.nominated_in_eq_with_pod_req = in_eq if in_eq is not None else {}
        self.nominated_with_pod_req = total if total is not None else {}


class _Preemptor(DefaultPreemption):
    """preemption.Interface of CapacityScheduling, run by the shared Evaluator (DefaultPreemption's
    dry run, candidate choice and actuation)."""

    def __init__(self, plugin: "CapacityScheduling"):
        super().__init__(plugin.handle, None)
        self.plugin = plugin
        self.state: Any = None

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return 0, num_nodes

    def pod_eligible_to_preempt_others(self, pod, statuses: dict[str, Status]) -> tuple[bool, str]:
        if pod.spec.preemption_policy == "Never":
            return False, MSG_NOT_ELIGIBLE_NEVER
        pfs, snap = self.state.get(PREFILTER_STATE_KEY), self.state.get(SNAPSHOT_KEY)
        if pfs is None:
            return False, "not eligible due to failed to read from cycleState"
        nom = pod.status.nominated_node_name
        if not nom:
            return True, ""
        st = statuses.get(nom)
        if st is None or st.code == Code.UnschedulableAndUnresolvable or snap is None:
            return True, ""
        ni = next((n for n in self.handle.node_infos() if n.name == nom), None)
        if ni is None:
            return True, ""
        prio = pod_priority(pod)
        own = snap.get(pod.metadata.namespace)
        if own is not None:
            over_min = own.used_over_min_with(pfs.nominated_in_eq_with_pod_req)
            for p in ni.pods.values():
                if p.pod.metadata.deletion_timestamp is None:
                    continue
                info = snap.get(p.pod.metadata.namespace)
                if info is None:
                    continue
                if p.pod.metadata.namespace == pod.metadata.namespace and pod_priority(p.pod) < prio:
                    return False, MSG_NOT_ELIGIBLE_TERMINATING
                if p.pod.metadata.namespace != pod.metadata.namespace and not over_min and info.used_over_min():
                    return False, MSG_NOT_ELIGIBLE_TERMINATING
        else:
            for p in ni.pods.values():
                if p.pod.metadata.namespace in snap:
                    continue
                if p.pod.metadata.deletion_timestamp is not None and pod_priority(p.pod) < prio:
                    return False, MSG_NOT_ELIGIBLE_TERMINATING
        return True, ""

    def select_victims_on_node(self, state, pi: PodInfo, ni: NodeInfo,
                               pdbs: Optional[list] = None) -> tuple[list[PodInfo], int, Status]:
        base, pfs = state.get(SNAPSHOT_KEY), state.get(PREFILTER_STATE_KEY)
        if base is None:
            return [], 0, Status.new(Code.Unschedulable, MSG_NO_SNAPSHOT)
        if pfs is None:
            return [], 0, Status.new(Code.Unschedulable, "Failed to read preFilterState from cycleState")
        infos = {ns: info.clone() for ns, info in base.items()}    # the cycle state is cloned per node
        pod, prio, now = pi.pod, pod_priority(pi.pod), self._now()
        ns = pod.metadata.namespace
        own = infos.get(ns)
        ni = snapshot(ni)

        def remove(p: PodInfo) -> None:             # NodeInfo.RemovePod + PreFilterExtensions.RemovePod
            ni.remove_pod(p.key)
            info = infos.get(p.pod.metadata.namespace)
            if info is not None:
                info.delete_pod_if_present(p.key)

        def add(p: PodInfo) -> None:
            ni.add_pod(p)
            info = infos.get(p.pod.metadata.namespace)
            if info is not None:
                info.add_pod_if_not_present(p)

        # nodeInfo.Pods sorted least important first
        pods = sorted(ni.pods.values(), key=lambda p: more_important_key(p, now), reverse=True)
        potential: list[PodInfo] = []
        if own is not None:
            over_min = own.used_over_min_with(pfs.nominated_in_eq_with_pod_req)
            for p in pods:
                info = infos.get(p.pod.metadata.namespace)
                if info is None:
                    continue
                if over_min:
                    chosen = p.pod.metadata.namespace == ns and pod_priority(p.pod) < prio
                else:
                    chosen = p.pod.metadata.namespace != ns and info.used_over_min()
                if chosen:
                    potential.append(p)
                    remove(p)
        else:
            for p in pods:
                if p.pod.metadata.namespace not in infos and pod_priority(p.pod) < prio:
                    potential.append(p)
                    remove(p)
        if not potential:
            return [], 0, Status.new(Code.UnschedulableAndUnresolvable, MSG_NO_VICTIMS.format(ni.name, pod.metadata.name))
        st = self.handle.run_filters(state, pi, ni)
        if not st.is_success():
            return [], 0, st
        if own is not None and (own.used_over_max_with(pfs.pod_req)
                                or aggregated_used_over_min_with(infos, pfs.pod_req)):
            return [], 0, Status.new(Code.Unschedulable, MSG_GLOBAL_MAX)
        potential.sort(key=lambda p: more_important_key(p, now))
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs or [])
        victims: list[PodInfo] = []

        def reprieve(p: PodInfo) -> bool:
            add(p)
            fits = self.handle.run_filters(state, pi, ni).is_success()
            if not fits:
                remove(p)
                victims.append(p)
            elif own is not None and (own.used_over_max_with(pfs.nominated_in_eq_with_pod_req)
                                      or aggregated_used_over_min_with(infos, pfs.nominated_with_pod_req)):
                remove(p)
                victims.append(p)
            return fits

        num_violating = sum(1 for p in violating if not reprieve(p))
        for p in non_violating:
            reprieve(p)
        return victims, num_violating, Status()


class CapacityScheduling:
    name = NAME

    def __init__(self, args: Any, handle: Any):
        self.handle = handle
        self.events = {"Pod/Delete", "ElasticQuota/Add", "ElasticQuota/Update", "ElasticQuota/Delete"}
        self.infos: dict[str, ElasticQuotaInfo] = {}       # namespace → quota info (the plugin's cache)
        self._spec: dict[str, tuple] = {}                  # namespace → (uid, min, max) last seen

    # --- informers: ElasticQuota add/update/delete, assigned pods add/update/delete ----------------------
    def sync(self) -> dict[str, ElasticQuotaInfo]:
        """Bring the cache up to date with the apiserver and the scheduler cache, as the informer
        handlers would have: one quota per namespace (the first listed), pods bound and not terminal or
        reserved here are counted. Returns the live infos."""
        api = self.handle.api
        if api is None:
            return self.infos
        first: dict[str, Any] = {}
        for eq in sorted(api.list("ElasticQuota"), key=lambda e: (e.metadata.namespace, e.metadata.creation_timestamp
                                                                 or 0.0, e.metadata.name)):
            first.setdefault(eq.metadata.namespace, eq)
        for ns in list(self.infos):
            if ns not in first:
                del self.infos[ns]
                self._spec.pop(ns, None)
        for ns, eq in first.items():
            key = (eq.metadata.uid, repr(eq.spec.min), repr(eq.spec.max))
            old = self.infos.get(ns)
            if old is None or self._spec.get(ns) != key:
                info = ElasticQuotaInfo(ns, eq.spec.min, eq.spec.max)
                if old is not None:                     # updateElasticQuota keeps pods and used
                    info.pods, info.used = old.pods, old.used
                self.infos[ns] = info
                self._spec[ns] = key
        if not self.infos:
            return self.infos
        assumed = getattr(self.handle, "assumed", set())
        current: dict[str, dict[str, Any]] = {ns: {} for ns in self.infos}
        for p in api.list("Pod", lambda p: p.metadata.namespace in self.infos):
            if (p.spec.node_name and p.status.phase not in ("Succeeded", "Failed")) or p.metadata.uid in assumed:
                current[p.metadata.namespace][p.metadata.uid] = p
        for ns, info in self.infos.items():
            for uid in [u for u in info.pods if u not in current[ns]]:
                info.delete_pod_if_present(uid)
            for uid in sorted(current[ns]):
                if uid not in info.pods:
                    info.add_pod_if_not_present(PodInfo(current[ns][uid]))
        return self.infos

    # --- PreFilter ---------------------------------------------------------------------------------------
    def pre_filter(self, state, pi: PodInfo, nodes):
        infos = self.sync()
        snap = {ns: info.clone() for ns, info in infos.items()}
        state[SNAPSHOT_KEY] = snap
        pod = pi.pod
        ns = pod.metadata.namespace
        eq = snap.get(ns)
        if eq is None:
            state[PREFILTER_STATE_KEY] = PreFilterState(pi.requests)
            return None, Status()
        in_eq: dict[str, int] = {}
        total: dict[str, int] = {}
        prio = pod_priority(pod)
        for ni in nodes:
            for p in self.handle.nominated_pods_for_node(ni.name):
                if p.key == pi.key:
                    continue
                info = infos.get(p.pod.metadata.namespace)
                if info is None:
                    continue
                if p.pod.metadata.namespace == ns and pod_priority(p.pod) >= prio:
                    _add(in_eq, p.requests)
                    _add(total, p.requests)
                elif p.pod.metadata.namespace != ns and not info.used_over_min():
                    _add(total, p.requests)
        _add(in_eq, pi.requests)
        _add(total, pi.requests)
        state[PREFILTER_STATE_KEY] = PreFilterState(pi.requests, in_eq, total)
        if eq.used_over_max_with(in_eq):
            return None, Status.new(Code.Unschedulable, MSG_OVER_MAX.format(ns, pod.metadata.name, eq.namespace))
        if aggregated_used_over_min_with(snap, total):
            return None, Status.new(Code.Unschedulable, MSG_OVER_MIN.format(ns, pod.metadata.name))
        return None, Status()

    # --- PostFilter --------------------------------------------------------------------------------------
    def post_filter(self, state, pi: PodInfo, statuses: dict[str, Status]):
        evaluator = _Preemptor(self)
        evaluator.state = state
        return evaluator.preempt(state, pi, statuses)

    # --- Reserve / Unreserve -----------------------------------------------------------------------------
    def reserve(self, state, pi: PodInfo, node: str) -> Status:
        info = self.infos.get(pi.pod.metadata.namespace)
        if info is not None:
            info.add_pod_if_not_present(pi)
        return Status()

    def unreserve(self, state, pi: PodInfo, node: str) -> None:
        info = self.infos.get(pi.pod.metadata.namespace)
        if info is not None:
            info.delete_pod_if_present(pi.key)


def new(args: Any, handle: Any) -> CapacityScheduling:
    return CapacityScheduling(args, handle)
