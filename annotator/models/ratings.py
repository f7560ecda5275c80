"""Human ratings and how they are collected: blocks, overlap shares, block
assignments, ratings and their history."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, Index, UniqueConstraint
from sqlmodel import Field, SQLModel

from ..choices import (
    RatingSource,
)
from ..clock import now

__all__ = ["Block", "ItemShare", "BlockAssignment", "Rating", "RatingChange"]


class Block(SQLModel, table=True):
    """One block: a rater rates every item of the study on one scale."""

    __table_args__ = (
        UniqueConstraint("rater_id", "scale_id"),
        UniqueConstraint("rater_id", "position"),
    )

    id: int | None = Field(default=None, primary_key=True)
    rater_id: int = Field(foreign_key="user.id", index=True)
    scale_id: int = Field(foreign_key="scale.id", index=True)
    # 1-based place of this block in the rater's block order.
    position: int
    seed: int
    # The presentation order: a list of {"item": item id, "repeat": bool,
    # "attention": bool} entries; stored so resuming keeps the order. An
    # entry passed over because its item could not be shown also has
    # "passed_over": when (annotator.collect.rated_places.PASSED_OVER).
    item_order: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON))
    started_at: datetime | None = None
    completed_at: datetime | None = None
    created_at: datetime = Field(default_factory=now)
    # The entry being shown and since when: its served time goes into the
    # rating when it is submitted (reloading the page keeps the first time).
    current_position: int | None = None
    current_served_at: datetime | None = None
    # Set when a lead lets the rater start this block before the gap is over
    # (the AuditEvent AuditAction.GAP_LIFTED says who and when).
    gap_lifted_at: datetime | None = None
    # The crowd platform's study and session the block was started under
    # (Prolific STUDY_ID and SESSION_ID; MTurk hitId and assignmentId):
    # each wave of a study is its own platform study.
    platform_study_id: str | None = Field(default=None, max_length=100)
    platform_session_id: str | None = Field(default=None, max_length=100)


class ItemShare(SQLModel, table=True):
    """One of the ``raters_per_item`` places of an item on a scale, held by a block.

    Overlap studies only (``[assignment] design = "overlap"``, see
    :mod:`annotator.collect.dealing`). A block takes its shares when it
    starts; a rater who leaves gives theirs back (the rows are deleted, the
    audit log keeps the event). The unique key on (item, scale, slot) is what
    makes two raters dealt at once unable to take the same last place.
    """

    __table_args__ = (
        UniqueConstraint("item_id", "scale_id", "slot"),
        UniqueConstraint("block_id", "item_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id", index=True)
    item_id: int = Field(foreign_key="item.id")
    scale_id: int = Field(foreign_key="scale.id")
    # 0 .. raters_per_item - 1
    slot: int
    block_id: int = Field(foreign_key="block.id")
    taken_at: datetime = Field(default_factory=now)


class BlockAssignment(SQLModel, table=True):
    """How a rater's block order was drawn when they consented.

    The order itself is ``Block.position``; this row keeps what made
    it: the rater's place among the study's raters (which Latin-square row
    they got) or the seed of their random order.
    """

    __table_args__ = (UniqueConstraint("study_id", "sequence"),)

    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="user.id", unique=True)
    study_id: int = Field(foreign_key="study.id", index=True)
    # 0-based place of the rater in the order raters joined the study.
    sequence: int
    # "balanced" or "random", as the study's scale_order was at the time.
    method: str = Field(max_length=20)
    latin_row: int | None = None
    seed: int | None = None
    # Scale ids in block order.
    scale_ids: list[int] = Field(default_factory=list, sa_column=Column(JSON))
    created_at: datetime = Field(default_factory=now)


class Rating(SQLModel, table=True):
    __table_args__ = (
        UniqueConstraint(
            "rater_id", "item_id", "scale_id", "criterion", "is_repeat", name="uq_rating_key"
        ),
        Index("ix_rating_scale_item", "scale_id", "item_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    # No index of its own: the unique key above leads with rater_id.
    rater_id: int = Field(foreign_key="user.id")
    item_id: int = Field(foreign_key="item.id")
    scale_id: int = Field(foreign_key="scale.id")
    # The Criterion.name rated; "" for a study's single unnamed criterion.
    criterion: str = Field(default="", max_length=100, sa_column_kwargs={"server_default": ""})
    block_id: int | None = Field(default=None, foreign_key="block.id", index=True)
    value: float
    # 1-based place in the block's presentation order; None when imported.
    position: int | None = None
    is_repeat: bool = False
    is_attention_check: bool = False
    served_at: datetime | None = None
    submitted_at: datetime = Field(default_factory=now)
    # A RatingSource.
    source: str = Field(default=RatingSource.APP, max_length=20)
    # The StudyVersion.version the rating was first given under (the
    # consent, instructions and template the rater saw).
    study_version: int


class RatingChange(SQLModel, table=True):
    """Every value a rating has had, the first one included."""

    id: int | None = Field(default=None, primary_key=True)
    rating_id: int = Field(foreign_key="rating.id", index=True)
    value: float
    previous_value: float | None = None
    changed_at: datetime = Field(default_factory=now)
    # A ChangeReason.
    reason: str = Field(max_length=20)
    actor_id: int | None = Field(default=None, foreign_key="user.id")
