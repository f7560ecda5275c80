"""The alt-test figures: a row per scale, a line per model with the tables' numbers,
bands from the tables' bounds, one legend below."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from annotator.render.figures import alt_test_curve_figure, alt_test_epsilon_figure

from .conftest import MODELS, SCALES


def test_epsilon_figure_draws_each_models_rates(alttest_frame, readable):
    fig = alt_test_epsilon_figure(alttest_frame)
    readable(fig)
    assert len(fig.axes) == 2 * len(SCALES)
    for row, scale in enumerate(SCALES):
        winning, advantage = fig.axes[2 * row : 2 * row + 2]
        assert winning.get_title() == f"{scale}: winning rate"
        for ax, column in ((winning, "winning_rate"), (advantage, "advantage_probability")):
            lines = {line.get_label(): line for line in ax.get_lines()}
            for model in MODELS:
                want = alttest_frame[
                    (alttest_frame["scale"] == scale) & (alttest_frame["model"] == model)
                ].sort_values("epsilon")
                np.testing.assert_allclose(lines[model].get_xdata(), want["epsilon"])
                np.testing.assert_allclose(lines[model].get_ydata(), want[column])
        # The pass line at 0.5 on the winning rate.
        assert list(winning.get_lines()[-1].get_ydata()) == [0.5, 0.5]
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [*MODELS, "0.5 to pass"]


def test_curve_figure_bands_are_the_tables_bounds(curve_frame, readable):
    fig = alt_test_curve_figure(curve_frame, against="items")
    readable(fig)
    ax = fig.axes[1]  # the first scale's advantage probability
    # The x-axes shared: labelled once, under the last row.
    assert [a.get_xlabel() for a in fig.axes] == ["", ""] * 2 + ["number of items"] * 2
    part = curve_frame[curve_frame["scale"] == SCALES[0]]
    for band, model in zip(ax.collections, MODELS, strict=True):
        rows = part[part["model"] == model].sort_values("x")
        (path,) = band.get_paths()
        vertices = path.vertices
        # fill_between's polygon: along the low bound, back along the high one.
        bounds = zip(rows["x"], rows["advantage_low"], rows["advantage_high"], strict=True)
        for x, low, high in bounds:
            at = vertices[np.isclose(vertices[:, 0], x)]
            assert low == pytest.approx(at[:, 1].min())
            assert high == pytest.approx(at[:, 1].max())


def test_no_alt_test_results_says_so():
    fig = alt_test_epsilon_figure(pd.DataFrame(columns=["scale"]))
    (ax,) = fig.axes
    assert ax.texts[0].get_text() == "no alt-test results"
