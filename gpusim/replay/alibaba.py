"""The Alibaba GPU cluster trace v2023 ("openb") as v1 Nodes and Pods (mirrors how
hkust-adsl/kubernetes-scheduler-simulator turns the CSVs into YAML: data/pod_csv_to_yaml.py
``output_pod`` and the node list's ``openb_node_list_gpu_node.yaml``).

A node gets its CPU and memory as capacity and allocatable, ``pods: 1001``, the GPU count and total
milli-GPU as ``alibabacloud.com/gpu-count`` / ``alibabacloud.com/gpu-milli``, and its model as the label
``alibabacloud.com/gpu-card-model``. A task becomes a Pod with one container whose requests (= limits)
are its CPU and memory; a task with GPUs carries ``alibabacloud.com/gpu-milli`` (clipped to 0..1000),
``alibabacloud.com/gpu-count`` and, when ``gpu_spec`` names models, ``alibabacloud.com/gpu-card-model``.
Timestamps are left out, as the converter leaves them out for the FGD experiments. The files ship with
gpusim, compressed (``gpusim/replay/data/alibaba-gpu-v2023``, with the trace's licence and attribution).
"""
from __future__ import annotations

import csv
import gzip
import io
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Iterable

from ..api.core_v1 import Container, Node, NodeStatus, Pod, PodSpec, ResourceRequirements
from ..api.errors import InputError
from ..api.meta import ObjectMeta
from ..scheduler.gpushare import COUNT_NAME, MILLI, MODEL_NAME, RESOURCE_NAME, PodResource

DATA_DIR = "data/alibaba-gpu-v2023"
POD_LIST = "openb_pod_list_{}.csv"
NODE_LIST = "openb_node_list_{}.csv"
NODE_LISTS = ("gpu_node", "all_node")
# experiments/run_scripts/generate_run_scripts.py FileList: the 17 traces of the paper's study
PAPER_TRACES = ("default", "cpu050", "cpu100", "cpu200", "cpu250", "gpushare100", "gpushare40", "gpushare60",
                "gpushare80", "gpuspec10", "gpuspec20", "gpuspec25", "gpuspec33", "multigpu20", "multigpu30",
                "multigpu40", "multigpu50")
NAMESPACE = "default"
CONTAINER_NAME, CONTAINER_IMAGE = "main", "tensorflow:latest"   # pod_csv_to_yaml.py generate_pod_yaml
NODE_PODS = "1001"
NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")


@dataclass(frozen=True)
class NodeRow:
    name: str
    cpu_milli: int
    memory_mib: int
    gpu: int
    model: str


@dataclass(frozen=True)
class PodRow:
    name: str
    cpu_milli: int
    memory_mib: int
    num_gpu: int
    gpu_milli: int      # as written on the pod: clipped to 0..1000, 0 without GPUs
    gpu_spec: str       # "|"-joined allowed models, empty for any

    def resource(self) -> PodResource:
        """gpushare.pod_resource of the pod this row becomes, without building it."""
        return PodResource(self.cpu_milli, self.gpu_milli, self.num_gpu, self.gpu_spec)

    def clone(self, name: str) -> "PodRow":
        return PodRow(name, self.cpu_milli, self.memory_mib, self.num_gpu, self.gpu_milli, self.gpu_spec)


class _Row:
    """Where a value came from: ``file, line N`` (for InputError)."""

    def __init__(self, file: str, line: int):
        self.file, self.line = file, line

    def __str__(self) -> str:
        return f"{self.file}, line {self.line}"


def traces() -> tuple[str, ...]:
    """Every pod-list variant shipped: default, cpu0 … multigpu50."""
    root = resources.files("gpusim.replay").joinpath(DATA_DIR)
    names = [p.name[len("openb_pod_list_"):-len(".csv.gz")] for p in root.iterdir()
             if p.name.startswith("openb_pod_list_") and p.name.endswith(".csv.gz")]
    return tuple(sorted(names, key=lambda n: (n != "default", n)))


def _open(kind: str, name: str) -> tuple[str, io.TextIOBase]:
    """A shipped list by name, or a CSV file (optionally .gz) by path."""
    p = Path(name)
    if name.endswith((".csv", ".csv.gz")) and p.is_file():
        raw = p.read_bytes()
        label = p.name
    else:
        known = traces() if kind == "pod" else NODE_LISTS
        if name not in known:
            what = "trace" if kind == "pod" else "node list"
            raise InputError(f'--{"trace" if kind == "pod" else "nodes"}: Invalid value: "{name}": unknown {what} '
                             f"(known: {', '.join(known)}; or give a path to a CSV file)")
        label = (POD_LIST if kind == "pod" else NODE_LIST).format(name)
        raw = resources.files("gpusim.replay").joinpath(DATA_DIR, label + ".gz").read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return label, io.StringIO(raw.decode("utf-8"))


