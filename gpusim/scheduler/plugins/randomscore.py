"""RandomScore: one feasible node, drawn uniformly in PreScore, scores 100 and every other node 0
(mirrors hkust-adsl/kubernetes-scheduler-simulator pkg/simulator/plugin/random_score.go).

Enable it at both PreScore and Score (the FGD study's scheduler config does), e.g.
``preScore: {enabled: [{name: RandomScore}]}`` and ``score: {enabled: [{name: RandomScore}]}``; pair it
with ``Open-Gpu-Share``'s ``gpuSelMethod: random`` for the paper's Random policy. The draw comes from the
simulation's seeded RNG (``rand.Intn(len(nodes))`` upstream).
"""
from __future__ import annotations

from typing import Any, Optional

from ..framework import MAX_NODE_SCORE, MIN_NODE_SCORE, Status

NAME = "RandomScore"                               # simontype.RandomScorePluginName
PRE_SCORE_STATE_KEY = "PreScore-RandomScorePlugin"  # random_score.go preScoreStateKey


def pick(n: int, rng: Any) -> int:
    """The PreScore draw: an index into the feasible nodes."""
    return rng.randrange(n)


def score(node_name: str, chosen: Optional[str]) -> int:
    return MAX_NODE_SCORE if node_name == chosen else MIN_NODE_SCORE


class RandomScore:
    name = NAME

    def __init__(self, args: Optional[dict] = None, handle: Any = None):
        self.handle = handle

    def pre_score(self, state, pi, nodes) -> Status:
        rng = self.handle.ctx.rng
        state[PRE_SCORE_STATE_KEY] = nodes[pick(len(nodes), rng)].name
        return Status()

    def score(self, state, pi, ni) -> int:
        return score(ni.name, state.get(PRE_SCORE_STATE_KEY))


def new(args=None, handle=None) -> RandomScore:
    return RandomScore(args, handle)
