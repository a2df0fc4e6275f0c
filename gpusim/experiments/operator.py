"""Chapter 05.6 (the NVIDIA device plugin and the GPU Operator): the scenarios it runs, and views over a
finished run of a GPU node that joins with NodePool ``spec.joinAt`` and is brought up by the operator.

- :func:`bring_up_scenario` — one H100 node joining at ``joinAt`` under a ClusterPolicy, a training pod
  waiting for it, and optionally one bring-up fault of the library (``Fault`` ``spec.type``);
- :func:`bring_up_timeline` — per operand (in the reconcile order of NVIDIA/gpu-operator
  controllers/state_manager.go ``addState``) when its pod was created, when its init containers were done
  (pod condition ``Initialized``) and when it became ``Ready``, read from the pod's conditions and the
  kubelet's ``Started container`` events;
- :func:`operand_pods_at` — ``kubectl get pods -n gpu-operator`` for that node as it would have read at an
  instant (STATUS ``Init:k/n``, ``Init:CrashLoopBackOff``, ``CrashLoopBackOff``, ``Running``; the kubelet's
  printer, pkg/printers/internalversion ``printPod``), rebuilt from those records;
- :func:`milestones` — node joined, driver loaded, ``toolkit-ready``, the device plugin's ``Register``, the
  validator's ``plugin-ready``, the first workload start, ClusterPolicy ``ready``;
- :func:`plugin_rpcs` — the Device Plugin API calls between the kubelet and the plugin (Register →
  GetDevicePluginOptions → ListAndWatch → GetPreferredAllocation → Allocate), from the trace;
- :func:`plot_bring_up` and :func:`bring_up_widget` — the timeline as bars, and a fault picker with a time
  slider over it (the plot is the widget's static twin).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from ..api.nvidia_operands import BY_DAEMONSET, NAMESPACE, OPERANDS, is_operand_pod
from ..cluster.simulation import run
from ..views.display import show_widget

# faults that hit a node's bring-up (Fault spec.type; "none" = a healthy bring-up)
BRING_UP_FAULTS = ("none", "DriverFailure", "ToolkitFailure", "DevicePluginCrash")
FAULT_EXTRA = {"DevicePluginCrash": ", downtime: 1h"}     # a plugin that keeps crashing during the bring-up
NODE = "h100-0"
BACKOFF_PREFIX = "Back-off restarting failed container "   # pkg/kubelet/kuberuntime: the BackOff event
# k8s.io/kubelet pkg/apis/deviceplugin/v1beta1 api.proto services, and the kubelet side of each exchange
PLUGIN_RPCS = ("devicemanager.(*server).Register", "v1beta1.DevicePlugin/GetDevicePluginOptions",
               "v1beta1.DevicePlugin/ListAndWatch", "devicemanager.(*ManagerImpl).genericDeviceUpdateCallback",
               "v1beta1.DevicePlugin/GetPreferredAllocation", "v1beta1.DevicePlugin/Allocate",
               "devicemanager.(*ManagerImpl).Allocate", "kubelet.(*Kubelet).canAdmitPod")


def bring_up_scenario(fault: str = "none", join_at: str = "5m", until: str = "15m", model: str = "H100-SXM5-80GB",
                      gpus: int = 8) -> str:
    """One GPU node (``h100-0``) joining at ``join_at`` under a ClusterPolicy with the operator's driver, a
    pod ``train`` asking for all its GPUs from t=0, and ``fault`` (one of :data:`BRING_UP_FAULTS`) on the node."""
    if fault not in BRING_UP_FAULTS:
        raise ValueError(f"fault must be one of {', '.join(BRING_UP_FAULTS)}, not {fault!r}")
    text = f"""apiVersion: gpusim.io/v1alpha1
kind: Simulation
metadata: {{name: bring-up}}
spec: {{until: {until}}}
---
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {{name: cluster-policy}}
spec:
  driver: {{enabled: true, version: "580.95.05"}}
---
apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {{name: h100}}
spec:
  count: 1
  joinAt: {join_at}
  gpu: {{model: {model}, count: {gpus}}}
