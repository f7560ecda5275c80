"""The report's figures (matplotlib, headless): they only draw what the tables hold.

Every function takes numbers already computed by ``annotator.analysis.tables`` (through
``annotator.metrics``); no statistic is computed here. The canvas and PNG helpers are
shared with ``annotator plan --plot`` (``annotator.metrics.plotting``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...metrics.plotting import TITLE_Y, data_uri, new_figure, panel_grid, png_bytes, unit_y
from ...metrics.plotting import empty_panel as _empty
from ...metrics.row_layout import fit_row

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = [
    "NMAE_THRESHOLD",
    "alt_test_epsilon_figure",
    "bootstrap_figure",
    "bootstrap_label",
    "data_uri",
    "icc_interval_figure",
    "icc_nmae_figure",
    "item_disagreement_figure",
    "png_bytes",
    "score_distribution_figure",
]

# The paper's threshold between well and poorly aligned items (section 5.4).
NMAE_THRESHOLD = 0.1


# --------------------------------------------------------------------- the report


def alt_test_epsilon_figure(frame: pd.DataFrame, *, reuse: Figure | None = None) -> Figure:
    """Winning rate and advantage probability against epsilon, per model; one row per scale.

    ``frame`` has the columns ``scale, model, epsilon, winning_rate,
    advantage_probability`` (``alttest.csv``). ``reuse``: as for
    :func:`~annotator.metrics.plotting.panel_grid`.
    """
    scales = list(dict.fromkeys(frame["scale"]))
    if not scales:
        fig = new_figure(1)
        _empty(fig.axes[0], "no alt-test results")
        return fig
    # The y-axes are fixed to [0, 1]: the margins are known without measuring.
    fig, axes = panel_grid(len(scales), 2, width=10.0, row_height=3.2, reuse=reuse)
    unit_y(axes)
    for row, scale in enumerate(scales):
        part = frame[frame["scale"] == scale]
        for model, lines in part.groupby("model", sort=False):
            lines = lines.sort_values("epsilon")
            axes[row][0].plot(lines["epsilon"], lines["winning_rate"], marker=".", label=model)
            axes[row][1].plot(
                lines["epsilon"], lines["advantage_probability"], marker=".", label=model
            )
        axes[row][0].axhline(0.5, color="grey", linewidth=1, linestyle=":")
        for col, label in enumerate(("winning rate", "advantage probability")):
            ax = axes[row][col]
            ax.set_xlabel("epsilon")
            ax.set_ylabel(label)
            ax.set_title(f"{scale}: {label}", y=TITLE_Y)
        axes[row][1].legend(fontsize="small", loc="lower right")
    return fig


def score_distribution_figure(frame: pd.DataFrame, *, group_by: str | None = None) -> Figure:
    """Histograms of the scores' share of the range, one panel per scale.

    ``frame`` is ``ReportTables.distributions`` (``scale, kind, who, group, share``):
    one series for all humans, one per demographic group, one for the LLMs.
    """
    # In order of appearance, as dict.fromkeys would give them: unique() does not
    # iterate the column's thousands of strings in Python (3 ms at 150 items).
    scales = list(frame["scale"].unique())
    fig = new_figure(max(len(scales), 1), width=4.2, height=3.2)
    if not scales:
        _empty(fig.axes[0], "no scores yet")
        return fig
    for ax, scale in zip(fig.axes, scales, strict=True):
        part = frame[frame["scale"] == scale]
        humans = part[part["kind"] == "human"]
        series = [("humans", humans["share"])]
        if group_by:
            for group, rows in humans.dropna(subset=["group"]).groupby("group", sort=True):
                series.append((f"{group_by}: {group}", rows["share"]))
        series.append(("LLMs", part[part["kind"] == "llm"]["share"]))
        for label, shares in series:
            if len(shares):
                ax.hist(
                    shares.to_numpy(dtype=float),
                    bins=20,
                    range=(0.0, 1.0),
                    density=True,
                    histtype="step",
                    linewidth=1.5,
                    label=label,
                )
        ax.set_xlabel(f"score as a share of the range ({scale})")
        ax.set_ylabel("density")
        ax.set_title(scale, y=TITLE_Y)
        ax.legend(fontsize="x-small")
    fit_row(fig)
    return fig


def _estimates_with_intervals(
    ax, positions, estimate, low, high, *, colour: str, label=None, horizontal: bool = False
) -> None:
    """Points at ``estimate`` and bars from ``low`` to ``high`` at ``positions``.

    The bars are drawn about each interval's own middle rather than as distances from
    the estimate: an interval need not contain its estimate (McGraw and Wong's F-based
    interval for ICC(A,1) with few items or raters, a percentile bootstrap interval of
    a biased statistic), and matplotlib refuses a negative error bar.
    """
    middle, half = (low + high) / 2, (high - low) / 2
    if horizontal:
        ax.errorbar(middle, positions, xerr=half, fmt="none", capsize=3, ecolor=colour)
        ax.plot(estimate, positions, "o", color=colour, label=label)
    else:
        ax.errorbar(positions, middle, yerr=half, fmt="none", capsize=3, ecolor=colour)
        ax.plot(positions, estimate, "o", color=colour, label=label)


def icc_interval_figure(frame: pd.DataFrame, *, columns: Sequence[tuple[str, str]]) -> Figure:
    """Point estimates with their intervals, grouped by scale.

    ``frame`` is ``ReportTables.scales``; ``columns`` are ``(column, label)`` pairs whose
    bounds are the ``<column>_low`` and ``<column>_high`` columns.
    """
    fig = new_figure(1, width=7.0, height=3.8)
    ax = fig.axes[0]
    if frame.empty:
        _empty(ax, "no ICC yet")
        return fig
    scales = list(frame["scale"])
    step = 0.8 / max(len(columns), 1)
    for j, (column, label) in enumerate(columns):
        xs = [i - 0.4 + step * (j + 0.5) for i in range(len(scales))]
        _estimates_with_intervals(
            ax,
            xs,
            frame[column].to_numpy(dtype=float),
            frame[f"{column}_low"].to_numpy(dtype=float),
            frame[f"{column}_high"].to_numpy(dtype=float),
            colour=f"C{j}",
            label=label,
        )
    ax.set_xticks(range(len(scales)), scales)
    ax.set_xlabel("scale")
    ax.set_ylabel("ICC (95% CI)")
    ax.set_title("ICC with 95% intervals per scale", y=TITLE_Y)
    ax.legend(fontsize="small", loc="lower left")
    fit_row(fig)
    return fig


def icc_nmae_figure(frame: pd.DataFrame) -> Figure:
    """The ICC-vs-nMAE diagnostic of the paper's Figure 2: one panel per benchmark.

    ``frame`` is ``ReportTables.figure2`` (``benchmark, scale, model, icc_human_llm,
    nmae, pearson_r``): each model (and the ensemble) on each scale is a point at
    (nMAE, ICC), filled, with its Pearson r as a hollow marker at the same nMAE, so a
    judge that correlates well but agrees poorly (offset, variance mismatch) stands out.
    """
    benchmarks = list(dict.fromkeys(frame["benchmark"]))
    fig = new_figure(max(len(benchmarks), 1), width=4.0, height=3.8)
    if not benchmarks:
        _empty(fig.axes[0], "no items with both human and LLM scores")
        return fig
    markers = dict(zip(dict.fromkeys(frame["scale"]), "osD^v<>", strict=False))
    models = list(dict.fromkeys(frame["model"]))
    colours = {m: f"C{i % 10}" for i, m in enumerate(models)}
    for ax, bench in zip(fig.axes, benchmarks, strict=True):
        part = frame[frame["benchmark"] == bench]
        groups = []
        for scale, points in part.groupby("scale", sort=False):
            marker = markers.get(scale, "o")
            colour = [colours[m] for m in points["model"]]
            x = points["nmae"].to_numpy(dtype=float)
            groups.append((x, points["icc_human_llm"].to_numpy(dtype=float), marker, colour, True))
            groups.append((x, points["pearson_r"].to_numpy(dtype=float), marker, colour, False))
        _scatter(ax, groups)
        ax.set_xlabel("nMAE (lower is better)")
        ax.set_ylabel("ICC(A,1) filled, Pearson r hollow")
        ax.set_title(bench, y=TITLE_Y)
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=colours[m], marker="o", linestyle="", label=m) for m in models]
    handles += [
        Line2D([], [], color="grey", marker=mk, linestyle="", label=f"scale {sc}")
        for sc, mk in markers.items()
    ]
    fig.axes[-1].legend(handles=handles, fontsize="x-small", loc="best")
    fit_row(fig)
    return fig


def _scatter(ax, groups, *, size: float = 36.0) -> None:
    """The marks of ``ax.scatter(x, y, marker=marker, c=colours, s=size)`` for each group
    ``(x, y, marker, colours, True)`` in turn, and of ``ax.scatter(..., facecolors="none",
    edgecolors=colours)`` for each ``(..., False)``, as one collection.

    One collection for all the marks of a panel, not one per scale and fill: the same
    marks drawn in the same order (scatter draws a collection of several colours mark
    by mark too), for a sixth of the artists (3 ms each, made and drawn). A point whose x
    or y is not a number is not drawn and does not count in the limits, as with scatter.
    """
    import numpy as np
    from matplotlib.collections import PathCollection
    from matplotlib.colors import to_rgba_array
    from matplotlib.markers import MarkerStyle
    from matplotlib.transforms import IdentityTransform

    paths, offsets, faces, edges = [], [], [], []
    for x, y, marker, colours, filled in groups:
        style = MarkerStyle(marker)
        paths += [style.get_path().transformed(style.get_transform())] * len(x)
        offsets.append(np.column_stack([x, y]))
        rgba = to_rgba_array(colours)
        faces.append(rgba if filled else np.zeros_like(rgba))  # "none"
        edges.append(rgba)  # filled: scatter's edges are the face's colour
    collection = PathCollection(
        paths,
        [size],
        facecolors=np.concatenate(faces),
        edgecolors=np.concatenate(edges),
        offsets=np.concatenate(offsets),
        offset_transform=ax.transData,
    )
    collection.set_transform(IdentityTransform())
    ax.add_collection(collection)


def item_disagreement_figure(frame: pd.DataFrame, *, threshold: float = NMAE_THRESHOLD) -> Figure:
    """nMAE per item (sorted), one line per scale, with the paper's 0.1 threshold.

    ``frame`` has the columns ``scale, item, nmae``.
    """
    fig = new_figure(1, width=7.0, height=3.6)
    ax = fig.axes[0]
    if frame.empty:
        _empty(ax, "no items with both human and LLM scores")
        return fig
    for scale, part in frame.groupby("scale", sort=False):
        ordered = part["nmae"].sort_values(ascending=False).to_numpy()
        ax.plot(range(1, len(ordered) + 1), ordered, label=str(scale))
    ax.axhline(threshold, color="firebrick", linewidth=1, linestyle="--", label=f"{threshold:g}")
    ax.set_xlabel("items, worst first")
    ax.set_ylabel("nMAE (human mean vs LLM mean)")
    ax.set_title("Per-item disagreement", y=TITLE_Y)
    ax.legend(fontsize="small")
    fit_row(fig)
    return fig


def bootstrap_label(row: Any) -> str:
    """How a row of ``ReportTables.bootstrap`` is named in the table and the plot."""
    if row["statistic"] == "nmae":
        return f"nMAE, {row['scale_a']}"
    if row["statistic"] == "icc_human_llm_difference":
        return f"human-LLM ICC, {row['scale_a']} minus {row['scale_b']}"
    return f"{row['statistic']}, {row['scale_a']}"


def bootstrap_figure(frame: pd.DataFrame) -> Figure:
    """Bootstrap intervals as horizontal bars, one row per quantity.

    ``frame`` is ``ReportTables.bootstrap`` (``statistic, scale_a, scale_b, estimate,
    low, high``).
    """
    fig = new_figure(1, width=7.0, height=0.8 + 0.45 * max(len(frame), 2))
    ax = fig.axes[0]
    if frame.empty:
        _empty(ax, "no bootstrap intervals")
        return fig
    ys = list(range(len(frame)))[::-1]
    _estimates_with_intervals(
        ax,
        ys,
        frame["estimate"].to_numpy(dtype=float),
        frame["low"].to_numpy(dtype=float),
        frame["high"].to_numpy(dtype=float),
        colour="C0",
        horizontal=True,
    )
    ax.axvline(0.0, color="grey", linewidth=1, linestyle=":")
    ax.set_yticks(ys, [bootstrap_label(row) for _, row in frame.iterrows()])
    ax.set_xlabel("estimate with its bootstrap interval")
    ax.set_title("Bootstrap intervals (resampling items)", y=TITLE_Y)
    fit_row(fig)
    return fig
