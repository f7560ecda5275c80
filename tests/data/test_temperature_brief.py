"""The dashboard's temperature sentence in a line: each judge's scores at its
temperature summed over the scales, counted here from the scores themselves."""

from __future__ import annotations

import numpy as np
import pandas as pd

from annotator.data.matrix_rules import scored_temperatures

SCALES = ("0-5", "0-10", "0-100")


def _scores(temperature_of) -> pd.DataFrame:
    rows = []
    for judge in ("judge-a", "judge-b", "judge-c"):
        for s, scale in enumerate(SCALES):
            for item in range(20):
                # Two scores of each judge and scale off its main temperature.
                t = temperature_of(judge) if item < 18 else 0.7
                rows.append(
                    {
                        "model": judge,
                        "scale": scale,
                        "item": f"{s}-{item}",
                        "run": 0,
                        "temperature": t,
                        "value": 1.0,
                    }
                )
    return pd.DataFrame(rows)


def _at(llm: pd.DataFrame, judge: str, temperature: float) -> tuple[int, int]:
    mine = llm[llm["model"] == judge]
    found = int(np.isclose(mine["temperature"].to_numpy(dtype=float), temperature).sum())
    return found, len(mine)


def test_judges_alike_are_said_once_with_their_scores_summed_over_the_scales():
    llm = _scores(lambda judge: 0.0)
    chosen = scored_temperatures(llm)
    brief = chosen.brief()
    assert brief.startswith("temperature 0 (each judge's most common; scores at it: ")
    for judge in ("judge-a", "judge-b", "judge-c"):
        found, total = _at(llm, judge, 0.0)
        assert f"{judge} {found} of {total}" in brief
    # Scale by scale it is three times as long; in a line it is not.
    assert len(brief) < 120 < len(chosen.describe())


def test_judges_at_their_own_temperatures_each_say_theirs():
    llm = _scores(lambda judge: 1.0 if judge == "judge-c" else 0.0)
    brief = scored_temperatures(llm, per_judge=[("judge-c", 1.0)]).brief()
    assert brief.startswith("each judge's own temperature (")
    found, total = _at(llm, "judge-c", 1.0)
    assert f"judge-c at 1 (chosen for this judge; {found} of {total} scores)" in brief
    found, total = _at(llm, "judge-a", 0.0)
    assert f"judge-a at 0 (its most common; {found} of {total} scores)" in brief


def test_a_judge_without_scores_at_the_studys_temperature_is_left_out():
    llm = _scores(lambda judge: 1.0 if judge == "judge-c" else 0.0)
    brief = scored_temperatures(llm, requested=0.0).brief()
    assert brief.startswith("temperature 0 (the study's setting; scores at it: ")
    assert f"judge-c 0 of {_at(llm, 'judge-c', 0.0)[1]}: none, so it is left out" in brief