---
apiVersion: v1
kind: Pod
metadata: {{name: train, annotations: {{gpusim.io/duration: 1h}}}}
spec:
  restartPolicy: Never
  containers:
  - {{name: trainer, image: nvcr.io/nvidia/pytorch:25.01-py3, resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}}}
"""
    if fault != "none":
        text += f"""---
apiVersion: gpusim.io/v1alpha1
kind: Fault
metadata: {{name: bring-up-fault}}
spec: {{at: 0s, type: {fault}, node: {NODE}{FAULT_EXTRA.get(fault, '')}}}
"""
    return text


def run_faults(faults: Iterable[str] = BRING_UP_FAULTS, **kw: Any) -> dict[str, Any]:
    """fault → the finished run of :func:`bring_up_scenario` with it."""
    return {f: run(text=bring_up_scenario(f, **kw)) for f in faults}


@dataclass
class OperandTimeline:
    """One operand pod on the node: when it was created, initialised and ready (None: never)."""

    daemonset: str
    pod: str
    created: float
    initialized: Optional[float]
    ready: Optional[float]
    init_containers: tuple[str, ...]
    containers: int
    started: dict[str, list[float]] = field(default_factory=dict)   # container → its "Started container" events
    backoff: dict[str, list[float]] = field(default_factory=dict)   # container → its "Back-off restarting" events

    def status_at(self, t: float) -> Optional[tuple[str, str]]:
        """(READY, STATUS) as ``kubectl get pods`` printed them at ``t``; None before the pod existed."""
        if t < self.created:
            return None
        names = [*self.init_containers, "<main>"]
        done = sum(1 for nxt in names[1:] if self._started_by(nxt, t))
        if self.initialized is None or t < self.initialized:
            k = min(done, len(self.init_containers))
            current = self.init_containers[k] if k < len(self.init_containers) else None
            looping = current is not None and self._backing_off(current, t)
            return f"0/{self.containers}", "Init:CrashLoopBackOff" if looping else f"Init:{k}/{len(self.init_containers)}"
        if self.ready is None or t < self.ready:
            looping = any(self._backing_off(c, t) for c in self.backoff if c not in self.init_containers)
            return f"0/{self.containers}", "CrashLoopBackOff" if looping else "Running"
        return f"{self.containers}/{self.containers}", "Running"

    def _started_by(self, name: str, t: float) -> bool:
        if name == "<main>":
            return any(v[0] <= t for c, v in self.started.items() if c not in self.init_containers)
        return name in self.started and self.started[name][0] <= t

    def _backing_off(self, name: str, t: float) -> bool:
        """The kubelet's back-off for container ``name`` runs at ``t``: a BackOff event after its last start."""
        last_b = max((b for b in self.backoff.get(name, ()) if b <= t), default=None)
        last_s = max((x for x in self.started.get(name, ()) if x <= t), default=float("-inf"))
        return last_b is not None and last_b >= last_s


def _condition_time(pod: Any, kind: str) -> Optional[float]:
    c = next((c for c in pod.status.conditions if c.type == kind), None)
    return c.last_transition_time if c is not None and c.status == "True" else None


def bring_up_timeline(result: Any, node: str = NODE) -> list[OperandTimeline]:
    """The operand pods on ``node`` in reconcile order (the newest pod of each DaemonSet)."""
    pods: dict[str, Any] = {}
    for p in result.api.list("Pod", is_operand_pod):
        ds = p.metadata.labels.get("app")
        if p.spec.node_name == node and ds in BY_DAEMONSET:
            if ds not in pods or (p.metadata.creation_timestamp or 0) > (pods[ds].metadata.creation_timestamp or 0):
                pods[ds] = p
    started: dict[str, dict[str, list[float]]] = {}
    backoff: dict[str, dict[str, list[float]]] = {}
    for o in result.events.log:
        if o.object.namespace != NAMESPACE:
            continue
        if o.reason == "Started" and o.message.startswith("Started container "):
            started.setdefault(o.object.name, {}).setdefault(o.message.split()[-1], []).append(o.time)
        elif o.reason == "BackOff" and o.message.startswith(BACKOFF_PREFIX):
            name = o.message[len(BACKOFF_PREFIX):].split()[0]
            backoff.setdefault(o.object.name, {}).setdefault(name, []).append(o.time)
    out = []
    for op in OPERANDS:
        p = pods.get(op.daemonset)
        if p is None:
            continue
        name = p.metadata.name
        out.append(OperandTimeline(op.daemonset, name, p.metadata.creation_timestamp or 0.0,
                                   _condition_time(p, "Initialized"), _condition_time(p, "Ready"),
                                   tuple(c.name for c in p.spec.init_containers), len(p.spec.containers),
                                   started.get(name, {}), backoff.get(name, {})))
    return out


