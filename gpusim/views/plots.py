"""Matplotlib figures of a run (read-only views of the records): a per-GPU Gantt timeline with the node
incidents that explain it (kubelet downtime, devices not yet re-registered, Unhealthy GPUs, pods the kubelet
rejected), a sequence diagram of one pod's journey, and the state of the cluster at one instant (what the
chapter 04 timeline slider steps through)."""
from __future__ import annotations

from typing import Optional

import matplotlib.pyplot as plt

# Lanes of the sequence diagram, left to right: who calls whom on a GPU pod's way.
LANES = ["default-scheduler", "apiserver", "kubelet", "nvidia-device-plugin"]

FN_KUBELET_RUN = "kubelet.(*Kubelet).Run"
FN_REGISTER = "devicemanager.(*server).Register"
FN_DEVICE_UPDATE = "devicemanager.(*ManagerImpl).genericDeviceUpdateCallback"
FN_PLUGIN_START = "plugin.(*nvidiaDevicePlugin).Start"
FN_PLUGIN_STOP = "plugin.(*nvidiaDevicePlugin).Stop"
FN_CHECK_HEALTH = "rm.(*nvmlResourceManager).checkHealth"
FN_REJECT = "kubelet.(*Kubelet).rejectPod"
FN_BIND = "defaultbinder.(*DefaultBinder).Bind"
UNHEALTHY_MARK = "marking device as unhealthy"
# Reasons with which the kubelet rejects a pod at admission (pkg/kubelet/lifecycle, cm/admission).
REJECT_REASONS = ("UnexpectedAdmissionError", "TopologyAffinityError")


def _pod_color(names: list[str]) -> dict[str, tuple]:
    cmap = plt.get_cmap("tab20")
    return {n: cmap(i % 20) for i, n in enumerate(sorted(set(names)))}


def _node_of(component: str) -> str:
    return component.split("/", 1)[1] if "/" in component else ""


def _devices(result, node: Optional[str]) -> list[tuple[str, int, str]]:
    out = []
    for kl_name, kl in sorted(result.kubelets.items()):
        if (node is None or kl_name == node) and kl.plugin is not None:
            out += [(kl_name, d.index, d.id) for d in kl.plugin.devices]
    return out


def node_incidents(result, node: Optional[str] = None) -> dict[str, list[dict]]:
    """What went wrong on the nodes, from the trace: ``kubelet_down`` [{node, start, end}] (the kubelet
    process stopped, until it runs again), ``no_devices`` [{node, start, end}] (the kubelet runs but its device
    manager has no healthy device: from the kubelet's restart, or a plugin stop, until the plugin's next
    ListAndWatch update with healthy devices), ``unhealthy`` [{node, device, index, start, end, message}] (a critical XID, until the plugin
    restarts: upstream keeps the mark until then) and ``rejected`` [{namespace, pod, node, bound, time, reason,
    message}] (pods the kubelet refused at admission)."""
    end = result.end
    down: list[dict] = []
    gap: list[dict] = []
    sick: list[dict] = []
    index = {dev_id: (n, i) for n, i, dev_id in _devices(result, None)}
    open_down: dict[str, float] = {}
    open_gap: dict[str, float] = {}
    open_sick: dict[str, dict] = {}
    bound: dict[str, float] = {}
    rejected: list[dict] = []
    for r in result.trace.records:
        n = _node_of(r.component)
        if r.function == FN_KUBELET_RUN:
            if r.result != "Success" and n not in open_down:
                open_down[n] = r.time
                open_gap.pop(n, None)            # while the kubelet is down there is no device manager at all
            elif r.result == "Success" and n in open_down:
                down.append({"node": n, "start": open_down.pop(n), "end": r.time})
                open_gap[n] = r.time             # back up: the checkpoint's devices are not healthy yet
        elif r.function == FN_PLUGIN_STOP and n not in open_down:
            open_gap.setdefault(n, r.time)
        elif r.function == FN_DEVICE_UPDATE and n in open_gap and r.details.get("healthy", 0) > 0:
            gap.append({"node": n, "start": open_gap.pop(n), "end": r.time})
        elif r.function == FN_CHECK_HEALTH and UNHEALTHY_MARK in r.result:
            dev = r.object.split(" ", 1)[1]
            if dev not in open_sick and dev in index:
                open_sick[dev] = {"node": index[dev][0], "device": dev, "index": index[dev][1], "start": r.time,
                                  "message": r.result}
        elif r.function == FN_PLUGIN_START:
            for dev in [d for d, s in open_sick.items() if s["node"] == n]:
                sick.append({**open_sick.pop(dev), "end": r.time})
        elif r.function == FN_BIND and r.result == "Success":
            bound[r.object] = r.time
        elif r.function == FN_REJECT:
            ns, name = r.object.split(" ", 1)[1].split("/", 1)
            reason, _, message = r.result.partition(": ")
            rejected.append({"namespace": ns, "pod": name, "node": n, "bound": bound.get(r.object, r.time),
                             "time": r.time, "reason": reason, "message": message})
    down += [{"node": n, "start": t, "end": end} for n, t in open_down.items()]
    gap += [{"node": n, "start": t, "end": end} for n, t in open_gap.items()]
    sick += [{**s, "end": end} for s in open_sick.values()]
    keep = (lambda x: node is None or x["node"] == node)
    return {"kubelet_down": [x for x in down if keep(x)], "no_devices": [x for x in gap if keep(x)],
            "unhealthy": [x for x in sick if keep(x)], "rejected": [x for x in rejected if keep(x)]}


