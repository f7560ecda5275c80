"""Writing :class:`~annotator.analysis.tables.ReportTables` as CSV and LaTeX files,
and the paper's best-value marks shared by the LaTeX and HTML renderings.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..analysis.columns import CSV_FILES
from ..analysis.model import ReportTables

__all__ = ["BEST_RULES", "BestRule", "mark_best", "write_csv_tables", "write_latex_tables"]


def mark_best(
    frame: pd.DataFrame,
    *,
    higher: list[str] = (),
    lower: list[str] = (),
    within: str | None = None,
) -> pd.DataFrame:
    """Booleans marking the best value of each column (ties all marked), as the paper bolds.

    Parameters
    ----------
    frame : pandas.DataFrame
        A table.
    higher, lower : list of str, keyword-only
        Columns where the highest (ICC) or the lowest (nMAE) value is best.
    within : str, optional, keyword-only
        Compare within groups of this column (e.g. ``"benchmark"``: the best scale of
        each benchmark); otherwise over the whole column.

    Returns
    -------
    pandas.DataFrame
        Same index as ``frame``, one boolean column per column of ``higher`` and
        ``lower``; NaN cells are never best.
    """
    out = pd.DataFrame(index=frame.index)
    keys = frame[within] if within else pd.Series(0, index=frame.index)
    for column, best in [*((c, "max") for c in higher), *((c, "min") for c in lower)]:
        values = pd.to_numeric(frame[column], errors="coerce")
        target = values.groupby(keys).transform(best)
        out[column] = np.isclose(values, target, rtol=0, atol=1e-12) & values.notna()
    return out


def write_csv_tables(
    tables: ReportTables, directory: str | Path, *, rubric: Any = None
) -> list[Path]:
    """Write each table as ``DIR/<name>.csv`` (see ``CSV_FILES``) plus ``notes.txt``.

    Floats are written with Python's shortest round-trip repr; NaN as an empty cell.
    ``rubric`` (a study with ``[[criteria]]``): also its tables across criteria, as
    ``criteria_summary.csv``, ``criteria_alttest.csv`` and ``criteria_correlations.csv``.
    Returns the paths written.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for stem, attr in CSV_FILES.items():
        path = directory / f"{stem}.csv"
        getattr(tables, attr).to_csv(path, index=False, lineterminator="\n")
        written.append(path)
    for attr in ("summary", "alttest", "correlations") if rubric is not None else ():
        path = directory / f"criteria_{attr}.csv"
        getattr(rubric, attr).to_csv(path, index=False, lineterminator="\n")
        written.append(path)
    notes = directory / "notes.txt"
    notes.write_text("".join(f"{line}\n" for line in tables.notes), encoding="utf-8")
    written.append(notes)
    return written


@dataclass(frozen=True)
class BestRule:
    """Which cells of a table the paper bolds: the highest of ``higher`` (ICCs), the
    lowest of ``lower`` (nMAE), compared within each value of ``within`` (or the
    whole column when None)."""

    higher: tuple[str, ...]
    lower: tuple[str, ...] = ("nmae",)
    within: str | None = None

    def mark(self, frame: pd.DataFrame) -> pd.DataFrame:
        """:func:`mark_best` of ``frame`` under this rule.

        A rubric study's table with every criterion's rows (a ``criterion`` column) is
        marked criterion by criterion, as each criterion's own table is.
        """
        options = {"higher": list(self.higher), "lower": list(self.lower), "within": self.within}
        if "criterion" not in frame.columns or frame.empty:
            return mark_best(frame, **options)
        parts = [mark_best(rows, **options) for _, rows in frame.groupby("criterion", sort=False)]
        return pd.concat(parts).reindex(frame.index)


# The best-value rule of each table (by its CSV name), shared by the LaTeX tables
# and the HTML report so that both bold the same cells.
BEST_RULES = {
    "scales": BestRule(
        ("icc_a1_human", "icc_ak_human", "icc_a1_llm", "icc_ak_llm", "icc_human_llm")
    ),
    "benchmarks": BestRule(("icc_human_llm",), within="benchmark"),
    "models": BestRule(("icc_human_llm",), within="model"),
    "groups": BestRule(("icc_group_llm", "icc_a1_within", "icc_ak_within"), within="group"),
}


def write_latex_tables(tables: ReportTables, directory: str | Path) -> list[Path]:
    """Write each table as ``DIR/<name>.tex`` (pandas ``Styler.to_latex``, booktabs).

    Numbers have 3 decimals; in the scale, benchmark, model and group tables the best
    value of each column (within each benchmark, model or group) is bold, as in the
    paper. Returns the paths written.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for stem, attr in CSV_FILES.items():
        frame = getattr(tables, attr).reset_index(drop=True)
        styler = frame.style.format(precision=3, na_rep="").hide(axis="index")
        if stem in BEST_RULES:
            best = BEST_RULES[stem].mark(frame)
            styler = styler.apply(
                lambda column, best=best: (
                    ["font-weight: bold" if flag else "" for flag in best[column.name]]
                    if column.name in best.columns
                    else [""] * len(column)
                ),
                axis=0,
            )
        path = directory / f"{stem}.tex"
        path.write_text(styler.to_latex(hrules=True, convert_css=True), encoding="utf-8")
        written.append(path)
    return written
