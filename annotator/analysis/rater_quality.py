"""Rater quality from a study's frames: the table a lead checks before excluding a rater.

Per scale and rater: agreement with the leave-one-out mean of the others, attention
checks passed and failed, test-retest ICC(A,1), median seconds per item, and the
straight-lining and speeding flags (:func:`annotator.metrics.raters.rater_quality`).
The raters page, ``annotator raters quality`` and the report show this one table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..data.frames import StudyFrames
from ..metrics.notes import quiet
from ..metrics.raters import SPEEDING_FRACTION, STRAIGHT_LINING_SHARE, rater_quality
from ..metrics.retest import retest_reliability
from ..words import plural
from .criteria import criterion_frames, criterion_names
from .matrices import human_ratings, retest_pairs

__all__ = [
    "QUALITY_COLUMNS",
    "RaterQualityTable",
    "rater_quality_table",
]

QUALITY_COLUMNS = [
    "criterion",
    "scale",
    "rater",
    "n_items",
    "loo_icc_a1",
    "loo_mae_share",
    "attention_passed",
    "attention_failed",
    "retest_items",
    "retest_icc_a1",
    "median_seconds",
    "modal_value",
    "modal_share",
    "straight_lining",
    "speeding",
    "flags",
]


@dataclass(frozen=True)
class RaterQualityTable:
    """The rater quality table of a study.

    Attributes
    ----------
    frame : pandas.DataFrame
        :data:`QUALITY_COLUMNS`, one row per criterion, scale and rater with a rating
        (``criterion`` empty in a study without ``[[criteria]]``). ``flags`` names the
        raised flags ("straight-lining", "speeding", "failed attention checks"),
        empty when none.
    study_median_seconds : dict
        Per scale (``"criterion: scale"`` in a rubric study), the median seconds per
        item over every rater.
    straight_share, speed_fraction : float
        The thresholds of the flags.
    notes : list of str
        What could not be computed.
    where : str
        The raters it covers (:func:`annotator.data.selection.describe_where`).
    """

    frame: pd.DataFrame
    study_median_seconds: dict[str, float]
    straight_share: float
    speed_fraction: float
    notes: list[str] = field(default_factory=list)
    where: str = "all raters"

    def flagged(self) -> pd.DataFrame:
        """The rows with at least one flag."""
        return self.frame[self.frame["flags"] != ""]

    def to_dict(self) -> dict:
        rows = self.frame.astype(object).where(self.frame.notna(), None)
        return {
            "straight_share": self.straight_share,
            "speed_fraction": self.speed_fraction,
            "study_median_seconds": {
                k: None if math.isnan(v) else v for k, v in self.study_median_seconds.items()
            },
            "where": self.where,
            "raters": rows.to_dict(orient="records"),
            "notes": list(self.notes),
        }

    @property
    def has_criteria(self) -> bool:
        """The rows are per rubric criterion (a study with ``[[criteria]]``)."""
        return bool((self.frame["criterion"] != "").any())

    def display_rows(self) -> list[dict[str, Any]]:
        """The rows as text for a page (``n/a`` where not computable), flags kept."""
        out = []
        for r in self.frame.itertuples():
            out.append(
                {
                    "criterion": r.criterion,
                    "scale": r.scale,
                    "rater": r.rater,
                    "n_items": r.n_items,
                    "loo_icc_a1": _num(r.loo_icc_a1, ".3f"),
                    "loo_mae_share": _num(r.loo_mae_share, ".3f"),
                    "attention": f"{r.attention_passed} / {r.attention_failed}",
                    "retest_icc_a1": _num(r.retest_icc_a1, ".3f"),
                    "median_seconds": _num(r.median_seconds, ".1f"),
                    "modal_share": _num(r.modal_share, ".0%"),
                    "flags": r.flags,
                }
            )
        return out

    def to_text(self) -> str:
        """A plain-text table for the terminal, flagged raters marked."""
        lines = [
            f"raters: {self.where}; straight-lining: one value for >= "
            f"{self.straight_share:.0%} of the items; speeding: median seconds per item "
            f"< {self.speed_fraction:g} x the scale's median"
        ]
        width = max([len("criterion"), *map(len, self.frame["criterion"])])
        first = f"{'criterion':<{width}} " if self.has_criteria else ""
        header = first + "scale    rater          items  LOO ICC  MAE/range  checks ok/failed  "
        header += "retest ICC  median s  modal share  flags"
        lines.append(header)
        for r in self.frame.itertuples():
            lead = f"{r.criterion:<{width}} " if self.has_criteria else ""
            lines.append(
                f"{lead}{r.scale:<8} {r.rater:<14} {r.n_items:>5}  {_num(r.loo_icc_a1, '.3f'):>7}  "
                f"{_num(r.loo_mae_share, '.3f'):>9}  "
                f"{f'{r.attention_passed}/{r.attention_failed}':>16}  "
                f"{_num(r.retest_icc_a1, '.3f'):>10}  {_num(r.median_seconds, '.1f'):>8}  "
                f"{_num(r.modal_share, '.2f'):>11}  {r.flags or '-'}"
            )
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


def _num(value: float, spec: str) -> str:
    return "n/a" if value is None or math.isnan(value) else format(value, spec)


def _seconds(frames: StudyFrames, scale: str, wide: pd.DataFrame) -> pd.DataFrame:
    r = frames.ratings
    first = r[(r["scale"] == scale) & ~r["is_repeat"] & ~r["is_attention_check"]]
    secs = (first["submitted_at"] - first["served_at"]).dt.total_seconds()
    timed = pd.DataFrame({"item": first["item"], "rater": first["rater"], "s": secs})
    return timed.pivot(index="item", columns="rater", values="s").reindex_like(wide)


def _retest(frames: StudyFrames, scale: str, notes: list[str]) -> dict[str, tuple[int, float]]:
    pairs, n_repeated = retest_pairs(frames, scale)
    if not n_repeated:
        return {}
    with quiet():
        # One rater's constant pairs give NaN: shown as "not computable", not a warning.
        try:
            result = retest_reliability(pairs)
        except ValueError as exc:
            # Too few repeats (one rated twice): no retest ICC, the rest of the table;
            # said as the dashboard says it, not in the statistic's own terms.
            why = (
                f"{plural(n_repeated, 'item')} rated twice so far; it needs 2"
                if n_repeated < 2
                else str(exc)
            )
            notes.append(f"scale {scale}: no test-retest ICC ({why})")
            return {}
    return {row.rater: (row.n_items, row.icc_a1) for row in result.raters}


def _flags(row: dict) -> str:
    out = []
    if row["straight_lining"]:
        out.append("straight-lining")
    if row["speeding"]:
        out.append("speeding")
    if row["attention_failed"]:
        out.append("failed attention checks")
    return ", ".join(out)


def rater_quality_table(
    frames: StudyFrames,
    *,
    scale: str | None = None,
    straight_share: float = STRAIGHT_LINING_SHARE,
    speed_fraction: float = SPEEDING_FRACTION,
    by_criterion: bool = True,
) -> RaterQualityTable:
    """Compute the rater quality table from a study's frames.

    Parameters
    ----------
    frames : StudyFrames
        The study (already narrowed by ``--where`` if asked).
    scale : str, optional, keyword-only
        Only this scale; ``ValueError`` naming the known scales if it is not one.
    straight_share, speed_fraction : float, keyword-only
        Thresholds of :func:`annotator.metrics.raters.rater_quality`.
    by_criterion : bool, keyword-only
        In a study with ``[[criteria]]``: one table per criterion, stacked (a rater
        rates each item once per criterion, so the criteria are never mixed).
        False: ``frames`` hold one criterion already
        (:func:`~annotator.analysis.criteria.criterion_frames`).

    Returns
    -------
    RaterQualityTable
    """
    names = criterion_names(frames) if by_criterion else []
    if names:
        options = {"scale": scale, "straight_share": straight_share}
        per = {
            name: rater_quality_table(
                criterion_frames(frames, name),
                speed_fraction=speed_fraction,
                by_criterion=False,
                **options,
            )
            for name in names
        }
        return RaterQualityTable(
            frame=pd.concat(
                [t.frame.assign(criterion=name) for name, t in per.items()], ignore_index=True
            )[QUALITY_COLUMNS],
            study_median_seconds={
                f"{name}: {s}": v
                for name, t in per.items()
                for s, v in t.study_median_seconds.items()
            },
            straight_share=float(straight_share),
            speed_fraction=float(speed_fraction),
            notes=[f"criterion {name}: {n}" for name, t in per.items() for n in t.notes],
        )
    scales = frames.scale_names
    if scale is not None:
        frames.scale_bounds(scale)  # ValueError naming the known scales
        scales = [scale]
    rows, medians, notes = [], {}, []
    for name in scales:
        low, high = frames.scale_bounds(name)
        wide = human_ratings(frames, name)
        if wide.shape[1] == 0:
            notes.append(f"scale {name}: no ratings yet")
            medians[name] = math.nan
            continue
        result = rater_quality(
            wide,
            scale_min=low,
            scale_max=high,
            seconds=_seconds(frames, name, wide),
            straight_share=straight_share,
            speed_fraction=speed_fraction,
        )
        medians[name] = result.study_median_seconds
        r = frames.ratings
        checks = r[(r["scale"] == name) & r["is_attention_check"]]
        passed = checks[checks["attention_passed"] == True].groupby("rater").size()  # noqa: E712
        failed = checks[checks["attention_passed"] == False].groupby("rater").size()  # noqa: E712
        retest = _retest(frames, name, notes)
        for q in result.raters:
            n_retest, retest_icc = retest.get(q.rater, (0, math.nan))
            row = {
                "criterion": "",
                "scale": name,
                "rater": q.rater,
                "n_items": q.n_items,
                "loo_icc_a1": q.loo_icc_a1,
                "loo_mae_share": q.loo_mae_share,
                "attention_passed": int(passed.get(q.rater, 0)),
                "attention_failed": int(failed.get(q.rater, 0)),
                "retest_items": int(n_retest),
                "retest_icc_a1": retest_icc,
                "median_seconds": q.median_seconds,
                "modal_value": q.modal_value,
                "modal_share": q.modal_share,
                "straight_lining": q.straight_lining,
                "speeding": q.speeding,
            }
            row["flags"] = _flags(row)
            rows.append(row)
    return RaterQualityTable(
        frame=pd.DataFrame(rows, columns=QUALITY_COLUMNS),
        study_median_seconds=medians,
        straight_share=float(straight_share),
        speed_fraction=float(speed_fraction),
        notes=notes,
    )
