"""The study shapes of the shape matrix (test_study_shapes.py): each a small study,
built in well under a second, that combines designs, rubrics, temperatures, partial
judge runs, crowd states and empty data the way a lead's study may.

``study_shape`` is parametrized by :data:`SHAPES`; it gives the study's slug and
what the matrix needs to know of it (its criteria and scales).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import pytest
from sqlalchemy import delete, update
from sqlmodel import select

from annotator.models import Item, LLMScore, Rating, Scale, Study, User
from tests.conftest import DATA


@dataclass(frozen=True)
class Shape:
    """A built study: its slug, criteria, scales, and the judges every view must list
    (empty: not checked, e.g. a judge with too few items for a correlation)."""

    slug: str
    criteria: tuple[str, ...] = ()
    scales: tuple[str, ...] = ("0-5",)
    judges: tuple[str, ...] = ()
    # Judges under ``[validation] stop_when_decided`` (empty: the stop is off).
    stop_judges: tuple[str, ...] = ()


# Small: a shape builds and analyses in about a second.
BASE = {
    "n_items": 8,
    "n_raters": 3,
    "scales": (("0-5", 0.0, 5.0, 0.5),),
    "benchmarks": ("sts-b",),
    "models": ("judge-a", "judge-b"),
    "extra_temperatures": (),
    "runs": 2,
    "repeats": 1,
    "attention_items": 1,
    "seed": 1,
}
OVERLAP = (
    '[assignment]\ndesign = "overlap"\nraters_per_item = 2\nanchor_items = 3\nitems_per_rater = 6\n'
)
CROWD = '[crowd]\nplatform = "prolific"\n[crowd.completion_codes]\n'
STOP = '[validation]\nstop_when_decided = true\njudges = ["judge-a", "judge-b"]\n'
RUBRIC = ("coherence", "fluency")


def _synthetic(ctx, slug: str, *, judges: tuple[str, ...] = (), **changes) -> Shape:
    spec = {**BASE, "slug": slug, **changes}
    ctx.make_study(**spec)
    return Shape(slug=slug, criteria=tuple(spec.get("criteria", ())), judges=judges)


def _scales(slug: str):
    return select(Scale.id).join(Study, Study.id == Scale.study_id).where(Study.slug == slug)


def _scores(ctx, slug: str):
    return LLMScore.scale_id.in_(_scales(slug).scalar_subquery())


def _ratings(slug: str):
    return Rating.scale_id.in_(_scales(slug).scalar_subquery())


def _items(ctx, slug: str) -> list[int]:
    query = select(Item.id).join(Study, Study.id == Item.study_id).where(Study.slug == slug)
    return list(ctx.session.exec(query.order_by(Item.id)).all())


def crossed(ctx) -> Shape:
    return _synthetic(ctx, "crossed", judges=BASE["models"])


def two_temperatures(ctx) -> Shape:
    # judge-a also at 0.1, as many scores as at 1: its tie goes to 0.1.
    return _synthetic(ctx, "two-temps", extra_temperatures=(0.1,), judges=BASE["models"])


def no_temperature(ctx) -> Shape:
    shape = _synthetic(ctx, "no-temp", judges=BASE["models"])
    ctx.session.execute(update(LLMScore).where(_scores(ctx, shape.slug)).values(temperature=None))
    ctx.session.commit()
    return shape


def mixed_temperatures(ctx) -> Shape:
    """The issue's: judge-a and judge-b imported without a temperature (one run each),
    judge-c run from the web at temperature 1 (two runs)."""
    judges = ("judge-a", "judge-b", "judge-c")
    shape = _synthetic(ctx, "mixed", models=judges, judges=judges)
    imported = _scores(ctx, shape.slug) & LLMScore.model.in_(["judge-a", "judge-b"])
    ctx.session.execute(update(LLMScore).where(imported).values(temperature=None))
    ctx.session.execute(delete(LLMScore).where(imported, LLMScore.run == "t1-1"))
    ctx.session.commit()
    return shape


def _keep_first_item(ctx, slug: str, model: str) -> None:
    """A judge run limited to the first item: ``model``'s other scores gone."""
    first = _items(ctx, slug)[0]
    ctx.session.execute(
        delete(LLMScore).where(
            _scores(ctx, slug), LLMScore.model == model, LLMScore.item_id != first
        )
    )
    ctx.session.commit()


def partial_run(ctx) -> Shape:
    shape = _synthetic(ctx, "partial", models=("judge-a", "judge-b", "judge-c"))
    _keep_first_item(ctx, shape.slug, "judge-c")
    return shape


def rubric(ctx) -> Shape:
    """A rubric with stop when decided on: the check decides each criterion on its own."""
    shape = _synthetic(ctx, "rubric", criteria=RUBRIC, study_toml_extra=STOP)
    return replace(shape, stop_judges=("judge-a", "judge-b"))


