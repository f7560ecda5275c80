"""report_tables on generated studies: every value against an independent computation.

The reference matrices are built here from plain SQL rows (not from the frames),
and every statistic comes from pingouin or from the formula written out.
"""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from itertools import combinations

import numpy as np
import pandas as pd
import pingouin as pg
import pytest
from sqlalchemy import text

from annotator.analysis.settings import AnalysisSettings, study_settings
from annotator.analysis.study_analysis import report_tables
from annotator.analysis.tables import ALL_BENCHMARKS
from annotator.data.frames import study_frames
from annotator.metrics import alt_test
from annotator.render.table_files import mark_best, write_csv_tables, write_latex_tables

TOL = 1e-9
SCALES = {"0-5": (0.0, 5.0), "0-10": (0.0, 10.0), "0-100": (0.0, 100.0)}


def pingouin_icc(matrix) -> dict[str, float]:
    matrix = np.asarray(matrix, dtype=float)
    n, k = matrix.shape
    long = pd.DataFrame(
        {"t": np.repeat(np.arange(n), k), "r": np.tile(np.arange(k), n), "y": matrix.ravel()}
    )
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The inplace keyword")
        table = pg.intraclass_corr(long, targets="t", raters="r", ratings="y")
    return dict(zip(table["Type"], table["ICC"], strict=True))


def nmae(a, b, low, high) -> float:
    return float(np.mean(np.abs(np.asarray(a) - np.asarray(b)))) / (high - low)


class Reference:
    """The study's rows from SQL, as plain dictionaries."""

    def __init__(self, session, study):
        self.humans = defaultdict(dict)  # scale -> {(item, rater): value}
        self.bench = {}
        for item, bench, scale, rater, value in session.execute(
            text(
                """
                SELECT i.external_id, b.name, s.name, u.rater_code, r.value
                FROM rating r JOIN item i ON i.id = r.item_id
                JOIN benchmark b ON b.id = i.benchmark_id JOIN scale s ON s.id = r.scale_id
                JOIN "user" u ON u.id = r.rater_id
                WHERE s.study_id = :s AND NOT r.is_repeat AND NOT r.is_attention_check
                """
            ),
            {"s": study.id},
        ):
            self.humans[scale][(item, rater)] = value
            self.bench[item] = bench
        runs = defaultdict(list)  # (scale, model, temperature, item) -> values
        for item, bench, scale, model, temperature, value in session.execute(
            text(
                """
                SELECT i.external_id, b.name, s.name, l.model, l.temperature, l.value
                FROM llmscore l JOIN item i ON i.id = l.item_id
                JOIN benchmark b ON b.id = i.benchmark_id JOIN scale s ON s.id = l.scale_id
                WHERE s.study_id = :s
                """
            ),
            {"s": study.id},
        ):
            runs[(scale, model, temperature, item)].append(value)
            self.bench[item] = bench
        self.llm = {key: sum(v) / len(v) for key, v in runs.items()}
        self.models = sorted({key[1] for key in self.llm})
        self.temperatures = sorted({key[2] for key in self.llm})

    def items(self, benchmark=None):
        items = sorted(self.bench)
        return [i for i in items if benchmark is None or self.bench[i] == benchmark]

    def human_matrix(self, scale, benchmark=None):
        """Items x raters; the study is fully crossed, so every cell is there."""
        cells = self.humans[scale]
        raters = sorted({r for _, r in cells})
        items = [i for i in self.items(benchmark) if (i, raters[0]) in cells]
        return items, np.array([[cells[(i, r)] for r in raters] for i in items]), raters

    def llm_matrix(self, scale, items, temperature=1.0, models=None):
        models = models or self.models
        return np.array([[self.llm[(scale, m, temperature, i)] for m in models] for i in items])


