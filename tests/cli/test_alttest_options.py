"""``annotator alt-test --curve``, ``--by benchmark`` and ``--pass-threshold``."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from click.testing import CliRunner

from annotator.cli.alttest import alt_test_command
from annotator.metrics import alt_test, alt_test_curve, alt_test_domains


def _data(tmp_path, n_items=60, seed=0):
    rng = np.random.default_rng(seed)
    truth = rng.uniform(0, 5, n_items)
    items = [f"i{i}" for i in range(n_items)]
    humans = {
        f"h{j}": {
            i: float(round(t + rng.normal(0, 0.7), 2)) for i, t in zip(items, truth, strict=True)
        }
        for j in range(4)
    }
    llm = {
        "good": {
            i: float(round(t + rng.normal(0, 0.3), 2)) for i, t in zip(items, truth, strict=True)
        },
        "bad": {i: float(round(rng.uniform(0, 5), 2)) for i in items},
    }
    path = tmp_path / "alttest.json"
    path.write_text(json.dumps({"humans": humans, "llm": llm}))
    frame = pd.DataFrame(
        {"item_id": items, "benchmark": ["a" if k % 2 else "b" for k in range(n_items)]}
    )
    for h, d in humans.items():
        frame[h] = [d[i] for i in items]
    for m, d in llm.items():
        frame[f"llm:{m}"] = [d[i] for i in items]
    matrix = tmp_path / "matrix.csv"
    frame.to_csv(matrix, index=False)
    return humans, llm, path, matrix


def _json(args):
    result = CliRunner().invoke(alt_test_command, [*args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_curve_json_equals_the_function(tmp_path):
    humans, llm, path, _ = _data(tmp_path)
    out = _json(
        ["--humans", str(path), "--curve", "items", "--values", "30,60", "--resamples", "5"]
    )
    ref = alt_test_curve(
        humans=humans, llm=llm["good"], against="items", values=[30, 60], n_resamples=5
    )
    assert out["good"] == json.loads(json.dumps(ref.to_dict()))
    eps = _json(["--humans", str(path), "--curve", "epsilon", "--resamples", "3", "--model", "bad"])
    assert [p["x"] for p in eps["bad"]["points"]] == [0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3]
    text = CliRunner().invoke(
        alt_test_command, ["--humans", str(path), "--curve", "epsilon", "--resamples", "2"]
    )
    assert text.exit_code == 0 and "alt-test against epsilon" in text.output


def test_by_benchmark_is_one_correction_over_all(tmp_path):
    humans, llm, _, matrix = _data(tmp_path, n_items=80)
    out = _json(["--matrix", str(matrix), "--by", "benchmark", "--min-items-per-human", "30"])
    split = {
        b: {
            "humans": {
                h: {i: v for i, v in d.items() if (int(i[1:]) % 2 == 1) == (b == "a")}
                for h, d in humans.items()
            },
            "llm": {i: v for i, v in llm["good"].items() if (int(i[1:]) % 2 == 1) == (b == "a")},
        }
        for b in ("a", "b")
    }
    ref = alt_test_domains(split, min_items_per_human=30)
    assert out["good"]["n_passed"] == ref.n_passed
    for b in ("a", "b"):
        assert out["good"]["domains"][b]["winning_rate"] == ref.domains[b].winning_rate
    result = CliRunner().invoke(
        alt_test_command, ["--humans", str(tmp_path / "alttest.json"), "--by", "benchmark"]
    )
    assert result.exit_code != 0 and "--matrix" in result.output


def test_pass_threshold_option(tmp_path):
    humans, llm, path, _ = _data(tmp_path)
    out = _json(["--humans", str(path), "--pass-threshold", "0.9"])
    ref = alt_test(humans=humans, llm=llm["good"], pass_threshold=0.9)
    assert out["good"]["passed"] == ref.passed
    assert out["good"]["pass_threshold"] == 0.9
    bad = CliRunner().invoke(alt_test_command, ["--humans", str(path), "--pass-threshold", "0"])
    assert bad.exit_code != 0 and "pass_threshold" in bad.output
