"""What an export is about: its scale(s) and benchmark, resolved once, and the
queries every export shares."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
from sqlmodel import Session, select

from ..models import Benchmark, Item, Scale, Study
from ..study.criteria import study_criteria
from ..study.studies import study_benchmarks, study_scales
from .sql import fetch_rows

__all__ = ["ExportError", "ExportScope", "export_scope", "export_criterion"]


class ExportError(ValueError):
    """An export that cannot be made as asked.

    The message names no command-line option or form field: ``field`` says
    which choice is missing or wrong (``scale``, ``benchmark`` or ``format``)
    and ``choices`` what it may be, and each face adds its own words (the CLI
    its ``--scale`` option, the study page its Scale list).
    """

    def __init__(self, message: str, *, field: str, choices: Sequence[str]) -> None:
        super().__init__(message)
        self.field = field
        self.choices = list(choices)


@dataclass(frozen=True)
class ExportScope:
    """The scales and the benchmark an export covers, looked up once."""

    scales: list[Scale]
    # None: every benchmark.
    benchmark: Benchmark | None
    # Every benchmark of the study by id, for naming items.
    benchmark_names: dict[int, str]

    @property
    def scale(self) -> Scale:
        """The one scale of a one-scale export."""
        return self.scales[0]


def export_scope(
    session: Session,
    study: Study,
    *,
    scale: str | None,
    benchmark: str | None,
    one_scale: bool,
) -> ExportScope:
    """Resolve the names of a scale and a benchmark, or raise :class:`ExportError`.

    With ``one_scale`` an export needs exactly one scale: the named one, or the
    study's only scale.
    """
    scales = study_scales(session, study)
    names = [s.name for s in scales]
    if scale is not None:
        scales = [s for s in scales if s.name == scale]
        if not scales:
            raise ExportError(f"unknown scale {scale!r}", field="scale", choices=names)
    elif one_scale and len(scales) != 1:
        raise ExportError("this export is for one scale", field="scale", choices=names)
    benchmarks = study_benchmarks(session, study)
    bench = None
    if benchmark is not None:
        bench = next((b for b in benchmarks if b.name == benchmark), None)
        if bench is None:
            raise ExportError(
                f"unknown benchmark {benchmark!r}",
                field="benchmark",
                choices=[b.name for b in benchmarks],
            )
    return ExportScope(scales, bench, {b.id: b.name for b in benchmarks})


def export_criterion(
    session: Session, study: Study, criterion: str | None
) -> tuple[str, list[str] | None]:
    """The criterion of a one-criterion export and the benchmarks it applies to
    (None: all), or :class:`ExportError`.

    A study without criteria has only its unnamed one (""); a rubric study's
    export names one criterion unless the study has just one.
    """
    criteria = study_criteria(session, study)
    names = [c.name for c in criteria]
    if not criteria:
        if criterion:
            raise ExportError(
                f"unknown criterion {criterion!r}: the study has no [[criteria]]",
                field="criterion",
                choices=[],
            )
        return "", None
    if criterion is None or criterion == "":
        if len(criteria) != 1:
            raise ExportError("this export is for one criterion", field="criterion", choices=names)
        return criteria[0].name, criteria[0].benchmarks
    found = next((c for c in criteria if c.name == criterion), None)
    if found is None:
        raise ExportError(f"unknown criterion {criterion!r}", field="criterion", choices=names)
    return found.name, found.benchmarks


def query_frame(session: Session, query, columns: list[str]) -> pd.DataFrame:
    """A DataFrame from a query of plain columns (see :func:`~annotator.data.sql.fetch_rows`)."""
    rows = fetch_rows(session, query)
    if not rows:
        return pd.DataFrame({name: [] for name in columns})
    return pd.DataFrame(rows, columns=columns)


def items_frame(session: Session, study: Study, benchmark: Benchmark | None) -> pd.DataFrame:
    """The items the metrics are about: attention checks (items with a gold
    score) are left out, as they are only shown to check the raters."""
    query = (
        select(Item.id, Item.external_id, Benchmark.name)
        .join(Benchmark, Benchmark.id == Item.benchmark_id)
        .where(Item.study_id == study.id, Item.gold_score.is_(None))
        .order_by(Item.id)
    )
    if benchmark is not None:
        query = query.where(Item.benchmark_id == benchmark.id)
    return query_frame(session, query, ["item_pk", "item_id", "benchmark"])
