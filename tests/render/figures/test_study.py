"""The report's figures of scores and agreement: what they draw is the tables' numbers,
and a reader can read them (text size as shown, legends off the data, panels wrapped)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from annotator.render.figures import (
    bootstrap_figure,
    icc_interval_figure,
    icc_nmae_figure,
    item_disagreement_figure,
    png_bytes,
    score_distribution_figure,
)

from .conftest import BENCHMARKS, MODELS, SCALES

ICC_COLUMNS = [("icc_a1_human", "human ICC(A,1)"), ("icc_human_llm", "human-LLM ICC(A,1)")]


def _bootstrap_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "statistic": ["nmae", "nmae", "icc_human_llm_difference"],
            "scale_a": ["0-5", "0-10", "0-5"],
            "scale_b": [None, None, "0-10"],
            "estimate": [0.12, 0.15, 0.05],
            "low": [0.10, 0.12, -0.02],
            "high": [0.14, 0.19, 0.11],
        }
    )


def _items_frame() -> pd.DataFrame:
    rng = np.random.default_rng(6)
    return pd.DataFrame(
        {
            "scale": np.repeat(SCALES, 30),
            "item": np.tile([f"i{i}" for i in range(30)], len(SCALES)),
            "nmae": rng.uniform(0, 0.3, 30 * len(SCALES)),
        }
    )


@pytest.fixture
def figures(distributions_frame, scales_frame, figure2_frame):
    return {
        "distributions": score_distribution_figure(distributions_frame, group_by="gender"),
        "icc": icc_interval_figure(scales_frame, columns=ICC_COLUMNS),
        "figure2": icc_nmae_figure(figure2_frame),
        "items": item_disagreement_figure(_items_frame()),
        "bootstrap": bootstrap_figure(_bootstrap_frame()),
    }


@pytest.mark.parametrize("key", ["distributions", "icc", "figure2", "items", "bootstrap"])
def test_every_figure_is_readable_in_the_report(figures, key, readable):
    readable(figures[key])


def test_figure2_wraps_seven_benchmarks_onto_two_rows(figure2_frame):
    fig = icc_nmae_figure(figure2_frame)
    assert [ax.get_title() for ax in fig.axes] == list(BENCHMARKS)
    rows = sorted({round(ax.get_position().y0, 3) for ax in fig.axes}, reverse=True)
    per_row = [sum(round(ax.get_position().y0, 3) == y for ax in fig.axes) for y in rows]
    assert per_row == [4, 3]


def test_figure2_marks_each_models_icc_and_r_at_its_nmae(figure2_frame):
    fig = icc_nmae_figure(figure2_frame)
    for ax, bench in zip(fig.axes, BENCHMARKS, strict=True):
        part = figure2_frame[figure2_frame["benchmark"] == bench]
        points = np.concatenate([c.get_offsets() for c in ax.collections])
        want = np.concatenate(
            [
                np.column_stack([g["nmae"], g[column]])
                for _, g in part.groupby("scale", sort=False)
                for column in ("icc_human_llm", "pearson_r")
            ]
        )
        np.testing.assert_allclose(points, want)
    (legend,) = fig.legends
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels == [*MODELS, "ensemble", *(f"scale {s}" for s in SCALES)]


def test_distributions_are_each_sources_empirical_distribution(distributions_frame):
    fig = score_distribution_figure(distributions_frame, group_by="gender")
    ax = fig.axes[0]
    part = distributions_frame[distributions_frame["scale"] == SCALES[0]]
    sources = {
        "humans": part[part["kind"] == "human"]["share"],
        "gender: female": part[part["group"] == "female"]["share"],
        "gender: male": part[part["group"] == "male"]["share"],
        "LLMs": part[part["kind"] == "llm"]["share"],
    }
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert set(lines) == set(sources)
    for label, shares in sources.items():
        shares = shares.to_numpy()
        x, y = lines[label].get_data()
        # At each score the curve reaches, the share of scores at or below it.
        for value in np.unique(shares):
            at = np.flatnonzero(x == value)[-1]
            assert y[at] == pytest.approx(np.mean(shares <= value)), (label, value)


def test_icc_intervals_are_the_tables_bounds(scales_frame):
    fig = icc_interval_figure(scales_frame, columns=ICC_COLUMNS)
    ax = fig.axes[0]
    bars = [c for c in ax.collections]
    assert len(bars) == len(ICC_COLUMNS)
    for collection, (column, _) in zip(bars, ICC_COLUMNS, strict=True):
        segments = collection.get_segments()
        ys = sorted((seg[0][1], seg[1][1]) for seg in segments)
        want = sorted(
            zip(scales_frame[f"{column}_low"], scales_frame[f"{column}_high"], strict=True)
        )
        np.testing.assert_allclose(ys, want)
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [label for _, label in ICC_COLUMNS]


def test_bootstrap_rows_are_named_and_drawn_as_computed():
    frame = _bootstrap_frame()
    fig = bootstrap_figure(frame)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["nMAE, 0-5", "nMAE, 0-10", "human-LLM ICC, 0-5 minus 0-10"]
    (bars,) = ax.collections
    spans = sorted((seg[0][0], seg[1][0]) for seg in bars.get_segments())
    np.testing.assert_allclose(spans, sorted(zip(frame["low"], frame["high"], strict=True)))


@pytest.mark.parametrize(
    ("draw", "message"),
    [
        (lambda: icc_nmae_figure(pd.DataFrame(columns=["benchmark"])), "no items with both"),
        (lambda: bootstrap_figure(pd.DataFrame()), "no bootstrap intervals"),
        (lambda: icc_interval_figure(pd.DataFrame(), columns=ICC_COLUMNS), "no ICC yet"),
        (lambda: item_disagreement_figure(pd.DataFrame()), "no items with both"),
        (
            lambda: score_distribution_figure(pd.DataFrame(columns=["scale", "kind", "share"])),
            "no scores yet",
        ),
    ],
)
def test_an_empty_table_gives_a_figure_that_says_so(draw, message):
    fig = draw()
    (ax,) = fig.axes
    assert message in ax.texts[0].get_text()


def test_an_interval_that_misses_its_estimate_is_drawn_as_computed():
    # McGraw and Wong's F-based interval for ICC(A,1) can leave out the point
    # estimate with few items or raters; drawing it as distances from the estimate
    # made matplotlib refuse the report (a negative error bar).
    frame = pd.DataFrame(
        {
            "scale": ["0-5", "0-10"],
            "icc_a1_human": [0.40, 0.70],
            "icc_a1_human_low": [0.45, 0.50],  # above its estimate
            "icc_a1_human_high": [0.90, 0.80],
        }
    )
    fig = icc_interval_figure(frame, columns=[("icc_a1_human", "human")])
    ax = fig.axes[0]
    (bars,) = ax.collections  # the error bars' vertical segments
    spans = sorted(v for seg in bars.get_segments() for v in (seg[0][1], seg[1][1]))
    assert spans == pytest.approx(sorted([0.45, 0.90, 0.50, 0.80]))
    (points,) = [line for line in ax.lines if line.get_label() == "human"]
    assert list(points.get_ydata()) == [0.40, 0.70]
    assert png_bytes(fig).startswith(b"\x89PNG")


def test_an_inverted_or_infinite_interval_has_no_bar():
    # Three raters who disagree more than chance: ICC(A,k) far below 0 with its
    # F-based bounds swapped, or infinite. matplotlib refused the report
    # ("'yerr' must not contain negative values"); such an interval now has no bar
    # (the tables' notes say why), an infinite estimate no point.
    frame = pd.DataFrame(
        {
            "scale": ["0-5", "0-10", "0-100"],
            "icc_ak_human": [-9.0, -np.inf, 0.70],
            "icc_ak_human_low": [8.74, -np.inf, 0.50],
            "icc_ak_human_high": [0.44, 0.30, 0.80],
        }
    )
    fig = icc_interval_figure(frame, columns=[("icc_ak_human", "human")])
    ax = fig.axes[0]
    (bars,) = ax.collections
    spans = sorted(v for seg in bars.get_segments() for v in (seg[0][1], seg[1][1]))
    # The infinite bound is cut at -1, the ICC's lowest value; the inverted interval
    # still has no bar.
    assert spans == pytest.approx([-1.0, 0.30, 0.50, 0.80])
    (points,) = [line for line in ax.lines if line.get_label() == "human"]
    assert list(points.get_ydata()) == [-1.0, -1.0, 0.70]
    assert png_bytes(fig).startswith(b"\x89PNG")


def test_intervals_past_the_iccs_range_are_cut_at_the_axis_with_a_marker():
    # ICC(A,k) of 2 raters on 8 items: an interval reaching -10.6 (issue 34) must not
    # stretch the axis so that every other estimate is squashed near 0.
    frame = pd.DataFrame(
        {
            "scale": ["1-5", "0-10"],
            "icc_ak_human": [-2.5, 0.60],
            "icc_ak_human_low": [-10.6, 0.40],
            "icc_ak_human_high": [0.9, 1.3],
        }
    )
    fig = icc_interval_figure(frame, columns=[("icc_ak_human", "human")])
    ax = fig.axes[0]
    low, high = ax.get_ylim()
    assert -1.1 <= low < -1.0 and 1.0 < high <= 1.1
    (bars,) = ax.collections
    ends = [v for seg in bars.get_segments() for v in (seg[0][1], seg[1][1])]
    assert min(ends) == -1.0 and max(ends) == 1.0
    cuts = [line for line in ax.lines if line.get_label() == "_cut"]
    markers = {line.get_marker(): list(line.get_ydata()) for line in cuts}
    # The cut ends: a downward triangle at -1 under 1-5, an upward one at 1 over 0-10.
    assert markers == {"v": [-1.0], "^": [1.0]}
    # An interval inside the range is not touched (the figure of an ordinary study).
    inside = frame.assign(icc_ak_human=[0.5, 0.6], icc_ak_human_low=[0.2, 0.4])
    inside = inside.assign(icc_ak_human_high=[0.7, 0.8])
    ax = icc_interval_figure(inside, columns=[("icc_ak_human", "human")]).axes[0]
    assert not [line for line in ax.lines if line.get_label() == "_cut"]
    assert ax.get_ylim()[0] > -1.0


def test_a_bootstrap_interval_that_misses_its_estimate_is_drawn_as_computed():
    frame = pd.DataFrame(
        {
            "statistic": ["nmae", "icc_human_llm_difference"],
            "scale_a": ["0-5", "0-5"],
            "scale_b": [None, "0-10"],
            "estimate": [0.10, -0.05],
            "low": [0.12, -0.20],  # the first above its estimate
            "high": [0.30, 0.02],
        }
    )
    fig = bootstrap_figure(frame)
    ax = fig.axes[0]
    (bars,) = ax.collections
    spans = sorted(v for seg in bars.get_segments() for v in (seg[0][0], seg[1][0]))
    assert spans == pytest.approx(sorted([0.12, 0.30, -0.20, 0.02]))
    (points,) = [line for line in ax.lines if line.get_marker() == "o"]
    assert list(points.get_xdata()) == [0.10, -0.05]
    assert png_bytes(fig).startswith(b"\x89PNG")
