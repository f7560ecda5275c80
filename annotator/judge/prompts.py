"""The judge's prompt for an item on a scale (and criteria), and the prompt's version (its hash).

A benchmark's prompt comes from the study file (``[[benchmarks]] judge_template``
and ``judge_system``), else from the standardized template below. The hash covers
everything that makes the prompt except the item's fields and the scale's bounds,
so each benchmark's prompt has one version per wording: a score is stored with
the version it was asked under, and a changed wording asks again.

In a study with ``[[criteria]]`` the judge applies the rubric as GER-Eval does
(Siro, Aliannejadi and Aliannejadi, 2025, "Learning to Judge: LLMs Designing and
Applying Evaluation Rubrics", section 3.3): by default one prompt per criterion
with its name and definition; with ``judge_criteria = "together"`` one prompt for
all of them, answered by a JSON object of scores. The criteria's names and
definitions are part of the hash, so a changed definition asks again; a study
without criteria keeps its prompts and their hashes.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from ..collect.scores import format_number
from ..study.placeholders import fill_bounds

__all__ = [
    "CRITERIA_JUDGE_TEMPLATE",
    "CRITERION_JUDGE_TEMPLATE",
    "DEFAULT_JUDGE_SYSTEM",
    "DEFAULT_JUDGE_TEMPLATE",
    "JudgePrompt",
    "PromptTemplate",
    "prompt_template",
    "render_prompt",
]

# The standardized judging template of "Grading Scale Impact on LLM-as-a-Judge"
# (shared/papers/000_*, section 4.1 and the prompts of its Appendix C, Tables
# 8-13): a system message naming the judge's expertise, then the task and its
# criteria on the scale "{min}" to "{max}", the item's inputs, and the paper's
# closing instruction, word for word. Here the task and criteria are the
# benchmark's rater instructions and the inputs its rater template, so the
# judge reads what the raters read.
DEFAULT_JUDGE_SYSTEM = "You are an expert in {{ benchmark }} evaluation."
DEFAULT_JUDGE_TEMPLATE = (
    "{{ instructions }}\n\n"
    "{{ item }}\n\n"
    'Please provide only a single number as your response ("{min}"\u2013"{max}"). '
    "Do not include any explanation or additional text."
)

# One criterion of a rubric: the paper's template with the criterion's name and
# definition (GER-Eval's prompt_eval: the task, the criterion, the output), and the
# same closing instruction.
CRITERION_JUDGE_TEMPLATE = (
    "{{ instructions }}\n\n"
    "Criterion: {{ criterion }}\n{{ definition }}\n\n"
    "{{ item }}\n\n"
    "Rate the response on the criterion {{ criterion }} alone. "
    'Please provide only a single number as your response ("{min}"\u2013"{max}"). '
    "Do not include any explanation or additional text."
)
# Every criterion in one request: the reply is a JSON object of scores by name.
CRITERIA_JUDGE_TEMPLATE = (
    "{{ instructions }}\n\n"
    "Criteria:\n"
    "{% for c in criteria %}- {{ c.name }}: {{ c.definition }}\n{% endfor %}\n"
    "{{ item }}\n\n"
    "Rate the response on each criterion separately. Please provide only a JSON object "
    "with the keys "
    '{% for c in criteria %}"{{ c.name }}"{{ ", " if not loop.last }}{% endfor %}'
    ', each a single number ("{min}"\u2013"{max}"). '
    "Do not include any explanation or additional text."
)

# Plain text for a model: no HTML escaping. Undefined fields fail loudly
# rather than vanish from the prompt.
# Sandboxed, as the rater templates are (annotator.web.display): a study file's
# template must not reach Python's internals (``cycler.__init__.__globals__``).
_ENV = SandboxedEnvironment(
    autoescape=False, undefined=jinja2.StrictUndefined, keep_trailing_newline=False
)
# {min} and {max} in single braces, as in the rater instructions; {{ min }} is Jinja's.
_BOUND = re.compile(r"(?<!\{)\{(min|max)\}(?!\})")


@dataclass(frozen=True)
class PromptTemplate:
    """What makes one benchmark's prompt, and its version ``hash``."""

    benchmark: str
    system: str
    user: str
    instructions: str
    item_template: str
    hash: str
    #: ``(name, definition)`` of the criteria one prompt scores: empty in a study
    #: without criteria, one per request, or all of them ("together").
    criteria: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class JudgePrompt:
    system: str
    user: str
    hash: str
    #: The names of the criteria the reply scores (``("",)``: the study's unnamed one).
    criteria: tuple[str, ...] = ("",)

    def messages(self) -> list[dict[str, str]]:
        """The chat-completions ``messages``."""
        return [
            {"role": "system", "content": self.system},
            {"role": "user", "content": self.user},
        ]


