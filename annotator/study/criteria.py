"""Rubric criteria: the ``[[criteria]]`` of a study file and their rows.

A study without ``[[criteria]]`` has one unnamed criterion, stored as the
criterion "" of its ratings and LLM scores; a rubric study rates every item
on each criterion that applies to its benchmark, on the block's scale.

Data-access functions take the session and leave the commit to the caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from pydantic import Field
from sqlmodel import Session, select

from ..models import Criterion, Study
from ..words import noun
from .strict import Strict

__all__ = [
    "UNNAMED",
    "CriterionSpec",
    "criteria_problems",
    "add_criteria",
    "study_criteria",
    "criteria_for",
    "criterion_names",
    "has_criteria",
    "criteria_update_problems",
    "update_criteria",
]

# The criterion of a study without [[criteria]].
UNNAMED = ""


class CriterionSpec(Strict):
    name: Annotated[str, Field(min_length=1, max_length=100)]
    # Markdown, shown to raters beside the score input.
    definition: Annotated[str, Field(min_length=1)]
    # The benchmarks it applies to; unset: every benchmark.
    benchmarks: Annotated[list[str], Field(min_length=1)] | None = None


def criteria_problems(criteria: Sequence[CriterionSpec], benchmarks: Sequence[str]) -> list[str]:
    """What is wrong with a study file's criteria, given its benchmark names."""
    problems = []
    seen: set[str] = set()
    covered: set[str] = set()
    for index, criterion in enumerate(criteria):
        if criterion.name in seen:
            problems.append(f"criteria[{index}].name: the name {criterion.name!r} appears twice")
        seen.add(criterion.name)
        named = criterion.benchmarks if criterion.benchmarks is not None else benchmarks
        unknown = [name for name in named if name not in benchmarks]
        if unknown:
            problems.append(
                f"criteria[{index}].benchmarks: unknown {noun(len(unknown), 'benchmark')} "
                f"{', '.join(map(repr, unknown))} (the benchmarks: {', '.join(benchmarks)})"
            )
        covered.update(named)
    if criteria:
        uncovered = [name for name in benchmarks if name not in covered]
        if uncovered:
            problems.append(
                f"criteria: no criterion applies to {noun(len(uncovered), 'benchmark')} "
                f"{', '.join(map(repr, uncovered))}"
                " (give each benchmark at least one criterion)"
            )
    return problems


def add_criteria(session: Session, study: Study, criteria: Sequence[CriterionSpec]) -> None:
    """Store a new study's criteria in the study file's order."""
    for position, criterion in enumerate(criteria):
        session.add(
            Criterion(
                study_id=study.id,
                name=criterion.name,
                definition=criterion.definition,
                position=position,
                benchmarks=criterion.benchmarks,
            )
        )


def study_criteria(session: Session, study: Study) -> list[Criterion]:
    """The study's criteria in the study file's order (empty: one unnamed criterion)."""
    return list(
        session.exec(
            select(Criterion).where(Criterion.study_id == study.id).order_by(Criterion.position)
        )
    )


def criteria_for(criteria: Sequence[Criterion], benchmark: str) -> list[Criterion]:
    """The criteria of ``criteria`` that apply to items of ``benchmark``."""
    return [c for c in criteria if c.benchmarks is None or benchmark in c.benchmarks]


def criterion_names(session: Session, study: Study) -> list[str]:
    """The names of the study's criteria; ``[""]`` for a study without criteria."""
    return [c.name for c in study_criteria(session, study)] or [UNNAMED]


def has_criteria(session: Session, study: Study) -> bool:
    """Whether the study has named criteria (``[[criteria]]``)."""
    found = session.exec(select(Criterion.id).where(Criterion.study_id == study.id).limit(1))
    return found.first() is not None


def criteria_update_problems(
    session: Session, study: Study, criteria: Sequence[CriterionSpec]
) -> list[str]:
    """Changes a study update may not make: ratings and scores refer to the
    criteria by name and were given on the benchmarks they applied to, so
    only the definitions (what raters read) may change."""
    stored = [(c.name, c.benchmarks) for c in study_criteria(session, study)]
    new = [(c.name, c.benchmarks) for c in criteria]
    if stored == new:
        return []

    def listed(pairs):
        return ", ".join(name for name, _ in pairs) or "none"

    return [
        f"criteria: the criteria ({listed(stored)}) and the benchmarks they apply to cannot "
        f"change (the file has {listed(new)}); only their definitions may"
    ]


def update_criteria(session: Session, study: Study, criteria: Sequence[CriterionSpec]) -> bool:
    """Give the stored criteria the file's definitions; whether any changed."""
    changed = False
    for stored, new in zip(study_criteria(session, study), criteria, strict=True):
        if stored.definition != new.definition:
            stored.definition = new.definition
            session.add(stored)
            changed = True
    return changed
