"""Lab 09 (``labs/09-dra-mig``): one MIG device shared by the two containers of a pod, through DRA.

The lab's node runs NVIDIA's DRA driver ``gpu.nvidia.com`` with dynamic MIG (gpusim/node/dra.py): every MIG
placement of its A100 is a partitionable device of the node's pool, and the ``mig.nvidia.com`` DeviceClass selects
them. Each inference pod is a Triton server plus a preprocessing sidecar that hands its input tensors to the server
through Triton's CUDA shared memory (``cudaIpcGetMemHandle`` handles); CUDA IPC works only inside one MIG
instance, so both containers must see the *same* MIG device.

How a pod's containers get devices (Kubernetes 1.36): a container lists pod-level claims in
``resources.claims``; each entry of ``pod.spec.resourceClaims`` is one ResourceClaim (``resourceClaimTemplateName``:
the resourceclaim controller creates one claim per pod and entry); the kubelet's DRA manager
(pkg/kubelet/cm/dra/manager.go ``PrepareResources``) gives a container the CDI ids of the claims it lists. Two pod
claims from one template are two claims, hence two MIG devices; one pod claim listed by both containers is one
device seen by both.

- :func:`get_resourceclaims` — ``kubectl get resourceclaims`` (pkg/printers/internalversion/printers.go
  ``printResourceClaim`` and ``resourceClaimState``: NAME, STATE, AGE).
- :func:`container_devices` / :func:`format_container_devices` — per container, the MIG device it got: claim,
  device, profile, the ``MIG-<uuid>`` ``nvidia-smi -L`` would print inside it, and the CDI id.
- :func:`gpu_partitions` / :func:`format_partitions` — the MIG devices allocated on each GPU of the pool and the
  memory slices they consume.
- :func:`shared_claim` — the fix as an edit of the lab's scenario text; :func:`with_profile`,
  :func:`without_selector`, :func:`whole_gpu`, :func:`named_claim` and :func:`device_plugin_limits` build the
  false fixes the exercises and tests run.
- :func:`check_dra_mig` — the checker.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..api.duration import parse_duration
from ..api.validation import ANNOTATION_DURATION, ANNOTATION_SUBMIT_AT
from .checks import CheckResult, _Lines

NODE = "a100-0"
MODEL = "A100-SXM4-80GB"
GPUS = 1
DRIVER = "gpu.nvidia.com"
MIG_CLASS = "mig.nvidia.com"
PROFILE = "3g.40gb"              # the model needs about 30 GiB; two 3g.40gb instances fit one A100-80GB
TEMPLATE = "mig-3g"
PODS: dict[str, float] = {"infer-0": 0.0, "infer-1": 60.0}   # pod → submitted at (s)
CONTAINERS: dict[str, str] = {"server": "nvcr.io/nvidia/tritonserver:25.01-py3",
                              "preprocess": "nvcr.io/nvidia/tritonserver:25.01-py3-sdk"}
CANNOT_ALLOCATE = "cannot allocate all claims"   # dynamicresources.go, Filter's unschedulable reason
BROKEN_CLAIMS = ("  - {name: server-mig, resourceClaimTemplateName: mig-3g}\n"
                 "  - {name: sidecar-mig, resourceClaimTemplateName: mig-3g}\n")
SHARED_CLAIMS = "  - {name: mig, resourceClaimTemplateName: mig-3g}\n"


def shared_claim(text: str) -> str:
    """``text`` with each pod's two claims (``server-mig``, ``sidecar-mig``) replaced by one pod claim ``mig``
    that both containers list in ``resources.claims``."""
    if BROKEN_CLAIMS not in text:
        raise ValueError("the lab's two pod claims (server-mig, sidecar-mig from mig-3g) are not in the text")
    return (text.replace(BROKEN_CLAIMS, SHARED_CLAIMS)
            .replace("claims: [{name: server-mig}]", "claims: [{name: mig}]")
            .replace("claims: [{name: sidecar-mig}]", "claims: [{name: mig}]"))


SELECTOR = ('          selectors:\n          - cel:\n'
            '              expression: device.attributes["gpu.nvidia.com"].profile == "3g.40gb"\n')
NAMED_CLAIM = """---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared-mig}
spec:
  devices:
    requests:
    - name: mig
      exactly:
        deviceClassName: mig.nvidia.com
        selectors:
        - cel:
            expression: device.attributes["gpu.nvidia.com"].profile == "3g.40gb"
