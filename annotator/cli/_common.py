"""What the command groups share: failing with a message, finding a study."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from ..metrics._names import RUNS

if TYPE_CHECKING:
    from ..models import Study


def fail(message: str) -> None:
    raise click.ClickException(message)


def progress() -> bool:
    return sys.stderr.isatty()


def study_or_fail(session, slug: str) -> Study:
    from sqlmodel import select

    from ..models import Study
    from ..study.studies import get_study

    study = get_study(session, slug)
    if study is None:
        known = ", ".join(session.exec(select(Study.slug)).all()) or "none yet"
        fail(f"no study with slug {slug!r} (studies: {known})")
    return study


def base_url_or_default(base_url: str | None) -> str:
    from ..study.studies import link_base_url

    return base_url or link_base_url()


where_option = click.option(
    "--where",
    multiple=True,
    metavar="KEY=VALUE",
    help="Only raters whose demographic answer KEY is VALUE (repeatable: AND across keys, "
    "either value for a key given twice).",
)

runs_option = click.option(
    "--runs",
    type=click.Choice(RUNS),
    default=RUNS[0],
    show_default=True,
    help="How a model's runs at one temperature are combined (matrix, alttest, report); "
    "'each' keeps one MODEL#RUN column per run.",
)
