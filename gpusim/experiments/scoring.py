"""Scoring experiments: the same workload run under several NodeResourcesFit scoring strategies, and a
three-node Filter/Score demo, with widgets that rerun them (the pictures come from gpusim.views.scoring)."""
from __future__ import annotations

from typing import Any, Iterable, Optional

import matplotlib.pyplot as plt

from ..cluster.simulation import run
from ..views.explain import explain_pod
from ..views.scoring import (DEFAULT, STRATEGIES, filter_score_scenario, fragmentation, fragmentation_table,
                             plot_fragmentation, score_bars, with_scoring_strategy)
from ..views.display import show_widget


def compare_strategies(yaml_text: str, strategies: Iterable[str] = STRATEGIES, gpu_weight: int = 5,
                       t: Optional[float] = None, pod_size: int = 8) -> dict[str, tuple[Any, dict]]:
    """Run the scenario once per scoring strategy (``"default"`` = no scheduler configuration) and
    measure fragmentation at ``t``: strategy → (Result, fragmentation)."""
    out = {}
    for s in strategies:
        r = run(text=with_scoring_strategy(yaml_text, s, gpu_weight))
        out[s] = (r, fragmentation(r, t, pod_size))
    return out

def gpus_used_by_weight(yaml_text: str, strategy: str, weights: Iterable[int], t: Optional[float] = None
                        ) -> dict[int, dict[str, int]]:
    """GPU weight → GPUs used per node at ``t`` when the scenario runs under ``strategy`` with that weight."""
    return {w: {n: d["used"] for n, d in compare_strategies(yaml_text, [strategy], w, t)[strategy][1]["nodes"].items()}
            for w in weights}


def filter_score_demo(gpu_request: int = 4, used_gpus: int = 6, strategy: str = DEFAULT, gpu_weight: int = 5):
    """Run ``filter_score_scenario`` and return the Result (explain it with ``explain_pod(r, "demo")``)."""
    return run(text=filter_score_scenario(gpu_request, used_gpus, strategy, gpu_weight))

def filter_score_widget(gpu_request: int = 4, used_gpus: int = 6, strategy: str = DEFAULT, gpu_weight: int = 5):
    """Sliders for the demo pod's GPU request and a100-0's used GPUs, and the scoring strategy:
    every change reruns the three-node scenario and shows explain_pod and the score bars."""
    import ipywidgets as w

    req = w.IntSlider(value=gpu_request, min=0, max=8, description="GPU request", continuous_update=False)
    used = w.IntSlider(value=used_gpus, min=0, max=8, description="a100-0 used", continuous_update=False)
    strat = w.Dropdown(options=[("default (cpu, memory)", DEFAULT), ("LeastAllocated + GPU", "LeastAllocated"),
                                ("MostAllocated + GPU", "MostAllocated")], value=strategy, description="scoring")
    out = w.Output()

    def show(change=None):
        with out:
            out.clear_output(wait=True)
            r = filter_score_demo(req.value, used.value, strat.value, gpu_weight)
            print(explain_pod(r, "demo"))
            _, ax = plt.subplots(figsize=(9, 3.2))
            score_bars(r, "demo", ax=ax)
            plt.show()

    for c in (req, used, strat):
        c.observe(show, names="value")
    show()
    show_widget(w.VBox([w.HBox([req, used, strat]), out]))

def strategy_widget(yaml_text: str, t: Optional[float] = None, pod: str = "big", pod_size: int = 8):
    """A scoring strategy and a GPU weight: rerun the scenario, show fragmentation at ``t`` (next to
    LeastAllocated with the same weight) and where ``pod`` went."""
    import ipywidgets as w

    strat = w.Dropdown(options=["MostAllocated", "LeastAllocated", DEFAULT], value="MostAllocated",
                       description="strategy")
    weight = w.IntSlider(value=5, min=1, max=20, description="GPU weight", continuous_update=False)
    out = w.Output()

    def show(change=None):
        with out:
            out.clear_output(wait=True)
            names = list(dict.fromkeys(["LeastAllocated", strat.value]))
            cmp = compare_strategies(yaml_text, names, weight.value, t, pod_size)
            print(fragmentation_table(cmp))
            for s, (r, _f) in cmp.items():
                p = r.pod(pod)
                print(f"{s}: pod {pod} → {p.spec.node_name or 'Pending'}" if p is not None else "")
            _, ax = plt.subplots(figsize=(9, 3.4))
            plot_fragmentation(cmp, ax=ax)
            plt.show()

    strat.observe(show, names="value")
    weight.observe(show, names="value")
    show()
    show_widget(w.VBox([w.HBox([strat, weight]), out]))
