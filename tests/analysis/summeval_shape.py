"""SummEval-shaped rubric data in memory: summaries x criteria, 3 raters, 6 judges.

The shape of SummEval's expert annotations as the alt-test paper uses them (1,600
summaries, four criteria, three experts, 1-5 Likert scores: Calderon, Reichart and
Dror 2025, Table 1), with made-up scores: each (summary, criterion) has a latent
quality, raters and judges add their own noise (the judges from close to the raters
to far off), rounded to the scale's points. ``raw`` keeps the scores as generated,
for building the reference layout without the app's frames.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from annotator.data.frames import StudyFrames

CRITERIA = ("coherence", "consistency", "fluency", "relevance")
RATERS = ("E1", "E2", "E3")
JUDGES = tuple(f"judge-{i}" for i in range(1, 7))
SCALE = "1-5"


@dataclass(frozen=True)
class SummEvalShape:
    frames: StudyFrames
    #: (summary, criterion, who, value): every rater's and judge's score.
    humans: pd.DataFrame
    judges: pd.DataFrame


def summeval_shape(n_summaries: int = 1600, *, seed: int = 0) -> SummEvalShape:
    rng = np.random.default_rng(seed)
    summaries = [f"s{i:04d}" for i in range(n_summaries)]
    human_rows, judge_rows = [], []
    for c, criterion in enumerate(CRITERIA):
        latent = rng.normal(3.0 + 0.3 * c, 1.0, n_summaries)
        for r, rater in enumerate(RATERS):
            noise = rng.normal(0.2 * (r - 1), 0.6, n_summaries)
            values = np.clip(np.rint(latent + noise), 1, 5)
            human_rows += zip(
                summaries, [criterion] * n_summaries, [rater] * n_summaries, values, strict=True
            )
        for j, judge in enumerate(JUDGES):
            noise = rng.normal(0.0, 0.3 + 0.25 * j, n_summaries)
            values = np.clip(np.rint(latent + noise), 1, 5)
            judge_rows += zip(
                summaries, [criterion] * n_summaries, [judge] * n_summaries, values, strict=True
            )
    humans = pd.DataFrame(human_rows, columns=["summary", "criterion", "who", "value"])
    judges = pd.DataFrame(judge_rows, columns=["summary", "criterion", "who", "value"])
    return SummEvalShape(_frames(summaries, humans, judges), humans, judges)


def _frames(summaries: list[str], humans: pd.DataFrame, judges: pd.DataFrame) -> StudyFrames:
    start = pd.Timestamp("2026-01-05 09:00", tz="UTC")
    ratings = pd.DataFrame(
        {
            "item": humans["summary"],
            "benchmark": "summeval",
            "scale": SCALE,
            "rater": humans["who"],
            "value": humans["value"].astype(float),
            "is_repeat": False,
            "is_attention_check": False,
            "position": np.nan,
            "served_at": pd.NaT,
            "submitted_at": start,
            "source": "import",
            "attention_passed": None,
            "criterion": humans["criterion"],
        }
    )
    ratings["served_at"] = pd.Series(pd.NaT, index=ratings.index, dtype="datetime64[ns, UTC]")
    llm = pd.DataFrame(
        {
            "item": judges["summary"],
            "benchmark": "summeval",
            "scale": SCALE,
            "model": judges["who"],
            "run": "",
            "temperature": 0.0,
            "value": judges["value"].astype(float),
            "prompt": "",
            "criterion": judges["criterion"],
        }
    )
    items = pd.DataFrame(
        {
            "item": summaries,
            "benchmark": "summeval",
            "gold_score": np.nan,
            "gold_tolerance": np.nan,
            "is_attention_check": False,
        }
    )
    return StudyFrames(
        study="summeval-shape",
        ratings=ratings,
        llm=llm,
        scales=pd.DataFrame({"scale": [SCALE], "min": [1.0], "max": [5.0], "step": [1.0]}),
        items=items,
        demographics=pd.DataFrame({"rater": list(RATERS)}),
        blocks=pd.DataFrame(
            columns=["rater", "scale", "position", "started_at", "completed_at", "status"]
            + ["n_entries"]
        ),
        criteria=pd.DataFrame(
            {
                "criterion": list(CRITERIA),
                "definition": [f"The {c} of the summary." for c in CRITERIA],
                "benchmarks": [None] * len(CRITERIA),
            }
        ),
    )
