"""GPU device memory under the three sharing strategies (gpusim/node/sharing.py).

The outline's third failure: four inference servers time-sliced on one A100-80GB (81920 MiB), each
holding 15Gi (15360 MiB); one's KV cache grows to 40Gi over 10m (25600 MiB / 600 s). The sum starts at
61440 MiB, so the 20480 MiB of headroom is gone 20480 / 25600 × 600 s = 480 s after the grower
starts — and with no memory isolation all four die. Under MPS (replicas 4) each client is pinned to
81920 / 4 = 20480 MiB: the grower hits its own limit after (20480 − 15360) / 25600 × 600 s = 120 s and
dies alone. On whole GPUs a grower to 95Gi (97280 MiB) exceeds 81920 MiB after
66560 / 81920 × 600 s = 487.5 s; one to 40Gi never does.
"""
from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from gpusim.api.errors import InputError
from gpusim.cluster.scenario import load
from gpusim.cli import main
from gpusim.cluster.simulation import run
from gpusim.node.sharing import Usage, first_excess
from gpusim.views.sharing import memory_timeline
from gpusim.views.kubectl import to_json

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

POLICY = """apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {name: cluster-policy}
spec:
  devicePlugin:
    config: {name: dp-config, default: whole}
"""


def configmap(kind: str, replicas: int = 4) -> str:
    return f"""apiVersion: v1
kind: ConfigMap
metadata: {{name: dp-config, namespace: gpu-operator}}
data:
  whole: |
    version: v1
  shared: |
    version: v1
    sharing:
      {kind}:
        resources:
        - name: nvidia.com/gpu
          replicas: {replicas}
"""


def pool(gpus: int = 1, label: str | None = "shared") -> str:
    lab = f", labels: {{nvidia.com/device-plugin.config: {label}}}" if label else ""
    return (f"apiVersion: gpusim.io/v1alpha1\nkind: NodePool\nmetadata: {{name: g}}\n"
            f"spec: {{count: 1, gpu: {{model: A100-SXM4-80GB, count: {gpus}}}{lab}}}\n")


def pod(name: str, growth: str | None = None, policy: str = "Never", duration: str = "20m", mem: str = "15Gi") -> str:
    ann = f"gpusim.io/duration: {duration}, gpusim.io/gpu-memory: {mem}"
    if growth:
        ann += f", gpusim.io/gpu-memory-growth: {growth}"
    return (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, annotations: {{{ann}}}}}\nspec:\n"
            f"  restartPolicy: {policy}\n"
            f"  containers: [{{name: server, image: vllm, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}]\n")


def four(growth: str, policy: str = "Never") -> list[str]:
    return [pod("grow", growth, policy)] + [pod(f"steady-{i}", policy=policy) for i in range(3)]


def simulate(*docs: str, until=None):
    return run(text="---\n".join(docs), until=until)


def started(r, name: str) -> float:
    cs = r.pod(name).status.container_statuses[0]
    st = cs.state.terminated or (cs.last_state.terminated if cs.last_state else None)
    return st.started_at if st else cs.state.running.started_at


def terminated(r, name: str):
    return r.pod(name).status.container_statuses[0].state.terminated


def oom_traces(r):
    return [t for t in r.trace.records if t.function == "cuda.cudaMalloc"]


# --- time-slicing: the cascade ------------------------------------------------------------------------

def test_time_slicing_one_kv_cache_takes_down_all_four():
    r = simulate(POLICY, configmap("timeSlicing"), pool(), *four("40Gi/10m"))
    grow_start = started(r, "grow")
    crossing = grow_start + 480.0
    for name in ["grow", "steady-0", "steady-1", "steady-2"]:
        p = r.pod(name)
        assert p.status.phase == "Failed", name
        t = terminated(r, name)
        assert (t.exit_code, t.reason, t.message) == (1, "Error", "CUDA error: out of memory")
        assert t.finished_at == pytest.approx(crossing, abs=1e-9)
    assert grow_start == pytest.approx(1.002, abs=1e-9)   # scheduled at 0, 2 RPCs + container start
    traces = oom_traces(r)
    assert len(traces) == 4
    assert {t.component for t in traces} == {"gpu/g-0/0"}
    assert {t.result for t in traces} == {"out of memory: used 81920 MiB of 81920 MiB (time-slicing: no memory isolation)"}
    # upstream emits no event for an application crash; with Never there is no back-off either
    assert not [e for e in r.events.log if e.type == "Warning"]
    assert r.end == pytest.approx(crossing)


