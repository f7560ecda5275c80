"""From the long frames to the matrices the statistics take (shared by dashboard and report).

The human matrix of a scale is the fully crossed items x raters block of the
matrix export (``largest_complete_block``): each rater's first rating of each
item, attention checks and test-retest repeats left out (the rules of
:mod:`annotator.data.matrix_rules`, which the exports and the stop check share). The LLM matrix is
items x models at one temperature, a model's runs combined as the settings say.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from ..data.frames import StudyFrames
from ..data.matrix_rules import matrix_items, matrix_ratings, scored_temperatures
from ..data.temperatures import JudgeTemperatures, temperature_label
from ..metrics.matrix import largest_complete_block
from ..metrics.notes import collect_notes
from ..metrics.runs import aggregate_runs
from .reasons import reason_of

__all__ = [
    "CachingFrames",
    "HumanBlock",
    "caching_frames",
    "Notes",
    "analysis_block",
    "human_block",
    "human_ratings",
    "llm_panel",
    "rater_dicts",
    "retest_pairs",
    "llm_matrix",
    "main_temperature",
    "temperature_label",
]

T = TypeVar("T")


@dataclass(frozen=True)
class CachingFrames(StudyFrames):
    """:class:`~annotator.data.frames.StudyFrames` that keep the matrices built from them.

    The report asks for the same matrix of a scale from several tables (26 human and
    31 LLM matrices for 3 scales): on these frames each is built once and handed out
    as a copy, so a caller that changes its copy changes nobody else's. The cache is
    an attribute of the frames, so it goes with them; ``dataclasses.replace`` (a
    selection of raters) gives new frames with an empty cache.
    """

    @functools.cached_property
    def matrices(self) -> dict[tuple, pd.DataFrame]:
        """Built matrices by (function, scale, options)."""
        return {}


def caching_frames(frames: StudyFrames) -> CachingFrames:
    """``frames`` as :class:`CachingFrames` (the same frames, not copied)."""
    if isinstance(frames, CachingFrames):
        return frames
    return CachingFrames(**{f.name: getattr(frames, f.name) for f in fields(frames)})


def _per_frames(function: Callable[..., pd.DataFrame]) -> Callable[..., pd.DataFrame]:
    """Keep ``function``'s matrix on :class:`CachingFrames`; plain frames build it each time."""

    @functools.wraps(function)
    def cached(frames: StudyFrames, scale: str, **options: Any) -> pd.DataFrame:
        if not isinstance(frames, CachingFrames):
            return function(frames, scale, **options)
        entries = frames.matrices
        call = (function.__name__, scale, *sorted(options.items()))
        if call not in entries:
            entries[call] = function(frames, scale, **options)
        return entries[call].copy()

    return cached


class Notes(list):
    """What could not be computed and why: one line each, in order, no repeats."""

    # The message of the last failed attempt (the reason to show next to its cell).
    last_error: str | None = None

    def add(self, line: str) -> None:
        if line not in self:
            self.append(line)

    def add_error(self, where: str, error: BaseException) -> str:
        """Note why ``where`` could not be computed, in the lead's words
        (:func:`.reasons.reason_of`); the line noted."""
        line = f"{where}: {reason_of(error)}"
        self.add(line)
        return line

    def attempt(
        self, where: str, function: Callable[..., T], *args: Any, **kwargs: Any
    ) -> T | None:
        """``function(*args, **kwargs)``; None and a note on ``ValueError``.

        The reason a metric gives for a NaN (a degenerate matrix) becomes a note too,
        so a NaN cell always has its reason. Collected in this thread's context,
        not with ``warnings.catch_warnings`` (not thread-safe: another thread's
        analysis could take or lose the note).
        """
        with collect_notes() as caught:
            try:
                result = function(*args, **kwargs)
            except ValueError as exc:
                self.last_error = self.add_error(where, exc)
                return None
        for message in caught:
            self.add(f"{where}: {message}")
        return result


