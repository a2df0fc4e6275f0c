"""Helpers for the tests that port rows of Kueue's scheduler and preemption unit tests
(tests/test_kueue_scheduler_upstream.py, tests/test_kueue_preemption_upstream.py).

Upstream's tests build a cache and a queue manager by hand: admitted workloads are added with their quota
reservation (``ReserveQuota``/``SimpleReserveQuota``: explicit flavors and reservation time), pending workloads
are queued, then they call one ``scheduler.schedule(ctx)`` (pkg/scheduler/scheduler_test.go) or
``preemptor.GetTargets`` with a given flavor assignment (pkg/scheduler/preemption/preemption_test.go).

``Cluster`` does the same with gpusim's own objects: the scenario's Kueue objects (ResourceFlavors, ClusterQueues,
Cohorts, LocalQueues, Namespaces, the manager Configuration) are loaded and validated by gpusim's loader and
installed into a real ``gpusim.kueue.scheduler.Kueue``; ``reserve`` admits a workload with the row's flavors
through ``Kueue._admit`` (the quota cache, the preemption candidate index, the Workload's admission and
conditions), ``add`` queues a pending workload as the workload controller does, ``schedule`` runs one scheduling
cycle (``Kueue.schedule``) and ``get_targets`` calls gpusim's ``Preemptor.get_targets``. The simulated clock is not
run, so nothing else happens between the calls.
"""
from __future__ import annotations

from typing import Any, Optional

from gpusim.cluster.scenario import load
from gpusim.cluster.simulation import Simulation
from gpusim.kueue.flavorassigner import Assignment, PodSetAssignment
from gpusim.kueue.workload import PREEMPTED, Info, pod_set_requests

WL = "Workload.kueue.x-k8s.io"


def k8s(name: str) -> str:
    """Upstream's unit tests bypass the apiserver and use names it refuses ("ClusterQueueA", "cq_a", Cohort "A"):
    lower case, '_' → '-' (a workload key "ns/name" keeps its '/')."""
    return name.lower().replace("_", "-")


def flavor(name: str, labels: Optional[dict] = None) -> str:
    spec = f"\nspec: {{nodeLabels: {labels}}}" if labels else ""
    return f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {{name: {name}}}{spec}\n"


def namespace(name: str, labels: Optional[dict] = None) -> str:
    return f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: {name}, labels: {labels or {}}}}\n"


def local_queue(name: str, ns: str, cq: str) -> str:
    return (f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: {k8s(name)}, namespace: {ns}}}\n"
            f"spec: {{clusterQueue: {k8s(cq)}}}\n")


def _flavor_quotas(fq: tuple, cohort: bool = True) -> str:
    """(flavor, [(resource, nominal, borrowingLimit, lendingLimit)]) as utiltesting.MakeFlavorQuotas.Resource.
    Without a cohort the borrowingLimit is left out (upstream's rows bypass the webhook that requires it nil then;
    without a cohort it has no effect)."""
    name, res = fq
    out = []
    for r in res:
        r = tuple(r) + (None,) * (4 - len(r))
        s = f'{{name: "{r[0]}", nominalQuota: "{r[1]}"'
        if r[2] not in (None, "") and cohort:
            s += f', borrowingLimit: "{r[2]}"'
        if r[3] not in (None, ""):
            s += f', lendingLimit: "{r[3]}"'
        out.append(s + "}")
    return f"    - name: {name}\n      resources: [{', '.join(out)}]"


def _groups(groups: list, cohort: bool = True) -> str:
    lines = []
    for g in groups:
        covered: list[str] = []
        for _, res in g:
            for r in res:
                if r[0] not in covered:
                    covered.append(r[0])
        lines.append(f"  - coveredResources: [{', '.join(repr(c) for c in covered)}]\n    flavors:")
        lines += [_flavor_quotas(fq, cohort) for fq in g]
    return "\n".join(lines)


def upstream_preemption(p: dict) -> dict:
    """utiltesting's ``Preemption(kueue.ClusterQueuePreemption{...})`` replaces the whole struct, so a row that
    sets one policy leaves the other empty. Kueue's candidate search (preemption.go findCandidates) and flavor
    assigner (canPreemptWhileBorrowing) treat an empty policy as neither Never nor Any, i.e. LowerPriority; the
    apiserver would default it to Never, which is not what the row exercised. Such rows are written with
    LowerPriority for the policy they leave out."""
    out = dict(p)
    out.setdefault("withinClusterQueue", "LowerPriority")
    out.setdefault("reclaimWithinCohort", "LowerPriority")
    return out