@pytest.fixture
def crossed(session, make_study):
    study = make_study(n_items=36, n_raters=6, models=("gpt", "llama", "mistral"), runs=2, seed=11)
    frames = study_frames(session, study)
    settings = study_settings(study, n_resamples=300, epsilons=(0.0, 0.1, 0.2, 0.3))
    return Reference(session, study), report_tables(frames, settings=settings)


def test_scales_table_is_table_2(crossed):
    ref, tables = crossed
    table = tables.scales.set_index("scale")
    assert list(table.index) == list(SCALES)
    for scale, (low, high) in SCALES.items():
        items, h, raters = ref.human_matrix(scale)
        m = ref.llm_matrix(scale, items)
        row = table.loc[scale]
        human, llm_panel = pingouin_icc(h), pingouin_icc(m)
        both = pingouin_icc(np.column_stack([h.mean(axis=1), m.mean(axis=1)]))
        assert row["n_items"] == len(items) == 36 and row["n_raters"] == 6
        assert row["icc_a1_human"] == pytest.approx(human["ICC(A,1)"], abs=TOL)
        assert row["icc_ak_human"] == pytest.approx(human["ICC(A,k)"], abs=TOL)
        assert row["icc_a1_llm"] == pytest.approx(llm_panel["ICC(A,1)"], abs=TOL)
        assert row["icc_ak_llm"] == pytest.approx(llm_panel["ICC(A,k)"], abs=TOL)
        assert row["icc_human_llm"] == pytest.approx(both["ICC(A,1)"], abs=TOL)
        assert row["nmae"] == pytest.approx(
            nmae(h.mean(axis=1), m.mean(axis=1), low, high), abs=TOL
        )


def test_benchmarks_table_is_tables_3_and_4a(crossed):
    ref, tables = crossed
    table = tables.benchmarks.set_index(["benchmark", "scale"])
    assert len(table) == 2 * 3
    for benchmark in ("sts-b", "summeval"):
        for scale, (low, high) in SCALES.items():
            items, h, _ = ref.human_matrix(scale, benchmark)
            m = ref.llm_matrix(scale, items)
            row = table.loc[(benchmark, scale)]
            human, panel = pingouin_icc(h), pingouin_icc(m)
            both = pingouin_icc(np.column_stack([h.mean(axis=1), m.mean(axis=1)]))
            assert row["n_items"] == len(items) == 18
            assert row["delta_a1"] == pytest.approx(human["ICC(A,1)"] - panel["ICC(A,1)"], abs=TOL)
            assert row["delta_ak"] == pytest.approx(human["ICC(A,k)"] - panel["ICC(A,k)"], abs=TOL)
            assert row["icc_human_llm"] == pytest.approx(both["ICC(A,1)"], abs=TOL)
            assert row["nmae"] == pytest.approx(
                nmae(h.mean(axis=1), m.mean(axis=1), low, high), abs=TOL
            )


def test_models_table_is_table_4b(crossed):
    ref, tables = crossed
    table = tables.models.set_index(["scale", "model"])
    assert len(table) == 3 * 3
    assert set(table["temperature"]) == {1.0}
    for scale, (low, high) in SCALES.items():
        items, h, _ = ref.human_matrix(scale)
        for model in ref.models:
            m = ref.llm_matrix(scale, items, models=[model])[:, 0]
            row = table.loc[(scale, model)]
            assert row["icc_human_llm"] == pytest.approx(
                pingouin_icc(np.column_stack([h.mean(axis=1), m]))["ICC(A,1)"], abs=TOL
            )
            assert row["nmae"] == pytest.approx(nmae(h.mean(axis=1), m, low, high), abs=TOL)


