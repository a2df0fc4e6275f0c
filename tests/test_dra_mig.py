"""NVIDIA's DRA driver with dynamic MIG (partitionable devices) and the ``mig.nvidia.com`` DeviceClass; one MIG
partition shared by two containers of a pod."""
from __future__ import annotations

import random

import pytest

from gpusim.api.resource_k8s_io_v1 import ResourceClaim
from gpusim.api.schema import decode
from gpusim.cluster.scenario import load
from gpusim.cluster.simulation import Simulation
from gpusim.hardware.catalog import gpu_model
from gpusim.node import dra
from gpusim.scheduler.dra.allocator import Allocator

UUIDS = ["GPU-00000000-0000-4000-8000-000000000000", "GPU-00000000-0000-4000-8000-000000000001"]
CLASSES = {n: dra.device_class(n) for n in dra.DEVICE_CLASSES}


def plugin(model="A100-SXM4-80GB", gpus=1):
    return dra.GpuKubeletPlugin("node-0", gpu_model(model), UUIDS[:gpus], "580.95.05")


def claim(name, cls, profile=None):
    exactly = {"deviceClassName": cls}
    if profile:
        exactly["selectors"] = [{"cel": {"expression": f"device.attributes['gpu.nvidia.com'].profile == '{profile}'"}}]
    return decode(ResourceClaim, {"metadata": {"name": name, "namespace": "default"},
                                  "spec": {"devices": {"requests": [{"name": "r", "exactly": exactly}]}}})


def allocate(p, claims, allocated=()):
    """Allocate ``claims`` one after the other on the plugin's node (earlier results count as allocated)."""
    slices = p.resource_slices(random.Random(0))
    taken = {("gpu.nvidia.com", "node-0", d) for d in allocated}
    out = []
    for c in claims:
        got = Allocator(CLASSES, slices, set(taken)).allocate("node-0", [c])
        out.append(None if got is None else [r.device for r in got[0].devices.results])
        taken |= {("gpu.nvidia.com", "node-0", d) for d in out[-1] or []}
    return out


def test_published_devices_names_counters_and_attributes():
    p = plugin()
    counters, devices = p.resource_slices(random.Random(0))
    assert [cs.name for cs in counters.spec.shared_counters] == ["gpu-0-counter-set"]
    assert counters.spec.devices == [] and counters.spec.pool.resource_slice_count == 2
    names = [d.name for d in devices.spec.devices]
    assert names == sorted(names) and names[0] == "gpu-0"
    # every placement of every profile (mig.go ToCanonicalName), no +me profile
    assert set(names[1:]) == {f"gpu-0-mig-{n}-{i}-{s}" for n, i, starts in [
        ("1g10gb", 19, range(7)), ("1g20gb", 15, (0, 2, 4, 6)), ("2g20gb", 14, (0, 2, 4)), ("3g40gb", 9, (0, 4)),
        ("4g40gb", 5, (0,)), ("7g80gb", 0, (0,))] for s in starts}
    by = {d.name: d for d in devices.spec.devices}
    m = by["gpu-0-mig-3g40gb-9-4"]
    assert {k: a.value() for k, a in m.attributes.items()} == {
        "type": "mig", "parentUUID": UUIDS[0], "profile": "3g.40gb", "productName": "NVIDIA A100-SXM4-80GB",
        "architecture": "Ampere", "cudaComputeCapability": "8.0.0", "driverVersion": "580.95.5"}
    assert {k: c.value for k, c in m.capacity.items()} == {"multiprocessors": "42", "memory": "40192Mi"}
    (use,) = m.consumes_counters
    assert use.counter_set == "gpu-0-counter-set"
    assert {k: c.value for k, c in use.counters.items()} == {
        "multiprocessors": "42", "memory": "40192Mi", **{f"memory-slice-{i}": "1" for i in range(4, 8)}}
    # the full GPU consumes its whole counter set
    (full,) = by["gpu-0"].consumes_counters
    assert full.counters == counters.spec.shared_counters[0].counters
    assert {k: c.value for k, c in full.counters.items()} == {
        "multiprocessors": "98", "memory": "79Gi", **{f"memory-slice-{i}": "1" for i in range(8)}}


