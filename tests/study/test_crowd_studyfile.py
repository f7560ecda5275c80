"""The ``[crowd]`` table and ``screen_out_after`` of a study file."""

import pytest

from annotator.study.studyfile import StudyFileError, parse_study_file
from tests.data.studies import VALID_STUDY
from tests.documentation import first_block, section

THREE_SCALES = "".join(f'[[scales]]\nname = "s{i}"\nmin = 0\nmax = 5\nstep = 1\n' for i in range(3))


def test_platform_defaults():
    prolific = parse_study_file(VALID_STUDY + '[crowd]\nplatform = "prolific"\n').crowd
    assert (prolific.id_param, prolific.study_param, prolific.session_param) == (
        "PROLIFIC_PID",
        "STUDY_ID",
        "SESSION_ID",
    )
    assert prolific.completion_url == "https://app.prolific.com/submissions/complete?cc={code}"
    mturk = parse_study_file(VALID_STUDY + '[crowd]\nplatform = "mturk"\n').crowd
    assert (mturk.id_param, mturk.study_param, mturk.session_param) == (
        "workerId",
        "hitId",
        "assignmentId",
    )
    assert mturk.completion_url is None
    generic = parse_study_file(
        VALID_STUDY + '[crowd]\nplatform = "generic"\nid_param = "pid"\n'
    ).crowd
    assert (generic.id_param, generic.study_param, generic.completion_url) == ("pid", None, None)
    assert parse_study_file(VALID_STUDY).crowd is None


@pytest.mark.parametrize(
    ("crowd", "expected"),
    [
        ('platform = "generic"', "crowd: id_param is required for platform 'generic'"),
        ('platform = "zooniverse"', "crowd.platform: Input should be 'prolific', 'mturk'"),
        ('platform = "prolific"\nmax_raters = 0', "crowd.max_raters: Input should be greater"),
        ('platform = "prolific"\nid_param = "PID here"', "crowd.id_param: String should match"),
        (
            'platform = "generic"\nid_param = "pid"\ncompletion_url = "https://x.example/done"',
            "crowd: completion_url must contain {code}",
        ),
        (
            'platform = "prolific"\ncompletion_url = "javascript:alert({code})"',
            "crowd: completion_url must start with https://",
        ),
        (
            'platform = "prolific"\n[crowd.completion_codes]\nwaves = ["A", "B"]',
            "crowd.completion_codes.waves: 2 codes for 1 block",
        ),
        (
            'platform = "prolific"\n[crowd.completion_codes]\nscreen_out = ""',
            "crowd.completion_codes.screen_out: String should have at least 1 character",
        ),
    ],
)
def test_crowd_problems_name_their_key(crowd, expected):
    with pytest.raises(StudyFileError) as caught:
        parse_study_file(VALID_STUDY + "[crowd]\n" + crowd + "\n")
    assert any(p.startswith(expected) or expected in p for p in caught.value.problems), (
        caught.value.problems
    )


def test_screen_out_after_must_be_positive():
    spec = parse_study_file(
        VALID_STUDY + "[attention_checks]\nper_session = 1\nscreen_out_after = 2\n"
    )
    assert spec.attention_checks.screen_out_after == 2
    with pytest.raises(StudyFileError) as caught:
        parse_study_file(VALID_STUDY + "[attention_checks]\nscreen_out_after = 0\n")
    assert caught.value.problems[0].startswith("attention_checks.screen_out_after:")


def test_the_guide_example_is_valid():
    example = first_block(section("Running on Prolific (and MTurk)"), "toml")
    head = VALID_STUDY.split("[[scales]]", 1)[0]
    benchmarks = "[[benchmarks]]" + VALID_STUDY.split("[[benchmarks]]", 1)[1]
    spec = parse_study_file(head + THREE_SCALES + benchmarks + example)
    assert spec.crowd.max_raters == 60
    assert spec.crowd.completion_codes.waves == ["C1A2B3", "C4D5E6", "C7F8G9"]
    assert spec.attention_checks.screen_out_after == 2
