"""The report's sections for self-consistency, correlations, kappas, cross-group alpha and
the alt-test curves (tables of :mod:`annotator.analysis.agreement_tables`), with the
curves' figures. :func:`~annotator.analysis.report.sections.report_sections` appends them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from .cells import Section, frame_view, text_columns
from .figures import Drawn, curves_against, figure

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure as MplFigure

__all__ = ["agreement_sections", "alt_test_curve_figure"]

_CURVE_VIEW = ["scale", "model", "x", "winning_rate", "winning_rate_low", "winning_rate_high"]
_CURVE_VIEW += ["advantage_probability", "advantage_low", "advantage_high", "pass_share"]
_CURVE_VIEW += ["n_resamples", "n_undefined"]


def alt_test_curve_figure(
    frame: pd.DataFrame, *, against: str, reuse: MplFigure | None = None
) -> MplFigure:
    """Winning rate and advantage probability with their resampling bands, per scale.

    ``frame`` is ``ReportTables.alttest_curves`` restricted to one ``against``; one row
    of panels per scale, a line per model, the 0.5 pass line dotted. ``reuse``: as for
    :func:`~annotator.metrics.plotting.panel_grid`.
    """
    from matplotlib.collections import PolyCollection

    from ...metrics.plotting import TITLE_Y, empty_panel, panel_grid, unit_y
    from ...metrics.plotting import new_figure as new

    scales = list(dict.fromkeys(frame["scale"]))
    if not scales:
        fig = new(1)
        empty_panel(fig.axes[0], "no alt-test curve")
        return fig
    # The y-axes are fixed to [0, 1]: the margins are known without measuring.
    fig, axes = panel_grid(len(scales), 2, width=10.0, row_height=3.2, reuse=reuse)
    unit_y(axes)
    label = "number of items" if against == "items" else "epsilon"
    for row, scale in enumerate(scales):
        part = frame[frame["scale"] == scale]
        bands = [([], []), ([], [])]  # per panel: polygons and their colours
        for model, lines in part.groupby("model", sort=False):
            lines = lines.sort_values("x")
            x = lines["x"].to_numpy(dtype=float)
            for col, (mean, low, high) in enumerate(
                (
                    ("winning_rate", "winning_rate_low", "winning_rate_high"),
                    ("advantage_probability", "advantage_low", "advantage_high"),
                )
            ):
                (line,) = axes[row][col].plot(x, lines[mean], marker=".", label=str(model))
                low_y, high_y = (lines[c].to_numpy(dtype=float) for c in (low, high))
                polygons = _bands(x, low_y, high_y)
                bands[col][0].extend(polygons)
                bands[col][1].extend([line.get_color()] * len(polygons))
        for col, (polygons, colours) in enumerate(bands):
            # One collection per panel, not a fill_between per model: the same
            # polygons drawn in the same order, for a sixth of the artists.
            collection = PolyCollection(polygons, color=colours, alpha=0.15)
            axes[row][col].add_collection(collection)
        axes[row][0].axhline(0.5, color="grey", linewidth=1, linestyle=":")
        for col, name in enumerate(("winning rate", "advantage probability")):
            ax = axes[row][col]
            ax.set_xlabel(label)
            ax.set_ylabel(name)
            ax.set_title(f"{scale}: {name}", y=TITLE_Y)
        axes[row][1].legend(fontsize="small", loc="lower right")
    return fig


def _bands(x, low, high) -> list:
    """The polygons ``fill_between(x, low, high)`` fills: one per run of points where
    the three are numbers, along ``low`` and back along ``high``."""
    import numpy as np
    from matplotlib.cbook import contiguous_regions

    polygons = []
    for start, stop in contiguous_regions(np.isfinite(x) & np.isfinite(low) & np.isfinite(high)):
        t, f1, f2 = x[start:stop], low[start:stop], high[start:stop]
        n = stop - start
        points = np.empty((2 * n + 2, 2))
        points[0] = t[0], f2[0]
        points[1 : n + 1, 0], points[1 : n + 1, 1] = t, f1
        points[n + 1] = t[-1], f2[-1]
        points[n + 2 :, 0], points[n + 2 :, 1] = t[::-1], f2[::-1]
        polygons.append(points)
    return polygons


# (against, heading, caption, figure caption) of the two curve sections.
_CURVES = (
    (
        "epsilon",
        "Alt-test against epsilon, resampling annotators",
        "Mean winning rate and advantage probability over resamples of 3 annotators and "
        "100 items (all when fewer), with the 90% empirical interval, per epsilon (the "
        "alt-test paper's Table 3 setting and Figure 3).",
        "Winning rate and advantage probability against epsilon; bands: 90% of resamples "
        "of 3 annotators; dotted: the 0.5 needed to pass.",
    ),
    (
        "items",
        "Alt-test against the number of items",
        "For the model with the highest advantage probability on each scale (mean of the "
        "epsilon curve's resamples): mean over resamples of 3 annotators and n items (up "
        "to 300) of the winning rate and advantage probability at the study's epsilon, "
        "with the 90% empirical interval (the alt-test paper's Table 3 and Figure 2). "
        "n_undefined: resamples too small to test (under 30 items per annotator).",
        "Winning rate and advantage probability against the number of items; bands: 90% "
        "of resamples.",
    ),
)


def _section(key, heading, caption, frame, *, empty="", figures=()) -> Section:
    return Section(
        key=key,
        heading=heading,
        caption=caption,
        frame=frame_view(frame),
        text_columns=text_columns(frame),
        figures=list(figures),
        empty=empty,
    )


def agreement_sections(tables, drawn: Mapping[str, Drawn] | None = None) -> list[Section]:
    """The sections of this module, in the report's order (``drawn``: as
    :func:`.sections.report_sections`)."""
    sections = [
        _section(
            "consistency",
            "Self-consistency of the LLM runs",
            "Per model, scale and temperature, across the model's runs on the same items "
            "(Rating Roulette, section 4): Krippendorff's alpha (interval; ordinal and "
            "nominal on integer scores), ICC(A,1) of the items x runs matrix with its 95% "
            "interval, and the share of items given the same score in every run. A judge "
            "that samples little scores close to 1.",
            tables.consistency,
            empty="no model has two runs at one temperature",
        ),
        _section(
            "correlations",
            "Correlations with the human mean",
            "Pearson r, Spearman rho and Kendall tau-b between the human mean (complete "
            "block) and each model and the ensemble at the main temperature, with 95% "
            "Fisher-z intervals (rank coefficients: Fieller-Hartley-Pearson variances).",
            tables.correlations,
        ),
        _section(
            "kappa",
            "Kappa and percent agreement (integer scales)",
            "Cohen's kappa with quadratic weights between the human consensus rounded half "
            "up and each model (scale points as categories); Fleiss' kappa among the humans "
            "(complete block; nominal categories); percent agreement among the humans: "
            "agreeing pairs of raters per item, and items on which all raters agree. Not "
            "chance-corrected: read it beside the kappas.",
            tables.kappa,
            empty="no integer scale (step 1) in this study",
        ),
        _section(
            "cross_alpha",
            "Cross-group alpha",
            "Krippendorff's alpha counting only pairs of ratings from two different groups "
            "(Rating Roulette, section 3.3): humans against the LLMs (each model a rater) "
            "and between demographic groups; expected disagreement from the pooled ratings.",
            tables.cross_alpha,
        ),
    ]
    for against, heading, caption, figure_caption in _CURVES:
        part = curves_against(tables, against)
        key = f"alttest_{against}_curve"
        shown = figure(
            key,
            tables,
            figure_caption,
            f"Alt-test winning rate and advantage probability against {against}",
            drawn,
        )
        sections.append(_section(key, heading, caption, part[_CURVE_VIEW], figures=[shown]))
    return sections
