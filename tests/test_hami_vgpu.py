"""HAMi fractional sharing: per-GPU fit (memory, cores, split slots, exclusivity) with HAMi's reason
strings, allocation following the scheduler's annotation, per-container memory caps, validation."""
from __future__ import annotations

import pytest

from gpusim.api.errors import InputError
from gpusim.cluster.scenario import load
from gpusim.cluster.simulation import run
from gpusim.node import hami
from gpusim.scheduler.plugins.hami import Card, fit

CFG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: hami-scheduler
  plugins: {multiPoint: {enabled: [{name: HAMi}]}}
  pluginConfig:
  - name: NodeResourcesFit
    args: {ignoredResources: [nvidia.com/gpumem, nvidia.com/gpumem-percentage, nvidia.com/gpucores]}
---
apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: h}
spec: {count: 1, labels: {gpu: "on"}, gpu: {model: A100-SXM4-40GB, count: 2}}
"""


def pod(name, gpus=1, mem=None, cores=None, pct=None, usage=None, growth=None, submit="0s", dur="1h"):
    lim = {"nvidia.com/gpu": gpus}
    for k, v in (("nvidia.com/gpumem", mem), ("nvidia.com/gpucores", cores), ("nvidia.com/gpumem-percentage", pct)):
        if v is not None:
            lim[k] = v
    ann = {"gpusim.io/duration": dur, "gpusim.io/submit-at": submit}
    if usage:
        ann["gpusim.io/gpu-memory"] = usage
    if growth:
        ann["gpusim.io/gpu-memory-growth"] = growth
    limits = ", ".join(f"{k}: {v}" for k, v in lim.items())
    anns = ", ".join(f"{k}: {v}" for k, v in ann.items())
    return f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, annotations: {{{anns}}}}}
spec:
  schedulerName: hami-scheduler
  restartPolicy: Never
  containers: [{{name: c, image: x, resources: {{limits: {{{limits}}}}}}}]
"""


def card(i, used=0, mem=0, core=0, count=10, total=40960):
    c = Card({"id": f"GPU-{i}", "index": i, "count": count, "devmem": total, "devcore": 100, "health": True})
    c.used, c.used_mem, c.used_core = used, mem, core
    return c


def req(nums=1, mem=0, pct=101, cores=0):
    return hami.Request(nums, mem, pct, cores)


def test_fit_reasons():
    assert fit([card(0, mem=40000)], req(mem=1000), "spread") == (None, "1/1 CardInsufficientMemory")
    assert fit([card(0, core=80)], req(mem=10, cores=30), "spread") == (None, "1/1 CardInsufficientCore")
    assert fit([card(0, used=10)], req(mem=10), "spread") == (None, "1/1 CardTimeSlicingExhausted")
    assert fit([card(0, used=1, mem=10, core=0)], req(mem=100, cores=100), "spread") == \
        (None, "1/1 ExclusiveDeviceAllocateConflict")
    assert fit([card(0, used=1, core=100), card(1, mem=40900)], req(mem=100), "spread") == \
        (None, "1/2 CardComputeUnitsExhausted, 1/2 CardInsufficientMemory")
    # two GPUs asked, one fits
    assert fit([card(0), card(1, used=10)], req(nums=2, mem=10), "spread") == \
        (None, "1/2 AllocatedCardsInsufficientRequest, 1/2 CardTimeSlicingExhausted")


def test_fit_policies_and_percentage():
    cards = [card(0, used=1, mem=20000, core=50), card(1)]
    assert fit(cards, req(mem=1000, cores=10), "spread")[0] == [("GPU-1", 1000, 10)]
    assert fit(cards, req(mem=1000, cores=10), "binpack")[0] == [("GPU-0", 1000, 10)]
    assert fit([card(0)], req(pct=25, cores=10), "spread")[0] == [("GPU-0", 10240, 10)]


class C:   # a container stand-in
    def __init__(self, **lim):
        self.resources = type("R", (), {"limits": {k.replace("_", "/", 1).replace("_", "-"): v for k, v in lim.items()},
                                        "requests": {}})()