"""


def _need(text: str, part: str, what: str) -> None:
    if part not in text:
        raise ValueError(f"the lab's {what} is not in the text")


def with_profile(text: str, profile: str) -> str:
    """``text`` with the template's CEL selector asking for ``profile`` instead of 3g.40gb."""
    _need(text, SELECTOR, "CEL selector (profile == \"3g.40gb\")")
    return text.replace(SELECTOR, SELECTOR.replace(f'"{PROFILE}"', f'"{profile}"'))


def without_selector(text: str) -> str:
    """``text`` with the template's CEL selector removed: any device of ``mig.nvidia.com``."""
    _need(text, SELECTOR, "CEL selector (profile == \"3g.40gb\")")
    return text.replace(SELECTOR, "")


def whole_gpu(text: str) -> str:
    """``text`` with the template asking ``gpu.nvidia.com`` (a whole GPU) and no selector."""
    return without_selector(text).replace(f"deviceClassName: {MIG_CLASS}", f"deviceClassName: {DRIVER}")


def named_claim(text: str) -> str:
    """The fix with the pod claim pointing at one named ResourceClaim ``shared-mig`` (3g.40gb) instead of the
    template: both pods reserve the same claim."""
    fixed = shared_claim(text) if BROKEN_CLAIMS in text else text
    _need(fixed, SHARED_CLAIMS, "pod claim mig")
    return fixed.replace(SHARED_CLAIMS, "  - {name: mig, resourceClaimName: shared-mig}\n") + NAMED_CLAIM


def device_plugin_limits(text: str, resource: str = "nvidia.com/mig-3g.40gb") -> str:
    """``text`` with the pods' claims dropped and each container asking the device plugin's ``resource: 1``."""
    _need(text, BROKEN_CLAIMS, "two pod claims (server-mig, sidecar-mig)")
    out = text.replace("  resourceClaims:\n" + BROKEN_CLAIMS, "")
    for claim in ("server-mig", "sidecar-mig"):
        out = out.replace(f"resources: {{claims: [{{name: {claim}}}]}}", f"resources: {{limits: {{{resource}: 1}}}}")
    return out


def _age(seconds: float) -> str:
    from ..views.kubectl import human_duration
    return human_duration(seconds)


def claim_state(claim) -> str:
    """printers.go resourceClaimState: ``deleted``, ``pending`` or ``allocated`` (``,reserved`` when reserved)."""
    states = ["deleted"] if claim.metadata.deletion_timestamp is not None else []
    if claim.status.allocation is None:
        if claim.metadata.deletion_timestamp is None:
            states.append("pending")
    else:
        states.append("allocated")
        if claim.status.reserved_for:
            states.append("reserved")
    return ",".join(states)


def get_resourceclaims(result, namespace: str = "default") -> str:
    """``kubectl get resourceclaims``: NAME, STATE, AGE of the claims left at the end of the run."""
    from ..views.kubectl import _table
    claims = sorted(result.api.list("ResourceClaim", lambda c: c.metadata.namespace == namespace),
                    key=lambda c: c.metadata.name)
    if not claims:
        return f"No resources found in {namespace} namespace."
    rows = [["NAME", "STATE", "AGE"]] + [[c.metadata.name, claim_state(c), _age(result.end - c.metadata.creation_timestamp)]
                                         for c in claims]
    return _table(rows)


def _slice_devices(result) -> dict[str, object]:
    return {d.name: d for s in result.api.list("ResourceSlice", lambda s: s.spec.driver == DRIVER)
            for d in s.spec.devices}


