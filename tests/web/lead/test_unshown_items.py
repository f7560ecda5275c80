"""The lead's study page lists the items whose template failed to render for raters."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from sqlmodel import select

from annotator.db import session_scope
from annotator.models import AuditAction, AuditEvent, Role, User
from annotator.study.studies import create_invites, get_study

from .conftest import login

ERROR = "ZeroDivisionError: integer division or modulo by zero"


def _record(app, slug: str, events: list[tuple[str, int, str, str, datetime]]) -> None:
    """Audit events as the rater's pages record them: (action, rater index, item, error, when)."""
    with session_scope(app) as session:
        study = get_study(session, slug)
        raters = session.exec(
            select(User.id).where(User.study_id == study.id, User.role == Role.RATER)
        ).all()
        for action, rater, item, error, when in events:
            session.add(
                AuditEvent(
                    subject_id=raters[rater],
                    study_id=study.id,
                    action=action,
                    created_at=when,
                    details={"item": item, "benchmark": "sts-b", "error": error},
                )
            )


def _rows(page: str) -> list[list[str]]:
    table = page.split('class="unshown-items"')[1].split("</table>")[0]
    body = table.split("<tbody>")[1]
    return [
        [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td>(.*?)</td>", row, re.S)]
        for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)
    ]


@pytest.mark.parametrize("email", ["owner@example.org", "analyst@example.org"])
def test_owners_and_analysts_see_the_items_that_failed(team, email):
    with session_scope(team.app) as session:
        # A second rater of the study, so that two raters can be counted.
        create_invites(session, get_study(session, team.slug), 1)
    shown, passed = AuditAction.ITEM_NOT_SHOWN, AuditAction.ITEM_PASSED_OVER
    _record(
        team.app,
        team.slug,
        [
            (shown, 0, "s1", "UndefinedError: old", datetime(2026, 5, 1, 9, 0, tzinfo=UTC)),
            (shown, 1, "s1", ERROR, datetime(2026, 5, 2, 10, 30, tzinfo=UTC)),
            (passed, 1, "s1", ERROR, datetime(2026, 5, 2, 10, 31, tzinfo=UTC)),
            # The same rater passing over twice (a twin request) counts once.
            (passed, 1, "s1", ERROR, datetime(2026, 5, 2, 10, 32, tzinfo=UTC)),
            (shown, 0, "s3", ERROR, datetime(2026, 5, 1, 8, 0, tzinfo=UTC)),
        ],
    )
    page = login(team.app, email).get(f"/lead/studies/{team.slug}").get_data(as_text=True)
    assert "Items that could not be shown" in page
    assert _rows(page) == [
        ["sts-b", "s1", ERROR, "2", "1", "2026-05-02 10:32"],
        ["sts-b", "s3", ERROR, "1", "0", "2026-05-01 08:00"],
    ]


def test_no_section_without_failures(team):
    page = login(team.app, "owner@example.org").get(f"/lead/studies/{team.slug}")
    assert page.status_code == 200
    assert "Items that could not be shown" not in page.get_data(as_text=True)
