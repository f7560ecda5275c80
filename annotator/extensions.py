"""Flask extensions shared by the blueprints."""

from __future__ import annotations

from functools import cache

from flask import Flask
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_login import LoginManager
from flask_wtf.csrf import CSRFProtect

# Registers the sqlite:// storage scheme the limiter uses by default.
from . import ratelimit  # noqa: F401

__all__ = ["login_manager", "csrf", "limiter", "init_extensions", "logged_in_user_query"]

login_manager = LoginManager()
login_manager.login_view = "auth.login"
login_manager.login_message_category = "info"
csrf = CSRFProtect()
# No default limits: only the routes that ask for one (login) are limited.
limiter = Limiter(key_func=get_remote_address, default_limits=[])


@cache
def logged_in_user_query():
    """The user loader's statement (a user by ``user_key``, with their study and
    whether they answered the questionnaire and whether the study has criteria),
    built once per process."""
    from sqlalchemy import bindparam, exists
    from sqlmodel import select

    from .models import Criterion, Demographics, Study, User

    # Whether the rater has answered the questionnaire comes too: every rater
    # page checks it first (annotator.web.rate.views.questionnaire_first),
    # one statement less per score post for an EXISTS on an indexed column.
    # Built once: building it cost more CPU than running it.
    answered = exists().where(Demographics.user_id == User.id)
    # And whether the study has criteria (a rubric study): the item pages and score
    # posts read the criteria only then (annotator.web.rate.current.current_criteria),
    # an EXISTS on the unique key (study_id, name) instead of a statement per post.
    rubric = exists().where(Criterion.study_id == User.study_id)
    return (
        select(User, Study, answered, rubric)
        .outerjoin(Study, Study.id == User.study_id)
        .where(User.id == bindparam("user_key"))
    )


@login_manager.user_loader
def _load_user(user_id: str):
    from flask import g

    from .db import get_session

    try:
        key = int(user_id.split(":", 1)[0])
    except ValueError:
        return None
    # The user's study comes in the same query: the rater's pages need it on
    # every request (one statement less per score post). It is kept on ``g``
    # for the request, which also keeps it in the session's identity map
    # (held weakly there), so later ``session.get(Study, ...)`` calls of the
    # request find it without a query.
    # Whether the rater has answered the questionnaire comes too (logged_in_user_query).
    row = get_session().exec(logged_in_user_query(), params={"user_key": key}).first()
    if row is None:
        return None
    user, g.user_study, answered, rubric = row
    # Keyed by the user: a request that logs another user in must not use it.
    g.user_answered_demographics = (user.id, answered)
    # Keyed by the study, for the same reason.
    g.user_study_has_criteria = (user.study_id, rubric)
    # A cookie from before the account's sessions were ended (logout, a new
    # password or return link, a withdrawal) carries an older session version
    # and no longer matches (see User.get_id): that session is over.
    if user.get_id() != user_id:
        return None
    return user


def skip_the_limiter_before_every_request(app: Flask, limiter: Limiter) -> None:
    """Take the limiter's ``before_request`` hook off when it has nothing to check.

    The limited views (login, crowd entry) are checked by their own
    ``@limiter.limit`` wrappers, whatever this hook does; the hook itself
    checks only application-wide and default limits, and this app has
    none. It still cost every request (every score post) the resolution of
    the endpoint's limits. flask-limiter 4 has no setting to leave it out
    (3.x's ``auto_check`` is gone), hence this; with default or application
    limits configured (``RATELIMIT_DEFAULT``, ``RATELIMIT_APPLICATION``) the
    hook stays.
    """
    # limit_manager and the hook are flask-limiter's own (4.x); the test
    # (tests/test_ratelimit.py) fails if a release renames them.
    manager = limiter.limit_manager
    if manager.default_limits or manager.application_limits:
        return
    hooks = app.before_request_funcs.get(None, [])
    if limiter._check_request_limit in hooks:
        hooks.remove(limiter._check_request_limit)


def init_extensions(app: Flask) -> None:
    login_manager.init_app(app)
    csrf.init_app(app)
    limiter.init_app(app)
    skip_the_limiter_before_every_request(app, limiter)