def _attr(device, name: str) -> Optional[str]:
    a = device.attributes.get(name) if device is not None else None
    return None if a is None else str(a.value())


def _pod_claims(pod) -> dict[str, Optional[str]]:
    """Pod claim name → the ResourceClaim's name (generated for a template, or the named claim)."""
    generated = {s.name: s.resource_claim_name for s in pod.status.resource_claim_statuses}
    return {rc.name: rc.resource_claim_name or generated.get(rc.name) for rc in pod.spec.resource_claims}


@dataclass(frozen=True)
class ContainerDevice:
    """One device a container got through a claim (or the container's empty row: ``device`` is None)."""

    pod: str
    container: str
    claim: Optional[str]          # the ResourceClaim's name
    device: Optional[str]         # the device name in the ResourceSlice, e.g. gpu-0-mig-3g40gb-9-0
    type: Optional[str]           # the device's ``type`` attribute: mig or gpu
    profile: Optional[str]
    uuid: Optional[str]           # MIG-<uuid> (or GPU-<uuid>) as nvidia-smi -L prints it in the container
    cdi: Optional[str]


def container_devices(result, namespace: str = "default") -> list[ContainerDevice]:
    """Per container of each pod, the devices the kubelet handed it (CDI ids from ``PrepareResources``, the UUIDs
    from the driver's prepared devices), read from the kubelet's state at the end of the run, so only pods still
    active then have devices. A container with no device gets one row with ``device`` None."""
    devices = _slice_devices(result)
    out = []
    for pod in result.pods():
        if pod.metadata.namespace != namespace:
            continue
        kl = result.kubelets.get(pod.spec.node_name or "")
        cdi = kl.dra_cdi_devices.get(pod.metadata.uid, {}) if kl is not None else {}
        plugin = kl.dra_plugins.get(DRIVER) if kl is not None else None
        prepared = {d.device_name: d for devs in (plugin.prepared.values() if plugin is not None else ())
                    for d in devs}
        names = _pod_claims(pod)
        for c in pod.spec.containers:
            refs = [names.get(r.name) for r in (c.resources.claims if c.resources else [])]
            rows = []
            for cdi_id in cdi.get(c.name, []):
                dev = cdi_id.split("=", 1)[1]
                claim = next((n for n in refs if n and _allocates(result, namespace, n, dev)), refs[0] if refs else None)
                sd = devices.get(dev)
                p = prepared.get(dev)
                rows.append(ContainerDevice(pod.metadata.name, c.name, claim, dev, _attr(sd, "type"),
                                            _attr(sd, "profile"), p.uuid if p is not None else None, cdi_id))
            out += rows or [ContainerDevice(pod.metadata.name, c.name, refs[0] if refs else None, None, None, None,
                                            None, None)]
    return out


def _allocates(result, namespace: str, claim: str, device: str) -> bool:
    c = result.api.get("ResourceClaim", namespace, claim)
    return c is not None and c.status.allocation is not None and any(
        r.device == device for r in c.status.allocation.devices.results)


def format_container_devices(rows: list[ContainerDevice]) -> str:
    """``container_devices`` as a table: POD, CONTAINER, CLAIM, DEVICE, PROFILE, UUID (nvidia-smi -L), CDI."""
    from ..views.kubectl import _table
    table = [["POD", "CONTAINER", "CLAIM", "DEVICE", "PROFILE", "UUID (nvidia-smi -L)", "CDI"]]
    for r in rows:
        table.append([r.pod, r.container, r.claim or "-", r.device or "<none>",
                      r.profile or ("(whole GPU)" if r.type == "gpu" else "-"), r.uuid or "-", r.cdi or "-"])
    return _table(table)


@dataclass(frozen=True)
class Partition:
    """One allocated device of the pool: its GPU, MIG profile (None: the whole GPU), memory slices, consumers."""

    gpu: str
    device: str
    profile: Optional[str]
    memory_slices: tuple[int, ...]
    claim: str
    pods: tuple[str, ...]


