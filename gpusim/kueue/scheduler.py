"""The Kueue controller-manager: scheduler cycle, workload controller and waitForPodsReady (mirrors kueue
pkg/scheduler/scheduler.go, pkg/controller/core/{workload_controller.go,clusterqueue_controller.go,
localqueue_controller.go}, pkg/workload/admission.go and requeue backoff in workload.go UpdateRequeueState).

Cycle (scheduler.go schedule): take the head of every active ClusterQueue, nominate each (flavor assignment, and
the preemption targets of a Preempt assignment, both on the cache as the cycle starts), order the entries (lower
borrowing level, higher priority, older first; with fair sharing a tournament up each Cohort tree, lowest dominant
resource share with the workload first, taken again after every entry: makeFairSharingIterator), then
process them in that order (processEntry): NoFit and Preempt-without-targets entries wait (a ClusterQueue that
cannot always reclaim what it lends, reclaimWithinCohort not Any, then holds its nominal share for the rest of the
cycle: reserveCapacityForUnreclaimablePreempt); an entry whose targets overlap those already preempted this cycle
is skipped ("Workload has overlapping preemption targets with another workload"); one that does not fit once its
own targets are gone is skipped ("Workload no longer fits after processing another workload"); a preempting entry
evicts its targets and holds its usage until the cycle ends; a fitting one is admitted.

Timing (gpusim's choice): upstream's loop runs cycles back to back while heads exist and blocks on the queue
manager otherwise. gpusim does the same with zero simulated latency: at the simulated instant of any change
(workload added, finished or evicted, backoff expired) it runs cycles until no ClusterQueue has a head.

Shortcuts that keep upstream's outcomes (see queue.py and ``schedule``): a nomination is memoised per workload
signature and cohort-tree usage version, and when a BestEffortFIFO head does not fit, the identical workloads
behind it are set aside with it (upstream pops and fails each in turn; usage only grows until a release
re-queues them all). Approximation: they are not re-evaluated when a later admission creates a new preemption
candidate for them.

Topology-Aware Scheduling (pkg/scheduler/scheduler.go with TAS, pkg/cache/scheduler/tas_*): when a ClusterQueue
uses a flavor with ``topologyName``, nomination also computes the PodSets' placement (flavorassigner.py,
tas_flavor_snapshot.py); admission writes it as ``status.admission.podSetAssignments[].topologyAssignment`` and
adds it to the TAS usage; preemption for such a workload looks for targets after whose removal both the quota
and the placement fit. A Node change that matters to TAS (readiness, labels, allocatable, taints) requeues the
inadmissible workloads of ClusterQueues that use TAS flavors (pkg/controller/tas/node_controller.go).

Pending reasons (requeueAndUpdate): the QuotaReserved=False condition and its Warning event carry reason
``Pending`` unless the Configuration turns on the UnadmittedWorkloadsObservability gate (off in 0.19); with it
on, the granular reason the cycle found (``Assignment.no_fit_reason`` for a NoFit nomination, WaitingForQuota,
WaitingForPreemptedWorkloads, TopologyPlacementFailed). The message is the same either way.
"""
from __future__ import annotations

import math
from typing import Any, Optional

import simpy

from ..api.kueue_x_k8s_io import (FAIR_SHARING_PREEMPT_WITHIN_NOMINAL, UNADMITTED_WORKLOADS_OBSERVABILITY, Admission,
                                  KueueConfig, PodSetAssignment, RequeueState, Workload)
from ..controlplane.apiserver import ADDED, DELETED
from ..controlplane.context import Context
from ..controlplane.events import NORMAL, WARNING
from . import resources
from .cache import Node, compute_subtree, quotas_from
from .flavorassigner import FIT, NO_FIT, PREEMPT, ClusterQueueSpecView, assign
from .jobframework import JobReconciler
from .preemption import Policy, Preemptor, preemption_message
from .queue import ClusterQueueQueue
from .tas_cache import TASCache, node_signature
from .tas_flavor_snapshot import to_v1beta2
from .workload import (ADMITTED, DEACTIVATION_TARGET, EVICTED, EVICTED_BY_PODS_READY_TIMEOUT, EVICTED_BY_PREEMPTION,
                       FINISHED, PENDING,
                       PODS_READY, PREEMPTED, QUOTA_RESERVED, REQUEUED, REQUEUING_LIMIT_EXCEEDED,
                       TOPOLOGY_PLACEMENT_FAILED, WAITING_FOR_PREEMPTED, WAITING_FOR_QUOTA, Info, pod_set_requests,
                       queue_order_timestamp, remove_condition, set_condition, validate_resources)

SOURCE = "kueue-admission"               # scheduler's event recorder
WORKLOAD_SOURCE = "kueue-workload-controller"   # UNVERIFIED recorder name
NO_LONGER_FITS = "Workload no longer fits after processing another workload"
OVERLAPPING_TARGETS = "Workload has overlapping preemption targets with another workload"
NAMESPACE_MISMATCH = "Workload namespace doesn't match ClusterQueue selector"
NOT_READY_MSG = "Not all pods are ready or succeeded"
READY_MSG = "All pods reached readiness and the workload is running"
BACKOFF_JITTER = 0.0001                  # workload.go UpdateRequeueState: wait.Backoff Jitter
CYCLE_PRIORITY = simpy.events.NORMAL + 1  # a cycle runs after every other event of its instant


