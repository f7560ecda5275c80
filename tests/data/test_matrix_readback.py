"""A matrix export reads back with ``annotator.metrics.read_matrix`` and scores.

The expected values come from the import files themselves (pivoted here with
pandas), not from the exporter, so a wrong column prefix, a lost rating or a
changed number fails the test.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd

from annotator.data.exporters import render_export
from annotator.db import session_scope
from annotator.metrics import alt_test, icc
from annotator.metrics.matrix import read_matrix
from annotator.study.studies import get_study

DATA = Path(__file__).parent


def _load(runner) -> None:
    for args in (
        ["study", "create", DATA / "small-study.toml"],
        ["items", "import", "small", DATA / "items.csv"],
        ["ratings", "import", "small", DATA / "ratings.csv"],
        ["llm-scores", "import", "small", DATA / "llm_scores.csv"],
    ):
        result = runner.invoke(args=[str(a) for a in args], catch_exceptions=False)
        assert result.exit_code == 0, result.output


def _export(app, **options) -> str:
    with session_scope(app) as session:
        return render_export(session, get_study(session, "small"), "matrix", **options).text


def test_matrix_export_reads_back_with_the_imported_numbers(app, runner):
    _load(runner)
    matrix = read_matrix(io.StringIO(_export(app, scale="0-5")))

    ratings = pd.read_csv(DATA / "ratings.csv", dtype={"rater": str})
    expected = ratings[ratings["scale"] == "0-5"].pivot(
        index="item_id", columns="rater", values="score"
    )
    pd.testing.assert_frame_equal(
        matrix.humans.sort_index(axis=1),
        expected.rename_axis(columns=None).astype(float),
        check_names=False,
    )
    llm = pd.read_csv(DATA / "llm_scores.csv")
    means = llm[llm["scale"] == "0-5"].groupby(["item_id", "model"])["score"].mean().unstack()
    assert list(matrix.llm.columns) == list(means.columns)
    for model in means.columns:
        for item, value in means[model].items():
            # The export writes a mean of runs to 12 significant digits.
            assert np.isclose(
                matrix.llm.loc[item, model], value, rtol=1e-12, atol=0, equal_nan=True
            )
    assert set(matrix.benchmark) == {"sts-b", "truthfulqa"}


def test_matrix_export_scores_with_icc_and_the_alt_test(app, runner):
    _load(runner)
    complete = read_matrix(io.StringIO(_export(app, scale="0-5", complete=True)))
    assert not complete.humans.isna().any().any()
    result = icc(complete.humans)
    ratings = pd.read_csv(DATA / "ratings.csv")
    by_hand = (
        ratings[ratings["scale"] == "0-5"]
        .pivot(index="item_id", columns="rater", values="score")
        .dropna(axis=1)
        .dropna(axis=0)
    )
    assert np.isclose(result.icc_a1, icc(by_hand.to_numpy()).icc_a1)

    assert list(complete.humans.columns) == list(by_hand.columns)
    assert result.n == len(by_hand) and result.k == by_hand.shape[1]

    full = read_matrix(io.StringIO(_export(app, scale="0-5")))
    exported = alt_test(
        humans={rater: full.humans[rater].dropna().to_dict() for rater in full.humans.columns},
        llm=full.llm["gpt"].to_dict(),
        min_items_per_human=1,
    )
    scale = ratings[ratings["scale"] == "0-5"]
    llm = pd.read_csv(DATA / "llm_scores.csv")
    from_files = alt_test(
        humans={
            rater: dict(zip(rows["item_id"], rows["score"], strict=True))
            for rater, rows in scale.groupby("rater")
        },
        # Means of runs as the export writes them (12 significant digits): the
        # alt-test counts ties, so 4.699999999999999 and 4.7 differ there.
        llm=llm[(llm["scale"] == "0-5") & (llm["model"] == "gpt")]
        .groupby("item_id")["score"]
        .mean()
        .round(12)
        .to_dict(),
        min_items_per_human=1,
    )
    assert exported.n_items == from_files.n_items == 4
    assert exported.n_tested == from_files.n_tested
    assert np.isclose(exported.winning_rate, from_files.winning_rate)
    assert np.isclose(exported.advantage_probability, from_files.advantage_probability)
