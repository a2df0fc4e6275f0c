"""The labels GPU Feature Discovery writes on a GPU node (NVIDIA/k8s-device-plugin
docs/gpu-feature-discovery, internal/lm/resource.go): whole GPUs, and time-slicing / MPS sharing.
A NodePool's nodes get the whole-GPU labels when the scenario is loaded (gpusim.cluster.scenario)."""
from __future__ import annotations

from ..hardware import GPUModel
from ..hardware.mig import full_gpu_labels


gfd_labels = full_gpu_labels   # labels GFD writes for whole GPUs (defined with the MIG labels)


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
