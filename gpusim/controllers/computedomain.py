"""NVIDIA's compute-domain controller and the IMEX daemons it deploys (mirrors NVIDIA/k8s-dra-driver-gpu
cmd/compute-domain-controller: computedomain.go ``onAddOrUpdate`` at 5321f9cde600966a6cd0c0ff5b0194e65ceb4493 and
``calculateGlobalStatus`` of its later version (kubernetes-sigs/dra-driver-nvidia-gpu, the project's new home);
resourceclaimtemplate.go ``WorkloadResourceClaimTemplateManager.Create`` / ``DaemonSetResourceClaimTemplateManager
.Create`` at 1434b93b2952fbbe8fe04f7b2226c5e54cc11758; daemonsetpods.go ``onPodDelete`` at
12d2af7d57694a1e990320e999e89d05daa9e0a0; templates/compute-domain-{workload,daemon}-claim-template.tmpl.yaml at
3006fbd8167a0d4c4ba1ebf3b4d00d93d0866e09 and templates/compute-domain-daemon.tmpl.yaml at
1434b93b2952fbbe8fe04f7b2226c5e54cc11758; cmd/compute-domain-daemon's ``getNextAvailableIndex`` and its node
upsert into the domain's status, whose code beyond the fields it writes is UNVERIFIED).

For every ComputeDomain:
- the finalizer ``resource.nvidia.com/computeDomain``; the workload ResourceClaimTemplate named by
  ``spec.channel.resourceClaimTemplate.name`` in the domain's namespace (labels ``resource.nvidia.com/computeDomain:
  <uid>``, ``resource.nvidia.com/computeDomainTarget: Workload``; one request ``channel`` of
  ``compute-domain-default-channel.nvidia.com`` with the opaque ``ComputeDomainChannelConfig{domainID: <uid>}``);
  the daemon template ``<name>-daemon-claim-template-<5>`` in the driver's namespace (request ``daemon`` of
  ``compute-domain-daemon.nvidia.com``, ``ComputeDomainDaemonConfig``).
- the IMEX daemon DaemonSet (nodeSelector ``resource.nvidia.com/computeDomain: <uid>``, every taint tolerated,
  hostNetwork). gpusim has no DaemonSet kind: this controller also does the DaemonSet controller's part, one pod
  ``<daemonset>-<5>`` per selected node, pinned by the ``matchFields metadata.name`` affinity the DaemonSet
  controller writes, and deletes it when the node loses the label. The kubelet plugin labels a node when it
  prepares a channel there, so the daemons follow the workload pods. The DaemonSet is
  ``computedomain-daemon-<domain UID>`` (kubernetes-sigs/dra-driver-nvidia-gpu, NVIDIA/k8s-dra-driver-gpu's new
  home, cmd/compute-domain-controller/daemonset.go ``expectedDaemonSet``, stored version
  3fe94879c9cfdbdc8fad4b62c712f0c7a1f9de22).
- a running daemon adds its node to ``status.nodes`` (``name``, ``ipAddress`` = the node's address with hostNetwork,
  empty in gpusim, whose nodes have no addresses,
  ``cliqueID`` = the node's ``nvidia.com/gpu.clique``, ``index`` = the lowest index unused in that clique,
  ``status: NotReady``) and, once its IMEX daemon answers READY (the startup probe), ``status: Ready``. How long
  IMEX takes to come up is gpusim's ``IMEX_STARTUP_SECONDS`` (not an upstream constant). A deleted daemon pod is
  removed from ``status.nodes`` (daemonsetpods.go onPodDelete; by IP, by name when the IP is empty).
- ``status.status`` is calculateGlobalStatus: NotReady while fewer than ``numNodes`` nodes are listed or any listed
  node is NotReady, else Ready (so ``numNodes: 0`` with no nodes is Ready).
- deletion: upstream holds the domain with its finalizer until no node carries its label
  (AssertWorkloadsCompleted) and deletes the templates and the DaemonSet; gpusim's API server has no finalizers, so
  a deleted domain's templates and daemon pods are deleted at once.

Modelled with ``IMEXDaemonsWithDNSNames`` on (the default) and ``ComputeDomainCliques`` off (status.nodes written by
the daemons). ``allocationMode`` goes into the channel config (channelAllocationModeFor); with ``All`` the template
still asks for the default channel device and the kubelet plugin injects every IMEX channel.
"""
from __future__ import annotations

