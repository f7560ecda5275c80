"""What the command groups share: failing with a message, finding a study, and the
options and file reading of the statistics commands (``icc``, ``alpha``, ``alt-test``,
``plan``).

Like the rest of the command line it imports only click at the top: numpy, pandas
and the statistics load inside the functions (``annotator --help`` must start fast).
"""

from __future__ import annotations

import json
import math
import sys
from typing import TYPE_CHECKING, Any

import click

from ..metrics._names import RUNS

if TYPE_CHECKING:
    from ..metrics.matrix import RatingMatrix
    from ..models import Study


def fail(message: str) -> None:
    raise click.ClickException(message)


def progress() -> bool:
    return sys.stderr.isatty()


def study_or_fail(session, slug: str) -> Study:
    from sqlmodel import select

    from ..models import Study
    from ..study.studies import get_study

    study = get_study(session, slug)
    if study is None:
        known = ", ".join(session.exec(select(Study.slug)).all()) or "none yet"
        fail(f"no study with slug {slug!r} (studies: {known})")
    return study


def base_url_or_default(base_url: str | None) -> str:
    from ..study.studies import link_base_url

    return base_url or link_base_url()


where_option = click.option(
    "--where",
    multiple=True,
    metavar="KEY=VALUE",
    help="Only raters whose demographic answer KEY is VALUE (repeatable: AND across keys, "
    "either value for a key given twice).",
)

# One --runs for every command that reads a model's runs: the exports (matrix,
# alttest), the report, and the statistics commands reading a matrix export.
runs_option = click.option(
    "--runs",
    type=click.Choice(RUNS),
    default=RUNS[0],
    show_default=True,
    help="How a model's runs at one temperature (MODEL#RUN columns of an export made "
    "with --runs each) are combined into one per model; 'each' keeps every run.",
)


def _judge_temperatures(ctx, param, values: tuple[str, ...]):
    from ..data.temperatures import parse_judge_temperatures

    try:
        return parse_judge_temperatures(values)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc


# One option for every command that analyses or exports LLM scores: the one rule of
# annotator.data.temperatures, with the lead's choice for single judges.
judge_temperature_option = click.option(
    "--judge-temperature",
    "judge_temperatures",
    multiple=True,
    metavar="JUDGE=TEMPERATURE",
    callback=_judge_temperatures,
    help="Analyse JUDGE's scores at TEMPERATURE (repeatable; default: the study's "
    "[validation.temperatures], else [validation] temperature, else each judge's most "
    "common temperature).",
)

RATERS = ("humans", "llm", "all")

matrix_argument = click.argument("matrix", type=click.Path(exists=True, dir_okay=False))
raters_option = click.option(
    "--raters",
    type=click.Choice(RATERS),
    default="humans",
    show_default=True,
    help="Columns to use: human raters, llm:MODEL columns, or both.",
)
benchmark_option = click.option("--benchmark", default=None, help="Only items of this benchmark.")


def load_json(path: str, what: str) -> Any:
    """The JSON file at ``path``; ``what`` names it (an option) in the error."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except json.JSONDecodeError as exc:
        raise click.ClickException(f"{what} {path}: not valid JSON ({exc})") from exc
    except OSError as exc:
        raise click.ClickException(f"{what} {path}: {exc.strerror}") from exc


def format_number(value: float | None, spec: str) -> str:
    """``value`` formatted by ``spec``; ``nan`` for a missing or undefined number."""
    return "nan" if value is None or math.isnan(value) else format(value, spec)


def read_matrix_or_fail(path: str) -> RatingMatrix:
    """The matrix export CSV at ``path``, or a command-line error naming the file."""
    from ..metrics.matrix import read_matrix

    try:
        return read_matrix(path)
    except (ValueError, OSError) as exc:
        raise click.ClickException(f"{path}: {exc}") from exc


def select_columns(matrix: RatingMatrix, raters: str, benchmark: str | None, runs: str = "mean"):
    """The rating columns of ``matrix`` that ``--raters``, ``--benchmark`` and ``--runs``
    choose, as a data frame (items x raters)."""
    from dataclasses import replace

    from ..metrics.runs import aggregate_run_columns

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
