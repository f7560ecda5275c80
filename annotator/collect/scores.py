"""The one score parser: the rater's form and ``ratings import`` accept the same scores.

The check works on the decimal text, not on a float, so that "2.35" on a
scale with step 0.01 is accepted exactly and "2.355" is refused for having
one decimal too many, with no binary rounding in between.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..models import Scale

__all__ = ["ScoreError", "parse_score", "format_number", "scale_hint", "scale_range"]

# Plain decimals only: no exponents, no thousands separators. One comma is
# read as a decimal comma, as many raters type it.
_DECIMAL = re.compile(r"^[+-]?(\d+([.,]\d*)?|[.,]\d+)$")
# Scores written by programs (LLM judges) may also use exponents ("1e-05").
_MACHINE = re.compile(r"^[+-]?(\d+([.,]\d*)?|[.,]\d+)([eE][+-]?\d{1,4})?$")
_NOT_FINITE = re.compile(r"^[+-]?(nan|inf|infinity)$", re.IGNORECASE)
MAX_LENGTH = 40


class ScoreError(ValueError):
    """A score the scale does not allow.

    ``str()`` is the sentence shown to a rater, ending with the scale's range
    (:func:`scale_hint`). ``problem`` is the bare problem ("“abc” is not a
    number"), for messages that say themselves where it is, as the imports do
    (file, line, column, then :func:`scale_range`).
    """

    def __init__(self, problem: str, hint: str, *, shown: str | None = None) -> None:
        self.problem = problem
        super().__init__(f"{shown or problem}. {hint}")


def format_number(value: float) -> str:
    """A scale bound or step as a person writes it: 5, 0.01, 2.5."""
    text = format(Decimal(repr(float(value))).normalize(), "f")
    return "0" if text in ("-0", "") else text


def _decimals(value: Decimal) -> int:
    exponent = value.as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def scale_range(scale: Scale, *, any_precision: bool = False) -> str:
    """ "from 0 to 5 in steps of 0.01" (without the steps for ``any_precision``)."""
    text = f"from {format_number(scale.min)} to {format_number(scale.max)}"
    return text if any_precision else f"{text} in steps of {format_number(scale.step)}"


def scale_hint(scale: Scale) -> str:
    """The allowed range in words, repeated in every error message a rater sees."""
    return f"Enter a number {scale_range(scale)}."


def _exact(value: float) -> Decimal:
    return Decimal(repr(float(value)))


def parse_score(raw: str | None, scale: Scale, *, any_precision: bool = False) -> float:
    """The score as a float, or :class:`ScoreError` saying what is wrong.

    ``any_precision`` is for scores written by programs (stored LLM judge
    scores, often means over samples or over token probabilities): any number
    of decimals and exponents ("1e-05") are accepted, the bounds still apply.
    """
    hint = f"Enter a number {scale_range(scale, any_precision=any_precision)}."
    text = (raw or "").strip()
    if not text:
        raise ScoreError("the score is empty", hint, shown="Please enter a score")
    if len(text) > MAX_LENGTH:
        raise ScoreError(
            f"the score is longer than {MAX_LENGTH} characters",
            hint,
            shown="That is too long to be a score",
        )
    if _NOT_FINITE.match(text):
        raise ScoreError(f"“{text}” is not a finite number", hint)
    if not (_MACHINE if any_precision else _DECIMAL).match(text):
        raise ScoreError(f"“{text}” is not a number", hint)
    try:
        value = Decimal(text.replace(",", "."))
    except InvalidOperation:  # pragma: no cover - the patterns admit only decimals
        raise ScoreError(f"“{text}” is not a number", hint) from None
    low, high, step = _exact(scale.min), _exact(scale.max), _exact(scale.step)
    if value < low or value > high:
        raise ScoreError(f"{text} is outside the scale", hint)
    if not any_precision:
        allowed = _decimals(step)
        if _decimals(value.normalize()) > allowed:
            places = "no decimals" if allowed == 0 else f"at most {allowed} decimal(s)"
            raise ScoreError(f"{text} has too many decimals: use {places}", hint)
        if (value - low) % step != 0:
            raise ScoreError(f"{text} is not on a step of the scale", hint)
    # "+ 0.0" turns a typed "-0" into 0.0.
    return float(value) + 0.0