def test_time_slicing_without_crossing_everyone_succeeds():
    r = simulate(POLICY, configmap("timeSlicing"), pool(), *four("35Gi/10m"))   # 3×15 + 35 = 80Gi exactly
    assert {p.metadata.name: p.status.phase for p in r.pods()} == {
        "grow": "Succeeded", "steady-0": "Succeeded", "steady-1": "Succeeded", "steady-2": "Succeeded"}
    assert not oom_traces(r)
    assert r.end == pytest.approx(1.008 + 1200, abs=0.01)   # no stale timer keeps the run going


def test_on_failure_restarts_with_backoff_and_memory_resets():
    r = simulate(POLICY, configmap("timeSlicing"), pool(), *four("40Gi/10m", policy="OnFailure"), until=900)
    crossing = 1.002 + 480
    for name in ["grow", "steady-0", "steady-1", "steady-2"]:
        p = r.pod(name)
        cs = p.status.container_statuses[0]
        assert p.status.phase == "Running" and cs.restart_count == 1
        assert cs.last_state.terminated.message == "CUDA error: out of memory"
        assert cs.state.running.started_at == pytest.approx(crossing + 10)   # 10s back-off
        backoff = [e for e in r.events.log if e.reason == "BackOff" and e.object.name == name]
        assert len(backoff) == 1 and backoff[0].type == "Warning"
        assert backoff[0].message == (f"Back-off restarting failed container server in pod "
                                      f"{name}_default({p.metadata.uid})")
    # Restarted from 15Gi: the next crossing is 480 s after the restart, at 491.002 + 480 = 971.002, after the run ends.
    assert len(oom_traces(r)) == 4


def test_memory_timeline_shows_the_sum_reaching_the_gpu():
    r = simulate(POLICY, configmap("timeSlicing"), pool(), *four("40Gi/10m"))
    tl = memory_timeline(r, "g-0", 0)
    times = [t for t, _ in tl]
    assert times == sorted(times)
    crossing = 1.002 + 480
    at_cross = [v for t, v in tl if t == pytest.approx(crossing)]
    assert len(at_cross) == 2                      # just before, then after the cascade
    assert sum(at_cross[0].values()) == pytest.approx(81920)
    assert at_cross[0]["grow"] == pytest.approx(81920 - 3 * 15360)
    assert at_cross[1] == {}
    assert memory_timeline(r, "g-0", 7) == []


# --- MPS: pinned per-client limits --------------------------------------------------------------------

def test_mps_only_the_grower_fails():
    r = simulate(POLICY, configmap("mps"), pool(), *four("40Gi/10m"))
    g = r.pod("grow")
    assert g.status.phase == "Failed"
    t = terminated(r, "grow")
    assert t.message == "CUDA error: out of memory"
    assert t.finished_at == pytest.approx(started(r, "grow") + 120.0, abs=1e-9)
    for i in range(3):
        assert r.pod(f"steady-{i}").status.phase == "Succeeded"
    (trace,) = oom_traces(r)
    assert trace.object == "Pod default/grow"
    assert trace.result == "out of memory: used 20480 MiB of 20480 MiB (mps: pinned device memory limit per client)"


# --- whole GPUs -----------------------------------------------------------------------------------------

def test_whole_gpus_isolate_and_only_an_oversized_process_fails():
    docs = (POLICY, configmap("timeSlicing"), pool(gpus=4, label=None))
    r = simulate(*docs, *four("40Gi/10m"))
    assert all(p.status.phase == "Succeeded" for p in r.pods())
    assert not oom_traces(r)
    r = simulate(*docs, *four("95Gi/10m"))
    assert r.pod("grow").status.phase == "Failed"
    assert terminated(r, "grow").finished_at == pytest.approx(started(r, "grow") + 487.5, abs=1e-9)
    assert all(r.pod(f"steady-{i}").status.phase == "Succeeded" for i in range(3))
    (trace,) = oom_traces(r)
    assert trace.result == "out of memory: used 81920 MiB of 81920 MiB (whole GPU)"


