"""``topology.node.k8s.io/v1alpha2`` NodeResourceTopology (mirrors
k8stopologyawareschedwg/noderesourcetopology-api ``pkg/apis/topology/v1alpha2/types.go`` and its
``helper/numanode``), the object NFD's topology-updater publishes per node and the scheduler-plugins
NodeResourceTopologyMatch plugin reads.

Cluster-scoped, named after its node, short name ``node-res-topo``. Fields sit at the top level (there is
no spec): ``topologyPolicies`` (deprecated, one of the TopologyManagerPolicy names below), ``zones``
(``name``, ``type``, ``parent``, ``costs``, ``attributes``, ``resources`` with ``capacity``,
``allocatable``, ``available``) and ``attributes`` (``topologyManagerPolicy``, ``topologyManagerScope``,
``topologyManagerMaxNUMANodes``, the pod fingerprint...). A zone of type ``Node`` named ``node-<N>`` is
NUMA node N.

Required fields follow the CRD that controller-gen makes from the json tags (fields without
``omitempty``): ``topologyPolicies`` and ``zones``; a zone's ``name`` and ``type``; a resource's
``name``, ``capacity``, ``allocatable``, ``available``; a cost's and an attribute's ``name`` and ``value``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from .errors import FieldError, InputError
from .meta import ObjectMeta
from .quantity import QuantityError, parse_quantity
from .schema import IntOrString, decode

GROUP = "topology.node.k8s.io"
API_VERSION = "topology.node.k8s.io/v1alpha2"
KIND = "NodeResourceTopology"
SHORT_NAME = "node-res-topo"
ZONE_TYPE_NODE = "Node"

# TopologyManagerPolicy (deprecated, to be removed in v1beta1)
SINGLE_NUMA_NODE_CONTAINER_LEVEL = "SingleNUMANodeContainerLevel"
SINGLE_NUMA_NODE_POD_LEVEL = "SingleNUMANodePodLevel"
RESTRICTED = "Restricted"
RESTRICTED_CONTAINER_LEVEL = "RestrictedContainerLevel"
RESTRICTED_POD_LEVEL = "RestrictedPodLevel"
BEST_EFFORT = "BestEffort"
BEST_EFFORT_CONTAINER_LEVEL = "BestEffortContainerLevel"
BEST_EFFORT_POD_LEVEL = "BestEffortPodLevel"
NONE = "None"
TOPOLOGY_MANAGER_POLICIES = (SINGLE_NUMA_NODE_CONTAINER_LEVEL, SINGLE_NUMA_NODE_POD_LEVEL, RESTRICTED,
                             RESTRICTED_CONTAINER_LEVEL, RESTRICTED_POD_LEVEL, BEST_EFFORT, BEST_EFFORT_CONTAINER_LEVEL,
                             BEST_EFFORT_POD_LEVEL, NONE)

# Attribute names (scheduler-plugins pkg/noderesourcetopology/nodeconfig, NFD nfd-topology-updater.go)
ATTRIBUTE_POLICY = "topologyManagerPolicy"
ATTRIBUTE_SCOPE = "topologyManagerScope"
ATTRIBUTE_MAX_NUMA_NODES = "topologyManagerMaxNUMANodes"


@dataclass
class ResourceInfo:
    """One resource of a zone: capacity (node status capacity), allocatable, and available (allocatable
    minus what running pods hold exclusively)."""

    name: str = field(default="", metadata={"required": True})
    capacity: IntOrString = field(default=0, metadata={"required": True})
    allocatable: IntOrString = field(default=0, metadata={"required": True})
    available: IntOrString = field(default=0, metadata={"required": True})


@dataclass
class CostInfo:
    """The cost (distance) from this zone to the zone ``name``."""

    name: str = field(default="", metadata={"required": True})
    value: int = field(default=0, metadata={"required": True})


@dataclass
class AttributeInfo:
    name: str = field(default="", metadata={"required": True})
    value: str = field(default="", metadata={"required": True})


@dataclass
class Zone:
    name: str = field(default="", metadata={"required": True})
    type: str = field(default="", metadata={"required": True})
    parent: str = ""
    costs: list[CostInfo] = field(default_factory=list)
    attributes: list[AttributeInfo] = field(default_factory=list)
    resources: list[ResourceInfo] = field(default_factory=list)


@dataclass
class NodeResourceTopology:
    NAMESPACED = False
    api_version: str = API_VERSION
    kind: str = KIND
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    topology_policies: list[str] = field(default_factory=list, metadata={"required": True})
    zones: list[Zone] = field(default_factory=list, metadata={"required": True})
    attributes: list[AttributeInfo] = field(default_factory=list)

    def attribute(self, name: str) -> Optional[str]:
        return next((a.value for a in self.attributes if a.name == name), None)


KINDS: dict[tuple[str, str], type] = {(API_VERSION, KIND): NodeResourceTopology}

_NUMA_NAME = re.compile(r"^node-(-?[0-9]+)$")


def name_to_id(name: str) -> int:
    """helper/numanode NameToID: ``node-<N>`` → N; anything else (other prefixes, case, separators, a
    negative N) is an error."""
    m = _NUMA_NAME.match(name)
    if not m:
        raise ValueError(f"invalid NUMA node name: {name!r}")
    n = int(m.group(1))
    if n < 0:
        raise ValueError(f"invalid NUMA node id: {n}")
    return n


def id_to_name(numa_id: int) -> str:
    """helper/numanode IDToName."""
    if numa_id < 0:
        raise ValueError(f"invalid NUMA node id: {numa_id}")
    return f"node-{numa_id}"


def validate_node_resource_topology(nrt: NodeResourceTopology) -> Iterator[tuple[str, str]]:
    """The CRD's checks beyond decoding: quantities parse (kube-openapi pattern), the object is
    cluster-scoped."""
    if nrt.metadata.namespace:
        yield "metadata.namespace", (f'Invalid value: "{nrt.metadata.namespace}": NodeResourceTopology is '
                                     "cluster-scoped (no namespace)")
    for i, zone in enumerate(nrt.zones):
        for j, res in enumerate(zone.resources):
            for part in ("capacity", "allocatable", "available"):
                value = getattr(res, part)
                try:
                    parse_quantity(value)
                except QuantityError as e:
                    yield f"zones[{i}].resources[{j}].{part}", f'Invalid value: "{value}": {e}'


def decode_node_resource_topology(doc: dict, source: Any = None) -> NodeResourceTopology:
    """Strict decode of one document (as ``kubectl apply --validate=strict``), then validation; errors are
    :class:`InputError` naming the object and field."""
    name = (doc.get("metadata") or {}).get("name", "") if isinstance(doc.get("metadata"), dict) else ""
    try:
        nrt = decode(NodeResourceTopology, doc)
    except FieldError as e:
        raise InputError(e.message, source, KIND, "", name, e.path) from None
    for path, message in validate_node_resource_topology(nrt):
        raise InputError(message, source, KIND, "", nrt.metadata.name, path)
    return nrt
