"""Shared helpers for the rater tests: a small study, invites, a joined rater."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import pytest
from sqlmodel import Session, select

from annotator.db import get_engine, session_scope
from annotator.importers import import_items
from annotator.models import Block, Rating, User
from annotator.studies import create_invites, create_study, get_study
from annotator.studyfile import parse_study_file

SCALES_TOML = """
[[scales]]
name = "0-5"
min = 0
max = 5
step = 0.01

[[scales]]
name = "0-10"
min = 0
max = 10
step = 0.5

[[scales]]
name = "0-100"
min = 0
max = 100
step = 0.1
"""

BENCHMARKS_TOML = """
[[benchmarks]]
name = "sts-b"
instructions = "Rate the similarity of the two sentences from {min} to {max}."
template = "Sentence 1: {{ sentence1 }}\\nSentence 2: {{ sentence2 }}"

[[benchmarks]]
name = "truthfulqa"
instructions = "Rate how truthful the answer is, from {min} (false) to {max} (true)."
template = "Question: {{ question }}\\nAnswer: {{ answer }}"
"""

DEMOGRAPHICS_TOML = """
[[demographics]]
key = "gender"
label = "Gender (self-reported)"
type = "choice"
choices = ["female", "male", "non-binary", "self-describe", "prefer-not-to-say"]
self_describe = "self-describe"

[[demographics]]
key = "age"
label = "Age in years"
type = "number"
min = 18
max = 120

[[demographics]]
key = "field"
label = "Field of study or work"
type = "text"
required = false
"""


def study_toml(
    *,
    slug: str = "rt",
    scales: str = SCALES_TOML,
    scale_order: str = "balanced",
    gap_days: float = 7,
    extra: str = "",
    demographics: str = DEMOGRAPHICS_TOML,
    consent: str = '"You agree to rate ten short texts."',
    benchmarks: str = BENCHMARKS_TOML,
) -> str:
    return (
        f'name = "Rating test study"\nslug = "{slug}"\nsession_gap_days = {gap_days}\n'
        f'scale_order = "{scale_order}"\n'
        f"consent = {consent}\n"
        f"{extra}\n{scales}\n{benchmarks}\n{demographics}"
    )


def item_rows(n: int = 10, gold: int = 0) -> list[dict]:
    rows = []
    for i in range(1, n + 1):
        if i % 2:
            rows.append(
                {
                    "item_id": f"s{i}",
                    "benchmark": "sts-b",
                    "sentence1": f"Sentence {i} <b>bold?</b>",
                    "sentence2": f"Another sentence {i}.",
                }
            )
        else:
            rows.append(
                {
                    "item_id": f"t{i}",
                    "benchmark": "truthfulqa",
                    "question": f"Question {i}?",
                    "answer": f"Answer {i}.",
                }
            )
    for g in range(1, gold + 1):
        rows.append(
            {
                "item_id": f"gold{g}",
                "benchmark": "sts-b",
                "sentence1": "Please give this item the top score.",
                "sentence2": "This is an attention check.",
                "gold_score": 1.0,
                "gold_tolerance": 0.05,
            }
        )
    return rows


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


LEAD_EMAIL = "lead@example.org"
LEAD_PASSWORD = "lead-password-1"


@pytest.fixture
def lead_client(app):
    """A client logged in as a lead."""
    from annotator.studies import create_lead

    with session_scope(app) as session:
        create_lead(session, LEAD_EMAIL, LEAD_PASSWORD)
    client = app.test_client()
    response = client.post("/login", data={"username": LEAD_EMAIL, "password": LEAD_PASSWORD})
    assert response.status_code == 302
    return client


# The second step of a confirmation page (annotator.web.confirm.render_confirm).
CONFIRMED = {"confirmed": "yes"}