def gpu_gantt(result, node: Optional[str] = None, ax=None, until: Optional[float] = None, incidents: bool = True):
    """One row per GPU (node/index), one bar per pod holding it. With ``incidents`` (see
    :func:`node_incidents`): grey bands while a kubelet is down, hatched bands while its device manager has
    no healthy devices, a red hatched bar over an Unhealthy GPU, and one extra row per pod the kubelet rejected
    (bound → rejected, with the reason)."""
    holds = [h for h in result.ctx.holdings if node is None or h.node == node]
    devices = _devices(result, node)
    inc = node_incidents(result, node) if incidents else {"kubelet_down": [], "no_devices": [], "unhealthy": [],
                                                          "rejected": []}
    rejected = inc["rejected"]
    end = until if until is not None else result.end
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 0.35 * max(len(devices) + len(rejected), 2) + 1.4))
    colors = _pod_color([h.pod for h in holds])
    row = {d[2]: i for i, d in enumerate(devices)}
    for kl_name, kl in result.kubelets.items():   # a MIG device is drawn on its GPU's row
        if kl.plugin is not None:
            for m in kl.plugin.mig_devices:
                key = next((d[2] for d in devices if d[0] == kl_name and d[1] == m.index), None)
                if key is not None:
                    row[m.id] = row[key]
    for h in holds:
        dev = h.device.split("::", 1)[0]   # a time-sliced replica is drawn on its GPU's row
        if dev not in row:
            continue
        stop = h.end if h.end is not None else end
        ax.barh(row[dev], stop - h.start, left=h.start, color=colors[h.pod], edgecolor="black", linewidth=0.4)
        ax.text(h.start + (stop - h.start) / 2, row[dev], h.pod, ha="center", va="center", fontsize=7)
    labels = [f"{n}/gpu{i}" for n, i, _ in devices]
    handles = []
    for k, x in enumerate(inc["kubelet_down"]):
        handles.append(ax.axvspan(x["start"], x["end"], color="0.45", alpha=0.35, zorder=3, linewidth=0,
                                  label="kubelet down" if k == 0 else None))
    for k, x in enumerate(inc["no_devices"]):
        handles.append(ax.axvspan(x["start"], x["end"], facecolor="none", edgecolor="0.3", hatch="..", zorder=3,
                                  linewidth=0, label="no healthy devices (plugin not registered)" if k == 0 else None))
    for k, x in enumerate(inc["unhealthy"]):
        dev_row = row.get(x["device"])
        if dev_row is not None:
            handles.append(ax.barh(dev_row, x["end"] - x["start"], left=x["start"], height=0.8, facecolor="none",
                                   edgecolor="tab:red", hatch="//", linewidth=1.0,
                                   label="Unhealthy (critical XID)" if k == 0 else None))
            xid = x["message"].split("Xid=", 1)[1].split(" ", 1)[0] if "Xid=" in x["message"] else "?"
            ax.text(x["start"], dev_row - 0.42, f" Unhealthy (Xid {xid})", color="tab:red", fontsize=7, va="bottom")
    for k, x in enumerate(rejected):
        y = len(labels)
        labels.append(f"{x['pod']} (rejected)")
        ax.plot([x["bound"], x["time"]], [y, y], color="tab:red", linewidth=2,
                label="bound, waiting for admission" if k == 0 else None)
        handles.append(ax.plot([x["time"]], [y], marker="X", color="tab:red", markersize=9, linestyle="none",
                               label="rejected by the kubelet" if k == 0 else None)[0])
        ax.text(x["time"], y, f"  {x['reason']}", va="center", fontsize=7, color="tab:red")
    ax.set_yticks(range(len(labels)), labels)
    ax.set_ylim(len(labels) - 0.5, -0.5)
    ax.set_xlim(0, max(end, 1))
    ax.set_xlabel("simulated time (s)")
    ax.set_title("GPU occupancy (which pod held which device)")
    if any(h is not None for h in handles):
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return ax


