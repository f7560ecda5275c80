"""The study file's ``[validation] stop_when_decided`` and ``judges``."""

from __future__ import annotations

import pytest

from annotator.study.studyfile import StudyFileError, parse_study_file, validation_settings
from tests.data.studies import study_toml


def test_stop_when_decided_names_its_judges():
    spec = parse_study_file(
        study_toml(extra='[validation]\nstop_when_decided = true\njudges = ["gpt", "llama"]\n')
    )
    assert spec.validation.stop_when_decided and spec.validation.judges == ["gpt", "llama"]
    assert not validation_settings("").stop_when_decided


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ("stop_when_decided = true", "validation: judges: name the judges (LLM score models)"),
        ('stop_when_decided = true\njudges = ["a", "a"]', "validation: judges: a judge is named"),
        ('judges = [""]', "validation.judges[0]: String should have at least 1 character"),
        ('stop_when_decided = "maybe"', "validation.stop_when_decided: Input should be a valid"),
    ],
)
def test_bad_stop_settings_are_refused_with_the_key(table, problem):
    with pytest.raises(StudyFileError) as caught:
        parse_study_file(study_toml(extra=f"[validation]\n{table}\n"), path="s.toml")
    assert problem in str(caught.value)
