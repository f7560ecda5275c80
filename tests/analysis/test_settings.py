"""The study file's [validation] table and the analysis settings made from it."""

from __future__ import annotations

import pytest

from annotator.analysis.settings import AnalysisSettings, study_settings
from annotator.models import Study
from annotator.study.studyfile import StudyFileError, parse_study_file, validation_settings

BASE = """
name = "S"
slug = "s"
consent = "ok"
[[scales]]
name = "0-5"
min = 0
max = 5
[[benchmarks]]
name = "b"
instructions = "Rate from {min} to {max}."
template = "{{ text }}"
"""


def test_defaults_without_a_validation_table():
    spec = parse_study_file(BASE).validation
    assert (spec.epsilon, spec.scoring, spec.q, spec.temperature) == (0.2, "neg_rmse", 0.05, None)
    assert validation_settings("") == spec


def test_validation_table_is_read_back_from_the_stored_file():
    text = BASE + '[validation]\nepsilon = 0.1\nscoring = "accuracy"\nq = 0.1\ntemperature = 0.7\n'
    assert parse_study_file(text).validation.epsilon == 0.1
    settings = study_settings(Study(slug="s", name="S", source_toml=text), n_resamples=50)
    assert (settings.epsilon, settings.scoring, settings.q, settings.temperature) == (
        0.1,
        "accuracy",
        0.1,
        0.7,
    )
    assert settings.n_resamples == 50


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ("epsilon = 2", "validation.epsilon"),
        ('scoring = "rmse"', "validation.scoring"),
        ("q = 0", "validation.q"),
        ("temperature = -1", "validation.temperature"),
        ("margin = 0.1", "validation.margin"),
    ],
)
def test_bad_validation_values_name_the_key(table, problem):
    with pytest.raises(StudyFileError) as caught:
        parse_study_file(BASE + "[validation]\n" + table + "\n")
    assert any(p.startswith(problem) for p in caught.value.problems)
    with pytest.raises(StudyFileError) as caught:
        validation_settings(BASE + "[validation]\n" + table + "\n")
    assert any(p.startswith(problem) for p in caught.value.problems)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"runs": "average"}, "runs"),
        ({"confidence": 1.5}, "confidence"),
        ({"n_resamples": 0}, "n_resamples"),
    ],
)
def test_settings_reject_bad_options(options, message):
    with pytest.raises(ValueError, match=message):
        AnalysisSettings(**options)


def test_settings_are_hashable_whatever_sequence_the_epsilons_come_in():
    settings = AnalysisSettings(epsilons=[0.1, 0.2])
    assert settings.epsilons == (0.1, 0.2)
    assert hash(settings) == hash(AnalysisSettings(epsilons=(0.1, 0.2)))
