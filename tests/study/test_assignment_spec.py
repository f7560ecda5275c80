"""The study file's [assignment] table: crossed by default, overlap with k raters per item."""

import pytest

from annotator.study.studyfile import (
    AssignmentSpec,
    StudyFileError,
    assignment_settings,
    parse_study_file,
)
from tests.data.studies import VALID_STUDY
from tests.documentation import first_block, section


def test_a_study_without_the_table_is_crossed():
    assert parse_study_file(VALID_STUDY).assignment == AssignmentSpec(design="crossed")
    assert assignment_settings("").design == "crossed"
    assert assignment_settings(VALID_STUDY).design == "crossed"


def test_an_overlap_table_is_read_back_from_the_stored_file():
    text = VALID_STUDY + '[assignment]\ndesign = "overlap"\nraters_per_item = 3\n'
    text += 'anchor_items = ["a", "b"]\nitems_per_rater = 60\n'
    spec = parse_study_file(text).assignment
    assert (spec.raters_per_item, spec.anchor_items, spec.items_per_rater) == (3, ["a", "b"], 60)
    assert assignment_settings(text) == spec


CROWD = '[crowd]\nplatform = "generic"\nid_param = "pid"\n'


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ('design = "mixed"', "assignment.design: Input should be 'crossed' or 'overlap'"),
        ('design = "overlap"\nitems_per_rater = 5', "assignment: raters_per_item: required"),
        (
            'design = "overlap"\nraters_per_item = 1\nitems_per_rater = 5',
            "assignment.raters_per_item: Input should be greater than or equal to 2",
        ),
        ("raters_per_item = 3", 'assignment: raters_per_item: only for design = "overlap"'),
        ("anchor_items = 4", "assignment: anchor_items: only for design"),
        (
            'design = "overlap"\nraters_per_item = 2\nitems_per_rater = 0',
            "assignment.items_per_rater: Input should be greater than or equal to 1",
        ),
        (
            'design = "overlap"\nraters_per_item = 2\nitems_per_rater = 5\nanchor_items = -1',
            "assignment.anchor_items",
        ),
        (
            'design = "overlap"\nraters_per_item = 2\nitems_per_rater = 5\n'
            'anchor_items = ["a", "a"]',
            "assignment: anchor_items: an item id appears twice",
        ),
        ('design = "overlap"\nraters_per_item = 2', "assignment.items_per_rater: required"),
        ("rater_per_item = 2", "assignment.rater_per_item: Extra inputs are not permitted"),
        (
            'design = "overlap"\nraters_per_item = 2\nabandon_after_days = 0\nitems_per_rater = 3',
            "assignment.abandon_after_days: Input should be greater than 0",
        ),
    ],
)
def test_bad_assignment_tables_name_the_key(table, expected):
    with pytest.raises(StudyFileError) as caught:
        parse_study_file(VALID_STUDY + "[assignment]\n" + table + "\n")
    assert any(expected in problem for problem in caught.value.problems), caught.value.problems


def test_items_per_rater_may_come_from_the_crowd_cap():
    table = '[assignment]\ndesign = "overlap"\nraters_per_item = 3\n'
    assert (
        parse_study_file(VALID_STUDY + table + CROWD + "max_raters = 30\n").crowd.max_raters == 30
    )
    with pytest.raises(StudyFileError, match="raters_per_item: 3 raters per item need"):
        parse_study_file(VALID_STUDY + table + CROWD + "max_raters = 2\n")


def test_the_guide_example_is_a_valid_assignment_table():

    table = first_block(section("Overlap designs"), "toml")
    spec = parse_study_file(VALID_STUDY + table).assignment
    assert (spec.design, spec.raters_per_item, spec.anchor_items, spec.items_per_rater) == (
        "overlap",
        3,
        20,
        60,
    )