# --- the sequence diagram of one pod -------------------------------------------------------------------------
# Calls between components, by the upstream function the trace names: (caller lane, callee lane). A function
# not listed is a step inside its own component (drawn as a dot on its lifeline).
_CALLS = {
    "v1beta1.DevicePlugin/GetDevicePluginOptions": ("kubelet", "nvidia-device-plugin"),
    "v1beta1.DevicePlugin/ListAndWatch": ("kubelet", "nvidia-device-plugin"),
    "v1beta1.DevicePlugin/GetPreferredAllocation": ("kubelet", "nvidia-device-plugin"),
    "v1beta1.DevicePlugin/Allocate": ("kubelet", "nvidia-device-plugin"),
    "v1beta1.DevicePlugin/PreStartContainer": ("kubelet", "nvidia-device-plugin"),
    FN_REGISTER: ("nvidia-device-plugin", "kubelet"),
    FN_DEVICE_UPDATE: ("nvidia-device-plugin", "kubelet"),     # a ListAndWatch response reaches the kubelet
    "kubelet.(*Kubelet).syncNodeStatus": ("kubelet", "apiserver"),
    FN_BIND: ("default-scheduler", "apiserver"),
}
_LABELS = {FN_DEVICE_UPDATE: "ListAndWatchResponse", "kubelet.(*Kubelet).syncNodeStatus": "PATCH node status",
           FN_BIND: "POST pods/binding"}


def _short(function: str, step: bool) -> str:
    """An RPC by its method name (``Allocate``); a step inside a component with its receiver
    (``(*ManagerImpl).Allocate``), so the two do not read alike."""
    if not step:
        return function.split(".")[-1].split("/")[-1]
    return function.split(".", 1)[-1] if ".(" in function else function.split(".")[-1]


