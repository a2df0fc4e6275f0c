"""kubectl-style text and JSON (mirrors kubectl's printers: pkg/printers/internalversion/printers.go
printPod/printNode/printEvent, describe.go, and apimachinery's duration.HumanDuration)."""
from __future__ import annotations

from fractions import Fraction

from ..api.quantity import format_quantity
from ..records import node_allocated, node_ready, t, to_json  # noqa: F401  kubectl get -o json is the record


def ts(x: float) -> str:
    """A simulated instant as text, to the millisecond: ``t=1211.002s``, ``t=30s``."""
    return "t=" + f"{float(x):.3f}".rstrip("0").rstrip(".") + "s"


def human_duration(seconds: float) -> str:
    """k8s.io/apimachinery/pkg/util/duration.HumanDuration."""
    s = int(seconds)
    if s < 0:
        return "<invalid>"
    if s < 120:
        return f"{s}s"
    m = s // 60
    if m < 10:
        return f"{m}m{s % 60}s" if s % 60 else f"{m}m"
    if m < 180:
        return f"{m}m"
    h = s // 3600
    if h < 8:
        return f"{h}h{(s % 3600) // 60}m" if (s % 3600) // 60 else f"{h}h"
    if h < 48:
        return f"{h}h"
    d = h // 24
    if h < 24 * 8:
        return f"{d}d{h % 24}h" if h % 24 else f"{d}d"
    return f"{d}d"


def _init_status(pod):
    """printPod's init-container pass: ``Init:1/4``, ``Init:CrashLoopBackOff``, ``Init:Error``, or None when
    every init container has completed."""
    n = len(pod.spec.init_containers)
    for i, cs in enumerate(pod.status.init_container_statuses):
        term, wait = cs.state.terminated, cs.state.waiting
        if term is not None and term.exit_code == 0:
            continue
        if term is not None:
            return "Init:" + term.reason if term.reason else f"Init:ExitCode:{term.exit_code}"
        if wait is not None and wait.reason and wait.reason != "PodInitializing":
            return "Init:" + wait.reason
        return f"Init:{i}/{n}"
    return None


