"""The demo study that `annotator serve` loads the first time."""

import json
import runpy
import warnings

import pandas as pd
import pingouin as pg
import pytest
from sqlalchemy import func
from sqlmodel import select

from annotator.analysis.settings import study_settings
from annotator.data.frames import study_frames
from annotator.db import session_scope
from annotator.demo import DEMO_DIR, DEMO_LEAD_EMAIL, load_demo
from annotator.metrics import alt_test
from annotator.models import Benchmark, Invite, Item, LLMScore
from annotator.render.dashboard import study_dashboard
from annotator.study.studies import get_study


def test_demo_loads_once_and_prints_a_login_and_an_invite(app, client, db_session):
    with app.app_context(), session_scope(app) as session:
        first = load_demo(
            session, base_url="http://127.0.0.1:5000", instance_path=app.instance_path
        )
    with app.app_context(), session_scope(app) as session:
        second = load_demo(
            session, base_url="http://127.0.0.1:5000", instance_path=app.instance_path
        )
    assert first[0] == (
        "Loaded the demo study 'demo': 41 items, 246 stored LLM scores, "
        "615 example ratings by 5 raters."
    )
    assert not second[0].startswith("Loaded")
    login = next(line for line in first if line.startswith("Lead login:"))
    assert login == next(line for line in second if line.startswith("Lead login:"))
    invite = next(line for line in first if line.startswith("Rater invite link:"))
    assert invite.split(": ", 1)[1].startswith("http://127.0.0.1:5000/invite/")
    # The same unused invite is offered again rather than a new one each time.
    assert invite == next(line for line in second if line.startswith("Rater invite link:"))
    assert db_session.exec(select(func.count(Invite.id))).one() == 1
    per_benchmark = db_session.exec(
        select(Benchmark.name, func.count(Item.id)).join(Item).group_by(Benchmark.name)
    ).all()
    assert len(per_benchmark) == 6 and all(n >= 6 for _, n in per_benchmark)
    assert db_session.exec(select(func.count(LLMScore.id))).one() == 246

    password = login.split(" / ")[1].split(" ")[0]
    response = client.post("/login", data={"username": DEMO_LEAD_EMAIL, "password": password})
    assert response.status_code == 302 and response.headers["Location"].endswith("/lead/")
    assert b"Demo: grading scales" in client.get("/lead/").data


def test_the_demo_dashboard_shows_numbers_on_every_scale(app):
    """The first dashboard a newcomer sees: reliability and agreement with both judges,
    computed from the demo's example ratings (not "needs 2 items")."""
    with app.app_context(), session_scope(app) as session:
        load_demo(session, base_url="http://127.0.0.1:5000", instance_path=app.instance_path)
    with session_scope(app) as session:
        study = get_study(session, "demo")
        dash = study_dashboard(study_frames(session, study), settings=study_settings(study))
    ratings = pd.read_csv(DEMO_DIR / "ratings.csv")
    for scale in ("0-5", "0-10", "0-100"):
        part = dash.scale(scale)
        assert {row.model for row in part.models} == {"judge-a", "judge-b"}
        figures = {
            "ICC(A,1)": part.icc_a1,
            "ICC(A,k)": part.icc_ak,
            "alpha": part.alpha,
            "ensemble ICC": part.ensemble.icc_a1,
            "ensemble nMAE": part.ensemble.nmae,
            **{f"{row.model} ICC": row.icc_a1 for row in part.models},
            **{f"{row.model} nMAE": row.nmae for row in part.models},
        }
        empty = {name: figure.reason for name, figure in figures.items() if figure.value is None}
        assert empty == {}, scale
        assert not any("needs 2 items" in note for note in part.notes), part.notes
        assert (part.block_items, part.block_raters) == (40, 5)
        # The human ICC(A,1) is pingouin's on the file's 40 rated items (the attention
        # check left out): the example ratings are what the dashboard shows.
        mine = ratings[(ratings["scale"] == scale) & (ratings["item_id"] != "check-1")]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = pg.intraclass_corr(mine, targets="item_id", raters="rater", ratings="score")
        reference = table.set_index("Type").loc["ICC(A,1)", "ICC"]
        assert part.icc_a1.value == pytest.approx(reference, abs=1e-9)


@pytest.fixture
def demo(app):
    with session_scope(app) as session:
        load_demo(session, base_url="http://127.0.0.1:5000", instance_path=app.instance_path)
    return app


def test_the_demo_alt_test_decides_one_judge_passes_and_one_fails(demo, runner):
    """The demo shows the answer (issue 34): with 40 items rated by 5 raters the alt-test
    runs on every scale; on 0-5 judge-a may replace the raters and judge-b may not. The
    dashboard's verdicts (the app's analysis) are those of the alt-test run on the
    study's alttest export (the file a lead would hand to another tool)."""
    with session_scope(demo) as session:
        study = get_study(session, "demo")
        dash = study_dashboard(study_frames(session, study), settings=study_settings(study))
    verdicts = {}
    for scale in ("0-5", "0-10", "0-100"):
        result = runner.invoke(
            args=["export", "demo", "--format", "alttest", "--scale", scale, "--out", "-"]
        )
        assert result.exit_code == 0, result.output
        exported = json.loads(result.output)
        assert len(exported["humans"]) == 5
        assert all(len(items) == 40 for items in exported["humans"].values())
        for row in dash.scale(scale).alttest:
            reference = alt_test(humans=exported["humans"], llm=exported["llm"][row.model])
            assert row.passed is bool(reference.passed), (scale, row.model)
            assert row.winning_rate.value == pytest.approx(reference.winning_rate, abs=0.005)
            assert (row.n_items, row.n_tested) == (reference.n_items, reference.n_tested)
            assert row.n_tested == 5
            verdicts[scale, row.model] = row.passed
    assert verdicts["0-5", "judge-a"] is True
    assert verdicts["0-5", "judge-b"] is False


def test_the_demo_files_are_the_output_of_their_script(tmp_path):
    """items.jsonl, ratings.csv and llm_scores.csv are made up by make_demo.py (fixed
    seed): the committed files are what it writes, so a change goes through it."""
    make = runpy.run_path(str(DEMO_DIR / "make_demo.py"))["main"]
    make(tmp_path)
    for name in ("items.jsonl", "ratings.csv", "llm_scores.csv"):
        assert (tmp_path / name).read_bytes() == (DEMO_DIR / name).read_bytes(), name
