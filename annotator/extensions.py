"""Flask extensions shared by the blueprints."""

from __future__ import annotations

from flask import Flask
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_login import LoginManager
from flask_wtf.csrf import CSRFProtect

# Registers the sqlite:// storage scheme the limiter uses by default.
from . import ratelimit  # noqa: F401

__all__ = ["login_manager", "csrf", "limiter", "init_extensions"]

login_manager = LoginManager()
login_manager.login_view = "auth.login"
login_manager.login_message_category = "info"
csrf = CSRFProtect()
# No default limits: only the routes that ask for one (login) are limited.
limiter = Limiter(key_func=get_remote_address, default_limits=[])


@login_manager.user_loader
def _load_user(user_id: str):
    from .db import get_session
    from .models import User

    try:
        user = get_session().get(User, int(user_id.split(":", 1)[0]))
    except ValueError:
        return None
    # A cookie from before the rater's return link was replaced no longer
    # matches (see User.get_id): that session is over.
    if user is None or user.get_id() != user_id:
        return None
    return user


def init_extensions(app: Flask) -> None:
    login_manager.init_app(app)
    csrf.init_app(app)
    limiter.init_app(app)
