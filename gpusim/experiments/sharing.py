"""Sharing experiments: one workload run under each GPU sharing mode, and a widget that reruns it (the
pictures and tables come from gpusim.views.sharing)."""
from __future__ import annotations

from typing import Any, Callable, Iterable, Union

import matplotlib.pyplot as plt

from ..cluster.simulation import run
from ..views.sharing import (MODES, format_sharing_summary, plot_gpu_memory, sharing_scenario, sharing_summary,
                             with_sharing_mode)
from ..views.display import show_widget

Scenario = Union[None, str, Callable[[str], str]]


def compare_sharing(scenario: Scenario = None, modes: Iterable[str] = MODES, replicas: int = 4,
                    **kwargs: Any) -> dict:
    """Run the same workload under each mode → ``{mode: Result}``. ``scenario``: None (the 4-tenant
    :func:`sharing_scenario`, ``kwargs`` passed on), YAML text (rewritten by :func:`with_sharing_mode` with
    ``replicas``), or a callable ``mode → YAML text``."""
    out = {}
    for mode in modes:
        if scenario is None:
            text = sharing_scenario(mode, **kwargs)
        elif callable(scenario):
            text = scenario(mode)
        else:
            text = with_sharing_mode(scenario, mode, replicas)
        out[mode] = run(text=text)
    return out

def sharing_widget(mode: str = "time-slicing", tenants: int = 4):
    """Pick a sharing mode and the number of tenants on one A100-80GB (the last tenant's memory grows):
    rerun :func:`sharing_scenario` and show the memory stack and the summary."""
    import ipywidgets as w

    dd = w.Dropdown(options=list(MODES), value=mode, description="mode")
    n = w.IntSlider(value=tenants, min=1, max=8, description="tenants", continuous_update=False)
    out = w.Output()

    def show(change=None):
        with out:
            out.clear_output(wait=True)
            cmp = compare_sharing(modes=[dd.value], tenants=n.value)
            print(format_sharing_summary(sharing_summary(cmp)))
            plot_gpu_memory(cmp[dd.value])
            plt.show()

    dd.observe(show, names="value")
    n.observe(show, names="value")
    show()
    show_widget(w.VBox([w.HBox([dd, n]), out]))
