"""The report's rater quality section: the table a lead checks before excluding a rater."""

from __future__ import annotations

from .cells import Section, frame_view, text_columns

__all__ = ["rater_quality_section"]


def rater_quality_section(tables) -> Section:
    """Per scale and rater: leave-one-out agreement, checks, retest, timing and flags."""
    from ...metrics.raters import SPEEDING_FRACTION, STRAIGHT_LINING_SHARE

    frame = tables.rater_quality
    return Section(
        key="raters",
        heading="Rater quality",
        caption=(
            "Per scale and rater: ICC(A,1) and mean absolute difference (as a share of the "
            "range) against the mean of the other raters, attention checks passed and "
            "failed, test-retest ICC(A,1), median seconds per item, and the share of items "
            "given the rater's most frequent value. Flags: straight-lining when that share "
            f"is at least {STRAIGHT_LINING_SHARE:g}; speeding when the median time is below "
            f"{SPEEDING_FRACTION:g} times the scale's median. A flag is a reason to look, "
            "not a verdict: exclude a rater before the analysis, not after seeing it."
        ),
        frame=frame_view(frame),
        best=False,
        within=None,
        text_columns=text_columns(frame),
    )