def test_inter_scale_table_is_table_1(crossed):
    ref, tables = crossed
    table = tables.inter_scale.set_index(["benchmark", "model", "comparison"])
    names = list(SCALES)
    for benchmark in ("sts-b", "summeval", ALL_BENCHMARKS):
        items = ref.items(None if benchmark == ALL_BENCHMARKS else benchmark)
        for model in ref.models:
            shares = np.column_stack(
                [ref.llm_matrix(s, items, models=[model])[:, 0] / SCALES[s][1] for s in names]
            )
            joint = table.loc[(benchmark, model, "0-5, 0-10, 0-100")]
            assert joint["icc_a1"] == pytest.approx(pingouin_icc(shares)["ICC(A,1)"], abs=TOL)
            assert joint["n_items"] == len(items)
            for (i, a), (j, b) in combinations(enumerate(names), 2):
                row = table.loc[(benchmark, model, f"{a} vs {b}")]
                assert row["icc_a1"] == pytest.approx(
                    pingouin_icc(shares[:, [i, j]])["ICC(A,1)"], abs=TOL
                )
    average = tables.inter_scale_average.set_index(["benchmark", "comparison"])
    for (benchmark, comparison), row in average.iterrows():
        values = [table.loc[(benchmark, m, comparison), "icc_a1"] for m in ref.models]
        assert row["icc_a1_mean"] == pytest.approx(sum(values) / 3, abs=TOL)
        assert row["n_models"] == 3


def test_groups_table_is_table_5(crossed):
    ref, tables = crossed
    table = tables.groups.set_index(["group", "scale"])
    assert set(tables.groups["group_by"]) == {"gender"}
    for scale, (low, high) in SCALES.items():
        items, h, raters = ref.human_matrix(scale)
        m = ref.llm_matrix(scale, items).mean(axis=1)
        for group, columns in (("female", [0, 2, 4]), ("male", [1, 3, 5])):
            sub = h[:, columns]
            row = table.loc[(group, scale)]
            within = pingouin_icc(sub)
            assert row["n_raters"] == 3
            assert row["icc_group_llm"] == pytest.approx(
                pingouin_icc(np.column_stack([sub.mean(axis=1), m]))["ICC(A,1)"], abs=TOL
            )
            assert row["nmae"] == pytest.approx(nmae(sub.mean(axis=1), m, low, high), abs=TOL)
            assert row["icc_a1_within"] == pytest.approx(within["ICC(A,1)"], abs=TOL)
            assert row["icc_ak_within"] == pytest.approx(within["ICC(A,k)"], abs=TOL)


def test_temperatures_table_is_table_6_and_never_averages_temperatures(crossed):
    ref, tables = crossed
    table = tables.temperatures
    # The generator runs the first model at 0.1 as well: one row per temperature.
    assert sorted(table.loc[table["model"] == "gpt", "temperature"].unique()) == [0.1, 1.0]
    assert list(table.loc[table["model"] == "llama", "temperature"].unique()) == [1.0]
    for row in table.itertuples():
        low, high = SCALES[row.scale]
        items, h, _ = ref.human_matrix(row.scale)
        m = ref.llm_matrix(row.scale, items, temperature=row.temperature, models=[row.model])
        assert row.icc_human_llm == pytest.approx(
            pingouin_icc(np.column_stack([h.mean(axis=1), m[:, 0]]))["ICC(A,1)"], abs=TOL
        )
        assert row.nmae == pytest.approx(nmae(h.mean(axis=1), m[:, 0], low, high), abs=TOL)
    # The main tables use temperature 1 only: gpt's 0.1 scores are not averaged in.
    models = tables.models.set_index(["scale", "model"])
    at_one = table[(table["model"] == "gpt") & (table["temperature"] == 1.0)]
    for row in at_one.itertuples():
        assert models.loc[(row.scale, "gpt"), "icc_human_llm"] == pytest.approx(
            row.icc_human_llm, abs=TOL
        )


