"""NVIDIA GPU Operator's ``nvidia.com/v1`` ClusterPolicy (mirrors NVIDIA/gpu-operator
api/nvidia/v1/clusterpolicy_types.go), partially: every spec section is accepted, the sections gpusim
acts on are typed. Absent fields take the operator's defaults."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from .meta import ObjectMeta

OPERATOR_NAMESPACE = "gpu-operator"
MIG_STRATEGIES = ("none", "single", "mixed")


@dataclass
class DevicePluginConfig:
    """spec.devicePlugin.config: the ConfigMap holding device plugin configs and its default key."""

    name: str = ""
    default: str = ""


@dataclass
class DevicePluginSpec:
    enabled: Optional[bool] = None
    repository: Any = None
    image: Any = None
    version: Any = None
    image_pull_policy: Any = None
    image_pull_secrets: Any = None
    resources: Any = None
    args: Any = None
    env: Any = None
    config: Optional[DevicePluginConfig] = None
    mps: Any = None


@dataclass
class MIGSpec:
    strategy: str = "single"   # the operator's default (clusterpolicy_types.go MIGStrategySingle)


@dataclass
class ClusterPolicySpec:
    operator: Any = None
    daemonsets: Any = None
    driver: Any = None
    toolkit: Any = None
    device_plugin: DevicePluginSpec = field(default_factory=DevicePluginSpec)
    dcgm_exporter: Any = None
    dcgm: Any = None
    node_status_exporter: Any = None
    gfd: Any = None
    mig: MIGSpec = field(default_factory=MIGSpec)
    mig_manager: Any = None
    psp: Any = None
    psa: Any = None
    validator: Any = None
    gds: Any = None
    gdrcopy: Any = None
    cdi: Any = None
    host_paths: Any = None
    sandbox_workloads: Any = None
    vfio_manager: Any = None
    sandbox_device_plugin: Any = None
    vgpu_manager: Any = None
    vgpu_device_manager: Any = None
    kata_manager: Any = None
    kata_sandbox_device_plugin: Any = None
    cc_manager: Any = None


@dataclass
class ClusterPolicy:
    api_version: str = "nvidia.com/v1"
    kind: str = "ClusterPolicy"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: ClusterPolicySpec = field(default_factory=ClusterPolicySpec)
    status: Any = None
