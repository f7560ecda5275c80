"""``annotator icc`` and ``annotator alpha``: the reliability of a matrix export."""

from __future__ import annotations

import json
import math

import click

from ..metrics._names import LEVELS
from ._common import (
    benchmark_option,
    format_number,
    matrix_argument,
    raters_option,
    read_matrix_or_fail,
    runs_option,
    select_columns,
)

__all__ = ["alpha_command", "icc_command"]


@click.command("icc")
@matrix_argument
@raters_option
@benchmark_option
@runs_option
@click.option("--confidence", type=float, default=0.95, show_default=True)
@click.option(
    "--nan-policy",
    type=click.Choice(["omit", "raise"]),
    default="omit",
    show_default=True,
    help="Drop items with a missing rating, or fail.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def icc_command(
    matrix: str,
    raters: str,
    benchmark: str | None,
    runs: str,
    confidence: float,
    nan_policy: str,
    as_json: bool,
) -> None:
    """ICC(A,1), ICC(A,k), ICC(C,1), ICC(C,k) of the matrix export MATRIX (a CSV)."""
    from ..metrics._icc import icc

    frame = select_columns(read_matrix_or_fail(matrix), raters, benchmark, runs)
    try:
        res = icc(frame, confidence=confidence, nan_policy=nan_policy)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        click.echo(json.dumps(res.to_dict(), indent=2))
        return
    pct = f"{100 * res.confidence:g}%"
    click.echo(f"items {res.n} (omitted {res.n_omitted}), raters {res.k}")
    for label, value, ci in (
        ("ICC(A,1)", res.icc_a1, res.ci_a1),
        ("ICC(A,k)", res.icc_ak, res.ci_ak),
        ("ICC(C,1)", res.icc_c1, res.ci_c1),
        ("ICC(C,k)", res.icc_ck, res.ci_ck),
    ):
        click.echo(
            f"{label}  {format_number(value, '.4f')}  {pct} CI [{format_number(ci[0], '.4f')}, {format_number(ci[1], '.4f')}]"
        )
    click.echo(
        f"MS items {res.ms_items:.6g}  MS raters {res.ms_raters:.6g}  MS error {res.ms_error:.6g}"
    )


@click.command("alpha")
@matrix_argument
@click.option("--level", type=click.Choice(LEVELS), default="interval", show_default=True)
@raters_option
@benchmark_option
@runs_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def alpha_command(
    matrix: str, level: str, raters: str, benchmark: str | None, runs: str, as_json: bool
) -> None:
    """Krippendorff's alpha of the matrix export MATRIX (a CSV); empty cells are missing."""
    from ..metrics.alpha import krippendorff_alpha

    frame = select_columns(read_matrix_or_fail(matrix), raters, benchmark, runs)
    try:
        value = krippendorff_alpha(frame, level=level)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        payload = {
            "alpha": None if math.isnan(value) else value,
            "level": level,
            "items": int(frame.shape[0]),
            "raters": int(frame.shape[1]),
        }
        click.echo(json.dumps(payload, indent=2))
        return
    click.echo(f"Krippendorff's alpha ({level}): {format_number(value, '.4f')}")
    click.echo(f"items {frame.shape[0]}, raters {frame.shape[1]}")
