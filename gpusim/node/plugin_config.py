"""The NVIDIA device plugin's config file (mirrors NVIDIA/k8s-device-plugin api/config/v1: config.go,
flags.go, sharing.go, replicas.go), as it arrives from a ConfigMap key chosen per node by the label
``nvidia.com/device-plugin.config`` (or the ClusterPolicy's ``devicePlugin.config.default``).

Sharing: ``timeSlicing`` or ``mps`` (not both) with ``resources[].{name, replicas, devices, rename}``;
each GPU of the named resource is advertised ``replicas`` times as ``<uuid>::<k>``; ``renameByDefault``
advertises ``<name>.shared``; ``failRequestsGreaterThanOne`` rejects asking for more than one replica
(default false for time-slicing, true for MPS).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import yaml

from ..api.errors import FieldError
from ..api.schema import decode

VERSION = "v1"
SHARED_SUFFIX = ".shared"   # DefaultSharedResourceNameSuffix
MIG_STRATEGIES = ("none", "single", "mixed")


@dataclass
class PluginFlags:
    pass_device_specs: Optional[bool] = None
    device_list_strategy: Any = None
    device_id_strategy: Optional[str] = None
    cdi_annotation_prefix: Any = None
    nvidia_ctk_path: Any = None
    container_driver_root: Any = None


@dataclass
class Flags:
    mig_strategy: Optional[str] = None
    fail_on_init_error: Optional[bool] = None
    nvidia_driver_root: Any = None
    nvidia_dev_root: Any = None
    gds_enabled: Any = None
    mofed_enabled: Any = None
    use_node_feature_api: Any = None
    device_discovery_strategy: Any = None
    plugin: Optional[PluginFlags] = None
    gfd: Any = None


@dataclass
class ReplicatedResource:
    name: str = ""
    replicas: int = 0
    devices: Any = None
    rename: Any = None


@dataclass
class ReplicatedResources:
    rename_by_default: bool = False
    fail_requests_greater_than_one: Optional[bool] = None
    resources: list[ReplicatedResource] = field(default_factory=list)


@dataclass
class Sharing:
    time_slicing: Optional[ReplicatedResources] = None
    mps: Optional[ReplicatedResources] = None


@dataclass
class Config:
    version: str = ""
    flags: Flags = field(default_factory=Flags)
    sharing: Sharing = field(default_factory=Sharing)
    resources: Any = None
    imex: Any = None

    @property
    def strategy(self) -> str:
        """``time-slicing``, ``mps`` or ``none`` (GFD's nvidia.com/gpu.sharing-strategy)."""
        if self.sharing.time_slicing is not None:
            return "time-slicing"
        if self.sharing.mps is not None:
            return "mps"
        return "none"

    @property
    def replicated(self) -> Optional[ReplicatedResources]:
        return self.sharing.time_slicing or self.sharing.mps

    def replicas_for(self, resource: str) -> int:
        rr = self.replicated
        if rr is None:
            return 1
        return next((r.replicas for r in rr.resources if r.name == resource), 1)

    def advertised_name(self, resource: str) -> str:
        """The resource name the plugin registers: ``<name>.shared`` with renameByDefault."""
        rr = self.replicated
        if rr is not None and rr.rename_by_default and self.replicas_for(resource) > 1:
            return resource + SHARED_SUFFIX
        return resource

    @property
    def fail_requests_greater_than_one(self) -> bool:
        rr = self.replicated
        if rr is None:
            return False
        if rr.fail_requests_greater_than_one is None:
            return self.sharing.mps is not None    # MPS defaults to true, time-slicing to false
        return rr.fail_requests_greater_than_one


def parse(text: str) -> Config:
    """Parse and validate; FieldError carries upstream's message where it has one."""
    try:
        raw = yaml.safe_load(text) or {}
    except yaml.YAMLError as e:
        raise FieldError("", f"unable to parse config file: {getattr(e, 'problem', None) or e}") from None
    if not isinstance(raw, dict):
        raise FieldError("", "unable to parse config file: expected a mapping")
    cfg = decode(Config, raw)
    if cfg.version != VERSION:
        raise FieldError("version", f"unknown version: {cfg.version}")
    if cfg.flags.mig_strategy is not None and cfg.flags.mig_strategy not in MIG_STRATEGIES:
        raise FieldError("flags.migStrategy", f'Unsupported value: "{cfg.flags.mig_strategy}": supported values: '
                         + ", ".join(f'"{s}"' for s in MIG_STRATEGIES))
    if cfg.sharing.time_slicing is not None and cfg.sharing.mps is not None:
        raise FieldError("sharing", "time-slicing and MPS are mutually exclusive")   # UNVERIFIED wording
    for key, rr in (("timeSlicing", cfg.sharing.time_slicing), ("mps", cfg.sharing.mps)):
        if rr is None:
            continue
        if not rr.resources:
            raise FieldError(f"sharing.{key}.resources", "no resources specified")
        for i, r in enumerate(rr.resources):
            p = f"sharing.{key}.resources[{i}]"
            if not r.name:
                raise FieldError(f"{p}.name", "no resource name specified")
            if r.replicas < 2:
                raise FieldError(f"{p}.replicas", "number of replicas must be >= 2")
            if key == "mps" and r.name != "nvidia.com/gpu":
                raise FieldError(f"{p}.name", "sharing using MPS is not supported for MIG devices")
    return cfg


def default() -> Config:
    return Config(version=VERSION)
