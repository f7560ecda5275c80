"""The study files the tests share, built from parts so a test changes only
what it is about (``study_toml(gap_days=0)``), and their items."""

from __future__ import annotations

SCALES_TOML = """
[[scales]]
name = "0-5"
min = 0
max = 5
step = 0.01

[[scales]]
name = "0-10"
min = 0
max = 10
step = 0.5

[[scales]]
name = "0-100"
min = 0
max = 100
step = 0.1
"""

# The browser study's scales: every one in steps of 0.01 or finer.
FINE_SCALES_TOML = SCALES_TOML.replace("max = 10\nstep = 0.5", "max = 10\nstep = 0.01")

STS_B_TOML = """
[[benchmarks]]
name = "sts-b"
instructions = "Rate the similarity of the two sentences from {min} to {max}."
template = "Sentence 1: {{ sentence1 }}\\nSentence 2: {{ sentence2 }}"
"""

BENCHMARKS_TOML = (
    STS_B_TOML
    + """
[[benchmarks]]
name = "truthfulqa"
instructions = "Rate how truthful the answer is, from {min} (false) to {max} (true)."
template = "Question: {{ question }}\\nAnswer: {{ answer }}"
"""
)

DEMOGRAPHICS_TOML = """
[[demographics]]
key = "gender"
label = "Gender (self-reported)"
type = "choice"
choices = ["female", "male", "non-binary", "self-describe", "prefer-not-to-say"]
self_describe = "self-describe"

[[demographics]]
key = "age"
label = "Age in years"
type = "number"
min = 18
max = 120

[[demographics]]
key = "field"
label = "Field of study or work"
type = "text"
required = false
"""

# Three rubric criteria: two on every benchmark, one on sts-b only.
CRITERIA_TOML = """
[[criteria]]
name = "fluency"
definition = "Is the text **well written**?"

[[criteria]]
name = "coherence"
definition = "Does it hang together?"

[[criteria]]
name = "relevance"
definition = "Is the second sentence about the first?"
benchmarks = ["sts-b"]
"""


def study_toml(
    *,
    name: str = "Rating test study",
    slug: str = "rt",
    scales: str = SCALES_TOML,
    scale_order: str = "balanced",
    gap_days: float = 7,
    extra: str = "",
    demographics: str = DEMOGRAPHICS_TOML,
    consent: str = '"You agree to rate ten short texts."',
    benchmarks: str = BENCHMARKS_TOML,
) -> str:
    return (
        f'name = "{name}"\nslug = "{slug}"\nsession_gap_days = {gap_days}\n'
        f'scale_order = "{scale_order}"\n'
        f"consent = {consent}\n"
        f"{extra}\n{scales}\n{benchmarks}\n{demographics}"
    )


def item_rows(n: int = 10, gold: int = 0) -> list[dict]:
    rows = []
    for i in range(1, n + 1):
        if i % 2:
            rows.append(
                {
                    "item_id": f"s{i}",
                    "benchmark": "sts-b",
                    "sentence1": f"Sentence {i} <b>bold?</b>",
                    "sentence2": f"Another sentence {i}.",
                }
            )
        else:
            rows.append(
                {
                    "item_id": f"t{i}",
                    "benchmark": "truthfulqa",
                    "question": f"Question {i}?",
                    "answer": f"Answer {i}.",
                }
            )
    for g in range(1, gold + 1):
        rows.append(
            {
                "item_id": f"gold{g}",
                "benchmark": "sts-b",
                "sentence1": "Please give this item the top score.",
                "sentence2": "This is an attention check.",
                "gold_score": 1.0,
                "gold_tolerance": 0.05,
            }
        )
    return rows


# The smallest valid study file: one scale, one benchmark (tests/study).
VALID_STUDY = """
name = "S"
slug = "s"
consent = "ok"
[[scales]]
name = "0-5"
min = 0
max = 5
step = 0.1
[[benchmarks]]
name = "b"
instructions = "From {min} to {max}."
template = "{{ text }}"
"""
