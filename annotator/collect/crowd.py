"""Crowd entry: a study-level entry link keyed by a platform's participant
id (Prolific, MTurk, or any platform that passes one), the completion code
of each wave and screening out. Who may join the next wave: ``waves.py``.

A participant id only *finds* a rater: it is never a password. Coming back
takes proof (:func:`entry_proof`): a browser bound to the rater at an
earlier entry, the platform session of the block in progress, or a new
platform session for the wave the rater is due to start. Every entry is
recorded (:class:`~annotator.models.CrowdEntry`). Crowd raters have no
return link and no password. Each wave of a study is its own platform
study, so every block keeps the platform study and session it was started
under.

Data-access functions take the session and leave the commit to the caller.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from sqlalchemy import distinct, func
from sqlmodel import Session, select

from ..clock import now
from ..models import (
    Block,
    CrowdEntry,
    EntryProof,
    Item,
    Rating,
    Role,
    Scale,
    Study,
    User,
    UserSource,
)
from ..study.studyfile import CrowdSpec, attention_settings, crowd_settings
from ..words import plural
from .block_states import BlockStatus, block_states
from .dealing import StudyFull, overlap_spec, seats_full, take_seat
from .enrolment import admit, lock_study, new_rater
from .scores import attention_passed, criterion_gold_share

__all__ = [
    "BadEntry",
    "StudyFull",
    "Entry",
    "MTURK_PREVIEW",
    "MTURK_HOSTS",
    "study_crowd",
    "entry_links",
    "is_preview",
    "read_entry",
    "crowd_rater",
    "is_full",
    "enrol_participant",
    "decline_participant",
    "note_platform_session",
    "browser_digest",
    "entry_proof",
    "record_entry",
    "browsers_per_rater",
    "wave_code",
    "screen_out_code",
    "completion_link",
    "mturk_submit_url",
    "failed_checks",
    "screen_out_if_due",
]

# What a platform's participant id looks like. Prolific ids are 24
# characters (MongoDB object ids); MTurk worker ids are upper-case letters
# and digits. Anything else (an unfilled "{{%PROLIFIC_PID%}}" placeholder,
# a pasted URL) is refused before it can name a rater.
ID_PATTERNS = {
    "prolific": re.compile(r"[A-Za-z0-9]{24}"),
    "mturk": re.compile(r"[A-Z0-9]{8,64}"),
    "generic": re.compile(r"[A-Za-z0-9._-]{1,64}"),
}
ID_RULES = {
    "prolific": "24 letters and digits",
    "mturk": "8 to 64 capital letters and digits",
    "generic": "1 to 64 letters, digits, dots, hyphens and underscores",
}
# A platform's study and session ids (and MTurk's hit and assignment ids).
_TOKEN = re.compile(r"[A-Za-z0-9._-]{1,100}")
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"
# Where an MTurk assignment may be submitted (turkSubmitTo): nowhere else,
# so the entry link cannot be made to post to another site.
MTURK_HOSTS = ("https://www.mturk.com", "https://workersandbox.mturk.com")
PLATFORM_NAMES = {"prolific": "Prolific", "mturk": "Amazon Mechanical Turk", "generic": ""}


class BadEntry(ValueError):
    """An entry link whose parameters cannot admit anyone; the message says
    which parameter and what is wrong, never its value."""


@dataclass(frozen=True)
class Entry:
    """What a platform's entry URL says about the participant."""

    participant: str
    platform_study: str | None = None
    platform_session: str | None = None
    # MTurk: where the finished assignment is posted.
    submit_to: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        return {
            "study": self.platform_study,
            "session": self.platform_session,
            "submit_to": self.submit_to,
        }


def study_crowd(study: Study) -> CrowdSpec | None:
    return crowd_settings(study.crowd)


def entry_links(spec: CrowdSpec, slug: str, base_url: str) -> list[tuple[str, str]]:
    """The study's entry link as a lead gives it to the platform: (label, URL) pairs.

    The same path as the rate blueprint's ``/s/<slug>`` route.
    """
    url = f"{base_url.rstrip('/')}/s/{slug}"
    links = [("Entry link", url)]
    if spec.platform == "prolific":
        names = (spec.id_param, spec.study_param, spec.session_param)
        # Prolific's own placeholders, which it fills in for each participant.
        query = "&".join(f"{name}={{{{%{name}%}}}}" for name in names)
        links.append(("With Prolific's URL parameters", f"{url}?{query}"))
    elif spec.platform == "mturk":
        links.append(("ExternalQuestion URL (MTurk adds its parameters)", url))
    else:
        links.append(("With the participant id", f"{url}?{spec.id_param}=PARTICIPANT_ID"))
    return links


