"""The report's figures (matplotlib, headless): they only draw what the tables hold.

Every function takes numbers already computed by ``annotator.analysis.tables`` (through
``annotator.metrics``); no statistic is computed here. The canvas and PNG helpers are
shared with ``annotator plan --plot`` (``annotator.metrics.plotting``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...metrics.plotting import data_uri, new_figure, png_bytes
from ...metrics.plotting import empty_panel as _empty

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = [
    "NMAE_THRESHOLD",
    "alt_test_epsilon_figure",
    "bootstrap_figure",
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


def alt_test_epsilon_figure(frame: pd.DataFrame) -> Figure:
    """Winning rate and advantage probability against epsilon, per model; one row per scale.

    ``frame`` has the columns ``scale, model, epsilon, winning_rate,
    advantage_probability`` (``alttest.csv``).
    """
    scales = list(dict.fromkeys(frame["scale"]))
    if not scales:
        fig = new_figure(1)
        _empty(fig.axes[0], "no alt-test results")
        return fig
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10.0, 3.2 * len(scales)), dpi=100)
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(scales), 2, squeeze=False)
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
            ax.set_ylim(-0.02, 1.02)
            ax.set_xlabel("epsilon")
            ax.set_ylabel(label)
            ax.set_title(f"{scale}: {label}")
        axes[row][1].legend(fontsize="small", loc="lower right")
    fig.tight_layout()
    return fig


def score_distribution_figure(
    values: Mapping[str, Mapping[str, Sequence[float]]],
    *,
    ranges: Mapping[str, tuple[float, float]],
) -> Figure:
    """Histograms of the scores, one panel per scale, one series per group.

    Parameters
    ----------
    values : mapping
        Scale -> group (``"humans"``, a model, a demographic group) -> scores.
    ranges : mapping
        Scale -> (min, max), the histogram's range.
    """
    scales = list(values)
    fig = new_figure(max(len(scales), 1), width=4.2, height=3.2)
    if not scales:
        _empty(fig.axes[0], "no scores yet")
        return fig
    for ax, scale in zip(fig.axes, scales, strict=True):
        low, high = ranges[scale]
        groups = values[scale]
        for group, scores in groups.items():
            if len(scores):
                ax.hist(
                    list(scores),
                    bins=20,
                    range=(low, high),
                    density=True,
                    histtype="step",
                    linewidth=1.5,
                    label=str(group),
                )
        ax.set_xlabel(f"score ({scale})")
        ax.set_ylabel("density")
        ax.set_title(scale)
        ax.legend(fontsize="x-small")
    fig.tight_layout()
    return fig


def icc_interval_figure(frame: pd.DataFrame) -> Figure:
    """Point estimates with their 95% intervals, grouped by scale.

    ``frame`` has the columns ``scale, statistic, value, ci_low, ci_high`` (one row per
    scale and statistic, e.g. ICC(A,1) human, ICC(A,k) human, ICC human-LLM).
    """
    fig = new_figure(1, width=7.0, height=3.8)
    ax = fig.axes[0]
    if frame.empty:
        _empty(ax, "no ICC yet")
        return fig
    scales = list(dict.fromkeys(frame["scale"]))
    stats = list(dict.fromkeys(frame["statistic"]))
    step = 0.8 / max(len(stats), 1)
    for j, stat in enumerate(stats):
        part = frame[frame["statistic"] == stat].set_index("scale").reindex(scales)
        xs = [i - 0.4 + step * (j + 0.5) for i in range(len(scales))]
        lower = (part["value"] - part["ci_low"]).to_numpy()
        upper = (part["ci_high"] - part["value"]).to_numpy()
        ax.errorbar(xs, part["value"], yerr=[lower, upper], fmt="o", capsize=3, label=stat)
    ax.set_xticks(range(len(scales)), scales)
    ax.set_xlabel("scale")
    ax.set_ylabel("ICC (95% CI)")
    ax.set_title("ICC with 95% intervals per scale")
    ax.legend(fontsize="small", loc="lower left")
    fig.tight_layout()
    return fig


def icc_nmae_figure(points: Sequence[Mapping[str, Any]]) -> Figure:
    """The ICC-vs-nMAE diagnostic of the paper's Figure 2: one panel per benchmark.

    Each point is a mapping with ``benchmark``, ``scale``, ``human`` and ``llm``
    (per-item human mean and LLM ensemble mean, on [0, 1]) and ``label`` (the ICC,
    nMAE and correlation, already computed, as the panel's legend text).
    """
    benchmarks = list(dict.fromkeys(p["benchmark"] for p in points))
    fig = new_figure(max(len(benchmarks), 1), width=3.8, height=3.8)
    if not benchmarks:
        _empty(fig.axes[0], "no items with both human and LLM scores")
        return fig
    for ax, bench in zip(fig.axes, benchmarks, strict=True):
        for p in (p for p in points if p["benchmark"] == bench):
            ax.scatter(p["human"], p["llm"], s=10, alpha=0.7, label=p["label"])
        ax.plot([0, 1], [0, 1], color="grey", linewidth=1, linestyle=":")
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_aspect("equal")
        ax.set_xlabel("human mean (scaled to [0, 1])")
        ax.set_ylabel("LLM mean (scaled to [0, 1])")
        ax.set_title(bench)
        ax.legend(fontsize="x-small", loc="upper left")
    fig.tight_layout()
    return fig


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
    ax.set_title("Per-item disagreement")
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def bootstrap_figure(frame: pd.DataFrame) -> Figure:
    """Bootstrap intervals as horizontal bars: one row per quantity.

    ``frame`` has the columns ``quantity, estimate, ci_low, ci_high``.
    """
    fig = new_figure(1, width=7.0, height=0.5 + 0.4 * max(len(frame), 2))
    ax = fig.axes[0]
    if frame.empty:
        _empty(ax, "no bootstrap intervals")
        return fig
    ys = list(range(len(frame)))[::-1]
    lower = (frame["estimate"] - frame["ci_low"]).to_numpy()
    upper = (frame["ci_high"] - frame["estimate"]).to_numpy()
    ax.errorbar(frame["estimate"], ys, xerr=[lower, upper], fmt="o", capsize=3)
    ax.axvline(0.0, color="grey", linewidth=1, linestyle=":")
    ax.set_yticks(ys, [str(q) for q in frame["quantity"]])
    ax.set_xlabel("estimate with bootstrap 95% interval")
    ax.set_title("Bootstrap intervals (resampling items)")
    fig.tight_layout()
    return fig
