"""Studies: create one from its study file, list them, share them with leads."""

from __future__ import annotations

from pathlib import Path

import click
from flask.cli import AppGroup

from ..words import plural
from ._common import fail

__all__ = ["study_group"]

study_group = AppGroup("study", help="Define, update and list studies.")


@study_group.command("create")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--owner",
    metavar="EMAIL",
    help="The lead who owns the study (default: the only lead; with several leads, "
    "nobody until `study share`, and only the admins see it).",
)
def study_create(file: Path, owner: str | None) -> None:
    """Create a study from a TOML study file."""
    from ..db import session_scope
    from ..models import StudyRole
    from ..study.members import default_owner, share_study
    from ..study.studies import StudyExists, create_study, lead_by_email
    from ..study.studyfile import StudyFileError, load_study_file

    try:
        spec = load_study_file(file)
        with session_scope() as session:
            try:
                lead = lead_by_email(session, owner) if owner else default_owner(session)
            except ValueError as exc:
                fail(f"--owner: {exc}")
            study = create_study(session, spec, source_toml=file.read_text("utf-8"))
            if lead is not None:
                share_study(session, study, lead, StudyRole.OWNER, actor=None, via="cli")
            click.echo(
                f"Study {study.slug!r} created: {plural(len(spec.scales), 'scale')} "
                f"({', '.join(s.name for s in spec.scales)}), "
                f"{plural(len(spec.benchmarks), 'benchmark')}, "
                f"{plural(len(spec.demographics), 'demographic question')}."
            )
            if lead is not None:
                click.echo(f"Owner: {lead.email}.")
            else:
                click.echo(
                    "No owner yet: only the admins see it; give it one with "
                    f"`annotator study share {study.slug} EMAIL --role owner`."
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
    from ..services.overview import study_overviews

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


@study_group.command("share")
@click.argument("study")
@click.argument("email")
@click.option(
    "--role",
    type=click.Choice(["owner", "analyst"]),
    required=True,
    help="owner: everything; analyst: the dashboard, report and exports, no changes.",
)
def study_share(study: str, email: str, role: str) -> None:
    """Make the lead EMAIL a member of STUDY with ROLE (or change their role)."""
    from ..db import session_scope
    from ..study.members import MembershipError, share_study
    from ..study.studies import lead_by_email
    from ._common import study_or_fail

    try:
        with session_scope() as session:
            the_study = study_or_fail(session, study)
            lead = lead_by_email(session, email)
            changed = share_study(session, the_study, lead, role, actor=None, via="cli")
            address = lead.email
    except ValueError as exc:  # MembershipError too
        fail(str(exc) if isinstance(exc, MembershipError) else f"EMAIL: {exc}")
    if changed:
        click.echo(f"{address} is now {role} of study {study!r}. This has been logged.")
    else:
        click.echo(f"{address} already is {role} of study {study!r}; nothing changed.")


@study_group.command("unshare")
@click.argument("study")
@click.argument("email")
def study_unshare(study: str, email: str) -> None:
    """End the lead EMAIL's membership of STUDY (never its last owner's)."""
    from ..db import session_scope
    from ..study.members import MembershipError, unshare_study
    from ..study.studies import lead_by_email
    from ._common import study_or_fail

    try:
        with session_scope() as session:
            the_study = study_or_fail(session, study)
            lead = lead_by_email(session, email)
            previous = unshare_study(session, the_study, lead, actor=None, via="cli")
            address = lead.email
    except ValueError as exc:
        fail(str(exc) if isinstance(exc, MembershipError) else f"EMAIL: {exc}")
    if previous is None:
        click.echo(f"{address} is no member of study {study!r}; nothing changed.")
    else:
        click.echo(
            f"{address} ({previous.value}) is no longer a member of study {study!r}. "
            "This has been logged."
        )


@study_group.command("members")
@click.argument("study")
def study_members_command(study: str) -> None:
    """List STUDY's members and their roles (admins see every study besides)."""
    from ..db import session_scope
    from ..study.members import admins, study_members
    from ._common import study_or_fail

    with session_scope() as session:
        the_study = study_or_fail(session, study)
        members = study_members(session, the_study)
        admin_emails = [user.email for user in admins(session)]
    if not members:
        click.echo(f"Study {study!r} has no members.")
    for member in members:
        click.echo(f"{member.role.value:<8} {member.email}")
    if admin_emails:
        click.echo(f"Admins (see every study): {', '.join(admin_emails)}")
