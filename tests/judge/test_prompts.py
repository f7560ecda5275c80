"""The judge's prompt: the paper's standardized template by default, the study file's otherwise."""

from __future__ import annotations

import pytest

from annotator.judge.prompts import prompt_template, render_prompt
from annotator.study.studyfile import StudyFileError, judge_settings, parse_study_file
from tests.conftest import DATA

STS = {
    "instructions": "Rate the semantic similarity of the two sentences from {min} to {max}.",
    "item_template": "Sentence 1: {{ sentence1 }}\nSentence 2: {{ sentence2 }}",
}
FIELDS = {"sentence1": "A cat & a <dog>.", "sentence2": "Two pets."}


def test_the_default_prompt_is_the_papers_template_with_the_raters_text():
    template = prompt_template("sts-b", **STS)
    prompt = render_prompt(template, FIELDS, low=0, high=5)
    # Written out by hand from the paper's Appendix C (Table 8's system
    # message and closing instruction), with the study's instructions and item.
    assert prompt.system == "You are an expert in sts-b evaluation."
    assert prompt.user == (
        "Rate the semantic similarity of the two sentences from 0 to 5.\n\n"
        "Sentence 1: A cat & a <dog>.\nSentence 2: Two pets.\n\n"
        'Please provide only a single number as your response ("0"\u2013"5"). '
        "Do not include any explanation or additional text."
    )
    assert prompt.messages() == [
        {"role": "system", "content": prompt.system},
        {"role": "user", "content": prompt.user},
    ]
    assert '("0"\u2013"100")' in render_prompt(template, FIELDS, low=0, high=100).user
    assert "from 0.5 to 2.5" in render_prompt(template, FIELDS, low=0.5, high=2.5).user


def test_a_judge_template_of_the_study_file_uses_fields_and_bounds():
    template = prompt_template(
        "sts-b",
        **STS,
        judge_template='Compare "{{ sentence1 }}" with "{{ sentence2 }}" on {min}-{{ max }}.',
        judge_system="You grade sentence pairs from {min} to {max}.",
    )
    prompt = render_prompt(template, FIELDS, low=0, high=10)
    assert prompt.user == 'Compare "A cat & a <dog>." with "Two pets." on 0-10.'
    assert prompt.system == "You grade sentence pairs from 0 to 10."


@pytest.mark.parametrize(
    "change",
    [
        {"judge_template": "Rate {{ sentence1 }} ({min}-{max})."},
        {"judge_system": "You are a strict grader."},
        {"instructions": "Rate the similarity from {min} to {max}, carefully."},
        {"item_template": "S1: {{ sentence1 }}\nS2: {{ sentence2 }}"},
    ],
)
def test_any_change_of_wording_is_a_new_version(change):
    base = prompt_template("sts-b", **STS)
    changed = prompt_template("sts-b", **{**STS, **change})
    assert changed.hash != base.hash and len(changed.hash) == 64


def test_the_version_does_not_depend_on_the_item_or_the_scale():
    template = prompt_template("sts-b", **STS)
    assert prompt_template("sts-b", **STS).hash == template.hash
    hashes = {
        render_prompt(template, fields, low=0, high=high).hash
        for fields in (FIELDS, {"sentence1": "x", "sentence2": "y"})
        for high in (5, 100)
    }
    assert hashes == {template.hash}


def test_a_template_using_an_unknown_field_names_the_benchmark():
    template = prompt_template("sts-b", **STS, judge_template="{{ sentence3 }}")
    with pytest.raises(
        ValueError, match="benchmark sts-b: judge_template: 'sentence3' is undefined"
    ):
        render_prompt(template, FIELDS, low=0, high=5)


def test_the_study_file_takes_judge_templates_and_checks_them():
    text = (DATA / "small-study.toml").read_text()
    good = text.replace(
        'name = "sts-b"\n', 'name = "sts-b"\njudge_template = "{{ sentence1 }} {min}"\n'
    )
    specs = judge_settings(good)
    assert specs["sts-b"].judge_template == "{{ sentence1 }} {min}"
    assert specs["truthfulqa"].judge_template is None
    bad = text.replace('name = "sts-b"\n', 'name = "sts-b"\njudge_template = "{{ oops"\n')
    with pytest.raises(StudyFileError) as caught:
        parse_study_file(bad)
    assert any(
        p.startswith("benchmarks[0].judge_template: template line 1") for p in caught.value.problems
    )
    assert judge_settings("") == {}


def test_a_judge_template_may_differ_per_scale():
    text = (DATA / "small-study.toml").read_text()
    per_scale = text.replace(
        'name = "sts-b"\n',
        'name = "sts-b"\njudge_template = { "0-5" = "Five-point: {{ sentence1 }}" }\n',
    )
    spec = judge_settings(per_scale)["sts-b"]
    assert spec.judge_template_for("0-5") == "Five-point: {{ sentence1 }}"
    assert spec.judge_template_for("0-100") is None
    unknown = text.replace('name = "sts-b"\n', 'name = "sts-b"\njudge_template = { "0-7" = "x" }\n')
    with pytest.raises(StudyFileError) as caught:
        parse_study_file(unknown)
    assert "benchmark 'sts-b': judge_template names unknown scale '0-7'" in str(caught.value)
    broken = text.replace(
        'name = "sts-b"\n', 'name = "sts-b"\njudge_template = { "0-5" = "{% if %}" }\n'
    )
    with pytest.raises(StudyFileError) as caught:
        parse_study_file(broken)
    assert "benchmarks[0].judge_template: 0-5: template line 1" in str(caught.value)
