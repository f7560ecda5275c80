"""Fixtures of the figure tests: small tables as the report's, and what a reader gets
checked from the drawn figure (text size as shown in the report, legends off the data).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import annotator.render.report as report_package

SCALES = ("0-5", "0-10", "0-100")
MODELS = ("gpt", "gemini", "llama")
# Seven benchmarks, as a study whose Figure 2 once put seven panels in one row.
BENCHMARKS = ("a", "b", "c", "d", "e", "f", "(all)")


def report_column_px() -> float:
    """The width in CSS pixels of the report's column at a 1,280-pixel window, read from
    the template's style (``max-width`` and ``padding`` of the body, in rem of 16 px)."""
    template = Path(report_package.__file__).with_name("templates") / "report.html"
    style = template.read_text("utf-8")
    body = re.search(r"body \{([^}]*)\}", style).group(1)
    max_width = float(re.search(r"max-width:\s*([\d.]+)rem", body).group(1)) * 16
    padding = float(re.search(r"padding:\s*([\d.]+)rem", body).group(1)) * 16
    return min(max_width, 1280 - 2 * padding)


def shown_points(fig, font_size: float) -> float:
    """A text of ``font_size`` points in ``fig`` as the report shows it, in CSS points.

    The PNG has ``dpi`` pixels per inch, so the text is ``font_size * dpi / 72`` pixels
    tall; the page shows the image at its width in CSS pixels, scaled down to the
    column when wider; a CSS point is 4/3 CSS pixels.
    """
    width_px = fig.get_size_inches()[0] * fig.dpi
    scale = min(1.0, report_column_px() / width_px)
    return font_size * fig.dpi / 72 * scale * 0.75


def _shown(text) -> bool:
    """Whether ``text`` is drawn: visible, not empty, and not on a removed panel."""
    if not (text.get_visible() and text.get_text().strip()):
        return False
    ax = text.axes
    return ax is None or (ax.get_visible() and ax in ax.get_figure(root=True).axes)


@pytest.fixture
def readable():
    """``readable(fig)``: draw ``fig`` and fail on a text under 8 points as shown in the
    report, on a legend inside a panel, or on a figure legend over any panel or its
    labels (the panel's tight box: ticks, tick labels, axis labels and title)."""

    def check(fig) -> None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.text import Text

        canvas = FigureCanvasAgg(fig)
        canvas.draw()  # lays the figure out and draws it, as savefig does
        renderer = canvas.get_renderer()
        texts = [t for t in fig.findobj(Text) if _shown(t)]
        assert texts
        for text in texts:
            size = shown_points(fig, text.get_fontsize())
            assert size >= 8.0, (text.get_text(), size)
        assert [ax.get_legend() for ax in fig.axes if ax.get_legend()] == []
        for legend in fig.legends:
            box = legend.get_window_extent(renderer)
            for ax in fig.axes:
                assert not box.overlaps(ax.get_tightbbox(renderer)), ax.get_title()

    return check


@pytest.fixture
def alttest_frame() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    rows = []
    for scale in SCALES:
        for model in MODELS:
            for epsilon in (0.0, 0.1, 0.2, 0.3):
                rate = rng.uniform(0, 1)
                rows.append(
                    {
                        "scale": scale,
                        "model": model,
                        "epsilon": epsilon,
                        "winning_rate": rate,
                        "advantage_probability": rng.uniform(0, 1),
                    }
                )
    return pd.DataFrame(rows)


@pytest.fixture
def curve_frame() -> pd.DataFrame:
    rng = np.random.default_rng(2)
    rows = []
    for scale in SCALES:
        for model in MODELS:
            for x in (30.0, 60.0, 90.0, 120.0):
                mean, advantage = rng.uniform(0.2, 0.8, 2)
                rows.append(
                    {
                        "scale": scale,
                        "model": model,
                        "against": "items",
                        "x": x,
                        "winning_rate": mean,
                        "winning_rate_low": mean - 0.1,
                        "winning_rate_high": mean + 0.15,
                        "advantage_probability": advantage,
                        "advantage_low": advantage - 0.2,
                        "advantage_high": advantage + 0.05,
                    }
                )
    return pd.DataFrame(rows)


@pytest.fixture
def distributions_frame() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    parts = []
    for scale in SCALES:
        humans = rng.integers(0, 11, 120) / 10
        parts.append(
            pd.DataFrame(
                {
                    "scale": scale,
                    "kind": "human",
                    "who": [f"r{i % 6}" for i in range(120)],
                    "group": ["female" if i % 6 < 3 else "male" for i in range(120)],
                    "share": humans,
                }
            )
        )
        parts.append(
            pd.DataFrame(
                {
                    "scale": scale,
                    "kind": "llm",
                    "who": "gpt",
                    "group": None,
                    "share": rng.integers(3, 11, 40) / 10,
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


@pytest.fixture
def scales_frame() -> pd.DataFrame:
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"scale": list(SCALES)})
    for column in ("icc_a1_human", "icc_ak_human", "icc_a1_llm", "icc_human_llm"):
        estimate = rng.uniform(0.3, 0.9, len(SCALES))
        frame[column] = estimate
        frame[f"{column}_low"] = estimate - 0.2
        frame[f"{column}_high"] = np.minimum(estimate + 0.1, 1.0)
    return frame


@pytest.fixture
def figure2_frame() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    rows = []
    for bench in BENCHMARKS:
        for scale in SCALES:
            for model in (*MODELS, "ensemble"):
                rows.append(
                    {
                        "benchmark": bench,
                        "scale": scale,
                        "model": model,
                        "icc_human_llm": rng.uniform(0.2, 0.9),
                        "nmae": rng.uniform(0.05, 0.3),
                        "pearson_r": rng.uniform(0.5, 1.0),
                    }
                )
    return pd.DataFrame(rows)
