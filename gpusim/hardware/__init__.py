"""GPU hardware models: the catalog of GPU products a NodePool can name."""
from .catalog import CATALOG, GPUModel, gpu_model

__all__ = ["CATALOG", "GPUModel", "gpu_model"]
