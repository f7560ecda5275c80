"""The rater, study and kind of request of the rater's current request."""

from __future__ import annotations

from flask import g, request
from flask_login import current_user

from ...db import get_session
from ...models import Criterion, Study, User
from ...study.criteria import study_criteria

__all__ = ["current_criteria", "current_rater", "current_study", "is_htmx"]


def current_rater() -> User:
    # The user itself rather than flask-login's proxy: each attribute read
    # through ``current_user`` resolves the proxy again, and a score post
    # read it a dozen times here and in annotator.collect.
    return current_user._get_current_object()


def current_study() -> Study:
    # The user loader loaded it with the rater (annotator/extensions.py) and
    # keeps it for the request: the session's identity map holds objects
    # weakly, so without that reference every ``session.get(Study, ...)``
    # here and in annotator.collect during one request would query it again.
    study = g.get("user_study")
    study_id = current_rater().study_id
    if study is None or study.id != study_id:
        study = g.user_study = get_session().get(Study, study_id)
    return study


def current_criteria(study: Study) -> list[Criterion]:
    """The criteria of ``study`` (the rater's), read at most once per request.

    None without a statement when the user loader found the study has none (its
    query asks, annotator/extensions.py); a score post otherwise read them twice
    (the posted item's, then the next page's fields).
    """
    kept = g.setdefault("study_criteria", {})
    if study.id not in kept:
        study_id, rubric = g.get("user_study_has_criteria", (None, None))
        if study_id == study.id and not rubric:
            kept[study.id] = []
        else:
            kept[study.id] = study_criteria(get_session(), study)
    return kept[study.id]


def is_htmx() -> bool:
    # A history restore asks for the whole page even though htmx sends it.
    return (
        request.headers.get("HX-Request") == "true"
        and request.headers.get("HX-History-Restore-Request") != "true"
    )
