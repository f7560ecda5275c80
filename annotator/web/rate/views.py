"""Routes of the rater's side.

Every form posts and redirects without JavaScript; with htmx the rating
form swaps in the next item (the ``_item.html`` fragment the full page also
includes), picked by the ``HX-Request`` header. The views parse, call
``annotator.collect`` and render.
"""

from __future__ import annotations

from functools import wraps

from flask import (
    abort,
    current_app,
    flash,
    g,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import current_user, login_user
from sqlalchemy.exc import IntegrityError

from ...clock import now
from ...collect.block_states import (
    BlockState,
    BlockStatus,
    BlockUnavailable,
    block_state,
    block_states,
    start_block,
)
from ...collect.crowd import screen_out_if_due
from ...collect.enrolment import needs_demographics
from ...collect.item_pages import item_page, items_and_benchmarks, open_item
from ...collect.questionnaire import choice_label, read_answers, self_describe_key
from ...collect.rated_places import next_position, ratings_by_position
from ...collect.rubric import (
    RubricScoreError,
    item_criteria,
    position_ratings,
    rate_rubric_item,
)
from ...collect.scores import ScoreError, parse_score
from ...collect.scoring import rate_item
from ...db import commit_retrying, get_session
from ...models import Demographics, UserSource
from ...passwords import hash_password
from ...services.fresh import queue_dashboards_after
from ...study.criteria import criteria_for
from ..auth.access import rater_required
from ..auth.passwords import check_password
from .blueprint import bp
from .crowd import crowd_block_done, note_entry, screened_out_redirect
from .current import current_criteria, is_htmx
from .current import current_rater as _rater
from .current import current_study as _study
from .forms import PasswordForm
from .item_view import go as _go
from .item_view import item_response as _item_response
from .post_checks import score_refusal

# ------------------------------------------------------------------ helpers


def questionnaire_first(view):
    """Send raters who have not answered the questionnaire there first
    (and screened-out raters to the end of the study)."""

    @wraps(view)
    def wrapped(*args, **kwargs):
        if _rater().screened_out_at is not None:
            return screened_out_redirect(_study())
        if _needs_demographics():
            return redirect(url_for("rate.demographics"))
        return view(*args, **kwargs)

    return wrapped


def _needs_demographics() -> bool:
    # The user loader found out whether the rater answered (in its query).
    user_id, answered = g.get("user_answered_demographics", (None, None))
    user = _rater()
    if user_id != user.id:
        return needs_demographics(get_session(), user, _study())
    return bool(_study().demographics) and not answered


def _not_open_yet(state: BlockState):
    """The page for a block whose gap is not over or whose previous block is not done."""
    states = block_states(get_session(), current_user)
    before = next((s for s in states if s.block.position == state.block.position - 1), None)
    return (
        render_template("rate/block_locked.html", study=_study(), state=state, before=before),
        403,
    )


def _own_block(block_id: int, *, rated_places: bool = False) -> BlockState:
    state = block_state(get_session(), _rater(), block_id, rated_places=rated_places)
    if state is None:
        abort(404)
    return state


# -------------------------------------------------------- invite and consent


# ------------------------------------------------------------- demographics


@bp.route("/rate/demographics", methods=["GET", "POST"])
@rater_required
def demographics():
    session = get_session()
    study = _study()
    if not needs_demographics(session, current_user, study):
        return redirect(url_for("rate.dashboard"))
    errors: dict[str, str] = {}
    if request.method == "POST":
        answers, errors = read_answers(study.demographics, request.form)
        if not errors:
            row = Demographics(user_id=current_user.id, answers=answers, submitted_at=now())
            try:
                commit_retrying(session, lambda: session.add(row), retry_integrity=0)
            except IntegrityError:
                # The same form sent twice: the first answers stay.
                session.rollback()
            return redirect(url_for("rate.dashboard"))
    status = 422 if errors else 200
    return (
        render_template(
            "rate/demographics.html",
            study=study,
            questions=study.demographics,
            values=request.form,
            errors=errors,
            self_describe_key=self_describe_key,
            choice_label=choice_label,
        ),
        status,
    )


# ---------------------------------------------------------------- dashboard


@bp.route("/rate/")
@rater_required
@questionnaire_first
def dashboard():
    states = block_states(get_session(), current_user)
    return render_template(
        "rate/dashboard.html",
        study=_study(),
        states=states,
        all_done=bool(states) and all(s.over for s in states),
    )


@bp.route("/rate/account", methods=["GET", "POST"])
@rater_required
def account():
    user = _rater()
    if user.source == UserSource.CROWD:
        # A crowd participant comes back by the platform's link in a browser
        # bound to them (crowd.py); a password would let anyone who once got
        # into their account in.
        flash(
            "You come back to this study through its link on your study platform, "
            "so you need no password.",
            "info",
        )
        return redirect(url_for("rate.dashboard"))
    form = PasswordForm()
    if form.validate_on_submit():
        if user.password_hash and not check_password(user, form.current.data or ""):
            form.current.errors = ["Your current password is wrong; nothing was changed."]
            return render_template("rate/account.html", form=form), 422
        session = get_session()
        user.password_hash = hash_password(form.password.data)
        # Every other session and remember cookie of the account ends; this
        # browser stays logged in under the new session version.
        user.end_sessions()
        session.add(user)
        session.commit()
        remembered = current_app.config.get("REMEMBER_COOKIE_NAME", "remember_token")
        login_user(user, remember=remembered in request.cookies)
        flash(
            f"Password saved. Log in with your rater code {current_user.rater_code} "
            "and this password to come back.",
            "info",
        )
        return redirect(url_for("rate.dashboard"))
    return render_template("rate/account.html", form=form), (422 if form.error else 200)


# ------------------------------------------------------------------- blocks


@bp.route("/rate/blocks/<id:block_id>/start", methods=["POST"])
@rater_required
@questionnaire_first
def start(block_id: int):
    session = get_session()
    state = _own_block(block_id)
    if state.status in (BlockStatus.WAITING, BlockStatus.LOCKED):
        return _not_open_yet(state)
    starting = state.status == BlockStatus.AVAILABLE
    try:
        start_block(session, current_user, state)
    except BlockUnavailable as exc:
        session.rollback()
        flash(str(exc), "error")
        return redirect(url_for("rate.dashboard"))
    if starting:
        note_entry(state.block)
    session.commit()
    return redirect(url_for("rate.block", block_id=block_id))


@bp.route("/rate/blocks/<id:block_id>")
@rater_required
@questionnaire_first
def block(block_id: int):
    state = _own_block(block_id)
    if state.status == BlockStatus.DONE:
        return redirect(url_for("rate.block_done", block_id=block_id))
    if state.status in (BlockStatus.WAITING, BlockStatus.LOCKED):
        return _not_open_yet(state)
    if state.status != BlockStatus.IN_PROGRESS:
        return redirect(url_for("rate.dashboard"))
    rated = ratings_by_position(get_session(), state.block)
    position = next_position(state.block, rated) or len(state.block.item_order)
    return redirect(url_for("rate.item", block_id=block_id, position=position))


def _post_to_completed_block(state: BlockState, position: int):
    # A retried last submission reaches an already completed block: the same
    # value is simply acknowledged; a different one is refused out loud.
    session = get_session()
    stored = {"score": ratings_by_position(session, state.block, state.rated_places).get(position)}
    if stored["score"] is not None and 1 <= position <= len(state.block.item_order):
        item_id = state.block.item_order[position - 1]["item"]
        if item_criteria(session, _study().id, item_id=item_id):
            # A rubric item: every criterion's score as the form names it.
            ratings = position_ratings(session, state.block, position)
            stored = {f"score:{name}": rating for name, rating in ratings.items()}
    if not all(_same_score(request.form.get(field), state, r) for field, r in stored.items()):
        flash("This block is complete, so its ratings can no longer be changed.", "error")
    return _go(url_for("rate.block_done", block_id=state.block.id))


def _same_score(raw: str | None, state: BlockState, rating) -> bool:
    try:
        return rating is not None and parse_score(raw, state.scale) == rating.value
    except ScoreError:
        return False


@bp.route("/rate/blocks/<id:block_id>/items/<id:position>", methods=["GET", "POST"])
@rater_required
@questionnaire_first
def item(block_id: int, position: int):
    session = get_session()
    # The rated places come with the block: every page here needs them.
    state = _own_block(block_id, rated_places=True)
    if state.status == BlockStatus.DONE:
        if request.method == "POST":
            return _post_to_completed_block(state, position)
        return redirect(url_for("rate.block_done", block_id=block_id))
    if state.status != BlockStatus.IN_PROGRESS:
        if request.method == "POST":
            flash("This block has not been started; nothing was stored.", "error")
        elif state.status in (BlockStatus.WAITING, BlockStatus.LOCKED):
            return _not_open_yet(state)
        return _go(url_for("rate.dashboard"))
    block = state.block
    if not 1 <= position <= len(block.item_order):
        abort(404)
    break_every = _study().break_every
    if request.method == "GET":
        page = open_item(
            session, block, position, break_every=break_every, positions=state.rated_places
        )
        if isinstance(page, int):
            return redirect(url_for("rate.item", block_id=block_id, position=page))
        session.commit()
        return _item_response(state, page)
    # The posted item (checked below) and the next one (its page, the htmx answer),
    # with their benchmarks, in one statement.
    posted_id = block.item_order[position - 1]["item"]
    following_id = block.item_order[position]["item"] if position < len(block.item_order) else None
    loaded = items_and_benchmarks(session, posted_id, following_id)
    item, benchmark = loaded[posted_id]
    refusal = score_refusal(_study(), _rater(), item, benchmark)
    if refusal is not None:
        flash(refusal, "error")
        return _go(url_for("rate.item", block_id=block_id, position=position))
    raw = request.form.get("score", "")
    # A rubric study's item: every criterion's score in one transaction.
    criteria = criteria_for(current_criteria(_study()), benchmark.name)
    following_loaded = loaded.get(following_id) if following_id is not None else None
    try:
        if criteria:
            scored = rate_rubric_item(
                session,
                _rater(),
                block,
                state.scale,
                position,
                {c.name: request.form.get(f"score:{c.name}", "") for c in criteria},
                [c.name for c in criteria],
                break_every=break_every,
                show_following=is_htmx(),
                following_loaded=following_loaded,
            )
        else:
            scored = rate_item(
                session,
                _rater(),
                block,
                state.scale,
                position,
                raw,
                break_every=break_every,
                show_following=is_htmx(),
                positions=state.rated_places,
                following_loaded=following_loaded,
            )
    except RubricScoreError as exc:
        session.rollback()
        page = item_page(
            session, block, position, ratings_by_position(session, block), break_every=break_every
        )
        return _item_response(state, page, values=request.form, errors=exc.errors, status=422)
    except ScoreError as exc:
        session.rollback()
        rated = ratings_by_position(session, block)
        page = item_page(session, block, position, rated, break_every=break_every)
        return _item_response(state, page, error=str(exc), value=raw, status=422)
    except BlockUnavailable as exc:
        session.rollback()
        flash(str(exc), "error")
        return _go(url_for("rate.block", block_id=block_id))
    if scored.submitted.rating.is_attention_check and screen_out_if_due(
        session, current_user, _study()
    ):
        session.commit()
        return _go(url_for("rate.crowd_end", slug=_study().slug, why="screened-out"))
    if scored.submitted.block_completed:
        # The lead's next view shows the numbers with this block (not per score).
        queue_dashboards_after(current_app._get_current_object(), _study().id, "a block")
        return _go(url_for("rate.block_done", block_id=block_id))
    following = position + 1
    if following > len(block.item_order):
        return _go(url_for("rate.block", block_id=block_id))
    if scored.following is None:
        return redirect(url_for("rate.item", block_id=block_id, position=following))
    response = _item_response(state, scored.following)
    response.headers["HX-Push-Url"] = url_for("rate.item", block_id=block_id, position=following)
    return response


@bp.route("/rate/blocks/<id:block_id>/done")
@rater_required
@questionnaire_first
def block_done(block_id: int):
    state = _own_block(block_id)
    if state.status != BlockStatus.DONE:
        return redirect(url_for("rate.block", block_id=block_id))
    states = block_states(get_session(), current_user)
    crowd_page = crowd_block_done(_study(), state, states)
    if crowd_page is not None:
        return crowd_page
    upcoming = next((s for s in states if not s.over), None)
    if upcoming is None:
        return redirect(url_for("rate.thanks"))
    return render_template(
        "rate/block_done.html",
        study=_study(),
        state=state,
        upcoming=upcoming,
        blocks_total=len(states),
    )


@bp.route("/rate/thanks")
@rater_required
@questionnaire_first
def thanks():
    states = block_states(get_session(), current_user)
    if not states or any(not s.over for s in states):
        return redirect(url_for("rate.dashboard"))
    return render_template("rate/thanks.html", study=_study())
