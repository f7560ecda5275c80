"""Timestamps read from the database in a form pandas converts in one pass."""

from __future__ import annotations

import pandas as pd
from sqlalchemy import Float, String, cast, func, type_coerce

__all__ = ["raw_time", "utc_times"]


def raw_time(column, dialect: str):
    """The timestamp in a form pandas converts in one vectorised pass.

    Converting 180,000 values one by one through the column type (or, on
    PostgreSQL, parsing the driver's datetime objects) took most of study_frames'
    time. SQLite stores ISO text, read as it is; PostgreSQL gives seconds since
    the epoch as a double (microseconds survive: 2e9 s needs 31 of its 52 bits).
    """
    if dialect == "postgresql":
        return cast(func.extract("epoch", column), Float)
    return type_coerce(column, String)


def utc_times(series: pd.Series) -> pd.Series:
    """UTC timestamps from ISO text (SQLite), epoch seconds (PostgreSQL) or datetimes."""
    if series.empty:
        return pd.Series(pd.DatetimeIndex([], tz="UTC"), index=series.index)
    present = series.dropna()
    if len(present) and isinstance(present.iloc[0], float | int):
        seconds = pd.to_numeric(series, errors="raise").astype(float)
        return pd.to_datetime(seconds, unit="s", utc=True).dt.round("us")
    if len(present) and isinstance(present.iloc[0], str):
        return pd.to_datetime(series, utc=True, format="ISO8601")
    return pd.to_datetime(series, utc=True)
