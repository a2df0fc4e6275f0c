"""NVIDIA vGPU C-series (time-sliced): the VM's GPU has the type's framebuffer; memory beyond it fails."""
from __future__ import annotations

import pytest

from gpusim.api.errors import InputError
from gpusim.cluster.scenario import load
from gpusim.cluster.simulation import run
from gpusim.hardware import vgpu


@pytest.mark.parametrize("name, model, fb, max_per_gpu", [
    ("A100-4C", "A100-SXM4-40GB", 4, 10), ("A100D-10C", "A100-SXM4-80GB", 10, 8), ("A100D-80C", "A100-SXM4-80GB", 80, 1),
    ("H100-5C", "H100-SXM5-80GB", 5, 16), ("H200-141C", "H200-141GB", 141, 1), ("A30-6C", "A30-24GB", 6, 4),
])
def test_types_match_the_operator_defaults(name, model, fb, max_per_gpu):
    t = vgpu.vgpu_type(name)
    assert (t.physical.name, t.framebuffer_gb, t.max_per_gpu) == (model, fb, max_per_gpu)
    g = vgpu.guest_model(t)
    assert g.memory_mib == fb * 1024 and not g.mig_capable and g.sms == t.physical.sms


def pool(vgpu_spec, count=1, model="A100-SXM4-80GB"):
    return (f"apiVersion: gpusim.io/v1alpha1\nkind: NodePool\nmetadata: {{name: vm}}\n"
            f"spec: {{count: 1, gpu: {{model: {model}, count: {count}, vgpu: {vgpu_spec}}}}}\n")


def pod(mem, growth=""):
    g = f", gpusim.io/gpu-memory-growth: {growth}" if growth else ""
    return (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p, annotations: {{gpusim.io/duration: 5m, "
            f"gpusim.io/gpu-memory: {mem}{g}}}}}\nspec:\n  restartPolicy: Never\n"
            f"  containers: [{{name: c, image: x, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}]\n")


def test_guest_sees_the_framebuffer_and_overflow_fails():
    r = run(text="---\n".join([pool("{type: A100D-10C}"), pod("8Gi", "12Gi/4m")]))
    node = r.nodes()[0]
    assert node.metadata.labels["nvidia.com/gpu.memory"] == "10240"
    assert node.metadata.labels["nvidia.com/vgpu.present"] == "true"
    assert node.metadata.labels["nvidia.com/gpu.product"] == "GRID-A100D-10C"
    assert r.pod("p").status.phase == "Failed"
    oom = next(t for t in r.trace.records if t.function == "cuda.cudaMalloc")
    # 8Gi → 12Gi over 240 s crosses 10240 MiB after (10240 − 8192) / 4096 × 240 = 120 s
    assert abs(oom.time - (1.002 + 120)) < 0.01 and "10240 MiB" in oom.result


def test_within_the_framebuffer_succeeds():
    r = run(text="---\n".join([pool("{type: A100D-10C}"), pod("9Gi")]))
    assert r.pod("p").status.phase == "Succeeded"


@pytest.mark.parametrize("spec, count, message", [
    ("{type: A100-99C}", 1, 'unknown time-sliced vGPU type "A100-99C"'),
    ("{type: A100-10C}", 1, "runs on A100-SXM4-40GB, not A100-SXM4-80GB"),
    ("{type: A100D-10C, scheduler: RoundRobin}", 1, 'Unsupported value: "RoundRobin"'),
    ("{type: A100D-10C}", 2, "a VM gets one fractional vGPU"),
])
def test_bad_vgpu_specs(spec, count, message):
    with pytest.raises(InputError, match=message):
        load(texts=[("v.yaml", pool(spec, count))])


def test_whole_gpu_types_may_be_attached_several_times():
    sc = load(texts=[("v.yaml", pool("{type: A100D-80C, scheduler: FixedShare}", count=2))])
    model, count = sc.gpus["vm-0"]
    assert count == 2 and model.memory_mib == 80 * 1024
