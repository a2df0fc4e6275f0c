"""pytest plugin for `make test`: hand out the longest-running files first.

`make test` runs one pytest-xdist session with ``--dist loadfile --no-loadscope-reorder``: each file (a notebook
too) goes whole to one worker, in collection order. By default xdist would order files by their number of tests,
which puts a few long files (a replay of six policies, a browser run, lab 08's solution) last, and one worker
then finishes alone on them while the other cores idle. Ordering the longest files first is the classic
longest-processing-time-first rule for scheduling jobs on identical machines; every other file keeps collection
order, and tests within a file keep theirs (the sort is stable), so a notebook's cells still run in order.

``LONGEST``: per-file totals from a junit report of `make test` on this project's 2-core VM (2026-12-04),
longest first. A file missing from it only runs later; nothing else depends on the list.

Loaded with ``-p tests.longest_first`` (Makefile ``test``).
"""
from __future__ import annotations

from typing import Any

LONGEST = (
    "tests/test_replay_alibaba.py",                 # 45 s
    "labs/08-write-a-plugin/solution.ipynb",        # 43 s
    "tests/test_browser.py",                        # 30 s
    "course/07-engineering-practice.ipynb",         # 29 s
    "tests/test_replay_sweep.py",                   # 24 s
    "course/08-production-practice.ipynb",          # 17 s
    "tests/test_lab_plugin.py",                     # 16 s
    "tests/test_vectorized.py",                     # 15 s
    "tests/test_robustness.py",                     # 13 s
    "tests/test_production.py",                     # 10 s
    "course/05-1-coscheduling.ipynb",               # 9 s
    "tests/test_examples.py",                       # 8 s
    "tests/test_labs.py",                           # 8 s
)


def pytest_collection_modifyitems(session: Any, config: Any, items: list) -> None:
    rank = {path: i for i, path in enumerate(LONGEST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(LONGEST)))
