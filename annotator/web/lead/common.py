"""What the lead's pages share: the study lookup, the query's analysis and export
choices, and the study page's list of jobs.

A module of its own so that the views, the job pages and the other lead pages
import these from one place instead of from each other.
"""

from __future__ import annotations

from flask import abort, g, request
from flask_login import current_user

from ...db import get_session
from ...jobs import study_jobs
from ...models import Study, StudyRole
from ...study.members import study_role
from ...study.studies import get_study

__all__ = [
    "INTERNAL_KINDS",
    "analysis_choices",
    "criterion_choice",
    "export_choices",
    "export_temperature",
    "get_study_or_404",
    "recent_jobs",
]


def get_study_or_404(slug: str, *, owner: bool = False) -> Study:
    """The study ``slug`` as the current lead may see it; every lead page loads its
    study through here.

    404 unless the lead is a member of the study (or an admin): a page of another
    team's study looks exactly like a study that does not exist. With ``owner``
    (the owners' pages: raters, their links, invites, every change) an analyst
    gets 403: they know the study, the page's address is the same in every
    study, and the check comes before any rater of the address is looked up,
    so 403 reveals nothing and tells them that it is their role, not a broken
    link. The role is kept in ``g.study_role`` for the templates.
    """
    session = get_session()
    study = get_study(session, slug)
    role = study_role(session, study, current_user) if study is not None else None
    if role is None:
        abort(404)
    if owner and role != StudyRole.OWNER:
        abort(403)
    g.study_role = role
    return study


def analysis_choices(the_study: Study) -> dict:
    """The dashboard's and report's runs and raters from the query string.

    ``settings`` (None: the study's own), ``args`` (what to carry to the next request)
    and ``error`` (an unknown key, value or aggregation: the study's settings are used).
    """
    from ...data.temperatures import parse_judge_temperatures
    from ...metrics._names import RUNS
    from ...services.settings import study_settings_where

    runs = request.args.get("runs", RUNS[0])
    where = request.args.get("where", "").strip()
    # The lead's temperature for single judges (annotator.data.temperatures).
    temperatures = request.args.get("temperatures", "").strip()
    chosen = (("runs", runs), ("where", where), ("temperatures", temperatures))
    args = {k: v for k, v in chosen if v and v != RUNS[0]}
    out = {"settings": None, "args": args, "error": None, "runs_choices": RUNS}
    out.update(criterion_choice(the_study))
    if not args:
        if out["criterion"]:
            out["args"] = {"criterion": out["criterion"]}
        return out
    try:
        overrides = {"runs": runs}
        if temperatures:
            overrides["judge_temperatures"] = parse_judge_temperatures(temperatures)
        out["settings"] = study_settings_where(get_session(), the_study, where, **overrides)
    except ValueError as exc:
        out["error"] = (
            f"{str(exc)[:1].upper()}{str(exc)[1:]}; showing the study's settings "
            "(every rater, runs by mean)."
        )
        out["args"] = {}
    if out["criterion"]:
        out["args"]["criterion"] = out["criterion"]
    return out


def criterion_choice(the_study: Study) -> dict:
    """The criterion the dashboard shows (``criterion``: None, the first) and the
    study's ``criteria``; an unknown one asked for is ``criterion_error``."""
    from ...study.criteria import criterion_names

    # [""] for a study without [[criteria]]: nothing to pick.
    names = [name for name in criterion_names(get_session(), the_study) if name]
    asked = request.args.get("criterion", "").strip()
    out = {"criteria": names, "criterion": None, "criterion_error": None}
    if asked and asked in names:
        out["criterion"] = asked
    elif asked:
        out["criterion_error"] = (
            f"The study has no criterion {asked!r} (its criteria: {', '.join(names)}); "
            "showing the first."
            if names
            else f"The study has no criteria ([[criteria]]); {asked!r} is ignored."
        )
    return out


def export_temperature(text: str) -> float | None:
    from ...data.exporters import ExportError

    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise ExportError(
            f"the temperature must be a number of at least 0, got {text!r}",
            field="temperature",
            choices=[],
        )
    return value


def export_choices() -> dict:
    """The export form's choices from the query string, as the lead gave them."""
    return {
        "format": request.args.get("format", "long"),
        "scale": request.args.get("scale", ""),
        "benchmark": request.args.get("benchmark", ""),
        "criterion": request.args.get("criterion", ""),
        "complete": request.args.get("complete") == "1",
        "temperature": request.args.get("temperature", "").strip(),
        "runs": request.args.get("runs", "mean"),
        "where": request.args.get("where", "").strip(),
    }


# Kinds whose results are the app's own objects, not files for a lead.
INTERNAL_KINDS = ("dashboard",)


def recent_jobs(the_study: Study) -> list:
    """The study page's list of its latest jobs."""
    # The dashboard's jobs are the page's own business (their result is the dashboard).
    return study_jobs(get_session(), the_study, limit=10, exclude=INTERNAL_KINDS)
