"""A rubric study's data: the criterion column of the imports, the long export,
and the matrix and alt-test exports of one criterion."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from tests.conftest import DATA
from tests.data.studies import BENCHMARKS_TOML, CRITERIA_TOML, study_toml

RATINGS = """item_id,rater,scale,criterion,score
s1,ann,0-5,fluency,4
s1,ann,0-5,coherence,3.5
s1,ann,0-5,relevance,2
s2,ann,0-5,fluency,1
s2,ann,0-5,coherence,0.5
t1,ann,0-5,fluency,5
t1,bob,0-5,fluency,4.25
s1,bob,0-5,fluency,3
s1,bob,0-5,relevance,2.5
s1,ann,0-100,fluency,80
"""
SCORES = """item_id,model,scale,criterion,score
s1,gpt,0-5,fluency,4.5
s1,gpt,0-5,relevance,1.5
t1,gpt,0-5,fluency,4
s2,gpt,0-5,coherence,2
"""


def _invoke(runner, *args):
    return runner.invoke(args=[str(a) for a in args])


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def rubric(runner, tmp_path) -> str:
    """The study of tests/data/studies.py with its three criteria and the small items."""
    toml = _write(tmp_path / "rubric.toml", study_toml(benchmarks=BENCHMARKS_TOML + CRITERIA_TOML))
    for args in (["study", "create", toml], ["items", "import", "rt", DATA / "items.csv"]):
        result = _invoke(runner, *args)
        assert result.exit_code == 0, result.output
    return "rt"


def _import(runner, tmp_path, kind: str, text: str):
    name = "ratings" if kind == "ratings" else "llm-scores"
    return _invoke(runner, name, "import", "rt", _write(tmp_path / f"{kind}.csv", text))


def _export(runner, *args) -> str:
    result = _invoke(runner, "export", "rt", *args, "--out", "-")
    assert result.exit_code == 0, result.output
    return result.stdout


def test_ratings_and_scores_of_each_criterion_are_exported(rubric, runner, tmp_path):
    assert _import(runner, tmp_path, "ratings", RATINGS).exit_code == 0
    assert _import(runner, tmp_path, "scores", SCORES).exit_code == 0
    long = pd.read_csv(io.StringIO(_export(runner, "--format", "long")), dtype={"rater": str})
    columns = list(long.columns)
    assert columns[columns.index("scale") + 1] == "criterion"
    human = long[long["kind"] == "human"]
    expected = pd.read_csv(io.StringIO(RATINGS))
    key = ["item_id", "rater", "scale", "criterion"]
    got = human.rename(columns={"score": "value"})[[*key, "value"]].sort_values(key)
    want = expected.rename(columns={"score": "value"})[[*key, "value"]].sort_values(key)
    assert got.to_numpy().tolist() == want.to_numpy().tolist()
    llm = long[long["kind"] == "llm"].sort_values(["item_id", "criterion"])
    assert llm[["item_id", "criterion", "score"]].to_numpy().tolist() == (
        pd.read_csv(io.StringIO(SCORES))
        .sort_values(["item_id", "criterion"])[["item_id", "criterion", "score"]]
        .to_numpy()
        .tolist()
    )


@pytest.mark.parametrize("criterion", ["fluency", "coherence", "relevance"])
def test_the_matrix_and_alttest_of_one_criterion(rubric, runner, tmp_path, criterion):
    _import(runner, tmp_path, "ratings", RATINGS)
    _import(runner, tmp_path, "scores", SCORES)
    text = _export(runner, "--format", "matrix", "--scale", "0-5", "--criterion", criterion)
    matrix = pd.read_csv(io.StringIO(text)).set_index("item_id")
    # The reference: the imported file's rows of this criterion, pivoted by pandas.
    rows = pd.read_csv(io.StringIO(RATINGS))
    rows = rows[(rows["criterion"] == criterion) & (rows["scale"] == "0-5")]
    pivot = rows.pivot(index="item_id", columns="rater", values="score")
    items = pd.read_csv(DATA / "items.csv")
    applies = ["sts-b"] if criterion == "relevance" else ["sts-b", "truthfulqa"]
    assert list(matrix.index) == list(items[items["benchmark"].isin(applies)]["item_id"])
    for rater in pivot.columns:
        pd.testing.assert_series_equal(
            matrix[rater].reindex(pivot.index), pivot[rater], check_names=False
        )
    scores = pd.read_csv(io.StringIO(SCORES))
    scores = scores[scores["criterion"] == criterion].set_index("item_id")["score"]
    assert matrix["llm:gpt"].dropna().to_dict() == scores.to_dict()
    data = json.loads(
        _export(runner, "--format", "alttest", "--scale", "0-5", "--criterion", criterion)
    )
    assert data["llm"]["gpt"] == scores.to_dict()
    for rater in pivot.columns:
        assert data["humans"][rater] == pivot[rater].dropna().to_dict()


def test_a_matrix_of_a_rubric_study_needs_its_criterion(rubric, runner, tmp_path):
    _import(runner, tmp_path, "ratings", RATINGS)
    result = _invoke(runner, "export", "rt", "--format", "matrix", "--scale", "0-5", "--out", "-")
    assert result.exit_code != 0
    assert "choose one with --criterion (fluency, coherence, relevance)" in result.output
    result = _invoke(
        runner, "export", "rt", "--format", "alttest", "--scale", "0-5",
        "--criterion", "tone", "--out", "-",
    )  # fmt: skip
    assert result.exit_code != 0 and "unknown criterion 'tone'" in result.output


def test_a_study_without_criteria_refuses_a_criterion(small_study, runner):
    result = _invoke(
        runner, "export", "small", "--format", "matrix", "--scale", "0-5",
        "--criterion", "fluency", "--out", "-",
    )  # fmt: skip
    assert result.exit_code != 0 and "the study has no [[criteria]]" in result.output


@pytest.mark.parametrize(
    ("kind", "line", "expected"),
    [
        (
            "ratings",
            "s1,ann,0-5,tone,4",
            "line 2, column 'criterion': unknown criterion 'tone' "
            "(known: fluency, coherence, relevance)",
        ),
        (
            "ratings",
            "s1,ann,0-5,,4",
            "line 2, column 'criterion': the criterion is empty; the study has several "
            "(known: fluency, coherence, relevance)",
        ),
        (
            "ratings",
            "t1,ann,0-5,relevance,4",
            "line 2, column 'criterion': criterion 'relevance' does not apply to benchmark "
            "'truthfulqa' (only to sts-b)",
        ),
        ("scores", "s1,gpt,0-5,tone,4", "line 2, column 'criterion': unknown criterion 'tone'"),
    ],
)
def test_a_bad_criterion_is_named_with_file_and_line(
    rubric, runner, tmp_path, kind, line, expected
):
    header = RATINGS.splitlines()[0] if kind == "ratings" else SCORES.splitlines()[0]
    result = _import(runner, tmp_path, kind, f"{header}\n{line}\n")
    assert result.exit_code != 0
    assert f"{kind}.csv: {expected}" in result.output
    long = _export(runner, "--format", "long")
    assert long.count("\n") == 1  # nothing stored: the header alone


def test_one_criterion_needs_no_column(runner, tmp_path):
    one = '[[criteria]]\nname = "overall"\ndefinition = "How good is it overall?"\n'
    toml = _write(tmp_path / "one.toml", study_toml(benchmarks=BENCHMARKS_TOML + one))
    assert _invoke(runner, "study", "create", toml).exit_code == 0
    assert _invoke(runner, "items", "import", "rt", DATA / "items.csv").exit_code == 0
    result = _invoke(runner, "ratings", "import", "rt", DATA / "ratings.csv")
    assert result.exit_code == 0, result.output
    long = pd.read_csv(io.StringIO(_export(runner, "--format", "long")))
    assert set(long["criterion"]) == {"overall"}
    # Its matrix needs no --criterion either.
    assert _export(runner, "--format", "matrix", "--scale", "0-5").startswith("item_id,")


def test_a_study_without_criteria_refuses_a_named_one_in_imports(small_study, runner, tmp_path):
    path = _write(tmp_path / "r.csv", "item_id,rater,scale,criterion,score\ns1,zed,0-5,tone,4\n")
    result = _invoke(runner, "ratings", "import", "small", path)
    assert result.exit_code != 0
    assert (
        "line 2, column 'criterion': unknown criterion 'tone' "
        "(known: none: the study has no [[criteria]])" in result.output
    )


def test_the_study_page_exports_one_criterion(rubric, runner, tmp_path, lead_client):
    # The study page itself (and the form shown again after a refused export)
    # computes the dashboard, which is per criterion on the rubric-analysis branch.
    _import(runner, tmp_path, "ratings", RATINGS)
    response = lead_client.get("/lead/studies/rt/export?format=matrix&scale=0-5&criterion=fluency")
    assert response.status_code == 200
    cli = _export(runner, "--format", "matrix", "--scale", "0-5", "--criterion", "fluency")
    assert response.text == cli
    assert "rt-matrix-0-5-fluency.csv" in response.headers["Content-Disposition"]


def test_the_study_page_of_a_study_without_criteria_has_no_criterion_field(
    small_study, lead_client
):
    assert 'name="criterion"' not in lead_client.get("/lead/studies/small").text
