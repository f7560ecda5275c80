"""The stop check's futility stop in the app, across the study shapes: a judge that
fails is stopped as unlikely to pass with each rater's real remaining items, and the
stop reason says so; a judge that passes is never stopped for futility.

Each study is caught mid-collection: every rater has rated the first part of their own
items (their block's share: every item in a crossed study, two raters an item in an
overlap one) and still has the rest to rate in a block in progress. Two judges: "good"
gives the items' true scores (the raters are noisy), "poor" random ones.
"""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import delete, update
from sqlmodel import select

from annotator.analysis.stop_rule import Outcome, rater_items_left
from annotator.models import (
    Block,
    Item,
    LLMScore,
    RaterStatus,
    Rating,
    RatingChange,
    Scale,
    Study,
    User,
)
from annotator.services.stopping import check_stop

STOP = '[validation]\nstop_when_decided = true\njudges = ["good", "poor"]\n'
OVERLAP = '[assignment]\ndesign = "overlap"\nraters_per_item = 2\nitems_per_rater = 60\n'
CROWD = '[crowd]\nplatform = "prolific"\nmax_raters = 5\n[crowd.completion_codes]\n'
BASE = {
    "n_items": 160,
    "n_raters": 4,
    "scales": (("0-5", 0.0, 5.0, 0.1),),
    "benchmarks": ("sts-b",),
    "models": ("good", "poor"),
    "extra_temperatures": (),
    "runs": 1,
    "model_sd": 0.0,
    "llm_noise_sd": 0.0,
    "noise_sd": 0.08,
    "repeats": 0,
    "attention_items": 0,
}
# name: (make_study changes, raters per item: None for every rater)
SHAPES = {
    "crossed": ({}, None),
    "overlap": ({"study_toml_extra": STOP + OVERLAP}, 2),
    "rubric": ({"criteria": ("coherence", "fluency")}, None),
    "temperatures": ({"extra_temperatures": (0.1,)}, None),
    "crowd": ({"n_raters": 5, "study_toml_extra": STOP + CROWD}, None),
}
# Share of each rater's own items rated so far.
DONE = 0.75


def _mid_collection(session, study: Study, per_item: int | None, seed: int = 3) -> None:
    """Cut the generated study back to a collection in progress (module docstring)."""
    rng = np.random.default_rng(seed)
    items = session.exec(select(Item.id).where(Item.study_id == study.id).order_by(Item.id)).all()
    raters = session.exec(
        select(User.id).where(User.study_id == study.id, User.role == "rater").order_by(User.id)
    ).all()
    scale = session.exec(select(Scale.id).where(Scale.study_id == study.id)).one()
    n = len(raters)
    for j, rater in enumerate(raters):
        own = [
            item
            for i, item in enumerate(items)
            if per_item is None or (i - j) % n < per_item  # raters j .. j+k-1 hold item i
        ]
        order = [own[i] for i in rng.permutation(len(own))]
        rated = order[: int(DONE * len(order))]
        unrated = select(Rating.id).where(Rating.rater_id == rater, Rating.item_id.not_in(rated))
        session.execute(delete(RatingChange).where(RatingChange.rating_id.in_(unrated)))
        session.execute(delete(Rating).where(Rating.id.in_(unrated)))
        # Ratings arrive in the block's order (the check takes items in the order
        # they became complete).
        for place, item in enumerate(rated):
            session.execute(
                update(Rating)
                .where(Rating.rater_id == rater, Rating.item_id == item)
                .values(position=place + 1)
            )
        session.execute(
            update(Block)
            .where(Block.rater_id == rater, Block.scale_id == scale)
            .values(item_order=[{"item": i} for i in order], completed_at=None)
        )
    # The poor judge: random scores (the good one gives the true scores).
    poor = session.exec(
        select(LLMScore).where(LLMScore.model == "poor", LLMScore.scale_id == scale)
    ).all()
    for score in poor:
        score.value = float(np.round(rng.uniform(0, 5), 1))
        session.add(score)
    session.commit()


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_failing_judge_is_stopped_for_futility_and_a_passing_one_never(
    session, make_study, shape
):
    changes, per_item = SHAPES[shape]
    study = make_study(**{**BASE, "slug": shape, "study_toml_extra": STOP, **changes})
    if shape == "crowd":
        # One of the five withdrew: their ratings count nowhere, and the crowd link is
        # full (max_raters joined), so no rater is still to come.
        gone = session.exec(select(User).where(User.rater_code == "crowd-r04")).one()
        gone.status = RaterStatus.WITHDRAWN
        session.add(gone)
        session.commit()
    _mid_collection(session, study, per_item)
    check = check_stop(session, study)
    session.commit()
    by_judge: dict[str, list] = {}
    for verdict in check.verdicts:
        by_judge.setdefault(verdict.judge, []).append(verdict)
    criteria = 2 if shape == "rubric" else 1
    assert len(by_judge["poor"]) == len(by_judge["good"]) == criteria
    for verdict in by_judge["poor"]:
        # Items are left for every rater: the futility bet or the chance bound, not
        # impossibility, stops it.
        assert verdict.outcome == Outcome.CANNOT_PASS, verdict.line()
        assert verdict.why.startswith("stopped for futility: "), verdict.line()
    for verdict in by_judge["good"]:
        assert verdict.outcome == Outcome.PASSES, verdict.line()
    stored = session.get(Study, study.id)
    assert check.stopped_now and stored.stopped_at is not None
    reason = stored.stop_reason.splitlines()
    assert len(reason) == 2 * criteria
    assert any(
        line.startswith("scale 0-5") and "judge poor: cannot pass; stopped for futility" in line
        for line in reason
    )
    if per_item is not None:
        # Overlap: each rater's budget is their share, below the items left.
        assert "for any rater who rated)" in stored.stop_reason


def test_each_raters_items_left_are_their_blocks_items_not_complete():
    rated = {"a": {1, 2, 3}, "b": {2, 3}, "c": {7}}
    # Items 1 and 2 are complete; a still has 4 and 5 in their block, b's block is
    # completed, c has no block (imported ratings): every item not complete.
    still = {"a": {4, 5}, "b": set()}
    judged = {1, 2, 3, 4, 5, 6, 7}
    left = rater_items_left(rated, [1, 2], judged, still)
    assert left == {"a": 3, "b": 1, "c": 5}
    # Items the judge did not score never enter.
    assert rater_items_left(rated, [1, 2], {1, 2, 3}, still) == {"a": 1, "b": 1, "c": 1}
