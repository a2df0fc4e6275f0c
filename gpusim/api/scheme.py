"""The kinds gpusim reads and how a YAML document becomes a typed object (mirrors apimachinery's
runtime.Scheme: group/version/kind → Go type, and strict decoding as ``kubectl apply --validate=strict``).

``ObjectErrors`` builds the InputError for one object, naming file, document, object and field; the
scenario loader and every component's configuration check raise through it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional

from . import kueue_x_k8s_io
from . import batch_volcano_sh_v1alpha1 as vcbatch, scheduling_volcano_sh_v1beta1 as vcsched
from . import topology_volcano_sh_v1alpha1 as vctopology
from .batch_v1 import Job
from .core_v1 import ConfigMap, Namespace, Node, Pod
from .errors import FieldError, InputError, Source
from .gpusim_v1alpha1 import Action, Fabric, Fault, NodePool, Simulation
from .kubescheduler_config_v1 import KubeSchedulerConfiguration
from .nvidia_v1 import ClusterPolicy
from .policy_v1 import PodDisruptionBudget
from .schema import cut, decode
from .scheduling_v1 import PriorityClass
from .scheduling_v1alpha1 import Workload
from . import scheduling_k8s_io_v1alpha2 as schedv1alpha2
from .scheduling_x_k8s_io_v1alpha1 import ElasticQuota, PodGroup
from . import topology_node_k8s_io_v1alpha2 as nrt
from . import resource_k8s_io_v1
from . import resource_nvidia_com_v1beta1

KINDS: dict[tuple[str, str], type] = {
    ("v1", "Pod"): Pod, ("v1", "Node"): Node, ("v1", "Namespace"): Namespace, ("v1", "ConfigMap"): ConfigMap,
    ("batch/v1", "Job"): Job, ("scheduling.k8s.io/v1", "PriorityClass"): PriorityClass,
    ("gpusim.io/v1alpha1", "Simulation"): Simulation, ("gpusim.io/v1alpha1", "NodePool"): NodePool,
    ("gpusim.io/v1alpha1", "Fault"): Fault, ("gpusim.io/v1alpha1", "Fabric"): Fabric,
    ("gpusim.io/v1alpha1", "Action"): Action, ("policy/v1", "PodDisruptionBudget"): PodDisruptionBudget,
    ("kubescheduler.config.k8s.io/v1", "KubeSchedulerConfiguration"): KubeSchedulerConfiguration,
    ("nvidia.com/v1", "ClusterPolicy"): ClusterPolicy,
    ("scheduling.x-k8s.io/v1alpha1", "PodGroup"): PodGroup,
    ("scheduling.x-k8s.io/v1alpha1", "ElasticQuota"): ElasticQuota,
    ("scheduling.k8s.io/v1alpha1", "Workload"): Workload,   # alpha, 1.35: needs featureGates.GenericWorkload
    ("scheduling.k8s.io/v1alpha2", "Workload"): schedv1alpha2.Workload,   # alpha, 1.36: the same gate
    ("scheduling.k8s.io/v1alpha2", "PodGroup"): schedv1alpha2.PodGroup,
    ("scheduling.volcano.sh/v1beta1", "Queue"): vcsched.Queue,
    ("scheduling.volcano.sh/v1beta1", "PodGroup"): vcsched.PodGroup,
    ("batch.volcano.sh/v1alpha1", "Job"): vcbatch.Job,
    ("topology.volcano.sh/v1alpha1", "HyperNode"): vctopology.HyperNode,
    **kueue_x_k8s_io.KINDS,
    **nrt.KINDS,
    **resource_k8s_io_v1.KINDS,   # Dynamic Resource Allocation (GA in 1.34)
    **resource_nvidia_com_v1beta1.KINDS,   # NVIDIA's DRA driver: ComputeDomain
}
NAMESPACED = {"Pod", "ConfigMap", "Job", "PodDisruptionBudget", "PodGroup"}


def resource_of(obj: Any) -> str:
    """Kind, or ``Kind.group`` where two API groups share a kind name (see controlplane.apiserver.resource_of)."""
    return getattr(type(obj), "RESOURCE", None) or obj.kind


def is_namespaced(obj: Any) -> bool:
    """A class may say so itself (``NAMESPACED = True``); the core kinds are listed in NAMESPACED."""
    flag = getattr(type(obj), "NAMESPACED", None)
    return flag if flag is not None else getattr(obj, "kind", "") in NAMESPACED


def object_error(obj: Any, source: Optional[Source], path: str, message: str) -> InputError:
    """The InputError for field ``path`` of ``obj``."""
    meta = getattr(obj, "metadata", None)
    ns = meta.namespace if meta is not None and is_namespaced(obj) else ""
    return InputError(message, source, getattr(obj, "kind", ""), ns, meta.name if meta is not None else "", path)


def raise_all(obj: Any, source: Optional[Source], errors: Iterable[tuple[str, str]]) -> None:
    """Raise the field errors ``[(path, message)]`` of one object, as one InputError (none: no-op)."""
    errs = list(errors)
    if len(errs) == 1:
        raise object_error(obj, source, errs[0][0], errs[0][1])
    if errs:
        raise object_error(obj, source, "", "[" + ", ".join(f"{p}: {m}" for p, m in errs) + "]")


@dataclass
class ObjectErrors:
    """What a configuration check needs from the loader: where each object came from, and the
    namespaces, PriorityClasses and nodes that exist once every component is installed."""

    source_of: Callable[[Any], Optional[Source]]
    namespaces: set[str] = field(default_factory=set)
    priority_classes: dict[str, int] = field(default_factory=dict)
    nodes: set[str] = field(default_factory=set)

    def err(self, obj: Any, path: str, message: str) -> InputError:
        return object_error(obj, self.source_of(obj), path, message)

    def raise_all(self, obj: Any, errors: Iterable[tuple[str, str]]) -> None:
        raise_all(obj, self.source_of(obj), errors)


def decode_document(doc: Any, source: Source) -> Any:
    """One YAML document → typed object (strict)."""
    if not isinstance(doc, dict):
        raise InputError(f"expected a mapping (an object with apiVersion and kind), got {type(doc).__name__}", source)
    api_version, kind, meta = doc.get("apiVersion"), doc.get("kind"), doc.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    name = meta.get("name", "") if isinstance(meta.get("name", ""), str) else ""
    ns = meta.get("namespace", "") if isinstance(meta.get("namespace", ""), str) else ""
    for path, value in (("apiVersion", api_version), ("kind", kind)):
        if value is not None and not isinstance(value, str):
            raise InputError(f"Invalid value: {_type(value)}: expected string", source,
                             kind if isinstance(kind, str) else "", "", cut(name), path)
    if not api_version:
        raise InputError("apiVersion not set", source, str(kind or ""), "", cut(name), "apiVersion")
    if not kind:
        raise InputError("kind not set", source, "", "", cut(name), "kind")
    cls = KINDS.get((api_version, kind))
    if cls is None:
        hint = ""
        if kind == "DeviceTaintRule" and str(api_version).startswith("resource.k8s.io/"):
            hint = (" (DeviceTaintRule needs the DRADeviceTaintRules feature gate, alpha and off in Kubernetes 1.36, "
                    "and gpusim does not model it: put the taint on the device in its ResourceSlice, "
                    "spec.devices[].taints)")
        raise InputError(f'no matches for kind "{cut(kind)}" in version "{cut(api_version)}"{hint}', source,
                         cut(kind), cut(ns), cut(name), "")
    try:
        return decode(cls, doc)
    except FieldError as e:
        shell = cls()
        if hasattr(shell, "metadata"):
            shell.metadata.name = cut(name)
            shell.metadata.namespace = cut(ns) or "default"
        raise object_error(shell, source, e.path, e.message) from None
    except RecursionError:
        raise InputError("the document is nested too deeply to decode", source, kind, cut(ns), cut(name)) from None


def _type(value: Any) -> str:
    return {list: "array", dict: "object", bool: "boolean", int: "integer", float: "number"}.get(type(value), "null")
