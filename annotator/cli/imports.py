"""Imports of items, human ratings and LLM scores."""

from __future__ import annotations

from pathlib import Path

import click
from flask.cli import AppGroup

from ._common import fail, progress, study_or_fail

__all__ = ["items_group", "ratings_group", "llm_group"]


def _import(kind: str, importer, study_slug: str, file: Path) -> None:
    from ..data.readers import InputError
    from ..db import session_scope

    try:
        with session_scope() as session:
            study = study_or_fail(session, study_slug)
            report = importer(session, study, file, progress=progress())
    except InputError as exc:
        fail(str(exc))
    click.echo(f"{file}: {report.summary(kind)}.")


@click.group("items", cls=AppGroup, help="Items to rate.")
def items_group() -> None:
    pass


@items_group.command("import")
@click.argument("study")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
def items_import(study: str, file: Path) -> None:
    """Import items from CSV or JSONL (item_id, benchmark, the template's fields)."""
    from ..data.importers import import_items

    _import("item(s)", import_items, study, file)


@click.group("ratings", cls=AppGroup, help="Human ratings collected elsewhere.")
def ratings_group() -> None:
    pass


@ratings_group.command("import")
@click.argument("study")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
def ratings_import(study: str, file: Path) -> None:
    """Import a long CSV item_id,rater,scale,score[,demographic columns]."""
    from ..data.importers import import_ratings

    _import("rating(s)", import_ratings, study, file)


@click.group("llm-scores", cls=AppGroup, help="Stored LLM judge scores.")
def llm_group() -> None:
    pass


@llm_group.command("import")
@click.argument("study")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
def llm_import(study: str, file: Path) -> None:
    """Import a long CSV item_id,model,scale,score[,run,temperature]."""
    from ..data.importers import import_llm_scores

    _import("LLM score(s)", import_llm_scores, study, file)
