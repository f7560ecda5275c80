"""The study file: a TOML description of a rating study, validated.

Every problem is reported with its key path (``scales[1].max``), all at once,
so a lead can fix the file in one go.
"""

from __future__ import annotations

import math
import re
import tomllib
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from ..words import noun, plural
from .assignment_spec import AssignmentSpec
from .criteria import CriterionSpec, criteria_problems
from .crowd_spec import PLATFORM_DEFAULTS, CompletionCodes, CrowdSpec, crowd_settings
from .long_columns import LONG_COLUMNS
from .placeholders import check_instructions, template_fields
from .strict import Strict
from .validation_spec import ValidationSpec

__all__ = [
    "StudyFile",
    "StudyFileError",
    "load_study_file",
    "parse_study_file",
    "template_fields",
    "ValidationSpec",
    "validation_settings",
    "DEFAULT_DEMOGRAPHICS",
    "AttentionSpec",
    "RetestSpec",
    "QuestionSpec",
    "attention_settings",
    "retest_settings",
    "question_specs",
    "CrowdSpec",
    "CompletionCodes",
    "crowd_settings",
    "PLATFORM_DEFAULTS",
    "judge_settings",
    "AssignmentSpec",
    "assignment_settings",
]

GENDER_CHOICES = ["female", "male", "non-binary", "self-describe", "prefer-not-to-say"]

DEFAULT_DEMOGRAPHICS: list[dict] = [
    {
        "key": "gender",
        "label": "Gender (self-reported)",
        "type": "choice",
        "choices": GENDER_CHOICES,
        "labels": {"non-binary": "Non-binary", "self-describe": "I describe myself"},
        "self_describe": "self-describe",
        "required": True,
    },
    {
        "key": "age_group",
        "label": "Age group",
        "type": "choice",
        "choices": ["18-24", "25-34", "35-44", "45-54", "55-64", "65+", "prefer-not-to-say"],
        "required": True,
    },
    {
        "key": "english",
        "label": "English proficiency",
        "type": "choice",
        "choices": ["native", "fluent", "intermediate", "basic", "prefer-not-to-say"],
        "required": True,
    },
    {
        "key": "education",
        "label": "Highest completed education",
        "type": "choice",
        "choices": ["secondary", "bachelor", "master", "doctorate", "other", "prefer-not-to-say"],
        "required": False,
    },
]

_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_KEY = re.compile(r"^[a-z][a-z0-9_]*$")
# Column names the long export already uses (a rubric study's has a criterion
# column too); a demographic question may not take one of them (its answers
# become a column of that export).
RESERVED_KEYS = frozenset(LONG_COLUMNS) | {"criterion"}


class ScaleSpec(Strict):
    name: Annotated[str, Field(min_length=1, max_length=50)]
    min: float
    max: float
    step: Annotated[float, Field(gt=0)] = 0.1

    @model_validator(mode="after")
    def _bounds(self) -> ScaleSpec:
        for field in ("min", "max", "step"):
            if not math.isfinite(getattr(self, field)):
                raise ValueError(f"{field} must be a finite number")
        if self.min >= self.max:
            raise ValueError(f"min ({self.min:g}) must be below max ({self.max:g})")
        steps = (self.max - self.min) / self.step
        if abs(steps - round(steps)) > 1e-6:
            raise ValueError(
                f"step {self.step:g} does not divide the range {self.min:g} to {self.max:g}"
            )
        return self


class BenchmarkSpec(Strict):
    name: Annotated[str, Field(min_length=1, max_length=100)]
    instructions: Annotated[str, Field(min_length=1)]
    template: Annotated[str, Field(min_length=1)]
    # The LLM judge's prompt (``annotator judge``): a Jinja template over the
    # item's fields with {min} and {max}, or a table of them by scale name
    # (scales not named use the default); and its system message. Unset: the
    # standardized template of annotator.judge.prompts. Read back from the
    # stored study file (judge_settings), so they need no column.
    judge_template: Annotated[str, Field(min_length=1)] | dict[str, str] | None = None
    judge_system: str | None = None

    @field_validator("template")
    @classmethod
    def _template_parses(cls, template: str) -> str:
        template_fields(template)
        return template

    @field_validator("judge_template")
    @classmethod
    def _judge_templates_parse(cls, judge: str | dict[str, str] | None):
        for where, text in ({"": judge} if isinstance(judge, str) else judge or {}).items():
            try:
                template_fields(text)
            except ValueError as exc:
                raise ValueError(f"{where + ': ' if where else ''}{exc}") from None
        return judge

    def judge_template_for(self, scale: str) -> str | None:
        """The judge template of this benchmark on ``scale`` (None: the default)."""
        if isinstance(self.judge_template, dict):
            return self.judge_template.get(scale)
        return self.judge_template

    @field_validator("judge_system")
    @classmethod
    def _judge_system_parses(cls, system: str | None) -> str | None:
        if system is not None:
            template_fields(system)
        return system

    @field_validator("instructions")
    @classmethod
    def _only_min_max(cls, instructions: str) -> str:
        return check_instructions(instructions)