def test_process_larger_than_gpu_fails_at_start():
    r = simulate(POLICY, configmap("timeSlicing"), pool(gpus=1, label=None), pod("big", mem="90Gi"))
    assert r.pod("big").status.phase == "Failed"
    assert terminated(r, "big").finished_at == pytest.approx(started(r, "big"))


# --- the crossing arithmetic ----------------------------------------------------------------------------

def test_first_excess_is_exact_and_strict():
    F = Fraction
    u = lambda base, peak, ramp, start=0: Usage("u", "ns", "p", "c", F(start), F(base), F(peak), F(ramp))
    assert first_excess([u(10, 30, 20)], F(20), F(0)) == 10
    assert first_excess([u(10, 20, 20)], F(20), F(0)) is None          # reaches the limit, stays: no excess
    assert first_excess([u(10, 10, 0), u(5, 15, 10)], F(20), F(0)) == 5
    assert first_excess([u(25, 25, 0)], F(20), F(3)) == 3                 # already over: now
    # two ramps: slope 2 until t=10 (sum 10 → 30), then slope 1 until t=30 (→ 50)
    two = [u(0, 10, 10), u(10, 40, 30)]
    assert first_excess(two, F(25), F(0)) == F(15, 2)
    assert first_excess(two, F(35), F(0)) == 15
    assert first_excess(two, F(50), F(0)) is None


# --- validation -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("ann, detail", [
    ("gpusim.io/gpu-memory: 10Gi, gpusim.io/gpu-memory-growth: 60Gi", 'Invalid value: "60Gi": must be "<peak>/<duration>", e.g. "60Gi/10m"'),
    ("gpusim.io/gpu-memory: 10Gi, gpusim.io/gpu-memory-growth: 60Gx/10m", 'Invalid value: "60Gx/10m": peak \'60Gx\':'),
    ("gpusim.io/gpu-memory: 10Gi, gpusim.io/gpu-memory-growth: 60Gi/ten", 'Invalid value: "60Gi/ten": duration \'ten\':'),
    ("gpusim.io/gpu-memory: 10Gi, gpusim.io/gpu-memory-growth: 60Gi/0s", 'Invalid value: "60Gi/0s": growth duration must be greater than 0'),
    ("gpusim.io/gpu-memory: 10Gi, gpusim.io/gpu-memory-growth: 5Gi/1m",
     'Invalid value: "5Gi/1m": peak must be greater than or equal to gpusim.io/gpu-memory (10Gi)'),
    ("gpusim.io/gpu-memory-growth: 5Gi/1m",
     'Invalid value: "5Gi/1m": requires the gpusim.io/gpu-memory annotation (the memory it grows from)'),
])
def test_growth_annotation_is_validated(ann, detail):
    text = (pool(label=None) + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: a, annotations: {" + ann + "}}\n"
            "spec: {containers: [{name: c, image: x}]}\n")
    with pytest.raises(InputError) as exc:
        load(texts=[("w.yaml", text)])
    msg = str(exc.value)
    assert "metadata.annotations[gpusim.io/gpu-memory-growth]: " + detail in msg, msg


# --- determinism and the example ------------------------------------------------------------------------

def test_deterministic():
    docs = (POLICY, configmap("timeSlicing"), pool(), *four("40Gi/10m", policy="Always"))
    a, b = simulate(*docs, until=3000), simulate(*docs, until=3000)
    assert to_json(a) == to_json(b)
    assert [(t.time, t.component, t.result) for t in a.trace.records] == \
        [(t.time, t.component, t.result) for t in b.trace.records]
    assert memory_timeline(a, "g-0", 0) == memory_timeline(b, "g-0", 0)


def test_inference_oom_example_golden(capsys):
    assert main(["run", str(EXAMPLES / "inference-oom.yaml")]) == 0
    out, err = capsys.readouterr()
    assert err == "" and out == (EXAMPLES / "inference-oom.out").read_text(), \
        "regenerate with: .venv/bin/gpusim run examples/inference-oom.yaml > examples/inference-oom.out"
