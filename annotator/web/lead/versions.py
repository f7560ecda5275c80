"""The lead's list of a study's versions (one per `annotator study update`
that changed anything): when, what changed, and the ratings given under each."""

from __future__ import annotations

import dataclasses
import tomllib

from flask import abort, g, make_response, render_template

from ...db import get_session
from ...models import StudyRole
from ...study.versions import get_version, version_rows
from ..auth.access import lead_required
from . import bp
from .common import get_study_or_404

__all__ = ["hide_completion_codes"]

HIDDEN = "[shown to the study's owners only]"


def _codes(text: str) -> set[str]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return set()
    crowd = data.get("crowd")
    codes = crowd.get("completion_codes", {}) if isinstance(crowd, dict) else {}
    found = [data.get("completion_code"), codes.get("screen_out"), *(codes.get("waves") or [])]
    return {code for code in found if isinstance(code, str) and code}


def hide_completion_codes(*texts: str) -> list[str]:
    """``texts`` (study files, their diffs) with the completion codes of any of them
    replaced where they stand as TOML strings.

    A completion code is what a crowd platform pays on: whoever holds it can claim
    a participant's pay without rating. The owners who wrote it may read it; an
    analyst reads the rest of the study file.
    """
    codes = set().union(*(_codes(text) for text in texts))
    hidden = []
    for text in texts:
        for code in sorted(codes, key=len, reverse=True):
            for quote in ('"', "'"):
                text = text.replace(f"{quote}{code}{quote}", f'"{HIDDEN}"')
        hidden.append(text)
    return hidden


def _owner() -> bool:
    return g.study_role == StudyRole.OWNER


@bp.route("/studies/<slug>/versions")
@lead_required
def study_versions(slug: str):
    study = get_study_or_404(slug)
    rows = version_rows(get_session(), study)
    if not _owner():
        session = get_session()
        files = [get_version(session, study, row.version) for row in rows]
        # Codes of any version: a diff line holds the old code or the new one.
        sources = [f.source_toml or "" for f in files if f is not None]
        diffs = hide_completion_codes(*[row.diff for row in rows], *sources)[: len(rows)]
        rows = [dataclasses.replace(row, diff=diff) for row, diff in zip(rows, diffs, strict=True)]
    return render_template("lead/versions.html", study=study, rows=rows)


@bp.route("/studies/<slug>/versions/<id:version>.toml")
@lead_required
def study_version_file(slug: str, version: int):
    """The study file as it was at ``version``."""
    study = get_study_or_404(slug)
    stored = get_version(get_session(), study, version)
    if stored is None or not stored.source_toml:
        abort(404)
    text = stored.source_toml
    if not _owner():
        (text,) = hide_completion_codes(text)
    response = make_response(text)
    response.headers["Content-Type"] = "text/plain; charset=utf-8"
    response.headers["Content-Disposition"] = (
        f'attachment; filename="{slug}-version-{version}.toml"'
    )
    return response
