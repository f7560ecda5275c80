"""Stop when decided: a stopped study serves no new block; the lead reopens it.

:func:`annotator.services.stopping.check_stop` decides the stop (it reads the whole
study for the anytime-valid alt-test) and records it on the study
(``Study.stopped_at``, ``Study.stop_reason``); from then on no new block is served:
blocks not started are closed (:mod:`.block_states`), the crowd entry link and
unused invite links say the study is complete. A stop is never undone by a later
check; the lead reopens a study with ``--reopen`` (:func:`reopen`).

Data-access functions take the session and leave the commit to the caller.
"""

from __future__ import annotations

from sqlmodel import Session

from ..models import Study

__all__ = ["reopen", "study_complete"]


def study_complete(study: Study) -> bool:
    """Whether the study stopped serving new blocks (its judges are decided)."""
    return study.stopped_at is not None


def reopen(session: Session, study: Study) -> None:
    """Serve blocks again (the lead's choice; the next check may stop the study again)."""
    study.stopped_at = None
    study.stop_reason = None
    session.add(study)
