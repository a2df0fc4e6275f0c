"""Resource quantities as Kueue counts them (mirrors kueue pkg/resources: ResourceValue / ResourceQuantity).

Kueue keeps every quota and usage as an int64: ``cpu`` in milli-cores, every other resource in whole units
(``Quantity.Value()`` rounds up). Messages print them back as Quantities (``500m``, ``4``, ``16Gi`` is printed
as its plain value here: UNVERIFIED for binary suffixes, gpusim prints bytes as integers).
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from ..api.quantity import parse_quantity

CPU = "cpu"
PODS = "pods"

FlavorResource = tuple[str, str]    # (flavor, resource), resources.FlavorResource


def value(resource: str, q: Any) -> int:
    """resources.ResourceValue: cpu → MilliValue, everything else → Value (ceil). ``q`` is a quantity, or an
    amount already parsed (a container's effective requests, componenthelpers.resource.container_requests)."""
    f = q if isinstance(q, Fraction) else parse_quantity(q)
    return math.ceil(f * 1000) if resource == CPU else math.ceil(f)


def quantity(resource: str, v: int) -> str:
    """resources.ResourceQuantity(...).String() for the values gpusim produces."""
    if resource == CPU:
        if v % 1000 == 0:
            return str(v // 1000)
        return f"{v}m"
    return str(v)
