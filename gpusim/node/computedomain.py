"""NVIDIA's DRA driver, kubelet plugin ``compute-domain.nvidia.com`` (mirrors NVIDIA/k8s-dra-driver-gpu
cmd/compute-domain-kubelet-plugin: driver.go ``NewDriver`` / ``nodePrepareResource``, device_state.go ``Prepare`` /
``applyComputeDomainChannelConfig`` / ``applyComputeDomainDaemonConfig`` / ``unprepareDevices``, computedomain.go
``AddNodeLabel`` / ``RemoveNodeLabel`` / ``AssertComputeDomainReady`` / ``AssertComputeDomainNamespace``,
deviceinfo.go ``GetDevice``, nvlib.go ``createComputeDomainChannelDevice``, cdi.go ``GetClaimDevice``; read at
commits 2768fc1e33c7b8938673d6e1c10e47abe209284b (driver.go, device_state.go), 047fd278bc6f1417ac115c1f684df46f258dc3b8
(computedomain.go), 0a29b3dafd99c72418982b8af46e387e2df5d30a (deviceinfo.go), 9c3e4758c37a1f6f6e17dd869e25cfe08d0669e0
(cdi.go)) and the DeviceClasses its chart installs for it.

- ResourceSlice: one per node, pool = node name, with ``channel-0`` (attributes ``type: channel``, ``id: 0``) and
  ``daemon-0`` (``type: daemon``, ``id: 0``). The plugin enumerates 2048 IMEX channels but publishes only channel 0
  ("they are instead advertised as a network resource from the control plane").
- Where it runs: upstream's chart runs the plugin on every GPU node; on a node without a fabric clique it still
  publishes both devices and prepares channels without creating a channel device ("noop" mode). gpusim runs it
  only on GPU nodes whose board carries GFD's ``nvidia.com/gpu.clique`` label (the node's cliqueID): DRA nodes
  (``spec.gpu.allocation: dra``), and device-plugin nodes when the scenario has a ComputeDomain (the chart with
  ``resources.gpus.enabled: false``: GPUs from the device plugin, channels from DRA, as the driver's nvbandwidth
  example mixes them). A pod asking for a channel on other nodes stays Pending with the allocator's ``cannot
  allocate all claims``.
- Prepare of a channel (config ``ComputeDomainChannelConfig``): the claim must be in the domain's namespace
  (permanent error), the plugin labels its node ``resource.nvidia.com/computeDomain=<domain UID>`` (which pulls the
  domain's IMEX daemon onto the node, gpusim/controllers/computedomain.py), then asserts that this node's daemon is
  Ready in ``status.nodes`` (``current node not ready in ComputeDomain``; ``Failed`` is a binding failure). The
  container gets ``/dev/nvidia-caps-imex-channels/channel<id>`` through the CDI id
  ``k8s.compute-domain.nvidia.com/claim=<claim UID>-channel-<id>``; with the config's ``allocationMode: All`` it
  gets all 2048 channels (channel0..channel2047) through that one CDI device (applyComputeDomainChannelConfig in
  the later device_state.go, maxImexChannelCount; the count is nvlib.go's getImexChannelCount).
- Prepare of a daemon device (``ComputeDomainDaemonConfig``): the CDI ids ``k8s.compute-domain.nvidia.com/device=all``
  and ``.../claim=<claim UID>-daemon-0`` (the fabric-imex-mgmt nvcap device and the /imexd mount).
- Unprepare of a channel removes the node label when it still names the domain.
- Errors reach the kubelet as the kubeletplugin helper hands them on: ``error preparing devices for claim <uid>:
  prepare devices failed: error applying config: <cause>``. The real plugin retries a retryable cause inside the
  call for up to 45 s (ErrorRetryMaxTimeout) before it answers; gpusim answers at once and the kubelet's pod worker
  retries (the pod stays ContainerCreating either way).
- The opaque config is read from the claim's ``spec.devices.config`` (upstream reads the copy the allocator puts in
  ``status.allocation.devices.config``, which gpusim's allocator does not write).
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Generator, Optional

from ..api import resource_nvidia_com_v1beta1 as cdapi
from ..api.meta import ObjectMeta
from ..api.resource_k8s_io_v1 import (CELDeviceSelector, Device, DeviceAttribute, DeviceClass, DeviceClassSpec,
                                      DeviceSelector, ResourceClaim, ResourcePool, ResourceSlice, ResourceSliceSpec)

DRIVER_NAME = cdapi.DRIVER_NAME
CDI_VENDOR = "k8s." + DRIVER_NAME
IMEX_CHANNEL_COUNT = 2048                       # nvlib.go getImexChannelCount
CHANNEL_DEVICE_PATH = "/dev/nvidia-caps-imex-channels/channel{}"
GENERATE_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"   # apimachinery util/rand
MSG_NOT_READY = "current node not ready in ComputeDomain"
MSG_FAILED = "current node failed in ComputeDomain"


def device_class(name: str) -> DeviceClass:
    """The chart's ``compute-domain-default-channel.nvidia.com`` (``type == 'channel' && id == 0``) or
    ``compute-domain-daemon.nvidia.com`` (``type == 'daemon'``) DeviceClass; the selectors follow
    /work/shared/reference/dra-and-operations.md §1.8 (the chart's deviceclass templates are not in the stored
    sources: UNVERIFIED beyond that sheet)."""
    attrs = f"device.attributes['{DRIVER_NAME}']"
    expr = f"device.driver == '{DRIVER_NAME}' && " + (
        f"{attrs}.type == '{cdapi.CHANNEL_TYPE}' && {attrs}.id == 0" if name == cdapi.DEFAULT_CHANNEL_DEVICE_CLASS
        else f"{attrs}.type == '{cdapi.DAEMON_TYPE}'")
    return DeviceClass(metadata=ObjectMeta(name=name), spec=DeviceClassSpec(
        selectors=[DeviceSelector(CELDeviceSelector(expr))]))


DEVICE_CLASSES = (cdapi.DEFAULT_CHANNEL_DEVICE_CLASS, cdapi.DAEMON_DEVICE_CLASS)


class PrepareError(Exception):
    """A claim the plugin could not prepare (``permanent``: the plugin would not retry it)."""

    def __init__(self, message: str, permanent: bool = False, retry: Any = None):
        super().__init__(message)
        self.permanent = permanent
        self.retry = retry       # a simpy event: when a retry may succeed (the ComputeDomain changed)


@dataclass(frozen=True)
class PreparedDevice:
    """NodePrepareResourcesResponse Device, plus the device node the CDI spec injects (channels) and the domain.
    ``uuid`` is None: no GPU is held."""

    request_names: tuple[str, ...]
    pool_name: str
    device_name: str
    cdi_device_ids: tuple[str, ...]
    device_nodes: tuple[str, ...]
    domain_uid: str
    kind: str
    uuid: Optional[str] = None
    minor: int = -1


def _opaque_config(claim: ResourceClaim, request: str) -> Optional[dict]:
    """getConfigResultsMap: the last opaque config of this driver that applies to ``request`` (or to every
    request)."""
    found = None
    for c in claim.spec.devices.config or []:
        opaque = (c or {}).get("opaque") or {}
        reqs = c.get("requests") or []
        if opaque.get("driver") == DRIVER_NAME and (not reqs or request in reqs):
            found = opaque.get("parameters")
    return found


class ComputeDomainKubeletPlugin:
    """The compute-domain-kubelet-plugin of one node (``clique_id``: the node's ``<ClusterUUID>.<CliqueID>``)."""

    driver = DRIVER_NAME

    def __init__(self, api: Any, node: str, clique_id: str):
        self.api, self.node, self.clique_id = api, node, clique_id
        self.prepared: dict[str, list[PreparedDevice]] = {}   # claim uid → devices (the plugin's checkpoint)
        self._changed: Any = None      # fired at the next ComputeDomain event (the plugin's informer)
        api.env.process(self._informer(api.watch(cdapi.ComputeDomain.RESOURCE)))

    def _informer(self, stream: Any) -> Generator:
        while True:
            yield stream.get()
            if self._changed is not None:
                self._changed.succeed()
                self._changed = None

    def changed(self) -> Any:
        """An event fired at the next change of any ComputeDomain: the plugin's work queue retries a claim
        whose domain was not ready until its 45 s deadline; gpusim retries it when a domain changes."""
        if self._changed is None:
            self._changed = self.api.env.event()
        return self._changed

    @staticmethod
    def devices() -> list[Device]:
        """ComputeDomainChannelInfo.GetDevice for channel 0 and ComputeDomainDaemonInfo.GetDevice for daemon 0."""
        return [Device(name=f"{kind}-0",
                       attributes={"type": DeviceAttribute(string=kind), "id": DeviceAttribute(int_=0)})
                for kind in (cdapi.CHANNEL_TYPE, cdapi.DAEMON_TYPE)]

    def resource_slices(self, rng: random.Random) -> list[ResourceSlice]:
        prefix = f"{self.node}-{DRIVER_NAME}-"
        name = prefix + "".join(rng.choice(GENERATE_NAME_CHARS) for _ in range(5))
        return [ResourceSlice(metadata=ObjectMeta(name=name, generate_name=prefix), spec=ResourceSliceSpec(
            driver=DRIVER_NAME, pool=ResourcePool(self.node, 1, 1), node_name=self.node, devices=self.devices()))]

    # --- ComputeDomainManager helpers --------------------------------------------------------------------------
    def _domain(self, uid: str) -> Optional[cdapi.ComputeDomain]:
        obj = self.api.get_by_uid(cdapi.ComputeDomain.RESOURCE, uid)
        return obj

    def add_node_label(self, uid: str) -> None:
        node = self.api.get("Node", "", self.node)
        current = node.metadata.labels.get(cdapi.COMPUTE_DOMAIN_LABEL)
        if current is not None and current != uid:
            raise PrepareError("error adding Node label for ComputeDomain: label already exists for a different "
                               "ComputeDomain")
        if current is None:
            node.metadata.labels[cdapi.COMPUTE_DOMAIN_LABEL] = uid
            self.api.update(node)

    def remove_node_label(self, uid: str) -> None:
        node = self.api.get("Node", "", self.node)
        if node is not None and node.metadata.labels.get(cdapi.COMPUTE_DOMAIN_LABEL) == uid:
            del node.metadata.labels[cdapi.COMPUTE_DOMAIN_LABEL]
            self.api.update(node)

    def assert_ready(self, uid: str) -> None:
        """AssertComputeDomainReady → isCurrentNodeReadyInStatus (ComputeDomainCliques off)."""
        cd = self._domain(uid)
        if cd is None:
            raise PrepareError(f"error asserting ComputeDomain Ready: error getting ComputeDomain: ComputeDomain not "
                               f"found: {uid}")
        for n in cd.status.nodes:
            if n.name == self.node and n.status == cdapi.STATUS_READY:
                return
            if n.name == self.node and n.status == cdapi.STATUS_FAILED:
                raise PrepareError(f"error asserting ComputeDomain Ready: {MSG_FAILED}")
        raise PrepareError(f"error asserting ComputeDomain Ready: {MSG_NOT_READY}")

    # --- DRAPlugin -------------------------------------------------------------------------------------------
    def _prepare(self, claim: ResourceClaim) -> list[PreparedDevice]:
        out = []
        for r in claim.status.allocation.devices.results:
            if r.driver != DRIVER_NAME or r.pool != self.node:
                continue
            params = _opaque_config(claim, r.request)
            kind = (params or {}).get("kind")
            uid = (params or {}).get("domainID", "")
            if kind not in (cdapi.CHANNEL_CONFIG_KIND, cdapi.DAEMON_CONFIG_KIND):
                raise PrepareError("error generating configResultsMap: runtime object is not a recognized "
                                   "configuration", permanent=True)
            if not uid:
                raise PrepareError("error validating config: domainID cannot be empty", permanent=True)
            claim_dev = f"{CDI_VENDOR}/claim={claim.metadata.uid}-{r.device}"
            if kind == cdapi.CHANNEL_CONFIG_KIND:
                cd = self._domain(uid)
                if cd is None or cd.metadata.namespace != claim.metadata.namespace:
                    why = (f"ComputeDomain not found: {uid}" if cd is None else "the ResourceClaim's namespace is "
                           "different than the ComputeDomain's namespace")
                    raise PrepareError(f"error applying config: error asserting ComputeDomain's namespace: {why}",
                                       permanent=True)
                try:
                    self.add_node_label(uid)
                    self.assert_ready(uid)
                except PrepareError as e:
                    raise PrepareError(f"error applying config: {e}", retry=self.changed()) from None
                channel = int(r.device.rsplit("-", 1)[1])
                # applyComputeDomainChannelConfig: allocationMode All injects every channel (maxImexChannelCount)
                ids = range(IMEX_CHANNEL_COUNT) if params.get("allocationMode") == cdapi.ALLOCATION_MODE_ALL \
                    else (channel,)
                out.append(PreparedDevice((r.request,), r.pool, r.device, (claim_dev,),
                                          tuple(CHANNEL_DEVICE_PATH.format(i) for i in ids), uid, cdapi.CHANNEL_TYPE))
            else:
                out.append(PreparedDevice((r.request,), r.pool, r.device, (f"{CDI_VENDOR}/device=all", claim_dev),
                                          (), uid, cdapi.DAEMON_TYPE))
        return out

    def node_prepare_resources(self, claims: list[ResourceClaim]) -> dict[str, list[PreparedDevice]]:
        """NodePrepareResources: claim uid → prepared devices (idempotent per claim); raises PrepareError with the
        per-claim error text the kubelet reports."""
        out = {}
        for claim in claims:
            uid = claim.metadata.uid
            if uid not in self.prepared:
                try:
                    self.prepared[uid] = self._prepare(claim)
                except PrepareError as e:
                    raise PrepareError(f"error preparing devices for claim {uid}: prepare devices failed: {e}",
                                       e.permanent, e.retry) from None
            out[uid] = self.prepared[uid]
        return out

    def node_unprepare_resources(self, claim_uids: list[str]) -> None:
        """unprepareDevices: a channel's claim removes the node's ComputeDomain label."""
        for uid in claim_uids:
            for dev in self.prepared.pop(uid, []):
                if dev.kind == cdapi.CHANNEL_TYPE:
                    self.remove_node_label(dev.domain_uid)
