"""Which ratings and LLM scores enter a matrix: the rules, defined once.

Three places build matrices from a study: the exports in SQL
(:mod:`annotator.data.matrix_export`), the analysis from the study's frames
(:mod:`annotator.analysis.matrices`) and the stop check its alt-test input from
the frames (:mod:`annotator.services.stopping`). Each applies these rules; this
module defines them and stays pure (no session, no SQL: the exports turn the
rules into their WHERE clauses), so that ``analysis`` may import it.

- **Whose ratings count**: the active raters'; withdrawn and excluded raters'
  never do (:func:`annotator.study.raters.counted_rater`, SQL, applied by every
  reader, so the frames hold only counted raters' rows).
- **Which ratings**: a rater has at most one rating of an item on a scale and
  criterion (the key ``uq_rating_key``; an edit changes it in place, so it is
  the latest), plus test-retest repeats. Repeats and attention checks are left
  out (:data:`LEFT_OUT`, :func:`matrix_ratings`).
- **Which items**: the study's items that are not attention checks (an item
  with a gold score is one), in import order (:func:`matrix_items`).
- **Which LLM scores**: each judge's newest prompt version
  (:mod:`annotator.data.prompt_versions`) at its one temperature per scale
  (:func:`scored_temperatures`, the rule of :mod:`annotator.data.temperatures`),
  chosen by the study file (:class:`MatrixSettings`).
- **Complete data**: an overlap design's anchor items
  (:meth:`MatrixSettings.anchor_rows`).
- **The stop check**: an item enters complete, with its first ratings
  (:func:`complete_items`, :meth:`MatrixSettings.reference_raters`).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..study.assignment_spec import AssignmentSpec, anchor_item_ids
from ..study.validation_spec import ValidationSpec
from ..words import noun
from .temperatures import JudgeTemperatures, judge_temperature_pairs, judge_temperatures

__all__ = [
    "CROSSED_REFERENCE_RATERS",
    "LEFT_OUT",
    "MatrixSettings",
    "complete_items",
    "matrix_items",
    "matrix_ratings",
    "scored_temperatures",
]

#: The flags of a rating (columns of ``Rating`` and of the ratings frame) that
#: leave it out of every matrix: a test-retest repeat (the first rating counts)
#: and an attention check.
LEFT_OUT = ("is_repeat", "is_attention_check")

# Crossed designs: an item enters the stop check with its first three ratings (the
# paper recommends at least three annotators), or all raters' when fewer are planned.
CROSSED_REFERENCE_RATERS = 3


def matrix_ratings(ratings: pd.DataFrame, scale: str, *, benchmark: str | None = None) -> pd.Series:
    """True for the ratings (rows of the ratings frame) that enter ``scale``'s
    matrix (of ``benchmark``): :data:`LEFT_OUT` out."""
    mask = ratings["scale"] == scale
    for flag in LEFT_OUT:
        mask &= ~ratings[flag]
    if benchmark is not None:
        mask &= ratings["benchmark"] == benchmark
    return mask


def matrix_items(items: pd.DataFrame, benchmark: str | None = None) -> pd.Index:
    """The rows a matrix may have: the items frame's items (of ``benchmark``) that
    are not attention checks, in import order."""
    items = items[~items["is_attention_check"]]
    if benchmark is not None:
        items = items[items["benchmark"] == benchmark]
    return pd.Index(items["item"], name="item")


def scored_temperatures(
    llm: pd.DataFrame,
    *,
    requested: float | None = None,
    per_judge: Any = (),
) -> JudgeTemperatures:
    """Each judge's temperature per scale
    (:func:`annotator.data.temperatures.judge_temperatures`) on the LLM scores of
    ``llm`` (columns ``model``, ``scale``, ``temperature``: the study's
    newest-prompt scores, every scale and criterion)."""
    # The rule counts scores, so it is given each (judge, scale, temperature) group
    # with its size: a rubric study's frame holds every criterion's scores, and one
    # pass of pandas' groupby costs less than the rule's Python loop over each score.
    groups = llm.groupby(
        ["model", "scale", "temperature"], dropna=False, sort=False, observed=True
    ).size()
    keys = groups.index
    return judge_temperatures(
        keys.get_level_values("model"),
        keys.get_level_values("scale"),
        keys.get_level_values("temperature"),
        requested=requested,
        per_judge=per_judge,
        counts=groups.to_numpy(),
    )


@dataclass(frozen=True)
class MatrixSettings:
    """What the study file says about its matrices.

    Attributes
    ----------
    temperature : float or None
        ``[validation] temperature``: every judge's, but those in ``judge_temperatures``.
    judge_temperatures : tuple of (str, float or None)
        ``[validation.temperatures]``: the lead's choice for single judges.
    design, raters_per_item, anchor_items
        ``[assignment]``: "crossed" or "overlap", ``k``, and the anchor items (a
        count for the seeded draw, or their ids).
    """

    temperature: float | None = None
    judge_temperatures: tuple[tuple[str, float | None], ...] = ()
    design: str = "crossed"
    raters_per_item: int | None = None
    anchor_items: int | tuple[str, ...] = 0

    @classmethod
    def of(cls, validation: ValidationSpec, assignment: AssignmentSpec) -> MatrixSettings:
        """The settings of a study file's ``[validation]`` and ``[assignment]`` tables
        (:func:`annotator.study.studyfile.validation_settings` and
        ``assignment_settings`` read them from a stored study)."""
        anchors = assignment.anchor_items
        return cls(
            temperature=validation.temperature,
            judge_temperatures=judge_temperature_pairs(validation.temperatures),
            design=assignment.design,
            raters_per_item=assignment.raters_per_item,
            anchor_items=tuple(anchors) if isinstance(anchors, list) else anchors,
        )

    def anchor_rows(self, study: str, item_ids: Iterable[str]) -> list[str] | None:
        """Overlap designs: the anchor items among ``item_ids`` of the study ``study``
        (its slug), in their order; ``None`` for a crossed design."""
        if self.design != "overlap":
            return None
        items = list(item_ids)
        anchors = self.anchor_items
        spec = AssignmentSpec(
            design="overlap",
            raters_per_item=self.raters_per_item or 2,
            anchor_items=list(anchors) if isinstance(anchors, tuple) else anchors,
            items_per_rater=1,
        )
        chosen = anchor_item_ids(spec, study, items)
        return [item for item in items if item in chosen]

    def reference_raters(self, planned: float) -> int:
        """The ratings an item needs to enter the stop check, fixed by the design:
        ``k`` in an overlap design, else the first :data:`CROSSED_REFERENCE_RATERS`
        (at least 2, at most the ``planned`` raters)."""
        if self.design == "overlap" and self.raters_per_item:
            return int(self.raters_per_item)
        return int(max(2, min(CROSSED_REFERENCE_RATERS, planned)))


def complete_items(
    ratings: Any, *, raters_per_item: int
) -> tuple[dict[Hashable, dict[Hashable, float]], list[Hashable]]:
    """What the test by betting may see of ratings that arrive interleaved.

    The test's guarantee needs each item to enter once, complete, with a reference set
    that never changes, at a place in the order fixed when it enters
    (:func:`annotator.metrics.alt_test_sequential`). So an item enters when its
    ``raters_per_item``-th rating arrives, with its first ``raters_per_item`` ratings
    only (later ones never change it), and the items follow the order in which they
    became complete. Feeding every rating, items placed by their latest one, let a
    rater's chance of being secured reach 1.5-3.3 times its bound q/m (issue 39);
    ``validation/stop_arrivals.py`` checks this rule with ratings arriving as in the app.

    Parameters
    ----------
    ratings : pandas.DataFrame
        One row per rating with columns ``item``, ``rater``, ``value`` and
        ``submitted_at`` (anything that sorts in time).
    raters_per_item : int, keyword-only
        The ratings an item needs to enter (the overlap design's ``k``), at least 2.

    Returns
    -------
    humans : dict
        ``{rater: {item: value}}`` over the complete items; every rater of ``ratings``
        is a key (an empty dict when none of their items is complete yet).
    order : list
        The complete items, in the order they became complete.
    """
    if isinstance(raters_per_item, bool) or not isinstance(raters_per_item, int):
        raise ValueError(f"raters_per_item must be an integer, got {raters_per_item!r}")
    if raters_per_item < 2:
        raise ValueError(f"raters_per_item must be at least 2, got {raters_per_item}")
    missing = {"item", "rater", "value", "submitted_at"} - set(ratings.columns)
    if missing:
        raise ValueError(
            f"ratings lacks the {noun(len(missing), 'column')} {', '.join(sorted(missing))}"
        )
    # Ties in time go by rater, so that the same ratings always give the same sets.
    timed = ratings.sort_values(["submitted_at", "rater"], kind="stable")
    place = timed.groupby("item", sort=False).cumcount()
    first = timed[place < raters_per_item]
    entered = first[place[place < raters_per_item] == raters_per_item - 1]
    order = entered["item"].tolist()
    complete = set(order)
    humans: dict[Hashable, dict[Hashable, float]] = {r: {} for r in timed["rater"].unique()}
    kept = first[first["item"].isin(complete)]
    for rater, item, value in zip(kept["rater"], kept["item"], kept["value"], strict=True):
        humans[rater][item] = float(value)
    return humans, order
