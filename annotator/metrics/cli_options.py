"""What the statistics commands share: the --runs, --raters and --benchmark
options, reading a matrix export or a JSON file, and numbers as they print.

Used by :mod:`annotator.metrics.alttest_cli`, :mod:`annotator.metrics.reliability_cli`
and :mod:`annotator.metrics.plan_cli`; like them it imports the statistics only
inside the functions (``annotator --help`` must start fast).
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

import click

from ._names import RUNS

if TYPE_CHECKING:
    from .matrix import RatingMatrix

_RATERS = ("humans", "llm", "all")

_runs_option = click.option(
    "--runs",
    type=click.Choice(RUNS),
    default=RUNS[0],
    show_default=True,
    help="How MODEL#RUN columns (an export made with --runs each) are combined into one per "
    "model; 'each' keeps every run. Columns without '#' are used as they are.",
)


def _load_json(path: str, what: str) -> Any:
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except json.JSONDecodeError as exc:
        raise click.ClickException(f"{what} {path}: not valid JSON ({exc})") from exc
    except OSError as exc:
        raise click.ClickException(f"{what} {path}: {exc.strerror}") from exc


def _fmt(value: float, spec: str) -> str:
    return "nan" if value is None or math.isnan(value) else format(value, spec)


def _select(matrix: RatingMatrix, raters: str, benchmark: str | None, runs: str = "mean"):
    from dataclasses import replace

    from .runs import aggregate_run_columns

    if benchmark is not None:
        try:
            matrix = matrix.subset(benchmark)
        except ValueError as exc:
            raise click.ClickException(str(exc)) from exc
    matrix = replace(matrix, llm=aggregate_run_columns(matrix.llm, how=runs))
    if raters == "humans":
        frame = matrix.humans
    elif raters == "llm":
        frame = matrix.llm
    else:
        frame = matrix.ratings(include_llm=True)
    if frame.shape[1] == 0:
        raise click.ClickException(f"the matrix has no {raters} rating columns")
    return frame


def _read(path: str) -> RatingMatrix:
    from .matrix import read_matrix

    try:
        return read_matrix(path)
    except (ValueError, OSError) as exc:
        raise click.ClickException(f"{path}: {exc}") from exc


_matrix_argument = click.argument("matrix", type=click.Path(exists=True, dir_okay=False))
_raters_option = click.option(
    "--raters",
    type=click.Choice(_RATERS),
    default="humans",
    show_default=True,
    help="Columns to use: human raters, llm:MODEL columns, or both.",
)
_benchmark_option = click.option("--benchmark", default=None, help="Only items of this benchmark.")