class QuestionSpec(Strict):
    key: Annotated[str, Field(pattern=_KEY.pattern, max_length=50)]
    label: Annotated[str, Field(min_length=1)]
    type: Literal["choice", "number", "text"] = "choice"
    choices: list[str] = []
    # What raters read for a choice (the choice itself is what is stored and
    # exported); choices without one read as "Prefer not to say" for
    # "prefer-not-to-say" (see annotator.collect.questionnaire.choice_label).
    labels: dict[str, Annotated[str, Field(min_length=1, max_length=200)]] = {}
    # The choice that opens a free-text field ("self-describe").
    self_describe: str | None = None
    required: bool = True
    min: float | None = None
    max: float | None = None

    @model_validator(mode="after")
    def _choices(self) -> QuestionSpec:
        if self.key in RESERVED_KEYS:
            raise ValueError(f"key {self.key!r} is reserved for an export column")
        if self.type == "choice" and len(self.choices) < 2:
            raise ValueError("a choice question needs at least two choices")
        if self.self_describe is not None and self.self_describe not in self.choices:
            raise ValueError(f"self_describe {self.self_describe!r} is not one of the choices")
        unknown = [key for key in self.labels if key not in self.choices]
        if unknown:
            raise ValueError(
                f"labels {', '.join(map(repr, unknown))} not among the choices "
                f"({', '.join(map(repr, self.choices))})"
            )
        return self


class AttentionSpec(Strict):
    # Attention-check items (items with a gold score) placed at random
    # positions in each session.
    per_session: Annotated[int, Field(ge=0)] = 0
    # Failed checks (over all blocks) that end a rater's participation; a
    # crowd study then sends them to the platform with the screen-out code.
    screen_out_after: Annotated[int, Field(ge=1)] | None = None


class RetestSpec(Strict):
    # Share of a session's items shown a second time later in the session.
    share: Annotated[float, Field(ge=0, le=1)] = 0.0
    # Items between the first and the second showing, at least.
    min_distance: Annotated[int, Field(ge=1)] = 10


class StudyFile(Strict):
    name: Annotated[str, Field(min_length=1, max_length=200)]
    slug: Annotated[str, Field(pattern=_SLUG.pattern, max_length=100)]
    session_gap_days: Annotated[float, Field(ge=0)] = 7.0
    scale_order: Literal["balanced", "random"] = "balanced"
    consent: Annotated[str, Field(min_length=1)]
    completion_url: str | None = None
    completion_code: str | None = None
    break_every: Annotated[int, Field(ge=1)] | None = None
    scales: Annotated[list[ScaleSpec], Field(min_length=1)]
    benchmarks: Annotated[list[BenchmarkSpec], Field(min_length=1)]
    # Rubric criteria, each rated on the block's scale; none: one unnamed criterion.
    criteria: list[CriterionSpec] = []
    demographics: list[QuestionSpec] = Field(
        default_factory=lambda: [QuestionSpec(**q) for q in DEFAULT_DEMOGRAPHICS]
    )
    attention_checks: AttentionSpec = AttentionSpec()
    test_retest: RetestSpec = RetestSpec()
    validation: ValidationSpec = ValidationSpec()
    # What happens to the ratings of a rater who withdraws: "keep" (left out
    # of every export and statistic) or "delete" (removed for good).
    withdrawn_ratings: Literal["keep", "delete"] = "keep"
    crowd: CrowdSpec | None = None
    assignment: AssignmentSpec = AssignmentSpec()

    @model_validator(mode="after")
    def _overlap_raters(self) -> StudyFile:
        spec = self.assignment
        if spec.design != "overlap" or spec.items_per_rater is not None:
            return self
        if self.crowd is None or self.crowd.max_raters is None:
            raise ValueError(
                'assignment.items_per_rater: required for design = "overlap" unless '
                "crowd.max_raters says how many raters share the items"
            )
        if self.crowd.max_raters < spec.raters_per_item:
            raise ValueError(
                f"assignment.raters_per_item: {spec.raters_per_item} raters per item need "
                f"at least as many raters, and crowd.max_raters is {self.crowd.max_raters}"
            )
        return self

    @model_validator(mode="after")
    def _crowd_codes(self) -> StudyFile:
        waves = self.crowd.completion_codes.waves if self.crowd else []
        if waves and len(waves) != len(self.scales):
            raise ValueError(
                f"crowd.completion_codes.waves: {plural(len(waves), 'code')} for "
                f"{plural(len(self.scales), 'block')}; give one code per block (one per scale)"
            )
        return self

    @model_validator(mode="after")
    def _unique_names(self) -> StudyFile:
        for what, names in (
            ("scales", [s.name for s in self.scales]),
            ("benchmarks", [b.name for b in self.benchmarks]),
            ("demographics", [q.key for q in self.demographics]),
        ):
            seen = set()
            for name in names:
                if name in seen:
                    raise ValueError(f"{what}: the name {name!r} appears twice")
                seen.add(name)
        scales = {s.name for s in self.scales}
        for bench in self.benchmarks:
            if isinstance(bench.judge_template, dict):
                unknown = sorted(set(bench.judge_template) - scales)
                if unknown:
                    raise ValueError(
                        f"benchmark {bench.name!r}: judge_template names unknown "
                        f"{noun(len(unknown), 'scale')} "
                        f"{', '.join(map(repr, unknown))} (the scales: {', '.join(sorted(scales))})"
                    )
        if self.completion_url and not self.completion_url.startswith(("https://", "http://")):
            raise ValueError("completion_url must start with https:// or http://")
        problems = criteria_problems(self.criteria, [b.name for b in self.benchmarks])
        if problems:
            raise ValueError("; ".join(problems))
        return self


