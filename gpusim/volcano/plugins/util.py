"""Plugin argument helpers (mirrors volcano-sh/volcano pkg/scheduler/framework/arguments.go GetInt/GetFloat64)."""
from __future__ import annotations


def arg_float(args: dict, key: str, default: float) -> float:
    """framework.Arguments.GetFloat64: a missing or unparsable value keeps the default."""
    try:
        return float(args[key]) if key in args else default
    except (TypeError, ValueError):
        return default


def arg_int(args: dict, key: str, default: int) -> int:
    try:
        return int(args[key]) if key in args else default
    except (TypeError, ValueError):
        return default


def format_resource_names(prefix: str, verb: str, names: list[str]) -> str:
    """plugins/util.FormatResourceNames: "<prefix>: <verb> <name>, <verb> <name>" (just the prefix without names)."""
    if not names:
        return prefix
    return f"{prefix}: " + ", ".join(f"{verb} {n}" for n in names)
