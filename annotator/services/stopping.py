"""Stop when decided, the check: check a study's judges and stop serving blocks once all are settled.

With ``[validation] stop_when_decided = true``, :func:`check_stop` runs the
anytime-valid alt-test (:mod:`annotator.analysis.stop_rule`) for every scale and
every judge named in ``judges``. When each one passes or cannot pass within the
study's budget, it records the time and the reasons on the study
(``Study.stopped_at``, ``Study.stop_reason``); from then on no new block is served:
blocks not started are closed (:mod:`annotator.collect.block_states`), the crowd entry link and
unused invite links say the study is complete. Blocks in progress may finish: the
rater was promised the block, and the ratings they add only sharpen the estimates
(the verdict by betting stays valid when more data come after it).

The check reads the whole study, so it runs outside the score post: from
``annotator validation check STUDY`` (by hand or from cron). A stop is never
undone by a later check; the lead reopens a study with ``--reopen``.

Data-access functions take the session and leave the commit to the caller.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

from sqlalchemy import func
from sqlmodel import Session, select

from ..clock import now
from ..collect.rated_places import PASSED_OVER
from ..models import Block, Invite, Item, Role, Scale, Study, User
from ..study.crowd_spec import crowd_settings
from ..study.raters import counted_rater
from ..study.studyfile import validation_settings

__all__ = ["StopCheck", "check_stop"]


@dataclass
class StopCheck:
    """What a check found: whether the study stops (or had stopped) and why."""

    enabled: bool
    stopped: bool = False
    # True when this check made the stop.
    stopped_now: bool = False
    # One per scale and judge (empty when the study had stopped already).
    verdicts: list = field(default_factory=list)

    def summary(self) -> str:
        if not self.enabled:
            return "stop_when_decided is not set in the study's [validation] table"
        lines = [v.line() for v in self.verdicts]
        if self.stopped_now:
            head = "decided: the study stops serving new blocks"
        elif self.stopped:
            head = "the study had stopped already"
        else:
            head = "not decided yet: the study goes on"
        return "\n".join([head, *("  " + line for line in lines)])


def _raters_to_come(session: Session, study: Study, rated: int) -> float:
    """Raters who may still rate a scale that ``rated`` raters have rated."""
    enrolled = session.exec(
        select(func.count(User.id)).where(
            User.study_id == study.id,
            User.role == Role.RATER,
            User.consented_at.is_not(None),
            counted_rater(User.id),
        )
    ).one()
    invites = session.exec(
        select(func.count(Invite.id)).where(Invite.study_id == study.id, Invite.used_at.is_(None))
    ).one()
    crowd = crowd_settings(study.crowd)
    places = 0.0
    if crowd is not None:
        if crowd.max_raters is None:
            places = math.inf
        else:
            joined = session.exec(
                select(func.count(User.id)).where(
                    User.study_id == study.id,
                    User.role == Role.RATER,
                    User.consented_at.is_not(None),
                )
            ).one()
            places = max(crowd.max_raters - joined, 0)
    return max(enrolled - rated, 0) + invites + places


def _open_items(session: Session, study: Study) -> dict[tuple[str, str], set[str]]:
    """Each counted rater's items still to rate, by (rater code, scale name).

    The regular entries of the rater's block on the scale (not a repeat, not an
    attention check, not passed over), while the block is not completed; an empty set
    for a completed block. A rater without a block on a scale (ratings imported) is
    not a key: what they may still add is not known. A place handed on after a
    pass-over (:mod:`annotator.collect.refill`) can still grow an open block by one
    item; that rare case is not foreseen here.
    """
    rows = session.exec(
        select(User.rater_code, Scale.name, Block.completed_at, Block.item_order)
        .join(Scale, Scale.id == Block.scale_id)
        .join(User, User.id == Block.rater_id)
        .where(Scale.study_id == study.id, counted_rater(Block.rater_id))
    ).all()
    external = dict(
        session.exec(select(Item.id, Item.external_id).where(Item.study_id == study.id)).all()
    )
    out: dict[tuple[str, str], set[str]] = {}
    for code, scale, completed_at, order in rows:
        entries = [] if completed_at is not None else order or []
        out[(code, scale)] = {
            external[e["item"]]
            for e in entries
            if not e.get("repeat") and not e.get("attention") and PASSED_OVER not in e
            if e["item"] in external
        }
    return out


def check_stop(session: Session, study: Study) -> StopCheck:
    """Decide whether ``study`` stops serving blocks; record the stop on the study."""
    from ..analysis.criteria import criterion_frames, criterion_names
    from ..analysis.matrices import main_temperature
    from ..analysis.settings import study_settings
    from ..data.frames import study_frames

    spec = validation_settings(study.source_toml or "")
    if not spec.stop_when_decided:
        return StopCheck(enabled=False)
    if study.stopped_at is not None:
        return StopCheck(enabled=True, stopped=True)
    settings = study_settings(study)
    frames = study_frames(session, study)
    # The rule of the dashboard and the exports, the lead's choice for single judges included.
    temperature, _ = main_temperature(frames, settings.temperature, settings.judge_temperatures)
    verdicts = []
    open_items = _open_items(session, study)
    # A rubric study is decided criterion by criterion: each criterion's ratings and
    # scores are a test of their own, never mixed with another criterion's.
    for criterion in criterion_names(frames) or [None]:
        one = criterion_frames(frames, criterion) if criterion else frames
        verdicts += _verdicts(
            session, study, spec, settings, one, temperature, criterion, open_items
        )
    check = StopCheck(enabled=True, verdicts=verdicts)
    if verdicts and all(v.decided for v in verdicts):
        study.stopped_at = now()
        study.stop_reason = "\n".join(v.line() for v in verdicts)
        session.add(study)
        check.stopped = check.stopped_now = True
    return check


def _verdicts(session, study, spec, settings, frames, temperature, criterion, open_items) -> list:
    """Each judge's verdict on each scale of ``frames`` (one criterion's, or the study's)."""
    from ..analysis.matrices import llm_matrix
    from ..analysis.stop_rule import complete_items, judge_verdict, rater_items_left
    from ..data.matrix_rules import matrix_ratings

    ratings = frames.ratings
    verdicts = []
    for scale in frames.scale_names:
        kept = ratings[matrix_ratings(ratings, scale)]
        rated = int(kept["rater"].nunique())
        to_come = _raters_to_come(session, study, rated)
        # The test by betting sees an item once it is complete, with its first k
        # ratings, in the order the items became complete (complete_items says why).
        humans, order = complete_items(
            kept, raters_per_item=settings.matrix_settings.reference_raters(rated + to_come)
        )
        judged = llm_matrix(frames, scale, temperature=temperature, runs=settings.runs)
        rated_items = kept.groupby("rater")["item"].agg(set).to_dict()
        still_to_rate = {r: open_items.get((r, scale)) for r in rated_items}
        for judge in spec.judges:
            scores = {}
            if judge in judged.columns:
                column = judged[judge].dropna()
                scores = dict(zip(column.index.tolist(), column.tolist(), strict=True))
            verdict = judge_verdict(
                scale=scale,
                judge=judge,
                humans=humans,
                llm={i: scores[i] for i in order if i in scores},
                budget_items=len(scores),
                raters_to_come=to_come,
                # Each rater's own budget: an overlap rater holds only their share.
                items_left=rater_items_left(rated_items, order, set(scores), still_to_rate),
                epsilon=spec.epsilon,
                q=spec.q,
                scoring=spec.scoring,
            )
            verdicts.append(dataclasses.replace(verdict, criterion=criterion))
    return verdicts
