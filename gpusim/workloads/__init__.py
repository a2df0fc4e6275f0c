"""Workload models: what the containers of a pod do once the kubelet starts them.

- ``training``: distributed data-parallel training — N workers that make progress only while all N
  run (an all-reduce barrier each step), so a partial start holds GPUs and does no work.
"""
from .training import TrainingCoordinator, coordinator, is_training, training_group, training_report

__all__ = ["TrainingCoordinator", "coordinator", "is_training", "training_group", "training_report"]
