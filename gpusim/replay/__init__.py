"""Trace replay at production scale: the Alibaba GPU cluster trace v2023 under the FGD paper's protocol
and six placement policies (Weng et al., USENIX ATC '23), through gpusim's scheduler framework.

    import gpusim.replay as replay
    r = replay.run("default", "FGD", seed=42)      # one run: ReplayResult
    r.to_json()["atArrived"]["100"]                 # allocated / unallocated / fragTotal, % of GPUs

``gpusim replay alibaba`` and ``gpusim sweep`` are the command-line faces of ``run`` and ``sweep``.
"""
from .alibaba import PAPER_TRACES, load, read_nodes, read_pods, traces
from .protocol import (DEFAULT_SEEDS, DEFAULT_TUNE, POLICIES, PUBLISHED_RANKING, PUBLISHED_UNALLOCATED_DEFAULT,
                       ReplayResult, policy, run, scheduler_config)

__all__ = ["PAPER_TRACES", "load", "read_nodes", "read_pods", "traces", "DEFAULT_SEEDS", "DEFAULT_TUNE", "POLICIES",
           "PUBLISHED_RANKING", "PUBLISHED_UNALLOCATED_DEFAULT", "ReplayResult", "policy", "run", "scheduler_config"]
