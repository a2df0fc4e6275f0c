"""``scheduling.k8s.io/v1`` PriorityClass (mirrors k8s.io/api/scheduling/v1/types.go)."""
from __future__ import annotations

from .schema import INT32

from dataclasses import dataclass, field
from typing import Optional

from .meta import ObjectMeta

# pkg/apis/scheduling/types.go: the priority ceiling for user classes and the two system classes.
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_PRIORITY_CLASSES = {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}


@dataclass
class PriorityClass:
    api_version: str = "scheduling.k8s.io/v1"
    kind: str = "PriorityClass"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    value: int = field(default=0, metadata={"required": True, **INT32})
    global_default: bool = False
    description: str = ""
    preemption_policy: Optional[str] = None
