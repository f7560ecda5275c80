"""The statistics commands: ``annotator alt-test``, ``icc``, ``alpha`` and ``plan``."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from click.testing import CliRunner

from annotator.cli import main
from annotator.cli.alttest import alt_test_command
from annotator.cli.plan import plan_command
from annotator.cli.reliability import alpha_command, icc_command
from annotator.metrics import icc, krippendorff_alpha

from ..metrics.conftest import ALTTEST_SETTINGS, alttest_dir


@pytest.fixture(scope="module")
def published() -> dict[str, list[float]]:
    """``dataset/llm`` -> [winning_rate, advantage_probability], as published."""
    return json.loads((alttest_dir() / "published_results.json").read_text())


SUMMARY = re.compile(
    r"^Model (?P<model>\S+): (?P<verdict>PASSED|FAILED)\n"
    r"  winning rate\s+(?P<wr>[\d.]+)\n"
    r"  advantage probability\s+(?P<ap>[\d.]+)$",
    re.MULTILINE,
)


def _invoke(command, args):
    result = CliRunner().invoke(command, args, catch_exceptions=False)
    return result


@pytest.mark.parametrize("dataset", list(ALTTEST_SETTINGS))
def test_alt_test_prints_published_results(dataset, published):
    scoring, epsilon = ALTTEST_SETTINGS[dataset]
    base = alttest_dir() / dataset
    result = _invoke(
        alt_test_command,
        [
            "--humans",
            str(base / "human_annotations.json"),
            "--llm",
            str(base / "llm_annotations.json"),
            "--scoring",
            scoring,
            "--epsilon",
            str(epsilon),
        ],
    )
    assert result.exit_code == 0, result.output
    printed = {
        m["model"]: ([float(m["wr"]), float(m["ap"])], m["verdict"])
        for m in SUMMARY.finditer(result.output)
    }
    expected = {
        key.split("/", 1)[1]: value
        for key, value in published.items()
        if key.startswith(dataset + "/")
    }
    assert {model: values for model, (values, _) in printed.items()} == expected
    for model, (values, verdict) in printed.items():
        assert verdict == ("PASSED" if values[0] >= 0.5 else "FAILED"), model


def test_alt_test_export_format_and_json(tmp_path):
    base = alttest_dir() / "mtbench"
    export = {
        "humans": json.loads((base / "human_annotations.json").read_text()),
        "llm": json.loads((base / "llm_annotations.json").read_text()),
    }
    path = tmp_path / "alttest.json"
    path.write_text(json.dumps(export))
    result = _invoke(
        alt_test_command,
        ["--humans", str(path), "--scoring", "accuracy", "--model", "gpt-4o", "--json"],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert list(payload) == ["gpt-4o"]
    assert round(payload["gpt-4o"]["advantage_probability"], 2) == 0.77
    assert payload["gpt-4o"]["passed"] is False


def test_alt_test_single_model_file(tmp_path):
    base = alttest_dir() / "cebab_stars"
    llms = json.loads((base / "llm_annotations.json").read_text())
    path = tmp_path / "gpt4o.json"
    path.write_text(json.dumps(llms["gpt-4o"]))
    result = _invoke(
        alt_test_command,
        ["--humans", str(base / "human_annotations.json"), "--llm", str(path), "--epsilon", "0.1"],
    )
    assert result.exit_code == 0, result.output
    match = SUMMARY.search(result.output)
    assert (match["model"], match["verdict"], match["wr"], match["ap"]) == (
        "gpt4o",
        "PASSED",
        "0.90",
        "0.90",
    )


@pytest.mark.parametrize(
    ("with_llm", "args", "message"),
    [
        (False, [], "--llm is required"),
        (True, ["--scoring", "neg_rmse"], "numbers"),
        (True, ["--scoring", "accuracy", "--model", "nope"], "unknown model"),
        (True, ["--scoring", "accuracy", "--q", "2"], "q must be"),
    ],
)
def test_alt_test_errors(with_llm, args, message):
    base = alttest_dir() / "mtbench"
    full = ["--humans", str(base / "human_annotations.json")]
    if with_llm:
        full += ["--llm", str(base / "llm_annotations.json")]
    result = CliRunner().invoke(alt_test_command, full + args)
    assert result.exit_code != 0
    assert message in result.output


MATRIX = """item_id,benchmark,R01,R02,R03,llm:gpt,llm:claude
a,stsb,9,2,5,8,7
b,stsb,6,1,3,2,2
c,stsb,8,4,6,8,8
d,summeval,7,1,2,6,5
e,summeval,10,5,6,9,9
f,summeval,6,2,4,7,6
g,summeval,5,,4,5,
"""


@pytest.fixture
def matrix_csv(tmp_path):
    path = tmp_path / "matrix.csv"
    path.write_text(MATRIX)
    return path


def test_icc_command_uses_human_columns(matrix_csv):
    result = _invoke(icc_command, [str(matrix_csv), "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    humans = np.array([[9, 2, 5], [6, 1, 3], [8, 4, 6], [7, 1, 2], [10, 5, 6], [6, 2, 4]], float)
    assert payload["icc_a1"] == pytest.approx(icc(humans).icc_a1)
    assert (payload["n"], payload["k"], payload["n_omitted"]) == (6, 3, 1)
    text = _invoke(icc_command, [str(matrix_csv)]).output
    assert "ICC(A,1)" in text and "items 6 (omitted 1), raters 3" in text


def test_icc_command_all_raters_and_benchmark(matrix_csv):
    result = _invoke(icc_command, [str(matrix_csv), "--raters", "all", "--json"])
    assert json.loads(result.output)["k"] == 5
    result = _invoke(icc_command, [str(matrix_csv), "--benchmark", "stsb", "--json"])
    assert json.loads(result.output)["n"] == 3
    bad = CliRunner().invoke(icc_command, [str(matrix_csv), "--nan-policy", "raise"])
    assert bad.exit_code != 0 and "missing" in bad.output


def test_alpha_command(matrix_csv):
    result = _invoke(alpha_command, [str(matrix_csv), "--level", "ordinal", "--json"])
    assert result.exit_code == 0, result.output
    humans = np.array(
        [[9, 2, 5], [6, 1, 3], [8, 4, 6], [7, 1, 2], [10, 5, 6], [6, 2, 4], [5, np.nan, 4]]
    )
    payload = json.loads(result.output)
    assert payload["alpha"] == pytest.approx(krippendorff_alpha(humans, level="ordinal"))
    assert (payload["items"], payload["raters"]) == (7, 3)
    text = _invoke(alpha_command, [str(matrix_csv), "--raters", "llm"]).output
    assert "Krippendorff's alpha (interval)" in text and "raters 2" in text


def test_annotator_has_the_statistics_commands():
    assert {"alt-test", "icc", "alpha", "plan"} <= set(main.commands)
    result = CliRunner().invoke(main, ["alt-test", "--help"])
    assert result.exit_code == 0 and "--epsilon" in result.output


def test_alt_test_too_few_items_names_the_cli_option(tmp_path):
    humans = {f"h{j}": {f"i{i}": (i + j) % 5 for i in range(12)} for j in range(3)}
    llm = {f"i{i}": i % 5 for i in range(12)}
    path = tmp_path / "alttest.json"
    path.write_text(json.dumps({"humans": humans, "llm": llm}))
    result = CliRunner().invoke(alt_test_command, ["--humans", str(path)])
    assert result.exit_code != 0
    assert "Lower --min-items-per-human" in result.output
    assert "--min-items-per-human=30" in result.output
    assert "at least 30 items per annotator" in result.output


def _export(tmp_path, n_items, differ):
    scores = [1, 2, 3, 4, 5] * (n_items // 5)
    humans = {h: {f"i{i}": v for i, v in enumerate(scores)} for h in ("a", "b", "c")}
    llm = {f"i{i}": v + (1 if i < differ else 0) for i, v in enumerate(scores)}
    path = tmp_path / "alttest.json"
    path.write_text(json.dumps({"humans": humans, "llm": llm}))
    return path


@pytest.mark.parametrize(
    ("n_items", "differ", "epsilon", "verdict"),
    [
        (150, 0, "0.2", "the LLM passes (WR 1.00) and this cannot be reversed by more items"),
        (20, 3, "0.1", "not decided yet (WR 0.00 now; 0 of 3 annotators secured"),
    ],
)
def test_alt_test_sequential(tmp_path, n_items, differ, epsilon, verdict):
    path = _export(tmp_path, n_items, differ)
    result = _invoke(
        alt_test_command, ["--humans", str(path), "--sequential", "--epsilon", epsilon]
    )
    assert result.exit_code == 0, result.output
    assert f"  sequential verdict: {verdict}" in result.output
    assert "e-value" in result.output
    as_json = _invoke(
        alt_test_command, ["--humans", str(path), "--sequential", "--epsilon", epsilon, "--json"]
    )
    payload = json.loads(as_json.output)["llm"]
    assert payload["message"].startswith(verdict) and payload["result"]["test"] == "betting"


def test_alt_test_sequential_refuses_other_tests(tmp_path):
    path = _export(tmp_path, 20, 0)
    result = CliRunner().invoke(
        alt_test_command, ["--humans", str(path), "--sequential", "--test", "betting"]
    )
    assert result.exit_code != 0 and "--sequential chooses the test" in result.output


def test_plan_from_stated_components():
    # Phi(k) = 1 / (1 + 1/k) for components (1, 0.25, 0.75): 0.8 at k = 4.
    result = _invoke(plan_command, ["--components", "1,0.25,0.75", "--target", "0.8"])
    assert result.exit_code == 0, result.output
    assert "ICC(A,k) >= 0.8 needs 4 raters" in result.output
    assert re.search(r"^\s+4\s+0\.800\s+0\.842$", result.output, re.MULTILINE)


def test_plan_from_a_pilot_matrix(matrix_csv):
    from annotator.metrics import raters_needed

    result = _invoke(plan_command, [str(matrix_csv), "--json", "--target", "0.9"])
    payload = json.loads(result.output)
    pilot = icc(np.array([[9, 2, 5], [6, 1, 3], [8, 4, 6], [7, 1, 2], [10, 5, 6], [6, 2, 4]]))
    assert payload["rows"][2]["absolute"] == pytest.approx(pilot.icc_ak)
    assert payload["raters_needed"] == raters_needed(pilot.icc_a1, target=0.9)
    both = CliRunner().invoke(plan_command, [str(matrix_csv), "--components", "1,0,1"])
    assert both.exit_code != 0 and "not both" in both.output


def test_plan_alt_test_from_both_exports(tmp_path, matrix_csv):
    path = _export(tmp_path, 40, 0)
    args = ["--alttest", "--items", "20,40", "--reps", "5", "--min-items-per-human", "10"]
    result = _invoke(plan_command, [str(path), *args, "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["rows"]
    # The LLM equals every human on every item: every resampled study passes.
    assert [(r["n_items"], r["pass_probability"]) for r in rows] == [(20, 1.0), (40, 1.0)]
    text = _invoke(plan_command, [str(matrix_csv), *args, "--model", "gpt", "--items", "6"])
    assert text.exit_code == 0, text.output
    assert "alt-test by resampling the pilot (5 studies per size, seed 0)" in text.output
    unknown = CliRunner().invoke(plan_command, [str(matrix_csv), "--alttest"])
    assert unknown.exit_code != 0 and "choose a model with --model" in unknown.output


def test_plan_interval_widths():
    args = ["--components", "1,0.25,0.75", "--ci-items", "20,60", "--ci-raters", "3", "--reps"]
    result = _invoke(plan_command, [*args, "20", "--json"])
    rows = json.loads(result.output)["interval_widths"]["rows"]
    assert [(r["n_items"], r["n_raters"]) for r in rows] == [(20, 3), (60, 3)]
    assert rows[1]["width_a1"] < rows[0]["width_a1"]
