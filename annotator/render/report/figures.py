"""The report's figures, by key: how each is drawn from the tables, what it shows in
words (its alt text), and the page's :class:`~.cells.Figure` of it.

:data:`FIGURES` names the function drawing each figure of the page from a
:class:`~annotator.analysis.tables.ReportTables` (the drawing itself is
:mod:`annotator.render.figures`); :data:`DESCRIPTIONS` the function saying in a
sentence what it shows, from the same tables. :func:`draw_figures` draws them all once,
as PNG for the page and, for ``annotator report --figures``, in another format too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .cells import Figure

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure as MplFigure

    from ..figures import Layout

__all__ = [
    "DESCRIPTIONS",
    "FIGURES",
    "Drawn",
    "curves_against",
    "cut_intervals",
    "describe",
    "draw",
    "draw_figures",
    "figure",
    "missing",
    "pooled_repeats",
]


@dataclass(frozen=True)
class Drawn:
    """A figure drawn: its PNG bytes and its size in pixels."""

    png: bytes
    width: int
    height: int


def draw(
    fig: MplFigure, likes: Sequence[Layout] = (), *, share: bool = False
) -> tuple[Drawn, Layout | None]:
    """``fig`` drawn once as PNG (:func:`~annotator.render.figures.png_once`), in the
    first of ``likes`` its labels fit; and, to ``share``, the layout it was drawn in."""
    from ..figures import png_once

    width, height = fig.get_size_inches() * fig.dpi
    png, layout = png_once(fig, likes, measure=share)
    return Drawn(png, round(width), round(height)), layout


def figure(
    key: str, tables: Any, caption: str, drawn: Mapping[str, Drawn] | None = None
) -> Figure | None:
    """The page's figure ``key``: ``drawn[key]`` when given, else drawn now from
    ``tables``; its alt text says what it shows (:func:`describe`). None when it has
    nothing to show (:func:`missing`): an empty figure is not drawn."""
    from ..figures import data_uri

    if missing(key, tables) is not None:
        return None
    done = (drawn or {}).get(key)
    if done is None:
        done, _ = draw(FIGURES[key](tables))
    alt = describe(key, tables)
    return Figure(key, caption, alt, data_uri(done.png), done.width, done.height)


def draw_figures(
    tables: Any,
    *,
    fmt: str | None = None,
    layouts: dict[str, list[Layout]] | None = None,
    last: bool = False,
) -> tuple[dict[str, Drawn], dict[str, bytes]]:
    """Every figure of the page drawn once: as PNG for the page, by key, and when
    ``fmt`` is given also saved in that format (``annotator report --figures``).

    ``layouts``: the layouts of the figures drawn before, by key, shared by the figures
    drawn alike (each criterion's of a rubric study) and added to here. A figure takes
    the first of its key's layouts where its labels fit, rather than constrained layout
    measuring them again (:func:`~annotator.render.figures.png_once`); without
    ``layouts`` each figure is laid out on its own. ``last``: no figure follows to
    share a new layout, which is then not measured.
    """
    from ..figures import figure_bytes

    drawn, files = {}, {}
    for key, make in FIGURES.items():
        if missing(key, tables) is not None:
            continue
        fig = make(tables)
        if layouts is None:
            drawn[key], _ = draw(fig)
        else:
            known = layouts.setdefault(key, [])
            drawn[key], layout = draw(fig, known, share=not last)
            if layout is not None and layout not in known:
                known.append(layout)
        if fmt is not None:
            files[key] = figure_bytes(fig, fmt)
    return drawn, files


def curves_against(tables: Any, against: str) -> pd.DataFrame:
    """``tables.alttest_curves`` against ``"epsilon"`` or ``"items"`` (empty without curves)."""
    from ...analysis.agreement_tables import CURVE_COLUMNS

    curves = tables.alttest_curves
    if "against" not in curves.columns:  # tables built without the curves
        curves = curves.reindex(columns=CURVE_COLUMNS)
    return curves[curves["against"] == against]


def _settings(tables: Any) -> dict:
    return tables.settings or {}


def _alttest(tables: Any) -> MplFigure:
    from ..figures import alt_test_epsilon_figure

    return alt_test_epsilon_figure(tables.alttest)


def _curve(against: str) -> Callable[[Any], MplFigure]:
    def make(tables: Any) -> MplFigure:
        from ..figures import alt_test_curve_figure

        return alt_test_curve_figure(curves_against(tables, against), against=against)

    return make


def _threshold(tables: Any) -> float:
    from ..figures import NMAE_THRESHOLD

    return _settings(tables).get("item_threshold", NMAE_THRESHOLD)


def _items(tables: Any) -> MplFigure:
    from ..figures import item_disagreement_figure

    return item_disagreement_figure(tables.items, threshold=_threshold(tables))


def _bootstrap(tables: Any) -> MplFigure:
    from ..figures import bootstrap_figure

    return bootstrap_figure(tables.bootstrap)


def _distributions(tables: Any) -> MplFigure:
    from ..figures import score_distribution_figure

    group_by = _settings(tables).get("group_by")
    return score_distribution_figure(tables.distributions, group_by=group_by)


ICC_COLUMNS = (
    ("icc_a1_human", "human ICC(A,1)"),
    ("icc_ak_human", "human ICC(A,k)"),
    ("icc_a1_llm", "LLM ICC(A,1)"),
    ("icc_human_llm", "human-LLM ICC(A,1)"),
)


def cut_intervals(tables: Any) -> list[str]:
    """The ICC intervals (or estimates) of the ICC figure that reach past the ICC's
    range [-1, 1] and are cut at the axis, in words: "human ICC(A,k) on 1-5 (-10.6 to
    0.9)"."""
    import numpy as np

    from ..figures import ICC_RANGE

    lo, hi = ICC_RANGE
    out = []
    for _, row in tables.scales.iterrows():
        for column, label in ICC_COLUMNS:
            values = [row.get(column), row.get(f"{column}_low"), row.get(f"{column}_high")]
            values = np.asarray([np.nan if v is None else v for v in values], dtype=float)
            with np.errstate(invalid="ignore"):
                if not ((values < lo) | (values > hi)).any():
                    continue
            low, high = values[1], values[2]
            span = f"{low:.2f} to {high:.2f}".replace("-", "−")
            out.append(f"{label} on {row['scale']} ({span})")
    return out


