"""The Volcano scheduler's plugins (mirrors volcano-sh/volcano pkg/scheduler/plugins), one module each.

A plugin has ``name``, is built from its ``arguments`` (the conf's ``arguments`` map), registers callbacks
on the session in ``on_session_open`` and may write status in ``on_session_close``.
"""
from __future__ import annotations

from typing import Any, Callable

from . import (binpack, conformance, drf, gang, network_topology_aware, nodeorder, overcommit, predicates, priority,
               proportion)

BUILDERS: dict[str, Callable[[dict, Any], Any]] = {
    m.NAME: m.new for m in (priority, gang, conformance, drf, predicates, proportion, nodeorder, binpack, overcommit,
                            network_topology_aware)
}

