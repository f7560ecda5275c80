"""The ``matrix`` export (items x raters CSV): reading it into human and LLM
DataFrames, and finding its largest complete crossed block."""

from __future__ import annotations

from dataclasses import dataclass
from os import PathLike
from typing import IO

import numpy as np
import pandas as pd

from ._csv_escape import unescape_cell
from ._names import LLM_PREFIX

__all__ = [
    "LLM_PREFIX",
    "RatingMatrix",
    "largest_complete_block",
    "read_matrix",
    "split_matrix",
]

_ID_COLUMNS = ("item_id", "benchmark")


@dataclass(frozen=True)
class RatingMatrix:
    """The ``matrix`` export split into its parts.

    Attributes
    ----------
    humans : pandas.DataFrame
        Items x human raters (columns: rater codes), indexed by ``item_id``, NaN for a
        missing rating.
    llm : pandas.DataFrame
        Items x models (columns: model names without the ``llm:`` prefix).
    benchmark : pandas.Series
        Benchmark of each item (empty strings when the export has no such column).
    """

    humans: pd.DataFrame
    llm: pd.DataFrame
    benchmark: pd.Series

    def ratings(self, *, include_llm: bool = False) -> pd.DataFrame:
        """Items x raters: the human columns, then the ``llm:MODEL`` columns if asked."""
        if not include_llm:
            return self.humans
        return pd.concat([self.humans, self.llm.add_prefix(LLM_PREFIX)], axis=1)

    def subset(self, benchmark: str) -> RatingMatrix:
        """The items of one benchmark."""
        mask = (self.benchmark == benchmark).to_numpy()
        if not mask.any():
            known = ", ".join(sorted(self.benchmark.unique()))
            raise ValueError(f"benchmark {benchmark!r} not in the matrix (known: {known})")
        return RatingMatrix(self.humans[mask], self.llm[mask], self.benchmark[mask])


def split_matrix(frame: pd.DataFrame) -> RatingMatrix:
    """Split a ``matrix`` export already read into a DataFrame.

    Parameters
    ----------
    frame : pandas.DataFrame
        Columns ``item_id``, ``benchmark`` (optional), one column per human rater code,
        one ``llm:MODEL`` column per model.

    Returns
    -------
    RatingMatrix

    Raises
    ------
    ValueError
        If ``item_id`` is missing or duplicated, or a rating is not a number.
    """
    if "item_id" not in frame.columns:
        raise ValueError("the matrix needs an 'item_id' column")
    ids = frame["item_id"].astype(str)
    if ids.duplicated().any():
        raise ValueError(f"item_id is duplicated: {ids[ids.duplicated()].iloc[0]!r}")
    index = pd.Index(ids, name="item_id")
    if "benchmark" in frame.columns:
        benchmark = frame["benchmark"].fillna("").astype(str)
    else:
        benchmark = pd.Series([""] * len(frame))
    benchmark = pd.Series(benchmark.to_numpy(), index=index, name="benchmark")
    rating_cols = [c for c in frame.columns if c not in _ID_COLUMNS]

    def numeric(cols: list[str], names: list[str]) -> pd.DataFrame:
        out = {}
        for col, name in zip(cols, names, strict=True):
            try:
                out[name] = pd.to_numeric(frame[col], errors="raise").astype(float).to_numpy()
            except (TypeError, ValueError) as exc:
                raise ValueError(f"column {col!r} holds a rating that is not a number") from exc
        return pd.DataFrame(out, index=index, columns=names, dtype=float)

    human_cols = [str(c) for c in rating_cols if not str(c).startswith(LLM_PREFIX)]
    llm_cols = [str(c) for c in rating_cols if str(c).startswith(LLM_PREFIX)]
    humans = numeric(human_cols, human_cols)
    llm = numeric(llm_cols, [c[len(LLM_PREFIX) :] for c in llm_cols])
    return RatingMatrix(humans=humans, llm=llm, benchmark=benchmark)


def read_matrix(source: str | PathLike[str] | IO[str]) -> RatingMatrix:
    """Read the ``matrix`` export CSV into human and LLM DataFrames.

    Empty cells are missing ratings (NaN). Rater codes and item ids are read as
    strings, so codes such as ``007`` keep their leading zeros; the ``'`` the
    export puts before a code or id starting with ``=``, ``+``, ``-``, ``@``
    (:mod:`annotator.data.csv_escape`) is taken off.

    Parameters
    ----------
    source : path or file-like
        The CSV file.

    Returns
    -------
    RatingMatrix

    Raises
    ------
    ValueError
        If the file lacks ``item_id`` or holds a non-numeric rating.
    """
    frame = pd.read_csv(source, dtype=str, keep_default_na=False, na_values=[""])
    # The export escapes text cells a spreadsheet would run as formulas
    # (annotator.data.csv_escape): rater codes, item ids and benchmarks.
    frame.columns = [unescape_cell(str(name)) for name in frame.columns]
    for name in _ID_COLUMNS:
        if name in frame.columns:
            frame[name] = frame[name].map(unescape_cell, na_action="ignore")
    return split_matrix(frame)


# Exact search over rater subsets up to this many raters (2**k subsets);
# above it a greedy search is used.
EXACT_COMPLETE_MAX_RATERS = 20


def largest_complete_block(present: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """Rows and columns of the largest complete submatrix of ``present``.

    The largest block is the set of raters ``R`` maximising ``|R| * n(R)``,
    where ``n(R)`` counts the items every rater of ``R`` rated (ties: more
    raters). Finding it is the maximum edge biclique problem, NP-hard in
    general; with up to 20 raters every subset is tried, counting ``n(R)``
    for all subsets at once with a superset-sum (zeta) transform over the
    items' rater bitmasks. With more raters, raters are dropped greedily, the
    one whose removal keeps the most cells first.
    """
    n_items, n_raters = present.shape
    if n_items == 0 or n_raters == 0:
        return np.arange(0), []
    if n_raters <= EXACT_COMPLETE_MAX_RATERS:
        weights = np.left_shift(1, np.arange(n_raters, dtype=np.int64))
        masks = present.astype(np.int64) @ weights
        counts = np.bincount(masks, minlength=1 << n_raters).astype(np.int64)
        # counts[S] becomes the number of items whose rater set contains S.
        for bit in range(n_raters):
            step = 1 << bit
            view = counts.reshape(-1, 2 * step)
            view[:, :step] += view[:, step:]
        # sizes[S]: the number of raters in S, built bit by bit like the counts (a
        # Python loop over the 2**k subsets took most of the search's time).
        sizes = np.zeros(1 << n_raters, dtype=np.int64)
        for bit in range(n_raters):
            step = 1 << bit
            sizes.reshape(-1, 2 * step)[:, step:] += 1
        cells = counts * sizes
        # The most cells, then the most raters (sizes < n_raters + 1 orders the ties);
        # argmax takes the first such subset, as max() over range(2**k) did.
        best = int(np.argmax(cells * (n_raters + 1) + sizes))
        columns = [j for j in range(n_raters) if best >> j & 1]
    else:
        columns = list(range(n_raters))
        best_cells = int(present.all(axis=1).sum()) * n_raters
        while len(columns) > 1:
            options = [
                (
                    int(present[:, [c for c in columns if c != drop]].all(axis=1).sum())
                    * (len(columns) - 1),
                    drop,
                )
                for drop in columns
            ]
            cells, drop = max(options)
            if cells <= best_cells:
                break
            best_cells = cells
            columns.remove(drop)
    rows = np.flatnonzero(present[:, columns].all(axis=1)) if columns else np.arange(0)
    return rows, columns
