"""Exports: runs combined as asked (against the stored rows), raters chosen by --where."""

from __future__ import annotations

import json
import statistics

import pandas as pd
import pytest
from sqlmodel import select

from annotator.analysis.matrices import llm_matrix
from annotator.data.exporters import ExportError, alttest_export, matrix_export, render_export
from annotator.data.frames import study_frames
from annotator.metrics.matrix import LLM_PREFIX
from annotator.models import Item, LLMScore, Scale

RULES = {
    "mean": statistics.fmean,
    "median": statistics.median,
    "majority": lambda v: statistics.median(statistics.multimode(v)),
    "first": lambda v: v[0],
}


def _stored(session, study, scale: str, temperature: float) -> dict[tuple[str, str], list]:
    """{(model, item): [(run, value), ...]} in insertion order, straight from the table."""
    rows = session.exec(
        select(Item.external_id, LLMScore.model, LLMScore.run, LLMScore.value, LLMScore.temperature)
        .join(Item, Item.id == LLMScore.item_id)
        .join(Scale, Scale.id == LLMScore.scale_id)
        .where(Scale.study_id == study.id, Scale.name == scale, Item.gold_score.is_(None))
        .order_by(LLMScore.id)
    ).all()
    out: dict[tuple[str, str], list] = {}
    for item, model, run, value, temp in rows:
        if abs(temp - temperature) < 1e-9:
            out.setdefault((model, item), []).append((run, value))
    return out


@pytest.mark.parametrize("how", sorted(RULES))
def test_matrix_and_alttest_combine_runs_as_asked(session, make_study, how):
    study = make_study(n_items=10, n_raters=3, runs=3, extra_temperatures=(0.0,))
    stored = _stored(session, study, "0-5", 1.0)
    export = matrix_export(session, study, scale="0-5", temperature=1.0, runs=how)
    assert export.runs == how and f"runs aggregated by: {how}" in export.missing_summary()
    frame = export.frame.set_index("item_id")
    alt = alttest_export(session, study, scale="0-5", temperature=1.0, runs=how)
    frames = study_frames(session, study)
    wide = llm_matrix(frames, "0-5", temperature=1.0, runs=how)
    for (model, item), pairs in stored.items():
        expected = RULES[how]([value for _, value in pairs])
        # The exports keep 12 significant digits (matrix_export.MEAN_DIGITS).
        assert frame.loc[item, LLM_PREFIX + model] == pytest.approx(expected, rel=1e-11)
        assert alt["llm"][model][item] == pytest.approx(expected, rel=1e-11)
        assert wide.loc[item, model] == pytest.approx(expected, rel=1e-12)


def test_each_gives_one_column_per_run_at_the_chosen_temperature_only(session, make_study):
    """Greedy (temperature 0) and sampled runs are never pooled, not even side by side."""
    study = make_study(n_items=10, n_raters=3, runs=2, extra_temperatures=(0.0,))
    stored = _stored(session, study, "0-5", 1.0)
    export = matrix_export(session, study, scale="0-5", temperature=1.0, runs="each")
    llm_columns = [c for c in export.frame.columns if c.startswith(LLM_PREFIX)]
    assert llm_columns == [
        f"{LLM_PREFIX}{m}#t1-{r}" for m in ("gpt", "llama", "mistral") for r in (0, 1)
    ]
    frame = export.frame.set_index("item_id")
    for (model, item), pairs in stored.items():
        for run, value in pairs:
            assert frame.loc[item, f"{LLM_PREFIX}{model}#{run}"] == value
    greedy = matrix_export(session, study, scale="0-5", temperature=0.0, runs="each")
    assert [c for c in greedy.frame.columns if c.startswith(LLM_PREFIX)] == [
        f"{LLM_PREFIX}gpt#t0-0",
        f"{LLM_PREFIX}gpt#t0-1",
    ]
    # Without a temperature each judge keeps one: gpt's tie between 0 and 1 goes to
    # the study's most common (1), never both side by side.
    default = matrix_export(session, study, scale="0-5", runs="each")
    assert [c for c in default.frame.columns if c.startswith(LLM_PREFIX)] == llm_columns


def test_the_report_never_pools_temperatures(session, make_study):
    """Each temperature's row of Table 6 uses only that temperature's runs."""
    from annotator.analysis.settings import AnalysisSettings
    from annotator.analysis.study_analysis import report_tables

    study = make_study(n_items=30, n_raters=3, runs=2, extra_temperatures=(0.0,))
    frames = study_frames(session, study)
    tables = report_tables(frames, settings=AnalysisSettings(temperature=1.0, n_resamples=20))
    gpt = tables.temperatures[
        (tables.temperatures["model"] == "gpt") & (tables.temperatures["scale"] == "0-5")
    ]
    assert sorted(gpt["temperature"]) == [0.0, 1.0]
    only_greedy = frames.llm[(frames.llm["temperature"] == 0.0) & (frames.llm["model"] == "gpt")]
    assert set(only_greedy["run"]) == {"t0-0", "t0-1"}
    wide = llm_matrix(frames, "0-5", temperature=0.0)
    means = only_greedy[only_greedy["scale"] == "0-5"].groupby("item")["value"].mean()
    pd.testing.assert_series_equal(
        wide["gpt"], means.reindex(wide.index), check_names=False, rtol=1e-12
    )


