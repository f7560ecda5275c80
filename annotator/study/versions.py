"""Updating a study from a new version of its file (``annotator study update``).

What raters read may change at any time: the consent, the benchmarks'
instructions and templates, the demographic questions, the completion
message, the gap, the validation settings. Each update that changes
anything is a new :class:`~annotator.models.StudyVersion`; every rating
records the version it was given under (``Rating.study_version``).

What the stored data refers to may not change, and an update that tries is
refused with the key path: the scales (their names, order, bounds and step:
every rating and block is on one of them) and the benchmarks (items belong to
them; a new benchmark may be added). The items themselves are not in the file
(they are imported) and no update touches them. A new template must use only
fields that every item of its benchmark has.

Data-access functions take the session and leave the commit to the caller.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func
from sqlmodel import Session, select

from ..models import (
    AuditAction,
    AuditEvent,
    Benchmark,
    Block,
    Item,
    Rating,
    Scale,
    Study,
    StudyVersion,
    User,
)
from ..words import noun, plural
from .criteria import criteria_update_problems, study_criteria, update_criteria
from .raters import counted_rater
from .studies import study_benchmarks, study_scales
from .studyfile import StudyFile, assignment_settings, template_fields, validation_settings

__all__ = [
    "StudyUpdateError",
    "StudyUpdate",
    "update_study",
    "study_versions",
    "VersionRow",
    "version_rows",
    "get_version",
]

# Study columns a new file may change, compared as stored.
_PLAIN_FIELDS = (
    "name",
    "session_gap_days",
    "scale_order",
    "consent",
    "completion_url",
    "completion_code",
    "break_every",
    "withdrawn_ratings",
)


class StudyUpdateError(ValueError):
    """An update that would change what stored data refers to; ``problems``
    holds one line per field, with its key path."""

    def __init__(self, slug: str, problems: list[str]) -> None:
        super().__init__(f"study {slug!r} was not updated: {plural(len(problems), 'problem')}")
        self.problems = problems

    def __str__(self) -> str:
        return "\n  ".join([self.args[0], *self.problems])


@dataclass
class StudyUpdate:
    """What an update did: the new version (unchanged when nothing changed)."""

    version: int
    changes: list[str]


def _scale_problems(session: Session, study: Study, spec: StudyFile) -> list[str]:
    stored = study_scales(session, study)
    problems = []
    if [s.name for s in stored] != [s.name for s in spec.scales]:
        problems.append(
            f"scales: the scales are {', '.join(s.name for s in stored)} in this order and "
            f"cannot change (the file has {', '.join(s.name for s in spec.scales)})"
        )
        return problems
    for index, (old, new) in enumerate(zip(stored, spec.scales, strict=True)):
        for key in ("min", "max", "step"):
            if getattr(old, key) != getattr(new, key):
                problems.append(
                    f"scales[{index}].{key}: {getattr(old, key):g} cannot change to "
                    f"{getattr(new, key):g} (ratings and blocks are on this scale)"
                )
    return problems


def _benchmark_problems(
    session: Session, study: Study, spec: StudyFile, stored: list[Benchmark]
) -> list[str]:
    problems = []
    new_names = [b.name for b in spec.benchmarks]
    for old in stored:
        if old.name not in new_names:
            problems.append(
                f"benchmarks: {old.name!r} is missing; a benchmark cannot be removed or "
                "renamed (items belong to it)"
            )
    by_name = {b.name: b for b in stored}
    for index, new in enumerate(spec.benchmarks):
        old = by_name.get(new.name)
        if old is None or old.template == new.template:
            continue
        needed = template_fields(new.template)
        for external_id, fields in session.exec(
            select(Item.external_id, Item.fields).where(Item.benchmark_id == old.id)
        ).all():
            missing = sorted(needed - set(fields or {}))
            if missing:
                problems.append(
                    f"benchmarks[{index}].template: uses {noun(len(missing), 'field')} {', '.join(missing)} that "
                    f"item {external_id!r} does not have"
                )
                break
    return problems


def _assignment_problems(session: Session, study: Study, spec: StudyFile) -> list[str]:
    # Blocks dealt under one design cannot be dealt again under another:
    # the [assignment] table is fixed once any block has started (the
    # abandonment deadline excepted, which deals nothing).
    old = assignment_settings(study.source_toml)
    if old.model_copy(update={"abandon_after_days": 0}) == spec.assignment.model_copy(
        update={"abandon_after_days": 0}
    ):
        return []
    started = session.exec(
        select(Block.id)
        .join(User, User.id == Block.rater_id)
        .where(User.study_id == study.id, Block.started_at.is_not(None))
    ).first()
    if started is None:
        return []
    return [
        "assignment: the design cannot change once a rater has started a block "
        "(only abandon_after_days may)"
    ]


def update_study(
    session: Session, study: Study, spec: StudyFile, *, source_toml: str, actor: User | None
) -> StudyUpdate:
    """Apply a new version of ``study``'s file; :class:`StudyUpdateError` if it may not.

    Nothing is written when anything is refused, nor when nothing changed.
    """
    if spec.slug != study.slug:
        raise StudyUpdateError(
            study.slug, [f"slug: the file is for {spec.slug!r}, not {study.slug!r}"]
        )
    stored = study_benchmarks(session, study)
    problems = (
        _scale_problems(session, study, spec)
        + _benchmark_problems(session, study, spec, stored)
        + criteria_update_problems(session, study, spec.criteria)
    )
    problems += _assignment_problems(session, study, spec)
    if problems:
        raise StudyUpdateError(study.slug, problems)

    changes: list[str] = []
    updates: dict[str, object] = {}
    for key in _PLAIN_FIELDS:
        if getattr(study, key) != getattr(spec, key):
            changes.append(key)
            updates[key] = getattr(spec, key)
    for key in ("demographics", "attention_checks", "test_retest"):
        value = getattr(spec, key)
        dumped = [q.model_dump() for q in value] if key == "demographics" else value.model_dump()
        if getattr(study, key) != dumped:
            changes.append(key)
            updates[key] = dumped
    if validation_settings(study.source_toml) != spec.validation:
        changes.append("validation")
    if assignment_settings(study.source_toml) != spec.assignment:
        changes.append("assignment")
    by_name = {b.name: b for b in stored}
    bench_updates = []
    for index, new in enumerate(spec.benchmarks):
        old = by_name.get(new.name)
        if old is None:
            changes.append(f"benchmarks[{index}] (new: {new.name})")
            added = sum(1 for b in bench_updates if b.id is None)
            bench_updates.append(
                Benchmark(study_id=study.id, position=len(stored) + added, **new.model_dump())
            )
            continue
        for key in ("instructions", "template"):
            if getattr(old, key) != getattr(new, key):
                changes.append(f"benchmarks[{index}].{key}")
                setattr(old, key, getattr(new, key))
                bench_updates.append(old)
    criteria = study_criteria(session, study)
    for index, (old, new) in enumerate(zip(criteria, spec.criteria, strict=True)):
        if old.definition != new.definition:
            changes.append(f"criteria[{index}].definition")
    if not changes:
        return StudyUpdate(study.version, [])

    update_criteria(session, study, spec.criteria)

    for key, value in updates.items():
        setattr(study, key, value)
    study.version += 1
    study.source_toml = source_toml
    session.add(study)
    session.add_all(bench_updates)
    session.add(
        StudyVersion(
            study_id=study.id, version=study.version, source_toml=source_toml, changes=changes
        )
    )
    session.add(
        AuditEvent(
            actor_id=actor.id if actor is not None else None,
            study_id=study.id,
            action=AuditAction.STUDY_UPDATED,
            details={"version": study.version, "changes": changes},
        )
    )
    session.flush()
    return StudyUpdate(study.version, changes)


def study_versions(session: Session, study: Study) -> list[StudyVersion]:
    """The study's versions, oldest first."""
    return list(
        session.exec(
            select(StudyVersion)
            .where(StudyVersion.study_id == study.id)
            .order_by(StudyVersion.version)
        )
    )