def overlap(ctx) -> Shape:
    return _synthetic(ctx, "overlap", n_raters=4, missing=0.3, study_toml_extra=OVERLAP)


def overlap_rubric(ctx) -> Shape:
    """Overlap, a rubric, a judge at two temperatures and a partial run, together."""
    shape = _synthetic(
        ctx,
        "ov-rubric",
        n_raters=4,
        missing=0.3,
        criteria=RUBRIC,
        extra_temperatures=(0.1,),
        models=("judge-a", "judge-b", "judge-c"),
        study_toml_extra=OVERLAP,
    )
    _keep_first_item(ctx, shape.slug, "judge-c")
    return shape


def crowd(ctx) -> Shape:
    """A crowd study with a rater screened out and one withdrawn."""
    shape = _synthetic(ctx, "crowd", n_raters=4, study_toml_extra=CROWD)
    out = ctx.session.exec(select(User).where(User.rater_code == "crowd-r00")).one()
    out.screened_out_at = out.created_at
    ctx.session.add(out)
    ctx.session.commit()
    result = ctx.runner.invoke(args=["raters", "withdraw", "crowd", "crowd-r01"])
    assert result.exit_code == 0, result.output
    return shape


def disagree(ctx) -> Shape:
    """Three raters who strongly disagree: ICC(A,k) far below 0, intervals inverted."""
    shape = _synthetic(ctx, "disagree", n_items=6, repeats=0, attention_items=0)
    pattern = {"disagree-r00": [0, 5, 0, 5, 0, 5], "disagree-r01": [5, 0, 5, 0, 5, 0]}
    pattern["disagree-r02"] = [0, 5, 5, 0, 0, 5]
    items = _items(ctx, shape.slug)
    for code, values in pattern.items():
        rater = ctx.session.exec(select(User.id).where(User.rater_code == code)).one()
        for item, value in zip(items, values, strict=True):
            ctx.session.execute(
                update(Rating)
                .where(Rating.rater_id == rater, Rating.item_id == item)
                .values(value=float(value))
            )
    ctx.session.commit()
    return shape


def one_rater(ctx) -> Shape:
    return _synthetic(ctx, "one-rater", n_raters=1)


def one_item(ctx) -> Shape:
    return _synthetic(ctx, "one-item", n_items=1, repeats=0, attention_items=0)


def zero_variance(ctx) -> Shape:
    """Every rater and judge gives every item the same score."""
    shape = _synthetic(ctx, "flat", repeats=0, attention_items=0)
    ctx.session.execute(update(Rating).where(_ratings(shape.slug)).values(value=2.5))
    ctx.session.execute(update(LLMScore).where(_scores(ctx, shape.slug)).values(value=2.5))
    ctx.session.commit()
    return shape


def _cli(ctx, *args) -> None:
    result = ctx.runner.invoke(args=[str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output


def imported_only(ctx) -> Shape:
    """Items and ratings imported from files (tests/data), nothing rated in the app."""
    _cli(ctx, "study", "create", DATA / "small-study.toml")
    _cli(ctx, "items", "import", "small", DATA / "items.csv")
    _cli(ctx, "ratings", "import", "small", DATA / "ratings.csv")
    _cli(ctx, "llm-scores", "import", "small", DATA / "llm_scores.csv")
    return Shape(slug="small", scales=("0-5", "0-100"))


def no_ratings(ctx) -> Shape:
    _cli(ctx, "study", "create", DATA / "small-study.toml")
    _cli(ctx, "items", "import", "small", DATA / "items.csv")
    return Shape(slug="small", scales=("0-5", "0-100"))


SHAPES: dict[str, Callable] = {
    "crossed": crossed,
    "two-temperatures": two_temperatures,
    "no-temperature": no_temperature,
    "mixed-temperatures": mixed_temperatures,
    "partial-run": partial_run,
    "rubric": rubric,
    "overlap": overlap,
    "overlap-rubric": overlap_rubric,
    "crowd": crowd,
    "disagree": disagree,
    "one-rater": one_rater,
    "one-item": one_item,
    "zero-variance": zero_variance,
    "imported-only": imported_only,
    "no-ratings": no_ratings,
}


@dataclass
class _Context:
    session: object
    runner: object
    make_study: Callable


@pytest.fixture(params=list(SHAPES))
def study_shape(request, app, session, runner, make_study) -> Shape:
    """Each shape of :data:`SHAPES`, built on the test's own database."""
    # Every export through a job, as a large study's (the jobs run in the request).
    app.config["EXPORT_JOB_MIN_RATINGS"] = 0
    return SHAPES[request.param](_Context(session, runner, make_study))


@pytest.fixture(autouse=True)
def small_figures(monkeypatch):
    """The report's figures drawn as ever but saved at a tenth of their resolution:
    the matrix checks that they draw, and saving dominated its time."""
    import matplotlib

    monkeypatch.setitem(matplotlib.rcParams, "savefig.dpi", 10)