def prompt_template(
    benchmark: str,
    *,
    instructions: str,
    item_template: str,
    judge_template: str | None = None,
    judge_system: str | None = None,
    criteria: tuple[tuple[str, str], ...] = (),
) -> PromptTemplate:
    """A benchmark's judge prompt template, defaults filled in, with its hash.

    The hash (SHA-256, hex) is taken over the system and user templates, the
    benchmark's name, its rater instructions and its rater template: all that
    decides the prompt of an item on a scale; and, when ``criteria`` are given,
    their names and definitions.

    ``criteria``: ``(name, definition)`` pairs the prompt scores. One: the default
    template is :data:`CRITERION_JUDGE_TEMPLATE`; several: :data:`CRITERIA_JUDGE_TEMPLATE`
    (the reply a JSON object). A study file's ``judge_template`` is used as it is,
    with the variables ``criterion``, ``definition`` and ``criteria``.
    """
    system = DEFAULT_JUDGE_SYSTEM if judge_system is None else judge_system
    default = DEFAULT_JUDGE_TEMPLATE
    if len(criteria) == 1:
        default = CRITERION_JUDGE_TEMPLATE
    elif len(criteria) > 1:
        default = CRITERIA_JUDGE_TEMPLATE
    user = default if judge_template is None else judge_template
    parts: dict = {
        "benchmark": benchmark,
        "system": system,
        "user": user,
        "instructions": instructions,
        "item_template": item_template,
    }
    if criteria:
        # Only then: a study without criteria keeps the hashes of its stored scores.
        parts["criteria"] = [list(pair) for pair in criteria]
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True).encode("utf-8")).hexdigest()
    return PromptTemplate(
        benchmark, system, user, instructions, item_template, digest, tuple(criteria)
    )


def _bounds(text: str, low: str, high: str) -> str:
    return _BOUND.sub(lambda m: low if m.group(1) == "min" else high, text)


def _render(source: str, variables: dict, where: str) -> str:
    try:
        return _ENV.from_string(source).render(variables).strip()
    except jinja2.TemplateError as exc:
        raise ValueError(f"{where}: {exc}") from None


def render_prompt(
    template: PromptTemplate, fields: dict, *, low: float, high: float
) -> JudgePrompt:
    """The prompt for an item with ``fields`` on the scale from ``low`` to ``high``.

    The Jinja variables are the item's fields, then ``min``, ``max``,
    ``benchmark``, ``instructions`` (the rater instructions, bounds filled in)
    and ``item`` (the rater template rendered as plain text), and in a study with
    criteria ``criterion`` and ``definition`` (the first criterion's) and
    ``criteria`` (a list of ``{name, definition}``), which win over fields of the
    same name. ``ValueError`` names the template that failed.
    """
    lo, hi = format_number(low), format_number(high)
    variables = dict(fields)
    variables.update(min=lo, max=hi, benchmark=template.benchmark)
    if template.criteria:
        variables["criteria"] = [
            {"name": name, "definition": definition} for name, definition in template.criteria
        ]
        variables["criterion"], variables["definition"] = template.criteria[0]
    # The rater page fills them the same way (the study file checks it works).
    variables["instructions"] = fill_bounds(template.instructions, lo, hi)
    variables["item"] = _render(
        template.item_template, variables, f"benchmark {template.benchmark}: template"
    )
    where = f"benchmark {template.benchmark}: judge"
    system = _render(_bounds(template.system, lo, hi), variables, f"{where}_system")
    user = _render(_bounds(template.user, lo, hi), variables, f"{where}_template")
    names = tuple(name for name, _ in template.criteria) or ("",)
    return JudgePrompt(system=system, user=user, hash=template.hash, criteria=names)