def test_where_keeps_the_matching_raters_in_every_format(session, make_study):
    study = make_study(n_items=8, n_raters=4, extra_temperatures=())
    where = {"gender": ("female",)}
    women = ["synthetic-r00", "synthetic-r02"]
    export = matrix_export(session, study, scale="0-5", where=where)
    assert export.raters == women
    assert "raters: gender=female" in export.missing_summary()
    assert sorted(alttest_export(session, study, scale="0-5", where=where)["humans"]) == women
    long = render_export(session, study, "long", where=where).text
    frame = pd.read_csv(pd.io.common.StringIO(long), dtype=str, keep_default_na=False)
    assert sorted(set(frame.loc[frame["kind"] == "human", "rater"])) == women
    assert (frame["kind"] == "llm").any()
    demographics = render_export(session, study, "demographics", where=where).text
    assert sorted(pd.read_csv(pd.io.common.StringIO(demographics))["rater"]) == women
    both = matrix_export(
        session, study, scale="0-5", where={"gender": ("female",), "age_group": ("25-34",)}
    )
    assert both.raters == women
    either = matrix_export(session, study, scale="0-5", where={"gender": ("female", "male")})
    assert len(either.raters) == 4


@pytest.mark.parametrize(
    ("where", "message", "choices"),
    [
        (
            {"shoe": ("42",)},
            # The study's questions (the default ones), though raters answered two.
            "no demographic question 'shoe' (known: gender, age_group, english, education)",
            ["gender", "age_group", "english", "education"],
        ),
        (
            {"gender": ("robot",)},
            "no rater answered gender=robot (known values of gender: ",
            None,
        ),
    ],
)
def test_unknown_where_is_refused_naming_the_known(session, make_study, where, message, choices):
    study = make_study(n_items=8, n_raters=4, extra_temperatures=())
    with pytest.raises(ExportError) as caught:
        matrix_export(session, study, scale="0-5", where=where)
    assert caught.value.field == "where"
    assert message in str(caught.value)
    if choices is not None:
        assert caught.value.choices == choices
    else:
        assert "gender=female" in caught.value.choices and "gender=male" in caught.value.choices


def test_cli_export_runs_and_where(runner, make_study, tmp_path):
    make_study(n_items=8, n_raters=4, runs=2, extra_temperatures=())
    out = tmp_path / "m.csv"
    result = runner.invoke(
        args=["export", "synthetic", "--format", "matrix", "--scale", "0-5", "--runs", "each"]
        + ["--where", "gender=male", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    header = out.read_text().splitlines()[0].split(",")
    assert "synthetic-r01" in header and "synthetic-r00" not in header
    assert "llm:gpt#t1-0" in header and "llm:gpt#t1-1" in header
    assert "runs aggregated by: each" in result.output
    assert "raters: gender=male" in result.output
    bad = runner.invoke(
        args=["export", "synthetic", "--format", "matrix", "--scale", "0-5"]
        + ["--where", "gender", "--out", str(out)]
    )
    assert bad.exit_code != 0
    assert "where clause 'gender' is not KEY=VALUE" in bad.output
    unknown = runner.invoke(
        args=["export", "synthetic", "--format", "alttest", "--scale", "0-5"]
        + ["--where", "gender=robot", "--out", str(out)]
    )
    assert unknown.exit_code != 0
    assert "choose one with --where (gender=female, gender=" in unknown.output


def test_metrics_cli_combines_an_each_export(runner, make_study, tmp_path):
    """``--runs each`` at export, ``--runs median`` at analysis = ``--runs median`` at export."""
    make_study(n_items=12, n_raters=4, runs=3, extra_temperatures=())
    each, median = tmp_path / "each.csv", tmp_path / "median.csv"
    for path, runs in ((each, "each"), (median, "median")):
        result = runner.invoke(
            args=["export", "synthetic", "--format", "matrix", "--scale", "0-10"]
            + ["--runs", runs, "--out", str(path)]
        )
        assert result.exit_code == 0, result.output
    outputs = []
    for path, runs in ((each, "median"), (median, "mean")):
        result = runner.invoke(args=["icc", str(path), "--raters", "llm", "--runs", runs, "--json"])
        assert result.exit_code == 0, result.output
        outputs.append(json.loads(result.output))
    assert outputs[0]["k"] == 3
    # The median export is rounded to 12 digits; the same statistic up to that.
    for key in ("icc_a1", "icc_ak", "icc_c1", "icc_ck", "n", "k"):
        assert outputs[0][key] == pytest.approx(outputs[1][key], rel=1e-9), key
    plans = []
    for path, runs in ((each, "median"), (median, "mean")):
        result = runner.invoke(
            args=["plan", str(path), "--raters", "llm", "--runs", runs, "--json"]
        )
        assert result.exit_code == 0, result.output
        plans.append(json.loads(result.output))
    assert plans[0]["components"]["k"] == 3
    assert plans[0]["components"] == pytest.approx(plans[1]["components"], rel=1e-9)
    alt_each, alt_median = tmp_path / "each.json", tmp_path / "median.json"
    for path, runs in ((alt_each, "each"), (alt_median, "median")):
        runner.invoke(
            args=["export", "synthetic", "--format", "alttest", "--scale", "0-10"]
            + ["--runs", runs, "--out", str(path)]
        )
    results = []
    for path, runs in ((alt_each, "median"), (alt_median, "mean")):
        result = runner.invoke(
            args=["alt-test", "--humans", str(path), "--runs", runs, "--json"]
            + ["--min-items-per-human", "5"]
        )
        assert result.exit_code == 0, result.output
        results.append(json.loads(result.output))
    assert sorted(results[0]) == ["gpt", "llama", "mistral"]
    for model in results[0]:
        for key in ("winning_rate", "advantage_probability", "passed", "n_items"):
            assert results[0][model][key] == pytest.approx(results[1][model][key], rel=1e-9)
