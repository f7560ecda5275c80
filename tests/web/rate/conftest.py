"""Shared helpers for the rater tests: a small study, invites, a joined rater."""

from __future__ import annotations

import json
import re
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import urlencode

import pytest
from sqlalchemy import event
from sqlmodel import Session, select

from annotator.data.importers import import_items
from annotator.db import get_engine, session_scope
from annotator.models import Block, Rating, User
from annotator.study.studies import create_invites, create_study, get_study
from annotator.study.studyfile import parse_study_file
from tests.data.studies import item_rows, study_toml


@dataclass
class StudyInfo:
    id: int
    slug: str


@pytest.fixture
def make_study(app, tmp_path):
    """Create a study from TOML text with ``n_items`` items (and gold items)."""

    def factory(toml: str | None = None, n_items: int = 10, gold: int = 0) -> StudyInfo:
        spec = parse_study_file(toml or study_toml())
        path = tmp_path / f"items-{spec.slug}.jsonl"
        path.write_text(
            "\n".join(json.dumps(row) for row in item_rows(n_items, gold)) + "\n", "utf-8"
        )
        with session_scope(app) as session:
            study = create_study(session, spec)
            import_items(session, study, path)
            return StudyInfo(id=study.id, slug=study.slug)

    return factory


@pytest.fixture
def study(make_study) -> StudyInfo:
    return make_study()


def new_invite(app, slug: str) -> str:
    with session_scope(app) as session:
        return create_invites(session, get_study(session, slug), 1)[0].token


ANSWERS = {"gender": "female", "age": "34", "field": "linguistics"}


def join(app, client, slug: str, answers: dict | None = None) -> int:
    """Follow an invite as a new rater: consent and questionnaire. Returns the user id."""
    token = new_invite(app, slug)
    response = client.post(f"/invite/{token}", data={"decision": "agree"})
    assert response.status_code == 302, response.text
    response = client.post("/rate/demographics", data=answers or ANSWERS)
    assert response.status_code == 302, response.text
    with Session(get_engine(app)) as session:
        invite_user = session.exec(
            select(User).where(User.role == "rater").order_by(User.id.desc())
        ).first()
        return invite_user.id


@pytest.fixture
def rater(app, client, study) -> int:
    """A rater who joined ``study`` and is logged in on ``client``."""
    return join(app, client, study.slug)


def blocks_of(app, user_id: int) -> list[Block]:
    with Session(get_engine(app)) as session:
        return list(
            session.exec(select(Block).where(Block.rater_id == user_id).order_by(Block.position))
        )


def ratings_of(app, user_id: int) -> list[Rating]:
    with Session(get_engine(app)) as session:
        return list(
            session.exec(select(Rating).where(Rating.rater_id == user_id).order_by(Rating.id))
        )


def start(client, block_id: int):
    return client.post(f"/rate/blocks/{block_id}/start")


def item_url(block_id: int, position: int) -> str:
    return f"/rate/blocks/{block_id}/items/{position}"


def rate_all(client, block_id: int, total: int, value: str = "2.5", first: int = 1) -> None:
    """Rate the entries ``first`` .. ``total`` as a browser would: show, then post."""
    for position in range(first, total + 1):
        assert client.get(item_url(block_id, position)).status_code == 200
        response = client.post(item_url(block_id, position), data={"score": value})
        assert response.status_code == 302, response.text


def progress(html: str) -> str:
    match = re.search(r'class="progress-text">([^<]*)<', html)
    return match.group(1).strip() if match else ""


# The second step of a confirmation page (annotator.web.confirm.render_confirm).
CONFIRMED = {"confirmed": "yes"}


HTMX = {"HX-Request": "true"}


@contextmanager
def statements(app):
    """The SQL statements ``app`` runs inside the block (a list filled as they run)."""
    engine = get_engine(app)
    seen: list[str] = []

    def listener(conn, cursor, statement, parameters, context, executemany):
        seen.append(statement)

    event.listen(engine, "before_cursor_execute", listener)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", listener)


# Scores the rater's form refuses, with the reason it gives (test_scoring, test_score_parity).
REJECTED = [
    ("", "Please enter a score."),
    ("   ", "Please enter a score."),
    ("abc", "is not a number"),
    ("3 points", "is not a number"),
    ("1e0", "is not a number"),
    ("0x1", "is not a number"),
    ("1,2,3", "is not a number"),
    ("NaN", "is not a finite number"),
    ("nan", "is not a finite number"),
    ("inf", "is not a finite number"),
    ("-Infinity", "is not a finite number"),
    ("5.01", "is outside the scale"),
    ("-0.01", "is outside the scale"),
    ("7", "is outside the scale"),
    ("1e309", "is not a number"),
    ("2.345", "too many decimals"),
    ("0.001", "too many decimals"),
    ("9" * 100, "too long"),
]


ACCEPTED = [
    ("0", 0.0),
    ("5", 5.0),
    ("2.35", 2.35),
    ("4.50", 4.5),
    ("2,5", 2.5),
    (" 3.1 ", 3.1),
    ("+1", 1.0),
    ("-0", 0.0),
    (".5", 0.5),
    ("0.07", 0.07),
]


PID = "5f1a2b3c4d5e6f708192a3b4"


CODES = '[crowd.completion_codes]\nwaves = ["WAVE1CODE", "WAVE2CODE", "WAVE3CODE"]\nscreen_out = "SCREENED"\n'


# A Prolific study of slug "crowd" with completion codes per wave (test_crowd and others).
def crowd_toml(crowd: str = 'platform = "prolific"\n', extra: str = "", **kwargs) -> str:
    return study_toml(slug="crowd", extra=f"{extra}\n[crowd]\n{crowd}\n{CODES}", **kwargs)


def entry(pid: str = PID, study_id: str = "WAVE1STUDY", session_id: str = "SESSION1", **more):
    query = {"PROLIFIC_PID": pid, "STUDY_ID": study_id, "SESSION_ID": session_id, **more}
    return "/s/crowd?" + urlencode(query)


def users(app) -> list[User]:
    with Session(get_engine(app)) as session:
        return list(session.exec(select(User).where(User.role == "rater")))


def enter_and_consent(client, url: str | None = None):
    url = url or entry()
    assert client.get(url).status_code == 200
    response = client.post(url, data={"decision": "agree"})
    assert response.status_code == 302, response.text
    return response
