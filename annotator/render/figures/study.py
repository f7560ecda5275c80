"""The report's figures of scores and agreement: distributions, ICC intervals, the
ICC-vs-nMAE diagnostic (the paper's Figure 2), per-item disagreement and bootstrap
intervals.

Every function takes numbers already computed by ``annotator.analysis.tables``
(through ``annotator.metrics``); no statistic is computed here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .base import empty_panel, legend_below, new_figure, panel_grid

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = [
    "ICC_RANGE",
    "NMAE_THRESHOLD",
    "bootstrap_figure",
    "bootstrap_label",
    "icc_interval_figure",
    "icc_nmae_figure",
    "item_disagreement_figure",
    "score_distribution_figure",
]

# The paper's threshold between well and poorly aligned items (section 5.4).
NMAE_THRESHOLD = 0.1
# Panels per row of the many-panel figures, and the legend's height below, in inches.
_COLUMNS = 4
_LEGEND = 0.8


def _single(width: float, height: float, message: str | None = None):
    fig = new_figure(width, height)
    ax = fig.subplots()
    if message is not None:
        empty_panel(ax, message)
    return fig, ax


def score_distribution_figure(frame: pd.DataFrame, *, group_by: str | None = None) -> Figure:
    """The empirical distribution function of the scores' share of the range, one panel
    per scale: all humans, each demographic group and the LLMs as separate lines.

    ``frame`` is ``ReportTables.distributions`` (``scale, kind, who, group, share``).
    Cumulative curves rather than histograms: several of them on one panel stay
    apart where they differ, and each can be read off at any score.
    """
    import numpy as np

    scales = list(frame["scale"].unique())
    if not scales:
        return _single(6.4, 2.0, "no scores yet")[0]
    fig, axes = panel_grid(
        len(scales),
        columns=3,
        panel_width=3.6,
        panel_height=3.0,
        extra_height=_LEGEND,
        sharey=True,
    )
    groups = []
    if group_by:
        known = frame.loc[frame["kind"] == "human", "group"].dropna()
        groups = sorted(known.unique(), key=str)
    # Humans and LLMs bold and distinct; the groups thin, told apart by colour and dash.
    styles = [("humans", {"color": "black", "linewidth": 2.0})]
    dashes = ["--", "-.", ":", (0, (5, 1, 1, 1, 1, 1))]
    for i, group in enumerate(groups):
        styles.append(
            (
                f"{group_by}: {group}",
                {"color": f"C{i % 10}", "linewidth": 1.2, "linestyle": dashes[i % len(dashes)]},
            )
        )
    styles.append(("LLMs", {"color": "firebrick", "linewidth": 2.0}))
    for ax, scale in zip(axes, scales, strict=True):
        part = frame[frame["scale"] == scale]
        humans = part[part["kind"] == "human"]
        series = {"humans": humans["share"], "LLMs": part[part["kind"] == "llm"]["share"]}
        for group in groups:
            series[f"{group_by}: {group}"] = humans.loc[humans["group"] == group, "share"]
        for label, style in styles:
            shares = series[label].to_numpy(dtype=float)
            shares = shares[~np.isnan(shares)]
            if len(shares):
                # Each distinct score once, weighted by its count: the same curve with
                # a vertex per score rather than per rating (60,000 at 5,000 items),
                # which keeps the SVG and PDF small. Not ``compress=True``: it keeps
                # the cumulative share at the first of equal scores, not the last.
                values, counts = np.unique(shares, return_counts=True)
                ax.ecdf(values, weights=counts, label=label, **style)
        ax.set_xlim(-0.02, 1.02)
        ax.set_title(str(scale))
        ax.set_xlabel("score as a share of the range")
    axes[0].set_ylabel("share of scores at or below")
    handles = {}
    for ax in axes:
        for line in ax.get_lines():
            handles.setdefault(line.get_label(), line)
    legend_below(fig, list(handles.values()), columns=4)
    return fig


#: The range of an ICC (and of any correlation): intervals are cut to it on the figures.
ICC_RANGE = (-1.0, 1.0)


def _estimates_with_intervals(
    ax,
    positions,
    estimate,
    low,
    high,
    *,
    colour: str,
    label=None,
    horizontal: bool = False,
    limits: tuple[float, float] | None = None,
) -> None:
    """Points at ``estimate`` and bars from ``low`` to ``high`` at ``positions``.

    The bars are drawn about each interval's own middle rather than as distances from
    the estimate: an interval need not contain its estimate (McGraw and Wong's F-based
    interval for ICC(A,1) with few items or raters, a percentile bootstrap interval of
    a biased statistic), and matplotlib refuses a negative error bar.

    ``limits``: the parameter's range. An interval (or estimate) reaching past it is
    cut at the range's end and marked there with a triangle pointing out of the range,
    so one interval of ICC(A,k) down to -10 does not squash every other onto a line;
    the caption says which were cut (:func:`annotator.render.report.figures.cut_intervals`).
    """
    import numpy as np

    positions, estimate = np.asarray(positions, float), np.asarray(estimate, float)
    low, high = np.asarray(low, float), np.asarray(high, float)
    cut_low = cut_high = np.zeros(len(positions), dtype=bool)
    if limits is not None:
        lo, hi = limits
        with np.errstate(invalid="ignore"):
            cut_low = (low < lo) | (estimate < lo)
            cut_high = (high > hi) | (estimate > hi)
        low, high = np.clip(low, lo, hi), np.clip(high, lo, hi)
        estimate = np.clip(estimate, lo, hi)
    # An infinite or inverted interval (ICC(A,k) of raters who disagree more than
    # chance) has no bar, an infinite estimate no point: the tables' notes say why.
    usable = np.isfinite(low) & np.isfinite(high) & (low <= high)
    shown = np.isfinite(estimate)
    middle, half = (low + high) / 2, (high - low) / 2
    bars = (middle[usable], half[usable], positions[usable])
    points = (estimate[shown], positions[shown])
    if horizontal:
        ax.errorbar(bars[0], bars[2], xerr=bars[1], fmt="none", capsize=3, ecolor=colour)
        ax.plot(points[0], points[1], "o", color=colour, label=label)
    else:
        ax.errorbar(bars[2], bars[0], yerr=bars[1], fmt="none", capsize=3, ecolor=colour)
        ax.plot(points[1], points[0], "o", color=colour, label=label)
    if limits is not None:
        for flags, end, marker in ((cut_low, limits[0], "<v"), (cut_high, limits[1], ">^")):
            if flags.any():
                at = np.full(int(flags.sum()), end)
                xy = (at, positions[flags]) if horizontal else (positions[flags], at)
                ax.plot(
                    *xy,
                    marker[1 - horizontal],
                    color=colour,
                    markersize=8,
                    linestyle="",
                    label="_cut",
                )


def _span(ax, horizontal: bool, limits: tuple[float, float]) -> tuple[float, float]:
    """The axis's current limits, kept within ``limits`` plus a margin for the markers."""
    lo, hi = ax.get_xlim() if horizontal else ax.get_ylim()
    margin = 0.05 * (limits[1] - limits[0])
    return max(lo, limits[0] - margin), min(hi, limits[1] + margin)


