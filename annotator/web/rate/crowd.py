"""The crowd entry link (``/s/<slug>``), the page after a crowd block and the
screen-out page.

The platform's participant id arrives in the query string. It is never
put in a page title, a log line or the session cookie: the cookie keeps
only the platform study and session the rater came in under (the block
records them when it starts). The development server's access log is
filtered so that query strings of entry links are not written.

The id alone opens nothing: each browser gets a long-lived signed cookie
(``BROWSER_COOKIE``, a random token) and an entry is let in only with a
proof (:func:`annotator.collect.crowd.entry_proof`); the browser of an entry
let in is bound to the rater from then on.

The completion redirect works without JavaScript: the page after a block
carries a ``<meta http-equiv="refresh">`` to the platform's completion URL,
a link to it and the code itself, in case the redirect fails. The refresh is
immediate: a timed one fails WCAG 2.2.1 (axe's meta-refresh rule).
"""

from __future__ import annotations

import logging
import re
import secrets
from datetime import timedelta

from flask import (
    abort,
    current_app,
    make_response,
    redirect,
    render_template,
    request,
    url_for,
)
from flask import session as cookie
from flask_limiter.util import get_remote_address
from flask_login import current_user, login_user, logout_user
from itsdangerous import BadSignature, URLSafeSerializer
from sqlalchemy.exc import IntegrityError
from sqlmodel import select

from ...collect import crowd
from ...collect.block_states import BlockState
from ...collect.stopping import study_complete
from ...db import get_session
from ...extensions import limiter
from ...models import Benchmark, Block, EntryProof, Item, RaterStatus, Study, User
from ...study.studies import get_study, link_base_url, study_scales
from ..auth.access import withdrawn_page
from ..confirm import confirmed, render_confirm
from ..display import instructions_for, render_item_text
from .blueprint import bp

__all__ = [
    "crowd_block_done",
    "entry_links",
    "note_entry",
    "screened_out_redirect",
    "ENTRY_KEY",
    "BROWSER_COOKIE",
]

# The flask session key of the platform study and session of the last entry.
ENTRY_KEY = "crowd_entry"
# The flask session key of the study whose participation ended in this browser.
ENDED_KEY = "crowd_ended"
# The cookie that binds a browser to the crowd raters let in from it.
BROWSER_COOKIE = "annotator_browser"
_BROWSER_SALT = "annotator.crowd-browser"
# Browsers keep a cookie at most 400 days (Chrome's cap).
_BROWSER_MAX_AGE = timedelta(days=400)


# ------------------------------------------------------------ app set-up


class _EntryQueryFilter(logging.Filter):
    """Drop the query string of entry-link requests from access log lines."""

    _ENTRY = re.compile(r"(/s/[^\s?\"]*)\?[^\s\"]*")

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = self._ENTRY.sub(r"\1?[redacted]", message)
        if redacted != message:
            record.msg, record.args = redacted, ()
        return True


_LOG_FILTER = _EntryQueryFilter()


@bp.record_once
def _set_up(state) -> None:
    app = state.app
    logger = logging.getLogger("werkzeug")
    if _LOG_FILTER not in logger.filters:
        logger.addFilter(_LOG_FILTER)
    app.config.setdefault("CROWD_ENTRY_RATE_LIMIT", "30 per minute")
    app.config.setdefault("MTURK_FRAME", False)
    if app.config["MTURK_FRAME"]:
        # Inside MTurk's frame the app is a third party: its cookies are sent
        # only when SameSite=None, which browsers accept only with Secure
        # (so the app must be served over HTTPS).
        # Partitioned (CHIPS): browsers that block third-party cookies still
        # keep a cookie partitioned by the top-level site (MTurk).
        app.config.update(
            SESSION_COOKIE_SAMESITE="None",
            SESSION_COOKIE_SECURE=True,
            SESSION_COOKIE_PARTITIONED=True,
            REMEMBER_COOKIE_SAMESITE="None",
            REMEMBER_COOKIE_SECURE=True,
        )
    app.add_template_global(entry_links, "crowd_entry_links")


def entry_links(study: Study) -> list[tuple[str, str]]:
    """The study's entry links for the lead's study page (label, URL)."""
    spec = crowd.study_crowd(study)
    if spec is None:
        return []
    return crowd.entry_links(spec, study.slug, link_base_url())


# ------------------------------------------------------------------ entry


def _entry_limit() -> str:
    return current_app.config["CROWD_ENTRY_RATE_LIMIT"]


def _no_store(response):
    response = make_response(response)
    response.headers["Cache-Control"] = "no-store"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


