"""Gwet's AC1 and AC2 in the analysis: the metric on the matrices the rules give,
shown by the dashboard and written by the report as they are."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from annotator.analysis.model import DASHBOARD_PARTS, REPORT_PARTS
from annotator.analysis.settings import study_settings
from annotator.analysis.study_analysis import analyse
from annotator.data.frames import study_frames
from annotator.metrics import gwet_ac1, gwet_ac2


@pytest.fixture
def analysed(session, make_study):
    # A Likert scale, the 0-10 scale in whole steps (11 points, the most AC1 is
    # computed on) and a fine scale (51 points), where AC1 is left out with its reason.
    scales = (("1-5", 1.0, 5.0, 1.0), ("0-10", 0.0, 10.0, 1.0), ("0-5", 0.0, 5.0, 0.1))
    study = make_study(
        n_items=30, n_raters=4, models=("gpt", "llama"), missing=0.1, seed=5, scales=scales
    )
    frames = study_frames(session, study)
    settings = replace(study_settings(study), confidence=0.9, n_resamples=10)
    return frames, settings, analyse(frames, settings, parts=DASHBOARD_PARTS)


def _points(frames, scale):
    low, high = frames.scale_bounds(scale)
    step = float(frames.scales.set_index("scale").loc[scale, "step"])
    return np.round(np.arange(low, high + step / 2, step), 10)


def test_human_ac1_and_ac2_are_the_metric_on_every_first_rating(analysed):
    frames, settings, analysis = analysed
    for part in analysis.scales:
        # The matrix built here from the long ratings, not by the analysis's helpers.
        r = frames.ratings
        first = r[(r["scale"] == part.scale) & ~r["is_repeat"] & ~r["is_attention_check"]]
        wide = first.pivot(index="item", columns="rater", values="value")
        points = _points(frames, part.scale)
        found = {(s.key, s.model): s for s in part.statistics}
        ac2 = gwet_ac2(wide, weights="quadratic", categories=points, confidence=0.9)
        assert found[("gwet_ac2_quadratic", None)].value == pytest.approx(ac2.coefficient)
        if len(points) > 11:
            assert found[("gwet_ac1", None)].value is None
            assert f"a scale of {len(points)} points" in found[("gwet_ac1", None)].reason
            continue
        ac1 = gwet_ac1(wide, categories=points, confidence=0.9)
        assert found[("gwet_ac1", None)].value == pytest.approx(ac1.coefficient, abs=1e-12)
        assert found[("gwet_ac1", None)].ci == pytest.approx(ac1.ci, abs=1e-12)
        assert found[("gwet_ac1", None)].n_items == ac1.n_items == len(wide)
    assert [len(_points(frames, part.scale)) for part in analysis.scales] == [5, 11, 51]


def test_each_judge_has_ac2_with_the_rounded_human_consensus(analysed):
    frames, _, analysis = analysed
    part = analysis.scales[0]
    humans = part.panel.humans
    low, _ = frames.scale_bounds(part.scale)
    step = float(frames.scales.set_index("scale").loc[part.scale, "step"])
    judges = [s for s in part.statistics if s.model is not None]
    assert sorted(s.model for s in judges) == sorted(part.llm.columns)
    for s in judges:
        scores = part.llm[s.model].reindex(humans.index).dropna()
        consensus = humans.mean(axis=1)[scores.index]
        # Half up to a scale point, written out: floor(x + 0.5) on the step grid.
        pair = np.column_stack(
            [
                low + step * np.floor((consensus.to_numpy() - low) / step + 0.5),
                low + step * np.floor((scores.to_numpy() - low) / step + 0.5),
            ]
        )
        ref = gwet_ac2(
            pair, weights="quadratic", categories=_points(frames, part.scale), confidence=0.9
        )
        assert s.value == pytest.approx(ref.coefficient, abs=1e-9)
        assert s.n_items == len(scores)


def test_the_report_writes_and_the_dashboard_shows_every_statistic(analysed):
    from annotator.render.dashboard import dashboard_of

    frames, settings, analysis = analysed
    tables = analyse(frames, settings, parts=REPORT_PARTS).tables
    dash = dashboard_of(analysis)
    for part, card in zip(analysis.scales, dash.scales, strict=True):
        assert [row.key for row in card.statistics] == [s.key for s in part.statistics]
        rows = tables.statistics[tables.statistics["scale"] == part.scale]
        assert len(rows) == len(part.statistics) == 2 + part.llm.shape[1]
        human = rows[rows["model"].isna() & (rows["statistic"] == "gwet_ac2_quadratic")]
        shown = card.human_statistics[1].number
        assert shown.value == pytest.approx(human["value"].iloc[0], abs=1e-12)
        assert (shown.low, shown.high) == pytest.approx(
            (human["low"].iloc[0], human["high"].iloc[0])
        )
    assert "Gwet's AC1" in " ".join(tables.statistics["about"])
