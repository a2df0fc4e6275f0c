"""The TAS topology ungater (mirrors kueue pkg/controller/tas/topology_ungater.go, v0.19).

Kueue admits a TAS workload with a topology assignment but cannot say which pod goes where before the pods
exist, so the Job's pod template carries the scheduling gate ``kueue.x-k8s.io/topology`` (injected with the
admission, jobframework.py): the pods are created gated, and kube-scheduler leaves them alone. The ungater
reconciles a workload ``ungateBatchPeriod`` (1 s) after an event on one of its gated pods; it lists the pods of
each PodSet (label ``kueue.x-k8s.io/podset``, annotation ``kueue.x-k8s.io/workload``, not terminated), counts
the ungated ones per domain (from their nodeSelector), and ungates the gated ones domain by domain in the
assignment's order (``assignGatedPodsToDomainsGreedy``): it removes the gate and adds the domain's node labels
(``kubernetes.io/hostname: <node>`` when the hostname is the lowest level) to the pod's nodeSelector. The
kube-scheduler then places each pod inside its domain.

Pods are taken in creation order, then name (upstream takes the informer's list order). Rank-based ungating
(pods with an index label, e.g. Indexed Jobs) is not modelled: gpusim's Job controller makes NonIndexed Jobs.
"""
from __future__ import annotations

from typing import Any, Generator

from ..api.kueue_x_k8s_io import PODSET_LABEL, TOPOLOGY_SCHEDULING_GATE, WORKLOAD_ANNOTATION, Workload
from ..controlplane.apiserver import DELETED

UNGATE_BATCH_PERIOD = 1.0     # topology_ungater.go ungateBatchPeriod
COMPONENT = "kueue-controller-manager"


def has_gate(pod: Any) -> bool:
    return any(g.name == TOPOLOGY_SCHEDULING_GATE for g in pod.spec.scheduling_gates)


class TopologyUngater:
    def __init__(self, ctx: Any):
        self.ctx = ctx
        self._pending: set[tuple[str, str]] = set()
        ctx.env.process(self._pods(ctx.api.watch("Pod")))
        ctx.env.process(self._workloads(ctx.api.watch(Workload.RESOURCE)))

    def _pods(self, watch) -> Generator:
        """podHandler.queueReconcileForPod: any event of a pod with the workload annotation queues its
        workload after the batch period."""
        while True:
            ev = yield watch.get()
            pod = ev.obj
            wl = pod.metadata.annotations.get(WORKLOAD_ANNOTATION)
            if wl and ev.type != DELETED and has_gate(pod):
                self._queue((pod.metadata.namespace, wl), UNGATE_BATCH_PERIOD)

    def _workloads(self, watch) -> Generator:
        while True:
            ev = yield watch.get()
            if ev.type != DELETED and self._admitted_by_tas(ev.obj):
                self._queue((ev.obj.metadata.namespace, ev.obj.metadata.name), 0.0)

    def _queue(self, key: tuple[str, str], after: float) -> None:
        if key in self._pending:
            return
        self._pending.add(key)
        t = self.ctx.env.timeout(after)
        t.callbacks.append(lambda _e: self._reconcile(key))

    @staticmethod
    def _admitted_by_tas(wl: Any) -> bool:
        """isAdmittedByTAS."""
        return wl.status.admission is not None and wl.is_true("Admitted") and \
            any(psa.topology_assignment is not None for psa in wl.status.admission.pod_set_assignments)

    def _reconcile(self, key: tuple[str, str]) -> None:
        self._pending.discard(key)
        ns, name = key
        ctx = self.ctx
        wl = ctx.api.get(Workload.RESOURCE, ns, name)
        if wl is None or not self._admitted_by_tas(wl):
            return
        for psa in wl.status.admission.pod_set_assignments:
            ta = psa.topology_assignment
            if ta is None:
                continue
            pods = sorted((p for p in ctx.api.list("Pod", lambda p: p.metadata.namespace == ns)
                           if p.metadata.labels.get(PODSET_LABEL) == psa.name
                           and p.metadata.annotations.get(WORKLOAD_ANNOTATION) == name
                           and p.status.phase not in ("Failed", "Succeeded")),
                          key=lambda p: (p.metadata.creation_timestamp or 0, p.metadata.name))
            for pod, labels in self.assign_gated_pods_to_domains(ta, pods):
                pod.spec.scheduling_gates = [g for g in pod.spec.scheduling_gates
                                             if g.name != TOPOLOGY_SCHEDULING_GATE]
                pod.spec.node_selector = {**pod.spec.node_selector, **labels}
                ctx.trace.add(ctx.now, COMPONENT, "tas.(*topologyUngater).Reconcile", f"Pod {ns}/{pod.metadata.name}",
                              "Ungated", nodeSelector=",".join(f"{k}={v}" for k, v in sorted(labels.items())))
                ctx.api.update(pod)

    @staticmethod
    def assign_gated_pods_to_domains(ta: Any, pods: list[Any]) -> list[tuple[Any, dict[str, str]]]:
        """assignGatedPodsToDomainsGreedy: (pod, node labels) for the gated pods still needed per domain."""
        levels = ta.levels
        gated, ungated_in = [], {}
        for p in pods:
            if has_gate(p):
                gated.append(p)
            else:
                did = ",".join(p.spec.node_selector.get(k, "") for k in levels)
                ungated_in[did] = ungated_in.get(did, 0) + 1
        out: list[tuple[Any, dict[str, str]]] = []
        for values, count in ta.domains():
            remaining = max(count - ungated_in.get(",".join(values), 0), 0)
            take = min(remaining, len(gated) - len(out))
            labels = dict(zip(levels, values))
            for p in gated[len(out):len(out) + take]:
                out.append((p, labels))
        return out