def gpu_partitions(result, namespace: str = "default") -> list[Partition]:
    """The devices allocated to the claims left at the end, each with the ``memory-slice-<i>`` counters it consumes
    (dra.py: a MIG device consumes its placement's slices, the whole GPU all of them)."""
    devices = _slice_devices(result)
    out = []
    for c in sorted(result.api.list("ResourceClaim", lambda c: c.metadata.namespace == namespace),
                    key=lambda c: c.metadata.name):
        if c.status.allocation is None:
            continue
        for r in c.status.allocation.devices.results:
            d = devices.get(r.device)
            slices = tuple(sorted(int(k.rsplit("-", 1)[1]) for u in (d.consumes_counters if d is not None else [])
                                  for k in u.counters if k.startswith("memory-slice-")))
            out.append(Partition(r.device.split("-mig-")[0], r.device, _attr(d, "profile"), slices, c.metadata.name,
                                 tuple(sorted(x.name for x in c.status.reserved_for))))
    return out


def format_partitions(result, namespace: str = "default") -> str:
    """``gpu_partitions`` as a table (GPU, DEVICE, PROFILE, MEMORY SLICES, CLAIM, RESERVED FOR) and, per GPU, how
    many of its memory slices are consumed."""
    from ..views.kubectl import _table
    parts = gpu_partitions(result, namespace)
    rows = [["GPU", "DEVICE", "PROFILE", "MEMORY SLICES", "CLAIM", "RESERVED FOR"]]
    for p in parts:
        rows.append([p.gpu, p.device, p.profile or "(whole GPU)", ",".join(map(str, p.memory_slices)), p.claim,
                     ", ".join(p.pods) or "-"])
    gpus = sorted({p.gpu for p in parts} | {d for d, x in _slice_devices(result).items() if _attr(x, "type") == "gpu"})
    tail = [f"{g}: memory slice {sum(len(p.memory_slices) for p in parts if p.gpu == g)}/{_memory_slices(result, g)} "
            f"used by {sum(1 for p in parts if p.gpu == g)} device(s)" for g in gpus]
    return (_table(rows) if len(rows) > 1 else "(no allocated device)") + "\n" + "\n".join(tail)


def _memory_slices(result, gpu: str) -> int:
    d = _slice_devices(result).get(gpu)
    return sum(1 for u in (d.consumes_counters if d is not None else []) for k in u.counters
               if k.startswith("memory-slice-"))


def _last_scheduling_message(result, pod: str) -> str:
    msgs = [e for e in result.events.events if e.reason == "FailedScheduling" and e.involved_object.name == pod]
    return max(msgs, key=lambda e: e.last_timestamp).message if msgs else ""


def _workload_diff(result) -> list[str]:
    pods = {p.metadata.name: p for p in result.scenario.pods if p.metadata.namespace == "default"}
    diff = [f"{j.metadata.name}: 换成了 {j.kind}（应为裸 Pod）" for j in result.scenario.jobs]
    for name, at in PODS.items():
        p = pods.get(name)
        if p is None:
            diff.append(f"缺少 {name}")
            continue
        got = {c.name: c.image for c in p.spec.containers}
        if got != CONTAINERS:
            diff.append(f"{name}: 容器 {', '.join(f'{k} ({v})' for k, v in got.items())}（应为 server 与 preprocess，"
                        "镜像不变）")
        ann = p.metadata.annotations
        have = parse_duration(ann.get(ANNOTATION_SUBMIT_AT, "0s"))
        if abs(have - at) > 1e-9:
            diff.append(f"{name}: 提交于 {have:g}s（应为 {at:g}s）")
        if ANNOTATION_DURATION in ann:
            diff.append(f"{name}: 加了 {ANNOTATION_DURATION}={ann[ANNOTATION_DURATION]}（推理服务一直运行）")
    diff += [f"多出 {n}" for n in sorted(pods) if n not in PODS]
    return diff


