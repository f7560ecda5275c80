"""The base of every table of the study file."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["Strict"]


class Strict(BaseModel):
    """Unknown keys are errors (a typo must not pass silently); text is stripped."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
