"""Kubernetes quantities and Go durations: the exact values and the upstream error texts.

Quantities follow k8s.io/apimachinery/pkg/api/resource (ParseQuantity); durations follow Go's
time.ParseDuration. A user writes these strings in YAML and reads these errors, so both the
numbers and the messages are part of the contract.
"""
from __future__ import annotations

from fractions import Fraction

import pytest

from gpusim.api.duration import DurationError, format_duration, parse_duration
from gpusim.api.quantity import ERR_FORMAT_WRONG, QuantityError, format_quantity, parse_quantity

# quantity.go ErrFormatWrong / ErrSuffix, verbatim.
UPSTREAM_FORMAT_WRONG = ("quantities must match the regular expression "
                         "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
UPSTREAM_SUFFIX = "unable to parse quantity's suffix"

Ki, Mi, Gi, Ti = 2**10, 2**20, 2**30, 2**40


@pytest.mark.parametrize("text, expected", [
    ("500m", Fraction(1, 2)),
    ("16Gi", 16 * Gi),
    ("1e3", Fraction(1000)),
    ("1.5", Fraction(3, 2)),
    ("0.1Ki", Fraction(1024, 10)),      # 102.4 bytes, exact (no float rounding)
    ("1", Fraction(1)),
    ("0", Fraction(0)),
    ("128", Fraction(128)),
    ("100Mi", 100 * Mi),
    ("1Ti", Ti),
    ("2k", Fraction(2000)),
    ("1M", Fraction(10**6)),
    ("1G", Fraction(10**9)),
    ("1E", Fraction(10**18)),           # "E" alone is exa, not an exponent
    ("1E3", Fraction(1000)),            # "E3" is a decimal exponent
    ("1e-3", Fraction(1, 1000)),
    ("250u", Fraction(250, 10**6)),
    ("5n", Fraction(5, 10**9)),
    ("+2", Fraction(2)),
    ("-1", Fraction(-1)),
    (".5", Fraction(1, 2)),
    ("1.", Fraction(1)),                # upstream allows "1." (and "1.G")
    (" 4 ", Fraction(4)),               # Quantity.UnmarshalJSON trims spaces
])
def test_parse_quantity(text, expected):
    got = parse_quantity(text)
    assert isinstance(got, Fraction)
    assert got == expected


@pytest.mark.parametrize("value, expected", [
    (8, Fraction(8)),
    (0.5, Fraction(1, 2)),     # YAML `cpu: 0.5` arrives as a float
    (0.1, Fraction(1, 10)),    # exact decimal, not the binary float 0.1000000000000000055...
])
def test_parse_quantity_numbers_from_yaml(value, expected):
    assert parse_quantity(value) == expected


@pytest.mark.parametrize("text, message", [
    ("abc", UPSTREAM_FORMAT_WRONG),
    ("", UPSTREAM_FORMAT_WRONG),
    ("1KiB", UPSTREAM_FORMAT_WRONG),
    ("1.2.3", UPSTREAM_FORMAT_WRONG),
    ("Gi", UPSTREAM_FORMAT_WRONG),
    ("1 Gi", UPSTREAM_FORMAT_WRONG),
    ("1Zi", UPSTREAM_FORMAT_WRONG),
    ("1K", UPSTREAM_SUFFIX),        # kilo is lower-case "k"
    ("1kk", UPSTREAM_SUFFIX),
    ("1mi", UPSTREAM_SUFFIX),
    ("1Kii", UPSTREAM_SUFFIX),
])
def test_parse_quantity_errors(text, message):
    with pytest.raises(QuantityError) as exc:
        parse_quantity(text)
    assert str(exc.value) == message
    assert isinstance(exc.value, ValueError)


def test_bool_is_not_a_quantity():
    # YAML `nvidia.com/gpu: yes` is a boolean; it must not silently become 1.
    with pytest.raises(QuantityError):
        parse_quantity(True)


def test_error_text_is_upstreams():
    assert ERR_FORMAT_WRONG == UPSTREAM_FORMAT_WRONG


@pytest.mark.parametrize("value, binary, text", [
    (Fraction(1, 2), False, "500m"),
    (Fraction(8), False, "8"),
    (Fraction(0), True, "0"),
    (16 * Gi, True, "16Gi"),
    (Ti, True, "1Ti"),
    (1536 * Mi, True, "1536Mi"),
    (Fraction(1000), True, "1000"),
])
def test_format_quantity(value, binary, text):
    assert format_quantity(value, binary=binary) == text
    assert parse_quantity(text) == value


# --- Go durations ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text, seconds", [
    ("90s", 90.0),
    ("1h30m", 5400.0),
    ("1.5h", 5400.0),
    ("300ms", 0.3),
    ("0", 0.0),
    ("-0", 0.0),
    ("0s", 0.0),
    ("10m", 600.0),
    ("2h", 7200.0),
    ("1h1m1s", 3661.0),
    ("1m30.5s", 90.5),
    (".5s", 0.5),
    ("1.s", 1.0),
    ("+5s", 5.0),
    ("-1m", -60.0),
    ("1500us", 0.0015),
    ("1500µs", 0.0015),    # U+00B5 micro sign
    ("1500μs", 0.0015),    # U+03BC Greek mu
    ("250ns", 250e-9),
    ("1h0m0s", 3600.0),
])
def test_parse_duration(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("text, message", [
    ("1", 'time: missing unit in duration "1"'),
    ("1.5", 'time: missing unit in duration "1.5"'),
    ("00", 'time: missing unit in duration "00"'),      # only "0" may omit the unit
    ("1h30", 'time: missing unit in duration "1h30"'),
    ("1x", 'time: unknown unit "x" in duration "1x"'),
    ("10 m", 'time: unknown unit " m" in duration "10 m"'),
    ("1d", 'time: unknown unit "d" in duration "1d"'),   # Go has no days
    ("1e3s", 'time: unknown unit "e" in duration "1e3s"'),
    ("x", 'time: invalid duration "x"'),
    ("", 'time: invalid duration ""'),
    ("-", 'time: invalid duration "-"'),
    (".s", 'time: invalid duration ".s"'),
    ("h", 'time: invalid duration "h"'),
    ("1h-5m", 'time: unknown unit "h-" in duration "1h-5m"'),   # Go's unit runs to the next digit or '.'
    ("1h.", 'time: invalid duration "1h."'),
])
def test_parse_duration_errors(text, message):
    with pytest.raises(DurationError) as exc:
        parse_duration(text)
    assert str(exc.value) == message


def test_duration_that_is_not_a_string():
    # YAML `duration: 90` is an int; Go would not accept a bare number either.
    with pytest.raises(DurationError, match=r'^time: invalid duration "90"$'):
        parse_duration(90)


@pytest.mark.parametrize("seconds, text", [
    (0, "0s"),
    (90, "1m30s"),
    (5400, "1h30m0s"),
    (1.5, "1.5s"),
    (0.3, "300ms"),
    (3661, "1h1m1s"),
])
def test_format_duration_is_gos_string(seconds, text):
    assert format_duration(seconds) == text
    assert parse_duration(text) == pytest.approx(seconds)
