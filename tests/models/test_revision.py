"""Every kind of change of a study's data changes its data version, in the same
transaction; a change of another study, or of nothing the analysis reads, does not."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlmodel import select

from annotator.clock import now
from annotator.collect.item_pages import update_block
from annotator.data.data_version import data_version
from annotator.data.importers import import_items, import_llm_scores
from annotator.data.rating_import import import_ratings
from annotator.models import Block, Demographics, Item, LLMScore, Rating, RatingChange, User
from annotator.study.raters import exclude_rater, include_rater, withdraw_rater
from annotator.study.studies import create_study, get_study
from annotator.study.studyfile import parse_study_file
from annotator.study.versions import update_study

DATA = Path(__file__).parents[1] / "data"


def _revise(session, study):
    rating = session.exec(select(Rating).order_by(Rating.id)).first()
    rating.value = rating.value + 1
    session.add(rating)


def _history(session, study):
    rating = session.exec(select(Rating).order_by(Rating.id)).first()
    session.add(RatingChange(rating_id=rating.id, value=2.0, previous_value=1.0, reason="revise"))


def _delete_llm(session, study):
    session.delete(session.exec(select(LLMScore).order_by(LLMScore.id)).first())


def _add_item(session, study):
    first = session.exec(select(Item).where(Item.study_id == study.id)).first()
    session.add(
        Item(study_id=study.id, external_id="new-item", benchmark_id=first.benchmark_id, fields={})
    )


def _complete_block(session, study):
    block = session.exec(select(Block).order_by(Block.id)).first()
    update_block(session, block, completed_at=None)


def _pass_over(session, study):
    # What a pass-over writes: the block's entries, one of them marked.
    block = session.exec(select(Block).order_by(Block.id)).first()
    order = [dict(entry) for entry in block.item_order]
    order[0]["passed_over"] = "2026-01-01T00:00:00+00:00"
    update_block(session, block, item_order=order)


def _answer(session, study):
    rater = session.exec(
        select(User)
        .where(User.study_id == study.id, User.id.not_in(select(Demographics.user_id)))
        .order_by(User.id)
    ).first()
    if rater is None:
        session.delete(session.exec(select(Demographics).order_by(Demographics.id)).first())
    else:
        session.add(Demographics(user_id=rater.id, answers={"gender": "female"}))


def _rater(session, study):
    return session.exec(
        select(User)
        .where(User.study_id == study.id, User.rater_code.is_not(None))
        .order_by(User.id)
    ).first()


def _exclude(session, study):
    exclude_rater(session, _rater(session, study), actor=None, via="test", reason="pilot")


def _withdraw(session, study):
    withdraw_rater(session, study, _rater(session, study), actor=None, via="test")


CHANGES = {
    "rating revised": _revise,
    "history row": _history,
    "LLM score deleted": _delete_llm,
    "item added": _add_item,
    "block reopened": _complete_block,
    "item passed over": _pass_over,
    "demographic answer": _answer,
    "rater excluded": _exclude,
    "rater withdrawn": _withdraw,
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_each_kind_of_change_changes_the_version(session, make_study, change):
    study = make_study(n_items=4, n_raters=2)
    other = make_study(n_items=4, n_raters=2, slug="other")
    before, others = data_version(session, study), data_version(session, other)
    CHANGES[change](session, study)
    # In the same transaction: read before the commit, by the writing session.
    session.flush()
    assert data_version(session, study) != before
    session.commit()
    assert data_version(session, study) != before
    assert data_version(session, other) == others


def test_including_a_rater_again_changes_the_version(session, make_study):
    study = make_study(n_items=4, n_raters=2)
    _exclude(session, study)
    session.commit()
    before = data_version(session, study)
    include_rater(session, _rater(session, study), actor=None, via="test")
    session.commit()
    assert data_version(session, study) != before


def test_serving_a_place_leaves_the_version(session, make_study):
    study = make_study(n_items=4, n_raters=2)
    before = data_version(session, study)
    block = session.exec(select(Block).order_by(Block.id)).first()
    update_block(session, block, current_position=3, current_served_at=now())
    session.commit()
    assert data_version(session, study) == before


def test_imports_and_a_study_update_change_the_version(session, tmp_path):
    toml = (DATA / "small-study.toml").read_text()
    study = create_study(session, parse_study_file(toml), source_toml=toml)
    session.commit()
    seen = [data_version(session, study)]
    for step in (
        lambda: import_items(session, study, DATA / "items.csv"),
        lambda: import_ratings(session, study, DATA / "ratings.csv"),
        lambda: import_llm_scores(session, study, DATA / "llm_scores.csv"),
    ):
        step()
        session.commit()
        seen.append(data_version(session, study))
    changed = toml.replace('name = "Small test study"', 'name = "Small test study, renamed"')
    update_study(
        session,
        get_study(session, study.slug),
        parse_study_file(changed),
        source_toml=changed,
        actor=None,
    )
    session.commit()
    seen.append(data_version(session, study))
    assert len(set(seen)) == len(seen), seen
