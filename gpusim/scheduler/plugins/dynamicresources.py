"""The in-tree ``DynamicResources`` plugin (mirrors kubernetes
pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go, 1.36): it allocates the devices of a pod's
ResourceClaims with the structured allocator (gpusim.scheduler.dra.allocator) while the pod is scheduled, and
writes the allocation to the claims before binding. In the default profile right before DefaultPreemption
(default_plugins.go: DRA is GA and locked on since 1.35).

- PreEnqueue: every claim the pod references must exist (a template's claim appears in
  ``status.resourceClaimStatuses`` once the resourceclaim controller created it), not be being deleted, and a
  generated claim must be owned by the pod. Messages: 'pod "<ns>/<name>": ResourceClaim not created yet',
  'resourceclaim "<name>" is being deleted', 'ResourceClaim <ns>/<claim> was not created for pod <ns>/<pod>
  (pod is not owner)'; a missing named claim: the assume cache's 'could not find ResourceClaim "<ns>/<name>"'.
- PreFilter: Skip without claims. An allocated claim reserved by 256 consumers and not this pod →
  "resourceclaim in use"; a claim being allocated for another pod (in flight) → "resource claim <name> is in
  the process of being allocated"; a missing DeviceClass → "request <r>: device class <c> does not exist".
- Filter: an allocated claim whose nodeSelector excludes the node → "resourceclaim not available on the node";
  the allocator cannot satisfy every pending claim on the node → "cannot allocate all claims" (also when the
  counters of partitionable devices are used up, a constraint cannot be met, every fitting device has an
  untolerated taint, or a shared device's capacity is used up), or "invalid resource pools were encountered" when the node
  has an invalid pool; a CEL error → Error. All rejections are UnschedulableAndUnresolvable (statusUnschedulable), so preemption does not help.
- PostFilter (only when no node fits): a pod without claims gets "no new claims to deallocate" (Unschedulable, so
  DefaultPreemption still runs and the FailedScheduling message reads "… no new claims to deallocate, preemption:
  …"); a claim allocated for other nodes (Filter's "resourceclaim not available on the node") and reserved by no
  other pod is deallocated → "deallocation of ResourceClaim completed"; otherwise "still not schedulable". Without
  PreFilter's state (an earlier PreFilter plugin rejected the pod) it is getStateData's Error "not found".
- Reserve: the node's allocation becomes in flight (its devices count as used for every other pod at once).
- Unreserve: the in-flight allocation is dropped and the pod removed from ``reservedFor``.
- PreBind: the finalizer ``resource.kubernetes.io/delete-protection``, ``status.allocation`` and the pod in
  ``status.reservedFor`` are written to each claim in the apiserver.
The allocator sees the devices in use as an AllocatedState (``allocated_devices``): results of allocated and
in-flight claims, adminAccess ones excluded, results with a ``shareID`` as shares of a multi-allocatable device.

Extended resources backed by DRA (KEP-5004, gate DRAExtendedResource, beta and on in 1.36; mirrors
extendeddynamicresources.go): a pod asking for an extended resource that a DeviceClass backs
(``spec.extendedResourceName`` or the implicit ``deviceclass.resource.kubernetes.io/<class>``, see
gpusim.scheduler.dra.extended) gets a special claim.
- PreFilter (preFilterExtendedResources): the pod's claim from an earlier cycle (annotation
  ``resource.kubernetes.io/extended-resource-claim: "true"``, the pod as controller owner), else an in-memory claim
  named ``<extended-resources>`` with ``generateName: <pod>-extended-resources-``, that annotation, the pod as
  controller owner and no requests yet.
- Filter (filterExtendedResources): a claim from an earlier cycle that has requests → "cannot schedule extended
  resource claim"; per requested extended resource, a node whose allocatable has 0 of a DRA-backed one needs it
  from DRA, a node without the resource that no class backs → "cannot fit resource" (both
  UnschedulableAndUnresolvable); resources the node's device plugin provides are left to NodeResourcesFit. The
  node's copy of the claim gets one request per container (``container-<i>-request-<j>``) and is allocated with
  the pod's other claims.
- Reserve: its allocation is in flight like any claim's. PreBind: the claim is created (the apiserver appends 5
  random characters to the generateName), gets the finalizer, ``status.allocation`` and the pod in
  ``reservedFor``, and the pod's ``status.extendedResourceClaimStatus`` gets the request mappings (containerName,
  resourceName, requestName) and the claim's name. Unreserve deletes a claim PreBind created.
- PostFilter: a claim of an earlier cycle (one with requests, which Filter refused everywhere) is deleted →
  "deletion of ResourceClaim completed", so the next cycle builds a new one.
Not modelled: Score (firstAvailable preference; DRA-backed extended resources in NodeResourcesFit's scoring),
the 10 s Filter timeout, binding conditions, quota.
"""
from __future__ import annotations