def cluster_queue(name: str, groups: list, cohort: str = "", preemption: Optional[dict] = None,
                  strategy: str = "BestEffortFIFO", fungibility: Optional[dict] = None,
                  selector: Optional[dict] = None, weight: Optional[str] = None) -> str:
    """utiltesting.MakeClusterQueue: namespaceSelector {} (every namespace) unless ``selector`` (a LabelSelector),
    ``groups``: resource groups, each a list of ``_flavor_quotas`` tuples."""
    spec = [f"  namespaceSelector: {selector if selector is not None else {}}", f"  queueingStrategy: {strategy}"]
    if cohort:
        spec.append(f"  cohortName: {k8s(cohort)}")
    if preemption:
        spec.append(f"  preemption: {upstream_preemption(preemption)}")
    if fungibility:
        spec.append(f"  flavorFungibility: {fungibility}")
    if weight is not None:
        spec.append(f'  fairSharing: {{weight: "{weight}"}}')
    if groups:
        spec.append("  resourceGroups:\n" + _groups(groups, bool(cohort)))
    return ("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: %s}\nspec:\n%s\n"
            % (k8s(name), "\n".join(spec)))


def cohort(name: str, parent: str = "", groups: Optional[list] = None, weight: Optional[str] = None) -> str:
    spec = []
    if parent:
        spec.append(f"  parentName: {k8s(parent)}")
    if weight is not None:
        spec.append(f'  fairSharing: {{weight: "{weight}"}}')
    if groups:
        spec.append("  resourceGroups:\n" + _groups(groups))
    body = "\nspec:\n" + "\n".join(spec) if spec else ""
    return f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {{name: {k8s(name)}}}{body}\n"


def workload(name: str, ns: str, queue: str = "", podsets: Optional[list] = None, priority: int = 0,
             requests: Optional[dict] = None) -> str:
    """utiltesting.MakeWorkload: one PodSet "main" with one pod and ``requests`` unless ``podsets``
    ([(name, count, {resource: quantity})])."""
    podsets = podsets or [("main", 1, requests or {})]
    sets = []
    for ps_name, count, req in podsets:
        r = ", ".join(f'"{k}": "{v}"' for k, v in req.items())
        sets.append(f"  - name: {ps_name}\n    count: {count}\n    template:\n      spec:\n"
                    f"        containers: [{{name: c, image: x, resources: {{requests: {{{r}}}}}}}]")
    q = f"\n  queueName: {k8s(queue)}" if queue else ""
    return (f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: {k8s(name)}, namespace: {ns}}}\n"
            f"spec:{q}\n  priority: {priority}\n  podSets:\n" + "\n".join(sets) + "\n")


def config(body: str) -> str:
    inner = "\n".join("    " + line for line in ("apiVersion: config.kueue.x-k8s.io/v1beta2\n"
                                                  "kind: Configuration\n" + body).splitlines())
    return ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kueue-manager-config, namespace: kueue-system}\n"
            "data:\n  controller_manager_config.yaml: |\n" + inner + "\n")


