"""Checking a typed score against its scale.

The check works on the decimal text, not on a float, so that "2.35" on a
scale with step 0.01 is accepted exactly and "2.355" is refused for having
one decimal too many, with no binary rounding in between.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from ..models import Scale

__all__ = ["ScoreError", "parse_score", "format_number", "scale_hint"]

# Plain decimals only: no exponents, no thousands separators. One comma is
# read as a decimal comma, as many raters type it.
_DECIMAL = re.compile(r"^[+-]?(\d+([.,]\d*)?|[.,]\d+)$")
_NOT_FINITE = re.compile(r"^[+-]?(nan|inf|infinity)$", re.IGNORECASE)
MAX_LENGTH = 40


class ScoreError(ValueError):
    """A score that cannot be stored; the message is shown to the rater."""


def format_number(value: float) -> str:
    """A scale bound or step as a person writes it: 5, 0.01, 2.5."""
    text = format(Decimal(repr(float(value))).normalize(), "f")
    return "0" if text in ("-0", "") else text


def _decimals(value: Decimal) -> int:
    exponent = value.as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def scale_hint(scale: Scale) -> str:
    """The allowed range in words, repeated in every error message."""
    return (
        f"Enter a number from {format_number(scale.min)} to {format_number(scale.max)} "
        f"in steps of {format_number(scale.step)}."
    )


@dataclass(frozen=True)
class _Bounds:
    low: Decimal
    high: Decimal
    step: Decimal


def _bounds(scale: Scale) -> _Bounds:
    return _Bounds(
        Decimal(repr(float(scale.min))),
        Decimal(repr(float(scale.max))),
        Decimal(repr(float(scale.step))),
    )


def parse_score(raw: str | None, scale: Scale) -> float:
    """The score as a float, or :class:`ScoreError` saying what is wrong."""
    hint = scale_hint(scale)
    text = (raw or "").strip()
    if not text:
        raise ScoreError(f"Please enter a score. {hint}")
    if len(text) > MAX_LENGTH:
        raise ScoreError(f"That is too long to be a score. {hint}")
    if _NOT_FINITE.match(text):
        raise ScoreError(f"“{text}” is not a finite number. {hint}")
    if not _DECIMAL.match(text):
        raise ScoreError(f"“{text}” is not a number. {hint}")
    try:
        value = Decimal(text.replace(",", "."))
    except InvalidOperation:  # pragma: no cover - the pattern admits only decimals
        raise ScoreError(f"“{text}” is not a number. {hint}") from None
    bounds = _bounds(scale)
    if value < bounds.low or value > bounds.high:
        raise ScoreError(f"{text} is outside the scale. {hint}")
    allowed = _decimals(bounds.step)
    if _decimals(value.normalize()) > allowed:
        places = "no decimals" if allowed == 0 else f"at most {allowed} decimal(s)"
        raise ScoreError(f"{text} has too many decimals: use {places}. {hint}")
    if (value - bounds.low) % bounds.step != 0:
        raise ScoreError(f"{text} is not on a step of the scale. {hint}")
    # "+ 0.0" turns a typed "-0" into 0.0.
    return float(value) + 0.0
