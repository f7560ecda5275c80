"""A generated study with two judges of known self-consistency, for the agreement
tables' tests and those of the pages and commands that show them."""

from __future__ import annotations

import numpy as np
from sqlalchemy import insert
from sqlmodel import select

from annotator.models import Item, LLMScore, Scale

SCALES = (("0-5", 0.0, 5.0, 1.0), ("0-100", 0.0, 100.0, 1.0))


def add_runs(session, study, model: str, noise: float, *, runs: int = 3, seed: int = 0):
    """Scores of ``model``: a fixed per-item value plus run-to-run noise (share of range)."""
    rng = np.random.default_rng(seed)
    items = session.exec(
        select(Item).where(Item.study_id == study.id, Item.gold_score.is_(None)).order_by(Item.id)
    ).all()
    base = rng.uniform(0.1, 0.9, len(items))
    rows = []
    for scale in session.exec(select(Scale).where(Scale.study_id == study.id)).all():
        for run in range(runs):
            share = np.clip(base + rng.normal(0, noise, len(items)), 0, 1)
            values = np.round(scale.min + share * (scale.max - scale.min))
            rows += [
                {
                    "item_id": item.id,
                    "scale_id": scale.id,
                    "model": model,
                    "run": f"r{run}",
                    "temperature": 0.7,
                    "value": float(v),
                }
                for item, v in zip(items, values, strict=True)
            ]
    session.execute(insert(LLMScore), rows)
    session.commit()


def two_judge_study(session, make_study, slug: str):
    """40 items x 4 raters on integer scales; model "steady" (2% run-to-run noise) and
    "noisy" (25%), 3 runs each at temperature 0.7."""
    study = make_study(slug=slug, n_items=40, n_raters=4, scales=SCALES, seed=4)
    add_runs(session, study, "steady", 0.02, seed=1)
    add_runs(session, study, "noisy", 0.25, seed=2)
    return study
