"""study_frames: the study's rows as long frames, checked against the database rows."""

from __future__ import annotations

import pandas as pd
import pytest
from sqlalchemy import text
from sqlmodel import select

from annotator.data.frames import data_version, study_frames
from annotator.models import LLMScore, Rating, RatingChange, Scale


def raw(session, sql: str, **params) -> list[tuple]:
    return [tuple(row) for row in session.execute(text(sql), params).all()]


def test_ratings_frame_holds_every_rating_with_its_names(session, make_study):
    study = make_study(n_items=12, n_raters=3, missing=0.1, seed=2)
    frames = study_frames(session, study)
    rows = raw(
        session,
        """
        SELECT i.external_id, b.name, s.name, u.rater_code, r.value, r.is_repeat,
               r.is_attention_check, r.position, r.source
        FROM rating r JOIN item i ON i.id = r.item_id JOIN benchmark b ON b.id = i.benchmark_id
        JOIN scale s ON s.id = r.scale_id JOIN "user" u ON u.id = r.rater_id
        WHERE s.study_id = :study ORDER BY r.id
        """,
        study=study.id,
    )
    got = frames.ratings[
        [
            "item",
            "benchmark",
            "scale",
            "rater",
            "value",
            "is_repeat",
            "is_attention_check",
            "position",
            "source",
        ]
    ]
    assert len(got) == len(rows) > 0
    expected = pd.DataFrame(rows, columns=got.columns)
    for column in got.columns:
        assert list(got[column]) == [
            bool(v) if column.startswith("is_") else v for v in expected[column]
        ], column
    assert str(frames.ratings["submitted_at"].dt.tz) == "UTC"


def test_attention_checks_pass_within_their_tolerance(session, make_study):
    study = make_study(n_items=5, n_raters=4, attention_items=2)
    r = study_frames(session, study).ratings
    checks = r[r["is_attention_check"]]
    # The generator gives odd raters a share of 0.9 on the first check (gold 0.5 +- 0.1).
    missed = checks[(checks["item"] == "check-00005") & checks["rater"].str.endswith(("1", "3"))]
    assert set(missed["attention_passed"]) == {False}
    assert checks["attention_passed"].sum() == len(checks) - len(missed)
    assert r.loc[~r["is_attention_check"], "attention_passed"].isna().all()


def test_llm_scales_items_blocks_and_demographics(session, make_study):
    study = make_study(
        n_items=6, n_raters=3, runs=2, extra_temperatures=(0.1,), unfinished_raters=1
    )
    frames = study_frames(session, study)
    n_llm = session.exec(
        select(LLMScore.id)
        .join(Scale, Scale.id == LLMScore.scale_id)
        .where(Scale.study_id == study.id)
    ).all()
    assert len(frames.llm) == len(n_llm) == 3 * (3 + 1) * 2 * 6
    assert set(frames.llm["temperature"]) == {1.0, 0.1}
    assert list(frames.scales["scale"]) == ["0-5", "0-10", "0-100"]
    assert list(frames.scales["max"]) == [5.0, 10.0, 100.0]
    assert frames.items["is_attention_check"].sum() == 2
    assert frames.benchmark_names == ["sts-b", "summeval"]
    blocks = frames.blocks
    assert len(blocks) == 9
    last = blocks[blocks["rater"] == "synthetic-r02"]
    assert list(last["status"]) == ["in progress", "in progress", "not started"]
    assert set(blocks.loc[blocks["rater"] != "synthetic-r02", "status"]) == {"done"}
    assert list(frames.demographics.columns[:3]) == ["rater", "gender", "age_group"]
    assert list(frames.demographics["gender"]) == ["female", "male", "female"]
    assert frames.demographic_keys == ["gender", "age_group", "english", "education"]
    assert frames.scale_bounds("0-10") == (0.0, 10.0)
    with pytest.raises(ValueError, match="known: 0-5, 0-10, 0-100"):
        frames.scale_bounds("0-7")


def test_data_version_changes_with_every_kind_of_change(session, make_study):
    study = make_study(n_items=4, n_raters=2)
    before = data_version(session, study)
    assert data_version(session, study) == before
    rating = session.exec(select(Rating).order_by(Rating.id)).first()
    session.add(RatingChange(rating_id=rating.id, value=2.0, previous_value=1.0, reason="revise"))
    session.commit()
    after_change = data_version(session, study)
    assert after_change != before
    llm = session.exec(select(LLMScore).order_by(LLMScore.id)).first()
    session.delete(llm)
    session.commit()
    assert data_version(session, study) != after_change
