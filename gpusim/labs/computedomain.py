"""Lab 09, part 2 (``labs/09-dra-mig/compute-domain.yaml``): a multi-node NVLink job placed with a ComputeDomain.

Eight GB200 NVL72 trays in two NVLink partitions (cliques) of one rack, NVIDIA's DRA driver on all of them
(``gpu.nvidia.com`` and ``compute-domain.nvidia.com``). Four workers of a 16-GPU data-parallel job each claim a
tray's 4 GPUs. Without a ComputeDomain no container has an IMEX channel, NCCL's MNNVL check fails (gpusim.labs.mnnvl)
and the team's ``NCCL_MNNVL_ENABLE=0`` turns MNNVL off: the ring all-reduce crosses the NICs. The default scheduler
also spreads the workers over both cliques, so even with channels the ring would leave NVLink between them.

The fix (NVIDIA/k8s-dra-driver-gpu's ComputeDomain, ``resource.nvidia.com/v1beta1``): a ComputeDomain with
``numNodes: 4`` and ``spec.channel.resourceClaimTemplate.name``; each worker adds a pod claim from that template
(the compute-domain controller creates it, one request of ``compute-domain-default-channel.nvidia.com``) and lists
it in its container; a required pod affinity on ``nvidia.com/gpu.clique`` keeps the workers in one clique (a
ComputeDomain does not place pods); and ``NCCL_MNNVL_ENABLE=0`` goes.

- :func:`with_compute_domain` — the fix (or parts of it) as an edit of the scenario text.
- :func:`placement_table` — per worker: node, clique, GPUs, IMEX channel device, ``NCCL_MNNVL_ENABLE``.
- :func:`check_compute_domain` — the checker.

The ComputeDomain itself is shown with gpusim.views.computedomain (``kubectl describe computedomain``, the channel
path).
"""
from __future__ import annotations

from typing import Optional

from ..api import resource_nvidia_com_v1beta1 as cdapi
from .checks import CheckResult, _Lines
from .mnnvl import MSG_NO_CHANNEL, MnnvlInit, container_cdi, nccl_allreduce, ranks

POOLS: dict[str, tuple[int, int]] = {"gb200-p1": (4, 1), "gb200-p2": (4, 2)}   # pool → (trays, clique ID)
MODEL = "GB200"
GPUS_PER_TRAY = 4
WORKERS = ("train-0", "train-1", "train-2", "train-3")
IMAGE = "nvcr.io/nvidia/pytorch:25.01-py3"
JOB_LABEL = ("job", "llm-pretrain")
ALLREDUCE_BYTES = 14e9        # a 7B-parameter model's bf16 gradients, reduced every step
DOMAIN, CHANNEL_TEMPLATE = "llm-cd", "llm-cd-channel"
CLIQUE_LABEL = "nvidia.com/gpu.clique"
ENV_LINE = '    env: [{name: NCCL_MNNVL_ENABLE, value: "0"}]\n'
GPU_CLAIM = "  - {name: gpus, resourceClaimTemplateName: four-gb200}\n"
COMPUTE_DOMAIN = f"""---
apiVersion: resource.nvidia.com/v1beta1
kind: ComputeDomain
metadata: {{name: {DOMAIN}}}
spec:
  numNodes: 4
  channel:
    resourceClaimTemplate: {{name: {CHANNEL_TEMPLATE}}}
"""
AFFINITY = f"""  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {{matchLabels: {{{JOB_LABEL[0]}: {JOB_LABEL[1]}}}}}
        topologyKey: {CLIQUE_LABEL}
"""


def with_compute_domain(text: str, channel: bool = True, affinity: bool = True, drop_env: bool = True) -> str:
    """``text`` with the fix: a ComputeDomain and each worker's IMEX channel claim (``channel``), a required pod
    affinity on ``nvidia.com/gpu.clique`` (``affinity``), and without ``NCCL_MNNVL_ENABLE=0`` (``drop_env``)."""
    if text.count(GPU_CLAIM) != len(WORKERS):
        raise ValueError("the lab's workers (pod claim gpus from four-gb200) are not in the text")
    out = text
    if channel:
        out = out.replace(GPU_CLAIM, GPU_CLAIM + f"  - {{name: imex-channel, resourceClaimTemplateName: {CHANNEL_TEMPLATE}}}\n")
        out = out.replace("resources: {claims: [{name: gpus}]}", "resources: {claims: [{name: gpus}, {name: imex-channel}]}")
        out += COMPUTE_DOMAIN
    if affinity:
        out = out.replace("  containers:\n  - name: trainer\n", AFFINITY + "  containers:\n  - name: trainer\n")
    if drop_env:
        out = out.replace(ENV_LINE, "")
    return out