def is_preview(spec: CrowdSpec, args: Mapping[str, str]) -> bool:
    """MTurk shows a HIT before a worker accepts it, with no assignment yet."""
    return spec.platform == "mturk" and args.get("assignmentId") == MTURK_PREVIEW


def _optional_token(args: Mapping[str, str], name: str | None) -> str | None:
    if name is None:
        return None
    value = args.get(name, "").strip()
    if not value:
        return None
    if not _TOKEN.fullmatch(value):
        raise BadEntry(
            f"The link's {name} parameter is malformed: it must be 1 to 100 letters, "
            "digits, dots, hyphens or underscores."
        )
    return value


def read_entry(spec: CrowdSpec, args: Mapping[str, str]) -> Entry:
    """The participant's id and platform study and session from the URL's query."""
    name = spec.id_param
    raw = args.get(name)
    if raw is None:
        raise BadEntry(f"The link has no {name} parameter, so we cannot tell who you are.")
    participant = raw.strip()
    if not participant:
        raise BadEntry(f"The link's {name} parameter is empty, so we cannot tell who you are.")
    if not ID_PATTERNS[spec.platform].fullmatch(participant):
        raise BadEntry(
            f"The link's {name} parameter is malformed: it must be {ID_RULES[spec.platform]} "
            f"(it has {plural(len(participant), 'character')})."
        )
    submit_to = None
    if spec.platform == "mturk":
        for required in ("assignmentId", "hitId"):
            if not args.get(required, "").strip():
                raise BadEntry(f"The link has no {required} parameter.")
        submit_to = args.get("turkSubmitTo", "").strip().rstrip("/")
        if submit_to not in MTURK_HOSTS:
            raise BadEntry(
                "The link's turkSubmitTo parameter must be " + " or ".join(MTURK_HOSTS) + "."
            )
    return Entry(
        participant=participant,
        platform_study=_optional_token(args, spec.study_param),
        platform_session=_optional_token(args, spec.session_param),
        submit_to=submit_to,
    )


def crowd_rater(session: Session, study: Study, participant: str) -> User | None:
    return session.exec(
        select(User).where(
            User.study_id == study.id, User.role == Role.RATER, User.platform_id == participant
        )
    ).first()


def is_full(session: Session, study: Study, spec: CrowdSpec) -> bool:
    """Whether the study has ``max_raters`` raters who consented (entry links and invites),
    or, in an overlap design, every seat taken (:mod:`.dealing`)."""
    overlap = overlap_spec(study)
    if overlap is not None and seats_full(session, study, overlap):
        return True
    if spec.max_raters is None:
        return False
    joined = session.exec(
        select(func.count(User.id)).where(
            User.study_id == study.id, User.role == Role.RATER, User.consented_at.is_not(None)
        )
    ).one()
    return joined >= spec.max_raters


def enrol_participant(session: Session, study: Study, entry: Entry) -> User:
    """A new rater keyed by their platform id, with their blocks; :class:`StudyFull` at the cap."""
    study = lock_study(session, study.id)
    spec = study_crowd(study)
    # Counted under the lock, so two participants cannot both take the last place;
    # a study stopped when decided (stopped_at) takes nobody new either.
    if study.stopped_at is not None or is_full(session, study, spec):
        raise StudyFull(study.slug)
    take_seat(session, study)
    user = new_rater(session, study, source=UserSource.CROWD, platform_id=entry.participant)
    # No return link: it would let in whoever saw it, in any browser.
    admit(session, study, user, return_link=False)
    return user


def decline_participant(session: Session, study: Study, entry: Entry) -> User:
    """Record a refusal of consent: the rater code and platform id with ``declined_at``."""
    user = new_rater(session, study, source=UserSource.CROWD, platform_id=entry.participant)
    user.declined_at = now()
    return user


def note_platform_session(block: Block, entry: Mapping[str, str | None] | None) -> None:
    """Record the platform study and session a block is started under."""
    if not entry:
        return
    block.platform_study_id = entry.get("study")
    block.platform_session_id = entry.get("session")


# ------------------------------------------------------ proof of entry


def browser_digest(token: str) -> str:
    """What is stored of a browser's binding cookie: its SHA-256 digest."""
    return hashlib.sha256(token.encode()).hexdigest()


def _bound(session: Session, user: User, browser: str) -> bool:
    return (
        session.exec(
            select(CrowdEntry.id).where(
                CrowdEntry.user_id == user.id,
                CrowdEntry.browser == browser,
                CrowdEntry.proof != EntryProof.REFUSED,
            )
        ).first()
        is not None
    )