@dataclass(frozen=True)
class HumanBlock:
    """The complete items x raters block of one scale (and benchmark).

    Attributes
    ----------
    matrix : pandas.DataFrame
        Items (index: item ids, in import order) x raters (columns: codes, sorted).
    n_items_rated, n_raters_rated : int
        Items and raters with at least one rating before the block was cut.
    dropped_items, dropped_raters : int
        What the cut left out.
    """

    matrix: pd.DataFrame
    n_items_rated: int
    n_raters_rated: int
    dropped_items: int
    dropped_raters: int

    def describe_cut(self) -> str | None:
        """A sentence when the block left ratings out; None when it kept them all."""
        if not (self.dropped_items or self.dropped_raters):
            return None
        return (
            f"the complete items x raters block keeps {self.matrix.shape[0]} of "
            f"{self.n_items_rated} items and {self.matrix.shape[1]} of "
            f"{self.n_raters_rated} raters"
        )


@_per_frames
def human_ratings(frames: StudyFrames, scale: str, *, benchmark: str | None = None) -> pd.DataFrame:
    """Items x raters of first ratings (NaN where missing): attention checks and repeats out.

    Rows are the study's items (of ``benchmark``) with at least one such rating, in
    import order; columns the raters who gave one, sorted.
    """
    r = frames.ratings
    sub = r.loc[matrix_ratings(r, scale, benchmark=benchmark), ["item", "rater", "value"]]
    wide = sub.pivot(index="item", columns="rater", values="value")
    order = matrix_items(frames.items, benchmark)
    wide = wide.reindex(order[order.isin(wide.index)])
    wide = wide[sorted(wide.columns)]
    wide.columns.name = "rater"
    return wide.astype(float)


def human_block(
    frames: StudyFrames,
    scale: str,
    *,
    benchmark: str | None = None,
    wide: pd.DataFrame | None = None,
    rows: list[str] | None = None,
) -> HumanBlock:
    """The largest complete items x raters block of :func:`human_ratings`.

    ``wide``: that :func:`human_ratings` when the caller has it already.
    ``rows``: the items the block is sought among (an overlap design's anchor
    items, :meth:`~annotator.analysis.settings.AnalysisSettings.anchor_rows`).
    """
    if wide is None:
        wide = human_ratings(frames, scale, benchmark=benchmark)
    if rows is not None:
        wide = wide[wide.index.isin(rows)]
    rows, columns = largest_complete_block(wide.notna().to_numpy())
    matrix = wide.iloc[rows, columns] if len(columns) else wide.iloc[:0, :0]
    return HumanBlock(
        matrix=matrix,
        n_items_rated=int(wide.shape[0]),
        n_raters_rated=int(wide.shape[1]),
        dropped_items=int(wide.shape[0] - matrix.shape[0]),
        dropped_raters=int(wide.shape[1] - matrix.shape[1]),
    )


def analysis_block(
    frames: StudyFrames, scale: str, settings: Any, *, benchmark: str | None = None
) -> HumanBlock:
    """The human block of the statistics that need complete data (ICC, the panels of
    Table 2, correlations, kappas): in an overlap design explicitly its anchor block
    (``settings.anchor_rows``, the items every rater rates), in a crossed design the
    largest complete block. ``settings``: an
    :class:`~annotator.analysis.settings.AnalysisSettings` (None: crossed)."""
    anchors = None
    if settings is not None:
        anchors = settings.anchor_rows(frames.study, matrix_items(frames.items))
    return human_block(frames, scale, benchmark=benchmark, rows=anchors)


def main_temperature(
    frames: StudyFrames,
    requested: float | None,
    per_judge: Any = (),
) -> tuple[JudgeTemperatures, str]:
    """Each judge's temperature (:func:`annotator.data.temperatures.judge_temperatures`,
    the rule the exports use too) on the study's LLM scores, and a sentence saying how.

    ``requested``: the study's ``[validation] temperature``; ``per_judge``: the
    temperatures the lead chose for single judges.
    """
    chosen = scored_temperatures(frames.llm, requested=requested, per_judge=per_judge)
    if not chosen.chosen:
        return chosen, "no LLM scores"
    if chosen.uniform:
        return chosen, f"temperature {chosen.label()} ({chosen.describe()})"
    return chosen, f"each judge's own temperature ({chosen.describe()})"


