"""The security headers of every response, set by Flask-Talisman.

- ``Content-Security-Policy``: scripts, styles, fonts and images from the app
  alone (the templates have no inline script, style or ``style=`` attribute,
  and htmx is told not to add its indicator style, see templates/base.html);
  no plugins; ``frame-ancestors 'none'``, with ``X-Frame-Options: DENY`` for
  older browsers.
- ``X-Content-Type-Options: nosniff``.
- ``Referrer-Policy: same-origin``; ``no-referrer`` on the pages that show a
  token or carry one in their address (:data:`TOKEN_PAGES`), so that it
  reaches neither another site nor a log.
- ``Strict-Transport-Security`` on responses to HTTPS requests only (behind a
  proxy, set ``PROXY_FIX`` so that the request's scheme is the client's), so
  that ``http://127.0.0.1`` on a laptop keeps working.

With ``MTURK_FRAME`` the rater's pages (the ``rate`` blueprint) may be framed
by MTurk's worker sites alone: their ``frame-ancestors`` names those hosts and
no ``X-Frame-Options`` is sent.

Talisman does not redirect to HTTPS (the proxy's job) and leaves the cookies'
``Secure`` flag to ``annotator._SecureCookiesOverHttps``, which follows each
request's scheme.
"""

from __future__ import annotations

from flask import Flask, current_app, request
from flask_talisman import Talisman

from ..collect.crowd import MTURK_HOSTS

__all__ = ["CONTENT_SECURITY_POLICY", "TOKEN_PAGES", "init_app"]

CONTENT_SECURITY_POLICY = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "object-src": "'none'",
    "base-uri": "'self'",
    "frame-ancestors": "'none'",
}

#: Endpoints of pages that show a token (invite and return links) or hold one
#: in their address; the whole ``rate`` blueprint is counted too.
TOKEN_PAGES = frozenset({"lead.invites", "lead.raters", "lead.rotate_link"})


def _policy(frame_ancestors: str) -> str:
    policy = dict(CONTENT_SECURITY_POLICY, **{"frame-ancestors": frame_ancestors})
    return "; ".join(f"{name} {value}" for name, value in policy.items())


def _per_page(response):
    """What differs from Talisman's headers page by page (runs after Talisman's hook)."""
    rater_page = request.blueprint == "rate"
    if rater_page or request.endpoint in TOKEN_PAGES:
        response.headers["Referrer-Policy"] = "no-referrer"
    if rater_page and current_app.config.get("MTURK_FRAME"):
        response.headers["Content-Security-Policy"] = _policy(" ".join(MTURK_HOSTS))
        response.headers.pop("X-Frame-Options", None)
    return response


def init_app(app: Flask) -> None:
    # Flask runs application after_request hooks last registered first: this
    # one, registered before Talisman's, sees the headers Talisman set.
    app.after_request(_per_page)
    Talisman(
        app,
        force_https=False,
        session_cookie_secure=False,
        # Talisman writes this setting; keep the app's (None under MTURK_FRAME).
        session_cookie_samesite=app.config["SESSION_COOKIE_SAMESITE"],
        frame_options="DENY",
        content_security_policy=_policy("'none'"),
        referrer_policy="same-origin",
        strict_transport_security=True,
        strict_transport_security_include_subdomains=False,
    )
