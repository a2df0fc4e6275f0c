"""The Device Plugin API, v1beta1 (mirrors k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1: api.proto's
messages and services, constants.go).

Both sides of the kubelet ↔ device plugin gRPC boundary import this module and nothing of each other,
as upstream's kubelet (pkg/kubelet/cm/devicemanager) and the NVIDIA device plugin both import only the
API package. ``Registration`` is the kubelet's service, ``DevicePlugin`` the plugin's.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional, Protocol

# constants.go
HEALTHY, UNHEALTHY = "Healthy", "Unhealthy"
API_VERSION = "v1beta1"
DEVICE_PLUGIN_PATH = "/var/lib/kubelet/device-plugins/"
KUBELET_SOCKET = DEVICE_PLUGIN_PATH + "kubelet.sock"


@dataclass
class Device:
    """v1beta1.Device: ID (the GPU UUID), health, topology (NUMA node); ``index`` is the GPU's minor
    number on the node (what the NVIDIA plugin keeps beside the ID)."""

    id: str
    health: str = HEALTHY
    numa: Optional[int] = None
    index: int = 0


@dataclass
class DevicePluginOptions:
    pre_start_required: bool = False
    get_preferred_allocation_available: bool = True


@dataclass
class RegisterRequest:
    version: str
    endpoint: str
    resource_name: str
    options: DevicePluginOptions = field(default_factory=DevicePluginOptions)


@dataclass
class ContainerAllocateResponse:
    envs: dict[str, str] = field(default_factory=dict)
    mounts: list = field(default_factory=list)
    devices: list = field(default_factory=list)
    annotations: dict[str, str] = field(default_factory=dict)


class DevicePlugin(Protocol):
    """service DevicePlugin, one per resource name (the plugin's gRPC server behind ``endpoint``)."""

    resource: str

    @property
    def running(self) -> bool: ...

    @property
    def endpoint(self) -> str: ...

    def get_device_plugin_options(self) -> DevicePluginOptions: ...

    def list_and_watch(self, send: Callable[[Optional[list[Device]]], None]) -> None: ...

    def get_preferred_allocation(self, available: list[str], must_include: list[str], size: int) -> list[str]: ...

    def allocate(self, device_ids: list[str]) -> ContainerAllocateResponse: ...

    def pre_start_container(self, device_ids: list[str]) -> None: ...


class Registration(Protocol):
    """service Registration (the kubelet's, on ``kubelet.sock``): a plugin registers one resource."""

    def register(self, plugin: DevicePlugin, req: RegisterRequest) -> None: ...
