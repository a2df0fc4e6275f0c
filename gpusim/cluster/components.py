"""The components a scenario can install, as a plain table (the way kube-scheduler's registry is a
map): the loader runs each ``check`` on the loaded scenario, and the simulation calls each ``install``
once the core components exist and before workloads are submitted, both in this order.

- ``check(scenario, errors)``: the component's configuration check; it raises ``InputError`` (through
  ``errors``, an ``api.scheme.ObjectErrors``) and records what it resolved on the scenario.
- ``install(sim) -> component | None``: an add-on installed only when the scenario uses it; the result is
  kept in ``Result.addons[name]``.
- ``namespace`` / ``needed(scenario)``: the namespace the component's installation creates, when needed.

The core components (kubelets with their device plugins, mig-manager, kube-scheduler, the Job and node
lifecycle controllers) are built by ``gpusim.cluster.simulation`` itself.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from .. import kueue, operator, volcano
from ..api.nvidia_v1 import OPERATOR_NAMESPACE
from ..api.resource_nvidia_com_v1beta1 import DRIVER_NAMESPACE
from ..controllers import computedomain, elasticquota, resourceclaim
from ..kueue import options as kueue_options
from ..node import options as node_options
from ..node.nfdtopologyupdater import install as nfd_install
from ..scheduler import options as scheduler_options
from ..scheduler.plugins import gangscheduling
from ..volcano import options as volcano_options


def nfd_needed(sc: Any) -> bool:
    """NFD's topology-updater runs when a scheduler profile enables NodeResourceTopologyMatch (the pair
    scheduler-plugins' manifests/noderesourcetopology deploys together)."""
    return any("NodeResourceTopologyMatch" in names for p in sc.scheduler_profiles for names in p.points.values())


@dataclass(frozen=True)
class Component:
    name: str
    check: Optional[Callable[[Any, Any], None]] = None
    install: Optional[Callable[[Any], Any]] = None
    namespace: str = ""
    needed: Callable[[Any], bool] = lambda sc: True


COMPONENTS: tuple[Component, ...] = (
    Component("kube-scheduler", check=scheduler_options.check),
    Component("gpu-operator", check=node_options.check_device_plugin, install=operator.install,
              namespace=OPERATOR_NAMESPACE, needed=lambda sc: sc.cluster_policy is not None),
    Component("mig-manager", check=node_options.check_mig_manager),
    Component("hami", check=node_options.check_hami),
    Component("kubelet", check=node_options.check_kubelet),
    Component("nfd-topology-updater", install=lambda sim: nfd_install(sim) if nfd_needed(sim.scenario) else None),
    Component("capacity-scheduling", install=elasticquota.install),
    Component("gang-scheduling", install=gangscheduling.install),
    Component("resourceclaim-controller", install=resourceclaim.install),   # DRA objects + kube-controller-manager's
    Component("compute-domain-controller", install=computedomain.install, namespace=DRIVER_NAMESPACE,
              needed=computedomain.needed),   # NVIDIA's DRA driver: ComputeDomains and their IMEX daemons
    Component("volcano", check=volcano_options.check, install=volcano.install, namespace=volcano.NAMESPACE,
              needed=volcano.needed),
    Component("kueue", check=kueue_options.check, install=kueue.install, namespace=kueue_options.NAMESPACE,
              needed=kueue_options.needed),
)