def _icc(tables: Any) -> MplFigure:
    from ..figures import icc_interval_figure

    return icc_interval_figure(tables.scales, columns=ICC_COLUMNS)


#: The columns of a point of Figure 2: a panel's points are these, by row.
_FIGURE2_POINTS = ("scale", "model", "icc_human_llm", "nmae", "pearson_r")


def pooled_repeats(frame: pd.DataFrame) -> str | None:
    """The one benchmark whose points the pooled panel "(all)" of Figure 2 repeats
    exactly (a study of one benchmark), or None: then "(all)" is drawn once."""
    from ...analysis.columns import ALL_BENCHMARKS

    names = [b for b in dict.fromkeys(frame["benchmark"]) if b != ALL_BENCHMARKS]
    if len(names) != 1 or ALL_BENCHMARKS not in set(frame["benchmark"]):
        return None

    def points(benchmark: str) -> pd.DataFrame:
        part = frame.loc[frame["benchmark"] == benchmark, list(_FIGURE2_POINTS)]
        return part.reset_index(drop=True)

    return names[0] if points(names[0]).equals(points(ALL_BENCHMARKS)) else None


def _figure2_frame(tables: Any) -> pd.DataFrame:
    """``tables.figure2`` as drawn: without the pooled panel when it repeats the one
    benchmark's (the table keeps both)."""
    from ...analysis.columns import ALL_BENCHMARKS

    frame = tables.figure2
    if pooled_repeats(frame) is None:
        return frame
    return frame[frame["benchmark"] != ALL_BENCHMARKS]


def _figure2(tables: Any) -> MplFigure:
    from ..figures import icc_nmae_figure

    return icc_nmae_figure(_figure2_frame(tables))


def _any_number(frame: pd.DataFrame, columns) -> bool:
    import numpy as np

    present = [c for c in columns if c in frame.columns]
    if frame.empty or not present:
        return False
    values = frame[present].to_numpy(dtype=float)
    return bool(np.isfinite(values).any())


def _no_bootstrap(tables: Any) -> str | None:
    if not _any_number(tables.bootstrap, ("estimate",)):
        return "no bootstrap interval could be computed"
    # One interval (one scale's nMAE): its row of the table says all the figure would.
    if tables.bootstrap["estimate"].notna().sum() == 1:
        return "one interval only: its row of the table shows it"
    return None


def _no_items(tables: Any) -> str | None:
    if not _any_number(tables.items, ("nmae",)):
        return "no item has both human and LLM scores"
    # Every item in the table of the worst: it shows each nMAE the figure would, in order.
    if len(tables.worst_items) == len(tables.items):
        return "the table of the worst items lists every item, worst first"
    return None


def _no_curve(against: str) -> Callable[[Any], str | None]:
    def why(tables: Any) -> str | None:
        if _any_number(curves_against(tables, against), ("winning_rate",)):
            return None
        return "no resample had enough items per annotator to run the alt-test"

    return why


#: Why figure ``key`` has nothing to show (None: it has).
MISSING: dict[str, Callable[[Any], str | None]] = {
    "alttest": lambda t: (
        None
        if _any_number(t.alttest, ("winning_rate", "advantage_probability"))
        else "the alt-test tested no annotator (see its reason above)"
    ),
    "alttest_epsilon_curve": _no_curve("epsilon"),
    "alttest_items_curve": _no_curve("items"),
    "items": _no_items,
    "bootstrap": _no_bootstrap,
    "distributions": lambda t: None if not t.distributions.empty else "no scores yet",
    "icc": lambda t: (
        None if _any_number(t.scales, [c for c, _ in ICC_COLUMNS]) else "no ICC could be computed"
    ),
    "figure2": lambda t: (
        None
        if _any_number(t.figure2, ("icc_human_llm", "pearson_r"))
        else "no items with both human and LLM scores"
    ),
}


