"""Study members and admins from the command line: share, unshare, members, admin."""

from __future__ import annotations

import pytest
from sqlmodel import select

from annotator.db import session_scope
from annotator.models import AuditEvent, StudyMember, User
from annotator.study.studies import get_study
from tests.conftest import DATA

PASSWORD = "a-password-1"


def _ok(runner, *args, input=None) -> str:
    result = runner.invoke(args=[str(a) for a in args], input=input)
    assert result.exit_code == 0, result.output
    return result.output


def _fails(runner, *args) -> str:
    result = runner.invoke(args=[str(a) for a in args])
    assert result.exit_code == 1, result.output
    return result.output


def _leads(runner, *names: str) -> None:
    for name in names:
        _ok(runner, "lead", "create", f"{name}@example.org", "--password", PASSWORD)


def _members(app, slug: str = "small") -> dict[str, str]:
    with session_scope(app) as session:
        study = get_study(session, slug)
        rows = session.exec(
            select(User.email, StudyMember.role)
            .join(StudyMember, StudyMember.user_id == User.id)
            .where(StudyMember.study_id == study.id)
        ).all()
    return dict(rows)


def _events(app, action: str) -> list[tuple]:
    with session_scope(app) as session:
        rows = session.exec(
            select(AuditEvent, User.email)
            .join(User, User.id == AuditEvent.subject_id)
            .where(AuditEvent.action == action)
            .order_by(AuditEvent.id)
        ).all()
        return [(email, event.actor_id, event.details) for event, email in rows]


def test_the_only_lead_owns_the_study_the_command_line_creates(app, runner):
    _leads(runner, "ann")
    output = _ok(runner, "study", "create", DATA / "small-study.toml")
    assert "Owner: ann@example.org." in output
    assert _members(app) == {"ann@example.org": "owner"}
    assert _events(app, "study-shared") == [
        ("ann@example.org", None, {"role": "owner", "previous_role": None, "via": "cli"})
    ]


def test_with_several_leads_the_owner_is_named_or_nobody(app, runner):
    _leads(runner, "ann", "bob")
    output = _ok(runner, "study", "create", DATA / "small-study.toml")
    assert "No owner yet: only the admins see it" in output
    assert _members(app) == {}
    output = _fails(
        runner, "study", "create", DATA / "small-study.toml", "--owner", "zed@example.org"
    )
    assert "--owner: no lead with email 'zed@example.org'" in output


def test_share_change_role_and_unshare_are_logged(app, runner):
    _leads(runner, "ann", "bob")
    _ok(runner, "study", "create", DATA / "small-study.toml", "--owner", "Ann@Example.org")
    assert "bob@example.org is now analyst of study 'small'" in _ok(
        runner, "study", "share", "small", "bob@example.org", "--role", "analyst"
    )
    assert "already is analyst" in _ok(
        runner, "study", "share", "small", "bob@example.org", "--role", "analyst"
    )
    _ok(runner, "study", "share", "small", "bob@example.org", "--role", "owner")
    assert _members(app) == {"ann@example.org": "owner", "bob@example.org": "owner"}
    members = _ok(runner, "study", "members", "small")
    assert members.splitlines() == [
        "owner    ann@example.org",
        "owner    bob@example.org",
        "Admins (see every study): ann@example.org",
    ]
    assert "ann@example.org (owner) is no longer a member" in _ok(
        runner, "study", "unshare", "small", "ann@example.org"
    )
    assert _members(app) == {"bob@example.org": "owner"}
    assert "is no member of study 'small'; nothing changed" in _ok(
        runner, "study", "unshare", "small", "ann@example.org"
    )
    shared = [
        (email, details["role"], details["previous_role"])
        for email, _, details in _events(app, "study-shared")
    ]
    assert shared == [
        ("ann@example.org", "owner", None),
        ("bob@example.org", "analyst", None),
        ("bob@example.org", "owner", "analyst"),
    ]
    assert _events(app, "study-unshared") == [
        ("ann@example.org", None, {"role": None, "previous_role": "owner", "via": "cli"})
    ]


def test_the_last_owner_is_never_removed_nor_made_analyst(app, runner):
    _leads(runner, "ann", "bob")
    _ok(runner, "study", "create", DATA / "small-study.toml", "--owner", "ann@example.org")
    _ok(runner, "study", "share", "small", "bob@example.org", "--role", "analyst")
    for args in (
        ["unshare", "small", "ann@example.org"],
        ["share", "small", "ann@example.org", "--role", "analyst"],
    ):
        output = _fails(runner, "study", *args)
        assert "ann@example.org is the last owner of study 'small'" in output
        assert "annotator study share small EMAIL --role owner" in output
    assert _members(app) == {"ann@example.org": "owner", "bob@example.org": "analyst"}
    # An analyst leaves freely.
    _ok(runner, "study", "unshare", "small", "bob@example.org")
    assert _members(app) == {"ann@example.org": "owner"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["share", "nope", "ann@example.org", "--role", "owner"], "no study with slug 'nope'"),
        (["share", "small", "zed@example.org", "--role", "owner"], "EMAIL: no lead with email"),
        (["share", "small", "ann@example.org", "--role", "boss"], "'boss' is not one of"),
        (["share", "small", "ann@example.org"], "Missing option '--role'"),
        (["unshare", "small", "zed@example.org"], "EMAIL: no lead with email"),
        (["members", "nope"], "no study with slug 'nope'"),
    ],
)
def test_share_refuses_bad_input_with_a_message(app, runner, args, message):
    _leads(runner, "ann")
    _ok(runner, "study", "create", DATA / "small-study.toml")
    result = runner.invoke(args=["study", *args])
    assert result.exit_code != 0 and message in result.output, result.output


def test_the_first_lead_is_the_admin_and_admins_are_granted_and_revoked(app, runner):
    assert "An admin: sees and may change every study." in _ok(
        runner, "lead", "create", "ann@example.org", "--password", PASSWORD
    )
    assert "They see the studies shared with them" in _ok(
        runner, "lead", "create", "bob@example.org", "--password", PASSWORD
    )
    assert "An admin" in _ok(
        runner, "lead", "add", "cy@example.org", "--admin", "--password", PASSWORD
    )
    output = _fails(runner, "lead", "admin", "dee@example.org")
    assert "no lead with email 'dee@example.org'" in output
    assert "Lead bob@example.org is an admin." in _ok(runner, "lead", "admin", "bob@example.org")
    assert "already is an admin" in _ok(runner, "lead", "admin", "bob@example.org")
    for email in ("ann", "cy"):
        _ok(runner, "lead", "admin", f"{email}@example.org", "--revoke")
    output = _fails(runner, "lead", "admin", "bob@example.org", "--revoke")
    assert "bob@example.org is the last admin" in output
    with session_scope(app) as session:
        flags = dict(session.exec(select(User.email, User.is_admin)).all())
    assert flags == {"ann@example.org": False, "bob@example.org": True, "cy@example.org": False}
    assert [email for email, _, _ in _events(app, "lead-admin-granted")] == ["bob@example.org"]
    assert [email for email, _, _ in _events(app, "lead-admin-revoked")] == [
        "ann@example.org",
        "cy@example.org",
    ]
    created = {email: details for email, _, details in _events(app, "lead-created")}
    assert created == {
        "ann@example.org": {"admin": True},
        "bob@example.org": {},
        "cy@example.org": {"admin": True},
    }