from typing import Any, Generator, Optional

from ..api import resource_nvidia_com_v1beta1 as cdapi
from ..api.core_v1 import (Affinity, Container, NodeAffinity, NodeSelector, NodeSelectorRequirement,
                           NodeSelectorTerm, Pod, PodResourceClaim, PodSpec, ResourceClaim as ContainerClaim,
                           ResourceRequirements, Toleration)
from ..api.meta import ObjectMeta, OwnerReference
from ..api.resource_k8s_io_v1 import (DeviceClaim, DeviceRequest, ExactDeviceRequest, ResourceClaimSpec,
                                      ResourceClaimTemplate, ResourceClaimTemplateSpec)
from ..controlplane.apiserver import DELETED
from ..controlplane.context import Context

CLIQUE_LABEL = "nvidia.com/gpu.clique"
ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
IMEX_STARTUP_SECONDS = 5.0
DAEMON_CONTAINER = "compute-domain-daemon"
DAEMON_IMAGE = "nvcr.io/nvidia/k8s-dra-driver-gpu"
DAEMON_NODE_ANNOTATION = "gpusim.io/daemonset-node"   # gpusim's record of the node a daemon pod was made for


def calculate_global_status(cd: cdapi.ComputeDomain) -> str:
    """computedomain.go calculateGlobalStatus (driver-managed IMEX)."""
    if len(cd.status.nodes) < cd.spec.num_nodes:
        return cdapi.STATUS_NOT_READY
    if any(n.status == cdapi.STATUS_NOT_READY for n in cd.status.nodes):
        return cdapi.STATUS_NOT_READY
    return cdapi.STATUS_READY


def next_available_index(clique: str, nodes: list[cdapi.ComputeDomainNode]) -> int:
    """cmd/compute-domain-daemon getNextAvailableIndex: the lowest index no node of the same clique holds."""
    used = {n.index for n in nodes if n.clique_id == clique}
    i = 0
    while i in used:
        i += 1
    return i


def channel_allocation_mode_for(cd: cdapi.ComputeDomain) -> str:
    """channelAllocationModeFor with driver-managed IMEX: the domain's ``spec.channel.allocationMode`` unchanged
    (host-managed IMEX, which forces Single, is not modelled). The function is known from its test
    (resourceclaimtemplate_test.go TestChannelAllocationModeFor); its source is not in the stored sources."""
    return cd.spec.channel.allocation_mode


def _template(ns: str, cd: cdapi.ComputeDomain, request: str, device_class: str, kind: str, target: str,
              name: str = "", generate_name: str = "") -> ResourceClaimTemplate:
    labels = {cdapi.COMPUTE_DOMAIN_LABEL: cd.metadata.uid, cdapi.APP_LABEL[0]: cdapi.APP_LABEL[1],
              cdapi.TARGET_LABEL: target}
    spec = ResourceClaimSpec(devices=DeviceClaim(
        requests=[DeviceRequest(name=request, exactly=ExactDeviceRequest(device_class_name=device_class))],
        config=[{"requests": [request], "opaque": {"driver": cdapi.DRIVER_NAME,
                                                   "parameters": cdapi.channel_config(
                                                       cd.metadata.uid, kind, channel_allocation_mode_for(cd)
                                                       if kind == cdapi.CHANNEL_CONFIG_KIND else "")}}]))
    return ResourceClaimTemplate(metadata=ObjectMeta(name=name, namespace=ns, generate_name=generate_name,
                                                     labels=labels, finalizers=[cdapi.FINALIZER]),
                                 spec=ResourceClaimTemplateSpec(spec=spec))


