"""The figures of the study report and of ``annotator plan --plot``, in plain matplotlib.

Each function draws numbers computed elsewhere (``annotator.metrics``,
``annotator.analysis.tables``) on a new ``matplotlib.figure.Figure`` laid out by
constrained layout; :func:`figure_bytes` saves one as PNG, SVG or PDF. Importing this
package does not import matplotlib: each function does when it runs.
"""

from __future__ import annotations

from .alttest import alt_test_curve_figure, alt_test_epsilon_figure
from .base import (
    DPI,
    FORMATS,
    MAX_WIDTH,
    data_uri,
    empty_panel,
    figure_bytes,
    legend_below,
    new_figure,
    panel_grid,
    png_bytes,
)
from .layout import Layout, png_once
from .plan import alt_test_power_figure, plan_figure
from .study import (
    ICC_RANGE,
    NMAE_THRESHOLD,
    bootstrap_figure,
    bootstrap_label,
    icc_interval_figure,
    icc_nmae_figure,
    item_disagreement_figure,
    score_distribution_figure,
)

__all__ = [
    "DPI",
    "FORMATS",
    "MAX_WIDTH",
    "ICC_RANGE",
    "Layout",
    "NMAE_THRESHOLD",
    "alt_test_curve_figure",
    "alt_test_epsilon_figure",
    "alt_test_power_figure",
    "bootstrap_figure",
    "bootstrap_label",
    "data_uri",
    "empty_panel",
    "figure_bytes",
    "icc_interval_figure",
    "icc_nmae_figure",
    "item_disagreement_figure",
    "legend_below",
    "new_figure",
    "panel_grid",
    "plan_figure",
    "png_bytes",
    "png_once",
    "score_distribution_figure",
]
