"""The project lead's pages: studies, invites and exports."""

from __future__ import annotations

from flask import (
    Response,
    abort,
    flash,
    g,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import current_user
from sqlmodel import select

from ...collect.unshown_items import unshown_items
from ...db import get_session
from ...judge.history import cached_judge_run_summaries
from ...models import Invite, Study, StudyRole
from ...study.criteria import study_criteria
from ...study.members import study_role
from ...study.overview import study_overviews
from ...study.studies import (
    create_invites,
    get_study,
    invite_url,
    link_base_url,
    study_benchmarks,
    study_scales,
)
from ...study.studyfile import validation_settings
from ...words import plural
from ..auth.access import lead_required
from ..display import instructions_for
from ..downloads import attachment
from . import bp
from .forms import InviteForm

__all__ = ["get_study_or_404", "export_choices"]


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


@bp.route("/")
@lead_required
def index():
    studies = study_overviews(get_session(), lead=current_user)
    return render_template("lead/index.html", studies=studies)


# How the study page's export form names each choice an ExportError is about.
EXPORT_FIELD_LABELS = {
    "format": "Format",
    "scale": "Scale",
    "benchmark": "Benchmark",
    "criterion": "Criterion",
    "temperature": "Temperature",
    "runs": "Runs",
    "where": "Only raters where",
}


def _analysis(the_study: Study) -> dict:
    """The dashboard's and report's runs and raters from the query string.

    ``settings`` (None: the study's own), ``args`` (what to carry to the next request)
    and ``error`` (an unknown key, value or aggregation: the study's settings are used).
    """
    from ...analysis.settings import study_settings_where
    from ...data.temperatures import parse_judge_temperatures
    from ...metrics._names import RUNS

    runs = request.args.get("runs", RUNS[0])
    where = request.args.get("where", "").strip()
    # The lead's temperature for single judges (annotator.data.temperatures).
    temperatures = request.args.get("temperatures", "").strip()
    chosen = (("runs", runs), ("where", where), ("temperatures", temperatures))
    args = {k: v for k, v in chosen if v and v != RUNS[0]}
    out = {"settings": None, "args": args, "error": None, "runs_choices": RUNS}
    out.update(_criterion_choice(the_study))
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


def _criterion_choice(the_study: Study) -> dict:
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


def _instructions_by_scale(benchmarks, scales) -> list[tuple]:
    """Each benchmark with its instructions as raters read them, {min} and {max}
    filled from the scale; scales whose text reads the same are listed together."""
    # The rater's page's own function: the lead sees exactly what raters see.
    out = []
    for bench in benchmarks:
        texts: dict[str, list[str]] = {}
        for scale in scales:
            texts.setdefault(instructions_for(bench, scale), []).append(scale.name)
        out.append((bench, [(names, text) for text, names in texts.items()]))
    return out


def _study_page(
    the_study: Study, *, chosen: dict | None = None, export_error=None, export_notes=None
):
    # The exporters (and with them pandas) are imported by the pages that use
    # them, not with the app: the CLI builds the app for every command.
    from ...data.exporters import FORMATS
    from .jobs import recent_jobs

    session = get_session()
    analysis = _analysis(the_study)
    error_message = None
    if export_error is not None:
        message = str(export_error)
        label = EXPORT_FIELD_LABELS[export_error.field]
        error_message = f"{message[:1].upper()}{message[1:]}: choose one under “{label}”."
    scales = study_scales(session, the_study)
    benchmarks = study_benchmarks(session, the_study)
    return render_template(
        "lead/study.html",
        study=the_study,
        scales=scales,
        benchmarks=benchmarks,
        criteria=study_criteria(session, the_study),
        instructions=_instructions_by_scale(benchmarks, scales),
        judge_runs=cached_judge_run_summaries(session, the_study),
        unshown=unshown_items(session, the_study),
        formats=FORMATS,
        chosen=chosen or {},
        export_error=error_message,
        export_notes=export_notes,
        export_error_field=export_error.field if export_error is not None else None,
        live=_live(the_study, analysis),
        analysis=analysis,
        runs_choices=analysis["runs_choices"],
        stop_settings=validation_settings(the_study.source_toml or ""),
        jobs=recent_jobs(the_study),
    )


def _live(the_study: Study, analysis: dict):
    from ...analysis.live import live_dashboard

    # The first criterion by name when none was picked: one stored dashboard for the
    # page's default and the same criterion picked in the form.
    criteria = analysis.get("criteria") or [None]
    return live_dashboard(
        get_session(),
        the_study,
        settings=analysis["settings"],
        criterion=analysis.get("criterion") or criteria[0],
    )


@bp.route("/studies/<slug>")
@lead_required
def study(slug: str):
    the_study = get_study_or_404(slug)
    if request.headers.get("HX-Request"):
        # htmx refreshes only the dashboard; without JS the whole page reloads.
        analysis = _analysis(the_study)
        partial = render_template(
            "lead/_dashboard.html",
            study=the_study,
            live=_live(the_study, analysis),
            analysis=analysis,
        )
        # Keeps a dashboard computed here and enqueues a stale one's job.
        get_session().commit()
        return partial, {"Vary": "HX-Request"}
    page = _study_page(the_study)
    get_session().commit()
    return page, {"Vary": "HX-Request"}


@bp.route("/studies/<slug>/invites", methods=["GET", "POST"])
@lead_required
def invites(slug: str):
    session = get_session()
    the_study = get_study_or_404(slug, owner=True)
    form = InviteForm()
    if request.method == "POST":
        if not form.validate():
            flash(form.count_problem(), "error")
            return redirect(url_for("lead.invites", slug=slug))
        count = form.count.data
        create_invites(session, the_study, count)
        session.commit()
        flash(f"{plural(count, 'invite link')} created.", "info")
        return redirect(url_for("lead.invites", slug=slug))
    unused = session.exec(
        select(Invite)
        .where(Invite.study_id == the_study.id, Invite.used_at.is_(None))
        .order_by(Invite.created_at.desc(), Invite.id.desc())
    ).all()
    links = [invite_url(invite.token, link_base_url()) for invite in unused]
    return render_template("lead/invites.html", study=the_study, links=links, form=form)


def _temperature(text: str) -> float | None:
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


@bp.route("/studies/<slug>/export")
@lead_required
def export(slug: str):
    from ...data.exporters import ExportError, render_export
    from ...data.selection import parse_where
    from .long_download import long_export_response

    the_study = get_study_or_404(slug)
    chosen = export_choices()
    try:
        temperature = _temperature(chosen["temperature"])
        scope = {
            "scale": chosen["scale"] or None,
            "benchmark": chosen["benchmark"] or None,
            "where": parse_where(chosen["where"]),
        }
        if chosen["format"] == "long":
            # Streamed, with a session of its own (see long_download).
            return long_export_response(the_study, **scope)
        if request.args.get("notes") != "1":
            from .jobs import large_export_response

            # A large study's export is built by a job (its notes stay on this page).
            offer = large_export_response(the_study, chosen, temperature)
            if offer is not None:
                return offer
        rendered = render_export(
            get_session(),
            the_study,
            chosen["format"],
            complete=chosen["complete"],
            temperature=temperature,
            runs=chosen["runs"],
            criterion=chosen["criterion"] or None,
            **scope,
        )
    except ExportError as exc:
        # The form again, with the lead's choices and the problem beside it.
        return _study_page(the_study, chosen=chosen, export_error=exc), 422
    if request.args.get("notes") == "1":
        # The matrix's notes (missing cells per rater code, ...) on the page,
        # never in a header: they name raters, in any script.
        return _study_page(the_study, chosen=chosen, export_notes=rendered.notes or "No notes.")
    headers = {"Content-Disposition": attachment(rendered.filename)}
    return Response(rendered.text, mimetype=rendered.mimetype, headers=headers)
