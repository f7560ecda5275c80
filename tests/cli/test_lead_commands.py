"""Lead accounts from the command line: adding another lead, resetting a password."""

from __future__ import annotations

from sqlmodel import select

from annotator.db import session_scope
from annotator.models import AuditEvent, User


def _login(app, email: str, password: str) -> int:
    return (
        app.test_client().post("/login", data={"username": email, "password": password}).status_code
    )


def test_a_lead_adds_another_lead(app, runner):
    assert (
        runner.invoke(
            args=["lead", "create", "first@example.org", "--password", "first-pass-1"]
        ).exit_code
        == 0
    )
    result = runner.invoke(
        args=["lead", "add", "Second@Example.org", "--by", "first@example.org", "--password-stdin"],
        input="second-pass-2\n",
    )
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == "Lead second@example.org created."
    assert "They see the studies shared with them" in result.output
    assert _login(app, "second@example.org", "second-pass-2") == 302
    with session_scope(app) as session:
        first = session.exec(select(User).where(User.email == "first@example.org")).one()
        second = session.exec(select(User).where(User.email == "second@example.org")).one()
        event = session.exec(select(AuditEvent).where(AuditEvent.subject_id == second.id)).one()
        assert (event.action, event.actor_id) == ("lead-created", first.id)


def test_lead_add_refuses_unknown_actor_duplicates_and_short_passwords(app, runner):
    runner.invoke(args=["lead", "create", "first@example.org", "--password", "first-pass-1"])
    cases = [
        (
            [
                "lead",
                "add",
                "x@example.org",
                "--by",
                "nobody@example.org",
                "--password",
                "long-enough",
            ],
            "no lead with email 'nobody@example.org'",
        ),
        (["lead", "add", "first@example.org", "--password", "long-enough"], "already exists"),
        (["lead", "add", "y@example.org", "--password", "short"], "at least 8 characters"),
        (
            ["lead", "add", "y@example.org", "--password", "long-enough", "--password-stdin"],
            "not both",
        ),
    ]
    for args, message in cases:
        result = runner.invoke(args=args, input="")
        assert result.exit_code != 0, args
        assert message in result.output, (args, result.output)
    with session_scope(app) as session:
        assert len(session.exec(select(User).where(User.role == "lead")).all()) == 1


def test_reset_password(app, runner):
    runner.invoke(args=["lead", "create", "lead@example.org", "--password", "old-password"])
    result = runner.invoke(
        args=["lead", "reset-password", "LEAD@example.org", "--password-stdin"],
        input="new-password\n",
    )
    assert result.exit_code == 0, result.output
    assert "Password of lead lead@example.org reset." in result.output
    assert _login(app, "lead@example.org", "old-password") == 401
    assert _login(app, "lead@example.org", "new-password") == 302
    with session_scope(app) as session:
        actions = session.exec(select(AuditEvent.action).order_by(AuditEvent.id)).all()
    assert actions == ["lead-created", "lead-password-reset"]

    unknown = runner.invoke(
        args=["lead", "reset-password", "who@example.org", "--password", "new-password"]
    )
    assert unknown.exit_code == 1 and "no lead with email 'who@example.org'" in unknown.output
    short = runner.invoke(
        args=["lead", "reset-password", "lead@example.org", "--password", "short"]
    )
    assert short.exit_code == 1 and "at least 8 characters" in short.output
    assert _login(app, "lead@example.org", "new-password") == 302
