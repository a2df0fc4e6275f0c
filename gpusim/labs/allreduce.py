"""Lab 04 (``labs/04-allreduce-cliff``): the job at another size and the two across-node fixes, as edits of the lab's
scenario text, so the notebook, its exercise answers and the tests build the same YAML.

- :func:`at_scale` — the same training job on ``gpus`` GPUs (one rank per pod) with the same global batch: the
  compute per step (``gpusim.io/step-time``) grows as the batch per GPU does (strong scaling).
- :func:`with_kueue_tas` — Kueue Topology-Aware Scheduling: a ``Topology`` over the fabric's labels, the
  ResourceFlavor's ``topologyName``, a ClusterQueue / LocalQueue, the Job's ``kueue.x-k8s.io/queue-name`` label and
  the pod template's ``kueue.x-k8s.io/podset-required-topology`` (Kueue v0.19 ``pkg/cache/scheduler/tas_*``, as
  :mod:`gpusim.kueue.tas_flavor_snapshot` mirrors it: the whole pod set in one domain of that level).
- :func:`with_volcano_hypernodes` — Volcano network-topology-aware scheduling: one tier-1 ``HyperNode`` per
  scalable unit (by the fabric's rack label), the scheduler ConfigMap with the ``network-topology-aware`` plugin
  (Volcano ``pkg/scheduler/plugins/network-topology-aware``, as :mod:`gpusim.volcano` mirrors it),
  and the Job as a ``batch.volcano.sh/v1alpha1`` Job with ``networkTopology: {mode: hard, highestTierAllowed: 1}``.
"""
from __future__ import annotations

import re

from ..experiments.topology import NETWORK_TOPOLOGY_CONF
from ..volcano.conf import configmap_yaml
from .checks import (ALLREDUCE_COMPUTE_S, ALLREDUCE_GPUS, ALLREDUCE_JOB, ALLREDUCE_RACK_LABEL, ALLREDUCE_RACKS)

BLOCK_LABEL = "cloud.provider.com/topology-block"
HOSTNAME_LABEL = "kubernetes.io/hostname"
QUEUE = "training"


def _job_doc(text: str) -> tuple[list[str], int]:
    docs = text.split("---\n")
    for i, doc in enumerate(docs):
        if re.search(rf"^kind: Job\nmetadata: \{{name: {ALLREDUCE_JOB}[,}}]", doc, re.M):
            return docs, i
    raise ValueError(f"scenario: no batch/v1 Job {ALLREDUCE_JOB!r} to edit")


def compute_seconds(gpus: int) -> float:
    """Compute per step on ``gpus`` GPUs with the lab's global batch (128 sequences of 4096 tokens)."""
    return ALLREDUCE_COMPUTE_S * ALLREDUCE_GPUS / gpus


def at_scale(text: str, gpus: int) -> str:
    """``text`` with the job on ``gpus`` GPUs: parallelism, completions, ``gpusim.io/training-workers`` and the
    compute per step (:func:`compute_seconds`, in ms)."""
    if not isinstance(gpus, int) or not 1 <= gpus <= ALLREDUCE_GPUS * 2:
        raise ValueError(f"gpus: must be an integer in [1, {ALLREDUCE_GPUS * 2}], got {gpus!r}")
    docs, i = _job_doc(text)
    doc = docs[i]
    doc = re.sub(r"(parallelism|completions): \d+", rf"\g<1>: {gpus}", doc)
    doc = re.sub(r'gpusim.io/training-workers: "\d+"', f'gpusim.io/training-workers: "{gpus}"', doc)
    doc = re.sub(r"gpusim.io/step-time: \S+", f"gpusim.io/step-time: {compute_seconds(gpus) * 1000:g}ms", doc)
    docs[i] = doc
    return "---\n".join(docs)


def with_kueue_tas(text: str, level: str = ALLREDUCE_RACK_LABEL) -> str:
    """``text`` plus Kueue TAS objects and the job queued with ``podset-required-topology: <level>``."""
    docs, i = _job_doc(text)
    doc = docs[i].replace(f"metadata: {{name: {ALLREDUCE_JOB}}}",
                          f"metadata:\n  name: {ALLREDUCE_JOB}\n  labels: {{kueue.x-k8s.io/queue-name: {QUEUE}}}", 1)
    doc = doc.replace("      annotations:\n",
                      f"      annotations:\n        kueue.x-k8s.io/podset-required-topology: {level}\n", 1)
    docs[i] = doc
    return "---\n".join(docs) + f"""---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {{name: fabric}}
spec:
  levels:
  - nodeLabel: {BLOCK_LABEL}
  - nodeLabel: {ALLREDUCE_RACK_LABEL}
  - nodeLabel: {HOSTNAME_LABEL}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: h100}}
spec:
  nodeLabels: {{nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}
  topologyName: fabric
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {QUEUE}}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: h100
      resources: [{{name: nvidia.com/gpu, nominalQuota: 256}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: {QUEUE}, namespace: default}}
spec: {{clusterQueue: {QUEUE}}}
"""


