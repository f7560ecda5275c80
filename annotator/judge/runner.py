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
from sqlmodel import Session
from tqdm import tqdm

from ..collect.scores import ScoreError, scale_range
from ..data.importers import store_llm_score
from ..models import JudgeFailure, Scale, Study
from .parsing import ReplyError, expected_score, parse_reply
from .plan import JudgeError, JudgeSettings, JudgeTask, plan_judge, run_label

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
            f"{self.scores} score(s): {self.cached} already stored, {self.stored} stored, "
            f"{self.failed} failed; {self.requests} request(s), {self.tokens} token(s) "
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
        and after each score asked for (stored or failed), ``total`` being the
        scores this run asks for (those already stored left out).
    should_stop : callable, optional
        Asked before each score's first request; once it says True no further
        score is asked for (those in flight finish and are stored), and the
        report says ``cancelled``. Scores stored before stay.

    Returns
    -------
    JudgeReport
    """
    tasks, cached = plan_judge(session, study, settings)
    report = JudgeReport(scores=len(tasks) + cached, cached=cached)
    hooks = _Hooks(on_progress, should_stop, total=len(tasks))
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
        total=len(tasks), desc=f"judge {settings.model}", unit="score", disable=not progress or None
    )
    limit = asyncio.Semaphore(settings.concurrency)

    async def one(task: JudgeTask) -> None:
        async with limit:
            # Checked between requests: a score already asked for is awaited and stored.
            if hooks.stopped(report):
                return
            await _judge_one(session, client, task, settings, report)
        bar.update(1)
        bar.set_postfix(requests=report.requests, failures=report.failed, tokens=report.tokens)
        hooks.done += 1
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
