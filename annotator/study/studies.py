"""Studies, leads and invites: data-access functions (the caller commits)."""

from __future__ import annotations

import secrets
import socket
from urllib.parse import urlsplit

from sqlalchemy import func
from sqlmodel import Session, select

from ..models import (
    MIN_PASSWORD_LENGTH,
    AuditAction,
    AuditEvent,
    Benchmark,
    Invite,
    Role,
    Scale,
    Study,
    StudyVersion,
    User,
)
from ..passwords import hash_password
from .criteria import add_criteria
from .studyfile import StudyFile

__all__ = [
    "StudyExists",
    "create_study",
    "get_study",
    "study_scales",
    "study_benchmarks",
    "create_lead",
    "lead_by_email",
    "reset_lead_password",
    "create_invites",
    "new_rater_code",
    "invite_url",
    "study_raters",
    "server_url",
    "link_base_url",
]

# Addresses a server listens on but nobody can open.
_ANY_ADDRESS = {"0.0.0.0", "::", ""}


class StudyExists(ValueError):
    pass


def create_study(session: Session, spec: StudyFile, *, source_toml: str = "") -> Study:
    """Add a study with its scales and benchmarks from a validated study file."""
    if session.exec(select(Study).where(Study.slug == spec.slug)).first() is not None:
        raise StudyExists(f"a study with slug {spec.slug!r} already exists")
    study = Study(
        slug=spec.slug,
        name=spec.name,
        session_gap_days=spec.session_gap_days,
        scale_order=spec.scale_order,
        consent=spec.consent,
        completion_url=spec.completion_url,
        completion_code=spec.completion_code,
        break_every=spec.break_every,
        demographics=[q.model_dump() for q in spec.demographics],
        attention_checks=spec.attention_checks.model_dump(),
        test_retest=spec.test_retest.model_dump(),
        crowd=spec.crowd.model_dump() if spec.crowd else {},
        source_toml=source_toml,
        withdrawn_ratings=spec.withdrawn_ratings,
    )
    session.add(study)
    session.flush()
    session.add(StudyVersion(study_id=study.id, version=study.version, source_toml=source_toml))
    for position, scale in enumerate(spec.scales):
        session.add(Scale(study_id=study.id, position=position, **scale.model_dump()))
    for position, bench in enumerate(spec.benchmarks):
        fields = bench.model_dump(exclude={"judge_template", "judge_system"})
        session.add(Benchmark(study_id=study.id, position=position, **fields))
    add_criteria(session, study, spec.criteria)
    session.flush()
    return study


def get_study(session: Session, slug: str) -> Study | None:
    return session.exec(select(Study).where(Study.slug == slug)).first()


def study_scales(session: Session, study: Study) -> list[Scale]:
    return list(
        session.exec(select(Scale).where(Scale.study_id == study.id).order_by(Scale.position))
    )


def study_benchmarks(session: Session, study: Study) -> list[Benchmark]:
    return list(
        session.exec(
            select(Benchmark).where(Benchmark.study_id == study.id).order_by(Benchmark.position)
        )
    )


def _check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD_LENGTH:
        raise ValueError(f"the password must have at least {MIN_PASSWORD_LENGTH} characters")


def create_lead(
    session: Session,
    email: str,
    password: str,
    *,
    actor: User | None = None,
    admin: bool | None = None,
) -> User:
    """A new lead account; ``actor`` is the lead who added it (None: the command line).

    ``admin``: whether the lead sees every study (None: only if there is no
    admin yet, so the first lead of an instance is its admin).
    """
    email = email.strip().lower()
    if "@" not in email:
        raise ValueError(f"{email!r} is not an email address")
    _check_password(password)
    if session.exec(select(User).where(User.email == email)).first() is not None:
        raise ValueError(f"a user with email {email!r} already exists")
    if admin is None:
        admin = session.exec(select(User.id).where(User.is_admin)).first() is None
    user = User(role=Role.LEAD, email=email, password_hash=hash_password(password), is_admin=admin)
    session.add(user)
    session.flush()
    session.add(
        AuditEvent(
            actor_id=actor.id if actor is not None else None,
            subject_id=user.id,
            action=AuditAction.LEAD_CREATED,
            details={"admin": True} if admin else {},
        )
    )
    return user


def lead_by_email(session: Session, email: str) -> User:
    """The lead with ``email`` (any case); ``ValueError`` when there is none."""
    email = email.strip().lower()
    user = session.exec(select(User).where(User.email == email, User.role == Role.LEAD)).first()
    if user is None:
        raise ValueError(f"no lead with email {email!r}")
    return user


def reset_lead_password(session: Session, email: str, password: str) -> User:
    """Give the lead ``email`` a new password, logged as an AuditEvent."""
    _check_password(password)
    user = lead_by_email(session, email)
    user.password_hash = hash_password(password)
    session.add(user)
    session.add(
        AuditEvent(actor_id=None, subject_id=user.id, action=AuditAction.LEAD_PASSWORD_RESET)
    )
    session.flush()
    return user


def new_rater_code(session: Session) -> str:
    """A fresh pseudonymous rater code such as ``R-7KQ2M9``."""
    # No 0/O or 1/I, so codes can be read aloud and typed back.
    alphabet = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"
    while True:
        code = "R-" + "".join(secrets.choice(alphabet) for _ in range(6))
        if session.exec(select(User.id).where(User.rater_code == code)).first() is None:
            return code


def create_invites(session: Session, study: Study, count: int) -> list[Invite]:
    """Create ``count`` single-use invites for ``study``."""
    if count < 1:
        raise ValueError("count must be at least 1")
    invites = [Invite(study_id=study.id, token=secrets.token_urlsafe(24)) for _ in range(count)]
    session.add_all(invites)
    session.flush()
    return invites


def invite_url(token: str, base_url: str) -> str:
    """The link that admits one new rater (served by the rate blueprint)."""
    return f"{base_url.rstrip('/')}/invite/{token}"


def study_raters(session: Session, study: Study, *, code: str | None = None) -> list[User]:
    """The study's raters in joining order; ``code`` picks one, ignoring case."""
    query = select(User).where(User.study_id == study.id, User.role == Role.RATER)
    if code is not None:
        query = query.where(func.upper(User.rater_code) == code.strip().upper())
    return list(session.exec(query.order_by(User.created_at, User.id)))


def server_url(host: str, port: int) -> str:
    """The address of a server listening on ``host``, as others can open it.

    A server on 0.0.0.0 listens on every interface, but 0.0.0.0 is no
    address to send anyone: links name the machine instead.
    """
    if host in _ANY_ADDRESS:
        host = socket.gethostname() or "127.0.0.1"
    return f"http://{host}:{port}"


def link_base_url(*, host: str = "127.0.0.1", port: int = 5000) -> str:
    """Where invite and return links point.

    The configured ``BASE_URL`` (``ANNOTATOR_BASE_URL``), else in a web
    request the address the server was reached at, else ``host``/``port``.
    """
    from flask import current_app, has_request_context, request

    configured = current_app.config.get("BASE_URL")
    if configured:
        return configured
    if has_request_context():
        parts = urlsplit(request.host_url)
        if parts.hostname in _ANY_ADDRESS:
            return server_url(parts.hostname, parts.port or 80) + "/"
        return request.host_url
    return server_url(host, port)
