"""Lab 07 (``labs/07-mig-not-applied``): its fixes as edits of the lab's scenario text, so the notebook, its
exercise answers and the tests build the same YAML.

mig-manager (NVIDIA/mig-parted ``cmd/nvidia-mig-manager``) reconfigures a node only when its
``nvidia.com/mig.config`` label changes; after a ``failed`` apply it logs ``Waiting for change to
'nvidia.com/mig.config' label`` and does nothing more. So the fix is an ordering one:

- :func:`relabel_at` — move the ``kubectl label node … nvidia.com/mig.config=all-1g.10gb`` (the lab's
  ``LabelNode`` Action) to a time when no pod holds the GPUs (the maintenance window after the training);
- :func:`relabel_again` — keep the failed attempt and, once the GPUs are free, change the label away and back
  (``all-disabled`` then ``all-1g.10gb``), which makes mig-manager run its flow again.
"""
from __future__ import annotations

from .checks import MIG_CONFIG, MIG_CONFIG_LABEL, MIG_NODE

ACTION = "spec: {at: 10m, type: LabelNode, node: a100-0, labels: {nvidia.com/mig.config: all-1g.10gb}}"


def relabel_at(text: str, at: str = "61m") -> str:
    """``text`` with the lab's relabelling Action moved to ``at``."""
    if ACTION not in text:
        raise ValueError("the lab's LabelNode Action (at: 10m, nvidia.com/mig.config: all-1g.10gb) is not in the text")
    return text.replace(ACTION, ACTION.replace("at: 10m", f"at: {at}"), 1)


def _label(name: str, at: str, value: str, node: str) -> str:
    return f"""---
apiVersion: gpusim.io/v1alpha1
kind: Action
metadata: {{name: {name}}}
spec: {{at: {at}, type: LabelNode, node: {node}, labels: {{{MIG_CONFIG_LABEL}: {value}}}}}
"""


def relabel_again(text: str, away: str = "61m", back: str = "62m", via: str = "all-disabled",
                  config: str = MIG_CONFIG, node: str = MIG_NODE) -> str:
    """``text`` plus two LabelNode Actions: ``nvidia.com/mig.config=via`` at ``away``, ``=config`` at ``back``."""
    return text + _label("mig-config-away", away, via, node) + _label("mig-config-back", back, config, node)
