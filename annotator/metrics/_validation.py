"""Input checks shared by the metrics functions."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "as_float_array",
    "as_ratings_matrix",
    "as_scores",
    "first_non_number",
    "check_integer",
    "check_integers",
    "check_nan_policy",
    "check_probability",
    "counted",
    "json_float",
]


def counted(count: int, singular: str, plural_form: str | None = None) -> str:
    """ "1 item", "3 items": the count with the right form of its noun.

    As :func:`annotator.words.plural`, which metrics does not import (it imports
    nothing of the app)."""
    return f"{count} {singular if count == 1 else plural_form or singular + 's'}"


_SHAPES = {
    1: "1-D (one score per item)",
    2: "2-D (items x raters)",
}


def first_non_number(values: Any) -> tuple[Any, tuple[int, ...]] | None:
    """The first value (and its position) that is neither a number nor missing, if any.

    Numeric arrays and frames are not looked into; only inputs that hold strings or
    Python objects are, element by element.
    """
    import pandas as pd

    if hasattr(values, "to_numpy"):
        dtypes = values.dtypes if isinstance(values, pd.DataFrame) else [values.dtype]
        if all(pd.api.types.is_numeric_dtype(dtype) for dtype in dtypes):
            return None
        flat = values.to_numpy(dtype=object)
    else:
        try:
            if np.asarray(values).dtype.kind in "biuf":
                return None
            # As objects: numpy would turn [1, "a"] into the strings ["1", "a"].
            flat = np.asarray(values, dtype=object)
        except (TypeError, ValueError):  # ragged nested lists: left to the conversion
            return None
    for position, value in np.ndenumerate(flat):
        if value is None or value is pd.NA:
            continue
        if isinstance(value, str | bytes):
            return value, position
        try:
            float(value)
        except (TypeError, ValueError):
            return value, position
    return None


def as_float_array(values: Any, *, name: str, ndim: tuple[int, ...]) -> np.ndarray:
    """``values`` (array_like or pandas object) as a float64 array of one of ``ndim``.

    Missing values (NaN, None, pandas NA) become NaN. The ``ValueError`` of a bad input
    names the parameter ``name``: for a value that is not a number (a string, say, which
    numpy would otherwise convert, or fail on without saying where), for a shape that is
    not one of ``ndim`` (rather than flattening it silently) and for infinite values.
    """
    wanted = " or ".join(_SHAPES.get(d, f"{d}-D") for d in ndim)
    bad = first_non_number(values)
    if bad is not None:
        value, position = bad
        where = position[0] if len(position) == 1 else position
        raise ValueError(
            f"{name} must hold numbers (NaN for a missing score), got {value!r} at position {where}"
        )
    try:
        if hasattr(values, "to_numpy"):
            # pandas nullable dtypes carry pd.NA, which numpy cannot cast to float directly.
            arr = values.to_numpy(dtype=float, na_value=np.nan)
        else:
            arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be {wanted} numbers: {exc}") from exc
    if arr.ndim not in ndim:
        raise ValueError(f"{name} must be {wanted}, got an array of shape {arr.shape}")
    if np.isinf(arr).any():
        raise ValueError(f"{name} contains infinite values")
    return arr


def as_scores(values: Any, *, name: str) -> np.ndarray:
    """``values``: one number per item, as a 1-D float64 array (NaN for missing)."""
    return as_float_array(values, name=name, ndim=(1,))


def as_ratings_matrix(ratings: Any, *, name: str = "ratings") -> np.ndarray:
    """Return ``ratings`` (items x raters, array or DataFrame) as a float64 2-D array.

    Missing ratings (NaN, None, pandas NA) become NaN.
    """
    return as_float_array(ratings, name=name, ndim=(2,))


def check_nan_policy(nan_policy: str) -> None:
    if nan_policy not in ("raise", "omit"):
        raise ValueError(f"nan_policy must be 'raise' or 'omit', got {nan_policy!r}")


def check_probability(value: float, *, name: str) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a number strictly between 0 and 1") from exc
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be strictly between 0 and 1, got {value}")
    return value


def check_integers(values: Any, *, name: str, low: int) -> list[int]:
    """One integer or a sequence of integers, each at least ``low``, as a list."""
    values = [values] if isinstance(values, int | np.integer) else list(values)
    if not values or any(
        isinstance(v, bool) or not isinstance(v, int | np.integer) or v < low for v in values
    ):
        raise ValueError(f"{name} must be integers >= {low}, got {values!r}")
    return [int(v) for v in values]


def check_integer(value: Any, *, name: str, low: int) -> int:
    """One integer, at least ``low``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def json_float(value: float | None) -> float | None:
    """A float for JSON: NaN (and None) become None."""
    return None if value is None or value != value else float(value)