def with_volcano_hypernodes(text: str) -> str:
    """``text`` with the job as a Volcano Job confined to one tier-1 HyperNode (a scalable unit)."""
    docs, i = _job_doc(text)
    old = docs[i]
    gpus = int(re.search(r"parallelism: (\d+)", old).group(1))
    template = old[old.index("  template:\n"):]
    template = "\n".join("  " + line if line else line for line in template.splitlines()) + "\n"
    docs[i] = f"""apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {{name: {ALLREDUCE_JOB}}}
spec:
  schedulerName: volcano
  minAvailable: {gpus}
  networkTopology: {{mode: hard, highestTierAllowed: 1}}
  tasks:
  - name: worker
    replicas: {gpus}
{template}"""
    hypernodes = "".join(f"""---
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {{name: su{k}}}
spec:
  tier: 1
  tierName: scalable-unit
  members:
  - type: Node
    selector:
      labelMatch:
        matchLabels: {{{ALLREDUCE_RACK_LABEL}: {rack}}}
""" for k, rack in enumerate(ALLREDUCE_RACKS))
    return "---\n".join(docs) + hypernodes + "---\n" + configmap_yaml(NETWORK_TOPOLOGY_CONF)


SCALING_GPUS = (8, 16, 32, 48, 64, 80, 96, 112, 120, 128)
GLOBAL_BATCH_TOKENS = 128 * 4096           # the lab's global batch: 128 sequences of 4096 tokens


def scaling(text: str, gpus: tuple[int, ...] = SCALING_GPUS) -> list[dict]:
    """Run the job at each size twice — as written (topology-blind) and with :func:`with_kueue_tas` — and return
    one row per size: ``{gpus, placement, step, allreduce, busbw, worst_node_gpus}`` for both placements
    (``placement`` ``"blind"`` or ``"kueue-tas"``), read from the run's ``training`` record."""
    from ..cluster.simulation import run
    from ..workloads.training import training_records
    rows = []
    for n in gpus:
        for name, edit in (("blind", lambda t: t), ("kueue-tas", with_kueue_tas)):
            rec = training_records(run(text=edit(at_scale(text, n))).ctx)[0]
            rows.append({"gpus": n, "placement": name, "step": rec["stepSeconds"], "allreduce": rec["allreduceSeconds"],
                         "busbw": rec["busBandwidthGBps"],
                         "worst_node_gpus": min(len(p["gpus"]) for p in rec["placement"]) if rec["placement"] else None})
    return rows


def format_scaling(rows: list[dict]) -> str:
    """The rows of :func:`scaling` as a table (step and all-reduce in ms, throughput in tokens/s)."""
    out = [f"{'GPUs':>5}  {'placement':<10} {'step ms':>8} {'all-reduce ms':>14} {'busbw GB/s':>11} "
           f"{'fewest GPUs/node':>17} {'tokens/s':>10}"]
    for r in rows:
        out.append(f"{r['gpus']:>5}  {r['placement']:<10} {r['step'] * 1000:>8.0f} {r['allreduce'] * 1000:>14.0f} "
                   f"{r['busbw']:>11.0f} {r['worst_node_gpus']:>17} {GLOBAL_BATCH_TOKENS / r['step']:>10,.0f}")
    return "\n".join(out)


def placement_table(result, group: str = "llama-7b", namespace: str = "default", rows: int = 6) -> str:
    """The §3.3 terms of the group's last placement, one line per node, tightest bound first (``rows`` of them):
    the job's GPUs g and NICs r there, ``B_intra · g/(g−1)`` and ``r · B_nic · f_gdr · f_fabric``; then the ring's
    ``B`` (the smallest of all) and its all-reduce time."""
    from ..views.topology import group_allreduce
    cost = group_allreduce(result, group, namespace)
    terms = sorted(cost.terms, key=lambda t: min(t.nic_bound, t.intra_bound or float("inf")))
    out = [f"{'node':<11} {'g':>2} {'r':>2} {'B_intra·g/(g-1)':>16} {'r·B_nic·f':>10} {'bound GB/s':>11}"]
    for t in terms[:rows]:
        intra = f"{t.intra_bound:.0f}" if t.intra_bound is not None else "—"
        out.append(f"{t.nodes[0]:<11} {t.gpus:>2} {len(t.rails):>2} {intra:>16} {t.nic_bound:>10.0f} "
                   f"{min(t.nic_bound, t.intra_bound or float('inf')):>11.0f}")
    if len(terms) > rows:
        out.append(f"… {len(terms) - rows} more node(s)")
    out.append(f"B = {cost.bandwidth:.0f} GB/s ({cost.bottleneck}); {cost.ranks} ranks on {cost.domains} nodes: "
               f"T = {cost.latency_us:.0f} µs + {cost.size_bytes / 1e9:g} GB × 2({cost.ranks}−1)/{cost.ranks} / B "
               f"= {cost.seconds * 1000:.0f} ms")
    return "\n".join(out)
