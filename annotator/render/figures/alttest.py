"""The report's alt-test figures: winning rate and advantage probability per model, one
row of two panels per scale, against epsilon or against the number of items.

They only draw the numbers of ``ReportTables.alttest`` and ``ReportTables.alttest_curves``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import UNIT_LIMITS, empty_panel, legend_below, new_figure, panel_grid

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["alt_test_curve_figure", "alt_test_epsilon_figure"]

_QUANTITIES = ("winning rate", "advantage probability")
# Inches: a row of two panels per scale, and the legend's row below.
_PANEL = (5.0, 2.9)
_LEGEND = 0.6


def _rows(scales: list, message: str) -> tuple[Figure, list | None]:
    """The grid of two panels per scale (``None`` and a panel saying ``message`` when
    there is no scale), the axes shared (the y-axes fixed to [0, 1]): the x tick
    labels and axis label once, under the last row, as small multiples read."""
    if not scales:
        fig = new_figure(6.4, 2.0)
        empty_panel(fig.subplots(), message)
        return fig, None
    width, height = _PANEL
    fig, axes = panel_grid(
        2 * len(scales),
        columns=2,
        panel_width=width,
        panel_height=height,
        extra_height=_LEGEND,
        sharex=True,
        sharey=True,
    )
    for ax in axes:
        ax.set_ylim(*UNIT_LIMITS)
    return fig, [axes[i : i + 2] for i in range(0, len(axes), 2)]


def _label(fig: Figure, rows: list, scales: list, x_label: str) -> None:
    for scale, row in zip(scales, rows, strict=True):
        for ax, quantity in zip(row, _QUANTITIES, strict=True):
            ax.set_title(f"{scale}: {quantity}")
        row[0].set_ylabel("share")
        # The alt-test passes a model whose winning rate is at least 0.5.
        row[0].axhline(0.5, color="grey", linewidth=1, linestyle=":", label="0.5 to pass")
    for ax in rows[-1]:
        ax.set_xlabel(x_label)
    legend_below(fig, rows[0][0].get_lines(), title="model")


def alt_test_epsilon_figure(frame: pd.DataFrame) -> Figure:
    """Winning rate and advantage probability against epsilon, a line per model.

    ``frame`` has the columns ``scale, model, epsilon, winning_rate,
    advantage_probability`` (``alttest.csv``).
    """
    scales = list(dict.fromkeys(frame["scale"]))
    fig, rows = _rows(scales, "no alt-test results")
    if rows is None:
        return fig
    for scale, row in zip(scales, rows, strict=True):
        part = frame[frame["scale"] == scale]
        for i, (model, lines) in enumerate(part.groupby("model", sort=False)):
            lines = lines.sort_values("epsilon")
            for ax, column in zip(row, ("winning_rate", "advantage_probability"), strict=True):
                ax.plot(lines["epsilon"], lines[column], marker=".", color=f"C{i}", label=model)
    _label(fig, rows, scales, "epsilon")
    return fig


def alt_test_curve_figure(frame: pd.DataFrame, *, against: str) -> Figure:
    """Winning rate and advantage probability with their resampling bands, a line per model.

    ``frame`` is ``ReportTables.alttest_curves`` restricted to one ``against``
    (``"epsilon"`` or ``"items"``): the mean over resamples at each ``x``, and the
    band from ``*_low`` to ``*_high``.
    """
    scales = list(dict.fromkeys(frame["scale"]))
    fig, rows = _rows(scales, "no alt-test curve")
    if rows is None:
        return fig
    columns = (
        ("winning_rate", "winning_rate_low", "winning_rate_high"),
        ("advantage_probability", "advantage_low", "advantage_high"),
    )
    for scale, row in zip(scales, rows, strict=True):
        part = frame[frame["scale"] == scale]
        for i, (model, lines) in enumerate(part.groupby("model", sort=False)):
            lines = lines.sort_values("x")
            x = lines["x"].to_numpy(dtype=float)
            for ax, (mean, low, high) in zip(row, columns, strict=True):
                colour = f"C{i}"
                ax.plot(x, lines[mean], marker=".", color=colour, label=str(model))
                ax.fill_between(
                    x,
                    lines[low].to_numpy(dtype=float),
                    lines[high].to_numpy(dtype=float),
                    color=colour,
                    alpha=0.15,
                    linewidth=0,
                )
    _label(fig, rows, scales, "number of items" if against == "items" else "epsilon")
    return fig
