"""The lead withdraws, excludes or includes again one rater of a study.

Each action asks first (the confirmation page of :mod:`annotator.web.confirm`)
and works without JavaScript; the logic is in :mod:`annotator.study.raters`.
"""

from __future__ import annotations

from flask import flash, redirect, request, url_for
from flask_login import current_user

from ...db import get_session
from ...models import WithdrawnRatings
from ...study.raters import RaterStatusError, exclude_rater, include_rater, withdraw_rater
from ..auth.access import lead_required
from ..confirm import confirmed, render_confirm
from . import bp
from .common import get_study_or_404
from .raters import _rater_or_404

__all__: list[str] = []

_REASON_MAX = 500


def _reason() -> str:
    return request.form.get("reason", "").strip()[:_REASON_MAX]


def _back(slug: str):
    return redirect(url_for("lead.raters", slug=slug))


def _ask(slug: str, rater, endpoint: str, *, title: str, message: str, label: str, reason: str):
    return render_confirm(
        title=title,
        message=message,
        action=url_for(endpoint, slug=slug, rater_id=rater.id),
        fields={"reason": reason} if reason else {},
        confirm_label=label,
        cancel_url=url_for("lead.raters", slug=slug),
        cancel_label="Back to the raters",
    )


def _study_and_rater(slug: str, rater_id: int):
    study = get_study_or_404(slug, owner=True)
    return study, _rater_or_404(study, rater_id)


def _apply(slug: str, change, done: str):
    """Run ``change`` (a status change of :mod:`annotator.study.raters`), commit,
    and go back to the raters page with ``done`` or the reason it was refused."""
    try:
        change()
    except RaterStatusError as exc:
        flash(str(exc), "error")
        return _back(slug)
    get_session().commit()
    flash(f"{done} This has been logged.", "info")
    return _back(slug)


@bp.route("/studies/<slug>/raters/<id:rater_id>/withdraw", methods=["POST"])
@lead_required
def withdraw_rater_view(slug: str, rater_id: int):
    study, rater = _study_and_rater(slug, rater_id)
    reason = _reason()
    if not confirmed():
        if study.withdrawn_ratings == WithdrawnRatings.DELETE:
            fate = "Their ratings and demographic answers are deleted for good (the study file says so)."
        else:
            fate = "Their ratings stay in the database but leave every export and statistic."
        return _ask(
            slug,
            rater,
            "lead.withdraw_rater_view",
            title=f"Withdraw rater {rater.rater_code}?",
            message=f"{fate} Their return link stops working. A withdrawal cannot be undone; "
            "it is logged with your account.",
            label="Withdraw the rater",
            reason=reason,
        )

    def change() -> None:
        withdraw_rater(
            get_session(), study, rater, actor=current_user, via="web", reason=reason or None
        )

    kept = study.withdrawn_ratings == WithdrawnRatings.KEEP
    return _apply(
        slug,
        change,
        f"Rater {rater.rater_code} withdrawn ("
        + ("ratings left out of every export" if kept else "ratings deleted")
        + ").",
    )


@bp.route("/studies/<slug>/raters/<id:rater_id>/exclude", methods=["POST"])
@lead_required
def exclude_rater_view(slug: str, rater_id: int):
    _, rater = _study_and_rater(slug, rater_id)
    reason = _reason()
    if not reason:
        flash(f"Give a reason for excluding rater {rater.rater_code}.", "error")
        return _back(slug)
    if not confirmed():
        return _ask(
            slug,
            rater,
            "lead.exclude_rater_view",
            title=f"Exclude rater {rater.rater_code}?",
            message=f"Reason: {reason}. Their ratings leave every export and statistic; "
            "nothing is deleted, and you can include them again. This is logged with your "
            "account.",
            label="Exclude the rater",
            reason=reason,
        )
    return _apply(
        slug,
        lambda: exclude_rater(get_session(), rater, actor=current_user, via="web", reason=reason),
        f"Rater {rater.rater_code} excluded.",
    )


@bp.route("/studies/<slug>/raters/<id:rater_id>/include", methods=["POST"])
@lead_required
def include_rater_view(slug: str, rater_id: int):
    _, rater = _study_and_rater(slug, rater_id)
    if not confirmed():
        return _ask(
            slug,
            rater,
            "lead.include_rater_view",
            title=f"Include rater {rater.rater_code} again?",
            message="Their ratings count again in every export and statistic. "
            "This is logged with your account.",
            label="Include the rater",
            reason="",
        )
    return _apply(
        slug,
        lambda: include_rater(get_session(), rater, actor=current_user, via="web"),
        f"Rater {rater.rater_code} included again.",
    )
