"""The lead's list of the failures `annotator judge` stored (replies that held
no valid score), filtered by model, scale and whether a later run scored them."""

from __future__ import annotations

from flask import render_template, request

from ...db import get_session
from ...judge.history import failure_models, judge_failures
from ...study.studies import study_scales
from ..auth.access import lead_required
from . import bp
from .common import get_study_or_404

__all__: list[str] = []

# Failures per page (newest first; older pages through links); `annotator judge
# failures STUDY --json` lists every one at once.
PER_PAGE = 500


@bp.route("/studies/<slug>/judge-failures")
@lead_required
def judge_failures_page(slug: str):
    study = get_study_or_404(slug)
    session = get_session()
    chosen = {
        "model": request.args.get("model", ""),
        "scale": request.args.get("scale", ""),
        "open": request.args.get("open") == "1",
    }
    error = None
    try:
        rows = judge_failures(
            session, study, model=chosen["model"] or None, scale=chosen["scale"] or None
        )
    except ValueError as exc:
        # An unknown scale in the address: say so, and show every scale.
        message = str(exc).removeprefix("scale: ")
        error = f"{message[:1].upper()}{message[1:]}; showing every scale."
        chosen["scale"] = ""
        rows = judge_failures(session, study, model=chosen["model"] or None)
    n_matching, n_scored = len(rows), sum(row.scored_since for row in rows)
    if chosen["open"]:
        rows = [row for row in rows if not row.scored_since]
    n_pages = max(1, -(-len(rows) // PER_PAGE))
    # A page past the last (a bookmark from before failures were scored) shows the last.
    number = min(max(request.args.get("page", 1, type=int), 1), n_pages)
    first = (number - 1) * PER_PAGE
    # The filters ride along on the other pages' links.
    filters = {k: v for k, v in request.args.items() if k in ("model", "scale", "open") and v}
    if error:
        filters.pop("scale", None)
    page = render_template(
        "lead/judge_failures.html",
        study=study,
        rows=rows[::-1][first : first + PER_PAGE],
        n_rows=len(rows),
        n_matching=n_matching,
        n_scored=n_scored,
        shown=(first + 1, min(first + PER_PAGE, len(rows))),
        pages={"number": number, "count": n_pages, "filters": filters},
        models=failure_models(session, study),
        scales=study_scales(session, study),
        chosen=chosen,
        error=error,
    )
    return page, 422 if error else 200