import copy
import uuid
from dataclasses import dataclass, field
from typing import Any, Optional

from ...api.core_v1 import ContainerExtendedResourceRequest, PodExtendedResourceClaimStatus
from ...api.meta import ObjectMeta, OwnerReference
from ...api.resource_k8s_io_v1 import (EXTENDED_RESOURCE_CLAIM_ANNOTATION, FINALIZER,
                                       RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE, AllocationResult, DeviceClass,
                                       ResourceClaim, ResourceClaimConsumerReference, ResourceSlice, is_reserved_for)
from ...api.v1helper import is_dra_extended_resource_name
from ..dra import extended
from ..dra.allocator import AllocatedState, AllocationError, Allocator, FailedOnNodeError, allocated_state
from ..framework import Code, Status

NAME = "DynamicResources"
STATE_KEY = "PreFilterDynamicResources"
MSG_CANNOT_ALLOCATE = "cannot allocate all claims"
MSG_NOT_AVAILABLE = "resourceclaim not available on the node"
MSG_IN_USE = "resourceclaim in use"
MSG_NO_NEW_CLAIMS = "no new claims to deallocate"          # PostFilter for a pod without claims
MSG_DEALLOCATED = "deallocation of ResourceClaim completed"
MSG_STILL_NOT_SCHEDULABLE = "still not schedulable"
MSG_DELETED = "deletion of ResourceClaim completed"      # the stale extended resource claim
MATCH_CACHE_LIMIT = 200_000   # cached selector results before the cache starts over
SPECIAL_CLAIM_IN_MEM_NAME = "<extended-resources>"   # specialClaimInMemName: not a valid claim name on purpose
MSG_CANNOT_SCHEDULE_EXTENDED = "cannot schedule extended resource claim"
MSG_CANNOT_FIT_RESOURCE = "cannot fit resource"
GENERATE_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"   # apimachinery util/rand, as the apiserver's generateName
MAX_GENERATED_NAME_LENGTH = 58                       # names.SimpleNameGenerator: 63 − 5 random characters


class ClaimLookupError(Exception):
    pass


def pod_claim_names(pod: Any) -> list[Optional[str]]:
    """resourceclaim.Name for each pod claim: the claim's name, None when no claim is needed, or
    ClaimLookupError when the template's claim was not created yet."""
    names = []
    for rc in pod.spec.resource_claims:
        if rc.resource_claim_name:
            names.append(rc.resource_claim_name)
            continue
        st = next((s for s in pod.status.resource_claim_statuses if s.name == rc.name), None)
        if st is None:
            raise ClaimLookupError(f'pod "{pod.metadata.namespace}/{pod.metadata.name}": ResourceClaim not created yet')
        names.append(st.resource_claim_name)
    return names


@dataclass
class _State:
    claims: list[ResourceClaim]
    pending: list[ResourceClaim]                   # not allocated yet: the allocator's input
    allocator: Optional[Allocator] = None
    per_node: dict[str, list[AllocationResult]] = field(default_factory=dict)
    unavailable: set[int] = field(default_factory=set)   # claims allocated for nodes a Filter call rejected
    # KEP-5004: the special claim (in memory, or found from an earlier cycle), the pod's requests of extended
    # resources (draExtendedResource.podScalarResources), their DeviceClasses, and per node the node's copy of
    # the claim with its requests and the container → request mappings
    extended: Optional[ResourceClaim] = None
    scalar: dict[str, int] = field(default_factory=dict)
    mapping: dict[str, DeviceClass] = field(default_factory=dict)
    extended_per_node: dict[str, tuple[ResourceClaim, list[ContainerExtendedResourceRequest]]] = \
        field(default_factory=dict)
    created: Optional[ResourceClaim] = None        # the extended resource claim PreBind wrote

    def to_allocate(self, node: str) -> list[ResourceClaim]:
        """The claims the allocator allocates on ``node``: the pending ones, then the node's extended claim."""
        ext = self.extended_per_node.get(node)
        return self.pending + [ext[0]] if ext else self.pending