def icc_interval_figure(frame: pd.DataFrame, *, columns: Sequence[tuple[str, str]]) -> Figure:
    """Point estimates with their intervals, grouped by scale.

    ``frame`` is ``ReportTables.scales``; ``columns`` are ``(column, label)`` pairs whose
    bounds are the ``<column>_low`` and ``<column>_high`` columns. The legend is below
    the panel, off every interval.
    """
    if frame.empty:
        return _single(6.4, 2.0, "no ICC yet")[0]
    fig, ax = _single(8.0, 4.2)
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
            limits=ICC_RANGE,
        )
    # The axis spans the data inside the ICC's range, never past it.
    ax.set_ylim(_span(ax, False, ICC_RANGE))
    ax.set_xticks(range(len(scales)), scales)
    ax.set_xlabel("scale")
    ax.set_ylabel("ICC (95% CI)")
    ax.set_title("ICC with 95% intervals per scale")
    legend_below(fig, ax.get_lines(), columns=4)
    return fig


def icc_nmae_figure(frame: pd.DataFrame) -> Figure:
    """The ICC-vs-nMAE diagnostic of the paper's Figure 2: one panel per benchmark,
    wrapped onto rows of four, the axes shared.

    ``frame`` is ``ReportTables.figure2`` (``benchmark, scale, model, icc_human_llm,
    nmae, pearson_r``): each model (and the ensemble) on each scale is a point at
    (nMAE, ICC), filled, with its Pearson r as a hollow marker at the same nMAE, so a
    judge that correlates well but agrees poorly (offset, variance mismatch) stands out.
    """
    from matplotlib.lines import Line2D

    benchmarks = list(dict.fromkeys(frame["benchmark"]))
    if not benchmarks:
        return _single(6.4, 2.0, "no items with both human and LLM scores")[0]
    fig, axes = panel_grid(
        len(benchmarks),
        columns=_COLUMNS,
        panel_width=2.7,
        panel_height=2.6,
        extra_height=1.0,
        sharex=True,
        sharey=True,
    )
    markers = dict(zip(dict.fromkeys(frame["scale"]), "osD^v<>", strict=False))
    models = list(dict.fromkeys(frame["model"]))
    colours = {m: f"C{i % 10}" for i, m in enumerate(models)}
    for ax, bench in zip(axes, benchmarks, strict=True):
        part = frame[frame["benchmark"] == bench]
        for scale, points in part.groupby("scale", sort=False):
            marker = markers.get(scale, "o")
            colour = [colours[m] for m in points["model"]]
            x = points["nmae"].to_numpy(dtype=float)
            ax.scatter(x, points["icc_human_llm"].to_numpy(dtype=float), marker=marker, c=colour)
            ax.scatter(
                x,
                points["pearson_r"].to_numpy(dtype=float),
                marker=marker,
                facecolors="none",
                edgecolors=colour,
            )
        ax.set_title(str(bench))
    # The axis labels once per column and row: below the lowest panel of a column,
    # left of the first panel of a row.
    columns = min(len(axes), _COLUMNS)
    for i, ax in enumerate(axes):
        if i + columns >= len(axes):
            ax.set_xlabel("nMAE (lower is better)")
        if i % columns == 0:
            ax.set_ylabel("ICC(A,1) filled, r hollow")
    handles = [Line2D([], [], color=colours[m], marker="o", linestyle="", label=m) for m in models]
    handles += [
        Line2D([], [], color="grey", marker=mk, linestyle="", label=f"scale {sc}")
        for sc, mk in markers.items()
    ]
    # Five entries a row take two panels' width: one panel alone takes two a row.
    legend_below(fig, handles, columns=min(5, 2 * columns))
    return fig


def item_disagreement_figure(frame: pd.DataFrame, *, threshold: float = NMAE_THRESHOLD) -> Figure:
    """nMAE per item (sorted), one line per scale, with the paper's 0.1 threshold.

    ``frame`` has the columns ``scale, item, nmae``.
    """
    if frame.empty:
        return _single(6.4, 2.0, "no items with both human and LLM scores")[0]
    fig, ax = _single(8.0, 3.8)
    for scale, part in frame.groupby("scale", sort=False):
        ordered = part["nmae"].sort_values(ascending=False).to_numpy()
        ax.plot(range(1, len(ordered) + 1), ordered, label=f"scale {scale}")
    ax.axhline(threshold, color="firebrick", linewidth=1, linestyle="--", label=f"{threshold:g}")
    ax.set_xlabel("items, worst first")
    ax.set_ylabel("nMAE (human mean vs LLM mean)")
    ax.set_title("Per-item disagreement")
    legend_below(fig, ax.get_lines())
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
    if frame.empty:
        return _single(6.4, 2.0, "no bootstrap intervals")[0]
    fig, ax = _single(8.0, 1.0 + 0.4 * max(len(frame), 2))
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
    ax.set_title("Bootstrap intervals (resampling items)")
    return fig
