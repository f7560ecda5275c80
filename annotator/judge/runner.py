"""Running an LLM judge on a study's items, against any OpenAI-compatible endpoint.

One score is asked for per (item, scale, criterion, run) at one temperature, under
the prompt version of the item's benchmark (:mod:`annotator.judge.prompts`); a
request of several criteria (``criteria="together"``) is checked criterion by
criterion: a missing or refused score asks again for that criterion alone, and is
at last a failure of that criterion only.
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
from sqlmodel import Session
from tqdm import tqdm

from ..collect.scores import ScoreError, scale_range
from ..data.importers import store_llm_score
from ..models import JudgeFailure, Scale, Study
from ..redaction import redact
from ..words import plural
from .parsing import ReplyError, expected_score, parse_criteria_reply, parse_reply
from .tasks import JudgeError, JudgeSettings, JudgeTask, plan_judge, run_label

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "EXPECTED_SUFFIX",
    "JudgeError",
    "JudgeReport",
    "JudgeSettings",
    "JudgeTask",
    "plan_judge",
    "run_judge",
    "run_label",
]

# The model name of expected scores from log-probabilities (``--logprobs``):
# another estimator than a sampled score, so another judge in every analysis.
EXPECTED_SUFFIX = " (expected)"


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
    # Stopped by ``should_stop`` before every score was asked for.
    cancelled: bool = False

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def summary(self) -> str:
        return (
            f"{plural(self.scores, 'score')}: {self.cached} already stored, "
            f"{self.stored} stored, {self.failed} failed; {plural(self.requests, 'request')}, "
            f"{plural(self.tokens, 'token')} "
            f"({self.prompt_tokens} prompt, {self.completion_tokens} completion)"
        )


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
    on_progress: Callable[[JudgeReport, int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
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
    on_progress : callable, optional
        Called as ``on_progress(report, done, total)`` before the first request
        and after each score asked for (stored or failed; the criteria asked for
        together count each), ``total`` being the scores this run asks for (those
        already stored left out).
    should_stop : callable, optional
        Asked before each request's first attempt; once it says True no further
        score is asked for (those in flight finish and are stored), and the
        report says ``cancelled``. Scores stored before stay.

    Returns
    -------
    JudgeReport
    """
    tasks, cached = plan_judge(session, study, settings)
    # A task of several criteria (asked together) asks for one score per criterion.
    asked = sum(len(task.criteria) for task in tasks)
    report = JudgeReport(scores=asked + cached, cached=cached)
    hooks = _Hooks(on_progress, should_stop, total=asked)
    hooks.progressed(report)
    if tasks and not hooks.stopped(report):
        asyncio.run(
            _run_all(session, tasks, settings, report, progress, client_factory or _client, hooks)
        )
    return report


@dataclass
class _Hooks:
    """A caller's progress callback and stop check (the web's job), either may be None."""

    on_progress: Callable[[JudgeReport, int, int], None] | None
    should_stop: Callable[[], bool] | None
    total: int
    done: int = 0

    def progressed(self, report: JudgeReport) -> None:
        if self.on_progress is not None:
            self.on_progress(report, self.done, self.total)

    def stopped(self, report: JudgeReport) -> bool:
        # Asked once per score at most, and never again once it said stop.
        if not report.cancelled and self.should_stop is not None and self.should_stop():
            report.cancelled = True
        return report.cancelled


async def _run_all(session, tasks, settings, report, progress, client_factory, hooks) -> None:
    client = client_factory(settings)
    bar = tqdm(
        total=hooks.total,
        desc=f"judge {settings.model}",
        unit="score",
        disable=not progress or None,
    )
    limit = asyncio.Semaphore(settings.concurrency)

    async def one(task: JudgeTask) -> None:
        async with limit:
            # Checked between requests: a score already asked for is awaited and stored.
            if hooks.stopped(report):
                return
            await _judge_one(session, client, task, settings, report)
        bar.update(len(task.criteria))
        bar.set_postfix(requests=report.requests, failures=report.failed, tokens=report.tokens)
        hooks.done += len(task.criteria)
        hooks.progressed(report)

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


def _scores_in(reply: str | None, task: JudgeTask, pending: list[str]) -> dict:
    """Each pending criterion's score text in ``reply``, or its :class:`ReplyError`."""
    if len(task.prompt.criteria) == 1:
        try:
            return {pending[0]: parse_reply(reply)}
        except ReplyError as exc:
            return {pending[0]: exc}
    found = parse_criteria_reply(reply, task.prompt.criteria)
    return {criterion: found[criterion] for criterion in pending}


