"""The streamed long export against a row-by-row reference, and its number text.

The reference builds each row from ORM objects one at a time (how the export
was written before it was vectorised and streamed) and writes the frame with
pandas; the export must give the same file, however it is cut into chunks.
"""

from __future__ import annotations

import math
import random
import struct

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import func
from sqlmodel import select

from annotator.data import exporters, long_rows
from annotator.data.exporters import LONG_COLUMNS, number_text, render_export
from annotator.models import (
    Benchmark,
    Block,
    Demographics,
    Item,
    LLMScore,
    Rating,
    RatingChange,
    Scale,
    User,
)


def _reference_long_csv(session, study) -> str:
    scales = {s.id: s for s in session.exec(select(Scale).where(Scale.study_id == study.id))}
    benches = {b.id: b.name for b in session.exec(select(Benchmark))}
    changes = (
        select(RatingChange.rating_id, func.count(RatingChange.id).label("n"))
        .group_by(RatingChange.rating_id)
        .subquery()
    )
    query = (
        select(
            Rating,
            Item,
            User.rater_code,
            Block.position,
            changes.c.n,
            Block.platform_study_id,
            Block.platform_session_id,
        )
        .join(Item, Item.id == Rating.item_id)
        .join(User, User.id == Rating.rater_id)
        .join(Block, Block.id == Rating.block_id, isouter=True)
        .join(changes, changes.c.rating_id == Rating.id, isouter=True)
        .where(Item.study_id == study.id)
        .order_by(User.rater_code, Block.position, Rating.scale_id, Rating.position, Item.id)
    )
    answers = dict(session.exec(select(Demographics.user_id, Demographics.answers)).all())
    keys = [q["key"] for q in study.demographics]
    keys += sorted({k for a in answers.values() for k in a} - set(keys))
    records = []
    for rating, item, code, block, n, platform_study, platform_session in session.exec(query).all():
        scale = scales[rating.scale_id]
        passed = None
        if rating.is_attention_check and item.gold_score is not None:
            share = (rating.value - scale.min) / (scale.max - scale.min)
            passed = abs(share - item.gold_score) <= item.gold_tolerance + 1e-9
        record = {
            "kind": "human",
            "study": study.slug,
            "item_id": item.external_id,
            "benchmark": benches[item.benchmark_id],
            "scale": scale.name,
            "rater": code,
            "score": rating.value,
            "block_position": block,
            "presentation_position": rating.position,
            "served_at": rating.served_at,
            "submitted_at": rating.submitted_at,
            "duration_seconds": (rating.submitted_at - rating.served_at).total_seconds()
            if rating.served_at
            else None,
            "is_repeat": rating.is_repeat,
            "is_attention_check": rating.is_attention_check,
            "attention_passed": passed,
            "revisions": max((n or 1) - 1, 0),
            "source": rating.source,
            "study_version": rating.study_version,
            "platform_study_id": platform_study,
            "platform_session_id": platform_session,
        }
        given = answers.get(rating.rater_id, {})
        record.update({key: given.get(key, "") for key in keys})
        records.append(record)
    llm = (
        select(LLMScore, Item)
        .join(Item, Item.id == LLMScore.item_id)
        .where(Item.study_id == study.id)
        .order_by(LLMScore.model, LLMScore.scale_id, LLMScore.run, Item.id)
    )
    for score, item in session.exec(llm).all():
        records.append(
            {
                "kind": "llm",
                "study": study.slug,
                "item_id": item.external_id,
                "benchmark": benches[item.benchmark_id],
                "scale": scales[score.scale_id].name,
                "model": score.model,
                "run": score.run,
                "temperature": score.temperature,
                "prompt_hash": score.prompt_hash,
                "score": score.value,
                "submitted_at": score.created_at,
                "source": "judge" if score.prompt_hash else "import",
            }
        )
    frame = pd.DataFrame(records, columns=LONG_COLUMNS + keys)
    for column in frame.columns[frame.dtypes == "float64"]:
        frame[column] = frame[column].map(number_text)
    for column in ("served_at", "submitted_at"):
        frame[column] = [
            "" if pd.isna(t) else t.strftime("%Y-%m-%d %H:%M:%S.%f+00:00") for t in frame[column]
        ]
    return frame.to_csv(index=False, lineterminator="\n")


@pytest.mark.parametrize("chunk", [7, 50_000])
def test_long_export_matches_the_row_by_row_reference(session, make_study, monkeypatch, chunk):
    study = make_study(n_items=30, n_raters=4, missing=0.1, unfinished_raters=1, seed=5)
    # A revised rating: its revisions column counts one.
    rating = session.exec(select(Rating).order_by(Rating.id)).first()
    session.add(
        RatingChange(rating_id=rating.id, value=1.0, previous_value=rating.value, reason="x")
    )
    session.commit()
    monkeypatch.setattr(long_rows, "LONG_CHUNK", chunk)
    export = render_export(session, study, "long")
    text = "".join(export.parts())
    assert text == _reference_long_csv(session, study)
    n_rows = (
        session.exec(select(func.count(Rating.id))).one()
        + session.exec(select(func.count(LLMScore.id))).one()
    )
    assert export.rows == n_rows == text.count("\n") - 1
    assert ",1,import," in text or ",1,app," in text  # the revised rating


def test_an_empty_long_export_is_its_header(session, make_study):
    study = make_study(n_items=4, n_raters=2)
    session.exec(RatingChange.__table__.delete())
    session.exec(Rating.__table__.delete())
    session.exec(LLMScore.__table__.delete())
    session.commit()
    text = render_export(session, study, "long").text
    assert text.splitlines()[0].startswith("kind,study,item_id") and text.count("\n") == 1


def _random_floats(n: int) -> list[float]:
    rng = random.Random(2)
    values = [0.1, 2.3000000000000003, 1e-05, 1e-4, 1e16, 2.0**62, 2.0**63, -0.0, 5e-324, 1e308]
    for _ in range(n):
        values.append(struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0])
        values.append(rng.random() * 10 ** rng.randint(-8, 20))
        values.append(round(rng.uniform(-100, 100), rng.randint(0, 4)))
        values.append(float(rng.randint(-(10**18), 10**18)))
    return [v for v in values if not math.isinf(v)] + [math.nan, math.inf, -math.inf]


def test_number_columns_are_written_as_number_text_writes_each_value():
    values = _random_floats(20_000)
    column = pd.Series(np.array(values, dtype=float))
    assert exporters._number_column(column).tolist() == [number_text(v) for v in values]
