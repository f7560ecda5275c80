"""``annotator judge``: an LLM judge scores the study's items (see annotator.judge)."""

from __future__ import annotations

import os

import click
from flask.cli import with_appcontext

from ._common import fail, progress, study_or_fail

__all__ = ["judge_command"]

SHORT_HELP = "Score the study's items with an LLM judge (any OpenAI-compatible endpoint)."


@click.command(
    "judge",
    short_help=SHORT_HELP,
    help=SHORT_HELP
    + "\n\nScores land as stored LLM scores (as `llm-scores import` stores them) with "
    "their run, temperature and prompt version; a score already stored is never asked "
    "for again, so an interrupted run resumes. The API key is read from the environment "
    "variable named by --api-key-env, never stored.",
)
@click.argument("study")
@click.option("--model", required=True, help="The model name the endpoint knows.")
@click.option(
    "--base-url",
    help="The endpoint, e.g. http://127.0.0.1:8000/v1 (vLLM, llama.cpp server, Ollama); "
    "default: OpenAI's API (or OPENAI_BASE_URL).",
)
@click.option(
    "--scale", "scales", multiple=True, help="Only this scale (repeatable); default: all."
)
@click.option("--runs", type=click.IntRange(min=1), default=1, show_default=True)
@click.option(
    "--temperature",
    type=click.FloatRange(0, 2),
    help="Default: the study's [validation] temperature, else 1 (the paper's).",
)
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True)
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N items.")
@click.option(
    "--attempts",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Requests per score when replies hold no valid score, before a failure is recorded.",
)
@click.option(
    "--max-retries",
    type=click.IntRange(min=0),
    default=6,
    show_default=True,
    help="Retries of a request on 429, 5xx and lost connections, with backoff.",
)
@click.option("--max-tokens", type=click.IntRange(min=1), help="Longest reply to ask for.")
@click.option(
    "--logprobs",
    is_flag=True,
    help="Also store the expected score from the top log-probabilities of the score token, "
    'as model "MODEL (expected)" (scales of at most 11 whole points, e.g. 0-5, 0-10).',
)
@click.option(
    "--api-key-env",
    default="OPENAI_API_KEY",
    show_default=True,
    help="The environment variable holding the API key (local servers need none).",
)
@with_appcontext
def judge_command(
    study: str,
    model: str,
    base_url: str | None,
    scales: tuple[str, ...],
    runs: int,
    temperature: float | None,
    concurrency: int,
    limit: int | None,
    attempts: int,
    max_retries: int,
    max_tokens: int | None,
    logprobs: bool,
    api_key_env: str,
) -> None:
    from ..db import session_scope
    from ..judge.runner import JudgeError, JudgeSettings, run_judge
    from ..study.studyfile import validation_settings

    api_key = os.environ.get(api_key_env) or None
    if api_key is None and base_url is None and not os.environ.get("OPENAI_BASE_URL"):
        fail(f"set {api_key_env} to the API key (or give --base-url for a local server)")
    options = dict(
        model=model,
        base_url=base_url,
        api_key=api_key,
        scales=scales,
        runs=runs,
        concurrency=concurrency,
        limit=limit,
        attempts=attempts,
        max_retries=max_retries,
        max_tokens=max_tokens,
        logprobs=logprobs,
    )
    try:
        with session_scope() as session:
            the_study = study_or_fail(session, study)
            if temperature is None:
                temperature = validation_settings(the_study.source_toml).temperature
            try:
                settings = JudgeSettings(
                    **options, temperature=1.0 if temperature is None else temperature
                )
            except ValueError as exc:
                fail(str(exc))
            report = run_judge(session, the_study, settings, progress=progress())
    except JudgeError as exc:
        fail(f"{exc} (the scores stored so far are kept; run the command again to resume)")
    for line in report.failures[:10]:
        click.echo(f"failed: {line}", err=True)
    if len(report.failures) > 10:
        click.echo(f"... and {len(report.failures) - 10} more failure(s)", err=True)
    click.echo(f"{model} on {study} at temperature {settings.temperature:g}: {report.summary()}.")
    if report.failed:
        click.echo("Failed scores are kept with their replies; run again to ask for them anew.")
