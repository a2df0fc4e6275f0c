"""ElasticQuota status controller (mirrors kubernetes-sigs/scheduler-plugins
pkg/controllers/elasticquota_controller.go): on every change of a pod in a namespace with an
ElasticQuota, ``status.used`` = the summed requests (containers, at least the largest init container)
of the namespace's **Running** pods, with every resource named in ``min`` or ``max`` present (0 when
unused). A change is written and recorded as a Normal event ``Synced`` "Elastic Quota <ns>/<name>
synced successfully". Only the first quota of a namespace is maintained, as upstream.

Quantities are written in canonical decimal form (cpu in cores or milli-cores); upstream keeps the
format of the first operand of its sum (UNVERIFIED for memory, which may print as ``16Gi`` there).
"""
from __future__ import annotations

from typing import Any, Generator, Optional

from ..componenthelpers.resource import pod_requests
from ..controlplane.context import Context
from ..controlplane.events import NORMAL
from ..componenthelpers.resource import to_units

SOURCE = "ElasticQuotaController"


def format_units(name: str, units: int) -> str:
    """A summed amount as a DecimalSI quantity string: cpu from milli-units, others whole."""
    if name == "cpu" and units % 1000:
        return f"{units}m"
    value = units // 1000 if name == "cpu" else units
    for suffix in ("", "k", "M", "G", "T", "P", "E"):
        if value == 0 or value % 1000 or suffix == "E":
            return f"{value}{suffix}"
        value //= 1000
    return str(value)


def compute_used(eq: Any, pods: list) -> dict[str, str]:
    """computeElasticQuotaUsed: Running pods' requests, zero for every resource of min and max."""
    used: dict[str, int] = {k: 0 for k in [*(eq.spec.min or {}), *(eq.spec.max or {})]}
    for p in pods:
        if p.status.phase == "Running":
            for k, v in pod_requests(p).items():
                used[k] = used.get(k, 0) + to_units(k, v)
    return {k: format_units(k, used[k]) for k in sorted(used)}


class ElasticQuotaController:
    def __init__(self, ctx: Context):
        self.ctx = ctx
        self._pods = ctx.api.watch("Pod")
        for eq in self._quotas():
            self.reconcile(eq.metadata.namespace)
        ctx.env.process(self._loop())

    def _quotas(self) -> list:
        return sorted(self.ctx.api.list("ElasticQuota"),
                      key=lambda e: (e.metadata.namespace, e.metadata.creation_timestamp or 0.0, e.metadata.name))

    def _loop(self) -> Generator:
        while True:
            ev = yield self._pods.get()
            self.reconcile(ev.obj.metadata.namespace)

    def reconcile(self, namespace: str) -> None:
        eq: Optional[Any] = next((e for e in self._quotas() if e.metadata.namespace == namespace), None)
        if eq is None:
            return
        pods = self.ctx.api.list("Pod", lambda p: p.metadata.namespace == namespace)
        used = compute_used(eq, pods)
        if used == (eq.status.used or {}):
            return
        eq.status.used = used
        self.ctx.api.update(eq)
        self.ctx.event(eq, NORMAL, "Synced", f"Elastic Quota {namespace}/{eq.metadata.name} synced successfully",
                       SOURCE)


def install(sim: Any) -> Optional[ElasticQuotaController]:
    """Add-on install (gpusim.cluster.components): create the scenario's ElasticQuotas and run the controller (None without quotas)."""
    quotas = sim.scenario.objects.get("ElasticQuota", [])
    if not quotas:
        return None
    for eq in quotas:
        sim.ctx.api.create(eq)
    return ElasticQuotaController(sim.ctx)
