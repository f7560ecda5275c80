"""The agreement tables on a generated study with known structure."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from annotator.analysis.agreement_tables import (
    agreement_tables,
    consistency_rows,
    integer_scale,
)
from annotator.analysis.matrices import Notes, human_block, llm_matrix
from annotator.analysis.settings import AnalysisSettings
from annotator.data.frames import study_frames
from annotator.metrics import cohen_kappa, fleiss_kappa, self_consistency
from tests.analysis.agreement_study import two_judge_study


@pytest.fixture
def frames(session, make_study):
    return study_frames(session, two_judge_study(session, make_study, "agree"))


def test_low_variance_model_is_more_self_consistent(frames):
    table = consistency_rows(frames)
    at = table[table["temperature"] == 0.7].set_index(["model", "scale"])
    for scale in ("0-5", "0-100"):
        steady, noisy = at.loc[("steady", scale)], at.loc[("noisy", scale)]
        assert steady["alpha_interval"] > noisy["alpha_interval"] + 0.2
        assert steady["icc_a1"] > noisy["icc_a1"]
        assert steady["identical_share"] > noisy["identical_share"]
        assert steady["n_runs"] == 3 and steady["n_items"] == 40
    # The row is the metrics function on the items x runs matrix.
    llm = frames.llm
    part = llm[(llm["model"] == "steady") & (llm["scale"] == "0-5")]
    wide = part.pivot(index="item", columns="run", values="value")
    ref = self_consistency(wide)
    assert at.loc[("steady", "0-5"), "alpha_interval"] == pytest.approx(ref.alpha_interval)
    assert at.loc[("steady", "0-5"), "alpha_ordinal"] == pytest.approx(ref.alpha_ordinal)


def test_tables_match_the_metrics_on_the_same_matrices(frames):
    notes = Notes()
    settings = AnalysisSettings()
    tables = agreement_tables(frames, 0.7, settings, notes)
    assert integer_scale(frames, "0-5") and integer_scale(frames, "0-100")
    humans = human_block(frames, "0-5").matrix
    kappa = tables["kappa"].set_index(["scale", "statistic", "model"], drop=False)
    fleiss = kappa[(kappa["scale"] == "0-5") & (kappa["statistic"] == "fleiss_kappa")]
    assert fleiss["value"].iloc[0] == pytest.approx(fleiss_kappa(humans, categories=range(0, 6)))
    llm = llm_matrix(frames, "0-5", temperature=0.7).reindex(humans.index)
    consensus = np.floor(humans.mean(axis=1).to_numpy() + 0.5)
    cohen = kappa[
        (kappa["scale"] == "0-5")
        & (kappa["statistic"] == "cohen_kappa_quadratic")
        & (kappa["model"] == "steady")
    ]
    assert cohen["value"].iloc[0] == pytest.approx(
        cohen_kappa(consensus, np.floor(llm["steady"].to_numpy() + 0.5), categories=range(6))
    )
    corr = tables["correlations"]
    assert set(corr["method"]) == {"pearson", "spearman", "kendall"}
    assert {"ensemble", "steady", "noisy"} <= set(corr["model"])
    cross = tables["cross_alpha"]
    assert {"human-LLM", "gender groups"} <= set(cross["comparison"])
    assert cross["alpha"].notna().all()
    curves = tables["alttest_curves"]
    assert set(curves["against"]) == {"epsilon", "items"}
    eps = curves[curves["against"] == "epsilon"]
    for _, line in eps.groupby(["scale", "model"]):
        assert list(line["x"]) == [0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3]
        assert (line["winning_rate_low"] <= line["winning_rate"] + 1e-12).all()


def test_fractional_scales_get_no_kappa(session, make_study):
    study = make_study(slug="frac", n_items=12, n_raters=3, seed=1)
    frames = study_frames(session, study)
    tables = agreement_tables(frames, 1.0, AnalysisSettings(), Notes())
    # 0-5 and 0-10 take steps of 0.1; only 0-100 (step 1) is an integer scale.
    assert set(tables["kappa"]["scale"]) == {"0-100"}
    # Two runs per model in the generated study: self-consistency for each.
    assert (tables["consistency"]["n_runs"] == 2).all()
    assert not math.isnan(tables["consistency"]["alpha_interval"].iloc[0])
    assert isinstance(tables["consistency"], pd.DataFrame)


def test_report_shows_the_steady_model_as_more_self_consistent(session, make_study):
    from lxml import html as lxml_html

    from annotator.services.report import build_report

    study = two_judge_study(session, make_study, "rep")
    report = build_report(session, study)
    tree = lxml_html.fromstring(report.html)
    table = tree.xpath("//table[@data-table='consistency']")[0]
    columns = [th.get("data-column") for th in table.xpath("./thead/tr/th")]
    rows = [
        dict(zip(columns, [td.get("data-value") for td in tr.xpath("./td")], strict=True))
        for tr in table.xpath("./tbody/tr")
    ]
    alpha = {
        (r["model"], r["scale"]): float(r["alpha_interval"])
        for r in rows
        if r["temperature"] == "0.7"
    }
    for scale in ("0-5", "0-100"):
        assert alpha["steady", scale] > alpha["noisy", scale]
    # The cells hold the table's full-precision values.
    frame = report.tables.consistency.set_index(["model", "scale", "temperature"])
    assert alpha["noisy", "0-5"] == frame.loc[("noisy", "0-5", 0.7), "alpha_interval"]
    for key in ("correlations", "kappa", "cross_alpha", "alttest_epsilon_curve"):
        assert tree.xpath(f"//table[@data-table='{key}']/tbody/tr[not(td[@class='missing'])]"), key
    assert tree.xpath("//figure[@id='figure-alttest_items_curve']/a/img")


def test_overlap_correlations_and_kappa_use_the_anchor_block(session, make_study):
    """Every item is rated by every rater, so the largest complete block is the whole
    matrix; an overlap design's correlations and kappas use its anchor items alone
    (as its ICC), checked against scipy and the metrics on those rows."""
    from scipy import stats

    from annotator.analysis.agreement_tables import correlation_rows, kappa_rows
    from annotator.analysis.settings import study_settings

    anchors = ["item-00001", "item-00003", "item-00004", "item-00006"]
    toml = (
        '[assignment]\ndesign = "overlap"\nraters_per_item = 2\nitems_per_rater = 6\n'
        f"anchor_items = {anchors!r}\n".replace("'", '"')
    )
    study = make_study(
        slug="anchored",
        n_items=10,
        n_raters=3,
        scales=(("1-5", 1.0, 5.0, 1.0),),
        benchmarks=("sts-b",),
        extra_temperatures=(),
        runs=1,
        repeats=0,
        attention_items=0,
        seed=2,
        study_toml_extra=toml,
    )
    frames = study_frames(session, study)
    settings = study_settings(study)
    assert settings.anchor_rows(study.slug, frames.items["item"]) == anchors
    humans = human_block(frames, "1-5", rows=anchors).matrix
    assert list(humans.index) == anchors and humans.shape[1] == 3
    llm = llm_matrix(frames, "1-5", temperature=1.0).reindex(humans.index)
    table = correlation_rows(frames, 1.0, Notes(), settings=settings)
    pearson = table[(table["method"] == "pearson") & (table["model"] == "gpt")].iloc[0]
    assert pearson["n_items"] == len(anchors)
    expected = stats.pearsonr(humans.mean(axis=1), llm["gpt"]).statistic
    assert pearson["estimate"] == pytest.approx(expected, abs=1e-12)
    crossed = correlation_rows(frames, 1.0, Notes())
    assert crossed.loc[crossed["method"] == "pearson", "n_items"].max() == 10
    kappa = kappa_rows(frames, 1.0, Notes(), settings=settings)
    fleiss = kappa[kappa["statistic"] == "fleiss_kappa"].iloc[0]
    assert fleiss["n_items"] == len(anchors)
    assert fleiss["value"] == pytest.approx(
        fleiss_kappa(humans, categories=np.arange(1.0, 6.0)), abs=1e-12
    )
