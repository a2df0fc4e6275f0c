"""gpusim.views.plots and widgets: the timeline slider steps through simulated time with phases and events that
agree at every step; the sequence diagram's arrows; the Gantt chart's node incidents (kubelet downtime, devices
not re-registered, Unhealthy GPUs, rejected pods); and the data the chapter 05 figures are drawn from."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.text import Annotation  # noqa: E402

import gpusim as gs  # noqa: E402
from gpusim.views.gang import MIN_MARKER_GAP, permit_timeline, plot_permit_timeline, rejection_marks  # noqa: E402
from gpusim.views.plots import GONE_REASONS, REJECT_REASONS, pod_key  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
TIMELINE_EXAMPLES = ["lifecycle", "queueing", "admission-error", "xid-unhealthy", "inference-oom", "capacity-reclaim",
                     "kueue-fair-sharing", "volcano-queues"]


@pytest.fixture(scope="module")
def runs():
    return {name: gs.run(str(EXAMPLES / f"{name}.yaml")) for name in TIMELINE_EXAMPLES}


@pytest.mark.parametrize("name", TIMELINE_EXAMPLES)
def test_timeline_steps_are_the_instants_at_which_records_change(runs, name):
    r = runs[name]
    steps = gs.timeline_instants(r)
    assert steps[0] == 0.0 and steps[-1] == r.end
    assert all(a < b for a, b in zip(steps, steps[1:]))                       # strictly increasing simulated time
    assert {e.time for e in r.events.log} <= set(steps)                        # every event instant is a step
    assert {h.start for h in r.ctx.holdings} | {h.end for h in r.ctx.holdings if h.end is not None} <= set(steps)
    assert [v for _, v in gs.timeline_options(r)] == steps


@pytest.mark.parametrize("name", TIMELINE_EXAMPLES)
def test_phases_and_events_agree_at_every_step(runs, name):
    """What the slider shows at a step: the events recorded at exactly that instant, and phases that already
    include them (a pod whose Started event is listed is never shown Pending)."""
    r = runs[name]
    life: dict[str, list] = {}
    for e in r.events.log:
        if e.object.kind == "Pod" and (e.reason == "Started" or e.reason in GONE_REASONS):
            life.setdefault(pod_key(e.object.namespace, e.object.name), []).append(e)
    for t in gs.timeline_instants(r):
        st = gs.state_at(r, t)
        assert st["events"] == [e for e in r.events.log if e.time == t]
        for e in st["events"]:
            if e.object.kind != "Pod":
                continue
            pod = pod_key(e.object.namespace, e.object.name)
            assert pod in st["phases"], (t, pod)                                 # a pod with an event is shown
            if e.reason == "Started":
                assert st["phases"][pod] != "Pending", (t, pod)
            if e.reason in REJECT_REASONS:
                assert st["phases"][pod] == "Failed", (t, pod)
        for pod, phase in st["phases"].items():
            before = [e for e in life.get(pod, ()) if e.time <= t]
            if phase == "Pending" and before:                 # started before: only a re-created pod is Pending
                assert before[-1].reason != "Started", (t, pod)
        for pod in set(st["held"].values()):
            assert st["phases"].get(pod) not in (None, "Succeeded", "Deleted"), (t, pod)
        text = gs.format_state_at(r, t)
        assert all(f"{e.reason} {e.object.name}" in text for e in st["events"])


def test_state_at_the_instant_a_container_starts(runs):
    r = runs["lifecycle"]
    st = gs.state_at(r, 1.002)
    assert st["phases"]["train-a"] == "Running"
    assert [e.reason for e in st["events"] if e.object.name == "train-a"] == ["Pulled", "Created", "Started"]
    assert gs.state_at(r, 1.0)["phases"]["train-a"] == "Pending"          # devices held, containers not started


def test_a_preempted_pod_stays_on_the_timeline_until_its_devices_are_free(runs):
    r = runs["capacity-reclaim"]
    [pre] = [e for e in r.events.log if e.reason == "Preempted"]
    assert r.pod(pre.object.name, pre.object.namespace) is None                 # deleted by the end of the run
    key = pod_key(pre.object.namespace, pre.object.name)
    assert gs.state_at(r, pre.time - 1)["phases"][key] == "Running"
    freed = max(h.end for h in r.ctx.holdings if h.pod == pre.object.name)
    assert gs.state_at(r, freed)["phases"][key] == "Deleted"


def test_sequence_diagram_arrows_go_from_caller_to_callee(runs):
    msgs = gs.lifecycle_messages(runs["lifecycle"], "train-a")
    assert [m["time"] for m in msgs] == sorted(m["time"] for m in msgs)
    pairs = {(m["label"], m["src"], m["dst"]) for m in msgs}
    assert ("Register", "nvidia-device-plugin", "kubelet") in pairs
    assert ("POST pods/binding", "default-scheduler", "apiserver") in pairs
    assert ("Allocate", "kubelet", "nvidia-device-plugin") in pairs              # the gRPC call
    assert ("(*ManagerImpl).Allocate", "kubelet", "kubelet") in pairs           # the device manager's own step
    assert ("Event Started", "kubelet", "apiserver") in pairs
    labels = [m["label"] for m in msgs]
    assert labels.index("watch: Pod bound to a100-0") == labels.index("GetPreferredAllocation") - 1
    assert labels.index("POST pods/binding") < labels.index("watch: Pod bound to a100-0")
    ax = gs.lifecycle_chart(runs["lifecycle"], "train-a")
    arrows = [c for c in ax.get_children() if isinstance(c, Annotation)]
    assert len(arrows) == sum(m["src"] != m["dst"] for m in msgs)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["default-scheduler", "apiserver", "kubelet",
                                                            "nvidia-device-plugin"]
    plt.close("all")


def test_rejection_is_red_in_the_sequence_diagram(runs):
    msgs = gs.lifecycle_messages(runs["admission-error"], "bound-during-restart-1")
    failed = [m["label"] for m in msgs if m["failed"]]
    assert "(*Kubelet).rejectPod" in failed and "Event UnexpectedAdmissionError" in failed


def test_kubelet_restart_incidents(runs):
    r = runs["admission-error"]
    inc = gs.node_incidents(r)
    assert inc["kubelet_down"] == [{"node": "a100-0", "start": 60.0, "end": 80.0}]
    [gap] = inc["no_devices"]
    assert gap["start"] == 80.0 and gap["end"] == pytest.approx(85.003)       # 5 s devicePluginRestartDelay
    assert [(x["pod"], x["bound"], x["time"], x["reason"]) for x in inc["rejected"]] == [
        ("bound-during-restart-1", 65.0, 80.0, "UnexpectedAdmissionError"),
        ("bound-during-restart-2", 70.0, 80.0, "UnexpectedAdmissionError")]
    ax = gs.gpu_gantt(r)
    rows = [t.get_text() for t in ax.get_yticklabels()]
    assert rows[-2:] == ["bound-during-restart-1 (rejected)", "bound-during-restart-2 (rejected)"]
    assert {t.get_text() for t in ax.get_legend().get_texts()} >= {"kubelet down", "rejected by the kubelet"}
    plt.close("all")


def test_plugin_restarts_on_the_inotify_event_and_registers_after_the_delay():
    text = (EXAMPLES / "admission-error.yaml").read_text().replace(
        "spec: {seed: 3}", "spec: {seed: 3, timing: {devicePluginRestartDelay: 2s}}")
    r = gs.run(text=text)
    plugin = [(x.time, x.function, x.result) for x in r.trace.records if x.component == "nvidia-device-plugin/a100-0"]
    assert (80.0, "main.start", "inotify: /var/lib/kubelet/device-plugins/kubelet.sock created, restarting.") in plugin
    assert (82.0, "plugin.(*nvidiaDevicePlugin).Start", "Success") in plugin
    assert gs.node_incidents(r)["no_devices"][0]["end"] == pytest.approx(82.003)


def test_xid_incidents(runs):
    r = runs["xid-unhealthy"]
    inc = gs.node_incidents(r)
    [sick] = inc["unhealthy"]
    assert (sick["node"], sick["index"], sick["start"], sick["end"]) == ("t4-0", 1, 30.0, r.end)
    assert "Xid=79" in sick["message"]
    assert [(x["pod"], x["reason"]) for x in inc["rejected"]] == [("infer-b", "UnexpectedAdmissionError")]
    assert inc["kubelet_down"] == [] and inc["no_devices"] == []
    ax = gs.gpu_gantt(r)
    assert any(t.get_text() == " Unhealthy (Xid 79)" for t in ax.texts)
    plt.close("all")


def test_a_quiet_run_has_no_incidents(runs):
    assert gs.node_incidents(runs["lifecycle"]) == {"kubelet_down": [], "no_devices": [], "unhealthy": [],
                                                     "rejected": []}
    ax = gs.gpu_gantt(runs["lifecycle"])
    assert ax.get_legend() is None
    plt.close("all")


def _overlaps(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_permit_rejections_too_dense_to_draw_are_counted():
    base = (EXAMPLES / "gang-partial-start.yaml").read_text()
    r = gs.run(text=gs.with_coscheduling(base, "llm-pretrain", min_member=8, timeout=30,
                                         args={"podGroupRejectPercentage": 100}))
    rows = permit_timeline(r, "llm-pretrain")
    full = rejection_marks(rows, (0, r.end))
    assert full["draw"] == [] and sum(full["count"].values()) == sum(len(x["rejections"]) for x in rows) > 100
    zoom = rejection_marks(rows, (0, 200))
    assert zoom["count"] == {} and zoom["draw"]
    for i in range(len(rows)):
        ts = sorted(t for j, t in zoom["draw"] if j == i)
        assert all(b - a >= MIN_MARKER_GAP * 200 for a, b in zip(ts, ts[1:]))
    ax = plot_permit_timeline(r, "llm-pretrain")
    ax.figure.canvas.draw()
    legend = ax.get_legend().get_window_extent()
    bars = [p.get_window_extent() for p in ax.patches]
    assert not any(_overlaps(legend, b) for b in bars)                       # the legend covers no bar
    plt.close("all")


def test_queue_shares_deserved_band_and_allocated_line_are_both_drawn():
    r = gs.run(str(EXAMPLES / "volcano-queues.yaml"))
    ax = gs.plot_queue_shares(r)
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    for q in ("team-a", "team-b"):
        band, line = lines[f"{q} deserved"], lines[f"{q} allocated"]
        assert band.get_linewidth() > 3 * line.get_linewidth() and band.get_zorder() < line.get_zorder()
        assert band.get_color() == line.get_color()
        rows = [x for x in gs.queue_shares(r) if x["queue"] == q]
        assert list(band.get_ydata()) == [x["deserved"] for x in rows]
        assert list(line.get_ydata()) == [x["allocated"] for x in rows]
    plt.close("all")


def test_cluster_queue_usage_names_equal_quotas_in_one_band():
    r = gs.run(str(EXAMPLES / "kueue-fair-sharing.yaml"))
    ax = gs.plot_cluster_queue_usage(r, "nvidia.com/gpu")
    labels = [ln.get_label() for ln in ax.get_lines()]
    assert "nominalQuota 8: team-a, team-b" in labels
    assert sum(lbl.endswith(" usage") for lbl in labels) == 2
    plt.close("all")


def test_a_widget_read_without_a_kernel_says_so():
    """Where a notebook is read without a kernel (GitHub, the static site), a widget's text/plain is a sentence
    pointing at its static twin, not the widget's Python repr."""
    ipywidgets = pytest.importorskip("ipywidgets")
    from gpusim.views.display import STATIC_TWIN, Shown
    data = Shown(ipywidgets.VBox([ipywidgets.IntSlider(3)]))._repr_mimebundle_()
    assert data["text/plain"] == STATIC_TWIN
    assert "application/vnd.jupyter.widget-view+json" in data