def _domains(result) -> list:
    return sorted(result.api.list(cdapi.ComputeDomain.RESOURCE), key=lambda d: (d.metadata.namespace, d.metadata.name))


def placement_table(result) -> str:
    """Per worker: node, its clique, the GPUs held, the IMEX channel device its container got, NCCL_MNNVL_ENABLE."""
    from ..views.kubectl import _table
    rs = ranks(result, list(WORKERS))
    rows = [["POD", "NODE", "CLIQUE", "GPUS", "IMEX CHANNEL (CDI)", "NCCL_MNNVL_ENABLE"]]
    for name in WORKERS:
        pod = result.pod(name)
        mine = [r for r in rs if r.pod == name]
        node = pod.spec.node_name if pod is not None else None
        clique = result.api.get("Node", "", node).metadata.labels.get(CLIQUE_LABEL, "-") if node else "-"
        cdi = container_cdi(result, pod) if pod is not None else {}
        chan = [i for ids in cdi.values() for i in ids if "-channel-" in i]
        rows.append([name, node or "<none>", clique.rsplit(".", 1)[-1] if clique != "-" else "-",
                     ",".join(str(r.gpu) for r in mine) or "-", ", ".join(chan) or "<none>",
                     str(mine[0].mnnvl_enable) if mine else "-"])
    return _table(rows)


def format_nccl(init: MnnvlInit) -> str:
    """One line: NCCL's MNNVL decision and the all-reduce of :data:`ALLREDUCE_BYTES` it leads to."""
    if init.error is not None:
        return f"NCCL WARN {init.error} → ncclCommInitRank returns ncclSystemError (unhandled system error)"
    c = init.cost
    if c is None:
        return "no running ranks"
    mode = (f"MNNVL 1, cliques {sorted(init.clique_sizes.values(), reverse=True)}" if init.mnnvl
            else "MNNVL 0" + ("" if init.checked else f" (NCCL_MNNVL_ENABLE=0: check skipped)"))
    return (f"{mode}; all-reduce {ALLREDUCE_BYTES / 1e9:g} GB over {c.ranks} ranks: bus bandwidth "
            f"{c.bus_bandwidth:.1f} GB/s, {c.seconds * 1e3:.1f} ms, bottleneck {c.bottleneck}")


def _cluster_ok(result) -> tuple[bool, str]:
    sc = result.scenario
    want = {f"{p}-{i}" for p, (n, _) in POOLS.items() for i in range(n)}
    gpus = {n: (m.name, k) for n, (m, k) in sc.gpus.items()}
    cliques = {}
    for node in result.nodes():
        cliques.setdefault(node.metadata.labels.get(CLIQUE_LABEL), []).append(node.metadata.name)
    ok = (set(gpus) == want and all(v == (MODEL, GPUS_PER_TRAY) for v in gpus.values()) and sc.dra_nodes == want
          and len([c for c in cliques if c]) == len(POOLS) and all(len(v) == 4 for c, v in cliques.items() if c))
    text = (f"集群未改动：{len(want)} 个 GB200 compute tray（各 {GPUS_PER_TRAY} GPU，DRA driver），"
            f"两个 NVLink 分区（clique 1、2）各 4 个" if ok else
            f"集群被改动：{len(gpus)} 个 GPU 节点，{len([c for c in cliques if c])} 个 clique"
            f"（应为 gb200-p1-0…3 与 gb200-p2-0…3，各 {GPUS_PER_TRAY} 张 GB200，两个 clique）")
    return ok, text


def _workload_diff(result) -> list[str]:
    pods = {p.metadata.name: p for p in result.scenario.pods if p.metadata.namespace == "default"}
    diff = [f"缺少 {n}" for n in WORKERS if n not in pods]
    diff += [f"多出 {n}" for n in sorted(pods) if n not in WORKERS]
    diff += [f"{j.metadata.name}: 换成了 {j.kind}（应为裸 Pod）" for j in result.scenario.jobs]
    for n in WORKERS:
        p = pods.get(n)
        if p is None:
            continue
        images = [c.image for c in p.spec.containers]
        if images != [IMAGE]:
            diff.append(f"{n}: 容器 {images}（应为一个 trainer，{IMAGE}）")
        if p.metadata.annotations.get("gpusim.io/duration"):
            diff.append(f"{n}: 加了 gpusim.io/duration（训练一直运行）")
    return diff


def _pods_line(result, rs) -> tuple[bool, str]:
    held = {n: [r for r in rs if r.pod == n] for n in WORKERS}
    bad = []
    for n in WORKERS:
        pod = result.pod(n)
        phase = (pod.status.phase or "Pending") if pod is not None else "不存在"
        if phase != "Running" or len(held[n]) != GPUS_PER_TRAY:
            bad.append(f"{n} {phase}，{len(held[n])} 个 GPU")
    if bad:
        return False, "Worker 没有全部在 4 张 GPU 上运行：" + "；".join(bad)
    return True, f"4 个 worker Running，各 {GPUS_PER_TRAY} 张 GB200（共 {len(rs)} 个 rank）"


