"""The matrix and alt-test files, byte for byte, against pandas doing the same by hand.

The reference reads the tables with plain SQL (``pandas.read_sql``), applies each
rule as the README and the docstrings state it (active raters only, first ratings
of real items, ``--where``, the newest prompt version of each model, benchmark
and temperature, runs combined and means kept to 12 significant digits) and
writes the files with the ``csv`` and ``json`` modules. Nothing of the exporter
is reused. Runs on SQLite, and on PostgreSQL with ANNOTATOR_TEST_DATABASE_URL.
"""

from __future__ import annotations

import csv
import io
import json
import math
import statistics

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import text
from sqlmodel import select

from annotator.data.exporters import render_export
from annotator.data.matrix_export import round_significant_array
from annotator.models import LLMScore, RaterStatus, User

RULES = {
    "mean": statistics.fmean,
    "median": statistics.median,
    "majority": lambda v: statistics.median(statistics.multimode(v)),
    "first": lambda v: v[0],
}


@pytest.fixture
def study(session, make_study):
    """Missing cells, repeats, attention checks, a withdrawn and an excluded rater,
    three runs at two temperatures, a second prompt version for one judge, and
    item names with commas, quotes, line breaks and accents."""
    made = make_study(n_items=40, n_raters=7, runs=3, missing=0.2, extra_temperatures=(0.0,))
    raters = session.exec(select(User).where(User.study_id == made.id).order_by(User.id)).all()
    raters[0].status = RaterStatus.WITHDRAWN
    raters[3].status = RaterStatus.EXCLUDED
    session.add_all([raters[0], raters[3]])
    # gpt at temperature 1: its old scores get a prompt hash, then a newer prompt
    # scores every third item (of both benchmarks) once.
    old = session.exec(
        select(LLMScore).where(LLMScore.model == "gpt", LLMScore.temperature == 1.0)
    ).all()
    for score in old:
        score.prompt_hash = "old-prompt"
    session.add_all(old)
    session.flush()
    for score in old[::9]:
        session.add(
            LLMScore(
                item_id=score.item_id,
                scale_id=score.scale_id,
                model="gpt",
                run="new-0",
                temperature=1.0,
                value=round(score.value / 3, 4),
                prompt_hash="new-prompt",
            )
        )
    # Item names the CSV must quote and the JSON must escape.
    for old_name, new_name in (
        ("item-00001", 'Ünïcode, "quoted" item'),
        ("item-00002", "carriage\rreturn"),
        ("item-00004", "line\nbreak"),
    ):
        session.execute(
            text("UPDATE item SET external_id = :new WHERE external_id = :old AND study_id = :s"),
            {"new": new_name, "old": old_name, "s": made.id},
        )
    session.commit()
    return made


def _tables(session, study) -> dict[str, pd.DataFrame]:
    connection = session.connection()
    sql = {
        "items": "SELECT i.id, i.external_id, i.gold_score, b.name AS benchmark FROM item i "
        "JOIN benchmark b ON b.id = i.benchmark_id WHERE i.study_id = :study ORDER BY i.id",
        "ratings": "SELECT r.item_id, r.value, r.is_repeat, r.is_attention_check, "
        's.name AS scale, u.rater_code, u.status, u.id AS user_id FROM rating r JOIN "user" u '
        "ON u.id = r.rater_id JOIN scale s ON s.id = r.scale_id WHERE s.study_id = :study",
        "llm": "SELECT l.id, l.item_id, l.model, l.run, l.value, l.temperature, l.prompt_hash, "
        "s.name AS scale FROM llmscore l JOIN scale s ON s.id = l.scale_id "
        "WHERE s.study_id = :study",
        "answers": 'SELECT u.rater_code, d.answers FROM "user" u JOIN demographics d '
        "ON d.user_id = u.id WHERE u.study_id = :study",
    }
    return {
        name: pd.read_sql(text(query), connection, params={"study": study.id})
        for name, query in sql.items()
    }


def _reference(tables, *, scale, benchmark, temperature, runs, gender):
    """(items, raters, {rater: {item_pk: value}}, models, {model: {item_pk: value}}, left out)."""
    items = tables["items"][tables["items"]["gold_score"].isna()]
    if benchmark:
        items = items[items["benchmark"] == benchmark]
    ratings = tables["ratings"]
    ratings = ratings[
        (ratings["scale"] == scale)
        & ~ratings["is_repeat"].astype(bool)
        & ~ratings["is_attention_check"].astype(bool)
        & (ratings["status"] == "active")
        & ratings["item_id"].isin(items["id"])
    ]
    if gender:
        answers = tables["answers"]
        parsed = answers["answers"].map(lambda a: json.loads(a) if isinstance(a, str) else a)
        chosen = answers.loc[parsed.map(lambda a: a.get("gender") == gender), "rater_code"]
        ratings = ratings[ratings["rater_code"].isin(chosen)]
    humans = {
        code: dict(zip(group["item_id"], group["value"], strict=True))
        for code, group in ratings.groupby("rater_code")
    }
    llm = tables["llm"]
    llm = llm[(llm["scale"] == scale) & llm["item_id"].isin(items["id"])]
    llm = llm[(llm["temperature"] - temperature).abs() < 1e-9].sort_values("id")
    llm = llm.assign(
        benchmark=llm["item_id"].map(items.set_index("id")["benchmark"]),
        prompt=llm["prompt_hash"].fillna(""),
    )
    # The newest prompt version: the one whose last score has the largest id.
    newest = llm.groupby(["model", "benchmark", "prompt"])["id"].max().reset_index()
    newest = newest.sort_values("id").drop_duplicates(["model", "benchmark"], keep="last")
    kept = llm.merge(newest[["model", "benchmark", "prompt"]], on=["model", "benchmark", "prompt"])
    left_out = len(llm) - len(kept)
    kept = kept.sort_values("id")
    judges: dict[str, dict[int, float]] = {}
    for (model, item), group in kept.groupby(["model", "item_id"], sort=False):
        if runs == "each":
            for run, value in zip(group["run"], group["value"], strict=True):
                judges.setdefault(f"{model}#{run}", {})[item] = value
        else:
            value = RULES[runs](group["value"].tolist())
            if runs != "first":
                value = float(f"{value:.12g}")
            judges.setdefault(model, {})[item] = value
    return items, sorted(humans), humans, sorted(judges), judges, left_out