def missing(key: str, tables: Any) -> str | None:
    """Why figure ``key`` would be empty, in words; None when it has data to show."""
    return MISSING[key](tables)


#: Every figure of the page, by key (also the file name of ``annotator report --figures``).
FIGURES: dict[str, Callable[[Any], MplFigure]] = {
    "alttest": _alttest,
    "alttest_epsilon_curve": _curve("epsilon"),
    "alttest_items_curve": _curve("items"),
    "items": _items,
    "bootstrap": _bootstrap,
    "distributions": _distributions,
    "icc": _icc,
    "figure2": _figure2,
}


# ------------------------------------------------------------------- alt texts


def _names(values: Any, noun: str, *, plural: str | None = None, sep: str = ", ") -> str:
    """``"3 scales (a, b and c)"``: how many, and which."""
    names = [str(v) for v in dict.fromkeys(values)]
    listed = names[0] if len(names) == 1 else sep.join(names[:-1]) + " and " + names[-1]
    return f"{len(names)} {noun if len(names) == 1 else plural or noun + 's'} ({listed})"


def _alttest_text(frame: pd.DataFrame, x: str, *, bands: bool = False) -> str:
    if frame.empty:
        return f"No alt-test results against {x} to show."
    with_bands = " with 90% resampling bands" if bands else ""
    return (
        f"Line charts of the alt-test's winning rate and advantage probability{with_bands} "
        f"against {x}, one row per scale for {_names(frame['scale'], 'scale')}, one line per "
        f"model for {_names(frame['model'], 'model')}, with the 0.5 a model needs to pass."
    )


def _describe_items(tables: Any) -> str:
    frame = tables.items
    if frame.empty:
        return "No items with both human and LLM scores to show."
    return (
        f"Line chart of the nMAE between the human and the LLM mean of each of "
        f"{frame['item'].nunique()} items, sorted from worst, one line per scale for "
        f"{_names(frame['scale'], 'scale')}, with the {_threshold(tables):g} threshold."
    )


def _describe_bootstrap(tables: Any) -> str:
    frame = tables.bootstrap
    if frame.empty:
        return "No bootstrap intervals to show."
    from ..figures import bootstrap_label

    labels = [bootstrap_label(row) for _, row in frame.iterrows()]
    return f"Bootstrap estimates with their intervals for {_names(labels, 'quantity', plural='quantities', sep='; ')}."


def _describe_distributions(tables: Any) -> str:
    frame = tables.distributions
    if frame.empty:
        return "No scores to show."
    group_by = _settings(tables).get("group_by")
    who = "all humans"
    if group_by:
        groups = frame.loc[frame["kind"] == "human", "group"].dropna()
        if len(groups):
            who += f", each {group_by} group ({', '.join(sorted(map(str, groups.unique())))})"
    return (
        f"Cumulative distributions of the scores as a share of the range, one panel per "
        f"scale for {_names(frame['scale'], 'scale')}: {who} and the LLMs."
    )


def _describe_icc(tables: Any) -> str:
    frame = tables.scales
    if frame.empty:
        return "No ICC to show."
    kinds = ", ".join(label for _, label in ICC_COLUMNS)
    return f"ICC point estimates with 95% intervals for {_names(frame['scale'], 'scale')}: {kinds}."


def _describe_figure2(tables: Any) -> str:
    from ...analysis.columns import ALL_BENCHMARKS

    frame = tables.figure2
    if frame.empty:
        return "No items with both human and LLM scores to show."
    drawn = _figure2_frame(tables)
    repeated = pooled_repeats(frame)
    pooled = (
        f", the pooled {ALL_BENCHMARKS} left out as it has the same points"
        if repeated is not None
        else ""
    )
    return (
        f"Scatter plots of human-LLM ICC(A,1) (filled) and Pearson r (hollow) against "
        f"nMAE, one panel per benchmark for {_names(drawn['benchmark'], 'benchmark')}"
        f"{pooled}, a colour per model for {_names(frame['model'], 'model')} and a marker "
        f"per scale for {_names(frame['scale'], 'scale')}."
    )


#: What each figure shows, in a sentence from the tables: the page's alt text.
DESCRIPTIONS: dict[str, Callable[[Any], str]] = {
    "alttest": lambda tables: _alttest_text(tables.alttest, "epsilon"),
    "alttest_epsilon_curve": lambda tables: _alttest_text(
        curves_against(tables, "epsilon"), "epsilon", bands=True
    ),
    "alttest_items_curve": lambda tables: _alttest_text(
        curves_against(tables, "items"), "the number of items", bands=True
    ),
    "items": _describe_items,
    "bootstrap": _describe_bootstrap,
    "distributions": _describe_distributions,
    "icc": _describe_icc,
    "figure2": _describe_figure2,
}


def describe(key: str, tables: Any) -> str:
    """The alt text of figure ``key``: a sentence saying what it shows."""
    return DESCRIPTIONS[key](tables)
