"""A judge run started from the lead's study page: its parameters, its body and its failures.

The body calls the same :func:`~annotator.judge.runner.run_judge` as
``annotator judge``, with the endpoint looked up by name in the instance's
``JUDGE_ENDPOINTS`` (:mod:`annotator.judge.endpoints`) when the run starts.
The parameters a job keeps (and shows, and joins on) are the lead's choices
only: the endpoint's name, never its key, which is read from the environment
of the process running the job and kept out of every message it leaves.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime

from sqlmodel import Session, select

from ..models import Study
from ..redaction import redact
from ..words import plural
from .endpoints import JudgeEndpoint, endpoint_api_key, judge_endpoints
from .history import FailureRow, judge_failures, scores_version
from .runner import JudgeReport, run_judge
from .tasks import JudgeError, JudgeSettings

__all__ = [
    "KIND",
    "JudgeRunParams",
    "judge_job_body",
    "progress_message",
    "request_judge_run",
    "run_failures",
    "run_judge_job",
]

log = logging.getLogger(__name__)

# The job kind (annotator.jobs.kinds.KINDS names judge_job_body for it).
KIND = "judge"

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
        f"{done} of {plural(total, 'score')} asked for ({report.cached} already stored): "
        f"{report.stored} stored, {report.failed} failed; {plural(report.requests, 'request')}, "
        f"{plural(report.tokens, 'token')} ({report.prompt_tokens} prompt, "
        f"{report.completion_tokens} completion)"
    )


def _redact(text: str, secret: str | None, endpoint: JudgeEndpoint) -> str:
    # A server's refusal may quote the key it was sent (OpenAI's "Incorrect API
    # key provided: ..."): the message goes into the job's row and page without
    # it, nor any other secret of the instance. Nor the endpoint's address: the
    # page is open to every member (analysts too), and an internal address
    # (a vLLM box, a proxy) is the operator's business; the log keeps it.
    text = redact(text, [secret])
    url, name = endpoint.base_url.rstrip("/"), f"the endpoint {endpoint.name!r}"
    return text.replace(f"the address {url}", f"the address of {name}").replace(url, name)


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
        log.warning("judge run on %s stopped: %s", endpoint.base_url, redact(str(exc), [api_key]))
        raise JudgeError(_redact(str(exc), api_key, endpoint)) from None
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


def request_judge_run(
    session: Session, study: Study, params: JudgeRunParams, *, created_by: int | None
):
    """The job judging ``study`` as ``params`` say: ``(job, created)``; the caller commits.

    A queued or running run with the same parameters is joined, whatever was
    stored since it started (it stores scores, which changes the study's data
    version). A finished one is joined only while no score or judge failure was
    stored anywhere since: asking again after a run with failures asks for them
    anew, and after a run that stored everything shows that run.
    """
    from ..jobs import (
        Job,
        JobStatus,
        lock_study_jobs,
        params_key,
        request_job,
        take_back_stale_jobs,
        version_key,
    )

    asked = params.as_json()
    # Two identical posts at once must not start two paid runs.
    lock_study_jobs(session, study)
    running = session.exec(
        select(Job)
        .where(
            Job.study_id == study.id,
            Job.kind == KIND,
            Job.params_key == params_key(asked),
            Job.status.in_((JobStatus.QUEUED, JobStatus.RUNNING)),
        )
        .order_by(Job.id.desc())
        .limit(1)
    ).first()
    if running is not None:
        if running.status == JobStatus.RUNNING:
            # Its worker may be dead: then it is queued again rather than joined forever.
            take_back_stale_jobs(session)
        return running, False
    version = hashlib.sha256(
        f"{version_key(session, study)} {scores_version(session)}".encode()
    ).hexdigest()
    return request_job(session, study, KIND, asked, created_by=created_by, version=version)


def judge_job_body(ctx):
    """The ``judge`` job: :func:`run_judge_job` with the job's progress and cancellation.

    ``ctx.progress`` raises ``JobCancelled`` once the job was cancelled; inside
    the runner's event loop that would tear down the requests in flight, so the
    runner is stopped through ``should_stop`` instead, and the cancellation
    raised once it has returned, with the scores stored so far committed.
    """
    from flask import current_app

    from ..jobs import Job, JobCancelled, JobStatus

    def report_progress(done: int, total: int, message: str) -> None:
        # On JobCancelled ctx.stopped is set: should_stop says so before the next request.
        with contextlib.suppress(JobCancelled):
            ctx.progress(done, total, message)

    def should_stop() -> bool:
        if not ctx.stopped.is_set():
            # One primary-key read per score asked for: far less than the request
            # itself, and a cancel is seen before the next request rather than
            # at the next heartbeat (seconds of requests later).
            with Session(ctx.engine) as session:
                row = session.exec(
                    select(Job.status, Job.attempt).where(Job.id == ctx.job_id)
                ).first()
            if row is None or tuple(row) != (JobStatus.RUNNING, ctx.attempt):
                ctx.stopped.set()
        return ctx.stopped.is_set()

    from ..services.fresh import queue_dashboards_after

    try:
        run_judge_job(
            ctx.session,
            ctx.study,
            JudgeRunParams.from_json(ctx.params),
            endpoints=judge_endpoints(current_app.config),
            report_progress=report_progress,
            should_stop=should_stop,
        )
    except JudgeError as exc:
        # The scores stored so far are new data too.
        queue_dashboards_after(current_app._get_current_object(), ctx.study.id, "a judge run")
        # Bad input rather than a bug (a key refused, an unknown model): a
        # ValueError, so the job page shows the message without a traceback.
        raise ValueError(
            f"{exc} (the scores stored so far are kept; run again to resume)"
        ) from None
    # The lead's next view of the study shows the new scores' numbers.
    queue_dashboards_after(current_app._get_current_object(), ctx.study.id, "a judge run")
    ctx.check_cancelled()
    return None