def test_a_model_without_mig_publishes_one_slice_of_whole_gpus():
    (s,) = plugin("L40S", 2).resource_slices(random.Random(0))
    assert [d.name for d in s.spec.devices] == ["gpu-0", "gpu-1"] and not s.spec.shared_counters
    assert s.spec.devices[0].consumes_counters is None and s.spec.devices[0].capacity["memory"].value == "46068Mi"


@pytest.mark.parametrize("claims,want", [
    # a MIG device by profile; the whole GPU is then no longer allocatable
    ([claim("m", "mig.nvidia.com", "1g.10gb"), claim("g", "gpu.nvidia.com")], [["gpu-0-mig-1g10gb-19-0"], None]),
    # and vice versa
    ([claim("g", "gpu.nvidia.com"), claim("m", "mig.nvidia.com", "1g.10gb")], [["gpu-0"], None]),
    # gpu.nvidia.com never hands out a MIG device, mig.nvidia.com never a whole GPU
    ([claim("m", "mig.nvidia.com", "7g.80gb"), claim("m2", "mig.nvidia.com")], [["gpu-0-mig-7g80gb-0-0"], None]),
    # memory slices: seven 1g.10gb fit (placements 0..6), an eighth does not
    ([claim(f"m{i}", "mig.nvidia.com", "1g.10gb") for i in range(8)],
     [[f"gpu-0-mig-1g10gb-19-{i}"] for i in range(7)] + [None]),
    # 4g.40gb takes slices 0-3, the 3g.40gb goes to its placement at 4; a second 4g.40gb has no placement left
    ([claim("a", "mig.nvidia.com", "4g.40gb"), claim("b", "mig.nvidia.com", "3g.40gb"),
      claim("c", "mig.nvidia.com", "1g.10gb")], [["gpu-0-mig-4g40gb-5-0"], ["gpu-0-mig-3g40gb-9-4"], None]),
    ([claim("a", "mig.nvidia.com", "4g.40gb"), claim("b", "mig.nvidia.com", "4g.40gb")],
     [["gpu-0-mig-4g40gb-5-0"], None]),
    # a 1g.10gb at slice 0 leaves 3g.40gb only its placement at 4, and no room for the 4g.40gb
    ([claim("a", "mig.nvidia.com", "1g.10gb"), claim("b", "mig.nvidia.com", "4g.40gb"),
      claim("c", "mig.nvidia.com", "3g.40gb")], [["gpu-0-mig-1g10gb-19-0"], None, ["gpu-0-mig-3g40gb-9-4"]]),
])
def test_mig_and_whole_gpu_exclude_each_other_through_counters(claims, want):
    assert allocate(plugin(), claims) == want


def test_two_gpus_a_mig_device_on_one_leaves_the_other_whole():
    got = allocate(plugin(gpus=2), [claim("m", "mig.nvidia.com", "2g.20gb"), claim("g", "gpu.nvidia.com"),
                                    claim("g2", "gpu.nvidia.com")])
    assert got[0][0].endswith("-mig-2g20gb-14-0") and got[1][0] in {"gpu-0", "gpu-1"}
    assert got[0][0].split("-")[1] != got[1][0].split("-")[1] and got[2] is None


def test_prepare_gives_the_mig_device_a_cdi_id_and_a_mig_uuid():
    p = plugin()
    c = claim("m", "mig.nvidia.com", "1g.10gb")
    c.metadata.uid = "uid-1"
    (c.status.allocation,) = Allocator(CLASSES, p.resource_slices(random.Random(0)), set()).allocate("node-0", [c])
    (dev,) = p.node_prepare_resources([c])["uid-1"]
    assert dev.cdi_device_ids == ("k8s.gpu.nvidia.com/device=gpu-0-mig-1g10gb-19-0",)
    assert dev.uuid.startswith("MIG-") and dev.minor == 0
    assert p.node_prepare_resources([c])["uid-1"] == [dev]   # idempotent, same UUID


NODE = """apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: a100}
spec: {count: 1, gpu: {model: A100-SXM4-80GB, count: 1, allocation: dra}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: mig-1g}
spec:
  spec:
    devices:
      requests:
      - name: mig
        exactly:
          deviceClassName: mig.nvidia.com
          selectors: [{cel: {expression: "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: whole}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]}}}
"""