def operand_pods_at(result: Any, t: float, node: str = NODE) -> str:
    """``kubectl get pods -n gpu-operator`` (this node's pods) at instant ``t``."""
    rows = [("NAME", "READY", "STATUS", "AGE")]
    for row in sorted(bring_up_timeline(result, node), key=lambda r: r.pod):
        st = row.status_at(t)
        if st is not None:
            rows.append((row.pod, st[0], st[1], f"{t - row.created:.0f}s"))
    if len(rows) == 1:
        return f"No resources found in {NAMESPACE} namespace."
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return "\n".join("   ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


def milestones(result: Any, node: str = NODE) -> dict[str, float]:
    """Instants of the bring-up on ``node`` that happened (a missing key: it never did)."""
    out: dict[str, float] = {}
    obj = f"Node {node}"
    for r in result.trace.records:
        if r.function == "nodepool.join" and r.object == obj:
            out.setdefault("node joined", r.time)
        elif r.function == "devicemanager.(*server).Register" and r.object == obj and r.result == "Success":
            out.setdefault("device plugin Register", r.time)
        elif r.component == f"nvidia-validator/{node}" and r.result.startswith("created "):
            out.setdefault(r.result.rsplit("/", 1)[-1], r.time)
        elif r.function == "controllers.(*ClusterPolicyReconciler).Reconcile" and r.result == "ready":
            out.setdefault("ClusterPolicy ready", r.time)
    starts = [h.start for h in result.ctx.holdings if h.node == node and h.namespace != NAMESPACE]
    if starts:
        out["first workload on GPUs"] = min(starts)
    return dict(sorted(out.items(), key=lambda kv: kv[1]))


def plugin_rpcs(result: Any, node: Optional[str] = None, limit: int = 20) -> str:
    """The kubelet ↔ device plugin exchanges (:data:`PLUGIN_RPCS`) of the run, as a trace table."""
    lines = [f"{'TIME':>9}  {'FUNCTION':<58} {'OBJECT':<26} RESULT"]
    for r in result.trace.records:
        if r.function in PLUGIN_RPCS and (node is None or r.component.endswith(f"/{node}")) \
                and not r.object.startswith(f"Pod {NAMESPACE}/"):
            lines.append(f"{r.time:>9.3f}  {r.function:<58} {r.object:<26} {r.result}")
    return "\n".join(lines[:limit + 1])


_PHASES = (("Init", "#f0ad4e"), ("Starting", "#5bc0de"), ("Ready", "#5cb85c"))


def plot_bring_up(result: Any, node: str = NODE, at: Optional[float] = None, ax: Any = None, title: str = ""):
    """Bars per operand: waiting in init containers, main container started, Ready; dashed lines at the
    milestones; a red cursor at ``at``."""
    import matplotlib.pyplot as plt
    rows = bring_up_timeline(result, node)
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 0.45 * len(rows) + 1.8))
    end = result.end
    for y, row in enumerate(rows):
        marks = [row.created, row.initialized if row.initialized is not None else end,
                 row.ready if row.ready is not None else end, end]
        for (label, color), a, b in zip(_PHASES, marks, marks[1:]):
            if b > a:
                ax.barh(y, b - a, left=a, color=color, edgecolor="white", label=label if y == 0 else None)
    marks_at = milestones(result, node)
    for i, (name, t) in enumerate(marks_at.items(), 1):   # numbered lines, named in a key on the right
        ax.axvline(t, color="0.35", ls="--", lw=0.8)
        ax.text(t, 1.01 + 0.05 * (i % 2), str(i), transform=ax.get_xaxis_transform(), fontsize=7, ha="center")
    ax.text(1.01, 1.0, "\n".join(f"{i}  {name} ({t:.0f} s)" for i, (name, t) in enumerate(marks_at.items(), 1)),
            transform=ax.transAxes, fontsize=8, va="top", family="monospace")
    if at is not None:
        ax.axvline(at, color="red", lw=1.5)
    # a finished bring-up: show it up to a minute after the last step; a stuck one: the whole run
    done = [r.ready for r in rows if r.ready is not None]
    if rows and len(done) == len(rows):
        ax.set_xlim(min(r.created for r in rows) - 10, min(end, max([*done, *marks_at.values()]) + 60))
    ax.set_yticks(range(len(rows)), [r.daemonset for r in rows], fontsize=8)
    ax.set_ylim(len(rows) - 0.4, -0.6)
    ax.set_xlabel("simulated time (s)")
    ax.set_title(title or f"GPU Operator bring-up of {node}", pad=30)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for _, c in _PHASES]
    ax.legend(handles, [n for n, _ in _PHASES], loc="lower right", fontsize=8)
    return ax


