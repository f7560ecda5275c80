"""Asking before an irreversible action, for every blueprint."""

from __future__ import annotations

from flask import render_template, request

__all__ = ["confirmed", "render_confirm"]


def confirmed() -> bool:
    """Whether the form was sent from a confirmation page (see :func:`render_confirm`)."""
    return request.form.get("confirmed") == "yes"


def render_confirm(*, status: int = 200, template: str = "confirm.html", **context):
    """Ask before an irreversible action: a page whose form posts again with ``confirmed``.

    Two steps in plain HTML, so the question is asked without JavaScript too.
    """
    return render_template(template, **context), status