def _number(value) -> str:
    if value is None or math.isnan(value):
        return ""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


CASES = [
    # scale, benchmark, temperature, runs, gender
    ("0-5", None, 1.0, "mean", None),
    ("0-10", None, 1.0, "median", None),
    ("0-100", None, 1.0, "majority", "female"),
    ("0-5", "summeval", 1.0, "first", None),
    ("0-5", None, 0.0, "each", "male"),
    ("0-10", "sts-b", 1.0, "each", None),
]


@pytest.mark.parametrize(("scale", "benchmark", "temperature", "runs", "gender"), CASES)
def test_matrix_and_alttest_files_match_pandas_by_hand(
    session, study, scale, benchmark, temperature, runs, gender
):
    tables = _tables(session, study)
    items, raters, humans, models, judges, left_out = _reference(
        tables, scale=scale, benchmark=benchmark, temperature=temperature, runs=runs, gender=gender
    )
    # The study exercises what the case is about.
    assert len(raters) >= 2 and models
    assert left_out > 0 if temperature == 1.0 else left_out == 0
    options = {
        "scale": scale,
        "benchmark": benchmark,
        "temperature": temperature,
        "runs": runs,
        "where": {"gender": (gender,)} if gender else None,
    }

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["item_id", "benchmark", *raters, *(f"llm:{m}" for m in models)])
    for pk, item_id, bench in zip(
        items["id"], items["external_id"], items["benchmark"], strict=True
    ):
        cells = [humans[r].get(pk) for r in raters] + [judges[m].get(pk) for m in models]
        writer.writerow([item_id, bench, *(_number(v) for v in cells)])
    matrix = render_export(session, study, "matrix", **options)
    assert matrix.text == out.getvalue()
    if left_out and runs != "each":
        assert (
            f"{left_out} LLM score{'s' if left_out != 1 else ''} asked under an older prompt left out"
            in matrix.notes
        )

    names = dict(zip(items["id"], items["external_id"], strict=True))

    def by_item(values):
        return {names[pk]: float(v) for pk, v in values.items()}

    expected = {
        "humans": {r: by_item(humans[r]) for r in raters},
        "llm": {m: by_item(judges[m]) for m in models},
    }
    alttest = render_export(session, study, "alttest", **options)
    assert alttest.text == json.dumps(expected, indent=1, sort_keys=True) + "\n"
    assert alttest.rows == sum(len(v) for v in humans.values())


def test_no_rater_left_and_no_llm_score_at_the_temperature(session, make_study):
    """Edge cases of the array reading: every rater withdrawn, no LLM score at the
    temperature asked for: the item columns alone, and empty alt-test sections."""
    made = make_study(n_items=6, n_raters=2, runs=1, extra_temperatures=())
    session.execute(
        text("UPDATE \"user\" SET status = 'withdrawn' WHERE study_id = :s"), {"s": made.id}
    )
    session.commit()
    items = _tables(session, made)["items"]
    items = items[items["gold_score"].isna()]
    options = {"scale": "0-5", "temperature": 0.5}
    matrix = render_export(session, made, "matrix", **options)
    rows = zip(items["external_id"], items["benchmark"], strict=True)
    assert matrix.text == "item_id,benchmark\n" + "".join(f"{i},{b}\n" for i, b in rows)
    alttest = render_export(session, made, "alttest", **options)
    assert alttest.text == json.dumps({"humans": {}, "llm": {}}, indent=1, sort_keys=True) + "\n"
    assert alttest.rows == 0


def test_means_are_rounded_as_python_formats_them():
    """The export's 12 significant digits, in numpy, against Python's own
    formatting (``float(f"{v:.12g}")``) on means of scores and on arbitrary doubles."""
    rng = np.random.default_rng(3)
    grids = [rng.integers(0, 501, (40_000, 3)) * 0.01, rng.integers(0, 1001, (40_000, 3)) * 0.1]
    means = [g.mean(axis=1) for g in grids] + [np.median(grids[0][:, :2], axis=1)]
    raw = rng.integers(0, 2**64, 40_000, dtype=np.uint64).view(np.float64)
    spread = rng.random(40_000) * 10.0 ** rng.integers(-15, 20, 40_000)
    special = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 5e-324, 1e308, 0.5, 2.5e-12, 1e12])
    values = np.concatenate([*means, raw[np.isfinite(raw)], spread, -spread, special])
    expected = [float(f"{v:.12g}") for v in values.tolist()]
    got = round_significant_array(values[:, None]).reshape(-1)  # any shape
    np.testing.assert_array_equal(
        got.view(np.int64)[~np.isnan(got)], np.array(expected).view(np.int64)[~np.isnan(got)]
    )
    assert np.isnan(got).sum() == np.isnan(values).sum()
