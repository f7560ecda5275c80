"""What every template may use: filters for dates and Markdown, the rater's
return link and the names templates compare with."""

from __future__ import annotations

from datetime import UTC, datetime

from flask import Flask
from flask_login import current_user
from markupsafe import Markup

from ..collect.block_states import BlockStatus
from ..models import UserSource
from ..study.return_links import return_url
from ..study.studies import link_base_url
from ..words import listing, plural
from .markdown import render_markdown

__all__ = ["init_app", "local_time", "plural"]


def local_time(moment: datetime) -> Markup:
    """Every date shown: ``Monday 9 March 2026 at 09:00 UTC`` in a ``<time>``.

    static/local-time.js rewrites it in the reader's own time zone, naming
    the zone; without JavaScript the UTC text stays.
    """
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    text = f"{moment:%A} {moment.day} {moment:%B %Y} at {moment:%H:%M} UTC"
    iso = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    return Markup('<time datetime="{}" class="local-time">{}</time>').format(iso, text)


def rater_return_url() -> str | None:
    """The logged-in rater's return link, or ``None`` (leads, imported raters)."""
    if not current_user.is_authenticated or not getattr(current_user, "return_token", None):
        return None
    return return_url(current_user.return_token, link_base_url())


def init_app(app: Flask) -> None:
    app.add_template_filter(local_time, "local_time")
    app.add_template_filter(render_markdown, "markdown")
    # ``3 | plural("rating")``: "3 ratings", never "rating(s)" (annotator.words).
    app.add_template_filter(plural, "plural")
    app.add_template_filter(listing, "listing")
    app.add_template_global(rater_return_url)
    # Templates compare with these names, never with the stored strings.
    app.jinja_env.globals.update(BlockStatus=BlockStatus, UserSource=UserSource)
