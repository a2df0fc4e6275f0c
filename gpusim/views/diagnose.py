"""``gpusim diagnose``: walk the layers a person checks when a GPU pod does not run, top to bottom —
queue admission (Kueue, Volcano) → gang (Coscheduling's Permit wait, or 1.36's pod group scheduling cycle) →
scheduler filters → kubelet admission → runtime → device plugin →
GPU Operator operands → hardware — and name the root cause with its evidence and the fix (the troubleshooting
playbook of the reference sheet dra-and-operations.md §3, cases a–h). It reads a finished run's records only:
pods, nodes, events, the trace, the operand pods and their logs, the DCGM samples.

Each layer adds a ``Finding`` when it sees a problem; the last (deepest) finding is the root cause, because
every layer above it only shows its consequence (a device-plugin pod stuck in ``Init:0/1`` because the
driver pod crash-loops; ``Insufficient nvidia.com/gpu`` because the plugin never registered).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..api.nvidia_operands import BY_DAEMONSET, MSG_WAIT_STACK, NAMESPACE, is_operand_pod
from ..hardware.xid import CATALOG as XIDS
from ..records import dcgm_samples
from .kubectl import pod_status_text

IGNORED_XIDS = frozenset({13, 31, 43, 45, 68, 109})   # k8s-device-plugin internal/rm/health.go (application XIDs)

FIXES: dict[str, str] = {
    "kueue-quota": "Workloads wait for quota: raise the ClusterQueue's nominalQuota, let it borrow (a cohort with "
                   "borrowingLimit), or lower the request; `kubectl describe clusterqueue` shows the usage.",
    "volcano-queue": "The Volcano queue or the cluster cannot hold the gang: raise the queue's capability or "
                     "weight, lower minAvailable, or free GPUs; `kubectl describe podgroup` shows why.",
    "gang": "Not all members of the gang fit: give the cluster room for minMember pods at once, or lower "
            "minMember; waiting members hold their GPUs until the Permit timeout.",
    "native-gang": "Kubernetes 1.36 tries the whole PodGroup in one pod group scheduling cycle and binds it only "
                   "when minCount pods fit at once: give the cluster room for minCount pods together, or lower the "
                   "PodGroup's minCount; no member holds GPUs meanwhile (the cycle undoes the pods it placed), "
                   "`kubectl describe podgroup` shows the PodGroupScheduled condition.",
    "gpus-busy": "Every GPU that fits is allocated: wait for running pods, give this pod a higher priority "
                 "(preemption), or add GPU nodes.",
    "no-match": "No node satisfies the pod's constraints (selector, affinity, taints): fix the pod spec or the "
                "node labels/taints.",
    "driver": "Repair the driver path on the node (kernel headers for the running kernel, Secure Boot signing, "
              "a conflicting preinstalled driver or nouveau) or use a precompiled or preinstalled driver "
              "(ClusterPolicy spec.driver.usePrecompiled; spec.driver.enabled: false when every node has one, or "
              "the node label nvidia.com/gpu.deploy.driver=false on the nodes that do); then delete the driver "
              "pod so its DaemonSet recreates it and the operands after it start (the device plugin pod too, so "
              "it sees the GPUs healthy again).",
    "toolkit": "Let the container toolkit configure containerd (`nvidia-ctk runtime configure --runtime=containerd`"
               " and restart containerd); check the toolkit pod's logs and ClusterPolicy spec.toolkit; the "
               "operands waiting on toolkit-ready start once it exists.",
    "runtime": "Configure the `nvidia` runtime handler in containerd (the toolkit DaemonSet does it), or drop "
               "runtimeClassName where the device plugin injects GPUs through CDI.",
    "validator": "Read the validator's init-container logs (`kubectl logs -n gpu-operator <validator> -c "
                 "plugin-validation`): the node must advertise its GPUs before the validator passes.",
    "plugin": "The device plugin pod is not serving: read its logs (`kubectl logs -n gpu-operator -l "
              "app=nvidia-device-plugin-daemonset`); it registers again when its container restarts.",
    "plugin-deploy": "The device plugin is not deployed on the node: set the node label "
                     "nvidia.com/gpu.deploy.device-plugin=true (and ClusterPolicy spec.devicePlugin.enabled).",
    "kubelet-restart": "The kubelet admitted the pod before the device plugin registered again after a restart; "
                       "a Failed pod is never retried: delete it or run it under a Job/Deployment, and keep GPU "
                       "nodes tainted until the plugin is back.",
    "unhealthy": "A GPU is Unhealthy after a critical XID and stays so until the device plugin restarts: cordon "
                 "and drain the node, act on the XID (reset the GPU or reboot), replace it on repeats.",
    "node-down": "The node stopped posting status: bring it back (power, network, kubelet); pods bound there "
                 "are evicted after 300 s of NoExecute taint.",
    "mig": "Make the MIG config take effect: drain GPU workloads first, set WITH_REBOOT=true where the GPU cannot "
           "be reset live, and pick a profile valid for the model; then relabel nvidia.com/mig.config.",
    "mig-in-use": "mig-manager could not reset GPUs that pods still held (`In use by another client`) and set "
                  "failed; it does not retry until the nvidia.com/mig.config label changes again. Let those pods "
                  "finish or drain them (cordon first so no new GPU pod lands), then change the label once the GPUs "
                  "are free (or set it away and back, or delete the nvidia-mig-manager pod so it applies it again).",
    "mig-config": "The nvidia.com/mig.config label names a config the mig-parted ConfigMap does not define, or one "
                  "this GPU model cannot hold: use a name from the ConfigMap (ClusterPolicy "
                  "spec.migManager.config.name, default default-mig-parted-config) valid for the model.",
    "oom": "The GPU's memory ran out: give each replica less memory, use MPS (per-client limits) or whole GPUs or "
           "MIG instead of time-slicing, or fewer replicas per GPU.",
    "app": "The container itself failed: read its logs and exit code.",
}


@dataclass
class Finding:
    layer: str
    summary: str
    evidence: list[str] = field(default_factory=list)
    cause: str = ""            # a FIXES key when this finding can be the root cause


@dataclass
class Diagnosis:
    target: str
    status: str
    findings: list[Finding]

    @property
    def root(self) -> Optional[Finding]:
        return self.findings[-1] if self.findings else None

    @property
    def root_cause(self) -> str:
        return self.root.cause if self.root else ""

    def render(self) -> str:
        lines = [f"{self.target}: {self.status}"]
        if not self.findings:
            lines.append("No problem found: the pod is running or completed as scheduled.")
            return "\n".join(lines)
        for i, f in enumerate(self.findings, 1):
            lines.append(f"{i}. [{f.layer}] {f.summary}")
            lines += [f"     {e}" for e in f.evidence]
        root = self.root
        lines.append(f"Root cause: [{root.layer}] {root.summary}")
        lines.append("Fix: " + FIXES.get(root.cause, FIXES["app"]))
        return "\n".join(lines)


def _events(result: Any, kind: str, namespace: str, name: str) -> list:
    return [e for e in result.events.events if (e.involved_object.kind, e.involved_object.namespace,
                                                 e.involved_object.name) == (kind, namespace, name)]


def _ev(e: Any) -> str:
    return f"event {e.type} {e.reason} ({e.source}, x{e.count}, last t={e.last_timestamp:g}s): {e.message}"


def diagnose_pod(result: Any, name: str, namespace: str = "default") -> Diagnosis:
    """The chain of causes for pod ``namespace/name``. When no such pod exists but a Job (batch or Volcano)
    ``name`` does: its first pod that is neither Running nor Succeeded (by name; the first pod when all are
    fine), or, when it has no pods, why none were created (Kueue keeps it suspended, Volcano's PodGroup waits)."""
    pod = result.api.get("Pod", namespace, name)
    findings: list[Finding] = []
    if pod is None:
        job = result.api.get("Job", namespace, name)
        vjob = result.api.get("Job.batch.volcano.sh", namespace, name)
        if job is None and vjob is None:
            raise KeyError(f'pods "{name}" not found in namespace "{namespace}"')
        pods = sorted(result.api.list("Pod", lambda p: p.metadata.namespace == namespace and any(
            o.name == name and o.kind == "Job" for o in p.metadata.owner_references)), key=lambda p: p.metadata.name)
        if pods:
            pick = next((p for p in pods if p.status.phase not in ("Running", "Succeeded")), pods[0])
            d = diagnose_pod(result, pick.metadata.name, namespace)
            return Diagnosis(f"Job {namespace}/{name} ({len(pods)} pods), {d.target}", d.status, d.findings)
        _queue_layer(result, namespace, name, findings)
        return Diagnosis(f"Job {namespace}/{name}", "no pods created", findings)
    owner = next((o.name for o in pod.metadata.owner_references), None)
    _queue_layer(result, namespace, owner or name, findings)
    _gang_layer(result, pod, findings)
    scheduled = bool(pod.spec.node_name)
    if not scheduled:
        nodes = _scheduler_layer(result, pod, findings)
        for node in nodes:
            _node_layers(result, node, pod, findings)
    else:
        _kubelet_layer(result, pod, findings)
        _node_layers(result, pod.spec.node_name, pod, findings, admitted=pod.status.reason != "UnexpectedAdmissionError")
    return Diagnosis(f"Pod {namespace}/{name}", f"{pod_status_text(pod)} on {pod.spec.node_name or '<no node>'}",
                     findings)


def _queue_layer(result: Any, namespace: str, job: str, findings: list) -> None:
    for wl in result.api.list("Workload.kueue.x-k8s.io", lambda w: w.metadata.namespace == namespace and (
            any(o.name == job for o in w.metadata.owner_references) or w.metadata.name.startswith(f"job-{job}-"))):
        qr = wl.condition("QuotaReserved")
        if qr is not None and qr.status == "False" and wl.condition("Admitted") is None:
            findings.append(Finding("kueue", f"Workload {wl.metadata.name} is not admitted: {qr.reason}",
                                    [f"condition QuotaReserved=False: {qr.message}"]
                                    + [_ev(e) for e in _events(result, "Workload", namespace, wl.metadata.name)
                                       if e.type == "Warning"][:2], "kueue-quota"))
    for pg in result.api.list("PodGroup.scheduling.volcano.sh", lambda g: g.metadata.namespace == namespace
                              and g.metadata.name.startswith(job)):
        if pg.status.phase in ("Pending", "Inqueue"):
            conds = [f"condition {c.type}={c.status} {c.reason}: {c.message}" for c in pg.status.conditions
                     if c.status == "True" and c.type == "Unschedulable"][-1:]
            findings.append(Finding("volcano", f"PodGroup {pg.metadata.name} is {pg.status.phase}",
                                    conds + [_ev(e) for e in _events(result, "PodGroup", namespace, pg.metadata.name)][-2:],
                                    "volcano-queue"))


POD_GROUP_UNSCHEDULABLE = "pod group is unschedulable"   # schedule_one_podgroup.go errPodGroupUnschedulable


def _native_gang_layer(result: Any, pod: Any, findings: list) -> bool:
    """1.36 native gang (``spec.schedulingGroup``): the group's last pod group scheduling cycle and the PodGroup's
    PodGroupScheduled condition. Returns whether the pod belongs to such a group that was tried."""
    sg = pod.spec.scheduling_group
    if sg is None or not sg.pod_group_name or pod.spec.node_name:
        return False
    key = f"{pod.metadata.namespace}/{sg.pod_group_name}"
    cycles = [c for c in getattr(result.scheduler, "pod_group_cycles", ()) if c.pod_group == key
              and pod.metadata.name in c.pods]
    if not cycles:
        return False
    last = cycles[-1]
    pg = result.api.get("PodGroup.scheduling.k8s.io", pod.metadata.namespace, sg.pod_group_name)
    gang = pg.spec.scheduling_policy.gang if pg is not None else None
    need = f" (minCount {gang.min_count})" if gang is not None else ""
    evidence = [f"{len(cycles)} pod group scheduling cycles, the last at t={last.time:g}s: {len(last.pods)} pods "
                f"tried, {last.assumed} placed{need} and undone, {last.status}: {last.message}"]
    if pg is not None:
        evidence += [f"PodGroup {sg.pod_group_name} condition {c['type']}={c['status']} {c.get('reason', '')}: "
                     f"{c.get('message', '')}" for c in pg.status.conditions]
    evs = [e for e in _events(result, "Pod", pod.metadata.namespace, pod.metadata.name)
           if e.reason == "FailedScheduling"]
    evidence += [_ev(e) for e in evs[-1:]]
    findings.append(Finding("gang", f"the pod's PodGroup {sg.pod_group_name} does not fit as a whole", evidence,
                            "native-gang"))
    return True


def _gang_layer(result: Any, pod: Any, findings: list) -> None:
    if _native_gang_layer(result, pod, findings):
        return
    group = pod.metadata.labels.get("scheduling.x-k8s.io/pod-group")
    waits = [e for e in _events(result, "Pod", pod.metadata.namespace, pod.metadata.name)
             if e.reason == "FailedScheduling" and ("PodGroup" in e.message or "gang" in e.message.lower()
                                                     or "waiting" in e.message and "Permit" in e.message)]
    if group or waits:
        if waits:
            findings.append(Finding("gang", f"the pod's gang{f' {group}' if group else ''} is not complete",
                                    [_ev(e) for e in waits[-2:]], "gang"))


def _scheduler_layer(result: Any, pod: Any, findings: list) -> list[str]:
    """FailedScheduling's reasons; the GPU nodes that would fit but advertise too few GPUs come next."""
    failed = [e for e in _events(result, "Pod", pod.metadata.namespace, pod.metadata.name)
              if e.reason == "FailedScheduling"]
    if not failed:
        findings.append(Finding("scheduler", "the pod was never scheduled and no scheduler reported on it",
                                [f"spec.schedulerName={pod.spec.scheduler_name or 'default-scheduler'}"], "no-match"))
        return []
    last = failed[-1]
    if last.message.startswith(POD_GROUP_UNSCHEDULABLE):
        return []     # the pod fitted; its pod group did not (the gang layer's finding is the cause)
    wanted = _gpu_requests(pod)
    suspects = []
    for node in result.nodes():
        labels = node.metadata.labels
        if any(labels.get(k) != v for k, v in pod.spec.node_selector.items()):
            continue
        kl = result.kubelets.get(node.metadata.name)
        if kl is None or kl.plugin is None:
            continue
        short = [r for r, n in wanted.items() if int(float(node.status.allocatable.get(r, "0"))) < n]
        ready = node.status.condition("Ready")
        if short or ready is None or ready.status != "True":
            suspects.append(node.metadata.name)
    cause = "gpus-busy" if "Insufficient" in last.message else "no-match"
    findings.append(Finding("scheduler", "FailedScheduling: " + last.message, [_ev(last)], cause))
    return suspects


def _gpu_requests(pod: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in pod.spec.containers:
        for r, q in {**c.resources.requests, **c.resources.limits}.items():
            if r.startswith("nvidia.com/"):
                out[r] = max(out.get(r, 0), int(float(str(q))))
    return out


def _kubelet_layer(result: Any, pod: Any, findings: list) -> None:
    st = pod.status
    evs = _events(result, "Pod", pod.metadata.namespace, pod.metadata.name)
    if st.reason == "UnexpectedAdmissionError":
        cause = "plugin"
        node = pod.spec.node_name
        restarts = [r for r in result.trace.records if r.function == "fault.KubeletRestart" and r.object == f"Node {node}"
                    and r.time <= (pod.metadata.creation_timestamp or 0) + 3600]
        if "no healthy devices" in (st.message or "") or "unavailable" in (st.message or ""):
            cause = "kubelet-restart" if restarts else "unhealthy"
        findings.append(Finding("kubelet", f"admission rejected the pod: {st.reason}",
                                [f"status.message: {st.message}"] + [_ev(e) for e in evs if e.reason == st.reason][:1]
                                + [f"trace t={r.time:g}s {r.function} on {node}" for r in restarts[:1]], cause))
        return
    sandbox = [e for e in evs if e.reason == "FailedCreatePodSandBox"]
    if sandbox and st.phase != "Running":
        findings.append(Finding("runtime", "containerd cannot create the pod sandbox", [_ev(sandbox[-1]),
                        f"spec.runtimeClassName={pod.spec.runtime_class_name}"], "runtime"))
    for cs in st.container_statuses:
        term = cs.state.terminated or cs.last_state.terminated
        if term is not None and "out of memory" in (term.message or ""):
            findings.append(Finding("container", f"container {cs.name} exited {term.exit_code}: {term.message}",
                                    [f"restartCount={cs.restart_count}"] + [_ev(e) for e in evs if e.reason == "BackOff"][:1],
                                    "oom"))
            break


def _node_layers(result: Any, node: str, pod: Any, findings: list, admitted: bool = False) -> None:
    """Device plugin, operator operands and hardware on ``node``."""
    n = result.api.get("Node", "", node)
    kl = result.kubelets.get(node)
    if n is None or kl is None:
        return
    ready = n.status.condition("Ready")
    if ready is None or ready.status != "True" or kl.node_down:
        findings.append(Finding("node", f"node {node} is not Ready ({ready.reason if ready else 'never registered'})",
                                [f"condition Ready={ready.status if ready else 'Unknown'}: {ready.message if ready else ''}"]
                                + [f"trace t={r.time:g}s {r.function}" for r in result.trace.records
                                   if r.function == "fault.NodeDown" and r.object == f"Node {node}"][:1], "node-down"))
        return
    wanted = _gpu_requests(pod)
    mig_state = n.metadata.labels.get("nvidia.com/mig.config.state")
    # a pod that ran on whole GPUs is not affected by a MIG change that failed after it
    if any(r.startswith("nvidia.com/mig-") for r in wanted) or (
            mig_state in ("failed", "pending") and pod.status.phase not in ("Running", "Succeeded")):
        if mig_state in ("failed", "pending"):
            findings.append(_mig_finding(result, n, mig_state))
            return
    if kl.plugin is None:
        return
    capacity = {r: n.status.capacity.get(r) for r in (wanted or {"nvidia.com/gpu": 1})}
    alloc = {r: n.status.allocatable.get(r) for r in capacity}
    plugin_ok = all(alloc[r] not in (None, "0") for r in capacity)
    operand_found = _operator_layer(result, node, findings)
    if operand_found:
        return
    unhealthy = [d for d in kl.plugin.devices if d.health != "Healthy"]
    xid_records = [r for r in result.trace.records if r.function in ("fault.XidError", "fault.NVLinkError")
                   and r.object == f"Node {node}"]
    critical = [r for r in xid_records if r.details.get("xid") not in IGNORED_XIDS]
    if not plugin_ok or unhealthy:
        evidence = [f"node {node}: capacity {capacity}, allocatable {alloc}"]
        if unhealthy:
            evidence.append(f"{len(unhealthy)} of {len(kl.plugin.devices)} GPUs Unhealthy in the plugin's ListAndWatch")
        lost = [r for r in result.trace.records if r.component == kl.plugin.component and "unhealthy" in r.result]
        evidence += [f"plugin log t={r.time:g}s: {r.result}" for r in lost[-2:]]
        nvml = any("NVML" in r.result for r in lost)
        if nvml:
            findings.append(Finding("device-plugin", f"node {node} advertises too few GPUs: the plugin lost NVML "
                                    "(the driver went away) and keeps every GPU Unhealthy until it restarts",
                                    evidence, "driver"))
        elif not critical:
            findings.append(Finding("device-plugin", f"node {node} advertises too few GPUs", evidence,
                                    "plugin" if not unhealthy else "unhealthy"))
        else:
            findings.append(Finding("device-plugin", f"node {node} advertises too few GPUs", evidence, "unhealthy"))
    if critical:
        r = critical[-1]
        x = XIDS.get(r.details["xid"])
        dmesg = [d.result for d in result.trace.records if d.function == "dmesg" and d.component == f"kernel/{node}"
                 and d.object == f"GPU {r.details['gpu']}"]
        samples = [f"DCGM_FI_DEV_XID_ERRORS{{Hostname=\"{node}\",gpu=\"{r.details['gpu']}\"}} = {int(v)}"
                   for m, labels, v in dcgm_samples(result, result.end)
                   if m == "DCGM_FI_DEV_XID_ERRORS" and labels.get("gpu") == str(r.details["gpu"])
                   and labels["Hostname"] == node][:1]
        findings.append(Finding("hardware", f"GPU {r.details['gpu']} on {node} reported Xid {r.details['xid']}"
                                + (f" ({x.mnemonic}, catalog action {x.action})" if x else "")
                                + ", a critical XID: the device plugin marked it Unhealthy",
                                dmesg[-1:] + samples, "unhealthy"))


def _mig_finding(result: Any, n: Any, state: str) -> Finding:
    """mig-manager's last failure on node ``n`` (NVIDIA/mig-parted reconfigure-mig.sh exits with the state
    ``failed``): a GPU in use names the pods that held the node's GPUs then; an unknown or impossible config
    names the label."""
    node, wanted = n.metadata.name, n.metadata.labels.get("nvidia.com/mig.config")
    evs = [e for e in _events(result, "Node", "", node) if e.reason == "MigConfigFailed"]
    summary = f"nvidia.com/mig.config={wanted} did not take effect: nvidia.com/mig.config.state={state}"
    evidence, cause = [_ev(e) for e in evs[-1:]], "mig"
    msg = evs[-1].message if evs else ""
    if "In use by another client" in msg:
        t = evs[-1].last_timestamp
        holders = sorted({f"{h.namespace}/{h.pod}" for h in result.ctx.holdings if h.node == node
                          and h.start <= t and (h.end is None or h.end > t)})
        summary += f"; pods held the GPUs when mig-manager tried to reset them: {', '.join(holders) or 'none'}"
        evidence.append(f"after t={t:g}s mig-manager waits for the next change of 'nvidia.com/mig.config' "
                        "and does not retry by itself")
        cause = "mig-in-use"
    elif "selected mig-config not present" in msg or "does not support MIG" in msg or "profile" in msg:
        cause = "mig-config"
    return Finding("mig-manager", summary, evidence, cause)


def _operator_layer(result: Any, node: str, findings: list) -> bool:
    """The first operand (in reconcile order) on ``node`` that is not ready, with its container states and logs;
    True when one was found."""
    pods = [p for p in result.api.list("Pod", is_operand_pod) if p.spec.node_name == node]
    operator = getattr(result, "operator", None)
    if operator is None:
        return False
    order = [o.daemonset for o in operator.operands]
    by_ds = {p.metadata.labels.get("app"): p for p in pods}
    n = result.api.get("Node", "", node)
    kl = result.kubelets.get(node)
    logs = kl.operands.logs if kl is not None and kl.operands is not None else []
    stuck = []
    for ds in order:
        op = BY_DAEMONSET[ds]
        p = by_ds.get(ds)
        if p is None:
            if n.metadata.labels.get(op.deploy_label) == "true":
                stuck.append((ds, None))
            elif ds == "nvidia-device-plugin-daemonset":
                findings.append(Finding("gpu-operator", f"no device plugin pod on {node}: label "
                                        f"{op.deploy_label}={n.metadata.labels.get(op.deploy_label, '<unset>')}",
                                        [], "plugin-deploy"))
                return True
            continue
        ready = p.status.phase == "Running" and p.status.container_statuses and all(
            c.ready for c in p.status.container_statuses)
        if not ready:
            stuck.append((ds, p))
    if not stuck:
        return False
    summary = ", ".join(f"{p.metadata.name} {pod_status_text(p)}" if p is not None else f"{ds} (no pod)"
                        for ds, p in stuck)
    findings.append(Finding("gpu-operator", f"operands not ready on {node}: {summary}",
                            [f"ClusterPolicy {operator.policy.metadata.name} status.state={operator.policy.status.state}"]))
    # the validator only checks the others: its failure is theirs unless no other operand failed
    failed = [(ds, p) for ds, p in stuck if p is not None and not _only_waiting(p)]
    root_ds, root = next((c for c in failed if c[0] != "nvidia-operator-validator"), failed[0] if failed else stuck[0])
    if root is None:
        return True
    evidence = []
    for cs in [*root.status.init_container_statuses, *root.status.container_statuses]:
        st = cs.state
        term = st.terminated or cs.last_state.terminated
        if st.waiting is not None and st.waiting.reason == "CrashLoopBackOff" or (term and term.exit_code):
            now = st.waiting.reason if st.waiting else ("Running" if st.running else "Terminated")
            evidence.append(f"container {cs.name}: {now}, last exit code {term.exit_code if term else '?'}: "
                            f"{term.message if term else ''} (restarts {cs.restart_count})")
        elif st.running is not None and not cs.ready:
            evidence.append(f"container {cs.name}: running, not ready")
    failing = {cs.name for cs in [*root.status.init_container_statuses, *root.status.container_statuses]
               if (cs.state.terminated or cs.last_state.terminated or cs.state.running) is not None
               and not cs.ready}
    lines = [f"kubectl logs -n {NAMESPACE} {root.metadata.name} -c {c}: {line}" for _, pn, c, line in logs
             if pn == root.metadata.name and (c in failing or not failing)]
    evidence += list(dict.fromkeys(lines))[-2:]
    waiting = [f"kubectl logs -n {NAMESPACE} {pn} -c {c}: {line}" for _, pn, c, line in logs
               if line == MSG_WAIT_STACK and pn != root.metadata.name]
    cause = {"nvidia-driver-daemonset": "driver", "nvidia-container-toolkit-daemonset": "toolkit",
             "nvidia-operator-validator": "validator", "nvidia-device-plugin-daemonset": "plugin"}.get(root_ds, "plugin")
    if cause == "validator" and any("no runtime" in e for e in evidence):
        cause = "runtime"
    restarts = sum(c.restart_count for c in [*root.status.init_container_statuses, *root.status.container_statuses])
    looping = f", crash-looping ({restarts} restarts)" if restarts and not _only_waiting(root) else ""
    findings.append(Finding("gpu-operator", f"{root.metadata.name} ({root_ds}) is {pod_status_text(root)}{looping}",
                            evidence + list(dict.fromkeys(waiting))[:1], cause))
    return True


def _only_waiting(pod: Any) -> bool:
    """The pod is only waiting for an earlier operand (an init container polling, nothing failed)."""
    for cs in [*pod.status.init_container_statuses, *pod.status.container_statuses]:
        term = cs.state.terminated or cs.last_state.terminated
        if (cs.state.waiting is not None and cs.state.waiting.reason == "CrashLoopBackOff") or (term and term.exit_code):
            return False
        if cs.state.running is not None and not cs.ready and cs.name == "nvidia-driver-ctr":
            return False
    return True
