"""Rater quality on a generated study with one straight-liner and one speeder."""

from __future__ import annotations

import json
import warnings

import pandas as pd
import pingouin as pg
import pytest

from annotator.analysis.matrices import human_ratings
from annotator.analysis.rater_quality import rater_quality_table
from annotator.data.frames import study_frames
from annotator.services.rater_quality import study_rater_quality

SPEC = {"slug": "careless", "n_items": 40, "n_raters": 6, "straight_liners": 1, "speeders": 1}
STRAIGHT, SPEEDER = "careless-r00", "careless-r01"


@pytest.fixture
def careless(make_study):
    return make_study(**SPEC)


def test_the_straight_liner_and_the_speeder_are_flagged_and_no_one_else(session, careless):
    table = rater_quality_table(study_frames(session, careless))
    frame = table.frame
    assert set(frame["scale"]) == {"0-5", "0-10", "0-100"}
    assert len(frame) == 3 * 6
    straight = frame.set_index(["scale", "rater"])["straight_lining"]
    speeding = frame.set_index(["scale", "rater"])["speeding"]
    for scale in ("0-5", "0-10", "0-100"):
        assert straight[scale].to_dict() == {r: r == STRAIGHT for r in straight[scale].index}
        assert speeding[scale].to_dict() == {r: r == SPEEDER for r in speeding[scale].index}
    row = frame[(frame["rater"] == STRAIGHT) & (frame["scale"] == "0-5")].iloc[0]
    assert row["modal_share"] == 1.0 and row["modal_value"] == 2.5
    assert "straight-lining" in row["flags"]
    # The generator gives odd raters one failed check per scale, the others none.
    failed = frame.set_index(["scale", "rater"])["attention_failed"]["0-10"]
    assert failed.to_dict() == {f"careless-r{j:02d}": j % 2 for j in range(6)}
    # Every rater rated 3 repeats per scale; the retest ICC is computed for each.
    assert (frame["retest_items"] == 3).all()
    assert frame.loc[frame["rater"] != STRAIGHT, "retest_icc_a1"].notna().all()


def test_leave_one_out_icc_matches_pingouin_on_the_same_matrix(session, careless):
    frames = study_frames(session, careless)
    table = rater_quality_table(frames, scale="0-10").frame.set_index("rater")
    wide = human_ratings(frames, "0-10")
    for rater in wide.columns:
        pair = pd.DataFrame(
            {"self": wide[rater], "others": wide.drop(columns=rater).mean(axis=1)}
        ).dropna()
        long = pair.reset_index().melt(id_vars="item", var_name="who", value_name="score")
        with warnings.catch_warnings():
            # pingouin 0.7 uses a pandas keyword that pandas 3.1 deprecates; not ours.
            warnings.filterwarnings("ignore", message="The inplace keyword")
            ref = pg.intraclass_corr(long, targets="item", raters="who", ratings="score")
        expected = ref.set_index("Type").loc["ICC(A,1)", "ICC"]
        got = table.loc[rater, "loo_icc_a1"]
        if rater == STRAIGHT:
            # A constant rater: pingouin's value is near 0 as ours (no shared variance).
            assert got == pytest.approx(expected, abs=1e-9)
        else:
            assert got == pytest.approx(expected, abs=1e-10)
            assert got > 0.5


def test_where_narrows_the_raters(session, careless):
    table = study_rater_quality(session, careless, scale="0-5", where=["gender=female"])
    assert list(table.frame["rater"]) == [f"careless-r{j:02d}" for j in (0, 2, 4)]
    assert table.where == "gender=female"
    with pytest.raises(ValueError, match=r"known values of gender: .*female.*male"):
        study_rater_quality(session, careless, where=["gender=robot"])
    with pytest.raises(ValueError, match="scale '1-7' is not in the study"):
        study_rater_quality(session, careless, scale="1-7")


