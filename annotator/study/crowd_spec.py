"""The study file's ``[crowd]`` table: entry by a crowd platform's URL."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from .strict import Strict

__all__ = ["PLATFORM_DEFAULTS", "CompletionCodes", "CrowdSpec", "crowd_settings"]

# Per platform: the URL parameters that carry the participant id, the
# platform's study and its session, and where a finished participant goes.
PLATFORM_DEFAULTS: dict[str, dict[str, str | None]] = {
    "prolific": {
        "id_param": "PROLIFIC_PID",
        "study_param": "STUDY_ID",
        "session_param": "SESSION_ID",
        "completion_url": "https://app.prolific.com/submissions/complete?cc={code}",
    },
    # MTurk's ExternalQuestion: the HIT is the wave's platform study, the
    # assignment its session; completion is a POST back to MTurk.
    "mturk": {
        "id_param": "workerId",
        "study_param": "hitId",
        "session_param": "assignmentId",
        "completion_url": None,
    },
    "generic": {
        "id_param": None,
        "study_param": None,
        "session_param": None,
        "completion_url": None,
    },
}

_PARAM = r"^[A-Za-z_][A-Za-z0-9_]{0,49}$"


class CompletionCodes(Strict):
    # One code per block position: the code of wave 1, 2, 3 ...
    waves: list[Annotated[str, Field(min_length=1, max_length=100)]] = []
    # Declined consent, or too many failed attention checks.
    screen_out: Annotated[str, Field(min_length=1, max_length=100)] | None = None


class CrowdSpec(Strict):
    """The ``[crowd]`` table: a study-level entry link for a crowd platform."""

    platform: Literal["prolific", "mturk", "generic"]
    id_param: Annotated[str, Field(pattern=_PARAM)] | None = None
    study_param: Annotated[str, Field(pattern=_PARAM)] | None = None
    session_param: Annotated[str, Field(pattern=_PARAM)] | None = None
    max_raters: Annotated[int, Field(ge=1)] | None = None
    # Where a participant goes after a block, ``{code}`` standing for the
    # wave's completion code.
    completion_url: str | None = None
    completion_codes: CompletionCodes = CompletionCodes()

    @model_validator(mode="after")
    def _platform_defaults(self) -> CrowdSpec:
        for key, default in PLATFORM_DEFAULTS[self.platform].items():
            if getattr(self, key) is None and default is not None:
                setattr(self, key, default)
        if self.id_param is None:
            raise ValueError("id_param is required for platform 'generic'")
        if self.completion_url is not None:
            if not self.completion_url.startswith(("https://", "http://")):
                raise ValueError("completion_url must start with https:// or http://")
            if "{code}" not in self.completion_url:
                raise ValueError("completion_url must contain {code}")
        return self


def crowd_settings(stored: dict | None) -> CrowdSpec | None:
    """A study's stored ``[crowd]`` table; ``None`` when it has no entry link."""
    return CrowdSpec.model_validate(stored) if stored else None
