"""The study report as one self-contained HTML file: the paper's tables, the figures, the notes.

Layout only: every number comes from :class:`annotator.analysis.tables.ReportTables`
(computed through ``annotator.metrics``); this module formats, orders and draws them.
The page has no external reference: the style is inline and the figures are PNG data
URIs, so the file opens offline and can be mailed or archived as it is.

The template is rendered with a plain Jinja environment (not Flask's), so the command
line and the web download produce the same bytes without a request context.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Cell",
    "FrameView",
    "Section",
    "bootstrap_frame",
    "frame_view",
    "render_report",
    "report_figures",
    "report_sections",
    "table1_frame",
]

TEMPLATES = Path(__file__).with_name("templates")


@dataclass(frozen=True)
class Cell:
    """One table cell: ``text`` as shown, ``raw`` the full-precision value for scripts."""

    text: str
    raw: str
    css: str = ""


@dataclass(frozen=True)
class FrameView:
    columns: list[str]
    rows: list[list[Cell]]


@dataclass
class Figure:
    key: str
    caption: str
    alt: str
    uri: str
    width: int
    height: int


@dataclass
class Section:
    key: str
    heading: str
    caption: str
    frame: FrameView
    best: bool = False
    within: str | None = None
    text_columns: frozenset[str] = frozenset()
    figures: list[Figure] = field(default_factory=list)
    worst: list[str] = field(default_factory=list)
    empty: str = ""


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN, pd.NA and NaT are not equal to themselves
    except (TypeError, ValueError):
        return False


def _cell(value: Any, *, best: bool = False) -> Cell:
    """Format one value: floats to 3 decimals (as the paper), the full value in ``raw``."""
    import numpy as np

    if _is_missing(value):
        return Cell("–", "nan", "missing")
    css = "best" if best else ""
    if isinstance(value, bool | np.bool_):
        return Cell("yes" if value else "no", str(bool(value)).lower(), css)
    if isinstance(value, int | np.integer):
        return Cell(str(int(value)), str(int(value)), css)
    if isinstance(value, float | np.floating):
        number = float(value)
        if math.isinf(number):
            return Cell("∞" if number > 0 else "−∞", repr(number), css)
        return Cell(f"{number:.3f}".replace("-", "−"), repr(number), css)
    return Cell(str(value), str(value), css or "text")


def frame_view(frame: pd.DataFrame, *, best: pd.DataFrame | None = None) -> FrameView:
    """A DataFrame as rows of formatted cells (a named index becomes columns).

    ``best`` (same index, one boolean column per marked column, as
    :func:`annotator.analysis.table_files.mark_best` returns) marks the paper's bold cells.
    """
    if frame.index.names != [None]:
        frame = frame.reset_index()
        best = best.reset_index(drop=True) if best is not None else None
    columns = [str(c) for c in frame.columns]
    flags = best.reset_index(drop=True) if best is not None else None
    rows = []
    for position, record in enumerate(frame.itertuples(index=False, name=None)):
        rows.append(
            [
                _cell(
                    value,
                    best=bool(
                        flags is not None and column in flags and flags[column].iloc[position]
                    ),
                )
                for column, value in zip(columns, record, strict=True)
            ]
        )
    return FrameView(columns, rows)


def _text_columns(frame: pd.DataFrame) -> frozenset[str]:
    if frame.index.names != [None]:
        frame = frame.reset_index()
    return frozenset(str(c) for c in frame.columns if frame[c].dtype.kind not in "fiub")


# ------------------------------------------------------------------------- figures


def _figure(key: str, fig, caption: str, alt: str) -> Figure:
    from .plots import data_uri

    width, height = fig.get_size_inches() * fig.dpi
    return Figure(key, caption, alt, data_uri(fig), int(width), int(height))


# ------------------------------------------------------------------------ sections

_T2 = [
    "scale",
    "n_items",
    "n_raters",
    "n_models",
    "icc_a1_human",
    "icc_ak_human",
    "icc_a1_llm",
    "icc_ak_llm",
    "icc_human_llm",
    "nmae",
    "pearson_r",
]
_T3 = [
    "benchmark",
    "scale",
    "n_items",
    "n_raters",
    "n_models",
    "icc_a1_human",
    "icc_ak_human",
    "icc_a1_llm",
    "icc_ak_llm",
    "delta_a1",
    "delta_ak",
]
_T4A = ["benchmark", "scale", "n_items", "icc_human_llm", "nmae", "pearson_r"]
_T4B = [
    "model",
    "scale",
    "temperature",
    "n_items",
    "icc_human_llm",
    "icc_human_llm_low",
    "icc_human_llm_high",
    "nmae",
    "pearson_r",
]
_BOOTSTRAP = ["quantity", "estimate", "low", "high", "confidence", "n_items", "n_resamples"]
_BOOTSTRAP += ["n_undefined", "seed"]
TABLE1_AVERAGE = "average"


def table1_frame(tables) -> pd.DataFrame:
    """Table 1 laid out as the paper: a row per benchmark and comparison, a column per model.

    A reshape of ``inter_scale`` (no aggregation: each cell is one value of the long
    table) with the ``inter_scale_average`` column appended.
    """
    import pandas as pd

    long = tables.inter_scale
    if long.empty:
        return pd.DataFrame(columns=["benchmark", "comparison", TABLE1_AVERAGE])
    order = long[["benchmark", "comparison"]].drop_duplicates()
    wide = long.pivot(index=["benchmark", "comparison"], columns="model", values="icc_a1")
    wide = wide[list(dict.fromkeys(long["model"]))]
    average = tables.inter_scale_average.set_index(["benchmark", "comparison"])["icc_a1_mean"]
    wide[TABLE1_AVERAGE] = average.reindex(wide.index)
    wide = wide.reindex(pd.MultiIndex.from_frame(order))
    wide.columns.name = None
    return wide.reset_index()


def _ordered(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """Rows grouped by ``column`` in order of first appearance (stable within a group)."""
    first = {value: i for i, value in enumerate(dict.fromkeys(frame[column]))}
    return frame.sort_values(column, key=lambda c: c.map(first), kind="stable")


def bootstrap_frame(tables) -> pd.DataFrame:
    from .plots import bootstrap_label

    frame = tables.bootstrap.copy()
    frame.insert(0, "quantity", [bootstrap_label(row) for _, row in frame.iterrows()])
    return frame[_BOOTSTRAP]


def _section(key, heading, caption, frame, *, rule=None, **extra):
    # ``rule``: the table's entry of BEST_RULES, the same the LaTeX tables bold by.
    best = rule.mark(frame) if rule is not None else None
    within = rule.within if rule is not None else None
    return Section(
        key=key,
        heading=heading,
        caption=caption,
        frame=frame_view(frame, best=best),
        best=best is not None,
        within=within,
        text_columns=_text_columns(frame),
        **extra,
    )


def report_sections(tables) -> list[Section]:
    """The report's table sections with their figures, in the paper's order."""
    from .plots import (
        alt_test_epsilon_figure,
        bootstrap_figure,
        item_disagreement_figure,
    )

    settings = tables.settings or {}
    threshold = settings.get("item_threshold", 0.1)
    from ..table_files import BEST_RULES

    sections = [
        _section(
            "table1",
            "Table 1: LLM inter-scale agreement",
            "Per benchmark and model: each model's scores on the scales mapped to [0, 1] and "
            "taken as repeated measurements; absolute-agreement ICC(A,1) across the scales "
            "jointly and pairwise. (all) pools the benchmarks; the last column averages the "
            "models.",
            table1_frame(tables),
        ),
        _section(
            "table2",
            "Table 2: reliability and agreement per scale",
            "Human and LLM panels' ICC(A,1) and ICC(A,k) on the complete items x raters "
            "block; human-LLM ICC(A,1) of [human mean, LLM ensemble mean] and nMAE over the "
            "scale's range.",
            tables.scales[_T2],
            rule=BEST_RULES["scales"],
        ),
        _section(
            "table3",
            "Table 3: panel reliability per benchmark",
            "Per benchmark and scale: the human and LLM panels' ICC and their differences "
            "(delta = human - LLM).",
            tables.benchmarks[_T3],
        ),
        _section(
            "table4a",
            "Table 4a: human-LLM agreement per benchmark",
            "Human mean against the LLM ensemble mean, per benchmark and scale.",
            tables.benchmarks[_T4A],
            rule=BEST_RULES["benchmarks"],
        ),
        _section(
            "table4b",
            "Table 4b: human-LLM agreement per model",
            "Human mean against each model at the main temperature, per scale.",
            _ordered(tables.models[_T4B], "model"),
            rule=BEST_RULES["models"],
        ),
        _section(
            "table5",
            "Table 5: agreement by demographic group",
            "Each group's mean against the LLM ensemble, and the reliability within the group.",
            tables.groups,
            rule=BEST_RULES["groups"],
        ),
        _section(
            "table6",
            "Table 6: agreement per temperature",
            "Per model, scale and temperature: human-LLM ICC(A,1) and nMAE. A model's runs "
            "at different temperatures are never averaged together.",
            tables.temperatures,
        ),
        _section(
            "alttest",
            "Alternative annotator test against epsilon",
            "Winning rate and advantage probability of each model per scale for each "
            f"epsilon (study setting: epsilon {settings.get('epsilon', '?')}, scoring "
            f"{settings.get('scoring', '?')}, q {settings.get('q', '?')}). The LLM passes "
            "when the winning rate is at least 0.5.",
            tables.alttest,
            figures=[
                _figure(
                    "alttest",
                    alt_test_epsilon_figure(tables.alttest),
                    "Winning rate (dotted: the 0.5 needed to pass) and advantage probability "
                    "against epsilon, per model; one row per scale.",
                    "Alt-test winning rate and advantage probability against epsilon",
                )
            ],
        ),
        _section(
            "items",
            "Per-item disagreement: the worst items",
            f"nMAE between the human mean and the LLM ensemble mean per item; above "
            f"{threshold:g} the paper calls an item poorly aligned. The "
            f"{settings.get('worst_items', 10)} worst items of each scale.",
            tables.worst_items,
            figures=[
                _figure(
                    "items",
                    item_disagreement_figure(tables.items, threshold=threshold),
                    f"nMAE per item, worst first, one line per scale; dashed: {threshold:g}.",
                    "Per-item nMAE sorted from worst",
                )
            ],
        ),
        _section(
            "bootstrap",
            "Bootstrap intervals",
            "Intervals from resampling items: nMAE per scale, and the difference in human-LLM "
            "ICC between scales (an interval excluding 0 says one scale aligns better).",
            bootstrap_frame(tables),
            figures=[
                _figure(
                    "bootstrap",
                    bootstrap_figure(tables.bootstrap),
                    "Bootstrap estimates with their intervals.",
                    "Bootstrap intervals",
                )
            ],
        ),
    ]
    return sections


def report_figures(tables) -> list[Figure]:
    """The figures that belong to no single table: distributions, ICC intervals, Figure 2."""
    from .plots import icc_interval_figure, icc_nmae_figure, score_distribution_figure

    group_by = (tables.settings or {}).get("group_by")
    return [
        _figure(
            "distributions",
            score_distribution_figure(tables.distributions, group_by=group_by),
            "Score distributions per scale (as a share of the range): all human ratings, "
            f"each {group_by or 'demographic'} group, and the LLMs at the main temperature.",
            "Histograms of the scores on each scale",
        ),
        _figure(
            "icc",
            icc_interval_figure(
                tables.scales,
                columns=[
                    ("icc_a1_human", "human ICC(A,1)"),
                    ("icc_ak_human", "human ICC(A,k)"),
                    ("icc_a1_llm", "LLM ICC(A,1)"),
                    ("icc_human_llm", "human-LLM ICC(A,1)"),
                ],
            ),
            "ICC per scale with its 95% interval (Table 2).",
            "ICC with confidence intervals per scale",
        ),
        _figure(
            "figure2",
            icc_nmae_figure(tables.figure2),
            "The ICC-vs-nMAE diagnostic (the paper's Figure 2): per benchmark, each model "
            "and the ensemble on each scale; filled: ICC(A,1), hollow: Pearson r. A high r "
            "with a low ICC means an offset or a variance mismatch that nMAE alone hides.",
            "ICC and Pearson r against nMAE per benchmark",
        ),
    ]


def _settings(settings: Any) -> list[tuple[str, str]]:
    if settings is None:
        return []
    if dataclasses.is_dataclass(settings):
        settings = dataclasses.asdict(settings)
    if isinstance(settings, Mapping):
        return [(str(k).replace("_", " "), _plain(v)) for k, v in settings.items()]
    return [("settings", str(settings))]


def _plain(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(_plain(v) for v in value) or "none"
    if isinstance(value, float):
        return f"{value:g}"
    if value is None:
        return "not set"
    return str(value)


@cache
def _environment():
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    return Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_report(
    tables,
    *,
    title: str | None = None,
    study: str = "",
    generated_at: datetime | None = None,
) -> str:
    """Render the report of one study as a self-contained HTML page.

    Parameters
    ----------
    tables : annotator.analysis.tables.ReportTables
        The tables, notes and settings to lay out.
    title : str, optional
        The page's title; by default "Report: <study>".
    study : str
        The study's slug, shown in the header.
    generated_at : datetime, optional
        Shown in the header; by default now (UTC).
    """
    stamp = (generated_at or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    return (
        _environment()
        .get_template("report.html")
        .render(
            title=title or f"Report: {study}",
            study=study,
            generated_at=stamp,
            settings=_settings(tables.settings),
            notes=list(tables.notes or []),
            sections=report_sections(tables),
            figures=report_figures(tables),
        )
    )
