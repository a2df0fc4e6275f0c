"""gpusim's own kinds (``gpusim.io/v1alpha1``): Simulation, NodePool, Fault."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .core_v1 import Taint
from .meta import ObjectMeta
from .schema import IntOrString

GROUP_VERSION = "gpusim.io/v1alpha1"
FAULT_TYPES = ("KubeletRestart", "DevicePluginCrash", "XidError", "NodeDown")
# What an operator does with kubectl at a point in time: `kubectl label node`, `kubectl cordon/uncordon`.
ACTION_TYPES = ("LabelNode", "CordonNode", "UncordonNode")


@dataclass
class Timing:
    """Latencies of the simulated cluster. Defaults are documented in docs of ``gpusim.controlplane.timing``."""

    grpc_latency: str = "1ms"
    container_start: str = "1s"
    node_status_update_frequency: str = "10s"
    device_plugin_restart_delay: str = "5s"


@dataclass
class SimulationSpec:
    seed: int = 0
    until: Optional[str] = None
    kubernetes_version: str = "1.36"
    timing: Timing = field(default_factory=Timing)


@dataclass
class Simulation:
    api_version: str = GROUP_VERSION
    kind: str = "Simulation"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: SimulationSpec = field(default_factory=SimulationSpec)


@dataclass
class VGPUSpec:
    """The node is a VM with NVIDIA vGPUs of one time-sliced C-series type (gpusim.hardware.vgpu)."""

    type: str = field(default="", metadata={"required": True})
    scheduler: str = "BestEffort"


@dataclass
class GPUSpec:
    model: str = field(default="", metadata={"required": True})
    count: int = 8
    vgpu: Optional[VGPUSpec] = None


@dataclass
class NodePoolSpec:
    count: int = field(default=0, metadata={"required": True})
    gpu: Optional[GPUSpec] = None
    cpu: IntOrString = "64"
    memory: IntOrString = "512Gi"
    pods: int = 110
    labels: dict[str, str] = field(default_factory=dict)
    taints: list[Taint] = field(default_factory=list)


@dataclass
class NodePool:
    api_version: str = GROUP_VERSION
    kind: str = "NodePool"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: NodePoolSpec = field(default_factory=NodePoolSpec, metadata={"required": True})


@dataclass
class FaultSpec:
    at: str = field(default="", metadata={"required": True})
    type: str = field(default="", metadata={"required": True})
    node: str = field(default="", metadata={"required": True})
    downtime: Optional[str] = None
    gpu: Optional[int] = None
    xid: int = 79


@dataclass
class Fault:
    api_version: str = GROUP_VERSION
    kind: str = "Fault"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: FaultSpec = field(default_factory=FaultSpec, metadata={"required": True})


@dataclass
class ActionSpec:
    at: str = field(default="", metadata={"required": True})
    type: str = field(default="", metadata={"required": True})
    node: str = field(default="", metadata={"required": True})
    labels: dict[str, Optional[str]] = field(default_factory=dict)   # a null value removes the label


@dataclass
class Action:
    """An operator's change at time ``at``, e.g. ``kubectl label node a100-0 nvidia.com/mig.config=all-1g.10gb``."""

    api_version: str = GROUP_VERSION
    kind: str = "Action"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: ActionSpec = field(default_factory=ActionSpec, metadata={"required": True})