class ComputeDomainController:
    """The compute-domain-controller with its DaemonSets' pods and their IMEX daemons (see the module docstring)."""

    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.daemonsets: dict[str, str] = {}          # domain uid → DaemonSet name
        self.daemon_templates: dict[str, str] = {}    # domain uid → daemon ResourceClaimTemplate name
        self.domains: dict[str, cdapi.ComputeDomain] = {}
        self._ready: set[str] = set()                 # daemon pod uids whose node entry was written
        for kind, handler in (("ComputeDomain", self._on_domain), ("Node", self._on_node), ("Pod", self._on_pod)):
            ctx.env.process(self._loop(ctx.api.watch(kind), handler))

    def _loop(self, stream: Any, handler: Any) -> Generator:
        while True:
            ev = yield stream.get()
            handler(ev)

    def _name(self, ns: str, kind: str, prefix: str) -> str:
        while True:
            name = prefix + "".join(self.ctx.api.rng.choice(ALPHANUMS) for _ in range(5))
            if self.ctx.api.get(kind, ns, name) is None:
                return name

    # --- ComputeDomainManager.onAddOrUpdate ----------------------------------------------------------------------
    def _on_domain(self, ev: Any) -> None:
        cd = ev.obj
        uid = cd.metadata.uid
        if ev.type == DELETED:
            self._cleanup(cd)
            return
        self.domains[uid] = cd
        changed = False
        if cdapi.FINALIZER not in cd.metadata.finalizers:
            cd.metadata.finalizers.append(cdapi.FINALIZER)
            changed = True
        api, drv = self.ctx.api, cdapi.DRIVER_NAMESPACE
        if uid not in self.daemonsets:
            self.daemonsets[uid] = f"computedomain-daemon-{uid}"      # daemonset.go expectedDaemonSet
            rct = _template(drv, cd, "daemon", cdapi.DAEMON_DEVICE_CLASS, cdapi.DAEMON_CONFIG_KIND,
                            cdapi.TARGET_DAEMON, generate_name=f"{cd.metadata.name}-daemon-claim-template-")
            rct.metadata.name = self._name(drv, ResourceClaimTemplate.RESOURCE, rct.metadata.generate_name)
            api.create(rct)
            self.daemon_templates[uid] = rct.metadata.name
            self._trace(cd, "(*DaemonSetResourceClaimTemplateManager).Create",
                        f"ResourceClaimTemplate {drv}/{rct.metadata.name}")
            name = cd.spec.channel.resource_claim_template.name
            if api.get(ResourceClaimTemplate.RESOURCE, cd.metadata.namespace, name) is None:
                api.create(_template(cd.metadata.namespace, cd, "channel", cdapi.DEFAULT_CHANNEL_DEVICE_CLASS,
                                     cdapi.CHANNEL_CONFIG_KIND, cdapi.TARGET_WORKLOAD, name=name))
                self._trace(cd, "(*WorkloadResourceClaimTemplateManager).Create",
                            f"ResourceClaimTemplate {cd.metadata.namespace}/{name}")
        status = calculate_global_status(cd)
        if status != cd.status.status:
            cd.status.status = status
            changed = True
            self._trace(cd, "(*ComputeDomainManager).updateGlobalStatus", status)
        if changed:
            api.update(cd)
        self._sync_daemons(uid)

    def _cleanup(self, cd: cdapi.ComputeDomain) -> None:
        uid, api = cd.metadata.uid, self.ctx.api
        self.domains.pop(uid, None)
        self.daemonsets.pop(uid, None)
        rct = api.get(ResourceClaimTemplate.RESOURCE, cdapi.DRIVER_NAMESPACE, self.daemon_templates.pop(uid, ""))
        ours = api.get(ResourceClaimTemplate.RESOURCE, cd.metadata.namespace,
                       cd.spec.channel.resource_claim_template.name)
        for t in (rct, ours):
            if t is not None and t.metadata.labels.get(cdapi.COMPUTE_DOMAIN_LABEL) == uid:
                api.delete(t)
        for pod in self._daemon_pods(uid):
            api.delete(pod)

    # --- the DaemonSet controller's part ---------------------------------------------------------------------
    def _daemon_pods(self, uid: str) -> list[Pod]:
        return sorted(self.ctx.api.list("Pod", lambda p: p.metadata.namespace == cdapi.DRIVER_NAMESPACE
                                        and p.metadata.labels.get(cdapi.COMPUTE_DOMAIN_LABEL) == uid),
                      key=lambda p: p.metadata.name)

    def _on_node(self, ev: Any) -> None:
        for uid in list(self.domains):
            self._sync_daemons(uid)

    def _sync_daemons(self, uid: str) -> None:
        """One daemon pod on every node labelled for the domain; none elsewhere."""
        if uid not in self.domains:
            return
        api = self.ctx.api
        wanted = sorted(n.metadata.name for n in api.list("Node")
                        if n.metadata.labels.get(cdapi.COMPUTE_DOMAIN_LABEL) == uid)
        have = {}
        for pod in self._daemon_pods(uid):
            node = pod.metadata.annotations.get(DAEMON_NODE_ANNOTATION)
            if node not in wanted:
                api.delete(pod)
            else:
                have[node] = pod
        for node in wanted:
            if node not in have:
                pod = api.create(self._daemon_pod(self.domains[uid], node))
                self._trace(self.domains[uid], "daemonset.(*DaemonSetsController).syncNodes",
                            f"Pod {pod.metadata.namespace}/{pod.metadata.name} on {node}")

    def _daemon_pod(self, cd: cdapi.ComputeDomain, node: str) -> Pod:
        """templates/compute-domain-daemon.tmpl.yaml, as the DaemonSet controller stamps it for ``node``."""
        uid, ds = cd.metadata.uid, self.daemonsets[cd.metadata.uid]
        name = self._name(cdapi.DRIVER_NAMESPACE, "Pod", f"{ds}-")
        pin = Affinity(node_affinity=NodeAffinity(required_during_scheduling_ignored_during_execution=NodeSelector(
            node_selector_terms=[NodeSelectorTerm(match_fields=[
                NodeSelectorRequirement(key="metadata.name", operator="In", values=[node])])])))
        return Pod(metadata=ObjectMeta(
            name=name, namespace=cdapi.DRIVER_NAMESPACE, labels={cdapi.COMPUTE_DOMAIN_LABEL: uid},
            annotations={DAEMON_NODE_ANNOTATION: node},
            owner_references=[OwnerReference("apps/v1", "DaemonSet", ds, "", True, True)]),
            spec=PodSpec(
                containers=[Container(name=DAEMON_CONTAINER, image=DAEMON_IMAGE, resources=ResourceRequirements(
                    claims=[ContainerClaim(name=DAEMON_CONTAINER)]))],
                resource_claims=[PodResourceClaim(name=DAEMON_CONTAINER,
                                                  resource_claim_template_name=self.daemon_templates[uid])],
                node_selector={cdapi.COMPUTE_DOMAIN_LABEL: uid}, affinity=pin, host_network=True,
                restart_policy="Always",
                tolerations=[Toleration(operator="Exists", effect=e) for e in
                             ("NoSchedule", "NoExecute", "PreferNoSchedule")]))

    # --- the IMEX daemons (cmd/compute-domain-daemon) and daemonsetpods.go ----------------------------------
    def _on_pod(self, ev: Any) -> None:
        pod = ev.obj
        uid = pod.metadata.labels.get(cdapi.COMPUTE_DOMAIN_LABEL)
        if pod.metadata.namespace != cdapi.DRIVER_NAMESPACE or uid is None:
            return
        if ev.type == DELETED or pod.status.phase in ("Succeeded", "Failed"):
            self._ready.discard(pod.metadata.uid)
            self._remove_node(uid, pod)
            self._sync_daemons(uid)
            return
        if pod.status.phase == "Running" and pod.metadata.uid not in self._ready:
            self._ready.add(pod.metadata.uid)
            self._upsert_node(uid, pod, cdapi.STATUS_NOT_READY)
            self.ctx.env.process(self._imex_ready(uid, pod))

    def _domain(self, uid: str) -> Optional[cdapi.ComputeDomain]:
        return self.domains.get(uid)

    def _node_ip(self, node: str) -> str:
        n = self.ctx.api.get("Node", "", node)
        return next((a.get("address", "") if isinstance(a, dict) else getattr(a, "address", "")
                     for a in (getattr(n.status, "addresses", None) or [])), "") if n is not None else ""

    def _upsert_node(self, uid: str, pod: Pod, status: str) -> None:
        cd = self._domain(uid)
        if cd is None:
            return
        node = pod.spec.node_name
        n = self.ctx.api.get("Node", "", node)
        clique = n.metadata.labels.get(CLIQUE_LABEL, "") if n is not None else ""
        entry = next((e for e in cd.status.nodes if e.name == node), None)
        if entry is None:
            entry = cdapi.ComputeDomainNode(name=node, ip_address=self._node_ip(node), clique_id=clique,
                                            index=next_available_index(clique, cd.status.nodes))
            cd.status.nodes.append(entry)
        entry.status = status
        self._trace(cd, "compute-domain-daemon: node info upsert", f"{node} {status} index {entry.index}")
        self._set_global(cd)
        self.ctx.api.update(cd)

    def _imex_ready(self, uid: str, pod: Pod) -> Generator:
        """The daemon's startup probe (``nvidia-imex-ctl -q`` prints READY): the node entry turns Ready."""
        yield self.ctx.env.timeout(IMEX_STARTUP_SECONDS)
        if pod.metadata.uid in self._ready and self.ctx.api.get_by_uid("Pod", pod.metadata.uid) is not None:
            self._upsert_node(uid, pod, cdapi.STATUS_READY)

    def _remove_node(self, uid: str, pod: Pod) -> None:
        cd = self._domain(uid)
        if cd is None or not pod.spec.node_name:
            return
        ip = self._node_ip(pod.spec.node_name)
        keep = [n for n in cd.status.nodes if (n.ip_address != ip if ip else n.name != pod.spec.node_name)]
        if len(keep) != len(cd.status.nodes):
            cd.status.nodes = keep
            self._trace(cd, "(*DaemonSetPodManager).onPodDelete", f"{pod.spec.node_name} removed")
            self._set_global(cd)
            self.ctx.api.update(cd)

    def _set_global(self, cd: cdapi.ComputeDomain) -> None:
        status = calculate_global_status(cd)
        if status != cd.status.status:
            cd.status.status = status
            self._trace(cd, "(*ComputeDomainManager).updateGlobalStatus", status)

    def _trace(self, cd: cdapi.ComputeDomain, function: str, result: str) -> None:
        self.ctx.trace.add(self.ctx.now, "compute-domain-controller", function,
                           f"ComputeDomain {cd.metadata.namespace}/{cd.metadata.name}", result)


def install(sim: Any) -> Optional[ComputeDomainController]:
    """Add-on install (gpusim.cluster.components): create the scenario's ComputeDomains and run the controller when
    the scenario has any (or any node runs the compute-domain kubelet plugin)."""
    sc = sim.scenario
    domains = sc.objects.get(cdapi.ComputeDomain.RESOURCE, [])
    if not domains and not needed(sc):
        return None
    controller = ComputeDomainController(sim.ctx)
    for cd in domains:
        sim.ctx.api.create(cd)
    return controller


def needed(sc: Any) -> bool:
    """The driver's namespace exists when the scenario has ComputeDomains."""
    return bool(sc.objects.get(cdapi.ComputeDomain.RESOURCE))