@_per_frames
def llm_matrix(
    frames: StudyFrames,
    scale: str,
    *,
    temperature: float | JudgeTemperatures | None,
    benchmark: str | None = None,
    runs: str = "mean",
) -> pd.DataFrame:
    """Items x models at one temperature, each model's runs combined by ``runs``.

    ``temperature``: each judge's own (:class:`JudgeTemperatures`, the analysis's
    rule), or one for every judge (None: the scores without a temperature). Rows are the
    study's non-attention items (of ``benchmark``) with a score, in import order;
    columns the models, sorted (``runs="each"``: one ``MODEL#RUN`` column per run,
    :func:`annotator.metrics.runs.aggregate_runs`).
    """
    llm = frames.llm
    temps = llm["temperature"].to_numpy(dtype=float)
    if isinstance(temperature, JudgeTemperatures):
        at = temperature.keep(llm["model"], llm["scale"], temps)
    else:
        at = np.isnan(temps) if temperature is None else np.isclose(temps, temperature)
    mask = (llm["scale"] == scale).to_numpy() & at
    if benchmark is not None:
        mask &= (llm["benchmark"] == benchmark).to_numpy()
    sub = llm.loc[mask, ["item", "model", "run", "value"]]
    # One temperature is kept above, so none is pooled.
    wide = aggregate_runs(sub, how=runs, temperature=None)
    order = matrix_items(frames.items, benchmark)
    wide = wide.reindex(order[order.isin(wide.index)])
    wide = wide[sorted(wide.columns)]
    wide.columns.name = "model"
    return wide.astype(float)


def rater_dicts(wide: pd.DataFrame) -> dict[str, dict[str, float]]:
    """``{rater: {item: score}}`` of an items x raters frame, missing cells left out.

    The alt-test's input. Built column by column with numpy: ``DataFrame.to_dict``
    boxes every cell and took most of the dashboard's time on 5,000 items.
    """
    items = wide.index.to_numpy()
    out = {}
    for rater in wide.columns:
        values = wide[rater].to_numpy(dtype=float)
        present = ~np.isnan(values)
        out[rater] = dict(zip(items[present].tolist(), values[present].tolist(), strict=True))
    return out


def llm_panel(llm: pd.DataFrame, items: pd.Index) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``llm`` on ``items`` (NaN where a model has no score), and its complete block.

    The block (``largest_complete_block``, as for the humans) is the LLM panel: the
    ensemble mean of an item is over the same models for every item. Returns
    ``(all_models, panel)``.
    """
    all_models = llm.reindex(index=items)
    rows, columns = largest_complete_block(all_models.notna().to_numpy())
    panel = all_models.iloc[rows, columns] if len(columns) else all_models.iloc[:0, :0]
    return all_models, panel


def retest_pairs(frames: StudyFrames, scale: str) -> tuple[pd.DataFrame, int]:
    """The test-retest input of a scale, and how many (rater, item) pairs were repeated.

    ``rater, item, score, occasion`` (0 first rating, 1 repeat) of every rating of a
    repeated (rater, item), attention checks left out: the frame
    :func:`annotator.metrics.retest_reliability` takes.
    """
    r = frames.ratings
    r = r[(r["scale"] == scale) & ~r["is_attention_check"]]
    repeated = r.loc[r["is_repeat"], ["rater", "item"]].drop_duplicates()
    pairs = r.merge(repeated, on=["rater", "item"])
    frame = pd.DataFrame(
        {
            "rater": pairs["rater"],
            "item": pairs["item"],
            "score": pairs["value"],
            "occasion": pairs["is_repeat"].astype(int),
        }
    )
    return frame, len(repeated)
