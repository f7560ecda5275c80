"""The temperature rule on counted scores: ``study_judge_temperatures`` counts a
study's LLM scores in the database (one row per judge and prompt version), and must
choose what the rule on the scores one by one chooses
(``judge_temperatures`` on ``study_llm_scores``, the newest prompt kept by pandas)."""

from __future__ import annotations

import math
import random

import pytest
from sqlalchemy import select, update

from annotator.data.frames import study_llm_scores
from annotator.data.temperature_counts import study_judge_temperatures
from annotator.data.temperatures import judge_temperatures
from annotator.models import Item, LLMScore

NAN = math.nan


def _one_by_one(session, study, **options):
    llm = study_llm_scores(session, study)
    return judge_temperatures(llm["model"], llm["scale"], llm["temperature"], **options)


@pytest.mark.parametrize("seed", range(20))
def test_counted_entries_choose_as_the_scores_one_by_one(seed):
    rng = random.Random(seed)
    scores = [
        (rng.choice("abc"), rng.choice(["s", "t"]), rng.choice([NAN, 0.0, 0.1, 1.0]))
        for _ in range(rng.randint(1, 40))
    ]
    groups: dict[tuple, int] = {}
    for judge, scale, temp in scores:
        key = (judge, scale, None if math.isnan(temp) else temp)
        groups[key] = groups.get(key, 0) + 1
    options = rng.choice([{}, {"requested": 1.0}, {"per_judge": {"a": None}}])
    one_by_one = judge_temperatures(*zip(*scores, strict=True), **options)
    counted = judge_temperatures(
        [k[0] for k in groups],
        [k[1] for k in groups],
        [k[2] for k in groups],
        counts=list(groups.values()),
        **options,
    )
    assert counted == one_by_one


def test_counts_must_be_positive_and_one_per_entry():
    with pytest.raises(ValueError, match="counts"):
        judge_temperatures(["a"], ["s"], [1.0], counts=[0])
    with pytest.raises(ValueError, match="counts"):
        judge_temperatures(["a"], ["s"], [1.0], counts=[1, 2])


@pytest.fixture
def versions(make_study, session):
    """Three judges, two temperatures, two runs, and prompt versions: judge-a's
    newest prompt holds fewer scores than its older one (so counting the older
    would change its main temperature), judge-b's imported scores (no hash) are
    older than its hashed ones, judge-c keeps one version."""
    study = make_study(
        slug="versions",
        n_items=12,
        n_raters=3,
        scales=(("0-5", 0.0, 5.0, 0.5), ("0-10", 0.0, 10.0, 1.0)),
        benchmarks=("sts-b", "summeval"),
        models=("judge-a", "judge-b", "judge-c"),
        extra_temperatures=(0.1,),
        runs=2,
        repeats=0,
        attention_items=0,
        seed=3,
    )
    # judge-a, per scale and benchmark: its first half of scores at 0.1 under an old
    # prompt, the next third at 1, the last sixth at 0.1 under a new prompt. All
    # counted, 0.1 would win (two thirds); the newest prompt's, 1 does.
    groups: dict[tuple, list[int]] = {}
    rows = session.execute(
        select(LLMScore.id, LLMScore.scale_id, Item.benchmark_id)
        .join(Item, Item.id == LLMScore.item_id)
        .where(LLMScore.model == "judge-a", LLMScore.temperature.is_not(None))
        .order_by(LLMScore.id)
    )
    for score_id, scale_id, benchmark_id in rows:
        groups.setdefault((scale_id, benchmark_id), []).append(score_id)
    for ids in groups.values():
        parts = (ids[: len(ids) // 2], ids[len(ids) // 2 : -len(ids) // 6], ids[-len(ids) // 6 :])
        for part, temperature, prompt in zip(
            parts, (0.1, 1.0, 0.1), ("old", "x", "new"), strict=True
        ):
            session.execute(
                update(LLMScore)
                .where(LLMScore.id.in_(part))
                .values(temperature=temperature, prompt_hash=prompt)
            )
    b = LLMScore.model == "judge-b"
    b_ids = sorted(i for (i,) in session.execute(select(LLMScore.id).where(b)))
    session.execute(update(LLMScore).where(b).values(prompt_hash=None))
    session.execute(
        update(LLMScore).where(LLMScore.id.in_(b_ids[len(b_ids) // 2 :])).values(prompt_hash="h")
    )
    session.commit()
    return study


@pytest.mark.parametrize(
    "options", [{}, {"requested": 0.1}, {"per_judge": {"judge-b": 1.0}}, {"requested": 1.0}]
)
def test_the_study_s_counts_choose_as_its_scores_one_by_one(session, versions, options):
    counted = study_judge_temperatures(session, versions, **options)
    assert counted == _one_by_one(session, versions, **options)
    assert counted.chosen  # the study has judges to choose for


def test_the_newest_prompt_s_scores_are_the_ones_counted(session, versions):
    # Counting judge-a's older prompt too would put it at 0.1 (five scores in six).
    chosen = study_judge_temperatures(session, versions)
    assert {chosen.of("judge-a", scale) for scale in ("0-5", "0-10")} == {1.0}