def _sample(study: Study):
    """The first regular item, as a rater of the first scale would see it."""
    session = get_session()
    item = session.exec(
        select(Item).where(Item.study_id == study.id, Item.gold_score.is_(None)).order_by(Item.id)
    ).first()
    if item is None:
        return None
    benchmark = session.get(Benchmark, item.benchmark_id)
    scale = study_scales(session, study)[0]
    return {
        "scale": scale,
        "instructions": instructions_for(benchmark, scale),
        "text": render_item_text(benchmark, item),
    }


def _ended(study: Study, why: str):
    # The end page opens only for whom this request ended (see crowd_end).
    cookie[ENDED_KEY] = {"study": study.id, "why": why}
    return redirect(url_for("rate.crowd_end", slug=study.slug, why=why))


def _ended_here(study: Study) -> str | None:
    """Why this browser's participation in ``study`` ended, or None if it did not.

    Marked in the signed session by the request that ended it (a decline, a
    screen-out, a return after either), or told by the logged-in rater's own
    record.
    """
    mark = cookie.get(ENDED_KEY)
    if isinstance(mark, dict) and mark.get("study") == study.id:
        return "screened-out" if mark.get("why") == "screened-out" else "declined"
    user = current_user
    if user.is_authenticated and getattr(user, "study_id", None) == study.id:
        if user.screened_out_at is not None:
            return "screened-out"
        if user.declined_at is not None:
            return "declined"
    return None


def _serializer() -> URLSafeSerializer:
    return URLSafeSerializer(current_app.secret_key, salt=_BROWSER_SALT)


def _browser_token() -> str | None:
    """The token of this browser's binding cookie; ``None`` without a valid one."""
    raw = request.cookies.get(BROWSER_COOKIE)
    if not raw:
        return None
    try:
        token = _serializer().loads(raw)
    except BadSignature:
        return None
    return token if isinstance(token, str) and token else None


def _keep_browser_cookie(response, token: str):
    """Set (or renew) the binding cookie, with the session cookie's settings."""
    config = current_app.config
    response.set_cookie(
        BROWSER_COOKIE,
        _serializer().dumps(token),
        max_age=_BROWSER_MAX_AGE,
        httponly=True,
        secure=config.get("SESSION_COOKIE_SECURE", False),
        samesite=config.get("SESSION_COOKIE_SAMESITE") or "Lax",
        partitioned=config.get("SESSION_COOKIE_PARTITIONED", False),
    )
    return response


def _let_in(study: Study, rater: User, entry: crowd.Entry, *, consented: bool = False):
    """Log ``rater`` in if this entry proves to be theirs; record it either way.

    ``consented``: the participant consented in this request (their first
    entry, which binds this browser).
    """
    if rater.declined_at is not None:
        return _ended(study, "declined")
    if rater.status == RaterStatus.WITHDRAWN:
        return withdrawn_page(study)
    if rater.screened_out_at is not None:
        return _ended(study, "screened-out")
    session = get_session()
    token = _browser_token()
    if consented or (current_user.is_authenticated and current_user.id == rater.id):
        # Consenting here, or logged in here already: this browser is theirs.
        proof = EntryProof.CONSENT if consented else EntryProof.BROWSER
    else:
        browser = crowd.browser_digest(token) if token else None
        proof = crowd.entry_proof(session, rater, entry, browser)
    token = token or secrets.token_urlsafe(32)
    crowd.record_entry(
        session,
        rater,
        entry,
        browser=crowd.browser_digest(token),
        address=request.remote_addr,
        proof=proof,
    )
    session.commit()
    if proof == EntryProof.REFUSED:
        platform = crowd.PLATFORM_NAMES[crowd.study_crowd(study).platform]
        page = render_template("rate/crowd_other_browser.html", study=study, platform=platform)
        return _keep_browser_cookie(make_response(page, 403), token)
    login_user(rater, remember=True)
    cookie[ENTRY_KEY] = entry.as_dict()
    return _keep_browser_cookie(redirect(url_for("rate.dashboard")), token)


