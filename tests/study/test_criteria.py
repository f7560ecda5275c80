"""Rubric criteria in the study file, stored with the study, updated, read as frames."""

from __future__ import annotations

import pytest

from annotator.data.frames import study_frames
from annotator.db import session_scope
from annotator.study.criteria import criteria_for, criterion_names, study_criteria
from annotator.study.studies import create_study, get_study
from annotator.study.studyfile import StudyFileError, parse_study_file
from tests.data.studies import CRITERIA_TOML, study_toml


def test_criteria_are_read_in_order_with_their_benchmarks():
    spec = parse_study_file(study_toml(extra="", benchmarks=_benchmarks()))
    assert [c.name for c in spec.criteria] == ["fluency", "coherence", "relevance"]
    assert spec.criteria[0].definition == "Is the text **well written**?"
    assert spec.criteria[0].benchmarks is None
    assert spec.criteria[2].benchmarks == ["sts-b"]


def test_a_study_without_criteria_has_none():
    assert parse_study_file(study_toml()).criteria == []


def _benchmarks(criteria: str = CRITERIA_TOML) -> str:
    from tests.data.studies import BENCHMARKS_TOML

    return BENCHMARKS_TOML + criteria


@pytest.mark.parametrize(
    ("criteria", "expected"),
    [
        (
            '[[criteria]]\nname = "a"\ndefinition = "x"\n[[criteria]]\nname = "a"\n'
            'definition = "y"\n',
            "criteria[1].name: the name 'a' appears twice",
        ),
        (
            '[[criteria]]\nname = "a"\ndefinition = "x"\nbenchmarks = ["sts-b", "mnli"]\n',
            "criteria[0].benchmarks: unknown benchmark 'mnli' (the benchmarks: sts-b, truthfulqa)",
        ),
        (
            '[[criteria]]\nname = "a"\ndefinition = "x"\nbenchmarks = ["sts-b"]\n',
            "criteria: no criterion applies to benchmark 'truthfulqa'",
        ),
        ('[[criteria]]\nname = "a"\n', "criteria.0.definition: Field required"),
        ('[[criteria]]\nname = ""\ndefinition = "x"\n', "criteria.0.name: String should have"),
        ('[[criteria]]\nname = "a"\ndefinition = "x"\nweight = 2\n', "criteria.0.weight"),
    ],
)
def test_bad_criteria_are_reported_with_their_key_path(criteria, expected):
    with pytest.raises(StudyFileError) as error:
        parse_study_file(study_toml(benchmarks=_benchmarks(criteria)))
    assert any(expected.replace("criteria.0", "criteria[0]") in p for p in error.value.problems), (
        error.value.problems
    )


def test_criteria_are_stored_and_read_back(app):
    spec = parse_study_file(study_toml(benchmarks=_benchmarks()))
    with session_scope(app) as session:
        study = create_study(session, spec)
    with session_scope(app) as session:
        study = get_study(session, spec.slug)
        criteria = study_criteria(session, study)
        assert [c.name for c in criteria] == ["fluency", "coherence", "relevance"]
        assert [c.name for c in criteria_for(criteria, "truthfulqa")] == ["fluency", "coherence"]
        assert criterion_names(session, study) == ["fluency", "coherence", "relevance"]
        frames = study_frames(session, study)
    assert frames.has_criteria
    assert frames.criterion_names == ["fluency", "coherence", "relevance"]
    assert frames.criteria_of("truthfulqa") == ["fluency", "coherence"]
    assert list(frames.criteria.columns) == ["criterion", "definition", "benchmarks"]
    assert frames.criteria["benchmarks"].tolist() == [None, None, ["sts-b"]]
    assert "criterion" in frames.ratings.columns and "criterion" in frames.llm.columns


def test_a_study_without_criteria_has_the_unnamed_one(app, small_study):
    with session_scope(app) as session:
        study = get_study(session, small_study)
        assert criterion_names(session, study) == [""]
        frames = study_frames(session, study)
    assert not frames.has_criteria and frames.criteria.empty
    assert frames.criterion_names == [""] and frames.criteria_of("sts-b") == [""]
    assert set(frames.ratings["criterion"]) == {""}


def test_an_update_may_change_definitions_but_not_the_criteria(app, runner, tmp_path):
    text = study_toml(benchmarks=_benchmarks())
    path = tmp_path / "study.toml"
    path.write_text(text)
    assert runner.invoke(args=["study", "create", str(path)]).exit_code == 0
    path.write_text(text.replace("Does it hang together?", "Is it one whole?"))
    result = runner.invoke(args=["study", "update", str(path)])
    assert result.exit_code == 0, result.output
    with session_scope(app) as session:
        criteria = study_criteria(session, get_study(session, "rt"))
        assert criteria[1].definition == "Is it one whole?"
    path.write_text(text.replace('name = "coherence"', 'name = "cohesion"'))
    result = runner.invoke(args=["study", "update", str(path)])
    assert result.exit_code != 0
    assert "criteria: the criteria (fluency, coherence, relevance)" in result.output
    with session_scope(app) as session:
        assert [c.name for c in study_criteria(session, get_study(session, "rt"))][1] == "coherence"
