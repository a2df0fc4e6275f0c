"""Memory-over-time picture for the GPU sharing labs: :func:`gpusim.views.sharing.plot_gpu_memory` (one panel
per physical GPU; pods stacked where they share one pool of memory, one line per pod under MPS with the
pinned limit dashed; a red × at every ``CUDA error: out of memory``). Chapter 02.2 draws the same picture.
"""
from __future__ import annotations

from ..views.sharing import plot_gpu_memory

__all__ = ["plot_gpu_memory"]
