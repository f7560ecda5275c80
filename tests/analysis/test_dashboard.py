"""study_dashboard and cached_dashboard: display-ready values against independent computations."""

from __future__ import annotations

import statistics
import warnings
from collections import defaultdict

import krippendorff
import numpy as np
import pandas as pd
import pingouin as pg
import pytest
from sqlalchemy import text
from sqlmodel import select

from annotator.analysis.settings import AnalysisSettings, study_settings
from annotator.data.frames import study_frames
from annotator.metrics import alt_test
from annotator.models import Rating, RatingChange
from annotator.render.dashboard import study_dashboard
from annotator.services.dashboards import cached_dashboard

TOL = 1e-9


def pingouin_icc(matrix) -> dict[str, tuple[float, tuple[float, float]]]:
    matrix = np.asarray(matrix, dtype=float)
    n, k = matrix.shape
    long = pd.DataFrame(
        {"t": np.repeat(np.arange(n), k), "r": np.tile(np.arange(k), n), "y": matrix.ravel()}
    )
    saved = pg.options.get("round.column.CI95")
    pg.options["round.column.CI95"] = None
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="The inplace keyword")
            table = pg.intraclass_corr(long, targets="t", raters="r", ratings="y")
    finally:
        pg.options["round.column.CI95"] = saved
    return {row.Type: (row.ICC, tuple(row.CI95)) for row in table.itertuples()}


def sql_ratings(session, study) -> pd.DataFrame:
    rows = session.execute(
        text(
            """
            SELECT i.external_id AS item, s.name AS scale, u.rater_code AS rater, r.value,
                   r.is_repeat, r.is_attention_check, r.served_at, r.submitted_at
            FROM rating r JOIN item i ON i.id = r.item_id JOIN scale s ON s.id = r.scale_id
            JOIN "user" u ON u.id = r.rater_id WHERE s.study_id = :s
            """
        ),
        {"s": study.id},
    ).all()
    frame = pd.DataFrame([tuple(r) for r in rows], columns=list(rows[0]._fields))
    frame["is_repeat"] = frame["is_repeat"].astype(bool)
    frame["is_attention_check"] = frame["is_attention_check"].astype(bool)
    return frame


@pytest.fixture
def live(session, make_study):
    study = make_study(n_items=40, n_raters=5, unfinished_raters=1, repeats=4, seed=8)
    settings = study_settings(study)
    return session, study, study_dashboard(study_frames(session, study), settings=settings)


def test_progress(live):
    session, study, dash = live
    part = dash.scale("0-5")
    assert part.block_counts == {"not started": 0, "in progress": 1, "done": 4}
    assert dash.scale("0-100").block_counts == {"not started": 1, "in progress": 0, "done": 4}
    ratings = sql_ratings(session, study)
    mine = ratings[
        (ratings["scale"] == "0-5") & ~ratings["is_repeat"] & ~ratings["is_attention_check"]
    ]
    for row in part.raters:
        rated = mine[mine["rater"] == row.rater]
        assert row.n_rated == len(rated) == 40 and row.n_items == 40
        seconds = [
            (pd.Timestamp(b) - pd.Timestamp(a)).total_seconds()
            for a, b in zip(rated["served_at"], rated["submitted_at"], strict=True)
        ]
        assert row.median_seconds.value == pytest.approx(statistics.median(seconds), abs=1e-6)
        assert row.median_seconds.text == f"{statistics.median(seconds):.1f}"
        odd = row.rater.endswith(("1", "3"))
        assert (row.attention_passed, row.attention_failed) == ((1, 1) if odd else (2, 0))
        assert row.n_repeats == 4
    unfinished = dash.scale("0-100").raters[-1]
    assert unfinished.status == "not started" and unfinished.n_rated == 0