@dataclass(frozen=True)
class VersionRow:
    """A study version as the lead's versions page shows it."""

    version: int
    created_at: datetime
    # The key paths that changed from the previous version (empty for version 1).
    changes: list[str]
    # Ratings given under this version: all of them, and those of raters who count
    # (withdrawn and excluded raters' are kept but enter no export or statistic).
    ratings: int
    counted_ratings: int
    # The study file's lines changed from the previous version (unified diff; "" for
    # version 1 and for versions made before the file was stored).
    diff: str


def _ratings_per_version(session: Session, study: Study, *, counted: bool) -> dict[int, int]:
    query = (
        select(Rating.study_version, func.count(Rating.id))
        .join(Scale, Scale.id == Rating.scale_id)
        .where(Scale.study_id == study.id)
        .group_by(Rating.study_version)
    )
    if counted:
        query = query.where(counted_rater(Rating.rater_id))
    return dict(session.exec(query).all())


def version_rows(session: Session, study: Study) -> list[VersionRow]:
    """The study's versions, newest first, with the ratings given under each."""
    given = _ratings_per_version(session, study, counted=False)
    counted = _ratings_per_version(session, study, counted=True)
    rows = []
    previous = None
    for version in study_versions(session, study):
        diff = ""
        if previous is not None and previous.source_toml and version.source_toml:
            diff = "".join(
                difflib.unified_diff(
                    previous.source_toml.splitlines(keepends=True),
                    version.source_toml.splitlines(keepends=True),
                    fromfile=f"version {previous.version}",
                    tofile=f"version {version.version}",
                )
            )
        rows.append(
            VersionRow(
                version=version.version,
                created_at=version.created_at,
                changes=list(version.changes or []),
                ratings=given.get(version.version, 0),
                counted_ratings=counted.get(version.version, 0),
                diff=diff,
            )
        )
        previous = version
    return rows[::-1]


def get_version(session: Session, study: Study, version: int) -> StudyVersion | None:
    return session.exec(
        select(StudyVersion).where(
            StudyVersion.study_id == study.id, StudyVersion.version == version
        )
    ).first()
