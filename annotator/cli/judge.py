"""``annotator judge``: an LLM judge scores the study's items (see annotator.judge),
and ``annotator judge failures`` lists the requests that gave no valid score."""

from __future__ import annotations

import json
import os

import click
from flask.cli import with_appcontext

from ..words import plural
from ._common import fail, progress, study_or_fail

__all__ = ["judge_group", "judge_command", "failures_command"]

SHORT_HELP = "Score the study's items with an LLM judge (any OpenAI-compatible endpoint)."


class _DefaultRunGroup(click.Group):
    """A group whose first argument, when it names no subcommand, is the study
    of ``run``: ``annotator judge STUDY --model M`` stays what it always was.

    Click has no default subcommand; click-default-group adds one, but for this
    one group a dependency is more than the four lines below.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = ["run", *args]
        return super().parse_args(ctx, args)


@click.group(
    "judge",
    cls=_DefaultRunGroup,
    short_help=SHORT_HELP,
    help=SHORT_HELP
    + "\n\n`annotator judge STUDY --model M ...` is `annotator judge run STUDY ...` "
    "(see `annotator judge run --help`); `annotator judge failures STUDY` lists the "
    "replies that held no valid score. (A study whose slug is a subcommand's name is "
    "judged with `annotator judge run SLUG`.)",
)
def judge_group() -> None:
    pass


@judge_group.command(
    "run",
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
    "--criteria",
    "criteria",
    type=click.Choice(["each", "together"]),
    default="each",
    show_default=True,
    help="In a study with [[criteria]]: a request per criterion with its name and "
    "definition, or one request per item whose reply is a JSON object of scores by "
    "criterion (a criterion missing from it is asked again, then a failure of its own).",
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
    criteria: str,
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
        criteria=criteria,
    )
    study_id = None
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
            study_id = the_study.id
            report = run_judge(session, the_study, settings, progress=progress())
    except JudgeError as exc:
        _fresh_numbers(study_id)
        fail(f"{exc} (the scores stored so far are kept; run the command again to resume)")
    _fresh_numbers(study_id)
    for line in report.failures[:10]:
        click.echo(f"failed: {line}", err=True)
    if len(report.failures) > 10:
        click.echo(f"... and {plural(len(report.failures) - 10, 'more failure')}", err=True)
    click.echo(f"{model} on {study} at temperature {settings.temperature:g}: {report.summary()}.")
    if report.failed:
        click.echo("Failed scores are kept with their replies; run again to ask for them anew.")


def _fresh_numbers(study_id: int | None) -> None:
    # The lead's next view of the study shows the new scores' numbers.
    from flask import current_app

    if study_id is None:
        return

    from ..services.fresh import queue_dashboards_after

    queue_dashboards_after(current_app._get_current_object(), study_id, "a judge run")


def _clip(text: str | None, width: int) -> str:
    if text is None:
        return "(no reply)"
    # One line per failure: the reply's line breaks shown, as in a Python string.
    flat = text.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")
    return flat if len(flat) <= width else flat[: width - 1] + "…"


@judge_group.command(
    "failures",
    short_help="List the judge requests whose replies held no valid score.",
    help="List the judge requests of STUDY whose replies held no valid score (stored by "
    "`annotator judge`, never as scores): item, scale, model, run, temperature, prompt "
    "version, time (UTC), the reply (cut to one line) and why it was refused. "
    "'scored' marks a failure a later run asked again and got a score for. "
    "--json prints every field, the whole reply included.",
)
@click.argument("study")
@click.option("--model", help="Only this model's failures.")
@click.option("--scale", help="Only this scale's failures.")
@click.option("--open", "only_open", is_flag=True, help="Only failures still without a score.")
@click.option("--json", "as_json", is_flag=True, help="One JSON list, whole replies.")
@with_appcontext
def failures_command(
    study: str, model: str | None, scale: str | None, only_open: bool, as_json: bool
) -> None:
    from ..db import session_scope
    from ..judge.history import judge_failures

    with session_scope() as session:
        the_study = study_or_fail(session, study)
        try:
            rows = judge_failures(session, the_study, model=model, scale=scale)
        except ValueError as exc:
            fail(str(exc).removeprefix("scale: "))
    if only_open:
        rows = [row for row in rows if not row.scored_since]
    if as_json:
        click.echo(json.dumps([row.as_json() for row in rows], indent=2, ensure_ascii=False))
        return
    if not rows:
        click.echo(f"No judge failures stored for {study}.")
        return
    click.echo(
        f"{'item':<12} {'scale':<8} {'model':<20} {'run':<22} {'temp':>5} {'prompt':<12} "
        f"{'time (UTC)':<16} {'state':<6} reply | error"
    )
    for row in rows:
        click.echo(
            f"{row.where:<12} {row.scale:<8} {row.model:<20} {row.run:<22} "
            f"{row.temperature:>5g} {row.prompt_hash[:12]:<12} "
            f"{row.created_at:%Y-%m-%d %H:%M} {'scored' if row.scored_since else 'open':<6} "
            f"{_clip(row.raw_reply, 40)} | {_clip(row.error, 60)}"
        )
    still = sum(not row.scored_since for row in rows)
    click.echo(f"{plural(len(rows), 'failure')}, {still} still without a score.")
