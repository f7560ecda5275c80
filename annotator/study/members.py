"""Who may see and change a study: its members (owners, analysts) and the admins.

A lead sees only the studies they are a member of. An *owner* may do
everything in the study; an *analyst* may read its dashboard, report, exports
and versions, and change nothing. An *admin* (``User.is_admin``) sees and may
change every study, as its owner. Every change of membership or of the admin
flag is logged as an :class:`~annotator.models.AuditEvent`. The caller commits.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import ColumnElement, true
from sqlmodel import Session, select

from ..models import AuditAction, AuditEvent, Role, Study, StudyMember, StudyRole, User

__all__ = [
    "MembershipError",
    "Member",
    "study_role",
    "visible_studies",
    "study_members",
    "share_study",
    "unshare_study",
    "set_admin",
    "admins",
    "default_owner",
]


class MembershipError(ValueError):
    """A membership change that is refused (the last owner, the last admin, not a lead)."""


@dataclass(frozen=True)
class Member:
    email: str
    role: StudyRole


def study_role(session: Session, study: Study, user: User) -> StudyRole | None:
    """What ``user`` may do in ``study``: ``None`` (not even see it) unless a member.

    An admin is the owner of every study; raters are members of none.
    """
    if user.role != Role.LEAD:
        return None
    if user.is_admin:
        return StudyRole.OWNER
    role = session.exec(
        select(StudyMember.role).where(
            StudyMember.study_id == study.id, StudyMember.user_id == user.id
        )
    ).first()
    return StudyRole(role) if role is not None else None


def visible_studies(user: User | None) -> ColumnElement[bool]:
    """A condition on ``Study`` that keeps the studies ``user`` sees (``None``: every
    study, for the command line, whose user is the machine's operator)."""
    if user is None or user.is_admin:
        return true()
    member_of = select(StudyMember.study_id).where(StudyMember.user_id == user.id)
    return Study.id.in_(member_of)


def study_members(session: Session, study: Study) -> list[Member]:
    """The study's members by email, owners first."""
    rows = session.exec(
        select(User.email, StudyMember.role)
        .join(StudyMember, StudyMember.user_id == User.id)
        .where(StudyMember.study_id == study.id)
    ).all()
    members = [Member(email=email, role=StudyRole(role)) for email, role in rows]
    order = list(StudyRole)
    return sorted(members, key=lambda m: (order.index(m.role), m.email))


def _membership(session: Session, study: Study, user: User) -> StudyMember | None:
    return session.exec(
        select(StudyMember).where(StudyMember.study_id == study.id, StudyMember.user_id == user.id)
    ).first()


def _n_owners(session: Session, study: Study) -> int:
    return len(
        session.exec(
            select(StudyMember.id).where(
                StudyMember.study_id == study.id, StudyMember.role == StudyRole.OWNER
            )
        ).all()
    )


def _check_lead(user: User) -> None:
    if user.role != Role.LEAD:
        raise MembershipError(f"user {user.email or user.id!r} is not a lead")


def _refuse_last_owner(study: Study, user: User, what: str) -> None:
    raise MembershipError(
        f"{user.email} is the last owner of study {study.slug!r}, so they cannot be {what}: "
        "share it with another owner first (`annotator study share "
        f"{study.slug} EMAIL --role owner`)"
    )


def share_study(
    session: Session,
    study: Study,
    user: User,
    role: StudyRole | str,
    *,
    actor: User | None,
    via: str,
) -> bool:
    """Make the lead ``user`` a member of ``study`` with ``role``, or change their role.

    Returns whether anything changed. Making the last owner an analyst is
    refused (:class:`MembershipError`): a study keeps an owner once it has one.
    """
    _check_lead(user)
    try:
        role = StudyRole(role)
    except ValueError:
        choices = ", ".join(r.value for r in StudyRole)
        raise MembershipError(f"role: {role!r} is not one of {choices}") from None
    member = _membership(session, study, user)
    previous = StudyRole(member.role) if member is not None else None
    if previous == role:
        return False
    if previous == StudyRole.OWNER and _n_owners(session, study) == 1:
        _refuse_last_owner(study, user, f"made {role.value}")
    if member is None:
        member = StudyMember(study_id=study.id, user_id=user.id, role=role)
    member.role = role
    session.add(member)
    _log(session, AuditAction.STUDY_SHARED, study, user, actor, via, role=role, previous=previous)
    session.flush()
    return True


def unshare_study(
    session: Session, study: Study, user: User, *, actor: User | None, via: str
) -> StudyRole | None:
    """End ``user``'s membership of ``study``; refused for its last owner.

    Returns the role they had (``None``: they were no member, nothing changed).
    """
    member = _membership(session, study, user)
    if member is None:
        return None
    previous = StudyRole(member.role)
    if previous == StudyRole.OWNER and _n_owners(session, study) == 1:
        _refuse_last_owner(study, user, "removed")
    session.delete(member)
    _log(session, AuditAction.STUDY_UNSHARED, study, user, actor, via, role=None, previous=previous)
    session.flush()
    return previous


def _log(session, action, study, user, actor, via, *, role, previous) -> None:
    session.add(
        AuditEvent(
            actor_id=actor.id if actor is not None else None,
            subject_id=user.id,
            study_id=study.id,
            action=action,
            details={
                "role": role.value if role else None,
                "previous_role": previous.value if previous else None,
                "via": via,
            },
        )
    )


def admins(session: Session) -> list[User]:
    """The instance's admins, oldest first."""
    return list(
        session.exec(
            select(User).where(User.role == Role.LEAD, User.is_admin).order_by(User.id)
        ).all()
    )


def set_admin(session: Session, user: User, admin: bool, *, actor: User | None, via: str) -> bool:
    """Grant (``admin=True``) or revoke the lead ``user``'s admin flag; logged.

    Returns whether anything changed. Revoking the last admin is refused: one
    lead must be left who sees the studies nobody was given.
    """
    _check_lead(user)
    if user.is_admin == admin:
        return False
    if not admin and len(admins(session)) == 1:
        raise MembershipError(
            f"{user.email} is the last admin: make another lead admin first "
            "(`annotator lead admin EMAIL`)"
        )
    user.is_admin = admin
    session.add(user)
    session.add(
        AuditEvent(
            actor_id=actor.id if actor is not None else None,
            subject_id=user.id,
            action=AuditAction.LEAD_ADMIN_GRANTED if admin else AuditAction.LEAD_ADMIN_REVOKED,
            details={"via": via},
        )
    )
    session.flush()
    return True


def default_owner(session: Session) -> User | None:
    """Who owns a study the command line creates without ``--owner``: the only lead,
    else nobody (the admins see it, and ``study share`` gives it members)."""
    leads = session.exec(select(User).where(User.role == Role.LEAD).limit(2)).all()
    return leads[0] if len(leads) == 1 else None
