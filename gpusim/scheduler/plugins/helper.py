"""plugins/helper: DefaultNormalizeScore and taint/toleration matching (component-helpers)."""
from __future__ import annotations

from ...api.core_v1 import Taint, Toleration
from ...componenthelpers.taints import tolerates
from ..framework import MAX_NODE_SCORE


def default_normalize_score(scores: dict[str, int], reverse: bool) -> dict[str, int]:
    """helper.DefaultNormalizeScore: scale to [0, 100] by the max; reverse flips."""
    mx = max(scores.values(), default=0)
    if mx == 0:
        return {n: MAX_NODE_SCORE if reverse else 0 for n in scores}
    out = {}
    for n, s in scores.items():
        v = MAX_NODE_SCORE * s // mx
        out[n] = MAX_NODE_SCORE - v if reverse else v
    return out


def find_untolerated(taints: list[Taint], tolerations: list[Toleration], effects: tuple[str, ...]) -> Taint | None:
    for t in taints:
        if t.effect in effects and not any(tolerates(tol, t) for tol in tolerations):
            return t
    return None