def _gpu_limits(result, name: str) -> list[str]:
    pod = result.pod(name)
    return sorted({r for c in (pod.spec.containers if pod is not None else [])
                   for r in ((c.resources.limits or {}) if c.resources else {}) if r.startswith("nvidia.com/")})


def _running(pod) -> bool:
    return pod is not None and pod.status.phase == "Running" and all(cs.ready for cs in pod.status.container_statuses)


def _phase_text(result, name: str) -> str:
    pod = result.pod(name)
    if pod is None:
        return "不存在"
    phase = pod.status.phase or "Pending"
    msg = _last_scheduling_message(result, name) if phase == "Pending" else ""
    return phase + (f"（{msg}）" if msg else "")


def _pod_line(result, name: str, rows: list[ContainerDevice]) -> tuple[bool, str]:
    """Fixed: the pod runs, both containers list one and the same MIG device of :data:`PROFILE`."""
    pod = result.pod(name)
    limits = _gpu_limits(result, name)
    if limits:
        return False, (f"{name}: 容器申请了 {', '.join(limits)}——这是 device plugin 的扩展资源，{NODE} 只跑 DRA driver，"
                       f"没有这个资源；{_phase_text(result, name)}")
    if not _running(pod):
        return False, f"{name}: {_phase_text(result, name)}（应为 Running，两个容器都 Ready）"
    mine = [r for r in rows if r.pod == name]
    seen = {c: sorted({r.device for r in mine if r.container == c and r.device}) for c in CONTAINERS}
    blind = [c for c, ds in seen.items() if not ds]
    if blind:
        return False, (f"{name}: {'、'.join(blind)} 看不到 GPU（容器的 resources.claims 没有列出 claim）——"
                       "sidecar 必须和 server 在同一个 MIG 设备上")
    text = "；".join(f"{c} → {', '.join(ds)}" for c, ds in seen.items())
    many = {c: ds for c, ds in seen.items() if len(ds) > 1}
    if many:
        return False, (f"{name}: {text}——{'、'.join(many)} 看到 {max(len(d) for d in many.values())} 个设备"
                       "（请求的 count 大于 1 或列了多个 claim），应为 1 个")
    if len({ds[0] for ds in seen.values()}) != 1:
        return False, f"{name}: {text}——两个容器不是同一个设备（CUDA IPC 跨 MIG 实例不可用）"
    (dev,) = {ds[0] for ds in seen.values()}
    r = next(x for x in mine if x.device == dev)
    if r.type != "mig":
        return False, f"{name}: 两个容器共用 {dev}，但它是整卡（type {r.type}），应为一个 {PROFILE} MIG 设备"
    if r.profile != PROFILE:
        return False, f"{name}: 两个容器共用 {dev}，profile {r.profile}（应为 {PROFILE}：模型约 30 GiB）"
    return True, f"{name}: Running，server 和 preprocess 都看到 {dev}（{PROFILE}，{r.uuid}，claim {r.claim}）"


