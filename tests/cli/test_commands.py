"""The command line: study files, imports, exports, invites, leads.

The round trip and every bad-input case run on SQLite and, in CI, again on
PostgreSQL (see conftest.py).
"""

from __future__ import annotations

import csv
import io
import json
import math
import shutil
from pathlib import Path

import pytest
from sqlalchemy import func
from sqlmodel import select

from annotator.models import Demographics, Item, LLMScore, Rating, RatingChange, User
from tests.conftest import DATA  # noqa: E402


def invoke(runner, *args):
    return runner.invoke(args=[str(a) for a in args], catch_exceptions=False)


def ok(runner, *args):
    result = invoke(runner, *args)
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture
def study(runner):
    ok(runner, "study", "create", DATA / "small-study.toml")
    return "small"


@pytest.fixture
def loaded(runner, study):
    ok(runner, "items", "import", study, DATA / "items.csv")
    ok(runner, "ratings", "import", study, DATA / "ratings.csv")
    ok(runner, "llm-scores", "import", study, DATA / "llm_scores.csv")
    return study


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def input_ratings() -> dict[tuple[str, str, str], float]:
    return {
        (r["item_id"], r["rater"], r["scale"]): float(r["score"])
        for r in read_csv(DATA / "ratings.csv")
    }


def counts(db_session) -> tuple[int, ...]:
    return tuple(
        db_session.exec(select(func.count(model.id))).one()
        for model in (Item, Rating, RatingChange, LLMScore, User, Demographics)
    )


# ---------------------------------------------------------------- study files


def test_study_create_and_list(runner):
    result = ok(runner, "study", "create", DATA / "small-study.toml")
    assert "Study 'small' created: 2 scales (0-5, 0-100), 2 benchmarks" in result.output
    listing = ok(runner, "study", "list").output
    assert "small" in listing and "Small test study" in listing


def test_study_create_twice_is_refused(runner, study):
    result = invoke(runner, "study", "create", DATA / "small-study.toml")
    assert result.exit_code != 0
    assert "already exists" in result.output


def test_example_study_file_mirrors_the_paper(runner):
    result = ok(
        runner, "study", "create", Path(__file__).parents[2] / "examples" / "grading-scales.toml"
    )
    assert "3 scales (0-5, 0-10, 0-100), 6 benchmarks" in result.output


# ------------------------------------------------------------------ round trip


def test_import_export_round_trip(runner, loaded, tmp_path):
    expected = input_ratings()

    ok(runner, "export", loaded, "--format", "long", "--out", tmp_path / "long.csv")
    rows = read_csv(tmp_path / "long.csv")
    human = {
        (r["item_id"], r["rater"], r["scale"]): float(r["score"])
        for r in rows
        if r["kind"] == "human"
    }
    assert human == expected
    genders = {r["rater"]: r["gender"] for r in rows if r["kind"] == "human"}
    assert genders == {"ann": "female", "bob": "male", "cy": "non-binary"}
    llm = {
        (r["item_id"], r["model"], r["scale"], r["run"]): float(r["score"])
        for r in rows
        if r["kind"] == "llm"
    }
    llm_input = {
        (r["item_id"], r["model"], r["scale"], r["run"]): float(r["score"])
        for r in read_csv(DATA / "llm_scores.csv")
    }
    assert llm == llm_input

    result = ok(
        runner,
        "export",
        loaded,
        "--format",
        "matrix",
        "--scale",
        "0-5",
        "--out",
        tmp_path / "m.csv",
    )
    matrix = read_csv(tmp_path / "m.csv")
    assert list(matrix[0]) == ["item_id", "benchmark", "ann", "bob", "cy", "llm:gpt", "llm:llama"]
    assert [r["item_id"] for r in matrix] == ["s1", "s2", "s3", "t1"]
    for row in matrix:
        for rater in ("ann", "bob", "cy"):
            key = (row["item_id"], rater, "0-5")
            if key in expected:
                assert float(row[rater]) == expected[key]
            else:
                assert row[rater] == ""
    # Two runs of gpt on s1 (4.8 and 4.6) are averaged.
    assert math.isclose(float(matrix[0]["llm:gpt"]), 4.7)
    assert matrix[0]["llm:llama"] == "4" and matrix[1]["llm:llama"] == ""
    assert "4 items x 3 raters, 2 of 12 human cells missing" in result.stderr

    ok(
        runner,
        "export",
        loaded,
        "--format",
        "alttest",
        "--scale",
        "0-5",
        "--out",
        tmp_path / "a.json",
    )
    data = json.loads((tmp_path / "a.json").read_text())
    humans = {
        (item, rater, "0-5"): value
        for rater, scores in data["humans"].items()
        for item, value in scores.items()
    }
    assert humans == {k: v for k, v in expected.items() if k[2] == "0-5"}
    assert data["llm"]["llama"] == {"s1": 4.0}
    assert data["llm"]["gpt"]["t1"] == 5.0

    ok(runner, "export", loaded, "--format", "demographics", "--out", tmp_path / "d.csv")
    demographics = {r["rater"]: r for r in read_csv(tmp_path / "d.csv")}
    assert set(demographics) == {"ann", "bob", "cy"}
    assert demographics["cy"]["gender"] == "non-binary"
    assert demographics["ann"]["source"] == "import"