def test_requests_default_exclusive():
    assert hami.container_request(C(**{"nvidia.com_gpu": "1"})) == hami.Request(1, 0, 100, 100)
    assert hami.container_request(C(**{"nvidia.com_gpu": "1", "nvidia.com_gpumem": "3000"})) == hami.Request(1, 3000, 101, 0)
    assert hami.container_request(C(**{"nvidia.com_gpu": "1", "nvidia.com_gpucores": "150"})).cores == 100


def test_allocation_follows_the_scheduler_and_shares_a_gpu():
    r = run(text=(CFG + pod("a", mem=10000, cores=30) + pod("b", mem=10000, cores=30)
                    + pod("c", mem=10000, cores=30)), until=60)
    devs = {}
    for name in "abc":
        p = r.pod(name)
        assert p.status.phase == "Running", (name, p.status)
        (entry,) = hami.decode_pod_devices(p.metadata.annotations[hami.ANN_ALLOCATED])
        devs[name] = entry[0][0]
        assert p.metadata.annotations[hami.ANN_BIND_PHASE] == "success"
        kl = r.kubelets[p.spec.node_name]
        envs = kl.dm.pod_devices[p.metadata.uid]["c"]["nvidia.com/gpu"][1]["envs"]
        assert envs["NVIDIA_VISIBLE_DEVICES"] == entry[0][0] and envs["CUDA_DEVICE_MEMORY_LIMIT_0"] == "10000m"
        assert envs["CUDA_DEVICE_SM_LIMIT"] == "30"
    # spread over the two GPUs, then the third shares one
    assert devs["a"] != devs["b"] and devs["c"] in (devs["a"], devs["b"])


def test_exclusive_pods_and_unschedulable_message():
    r = run(text=(CFG + pod("a") + pod("b") + pod("c")), until=60)
    assert [r.pod(n).status.phase for n in "abc"] == ["Running", "Running", "Pending"]
    msgs = [e.message for e in r.events.for_object("Pod", "default", "c") if e.reason == "FailedScheduling"]
    assert msgs and "1 2/2 CardInsufficientMemory." in msgs[-1]  # exclusive = 100 % memory: memory is checked first


def test_per_container_cap_oom_is_contained():
    r = run(text=(CFG + pod("greedy", mem=8000, cores=10, usage="4Gi", growth="10Gi/10m")
                    + pod("quiet", mem=8000, cores=10, usage="4Gi") + pod("q2", mem=8000, cores=10, usage="4Gi")),
            until=3600)
    assert r.pod("greedy").status.phase == "Failed"
    cs = r.pod("greedy").status.container_statuses[0].state.terminated
    assert cs.message == "CUDA error: out of memory"
    assert r.pod("quiet").status.phase == "Running" and r.pod("q2").status.phase == "Running"


@pytest.mark.parametrize("lim,msg", [
    ({"nvidia.com/gpumem": 3000}, "Required value: nvidia.com/gpumem needs nvidia.com/gpu"),
    ({"nvidia.com/gpu": 1, "nvidia.com/gpumem-percentage": 120}, "must be an integer between 0 and 100"),
    ({"nvidia.com/gpu": 1, "nvidia.com/gpumem-percentage": 20, "nvidia.com/gpumem": 100}, "not both"),
])
def test_validation(lim, msg):
    limits = ", ".join(f"{k}: {v}" for k, v in lim.items())
    text = f"""apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec: {{containers: [{{name: c, image: x, resources: {{limits: {{{limits}}}}}}}]}}
"""
    with pytest.raises(InputError, match=msg):
        load(texts=[("p.yaml", text)])


def test_configmap_split_count():
    cm = """---
apiVersion: v1
kind: ConfigMap
metadata: {name: hami-device-plugin, namespace: kube-system}
data: {config.yaml: "deviceSplitCount: 4"}
"""
    r = run(text=(CFG + cm), until=1)
    node = r.nodes()[0]
    assert node.status.allocatable["nvidia.com/gpu"] in ("8", 8)
    with pytest.raises(InputError, match="deviceSplitCount"):
        load(texts=[("s.yaml", CFG + cm.replace("4", "0"))])
