"""NVIDIA's DRA driver for GPUs, kubelet plugin ``gpu.nvidia.com`` (mirrors NVIDIA/k8s-dra-driver-gpu
cmd/gpu-kubelet-plugin: deviceinfo.go ``GpuInfo.GetDevice`` / ``CommonAttributesMig`` / ``CommonCapacitiesMig``,
partitions.go (KEP-4815 announcement), mig.go ``MigSpecTuple.ToCanonicalName``, driver.go
``generateSplitResourceSlices``, cdi.go, device_state.go Prepare/Unprepare) and the DeviceClasses its Helm chart
installs (``gpu.nvidia.com``: ``type == 'gpu'`` with ``extendedResourceName: nvidia.com/gpu``; ``mig.nvidia.com``:
``type == 'mig'``; the chart's deviceclass templates are not in the stored sources, the selectors follow
/work/shared/reference/dra-and-operations.md §1.5).

Whole GPUs only (a model without MIG): one ResourceSlice per node (the kubeletplugin helper's ResourceSlice
controller: pool = node name, generation 1, ``nodeName``; name ``<node>-gpu.nvidia.com-<5 random characters>`` from
``generateName``), one device ``gpu-<minor>`` per GPU with the attributes GetDevice writes: ``type: gpu``,
``uuid``, ``productName`` (NVML's name), ``architecture``, ``cudaComputeCapability`` and ``driverVersion``
(versions), and capacity ``memory`` (bytes, a binary quantity). Not published: ``brand``, ``cudaDriverVersion``,
``pcieBusID``, ``addressingMode`` and the PCIe-root attribute (gpusim does not model the values).

Dynamic MIG (a MIG-capable model: A100, H100, H200, A30). The real driver does this behind its ``DynamicMIG``
feature gate (alpha, off by default); gpusim runs the plugin with the gate on for MIG-capable models and off for
the others. As ``generateSplitResourceSlices`` (Kubernetes 1.35+): G+1 slices in the node's pool — first one with
only ``sharedCounters``, one counter set ``gpu-<minor>-counter-set`` per GPU, then one devices-only slice per GPU
holding, in device-name order, the full GPU ``gpu-<minor>`` and every placement of every MIG profile as
``gpu-<minor>-mig-<profile without dots>-<GI profile ID>-<placement start>`` (e.g. ``gpu-0-mig-1g10gb-19-0``).
- Counters (capacitiesToCounters + addCountersForMemSlices): one per capacity dimension, named by
  ``camelToDNSName``, plus ``memory-slice-<i>: 1`` per memory slice. A MIG device consumes its profile's capacities
  and the memory slices of its placement; the full GPU consumes every counter of its set, so an allocated MIG
  device blocks the full GPU and vice versa, and overlapping placements exclude each other.
- MIG attributes (CommonAttributesMig): ``type: mig``, ``parentUUID``, ``profile`` (e.g. ``1g.10gb``) and the
  parent's ``productName``, ``architecture``, ``cudaComputeCapability``, ``driverVersion``; a not-yet-created MIG
  device has no ``uuid`` attribute. Capacities (CommonCapacitiesMig): ``multiprocessors`` and ``memory``
  (memorySizeMB × 2²⁰ bytes). gpusim/hardware/mig.py has no per-profile engine counts, so ``copyEngines``,
  ``decoders``, ``encoders``, ``jpegEngines`` and ``ofaEngines`` (and their counters) are not published, and the
  ``+me`` profiles, which only the OFA/decoder counters limit to one per GPU, are left out.
- The full GPU's capacity is ``maxCapacities`` ("the full device capacity, from looking at all MIG profiles"):
  the stored sources do not show its computation; gpusim takes each dimension's maximum over the profiles (the
  ``7g`` profile), so its ``memory`` is the 7g profile's, not the board's total.
- The driver's real profile filter (GI profiles whose CI covers the whole GI) keeps exactly the profiles of
  gpusim's tables.

``node_prepare_resources`` (DRAPlugin.NodePrepareResources, k8s.io/kubelet/pkg/apis/dra/v1): for each claim, the
devices of this driver in its allocation, each with its CDI id ``k8s.gpu.nvidia.com/device=<device name>``
(cdi.go GetStandardDevice: cdiparser.QualifiedName(vendor "k8s.gpu.nvidia.com", class "device", canonical name));
the CDI spec's common edits set ``NVIDIA_VISIBLE_DEVICES=void`` so the runtime injects the GPUs through CDI only.
The stored cdi.go predates dynamic MIG, so the id of a dynamically created MIG device follows the same rule here.
A MIG device is created at Prepare: its ``MIG-<uuid>`` is derived from the parent's UUID and the device name
(deterministic; NVML assigns a fresh one on a real node). ``node_unprepare_resources`` forgets a claim's devices.
"""
from __future__ import annotations

