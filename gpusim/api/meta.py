"""ObjectMeta and the common object envelope (mirrors k8s.io/apimachinery/pkg/apis/meta/v1)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional


@dataclass(slots=True)
class OwnerReference:
    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: Optional[bool] = None
    block_owner_deletion: Optional[bool] = None


@dataclass(slots=True)
class ObjectMeta:
    name: str = ""
    generate_name: str = ""
    namespace: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    uid: str = ""
    resource_version: str = ""
    generation: int = 0
    creation_timestamp: Any = None        # simulated seconds
    deletion_timestamp: Any = None
    deletion_grace_period_seconds: Optional[int] = None
    owner_references: list[OwnerReference] = field(default_factory=list)
    finalizers: list[str] = field(default_factory=list)
    managed_fields: Any = None


@dataclass
class LabelSelectorRequirement:
    key: str = ""
    operator: str = ""
    values: list[str] = field(default_factory=list)


@dataclass
class LabelSelector:
    match_labels: dict[str, str] = field(default_factory=dict)
    match_expressions: list[LabelSelectorRequirement] = field(default_factory=list)

    def matches(self, labels: dict[str, str]) -> bool:
        for k, v in self.match_labels.items():
            if labels.get(k) != v:
                return False
        for r in self.match_expressions:
            has = r.key in labels
            if r.operator == "In" and not (has and labels[r.key] in r.values):
                return False
            if r.operator == "NotIn" and has and labels[r.key] in r.values:
                return False
            if r.operator == "Exists" and not has:
                return False
            if r.operator == "DoesNotExist" and has:
                return False
        return True
