"""Input checks shared by the metrics functions."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "as_ratings_matrix",
    "check_integer",
    "check_integers",
    "check_nan_policy",
    "check_probability",
    "json_float",
]


def as_ratings_matrix(ratings: Any, *, name: str = "ratings") -> np.ndarray:
    """Return ``ratings`` (items x raters, array or DataFrame) as a float64 2-D array.

    Missing ratings (NaN, None, pandas NA) become NaN.
    """
    if hasattr(ratings, "to_numpy"):
        # pandas nullable dtypes carry pd.NA, which numpy cannot cast to float directly.
        try:
            values = ratings.to_numpy(dtype=float, na_value=np.nan)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must hold numbers (NaN for a missing rating)") from exc
    else:
        try:
            values = np.asarray(ratings, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must hold numbers (NaN for a missing rating)") from exc
    if values.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D items x raters array, got {values.ndim} dimension(s)"
        )
    if np.isinf(values).any():
        raise ValueError(f"{name} contains infinite values")
    return values


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
