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
    frame = llm.assign(**{version: llm[version].fillna("")})
    keys = list(keys)
    last_of_version = frame.groupby([*keys, version], dropna=False)[order].transform("max")
    last_of_judge = frame.groupby(keys, dropna=False)[order].transform("max")
    keep = (last_of_version == last_of_judge).to_numpy()
    return llm[keep], llm[~keep]
