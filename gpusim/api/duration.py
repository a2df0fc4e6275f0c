"""Go duration strings ("90s", "1h30m", "1.5h", "300ms").

Mirrors Go's time.ParseDuration (src/time/format.go), including its error texts.
Values are returned in seconds as float.
"""
from __future__ import annotations

import re

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)([^0-9.]*)")


class DurationError(ValueError):
    """A string that Go's time.ParseDuration rejects."""


MAX_SECONDS = (2**63 - 1) / 1e9   # Go's time.Duration is int64 nanoseconds: about 2562047h


def parse_duration(text: str) -> float:
    """Parse a Go duration into seconds. ``"0"`` is the only value allowed without a unit."""
    if not isinstance(text, str):
        raise DurationError(f'time: invalid duration "{text}"')
    orig, s = text, text
    sign = 1.0
    if s[:1] in "+-" and s:
        sign = -1.0 if s[0] == "-" else 1.0
        s = s[1:]
    if s == "0":
        return 0.0
    if not s:
        raise DurationError(f'time: invalid duration "{orig}"')
    total = 0.0
    while s:
        m = _PART.match(s)
        num, unit = m.group(1), m.group(2)
        if num in ("", "."):
            raise DurationError(f'time: invalid duration "{orig}"')
        if not unit:
            raise DurationError(f'time: missing unit in duration "{orig}"')
        if unit not in _UNITS:
            raise DurationError(f'time: unknown unit "{unit}" in duration "{orig}"')
        if len(num) > 30:
            raise DurationError(f'time: invalid duration "{orig[:40]}"')
        total += float(num) * _UNITS[unit]
        if total > MAX_SECONDS:   # format.go: overflow is "invalid duration"
            raise DurationError(f'time: invalid duration "{orig[:40]}"')
        s = s[m.end():]
    return sign * total


def format_duration(seconds: float) -> str:
    """Go's Duration.String() for whole milliseconds and up: ``1h30m0s``, ``1.5s``, ``0s``."""
    if seconds == 0:
        return "0s"
    neg = seconds < 0
    rest = abs(seconds)
    h, rest = divmod(rest, 3600)
    m, s = divmod(rest, 60)
    s = round(s, 6)
    sec = f"{s:.6f}".rstrip("0").rstrip(".") + "s"
    if rest < 60 and h == 0 and abs(seconds) < 1:
        ms = round(abs(seconds) * 1000, 3)
        sec = f"{ms:g}ms"
        return ("-" if neg else "") + sec
    out = ""
    if h:
        out += f"{int(h)}h"
    if h or m:
        out += f"{int(m)}m"
    return ("-" if neg else "") + out + sec
