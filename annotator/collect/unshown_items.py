"""Items that could not be shown: a rater passing over one, and the list for the lead.

When a benchmark's template fails to render an item, the rater's page says
so (:func:`~annotator.collect.item_pages.report_unshown_item` records an
``item-not-shown`` audit event) and offers to go on. Going on *passes over*
that place of the block: its entry of ``Block.item_order`` gets
:data:`~annotator.collect.rated_places.PASSED_OVER` (when), an
``item-passed-over`` audit event records which item, where and why, and the
block goes on to its next place, or completes, with no rating there. The
exports and the analysis then see a missing cell, as for any item a rater
did not rate; nothing is filled in. In an overlap study the rater's place of
the item is handed on to another rater (:mod:`annotator.collect.refill`).

A place may be passed over only while its template fails: the caller
renders the item again on the server and passes the error in. A lead who
later fixes the template (``annotator study update``) does not bring passed
places back: they stay passed over, and the rater is not sent back to them.

Data-access functions take the session and leave the commit to the caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session, select

from ..clock import now
from ..models import AuditAction, AuditEvent, Rating, Study
from .block_states import BlockUnavailable
from .item_pages import ItemPage, serve, update_block
from .rated_places import PASSED_OVER, next_position
from .refill import give_back_place

__all__ = ["PassedOver", "UnshownItem", "pass_over", "unshown_items"]


@dataclass
class PassedOver:
    # The place to go on to; None when the block is now complete.
    following: int | None
    block_completed: bool


def pass_over(
    session: Session, page: ItemPage, rated: Mapping[int, Rating], error: BaseException
) -> PassedOver:
    """Pass over ``page``'s place, whose item just failed to render with ``error``.

    ``rated``: the block's ratings by position, as ``page`` was built from.
    Only the block's next place (the first neither rated nor passed over)
    may be passed over: an earlier place is rated or already passed, a
    later one not reached yet; :class:`BlockUnavailable` says so, with
    nothing stored. The caller commits.
    """
    block = page.block
    if page.existing is not None or next_position(block, rated) != page.position:
        raise BlockUnavailable(
            "Only the item you are at can be passed over, once; nothing was changed."
        )
    current = now()
    order = [dict(entry) for entry in block.item_order]
    order[page.position - 1][PASSED_OVER] = current.isoformat()
    # An overlap study's place is handed on, so the item still gets its k ratings.
    place = give_back_place(session, block, page.item.id)
    # A new list: the JSON column does not track changes inside the old one.
    update_block(session, block, item_order=order)
    session.add(
        AuditEvent(
            subject_id=block.rater_id,
            study_id=page.item.study_id,
            action=AuditAction.ITEM_PASSED_OVER,
            created_at=current,
            details={
                "item": page.item.external_id,
                "benchmark": page.benchmark.name,
                "block": block.id,
                "position": page.position,
                "error": f"{type(error).__name__}: {error}"[:500],
                **({"place": place} if place is not None else {}),
            },
        )
    )
    following = next_position(block, rated)
    if following is None:
        if block.completed_at is None:
            update_block(
                session, block, completed_at=current, current_position=None, current_served_at=None
            )
        return PassedOver(following=None, block_completed=True)
    serve(session, block, following)
    return PassedOver(following=following, block_completed=False)


@dataclass
class UnshownItem:
    """An item whose template failed to render for some rater (the lead's study page)."""

    benchmark: str
    item: str
    # The error of the latest failure.
    error: str
    # How many raters were shown the failure, and how many of them passed over it.
    raters_shown: int
    raters_passed_over: int
    # The latest failure or pass-over.
    last: datetime


def unshown_items(session: Session, study: Study) -> list[UnshownItem]:
    """The study's items that failed to render, from the audit log, latest first.

    A failure stays listed after the lead fixes the template: the log keeps
    what raters were shown, and the ``last`` time tells old from new.
    """
    events = session.exec(
        select(AuditEvent)
        .where(
            AuditEvent.study_id == study.id,
            AuditEvent.action.in_([AuditAction.ITEM_NOT_SHOWN, AuditAction.ITEM_PASSED_OVER]),
        )
        .order_by(AuditEvent.created_at, AuditEvent.id)
    ).all()
    found: dict[tuple[str, str], dict] = {}
    for event in events:
        key = (str(event.details.get("benchmark", "")), str(event.details.get("item", "")))
        entry = found.setdefault(key, {"error": "", "shown": set(), "passed": set(), "last": None})
        if event.action == AuditAction.ITEM_NOT_SHOWN:
            entry["shown"].add(event.subject_id)
        else:
            entry["passed"].add(event.subject_id)
        entry["error"] = str(event.details.get("error", "")) or entry["error"]
        entry["last"] = event.created_at
    listed = [
        UnshownItem(
            benchmark=benchmark,
            item=item,
            error=entry["error"],
            raters_shown=len(entry["shown"] | entry["passed"]),
            raters_passed_over=len(entry["passed"]),
            last=entry["last"],
        )
        for (benchmark, item), entry in found.items()
    ]
    listed.sort(key=lambda row: (row.last, row.benchmark, row.item), reverse=True)
    return listed
