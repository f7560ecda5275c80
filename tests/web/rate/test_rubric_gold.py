"""Attention checks of a rubric study: a gold share per criterion
(``gold_score.CRITERION`` in the items file), else the item's ``gold_score``."""

from __future__ import annotations

import csv
import io
import json

import pytest
from sqlmodel import Session

from annotator.collect.crowd import failed_checks
from annotator.data.exporters import render_export
from annotator.data.frames import study_frames
from annotator.data.importers import import_items
from annotator.db import get_engine, session_scope
from annotator.models import User
from annotator.study.studies import create_study, get_study
from annotator.study.studyfile import parse_study_file
from tests.data.studies import CRITERIA_TOML, STS_B_TOML, study_toml

from .conftest import blocks_of, item_url, join, start

ONE_SCALE = '\n[[scales]]\nname = "0-5"\nmin = 0\nmax = 5\nstep = 0.5\n'
TOML = study_toml(
    scales=ONE_SCALE,
    benchmarks=STS_B_TOML + CRITERIA_TOML,
    extra="[attention_checks]\nper_session = 1\n",
)
ITEMS = [
    {"item_id": f"s{i}", "benchmark": "sts-b", "sentence1": f"One {i}.", "sentence2": f"Two {i}."}
    for i in range(1, 4)
] + [
    {
        "item_id": "gold1",
        "benchmark": "sts-b",
        "sentence1": "Give the top score, but the lowest on coherence.",
        "sentence2": "This is an attention check.",
        "gold_score": 1.0,
        "gold_tolerance": 0.05,
        "gold_score.coherence": 0.0,
    }
]


@pytest.fixture
def rubric_study(app, tmp_path) -> str:
    path = tmp_path / "items.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in ITEMS) + "\n", "utf-8")
    with session_scope(app) as session:
        import_items(session, create_study(session, parse_study_file(TOML)), path)
    return "rt"


@pytest.mark.parametrize(
    ("coherence", "passed", "failed"),
    [("0", [True, True, True], 0), ("5", [True, False, True], 1)],
)
def test_a_check_has_a_gold_share_per_criterion(
    app, client, rubric_study, coherence, passed, failed
):
    user_id = join(app, client, rubric_study)
    block = blocks_of(app, user_id)[0]
    assert start(client, block.id).status_code == 302
    for position in range(1, len(blocks_of(app, user_id)[0].item_order) + 1):
        html = client.get(item_url(block.id, position)).text
        check = "attention check" in html
        form = {"score:fluency": "5", "score:relevance": "5"}
        form["score:coherence"] = coherence if check else "2"
        assert client.post(item_url(block.id, position), data=form).status_code == 302
    with Session(get_engine(app)) as session:
        study = get_study(session, rubric_study)
        ratings = study_frames(session, study).ratings
        checks = ratings[ratings["is_attention_check"]].set_index("criterion")
        assert [
            checks.loc[c, "attention_passed"] for c in ["fluency", "coherence", "relevance"]
        ] == (passed)
        long = render_export(session, study, "long").text
        assert failed_checks(session, session.get(User, user_id)) == failed
    rows = [r for r in csv.DictReader(io.StringIO(long)) if r["is_attention_check"] == "True"]
    assert {r["criterion"]: r["attention_passed"] == "True" for r in rows} == dict(
        zip(["fluency", "coherence", "relevance"], passed, strict=True)
    )


def test_a_gold_column_of_an_unknown_criterion_is_refused(app, tmp_path):
    path = tmp_path / "items.jsonl"
    bad = dict(ITEMS[-1], **{"gold_score.tone": 0.5})
    path.write_text(json.dumps(bad) + "\n", "utf-8")
    with session_scope(app) as session:
        study = create_study(session, parse_study_file(TOML))
        with pytest.raises(ValueError) as error:
            import_items(session, study, path)
    assert (
        "line 1, column 'gold_score.tone': unknown criterion 'tone' "
        "(known: fluency, coherence, relevance)" in str(error.value)
    )
