"""Strict decoding of YAML/JSON into typed dataclasses, like ``kubectl apply --validate=strict``.

Field names are the dataclass names in snake_case, read as camelCase (``node_name`` ↔ ``nodeName``);
``field(metadata={"json": "..."})`` overrides and ``{"required": True}`` makes a field required.
Unknown fields are an error (apimachinery's strict decoding: ``unknown field "spec.foo"``). ``null`` is read
as Go's encoding/json reads it: the field keeps its zero value (an absent field). Integers are Go's int64
(``{"bits": 32}`` in a field's metadata for upstream's int32 fields), with encoding/json's error text.
"""
from __future__ import annotations

import copy
import dataclasses
import functools
import operator
import types
import typing
from typing import Any, Callable, Optional

from .errors import FieldError, cut   # noqa: F401  cut is re-exported for the api modules


@functools.cache
def _field_getter(cls: type) -> Optional[Callable[[Any], tuple]]:
    """All the fields of dataclass ``cls`` in order, when each is an ``__init__`` argument and construction
    does nothing else (no ``__post_init__``)."""
    if not dataclasses.is_dataclass(cls) or hasattr(cls, "__post_init__"):
        return None
    fields = dataclasses.fields(cls)
    return operator.attrgetter(*(f.name for f in fields)) if len(fields) > 1 and all(f.init for f in fields) else None


def shallow_copy(obj: Any) -> Any:
    """``copy.copy`` of an API dataclass, through its constructor: several times faster for the slotted ones,
    which copy.copy rebuilds attribute by attribute through ``__reduce_ex__``."""
    get = _field_getter(type(obj))
    return type(obj)(*get(obj)) if get is not None else copy.copy(obj)


def json_name(f: dataclasses.Field) -> str:
    if "json" in f.metadata:
        return f.metadata["json"]
    head, *rest = f.name.rstrip("_").split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def required(**extra: Any) -> Any:
    return dataclasses.field(default=None, metadata={"required": True, **extra})


def _type_name(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


_ZERO = {str: "", int: 0, float: 0.0, bool: False}
INT32 = {"bits": 32}   # field metadata for upstream's int32 fields


def _check_int(value: int, bits: int, owner: str, path: str) -> None:
    """encoding/json refuses a number that does not fit the Go integer type."""
    if not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
        raise FieldError("", f"json: cannot unmarshal number {cut(str(value))} into Go struct field "
                             f"{owner}.{path} of type int{bits}")


def decode(tp: Any, value: Any, path: str = "", _owner: str = "", _bits: int = 64) -> Any:
    """Decode ``value`` as type ``tp``; raise FieldError naming the path on any mismatch."""
    origin = typing.get_origin(tp)
    if tp is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None:
            return None
        return decode(args[0], value, path, _owner, _bits) if len(args) == 1 else value
    if value is None:   # JSON null: the zero value
        if dataclasses.is_dataclass(tp):
            return decode(tp, {}, path)
        if origin is list:
            return []
        if origin is dict:
            return {}
        return _ZERO.get(tp)
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise FieldError(path, f"Invalid value: {_type_name(value)}: expected object")
        fields = {json_name(f): f for f in dataclasses.fields(tp)}
        hints = _hints(tp)
        kwargs = {}
        for key in value:
            if key not in fields:
                raise FieldError("", f'strict decoding error: unknown field "{_join(path, str(key))}"')
        for key, f in fields.items():
            if key in value and (value[key] is not None or not f.metadata.get("required")):
                if value[key] is None and f.default is not dataclasses.MISSING:
                    continue   # null keeps the field's default, as an absent field does
                kwargs[f.name] = decode(hints[f.name], value[key], _join(path, key), tp.__name__,
                                        f.metadata.get("bits", 64))
            elif f.metadata.get("required"):
                raise FieldError(_join(path, key), "Required value")
        return tp(**kwargs)
    if origin is list:
        (item,) = typing.get_args(tp)
        if not isinstance(value, list):
            raise FieldError(path, f"Invalid value: {_type_name(value)}: expected array")
        return [decode(item, v, f"{path}[{i}]", _owner, _bits) for i, v in enumerate(value)]
    if origin is dict:
        _, item = typing.get_args(tp)
        if not isinstance(value, dict):
            raise FieldError(path, f"Invalid value: {_type_name(value)}: expected object")
        return {str(k): decode(item, v, f"{path}[{k}]") for k, v in value.items()}
    if tp is bool:
        if not isinstance(value, bool):
            raise FieldError(path, f"Invalid value: {_type_name(value)}: expected boolean")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise FieldError(path, f"Invalid value: {_type_name(value)}: expected integer")
        _check_int(value, _bits, _owner or "object", path)
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise FieldError(path, f"Invalid value: {_type_name(value)}: expected number")
        try:
            out = float(value)
        except OverflowError:
            out = float("inf")
        if out != out or out in (float("inf"), float("-inf")):
            raise FieldError("", f"json: cannot unmarshal number {cut(str(value))} into Go struct field "
                                 f"{_owner or 'object'}.{path} of type float64")
        return out
    if tp is str:
        if not isinstance(value, str):
            raise FieldError(path, f"Invalid value: {_type_name(value)}: expected string")
        return value
    if tp is IntOrString:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise FieldError(path, f"Invalid value: {_type_name(value)}: expected string or number")
        return value
    raise TypeError(f"unsupported schema type {tp!r}")


class IntOrString:
    """Marker type for fields that take a string or a number (quantities, durations as numbers)."""


def encode(obj: Any) -> Any:
    """Dataclass → plain dict with camelCase keys, dropping None and empty containers."""
    if dataclasses.is_dataclass(obj):
        out = {}
        for f in dataclasses.fields(obj):
            v = encode(getattr(obj, f.name))
            if v is None or v == [] or v == {}:
                continue
            out[json_name(f)] = v
        return out
    if isinstance(obj, list):
        return [encode(v) for v in obj]
    if isinstance(obj, dict):
        return {k: encode(v) for k, v in obj.items()}
    return obj