def test_human_reliability(live):
    session, study, dash = live
    ratings = sql_ratings(session, study)
    for part in dash.scales:
        first = ratings[
            (ratings["scale"] == part.scale)
            & ~ratings["is_repeat"]
            & ~ratings["is_attention_check"]
        ]
        wide = first.pivot(index="item", columns="rater", values="value")
        complete = wide.dropna(axis=1, how="all").dropna()  # every rater here rated all
        ref = pingouin_icc(complete.to_numpy())
        assert part.block_items == 40 and part.block_raters == complete.shape[1]
        assert part.icc_a1.value == pytest.approx(ref["ICC(A,1)"][0], abs=TOL)
        assert (part.icc_a1.low, part.icc_a1.high) == pytest.approx(ref["ICC(A,1)"][1], abs=TOL)
        assert part.icc_ak.value == pytest.approx(ref["ICC(A,k)"][0], abs=TOL)
        assert (part.icc_ak.low, part.icc_ak.high) == pytest.approx(ref["ICC(A,k)"][1], abs=TOL)
        assert part.icc_a1.text == (
            f"{ref['ICC(A,1)'][0]:.3f} [{ref['ICC(A,1)'][1][0]:.3f}, {ref['ICC(A,1)'][1][1]:.3f}]"
        )
        expected_alpha = krippendorff.alpha(
            reliability_data=wide.T.to_numpy(), level_of_measurement="interval"
        )
        assert part.alpha.value == pytest.approx(expected_alpha, abs=TOL)


def test_test_retest(live):
    session, study, dash = live
    ratings = sql_ratings(session, study)
    part = dash.scale("0-10")
    r = ratings[(ratings["scale"] == "0-10") & ~ratings["is_attention_check"]]
    pairs = defaultdict(dict)
    for row in r.itertuples():
        pairs[(row.rater, row.item)][row.is_repeat] = row.value
    both = {key: v for key, v in pairs.items() if len(v) == 2}
    data = np.array([[v[False] for v in both.values()], [v[True] for v in both.values()]])
    # Four repeats by each of the five raters (the open rater has rated this block).
    assert part.retest_pooled.n_items == len(both) == 4 * 5
    assert part.retest_pooled.alpha.value == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="interval"), abs=TOL
    )
    for row in part.retest:
        mine = [v for (rater, _), v in both.items() if rater == row.rater]
        data = np.array([[v[False] for v in mine], [v[True] for v in mine]])
        assert row.alpha.value == pytest.approx(
            krippendorff.alpha(reliability_data=data, level_of_measurement="interval"), abs=TOL
        )
        assert row.icc_a1.value == pytest.approx(pingouin_icc(data.T)["ICC(A,1)"][0], abs=TOL)


def test_human_llm_agreement_and_alt_test(live):
    session, study, dash = live
    frames = study_frames(session, study)
    ratings = sql_ratings(session, study)
    for part in dash.scales:
        low, high = part.scale_min, part.scale_max
        first = ratings[
            (ratings["scale"] == part.scale)
            & ~ratings["is_repeat"]
            & ~ratings["is_attention_check"]
        ]
        wide = first.pivot(index="item", columns="rater", values="value").dropna(axis=1, how="all")
        llm = frames.llm[(frames.llm["scale"] == part.scale) & (frames.llm["temperature"] == 1.0)]
        models = llm.groupby(["item", "model"])["value"].mean().unstack().loc[wide.index]
        human_mean = wide.mean(axis=1).to_numpy()
        ensemble = models.mean(axis=1).to_numpy()
        ref = pingouin_icc(np.column_stack([human_mean, ensemble]))["ICC(A,1)"]
        assert part.ensemble.icc_a1.value == pytest.approx(ref[0], abs=TOL)
        assert part.ensemble.nmae.value == pytest.approx(
            np.mean(np.abs(human_mean - ensemble)) / (high - low), abs=TOL
        )
        assert [row.model for row in part.models] == ["gpt", "llama", "mistral"]
        for row in part.models:
            score = models[row.model].to_numpy()
            ref = pingouin_icc(np.column_stack([human_mean, score]))["ICC(A,1)"]
            assert row.icc_a1.value == pytest.approx(ref[0], abs=TOL)
        for row in part.alttest:
            humans = {c: wide[c].to_dict() for c in wide.columns}
            expected = alt_test(humans=humans, llm=models[row.model].to_dict(), epsilon=0.2)
            assert row.winning_rate.value == pytest.approx(expected.winning_rate, abs=TOL)
            assert row.passed == expected.passed
            assert row.verdict == ("passes" if expected.passed else "does not pass")
            assert row.sequential  # the anytime-valid verdict is always worded


