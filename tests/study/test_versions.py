"""Updating a study: each change a new version, which every rating records."""

from __future__ import annotations

import csv
import io

import pytest
from sqlmodel import select

from annotator.data.exporters import render_export
from annotator.db import session_scope
from annotator.models import AuditEvent, Benchmark, Rating, StudyVersion
from annotator.study.studies import get_study
from tests.conftest import DATA

SMALL = (DATA / "small-study.toml").read_text()


def _update(runner, tmp_path, text: str):
    path = tmp_path / "study.toml"
    path.write_text(text)
    return runner.invoke(args=["study", "update", str(path)])


def _long_rows(app) -> list[dict]:
    with session_scope(app) as session:
        text = render_export(session, get_study(session, "small"), "long").text
    return list(csv.DictReader(io.StringIO(text)))


def test_update_makes_a_new_version_that_new_ratings_record(app, runner, small_study, tmp_path):
    new_consent = SMALL.replace(
        'consent = "You agree to rate a few items."', 'consent = "You agree, version two."'
    )
    new_text = new_consent.replace(
        "Rate how truthful the answer is from {min} to {max}.",
        "Rate how true the answer is, from {min} to {max}.",
    )
    result = _update(runner, tmp_path, new_text)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == (
        "Study 'small' updated to version 2: consent, benchmarks[1].instructions changed."
    )
    # The same file again changes nothing and makes no version.
    again = _update(runner, tmp_path, new_text)
    assert again.exit_code == 0 and "unchanged (version 2)" in again.output

    with session_scope(app) as session:
        study = get_study(session, "small")
        assert study.version == 2 and study.consent == "You agree, version two."
        bench = session.exec(select(Benchmark).where(Benchmark.name == "truthfulqa")).one()
        assert bench.instructions.startswith("Rate how true")
        versions = session.exec(
            select(StudyVersion)
            .where(StudyVersion.study_id == study.id)
            .order_by(StudyVersion.version)
        ).all()
        assert [(v.version, v.changes) for v in versions] == [
            (1, []),
            (2, ["consent", "benchmarks[1].instructions"]),
        ]
        assert versions[0].source_toml == SMALL and versions[1].source_toml == new_text
        event = session.exec(select(AuditEvent).where(AuditEvent.action == "study-updated")).one()
        assert event.details == {"version": 2, "changes": ["consent", "benchmarks[1].instructions"]}

    # Ratings given before the update keep version 1; a rating imported now gets 2.
    path = tmp_path / "new.csv"
    path.write_text("item_id,rater,scale,score\ns2,cy,0-5,1.5\n")
    assert runner.invoke(args=["ratings", "import", "small", str(path)]).exit_code == 0
    versions_by_row = {
        (r["rater"], r["item_id"], r["scale"]): r["study_version"]
        for r in _long_rows(app)
        if r["kind"] == "human"
    }
    assert versions_by_row.pop(("cy", "s2", "0-5")) == "2"
    assert set(versions_by_row.values()) == {"1"}
    assert len(versions_by_row) == 12


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("max = 5\n", "max = 10\n", "scales[0].max: 5 cannot change to 10"),
        ("step = 0.01", "step = 0.5", "scales[0].step: 0.01 cannot change to 0.5"),
        ('name = "0-100"', 'name = "0-99"', "scales: the scales are 0-5, 0-100 in this order"),
        ('name = "truthfulqa"', 'name = "truthful"', "benchmarks: 'truthfulqa' is missing"),
        (
            "Answer: {{ answer }}",
            "Answer: {{ answer }} ({{ source }})",
            "benchmarks[1].template: uses field source that item 't1' does not have",
        ),
        ('slug = "small"', 'slug = "other"', "no study with slug 'other'"),
    ],
)
def test_what_stored_data_refers_to_cannot_change(
    app, runner, small_study, tmp_path, old, new, message
):
    assert old in SMALL
    text = SMALL.replace(old, new, 1).replace("a few items", "many items")
    result = _update(runner, tmp_path, text)
    assert result.exit_code == 1
    assert message in result.output
    with session_scope(app) as session:
        study = get_study(session, "small")
        # Nothing was written: not even the consent that could have changed.
        assert study.version == 1 and study.consent == "You agree to rate a few items."
        assert len(session.exec(select(StudyVersion)).all()) == 1


def test_a_new_benchmark_and_a_new_template_with_known_fields(app, runner, small_study, tmp_path):
    text = SMALL.replace("Answer: {{ answer }}", "A: {{ answer }} Q: {{ question }}") + (
        '\n[[benchmarks]]\nname = "summeval"\ninstructions = "Rate {min}-{max}."\n'
        'template = "{{ summary }}"\n'
    )
    result = _update(runner, tmp_path, text)
    assert result.exit_code == 0, result.output
    assert "benchmarks[1].template, benchmarks[2] (new: summeval)" in result.output
    with session_scope(app) as session:
        names = session.exec(select(Benchmark.name).order_by(Benchmark.position)).all()
    assert names == ["sts-b", "truthfulqa", "summeval"]


def test_withdrawn_ratings_setting_can_be_updated(app, runner, small_study, tmp_path):
    text = SMALL.replace("consent =", 'withdrawn_ratings = "delete"\nconsent =')
    result = _update(runner, tmp_path, text)
    assert result.exit_code == 0 and "withdrawn_ratings" in result.output
    with session_scope(app) as session:
        assert get_study(session, "small").withdrawn_ratings == "delete"
        assert {r for r in session.exec(select(Rating.study_version))} == {1}
