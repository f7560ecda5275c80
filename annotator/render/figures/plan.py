"""The planning figures of ``annotator plan --plot``: a D-study's curves and the
alt-test's pass probability. They only draw numbers computed by ``annotator.metrics``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .base import UNIT_LIMITS, empty_panel, legend_below, new_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["alt_test_power_figure", "plan_figure"]


def plan_figure(
    raters: Sequence[int],
    absolute: Sequence[float],
    relative: Sequence[float],
    *,
    target: float,
    needed_by_target: Mapping[float, int | None],
    widths: Sequence[Mapping[str, Any]] | None = None,
) -> Figure:
    """Planning curves of a D-study: reliability and raters needed, and CI widths.

    Parameters
    ----------
    raters, absolute, relative : sequence
        ``DStudy.raters``, ``DStudy.absolute`` (ICC(A,k')) and ``DStudy.relative``.
    target : float
        The wanted ICC(A,k'), drawn as a horizontal line.
    needed_by_target : mapping
        Target ICC(A,k') -> raters needed (``None`` when none reaches it), as given by
        ``annotator.metrics.raters_needed``.
    widths : sequence of dict, optional
        ``IntervalWidths.rows``: a third panel with the median width of the ICC(A,1)
        interval against the number of items, one line per number of raters.
    """
    from matplotlib.ticker import MaxNLocator

    n_panels = 3 if widths else 2
    fig = new_figure(3.6 * n_panels, 4.0)
    axes = fig.subplots(1, n_panels, squeeze=False)[0]
    ax_rel, ax_need = axes[0], axes[1]
    ax_rel.plot(raters, absolute, marker="o", label="ICC(A,k')")
    ax_rel.plot(raters, relative, marker="s", linestyle="--", label="ICC(C,k')")
    ax_rel.axhline(target, color="grey", linewidth=1, linestyle=":", label=f"target {target:g}")
    ax_rel.set_xlabel("raters k'")
    ax_rel.set_ylabel("predicted reliability")
    ax_rel.set_title("Reliability of k' raters' mean")

    reached = [(t, n) for t, n in sorted(needed_by_target.items()) if n is not None]
    if reached:
        ax_need.step([t for t, _ in reached], [n for _, n in reached], where="post", marker=".")
        ax_need.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax_need.set_xlabel("target ICC(A,k')")
        ax_need.set_ylabel("raters needed")
        ax_need.set_title("Raters needed for a target")
    else:
        empty_panel(ax_need, "no number of raters reaches these targets")
    if widths:
        ax_w = axes[2]
        for k in sorted({row["n_raters"] for row in widths}):
            rows = sorted((r for r in widths if r["n_raters"] == k), key=lambda r: r["n_items"])
            ax_w.plot(
                [r["n_items"] for r in rows],
                [r["width_a1"] for r in rows],
                marker="o",
                label=f"{k} raters",
            )
        ax_w.set_xlabel("items")
        ax_w.set_ylabel("median 95% CI width, ICC(A,1)")
        ax_w.set_title("Interval width against items")
    # One legend below the panels, never over a curve: the lines' labels differ.
    legend_below(fig, [line for ax in axes for line in ax.get_lines()])
    return fig


def alt_test_power_figure(rows: Sequence[Mapping[str, Any]], *, epsilon: float) -> Figure:
    """Pass probability of the alt-test against items, one line per number of raters.

    ``rows`` are ``AltTestPower.rows``.
    """
    fig = new_figure(5.6, 4.0)
    ax = fig.subplots()
    for k in sorted({row["n_raters"] for row in rows}):
        mine = sorted((r for r in rows if r["n_raters"] == k), key=lambda r: r["n_items"])
        ax.plot(
            [r["n_items"] for r in mine],
            [r["pass_probability"] for r in mine],
            marker="o",
            label=f"{k} raters",
        )
    ax.set_ylim(*UNIT_LIMITS)
    ax.set_xlabel("items")
    ax.set_ylabel("pass probability")
    ax.set_title(f"Alt-test pass probability (epsilon {epsilon:g})")
    legend_below(fig, ax.get_lines())
    return fig