class Cluster:
    """A gpusim Kueue whose cache and queues a test fills, then one scheduling cycle or one GetTargets."""

    def __init__(self, docs: list[str]):
        sc = load(texts=[("<upstream row>", "\n---\n".join(docs))])
        self.objects = {f"{w.metadata.namespace}/{w.metadata.name}": w for w in sc.objects.pop(WL, [])}
        self.sim = Simulation(sc, seed=0)
        self.kueue = self.sim.addons["kueue"]
        self.ctx = self.sim.ctx
        self.infos: dict[str, Info] = {}

    def _info(self, key: str, cq: str, created: float) -> Info:
        key, cq = k8s(key), k8s(cq)
        wl = self.objects[key]
        wl.metadata.creation_timestamp = created
        wl.metadata.uid = key       # upstream's rows that depend on UID order name the UID after the workload
        self.ctx.api.create(wl)
        k = self.kueue
        k._seq += 1
        info = Info(wl, cq, k._priority(wl), [pod_set_requests(ps) for ps in wl.spec.pod_sets], k._seq,
                    queued_at=created)
        k._signature(info)
        k.workloads[info.key] = info
        self.infos[key] = info
        return info

    def reserve(self, key: str, cq: str, flavors: Any, at: float = 0.0, created: float = 0.0) -> None:
        """ReserveQuotaAt: an admitted workload holding the quota of ``flavors`` (resource → flavor, or one such
        mapping per PodSet) in ClusterQueue ``cq``, reserved at ``at``."""
        info = self._info(key, cq, created)
        cq = k8s(cq)
        covered = {r for g in self.kueue.cluster_queues[cq].spec.resource_groups for r in g.covered_resources}
        per_ps = flavors if isinstance(flavors, list) else [flavors] * len(info.requests)
        pod_sets = []
        for ps, req, fl in zip(info.obj.spec.pod_sets, info.requests, per_ps):
            usage = {(fl[r], r): v for r, v in req.items() if r in covered and r in fl}
            pod_sets.append(PodSetAssignment(ps.name, {r: fl[r] for r in req if r in covered and r in fl}, usage))
        if (info.obj.metadata.namespace, info.obj.spec.queue_name) not in self.kueue._lq_counts:
            self.kueue._lq_counts[(info.obj.metadata.namespace, info.obj.spec.queue_name)] = [1, 0]
        else:
            self.kueue._lq_counts[(info.obj.metadata.namespace, info.obj.spec.queue_name)][0] += 1
        self.kueue._admit(info, Assignment(pod_sets))
        if at:
            self.kueue.preemptor.admitted_removed(info)
            info.reserved_at = at
            self.kueue.preemptor.admitted_added(info)

    def add(self, key: str, created: float = 0.0) -> None:
        """A pending workload, queued in the ClusterQueue of its LocalQueue (queue.Manager AddOrUpdateWorkload)."""
        key = k8s(key)
        wl = self.objects[key]
        wl.metadata.creation_timestamp = created
        wl.metadata.uid = key
        self.ctx.api.create(wl)
        self.kueue._add(wl)
        self.infos[key] = self.kueue.workloads[key]

    def delete(self, key: str) -> None:
        """The Workload is deleted: what the workload controller's DELETED branch does (out of the queue, its
        quota released, the cohort's inadmissible workloads requeued: QueueAssociatedInadmissibleWorkloadsAfter)."""
        k = self.kueue
        info = k.workloads.pop(k8s(key))
        self.ctx.api.delete(info.obj)
        q = k.queues[info.cq]
        if q.contains(info):
            k._lq(info)[0] -= 1
        q.delete(info)
        if info.reserved_at is not None:
            k._release(info)

    def schedule(self) -> None:
        self.kueue.schedule(set())

    def incoming(self, key: str, cq: str, created: float = 0.0) -> Info:
        """The preemptor of a GetTargets row (workload.NewInfo with ClusterQueue = targetCQ): not queued."""
        return self._info(key, cq, created)

    def get_targets(self, info: Info, assignment: list) -> set[str]:
        """preemptor.GetTargets with the row's assignment ([(podset index, resource, flavor, "Fit"|"Preempt")]),
        as ``key:reason`` strings (upstream's targetKeyReason); the cache must be unchanged afterwards."""
        usage: dict = {}
        frs = set()
        for i, res, fl, mode in assignment:
            req = info.requests[i]
            fr = (fl, res)
            usage[fr] = usage.get(fr, 0) + req.get(res, 0)
            if mode == "Preempt":
                frs.add(fr)
        before = self.usage()
        targets = self.kueue.preemptor.get_targets(info, usage, frs)
        assert self.usage() == before, "GetTargets changed the cache"
        return {f"{t.info.key}:{t.reason}" for t in targets}

    def usage(self) -> dict:
        out = {}
        for name, node in [*self.kueue.nodes.items(), *self.kueue.cohort_nodes.items()]:
            out[name] = {fr: v for fr, v in node.usage.items() if v}
        return out

    # --- what upstream's TestSchedule compares -------------------------------------------------------------
    def assignments(self) -> dict[str, tuple[str, list[dict]]]:
        """Workload key → (ClusterQueue, [resource → flavor per PodSet]) for every workload holding quota."""
        out = {}
        for cq, adm in self.kueue.admitted.items():
            for key, info in adm.items():
                out[key] = (cq, [dict(p.flavors) for p in info.obj.status.admission.pod_set_assignments])
        return out

    def preempted(self) -> dict[str, str]:
        """Workload key → Preempted condition reason, for every workload preempted so far."""
        out = {}
        for key, info in self.infos.items():
            c = info.obj.condition(PREEMPTED)
            if c is not None and c.status == "True":
                out[key] = c.reason
        return out

    def left(self) -> dict[str, list[str]]:
        """queue.Manager Dump: the workloads in each ClusterQueue's heap (not the inadmissible ones)."""
        out = {}
        for name, q in self.kueue.queues.items():
            keys = sorted(k for g in q._active.values() for k in g.members)
            if keys:
                out[name] = keys
        return out

    def inadmissible(self) -> dict[str, list[str]]:
        """queue.Manager DumpInadmissible."""
        out = {}
        for name, q in self.kueue.queues.items():
            keys = sorted(k for g in q._inadmissible.values() for k in g.members)
            if keys:
                out[name] = keys
        return out

