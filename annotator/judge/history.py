"""What the LLM judge runs of a study left behind: scores per model and scale,
prompt versions, and the requests that gave no valid score.

Read by ``annotator judge failures`` and the lead's study page; the runner that
writes these rows is :mod:`annotator.judge.runner`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import and_, case, exists, func
from sqlmodel import Session, select

from ..models import Item, JudgeFailure, LLMScore, Study
from ..services.cache import VersionedCache
from ..study.criteria import criterion_names
from ..study.studies import study_benchmarks, study_scales

__all__ = [
    "FailureRow",
    "JudgeRunSummary",
    "failure_models",
    "judge_failures",
    "judge_run_summaries",
    "cached_judge_run_summaries",
    "scores_version",
]


def _utc(moment: datetime) -> datetime:
    # Stored without a zone (the column is naive on SQLite and PostgreSQL alike), always UTC.
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


@dataclass(frozen=True)
class FailureRow:
    """One stored judge failure (a request that gave no valid score)."""

    id: int
    item: str
    scale: str
    model: str
    run: str
    temperature: float
    prompt_hash: str
    created_at: datetime
    raw_reply: str | None
    error: str
    # A score for the same item, scale, criterion, model and run was stored later
    # (a rerun asked again and got one): the failure is history, not a gap.
    scored_since: bool
    # The criterion asked about ("" in a study without [[criteria]]).
    criterion: str = ""

    @property
    def where(self) -> str:
        """The item, and its criterion in a rubric study (``s2 (coherence)``)."""
        return f"{self.item} ({self.criterion})" if self.criterion else self.item

    def as_json(self) -> dict:
        # The criterion only where there is one: a study without criteria lists as before.
        named = {"criterion": self.criterion} if self.criterion else {}
        return {
            **named,
            "item": self.item,
            "scale": self.scale,
            "model": self.model,
            "run": self.run,
            "temperature": self.temperature,
            "prompt_hash": self.prompt_hash,
            "created_at": _utc(self.created_at).isoformat(),
            "raw_reply": self.raw_reply,
            "error": self.error,
            "scored_since": self.scored_since,
        }


@dataclass(frozen=True)
class JudgeRunSummary:
    """A model's judged scores and failures on one scale."""

    model: str
    scale: str
    scores: int
    # Per benchmark (each has its own prompt; "sts-b (fluency)": per benchmark and
    # criterion in a rubric study), the prompt versions (hashes) the
    # scores were asked under, the newest first: the one whose latest score was
    # stored last, as annotator.data.prompt_versions (the analyses) decides.
    prompt_versions: dict[str, tuple[str, ...]]
    temperatures: tuple[float, ...]
    failures: int
    # Failures whose score is still missing (no later run stored one).
    open_failures: int

    @property
    def most_versions(self) -> int:
        return max(map(len, self.prompt_versions.values()), default=0)


def _scale_ids(session: Session, study: Study, scale: str | None) -> dict[int, str]:
    names = {s.id: s.name for s in study_scales(session, study)}
    if scale is not None and scale not in names.values():
        raise ValueError(
            f"scale: unknown scale {scale!r} (the study has: {', '.join(names.values())})"
        )
    return {i: n for i, n in names.items() if scale is None or n == scale}


def _scored_since():
    return exists().where(
        and_(
            LLMScore.item_id == JudgeFailure.item_id,
            LLMScore.scale_id == JudgeFailure.scale_id,
            LLMScore.criterion == JudgeFailure.criterion,
            LLMScore.model == JudgeFailure.model,
            # The whole key of a stored score (a failure always has a temperature).
            LLMScore.temperature == JudgeFailure.temperature,
            LLMScore.run == JudgeFailure.run,
        )
    )


def judge_failures(
    session: Session, study: Study, *, model: str | None = None, scale: str | None = None
) -> list[FailureRow]:
    """The study's stored judge failures, oldest first (``ValueError`` for an unknown scale)."""
    scales = _scale_ids(session, study, scale)
    query = (
        select(JudgeFailure, Item.external_id, _scored_since().label("scored_since"))
        .join(Item, Item.id == JudgeFailure.item_id)
        .where(Item.study_id == study.id, JudgeFailure.scale_id.in_(list(scales)))
        .order_by(JudgeFailure.created_at, JudgeFailure.id)
    )
    if model is not None:
        query = query.where(JudgeFailure.model == model)
    return [
        FailureRow(
            id=failure.id,
            item=external_id,
            scale=scales[failure.scale_id],
            model=failure.model,
            run=failure.run,
            temperature=failure.temperature,
            prompt_hash=failure.prompt_hash,
            created_at=failure.created_at,
            raw_reply=failure.raw_reply,
            error=failure.error,
            scored_since=bool(since),
            criterion=failure.criterion,
        )
        for failure, external_id, since in session.exec(query).all()
    ]