def lifecycle_messages(result, pod: str, namespace: str = "default") -> list[dict]:
    """The rows of :func:`lifecycle_chart`, in time order: ``{time, src, dst, label, failed}``, ``src == dst``
    for a step inside one component. The node's set-up at t=0 (plugin registration) comes first; the kubelet
    learns of the bound pod from its watch on the apiserver (drawn before its first step for the pod); every
    Kubernetes Event is a write to the apiserver by the component that records it."""
    ref = f"Pod {namespace}/{pod}"
    p = result.pod(pod, namespace)
    node = p.spec.node_name if p is not None else None
    out = []
    first_kubelet = None
    for r in result.trace.records:
        lane = r.component.split("/")[0]
        if lane not in LANES:
            continue
        if r.object == ref or (node and r.object == f"Node {node}" and r.time == 0):
            src, dst = _CALLS.get(r.function, (lane, lane))
            if r.object == ref and lane == "kubelet" and first_kubelet is None:
                first_kubelet = len(out)
                out.append({"time": r.time, "src": "apiserver", "dst": "kubelet",
                            "label": f"watch: Pod bound to {node}", "failed": False})
            out.append({"time": r.time, "src": src, "dst": dst, "label": _LABELS.get(r.function, _short(r.function, src == dst)),
                        "failed": _failed(r.result)})
    for e in result.events.log:
        if e.object.kind == "Pod" and e.object.name == pod and e.object.namespace == namespace:
            lane = "default-scheduler" if e.source == "default-scheduler" else "kubelet"
            out.append({"time": e.time, "src": lane, "dst": "apiserver", "label": f"Event {e.reason}",
                        "failed": e.type == "Warning"})
    out.sort(key=lambda m: m["time"])   # stable: records keep their order within an instant
    return out


FAILURE_WORDS = ("Error", "error", "failed", "rejected", "nodes are available", "Insufficient", "out of memory")


def _failed(result: str) -> bool:
    """A trace result that reports a failure (an error message, no feasible node), not a plain outcome such as
    "Success", "1 feasible", "Succeeded" or a chosen node."""
    if result.endswith(" feasible"):          # findNodesThatFitPod: "N feasible"
        return result.startswith("0 ")
    return any(w in result for w in FAILURE_WORDS)


def lifecycle_chart(result, pod: str, namespace: str = "default", ax=None):
    """Sequence diagram of one pod's journey: one vertical lifeline per component (x), one row per message in
    time order (y, downwards, the simulated time on the left); an arrow goes from caller to callee, a dot is a
    step inside one component; red marks a failure."""
    msgs = lifecycle_messages(result, pod, namespace)
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 0.3 * len(msgs) + 1.6))
    xs = {lane: i for i, lane in enumerate(LANES)}
    for lane, x in xs.items():
        ax.axvline(x, color="grey", linewidth=0.8, linestyle="--", zorder=0)
    for i, m in enumerate(msgs):
        color = "tab:red" if m["failed"] else "tab:blue"
        x0, x1 = xs[m["src"]], xs[m["dst"]]
        if x0 == x1:
            ax.plot(x0, i, "o", color=color, markersize=5)
            ax.text(x0 + 0.06, i, m["label"], va="center", fontsize=7, color=color)
        else:
            ax.annotate("", xy=(x1, i), xytext=(x0, i),
                        arrowprops={"arrowstyle": "-|>", "color": color, "linewidth": 1.1, "shrinkA": 0, "shrinkB": 0})
            ax.text((x0 + x1) / 2, i - 0.12, m["label"], ha="center", va="bottom", fontsize=7, color=color)
    ax.set_xticks(range(len(LANES)), LANES)
    ax.xaxis.tick_top()
    ax.set_xlim(-0.5, len(LANES) - 0.3)
    ax.set_yticks(range(len(msgs)), [f"t={m['time']:.3f}s" for m in msgs], fontsize=7)
    ax.set_ylim(len(msgs) - 0.5, -0.8)
    ax.set_title(f"Sequence of pod {namespace}/{pod} (time flows downwards)", pad=22)
    ax.grid(False)
    return ax


# --- the state at one instant (the timeline slider) ---------------------------------------------------------
def timeline_instants(result) -> list[float]:
    """The instants at which the records change, ascending: 0, every event's time, every device hold's start and
    end, and the end of the run (the steps of :func:`gpusim.views.widgets.timeline_slider`)."""
    ts = {0.0, float(result.end)}
    ts |= {float(e.time) for e in result.events.log}
    for h in result.ctx.holdings:
        ts.add(float(h.start))
        if h.end is not None:
            ts.add(float(h.end))
    return sorted(t for t in ts if t <= result.end)


GONE_REASONS = ("Killing", "Preempted", "Evict")   # events after which a deleted pod is on its way out


