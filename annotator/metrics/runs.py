"""Combining an LLM judge's repeated runs into one score per item (design choices ``002_*``).

A model scored several times (runs) per item gives several values; a statistic needs
one column per judge. How they are combined is a choice, stated in every export and
report, not a hidden mean. Runs at different temperatures are never combined: greedy
(temperature 0) and sampled scores estimate different things, so :func:`aggregate_runs`
refuses a model with scores at several temperatures.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from ._names import RUN_SEPARATOR, RUNS

__all__ = [
    "RUNS",
    "RUN_SEPARATOR",
    "aggregate_run_columns",
    "aggregate_run_dicts",
    "aggregate_runs",
    "majority",
    "split_run_label",
]


def majority(values: np.ndarray) -> float:
    """The most frequent value; ties: the median of the tied values.

    On fractional scores where every value differs, every value ties, so the result is
    the median. NaN values are ignored; all NaN gives NaN.

    Parameters
    ----------
    values : array_like
        One item's scores over the runs.

    Returns
    -------
    float
    """
    arr = np.asarray(values, dtype=float)
    arr = arr[~np.isnan(arr)]
    if arr.size == 0:
        return math.nan
    found, counts = np.unique(arr, return_counts=True)
    return float(np.median(found[counts == counts.max()]))


def _temperature_key(value: float) -> str:
    return "not recorded" if pd.isna(value) else f"{float(value):g}"


def aggregate_runs(
    scores: pd.DataFrame,
    *,
    how: str = "mean",
    item: str = "item",
    model: str = "model",
    run: str = "run",
    value: str = "value",
    temperature: str | None = "temperature",
) -> pd.DataFrame:
    """Items x judges: each model's runs combined by ``how``.

    Parameters
    ----------
    scores : pandas.DataFrame
        Long scores, one row per (item, model, run).
    how : {"mean", "median", "majority", "first", "each"}, keyword-only
        ``mean`` (default; the mean of sampled scores agrees best with humans, design
        choice 002), ``median``, ``majority`` (:func:`majority`: the mode, ties broken
        by the median of the tied values), ``first`` (per item, the score of the run
        that appears first in ``scores``: import order), ``each`` (no combination: one
        column per run, named ``MODEL#RUN``).
    item, model, run, value : str, keyword-only
        Column names.
    temperature : str or None, keyword-only
        The temperature column; None: the caller has already kept one temperature.

    Returns
    -------
    pandas.DataFrame
        Items (index, in order of first appearance) x models (columns, sorted), NaN
        where a model has no score of the item.

    Raises
    ------
    ValueError
        If ``how`` is unknown, a column is missing, or (``temperature`` given) a model
        has scores at more than one temperature (NaN counts as one temperature).

    References
    ----------
    Yamauchi, Y., Yano, T. and Oyamada, M. (2025). An Empirical Study of LLM-as-a-Judge:
    How Design Choices Impact Evaluation Reliability. Table 2: the mean of sampled
    scores correlates best with humans.

    Examples
    --------
    >>> import pandas as pd
    >>> scores = pd.DataFrame({"item": ["x", "x", "x"], "model": ["m"] * 3,
    ...                        "run": ["0", "1", "2"], "value": [4.0, 5.0, 5.0]})
    >>> aggregate_runs(scores, how="mean", temperature=None).loc["x", "m"].round(3)
    np.float64(4.667)
    >>> aggregate_runs(scores, how="majority", temperature=None).loc["x", "m"]
    np.float64(5.0)
    >>> list(aggregate_runs(scores, how="each", temperature=None).columns)
    ['m#0', 'm#1', 'm#2']
    """
    if how not in RUNS:
        raise ValueError(f"how must be one of {', '.join(RUNS)}; got {how!r}")
    needed = [item, model, run, value] + ([temperature] if temperature else [])
    absent = [c for c in needed if c not in scores.columns]
    if absent:
        raise ValueError(
            f"scores lacks the {'column' if len(absent) == 1 else 'columns'} {', '.join(absent)}"
        )
    if temperature and len(scores):
        # Labelled once per (model, temperature), not once per score.
        pairs = scores[[model, temperature]].drop_duplicates()
        labels = pairs[temperature].map(_temperature_key)
        per_model = labels.groupby(pairs[model], sort=True).unique()
        for name, found in per_model.items():
            if len(found) > 1:
                raise ValueError(
                    f"model {name!r} has scores at several temperatures "
                    f"({', '.join(sorted(found))}); runs at different temperatures are "
                    "never combined: keep one temperature first"
                )
    items = pd.Index(pd.unique(scores[item]), name=item)
    frame = scores[[item, model, run, value]].copy()
    frame[value] = frame[value].astype(float)
    if how == "each":
        frame["column"] = frame[model].astype(str) + RUN_SEPARATOR + frame[run].astype(str)
        wide = frame.pivot(index=item, columns="column", values=value)
    elif how == "first":
        # Keep each (item, model)'s earliest row: the frame's order is the import order.
        firsts = frame.drop_duplicates([item, model], keep="first")
        wide = firsts.pivot(index=item, columns=model, values=value)
    else:
        grouped = frame.groupby([item, model], sort=False)[value]
        combined = grouped.agg(majority) if how == "majority" else grouped.agg(how)
        wide = combined.unstack(model)
    wide = wide.reindex(index=items, columns=sorted(wide.columns)).astype(float)
    wide.columns.name = model
    return wide


def split_run_label(column: str) -> tuple[str, str | None]:
    """``"gpt#2"`` -> ``("gpt", "2")``; a name without ``#`` -> ``(name, None)``."""
    name, sep, run = str(column).rpartition(RUN_SEPARATOR)
    return (name, run) if sep else (str(column), None)


def aggregate_run_columns(wide: pd.DataFrame, *, how: str = "mean") -> pd.DataFrame:
    """Combine ``MODEL#RUN`` columns (an ``--runs each`` export) into one per model.

    Columns without ``#`` are already one per model and are kept as they are. The
    runs of an export are at one temperature (the export keeps one), so none is checked.

    Parameters
    ----------
    wide : pandas.DataFrame
        Items x judges.
    how : str, keyword-only
        As in :func:`aggregate_runs`; ``each`` returns ``wide`` unchanged.

    Returns
    -------
    pandas.DataFrame
    """
    if how not in RUNS:
        raise ValueError(f"how must be one of {', '.join(RUNS)}; got {how!r}")
    split = {c: split_run_label(c) for c in wide.columns}
    if how == "each" or all(run is None for _, run in split.values()):
        return wide
    long = (
        wide.rename_axis(index="item")
        .reset_index()
        .melt(id_vars="item", var_name="column", value_name="value")
    )
    long["model"] = long["column"].map(lambda c: split[c][0])
    long["run"] = long["column"].map(lambda c: split[c][1] or "")
    long = long.dropna(subset=["value"])
    out = aggregate_runs(long, how=how, temperature=None)
    out = out.reindex(index=wide.index)
    out.index.name = wide.index.name
    return out


def aggregate_run_dicts(
    by_judge: Mapping[str, Mapping[str, float]], *, how: str = "mean"
) -> dict[str, dict[str, float]]:
    """:func:`aggregate_run_columns` on ``{judge: {item: score}}`` (the alttest export).

    Without a ``MODEL#RUN`` key (or with ``how="each"``) the dictionaries come back as
    they are.
    """
    if how not in RUNS:
        raise ValueError(f"how must be one of {', '.join(RUNS)}; got {how!r}")
    if how == "each" or all(split_run_label(k)[1] is None for k in by_judge):
        return {str(k): dict(v) for k, v in by_judge.items()}
    wide = pd.DataFrame({k: pd.Series(v, dtype=float) for k, v in by_judge.items()})
    wide = aggregate_run_columns(wide, how=how)
    out = {}
    for judge in wide.columns:
        column = wide[judge].dropna()
        out[str(judge)] = {str(i): float(v) for i, v in column.items()}
    return out