@bp.route("/s/<slug>", methods=["GET", "POST"])
@limiter.limit(_entry_limit, key_func=get_remote_address)
def crowd_entry(slug: str):
    """A participant arriving from a crowd platform: consent, or back to their blocks."""
    session = get_session()
    study = get_study(session, slug)
    spec = crowd.study_crowd(study) if study is not None else None
    if spec is None:
        abort(404)
    platform = crowd.PLATFORM_NAMES[spec.platform]
    if crowd.is_preview(spec, request.args):
        return _no_store(
            render_template("rate/crowd_preview.html", study=study, sample=_sample(study))
        )
    try:
        entry = crowd.read_entry(spec, request.args)
    except crowd.BadEntry as exc:
        page = render_template(
            "rate/crowd_bad_entry.html", study=study, problem=str(exc), platform=platform
        )
        return _no_store((page, 400))
    rater = crowd.crowd_rater(session, study, entry.participant)
    if rater is not None:
        return _no_store(_let_in(study, rater, entry))
    complete = study_complete(study)
    full = render_template(
        "rate/crowd_full.html", study=study, spec=spec, platform=platform, complete=complete
    )
    if complete or crowd.is_full(session, study, spec):
        return _no_store((full, 403))
    here = request.full_path
    error = None
    if request.method == "POST":
        decision = request.form.get("decision")
        if decision == "agree":
            try:
                user = crowd.enrol_participant(session, study, entry)
                session.commit()
            except crowd.StudyFull:
                session.rollback()
                return _no_store((full, 403))
            except IntegrityError:
                # The same participant in two tabs at once: the first one joined.
                session.rollback()
                user = crowd.crowd_rater(session, study, entry.participant)
                if user is None:
                    raise
            return _no_store(_let_in(study, user, entry, consented=True))
        if decision == "decline":
            if not confirmed():
                return render_confirm(
                    title="Decline to take part?",
                    message="If you decline, only your refusal is recorded and you cannot "
                    "join this study later.",
                    action=here,
                    fields={"decision": "decline"},
                    confirm_label="Yes, I decline",
                    cancel_url=here,
                    cancel_label="Back to the study information",
                )
            try:
                crowd.decline_participant(session, study, entry)
                session.commit()
            except IntegrityError:
                session.rollback()
            if current_user.is_authenticated:
                logout_user()
            return _no_store(_ended(study, "declined"))
        error = "Please press “I agree” to take part, or the other button to decline."
    page = render_template("rate/consent.html", study=study, action=here, error=error)
    return _no_store((page, 400 if error else 200))


@bp.route("/s/<slug>/end")
def crowd_end(slug: str):
    """The end for a participant who declined or was screened out, with the screen-out code."""
    study = get_study(get_session(), slug)
    # Only for a participant whose participation just ended: to anyone else the
    # page would tell that the study exists, its name and its screen-out code
    # (which a crowd platform pays on). Unknown and not-yours look alike: 404.
    why = _ended_here(study) if study is not None else None
    if why is None:
        abort(404)
    # Screening out also ends raters of studies without a [crowd] table.
    spec = crowd.study_crowd(study)
    code = crowd.screen_out_code(spec)
    response = make_response(
        render_template(
            "rate/crowd_end.html",
            study=study,
            why=why,
            code=code,
            link=crowd.completion_link(spec, code),
            platform=crowd.PLATFORM_NAMES[spec.platform] if spec else "",
            mturk=spec is not None and spec.platform == "mturk",
        )
    )
    return _no_store(response)


# ------------------------------------------------------- after each block


def crowd_block_done(study: Study, state: BlockState, states: list[BlockState]):
    """The page after a block of a crowd study: back to the platform with the wave's code.

    ``None`` when the study sends nobody back after a block (no ``[crowd]``
    table, or no code for this block and no MTurk assignment to submit).
    """
    spec = crowd.study_crowd(study)
    if spec is None:
        return None
    block: Block = state.block
    entry = cookie.get(ENTRY_KEY) or {}
    submit_url = None
    if spec.platform == "mturk":
        submit_url = crowd.mturk_submit_url(entry.get("submit_to"))
    code = crowd.wave_code(spec, block.position)
    if code is None and submit_url is None:
        return None
    upcoming = next((s for s in states if not s.over), None)
    response = make_response(
        render_template(
            "rate/crowd_done.html",
            study=study,
            state=state,
            upcoming=upcoming,
            blocks_total=len(states),
            code=code,
            link=crowd.completion_link(spec, code),
            submit_url=submit_url,
            assignment_id=block.platform_session_id,
            platform=crowd.PLATFORM_NAMES[spec.platform],
        )
    )
    response.headers["Cache-Control"] = "no-store"
    return response


def note_entry(block: Block) -> None:
    """Record on ``block`` the platform study and session of the rater's last entry.

    An entry serves one block: a block started later without a new entry (the
    rater came back by their return link) records none rather than a stale one.
    """
    entry = cookie.get(ENTRY_KEY)
    crowd.note_platform_session(block, entry)
    if entry:
        cookie[ENTRY_KEY] = {"submit_to": entry.get("submit_to")}


def screened_out_redirect(study: Study):
    return _ended(study, "screened-out")