def check_dra_mig(result, expect: str = "fixed") -> CheckResult:
    """Check lab 09 from a finished run. ``expect``: ``"broken"`` (reproduce) or ``"fixed"``.

    - ``"broken"``: ``infer-0`` runs with its two containers on two different :data:`PROFILE` devices (two pod
      claims from the template), which take every memory slice of the GPU, and ``infer-1`` stays Pending with
      ``cannot allocate all claims``.
    - ``"fixed"``: both pods Running, in each the server and the sidecar list the same :data:`PROFILE` MIG device
      (same CDI id and MIG UUID), and each pod consumes exactly one partition of the GPU (its own). Rejected as
      false fixes: a whole GPU (``gpu.nvidia.com``), the device plugin's ``nvidia.com/mig-3g.40gb``, two claims, a
      sidecar without a claim, another profile, one named claim shared by both pods, a changed cluster or workload.
    """
    if expect not in ("broken", "fixed"):
        raise ValueError(f'expect must be "broken" or "fixed", not {expect!r}')
    c = _Lines()
    sc = result.scenario
    nodes = {n: (m.name, k) for n, (m, k) in sorted(sc.gpus.items())}
    ok = nodes == {NODE: (MODEL, GPUS)} and sc.dra_nodes == {NODE} and not sc.join_at.get(NODE)
    c.add(ok, f"集群未改动：1 台 {NODE}，{GPUS} 张 {MODEL}，NVIDIA DRA driver（dynamic MIG）" if ok else
          "集群被改动：" + ("，".join(f"{n} {k} 张 {m}" + ("（DRA）" if n in sc.dra_nodes else "（device plugin）")
                              for n, (m, k) in nodes.items()) or "没有 GPU 节点")
          + f"（应为 1 台 {NODE}，{GPUS} 张 {MODEL}，spec.gpu.allocation: dra）")
    diff = _workload_diff(result)
    c.add(not diff, "负载未改动：infer-0（0s）、infer-1（1m），各有 server 与 preprocess 两个容器，一直运行" if not diff
          else "负载被改动：" + "；".join(diff[:4]) + (f"……（共 {len(diff)} 处）" if len(diff) > 4 else ""))
    rows = container_devices(result)
    parts = gpu_partitions(result)
    gpus = sorted({p.gpu for p in parts} | {"gpu-0"})
    if expect == "broken":
        title = "实验 09 · 复现：每个容器一个 claim，一个 Pod 占了两个 MIG 设备"
        mine = [r for r in rows if r.pod == "infer-0" and r.device]
        seen = {r.container: r.device for r in mine}
        ok = _running(result.pod("infer-0")) and set(seen) == set(CONTAINERS) and len(set(seen.values())) == 2
        c.add(ok, "infer-0: Running，" + "；".join(f"{k} → {v}" for k, v in seen.items())
              + ("——两个容器在两个不同的 MIG 设备上" if ok else "（应为两个容器各在一个不同的 MIG 设备上）"))
        own = [p for p in parts if p.pods == ("infer-0",)]
        used = sorted(s for p in own for s in p.memory_slices)
        total = _memory_slices(result, "gpu-0")
        c.add(len(own) == 2 and len(used) == total,
              f"gpu-0: infer-0 占了 {len(own)} 个 {PROFILE}（{', '.join(p.device for p in own) or '无'}），"
              f"memory slice {len(used)}/{total}")
        msg = _last_scheduling_message(result, "infer-1")
        pod1 = result.pod("infer-1")
        ok = pod1 is not None and (pod1.status.phase or "Pending") == "Pending" and CANNOT_ALLOCATE in msg
        c.add(ok, f"infer-1: {_phase_text(result, 'infer-1')}")
    else:
        title = f"实验 09 · 修复：每个 Pod 一个 {PROFILE}，两个容器共用"
        for name in PODS:
            c.add(*_pod_line(result, name, rows))
        for gpu in gpus:
            on = [p for p in parts if p.gpu == gpu]
            per_pod = {n: [p for p in on if n in p.pods] for n in PODS}
            shared = [p for p in on if len(p.pods) > 1]
            used = sum(len(p.memory_slices) for p in on)
            total = _memory_slices(result, gpu)
            ok = not shared and all(len(v) == 1 for v in per_pod.values()) and len(on) == len(PODS)
            detail = "，".join(f"{n} → {', '.join(p.device for p in v) or '无'}" for n, v in per_pod.items())
            why = ""
            if shared:
                why = f"——{shared[0].device} 被 {'、'.join(shared[0].pods)} 共用（一个命名 ResourceClaim），两个副本要各自的 {PROFILE}"
            elif not ok:
                why = "（应为每个 Pod 正好 1 个）"
            c.add(ok, f"{gpu}: 已分配 {len(on)} 个设备（{detail}），memory slice {used}/{total}{why}")
    return CheckResult(c.ok, c.lines, title)