def pod_status_text(pod) -> str:
    """printPod's STATUS column."""
    reason = pod.status.reason or pod.status.phase or "Pending"
    init = _init_status(pod) if pod.status.init_container_statuses else None
    if init is not None:
        return "Terminating" if pod.metadata.deletion_timestamp is not None else init
    for cs in pod.status.container_statuses:
        if cs.state.waiting and cs.state.waiting.reason:
            reason = cs.state.waiting.reason
        elif cs.state.terminated and cs.state.terminated.reason:
            reason = cs.state.terminated.reason
    if pod.status.reason:
        reason = pod.status.reason
    if pod.metadata.deletion_timestamp is not None:
        reason = "Terminating"
    return reason


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("   ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


def pod_json(result, name: str, namespace: str = "default") -> dict:
    """One pod's record in ``to_json`` (the ``-o json`` contract): phase, reason, nodeName, devices, createdAt,
    scheduledAt, startedAt, finishedAt."""
    for p in to_json(result)["pods"]:
        if (p["namespace"], p["name"]) == (namespace, name):
            return p
    raise KeyError(f"no pod {namespace}/{name} in this run")


def scheduled_by(result, name: str, namespace: str = "default"):
    """Which scheduler bound the pod: the ``From`` (source) of its ``Scheduled`` event, e.g.
    ``default-scheduler`` or ``volcano``; None when it was never scheduled."""
    return next((e.source for e in result.events.for_object("Pod", namespace, name) if e.reason == "Scheduled"),
                None)


def get_pods(result, wide: bool = False, namespace: str | None = None, all_namespaces: bool = False) -> str:
    """``kubectl get pods``: the workload pods; ``namespace`` lists that namespace's pods instead (``-n
    gpu-operator`` shows the operand pods) and ``all_namespaces`` every pod with a NAMESPACE column (``-A``)."""
    now = result.end
    head = ["NAME", "READY", "STATUS", "RESTARTS", "AGE"] + (["IP", "NODE", "NOMINATED NODE", "READINESS GATES"] if wide else [])
    rows = [(["NAMESPACE"] if all_namespaces else []) + head]
    pods = result.pods()
    if namespace is not None or all_namespaces:
        everything = sorted(pods + list(getattr(result, "operand_pods", list)()),
                            key=lambda p: (p.metadata.namespace, p.metadata.name))
        pods = [p for p in everything if all_namespaces or p.metadata.namespace == namespace]
    for p in pods:
        ready = sum(1 for c in p.status.container_statuses if c.ready)
        restarts = sum(c.restart_count for c in [*p.status.init_container_statuses, *p.status.container_statuses])
        row = ([p.metadata.namespace] if all_namespaces else []) + [p.metadata.name, f"{ready}/{len(p.spec.containers)}", pod_status_text(p), str(restarts),
               human_duration(now - p.metadata.creation_timestamp)]
        if wide:
            row += ["<none>", p.spec.node_name or "<none>", p.status.nominated_node_name or "<none>", "<none>"]
        rows.append(row)
    return _table(rows) if len(rows) > 1 else f"No resources found in {namespace or 'default'} namespace."


def get_nodes(result, label_columns: tuple[str, ...] = (), resources: tuple[str, ...] = ("nvidia.com/gpu",)) -> str:
    """``kubectl get nodes`` plus one ``alloc/cap`` column per extended resource; ``label_columns`` adds a column
    per label as ``-L`` does (header: the key's last path segment, upper-cased, as kubectl's decorateTable)."""
    head = ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    head += ["GPU (alloc/cap)" if r == "nvidia.com/gpu" else f"{r.split('/')[-1].upper()} (alloc/cap)" for r in resources]
    rows = [head + [k.split("/")[-1].upper() for k in label_columns]]
    for n in result.nodes():
        res = [f"{n.status.allocatable.get(r, '0')}/{n.status.capacity.get(r, '0')}" for r in resources]
        rows.append([n.metadata.name, node_ready(n), "<none>", human_duration(result.end), "v1.36.0", *res]
                    + [n.metadata.labels.get(k, "") for k in label_columns])
    return _table(rows)


def get_events(result, reason=None, kind: str | None = None, name: str | None = None,
               namespace: str | None = None) -> str:
    """``kubectl get events``; the filters mirror its ``--field-selector`` on ``reason`` (one reason or a tuple
    of them), ``involvedObject.kind``, ``involvedObject.name`` and ``involvedObject.namespace``."""
    reasons = (reason,) if isinstance(reason, str) else reason
    rows = [["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]]
    for e in sorted(result.events.events, key=lambda e: e.last_timestamp):
        o = e.involved_object
        if ((reasons is not None and e.reason not in reasons) or (kind is not None and o.kind != kind)
                or (name is not None and o.name != name) or (namespace is not None and o.namespace != namespace)):
            continue
        rows.append([ts(e.last_timestamp), e.type, e.reason,
                     f"{e.involved_object.kind.lower()}/{e.involved_object.name}", e.message])
    return _table(rows) if len(rows) > 1 else "No events found."


def events_for(result, kind: str, name: str, namespace: str = "default", exclude: tuple = ()) -> str:
    """Every occurrence of the events of one object in time order, one line each (``kubectl get events``
    aggregates repeats into one row with the last time; this shows the history), reasons in ``exclude`` left
    out."""
    lines = [f"t={e.time:g}s {e.reason}: {e.message}" for e in result.events.log
             if e.object.kind == kind and e.object.name == name and e.object.namespace == namespace
             and e.reason not in exclude]
    return "\n".join(lines) if lines else "No events found."


def _events_block(events, now: float) -> list[str]:
    if not events:
        return ["Events:  <none>"]
    rows = [["Type", "Reason", "Age", "From", "Message"], ["----", "------", "----", "----", "-------"]]
    for e in sorted(events, key=lambda e: e.first_timestamp):
        age = human_duration(now - e.last_timestamp)
        if e.count > 1:
            age = f"{age} (x{e.count} over {human_duration(e.last_timestamp - e.first_timestamp)})"
        rows.append([e.type, e.reason, age, e.source, e.message])
    return ["Events:"] + ["  " + line for line in _table(rows).splitlines()]


def describe_pod(result, name: str, namespace: str = "default") -> str:
    p = result.pod(name, namespace)
    if p is None:
        raise KeyError(f'pods "{name}" not found')
    now = result.end
    lines = [f"Name:             {p.metadata.name}", f"Namespace:        {p.metadata.namespace}",
             f"Priority:         {p.spec.priority or 0}"]
    if p.spec.priority_class_name:
        lines.append(f"Priority Class Name:  {p.spec.priority_class_name}")
    lines += [f"Node:             {p.spec.node_name or '<none>'}",
              f"Start Time:       {ts(p.status.start_time) if p.status.start_time is not None else '<none>'}",
              "Labels:           " + (", ".join(f"{k}={v}" for k, v in sorted(p.metadata.labels.items())) or "<none>"),
              "Annotations:      " + (", ".join(f"{k}: {v}" for k, v in sorted(p.metadata.annotations.items())) or "<none>"),
              f"Status:           {p.status.phase or 'Pending'}"]
    if p.status.reason:
        lines.append(f"Reason:           {p.status.reason}")
    if p.status.message:
        lines.append(f"Message:          {p.status.message}")
    if p.status.nominated_node_name:
        lines.append(f"NominatedNodeName:  {p.status.nominated_node_name}")
    lines.append("Containers:")
    kl = result.kubelets.get(p.spec.node_name)
    for i, c in enumerate(p.spec.containers):
        lines.append(f"  {c.name}:")
        lines.append(f"    Image:          {c.image or '<none>'}")
        cs = p.status.container_statuses[i] if i < len(p.status.container_statuses) else None
        if cs is not None:
            st = cs.state
            if st.running:
                lines += ["    State:          Running", f"      Started:      {ts(st.running.started_at)}"]
            elif st.terminated:
                lines += ["    State:          Terminated", f"      Reason:       {st.terminated.reason}",
                          f"      Exit Code:    {st.terminated.exit_code}",
                          f"      Started:      {ts(st.terminated.started_at)}",
                          f"      Finished:     {ts(st.terminated.finished_at)}"]
            elif st.waiting:
                lines += ["    State:          Waiting", f"      Reason:       {st.waiting.reason}"]
            lines += [f"    Ready:          {cs.ready}", f"    Restart Count:  {cs.restart_count}"]
        for part in ("limits", "requests"):
            vals = getattr(c.resources, part)
            if vals:
                lines.append(f"    {part.capitalize()}:")
                lines += [f"      {k}:  {v}" for k, v in sorted(vals.items())]
        devs = result_devices(result, p).get(c.name) if kl else None
        if devs:
            lines.append(f"    Environment:\n      NVIDIA_VISIBLE_DEVICES:  {','.join(devs)}")
    if p.status.conditions:
        lines.append("Conditions:")
        rows = [["Type", "Status"]] + [[c.type, c.status] for c in p.status.conditions]
        lines += ["  " + line for line in _table(rows).splitlines()]
    tol = [f"{x.key}:{x.effect} op={x.operator or 'Equal'}" + (f" for {x.toleration_seconds}s" if x.toleration_seconds else "")
           for x in p.spec.tolerations]
    lines.append("Tolerations:      " + ("\n                  ".join(tol) if tol else "<none>"))
    lines += _events_block(result.events.for_object("Pod", p.metadata.namespace, p.metadata.name), now)
    return "\n".join(lines)


def result_devices(result, pod) -> dict[str, list[str]]:
    """container → device IDs, from the AllocResp the kubelet checkpointed (or the holdings record). A pod with
    ResourceClaims gets its GPUs through CDI (the DRA driver's spec sets NVIDIA_VISIBLE_DEVICES=void): none here."""
    out: dict[str, list[str]] = {}
    kl = result.kubelets.get(pod.spec.node_name)
    if kl is None:
        return out
    for e in kl.checkpoint_entries():
        if e["PodUID"] == pod.metadata.uid:
            ids = list(dict.fromkeys(i for g in e["DeviceIDs"].values() for i in g))
            out.setdefault(e["ContainerName"], []).extend(ids)
    if not out and not pod.spec.resource_claims:
        for h in result.ctx.holdings:
            if h.pod == pod.metadata.name and h.namespace == pod.metadata.namespace:
                out.setdefault(pod.spec.containers[0].name, []).append(h.device)
    return out


def describe_node(result, name: str) -> str:
    n = result.api.get("Node", "", name)
    if n is None:
        raise KeyError(f'nodes "{name}" not found')
    lines = [f"Name:               {name}", "Labels:             " +
             "\n                    ".join(f"{k}={v}" for k, v in sorted(n.metadata.labels.items())),
             "Taints:             " + ("\n                    ".join(
                 f"{x.key}{'=' + x.value if x.value else ''}:{x.effect}" for x in n.spec.taints) or "<none>"),
             f"Unschedulable:      {str(n.spec.unschedulable).lower()}", "Conditions:"]
    for c in n.status.conditions:
        lines.append(f"  {c.type}  {c.status}  {c.reason}  {c.message}")
    for part in ("capacity", "allocatable"):
        lines.append(f"{part.capitalize()}:")
        lines += [f"  {k}:  {v}" for k, v in sorted(getattr(n.status, part).items())]
    alloc = node_allocated(result, n)
    lines.append("Allocated resources:\n  Resource           Requests")
    for k in sorted(set(alloc) | {"cpu", "memory"}):
        lines.append(f"  {k:<18} {format_quantity(alloc.get(k, Fraction(0)), binary=k == 'memory')}")
    lines += gpu_map_lines(result, name)
    lines += _events_block(result.events.for_object("Node", "", name), result.end)
    return "\n".join(lines)


def gpu_map_lines(result, name: str) -> list[str]:
    """gpusim's own section of ``describe node``: GPU index → UUID → NUMA node → NIC (the board's map; what
    ``nvidia-smi -L`` and ``nvidia-smi topo -m`` tell on the node). Nothing on a node without GPUs."""
    topo = result.ctx.topology
    rows = topo.gpus(name) if topo is not None else []
    if not rows:
        return []
    server = topo.server(name)
    head = "GPUs:" + (f"               (board {server.graph['board']})" if server is not None else "")
    table = [["Index", "UUID", "NUMA", "NIC"]] + [
        [str(r["index"]), r["uuid"], "<none>" if r["numaNode"] is None else str(r["numaNode"]), r["nic"] or "<none>"]
        for r in rows]
    return [head] + ["  " + line for line in _table(table).splitlines()]