def judge_run_summaries(session: Session, study: Study) -> list[JudgeRunSummary]:
    """Per model and scale: the judged scores (imported ones have no prompt
    version and are left out), their prompt versions and the failures."""
    scales = _scale_ids(session, study, None)
    order = list(scales)
    benchmarks = {b.id: b.name for b in study_benchmarks(session, study)}
    bench_order = list(benchmarks.values())
    # Where a benchmark's (and criterion's) versions are listed: in the study's order.
    place: dict[str, tuple[int, int]] = {}
    criteria = {name: i for i, name in enumerate(criterion_names(session, study))}
    scores: dict[tuple[str, int], dict] = {}
    for (
        model,
        scale_id,
        bench_id,
        criterion,
        prompt_hash,
        temperature,
        count,
        latest,
    ) in session.exec(
        select(
            LLMScore.model,
            LLMScore.scale_id,
            Item.benchmark_id,
            LLMScore.criterion,
            LLMScore.prompt_hash,
            LLMScore.temperature,
            func.count(LLMScore.id),
            func.max(LLMScore.id),
        )
        .join(Item, Item.id == LLMScore.item_id)
        .where(Item.study_id == study.id, LLMScore.prompt_hash.is_not(None))
        .group_by(
            LLMScore.model,
            LLMScore.scale_id,
            Item.benchmark_id,
            LLMScore.criterion,
            LLMScore.prompt_hash,
            LLMScore.temperature,
        )
    ).all():
        entry = scores.setdefault((model, scale_id), {"n": 0, "versions": {}, "temps": set()})
        entry["n"] += count
        entry["temps"].add(temperature)
        # In a rubric study each criterion has its prompt: versions per benchmark and criterion.
        name = f"{benchmarks[bench_id]} ({criterion})" if criterion else benchmarks[bench_id]
        place[name] = (bench_order.index(benchmarks[bench_id]), criteria.get(criterion, -1))
        versions = entry["versions"].setdefault(name, {})
        seen = versions.get(prompt_hash)
        versions[prompt_hash] = latest if seen is None else max(seen, latest)
    failures: dict[tuple[str, int], tuple[int, int]] = {}
    for model, scale_id, count, still_open in session.exec(
        select(
            JudgeFailure.model,
            JudgeFailure.scale_id,
            func.count(JudgeFailure.id),
            func.sum(case((_scored_since(), 0), else_=1)),
        )
        .join(Item, Item.id == JudgeFailure.item_id)
        .where(Item.study_id == study.id)
        .group_by(JudgeFailure.model, JudgeFailure.scale_id)
    ).all():
        failures[model, scale_id] = (count, int(still_open or 0))
    out = []
    for model, scale_id in sorted(
        set(scores) | set(failures), key=lambda k: (k[0], order.index(k[1]))
    ):
        entry = scores.get((model, scale_id), {"n": 0, "versions": {}, "temps": set()})
        n_failed, n_open = failures.get((model, scale_id), (0, 0))
        out.append(
            JudgeRunSummary(
                model=model,
                scale=scales[scale_id],
                scores=entry["n"],
                prompt_versions={
                    bench: tuple(sorted(by_hash, key=by_hash.get, reverse=True))
                    for bench, by_hash in sorted(
                        entry["versions"].items(),
                        key=lambda kv: place[kv[0]],
                    )
                },
                temperatures=tuple(sorted(t for t in entry["temps"] if t is not None)),
                failures=n_failed,
                open_failures=n_open,
            )
        )
    return out


def failure_models(session: Session, study: Study) -> list[str]:
    """The models with stored failures in the study, by name."""
    return list(
        session.exec(
            select(JudgeFailure.model)
            .join(Item, Item.id == JudgeFailure.item_id)
            .where(Item.study_id == study.id)
            .distinct()
            .order_by(JudgeFailure.model)
        ).all()
    )


# Per (database, study): the scores' version and the summaries computed at it. The
# summary groups every judged score of the study (over 0.4 s for 100,000 on SQLite,
# more than the warm study page's whole budget), so the study page keeps it until a
# score or a failure is stored anywhere.
_SUMMARIES = VersionedCache(32)


def scores_version(session: Session) -> tuple:
    # The highest ids of all studies' scores and failures: one index lookup each,
    # where counting this study's rows would read all of them.
    # Neither table has rows updated or deleted (a score is stored once, never
    # overwritten), so a new row is the only change.
    return (
        session.exec(select(func.max(LLMScore.id))).one(),
        session.exec(select(func.max(JudgeFailure.id))).one(),
    )


def cached_judge_run_summaries(session: Session, study: Study) -> list[JudgeRunSummary]:
    """:func:`judge_run_summaries`, computed again only once an LLM score or a
    judge failure was stored since."""
    return _SUMMARIES.get(
        (str(session.get_bind().url), study.id),
        lambda: scores_version(session),
        lambda: judge_run_summaries(session, study),
    )
