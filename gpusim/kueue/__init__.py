"""Kueue: job queueing with quotas (mirrors kubernetes-sigs/kueue v0.19, pkg/scheduler, pkg/cache,
pkg/controller/jobframework). ``install(sim)`` is called by the simulation (gpusim.cluster.components) and returns the
controller-manager only when the scenario holds a Kueue object."""
from __future__ import annotations

from .scheduler import Kueue, install

__all__ = ["Kueue", "install"]
