"""The guide's rubric example (docs/rubrics.md) runs as written on a fresh instance, and its
exports hold the example files' scores of each criterion."""

from __future__ import annotations

import json

import pandas as pd
from click.testing import CliRunner
from flask.cli import ScriptInfo

from annotator.cli import main
from tests.conftest import ROOT
from tests.documentation import command_lines, first_block, section
from tests.helpers import annotator_args


def _rubric_commands() -> list[str]:
    return command_lines(first_block(section("Rubrics (several criteria per item)"), "sh"))


def test_the_rubric_example_runs_as_the_readme_says(fresh_instance):
    folder, load = fresh_instance
    for args in [["init"]] + [annotator_args(line)[0] for line in _rubric_commands()]:
        result = CliRunner().invoke(main, args, obj=ScriptInfo(create_app=load))
        assert result.exit_code == 0, f"{args}\n{result.output}"
    ratings = pd.read_csv(ROOT / "examples" / "rubric-ratings.csv")
    scores = pd.read_csv(ROOT / "examples" / "rubric-llm-scores.csv")
    matrix = pd.read_csv(folder / "matrix-coherence.csv").set_index("item_id")
    coherence = ratings[ratings["criterion"] == "coherence"]
    expected = coherence.pivot(index="item_id", columns="rater", values="score")
    assert len(matrix) == 8
    for rater in expected.columns:
        assert matrix.loc[expected.index, rater].tolist() == expected[rater].tolist()
    data = json.loads((folder / "alttest-fluency.json").read_text())
    fluency = scores[scores["criterion"] == "fluency"]
    for model, rows in fluency.groupby("model"):
        assert data["llm"][model] == dict(
            zip(rows["item_id"], rows["score"].astype(float), strict=True)
        )
