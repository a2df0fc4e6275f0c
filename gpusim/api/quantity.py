"""Kubernetes resource quantities ("500m", "16Gi", "1e3").

Mirrors k8s.io/apimachinery/pkg/api/resource (quantity.go): a quantity is a signed decimal
number followed by a binary suffix (Ki Mi Gi Ti Pi Ei), a decimal SI suffix (n u m "" k M G T
P E) or a decimal exponent (e3, E-2). Values are kept exact as ``fractions.Fraction``.
"""
from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

# quantity.go: ErrFormatWrong's text and the regular expression it names.
QUANTITY_REGEX = r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG = f"quantities must match the regular expression '{QUANTITY_REGEX}'"

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
            "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
            "P": Fraction(10**15), "E": Fraction(10**18)}
_NUMBER = re.compile(r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)$")
_EXPONENT = re.compile(r"^[eE][+-]?[0-9]+$")


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity."""


# Quantities are exact fractions, but an exponent like 1e999999999 would be expanded into a billion digits.
# gpusim caps what it can represent (a decimal magnitude of 10^±40, far past any real capacity), and the loader
# refuses amounts above MAX_AMOUNT base units, so no computation overflows or silently wraps.
MAX_MAGNITUDE = 40
MAX_AMOUNT = 2**53   # 8 PiB of memory, 9·10^15 devices or cores: above it, float and int64 arithmetic stop being exact


def parse_quantity(value: str | int | float) -> Fraction:
    """Parse a quantity into an exact number of base units (cores, bytes, devices)."""
    if isinstance(value, str):
        return _parse_text(value)
    return _parse(value)


@lru_cache(maxsize=8192)
def _parse_text(value: str) -> Fraction:
    return _parse(value)


def _parse(value: str | int | float) -> Fraction:
    if isinstance(value, bool):
        raise QuantityError(ERR_FORMAT_WRONG)
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        return Fraction(str(value))
    s = str(value).strip()
    m = re.match(QUANTITY_REGEX, s)
    if not m:
        raise QuantityError(ERR_FORMAT_WRONG)
    number, suffix = m.group(1), m.group(2)
    if not _NUMBER.match(number):
        raise QuantityError(ERR_FORMAT_WRONG)
    digits = len(number.lstrip("+-").split(".")[0].lstrip("0"))
    if _EXPONENT.match(suffix) and digits + int(suffix[1:]) > MAX_MAGNITUDE:
        raise QuantityError(f"quantity too large: {number[:20]}{suffix[:20]} (gpusim handles magnitudes up to "
                            f"10^{MAX_MAGNITUDE})")
    if digits > MAX_MAGNITUDE:
        raise QuantityError(f"quantity too large: {digits} digits (gpusim handles magnitudes up to 10^{MAX_MAGNITUDE})")
    if _EXPONENT.match(suffix) and int(suffix[1:]) < -MAX_MAGNITUDE:
        suffix = f"e-{MAX_MAGNITUDE}"   # below any unit gpusim counts in (nano); the value rounds up from here
    base = Fraction(number)
    if suffix in _BINARY:
        return base * _BINARY[suffix]
    if suffix in _DECIMAL:
        return base * _DECIMAL[suffix]
    if _EXPONENT.match(suffix):
        return base * Fraction(10) ** int(suffix[1:])
    # quantity.go: ErrSuffix "unable to parse quantity's suffix"
    raise QuantityError("unable to parse quantity's suffix")


def format_quantity(value: Fraction, binary: bool = False) -> str:
    """Canonical-looking text for a quantity: integers plain, sub-units in milli, bytes in Ki/Mi/Gi when exact."""
    if value.denominator != 1:
        milli = value * 1000
        if milli.denominator == 1:
            return f"{milli.numerator}m"
        return str(float(value))
    n = value.numerator
    if binary and n:
        for suffix in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
            if n % _BINARY[suffix] == 0:
                return f"{n // _BINARY[suffix]}{suffix}"
    return str(n)
