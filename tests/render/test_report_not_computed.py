"""The report's "Not computed, and why" list (render.report.omitted.not_computed): one
entry per reason, each naming every place it holds for, none dropped."""

from __future__ import annotations

import pytest

from annotator.render.report.omitted import Left, not_computed

WHY = "group 'non-binary' has 1 rater; within-group ICC needs 2"


def test_scales_that_start_alike_are_each_named():
    # The demo study's three scales: "scale 0-100" begins with "scale 0-10".
    notes = [f"Table 5, scale {s}: {WHY}" for s in ("0-5", "0-10", "0-100")]
    (entry,) = not_computed(notes, [])
    assert entry.why == WHY
    assert entry.items == [f"Table 5, scale {s}" for s in ("0-5", "0-10", "0-100")]


@pytest.mark.parametrize(
    ("bare", "named", "said_once"),
    [
        ("Table 5", "Table 5: agreement by demographic group", True),
        ("Table 5", "Table 5, scale 0-5", True),
        ("Table 5", "Table 50: something else", False),
        ("scale 0-10", "scale 0-100", False),
        ("alt-test", "alt-test.curves", False),
    ],
)
def test_a_bare_subject_beside_the_section_it_names_is_said_once(bare, named, said_once):
    (entry,) = not_computed([f"{bare}: {WHY}"], [Left(named, WHY, "")])
    assert entry.items == ([named] if said_once else [bare, named])


def test_criteria_are_gathered_under_their_subject():
    notes = [f"criterion {c}: alt-test, scale 1-5, model judge-a: {WHY}" for c in "ab"]
    notes.append(f"alt-test, criterion c, scale 1-5, model judge-b: {WHY}")
    (entry,) = not_computed(notes, [])
    assert entry.items == [
        "alt-test, scale 1-5, model judge-a (criteria a, b)",
        "alt-test, scale 1-5, model judge-b (criterion c)",
    ]