def pod(name, template, containers=("c",), duration="100s", claims=None):
    claims = claims or [("gpu", template)]
    ctrs = ", ".join(f"{{name: {c}, image: x, resources: {{claims: [{{name: {claims[i % len(claims)][0]}}}]}}}}"
                     for i, c in enumerate(containers))
    rcs = ", ".join(f"{{name: {n}, resourceClaimTemplateName: {t}}}" for n, t in claims)
    return f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, annotations: {{gpusim.io/duration: {duration}}}}}
spec:
  restartPolicy: Never
  resourceClaims: [{rcs}]
  containers: [{ctrs}]
"""


def test_end_to_end_mig_pod_blocks_the_whole_gpu_pod_until_it_ends():
    sim = Simulation(load(texts=[("mig.yaml", NODE + pod("small", "mig-1g") + pod("big", "whole"))]))
    sim.ctx.env.run(until=50)
    pods = {p.metadata.name: p for p in sim.ctx.api.list("Pod")}
    assert pods["small"].spec.node_name == "a100-0" and pods["big"].spec.node_name == ""
    (c,) = [c for c in sim.ctx.api.list("ResourceClaim") if c.status.allocation]
    assert [r.device for r in c.status.allocation.devices.results] == ["gpu-0-mig-1g10gb-19-0"]
    msgs = [e.message for e in sim.ctx.recorder.log if e.reason == "FailedScheduling" and e.object.name == "big"]
    assert msgs[0].startswith("0/1 nodes are available: 1 cannot allocate all claims.")
    kl = sim.kubelets["a100-0"]
    assert kl.dra_cdi_devices[pods["small"].metadata.uid] == {"c": ["k8s.gpu.nvidia.com/device=gpu-0-mig-1g10gb-19-0"]}
    sim.run()
    sched = {e.object.name: e.time for e in sim.ctx.recorder.log if e.reason == "Scheduled"}
    ended = {h.pod: h.end for h in sim.ctx.holdings}
    assert sched["big"] == pytest.approx(ended["small"], abs=1e-6)   # the whole GPU once the MIG device is free
    assert sim.ctx.api.get("Pod", "default", "big").spec.node_name == "a100-0"


def test_two_containers_share_one_mig_partition_through_one_claim():
    """NVIDIA's gpu-test2 pattern on a MIG device: one claim in both containers' resources.claims → the kubelet
    gives both the same CDI device (cm/dra manager: CDI ids per container from the claims it references)."""
    sim = Simulation(load(texts=[("mig.yaml", NODE + pod("shared", "mig-1g", containers=("a", "b")))]))
    sim.ctx.env.run(until=50)
    (c,) = sim.ctx.api.list("ResourceClaim")
    assert [r.device for r in c.status.allocation.devices.results] == ["gpu-0-mig-1g10gb-19-0"]
    p = sim.ctx.api.get("Pod", "default", "shared")
    cdi = sim.kubelets["a100-0"].dra_cdi_devices[p.metadata.uid]
    assert cdi == {"a": ["k8s.gpu.nvidia.com/device=gpu-0-mig-1g10gb-19-0"],
                   "b": ["k8s.gpu.nvidia.com/device=gpu-0-mig-1g10gb-19-0"]}
    held = [h for h in sim.ctx.holdings if h.end is None]
    assert len(held) == 1 and held[0].device.startswith("MIG-") and held[0].pod == "shared"


def test_two_containers_with_a_claim_each_get_two_partitions():
    sim = Simulation(load(texts=[("mig.yaml", NODE + pod("two", "mig-1g", containers=("a", "b"),
                                                           claims=[("x", "mig-1g"), ("y", "mig-1g")]))]))
    sim.ctx.env.run(until=50)
    p = sim.ctx.api.get("Pod", "default", "two")
    cdi = sim.kubelets["a100-0"].dra_cdi_devices[p.metadata.uid]
    assert sorted(v[0] for v in cdi.values()) == ["k8s.gpu.nvidia.com/device=gpu-0-mig-1g10gb-19-0",
                                                  "k8s.gpu.nvidia.com/device=gpu-0-mig-1g10gb-19-1"]
