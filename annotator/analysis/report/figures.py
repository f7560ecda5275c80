"""The report's figures, by key: how each is drawn from the tables, and as a data URI.

:data:`FIGURES` names the function drawing each figure of the page from a
:class:`~annotator.analysis.tables.ReportTables`; :func:`figure` turns one into the
page's :class:`~.cells.Figure`, unless ``drawn`` holds it already: ``annotator report``
draws the alt-test figures (:data:`ALTTEST_FIGURES`) in the process that computes
their tables, and the others while it waits for them (:mod:`.apart`). The page is the
same either way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .cells import Figure

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure as MplFigure

__all__ = ["ALTTEST_FIGURES", "FIGURES", "Drawn", "curves_against", "draw", "figure"]


@dataclass(frozen=True)
class Drawn:
    """A figure drawn: its PNG bytes and its size in pixels."""

    png: bytes
    width: int
    height: int


def draw(fig: MplFigure) -> Drawn:
    from ...metrics.plotting import png_bytes

    width, height = fig.get_size_inches() * fig.dpi
    return Drawn(png_bytes(fig), int(width), int(height))


def figure(
    key: str, tables: Any, caption: str, alt: str, drawn: Mapping[str, Drawn] | None = None
) -> Figure:
    """The page's figure ``key``: ``drawn[key]`` when given, else drawn now from ``tables``."""
    from ...metrics.plotting import png_data_uri

    done = (drawn or {}).get(key)
    if done is None:
        done = draw(FIGURES[key](tables))
    return Figure(key, caption, alt, png_data_uri(done.png), done.width, done.height)


def curves_against(tables: Any, against: str) -> pd.DataFrame:
    """``tables.alttest_curves`` against ``"epsilon"`` or ``"items"`` (empty without curves)."""
    from ..agreement_tables import CURVE_COLUMNS

    curves = tables.alttest_curves
    if "against" not in curves.columns:  # tables built without the curves
        curves = curves.reindex(columns=CURVE_COLUMNS)
    return curves[curves["against"] == against]


def _settings(tables: Any) -> dict:
    return tables.settings or {}


def _alttest(tables: Any, reuse: MplFigure | None = None) -> MplFigure:
    from .plots import alt_test_epsilon_figure

    return alt_test_epsilon_figure(tables.alttest, reuse=reuse)


def _curve(against: str) -> Callable[..., MplFigure]:
    def make(tables: Any, reuse: MplFigure | None = None) -> MplFigure:
        from .agreement_sections import alt_test_curve_figure

        frame = curves_against(tables, against)
        return alt_test_curve_figure(frame, against=against, reuse=reuse)

    return make


def _items(tables: Any) -> MplFigure:
    from .plots import NMAE_THRESHOLD, item_disagreement_figure

    threshold = _settings(tables).get("item_threshold", NMAE_THRESHOLD)
    return item_disagreement_figure(tables.items, threshold=threshold)


def _bootstrap(tables: Any) -> MplFigure:
    from .plots import bootstrap_figure

    return bootstrap_figure(tables.bootstrap)


def _distributions(tables: Any) -> MplFigure:
    from .plots import score_distribution_figure

    group_by = _settings(tables).get("group_by")
    return score_distribution_figure(tables.distributions, group_by=group_by)


def _icc(tables: Any) -> MplFigure:
    from .plots import icc_interval_figure

    columns = [
        ("icc_a1_human", "human ICC(A,1)"),
        ("icc_ak_human", "human ICC(A,k)"),
        ("icc_a1_llm", "LLM ICC(A,1)"),
        ("icc_human_llm", "human-LLM ICC(A,1)"),
    ]
    return icc_interval_figure(tables.scales, columns=columns)


def _figure2(tables: Any) -> MplFigure:
    from .plots import icc_nmae_figure

    return icc_nmae_figure(tables.figure2)


#: The figures drawn from one alt-test table alone, by the table (the ``ReportTables``
#: attribute): what the process that computes the table draws (:mod:`.apart`). They
#: share one grid of panels: each takes ``reuse``, a figure of the others already
#: saved, to draw on its panels (:func:`~annotator.metrics.plotting.panel_grid`).
ALTTEST_FIGURES: dict[str, dict[str, Callable[..., MplFigure]]] = {
    "alttest": {"alttest": _alttest},
    "alttest_curves": {
        "alttest_epsilon_curve": _curve("epsilon"),
        "alttest_items_curve": _curve("items"),
    },
}
#: Every figure of the page, by key.
FIGURES: dict[str, Callable[[Any], MplFigure]] = {
    **{key: make for figures in ALTTEST_FIGURES.values() for key, make in figures.items()},
    "items": _items,
    "bootstrap": _bootstrap,
    "distributions": _distributions,
    "icc": _icc,
    "figure2": _figure2,
}
