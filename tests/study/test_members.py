"""annotator.study.members: who sees a study and what they may do."""

from __future__ import annotations

import pytest
from sqlmodel import select

from annotator.models import Role, Study, StudyRole, User
from annotator.study.members import (
    MembershipError,
    share_study,
    study_role,
    unshare_study,
    visible_studies,
)
from annotator.study.studies import create_lead


@pytest.fixture
def people(session, make_study):
    """Two studies, the admin (first lead), two more leads and a rater of study one."""
    one, two = (
        make_study(slug="one", n_items=4, n_raters=1),
        make_study(slug="two", n_items=4, n_raters=0),
    )
    admin = create_lead(session, "admin@example.org", "password-1")
    ann = create_lead(session, "ann@example.org", "password-1")
    bob = create_lead(session, "bob@example.org", "password-1")
    rater = session.exec(select(User).where(User.role == Role.RATER)).first()
    share_study(session, one, ann, StudyRole.OWNER, actor=None, via="test")
    share_study(session, two, bob, StudyRole.ANALYST, actor=None, via="test")
    session.commit()
    return {"one": one, "two": two, "admin": admin, "ann": ann, "bob": bob, "rater": rater}


def _visible(session, user) -> list[str]:
    query = select(Study.slug).where(visible_studies(user)).order_by(Study.slug)
    return list(session.exec(query))


def test_roles_per_study(session, people):
    expected = {
        ("admin", "one"): StudyRole.OWNER,
        ("admin", "two"): StudyRole.OWNER,
        ("ann", "one"): StudyRole.OWNER,
        ("ann", "two"): None,
        ("bob", "one"): None,
        ("bob", "two"): StudyRole.ANALYST,
        ("rater", "one"): None,
    }
    for (who, slug), role in expected.items():
        assert study_role(session, people[slug], people[who]) == role, (who, slug)


def test_visible_studies(session, people):
    assert _visible(session, people["admin"]) == ["one", "two"]
    assert _visible(session, None) == ["one", "two"]
    assert _visible(session, people["ann"]) == ["one"]
    assert _visible(session, people["bob"]) == ["two"]


def test_only_leads_become_members_with_a_known_role(session, people):
    with pytest.raises(MembershipError, match="is not a lead"):
        share_study(session, people["one"], people["rater"], "analyst", actor=None, via="test")
    with pytest.raises(MembershipError, match="role: 'viewer' is not one of owner, analyst"):
        share_study(session, people["one"], people["bob"], "viewer", actor=None, via="test")
    assert study_role(session, people["one"], people["bob"]) is None


def test_a_study_without_owner_keeps_its_analysts_removable(session, people):
    # Study two has no owner (an analyst only): removing the analyst is no last-owner case.
    assert unshare_study(session, people["two"], people["bob"], actor=None, via="test") == "analyst"
    assert study_role(session, people["two"], people["bob"]) is None
