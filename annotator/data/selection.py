"""Selecting raters by their demographic answers (``--where gender=female``).

One rule for every place raters are chosen (exports, the report, the dashboard, the
rater quality table): ``key=value`` clauses, a rater kept when, for every key, the
answer equals one of that key's values (AND across keys, OR within a key). So any
statistic can be split by group as in the grading-scale paper's Table 5.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import pandas as pd

from .export_scope import ExportError
from .frames import StudyFrames

__all__ = [
    "Where",
    "describe_where",
    "matching_raters",
    "parse_where",
    "raters_where",
    "select_frames",
]

#: ``{key: (value, ...)}``: a rater matches when every key's answer is one of its values.
Where = Mapping[str, tuple[str, ...]]


def parse_where(
    clauses: Iterable[str] | str | Where | None,
) -> dict[str, tuple[str, ...]]:
    """``["gender=female", "age_group=25-34"]`` -> ``{"gender": ("female",), ...}``.

    A string may hold several clauses separated by commas or ``&`` (the report form's
    one text field). A key given twice keeps both values (either matches).

    Raises
    ------
    ExportError
        (a ``ValueError``, ``field="where"``) naming the clause without ``=``.
    """
    if clauses is None:
        return {}
    if isinstance(clauses, Mapping):  # parsed already
        return {str(k): tuple(str(v) for v in vs) for k, vs in clauses.items()}
    if isinstance(clauses, str):
        clauses = [clauses]
    out: dict[str, tuple[str, ...]] = {}
    for text in clauses:
        for clause in text.replace("&", ",").split(","):
            clause = clause.strip()
            if not clause:
                continue
            key, sep, value = clause.partition("=")
            key, value = key.strip(), value.strip()
            if not sep or not key or not value:
                raise ExportError(
                    f"where clause {clause!r} is not KEY=VALUE", field="where", choices=[]
                )
            if value not in out.get(key, ()):
                out[key] = (*out.get(key, ()), value)
    return out


def describe_where(where: Where) -> str:
    """``gender=female AND age_group=25-34`` (``"all raters"`` when empty)."""
    if not where:
        return "all raters"
    return " AND ".join(
        f"{key}={'|'.join(values)}" if len(values) > 1 else f"{key}={values[0]}"
        for key, values in where.items()
    )


def _text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def matching_raters(
    demographics: pd.DataFrame,
    where: Where,
    *,
    questions: Sequence[Mapping[str, Any]] = (),
) -> list[str]:
    """The rater codes whose answers satisfy ``where``, in the frame's order.

    Parameters
    ----------
    demographics : pandas.DataFrame
        ``rater`` then one column per answer key (:attr:`StudyFrames.demographics`).
    where : mapping
        From :func:`parse_where`.
    questions : sequence of mapping, keyword-only
        The study's demographic questions (``key``, ``choices``): their keys and
        choices are known even when no rater has answered yet.

    Raises
    ------
    ExportError
        (``field="where"``) for a key that is no question nor answer, or a value no
        rater gave and no question offers; the message lists the known ones.
    """
    known_keys = [q["key"] for q in questions]
    known_keys += [c for c in demographics.columns if c != "rater" and c not in known_keys]
    keep = pd.Series(True, index=demographics.index)
    for key, values in where.items():
        if key not in known_keys:
            raise ExportError(
                f"no demographic question {key!r} (known: {', '.join(known_keys) or 'none'})",
                field="where",
                choices=known_keys,
            )
        answers = (
            demographics[key].map(_text)
            if key in demographics.columns
            else pd.Series(None, index=demographics.index, dtype=object)
        )
        offered = next((list(q.get("choices") or []) for q in questions if q["key"] == key), [])
        known_values = offered + sorted({a for a in answers.dropna() if a not in offered}, key=str)
        unknown = [v for v in values if v not in known_values]
        if unknown:
            raise ExportError(
                f"no rater answered {key}={unknown[0]} (known values of {key}: "
                f"{', '.join(known_values) or 'none yet'})",
                field="where",
                choices=[f"{key}={v}" for v in known_values],
            )
        keep &= answers.isin(values)
    return demographics.loc[keep, "rater"].tolist()


def select_frames(
    frames: StudyFrames, where: Where, *, questions: Sequence[Mapping[str, Any]] = ()
) -> StudyFrames:
    """``frames`` with only the raters ``where`` selects (ratings, blocks, demographics).

    An empty ``where`` returns ``frames`` itself. LLM scores, items and scales stay.
    """
    if not where:
        return frames
    codes = set(matching_raters(frames.demographics, where, questions=questions))
    return replace(
        frames,
        ratings=frames.ratings[frames.ratings["rater"].isin(codes)],
        blocks=frames.blocks[frames.blocks["rater"].isin(codes)],
        demographics=frames.demographics[frames.demographics["rater"].isin(codes)],
    )


def raters_where(session: Any, study: Any, where: Where) -> set[str] | None:
    """The codes of the study's raters ``where`` selects; None when ``where`` is empty.

    For the exports, which query the database without building frames.
    """
    if not where:
        return None
    from .frames import study_demographics

    demographics = study_demographics(session, study)
    return set(matching_raters(demographics, where, questions=study.demographics))