def entry_proof(session: Session, user: User, entry: Entry, browser: str | None) -> EntryProof:
    """What proves that this entry by ``user``'s participant id is theirs.

    ``browser``: the digest of the browser's binding cookie (``None``
    without one). In order: the browser was let in as ``user`` before; the
    link carries the platform session of the block in progress; or, with no
    block in progress and the next block open to start (its gap over), a
    platform session none of the rater's blocks was started under (the
    platform's link for a new wave). Otherwise
    :attr:`~annotator.models.EntryProof.REFUSED`.
    """
    if browser is not None and _bound(session, user, browser):
        return EntryProof.BROWSER
    if entry.platform_session is None:
        return EntryProof.REFUSED
    states = block_states(session, user, count_rated=False)
    current = next((s for s in states if s.status == BlockStatus.IN_PROGRESS), None)
    if current is not None:
        if current.block.platform_session_id == entry.platform_session:
            return EntryProof.SESSION
        return EntryProof.REFUSED
    upcoming = next((s for s in states if s.status != BlockStatus.DONE), None)
    used = {s.block.platform_session_id for s in states}
    if (
        upcoming is not None
        and upcoming.status == BlockStatus.AVAILABLE
        and entry.platform_session not in used
    ):
        return EntryProof.NEW_SESSION
    return EntryProof.REFUSED


def record_entry(
    session: Session,
    user: User,
    entry: Entry,
    *,
    browser: str,
    address: str | None,
    proof: EntryProof,
) -> CrowdEntry:
    """Record one entry of ``user``; one let in binds ``browser`` to them."""
    row = CrowdEntry(
        user_id=user.id,
        browser=browser,
        address=(address or "")[:100] or None,
        proof=proof,
        platform_session_id=entry.platform_session,
    )
    session.add(row)
    session.flush()
    return row


def browsers_per_rater(session: Session, study: Study) -> dict[int, int]:
    """For each crowd rater of ``study``: from how many browsers they were let in."""
    rows = session.exec(
        select(CrowdEntry.user_id, func.count(distinct(CrowdEntry.browser)))
        .join(User, User.id == CrowdEntry.user_id)
        .where(User.study_id == study.id, CrowdEntry.proof != EntryProof.REFUSED)
        .group_by(CrowdEntry.user_id)
    ).all()
    return dict(rows)


# ------------------------------------------------------------- completion


def wave_code(spec: CrowdSpec | None, position: int) -> str | None:
    """The completion code of the block at ``position`` (1-based), if the study gives one."""
    if spec is None or not 1 <= position <= len(spec.completion_codes.waves):
        return None
    return spec.completion_codes.waves[position - 1]


def screen_out_code(spec: CrowdSpec | None) -> str | None:
    return spec.completion_codes.screen_out if spec is not None else None


def completion_link(spec: CrowdSpec | None, code: str | None) -> str | None:
    """The platform's completion URL for ``code``; ``None`` without a URL or a code."""
    if spec is None or code is None or spec.completion_url is None:
        return None
    return spec.completion_url.replace("{code}", quote(code, safe=""))


def mturk_submit_url(submit_to: str | None) -> str | None:
    """Where a finished MTurk assignment is posted (only MTurk's own hosts)."""
    host = (submit_to or "").rstrip("/")
    if host not in MTURK_HOSTS:
        return None
    parts = urlsplit(host)
    return f"{parts.scheme}://{parts.netloc}/mturk/externalSubmit"


# ------------------------------------------------------------ screening out


def failed_checks(session: Session, user: User) -> int:
    """How many attention checks ``user`` failed, over all their blocks.

    In a rubric study a check is failed once however many of its criteria
    miss their gold share.
    """
    rows = session.exec(
        select(
            Rating.value,
            Scale,
            Item.gold_score,
            Item.gold_tolerance,
            Item.criterion_gold,
            Rating.criterion,
            Rating.block_id,
            Rating.position,
            Rating.item_id,
        )
        .join(Item, Item.id == Rating.item_id)
        .join(Scale, Scale.id == Rating.scale_id)
        .where(Rating.rater_id == user.id, Rating.is_attention_check)
    ).all()
    failed = {
        (block_id, position, item_id)
        for value, scale, gold, tol, by_criterion, criterion, block_id, position, item_id in rows
        if attention_passed(value, scale, criterion_gold_share(gold, by_criterion, criterion), tol)
        is False
    }
    return len(failed)


def screen_out_if_due(session: Session, user: User, study: Study) -> bool:
    """Screen ``user`` out once they failed ``screen_out_after`` checks; ``True`` if now out."""
    if user.screened_out_at is not None:
        return True
    limit = attention_settings(study.attention_checks).screen_out_after
    if limit is None or failed_checks(session, user) < limit:
        return False
    user.screened_out_at = now()
    session.add(user)
    session.flush()
    return True
