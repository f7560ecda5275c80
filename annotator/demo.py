"""The demo study that ``annotator serve`` loads into an empty database.

``demo_data/`` holds the study file, its 41 items (one an attention check), the scores
of two LLM judges and the ratings of five example raters on all three scales, made up
by ``demo_data/make_demo.py`` (fixed seed): enough items (40 per rater, the alt-test
needs 30) that the first dashboard and the report give the answer the tool exists for.
judge-a follows the raters' consensus closely on the 0-5 and 0-10 scales and passes the
alt-test there, not on 0-100; judge-b, lenient and noisy, passes on none.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from sqlmodel import Session, select

from .data.importers import import_items, import_llm_scores, import_ratings
from .models import Invite, Role, User
from .study.studies import create_invites, create_lead, create_study, get_study, invite_url
from .study.studyfile import load_study_file

__all__ = ["load_demo", "DEMO_DIR", "DEMO_LEAD_EMAIL"]

DEMO_DIR = Path(__file__).resolve().parent / "demo_data"
DEMO_LEAD_EMAIL = "lead@example.org"
_PASSWORD_FILE = "demo-lead-password.txt"


def load_demo(session: Session, *, base_url: str, instance_path: str) -> list[str]:
    """Load the demo study once; return the lines to print (login, invite)."""
    lines = []
    study = get_study(session, "demo")
    if study is None:
        spec = load_study_file(DEMO_DIR / "study.toml")
        study = create_study(session, spec, source_toml=(DEMO_DIR / "study.toml").read_text())
        items = import_items(session, study, DEMO_DIR / "items.jsonl")
        scores = import_llm_scores(session, study, DEMO_DIR / "llm_scores.csv")
        ratings = import_ratings(session, study, DEMO_DIR / "ratings.csv")
        lines.append(
            f"Loaded the demo study 'demo': {items.created} items, "
            f"{scores.created} stored LLM scores, {ratings.created} example ratings "
            f"by {ratings.raters_created} raters."
        )
    password_file = Path(instance_path) / _PASSWORD_FILE
    lead = session.exec(select(User).where(User.email == DEMO_LEAD_EMAIL)).first()
    if lead is None and session.exec(select(User).where(User.role == Role.LEAD)).first() is None:
        password = secrets.token_urlsafe(9)
        create_lead(session, DEMO_LEAD_EMAIL, password)
        password_file.write_text(password + "\n")
        password_file.chmod(0o600)
    if password_file.exists():
        lines.append(
            f"Lead login: {DEMO_LEAD_EMAIL} / {password_file.read_text().strip()} "
            f"(kept in {password_file})"
        )
    invite = session.exec(
        select(Invite).where(Invite.study_id == study.id, Invite.used_at.is_(None))
    ).first()
    if invite is None:
        invite = create_invites(session, study, 1)[0]
    lines.append(f"Rater invite link: {invite_url(invite.token, base_url)}")
    return lines
