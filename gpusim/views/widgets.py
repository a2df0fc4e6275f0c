"""ipywidgets dashboards. Each has a static twin in gpusim.views.plots (call it once directly)."""
from __future__ import annotations

import matplotlib.pyplot as plt

from .plots import format_state_at, plot_state_at, timeline_instants
from .display import show_widget


def timeline_options(result) -> list[tuple[str, float]]:
    """The slider's steps: one per instant at which the records change (:func:`timeline_instants`), labelled
    with the simulated time."""
    return [(f"{t:g}s", t) for t in timeline_instants(result)]


def timeline_slider(result, node=None, value=None):
    """A slider over simulated time, one step per instant at which something happened: the Gantt chart with a
    red line at that instant, each pod's phase then, and the events recorded at exactly that instant (so the
    phases and the events under them always agree). Static twin: ``plot_state_at`` and ``format_state_at``."""
    import ipywidgets as w

    options = timeline_options(result)
    start = value if value is not None else options[0][1]
    slider = w.SelectionSlider(options=options, value=start, description="t", continuous_update=False,
                               layout=w.Layout(width="90%"))
    out = w.Output()

    def show(change=None):
        with out:
            out.clear_output(wait=True)
            plot_state_at(result, slider.value, node=node)
            plt.show()
            print(format_state_at(result, slider.value))

    slider.observe(show, names="value")
    show()
    show_widget(w.VBox([slider, out]))