def test_export_filters_by_benchmark_and_writes_to_stdout(runner, loaded):
    result = ok(
        runner, "export", loaded, "--format", "long", "--benchmark", "truthfulqa", "--out", "-"
    )
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert {r["item_id"] for r in rows} == {"t1"}
    assert {r["benchmark"] for r in rows} == {"truthfulqa"}


def test_item_fields_survive_import(app, runner, loaded, db_session):
    items = {i.external_id: i for i in db_session.exec(select(Item))}
    assert items["s2"].fields == {
        "sentence1": 'He left early, "as usual".',
        "sentence2": "She arrived late.",
    }
    assert items["s3"].fields["sentence2"] == "Multi\nline sentence"
    assert items["s3"].fields["sentence1"] == "Näive café, déjà vu — ünïcödé"
    assert items["t1"].fields == {
        "question": "Is the sun a star?",
        "answer": "Yes, it is a G-type main-sequence star.",
    }


def test_importing_the_same_files_twice_adds_nothing(runner, loaded, db_session):
    before = counts(db_session)
    for command, name in (
        ("items", "items.csv"),
        ("ratings", "ratings.csv"),
        ("llm-scores", "llm_scores.csv"),
    ):
        result = ok(runner, command, "import", loaded, DATA / name)
        assert " 0 " in result.output.split("read:")[1].split("added")[0] + " "
        assert "0 updated" in result.output
    db_session.expire_all()
    assert counts(db_session) == before


def test_reimport_with_a_changed_score_updates_and_keeps_history(
    runner, loaded, tmp_path, db_session
):
    changed = tmp_path / "changed.csv"
    changed.write_text("item_id,rater,scale,score\ns1,ann,0-5,1.25\n")
    result = ok(runner, "ratings", "import", loaded, changed)
    assert "1 updated" in result.output
    rating = db_session.exec(
        select(Rating)
        .join(User, User.id == Rating.rater_id)
        .join(Item, Item.id == Rating.item_id)
        .where(User.rater_code == "ann", Item.external_id == "s1", Rating.scale_id == 1)
    ).one()
    assert rating.value == 1.25
    history = db_session.exec(
        select(RatingChange).where(RatingChange.rating_id == rating.id).order_by(RatingChange.id)
    ).all()
    assert [(h.value, h.previous_value) for h in history] == [(4.75, None), (1.25, 4.75)]


def test_items_import_from_jsonl(runner, study, tmp_path, db_session):
    path = tmp_path / "items.jsonl"
    path.write_text(
        json.dumps({"item_id": "j1", "benchmark": "sts-b", "sentence1": "a", "sentence2": "b"})
        + "\n\n"
        + json.dumps(
            {"item_id": "j2", "benchmark": "truthfulqa", "question": "q", "answer": "x", "n": 3}
        )
        + "\n"
    )
    result = ok(runner, "items", "import", study, path)
    assert "2 rows read: 2 items added" in result.output
    item = db_session.exec(select(Item).where(Item.external_id == "j2")).one()
    assert item.fields == {"question": "q", "answer": "x", "n": 3}


