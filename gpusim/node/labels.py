"""Node objects for a NodePool, with the labels a GPU node carries.

Standard well-known labels (k8s.io/api/core/v1 well_known_labels.go) and the labels GPU Feature
Discovery writes (NVIDIA/k8s-device-plugin docs/gpu-feature-discovery, internal/lm/resource.go).
"""
from __future__ import annotations

from typing import Optional

from ..api.core_v1 import Node, NodeSpec, NodeStatus, Taint
from ..api.gpusim_v1alpha1 import NodePool
from ..api.meta import ObjectMeta
from ..hardware import GPUModel
from ..hardware.mig import full_gpu_labels


gfd_labels = full_gpu_labels   # labels GFD writes for whole GPUs (defined with the MIG labels)


def pool_node(pool: NodePool, index: int, model: Optional[GPUModel]) -> Node:
    """Node ``<pool>-<index>`` of a NodePool. GPU capacity is not set here: the kubelet adds it
    once the device plugin has registered (see gpusim.node.kubelet)."""
    s = pool.spec
    name = f"{pool.metadata.name}-{index}"
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
              "gpusim.io/node-pool": pool.metadata.name}
    if model is not None and s.gpu is not None and s.gpu.count:
        labels.update(gfd_labels(model, s.gpu.count))
        if s.gpu.vgpu is not None:   # GFD in a vGPU guest (docs/gpu-feature-discovery: nvidia.com/vgpu.present)
            labels["nvidia.com/vgpu.present"] = "true"
    labels.update(s.labels)
    base = {"cpu": str(s.cpu), "memory": str(s.memory), "pods": str(s.pods)}
    return Node(metadata=ObjectMeta(name=name, labels=labels),
                spec=NodeSpec(taints=[Taint(key=t.key, value=t.value, effect=t.effect) for t in s.taints]),
                status=NodeStatus(capacity=dict(base), allocatable=dict(base)))


def sharing_labels(model: GPUModel, config) -> dict[str, str]:
    """GFD labels for time-slicing / MPS (internal/lm/resource.go): replicas, sharing-strategy, and the
    product suffixed -SHARED when replicas are advertised under the original resource name."""
    replicas = config.replicas_for("nvidia.com/gpu")
    labels = {"nvidia.com/gpu.replicas": str(replicas), "nvidia.com/gpu.sharing-strategy": config.strategy}
    if replicas > 1 and config.advertised_name("nvidia.com/gpu") == "nvidia.com/gpu":
        labels["nvidia.com/gpu.product"] = model.product + "-SHARED"
    if config.strategy == "mps":
        labels["nvidia.com/mps.capable"] = "true"
    return labels
