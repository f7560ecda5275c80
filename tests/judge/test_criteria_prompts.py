"""Prompts and replies of a rubric study's judge (GER-Eval's rubric application)."""

from __future__ import annotations

import pytest

from annotator.judge.parsing import ReplyError, parse_criteria_reply
from annotator.judge.prompts import prompt_template, render_prompt

STS = {
    "instructions": "Rate the two sentences from {min} to {max}.",
    "item_template": "Sentence 1: {{ sentence1 }}\nSentence 2: {{ sentence2 }}",
}
FIELDS = {"sentence1": "A cat.", "sentence2": "Two pets."}
FLUENCY = ("fluency", "Is the text well written?")
COHERENCE = ("coherence", "Does it hang together?")


def test_a_criterions_prompt_names_it_and_gives_its_definition():
    prompt = render_prompt(
        prompt_template("sts-b", **STS, criteria=(FLUENCY,)), FIELDS, low=0, high=5
    )
    # Written out by hand: the paper's template with the criterion between task and item.
    assert prompt.user == (
        "Rate the two sentences from 0 to 5.\n\n"
        "Criterion: fluency\nIs the text well written?\n\n"
        "Sentence 1: A cat.\nSentence 2: Two pets.\n\n"
        "Rate the response on the criterion fluency alone. "
        'Please provide only a single number as your response ("0"\u2013"5"). '
        "Do not include any explanation or additional text."
    )
    assert prompt.criteria == ("fluency",)


def test_all_criteria_in_one_prompt_ask_for_a_json_object():
    template = prompt_template("sts-b", **STS, criteria=(FLUENCY, COHERENCE))
    prompt = render_prompt(template, FIELDS, low=1, high=5)
    assert (
        "Criteria:\n- fluency: Is the text well written?\n- coherence: Does it hang together?\n"
        in (prompt.user)
    )
    assert (
        'with the keys "fluency", "coherence", each a single number ("1"\u2013"5")' in prompt.user
    )
    assert prompt.criteria == ("fluency", "coherence")


def test_a_criterion_and_its_definition_are_part_of_the_prompt_version():
    plain = prompt_template("sts-b", **STS)
    assert prompt_template("sts-b", **STS, criteria=()).hash == plain.hash
    hashes = {
        plain.hash,
        prompt_template("sts-b", **STS, criteria=(FLUENCY,)).hash,
        prompt_template("sts-b", **STS, criteria=(COHERENCE,)).hash,
        prompt_template("sts-b", **STS, criteria=(("fluency", "Reads well?"),)).hash,
        prompt_template("sts-b", **STS, criteria=(FLUENCY, COHERENCE)).hash,
    }
    assert len(hashes) == 5
    # A study's own template sees the criterion too.
    own = prompt_template(
        "sts-b", **STS, criteria=(FLUENCY,), judge_template="{{ criterion }}: {{ definition }}"
    )
    assert render_prompt(own, FIELDS, low=0, high=5).user == "fluency: Is the text well written?"


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"fluency": 4, "coherence": 2.5}', {"fluency": "4", "coherence": "2.5"}),
        ('```json\n{" Fluency ": "3", "COHERENCE": 1}\n```', {"fluency": "3", "coherence": "1"}),
        (
            '{"fluency": {"score": 5, "reason": "fine"}, "coherence": 0}',
            {"fluency": "5", "coherence": "0"},
        ),
        ('{"fluency": 4}', {"fluency": "4", "coherence": "no score for criterion 'coherence'"}),
        (
            '{"fluency": true, "coherence": "high"}',
            {"fluency": "True is not a number", "coherence": "'high' is not a number"},
        ),
        ("4 and 3", {"fluency": "no JSON object", "coherence": "no JSON object"}),
        ("", {"fluency": "empty", "coherence": "empty"}),
    ],
)
def test_a_reply_of_several_criteria_is_read_criterion_by_criterion(reply, expected):
    found = parse_criteria_reply(reply, ("fluency", "coherence"))
    assert set(found) == {"fluency", "coherence"}
    for name, want in expected.items():
        if isinstance(found[name], ReplyError):
            assert want in str(found[name])
        else:
            assert found[name] == want
