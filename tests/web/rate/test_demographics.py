"""The questionnaire built from the study's questions."""

from __future__ import annotations

import pytest
from sqlmodel import Session, select

from annotator.db import get_engine
from annotator.models import Demographics

from .conftest import new_invite, study_toml


@pytest.fixture
def consented(app, client, study):
    token = new_invite(app, study.slug)
    assert client.post(f"/invite/{token}", data={"decision": "agree"}).status_code == 302
    return client


def _stored(app) -> list[Demographics]:
    with Session(get_engine(app)) as session:
        return list(session.exec(select(Demographics)))


def test_form_has_a_label_for_every_field(consented):
    page = consented.get("/rate/demographics")
    assert page.status_code == 200
    assert "<legend>Gender (self-reported)</legend>" in page.text
    assert '<label for="age">Age in years</label>' in page.text
    assert '<label for="field">Field of study or work' in page.text
    assert '<label for="gender_self_described">' in page.text
    for choice in ("female", "male", "non-binary", "self-describe", "prefer-not-to-say"):
        assert f'value="{choice}"' in page.text


@pytest.mark.parametrize(
    ("form", "field", "message"),
    [
        ({"age": "30"}, "gender", "Please choose an answer."),
        ({"gender": "robot", "age": "30"}, "gender", "Please choose one of the listed answers."),
        ({"gender": "male"}, "age", "Please answer this question."),
        ({"gender": "male", "age": "thirty"}, "age", "Please enter a number."),
        ({"gender": "male", "age": "nan"}, "age", "Please enter a finite number."),
        ({"gender": "male", "age": "12"}, "age", "Please enter a number from 18 to 120."),
        ({"gender": "male", "age": "30", "field": "x" * 501}, "field", "under 500 characters"),
    ],
)
def test_invalid_answers_are_shown_and_nothing_is_stored(app, consented, form, field, message):
    response = consented.post("/rate/demographics", data=form)
    assert response.status_code == 422
    assert message in response.text
    assert f'id="{field}-error"' in response.text
    # What the rater typed stays in the form.
    for key, value in form.items():
        if key != field:
            assert value in response.text
    assert _stored(app) == []


def test_answers_are_stored_once(app, consented):
    form = {
        "gender": "self-describe",
        "gender_self_described": "genderfluid",
        "age": "41",
        "field": "",
    }
    assert consented.post("/rate/demographics", data=form).status_code == 302
    assert (
        consented.post("/rate/demographics", data={"gender": "male", "age": "20"}).status_code
        == 302
    )
    (stored,) = _stored(app)
    assert stored.answers == {
        "gender": "self-describe",
        "gender_self_described": "genderfluid",
        "age": 41,
    }
    # Answered: the page now sends the rater on.
    assert consented.get("/rate/demographics").headers["Location"].endswith("/rate/")


def test_a_study_without_questions_skips_the_questionnaire(app, client, make_study):
    study = make_study(study_toml(slug="noq", extra="demographics = []", demographics=""))
    token = new_invite(app, study.slug)
    client.post(f"/invite/{token}", data={"decision": "agree"})
    assert client.get("/rate/").status_code == 200
    assert client.get("/rate/demographics").headers["Location"].endswith("/rate/")
