"""Validation of study files: every problem with its key path."""

import pytest

from annotator.study.studyfile import DEFAULT_DEMOGRAPHICS, StudyFileError, parse_study_file
from tests.data.studies import VALID_STUDY


def test_defaults():
    spec = parse_study_file(VALID_STUDY)
    assert spec.session_gap_days == 7
    assert spec.scale_order == "balanced"
    assert [q.key for q in spec.demographics] == [q["key"] for q in DEFAULT_DEMOGRAPHICS]
    gender = spec.demographics[0]
    assert gender.key == "gender"
    assert gender.choices == ["female", "male", "non-binary", "self-describe", "prefer-not-to-say"]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (('slug = "s"', 'slug = "Not A Slug"'), "slug: String should match pattern"),
        (("min = 0", "min = 9"), "scales[0]: min (9) must be below max (5)"),
        (("step = 0.1", "step = 0.3"), "scales[0]: step 0.3 does not divide the range 0 to 5"),
        (("step = 0.1", "step = 0"), "scales[0].step: Input should be greater than 0"),
        (("max = 5", "max = inf"), "scales[0]: max must be a finite number"),
        (
            ('name = "0-5"', 'name = "0-5"\ncolour = "red"'),
            "scales[0].colour: Extra inputs are not permitted",
        ),
        (
            ("{min} to {max}", "{low} to {max}"),
            "benchmarks[0].instructions: instructions may use only",
        ),
        (("{{ text }}", "{{ text "), "benchmarks[0].template: template line 1"),
        (('consent = "ok"', ""), "consent: Field required"),
        (
            ('slug = "s"', 'slug = "s"\nscale_order = "sorted"'),
            "scale_order: Input should be 'balanced' or 'random'",
        ),
        (
            ('slug = "s"', 'slug = "s"\nsession_gap_days = -1'),
            "session_gap_days: Input should be greater than or equal to 0",
        ),
        (
            ('slug = "s"', 'slug = "s"\ncompletion_url = "ftp://x"'),
            "completion_url must start with https://",
        ),
        (
            ('name = "S"', 'name = "S"\n[test_retest]\nshare = 2'),
            "test_retest.share: Input should be less than or equal to 1",
        ),
        (("[[benchmarks]]", "x = = 1\n[[benchmarks]]"), "not valid TOML"),
    ],
)
def test_problems_are_reported_with_their_key_path(change, expected):
    old, new = change
    text = VALID_STUDY.replace(old, new, 1)
    if "[test_retest]" in new:
        text = VALID_STUDY + "[test_retest]\nshare = 2\n"
    with pytest.raises(StudyFileError) as caught:
        parse_study_file(text, path="study.toml")
    assert expected in str(caught.value)
    assert str(caught.value).startswith("study.toml: ")


def test_several_problems_are_reported_at_once():
    text = VALID_STUDY.replace("min = 0", "min = 9").replace("{{ text }}", "{% if %}")
    with pytest.raises(StudyFileError) as caught:
        parse_study_file(text, path="study.toml")
    problems = caught.value.problems
    assert len(problems) == 2
    assert problems[0].startswith("scales[0]: min (9) must be below max (5)")
    assert problems[1].startswith("benchmarks[0].template: template line 1")
    assert str(caught.value).startswith("study.toml: 2 problems")


def test_duplicate_benchmark_names_are_refused():
    text = VALID_STUDY + '[[benchmarks]]\nname = "b"\ninstructions = "x"\ntemplate = "y"\n'
    with pytest.raises(StudyFileError) as caught:
        parse_study_file(text)
    assert "benchmarks: the name 'b' appears twice" in str(caught.value)


@pytest.mark.parametrize("key", ["temperature", "source", "served_at", "study_version"])
def test_a_demographic_key_may_not_be_a_long_export_column(key):
    # The answers become columns of the long export beside its own.
    text = VALID_STUDY + f'[[demographics]]\nkey = "{key}"\nlabel = "x"\ntype = "text"\n'
    with pytest.raises(StudyFileError) as caught:
        parse_study_file(text)
    assert f"demographics[0]: key {key!r} is reserved" in str(caught.value)


def test_demographic_questions_are_checked():
    text = VALID_STUDY + '[[demographics]]\nkey = "rater"\nlabel = "x"\ntype = "text"\n'
    text += '[[demographics]]\nkey = "g"\nlabel = "G"\nchoices = ["a"]\n'
    with pytest.raises(StudyFileError) as caught:
        parse_study_file(text)
    message = str(caught.value)
    assert "demographics[0]: key 'rater' is reserved" in message
    assert "demographics[1]: a choice question needs at least two choices" in message


QUESTION = """
[[demographics]]
key = "english"
label = "English"
choices = ["native", "fluent", "prefer-not-to-say"]
"""


def test_choice_labels_are_read():
    spec = parse_study_file(
        VALID_STUDY
        + QUESTION
        + 'labels = { native = "Native speaker", "prefer-not-to-say" = "Rather not" }'
    )
    assert spec.demographics[0].labels == {
        "native": "Native speaker",
        "prefer-not-to-say": "Rather not",
    }
    assert parse_study_file(VALID_STUDY + QUESTION).demographics[0].labels == {}


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        (
            'labels = { natve = "Native speaker" }',
            "demographics[0]: labels 'natve' not among the choices "
            "('native', 'fluent', 'prefer-not-to-say')",
        ),
        ('labels = { native = "" }', "demographics[0].labels.native: String should have at least"),
        ('labels = ["Native"]', "demographics[0].labels: Input should be a valid dictionary"),
    ],
)
def test_bad_choice_labels_are_reported(labels, expected):
    with pytest.raises(StudyFileError) as info:
        parse_study_file(VALID_STUDY + QUESTION + labels)
    assert any(p.startswith(expected) for p in info.value.problems), info.value.problems
