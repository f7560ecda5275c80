"""The pre-study questionnaire built from the study's demographic questions."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from ..study.studyfile import QuestionSpec, question_specs
from .scores import format_number

__all__ = ["read_answers", "self_describe_key", "choice_label", "MAX_TEXT"]

MAX_TEXT = 500


def self_describe_key(question: Mapping[str, Any]) -> str:
    # A separate answer key, so the choice column keeps only the listed
    # choices and the free text sits next to it in the export.
    return _described_key(question["key"])


def _described_key(key: str) -> str:
    return f"{key}_self_described"


# A hyphen between letters reads as a space ("prefer-not-to-say"); one
# between digits is a range ("18-24") and stays.
_WORD_HYPHEN = re.compile(r"(?<=[^\W\d])-(?=[^\W\d])")


def choice_label(question: Mapping[str, Any], choice: str) -> str:
    """What a rater reads for ``choice``: the study file's label, else the key made readable."""
    label = (question.get("labels") or {}).get(choice)
    if label:
        return label
    text = _WORD_HYPHEN.sub(" ", choice)
    return text[:1].upper() + text[1:]


def _number(question: QuestionSpec, text: str) -> tuple[float | int | None, str | None]:
    if not text.isascii():
        # float() also reads other scripts' digits ("٣٤" is 34).
        return None, "Please enter a number with the digits 0-9."
    try:
        value = float(text.replace(",", "."))
    except ValueError:
        return None, "Please enter a number."
    if not math.isfinite(value):
        return None, "Please enter a finite number."
    low, high = question.min, question.max
    if (low is not None and value < low) or (high is not None and value > high):
        if low is not None and high is not None:
            return (
                None,
                f"Please enter a number from {format_number(low)} to {format_number(high)}.",
            )
        if low is not None:
            return None, f"Please enter a number of at least {format_number(low)}."
        return None, f"Please enter a number of at most {format_number(high)}."
    return (int(value) if value.is_integer() else value), None


def read_answers(
    questions: list[Mapping[str, Any]], form: Mapping[str, str]
) -> tuple[dict[str, Any], dict[str, str]]:
    """The answers to store and, per question key, what is wrong with them."""
    answers: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for question in question_specs(questions):
        key = question.key
        text = (form.get(key) or "").strip()
        if not text:
            if question.required:
                errors[key] = (
                    "Please choose an answer."
                    if question.type == "choice"
                    else "Please answer this question."
                )
            continue
        if len(text) > MAX_TEXT:
            errors[key] = f"Please keep the answer under {MAX_TEXT} characters."
            continue
        if question.type == "choice":
            if text not in question.choices:
                errors[key] = "Please choose one of the listed answers."
                continue
            answers[key] = text
            if question.self_describe and text == question.self_describe:
                described = (form.get(_described_key(key)) or "").strip()
                if len(described) > MAX_TEXT:
                    errors[key] = f"Please keep the description under {MAX_TEXT} characters."
                elif described:
                    answers[_described_key(key)] = described
        elif question.type == "number":
            value, problem = _number(question, text)
            if problem:
                errors[key] = problem
            else:
                answers[key] = value
        else:
            answers[key] = text
    return answers, errors
