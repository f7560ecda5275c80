"""``annotator verdict``: the answer first, may each judge replace the raters?

It prints the verdict table the dashboard and the report open with
(:func:`annotator.analysis.verdict.verdict_summary`, worded by
:func:`annotator.render.verdict.verdict_lines`). Only click and Flask's CLI helpers
load at import; pandas and the statistics load when the command runs.
"""

from __future__ import annotations

import json

import click
from flask.cli import with_appcontext

from ._common import judge_temperature_option, study_or_fail, where_option

__all__ = ["verdict_command"]

FORMATS = ("table", "csv", "json")


def _summary(slug: str, criteria: tuple[str, ...], where: tuple[str, ...], temperatures):
    from dataclasses import replace

    from ..analysis.study_analysis import analyse
    from ..analysis.verdict import verdict_summary
    from ..data.frames import study_frames
    from ..db import session_scope
    from ..services.settings import study_settings_where

    with session_scope() as session:
        study = study_or_fail(session, slug)
        overrides = {"judge_temperatures": temperatures} if temperatures else {}
        try:
            settings = study_settings_where(session, study, where, **overrides)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--where") from exc
        frames = study_frames(session, study)
    one = criteria[0] if len(criteria) == 1 else None
    try:
        analysis = analyse(frames, settings, parts=("alttest", "judge_assisted"), criterion=one)
    except ValueError as exc:
        raise click.UsageError(f"--criterion: {exc}") from exc
    summary = verdict_summary(analysis)
    if len(criteria) > 1:
        unknown = [c for c in criteria if c not in analysis.criteria]
        if unknown:
            known = ", ".join(analysis.criteria) or "none: the study has no [[criteria]]"
            raise click.UsageError(
                f"--criterion: unknown criterion {unknown[0]!r} (known: {known})"
            )
        summary = replace(
            summary,
            rows=tuple(v for v in summary.rows if v.criterion in criteria),
            criteria=tuple(c for c in summary.criteria if c in criteria),
        )
    return summary


def _print_table(slug: str, summary) -> None:
    from ..render.verdict import VERDICT_HEADERS, verdict_lines

    ci = f"{100 * summary.confidence:g}% CI"
    heads = [h.format(ci=ci) for h in VERDICT_HEADERS]
    click.echo(
        f"May the judge replace the raters? Study {slug!r}, alt-test at epsilon "
        f"{summary.epsilon:g}."
    )
    lines = verdict_lines(summary)
    if not lines:
        click.echo(
            "  Not decided yet: no judge has scored the study's items at the main temperature."
        )
        return
    # The short columns side by side; the long ones (judge-assisted means, what it
    # still needs) on their own lines under each verdict, to fit a terminal.
    short = [line.cells()[:6] for line in lines]
    widths = [max(len(heads[i]), *(len(row[i]) for row in short)) for i in range(6)]
    click.echo(
        "  " + "  ".join(h.ljust(w) for h, w in zip(heads[:6], widths, strict=True)).rstrip()
    )
    for line, row in zip(lines, short, strict=True):
        click.echo("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        if line.assisted:
            click.echo(f"      {heads[6]}: {line.assisted}")
        if line.needs:
            click.echo(f"      {heads[7].lower()}: {line.needs}")


@click.command("verdict")
@click.argument("study")
@click.option(
    "--criterion",
    "criteria",
    multiple=True,
    help="Only this criterion of a study with [[criteria]] (repeatable; default: every one).",
)
@where_option
@judge_temperature_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="table",
    show_default=True,
    help="A table to read, CSV (one row per judge, scale and criterion) or JSON.",
)
@with_appcontext
def verdict_command(
    study: str,
    criteria: tuple[str, ...],
    where: tuple[str, ...],
    judge_temperatures,
    fmt: str,
) -> None:
    """May each judge replace the raters? The alt-test's verdict per judge and scale."""
    summary = _summary(study, criteria, where, judge_temperatures)
    if fmt == "json":
        click.echo(json.dumps({"study": study, **summary.to_dict()}, indent=2))
    elif fmt == "csv":
        click.echo(summary.to_frame().to_csv(index=False), nl=False)
    else:
        _print_table(study, summary)
