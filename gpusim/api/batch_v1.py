"""``batch/v1`` Job (mirrors k8s.io/api/batch/v1/types.go)."""
from __future__ import annotations

from .schema import INT32

from dataclasses import dataclass, field
from typing import Any, Optional

from .core_v1 import PodSpec
from .meta import LabelSelector, ObjectMeta


@dataclass
class PodTemplateSpec:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: PodSpec = field(default_factory=PodSpec, metadata={"required": True})


@dataclass
class JobSpec:
    template: PodTemplateSpec = field(default_factory=PodTemplateSpec, metadata={"required": True})
    parallelism: Optional[int] = field(default=None, metadata=INT32)
    completions: Optional[int] = field(default=None, metadata=INT32)
    backoff_limit: Optional[int] = field(default=None, metadata=INT32)
    suspend: bool = False
    active_deadline_seconds: Optional[int] = None
    ttl_seconds_after_finished: Optional[int] = None
    completion_mode: Optional[str] = None
    selector: Optional[LabelSelector] = None
    manual_selector: Any = None
    pod_failure_policy: Any = None
    pod_replacement_policy: Optional[str] = None
    backoff_limit_per_index: Any = None
    max_failed_indexes: Any = None
    success_policy: Any = None
    managed_by: Any = None


@dataclass
class JobCondition:
    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""
    last_probe_time: Any = None
    last_transition_time: Any = None


@dataclass
class JobStatus:
    conditions: list[JobCondition] = field(default_factory=list)
    start_time: Any = None
    completion_time: Any = None
    active: int = 0
    succeeded: int = 0
    failed: int = 0
    terminating: Optional[int] = None
    ready: Optional[int] = None


@dataclass
class Job:
    api_version: str = "batch/v1"
    kind: str = "Job"
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: JobSpec = field(default_factory=JobSpec, metadata={"required": True})
    status: JobStatus = field(default_factory=JobStatus)
