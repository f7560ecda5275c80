"""Studies: create one from its study file, list them."""

from __future__ import annotations

from pathlib import Path

import click
from flask.cli import AppGroup

from ._common import fail

__all__ = ["study_group"]

study_group = AppGroup("study", help="Define, update and list studies.")


@study_group.command("create")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def study_create(file: Path) -> None:
    """Create a study from a TOML study file."""
    from ..db import session_scope
    from ..study.studies import StudyExists, create_study
    from ..study.studyfile import StudyFileError, load_study_file

    try:
        spec = load_study_file(file)
        with session_scope() as session:
            study = create_study(session, spec, source_toml=file.read_text("utf-8"))
            click.echo(
                f"Study {study.slug!r} created: {len(spec.scales)} scale(s) "
                f"({', '.join(s.name for s in spec.scales)}), {len(spec.benchmarks)} "
                f"benchmark(s), {len(spec.demographics)} demographic question(s)."
            )
    except (StudyFileError, StudyExists) as exc:
        fail(str(exc))


@study_group.command("update")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def study_update(file: Path) -> None:
    """Update a study from a new version of its study file (same slug).

    The consent, instructions, templates, questions and settings may change;
    each change makes a new study version, which new ratings record. The
    scales and the benchmarks' names may not change.
    """
    from ..db import session_scope
    from ..study.studyfile import StudyFileError, load_study_file
    from ..study.versions import StudyUpdateError, update_study
    from ._common import study_or_fail

    try:
        spec = load_study_file(file)
        with session_scope() as session:
            study = study_or_fail(session, spec.slug)
            result = update_study(
                session, study, spec, source_toml=file.read_text("utf-8"), actor=None
            )
    except (StudyFileError, StudyUpdateError) as exc:
        fail(str(exc))
    if not result.changes:
        click.echo(f"Study {spec.slug!r} unchanged (version {result.version}).")
    else:
        click.echo(
            f"Study {spec.slug!r} updated to version {result.version}: "
            f"{', '.join(result.changes)} changed."
        )


@study_group.command("list")
def study_list() -> None:
    """List the studies with their counts."""
    from ..db import session_scope
    from ..study.overview import study_overviews

    with session_scope() as session:
        rows = study_overviews(session)
    if not rows:
        click.echo("No studies yet; create one with `annotator study create FILE.toml`.")
        return
    click.echo(f"{'slug':<24} {'items':>7} {'raters':>7} {'ratings':>9} {'llm':>9}  name")
    for row in rows:
        click.echo(
            f"{row['study'].slug:<24} {row['n_items']:>7} {row['raters']:>7} "
            f"{row['ratings']:>9} {row['llm_scores']:>9}  {row['study'].name}"
        )


@study_group.command("links")
@click.argument("study")
@click.option("--base-url", help="Address of the server (default: ANNOTATOR_BASE_URL).")
def study_links(study: str, base_url: str | None) -> None:
    """Print the study's entry link for its crowd platform ([crowd] in the study file)."""
    from ..collect.crowd import entry_links, study_crowd
    from ..db import session_scope
    from ._common import base_url_or_default, study_or_fail

    with session_scope() as session:
        the_study = study_or_fail(session, study)
        spec = study_crowd(the_study)
        if spec is None:
            fail(f"study {study!r} has no [crowd] table, so it has no entry link")
        links = entry_links(spec, the_study.slug, base_url_or_default(base_url))
    for label, url in links:
        click.echo(f"{label}:\t{url}")