def _int(src: _Row, kind: str, name: str, row: dict, col: str) -> int:
    v = row.get(col)
    try:
        n = int(str(v).strip())
    except (TypeError, ValueError):
        raise InputError(f'{col}: Invalid value: "{v}": must be an integer', src, kind, "", name) from None
    if n < 0:
        raise InputError(f"{col}: Invalid value: {n}: must be greater than or equal to 0", src, kind, "", name)
    return n


def _header(label: str, reader: csv.DictReader, need: Iterable[str]) -> None:
    missing = [c for c in need if c not in (reader.fieldnames or [])]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)} (header: {', '.join(reader.fieldnames or [])})",
                         _Row(label, 1))


def read_nodes(which: str = "gpu_node") -> list[NodeRow]:
    """A node list (``gpu_node``: the 1,213 GPU nodes the FGD study simulates; ``all_node``; or a path)."""
    label, f = _open("node", which)
    reader = csv.DictReader(f)
    _header(label, reader, NODE_COLUMNS)
    out = []
    for line, row in enumerate(reader, start=2):
        src, name = _Row(label, line), (row.get("sn") or "").strip()
        if not name:
            raise InputError("sn: Required value", src, "Node")
        out.append(NodeRow(name, _int(src, "Node", name, row, "cpu_milli"), _int(src, "Node", name, row, "memory_mib"),
                           _int(src, "Node", name, row, "gpu"), (row.get("model") or "").strip()))
    return out


def read_pods(trace: str = "default") -> list[PodRow]:
    """A pod list by variant name (see ``traces()``) or path."""
    label, f = _open("pod", trace)
    reader = csv.DictReader(f)
    _header(label, reader, POD_COLUMNS)
    out = []
    for line, row in enumerate(reader, start=2):
        src, name = _Row(label, line), (row.get("name") or "").strip()
        if not name:
            raise InputError("name: Required value", src, "Pod")
        num_gpu = _int(src, "Pod", name, row, "num_gpu")
        milli = _int(src, "Pod", name, row, "gpu_milli")
        spec = ""
        if num_gpu:
            milli = milli if 0 < milli <= MILLI else (MILLI if milli > MILLI else 0)
            spec = "|".join(x for x in (row.get("gpu_spec") or "").split("|") if x)
        else:
            milli = 0
        out.append(PodRow(name, _int(src, "Pod", name, row, "cpu_milli"), _int(src, "Pod", name, row, "memory_mib"),
                          num_gpu, milli, spec))
    return out


def node_object(row: NodeRow) -> Node:
    """The node as the simulator's node YAML has it."""
    res = {"cpu": f"{row.cpu_milli}m", "memory": f"{row.memory_mib}Mi", "pods": NODE_PODS,
           COUNT_NAME: str(row.gpu), RESOURCE_NAME: str(row.gpu * MILLI)}
    labels = {"beta.kubernetes.io/os": "linux", "kubernetes.io/hostname": row.name, "kubernetes.io/os": "linux"}
    if row.model:
        labels[MODEL_NAME] = row.model
    return Node(metadata=ObjectMeta(name=row.name, labels=labels, uid=f"node-{row.name}"),
                status=NodeStatus(capacity=dict(res), allocatable=dict(res)))


def pod_object(row: PodRow) -> Pod:
    """The pod as pod_csv_to_yaml.py writes it (requests = limits; GPU annotations only with GPUs)."""
    req = {"cpu": f"{row.cpu_milli}m", "memory": f"{row.memory_mib}Mi"}
    ann = {}
    if row.num_gpu:
        ann[RESOURCE_NAME] = str(row.gpu_milli)
        ann[COUNT_NAME] = str(row.num_gpu)
        if row.gpu_spec:
            ann[MODEL_NAME] = row.gpu_spec
    c = Container(name=CONTAINER_NAME, image=CONTAINER_IMAGE,
                  resources=ResourceRequirements(limits=dict(req), requests=dict(req)))
    return Pod(metadata=ObjectMeta(name=row.name, namespace=NAMESPACE, annotations=ann, uid=f"pod-{row.name}"),
               spec=PodSpec(containers=[c], restart_policy="OnFailure"))


def load(trace: str = "default", nodes: str = "gpu_node") -> tuple[list[Node], list[Pod]]:
    """The cluster and the trace's pods as v1 objects, in file order."""
    return [node_object(r) for r in read_nodes(nodes)], [pod_object(r) for r in read_pods(trace)]
