"""Exports of a study's data to a file or standard output."""

from __future__ import annotations

from pathlib import Path

import click
from flask.cli import with_appcontext

from ..words import plural
from ._common import fail, judge_temperature_option, runs_option, study_or_fail, where_option

__all__ = ["export_command"]


@click.command("export")
@click.argument("study")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["long", "matrix", "alttest", "demographics"]),
    required=True,
)
@click.option("--scale", help="Scale name (required for matrix and alttest when several).")
@click.option("--benchmark", help="Only items of this benchmark.")
@click.option(
    "--criterion",
    help="matrix, alttest: the rubric criterion (required when the study has several).",
)
@click.option(
    "--complete",
    is_flag=True,
    help="matrix: keep the largest complete crossed block (an overlap design: the anchor block).",
)
@click.option(
    "--temperature",
    type=click.FloatRange(min=0),
    help="matrix, alttest: the LLM scores' temperature (default: the study's "
    "[validation] temperature).",
)
@judge_temperature_option
@runs_option
@where_option
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Output file; '-' writes to standard output.",
)
@with_appcontext
def export_command(
    study: str,
    fmt: str,
    scale: str | None,
    benchmark: str | None,
    criterion: str | None,
    complete: bool,
    temperature: float | None,
    judge_temperatures: tuple[tuple[str, float], ...],
    runs: str,
    where: tuple[str, ...],
    out: Path,
) -> None:
    """Export a study's ratings and LLM scores."""
    from ..data.exporters import ExportError, render_export
    from ..data.selection import parse_where
    from ..db import session_scope

    try:
        with session_scope() as session:
            export = render_export(
                session,
                study_or_fail(session, study),
                fmt,
                scale=scale,
                benchmark=benchmark,
                criterion=criterion,
                complete=complete,
                temperature=temperature,
                judge_temperatures=judge_temperatures or None,
                runs=runs,
                where=parse_where(where),
            )
            # Written inside the session: the long export is read as it is written.
            if str(out) == "-":
                for part in export.parts():
                    click.echo(part, nl=False)
            else:
                out.parent.mkdir(parents=True, exist_ok=True)
                with open(out, "w", encoding="utf-8", newline="") as handle:
                    for part in export.parts():
                        handle.write(part)
    except ExportError as exc:
        choices = f" ({', '.join(exc.choices)})" if exc.choices else ""
        fail(f"{exc}; choose one with --{exc.field}{choices}")
    if export.notes:
        click.echo(export.notes, err=True)
    if str(out) != "-":
        click.echo(f"Wrote {fmt} export ({plural(export.rows, 'row')}) to {out}.", err=True)
