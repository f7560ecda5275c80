"""Words shown to people: counts with the right plural, lists without Python's brackets.

Every page, message and note that counts something says "1 block" and "3 blocks",
never "block(s)", and names what it lists as "0-5, 0-10", never ``['0-5', '0-10']``.
The web's templates use these as the filters ``plural`` and ``listing``.
"""

from __future__ import annotations

from collections.abc import Iterable
from numbers import Integral, Real

__all__ = ["plural", "noun", "listing", "number"]


def number(value: Real) -> str:
    """``3`` as "3", ``3.0`` as "3", ``0.5`` as "0.5", ``1234567`` as "1234567"
    (a whole number in full, else ``%g``: no trailing zeros)."""
    if isinstance(value, bool):
        raise TypeError(f"value must be a number, got {value!r}")
    if isinstance(value, Integral):
        return str(int(value))
    as_float = float(value)
    return str(int(as_float)) if as_float.is_integer() else f"{as_float:g}"


def plural(count: Real, singular: str, plural_form: str | None = None) -> str:
    """The count and its noun: ``plural(1, "rating")`` is "1 rating", ``plural(3,
    "rating")`` "3 ratings", ``plural(0.5, "day")`` "0.5 days", ``plural(2,
    "quantity", "quantities")`` "2 quantities".

    English takes the singular for exactly one and the plural otherwise (0, 0.5, 2).
    """
    return f"{number(count)} {noun(count, singular, plural_form)}"


def noun(count: Real, singular: str, plural_form: str | None = None) -> str:
    """The noun alone, as :func:`plural` would put it after ``count``: "unknown
    scale '1-7'", "unknown scales '1-7', '2-9'"."""
    return singular if count == 1 else plural_form or singular + "s"


def listing(values: Iterable[object], *, sep: str = ", ") -> str:
    """The values' text joined by ``sep``: ``listing(["0-5", "0-10"])`` is "0-5, 0-10"
    (never the list's repr, ``['0-5', '0-10']``)."""
    return sep.join(str(value) for value in values)