import random
import re
import uuid as uuidlib
from dataclasses import dataclass
from fractions import Fraction

from ..api.meta import ObjectMeta
from ..api.quantity import format_quantity
from ..api.resource_k8s_io_v1 import (CELDeviceSelector, Counter, CounterSet, Device, DeviceAttribute, DeviceCapacity,
                                      DeviceClass, DeviceClassSpec, DeviceCounterConsumption, DeviceSelector,
                                      ResourceClaim, ResourcePool, ResourceSlice, ResourceSliceSpec)
from ..hardware import mig
from ..hardware.catalog import GPUModel

DRIVER_NAME = "gpu.nvidia.com"
CDI_VENDOR = "k8s." + DRIVER_NAME
CDI_DEVICE_CLASS = "device"
GPU_DEVICE_TYPE = "gpu"
MIG_DEVICE_TYPE = "mig"
MIG_DEVICE_CLASS = "mig.nvidia.com"
GENERATE_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"   # apimachinery util/rand
# What NVML's nvmlDeviceGetName prints for the catalog's models (GFD's nvidia.com/gpu.product replaces the
# spaces with dashes); other models fall back to the product label with dashes read as spaces.
NVML_NAMES = {"A100-SXM4-40GB": "NVIDIA A100-SXM4-40GB", "A100-SXM4-80GB": "NVIDIA A100-SXM4-80GB",
              "A30-24GB": "NVIDIA A30", "H100-SXM5-80GB": "NVIDIA H100 80GB HBM3", "H200-141GB": "NVIDIA H200",
              "L40S": "NVIDIA L40S", "T4": "Tesla T4"}
# go-nvlib GetArchitectureAsString, by compute capability major (8.9 is Ada Lovelace)
ARCHITECTURES = {7: "Volta", 8: "Ampere", 9: "Hopper", 10: "Blackwell", 12: "Blackwell"}


def device_class(name: str = DRIVER_NAME) -> DeviceClass:
    """The chart's ``gpu.nvidia.com`` DeviceClass (with ``extendedResourceName: nvidia.com/gpu`` on the v1 API) or
    its ``mig.nvidia.com`` DeviceClass."""
    kind = GPU_DEVICE_TYPE if name == DRIVER_NAME else MIG_DEVICE_TYPE
    expr = f"device.driver == '{DRIVER_NAME}' && device.attributes['{DRIVER_NAME}'].type == '{kind}'"
    return DeviceClass(metadata=ObjectMeta(name=name), spec=DeviceClassSpec(
        selectors=[DeviceSelector(CELDeviceSelector(expr))],
        extended_resource_name="nvidia.com/gpu" if kind == GPU_DEVICE_TYPE else None))


DEVICE_CLASSES = (DRIVER_NAME, MIG_DEVICE_CLASS)


def camel_to_dns_name(name: str) -> str:
    """mig.go camelToDNSName: ``copyEngines`` → ``copy-engines``."""
    out = re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", name)
    out = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1-\2", out)
    return out.lower().strip("-")


def mig_device_name(minor: int, p: mig.MigProfile, start: int) -> str:
    """MigSpecTuple.ToCanonicalName: ``gpu-<minor>-mig-<profile without dots>-<profile ID>-<placement start>``."""
    return f"gpu-{minor}-mig-{p.name.replace('.', '').replace('+', '-')}-{p.id}-{start}"


def counter_set_name(minor: int) -> str:
    """GpuInfo.GetSharedCounterSetName."""
    return f"gpu-{minor}-counter-set"


def _capacities(p: mig.MigProfile) -> dict[str, int]:
    """CommonCapacitiesMig, the dimensions gpusim's profile tables give."""
    return {"multiprocessors": p.sms, "memory": p.memory_mb * 2**20}


def _quantity(v: int, name: str) -> str:
    return format_quantity(Fraction(v), binary=True) if name == "memory" else str(v)


