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
from ..models import Invite, Role, Study, User
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
    # A rubric study is decided criterion by criterion: each criterion's ratings and
    # scores are a test of their own, never mixed with another criterion's.
    for criterion in criterion_names(frames) or [None]:
        one = criterion_frames(frames, criterion) if criterion else frames
        verdicts += _verdicts(session, study, spec, settings, one, temperature, criterion)
    check = StopCheck(enabled=True, verdicts=verdicts)
    if verdicts and all(v.decided for v in verdicts):
        study.stopped_at = now()
        study.stop_reason = "\n".join(v.line() for v in verdicts)
        session.add(study)
        check.stopped = check.stopped_now = True
    return check


def _verdicts(session, study, spec, settings, frames, temperature, criterion) -> list:
    """Each judge's verdict on each scale of ``frames`` (one criterion's, or the study's)."""
    from ..analysis.matrices import llm_matrix
    from ..analysis.stop_rule import complete_items, judge_verdict
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
                epsilon=spec.epsilon,
                q=spec.q,
                scoring=spec.scoring,
            )
            verdicts.append(dataclasses.replace(verdict, criterion=criterion))
    return verdicts