def allocated_devices(claims: list[ResourceClaim], in_flight: dict[str, AllocationResult]) -> AllocatedState:
    """The devices in use: allocated in the apiserver or in flight; adminAccess results do not count, results
    with a shareID are shares of a multi-allocatable device (consumable capacity)."""
    allocs = [c.status.allocation for c in claims if c.status.allocation is not None and c.metadata.uid
              not in in_flight] + list(in_flight.values())
    return allocated_state(r for a in allocs for r in a.devices.results)


def node_matches(selector: Any, node: str) -> bool:
    """The claim's allocation nodeSelector (matchFields metadata.name In [...]), None = every node."""
    if not selector:
        return True
    for term in selector.get("nodeSelectorTerms", []):
        fields = term.get("matchFields", [])
        if all(f.get("key") == "metadata.name" and f.get("operator") == "In" and node in f.get("values", [])
               for f in fields):
            return True
    return False


def find_extended_resource_claim(pod: Any, claims: list[ResourceClaim]) -> Optional[ResourceClaim]:
    """findExtendedResourceClaim: the claim annotated as the extended resource claim with the pod as controller
    owner."""
    for c in claims:
        if c.metadata.annotations.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) == "true" and any(
                o.name == pod.metadata.name and o.controller and o.uid == pod.metadata.uid
                for o in c.metadata.owner_references):
            return c
    return None


