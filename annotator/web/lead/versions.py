"""The lead's list of a study's versions (one per `annotator study update`
that changed anything): when, what changed, and the ratings given under each."""

from __future__ import annotations

from flask import abort, make_response, render_template

from ...db import get_session
from ...study.versions import get_version, version_rows
from ..auth.access import lead_required
from . import bp
from .views import get_study_or_404

__all__: list[str] = []


@bp.route("/studies/<slug>/versions")
@lead_required
def study_versions(slug: str):
    study = get_study_or_404(slug)
    return render_template(
        "lead/versions.html", study=study, rows=version_rows(get_session(), study)
    )


@bp.route("/studies/<slug>/versions/<id:version>.toml")
@lead_required
def study_version_file(slug: str, version: int):
    """The study file as it was at ``version``."""
    study = get_study_or_404(slug)
    stored = get_version(get_session(), study, version)
    if stored is None or not stored.source_toml:
        abort(404)
    response = make_response(stored.source_toml)
    response.headers["Content-Type"] = "text/plain; charset=utf-8"
    response.headers["Content-Disposition"] = (
        f'attachment; filename="{slug}-version-{version}.toml"'
    )
    return response