def check_compute_domain(result, expect: str = "fixed") -> CheckResult:
    """Check lab 09's part 2 from a finished run. ``expect``: ``"broken"`` (reproduce) or ``"fixed"``.

    - ``"broken"``: the workers run on both cliques, no container has an IMEX channel, and NCCL runs without MNNVL
      (``NCCL_MNNVL_ENABLE=0``): the ring all-reduce is bound by the NICs.
    - ``"fixed"``: the ComputeDomain is Ready with the workers' four trays, all in one clique; every worker's
      container has an IMEX channel; NCCL enables MNNVL with one clique of 16 ranks and the all-reduce stays on
      NVLink. Rejected: no ComputeDomain (NCCL's init fails, or MNNVL stays off), channels on two cliques,
      ``NCCL_MNNVL_ENABLE=0`` kept, a changed cluster or workload."""
    if expect not in ("broken", "fixed"):
        raise ValueError(f'expect must be "broken" or "fixed", not {expect!r}')
    c = _Lines()
    c.add(*_cluster_ok(result))
    diff = _workload_diff(result)
    c.add(not diff, f"负载未改动：{len(WORKERS)} 个 worker（{', '.join(WORKERS)}），各从 four-gb200 申请 4 张 GPU，一直运行"
          if not diff else "负载被改动：" + "；".join(diff[:4]))
    init = nccl_allreduce(result, list(WORKERS), ALLREDUCE_BYTES)
    rs = init.ranks
    c.add(*_pods_line(result, rs))
    cliques = {}
    for r in rs:
        cliques.setdefault(r.clique, set()).add(r.pod)
    where = "；".join(f"clique {str(k).rsplit('.', 1)[-1]}: {', '.join(sorted(v))}" for k, v in cliques.items())
    with_channel = sorted({r.pod for r in rs if r.channel})
    doms = _domains(result)
    if expect == "broken":
        title = "实验 09 · 第二部分 · 复现：没有 ComputeDomain，作业跨两个 NVLink 分区"
        c.add(len(cliques) == 2, f"Worker 分在 {len(cliques)} 个 clique 上（{where}）")
        c.add(not with_channel and not doms, f"IMEX channel：{', '.join(with_channel) or '没有任何容器有'}；"
                                             f"ComputeDomain {len(doms)} 个")
        ok = init.error is None and not init.mnnvl and init.cost is not None and init.cost.domains > 1
        c.add(ok, "NCCL: " + format_nccl(init))
    else:
        title = "实验 09 · 第二部分 · 修复：一个 ComputeDomain，一个 clique，all-reduce 走 NVLink"
        nodes = sorted({r.node for r in rs})
        ready = [d for d in doms if d.status.status == cdapi.STATUS_READY]
        d = ready[0] if len(ready) == 1 else None
        dom_nodes = sorted(n.name for n in d.status.nodes) if d is not None else []
        dom_cliques = {n.clique_id for n in d.status.nodes} if d is not None else set()
        ok = d is not None and dom_nodes == nodes and len(dom_cliques) == 1
        if d is None:
            why = f"ComputeDomain {len(doms)} 个，Ready 的 {len(ready)} 个（应为 1 个 Ready）"
        else:
            why = (f"ComputeDomain {d.metadata.name}: {d.status.status}，status.nodes {', '.join(dom_nodes)}，"
                   f"cliqueID {', '.join(sorted(dom_cliques))}")
            if not ok:
                why += f"（应为 worker 所在的 {', '.join(nodes)}，同一个 cliqueID）"
        c.add(ok, why)
        missing = [n for n in WORKERS if n not in with_channel]
        c.add(not missing, "每个 worker 的容器都有 IMEX channel（/dev/nvidia-caps-imex-channels/channel0）" if not missing
              else f"没有 IMEX channel 的 worker：{', '.join(missing)}（应在 resources.claims 里列出 ComputeDomain 的 channel claim）")
        c.add(len(cliques) == 1, f"Worker 都在一个 clique 上（{where}）" if len(cliques) == 1
              else f"Worker 分在 {len(cliques)} 个 clique 上（{where}）：clique 之间没有 NVLink")
        ok = (init.error is None and init.mnnvl and init.cost is not None and init.cost.domains == 1
              and list(init.clique_sizes.values()) == [len(rs)])
        c.add(ok, "NCCL: " + format_nccl(init))
    return CheckResult(c.ok, c.lines, title)
