"""Coscheduling experiments for chapter 05.1: the partial-start scenario rerun with a PodGroup of a given
``minMember`` and ``scheduleTimeoutSeconds`` (and PostFilter's optimistic rejection off, so the gang waits in
Permit), and a widget that reruns it. A checker (``gpusim.labs.check_gang``) is passed in, since the labs sit
above the experiments."""
from __future__ import annotations

from typing import Any, Callable, Optional

from ..cluster.simulation import run
from ..views.gang import training_summary, with_coscheduling


def run_coscheduling(text: str, group: str, min_member: int, timeout: int = 60, reject_percentage: int = 100) -> Any:
    """Run ``text`` with a PodGroup ``group`` (``minMember``, ``scheduleTimeoutSeconds``) and Coscheduling's
    ``podGroupRejectPercentage`` (100: PostFilter never rejects the gang, its pods wait in Permit)."""
    return run(text=with_coscheduling(text, group, min_member, timeout, {"podGroupRejectPercentage": reject_percentage}))


def explore_coscheduling(text: str, group: str, min_member: int = 8, timeout: int = 60,
                         check: Optional[Callable] = None) -> Any:
    """:func:`run_coscheduling`, then print the training summary and, with ``check``, its verdict."""
    r = run_coscheduling(text, group, min_member, timeout)
    print(training_summary(r))
    if check is not None:
        print(check(r, group))
    return r


def coscheduling_widget(text: str, group: str, max_member: int = 8, check: Optional[Callable] = None) -> Any:
    """Sliders for ``minMember`` and ``scheduleTimeoutSeconds`` over :func:`explore_coscheduling` (needs a running
    Jupyter kernel; its static twin is one direct call of ``explore_coscheduling``)."""
    import ipywidgets as widgets

    from ..views.display import Shown
    return Shown(widgets.interactive(
        lambda min_member, timeout: explore_coscheduling(text, group, min_member, timeout, check) and None,
        min_member=widgets.IntSlider(max_member, 1, max_member), timeout=widgets.IntSlider(60, 10, 600, 10)))
