"""The Volcano scheduler's actions (mirrors volcano-sh/volcano pkg/scheduler/actions), one module each;
``ACTIONS[name].execute(ssn)`` runs in the order the configuration lists them."""
from __future__ import annotations

from . import allocate, backfill, enqueue, preempt, reclaim

ACTIONS = {m.NAME: m for m in (enqueue, allocate, backfill, preempt, reclaim)}
