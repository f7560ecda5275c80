"""What a judge run asks for: its settings, and the scores not yet stored.

A score is identified by (item, model, scale, criterion, temperature, run, prompt
version); :func:`plan_judge` lists those of a run that are missing, so a run
asks only for them (see :mod:`annotator.judge.runner`). In a study with
``[[criteria]]`` each criterion of an item is a score of its own: asked in a
request of its own (``criteria="each"``, the default) or with the item's other
criteria in one request (``"together"``), which then asks only for the criteria
still missing.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlmodel import Session, select

from ..collect.scores import format_number
from ..models import Criterion, Item, LLMScore, Scale, Study
from ..study.criteria import criteria_for, study_criteria
from ..study.studies import study_benchmarks, study_scales
from ..study.studyfile import judge_settings
from ..words import noun
from .prompts import JudgePrompt, prompt_template, render_prompt

__all__ = [
    "CRITERIA_MODES",
    "JudgeError",
    "JudgeSettings",
    "JudgeTask",
    "plan_judge",
    "run_label",
]

#: How a rubric study's criteria are asked for: a request per criterion (GER-Eval's
#: rubric application), or all of an item's criteria in one request.
CRITERIA_MODES = ("each", "together")


class JudgeError(Exception):
    """A judge run that cannot start or go on (bad settings, key refused, unknown model)."""


@dataclass(frozen=True)
class JudgeSettings:
    """How to judge: the model, the endpoint and the sampling."""

    model: str
    # None: the client's default (OpenAI's API, or OPENAI_BASE_URL).
    base_url: str | None = None
    api_key: str | None = None
    # Scale names; empty: every scale of the study.
    scales: tuple[str, ...] = ()
    runs: int = 1
    # The paper's default (section 4.2: "we set the default temperature to 1").
    temperature: float = 1.0
    concurrency: int = 4
    # At most this many items (in import order); None: all.
    limit: int | None = None
    # Requests per score when replies hold no valid score, before a failure.
    attempts: int = 3
    # The client's retries of one request on 429, 5xx, timeouts and lost connections.
    max_retries: int = 6
    timeout: float = 120.0
    max_tokens: int | None = None
    # Also store the expected score from the top log-probabilities of the
    # reply's score token, as model "MODEL (expected)" (parsing.expected_score).
    logprobs: bool = False
    top_logprobs: int = 20
    # In a study with [[criteria]]: one of CRITERIA_MODES.
    criteria: str = "each"

    def __post_init__(self) -> None:
        if not self.model.strip():
            raise ValueError("model: the model name is empty")
        for name in ("runs", "concurrency", "attempts"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if self.max_retries < 0:
            raise ValueError("max_retries must be 0 or more")
        if self.limit is not None and self.limit < 1:
            raise ValueError("limit must be at least 1")
        if not 0 <= self.top_logprobs <= 20:
            raise ValueError("top_logprobs must be between 0 and 20")
        if not 0 <= self.temperature <= 2:
            raise ValueError("temperature must be between 0 and 2")
        if self.criteria not in CRITERIA_MODES:
            raise ValueError(
                f"criteria must be one of {', '.join(CRITERIA_MODES)}, not {self.criteria!r}"
            )


@dataclass(frozen=True)
class JudgeTask:
    """One request to make: the scores of ``criteria`` (a subset of the prompt's)."""

    item_id: int
    item: str
    scale: Scale
    run: str
    prompt: JudgePrompt
    criteria: tuple[str, ...] = ("",)


def run_label(temperature: float, run: int, prompt_hash: str) -> str:
    """The ``run`` of a judged score: ``t1-2-3f9a2c1b04d7`` (temperature, run, prompt).

    (item, scale, model, temperature, run) is the stored scores' key, as for
    imported scores; the prompt version is not in it, so the label names it to
    keep the runs under other prompts apart. It names the temperature too, as
    labels did before the temperature joined the key, so runs stored then are
    still found (and a label alone tells where a score came from).
    """
    # Every digit of the temperature: 0.1234567 and 0.1234568 are other runs.
    return f"t{format_number(temperature)}-{run}-{prompt_hash[:12]}"


def plan_judge(
    session: Session, study: Study, settings: JudgeSettings
) -> tuple[list[JudgeTask], int]:
    """The scores still to ask for, and how many are already stored.

    Attention checks (items with a gold score) are left out: they only check
    the raters. ``JudgeError`` for an unknown scale or a template that fails.
    """
    scales = study_scales(session, study)
    if settings.scales:
        known = {s.name: s for s in scales}
        unknown = [name for name in settings.scales if name not in known]
        if unknown:
            raise JudgeError(
                f"unknown {noun(len(unknown), 'scale')} {', '.join(map(repr, unknown))} "
                f"(the study has: {', '.join(known)})"
            )
        scales = [known[name] for name in settings.scales]
    specs = judge_settings(study.source_toml)
    criteria = study_criteria(session, study)
    templates: dict[tuple[int, int], list] = {}
    for bench in study_benchmarks(session, study):
        spec = specs.get(bench.name)
        for scale in scales:
            templates[bench.id, scale.id] = [
                prompt_template(
                    bench.name,
                    instructions=bench.instructions,
                    item_template=bench.template,
                    judge_template=spec.judge_template_for(scale.name) if spec else None,
                    judge_system=spec.judge_system if spec else None,
                    criteria=group,
                )
                for group in _criteria_groups(criteria, bench.name, settings.criteria)
            ]
    query = (
        select(Item).where(Item.study_id == study.id, Item.gold_score.is_(None)).order_by(Item.id)
    )
    if settings.limit is not None:
        query = query.limit(settings.limit)
    items = list(session.exec(query))
    stored = set(
        session.exec(
            select(
                LLMScore.item_id,
                LLMScore.scale_id,
                LLMScore.criterion,
                LLMScore.run,
                LLMScore.prompt_hash,
            )
            .join(Item, Item.id == LLMScore.item_id)
            .where(
                Item.study_id == study.id,
                LLMScore.model == settings.model,
                LLMScore.temperature == settings.temperature,
            )
        ).all()
    )
    tasks: list[JudgeTask] = []
    cached = 0
    for item in items:
        for scale in scales:
            for template in templates[item.benchmark_id, scale.id]:
                try:
                    prompt = render_prompt(template, item.fields, low=scale.min, high=scale.max)
                except ValueError as exc:
                    raise JudgeError(f"item {item.external_id!r}: {exc}") from None
                for run in range(1, settings.runs + 1):
                    label = run_label(settings.temperature, run, prompt.hash)
                    missing = tuple(
                        c
                        for c in prompt.criteria
                        if (item.id, scale.id, c, label, prompt.hash) not in stored
                    )
                    cached += len(prompt.criteria) - len(missing)
                    if missing:
                        tasks.append(
                            JudgeTask(item.id, item.external_id, scale, label, prompt, missing)
                        )
    return tasks, cached


def _criteria_groups(
    criteria: list[Criterion], benchmark: str, mode: str
) -> list[tuple[tuple[str, str], ...]]:
    """The criteria of each prompt of a benchmark's items: ``[()]`` without criteria."""
    mine = [(c.name, c.definition) for c in criteria_for(criteria, benchmark)]
    if not criteria:
        return [()]
    if mode == "together":
        return [tuple(mine)] if mine else []
    return [(pair,) for pair in mine]
