"""NVIDIA's DRA driver for GPUs, kubelet plugin ``gpu.nvidia.com`` (mirrors NVIDIA/k8s-dra-driver-gpu
cmd/gpu-kubelet-plugin: deviceinfo.go ``GpuInfo.GetDevice``, cdi.go, device_state.go Prepare/Unprepare) and the
DeviceClass its Helm chart installs (deployments/helm/nvidia-dra-driver-gpu/templates/deviceclass-gpu.yaml).

- Publishes one ResourceSlice per node (the kubeletplugin helper's ResourceSlice controller: pool = node name,
  generation 1, one slice, ``nodeName``; name ``<node>-gpu.nvidia.com-<5 random characters>`` from
  ``generateName``), with one device ``gpu-<minor>`` per whole GPU and the attributes GetDevice writes:
  ``type: gpu``, ``uuid``, ``productName`` (NVML's name), ``architecture``, ``cudaComputeCapability`` and
  ``driverVersion`` (versions), and capacity ``memory`` (bytes, a binary quantity). Not published here:
  ``brand``, ``cudaDriverVersion``, ``pcieBusID``, ``addressingMode`` and the PCIe-root attribute (gpusim does not
  model the values), MIG devices (out of scope for this slice).
- ``node_prepare_resources`` (DRAPlugin.NodePrepareResources, k8s.io/kubelet/pkg/apis/dra/v1): for each claim,
  the devices of this driver in its allocation, each with its CDI id ``k8s.gpu.nvidia.com/device=gpu-<minor>``
  (cdiparser.QualifiedName(vendor "k8s.gpu.nvidia.com", class "device", name)); the CDI spec's common edits set
  ``NVIDIA_VISIBLE_DEVICES=void`` so the runtime injects the GPUs through CDI only.
- ``node_unprepare_resources`` forgets a claim's prepared devices.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction

from ..api.meta import ObjectMeta
from ..api.quantity import format_quantity
from ..api.resource_k8s_io_v1 import (CELDeviceSelector, Device, DeviceAttribute, DeviceCapacity, DeviceClass,
                                      DeviceClassSpec, DeviceSelector, ResourceClaim, ResourcePool, ResourceSlice,
                                      ResourceSliceSpec)
from ..hardware.catalog import GPUModel

DRIVER_NAME = "gpu.nvidia.com"
CDI_VENDOR = "k8s." + DRIVER_NAME
CDI_DEVICE_CLASS = "device"
GPU_DEVICE_TYPE = "gpu"
GENERATE_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"   # apimachinery util/rand
# What NVML's nvmlDeviceGetName prints for the catalog's models (GFD's nvidia.com/gpu.product replaces the
# spaces with dashes); other models fall back to the product label with dashes read as spaces.
NVML_NAMES = {"A100-SXM4-40GB": "NVIDIA A100-SXM4-40GB", "A100-SXM4-80GB": "NVIDIA A100-SXM4-80GB",
              "A30-24GB": "NVIDIA A30", "H100-SXM5-80GB": "NVIDIA H100 80GB HBM3", "H200-141GB": "NVIDIA H200",
              "L40S": "NVIDIA L40S", "T4": "Tesla T4"}
# go-nvlib GetArchitectureAsString, by compute capability major (8.9 is Ada Lovelace)
ARCHITECTURES = {7: "Volta", 8: "Ampere", 9: "Hopper", 10: "Blackwell", 12: "Blackwell"}


def device_class() -> DeviceClass:
    """The chart's ``gpu.nvidia.com`` DeviceClass (with ``extendedResourceName: nvidia.com/gpu`` on the v1 API)."""
    expr = f"device.driver == '{DRIVER_NAME}' && device.attributes['{DRIVER_NAME}'].type == '{GPU_DEVICE_TYPE}'"
    return DeviceClass(metadata=ObjectMeta(name=DRIVER_NAME), spec=DeviceClassSpec(
        selectors=[DeviceSelector(CELDeviceSelector(expr))], extended_resource_name="nvidia.com/gpu"))


def architecture(model: GPUModel) -> str:
    major, minor = model.compute
    return "Ada Lovelace" if (major, minor) == (8, 9) else "Turing" if (major, minor) == (7, 5) else \
        ARCHITECTURES.get(major, "Unknown")


def _semver(text: str) -> str:
    """Masterminds semver.MustParse(x).String(): three numeric parts, leading zeros dropped."""
    parts = [str(int(p)) for p in text.split(".")] + ["0", "0"]
    return ".".join(parts[:3])


@dataclass(frozen=True)
class PreparedDevice:
    """NodePrepareResourcesResponse Device: request names, pool, device, CDI device ids (and the GPU's UUID and
    minor, which the CDI spec of that device injects)."""

    request_names: tuple[str, ...]
    pool_name: str
    device_name: str
    cdi_device_ids: tuple[str, ...]
    uuid: str
    minor: int


class GpuKubeletPlugin:
    """The gpu-kubelet-plugin of one node."""

    driver = DRIVER_NAME

    def __init__(self, node: str, model: GPUModel, uuids: list[str], driver_version: str):
        self.node, self.model, self.uuids, self.driver_version = node, model, list(uuids), driver_version
        self.prepared: dict[str, list[PreparedDevice]] = {}   # claim uid → devices (the plugin's checkpoint)

    def device(self, minor: int) -> Device:
        m = self.model
        text = NVML_NAMES.get(m.name, m.product.replace("-", " "))
        return Device(name=f"gpu-{minor}", attributes={
            "type": DeviceAttribute(string=GPU_DEVICE_TYPE), "uuid": DeviceAttribute(string=self.uuids[minor]),
            "productName": DeviceAttribute(string=text), "architecture": DeviceAttribute(string=architecture(m)),
            "cudaComputeCapability": DeviceAttribute(version=_semver(f"{m.compute[0]}.{m.compute[1]}")),
            "driverVersion": DeviceAttribute(version=_semver(self.driver_version))},
            capacity={"memory": DeviceCapacity(format_quantity(Fraction(m.memory_mib * 2**20), binary=True))})

    def resource_slice(self, rng: random.Random) -> ResourceSlice:
        prefix = f"{self.node}-{DRIVER_NAME}-"
        name = prefix + "".join(rng.choice(GENERATE_NAME_CHARS) for _ in range(5))
        return ResourceSlice(metadata=ObjectMeta(name=name, generate_name=prefix), spec=ResourceSliceSpec(
            driver=DRIVER_NAME, pool=ResourcePool(self.node, 1, 1), node_name=self.node,
            devices=[self.device(i) for i in range(len(self.uuids))]))

    def node_prepare_resources(self, claims: list[ResourceClaim]) -> dict[str, list[PreparedDevice]]:
        """NodePrepareResources: claim uid → the prepared devices of this driver (idempotent per claim)."""
        out = {}
        for claim in claims:
            uid = claim.metadata.uid
            if uid not in self.prepared:
                devices = []
                for r in claim.status.allocation.devices.results:
                    if r.driver != DRIVER_NAME or r.pool != self.node:
                        continue
                    minor = int(r.device.rsplit("-", 1)[1])
                    devices.append(PreparedDevice((r.request,), r.pool, r.device,
                                                  (f"{CDI_VENDOR}/{CDI_DEVICE_CLASS}={r.device}",),
                                                  self.uuids[minor], minor))
                self.prepared[uid] = devices
            out[uid] = self.prepared[uid]
        return out

    def node_unprepare_resources(self, claim_uids: list[str]) -> None:
        for uid in claim_uids:
            self.prepared.pop(uid, None)