def _phase(events: list, gone: bool) -> str:
    phase = "Pending"
    for e in events:
        if e.reason == "Started":
            phase = "Running"
        elif e.reason in REJECT_REASONS or e.reason.startswith("OutOf"):
            phase = "Failed"
        elif gone and e.reason in GONE_REASONS:
            phase = "Terminating"
    return phase


def pod_key(namespace: str, name: str) -> str:
    """How the timeline names a pod: its name in ``default``, ``namespace/name`` elsewhere."""
    return name if namespace == "default" else f"{namespace}/{name}"


def state_at(result, time: float) -> dict:
    """Pod phases and device occupancy at an instant, from the records up to and including ``time``:
    ``phases`` {pod: Pending | Running | Succeeded | Failed} for the pods created by then (see :func:`pod_key`),
    ``held`` {device: pod}, and ``events``, the events recorded at exactly ``time``. A pod deleted before the end
    (preempted, evicted, its Job suspended) is known from its events and device holdings only: it appears at its
    first event, is Terminating after a Killing / Preempted / Evict event and Deleted once its devices are free."""
    by_pod: dict[tuple[str, str], list] = {}
    for e in result.events.log:
        if e.object.kind == "Pod":
            by_pod.setdefault((e.object.namespace, e.object.name), []).append(e)
    stored = {(p.metadata.namespace, p.metadata.name): p for p in result.pods()}
    holds: dict[tuple[str, str], list] = {}
    for h in result.ctx.holdings:
        holds.setdefault((h.namespace, h.pod), []).append(h)
    phases = {}
    for key in sorted(set(stored) | set(by_pod)):
        p = stored.get(key)
        created = p.metadata.creation_timestamp if p is not None else None
        if p is not None and created is not None and created <= time:
            # the pod in the store: its own events (a controller may have re-created a pod of the same name)
            events = [e for e in by_pod.get(key, ()) if created <= e.time <= time]
            phase = _phase(events, gone=False)
            for cs in p.status.container_statuses:
                term = cs.state.terminated
                if (term is not None and term.finished_at is not None and term.finished_at <= time
                        and p.status.phase in ("Succeeded", "Failed")):
                    phase = p.status.phase
        else:
            # a pod deleted before ``time`` or before the end (an earlier one of the same name, if re-created)
            events = [e for e in by_pod.get(key, ()) if e.time <= time and (created is None or e.time < created)]
            if not events:
                continue
            phase = _phase(events, gone=True)
            mine = [h for h in holds.get(key, ()) if h.start <= time and (created is None or h.start < created)]
            if mine and all(h.end is not None and h.end <= time for h in mine):
                phase = "Deleted"
        phases[pod_key(*key)] = phase
    held = {h.device: pod_key(h.namespace, h.pod) for h in result.ctx.holdings
            if h.start <= time and (h.end is None or h.end > time)}
    return {"phases": phases, "held": held, "events": [e for e in result.events.log if e.time == time]}


def format_state_at(result, time: float) -> str:
    """The text under the slider at ``time``: each pod's phase, then the events recorded at that instant."""
    st = state_at(result, time)
    lines = [f"t={time:g}s"] + [f"{name:<28} {phase}" for name, phase in sorted(st["phases"].items())]
    lines += [f"  [{e.type}] {e.reason} {e.object.name}: {e.message}" for e in st["events"]]
    return "\n".join(lines)


def plot_state_at(result, time: float, node: Optional[str] = None, ax=None):
    """The Gantt chart with a red line at ``time`` (the figure of the timeline slider)."""
    if ax is None:
        devices = len(_devices(result, node)) + len(node_incidents(result, node)["rejected"])
        _, ax = plt.subplots(figsize=(9, 0.35 * max(devices, 2) + 1.4))
    gpu_gantt(result, node=node, ax=ax, until=result.end)
    ax.axvline(time, color="red", linewidth=1.5)
    ax.set_title(f"GPU occupancy at t={time:g}s (red line)")
    return ax