def bring_up_widget(results: dict[str, Any], node: str = NODE, fault: str = "none") -> None:
    """Pick a fault (the runs of :func:`run_faults`) and an instant: the bring-up bars with a cursor, and
    ``kubectl get pods -n gpu-operator`` at that instant."""
    import ipywidgets as w
    import matplotlib.pyplot as plt

    dd = w.Dropdown(options=list(results), value=fault, description="fault")
    first = results[fault]
    start = milestones(first, node).get("node joined", 0.0)
    t = w.FloatSlider(value=start + 150, min=start, max=first.end, step=5, description="t (s)",
                      continuous_update=False)
    out = w.Output()

    def show(change: Any = None) -> None:
        r = results[dd.value]
        with out:
            out.clear_output(wait=True)
            plot_bring_up(r, node, at=t.value, title=f"{dd.value}: bring-up of {node}")
            plt.show()
            print(operand_pods_at(r, t.value, node))

    dd.observe(show, names="value")
    t.observe(show, names="value")
    show()
    show_widget(w.VBox([w.HBox([dd, t]), out]))


def xid_rule_table() -> str:
    """The device plugin's XID rule over the XIDs gpusim models: ignored application errors
    (k8s-device-plugin internal/rm/health.go, the default ignore list) vs. critical ones (the GPU is marked
    Unhealthy until the plugin restarts), with the catalog's immediate action."""
    from ..hardware.xid import CATALOG
    from ..node.deviceplugin import IGNORED_XIDS
    rows = [("XID", "MNEMONIC", "CATALOG ACTION", "DEVICE PLUGIN")]
    rows += [(str(x.number), x.mnemonic, x.action, "ignored" if x.number in IGNORED_XIDS else "Unhealthy")
             for x in sorted(CATALOG.values(), key=lambda x: x.number)]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return "\n".join("   ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


def allocate_response(result: Any, pod: str, namespace: str = "default") -> dict[str, dict[str, Any]]:
    """container → resource → ``{"devices": [...], "envs": {...}}``: what the plugin's Allocate returned for the
    pod (the kubelet's device manager keeps it in its checkpoint, pkg/kubelet/cm/devicemanager pod_devices.go)."""
    p = result.api.get("Pod", namespace, pod)
    if p is None:
        raise KeyError(f'pods "{pod}" not found in namespace "{namespace}"')
    kl = result.kubelets.get(p.spec.node_name)
    held = kl.dm.pod_devices.get(p.metadata.uid, {}) if kl is not None and kl.dm is not None else {}
    return {c: {r: {"devices": list(ids), "envs": dict(extra.get("envs", {}))} for r, (ids, extra) in rs.items()}
            for c, rs in held.items()}
