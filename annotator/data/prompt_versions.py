"""One prompt version per judge: scores under an older prompt are left out of the analyses.

A judge's scores on one benchmark, scale and temperature may have been asked
under several prompts (``LLMScore.prompt_hash``; imported scores have none,
which counts as a version of its own). Averaging them would mix two different
judges, so the analyses (the study's frames, the matrix and alt-test exports,
and through them the dashboard and the report) keep, for each model, scale,
temperature and benchmark, only the newest version: the one whose latest
score was stored last. The older scores stay in the database and in the long
export (with their ``prompt_hash``); the matrix export says how many it left
out. Newest-wins rather than a column per version because a changed prompt is
almost always a correction that replaces the old one, and a column per
version would put half-finished judges next to each other in every table.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["latest_prompt_version"]


def latest_prompt_version(
    llm: pd.DataFrame, *, keys: Sequence[str], version: str = "prompt", order: str = "order"
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows of the newest prompt version within each group of ``keys``.

    Parameters
    ----------
    llm : pandas.DataFrame
        One row per LLM score, with the ``keys`` columns, ``version`` (the
        prompt hash; "" or None for imported scores) and ``order`` (increasing
        with the time a score was stored, e.g. its id).
    keys : sequence of str
        The columns that make one judge (model, scale, temperature, benchmark).

    Returns
    -------
    (pandas.DataFrame, pandas.DataFrame)
        The kept rows and the rows left out (original index and order).
    """
    if llm.empty:
        return llm, llm
    judge = _group_codes(llm, list(keys))
    versions = _group_codes(llm.assign(**{version: llm[version].fillna("")}), [version])
    version_of_judge = pd.factorize(judge * (versions.max() + 1) + versions)[0]
    orders = pd.Series(llm[order].to_numpy())
    last_of_version = orders.groupby(version_of_judge).transform("max").to_numpy()
    last_of_judge = orders.groupby(judge).transform("max").to_numpy()
    keep = last_of_version == last_of_judge
    return llm[keep], llm[~keep]


def _group_codes(frame: pd.DataFrame, keys: list[str]) -> np.ndarray:
    """One integer per row, equal where the rows agree on every key (NaN equal to NaN).

    Each key is factorized once and the codes combined as integers: grouping by
    the text columns themselves, twice over, was most of the time of the
    rule on 100,000 scores.
    """
    codes = np.zeros(len(frame), dtype=np.int64)
    for key in keys:
        values = pd.factorize(frame[key], use_na_sentinel=False)[0]
        codes = pd.factorize(codes * (values.max() + 1) + values)[0]
    return codes
