"""Plain-text views of the trace."""
from __future__ import annotations

from typing import Optional

from .kubectl import t


def trace_table(result, component: str | None = None, obj: str | None = None, start: Optional[float] = None,
                end: Optional[float] = None) -> str:
    """The trace as a table, optionally only the records of one component (prefix), one object, or the
    instants in ``[start, end]``."""
    lines = [f"{'TIME':>10}  {'COMPONENT':<34} {'FUNCTION':<58} {'OBJECT':<34} RESULT"]
    for r in result.trace.records:
        if component and not r.component.startswith(component):
            continue
        if obj and r.object != obj:
            continue
        if (start is not None and r.time < start) or (end is not None and r.time > end):
            continue
        lines.append(f"{t(r.time):>10.3f}  {r.component:<34} {r.function:<58} {r.object:<34} {r.result}")
    return "\n".join(lines)


def trace_functions(result, obj: str | None = None, component: str | None = None) -> list[str]:
    """The upstream functions of the trace records, in order (optionally of one object / component prefix)."""
    return [r.function for r in result.trace.records
            if (obj is None or r.object == obj) and (component is None or r.component.startswith(component))]
