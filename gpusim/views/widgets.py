"""ipywidgets dashboards. Each has a static twin in gpusim.views.plots."""
from __future__ import annotations

import matplotlib.pyplot as plt

from .plots import gpu_gantt, state_at


def timeline_slider(result, node=None):
    """A time slider stepping through the event log: pod phases and device occupancy at that instant."""
    import ipywidgets as w
    from IPython.display import display

    times = sorted({round(e.time, 3) for e in result.events.log} | {0.0, round(result.end, 3)})
    slider = w.SelectionSlider(options=times, value=times[0], description="t (s)", continuous_update=False,
                               layout=w.Layout(width="90%"))
    out = w.Output()

    def show(change=None):
        t = slider.value
        with out:
            out.clear_output(wait=True)
            st = state_at(result, t)
            fig, ax = plt.subplots(figsize=(9, 3))
            gpu_gantt(result, node=node, ax=ax, until=result.end)
            ax.axvline(t, color="red", linewidth=1.5)
            plt.show()
            for name, phase in sorted(st["phases"].items()):
                print(f"{name:<28} {phase}")
            recent = [e for e in result.events.log if abs(e.time - t) < 1e-3]
            for e in recent:
                print(f"  [{e.type}] {e.reason} {e.object.name}: {e.message}")

    slider.observe(show, names="value")
    show()
    display(w.VBox([slider, out]))