# ------------------------------------------------------------------ bad input

GOOD_ITEMS = "item_id,benchmark,sentence1,sentence2\nok1,sts-b,a,b\n"
GOOD_RATINGS_HEAD = "item_id,rater,scale,score\ns1,ann,0-5,1\n"


@pytest.mark.parametrize(
    ("command", "content", "line", "column", "message"),
    [
        ("items", "item_id,sentence1,sentence2\nx,a,b\n", 1, "benchmark", "missing column"),
        ("items", GOOD_ITEMS + "x2,nope,a,b\n", 3, "benchmark", "unknown benchmark 'nope'"),
        (
            "items",
            GOOD_ITEMS + "ok1,sts-b,c,d\n",
            3,
            "item_id",
            "duplicate item id 'ok1' (first on line 2)",
        ),
        ("items", GOOD_ITEMS + "x3,sts-b,a,\n", 3, "sentence2", "empty"),
        ("items", "item_id,benchmark,sentence1\nx4,sts-b,a\n", 2, "sentence2", "missing"),
        ("items", GOOD_ITEMS + "x5,sts-b,a,b,extra\n", 3, None, "5 fields where the header has 4"),
        ("ratings", "item_id,rater,score\ns1,ann,1\n", 1, "scale", "missing column"),
        ("ratings", GOOD_RATINGS_HEAD + "s1,ann,0-7,1\n", 3, "scale", "unknown scale '0-7'"),
        (
            "ratings",
            GOOD_RATINGS_HEAD + "s2,ann,0-5,5.01\n",
            3,
            "score",
            "5.01 is outside the scale; the scale 0-5 takes numbers from 0 to 5 in steps of 0.01",
        ),
        ("ratings", GOOD_RATINGS_HEAD + "s2,ann,0-5,-0.5\n", 3, "score", "the scale 0-5 takes"),
        ("ratings", GOOD_RATINGS_HEAD + "s2,ann,0-5,nan\n", 3, "score", "not a finite number"),
        ("ratings", GOOD_RATINGS_HEAD + "s2,ann,0-5,inf\n", 3, "score", "not a finite number"),
        (
            "ratings",
            GOOD_RATINGS_HEAD + "s2,ann,0-5,-Infinity\n",
            3,
            "score",
            "not a finite number",
        ),
        ("ratings", GOOD_RATINGS_HEAD + "s2,ann,0-5,four\n", 3, "score", "“four” is not a number"),
        ("ratings", GOOD_RATINGS_HEAD + "s2,ann,0-5,\n", 3, "score", "the score is empty"),
        ("ratings", GOOD_RATINGS_HEAD + "zz,ann,0-5,1\n", 3, "item_id", "unknown item 'zz'"),
        ("ratings", GOOD_RATINGS_HEAD + "s1,ann,0-5,2\n", 3, None, "already on line 2"),
        (
            "ratings",
            "item_id,rater,scale,score,gender\ns1,ann,0-5,1,woman\n",
            2,
            "gender",
            "'woman' is not one of",
        ),
        (
            "llm-scores",
            "item_id,model,scale,score\ns1,gpt,0-5,6\n",
            2,
            "score",
            "outside the scale",
        ),
        (
            "llm-scores",
            "item_id,model,scale,score\ns1,gpt,0-5,NaN\n",
            2,
            "score",
            "not a finite number",
        ),
        ("llm-scores", "item_id,model,scale\ns1,gpt,0-5\n", 1, "score", "missing column"),
        (
            "llm-scores",
            "item_id,model,scale,score\nzz,gpt,0-5,1\n",
            2,
            "item_id",
            "unknown item 'zz'",
        ),
        (
            "llm-scores",
            "item_id,model,scale,score,temperature\ns1,gpt,0-5,1,hot\n",
            2,
            "temperature",
            "'hot' is not a number",
        ),
    ],
)
def test_bad_input_names_file_line_and_column_and_imports_nothing(
    runner, loaded, tmp_path, db_session, command, content, line, column, message
):
    path = tmp_path / "bad.csv"
    path.write_text(content, encoding="utf-8")
    before = counts(db_session)
    result = invoke(runner, command, "import", loaded, path)
    assert result.exit_code != 0
    where = f"{path}: line {line}" + (f", column {column!r}" if column else "")
    assert where in result.output
    assert message in result.output
    assert "nothing was imported" in result.output
    db_session.expire_all()
    assert counts(db_session) == before


