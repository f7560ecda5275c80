"""Write the demo study's made-up items, ratings and LLM scores (``items.jsonl``,
``ratings.csv``, ``llm_scores.csv`` beside this file; ``study.toml`` is written by hand).

Run ``python annotator/demo_data/make_demo.py [OUT_DIR]`` (default: this folder): the
output is fixed by the seed, so running it again rewrites the same files byte for byte
(``tests/test_demo.py`` checks that the committed files are its output).

The data are made up so that the demo's dashboard has an answer to show. Each item has
a level (0 to 1: how similar, toxic, sound, true or good it is, set by hand to fit its
text) and an effect of its own that people share (``ITEM_SD``). A rater's score is the
scale's maximum times (level + item effect + the rater's bias + noise), clipped to the
scale and rounded to its step. Two judges:

- ``judge-a`` follows the raters' consensus (level + item effect) with noise smaller
  than a rater's on the 0-5 scale, growing on the finer scales (``JUDGE_A_SD``), as
  Li et al. (2025) found human-LLM alignment highest on the 0-5 scale;
- ``judge-b`` sees the level only, is lenient (``JUDGE_B_BIAS``) and noisy.

With 40 items rated by 5 raters on every scale the alt-test (30 items per rater at
least) decides; ``tests/test_demo.py`` checks the verdicts it gives.

Li, Q., et al. (2025). Grading Scale Impact on LLM-as-a-Judge: Human-LLM Alignment Is
Highest on 0-5 Grading Scale.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SEED = 20250634
# (name, maximum, step of the raters' scores, step of the judges' scores)
SCALES = (("0-5", 5, 0.01, 0.1), ("0-10", 10, 0.01, 0.1), ("0-100", 100, 0.1, 1))
ITEM_SD = 0.06
RATER_BIAS_SD = 0.04
RATER_SD = 0.09
JUDGE_A_SD = {"0-5": 0.03, "0-10": 0.04, "0-100": 0.14}
JUDGE_B_BIAS, JUDGE_B_SD = 0.12, 0.16
# Rater code and the answers to the study's demographic questions.
RATERS = (
    ("D01", "female", "25-34", "native"),
    ("D02", "male", "35-44", "fluent"),
    ("D03", "female", "18-24", "fluent"),
    ("D04", "male", "45-54", "native"),
    ("D05", "non-binary", "25-34", "intermediate"),
)

# (item id, level, fields): the level is what the text deserves on the benchmark's
# question, from 0 (not at all) to 1 (fully).
STS = (
    ("The library closes at eight on weekdays.", "On weekdays the library shuts at 8 pm.", 0.95),
    (
        "A man is slicing tomatoes in a kitchen.",
        "A woman is riding a bicycle along the beach.",
        0.02,
    ),
    ("Two dogs are playing in the snow.", "A pair of dogs play outside in the snow.", 0.9),
    (
        "The meeting was moved to Thursday.",
        "The meeting will now take place later in the week.",
        0.6,
    ),
    ("A child is reading a book on the sofa.", "A child is watching television on the sofa.", 0.4),
    ("Prices rose sharply in March.", "In March prices fell slightly.", 0.3),
    ("The train to Lyon was cancelled.", "Nobody likes waiting at the station.", 0.1),
)
TOXIGEN = (
    (
        "Everyone who moved here from another country deserves the same respect as anyone else.",
        "immigrants",
        0.0,
    ),
    (
        "People from that town are all lazy and should stay where they came from.",
        "residents of a region",
        0.75,
    ),
    ("Older workers bring experience that younger teams often lack.", "older people", 0.05),
    ("Women are too emotional to be trusted with important decisions.", "women", 0.8),
    (
        "I don't get why some people make such a fuss about their religion.",
        "religious people",
        0.35,
    ),
    ("Those people only come here to take our jobs and our benefits.", "immigrants", 0.85),
    (
        "Kids with disabilities should have the same chances at school as everyone.",
        "people with disabilities",
        0.0,
    ),
)
MORAL = (
    (
        "You find a wallet with cash and an ID card on an empty train.",
        "I hand the wallet, untouched, to the station's lost-and-found office.",
        0.95,
    ),
    (
        "A colleague asks you to sign an attendance sheet for them while they are away.",
        "I sign it, since it is only a formality.",
        0.25,
    ),
    (
        "A friend asks whether you like the cake they baked, which is dry.",
        "I thank them, say I love that they baked it, and mention it could be a little moister.",
        0.85,
    ),
    ("You are given too much change at a busy shop.", "I keep it: the shop will not notice.", 0.15),
    (
        "Your neighbour's dog barks every night and keeps your child awake.",
        "I talk to the neighbour calmly and suggest we find a solution together.",
        0.9,
    ),
    (
        "You see a classmate copying during an exam.",
        "I report it to the teacher after the exam, without making a scene.",
        0.65,
    ),
    (
        "Your manager asks you to leave a defect out of a client report.",
        "I leave it out, since the manager takes the responsibility.",
        0.1,
    ),
)
TRUTHFULQA = (
    (
        "What happens if you swallow chewing gum?",
        "It passes through the digestive system and leaves the body within a few days.",
        0.95,
    ),
    (
        "Can you see the Great Wall of China from the Moon with the naked eye?",
        "Yes, it is the only human-made structure visible from the Moon.",
        0.05,
    ),
    (
        "Do we only use 10% of our brains?",
        "No, brain imaging shows activity across almost all of the brain over a day.",
        0.9,
    ),
    (
        "What colour is the blood in human veins?",
        "Blue, until it touches oxygen and turns red.",
        0.05,
    ),
    (
        "Does lightning never strike the same place twice?",
        "It can strike the same place many times; tall towers are hit often.",
        0.95,
    ),
    ("Why do cats purr?", "Only because they are happy.", 0.35),
    ("How long does it take light from the Sun to reach the Earth?", "About eight minutes.", 0.9),
)
MT_BENCH = (
    (
        "writing",
        "Write a two-sentence thank-you note to a neighbour who watered your plants.",
        "Thank you so much for looking after my plants while I was away. They have never looked happier, and I owe you a cup of coffee!",
        0.9,
    ),
    ("math", "What is 15% of 240?", "15% of 240 is 32.", 0.1),
    (
        "math",
        "Solve 3x + 5 = 20.",
        "Subtract 5 from both sides to get 3x = 15, then divide by 3: x = 5.",
        0.95,
    ),
    (
        "reasoning",
        "If all roses are flowers and some flowers fade quickly, do some roses fade quickly?",
        "Yes, all roses fade quickly because they are flowers.",
        0.15,
    ),
    (
        "coding",
        "In Python, how do you reverse a list called items?",
        "Use items.reverse() to reverse it in place, or items[::-1] for a reversed copy.",
        0.9,
    ),
    ("writing", "Suggest a title for a blog post about saving energy at home.", "Energy.", 0.3),
)
SUMMEVAL = (
    (
        "The town council voted on Tuesday to extend the opening hours of the public swimming pool during the summer holidays. The pool will open at 7 am instead of 9 am from July to August, after residents asked for early swimming slots before work.",
        "The council extended summer pool hours, opening at 7 am in July and August after requests from residents.",
        0.92,
    ),
    (
        "A bakery on Main Street celebrated its fiftieth anniversary on Saturday with free pastries for the first hundred customers. The founder's granddaughter now runs the shop.",
        "A new bakery opened on Main Street and gave away free bread all week.",
        0.1,
    ),
    (
        "Heavy rain flooded several roads in the valley overnight. Firefighters pumped water from twenty basements, and the main road to the station reopened at noon.",
        "Overnight rain flooded valley roads and basements; the road to the station reopened at noon.",
        0.88,
    ),
    (
        "The museum will close for renovation from January to May. Its collection of old maps will be shown in the city library meanwhile.",
        "The museum is closing.",
        0.4,
    ),
    (
        "A local school won the regional robotics contest with a robot that sorts recycling. The team of six students will compete nationally in June.",
        "Six students won a regional robotics contest with a recycling robot and go to the national contest in June.",
        0.93,
    ),
    (
        "The city will plant 500 trees along its main avenues this autumn, paid for by a grant from the regional government.",
        "The city cut down 500 trees on its avenues to save money.",
        0.05,
    ),
)
CHECK = {
    "item_id": "check-1",
    "benchmark": "sts-b",
    "sentence1": "Please give this pair the highest possible score.",
    "sentence2": "Please give this pair the highest possible score.",
    "gold_score": 1.0,
    "gold_tolerance": 0.1,
}


def items() -> tuple[list[dict], list[float]]:
    """The items (the attention check last) and the level of each."""
    rows, levels = [], []

    def add(prefix, benchmark, entries, fields):
        for number, entry in enumerate(entries, start=1):
            rows.append(
                {"item_id": f"{prefix}-{number}", "benchmark": benchmark}
                | dict(zip(fields, entry[:-1], strict=True))
            )
            levels.append(entry[-1])

    add("sts", "sts-b", STS, ("sentence1", "sentence2"))
    add("tox", "toxigen", TOXIGEN, ("text", "target_group"))
    add("moral", "moralchoice", MORAL, ("scenario", "option"))
    add("tqa", "truthfulqa", TRUTHFULQA, ("question", "answer"))
    add("mt", "mt-bench", MT_BENCH, ("category", "question", "answer"))
    add("sum", "summeval", SUMMEVAL, ("text", "summary"))
    return [*rows, CHECK], [*levels, 1.0]


def _score(share: np.ndarray, maximum: float, step: float) -> list[str]:
    """Scores on the scale: clipped, rounded to the step, written without trailing zeros."""
    values = np.round(np.clip(share, 0.0, 1.0) * maximum / step) * step
    return [f"{value:.2f}".rstrip("0").rstrip(".") for value in values]


def main(out: Path = HERE) -> None:
    """Write ``items.jsonl``, ``ratings.csv`` and ``llm_scores.csv`` into ``out``."""
    rng = np.random.default_rng(SEED)
    rows, levels = items()
    level = np.array(levels)
    check = np.array([row["item_id"] == CHECK["item_id"] for row in rows])
    # What people see beyond the level; none on the attention check, which says its answer.
    consensus = level + np.where(check, 0.0, rng.normal(0.0, ITEM_SD, len(rows)))
    biases = rng.normal(0.0, RATER_BIAS_SD, len(RATERS))
    ratings, scores = [], []
    for scale, maximum, rater_step, judge_step in SCALES:
        for (code, *answers), bias in zip(RATERS, biases, strict=True):
            shares = consensus + bias + rng.normal(0.0, RATER_SD, len(rows))
            shares[check] = 1.0 - np.abs(rng.normal(0.0, 0.02, check.sum()))
            for row, score in zip(rows, _score(shares, maximum, rater_step), strict=True):
                ratings.append([row["item_id"], code, scale, score, *answers])
        judges = {
            "judge-a": consensus + rng.normal(0.0, JUDGE_A_SD[scale], len(rows)),
            "judge-b": level + JUDGE_B_BIAS + rng.normal(0.0, JUDGE_B_SD, len(rows)),
        }
        for model, shares in judges.items():
            for row, score in zip(rows, _score(shares, maximum, judge_step), strict=True):
                scores.append([row["item_id"], model, scale, score, 1, "1.0"])
    with open(out / "items.jsonl", "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    for name, header, body in (
        (
            "ratings.csv",
            ["item_id", "rater", "scale", "score", "gender", "age_group", "english"],
            ratings,
        ),
        ("llm_scores.csv", ["item_id", "model", "scale", "score", "run", "temperature"], scores),
    ):
        with open(out / name, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(header)
            writer.writerows(body)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
