"""How gpusim's widgets are displayed: the live widget in Jupyter, and a sentence instead of the widget's
Python repr (``VBox(children=(SelectionSlider(…``) wherever the notebook is read without a kernel
(GitHub, nbviewer, the static site), where the figure drawn just before it is its static twin."""
from __future__ import annotations

from typing import Any

STATIC_TWIN = ("Interactive widget: run this notebook in Jupyter to use it; the figure above is its static twin.")


class Shown:
    """A widget whose text/plain form is ``text``; everything else is the widget's own display data."""

    def __init__(self, widget: Any, text: str = STATIC_TWIN):
        self.widget, self.text = widget, text

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        data = dict(self.widget._repr_mimebundle_(**kwargs))
        data["text/plain"] = self.text
        return data


def show_widget(widget: Any, text: str = STATIC_TWIN) -> None:
    """Display ``widget`` (an ipywidgets container) with ``text`` as its static fallback."""
    from IPython.display import display
    display(Shown(widget, text))