class StudyFileError(ValueError):
    """A study file that cannot be used; ``problems`` lists every one."""

    def __init__(self, path: str, problems: list[str]) -> None:
        self.path = path
        self.problems = problems
        super().__init__(f"{path}: " + "; ".join(problems))

    def __str__(self) -> str:
        lines = [f"{self.path}: {plural(len(self.problems), 'problem')}"]
        lines += [f"  {p}" for p in self.problems]
        return "\n".join(lines)


def _key_path(loc: tuple) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += ("." if path else "") + str(part)
    return path or "(top level)"


def parse_study_file(text: str, *, path: str = "<study>") -> StudyFile:
    """Validate the TOML text of a study file."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise StudyFileError(path, [f"not valid TOML: {exc}"]) from None
    try:
        return StudyFile.model_validate(data)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            message = error["msg"].removeprefix("Value error, ")
            problems.append(f"{_key_path(error['loc'])}: {message}")
        raise StudyFileError(path, problems) from None


def load_study_file(path: str | Path) -> StudyFile:
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StudyFileError(str(path), [f"not UTF-8 (byte {exc.start})"]) from None
    return parse_study_file(text, path=str(path))


# A study keeps its settings as the JSON of these models (``Study.attention_checks``,
# ``Study.test_retest``, ``Study.demographics``); they are read back through the
# same models, so each default is given once, above.


def attention_settings(stored: dict | None) -> AttentionSpec:
    """A study's stored ``attention_checks``, with the study file's defaults."""
    return AttentionSpec.model_validate(stored or {})


def retest_settings(stored: dict | None) -> RetestSpec:
    """A study's stored ``test_retest``, with the study file's defaults."""
    return RetestSpec.model_validate(stored or {})


def question_specs(stored: list[dict] | None) -> list[QuestionSpec]:
    """A study's stored demographic questions, with the study file's defaults."""
    return [QuestionSpec.model_validate(question) for question in stored or []]


def validation_settings(source_toml: str) -> ValidationSpec:
    """The ``[validation]`` table of a stored study file, defaults filled in.

    A study stored without its file (``source_toml`` empty) gets the defaults.
    Only the ``[validation]`` table is read: a stored file was valid when it was
    stored, and its other tables do not matter here.
    """
    if not source_toml.strip():
        return ValidationSpec()
    try:
        data = tomllib.loads(source_toml)
    except tomllib.TOMLDecodeError as exc:
        raise StudyFileError("<stored study file>", [f"not valid TOML: {exc}"]) from None
    try:
        return ValidationSpec.model_validate(data.get("validation", {}))
    except ValidationError as exc:
        problems = [
            f"validation.{_key_path(e['loc'])}: {e['msg'].removeprefix('Value error, ')}"
            for e in exc.errors()
        ]
        raise StudyFileError("<stored study file>", problems) from None


def _stored_table(source_toml: str, key: str) -> dict:
    try:
        return tomllib.loads(source_toml).get(key, {})
    except tomllib.TOMLDecodeError as exc:
        raise StudyFileError("<stored study file>", [f"not valid TOML: {exc}"]) from None


def assignment_settings(source_toml: str) -> AssignmentSpec:
    """The ``[assignment]`` table of a stored study file, defaults filled in.

    A study stored without its file gets the crossed design. Only this table
    is read (like :func:`validation_settings`).
    """
    if not source_toml.strip():
        return AssignmentSpec()
    try:
        return AssignmentSpec.model_validate(_stored_table(source_toml, "assignment"))
    except ValidationError as exc:
        problems = [
            f"assignment.{_key_path(e['loc'])}: {e['msg'].removeprefix('Value error, ')}"
            for e in exc.errors()
        ]
        raise StudyFileError("<stored study file>", problems) from None


def judge_settings(source_toml: str) -> dict[str, BenchmarkSpec]:
    """The ``[[benchmarks]]`` of a stored study file by name (their judge templates).

    A study stored without its file gets none: every benchmark then uses the
    default judge template.
    """
    if not source_toml.strip():
        return {}
    return {bench.name: bench for bench in parse_study_file(source_toml).benchmarks}