def test_alttest_table_runs_the_alt_test_per_epsilon(crossed):
    ref, tables = crossed
    table = tables.alttest
    assert len(table) == 3 * 3 * 4
    for row in table.sample(6, random_state=0).itertuples():
        cells = ref.humans[row.scale]
        humans = defaultdict(dict)
        for (item, rater), value in cells.items():
            humans[rater][item] = value
        llm = {i: ref.llm[(row.scale, row.model, 1.0, i)] for i in ref.items()}
        expected = alt_test(humans=humans, llm=llm, epsilon=row.epsilon)
        assert row.winning_rate == pytest.approx(expected.winning_rate, abs=TOL)
        assert row.advantage_probability == pytest.approx(expected.advantage_probability, abs=TOL)
        assert row.passed == expected.passed


def test_items_worst_items_and_bootstrap(crossed):
    ref, tables = crossed
    for scale, (low, high) in SCALES.items():
        items, h, _ = ref.human_matrix(scale)
        m = ref.llm_matrix(scale, items).mean(axis=1)
        error = np.abs(h.mean(axis=1) - m) / (high - low)
        part = tables.items[tables.items["scale"] == scale].set_index("item")
        assert part.loc[items, "nmae"].to_numpy() == pytest.approx(error, abs=TOL)
        assert list(part.loc[items, "poorly_aligned"]) == list(error > 0.1)
        worst = tables.worst_items[tables.worst_items["scale"] == scale]
        assert list(worst["nmae"]) == pytest.approx(sorted(error, reverse=True)[:10], abs=TOL)
    boot = tables.bootstrap
    scales = tables.scales.set_index("scale")
    for row in boot[boot["statistic"] == "nmae"].itertuples():
        assert row.estimate == pytest.approx(scales.loc[row.scale_a, "nmae"], abs=TOL)
        assert row.low <= row.estimate <= row.high
        assert row.n_resamples == 300
    diffs = boot[boot["statistic"] == "icc_human_llm_difference"]
    assert len(diffs) == 3
    for row in diffs.itertuples():
        assert row.estimate == pytest.approx(
            scales.loc[row.scale_a, "icc_human_llm"] - scales.loc[row.scale_b, "icc_human_llm"],
            abs=TOL,
        )


def test_settings_say_what_was_used(crossed):
    _, tables = crossed
    assert tables.settings["temperature"] == 1.0
    assert "most common" in tables.settings["temperature_note"]
    assert tables.settings["runs"] == "mean"
    assert tables.settings["epsilon"] == 0.2
    assert tables.notes == []


def test_known_variance_components_are_recovered(session, make_study):
    # item sd 0.15, rater sd 0.04, noise sd 0.05 on the [0, 1] share: the population
    # ICC(A,1) is 0.15^2 / (0.15^2 + 0.04^2 + 0.05^2) = 0.846.
    study = make_study(n_items=400, n_raters=8, models=("gpt",), runs=1, repeats=0, seed=5)
    tables = report_tables(
        study_frames(session, study),
        settings=AnalysisSettings(n_resamples=10, epsilons=(0.2,)),
    )
    expected = 0.15**2 / (0.15**2 + 0.04**2 + 0.05**2)
    assert tables.scales["icc_a1_human"].to_numpy() == pytest.approx([expected] * 3, abs=0.07)


def test_missing_cells_use_the_complete_block_and_say_so(session, make_study):
    study = make_study(n_items=30, n_raters=5, missing=0.1, seed=3, models=("gpt", "llama"))
    tables = report_tables(
        study_frames(session, study), settings=AnalysisSettings(n_resamples=20, epsilons=(0.2,))
    )
    row = tables.scales.set_index("scale").loc["0-5"]
    assert row["n_items"] < 30
    assert any(
        n.startswith("scale 0-5: the complete items x raters block keeps") for n in tables.notes
    )
    ref = Reference(session, study)
    cells = ref.humans["0-5"]
    raters = sorted({r for _, r in cells})
    # Independent: items every kept rater rated.
    complete = [i for i in ref.items() if all((i, r) in cells for r in raters)]
    # With 10% of cells missing at random, keeping all five raters keeps the most cells.
    assert row["n_raters"] == len(raters) == 5
    assert row["n_items"] == len(complete)
    h = np.array([[cells[(i, r)] for r in raters] for i in complete])
    assert row["icc_a1_human"] == pytest.approx(pingouin_icc(h)["ICC(A,1)"], abs=TOL)


