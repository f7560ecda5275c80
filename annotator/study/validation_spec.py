"""The study file's ``[validation]`` table: how the dashboard and the report judge the LLMs.

Kept in the stored study file (``Study.source_toml``) and read back with
:func:`annotator.study.studyfile.validation_settings`, so it needs no column of its own.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from .strict import Strict

__all__ = ["ValidationSpec"]


class ValidationSpec(Strict):
    """The ``[validation]`` table: how the dashboard and the report judge the LLMs.

    Kept in the stored study file (``Study.source_toml``) and read back with
    :func:`validation_settings`, so it needs no column of its own.
    """

    # The alt-test's cost-benefit margin (Calderon et al. 2025: 0.2 for crowd
    # workers, 0.1 for skilled annotators).
    epsilon: Annotated[float, Field(ge=0, le=1)] = 0.2
    scoring: Literal["neg_rmse", "accuracy"] = "neg_rmse"
    # The false discovery rate of the Benjamini-Yekutieli correction.
    q: Annotated[float, Field(gt=0, lt=1)] = 0.05
    # The LLM temperature the tables use (scores at other temperatures appear
    # only in the temperature table); unset: the most common one.
    temperature: Annotated[float, Field(ge=0)] | None = None
    # ``[validation.temperatures]``: the temperature of single judges (LLM score
    # models), e.g. ``judge-a = 0``, or ``"not recorded"`` for scores imported without
    # one; it wins over ``temperature`` for that judge (annotator.data.temperatures).
    temperatures: dict[
        Annotated[str, Field(min_length=1)],
        Annotated[float, Field(ge=0)] | Literal["not recorded", "none"],
    ] = {}
    # Stop serving new blocks once the anytime-valid alt-test has decided, for
    # every scale and every judge named in ``judges`` (LLM score models), that
    # the judge passes or cannot pass within the study's budget
    # (annotator.collect.stopping).
    stop_when_decided: bool = False
    judges: list[Annotated[str, Field(min_length=1, max_length=200)]] = []

    @model_validator(mode="after")
    def _judges_named(self) -> ValidationSpec:
        if self.stop_when_decided and not self.judges:
            raise ValueError(
                "judges: name the judges (LLM score models) under test, e.g. "
                'judges = ["gpt-4o"], when stop_when_decided is true'
            )
        if len(set(self.judges)) != len(self.judges):
            raise ValueError("judges: a judge is named twice")
        return self
