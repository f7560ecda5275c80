"""Imports of items, human ratings and LLM scores."""

from __future__ import annotations

from pathlib import Path

import click
from flask.cli import AppGroup

from ._common import fail, progress, study_or_fail

__all__ = ["items_group", "ratings_group", "llm_group"]


def _import(kind: str, importer, study_slug: str, file: Path) -> None:
    from flask import current_app

    from ..data.readers import InputError
    from ..db import session_scope
    from ..services.fresh import queue_dashboards_after

    try:
        with session_scope() as session:
            study = study_or_fail(session, study_slug)
            report = importer(session, study, file, progress=progress())
            study_id = study.id
    except InputError as exc:
        fail(str(exc))
    click.echo(f"{file}: {report.summary(kind)}.")
    # The lead's next view of the study shows the imported data's numbers.
    queue_dashboards_after(current_app._get_current_object(), study_id, f"an import of {kind}s")


def _import_group(name: str, group_help: str, importer: str, kind: str, usage: str) -> AppGroup:
    """A group ``NAME import STUDY FILE`` that runs ``annotator.data.importers.IMPORTER``."""
    group = AppGroup(name, help=group_help)

    @group.command("import", help=usage)
    @click.argument("study")
    @click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
    def import_command(study: str, file: Path) -> None:
        from ..data import importers

        _import(kind, getattr(importers, importer), study, file)

    return group


items_group = _import_group(
    "items",
    "Items to rate.",
    "import_items",
    "item",
    "Import items from CSV or JSONL (item_id, benchmark, the template's fields).",
)
ratings_group = _import_group(
    "ratings",
    "Human ratings collected elsewhere.",
    "import_ratings",
    "rating",
    "Import a long CSV item_id,rater,scale,score[,demographic columns].",
)
llm_group = _import_group(
    "llm-scores",
    "Stored LLM judge scores.",
    "import_llm_scores",
    "LLM score",
    "Import a long CSV item_id,model,scale,score[,run,temperature].",
)
