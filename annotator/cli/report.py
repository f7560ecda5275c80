"""``annotator report``: the study report as a self-contained HTML file, and its tables.

Listed in ``annotator.cli.COMMANDS``. The module imports only click and Flask's CLI
helpers; pandas, matplotlib and the analysis load when the command runs, so
``annotator --help`` stays fast.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import click
from flask.cli import with_appcontext

from ..words import plural
from ._common import judge_temperature_option, runs_option, where_option

__all__ = ["report_command"]


def _write_atomically(path: Path, text: str) -> None:
    """Write through a temporary file in the same folder: never a half-written report."""
    _write_bytes_atomically(path, text.encode("utf-8"))


def _write_bytes_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` through a temporary file in the same folder, as :func:`_write_atomically`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as fh:
            fh.write(data)
        # mkstemp makes the file private (0600); a report is an ordinary file,
        # so give it the permissions the user's umask gives any new file.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


@click.command("report")
@click.argument("study")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The HTML file to write (self-contained: plots inline, no network).",
)
@click.option(
    "--tables",
    "tables_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Also write each table as CSV into this folder (scales.csv, models.csv, alttest.csv, ...).",
)
@click.option(
    "--latex",
    "latex_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Also write each table as a LaTeX tabular into this folder.",
)
@click.option(
    "--figures",
    "figures_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Also write each figure into this folder, named by its key (figure2.pdf, icc.pdf, ...).",
)
@click.option(
    "--figure-format",
    type=click.Choice(["png", "svg", "pdf"]),
    default="pdf",
    show_default=True,
    help="The format of the --figures files: svg and pdf are vector formats for papers.",
)
@judge_temperature_option
@runs_option
@where_option
@with_appcontext
def report_command(
    study: str,
    out: Path,
    tables_dir: Path | None,
    latex_dir: Path | None,
    figures_dir: Path | None,
    figure_format: str,
    judge_temperatures: tuple[tuple[str, float], ...],
    runs: str,
    where: tuple[str, ...],
) -> None:
    """Write the validation report of STUDY: the paper's Tables 1-6, alt-test and plots."""
    from ..db import session_scope
    from ..services.report import build_report
    from ..services.settings import study_settings_where
    from ..study.studies import get_study

    with session_scope() as session:
        the_study = get_study(session, study)
        if the_study is None:
            raise click.ClickException(f"no study with slug {study!r}")
        try:
            overrides = {"judge_temperatures": judge_temperatures} if judge_temperatures else {}
            settings = study_settings_where(session, the_study, where, runs=runs, **overrides)
            report = build_report(
                session,
                the_study,
                settings=settings,
                figure_format=figure_format if figures_dir is not None else None,
            )
        except ValueError as exc:
            raise click.ClickException(f"study {study!r}: {exc}") from exc
    _write_atomically(out, report.html)
    click.echo(f"Wrote the report of {study!r} to {out}.", err=True)
    if tables_dir is not None:
        from ..render.table_files import write_csv_tables

        written = write_csv_tables(report.tables, tables_dir, rubric=report.rubric)
        click.echo(f"Wrote {plural(len(written), 'CSV table')} to {tables_dir}.", err=True)
    if latex_dir is not None:
        from ..render.table_files import write_latex_tables

        written = write_latex_tables(report.tables, latex_dir)
        click.echo(f"Wrote {plural(len(written), 'LaTeX table')} to {latex_dir}.", err=True)
    if figures_dir is not None:
        figures_dir.mkdir(parents=True, exist_ok=True)
        for key, data in report.figure_files.items():
            _write_bytes_atomically(figures_dir / f"{key}.{figure_format}", data)
        click.echo(
            f"Wrote {plural(len(report.figure_files), figure_format.upper() + ' figure')} "
            f"to {figures_dir}.",
            err=True,
        )
    # Grouped by reason as the report's "Not computed, and why" list: a rubric study's
    # alt-test reason holds for every criterion and judge, said once with what it is for.
    from ..render.report.omitted import not_computed

    for entry in not_computed(getattr(report.tables, "notes", []) or [], []):
        held = f" ({'; '.join(entry.items)})" if entry.items else ""
        click.echo(f"not computed{held}: {entry.why}", err=True)
