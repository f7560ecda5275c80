"""Raters: invite links and personal return links."""

from __future__ import annotations

import click
from flask.cli import AppGroup

from ._common import base_url_or_default, fail, study_or_fail, where_option

__all__ = ["raters_group"]

raters_group = AppGroup("raters", help="Raters and their invites.")


@raters_group.command("invite")
@click.argument("study")
@click.option("--count", "-n", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--base-url", help="Address of the server (default: ANNOTATOR_BASE_URL).")
def raters_invite(study: str, count: int, base_url: str | None) -> None:
    """Print COUNT single-use invite links, one per line."""
    from ..db import session_scope
    from ..study.studies import create_invites, invite_url

    with session_scope() as session:
        invites = create_invites(session, study_or_fail(session, study), count)
        tokens = [invite.token for invite in invites]
    for token in tokens:
        click.echo(invite_url(token, base_url_or_default(base_url)))


@raters_group.command("links")
@click.argument("study")
@click.option("--rater", "code", help="Only this rater's link (the code in any case).")
@click.option("--rotate", is_flag=True, help="Replace the link(s) first; old ones stop working.")
@click.option("--base-url", help="Address of the server (default: ANNOTATOR_BASE_URL).")
def raters_links(study: str, code: str | None, rotate: bool, base_url: str | None) -> None:
    """Print each rater's personal return link as CODE<TAB>URL.

    Raters whose ratings were imported, and raters who declined, have none.
    Every replacement is logged.
    """
    from ..collect.enrolment import no_return_link, return_url
    from ..db import session_scope
    from ..study.raters import rotate_return_link
    from ..study.studies import study_raters

    with session_scope() as session:
        raters = study_raters(session, study_or_fail(session, study), code=code)
        if code is not None and not raters:
            fail(f"study {study!r} has no rater with code {code!r}")
        if code is not None and all(r.return_token is None for r in raters):
            fail(no_return_link(raters[0]))
        raters = [r for r in raters if r.return_token is not None]
        if rotate:
            for rater in raters:
                rotate_return_link(session, rater, actor=None, via="cli")
        lines = [(rater.rater_code, rater.return_token) for rater in raters]
    for rater_code, token in lines:
        click.echo(f"{rater_code}\t{return_url(token, base_url_or_default(base_url))}")


@raters_group.command("quality")
@click.argument("study")
@click.option("--scale", help="Only this scale (default: every scale).")
@where_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def raters_quality(study: str, scale: str | None, where: tuple[str, ...], as_json: bool) -> None:
    """Per rater: agreement with the others, attention checks, test-retest, timing, flags.

    Straight-lining: one value for at least 80% of the items; speeding: median seconds
    per item below 0.3 times the study's median (docs/analysis.md, rater quality).
    """
    import json

    from ..analysis.rater_quality import study_rater_quality
    from ..db import session_scope

    with session_scope() as session:
        try:
            table = study_rater_quality(
                session, study_or_fail(session, study), scale=scale, where=where
            )
        except ValueError as exc:
            fail(str(exc))
    if as_json:
        click.echo(json.dumps(table.to_dict(), indent=2))
        return
    click.echo(table.to_text())
