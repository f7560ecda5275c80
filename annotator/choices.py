"""The values of the tables' enumerated columns (:mod:`annotator.models`).

Each is stored as a plain string: each value is the text the column holds, so
comparing a column with a member works in Python and SQL. ``annotator.models``
imports them, so both ``annotator.models.Role`` and ``annotator.choices.Role`` work.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "Role",
    "StudyRole",
    "UserSource",
    "RatingSource",
    "ChangeReason",
    "AuditAction",
    "RaterStatus",
    "EntryProof",
    "WithdrawnRatings",
]


class Role(StrEnum):
    LEAD = "lead"
    RATER = "rater"


class StudyRole(StrEnum):
    """What a lead may do in one study (``StudyMember.role``)."""

    # Everything: raters and their links, invites, every change.
    OWNER = "owner"
    # Read only: the dashboard, the report, the exports, the versions.
    ANALYST = "analyst"


class UserSource(StrEnum):
    """How a rater came into the study."""

    # Through an invite link of the app.
    INVITE = "invite"
    # With ratings collected elsewhere (``ratings import``).
    IMPORT = "import"
    # Through the study's entry link from a crowd platform (``[crowd]``),
    # keyed by the platform's participant id.
    CROWD = "crowd"


class RatingSource(StrEnum):
    APP = "app"
    IMPORT = "import"


class ChangeReason(StrEnum):
    """Why a rating got a value (``RatingChange.reason``)."""

    CREATE = "create"
    REVISE = "revise"
    IMPORT = "import"


class AuditAction(StrEnum):
    GAP_LIFTED = "gap-lifted"
    RETURN_LINK_ROTATED = "return-link-rotated"
    LEAD_CREATED = "lead-created"
    LEAD_PASSWORD_RESET = "lead-password-reset"
    RATER_WITHDRAWN = "rater-withdrawn"
    RATER_EXCLUDED = "rater-excluded"
    RATER_INCLUDED = "rater-included"
    STUDY_UPDATED = "study-updated"
    DATABASE_RESTORED = "database-restored"
    STUDY_SHARED = "study-shared"
    STUDY_UNSHARED = "study-unshared"
    LEAD_ADMIN_GRANTED = "lead-admin-granted"
    LEAD_ADMIN_REVOKED = "lead-admin-revoked"
    # A rater's item page whose benchmark template failed to render.
    ITEM_NOT_SHOWN = "item-not-shown"
    # A rater went on past such an item (annotator.collect.unshown_items).
    ITEM_PASSED_OVER = "item-passed-over"


class RaterStatus(StrEnum):
    """Whether a rater's ratings count (``User.status``).

    Only active raters' ratings enter exports and statistics
    (:func:`annotator.data.export_scope.counted_rater`).
    """

    ACTIVE = "active"
    # The rater withdrew their consent: final.
    WITHDRAWN = "withdrawn"
    # Left out by the lead (a pilot or test rater, a careless one): undone by
    # including the rater again.
    EXCLUDED = "excluded"


class EntryProof(StrEnum):
    """What let a crowd participant in by the study's entry link (``CrowdEntry.proof``).

    Knowing a participant id is no proof: the id only finds the rater.
    """

    # The participant consented in this browser (their first entry).
    CONSENT = "consent"
    # The browser was bound to the rater at an earlier entry (its cookie).
    BROWSER = "browser"
    # The platform session of the rater's block in progress.
    SESSION = "session"
    # A platform session none of the rater's blocks has, for the next block
    # (wave) the rater is due to start.
    NEW_SESSION = "new-session"
    # No proof: refused, nothing opened.
    REFUSED = "refused"


class WithdrawnRatings(StrEnum):
    """What happens to a withdrawn rater's ratings (the study file's ``withdrawn_ratings``)."""

    # Kept in the database, left out of every export and statistic.
    KEEP = "keep"
    # Deleted with their history; only the audit event remains.
    DELETE = "delete"


# For every password the app sets: a lead's and a rater's.