def special_claim(pod: Any) -> ResourceClaim:
    """The in-memory claim preFilterExtendedResources makes: no requests yet; a stand-in uid (upstream a random
    one, here derived from the pod's) for the in-flight allocation."""
    return ResourceClaim(metadata=ObjectMeta(
        name=SPECIAL_CLAIM_IN_MEM_NAME, namespace=pod.metadata.namespace,
        uid=str(uuid.uuid5(uuid.NAMESPACE_URL, f"gpusim.io/extended-resources/{pod.metadata.uid}")),
        generate_name=pod.metadata.name + "-extended-resources-",
        owner_references=[OwnerReference("v1", "Pod", pod.metadata.name, pod.metadata.uid, True)],
        annotations={EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"}))


class DynamicResources:
    name = NAME

    def __init__(self, args: Any, handle: Any):
        self.handle = handle
        self.extended_resources = extended.enabled(handle)   # fts.EnableDRAExtendedResource
        # EventsToRegister (each standing for a QueueingHint that says Queue)
        self.events = {"ResourceClaim/Add", "ResourceClaim/Update", "ResourceClaim/Delete", "ResourceSlice/Add",
                       "ResourceSlice/Update", "DeviceClass/Add", "DeviceClass/Update", "Node/Add"}
        self.in_flight: dict[str, AllocationResult] = {}    # claim uid → allocation (the assume cache)
        self.in_flight_pod: dict[str, str] = {}             # claim uid → pod uid that reserved it
        self.match_cache: dict = {}                         # CEL results per (expression, slice version, device)

    @property
    def api(self):
        return self.handle.api

    def _claims(self, pod: Any) -> list[ResourceClaim]:
        """foreachPodResourceClaim: the pod's claims, or ClaimLookupError with upstream's message."""
        out = []
        ns = pod.metadata.namespace
        for rc, name in zip(pod.spec.resource_claims, pod_claim_names(pod)):
            if name is None:
                continue
            claim = self.api.get(ResourceClaim.RESOURCE, ns, name)
            if claim is None:
                raise ClaimLookupError(f'could not find ResourceClaim "{ns}/{name}"')
            if claim.metadata.deletion_timestamp is not None:
                raise ClaimLookupError(f'resourceclaim "{name}" is being deleted')
            if rc.resource_claim_template_name and not any(
                    o.uid == pod.metadata.uid and o.controller for o in claim.metadata.owner_references):
                raise ClaimLookupError(f"ResourceClaim {ns}/{name} was not created for pod "
                                       f"{ns}/{pod.metadata.name} (pod is not owner)")
            out.append(claim)
        return out

    # --- PreEnqueue ------------------------------------------------------------------------------------------
    def pre_enqueue(self, pod: Any) -> Status:
        if not pod.spec.resource_claims:
            return Status()
        try:
            self._claims(pod)
        except ClaimLookupError as e:
            return Status.new(Code.UnschedulableAndUnresolvable, str(e))
        return Status()

    # --- PreFilter / Filter --------------------------------------------------------------------------------
    def _pre_filter_extended(self, pi) -> tuple[Optional[ResourceClaim], dict[str, int], dict[str, DeviceClass]]:
        """preFilterExtendedResources: the special claim (None when the gate is off or no DeviceClass backs any
        extended resource the pod requests), the pod's extended resource requests, the name → class mapping."""
        if not self.extended_resources:
            return None, {}, {}
        scalar = {r: q for r, q in pi.requests.items() if q and is_dra_extended_resource_name(r)}
        if not scalar:
            return None, {}, {}
        mapping = extended.device_class_mapping(self.api.list(DeviceClass.RESOURCE))
        if not extended.mapped_requests(scalar, mapping):
            return None, {}, {}
        found = find_extended_resource_claim(pi.pod, self.api.list(ResourceClaim.RESOURCE))
        return found or special_claim(pi.pod), scalar, mapping

    def pre_filter(self, state, pi, nodes):
        pod = pi.pod
        # an empty state first, as upstream writes it, so that PostFilter finds it for pods without claims
        state[STATE_KEY] = _State([], [])
        special, scalar, mapping = self._pre_filter_extended(pi)
        if not pod.spec.resource_claims and special is None:
            return None, Status.new(Code.Skip)
        try:
            claims = self._claims(pod)
        except ClaimLookupError as e:
            return None, Status.new(Code.UnschedulableAndUnresolvable, str(e))
        if not claims and special is None:
            return None, Status.new(Code.Skip)
        pending = []
        classes = {c.metadata.name: c for c in self.api.list(DeviceClass.RESOURCE)}
        for claim in claims:
            uid = claim.metadata.uid
            if uid in self.in_flight and self.in_flight_pod.get(uid) != pod.metadata.uid:
                return None, Status.new(Code.UnschedulableAndUnresolvable,
                                        f"resource claim {claim.metadata.namespace}/{claim.metadata.name} is in the "
                                        "process of being allocated")
            if claim.status.allocation is not None:
                if not is_reserved_for(claim, pod.metadata.uid) and \
                        len(claim.status.reserved_for) >= RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE:
                    return None, Status.new(Code.UnschedulableAndUnresolvable, MSG_IN_USE)
                continue
            for r in claim.spec.devices.requests:
                wanted = [(r.name, r.exactly.device_class_name)] if r.exactly else \
                    [(f"{r.name}/{s.name}", s.device_class_name) for s in r.first_available]
                for req, cls in wanted:
                    if cls not in classes:
                        return None, Status.new(Code.UnschedulableAndUnresolvable,
                                                f"request {req}: device class {cls} does not exist")
            pending.append(claim)
        st = _State(claims, pending, extended=special, scalar=scalar, mapping=mapping)
        if pending or (special is not None and special.status.allocation is None):
            every_claim = self.api.list(ResourceClaim.RESOURCE)
            if len(self.match_cache) > MATCH_CACHE_LIMIT:
                self.match_cache.clear()
            st.allocator = Allocator(classes, self.api.list(ResourceSlice.RESOURCE),
                                     allocated_devices(every_claim, self.in_flight), self.match_cache)
        state[STATE_KEY] = st
        return None, Status()

    def filter(self, state, pi, ni) -> Status:
        st: Optional[_State] = state.get(STATE_KEY)
        if st is None:
            return Status()
        node = ni.name
        unavailable = [i for i, claim in enumerate(st.claims) if claim.status.allocation is not None
                       and not node_matches(claim.status.allocation.node_selector, node)]
        if unavailable:
            st.unavailable.update(unavailable)     # PostFilter's candidates for deallocation
            return Status.new(Code.UnschedulableAndUnresolvable, MSG_NOT_AVAILABLE)
        if st.extended is not None:
            status = self._filter_extended(st, pi, ni)
            if status is not None:
                return status
        claims = st.to_allocate(node)
        if not claims:
            return Status()
        try:
            results = st.allocator.allocate(node, claims)
        except FailedOnNodeError as e:   # errors.Is(err, structured.ErrFailedAllocationOnNode)
            return Status.new(Code.UnschedulableAndUnresolvable, str(e))
        except AllocationError as e:
            return Status.new(Code.Error, str(e))
        if results is None:
            return Status.new(Code.UnschedulableAndUnresolvable, MSG_CANNOT_ALLOCATE)
        st.per_node[node] = results
        return Status()

    # --- PostFilter ----------------------------------------------------------------------------------------
    def post_filter(self, state, pi, statuses):
        """Only reached when no node fits. A claim that Filter found allocated for other nodes, and that no pod
        but this one has reserved, is deallocated (reservedFor, allocation and devices cleared in the apiserver),
        so the next attempt can allocate it anew; upstream picks one such claim at random (map order)."""
        st: Optional[_State] = state.get(STATE_KEY)
        if st is None:           # getStateData: PreFilter did not run (an earlier PreFilter plugin rejected)
            return None, Status.new(Code.Error, "not found")
        if not st.claims and st.extended is None:
            return None, Status.new(Code.Unschedulable, MSG_NO_NEW_CLAIMS)
        order = sorted(st.unavailable)
        if len(order) > 1:
            self.handle.ctx.rng.shuffle(order)
        uid = pi.pod.metadata.uid
        for i in order:
            claim = st.claims[i]
            rf = claim.status.reserved_for
            if not rf or (len(rf) == 1 and rf[0].uid == uid):
                stored = self.api.get(ResourceClaim.RESOURCE, claim.metadata.namespace, claim.metadata.name)
                if stored is None:
                    return None, Status.new(Code.Error, f'resourceclaims.resource.k8s.io "{claim.metadata.name}" '
                                                        "not found")
                stored.status.reserved_for = []
                stored.status.allocation = None
                stored.status.devices = None
                self.api.update(stored)
                return None, Status.new(Code.Unschedulable, MSG_DEALLOCATED)
        ext = st.extended
        if ext is not None and ext.metadata.name != SPECIAL_CLAIM_IN_MEM_NAME:
            # the extended resource claim of an earlier cycle: deleted, so the next cycle starts anew
            stored = self.api.get(ResourceClaim.RESOURCE, ext.metadata.namespace, ext.metadata.name)
            if stored is not None:
                stored.metadata.finalizers = [f for f in stored.metadata.finalizers if f != FINALIZER]
                self.api.delete(stored)
            return None, Status.new(Code.Unschedulable, MSG_DELETED)
        return None, Status.new(Code.Unschedulable, MSG_STILL_NOT_SCHEDULABLE)

    def _filter_extended(self, st: _State, pi, ni) -> Optional[Status]:
        """filterExtendedResources: a rejection, or None after recording the node's extended claim (if the node
        needs any extended resource from DRA)."""
        special = st.extended
        if special.spec.devices.requests:   # the claim of an earlier cycle: PostFilter would delete it
            return Status.new(Code.UnschedulableAndUnresolvable, MSG_CANNOT_SCHEDULE_EXTENDED)
        from_dra = []
        for r in st.scalar:
            backed = r in st.mapping
            if backed and ni.allocatable.get(r) == 0:
                from_dra.append(r)          # the node provides the resource via DRA
            elif r not in ni.allocatable.values:
                return Status.new(Code.UnschedulableAndUnresolvable, MSG_CANNOT_FIT_RESOURCE)
        if not from_dra or special.status.allocation is not None:
            return None
        requests, mappings = extended.requests_and_mappings(pi.pod, from_dra, st.mapping)
        claim = copy.deepcopy(special)
        claim.spec.devices.requests = requests
        st.extended_per_node[ni.name] = (claim, mappings)
        return None

    # --- Reserve / Unreserve ---------------------------------------------------------------------------------
    def reserve(self, state, pi, node: str) -> Status:
        st: Optional[_State] = state.get(STATE_KEY)
        if st is None:
            return Status()
        claims = st.to_allocate(node)
        if not claims:
            return Status()
        results = st.per_node.get(node)
        if results is None:
            return Status.new(Code.Error, f"claim allocation not found for node {node}")
        for claim, alloc in zip(claims, results):
            self.in_flight[claim.metadata.uid] = alloc
            self.in_flight_pod[claim.metadata.uid] = pi.pod.metadata.uid
        return Status()

    def unreserve(self, state, pi, node: str) -> None:
        st: Optional[_State] = state.get(STATE_KEY)
        if st is None:
            return
        uid = pi.pod.metadata.uid
        for claim in st.claims:
            if self.in_flight_pod.get(claim.metadata.uid) == uid:
                self.in_flight.pop(claim.metadata.uid, None)
                self.in_flight_pod.pop(claim.metadata.uid, None)
            if is_reserved_for(claim, uid):
                claim.status.reserved_for = [r for r in claim.status.reserved_for if r.uid != uid]
                self.api.update(claim)
        ext = st.extended_per_node.get(node)   # unreserveExtendedResourceClaim
        if ext is not None and self.in_flight_pod.get(ext[0].metadata.uid) == uid:
            self.in_flight.pop(ext[0].metadata.uid, None)
            self.in_flight_pod.pop(ext[0].metadata.uid, None)
        created, st.created = st.created, None
        if created is not None and self.api.get(ResourceClaim.RESOURCE, created.metadata.namespace,
                                                created.metadata.name) is created:
            created.metadata.finalizers = [f for f in created.metadata.finalizers if f != FINALIZER]
            self.api.delete(created)

    # --- PreBind ---------------------------------------------------------------------------------------------
    def pre_bind(self, state, pi, node: str) -> Status:
        st: Optional[_State] = state.get(STATE_KEY)
        if st is None:
            return Status()
        pod = pi.pod
        for claim in st.claims:
            stored = self.api.get(ResourceClaim.RESOURCE, claim.metadata.namespace, claim.metadata.name)
            if stored is None or stored.metadata.uid != claim.metadata.uid:
                return Status.new(Code.Error, f"claim {claim.metadata.name} got deleted in the meantime")
            alloc = self.in_flight.get(claim.metadata.uid)
            if alloc is not None:
                if stored.status.allocation is not None:
                    return Status.new(Code.Error, f"claim {claim.metadata.name} got allocated elsewhere in the "
                                                  "meantime")
                if FINALIZER not in stored.metadata.finalizers:
                    stored.metadata.finalizers.append(FINALIZER)
                alloc.allocation_timestamp = self.handle.ctx.now
                stored.status.allocation = alloc
            if not is_reserved_for(stored, pod.metadata.uid):
                stored.status.reserved_for.append(ResourceClaimConsumerReference(
                    resource="pods", name=pod.metadata.name, uid=pod.metadata.uid))
            self.in_flight.pop(claim.metadata.uid, None)
            self.in_flight_pod.pop(claim.metadata.uid, None)
            self.api.update(stored)
        ext = st.extended_per_node.get(node)
        if ext is not None:
            return self._bind_extended_claim(st, pod, node, *ext)
        return Status()

    def _generate_name(self, namespace: str, prefix: str) -> str:
        """The apiserver's generateName (names.SimpleNameGenerator): the prefix cut to 58 characters and 5
        random characters; a name in use is drawn again (the create would fail with AlreadyExists)."""
        rng = self.api.rng
        while True:
            name = prefix[:MAX_GENERATED_NAME_LENGTH] + "".join(rng.choice(GENERATE_NAME_CHARS) for _ in range(5))
            if self.api.get(ResourceClaim.RESOURCE, namespace, name) is None:
                return name

    def _bind_extended_claim(self, st: _State, pod: Any, node: str, node_claim: ResourceClaim,
                             mappings: list[ContainerExtendedResourceRequest]) -> Status:
        """bindClaim for the special claim (createExtendedResourceClaimInAPI, then the status update as for any
        claim) and patchPodExtendedResourceClaimStatus."""
        alloc = self.in_flight.pop(node_claim.metadata.uid, None)
        self.in_flight_pod.pop(node_claim.metadata.uid, None)
        if alloc is None:
            return Status.new(Code.Error, f"extended resource claim not found for node {node}")
        meta = node_claim.metadata
        claim = ResourceClaim(metadata=ObjectMeta(
            name=self._generate_name(meta.namespace, meta.generate_name), namespace=meta.namespace,
            generate_name=meta.generate_name, annotations=dict(meta.annotations),
            owner_references=[copy.copy(o) for o in meta.owner_references]), spec=copy.deepcopy(node_claim.spec))
        self.api.create(claim)
        st.created = claim
        claim.metadata.finalizers.append(FINALIZER)
        alloc.allocation_timestamp = self.handle.ctx.now
        claim.status.allocation = alloc
        claim.status.reserved_for.append(ResourceClaimConsumerReference(
            resource="pods", name=pod.metadata.name, uid=pod.metadata.uid))
        self.api.update(claim)
        pod.status.extended_resource_claim_status = PodExtendedResourceClaimStatus(
            [copy.copy(m) for m in mappings], claim.metadata.name)
        self.api.update(pod)
        return Status()


def new(args: Any, handle: Any) -> DynamicResources:
    return DynamicResources(args, handle)
