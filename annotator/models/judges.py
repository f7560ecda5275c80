"""LLM judges' stored scores and failed requests."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, Index, Text, text
from sqlmodel import Field, SQLModel

from ..clock import now

__all__ = ["NO_TEMPERATURE_KEY", "LLMScore", "JudgeFailure"]


#: The stand-in for "no temperature" in the LLM scores' key. Temperatures are
#: at least 0 (the importer refuses others), so -1 is never a real one.
NO_TEMPERATURE_KEY = -1


class LLMScore(SQLModel, table=True):
    """One score of an LLM judge: key (item, scale, criterion, model, temperature, run).

    An imported score may have no temperature (NULL). NULLs are distinct in a
    unique constraint on SQLite and PostgreSQL alike, so two scores of one run
    without a temperature would both be accepted; the key is therefore a unique
    index on ``coalesce(temperature, -1)``, an expression index both databases
    support, rather than a constraint on the column itself.
    """

    __table_args__ = (
        Index(
            "uq_llmscore_key",
            "item_id",
            "scale_id",
            "criterion",
            "model",
            text(f"coalesce(temperature, {NO_TEMPERATURE_KEY})"),
            "run",
            unique=True,
        ),
        Index("ix_llmscore_scale_item", "scale_id", "item_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    item_id: int = Field(foreign_key="item.id")
    scale_id: int = Field(foreign_key="scale.id")
    # The Criterion.name scored; "" for a study's single unnamed criterion.
    criterion: str = Field(default="", max_length=100, sa_column_kwargs={"server_default": ""})
    model: str = Field(max_length=200)
    # "" when the file gives no run; part of the key, so NULL would break it.
    run: str = Field(default="", max_length=100)
    temperature: float | None = None
    value: float
    created_at: datetime = Field(default_factory=now)
    # The judge prompt's version (annotator.judge.prompts.prompt_hash) for
    # scores from ``annotator judge``; None for imported scores. It is not in
    # the key: the run label of a judged score names it (judge.tasks.run_label).
    prompt_hash: str | None = Field(default=None, max_length=64)


class JudgeFailure(SQLModel, table=True):
    """A judge request that gave no valid score: never a score, kept to be seen.

    A later ``annotator judge`` asks again (only stored scores are skipped).
    """

    id: int | None = Field(default=None, primary_key=True)
    item_id: int = Field(foreign_key="item.id", index=True)
    scale_id: int = Field(foreign_key="scale.id")
    # The Criterion.name asked about; "" for a study's single unnamed criterion.
    criterion: str = Field(default="", max_length=100, sa_column_kwargs={"server_default": ""})
    model: str = Field(max_length=200)
    temperature: float
    run: str = Field(max_length=100)
    prompt_hash: str = Field(max_length=64)
    # The last reply (None when no reply came: a server or connection error).
    raw_reply: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    error: str = Field(sa_column=Column(Text, nullable=False))
    created_at: datetime = Field(default_factory=now)