def _store(session, task: JudgeTask, settings: JudgeSettings, criterion, number, response) -> None:
    """Store one criterion's score (and its expected score); the caller commits."""
    common = dict(
        item_id=task.item_id,
        scale=task.scale,
        run=task.run,
        temperature=settings.temperature,
        prompt_hash=task.prompt.hash,
    )
    row = store_llm_score(session, model=settings.model, score=number, **common)
    row.criterion = criterion
    # The first number token is the score only in a reply of one criterion.
    if settings.logprobs and len(task.prompt.criteria) == 1:
        expected = _expected(response, task.scale)
        if expected is not None:
            row = store_llm_score(
                session, model=settings.model + EXPECTED_SUFFIX, score=repr(expected), **common
            )
            row.criterion = criterion


def _secret_free(text: str | None, settings: JudgeSettings) -> str | None:
    # The key this run sends and every secret of the instance (annotator.redaction).
    return redact(text, [settings.api_key])


async def _judge_one(session, client, task: JudgeTask, settings: JudgeSettings, report) -> None:
    import openai

    options: dict[str, Any] = {}
    if settings.max_tokens is not None:
        options["max_tokens"] = settings.max_tokens
    if settings.logprobs:
        options.update(logprobs=True, top_logprobs=settings.top_logprobs)
    reply: str | None = None
    pending = list(task.criteria)
    errors: dict[str, str] = {}
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
            raise JudgeError(
                _secret_free(f"the server refused the API key: {exc}", settings)
            ) from None
        except openai.NotFoundError as exc:
            raise JudgeError(
                _secret_free(
                    f"the server does not know model {settings.model!r} or the address "
                    f"{settings.base_url or 'of the OpenAI API'} is wrong: {exc}",
                    settings,
                )
            ) from None
        except openai.APITimeoutError as exc:
            # Timed out again and again: this prompt may be too long to answer in time.
            error = _secret_free(f"{type(exc).__name__}: {exc}", settings)
            reply, errors = None, dict.fromkeys(pending, error)
            break
        except openai.APIConnectionError as exc:
            # Unreachable after the client's retries: no other request will fare better.
            raise JudgeError(
                _secret_free(
                    f"cannot reach {settings.base_url or 'the OpenAI API'}: {exc}", settings
                )
            ) from None
        except openai.APIError as exc:
            # Already retried by the client with backoff (429, 5xx), or
            # refused for this request alone (400, 422). Whatever the status,
            # the endpoint's reply may quote the key: cut before it is stored.
            error = _secret_free(f"{type(exc).__name__}: {exc}", settings)
            reply, errors = None, dict.fromkeys(pending, error)
            break
        usage = getattr(response, "usage", None)
        report.prompt_tokens += getattr(usage, "prompt_tokens", 0) or 0
        report.completion_tokens += getattr(usage, "completion_tokens", 0) or 0
        reply = _secret_free(_reply_text(response), settings)
        for criterion, number in _scores_in(reply, task, pending).items():
            if isinstance(number, ReplyError):
                errors[criterion] = str(number)
                continue
            try:
                _store(session, task, settings, criterion, number, response)
                session.commit()
            except ScoreError as exc:
                # Nothing of this score is kept (a refused score stores nothing).
                session.rollback()
                allowed = scale_range(task.scale, any_precision=True)
                errors[criterion] = (
                    f"{exc.problem}; the scale {task.scale.name} takes numbers {allowed}"
                )
                continue
            except IntegrityError:
                # Stored meanwhile by another run of the same judge.
                session.rollback()
                report.cached += 1
            else:
                report.stored += 1
            pending.remove(criterion)
        if not pending:
            return
    for criterion in pending:
        session.add(
            JudgeFailure(
                item_id=task.item_id,
                scale_id=task.scale.id,
                criterion=criterion,
                model=settings.model,
                temperature=settings.temperature,
                run=task.run,
                prompt_hash=task.prompt.hash,
                raw_reply=reply,
                error=errors.get(criterion, ""),
            )
        )
        where = f"item {task.item}, scale {task.scale.name}"
        if criterion:
            where += f", criterion {criterion}"
        report.failures.append(f"{where}, run {task.run}: {errors.get(criterion, '')}")
    session.commit()
    report.failed += len(pending)
