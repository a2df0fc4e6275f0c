"""kube-scheduler's configuration, checked when a scenario is loaded (mirrors kubernetes
cmd/kube-scheduler/app/options: the KubeSchedulerConfiguration file → validated, defaulted profiles).

``check`` resolves the scenario's KubeSchedulerConfiguration (or the default one) into profiles with
the in-tree registry and records them on the scenario (``scheduler_profiles``, ``scheduler_queue``).
"""
from __future__ import annotations

from typing import Any

from ..api.errors import FieldError, InputError
from ..api.gpusim_v1alpha1 import effective_feature_gates
from ..api.scheme import ObjectErrors
from .profile import build_profiles
from .registry import in_tree_registry


def check(sc: Any, errors: ObjectErrors) -> None:
    try:
        sc.scheduler_profiles, sc.scheduler_queue = build_profiles(sc.scheduler_config, in_tree_registry(),
                                                                   effective_feature_gates(sc.simulation.spec))
    except FieldError as e:
        cfg = sc.scheduler_config
        raise InputError(e.message, errors.source_of(cfg), "KubeSchedulerConfiguration", "", "", e.path) from None
