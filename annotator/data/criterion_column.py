"""The ``criterion`` column of the ratings and LLM-score imports.

A study without ``[[criteria]]`` has one unnamed criterion (""), and a study
with a single criterion needs no column either: an empty or missing cell
means that criterion. With several criteria every row names one. A name the
study does not have, or a criterion that does not apply to the row's item's
benchmark, is reported with the file, the line and the known criteria.
"""

from __future__ import annotations

from sqlmodel import Session, select

from ..models import Benchmark, Criterion, Item, Study
from ._bulk import _text
from .readers import Problems, Row

__all__ = ["CRITERION_COLUMN", "CriterionCells"]

CRITERION_COLUMN = "criterion"


class CriterionCells:
    """Reads a row's criterion, each distinct cell checked once."""

    def __init__(self, session: Session, study: Study) -> None:
        rows = session.exec(
            select(Criterion.name, Criterion.benchmarks)
            .where(Criterion.study_id == study.id)
            .order_by(Criterion.position)
        ).all()
        self.names = [name for name, _ in rows]
        # The criterion of an empty or missing cell; None: every row names one.
        self.default: str | None = self.names[0] if len(self.names) == 1 else None
        if not self.names:
            self.default = ""
        # Benchmark ids a restricted criterion applies to; an item's benchmark
        # is read only when some criterion is restricted.
        restricted = {name: set(benchmarks) for name, benchmarks in rows if benchmarks is not None}
        self._benchmark_of: dict[int, str] = {}
        if restricted:
            self._benchmark_of = dict(
                session.exec(
                    select(Item.id, Benchmark.name)
                    .join(Benchmark, Benchmark.id == Item.benchmark_id)
                    .where(Item.study_id == study.id)
                ).all()
            )
        self._restricted = restricted
        self._valid: dict[object, str] = {}

    @property
    def known(self) -> str:
        return ", ".join(self.names) if self.names else "none: the study has no [[criteria]]"

    def valid_text(self, raw: str | None) -> str | None:
        """The criterion of a text cell (None: no column) already found valid on an
        earlier row, when it applies to every benchmark; else None, and the row goes
        through :meth:`cell`."""
        name = self._valid.get(raw)
        if name is None or name in self._restricted:
            return None
        return name

    def cell(self, row: Row, problems: Problems, item: int | None) -> str | None:
        """The row's criterion name, or None after reporting its problem."""
        raw = row.values.get(CRITERION_COLUMN)
        cacheable = raw is None or isinstance(raw, str)
        name = self._valid.get(raw) if cacheable else None
        if name is None:
            text = _text(raw) if raw is not None else ""
            if not text:
                if self.default is None:
                    problems.add(
                        row.line,
                        CRITERION_COLUMN,
                        f"the criterion is empty; the study has several (known: {self.known})",
                    )
                    return None
                name = self.default
            elif text not in self.names:
                problems.add(
                    row.line,
                    CRITERION_COLUMN,
                    f"unknown criterion {text!r} (known: {self.known})",
                )
                return None
            else:
                name = text
            if cacheable:
                self._valid[raw] = name
        if item is not None and name in self._restricted:
            benchmark = self._benchmark_of.get(item)
            if benchmark not in self._restricted[name]:
                problems.add(
                    row.line,
                    CRITERION_COLUMN,
                    f"criterion {name!r} does not apply to benchmark {benchmark!r} "
                    f"(only to {', '.join(sorted(self._restricted[name]))})",
                )
                return None
        return name
