"""GPU hardware models: the catalog of GPU products a NodePool can name.

MIG geometry and placement live in ``gpusim.hardware.mig``, mig-parted configs in ``gpusim.hardware.migparted``.
"""
from .catalog import CATALOG, GPUModel, gpu_model

__all__ = ["CATALOG", "GPUModel", "gpu_model"]
