"""The demo study that `annotator serve` loads the first time."""

from sqlalchemy import func
from sqlmodel import select

from annotator.db import session_scope
from annotator.demo import DEMO_LEAD_EMAIL, load_demo
from annotator.models import Benchmark, Invite, Item, LLMScore


def test_demo_loads_once_and_prints_a_login_and_an_invite(app, client, db_session):
    with session_scope(app) as session:
        first = load_demo(
            session, base_url="http://127.0.0.1:5000", instance_path=app.instance_path
        )
    with session_scope(app) as session:
        second = load_demo(
            session, base_url="http://127.0.0.1:5000", instance_path=app.instance_path
        )
    assert first[0].startswith("Loaded the demo study 'demo': 13 items, 78 stored LLM scores")
    assert not second[0].startswith("Loaded")
    login = next(line for line in first if line.startswith("Lead login:"))
    assert login == next(line for line in second if line.startswith("Lead login:"))
    invite = next(line for line in first if line.startswith("Rater invite link:"))
    assert invite.split(": ", 1)[1].startswith("http://127.0.0.1:5000/invite/")
    # The same unused invite is offered again rather than a new one each time.
    assert invite == next(line for line in second if line.startswith("Rater invite link:"))
    assert db_session.exec(select(func.count(Invite.id))).one() == 1
    per_benchmark = db_session.exec(
        select(Benchmark.name, func.count(Item.id)).join(Item).group_by(Benchmark.name)
    ).all()
    assert len(per_benchmark) == 6 and all(n >= 2 for _, n in per_benchmark)
    assert db_session.exec(select(func.count(LLMScore.id))).one() == 78

    password = login.split(" / ")[1].split(" ")[0]
    response = client.post("/login", data={"username": DEMO_LEAD_EMAIL, "password": password})
    assert response.status_code == 302 and response.headers["Location"].endswith("/lead/")
    assert b"Demo: grading scales" in client.get("/lead/").data