def test_what_cannot_be_computed_is_nan_with_a_note(session, make_study):
    study = make_study(n_items=8, n_raters=1, models=("gpt",), extra_temperatures=(), seed=1)
    tables = report_tables(
        study_frames(session, study), settings=AnalysisSettings(n_resamples=20, epsilons=(0.2,))
    )
    row = tables.scales.iloc[0]
    assert math.isnan(row["icc_a1_human"]) and math.isnan(row["icc_a1_llm"])
    assert not math.isnan(row["icc_human_llm"])  # one rater's mean against one model is fine
    notes = "\n".join(tables.notes)
    assert "human ICC needs a complete block of at least 2 items x 2 raters, have 8 x 1" in notes
    assert "LLM panel ICC needs 2 models" in notes
    assert "within-group ICC needs 2" in notes
    assert tables.alttest["winning_rate"].isna().all()
    assert "alt-test" in notes


def test_csv_and_latex_files(crossed, tmp_path):
    _, tables = crossed
    write_csv_tables(tables, tmp_path / "csv")
    scales = pd.read_csv(tmp_path / "csv" / "scales.csv")
    assert list(scales.columns[:8]) == [
        "scale",
        "n_items",
        "icc_a1_human",
        "icc_ak_human",
        "icc_a1_llm",
        "icc_ak_llm",
        "icc_human_llm",
        "nmae",
    ]
    assert scales["icc_human_llm"].tolist() == tables.scales["icc_human_llm"].tolist()
    models = pd.read_csv(tmp_path / "csv" / "models.csv")
    assert list(models.columns[:5]) == ["scale", "model", "temperature", "icc_human_llm", "nmae"]
    alttest = pd.read_csv(tmp_path / "csv" / "alttest.csv")
    assert list(alttest.columns[:6]) == [
        "scale",
        "model",
        "epsilon",
        "winning_rate",
        "advantage_probability",
        "passed",
    ]
    write_latex_tables(tables, tmp_path / "tex")
    latex = (tmp_path / "tex" / "scales.tex").read_text()
    assert "\\toprule" in latex and "\\bfseries" in latex
    best = tables.scales["icc_human_llm"].max()
    assert f"\\bfseries {best:.3f}" in latex


def test_mark_best_marks_ties_and_skips_nan():
    frame = pd.DataFrame(
        {"b": ["x", "x", "y", "y"], "icc": [0.5, 0.5, np.nan, 0.2], "nmae": [0.1, 0.2, 0.3, 0.3]}
    )
    best = mark_best(frame, higher=["icc"], lower=["nmae"], within="b")
    assert best["icc"].tolist() == [True, True, False, True]
    assert best["nmae"].tolist() == [True, False, True, True]


@pytest.mark.parametrize(
    "spec",
    [
        {"n_raters": 0},
        {"models": (), "extra_temperatures": ()},
        {"n_raters": 0, "models": (), "extra_temperatures": ()},
        {"n_items": 1, "n_raters": 2},
    ],
    ids=["llm-only", "humans-only", "empty", "one-item"],
)
def test_studies_with_missing_parts_give_notes_not_errors(session, make_study, spec):
    from annotator.render.dashboard import study_dashboard

    study = make_study(**spec)
    frames = study_frames(session, study)
    tables = report_tables(frames, settings=AnalysisSettings(n_resamples=10, epsilons=(0.2,)))
    assert tables.scales["icc_human_llm"].isna().all()
    assert tables.notes
    dash = study_dashboard(frames)
    assert all(part.ensemble.icc_a1.value is None for part in dash.scales)
    assert all(part.ensemble.icc_a1.reason for part in dash.scales)