class Kueue:
    """One simulated kueue-controller-manager."""

    def __init__(self, ctx: Context, config: KueueConfig, objects: dict[str, list]):
        self.ctx, self.config = ctx, config
        self.observability = config.enabled(UNADMITTED_WORKLOADS_OBSERVABILITY)
        self.flavors = {f.metadata.name: f for f in objects.get("ResourceFlavor", [])}
        self.cluster_queues = {q.metadata.name: q for q in objects.get("ClusterQueue", [])}
        self.local_queues = {(q.metadata.namespace, q.metadata.name): q for q in objects.get("LocalQueue", [])}
        self.workload_priority_classes = {p.metadata.name: p.value for p in objects.get("WorkloadPriorityClass", [])}
        self.nodes: dict[str, Node] = {}
        self.cohort_nodes: dict[str, Node] = {}
        self._build_tree(objects.get("Cohort", []))
        self.queues = {n: ClusterQueueQueue(n, q.spec.queueing_strategy) for n, q in sorted(self.cluster_queues.items())}
        # the queues of each ClusterQueue's cohort tree (itself included), in name order: the tree is fixed
        self._tree_queues = {cq: [q for n, q in self.queues.items() if self.nodes[n].root() is self.nodes[cq].root()]
                             for cq in self.queues}
        self.specs = {n: self._spec_view(q, config.fair_sharing) for n, q in self.cluster_queues.items()}
        self.admitted: dict[str, dict[str, Info]] = {n: {} for n in self.cluster_queues}
        self.workloads: dict[str, Info] = {}          # ns/name → Info (every workload Kueue tracks)
        self.jobs: dict[str, Any] = {}               # workload ns/name → owning Job
        self.history: list[tuple[float, str, str, str, int]] = []   # (t, cq, flavor, resource, usage)
        policies = {}
        for n, q in self.cluster_queues.items():
            p = q.spec.preemption
            bwc = p.borrow_within_cohort
            policies[n] = Policy(p.within_cluster_queue, p.reclaim_within_cohort, bwc.policy if bwc else "Never",
                                 bwc.max_priority_threshold if bwc else None)
        self.preemptor = Preemptor(self.nodes, self.admitted, policies, config.fair_sharing,
                                   config.preemption_strategies,
                                   config.enabled(FAIR_SHARING_PREEMPT_WITHIN_NOMINAL))
        self._seq = 0
        self._kicked = False
        self._ns_cache: dict[tuple[str, str], bool] = {}   # namespaces' labels do not change in gpusim
        self._memo: dict[tuple, list] = {}  # (cq, signature) → [tree version, assignment, message, no targets]
        self._held: dict[tuple, int] = {}            # (cq, flavor-resource) → quota held by this cycle's entries
        self._dirty: set[str] = set()                # ClusterQueues whose status needs writing
        self._lq_counts: dict[tuple[str, str], list[int]] = {k: [0, 0] for k in self.local_queues}  # pending, admitted
        self.cycles = 0
        topologies = {t.metadata.name: t for t in objects.get("Topology", [])}
        self.tas: Optional[TASCache] = None
        self.tas_cqs: dict[str, bool] = {}          # ClusterQueue using a TAS flavor → whether it is TAS-only
        if any(f.spec.topology_name for f in self.flavors.values()):
            self.tas = TASCache(ctx, self.flavors, topologies)
            for n, q in self.cluster_queues.items():
                names = [fq.name for g in q.spec.resource_groups for fq in g.flavors]
                if any(self.tas.is_tas(f) for f in names):
                    self.tas_cqs[n] = all(self.tas.is_tas(f) for f in names)   # clusterqueue.go isTASOnly
        for obj in [*topologies.values(), *self.flavors.values(), *objects.get("Cohort", []),
                    *self.cluster_queues.values(), *self.local_queues.values(),
                    *objects.get("WorkloadPriorityClass", [])]:
            ctx.api.create(obj)
        self._update_queue_status(list(self.cluster_queues))
        self._watch = ctx.api.watch(Workload.RESOURCE)
        ctx.env.process(self._workload_loop())
        self.job_reconciler = JobReconciler(self)
        self.ungater = None
        if self.tas is not None:
            from .topology_ungater import TopologyUngater
            self.ungater = TopologyUngater(ctx)
            self._node_signatures: dict[str, Optional[tuple]] = {}
            ctx.env.process(self._node_loop(ctx.api.watch("Node")))

    # --- setup -------------------------------------------------------------------------------------------
    def _build_tree(self, cohorts: list[Any]) -> None:
        def cohort(name: str) -> Node:
            if name not in self.cohort_nodes:
                self.cohort_nodes[name] = Node(name, False)
            return self.cohort_nodes[name]
        for c in cohorts:
            node = cohort(c.metadata.name)
            quotas_from(node, c.spec.resource_groups)
            if c.spec.fair_sharing is not None:
                node.weight = c.spec.fair_sharing.weight_value()
            if c.spec.parent_name:
                node.parent = cohort(c.spec.parent_name)
                node.parent.children.append(node)
        for name, q in sorted(self.cluster_queues.items()):
            node = Node(name, True)
            quotas_from(node, q.spec.resource_groups)
            if q.spec.fair_sharing is not None:
                node.weight = q.spec.fair_sharing.weight_value()
            if q.cohort:
                node.parent = cohort(q.cohort)
                node.parent.children.append(node)
            self.nodes[name] = node
        for node in [*self.nodes.values(), *self.cohort_nodes.values()]:
            if node.parent is None:
                compute_subtree(node)

    @staticmethod
    def _spec_view(q: Any, fair_sharing: bool) -> ClusterQueueSpecView:
        f = q.spec.flavor_fungibility
        p = q.spec.preemption
        bwc = p.borrow_within_cohort
        while_borrowing = (bwc is not None and bwc.policy not in (None, "", "Never")) or (
            fair_sharing and p.reclaim_within_cohort != "Never")
        aliases = {"Borrow": "MayStopSearch", "Preempt": "MayStopSearch"}   # v1beta1 deprecated values
        return ClusterQueueSpecView([(list(g.covered_resources), [fq.name for fq in g.flavors])
                                     for g in q.spec.resource_groups],
                                    aliases.get(f.when_can_borrow, f.when_can_borrow),
                                    aliases.get(f.when_can_preempt, f.when_can_preempt),
                                    f.preference or "BorrowingOverPreemption", while_borrowing)

    # --- workload events ---------------------------------------------------------------------------------
    def _workload_loop(self):
        while True:
            ev = yield self._watch.get()
            wl = ev.obj
            key = f"{wl.metadata.namespace}/{wl.metadata.name}"
            if ev.type == ADDED:
                if key not in self.workloads:
                    self._add(wl)
            elif ev.type == DELETED:
                info = self.workloads.pop(key, None)
                if info is not None:
                    q = self.queues[info.cq]
                    if q.contains(info):
                        self._lq(info)[0] -= 1
                        self._dirty.add(info.cq)
                    q.delete(info)
                    if info.reserved_at is not None:
                        self._release(info)
            else:
                info = self.workloads.get(key)
                if info is not None and info.reserved_at is not None and wl.is_true(FINISHED):
                    self._release(info)

    def _node_loop(self, watch):
        """pkg/controller/tas/node_controller.go: a Node change that affects TAS requeues the inadmissible
        workloads of the ClusterQueues using TAS flavors."""
        while True:
            ev = yield watch.get()
            name = ev.obj.metadata.name
            sig = None if ev.type == DELETED else node_signature(ev.obj)
            if self._node_signatures.get(name, "unseen") == sig:
                continue
            first = name not in self._node_signatures
            self._node_signatures[name] = sig
            if first and ev.type == ADDED and self.ctx.now == 0:
                continue
            moved = False
            for cq in sorted(self.tas_cqs):
                moved |= self.queues[cq].queue_inadmissible()
            if moved:
                self.kick()

    def _priority(self, wl: Workload) -> int:
        if wl.spec.priority is not None:
            return wl.spec.priority
        return self.workload_priority_classes.get(wl.priority_class_name, 0)

    def _add(self, wl: Workload) -> None:
        lq = self.local_queues.get((wl.metadata.namespace, wl.spec.queue_name))
        if lq is None:
            return    # scenario validation guarantees it exists
        self._seq += 1
        info = Info(wl, lq.spec.cluster_queue, self._priority(wl),
                    [pod_set_requests(ps) for ps in wl.spec.pod_sets], self._seq,
                    queued_at=wl.metadata.creation_timestamp or self.ctx.now)
        info.job = self.jobs.get(f"{wl.metadata.namespace}/{wl.metadata.name}")
        self._signature(info)
        self.workloads[info.key] = info
        if wl.spec.active and not wl.is_true(FINISHED):
            self._push(info)

    def _lq(self, info: Info) -> list[int]:
        return self._lq_counts[(info.obj.metadata.namespace, info.obj.spec.queue_name)]

    def _push(self, info: Info) -> None:
        """Into the ClusterQueue's heap (pending), and run a cycle."""
        q = self.queues[info.cq]
        if not q.contains(info):
            self._lq(info)[0] += 1
        q.push(info)
        self._dirty.add(info.cq)
        self.kick()

    # --- the scheduling loop -----------------------------------------------------------------------------
    def kick(self) -> None:
        """Run scheduling cycles at this instant, once all events of this instant were delivered: the cycle
        event has a priority below simpy's NORMAL, so every workload created at this instant (also those whose
        watch events are delivered after this call) is in the queues when the first cycle takes the heads, as
        upstream's queue manager holds them all before ``schedule`` runs (scheduler.go)."""
        if self._kicked:
            return
        self._kicked = True
        env = self.ctx.env
        ev = env.event()
        ev.callbacks.append(lambda _e: self._run_cycles())
        ev._ok, ev._value = True, None      # a triggered event, as simpy's Timeout sets it
        env.schedule(ev, CYCLE_PRIORITY)

    def _run_cycles(self) -> None:
        self._kicked = False
        touched: set[str] = set()
        # as upstream's loop: cycles back to back while any ClusterQueue has a head
        for _ in range(1_000_000):
            if not self.schedule(touched):
                break
        else:
            raise RuntimeError("kueue: scheduling cycles do not converge")
        dirty, self._dirty = self._dirty, set()
        self._update_queue_status(sorted(dirty))

    def _namespace_matches(self, cq: Any, ns: str) -> bool:
        key = (cq.metadata.name, ns)
        hit = self._ns_cache.get(key)
        if hit is None:
            hit = self._ns_cache[key] = self._namespace_matches_uncached(cq, ns)
        return hit

    def _namespace_matches_uncached(self, cq: Any, ns: str) -> bool:
        sel = cq.spec.namespace_selector
        if sel is None:
            return False    # nil selects no namespace
        obj = self.ctx.api.get("Namespace", "", ns)
        labels = dict(obj.metadata.labels) if obj is not None else {}
        labels.setdefault("kubernetes.io/metadata.name", ns)
        return sel.matches(labels)

    def _blocked_by_pods_ready(self) -> bool:
        if not (self.config.wait_for_pods_ready and self.config.block_admission):
            return False
        return any(not i.obj.is_true(PODS_READY) and i.job is not None
                   for adm in self.admitted.values() for i in adm.values())

    def schedule(self, touched: set[str]) -> bool:
        """One cycle. Returns whether it ran (some ClusterQueue had a head)."""
        if self._blocked_by_pods_ready():
            return False
        heads = []
        for name, q in self.queues.items():
            if self.cluster_queues[name].spec.stop_policy != "None":
                continue
            info = q.pop_head()
            if info is not None:
                heads.append(info)
        if not heads:
            return False
        self.cycles += 1
        with self.preemptor.nominating():
            entries, targets_of = self._nominate(heads, touched)
        entries.sort(key=lambda e: self.entry_key(e[0], e[1]))
        order = self._fair_sharing_order(entries) if self.config.fair_sharing else iter(entries)
        # processEntry: the workloads this cycle preempts (gpusim evicts them at once, so they are already gone
        # from the cache, as upstream's fits check simulates their removal) and the quota reserved for the rest
        # of the cycle by Preempt entries, undone when the cycle ends
        preempted: set[str] = set()
        reserved: list[tuple[Node, dict]] = []
        try:
            for info, a, msg in order:
                self._process_entry(info, a, msg, targets_of.get(id(info), []), preempted, reserved)
        finally:
            for node, usage in reserved:
                for fr, v in usage.items():
                    node.add_usage(fr, -v)
            self._held.clear()
        return True

    def _nominate(self, heads: list[Info], touched: set[str]) -> tuple[list[tuple], dict[int, list]]:
        """scheduler.go nominate: each head's entry (info, assignment or None, message), and the preemption
        targets of the Preempt assignments (by ``id(info)``)."""
        entries = []
        for info in heads:
            touched.add(info.cq)
            cq_obj = self.cluster_queues[info.cq]
            # nominate: workload.ValidateAdmissibility (requests within limits, then the namespace selector)
            invalid = info.__dict__.get("_invalid_resources")
            if invalid is None:      # a Workload's PodSets do not change
                invalid = info.__dict__["_invalid_resources"] = validate_resources(info.obj)
            if invalid:
                entries.append((info, None, invalid))
                continue
            if not self._namespace_matches(cq_obj, info.obj.metadata.namespace):
                entries.append((info, None, NAMESPACE_MISMATCH))
                continue
            node = self.nodes[info.cq]
            # A nomination is a pure function of the workload's requests/priority/pod constraints and the
            # cohort tree's usage (its admitted workloads change only with it): while that usage is unchanged, an
            # identical workload that did not fit, or fitted only by preemption, gets the same assignment
            # (gpusim's shortcut; upstream evaluates each head afresh). Its preemption targets are searched anew.
            # Preemption targets depend on the same: none found stays none.
            memo_key = (info.cq, info.signature)
            uses_tas = info.cq in self.tas_cqs
            version = self._tree_version(info.cq)
            hit = self._memo.get(memo_key)
            if hit is not None and hit[0] == version:
                entries.append((info, hit[1], hit[2]))
                continue
            reqs = [(ps.name, r, ps.template.spec, ps) for ps, r in zip(info.obj.spec.pod_sets, info.requests)]
            a = assign(reqs, node, self.specs[info.cq], self.flavors, self.preemptor.oracle(info),
                       self.tas if uses_tas else None, self.tas_cqs.get(info.cq, False))
            msg = a.message()
            if a.mode != FIT:
                self._memo[memo_key] = [version, a, msg, False]    # the last: no preemption targets found
            entries.append((info, a, msg))
        # nominate / getInitialAssignments: the preemption targets of a Preempt assignment are found on the
        # cache as the cycle started, before any entry is processed
        targets_of: dict[int, list] = {}
        for info, a, _ in entries:
            if a is not None and a.mode == PREEMPT:
                hit = self._memo.get((info.cq, info.signature))
                current = hit is not None and hit[1] is a and hit[0] == self._tree_version(info.cq)
                if current and hit[3]:
                    targets_of[id(info)] = []
                    continue
                frs = {fr for p in a.pod_sets if p.mode == PREEMPT for fr in p.usage}
                targets = self.preemptor.get_targets(info, a.usage(), frs, tas_fits=self._tas_fits(a))
                targets_of[id(info)] = targets
                if current and not targets:
                    hit[3] = True
        return entries, targets_of

    def _tree_version(self, cq: str) -> tuple:
        """Changes whenever the usage in the cohort tree of ``cq`` (or, for a ClusterQueue using TAS, the TAS
        usage) does."""
        return self.nodes[cq].root().version, self.tas.version() if cq in self.tas_cqs else None

    def _fair_sharing_order(self, entries: list):
        """makeFairSharingIterator: the next entry is the winner of a tournament up each Cohort tree, taken
        again after every entry is processed (admissions change the shares): at each Cohort, among its
        ClusterQueues' entries and its child Cohorts' winners, the lowest dominant resource share of that child
        with the entry's usage added, then higher priority, then the older queue-order timestamp. Entries of
        different trees cannot interact; they go in ``entry_key`` order."""
        remaining = list(entries)

        def share_with(child: Node, e: tuple) -> float:
            info, a, _ = e
            usage = a.usage() if a is not None else {}
            cq = self.nodes[info.cq]
            for fr, v in usage.items():
                cq.add_usage(fr, v)
            share = child.weighted_share()
            for fr, v in usage.items():
                cq.add_usage(fr, -v)
            return share

        def tie(e: tuple) -> tuple:
            return (-e[0].priority, e[0].queued_at, e[0].seq)

        def winner(node: Node, by_cq: dict) -> Optional[tuple]:
            best, best_key = None, None
            for child in node.children:
                e = by_cq.get(child.name) if child.is_cq else winner(child, by_cq)
                if e is None:
                    continue
                k = (share_with(child, e),) + tie(e)
                if best_key is None or k < best_key:
                    best, best_key = e, k
            return best

        while remaining:
            by_root: dict[int, tuple[Node, dict]] = {}
            for e in remaining:
                node = self.nodes[e[0].cq]
                root = node.root()
                by_root.setdefault(id(root), (root, {}))[1].setdefault(e[0].cq, e)
            firsts = []
            for root, by_cq in by_root.values():
                firsts.append(winner(root, by_cq) if not root.is_cq else by_cq[root.name])
            nxt = min(firsts, key=lambda e: self.entry_key(e[0], e[1]))
            remaining.remove(nxt)
            yield nxt

    def entry_key(self, info: Info, a: Any) -> tuple:
        """The order of a cycle's entries. scheduler.go entryOrdering (classical): the borrowing level
        (Assignment.Borrows), then higher priority (PrioritySortingWithinCohort, on), then the queue-order
        timestamp (workload.Ordering GetQueueOrderTimestamp), then arrival. With fair sharing: the dominant
        resource share of the ClusterQueue with the workload, then priority and timestamp."""
        if self.config.fair_sharing:
            share = self.nodes[info.cq].weighted_share(a.usage() if a is not None else None)
            return (share, -info.priority, info.queued_at, info.seq)
        return (a.borrow if a is not None else 1 << 62, -info.priority, info.queued_at, info.seq)

    def _reserve(self, node: Node, usage: dict, reserved: list) -> None:
        """cq.AddUsage on the cycle's snapshot: quota held for the rest of the cycle (not admitted usage, so the
        usage history leaves it out)."""
        usage = {fr: v for fr, v in usage.items() if v}
        for fr, v in usage.items():
            node.add_usage(fr, v)
            self._held[(node.name, fr)] = self._held.get((node.name, fr), 0) + v
        reserved.append((node, usage))

    @staticmethod
    def _resources_to_reserve(a: Any, node: Node) -> dict:
        """scheduler.go quotaResourcesToReserve for a Preempt assignment: within nominal, what is left of the
        nominal quota; when borrowing, up to nominal + borrowingLimit (the whole usage without a limit)."""
        out = {}
        for fr, v in a.usage().items():
            nominal, used = node.nominal.get(fr, 0), node.usage.get(fr, 0)
            if a.borrow > 0:
                bl = node.borrowing_limit.get(fr)
                out[fr] = v if bl is None else min(v, nominal + bl - used)
            else:
                out[fr] = max(0, min(v, nominal - used))
        return out

    def _process_entry(self, info: Info, a: Any, msg: str, targets: list, preempted: set[str],
                       reserved: list) -> None:
        """scheduler.go processEntry, for one nominated head in entry order."""
        node = self.nodes[info.cq]
        q = self.queues[info.cq]
        mode = a.mode if a is not None else NO_FIT
        if mode == NO_FIT:
            # resolveNoFitReason; gpusim falls back on WaitingForQuota where it resolves to nothing
            reason = PENDING if a is None else (a.no_fit_reason() or WAITING_FOR_QUOTA)
            self._set_pending(info, reason, msg)
            q.requeue(info, immediate=False, namespace_mismatch=a is None and msg == NAMESPACE_MISMATCH)
            return
        if mode == PREEMPT and not targets:
            waiting = [p for p in a.pod_sets if p.mode == PREEMPT]
            tas_only = bool(waiting) and all(p.topology_failed for p in waiting)
            self._set_pending(info, TOPOLOGY_PLACEMENT_FAILED if tas_only else WAITING_FOR_QUOTA, msg)
            q.requeue(info, immediate=False)
            # reserveCapacityForUnreclaimablePreempt: a ClusterQueue that cannot always reclaim what it lends
            # (preemption.CanAlwaysReclaim: reclaimWithinCohort Any) keeps its share for the rest of the cycle
            if self.preemptor.policies[info.cq].reclaim_within_cohort != "Any":
                self._reserve(node, self._resources_to_reserve(a, node), reserved)
            return
        if any(t.info.key in preempted for t in targets):
            self._set_pending(info, WAITING_FOR_QUOTA, OVERLAPPING_TARGETS)
            q.requeue(info, immediate=True)
            return
        usage = a.usage()
        for t in targets:      # fits: with this entry's own targets removed
            self.preemptor._remove(t.info)
        fits = all(v <= node.available(fr) for fr, v in usage.items())
        for t in targets:
            self.preemptor._restore(t.info)
        if not fits:
            self._set_pending(info, WAITING_FOR_QUOTA, NO_LONGER_FITS)
            q.requeue(info, immediate=True)
            return
        if mode == PREEMPT:
            preempted.update(t.info.key for t in targets)
            for t in targets:
                self._preempt(t.info, info, t.reason)
            self._reserve(node, usage, reserved)
            self._set_pending(info, WAITING_FOR_PREEMPTED,
                              f"{msg}. Pending the preemption of {len(targets)} workload(s)")
            q.requeue(info, immediate=True)
            return
        self._admit(info, a)

    def _tas_fits(self, a: Any):
        """For a workload with TAS PodSets: whether every placement fits once ``removed`` are gone
        (preemption.go's TAS fit check over SimulateWorkloadRemoval)."""
        tas_sets = [p for p in a.pod_sets if p.tas_request is not None]
        if not tas_sets or self.tas is None:
            return None
        tas = self.tas

        def fits(removed: list) -> bool:
            with tas.with_removed(removed):
                by_flavor: dict[str, list] = {}
                for p in tas_sets:
                    by_flavor.setdefault(p.tas_flavor, []).append(p.tas_request)
                for flavor, trs in sorted(by_flavor.items()):
                    result = tas.snapshot(flavor).find_topology_assignments(trs)
                    if any(reason for _, reason in result.values()):
                        return False
            return True
        return fits

    def _signature(self, info: Info) -> None:
        """What a nomination depends on besides the tree's usage (the queue-order time only where
        LowerOrNewerEqualPriority makes it matter; a workload that cannot fit never becomes unique)."""
        parts = []
        for ps, req in zip(info.obj.spec.pod_sets, info.requests):
            spec = ps.template.spec
            parts.append((ps.name, tuple(sorted(req.items())), tuple(sorted(spec.node_selector.items())),
                          tuple((t.key, t.operator, t.value, t.effect) for t in spec.tolerations),
                          tuple(vars(ps.topology_request).items()) if ps.topology_request is not None else None,
                          repr(spec.affinity) if ps.topology_request is not None else None))
        sig: tuple = (tuple(parts), info.priority, info.obj.metadata.namespace)
        if self.preemptor.policies[info.cq].within_cluster_queue == "LowerOrNewerEqualPriority":
            sig += (info.queued_at, info.seq)
        info.signature = sig

    def _set_pending(self, info: Info, reason: str, message: str) -> None:
        """QuotaReserved=False with the reason; a Warning event when the message changes. The reason is
        ``Pending`` unless UnadmittedWorkloadsObservability is on (workload.UnadmittedWorkloadReasonWithFallback)."""
        if not self.observability:
            reason = PENDING
        wl = info.obj
        if info.last_message == message and info.last_reason == reason:
            return
        info.last_reason = reason
        if set_condition(wl, QUOTA_RESERVED, "False", reason, message, self.ctx.now):
            self.ctx.event(wl, WARNING, reason, message, SOURCE)
            self.ctx.api.update(wl)
        info.last_message = message

    # --- admission ---------------------------------------------------------------------------------------
    def _admit(self, info: Info, a: Any) -> None:
        ctx, wl, now = self.ctx, info.obj, self.ctx.now
        node = self.nodes[info.cq]
        info.usage = a.usage()
        for fr, v in info.usage.items():
            node.add_usage(fr, v)
            self.history.append((now, info.cq, fr[0], fr[1], node.usage[fr] - self._held.get((info.cq, fr), 0)))
        info.reserved_at = now
        info.last_message = info.last_reason = ""
        self.admitted[info.cq][info.key] = info
        self.preemptor.admitted_added(info)
        self._dirty.add(info.cq)
        counts = self._lq(info)
        counts[0] -= 1
        counts[1] += 1
        wl.status.admission = Admission(info.cq, [
            PodSetAssignment(p.name, dict(p.flavors), {fr[1]: resources.quantity(fr[1], v) for fr, v in p.usage.items()},
                             ps.count, to_v1beta2(p.topology) if p.topology is not None else None)
            for p, ps in zip(a.pod_sets, wl.spec.pod_sets)])
        info.tas_usage = [(p.tas_flavor, p.topology.usage(p.tas_request.single_pod_requests))
                          for p in a.pod_sets if p.topology is not None]
        for flavor, per_domain in info.tas_usage:
            self.tas.add_usage(flavor, per_domain)
        for ctype in (EVICTED, PREEMPTED):     # workload.SetQuotaReservation
            c = wl.condition(ctype)
            if c is not None and c.status == "True":
                set_condition(wl, ctype, "False", "QuotaReserved", "Previously: " + c.message, now)
        cq = info.cq
        set_condition(wl, QUOTA_RESERVED, "True", "QuotaReserved", f"Quota reserved in ClusterQueue {cq}", now)
        # workload.QueuedWaitTime: since creation, or since the last Requeued transition
        requeued = wl.condition(REQUEUED)
        queued = requeued.last_transition_time if requeued is not None else wl.metadata.creation_timestamp
        ctx.event(wl, NORMAL, "QuotaReserved",
                  f"Quota reserved in ClusterQueue {cq}, wait time since queued was {now - (queued or 0):.0f}s", SOURCE)
        set_condition(wl, ADMITTED, "True", "Admitted", "The workload is admitted", now)
        ctx.event(wl, NORMAL, "Admitted", f"Admitted by ClusterQueue {cq}, wait time since reservation was 0s", SOURCE)
        job = info.job
        if job is not None and self.config.wait_for_pods_ready:
            set_condition(wl, PODS_READY, "False", "WaitForStart", NOT_READY_MSG, now)
            self._pods_ready_timer(info, self.config.pods_ready_timeout, now)
        ctx.api.update(wl)
        if job is not None:
            self.job_reconciler.start(job, wl, self.flavors)

    def _pods_ready_timer(self, info: Info, timeout: float, admitted_at: float) -> None:
        t = self.ctx.env.timeout(timeout)
        t.callbacks.append(lambda _e: self._pods_ready_timeout(info, admitted_at))

    # --- release, eviction, requeue ----------------------------------------------------------------------
    def _release(self, info: Info) -> None:
        node = self.nodes[info.cq]
        now = self.ctx.now
        for flavor, per_domain in info.tas_usage:
            self.tas.add_usage(flavor, per_domain, -1)
        info.tas_usage = []
        for fr, v in info.usage.items():
            node.add_usage(fr, -v)
            self.history.append((now, info.cq, fr[0], fr[1], node.usage[fr] - self._held.get((info.cq, fr), 0)))
        if self.admitted[info.cq].pop(info.key, None) is not None:
            self.preemptor.admitted_removed(info)
            self._lq(info)[1] -= 1
        info.usage = {}
        info.reserved_at = None
        self._dirty.add(info.cq)
        self.kick()
        self._requeue_cohort(info.cq)

    def _requeue_cohort(self, cq: str) -> None:
        """QueueInadmissibleWorkloads for every ClusterQueue in the cohort tree of ``cq``."""
        moved = False
        for q in self._tree_queues[cq]:
            moved |= q.queue_inadmissible()
        if moved:
            self.kick()

    def _evict(self, info: Info, reason: str, message: str) -> None:
        """Evicted=True, stop the job, unset the quota reservation (workload.go SetEvictedCondition,
        jobframework stopJob, UnsetQuotaReservationWithCondition)."""
        ctx, wl, now = self.ctx, info.obj, self.ctx.now
        set_condition(wl, EVICTED, "True", reason, message, now)
        ctx.event(wl, NORMAL, f"EvictedDueTo{reason}", message, WORKLOAD_SOURCE)
        if info.job is not None:
            self.job_reconciler.stop(info.job, message)
        set_condition(wl, QUOTA_RESERVED, "False", PENDING, message, now)
        info.last_message, info.last_reason = message, PENDING
        set_condition(wl, ADMITTED, "False", "NoReservation", "The workload has no reservation", now)
        if wl.condition(PODS_READY) is not None:
            set_condition(wl, PODS_READY, "False", "WaitForStart", NOT_READY_MSG, now)
        wl.status.admission = None
        self._release(info)
        self.queues[info.cq].delete(info)

    def _preempt(self, victim: Info, preemptor: Info, reason: str) -> None:
        message = preemption_message(preemptor.obj.metadata.uid, preemptor.obj.metadata.labels, reason,
                                     self.nodes[preemptor.cq].path(), self.nodes[victim.cq].path())
        wl = victim.obj
        self._evict(victim, EVICTED_BY_PREEMPTION, message)     # events EvictedDueToPreempted, then Preempted
        set_condition(wl, PREEMPTED, "True", reason, message, self.ctx.now)
        self.ctx.event(wl, NORMAL, "Preempted", message, SOURCE)
        set_condition(wl, REQUEUED, "True", EVICTED_BY_PREEMPTION, message, self.ctx.now)
        self.ctx.api.update(wl)
        self._push(victim)

    def job_changed(self, wl: Workload, job: Any) -> None:
        """Job status → PodsReady / Finished on its Workload."""
        info = self.workloads.get(f"{wl.metadata.namespace}/{wl.metadata.name}")
        if info is None:
            return
        info.job = job
        now = self.ctx.now
        fin = self.job_reconciler.finished(job)
        if fin is not None and not wl.is_true(FINISHED):
            set_condition(wl, FINISHED, "True", fin[0], fin[1], now)
            self.ctx.api.update(wl)     # the workload loop releases the quota
            return
        if info.reserved_at is not None and self.config.wait_for_pods_ready \
                and self.job_reconciler.pods_ready(job, wl.spec.pod_sets[0].count) and not wl.is_true(PODS_READY):
            set_condition(wl, PODS_READY, "True", "Started", READY_MSG, now)
            self.ctx.api.update(wl)
            if self.config.block_admission:
                self.kick()

    def _pods_ready_timeout(self, info: Info, admitted_at: float) -> None:
        """workload_controller.go: not all pods ready within the timeout since admission → evict, requeue
        with exponential backoff or deactivate after backoffLimitCount requeues."""
        wl, cfg, now = info.obj, self.config, self.ctx.now
        if info.reserved_at != admitted_at or wl.is_true(PODS_READY) or wl.is_true(FINISHED):
            return
        ns, name = wl.metadata.namespace, wl.metadata.name
        message = f"Exceeded the PodsReady timeout {ns}/{name}"
        self._evict(info, EVICTED_BY_PODS_READY_TIMEOUT, message)
        state = wl.status.requeue_state or RequeueState()
        count = state.count or 0
        if cfg.backoff_limit_count is not None and count + 1 > cfg.backoff_limit_count:
            set_condition(wl, DEACTIVATION_TARGET, "True", REQUEUING_LIMIT_EXCEEDED,
                          "exceeding the maximum number of re-queuing retries", now)
            wl.spec.active = False
            # UNVERIFIED: the exact message once the workload controller applies the deactivation
            set_condition(wl, EVICTED, "True", f"DeactivatedDueTo{REQUEUING_LIMIT_EXCEEDED}",
                          "The workload is deactivated", now)
            self.ctx.event(wl, NORMAL, f"EvictedDueToDeactivatedDueTo{REQUEUING_LIMIT_EXCEEDED}",
                           "The workload is deactivated", WORKLOAD_SOURCE)
            set_condition(wl, REQUEUED, "False", f"DeactivatedDueTo{REQUEUING_LIMIT_EXCEEDED}",
                          "The workload is deactivated", now)
            remove_condition(wl, DEACTIVATION_TARGET)
            self.ctx.api.update(wl)
            return
        count += 1
        backoff = min(cfg.backoff_base_seconds * 2 ** (count - 1), cfg.backoff_max_seconds)
        backoff = min(backoff * (1 + BACKOFF_JITTER * self.ctx.rng.random()), cfg.backoff_max_seconds)
        wl.status.requeue_state = RequeueState(count, now + backoff)
        set_condition(wl, REQUEUED, "False", EVICTED_BY_PODS_READY_TIMEOUT, message, now)
        info.queued_at = queue_order_timestamp(wl, cfg.requeuing_timestamp)
        self.ctx.api.update(wl)
        t = self.ctx.env.timeout(backoff)
        t.callbacks.append(lambda _e: self._backoff_finished(info))

    def _backoff_finished(self, info: Info) -> None:
        wl = info.obj
        if not wl.spec.active or info.key not in self.workloads:
            return
        set_condition(wl, REQUEUED, "True", "BackoffFinished", "The workload backoff was finished", self.ctx.now)
        self.ctx.api.update(wl)
        self._push(info)

    # --- status ------------------------------------------------------------------------------------------
    def _update_queue_status(self, names: list[str]) -> None:
        """ClusterQueue status (pending/reserving/admitted, flavorsReservation/flavorsUsage, fairSharing) and
        the counts of their LocalQueues."""
        for name in names:
            cq, node, q = self.cluster_queues[name], self.nodes[name], self.queues[name]
            st = cq.status
            st.pending_workloads = len(q)
            st.reserving_workloads = st.admitted_workloads = len(self.admitted[name])
            usage = []
            for fl, res in _flavor_resources(cq):
                fr = (fl, res)
                u = node.usage.get(fr, 0)
                usage.append((fl, res, u, max(0, u - node.subtree.get(fr, 0))))
            by_flavor: dict[str, list] = {}
            for fl, res, u, b in usage:
                by_flavor.setdefault(fl, []).append({"name": res, "total": resources.quantity(res, u),
                                                     "borrowed": resources.quantity(res, b)})
            st.flavors_reservation = [{"name": f, "resources": r} for f, r in by_flavor.items()]
            st.flavors_usage = st.flavors_reservation
            if self.config.fair_sharing:
                share = node.weighted_share()
                st.fair_sharing = {"weightedShare": share if math.isinf(share) else math.ceil(share)}
            self.ctx.api.update(cq)
        wanted = set(names)
        for key, lq in sorted(self.local_queues.items()):
            if lq.spec.cluster_queue not in wanted:
                continue
            pending, admitted = self._lq_counts[key]
            if (lq.status.pending_workloads, lq.status.admitted_workloads) != (pending, admitted):
                lq.status.pending_workloads = pending
                lq.status.admitted_workloads = lq.status.reserving_workloads = admitted
                self.ctx.api.update(lq)


def _flavor_resources(cq: Any) -> list[tuple[str, str]]:
    return [(fq.name, r) for g in cq.spec.resource_groups for fq in g.flavors for r in g.covered_resources]


def install(sim: Any) -> Optional[Kueue]:
    """Add-on install (gpusim.cluster.components): a kueue-controller-manager when the scenario holds any Kueue object (or a Job naming a
    queue); its webhook suspends such Jobs on create."""
    from .jobframework import webhook
    sc = sim.scenario
    if sc.kueue_config is None:
        return None
    objects = {k: v for k, v in sc.objects.items()}
    api = sim.ctx.api
    api.admission["Job"] = webhook(api.admission.get("Job"))
    kueue = Kueue(sim.ctx, sc.kueue_config, objects)
    for wl in objects.get(Workload.RESOURCE, []):
        sim.ctx.env.process(sim.submit(wl))
    return kueue
