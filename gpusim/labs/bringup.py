"""Lab 05 (``labs/05-node-bring-up``): its fixes as edits of the lab's scenario text, so the notebook, its
exercise answers and the tests build the same YAML.

- :func:`relabel` — ``kubectl label node NODE nvidia.com/gpu.deploy.driver=false --overwrite`` at a point in time
  (a gpusim ``Action`` of type ``LabelNode``): the driver DaemonSet's nodeSelector no longer matches the node.
- :func:`with_pool_label` — the same label on a NodePool, so its nodes join with it (as a node group's labels).
"""
from __future__ import annotations

from .checks import BRINGUP_PREINSTALLED, DRIVER_DEPLOY


def relabel(text: str, at: str = "10m", node: str = BRINGUP_PREINSTALLED[0], key: str = DRIVER_DEPLOY,
            value: str = "false") -> str:
    """``text`` plus a LabelNode Action setting ``key=value`` on ``node`` at ``at``."""
    return text + f"""---
apiVersion: gpusim.io/v1alpha1
kind: Action
metadata: {{name: relabel-{node}}}
spec: {{at: {at}, type: LabelNode, node: {node}, labels: {{{key}: "{value}"}}}}
"""


def with_pool_label(text: str, pool: str = "h100-img", key: str = DRIVER_DEPLOY, value: str = "false") -> str:
    """``text`` with ``spec.labels: {key: value}`` on the NodePool ``pool`` (written ``metadata: {name: pool}``)."""
    head = f"kind: NodePool\nmetadata: {{name: {pool}}}\nspec:\n"
    if head not in text:
        raise ValueError(f"no NodePool {pool!r} in block style in the scenario text")
    return text.replace(head, head + f'  labels: {{{key}: "{value}"}}\n', 1)
