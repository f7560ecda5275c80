"""A judge run started from the lead's study page: its parameters, its body and its failures.

The body calls the same :func:`~annotator.judge.runner.run_judge` as
``annotator judge``, with the endpoint looked up by name in the instance's
``JUDGE_ENDPOINTS`` (:mod:`annotator.judge.endpoints`) when the run starts.
The parameters a job keeps (and shows, and joins on) are the lead's choices
only: the endpoint's name, never its key, which is read from the environment
of the process running the job and kept out of every message it leaves.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime

from sqlmodel import Session

from ..models import Study
from .endpoints import JudgeEndpoint, endpoint_api_key
from .history import FailureRow, judge_failures
from .plan import JudgeError, JudgeSettings
from .runner import JudgeReport, run_judge

__all__ = ["JudgeRunParams", "progress_message", "run_failures", "run_judge_job"]

# A job's progress is written at most this often (seconds), and at the end:
# a run of thousands of quick local requests would otherwise write as often as it stores.
PROGRESS_EVERY = 0.5


@dataclass(frozen=True)
class JudgeRunParams:
    """What the lead chose: the job's parameters (JSON), nothing secret."""

    endpoint: str
    model: str
    # Scale names, in the study's order; never empty (the form asks for one at least).
    scales: tuple[str, ...]
    runs: int
    temperature: float
    # At most this many items; None: all.
    limit: int | None = None

    def as_json(self) -> dict:
        return {**asdict(self), "scales": list(self.scales)}

    @classmethod
    def from_json(cls, data: Mapping) -> JudgeRunParams:
        return cls(**{**data, "scales": tuple(data["scales"])})


def progress_message(report: JudgeReport, done: int, total: int) -> str:
    """One line for the job page: scores, requests, failures and tokens so far."""
    return (
        f"{done} of {total} score(s) asked for ({report.cached} already stored): "
        f"{report.stored} stored, {report.failed} failed; {report.requests} request(s), "
        f"{report.tokens} token(s) ({report.prompt_tokens} prompt, "
        f"{report.completion_tokens} completion)"
    )


def _redact(text: str, secret: str | None) -> str:
    # A server's refusal may quote the key it was sent (OpenAI's "Incorrect API
    # key provided: ..."): the message goes into the job's row and page without it.
    return text.replace(secret, "[the API key]") if secret else text


def run_judge_job(
    session: Session,
    study: Study,
    params: JudgeRunParams,
    *,
    endpoints: Mapping[str, JudgeEndpoint],
    report_progress: Callable[[int, int, str], None],
    should_stop: Callable[[], bool],
    clock: Callable[[], float] = time.monotonic,
    client_factory: Callable[[JudgeSettings], object] | None = None,
) -> dict:
    """Judge ``study`` as ``params`` say; the run's figures as a JSON-able dict.

    ``report_progress(done, total, message)`` is called at the start, at most
    every ``PROGRESS_EVERY`` seconds of ``clock`` and at the end;
    ``should_stop()`` is asked between requests (a cancelled job): the scores
    stored so far stay, and the result says ``cancelled``. ``JudgeError`` for a
    run that cannot start or go on (unknown endpoint, key unset or refused,
    unknown model), its message free of the key.
    """
    endpoint = endpoints.get(params.endpoint)
    if endpoint is None:
        raise JudgeError(
            f"the endpoint {params.endpoint!r} is no longer in the instance's JUDGE_ENDPOINTS"
        )
    try:
        api_key = endpoint_api_key(endpoint)
    except ValueError as exc:
        raise JudgeError(str(exc)) from None
    try:
        settings = JudgeSettings(
            model=params.model,
            base_url=endpoint.base_url,
            api_key=api_key,
            scales=params.scales,
            runs=params.runs,
            temperature=params.temperature,
            limit=params.limit,
        )
    except ValueError as exc:
        raise JudgeError(str(exc)) from None
    last = [float("-inf")]

    def progressed(report: JudgeReport, done: int, total: int) -> None:
        moment = clock()
        if done == total or done == 0 or moment - last[0] >= PROGRESS_EVERY:
            last[0] = moment
            report_progress(done, total, progress_message(report, done, total))

    try:
        report = run_judge(
            session,
            study,
            settings,
            client_factory=client_factory,
            on_progress=progressed,
            should_stop=should_stop,
        )
    except JudgeError as exc:
        raise JudgeError(_redact(str(exc), api_key)) from None
    figures = {
        name: getattr(report, name)
        for name in (
            "scores",
            "cached",
            "stored",
            "failed",
            "requests",
            "prompt_tokens",
            "completion_tokens",
            "cancelled",
        )
    }
    return {**figures, "tokens": report.tokens, "summary": report.summary()}


def run_failures(
    session: Session, study: Study, params: JudgeRunParams, *, since: datetime
) -> list[FailureRow]:
    """The failures a run with ``params`` stored from ``since`` on, newest first.

    A failure row names its model, temperature and scale but not the job that
    stored it: the run's are those of its settings stored after it started.
    """
    chosen = set(params.scales)
    # Stored naive, in UTC (history._utc).
    since = since.astimezone(UTC).replace(tzinfo=None) if since.tzinfo is not None else since
    rows = [
        row
        for row in judge_failures(session, study, model=params.model)
        if row.scale in chosen
        and row.temperature == params.temperature
        and row.created_at.replace(tzinfo=None) >= since
    ]
    return rows[::-1]
