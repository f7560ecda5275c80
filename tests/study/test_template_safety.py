"""Study files may not reach Python's internals through their templates or instructions.

Judge templates were rendered outside Jinja's sandbox, and instructions went
through ``str.format``, which follows attributes: both are refused when the
study file is loaded, naming the file and the key, and rendered safely if an
older stored study holds one.
"""

from __future__ import annotations

import os

import pytest

from annotator.judge.prompts import prompt_template, render_prompt
from annotator.study.placeholders import fill_bounds
from annotator.study.studyfile import StudyFileError, parse_study_file
from tests.data.studies import VALID_STUDY

SHELL = "{{ cycler.__init__.__globals__.os.popen('id').read() }}"
REACHES = [
    SHELL,
    "{{ text.__class__.__mro__ }}",
    "{{ text['__class__'] }}",
    "{{ text|attr('__class__') }}",
    "{% for c in ''.__class__.__mro__ %}{{ c }}{% endfor %}",
    "{{ lipsum._private }}",
]


def _toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _refused(text: str) -> list[str]:
    with pytest.raises(StudyFileError) as caught:
        parse_study_file(text, path="study.toml")
    assert str(caught.value).startswith("study.toml: ")
    return caught.value.problems


@pytest.mark.parametrize("template", REACHES)
@pytest.mark.parametrize(
    ("key", "line", "where"),
    [
        ("template", 'template = "{{ text }}"', "benchmarks[0].template"),
        ("judge_template", None, "benchmarks[0].judge_template"),
        ("judge_system", None, "benchmarks[0].judge_system"),
        ("judge_template.0-5", None, "benchmarks[0].judge_template"),
    ],
)
def test_templates_reaching_for_private_attributes_are_refused(template, key, line, where):
    if line is not None:
        text = VALID_STUDY.replace(line, f"template = {_toml_string(template)}")
    elif key == "judge_template.0-5":
        text = VALID_STUDY + f'judge_template = {{ "0-5" = {_toml_string(template)} }}\n'
    else:
        text = VALID_STUDY + f"{key} = {_toml_string(template)}\n"
    problems = _refused(text)
    assert len(problems) == 1, problems
    assert problems[0].startswith(where + ": ")
    assert "templates may not use attributes starting with '_'" in problems[0]


@pytest.mark.parametrize(
    "instructions",
    ["{min.__class__.__mro__}", "{min.real}", "{max[0]}", "{min!r}", "{min:>9}", "{0}", "{x}", "{"],
)
def test_instructions_take_min_and_max_only(instructions):
    text = VALID_STUDY.replace('"From {min} to {max}."', _toml_string(instructions))
    problems = _refused(text)
    assert len(problems) == 1
    assert problems[0].startswith("benchmarks[0].instructions: instructions may use only")


def test_plain_instructions_and_templates_still_load():
    text = VALID_STUDY.replace('"From {min} to {max}."', '"From {min} to {max}, {{literal}}."')
    text += 'judge_template = "{{ text }} on {min} to {max}; {{ instructions }}"\n'
    text += 'judge_system = "You judge {{ benchmark }}."\n'
    spec = parse_study_file(text)
    assert spec.benchmarks[0].instructions == "From {min} to {max}, {{literal}}."


@pytest.mark.parametrize(
    ("text", "filled"),
    [
        ("From {min} to {max}.", "From 1 to 7."),
        ("{{min}} is {min}", "{min} is 1"),
        # A study stored before the check: left as written, never evaluated.
        ("{min.__class__.__mro__} {max}", "{min.__class__.__mro__} 7"),
        ("{0} and {x!r:>3}", "{0} and {x!r:>3}"),
        ("unbalanced {", "unbalanced {"),
    ],
)
def test_fill_bounds(text, filled):
    assert fill_bounds(text, "1", "7") == filled


def test_a_stored_judge_template_renders_in_the_sandbox(monkeypatch):
    """A study stored before the check: the sandbox refuses, nothing runs."""
    ran = []
    monkeypatch.setattr(os, "popen", lambda *args: ran.append(args))
    template = prompt_template(
        "b",
        instructions="From {min.__class__} to {max}",
        item_template="{{ text }}",
        judge_template=SHELL,
    )
    with pytest.raises(ValueError, match="benchmark b: judge_template: .*unsafe"):
        render_prompt(template, {"text": "t"}, low=0, high=5)
    assert ran == []
    fine = prompt_template(
        "b",
        instructions="From {min.__class__} to {max}",
        item_template="{{ text }}",
        judge_template="{{ instructions }}",
    )
    assert render_prompt(fine, {"text": "t"}, low=0, high=5).user == "From {min.__class__} to 5"
