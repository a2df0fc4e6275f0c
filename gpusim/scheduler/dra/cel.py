"""CEL device selectors (mirrors kubernetes staging/src/k8s.io/dynamic-resource-allocation/cel/compile.go).

Library: **cel-python** (PyPI ``cel-python``, import ``celpy``). Chosen over ``common-expression-language``
(Rust bindings) because it is pure Python, so it installs wherever gpusim does (no wheel per platform), and
it lets the environment add upstream's ``quantity()`` function and Quantity methods as plain Python callables.

The environment is upstream's: one variable ``device`` with
- ``device.driver`` (string);
- ``device.attributes[<domain>].<id>``: the device's attributes grouped by domain; an attribute published
  without a domain belongs to the driver's domain (``productName`` of ``gpu.nvidia.com`` is
  ``device.attributes["gpu.nvidia.com"].productName``). A domain with no attributes is an empty map, so
  ``device.attributes["other.example"].x`` fails with "no such key" as upstream's unknown-field error does;
  guard with ``has(...)``;
- ``device.capacity[<domain>].<id>``: a Quantity, compared with ``.compareTo(quantity("40Gi"))`` (−1/0/1),
  ``.isGreaterThan``, ``.isLessThan``, ``.asInteger()`` (k8s.io/apiserver/pkg/cel/library/quantity.go);
- ``device.allowMultipleAllocations`` (bool).
Gaps (documented, not emulated): ``version`` attributes are plain strings (upstream: a ``semver`` type with
``.compareTo``); no per-expression cost limit (upstream: ``CELSelectorExpressionMaxCost`` = 1 000 000).
An expression that does not compile, does not return a bool, or fails at run time is an error, which the
DynamicResources plugin reports as a Filter ``Error`` as upstream does.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, Callable

import celpy
from celpy import celtypes

from ...api.quantity import QuantityError, parse_quantity
from ...api.resource_k8s_io_v1 import Device


class CELError(ValueError):
    """Compile or evaluation error of one selector; the message names the expression."""


class Quantity(celtypes.StringType):
    """A Kubernetes quantity inside CEL (string-backed so cel-python accepts it; compared by value)."""

    def __new__(cls, text: str):
        obj = super().__new__(cls, text)
        try:
            obj.amount = parse_quantity(text)
        except QuantityError as e:
            raise celpy.CELEvalError(f"quantity: {e}") from None
        return obj


def _quantity(text: Any) -> Quantity:
    return Quantity(str(text))


def _amount(q: Any) -> Fraction:
    if not isinstance(q, Quantity):
        raise celpy.CELEvalError(f"no such overload: expected a quantity, got {type(q).__name__}")
    return q.amount


def _compare_to(a: Any, b: Any) -> celtypes.IntType:
    x, y = _amount(a), _amount(b)
    return celtypes.IntType((x > y) - (x < y))


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "quantity": _quantity,
    "compareTo": _compare_to,
    "isGreaterThan": lambda a, b: celtypes.BoolType(_amount(a) > _amount(b)),
    "isLessThan": lambda a, b: celtypes.BoolType(_amount(a) < _amount(b)),
    "asInteger": lambda a: celtypes.IntType(int(_amount(a))),
    "asApproximateFloat": lambda a: celtypes.DoubleType(float(_amount(a))),
}


class _DomainMap(celtypes.MapType):
    """attributes/capacity by domain: a missing domain is an empty map (upstream's lazy domain map)."""

    def __getitem__(self, key: Any) -> Any:
        if key not in self:
            return celtypes.MapType()
        return super().__getitem__(key)


def _cel_value(value: Any) -> Any:
    if isinstance(value, bool):
        return celtypes.BoolType(value)
    if isinstance(value, int):
        return celtypes.IntType(value)
    return celtypes.StringType(str(value))


def device_activation(driver: str, device: Device) -> dict[str, Any]:
    """The ``device`` variable for one device of a ResourceSlice of ``driver``."""
    attrs: dict[str, dict] = {}
    for name, a in sorted(device.attributes.items()):
        domain, _, ident = name.rpartition("/")
        attrs.setdefault(domain or driver, {})[ident] = _cel_value(a.value())
    caps: dict[str, dict] = {}
    for name, c in sorted(device.capacity.items()):
        domain, _, ident = name.rpartition("/")
        caps.setdefault(domain or driver, {})[ident] = Quantity(str(c.value))
    as_map = lambda d: _DomainMap({celtypes.StringType(k): celtypes.MapType(  # noqa: E731
        {celtypes.StringType(i): v for i, v in vs.items()}) for k, vs in d.items()})
    return {"device": celtypes.MapType({
        celtypes.StringType("driver"): celtypes.StringType(driver),
        celtypes.StringType("attributes"): as_map(attrs),
        celtypes.StringType("capacity"): as_map(caps),
        celtypes.StringType("allowMultipleAllocations"): celtypes.BoolType(bool(device.allow_multiple_allocations)),
    })}


@dataclass(frozen=True)
class Selector:
    expression: str
    program: Any

    def matches(self, driver: str, device: Device) -> bool:
        """DeviceMatches: True/False, or CELError on an evaluation error or a non-bool result."""
        try:
            out = self.program.evaluate(device_activation(driver, device))
        except celpy.CELEvalError as e:
            raise CELError(f"CEL runtime error: {_text(e)}") from None
        if isinstance(out, celpy.CELEvalError):
            raise CELError(f"CEL runtime error: {_text(out)}")
        if not isinstance(out, celtypes.BoolType):
            raise CELError(f"CEL result must be a bool, got {type(out).__name__}")
        return bool(out)


_MISSING_MEMBER = re.compile(r"no such member in mapping: '(.*)'")


def _text(e: Exception) -> str:
    """cel-python's message; a missing map member reads as cel-go's ``no such key: <name>``."""
    text = str(e.args[0]) if e.args else str(e)
    if text == "no such key" and len(e.args) > 2 and e.args[2]:
        return f"no such key: {e.args[2][0]}"
    m = _MISSING_MEMBER.search(text)
    return f"no such key: {m.group(1)}" if m else text


@lru_cache(maxsize=1024)
def compile_selector(expression: str) -> Selector:
    """GetCompiler().CompileCELExpression; compiled programs are cached by expression (as upstream's cache)."""
    env = celpy.Environment()
    try:
        ast = env.compile(expression)
    except celpy.CELParseError as e:
        raise CELError(f"compilation failed: {_text(e)}") from None
    return Selector(expression, env.program(ast, functions=FUNCTIONS))
