"""Studies, leads and invites: data-access functions (the caller commits)."""

from __future__ import annotations

import secrets

from sqlmodel import Session, select
from werkzeug.security import generate_password_hash

from .models import ROLE_LEAD, AuditEvent, Benchmark, Invite, Scale, Study, User
from .studyfile import StudyFile

__all__ = [
    "StudyExists",
    "create_study",
    "get_study",
    "study_scales",
    "study_benchmarks",
    "create_lead",
    "create_invites",
    "new_rater_code",
    "invite_url",
]


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
        source_toml=source_toml,
    )
    session.add(study)
    session.flush()
    for position, scale in enumerate(spec.scales):
        session.add(Scale(study_id=study.id, position=position, **scale.model_dump()))
    for position, bench in enumerate(spec.benchmarks):
        session.add(Benchmark(study_id=study.id, position=position, **bench.model_dump()))
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


def create_lead(session: Session, email: str, password: str) -> User:
    email = email.strip().lower()
    if "@" not in email:
        raise ValueError(f"{email!r} is not an email address")
    if len(password) < 8:
        raise ValueError("the password must have at least 8 characters")
    if session.exec(select(User).where(User.email == email)).first() is not None:
        raise ValueError(f"a user with email {email!r} already exists")
    user = User(role=ROLE_LEAD, email=email, password_hash=generate_password_hash(password))
    session.add(user)
    session.flush()
    session.add(AuditEvent(actor_id=None, subject_id=user.id, action="lead-created"))
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
