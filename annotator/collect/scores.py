"""The one score parser: the rater's form and ``ratings import`` accept the same scores.

The check works on the decimal text, not on a float, so that "2.35" on a
scale with step 0.01 is accepted exactly and "2.355" is refused for having
one decimal too many, with no binary rounding in between.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import TYPE_CHECKING

from ..words import plural

if TYPE_CHECKING:
    from ..models import Scale

__all__ = [
    "ScoreError",
    "parse_score",
    "format_number",
    "scale_hint",
    "scale_range",
    "attention_passed",
    "criterion_gold_share",
]

# Plain decimals only: no exponents, no thousands separators. One comma is
# read as a decimal comma, as many raters type it.
# ASCII digits only (re.ASCII): ``\d`` and ``Decimal`` also read other
# scripts' digits ("٣", "３", "𝟑"), which the README does not promise.
_DECIMAL = re.compile(r"^[+-]?(\d+([.,](?P<a>\d*))?|[.,](?P<b>\d+))$", re.ASCII)
# Scores written by programs (LLM judges) may also use exponents ("1e-05").
_MACHINE = re.compile(r"^[+-]?(\d+([.,]\d*)?|[.,]\d+)([eE][+-]?\d{1,4})?$", re.ASCII)
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


@lru_cache(maxsize=256)
def _bounds(low: float, high: float, step: float) -> tuple[Decimal, Decimal, Decimal, int]:
    # Cached: an import parses a score per row (180,000 in the benchmark).
    step_exact = Decimal(repr(float(step)))
    return Decimal(repr(float(low))), Decimal(repr(float(high))), step_exact, _decimals(step_exact)


def parse_score(raw: str | None, scale: Scale, *, any_precision: bool = False) -> float:
    """The score as a float, or :class:`ScoreError` saying what is wrong.

    ``any_precision`` is for scores written by programs (stored LLM judge
    scores, often means over samples or over token probabilities): any number
    of decimals and exponents ("1e-05") are accepted, the bounds still apply.
    """

    def error(problem: str, shown: str | None = None) -> ScoreError:
        hint = f"Enter a number {scale_range(scale, any_precision=any_precision)}."
        return ScoreError(problem, hint, shown=shown)

    text = (raw or "").strip()
    if not text:
        raise error("the score is empty", "Please enter a score")
    if len(text) > MAX_LENGTH:
        raise error(
            f"the score is longer than {MAX_LENGTH} characters", "That is too long to be a score"
        )
    match = (_MACHINE if any_precision else _DECIMAL).match(text)
    if match is None:
        if _NOT_FINITE.match(text):
            raise error(f"“{text}” is not a finite number")
        if any(char.isdigit() and char not in "0123456789" for char in text):
            raise error(f"“{text}” has digits other than 0-9: write the score with 0 to 9")
        raise error(f"“{text}” is not a number")
    try:
        value = Decimal(text.replace(",", "."))
    except InvalidOperation:  # pragma: no cover - the patterns admit only decimals
        raise error(f"“{text}” is not a number") from None
    low, high, step, allowed = _bounds(scale.min, scale.max, scale.step)
    if value < low or value > high:
        raise error(f"{text} is outside the scale")
    if not any_precision:
        # Typed decimals, trailing zeros aside ("4.50" has one).
        if len((match["a"] or match["b"] or "").rstrip("0")) > allowed:
            places = "no decimals" if allowed == 0 else f"at most {plural(allowed, 'decimal')}"
            raise error(f"{text} has too many decimals: use {places}")
        if (value - low) % step != 0:
            raise error(f"{text} is not on a step of the scale")
    # "+ 0.0" turns a typed "-0" into 0.0.
    return float(value) + 0.0


def attention_passed(
    value: float, scale: Scale, gold: float | None, tolerance: float | None
) -> bool | None:
    """Whether a score passes an attention check; ``None`` without a gold score.

    The gold score is a share of the scale's range (0 = its minimum, 1 = its
    maximum), so one gold value serves every scale; the score passes within
    ``tolerance`` of it. data/frames.py applies the same rule to whole columns.
    """
    if gold is None or tolerance is None:
        return None
    share = (value - scale.min) / (scale.max - scale.min)
    return abs(share - gold) <= tolerance + 1e-9


def criterion_gold_share(
    gold: float | None, criterion_gold: dict[str, float] | None, criterion: str
) -> float | None:
    """The gold share of an attention check on ``criterion``: the item's
    ``gold_score.CRITERION`` where it sets one, else its ``gold_score``."""
    if gold is None or not criterion_gold:
        return gold
    return criterion_gold.get(criterion, gold)
