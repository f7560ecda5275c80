"""Reading a platform's entry URL and building the way back (no database)."""

import pytest

from annotator.collect.crowd import (
    BadEntry,
    Entry,
    completion_link,
    is_preview,
    mturk_submit_url,
    read_entry,
    wave_code,
)
from annotator.study.studyfile import CrowdSpec

PROLIFIC = CrowdSpec(platform="prolific")
MTURK = CrowdSpec(platform="mturk")
GENERIC = CrowdSpec(platform="generic", id_param="pid", session_param="visit")
PID = "5f1a2b3c4d5e6f708192a3b4"


def test_prolific_entry_reads_the_three_parameters():
    entry = read_entry(PROLIFIC, {"PROLIFIC_PID": f" {PID} ", "STUDY_ID": "S1", "SESSION_ID": "X"})
    assert entry == Entry(participant=PID, platform_study="S1", platform_session="X")
    # The study and session are optional: a lead may leave them out of the URL.
    assert read_entry(PROLIFIC, {"PROLIFIC_PID": PID}) == Entry(participant=PID)


@pytest.mark.parametrize(
    ("spec", "args", "message"),
    [
        (PROLIFIC, {}, "has no PROLIFIC_PID parameter"),
        (PROLIFIC, {"PROLIFIC_PID": ""}, "is empty"),
        (PROLIFIC, {"PROLIFIC_PID": "é" * 24}, "malformed"),
        (GENERIC, {"pid": "x" * 65}, "pid parameter is malformed"),
        (GENERIC, {"pid": "ok", "visit": "<script>"}, "visit parameter is malformed"),
        (MTURK, {"workerId": "A1B2C3D4E5", "hitId": "H"}, "no assignmentId"),
        (
            MTURK,
            {"workerId": "A1B2C3D4E5", "hitId": "H", "assignmentId": "A"},
            "turkSubmitTo parameter must be",
        ),
    ],
)
def test_bad_entries_say_which_parameter(spec, args, message):
    with pytest.raises(BadEntry, match=message) as caught:
        read_entry(spec, args)
    for value in args.values():
        if len(value) > 3:
            assert value not in str(caught.value)


def test_generic_ids_allow_dots_hyphens_underscores():
    assert read_entry(GENERIC, {"pid": "a.b-c_9", "visit": "v1"}).platform_session == "v1"


def test_mturk_entry_and_preview():
    args = {
        "workerId": "A1B2C3D4E5",
        "hitId": "H1",
        "assignmentId": "A1",
        "turkSubmitTo": "https://www.mturk.com/",
    }
    entry = read_entry(MTURK, args)
    assert (entry.platform_study, entry.platform_session) == ("H1", "A1")
    assert mturk_submit_url(entry.submit_to) == "https://www.mturk.com/mturk/externalSubmit"
    assert mturk_submit_url("https://www.mturk.com.evil.example") is None
    assert is_preview(MTURK, {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE"})
    assert not is_preview(PROLIFIC, {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE"})


def test_completion_links_quote_the_code():
    spec = CrowdSpec(
        platform="prolific", completion_codes={"waves": ["A B&C", "D"], "screen_out": "S"}
    )
    assert wave_code(spec, 1) == "A B&C" and wave_code(spec, 3) is None
    assert (
        completion_link(spec, "A B&C")
        == "https://app.prolific.com/submissions/complete?cc=A%20B%26C"
    )
    assert completion_link(spec, None) is None
    assert completion_link(GENERIC, "X") is None
