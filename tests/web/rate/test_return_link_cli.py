"""`annotator raters links`, and where invite and return links point."""

from __future__ import annotations

import socket

import pytest
from sqlmodel import Session, select

from annotator.db import get_engine
from annotator.models import AuditAction, AuditEvent, User

from .conftest import join


def _tokens(app) -> dict[str, str]:
    with Session(get_engine(app)) as session:
        raters = session.exec(select(User).where(User.role == "rater")).all()
        return {u.rater_code: u.return_token for u in raters}


@pytest.fixture
def two_raters(app, study):
    join(app, app.test_client(), study.slug)
    join(app, app.test_client(), study.slug)
    return _tokens(app)


def test_links_prints_code_tab_url_per_rater(app, runner, two_raters):
    result = runner.invoke(args=["raters", "links", "rt", "--base-url", "https://r.example/"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert sorted(lines) == sorted(
        f"{code}\thttps://r.example/r/{token}" for code, token in two_raters.items()
    )


def test_links_for_one_rater_in_any_case_and_rotation(app, runner, two_raters):
    code, old = next(iter(two_raters.items()))
    result = runner.invoke(args=["raters", "links", "rt", "--rater", code.lower()])
    assert result.exit_code == 0, result.output
    assert result.output == f"{code}\thttp://127.0.0.1:5000/r/{old}\n"

    rotated = runner.invoke(args=["raters", "links", "rt", "--rater", code, "--rotate"])
    assert rotated.exit_code == 0, rotated.output
    new = _tokens(app)[code]
    assert new != old and rotated.output == f"{code}\thttp://127.0.0.1:5000/r/{new}\n"
    # Only that rater's link changed, and the change is logged.
    others = {c: t for c, t in _tokens(app).items() if c != code}
    assert others == {c: t for c, t in two_raters.items() if c != code}
    with Session(get_engine(app)) as session:
        (event,) = session.exec(
            select(AuditEvent).where(AuditEvent.action == AuditAction.RETURN_LINK_ROTATED)
        ).all()
        assert event.actor_id is None and event.details == {"via": "cli"}
    assert app.test_client().get(f"/r/{old}").status_code == 404


def test_links_refuse_unknown_and_imported_raters(app, runner, study, tmp_path):
    unknown = runner.invoke(args=["raters", "links", "rt", "--rater", "R-NOBODY"])
    assert unknown.exit_code != 0 and "no rater with code 'R-NOBODY'" in unknown.output
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("item_id,rater,scale,score\ns1,ann,0-5,3\n")
    assert runner.invoke(args=["ratings", "import", "rt", str(ratings)]).exit_code == 0
    imported = runner.invoke(args=["raters", "links", "rt", "--rater", "ANN"])
    assert imported.exit_code != 0
    assert "rater ann was imported and has no return link" in imported.output
    # Imported raters are left out of the list.
    assert runner.invoke(args=["raters", "links", "rt"]).output == ""


def test_invite_uses_the_configured_base_url(make_app, study):
    app = make_app(BASE_URL="https://study.example.org")
    result = app.test_cli_runner().invoke(args=["raters", "invite", "rt"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("https://study.example.org/invite/")


@pytest.fixture
def no_server(monkeypatch):
    """`annotator serve` up to the point where it would start serving."""
    from annotator.cli import serve

    calls = []
    monkeypatch.setattr(serve, "run_server", lambda app, *a, **k: calls.append(a))
    return calls


def test_serve_on_every_interface_prints_no_0000_links(make_app, no_server):
    # serve builds the schema itself.
    app = make_app(create_schema=False)
    result = app.test_cli_runner().invoke(args=["serve", "--host", "0.0.0.0", "--port", "5057"])
    assert result.exit_code == 0, result.output
    assert no_server and no_server[0][:2] == ("0.0.0.0", 5057)
    invite = next(line for line in result.output.splitlines() if "invite link" in line)
    assert invite.split(": ", 1)[1].startswith(f"http://{socket.gethostname()}:5057/invite/")
    assert "http://0.0.0.0" not in result.output
    assert "Links name this machine" in result.output


def test_serve_links_use_the_configured_base_url(make_app, no_server):
    app = make_app(create_schema=False, BASE_URL="https://study.example.org/")
    result = app.test_cli_runner().invoke(args=["serve", "--host", "0.0.0.0"])
    assert result.exit_code == 0, result.output
    assert "Rater invite link: https://study.example.org/invite/" in result.output
