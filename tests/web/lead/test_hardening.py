"""The lead's pages against hostile input: counts in other scripts' digits,
ids beyond the database's integers, notes kept out of headers."""

from __future__ import annotations

import pytest
from sqlalchemy import func
from sqlmodel import Session, select

from annotator.db import get_engine
from annotator.models import Invite


def _invites(app) -> int:
    with Session(get_engine(app)) as session:
        return session.exec(select(func.count()).select_from(Invite)).one()


@pytest.mark.parametrize("count", ["١٠", "３", "𝟑", "2٣"])
def test_invite_counts_take_ascii_digits_only(app, lead_client, small_study, count):
    response = lead_client.post(
        "/lead/studies/small/invites", data={"count": count}, follow_redirects=True
    )
    assert response.status_code == 200
    assert "Write the number with the digits 0-9." in response.get_data(as_text=True)
    assert _invites(app) == 0


def test_an_ascii_count_still_makes_links(app, lead_client, small_study):
    lead_client.post("/lead/studies/small/invites", data={"count": " 3 "})
    assert _invites(app) == 3
