"""GPU hardware models: the catalog of GPU products a NodePool can name.

MIG geometry and placement live in ``gpusim.hardware.mig``, mig-parted configs in ``gpusim.hardware.migparted``;
server topology graphs and ``nvidia-smi topo -m`` in ``gpusim.hardware.topology``, cluster fabrics and their node
labels in ``gpusim.hardware.fabric``, the all-reduce cost model in ``gpusim.hardware.collectives``.
"""
from .catalog import CATALOG, GPUModel, gpu_model

__all__ = ["CATALOG", "GPUModel", "gpu_model"]