def _consumption(minor: int, caps: dict[str, int], start: int, size: int) -> list[DeviceCounterConsumption]:
    counters = {camel_to_dns_name(k): Counter(_quantity(v, k)) for k, v in caps.items()}
    counters.update({f"memory-slice-{i}": Counter("1") for i in range(start, start + size)})
    return [DeviceCounterConsumption(counter_set_name(minor), counters)]


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
        # DynamicMIG on a MIG-capable model: the profiles the driver announces (no +me, see the module docstring)
        self.profiles: tuple[mig.MigProfile, ...] = tuple(
            p for p in mig.profiles(model) if not p.media_extensions) if model.name in mig.GEOMETRIES else ()
        self.memory_slices = mig.geometry(model).memory_slices if self.profiles else 0

    @property
    def dynamic_mig(self) -> bool:
        return bool(self.profiles)

    def _gpu_attributes(self, minor: int) -> dict[str, DeviceAttribute]:
        m = self.model
        text = NVML_NAMES.get(m.name, m.product.replace("-", " "))
        return {"type": DeviceAttribute(string=GPU_DEVICE_TYPE), "uuid": DeviceAttribute(string=self.uuids[minor]),
                "productName": DeviceAttribute(string=text), "architecture": DeviceAttribute(string=architecture(m)),
                "cudaComputeCapability": DeviceAttribute(version=_semver(f"{m.compute[0]}.{m.compute[1]}")),
                "driverVersion": DeviceAttribute(version=_semver(self.driver_version))}

    def device(self, minor: int) -> Device:
        """GpuInfo.GetDevice (DynamicMIG off): a whole GPU with the board's memory."""
        return Device(name=f"gpu-{minor}", attributes=self._gpu_attributes(minor), capacity={
            "memory": DeviceCapacity(format_quantity(Fraction(self.model.memory_mib * 2**20), binary=True))})

    def max_capacities(self) -> dict[str, int]:
        caps = [_capacities(p) for p in self.profiles]
        return {k: max(c[k] for c in caps) for k in caps[0]}

    def full_gpu(self, minor: int) -> Device:
        """GpuInfo.PartGetDevice: the whole GPU, consuming every counter of its set."""
        caps = self.max_capacities()
        return Device(name=f"gpu-{minor}", attributes=self._gpu_attributes(minor),
                      capacity={k: DeviceCapacity(_quantity(v, k)) for k, v in caps.items()},
                      consumes_counters=_consumption(minor, caps, 0, self.memory_slices))

    def mig_devices(self, minor: int) -> list[Device]:
        """MigSpec.PartGetDevice for every profile and placement of GPU ``minor``."""
        parent = self._gpu_attributes(minor)
        out = []
        for p in self.profiles:
            attrs = {"type": DeviceAttribute(string=MIG_DEVICE_TYPE), "parentUUID": parent["uuid"],
                     "profile": DeviceAttribute(string=p.name),
                     **{k: parent[k] for k in ("productName", "architecture", "cudaComputeCapability",
                                               "driverVersion")}}
            caps = _capacities(p)
            for start in p.placements:
                out.append(Device(name=mig_device_name(minor, p, start), attributes=attrs,
                                  capacity={k: DeviceCapacity(_quantity(v, k)) for k, v in caps.items()},
                                  consumes_counters=_consumption(minor, caps, start, p.size)))
        return out

    def counter_set(self, minor: int) -> CounterSet:
        """GpuInfo.PartSharedCounterSets."""
        (use,) = _consumption(minor, self.max_capacities(), 0, self.memory_slices)
        return CounterSet(counter_set_name(minor), use.counters)

    def _slice(self, rng: random.Random, count: int, **spec) -> ResourceSlice:
        prefix = f"{self.node}-{DRIVER_NAME}-"
        name = prefix + "".join(rng.choice(GENERATE_NAME_CHARS) for _ in range(5))
        return ResourceSlice(metadata=ObjectMeta(name=name, generate_name=prefix), spec=ResourceSliceSpec(
            driver=DRIVER_NAME, pool=ResourcePool(self.node, 1, count), node_name=self.node, **spec))

    def resource_slices(self, rng: random.Random) -> list[ResourceSlice]:
        """What the plugin publishes: one slice of whole GPUs, or (DynamicMIG) the counter-set slice first and one
        devices slice per GPU (generateSplitResourceSlices), devices sorted by name."""
        gpus = range(len(self.uuids))
        if not self.dynamic_mig:
            return [self._slice(rng, 1, devices=[self.device(i) for i in gpus])]
        count = len(self.uuids) + 1
        out = [self._slice(rng, count, shared_counters=[self.counter_set(i) for i in gpus])]
        for i in gpus:
            devices = sorted([self.full_gpu(i)] + self.mig_devices(i), key=lambda d: d.name)
            out.append(self._slice(rng, count, devices=devices))
        return out

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
                    minor = int(r.device.split("-")[1])
                    device_uuid = self.uuids[minor] if "-mig-" not in r.device else \
                        "MIG-" + str(uuidlib.uuid5(uuidlib.NAMESPACE_OID, f"{self.uuids[minor]}/{r.device}"))
                    devices.append(PreparedDevice((r.request,), r.pool, r.device,
                                                  (f"{CDI_VENDOR}/{CDI_DEVICE_CLASS}={r.device}",),
                                                  device_uuid, minor))
                self.prepared[uid] = devices
            out[uid] = self.prepared[uid]
        return out

    def node_unprepare_resources(self, claim_uids: list[str]) -> None:
        for uid in claim_uids:
            self.prepared.pop(uid, None)