def test_alt_test_says_why_it_cannot_run_yet(session, make_study):
    study = make_study(n_items=12, n_raters=3, seed=4)
    dash = study_dashboard(study_frames(session, study))
    row = dash.scale("0-5").alttest[0]
    assert row.passed is None and row.verdict == "cannot run yet"
    assert row.reason.startswith("12 of 30 items per rater so far")
    assert row.winning_rate.text == "n/a" and row.winning_rate.reason == row.reason


def test_too_little_data_gives_reasons_not_numbers(session, make_study):
    study = make_study(n_items=5, n_raters=1, repeats=1, models=("gpt",), extra_temperatures=())
    part = study_dashboard(study_frames(session, study)).scale("0-5")
    assert part.icc_a1.value is None and part.icc_a1.text == "n/a"
    assert "5 items rated by all of 1 rater so far" in part.icc_a1.reason
    assert part.alpha.value is None and "at least 2 raters" in part.alpha.reason
    assert part.retest_pooled.alpha.value is None
    assert "1 item rated twice so far" in part.retest_pooled.alpha.reason


def test_study_without_llm_scores(session, make_study):
    study = make_study(n_items=6, n_raters=2, models=(), extra_temperatures=())
    part = study_dashboard(study_frames(session, study)).scale("0-5")
    assert part.ensemble.icc_a1.value is None
    assert "no LLM scores" in part.ensemble.icc_a1.reason
    assert part.models == () and part.alttest == ()


def test_cached_dashboard_is_reused_until_a_rating_changes(session, make_study):
    study = make_study(n_items=10, n_raters=3)
    first = cached_dashboard(session, study)
    # Kept in the database: the same computation, read back.
    assert cached_dashboard(session, study).computed_at == first.computed_at
    rating = session.exec(select(Rating).order_by(Rating.id)).first()
    old = rating.value
    rating.value = 0.0 if old else 1.0
    session.add(
        RatingChange(rating_id=rating.id, value=rating.value, previous_value=old, reason="revise")
    )
    session.commit()
    second = cached_dashboard(session, study)
    assert second.computed_at > first.computed_at
    assert second.scale("0-5").icc_a1.value != first.scale("0-5").icc_a1.value
    other = cached_dashboard(session, study, settings=AnalysisSettings(epsilon=0.1))
    assert other.computed_at > second.computed_at and other.settings["epsilon"] == 0.1
    assert cached_dashboard(session, study).computed_at == second.computed_at


def test_dashboard_and_report_show_the_same_numbers(session, make_study):
    from annotator.analysis.study_analysis import report_tables

    study = make_study(n_items=45, n_raters=4, missing=0.05, seed=9)
    frames = study_frames(session, study)
    settings = AnalysisSettings(n_resamples=10, epsilons=(0.2,))
    dash = study_dashboard(frames, settings=settings)
    tables = report_tables(frames, settings=settings)
    scales = tables.scales.set_index("scale")
    models = tables.models.set_index(["scale", "model"])
    alttest = tables.alttest.set_index(["scale", "model"])
    for part in dash.scales:
        row = scales.loc[part.scale]
        assert part.icc_a1.value == row["icc_a1_human"]
        assert part.icc_ak.value == row["icc_ak_human"]
        assert part.block_items == row["n_items"]
        assert part.ensemble.icc_a1.value == row["icc_human_llm"]
        assert part.ensemble.nmae.value == row["nmae"]
        for model in part.models:
            assert model.icc_a1.value == models.loc[(part.scale, model.model), "icc_human_llm"]
            assert model.nmae.value == models.loc[(part.scale, model.model), "nmae"]
        for verdict in part.alttest:
            assert (
                verdict.winning_rate.value
                == alttest.loc[(part.scale, verdict.model), "winning_rate"]
            )


@pytest.mark.parametrize(
    ("value", "ci", "text", "bounds"),
    [
        (0.5, (0.1, 0.9), "0.500 [0.100, 0.900]", (0.1, 0.9)),
        # Raters who disagree more than chance: ICC(A,k) with swapped F bounds.
        (-9.0, (8.74, 0.44), "-9.000 (no usable interval", (None, None)),
        (0.2, (float("-inf"), 0.3), "0.200 (no usable interval", (None, None)),
    ],
)
def test_an_unusable_interval_is_not_shown_as_one(value, ci, text, bounds):
    from annotator.render.dashboard_types import shown

    number = shown(value, ci=ci)
    assert number.text.startswith(text)
    assert (number.low, number.high) == bounds and number.value == value
