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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Cell", "FrameView", "Section", "frame_view", "render_report", "report_sections"]

TEMPLATES = Path(__file__).with_name("templates")
# How many of the worst-aligned items the report lists under the per-item table.
WORST_ITEMS = 10


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


def _direction(column: str) -> str | None:
    """Which way a column is better, by its name: ICC and alpha up, nMAE down."""
    name = column.lower()
    if "nmae" in name or "mae" in name:
        return "min"
    if name.startswith("icc") or "_icc" in name or "alpha" in name:
        if any(part in name for part in ("ci_low", "ci_high", "low", "high", "diff", "delta")):
            return None
        return "max"
    return None


def _best_rows(frame: pd.DataFrame, column: str, direction: str) -> set[int]:
    """Row positions holding the best value of a column (ties all marked).

    Picking the extreme of a printed column is presentation (the paper's bold), not a
    statistic: the values themselves come from the tables.
    """
    values = frame[column].to_numpy(dtype=float, na_value=float("nan"))
    finite = [v for v in values if not math.isnan(v)]
    if len(finite) < 2:
        return set()
    target = max(finite) if direction == "max" else min(finite)
    return {i for i, v in enumerate(values) if v == target}


def frame_view(frame: pd.DataFrame, *, best: bool = False) -> FrameView:
    """A DataFrame as rows of formatted cells (index reset into columns when it is named).

    With ``best``, the best value of each ICC/alpha (highest) and nMAE (lowest) column
    is marked, as the paper's bold.
    """
    if frame.index.names != [None]:
        frame = frame.reset_index()
    columns = [str(c) for c in frame.columns]
    marked: dict[str, set[int]] = {}
    if best:
        for column in frame.columns:
            direction = _direction(str(column))
            if direction is not None and frame[column].dtype.kind in "fi":
                marked[str(column)] = _best_rows(frame, column, direction)
    rows = []
    for position, record in enumerate(frame.itertuples(index=False, name=None)):
        rows.append(
            [
                _cell(value, best=position in marked.get(column, ()))
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


def _distribution_figure(frames) -> Figure | None:
    """Score histograms per scale: humans, each demographic group, and the LLMs."""
    from .plots import score_distribution_figure

    if frames is None or (frames.ratings.empty and frames.llm.empty):
        return None
    ratings = frames.ratings
    if "is_attention_check" in ratings:
        ratings = ratings[~ratings["is_attention_check"].astype(bool)]
    group_key = _group_key(frames)
    groups = {}
    if group_key is not None and not frames.demographics.empty:
        groups = frames.demographics.set_index("rater")[group_key].dropna().to_dict()
    values: dict[str, dict[str, list[float]]] = {}
    ranges = {}
    for scale in frames.scale_names:
        ranges[scale] = frames.scale_bounds(scale)
        mine = ratings[ratings["scale"] == scale]
        series = {"humans": mine["value"].tolist()}
        for group in sorted(set(groups.values()), key=str):
            raters = [r for r, g in groups.items() if g == group]
            series[f"{group_key}: {group}"] = mine[mine["rater"].isin(raters)]["value"].tolist()
        llm = frames.llm[frames.llm["scale"] == scale]
        series["LLMs"] = llm["value"].tolist()
        values[scale] = series
    fig = score_distribution_figure(values, ranges=ranges)
    return _figure(
        "distributions",
        fig,
        "Score distributions per scale: all human ratings, each "
        f"{group_key or 'demographic'} group, and all LLM scores (attention checks left out).",
        "Histograms of the scores on each scale",
    )


def _group_key(frames) -> str | None:
    keys = list(getattr(frames, "demographic_keys", []) or [])
    if "gender" in keys:
        return "gender"
    return keys[0] if keys else None


# ------------------------------------------------------------------------ sections

# (attribute of ReportTables, anchor, heading, caption, mark the best values)
SECTIONS: tuple[tuple[str, str, str, str, bool], ...] = (
    (
        "table1",
        "table1",
        "Table 1: LLM inter-scale agreement",
        "Per benchmark and model: scores mapped to [0, 1], absolute-agreement ICC across the "
        "scales jointly and pairwise; the average over models.",
        False,
    ),
    (
        "table2",
        "table2",
        "Table 2: reliability and agreement per scale",
        "Human and LLM panel ICC(A,1) and ICC(A,k), human-LLM ICC(A,1) and nMAE, per scale.",
        True,
    ),
    (
        "table3",
        "table3",
        "Table 3: panel reliability per benchmark",
        "Per benchmark and scale: human and LLM panel ICC and their difference.",
        False,
    ),
    (
        "table4_benchmarks",
        "table4a",
        "Table 4a: human-LLM agreement per benchmark",
        "Human-LLM ICC(A,1) and nMAE per benchmark and scale (LLM ensemble).",
        False,
    ),
    (
        "table4_models",
        "table4b",
        "Table 4b: human-LLM agreement per model",
        "Human-LLM ICC(A,1) and nMAE per model and scale.",
        False,
    ),
    (
        "table5",
        "table5",
        "Table 5: agreement by demographic group",
        "Each group's agreement with the LLMs and within the group.",
        False,
    ),
    (
        "table6",
        "table6",
        "Table 6: agreement per temperature",
        "Per model, scale and temperature: human-LLM ICC (runs at different temperatures are "
        "never averaged together).",
        False,
    ),
    (
        "alttest",
        "alttest",
        "Alternative annotator test against epsilon",
        "Winning rate and advantage probability per model and scale for epsilon from 0 to 0.3.",
        False,
    ),
    (
        "items",
        "items",
        "Per-item disagreement",
        "nMAE between the human mean and the LLM ensemble mean per item; above 0.1 the paper "
        "calls an item poorly aligned.",
        False,
    ),
    (
        "bootstrap",
        "bootstrap",
        "Bootstrap intervals",
        "95% intervals from resampling items: nMAE per scale, and the difference in "
        "human-LLM ICC between scales.",
        False,
    ),
)


def report_sections(tables) -> list[Section]:
    """The report's table sections with their figures, in the paper's order."""
    sections = []
    for attribute, key, heading, caption, best in SECTIONS:
        frame = getattr(tables, attribute, None)
        if frame is None:
            continue
        sections.append(
            Section(
                key=key,
                heading=heading,
                caption=caption,
                frame=frame_view(frame, best=best),
                best=best,
                text_columns=_text_columns(frame),
            )
        )
    return sections


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
    frames=None,
    title: str | None = None,
    generated_at: datetime | None = None,
    extra_figures: Iterable[Figure] = (),
) -> str:
    """Render the report of one study as a self-contained HTML page.

    Parameters
    ----------
    tables : annotator.analysis.tables.ReportTables
        The tables, notes and settings to lay out.
    frames : annotator.data.frames.StudyFrames, optional
        The study's data, for the score-distribution figure.
    title : str, optional
        The page's title; by default "Report: <study>".
    generated_at : datetime, optional
        Shown in the header; by default now (UTC).
    """
    study = getattr(frames, "study", None) or getattr(tables, "study", "") or ""
    sections = report_sections(tables)
    figures = list(extra_figures)
    distribution = _distribution_figure(frames)
    if distribution is not None:
        figures.insert(0, distribution)
    stamp = (generated_at or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    notes: Sequence[str] = list(getattr(tables, "notes", []) or [])
    return (
        _environment()
        .get_template("report.html")
        .render(
            title=title or f"Report: {study}",
            study=study,
            generated_at=stamp,
            settings=_settings(getattr(tables, "settings", None)),
            notes=notes,
            sections=sections,
            figures=figures,
        )
    )
