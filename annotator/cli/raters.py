"""Raters: invite links, personal return links, withdrawal and exclusion."""

from __future__ import annotations

import click
from flask.cli import AppGroup

from ..words import plural
from ._common import base_url_or_default, fail, study_or_fail, where_option

__all__ = ["raters_group"]

raters_group = AppGroup("raters", help="Raters: invites, return links, withdrawal and exclusion.")


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
@click.option("--rotate", is_flag=True, help="Replace the links first; the old ones stop working.")
@click.option("--base-url", help="Address of the server (default: ANNOTATOR_BASE_URL).")
def raters_links(study: str, code: str | None, rotate: bool, base_url: str | None) -> None:
    """Print each rater's personal return link as CODE<TAB>URL.

    Raters whose ratings were imported, and raters who declined, have none.
    Every replacement is logged.
    """
    from ..db import session_scope
    from ..models import RaterStatus
    from ..study.raters import rotate_return_link
    from ..study.return_links import no_return_link, return_url
    from ..study.studies import study_raters

    with session_scope() as session:
        raters = study_raters(session, study_or_fail(session, study), code=code)
        if code is not None and not raters:
            fail(f"study {study!r} has no rater with code {code!r}")
        if code is not None and all(r.return_token is None for r in raters):
            fail(no_return_link(raters[0]))
        # A withdrawn rater's link is retired: it only says that they withdrew.
        if code is not None and all(r.status == RaterStatus.WITHDRAWN for r in raters):
            fail(f"rater {raters[0].rater_code} has withdrawn; their link is retired")
        raters = [
            r for r in raters if r.return_token is not None and r.status != RaterStatus.WITHDRAWN
        ]
        if rotate:
            for rater in raters:
                rotate_return_link(session, rater, actor=None, via="cli")
        lines = [(rater.rater_code, rater.return_token) for rater in raters]
    for rater_code, token in lines:
        click.echo(f"{rater_code}\t{return_url(token, base_url_or_default(base_url))}")


def _one_rater(session, study_slug: str, code: str):
    from ..study.studies import study_raters

    study = study_or_fail(session, study_slug)
    raters = study_raters(session, study, code=code)
    if not raters:
        fail(f"study {study_slug!r} has no rater with code {code!r}")
    return study, raters[0]


@raters_group.command("withdraw")
@click.argument("study")
@click.argument("code")
@click.option("--reason", default="", help="Why (kept in the audit log).")
def raters_withdraw(study: str, code: str, reason: str) -> None:
    """Mark rater CODE withdrawn: their ratings leave every export and statistic.

    The study file's `withdrawn_ratings` says whether the ratings are kept
    (hidden) or deleted. A withdrawal cannot be undone; with deletion the
    ratings are gone for good. The rater's return link stops working.
    """
    from ..db import session_scope
    from ..study.raters import RaterStatusError, withdraw_rater

    try:
        with session_scope() as session:
            the_study, rater = _one_rater(session, study, code)
            deleted = withdraw_rater(
                session, the_study, rater, actor=None, via="cli", reason=reason or None
            )
            rater_code, kept = rater.rater_code, the_study.withdrawn_ratings == "keep"
    except RaterStatusError as exc:
        fail(str(exc))
    what = "kept but left out" if kept else f"{plural(deleted, 'rating')} deleted"
    click.echo(f"Rater {rater_code} withdrawn ({what}). This has been logged.")


@raters_group.command("exclude")
@click.argument("study")
@click.argument("code")
@click.option("--reason", required=True, help="Why, e.g. 'pilot rater' (kept in the audit log).")
def raters_exclude(study: str, code: str, reason: str) -> None:
    """Leave rater CODE's ratings out of every export and statistic (undo: include)."""
    from ..db import session_scope
    from ..study.raters import RaterStatusError, exclude_rater

    try:
        with session_scope() as session:
            _, rater = _one_rater(session, study, code)
            exclude_rater(session, rater, actor=None, via="cli", reason=reason)
            rater_code = rater.rater_code
    except RaterStatusError as exc:
        fail(str(exc))
    click.echo(f"Rater {rater_code} excluded: {reason}. This has been logged.")


@raters_group.command("include")
@click.argument("study")
@click.argument("code")
def raters_include(study: str, code: str) -> None:
    """Count an excluded rater CODE again (a withdrawal cannot be undone)."""
    from ..db import session_scope
    from ..study.raters import RaterStatusError, include_rater

    try:
        with session_scope() as session:
            _, rater = _one_rater(session, study, code)
            include_rater(session, rater, actor=None, via="cli")
            rater_code = rater.rater_code
    except RaterStatusError as exc:
        fail(str(exc))
    click.echo(f"Rater {rater_code} included again. This has been logged.")


def _moment(text: str | None):
    """An ISO 8601 date or date-time; one without a zone is UTC."""
    from datetime import UTC, datetime

    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        fail(f"--at {text!r} is not an ISO 8601 date or date-time (2026-03-09T09:00)")
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


@raters_group.command("eligible")
@click.argument("study")
@click.option(
    "--at",
    "at_text",
    metavar="DATETIME",
    help="Judge the gaps at this time (ISO 8601, UTC unless it names a zone; default: now).",
)
@click.option("--wave", type=click.IntRange(min=2), help="Only those whose next block is this one.")
def raters_eligible(study: str, at_text: str | None, wave: int | None) -> None:
    """Print the platform ids whose next block is open, one per line.

    Open: the gap after their previous block has passed and the study is not
    finished for them. Paste the list into the next wave's allowlist.
    """
    from ..collect.crowd import study_crowd
    from ..collect.waves import eligible_ids
    from ..db import session_scope

    at = _moment(at_text)
    with session_scope() as session:
        the_study = study_or_fail(session, study)
        if study_crowd(the_study) is None:
            fail(f"study {study!r} has no [crowd] table, so its raters have no platform ids")
        ids = eligible_ids(session, the_study, at=at, wave=wave)
    for pid in ids:
        click.echo(pid)


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

    from ..db import session_scope
    from ..services.rater_quality import study_rater_quality

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
