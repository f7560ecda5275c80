"""``annotator report``: the study report as a self-contained HTML file, and its tables.

Listed in ``annotator.cli.COMMANDS``. The module imports only click and Flask's CLI
helpers; pandas, matplotlib and the analysis load when the command runs, so
``annotator --help`` stays fast.
"""

from __future__ import annotations

import gc
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

import click
from flask.cli import with_appcontext

from ..cli._common import runs_option, where_option

__all__ = ["report_command"]


def _write_atomically(path: Path, text: str) -> None:
    """Write through a temporary file in the same folder: never a half-written report."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as fh:
            fh.write(text)
        # mkstemp makes the file private (0600); a report is an ordinary file,
        # so give it the permissions the user's umask gives any new file.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


@contextmanager
def _fewer_collections():
    """Run the report with the cyclic garbage collector mostly out of the way.

    The report makes hundreds of thousands of short-lived objects (matplotlib artists,
    pandas frames); at the default thresholds the collector runs every 700 of them and
    its older generations walk the million objects of the imported libraries again and
    again: about a tenth of the command's time. What exists now is frozen (never walked
    again) and the young generation collected every 50,000 allocations. The settings are
    put back after, for the tests that run the command in their own process.
    """
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


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
@runs_option
@where_option
@with_appcontext
def report_command(
    study: str,
    out: Path,
    tables_dir: Path | None,
    latex_dir: Path | None,
    runs: str,
    where: tuple[str, ...],
) -> None:
    """Write the validation report of STUDY: the paper's Tables 1-6, alt-test and plots."""
    from ..db import session_scope
    from ..study.studies import get_study
    from .report import build_report
    from .settings import study_settings_where

    with session_scope() as session, _fewer_collections():
        the_study = get_study(session, study)
        if the_study is None:
            raise click.ClickException(f"no study with slug {study!r}")
        try:
            settings = study_settings_where(session, the_study, where, runs=runs)
            # fork: the alt-test part in a second process (.report.apart); the web
            # server's download stays in one.
            report = build_report(session, the_study, settings=settings, fork=True)
        except ValueError as exc:
            raise click.ClickException(f"study {study!r}: {exc}") from exc
    _write_atomically(out, report.html)
    click.echo(f"Wrote the report of {study!r} to {out}.", err=True)
    if tables_dir is not None:
        from .table_files import write_csv_tables

        written = write_csv_tables(report.tables, tables_dir)
        click.echo(f"Wrote {len(written)} CSV table(s) to {tables_dir}.", err=True)
    if latex_dir is not None:
        from .table_files import write_latex_tables

        written = write_latex_tables(report.tables, latex_dir)
        click.echo(f"Wrote {len(written)} LaTeX table(s) to {latex_dir}.", err=True)
    for note in getattr(report.tables, "notes", []) or []:
        click.echo(f"note: {note}", err=True)
