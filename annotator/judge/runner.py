"""Running an LLM judge on a study's items, against any OpenAI-compatible endpoint.

One score is asked for per (item, scale, run) at one temperature, under the
prompt version of the item's benchmark (:mod:`annotator.judge.prompts`).
Scores land in the table ``llm-scores import`` fills, through the same check
(:func:`annotator.data.importers.store_llm_score`), each committed as it
arrives, so an interrupted run resumes where it stopped: a score already
stored for (item, model, scale, temperature, run, prompt version) is never
asked for again. Rate limits (429), server errors (5xx), timeouts and lost
connections are retried with exponential backoff by the ``openai`` client
itself (honouring ``Retry-After``); a reply without a valid score is asked
again, then recorded as a :class:`~annotator.models.JudgeFailure` with the
raw reply, never as a score.

The runner commits (unlike the data-access functions, which leave it to the
caller): a run of thousands of requests must keep what it got when it stops.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select
from tqdm import tqdm

from ..collect.scores import ScoreError, format_number, scale_range
from ..data.importers import store_llm_score
from ..models import Item, JudgeFailure, LLMScore, Scale, Study
from ..study.studies import study_benchmarks, study_scales
from ..study.studyfile import judge_settings
from .parsing import ReplyError, expected_score, parse_reply
from .prompts import JudgePrompt, prompt_template, render_prompt

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "JudgeError",
    "JudgeReport",
    "JudgeSettings",
    "JudgeTask",
    "plan_judge",
    "run_judge",
    "run_label",
    "EXPECTED_SUFFIX",
]

# The model name of expected scores from log-probabilities (``--logprobs``):
# another estimator than a sampled score, so another judge in every analysis.
EXPECTED_SUFFIX = " (expected)"


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


@dataclass(frozen=True)
class JudgeTask:
    """One score to ask for."""

    item_id: int
    item: str
    scale: Scale
    run: str
    prompt: JudgePrompt


@dataclass
class JudgeReport:
    """What a run did: scores asked for, found stored, stored, failed; requests, tokens."""

    scores: int = 0
    cached: int = 0
    stored: int = 0
    failed: int = 0
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    failures: list[str] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def summary(self) -> str:
        return (
            f"{self.scores} score(s): {self.cached} already stored, {self.stored} stored, "
            f"{self.failed} failed; {self.requests} request(s), {self.tokens} token(s) "
            f"({self.prompt_tokens} prompt, {self.completion_tokens} completion)"
        )


def run_label(temperature: float, run: int, prompt_hash: str) -> str:
    """The ``run`` of a judged score: ``t1-2-3f9a2c1b04d7`` (temperature, run, prompt).

    (item, scale, model, run) is the stored scores' key, as for imported scores;
    naming the temperature and the prompt version in the label keeps the runs
    at other temperatures and under other prompts apart.
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
                f"unknown scale(s) {', '.join(map(repr, unknown))} "
                f"(the study has: {', '.join(known)})"
            )
        scales = [known[name] for name in settings.scales]
    specs = judge_settings(study.source_toml)
    templates = {}
    for bench in study_benchmarks(session, study):
        spec = specs.get(bench.name)
        for scale in scales:
            templates[bench.id, scale.id] = prompt_template(
                bench.name,
                instructions=bench.instructions,
                item_template=bench.template,
                judge_template=spec.judge_template_for(scale.name) if spec else None,
                judge_system=spec.judge_system if spec else None,
            )
    query = (
        select(Item).where(Item.study_id == study.id, Item.gold_score.is_(None)).order_by(Item.id)
    )
    if settings.limit is not None:
        query = query.limit(settings.limit)
    items = list(session.exec(query))
    stored = set(
        session.exec(
            select(LLMScore.item_id, LLMScore.scale_id, LLMScore.run, LLMScore.prompt_hash)
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
            template = templates[item.benchmark_id, scale.id]
            try:
                prompt = render_prompt(template, item.fields, low=scale.min, high=scale.max)
            except ValueError as exc:
                raise JudgeError(f"item {item.external_id!r}: {exc}") from None
            for run in range(1, settings.runs + 1):
                label = run_label(settings.temperature, run, prompt.hash)
                if (item.id, scale.id, label, prompt.hash) in stored:
                    cached += 1
                else:
                    tasks.append(JudgeTask(item.id, item.external_id, scale, label, prompt))
    return tasks, cached


def _client(settings: JudgeSettings):
    import openai

    return openai.AsyncOpenAI(
        base_url=settings.base_url,
        # Local servers (vLLM, llama.cpp, Ollama) take any key; the client needs one.
        api_key=settings.api_key or "no-key",
        max_retries=settings.max_retries,
        timeout=settings.timeout,
    )


def run_judge(
    session: Session,
    study: Study,
    settings: JudgeSettings,
    *,
    progress: bool = False,
    client_factory: Callable[[JudgeSettings], Any] | None = None,
) -> JudgeReport:
    """Ask the judge for every score not yet stored; store each as it arrives.

    Parameters
    ----------
    session : sqlmodel.Session
        Committed after each score and each failure.
    study : Study
    settings : JudgeSettings
    progress : bool
        Show a progress bar (requests, failures, tokens) on standard error.
    client_factory : callable, optional
        Makes the ``openai.AsyncOpenAI``-like client inside the run's event loop.

    Returns
    -------
    JudgeReport
    """
    tasks, cached = plan_judge(session, study, settings)
    report = JudgeReport(scores=len(tasks) + cached, cached=cached)
    if tasks:
        asyncio.run(_run_all(session, tasks, settings, report, progress, client_factory or _client))
    return report


async def _run_all(session, tasks, settings, report, progress, client_factory) -> None:
    client = client_factory(settings)
    bar = tqdm(
        total=len(tasks), desc=f"judge {settings.model}", unit="score", disable=not progress or None
    )
    limit = asyncio.Semaphore(settings.concurrency)

    async def one(task: JudgeTask) -> None:
        async with limit:
            await _judge_one(session, client, task, settings, report)
        bar.update(1)
        bar.set_postfix(requests=report.requests, failures=report.failed, tokens=report.tokens)

    try:
        async with asyncio.TaskGroup() as group:
            for task in tasks:
                group.create_task(one(task))
    except* JudgeError as caught:
        raise caught.exceptions[0] from None
    finally:
        bar.close()
        close = getattr(client, "close", None)
        if close is not None:
            await close()


def _expected(response, scale: Scale) -> float | None:
    """The expected score at the reply's first number token, where logprobs came back."""
    try:
        tokens = response.choices[0].logprobs.content or []
    except (AttributeError, IndexError, TypeError):
        return None
    for token in tokens:
        if token.token.strip().isdigit():
            top = [(t.token, t.logprob) for t in token.top_logprobs or []]
            return expected_score(top, low=scale.min, high=scale.max)
    return None


def _reply_text(response) -> str | None:
    try:
        return response.choices[0].message.content
    except (AttributeError, IndexError, TypeError):
        return None


async def _judge_one(session, client, task: JudgeTask, settings: JudgeSettings, report) -> None:
    import openai

    options: dict[str, Any] = {}
    if settings.max_tokens is not None:
        options["max_tokens"] = settings.max_tokens
    if settings.logprobs:
        options.update(logprobs=True, top_logprobs=settings.top_logprobs)
    reply: str | None = None
    error = ""
    for _ in range(settings.attempts):
        report.requests += 1
        try:
            response = await client.chat.completions.create(
                model=settings.model,
                messages=task.prompt.messages(),
                temperature=settings.temperature,
                **options,
            )
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise JudgeError(f"the server refused the API key: {exc}") from None
        except openai.NotFoundError as exc:
            raise JudgeError(
                f"the server does not know model {settings.model!r} or the address "
                f"{settings.base_url or 'of the OpenAI API'} is wrong: {exc}"
            ) from None
        except openai.APITimeoutError as exc:
            # Timed out again and again: this prompt may be too long to answer in time.
            reply, error = None, f"{type(exc).__name__}: {exc}"
            break
        except openai.APIConnectionError as exc:
            # Unreachable after the client's retries: no other request will fare better.
            raise JudgeError(
                f"cannot reach {settings.base_url or 'the OpenAI API'}: {exc}"
            ) from None
        except openai.APIError as exc:
            # Already retried by the client with backoff (429, 5xx), or
            # refused for this request alone (400, 422).
            reply, error = None, f"{type(exc).__name__}: {exc}"
            break
        usage = getattr(response, "usage", None)
        report.prompt_tokens += getattr(usage, "prompt_tokens", 0) or 0
        report.completion_tokens += getattr(usage, "completion_tokens", 0) or 0
        reply = _reply_text(response)
        try:
            number = parse_reply(reply)
            store_llm_score(
                session,
                item_id=task.item_id,
                scale=task.scale,
                model=settings.model,
                run=task.run,
                temperature=settings.temperature,
                score=number,
                prompt_hash=task.prompt.hash,
            )
            expected = _expected(response, task.scale) if settings.logprobs else None
            if expected is not None:
                store_llm_score(
                    session,
                    item_id=task.item_id,
                    scale=task.scale,
                    model=settings.model + EXPECTED_SUFFIX,
                    run=task.run,
                    temperature=settings.temperature,
                    score=repr(expected),
                    prompt_hash=task.prompt.hash,
                )
            session.commit()
        except ReplyError as exc:
            error = str(exc)
            continue
        except ScoreError as exc:
            # Nothing of this reply is kept (a refused score stores nothing).
            session.rollback()
            allowed = scale_range(task.scale, any_precision=True)
            error = f"{exc.problem}; the scale {task.scale.name} takes numbers {allowed}"
            continue
        except IntegrityError:
            # Stored meanwhile by another run of the same judge.
            session.rollback()
            report.cached += 1
            return
        report.stored += 1
        return
    session.add(
        JudgeFailure(
            item_id=task.item_id,
            scale_id=task.scale.id,
            model=settings.model,
            temperature=settings.temperature,
            run=task.run,
            prompt_hash=task.prompt.hash,
            raw_reply=reply,
            error=error,
        )
    )
    session.commit()
    report.failed += 1
    report.failures.append(f"item {task.item}, scale {task.scale.name}, run {task.run}: {error}")
