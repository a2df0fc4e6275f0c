"""NVIDIA GPU Operator's ``nvidia.com/v1`` ClusterPolicy (mirrors NVIDIA/gpu-operator
api/nvidia/v1/clusterpolicy_types.go), partially: every spec section is accepted, the sections gpusim
acts on are typed. Absent fields take the operator's defaults.

Of the other operand sections gpusim reads ``enabled`` (every section; defaults per the helm chart's
values.yaml: dcgm and nodeStatusExporter off, the rest on) and ``driver.version`` (shown by GFD and as DCGM's
``DCGM_FI_DRIVER_VERSION`` label); ``validate_cluster_policy`` checks their types, the rest of a section is
accepted as upstream's CRD accepts it."""
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
class ClusterPolicyStatus:
    """status (clusterpolicy_types.go ClusterPolicyStatus): ``state`` is ready | notReady | ignored | disabled."""

    state: str = ""
    namespace: str = ""
    conditions: list = field(default_factory=list)


STATE_READY, STATE_NOT_READY = "ready", "notReady"
DEFAULT_DRIVER_VERSION = "580.95.05"   # gpusim's default when spec.driver.version is unset (illustrative)


def section_enabled(spec: "ClusterPolicySpec", section: str, default: bool) -> bool:
    """``spec.<section>.enabled`` with the chart's default when unset (the operator's IsEnabled helpers)."""
    value = getattr(spec, section)
    enabled = value.enabled if isinstance(value, DevicePluginSpec) else (
        value.get("enabled") if isinstance(value, dict) else None)
    return default if enabled is None else bool(enabled)


def driver_version(spec: "ClusterPolicySpec") -> str:
    d = spec.driver if isinstance(spec.driver, dict) else {}
    return str(d.get("version") or DEFAULT_DRIVER_VERSION)


def validate_cluster_policy(cp: "ClusterPolicy"):
    """(path, message) for each field gpusim reads that has the wrong type (strict, as the CRD's schema)."""
    for f in ("driver", "toolkit", "validator", "dcgm", "dcgm_exporter", "gfd", "mig_manager",
              "node_status_exporter"):
        value = getattr(cp.spec, f)
        name = "".join(w if i == 0 else w.capitalize() for i, w in enumerate(f.split("_")))
        if value is None:
            continue
        if not isinstance(value, dict):
            yield f"spec.{name}", f"Invalid value: {value!r}: must be an object"
            continue
        if "enabled" in value and not isinstance(value["enabled"], bool):
            yield f"spec.{name}.enabled", f'Invalid value: "{value["enabled"]}": must be a boolean'
    d = cp.spec.driver
    if isinstance(d, dict) and "version" in d and not isinstance(d["version"], str):
        yield "spec.driver.version", f'Invalid value: {d["version"]!r}: must be a string'


@dataclass
class ClusterPolicy:
    api_version: str = "nvidia.com/v1"
    kind: str = "ClusterPolicy"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: ClusterPolicySpec = field(default_factory=ClusterPolicySpec)
    status: Optional[ClusterPolicyStatus] = None