def test_llm_scores_keep_any_precision_within_the_bounds(runner, loaded, tmp_path, db_session):
    """Unlike a rater's score, a stored LLM score may be a mean over samples or
    token probabilities, written by a program: any decimals, exponents too."""
    path = tmp_path / "llm.csv"
    path.write_text(
        "item_id,model,scale,score\ns1,judge,0-5,3.14159\ns2,judge,0-5,1e0\ns3,judge,0-100,2.5E-3\n"
    )
    ok(runner, "llm-scores", "import", loaded, path)
    stored = dict(
        db_session.exec(
            select(Item.external_id, LLMScore.value)
            .join(Item, Item.id == LLMScore.item_id)
            .where(LLMScore.model == "judge")
        ).all()
    )
    assert stored == {"s1": 3.14159, "s2": 1.0, "s3": 0.0025}
    path.write_text("item_id,model,scale,score\nt1,judge,0-5,5.000001\n")
    result = invoke(runner, "llm-scores", "import", loaded, path)
    assert result.exit_code != 0
    assert (
        f"{path}: line 2, column 'score': 5.000001 is outside the scale; "
        "the scale 0-5 takes numbers from 0 to 5\n" in result.output
    )


def test_numbers_in_jsonl_ratings_are_read_as_written(runner, loaded, tmp_path):
    path = tmp_path / "ratings.jsonl"
    rows = [
        {"item_id": "s1", "rater": "jay", "scale": "0-5", "score": 2.35},
        {"item_id": "s2", "rater": "jay", "scale": "0-5", "score": 1e-05},
        {"item_id": "s3", "rater": "jay", "scale": "0-5", "score": True},
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = invoke(runner, "ratings", "import", loaded, path)
    assert result.exit_code != 0
    assert f"{path}: line 1" not in result.output
    assert f"{path}: line 2, column 'score': 0.00001 has too many decimals" in result.output
    assert f"{path}: line 3, column 'score': “True” is not a number" in result.output


def test_a_file_that_is_not_utf8_is_refused(runner, study, tmp_path, db_session):
    path = tmp_path / "latin1.csv"
    path.write_bytes(
        "item_id,benchmark,sentence1,sentence2\nx,sts-b,ok,fine\ny,sts-b,café,b\n".encode("latin-1")
    )
    result = invoke(runner, "items", "import", study, path)
    assert result.exit_code != 0
    assert f"{path}: line 3: the file is not UTF-8 (byte 0xe9" in result.output
    assert db_session.exec(select(func.count(Item.id))).one() == 0


def test_all_problems_are_reported_at_once(runner, loaded, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("item_id,rater,scale,score\ns1,x,0-5,9\ns2,x,0-9,1\nq,x,0-5,1\n")
    result = invoke(runner, "ratings", "import", loaded, path)
    assert "line 2, column 'score'" in result.output
    assert "line 3, column 'scale'" in result.output
    assert "line 4, column 'item_id'" in result.output
    assert "3 problems; nothing was imported." in result.output


def test_a_changed_llm_score_is_refused_not_overwritten(runner, loaded, tmp_path, db_session):
    path = tmp_path / "llm.csv"
    # Stored at temperature 1.0; at another temperature it would be another score.
    path.write_text("item_id,model,scale,score,run,temperature\ns1,gpt,0-5,1.0,1,1.0\n")
    result = invoke(runner, "llm-scores", "import", loaded, path)
    assert result.exit_code != 0
    assert "already stored with value 4.8" in result.output
    assert (
        db_session.exec(
            select(LLMScore.value).where(
                LLMScore.run == "1",
                LLMScore.model == "gpt",
                LLMScore.scale_id == 1,
                LLMScore.item_id == 1,
            )
        ).one()
        == 4.8
    )


def test_changed_item_content_is_refused(runner, loaded, tmp_path):
    path = tmp_path / "items.csv"
    path.write_text("item_id,benchmark,sentence1,sentence2\ns1,sts-b,changed,text\n")
    result = invoke(runner, "items", "import", loaded, path)
    assert result.exit_code != 0
    assert (
        "line 2, column 'item_id': item 's1' is already in the study with other content"
        in result.output
    )


def test_unknown_study_and_missing_file(runner, study, tmp_path):
    result = invoke(runner, "items", "import", "nope", DATA / "items.csv")
    assert result.exit_code != 0 and "no study with slug 'nope' (studies: small)" in result.output
    result = invoke(runner, "items", "import", study, tmp_path / "absent.csv")
    assert result.exit_code != 0 and "absent.csv: no such file" in result.output
    other = tmp_path / "items.xlsx"
    shutil.copy(DATA / "items.csv", other)
    result = invoke(runner, "items", "import", study, other)
    assert result.exit_code != 0 and "unknown file type '.xlsx'" in result.output


def test_the_export_leaves_no_object_frozen(runner, loaded, tmp_path):
    """The export command leaves the garbage collector alone: a process that
    goes on after it (this one) has its collector whole, after a success and
    after a failure."""
    import gc

    assert gc.get_freeze_count() == 0
    ok(runner, "export", loaded, "--format", "long", "--out", tmp_path / "long.csv")
    assert gc.get_freeze_count() == 0
    result = invoke(runner, "export", loaded, "--format", "matrix", "--out", tmp_path / "m.csv")
    assert result.exit_code != 0 and "--scale" in result.output
    assert gc.get_freeze_count() == 0
    result = invoke(runner, "export", "nope", "--format", "long", "--out", tmp_path / "x.csv")
    assert result.exit_code != 0 and "no study with slug 'nope'" in result.output
    assert gc.get_freeze_count() == 0


# ---------------------------------------------------------------- the matrix


def test_complete_keeps_the_largest_crossed_block(runner, loaded, tmp_path):
    result = ok(
        runner,
        "export",
        loaded,
        "--format",
        "matrix",
        "--scale",
        "0-5",
        "--complete",
        "--out",
        tmp_path / "m.csv",
    )
    matrix = read_csv(tmp_path / "m.csv")
    # ann and bob rated all four items (8 cells); adding cy keeps 2 items (6).
    assert [r["item_id"] for r in matrix] == ["s1", "s2", "s3", "t1"]
    assert list(matrix[0])[2:4] == ["ann", "bob"]
    assert "dropped 0 items and 1 rater" in result.stderr


def test_export_needs_a_scale_when_there_are_several(runner, loaded, tmp_path):
    result = invoke(runner, "export", loaded, "--format", "matrix", "--out", tmp_path / "m.csv")
    assert result.exit_code != 0
    assert "this export is for one scale; choose one with --scale (0-5, 0-100)" in result.output
    result = invoke(
        runner,
        "export",
        loaded,
        "--format",
        "alttest",
        "--scale",
        "0-9",
        "--out",
        tmp_path / "a.json",
    )
    assert result.exit_code != 0
    assert "unknown scale '0-9'; choose one with --scale (0-5, 0-100)" in result.output


# ---------------------------------------------------------- leads and raters


def test_lead_create(runner, db_session):
    result = runner.invoke(
        args=["lead", "create", "Boss@Example.org"], input="s3cret-pass\ns3cret-pass\n"
    )
    assert result.exit_code == 0, result.output
    lead = db_session.exec(select(User).where(User.email == "boss@example.org")).one()
    assert lead.role == "lead" and lead.password_hash and "s3cret" not in lead.password_hash
    again = runner.invoke(args=["lead", "create", "boss@example.org", "--password", "whatever1"])
    assert again.exit_code != 0 and "already exists" in again.output
    short = runner.invoke(args=["lead", "create", "x@example.org", "--password", "short"])
    assert short.exit_code != 0 and "at least 8 characters" in short.output


def test_lead_create_reads_the_password_from_stdin_for_scripts(runner, db_session):
    from werkzeug.security import check_password_hash

    result = runner.invoke(
        args=["lead", "create", "script@example.org", "--password-stdin"],
        input="a long passphrase\n",
    )
    assert result.exit_code == 0, result.output
    assert "Lead script@example.org created." in result.output
    lead = db_session.exec(select(User).where(User.email == "script@example.org")).one()
    assert check_password_hash(lead.password_hash, "a long passphrase")
    empty = runner.invoke(args=["lead", "create", "x@example.org", "--password-stdin"], input="")
    assert empty.exit_code != 0 and "standard input holds no password" in empty.output
    both = runner.invoke(
        args=["lead", "create", "y@example.org", "--password", "whatever1", "--password-stdin"],
        input="whatever2\n",
    )
    assert both.exit_code != 0 and "not both" in both.output


def test_raters_invite_prints_one_link_per_line(runner, study):
    result = ok(
        runner, "raters", "invite", study, "--count", "3", "--base-url", "https://rate.example.org/"
    )
    links = result.output.strip().splitlines()
    assert len(links) == 3 and len(set(links)) == 3
    assert all(link.startswith("https://rate.example.org/invite/") for link in links)


def test_the_same_commands_work_under_flask(app):
    from flask.cli import ScriptInfo

    from annotator.cli import main

    result = app.test_cli_runner().invoke(
        main, ["study", "list"], obj=ScriptInfo(create_app=lambda: app)
    )
    assert result.exit_code == 0, result.output
    assert "No studies yet" in result.output


def test_attention_check_items_stay_out_of_the_matrix_and_alttest(runner, loaded, tmp_path):
    items = tmp_path / "gold.csv"
    items.write_text(
        "item_id,benchmark,sentence1,sentence2,gold_score,gold_tolerance\n"
        "g1,sts-b,same,same,1,0.1\n"
    )
    ok(runner, "items", "import", loaded, items)
    ratings = tmp_path / "gold-ratings.csv"
    ratings.write_text("item_id,rater,scale,score\ng1,ann,0-5,5\n")
    ok(runner, "ratings", "import", loaded, ratings)
    ok(
        runner,
        "export",
        loaded,
        "--format",
        "matrix",
        "--scale",
        "0-5",
        "--out",
        tmp_path / "m.csv",
    )
    assert "g1" not in {r["item_id"] for r in read_csv(tmp_path / "m.csv")}
    ok(
        runner,
        "export",
        loaded,
        "--format",
        "alttest",
        "--scale",
        "0-5",
        "--out",
        tmp_path / "a.json",
    )
    assert "g1" not in json.loads((tmp_path / "a.json").read_text())["humans"]["ann"]
    ok(runner, "export", loaded, "--format", "long", "--out", tmp_path / "l.csv")
    assert "g1" in {r["item_id"] for r in read_csv(tmp_path / "l.csv")}


def test_gold_score_must_come_with_a_tolerance_and_be_a_share(runner, study, tmp_path):
    items = tmp_path / "gold.csv"
    items.write_text(
        "item_id,benchmark,sentence1,sentence2,gold_score,gold_tolerance\n"
        "g1,sts-b,a,b,1,\n"
        "g2,sts-b,a,b,4,0.1\n"
    )
    result = invoke(runner, "items", "import", study, items)
    assert result.exit_code != 0
    assert (
        "line 2, column 'gold_score': give gold_score and gold_tolerance together" in result.output
    )
    assert (
        "line 3, column 'gold_score': 4 is not a share of the scale's range (0 to 1)"
        in result.output
    )
