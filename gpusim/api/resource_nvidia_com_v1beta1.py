"""NVIDIA's ``resource.nvidia.com/v1beta1`` ComputeDomain (mirrors NVIDIA/k8s-dra-driver-gpu
api/nvidia.com/resource/v1beta1/computedomain.go at commit 0a29b3dafd99c72418982b8af46e387e2df5d30a) and its CRD
validation, plus the opaque claim configs the compute-domain controller writes into its ResourceClaimTemplates
(``ComputeDomainChannelConfig`` / ``ComputeDomainDaemonConfig``, api.go kinds and ``Default*Config``).

- spec: ``numNodes`` (int ≥ 0; deprecated: with ``IMEXDaemonsWithDNSNames=true``, the default, it only gates
  ``status.status``), ``channel.resourceClaimTemplate.name`` (the workload template the controller creates),
  ``channel.allocationMode`` ``Single`` (CRD default) | ``All``. ``spec`` is immutable upstream (``A
  computeDomain.spec is immutable``); gpusim never updates it.
- status: ``status`` ``Ready`` | ``NotReady`` (CRD default NotReady), ``nodes[]`` {``name``, ``ipAddress``,
  ``cliqueID``, ``index``, ``status`` Ready|NotReady|Failed}, written by the IMEX daemons
  (gpusim/controllers/computedomain.py).

The controller is gpusim/controllers/computedomain.py, the kubelet plugin gpusim/node/computedomain.py.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Optional

from .meta import ObjectMeta
from .validation import DNS1123_SUBDOMAIN, DNS1123_SUBDOMAIN_MSG, invalid

GROUP = "resource.nvidia.com"
GROUP_VERSION = GROUP + "/v1beta1"
STATUS_READY, STATUS_NOT_READY, STATUS_FAILED = "Ready", "NotReady", "Failed"
ALLOCATION_MODE_SINGLE, ALLOCATION_MODE_ALL = "Single", "All"
ALLOCATION_MODES = (ALLOCATION_MODE_ALL, ALLOCATION_MODE_SINGLE)       # kubebuilder Enum order
CHANNEL_CONFIG_KIND = "ComputeDomainChannelConfig"
DAEMON_CONFIG_KIND = "ComputeDomainDaemonConfig"
BINDING_CONDITIONS = "ComputeDomainReady"             # ComputeDomainBindingConditions (gate not modelled)
BINDING_FAILURE_CONDITIONS = "ComputeDomainNotReady"


@dataclass
class ComputeDomainResourceClaimTemplate:
    name: str = field(default="", metadata={"required": True})


@dataclass
class ComputeDomainChannelSpec:
    resource_claim_template: ComputeDomainResourceClaimTemplate = field(
        default_factory=ComputeDomainResourceClaimTemplate, metadata={"required": True})
    allocation_mode: str = ALLOCATION_MODE_SINGLE      # +kubebuilder:default:=Single


@dataclass
class ComputeDomainSpec:
    num_nodes: int = field(default=0, metadata={"required": True})            # the CRD requires both
    channel: Optional[ComputeDomainChannelSpec] = field(default=None, metadata={"required": True})


@dataclass
class ComputeDomainNode:
    name: str = ""
    ip_address: str = ""
    clique_id: str = field(default="", metadata={"json": "cliqueID"})
    index: int = 0
    status: str = STATUS_NOT_READY                      # +kubebuilder:default:=NotReady


@dataclass
class ComputeDomainStatus:
    status: str = STATUS_NOT_READY                      # +kubebuilder:default=NotReady
    nodes: list[ComputeDomainNode] = field(default_factory=list)


@dataclass
class ComputeDomain:
    RESOURCE = "ComputeDomain"
    NAMESPACED = True
    api_version: str = GROUP_VERSION
    kind: str = "ComputeDomain"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: ComputeDomainSpec = field(default_factory=ComputeDomainSpec)
    status: ComputeDomainStatus = field(default_factory=ComputeDomainStatus)


KINDS: dict[tuple[str, str], type] = {(GROUP_VERSION, "ComputeDomain"): ComputeDomain}


def channel_config(domain_uid: str, kind: str = CHANNEL_CONFIG_KIND, allocation_mode: str = "") -> dict:
    """DefaultComputeDomainChannelConfig (or ...DaemonConfig) with ``domainID`` set to the domain's UID, as the
    controller writes it into a template's ``config[].opaque.parameters``; a channel config also carries
    ``allocationMode`` (``json:"allocationMode,omitempty"``)."""
    out = {"apiVersion": GROUP_VERSION, "kind": kind, "domainID": domain_uid}
    if allocation_mode:
        out["allocationMode"] = allocation_mode
    return out


def validate_compute_domain(cd: ComputeDomain) -> Iterator[tuple[str, str]]:
    """The CRD's OpenAPI checks (deployments/helm/nvidia-dra-driver-gpu/crds/resource.nvidia.com_computedomains.yaml
    at 5a0112cb4b3a47c9a4d8812ee3c361bae8cfee49; kube-openapi message format): ``spec.channel`` and
    ``spec.numNodes`` required (the decoder checks presence), ``allocationMode`` in its Enum. The CRD sets no
    ``minimum`` on ``numNodes`` ("Must be zero or greater" is only its description), so a negative value is
    accepted and counts as 0. The CRD accepts any string as the template's name; the controller's Create of the
    template would then fail on the apiserver's name validation, which gpusim reports here, at load."""
    s = cd.spec
    if s.channel is None:
        yield "spec.channel", "Required value"
        return
    name = s.channel.resource_claim_template.name
    if not name:
        yield "spec.channel.resourceClaimTemplate.name", "Required value"
    elif not DNS1123_SUBDOMAIN.match(name) or len(name) > 253:
        yield "spec.channel.resourceClaimTemplate.name", invalid(name, DNS1123_SUBDOMAIN_MSG)
    if s.channel.allocation_mode not in ALLOCATION_MODES:
        yield "spec.channel.allocationMode", (
            f'Unsupported value: "{s.channel.allocation_mode}": supported values: '
            + ", ".join(f'"{m}"' for m in ALLOCATION_MODES))


# --- names the driver's components share (controller, kubelet plugin, daemon) ----------------------------------
# cmd/compute-domain-controller/computedomain.go and cmd/compute-domain-kubelet-plugin/computedomain.go constants
DRIVER_NAME = "compute-domain.nvidia.com"
COMPUTE_DOMAIN_LABEL = "resource.nvidia.com/computeDomain"          # computeDomainLabelKey (also the finalizer)
FINALIZER = COMPUTE_DOMAIN_LABEL
TARGET_LABEL = "resource.nvidia.com/computeDomainTarget"             # computeDomainResourceClaimTemplateTargetLabelKey
TARGET_DAEMON, TARGET_WORKLOAD = "Daemon", "Workload"
DEFAULT_CHANNEL_DEVICE_CLASS = "compute-domain-default-channel.nvidia.com"
DAEMON_DEVICE_CLASS = "compute-domain-daemon.nvidia.com"
CHANNEL_TYPE, DAEMON_TYPE = "channel", "daemon"                      # ComputeDomainChannelType / ...DaemonType
# The Helm release's namespace, where the controller puts the daemons and their claim templates. The docs install
# the chart into nvidia-dra-driver-gpu; that it is the namespace of every install is UNVERIFIED.
DRIVER_NAMESPACE = "nvidia-dra-driver-gpu"
APP_LABEL = ("app.kubernetes.io/name", "nvidia-dra-driver-gpu")      # the chart's app name (AppLabelValue)
