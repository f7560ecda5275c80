"""Each judge's temperature on a stored study, counted by the database.

:func:`study_judge_temperatures` applies the rule of
:func:`annotator.data.temperatures.judge_temperatures` (pure, shared through
:mod:`annotator.data.matrix_rules`) to counts of the study's LLM scores, read with one
``GROUP BY`` instead of every score: the matrix export's data path.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from .temperatures import JudgeTemperatures, judge_temperatures

__all__ = ["study_judge_temperatures"]


def study_judge_temperatures(
    session: Any,
    study: Any,
    *,
    requested: float | None = None,
    per_judge: Mapping[str, float | None] | Iterable[tuple[str, float | None]] = (),
) -> JudgeTemperatures:
    """:func:`judge_temperatures` on every LLM score of a stored study (each judge's
    newest prompt, every scale and criterion), as the analysis counts them.

    The database counts the scores: one row per judge (model, scale, criterion,
    temperature, benchmark) and prompt version, with its size and its newest id,
    and the newest prompt of each judge is the version holding the judge's newest
    id (:func:`annotator.data.prompt_versions.latest_prompt_version`'s rule, which
    ``tests/data/test_temperature_rule.py`` checks this against). Reading every
    score of the study (30,000 on the benchmark's study) to count them was half
    of a matrix export's own work (docs/performance.md).
    """
    from sqlalchemy import func
    from sqlmodel import select

    from ..models import Item, LLMScore, Scale
    from .sql import fetch_rows

    prompt = func.coalesce(LLMScore.prompt_hash, "")
    judge = (
        LLMScore.model,
        Scale.name,
        LLMScore.criterion,
        LLMScore.temperature,
        Item.benchmark_id,
    )
    rows = fetch_rows(
        session,
        select(*judge, func.count(), func.max(LLMScore.id))
        .join(Item, Item.id == LLMScore.item_id)
        .join(Scale, Scale.id == LLMScore.scale_id)
        .where(Scale.study_id == study.id)
        .group_by(*judge, prompt),
    )
    newest: dict[tuple, int] = {}
    for *key, _, last in rows:
        key = (*key[:3], _temperature_key(key[3]), key[4])
        newest[key] = max(newest.get(key, last), last)
    kept = [
        (model, scale, temperature, n)
        for model, scale, criterion, temperature, benchmark, n, last in rows
        if newest[(model, scale, criterion, _temperature_key(temperature), benchmark)] == last
    ]
    return judge_temperatures(
        [row[0] for row in kept],
        [row[1] for row in kept],
        [row[2] for row in kept],
        requested=requested,
        per_judge=per_judge,
        counts=[row[3] for row in kept],
    )


def _temperature_key(temperature: float | None) -> float | None:
    # NaN (PostgreSQL's float NaN) never equals itself: one key for it, as for None.
    return None if temperature is None or math.isnan(temperature) else float(temperature)
