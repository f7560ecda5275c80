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


# A rater code and a scale name outside Latin-1, with a quote: the header
# could not carry them raw (gunicorn answered a bare 500).
HOSTILE_NAMES = """
[[scales]]
name = "échelle 日本 \\"q\\""
min = 0
max = 5
step = 1
"""


@pytest.fixture
def unicode_study(runner, tmp_path) -> str:
    from tests.conftest import DATA

    toml = (DATA / "small-study.toml").read_text()
    toml = toml.replace(
        '[[benchmarks]]\nname = "sts-b"', HOSTILE_NAMES + '\n[[benchmarks]]\nname = "sts-b"', 1
    )
    (tmp_path / "study.toml").write_text(toml, "utf-8")
    (tmp_path / "ratings.csv").write_text(
        'item_id,rater,scale,score\ns1,評価者,"échelle 日本 ""q""",3\n', "utf-8"
    )
    for args in (
        ["study", "create", tmp_path / "study.toml"],
        ["items", "import", "small", DATA / "items.csv"],
        ["ratings", "import", "small", tmp_path / "ratings.csv"],
    ):
        result = runner.invoke(args=[str(a) for a in args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    return "small"


def test_matrix_notes_go_to_the_page_not_a_header(lead_client, unicode_study):
    from urllib.parse import quote

    scale = quote('échelle 日本 "q"')
    response = lead_client.get(f"/lead/studies/small/export?format=matrix&scale={scale}")
    assert response.status_code == 200
    assert "X-Annotator-Notes" not in response.headers
    # Every header is Latin-1 (what a WSGI server can send).
    for _name, value in response.headers.items():
        value.encode("latin-1")
    disposition = response.headers["Content-Disposition"]
    assert disposition == (
        'attachment; filename="small-matrix-_chelle __ _q_.csv"; '
        "filename*=UTF-8''small-matrix-%C3%A9chelle%20%E6%97%A5%E6%9C%AC%20%22q%22.csv"
    )
    assert "評価者" in response.get_data(as_text=True).splitlines()[0]
    notes = lead_client.get(f"/lead/studies/small/export?format=matrix&scale={scale}&notes=1")
    assert notes.status_code == 200
    page = notes.get_data(as_text=True)
    assert "3 of 4 human cells missing" in page and "missing per rater: 評価者 3" in page


def test_the_study_page_fills_in_the_instructions_bounds(lead_client, small_study):
    """Issue 26: the lead reads the instructions as raters do, per scale."""
    page = lead_client.get("/lead/studies/small").get_data(as_text=True)
    assert "{min}" not in page and "{max}" not in page
    assert "Rate the semantic similarity of the two sentences from 0 to 5." in page
    assert "Rate the semantic similarity of the two sentences from 0 to 100." in page
