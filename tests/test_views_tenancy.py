"""gpusim.views.tenancy and the Permit timeline of gpusim.views.gang: the data the plots draw."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

import gpusim as gs  # noqa: E402
from gpusim.views.gang import permit_timeline, plot_permit_timeline  # noqa: E402
from gpusim.views.tenancy import job_gantt_data, plot_job_gantt, plot_tenant_share, share_steps  # noqa: E402

TWO_TEAMS = """apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: a100}
spec: {count: 1, gpu: {model: A100-SXM4-80GB, count: 4}}
---
apiVersion: v1
kind: Namespace
metadata: {name: a}
---
apiVersion: v1
kind: Namespace
metadata: {name: b}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: a, annotations: {gpusim.io/duration: 10m}}
spec:
  restartPolicy: Never
  containers: [{name: main, image: cuda, resources: {limits: {nvidia.com/gpu: 3}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: q, namespace: b, annotations: {gpusim.io/duration: 10m, gpusim.io/submit-at: 5m}}
spec:
  restartPolicy: Never
  containers: [{name: main, image: cuda, resources: {limits: {nvidia.com/gpu: 2}}}]
"""


def test_share_steps_stack_to_the_held_fraction():
    r = gs.run(text=TWO_TEAMS)
    xs, ys = share_steps(r)
    assert sorted(ys) == ["a", "b"] and len(xs) == len(ys["a"]) == len(ys["b"])
    assert xs == sorted(xs) and xs[-1] == r.end

    def at(t):
        i = max(k for k, x in enumerate(xs) if x <= t)
        return ys["a"][i], ys["b"][i]
    assert at(60) == (0.75, 0.0)                 # a holds 3 of 4 GPUs
    assert at(400) == (0.75, 0.0)                # q (2 GPUs, created at 300 s) waits for p
    assert at(700) == (0.0, 0.5)
    b_from = min(x for x, v in zip(xs, ys["b"]) if v > 0)
    a_until = min(x for x, v in zip(xs, ys["a"]) if x > 60 and v == 0)
    assert b_from >= a_until == pytest.approx(601, abs=1)
    counts = share_steps(r, normalize=False)[1]
    assert max(counts["a"]) == 3 and max(counts["b"]) == 2
    ax = plot_tenant_share(r)
    assert ax.get_title() == "GPU share per tenant over time" and ax.get_ylabel() == "share of cluster GPUs"
    plt.close("all")


def test_job_gantt_shades_the_partial_start_as_wasted():
    """gang-partial-start: 7 workers hold GPUs for ≈1h waiting for the 8th, then 1000 × 1.8 s run."""
    r = gs.run("examples/gang-partial-start.yaml")
    rows = {row["name"]: row for row in job_gantt_data(r)}
    kinds = [(k, round(t1 - t0)) for t0, t1, k in rows["default/llm-pretrain"]["segments"]]
    assert [k for k, _ in kinds] == ["waiting", "wasted", "running"]
    assert dict(kinds)["running"] == 1800 and dict(kinds)["wasted"] == pytest.approx(3591, abs=2)
    assert [k for _, _, k in rows["default/notebook"]["segments"]] == ["waiting", "running"]   # one pod: no waste
    ax = plot_job_gantt(r)
    assert ax.get_title() == "Jobs: waiting, wasted (partial start) and running"
    assert len(ax.patches) == 5
    plt.close("all")


def test_job_gantt_without_gang_waste_for_a_job_that_starts_together():
    r = gs.run(text=TWO_TEAMS.replace("count: 4}", "count: 8}"))
    rows = {row["name"]: row for row in job_gantt_data(r)}
    assert [k for _, _, k in rows["b/q"]["segments"]] == ["waiting", "running"]
    assert rows["b/q"]["tenant"] == "b"


BLOCKER = """---
apiVersion: v1
kind: Pod
metadata: {name: blocker, annotations: {gpusim.io/duration: 30s}}
spec:
  restartPolicy: Never
  containers: [{name: main, image: cuda, resources: {limits: {nvidia.com/gpu: 1}}}]
"""


def cosched(timeout):
    return f"""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint: {{enabled: [{{name: Coscheduling}}]}}
    queueSort: {{enabled: [{{name: Coscheduling}}], disabled: [{{name: "*"}}]}}
  pluginConfig:
  - name: Coscheduling
    args: {{podGroupRejectPercentage: 100}}
---
apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {{name: a100}}
spec: {{count: 1, gpu: {{model: A100-SXM4-80GB, count: 2}}}}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {{name: g}}
spec: {{minMember: 2, scheduleTimeoutSeconds: {timeout}}}
""" + "".join(f"""---
apiVersion: v1
kind: Pod
metadata: {{name: w{i}, labels: {{scheduling.x-k8s.io/pod-group: g}}, annotations: {{gpusim.io/duration: 10m,
           gpusim.io/submit-at: 1s}}}}
spec:
  restartPolicy: Never
  containers: [{{name: main, image: cuda, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}]
""" for i in range(2)) + BLOCKER


def states(row):
    return [s[2] for s in row["segments"]]


def test_permit_timeline_of_a_coscheduling_gang():
    """A blocker holds one of two GPUs until ≈31 s: w0 is assumed and waits in Permit, w1 does not fit;
    when the blocker ends w1 is assumed, the quorum is reached and both bind at once."""
    r = gs.run(text=cosched(60))
    rows = {row["pod"]: row for row in permit_timeline(r, "g")}
    assert states(rows["w0"]) == ["permit-wait", "bound", "running"]
    assert states(rows["w1"]) == ["pending", "bound", "running"]
    w0, w1 = rows["w0"]["segments"], rows["w1"]["segments"]
    assert w0[0][0] == 1.0 and w0[0][1] == pytest.approx(31.0, abs=0.1)
    assert w0[1][0] == w1[1][0] == w0[0][1]                  # bound together
    assert rows["w0"]["rejections"] == [] and rows["w1"]["rejections"] == []
    ax = plot_permit_timeline(r, "g")
    assert ax.get_title() == "Gang g: pods through Permit"
    plt.close("all")


def test_permit_timeline_shows_a_timeout_and_the_return_to_pending():
    r = gs.run(text=cosched(20))
    w0 = {row["pod"]: row for row in permit_timeline(r, "g")}["w0"]
    assert w0["segments"][:2] == [(1.0, 21.0, "permit-wait"), (21.0, w0["segments"][1][1], "pending")]
    assert w0["rejections"][0] == (21.0, "rejected due to timeout after waiting 20s at plugin Coscheduling")
    assert states(w0)[-1] == "running"


def test_permit_timeline_of_an_alpha_native_gang():
    text = """apiVersion: gpusim.io/v1alpha1
kind: Simulation
metadata: {name: s}
spec: {kubernetesVersion: "1.35", featureGates: {GenericWorkload: true, GangScheduling: true}}
---
apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: a100}
spec: {count: 1, gpu: {model: A100-SXM4-80GB, count: 2}}
---
apiVersion: scheduling.k8s.io/v1alpha1
kind: Workload
metadata: {name: train}
spec:
  podGroups: [{name: workers, policy: {gang: {minCount: 2}}}]
""" + "".join(f"""---
apiVersion: v1
kind: Pod
metadata: {{name: w{i}, annotations: {{gpusim.io/duration: 10m, gpusim.io/submit-at: 1s}}}}
spec:
  restartPolicy: Never
  workloadRef: {{name: train, podGroup: workers}}
  containers: [{{name: main, image: cuda, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}]
""" for i in range(2)) + BLOCKER
    r = gs.run(text=text)
    rows = {row["pod"]: row for row in permit_timeline(r, workload="train")}
    assert sorted(rows) == ["w0", "w1"]
    waited = [p for p, row in rows.items() if states(row) == ["permit-wait", "bound", "running"]]
    assert len(waited) == 1
    seg = rows[waited[0]]["segments"][0]
    assert seg[0] == 1.0 and seg[1] == pytest.approx(31.0, abs=0.1)
