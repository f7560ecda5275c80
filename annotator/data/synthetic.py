"""A generated study with known variance components, for tests and benchmarks.

Scores follow the two-way model of the grading-scale paper (section 3.1) on
each scale's [0, 1] share: ``0.5 + item + rater bias + noise`` for humans and
``0.5 + loading * item + model bias + noise`` for the LLMs, rounded to the
scale's step and kept inside its bounds. The rows go in with bulk inserts, so
a study of 5,000 items x 12 raters x 3 scales builds in seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
from sqlalchemy import insert
from sqlmodel import Session, select

from ..models import (
    Block,
    Demographics,
    Item,
    LLMScore,
    Rating,
    RatingChange,
    Role,
    Study,
    User,
    bump_revision,
)
from ..study.studies import create_study, study_benchmarks, study_scales
from ..study.studyfile import parse_study_file

__all__ = ["SyntheticSpec", "build_synthetic_study", "summeval_spec"]

_START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@dataclass(frozen=True)
class SyntheticSpec:
    """What to generate. Standard deviations are on the [0, 1] share of a scale."""

    slug: str = "synthetic"
    n_items: int = 60
    n_raters: int = 6
    scales: tuple[tuple[str, float, float, float], ...] = (
        ("0-5", 0.0, 5.0, 0.1),
        ("0-10", 0.0, 10.0, 0.1),
        ("0-100", 0.0, 100.0, 1.0),
    )
    benchmarks: tuple[str, ...] = ("sts-b", "summeval")
    models: tuple[str, ...] = ("gpt", "llama", "mistral")
    # Extra temperatures at which the first model is also run (Table 6).
    extra_temperatures: tuple[float, ...] = (0.1,)
    main_temperature: float = 1.0
    runs: int = 2
    item_sd: float = 0.15
    rater_sd: float = 0.04
    noise_sd: float = 0.05
    model_sd: float = 0.05
    llm_noise_sd: float = 0.06
    # Share of the (item, rater, scale) cells left unrated.
    missing: float = 0.0
    # The last ``unrated_items`` items no rater rates (the LLMs score them all): a
    # benchmark judged in full and rated in part, for the judge-assisted estimates.
    unrated_items: int = 0
    # Items each rater rates a second time per scale (test-retest).
    repeats: int = 3
    # Attention-check items, rated by every rater on every scale.
    attention_items: int = 2
    # Raters whose blocks are still open: their last block has no ratings yet.
    unfinished_raters: int = 0
    genders: tuple[str, ...] = ("female", "male")
    # Careless raters, for the rater quality checks: the first ``straight_liners``
    # raters give one value (the scale's middle) to every item; the next ``speeders``
    # spend a tenth of the usual time per item.
    straight_liners: int = 0
    speeders: int = 0
    seed: int = 0
    study_toml_extra: str = ""
    # Rubric criteria (a ``[[criteria]]`` entry each, on every benchmark): every
    # rating and LLM score is given once per criterion, the item's effect on a
    # criterion being its common effect plus a deviation of ``criterion_sd``.
    # None: the study's single unnamed criterion, as before criteria existed.
    criteria: tuple[str, ...] = ()
    criterion_sd: float = 0.08


def summeval_spec(**changes) -> SyntheticSpec:
    """A study of SummEval's shape (Fabbri et al. 2021, "SummEval: Re-evaluating
    Summarization Evaluation"): 1,600 summaries (16 systems x 100 documents)
    rated by 3 expert raters from 1 to 5 on coherence, consistency, fluency and
    relevance, and 6 LLM judges, one run each."""
    settings = {
        "slug": "summeval",
        "n_items": 1600,
        "n_raters": 3,
        "scales": (("1-5", 1.0, 5.0, 1.0),),
        "benchmarks": ("summeval",),
        "models": ("judge-1", "judge-2", "judge-3", "judge-4", "judge-5", "judge-6"),
        "extra_temperatures": (),
        "runs": 1,
        "repeats": 0,
        "attention_items": 0,
        "criteria": ("coherence", "consistency", "fluency", "relevance"),
    }
    return SyntheticSpec(**{**settings, **changes})


def _study_toml(spec: SyntheticSpec) -> str:
    lines = [
        f'name = "Synthetic {spec.slug}"',
        f'slug = "{spec.slug}"',
        'consent = "Generated."',
    ]
    for name, low, high, step in spec.scales:
        lines += [
            "[[scales]]",
            f'name = "{name}"',
            f"min = {low}",
            f"max = {high}",
            f"step = {step}",
        ]
    for name in spec.benchmarks:
        lines += [
            "[[benchmarks]]",
            f'name = "{name}"',
            'instructions = "Rate from {min} to {max}."',
            'template = "{{ text }}"',
        ]
    for name in spec.criteria:
        lines += ["[[criteria]]", f'name = "{name}"', f'definition = "The summary\'s {name}."']
    return "\n".join(lines) + "\n" + spec.study_toml_extra


def _to_scale(share: np.ndarray, low: float, high: float, step: float) -> np.ndarray:
    value = low + np.clip(share, 0.0, 1.0) * (high - low)
    return np.clip(np.round((value - low) / step) * step + low, low, high)


def _insert(session: Session, table: type, rows: list[dict]) -> None:
    # An executemany of no rows would insert one row of defaults.
    if rows:
        session.execute(insert(table), rows)


def build_synthetic_study(session: Session, spec: SyntheticSpec | None = None) -> Study:
    """Create the study of ``spec`` with its items, raters, ratings and LLM scores.

    Flushes but does not commit. Returns the new :class:`Study`.
    """
    spec = spec or SyntheticSpec()
    rng = np.random.default_rng(spec.seed)
    toml = _study_toml(spec)
    study = create_study(session, parse_study_file(toml), source_toml=toml)
    scales = study_scales(session, study)
    benches = study_benchmarks(session, study)
    n_total = spec.n_items + spec.attention_items
    item_rows = []
    for i in range(n_total):
        attention = i >= spec.n_items
        item_rows.append(
            {
                "study_id": study.id,
                "external_id": f"{'check' if attention else 'item'}-{i:05d}",
                "benchmark_id": benches[i % len(benches)].id,
                "fields": {"text": f"text {i}"},
                "gold_score": 0.5 if attention else None,
                "gold_tolerance": 0.1 if attention else None,
                "created_at": _START,
            }
        )
    _insert(session, Item, item_rows)
    item_ids = list(
        session.exec(select(Item.id).where(Item.study_id == study.id).order_by(Item.id)).all()
    )
    user_rows = [
        {
            "role": Role.RATER,
            "rater_code": f"{spec.slug}-r{j:02d}",
            "study_id": study.id,
            "source": "invite",
            "consented_at": _START,
            "created_at": _START,
        }
        for j in range(spec.n_raters)
    ]
    _insert(session, User, user_rows)
    rater_ids = list(
        session.exec(select(User.id).where(User.study_id == study.id).order_by(User.id)).all()
    )
    _insert(
        session,
        Demographics,
        [
            {
                "user_id": rid,
                "answers": {"gender": spec.genders[j % len(spec.genders)], "age_group": "25-34"},
                "submitted_at": _START,
            }
            for j, rid in enumerate(rater_ids)
        ],
    )

    item_effect = rng.normal(0.0, spec.item_sd, spec.n_items)
    # Each criterion's item effects; drawn only for a rubric study, so that a
    # study without criteria gets the very draws it got before criteria existed.
    effects = {"": item_effect}
    if spec.criteria:
        effects = {
            name: item_effect + rng.normal(0.0, spec.criterion_sd, spec.n_items)
            for name in spec.criteria
        }
    rating_rows = []
    block_rows = []
    for j, rid in enumerate(rater_ids):
        bias = rng.normal(0.0, spec.rater_sd)
        unfinished = j >= spec.n_raters - spec.unfinished_raters
        for position, scale in enumerate(scales, start=1):
            open_block = unfinished and position == len(scales)
            started = _START + timedelta(days=7 * (position - 1), hours=j)
            block_rows.append(
                {
                    "rater_id": rid,
                    "scale_id": scale.id,
                    "position": position,
                    "seed": int(rng.integers(0, 2**31)),
                    "item_order": [{"item": i} for i in item_ids],
                    "started_at": None if open_block else started,
                    "completed_at": None
                    if (open_block or unfinished)
                    else started + timedelta(hours=2),
                    "created_at": _START,
                }
            )
            if open_block:
                continue
            for criterion, effect in effects.items():
                scale_bounds = (scale.min, scale.max, scale.step)
                share = 0.5 + effect + bias + rng.normal(0.0, spec.noise_sd, spec.n_items)
                values = _to_scale(share, scale.min, scale.max, scale.step)
                if j < spec.straight_liners:
                    values = np.full_like(values, _to_scale(np.array([0.5]), *scale_bounds)[0])
                keep = rng.random(spec.n_items) >= spec.missing
                keep &= np.arange(spec.n_items) < spec.n_items - spec.unrated_items
                clock = started
                speeding = spec.straight_liners <= j < spec.straight_liners + spec.speeders
                for i in np.flatnonzero(keep):
                    # The same draw either way: the other raters' data do not change.
                    seconds = float(rng.uniform(5, 40)) / (10 if speeding else 1)
                    rating_rows.append(
                        {
                            "rater_id": rid,
                            "item_id": item_ids[i],
                            "scale_id": scale.id,
                            "criterion": criterion,
                            "value": float(values[i]),
                            "position": int(i) + 1,
                            "is_repeat": False,
                            "is_attention_check": False,
                            "served_at": clock,
                            "submitted_at": clock + timedelta(seconds=seconds),
                            "source": "app",
                            "study_version": study.version,
                        }
                    )
                    clock += timedelta(seconds=seconds + 1)
                rated = np.flatnonzero(keep)
                for i in rated[: spec.repeats]:
                    again = values[i] + rng.normal(0.0, spec.noise_sd) * (scale.max - scale.min)
                    rating_rows.append(
                        {
                            "rater_id": rid,
                            "item_id": item_ids[i],
                            "scale_id": scale.id,
                            "criterion": criterion,
                            "value": float(
                                _to_scale(
                                    np.array([(again - scale.min) / (scale.max - scale.min)]),
                                    scale.min,
                                    scale.max,
                                    scale.step,
                                )[0]
                            ),
                            "position": spec.n_items + int(i) + 1,
                            "is_repeat": True,
                            "is_attention_check": False,
                            "served_at": clock,
                            "submitted_at": clock + timedelta(seconds=10),
                            "source": "app",
                            "study_version": study.version,
                        }
                    )
                    clock += timedelta(seconds=11)
                for a in range(spec.attention_items):
                    # Odd raters miss the first check: a share of 0.9 against a gold of 0.5.
                    share_a = 0.9 if (j % 2 and a == 0) else 0.5
                    rating_rows.append(
                        {
                            "rater_id": rid,
                            "item_id": item_ids[spec.n_items + a],
                            "scale_id": scale.id,
                            "criterion": criterion,
                            "value": float(
                                _to_scale(np.array([share_a]), scale.min, scale.max, scale.step)[0]
                            ),
                            "position": 2 * spec.n_items + a + 1,
                            "is_repeat": False,
                            "is_attention_check": True,
                            "served_at": clock,
                            "submitted_at": clock + timedelta(seconds=8),
                            "source": "app",
                            "study_version": study.version,
                        }
                    )
                    clock += timedelta(seconds=9)
    _insert(session, Block, block_rows)
    _insert(session, Rating, rating_rows)
    first_rating = session.exec(
        select(Rating.id).where(Rating.scale_id == scales[0].id).order_by(Rating.id)
    ).first()
    if first_rating is not None:
        session.execute(
            insert(RatingChange),
            [{"rating_id": first_rating, "value": 1.0, "reason": "create", "changed_at": _START}],
        )

    llm_rows = []
    temperatures = [(spec.main_temperature, spec.models)] + [
        (t, spec.models[:1]) for t in spec.extra_temperatures
    ]
    loadings = {m: 1.0 - 0.15 * k for k, m in enumerate(spec.models)}
    biases = {m: rng.normal(0.0, spec.model_sd) for m in spec.models}
    for scale, (criterion, effect) in (
        (scale, pair) for scale in scales for pair in effects.items()
    ):
        for temperature, names in temperatures:
            for model in names:
                for run in range(spec.runs):
                    share = (
                        0.5
                        + loadings[model] * effect
                        + biases[model]
                        + rng.normal(0.0, spec.llm_noise_sd, spec.n_items)
                    )
                    values = _to_scale(share, scale.min, scale.max, scale.step)
                    llm_rows += [
                        {
                            "item_id": item_ids[i],
                            "scale_id": scale.id,
                            "criterion": criterion,
                            "model": model,
                            "run": f"t{temperature:g}-{run}",
                            "temperature": temperature,
                            "value": float(values[i]),
                            "created_at": _START,
                        }
                        for i in range(spec.n_items)
                    ]
    _insert(session, LLMScore, llm_rows)
    session.flush()
    bump_revision(session, study.id)
    return study
