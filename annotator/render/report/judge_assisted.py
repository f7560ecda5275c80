"""The report's judge-assisted section: the human mean from all of a judge's scores."""

from __future__ import annotations

from .cells import Section, frame_view, text_columns

__all__ = ["judge_assisted_section"]


def judge_assisted_section(tables) -> Section | None:
    """The ``judge_assisted`` table, or None when no benchmark qualifies (no section)."""
    frame = getattr(tables, "judge_assisted", None)
    if frame is None or frame.empty:
        return None
    level = 100 * float((tables.settings or {}).get("confidence", 0.95))
    return Section(
        key="judge_assisted",
        heading="Human mean score, judge-assisted",
        caption=(
            "For each benchmark a judge scored in full but humans only in part: the mean "
            "human score over all its items, estimated from the human-rated items and the "
            "judge's scores of every item by prediction-powered inference (PPI++, "
            "Angelopoulos, Duchi and Zrnic 2023), beside the mean of the human-rated items "
            f"alone, each with its {level:g}% interval. An item's human score is the mean "
            "of its raters. effective_n: how many human-rated items the estimate is worth "
            "(n times the ratio of the human-only variance to the PPI variance); lam: the "
            "weight given to the judge (0: none). Valid when the rated items are a random "
            "share of the benchmark; shown from 30 rated items on (coverage checked in "
            "docs/metrics.md)."
        ),
        frame=frame_view(frame),
        best=False,
        within=None,
        text_columns=text_columns(frame),
    )