def test_cli_json_and_text(runner, careless):
    result = runner.invoke(args=["raters", "quality", "careless", "--scale", "0-5", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    flagged = {r["rater"]: r["flags"] for r in data["raters"] if r["flags"]}
    assert "straight-lining" in flagged[STRAIGHT]
    assert "speeding" in flagged[SPEEDER]
    assert data["straight_share"] == 0.8 and data["speed_fraction"] == 0.3
    text = runner.invoke(args=["raters", "quality", "careless", "--where", "gender=male"])
    assert text.exit_code == 0, text.output
    assert "raters: gender=male" in text.output
    assert SPEEDER in text.output and STRAIGHT not in text.output
    bad = runner.invoke(args=["raters", "quality", "careless", "--where", "shoe=42"])
    assert bad.exit_code != 0
    assert "no demographic question 'shoe' (known: gender, age_group" in bad.output


def test_the_report_shows_the_flags(careless, session):
    from lxml import html as lxml_html

    from annotator.services.report import build_report

    report = build_report(session, careless)
    tree = lxml_html.fromstring(report.html)
    table = tree.xpath("//table[@data-table='raters']")[0]
    header = [th.text for th in table.xpath(".//thead//th")]
    rows = [
        dict(zip(header, [td.text for td in tr.xpath("./td")], strict=True))
        for tr in table.xpath(".//tbody/tr")
    ]
    flags = {(r["scale"], r["rater"]): r["flags"] or "" for r in rows}
    assert "straight-lining" in flags[("0-5", STRAIGHT)]
    assert "speeding" in flags[("0-5", SPEEDER)]
    assert "straight-lining" not in flags[("0-5", "careless-r02")]


def test_the_cached_table_follows_new_ratings(session, careless):
    from sqlmodel import select

    from annotator.models import Rating
    from annotator.services.rater_quality import cached_rater_quality

    first = cached_rater_quality(session, careless, where="gender=female")
    assert cached_rater_quality(session, careless, where=["gender=female"]) is first
    rating = session.exec(select(Rating).order_by(Rating.id.desc())).first()
    session.delete(rating)
    session.commit()
    again = cached_rater_quality(session, careless, where="gender=female")
    assert again is not first
    assert again.where == "gender=female"


def test_a_rubric_study_gets_one_table_per_criterion(session, make_study, runner):
    """The defect: ratings of two criteria made duplicate (item, rater) cells and
    "Index contains duplicate entries, cannot reshape". Each criterion's rows match
    pingouin on that criterion's own matrix."""
    study = make_study(
        slug="rubricq",
        n_items=20,
        n_raters=4,
        scales=(("1-5", 1.0, 5.0, 1.0),),
        benchmarks=("summeval",),
        criteria=("coherence", "fluency"),
        extra_temperatures=(),
        runs=1,
        repeats=0,
        attention_items=0,
        seed=3,
    )
    frames = study_frames(session, study)
    table = rater_quality_table(frames)
    assert table.has_criteria
    assert sorted(set(zip(table.frame["criterion"], table.frame["scale"], strict=True))) == [
        ("coherence", "1-5"),
        ("fluency", "1-5"),
    ]
    assert len(table.frame) == 2 * 4
    r = frames.ratings
    for criterion in ("coherence", "fluency"):
        mine = r[(r["criterion"] == criterion) & ~r["is_repeat"] & ~r["is_attention_check"]]
        wide = mine.pivot(index="item", columns="rater", values="value").astype(float)
        rows = table.frame[table.frame["criterion"] == criterion].set_index("rater")
        for rater in wide.columns:
            pair = pd.DataFrame(
                {"self": wide[rater], "others": wide.drop(columns=rater).mean(axis=1)}
            ).dropna()
            long = pair.reset_index().melt(id_vars="item", var_name="who", value_name="score")
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="The inplace keyword")
                ref = pg.intraclass_corr(long, targets="item", raters="who", ratings="score")
            expected = ref.set_index("Type").loc["ICC(A,1)", "ICC"]
            assert rows.loc[rater, "loo_icc_a1"] == pytest.approx(expected, abs=1e-10)
            assert rows.loc[rater, "n_items"] == wide[rater].notna().sum()
    text = runner.invoke(args=["raters", "quality", "rubricq"], catch_exceptions=False)
    assert text.exit_code == 0, text.output
    assert "criterion" in text.output.splitlines()[1] and "fluency" in text.output
    data = runner.invoke(args=["raters", "quality", "rubricq", "--json"])
    assert data.exit_code == 0, data.output
    assert {row["criterion"] for row in json.loads(data.output)["raters"]} == {
        "coherence",
        "fluency",
    }
