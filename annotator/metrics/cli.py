"""Command-line front ends: ``annotator alt-test``, ``icc``, ``alpha`` and ``plan``.

Plain click commands, registered on the application's command group by
:func:`register`; they import nothing from the web application.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ._names import CURVES, LEVELS, RUNS, SCORINGS, TESTS

if TYPE_CHECKING:
    from .alttest import AltTestResult
    from .matrix import RatingMatrix

# The statistics (numpy, pandas, scipy) are imported inside the commands: the module is
# imported to build ``annotator --help``, which must start fast.

__all__ = ["alpha_command", "alt_test_command", "icc_command", "register"]

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


def _is_export(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and set(data) == {"humans", "llm"}
        and isinstance(data["humans"], dict)
    )


def _models(llm: Any, default_name: str) -> dict[str, dict]:
    """``{item: score}`` (one model) or ``{model: {item: score}}`` -> ``{model: {item: score}}``."""
    if not isinstance(llm, dict) or not llm:
        raise click.ClickException("the LLM annotations must be a non-empty JSON object")
    nested = [isinstance(v, dict) for v in llm.values()]
    if all(nested):
        return llm
    if any(nested):
        raise click.ClickException(
            "the LLM annotations mix {item: score} and {model: {item: score}} entries"
        )
    return {default_name: llm}


def _fmt(value: float, spec: str) -> str:
    return "nan" if value is None or math.isnan(value) else format(value, spec)


def _print_alt_test(model: str, res: AltTestResult) -> None:
    threshold = "" if res.pass_threshold == 0.5 else f" (pass threshold {res.pass_threshold:g})"
    click.echo(f"Model {model}: {'PASSED' if res.passed else 'FAILED'}{threshold}")
    click.echo(f"  winning rate           {res.winning_rate:.2f}")
    click.echo(f"  advantage probability  {res.advantage_probability:.2f}")
    click.echo(f"  items kept             {res.n_items}")
    click.echo(f"  annotators tested      {res.n_tested} of {len(res.annotators)}")
    width = max([9] + [len(str(row.annotator)) for row in res.annotators])
    click.echo(
        f"  {'annotator':<{width}}  {'items':>5}  {'rho_f':>5}  {'rho_h':>5}  "
        f"{'e-value' if res.test == 'betting' else 'statistic':>9}  {'p-value':>9}  rejected"
    )
    for row in res.annotators:
        if not row.tested:
            click.echo(
                f"  {str(row.annotator):<{width}}  {row.n_items:>5}  skipped (too few items)"
            )
            continue
        click.echo(
            f"  {str(row.annotator):<{width}}  {row.n_items:>5}  {_fmt(row.rho_f, '5.2f')}  "
            f"{_fmt(row.rho_h, '5.2f')}  {_fmt(row.statistic, '9.3f')}  "
            f"{_fmt(row.p_value, '9.2e')}  "
            f"{('yes (secured)' if row.secured else 'yes') if row.rejected else 'no'}"
        )


@click.command("alt-test")
@click.option(
    "--humans",
    "humans_path",
    type=click.Path(exists=True, dir_okay=False),
    help="{annotator: {item: annotation}} JSON, or the alttest export {humans, llm}.",
)
@click.option(
    "--matrix",
    "matrix_path",
    type=click.Path(exists=True, dir_okay=False),
    help="The matrix export CSV instead of --humans/--llm (needed for --by benchmark).",
)
@click.option(
    "--llm",
    "llm_path",
    type=click.Path(exists=True, dir_okay=False),
    help="{item: score} or {model: {item: score}} JSON; optional with the alttest export.",
)
@click.option("--scoring", type=click.Choice(SCORINGS), default="neg_rmse", show_default=True)
@click.option("--epsilon", type=float, default=0.2, show_default=True, help="Cost-benefit margin.")
@click.option("--q", type=float, default=0.05, show_default=True, help="Target FDR (BY).")
@click.option(
    "--test",
    type=click.Choice(TESTS),
    default="ttest",
    show_default=True,
    help="The paper's t-test, or the test by betting (valid at every number of items).",
)
@click.option("--min-humans-per-item", type=int, default=2, show_default=True)
@click.option(
    "--min-items-per-human",
    type=int,
    default=None,
    help="Annotators with fewer kept items are not tested [default: 30; 1 with --sequential].",
)
@click.option(
    "--sequential",
    is_flag=True,
    help="Test by betting and say whether the verdict can still change as items arrive.",
)
@click.option("--ranks", is_flag=True, help="Test on ranks instead of raw scores.")
@click.option("--ipw", is_flag=True, help="Inverse probability weighting for imbalanced labels.")
@click.option("--expert", default=None, help="Annotator used as the single expert reference.")
@click.option(
    "--weights",
    "weights_path",
    type=click.Path(exists=True, dir_okay=False),
    help="{annotator: quality weight} JSON.",
)
@click.option("--model", "models", multiple=True, help="Test only this model (repeatable).")
@click.option(
    "--pass-threshold",
    type=float,
    default=0.5,
    show_default=True,
    help="Winning rate needed to pass (the paper's footnote 5 allows stricter).",
)
@click.option(
    "--by",
    type=click.Choice(["benchmark"]),
    default=None,
    help="Test each benchmark, one BY correction over all (needs --matrix).",
)
@click.option(
    "--curve",
    type=click.Choice(CURVES),
    default=None,
    help="Winning rate and advantage probability against items or epsilon (resampled).",
)
@click.option("--values", "curve_values", default=None, help="Curve x values, e.g. 30,60,90.")
@click.option("--resamples", type=int, default=100, show_default=True, help="Curve resamples.")
@click.option("--annotators", type=int, default=3, show_default=True, help="Curve annotators.")
@click.option("--items", "curve_items", type=int, default=None, help="Epsilon curve: items.")
@click.option("--interval", type=float, default=0.9, show_default=True, help="Curve interval.")
@click.option("--seed", type=int, default=0, show_default=True, help="Curve random seed.")
@_runs_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
def alt_test_command(
    humans_path: str | None,
    matrix_path: str | None,
    llm_path: str | None,
    scoring: str,
    epsilon: float,
    q: float,
    test: str,
    min_humans_per_item: int,
    min_items_per_human: int | None,
    sequential: bool,
    ranks: bool,
    ipw: bool,
    expert: str | None,
    weights_path: str | None,
    models: tuple[str, ...],
    pass_threshold: float,
    by: str | None,
    curve: str | None,
    curve_values: str | None,
    resamples: int,
    annotators: int,
    curve_items: int | None,
    interval: float,
    seed: int,
    runs: str,
    as_json: bool,
) -> None:
    """Run the alt-test: may an LLM judge replace the human annotators?

    Prints, per model, PASSED or FAILED (winning rate >= 0.5), the winning rate, the
    average advantage probability and one row per annotator. With --sequential, the
    test by betting and a verdict that more items cannot reverse, or "not decided yet".
    With --by benchmark, the verdict per benchmark of the --matrix export; with --curve,
    the winning rate and advantage probability against the number of items or epsilon.
    """
    from .alttest import alt_test, alt_test_sequential
    from .alttest_cli import (
        matrix_inputs,
        model_errors,
        parse_values,
        run_by_benchmark,
        run_curves,
    )

    if sequential and (ranks or ipw or test != "ttest"):
        raise click.UsageError("--sequential chooses the test itself; drop --test, --ranks, --ipw")
    if sequential and (by or curve or pass_threshold != 0.5):
        raise click.UsageError("--sequential takes neither --by, --curve nor --pass-threshold")
    if by and curve:
        raise click.UsageError("use --by or --curve, not both")
    if min_items_per_human is None:
        min_items_per_human = 1 if sequential else 30
    if (humans_path is None) == (matrix_path is None):
        raise click.UsageError("give either --humans (JSON) or --matrix (the matrix export CSV)")
    if by and matrix_path is None:
        raise click.UsageError(
            "--by benchmark needs the benchmarks of the items: pass the matrix export "
            "(annotator export STUDY --format matrix) with --matrix"
        )

    benchmarks = None
    if matrix_path is not None:
        if llm_path is not None:
            raise click.UsageError("--matrix holds the LLM scores; drop --llm")
        humans, llm, benchmarks = matrix_inputs(matrix_path)
    else:
        data = _load_json(humans_path, "--humans")
        if _is_export(data):
            humans, llm = data["humans"], data["llm"]
        else:
            humans, llm = data, None
        if llm_path is not None:
            llm = _load_json(llm_path, "--llm")
        if llm is None:
            raise click.UsageError("--llm is required unless --humans is the alttest export")
    by_model = _models(llm, Path(llm_path).stem if llm_path else "llm")
    from .runs import aggregate_run_dicts

    by_model = aggregate_run_dicts(by_model, how=runs)
    if models:
        unknown = [name for name in models if name not in by_model]
        if unknown:
            raise click.UsageError(f"unknown model(s): {', '.join(unknown)}")
        by_model = {name: by_model[name] for name in models}
    weights = _load_json(weights_path, "--weights") if weights_path else None
    variants = {"test": test, "inverse_probability_weighting": ipw, "ranks": ranks}
    common = {
        "scoring": scoring,
        "q": q,
        "min_humans_per_item": min_humans_per_item,
        "min_items_per_human": min_items_per_human,
        "annotator_weights": weights,
        "expert": expert,
        "pass_threshold": pass_threshold,
        **variants,
    }
    if by:
        run_by_benchmark(humans, by_model, benchmarks, {"epsilon": epsilon, **common}, as_json)
        return
    if curve:
        curve_options = {
            "against": curve,
            "values": parse_values(curve_values),
            "n_resamples": resamples,
            "n_annotators": annotators,
            "n_items": curve_items,
            "epsilon": epsilon,
            "interval": interval,
            "random_state": seed,
            **common,
        }
        run_curves(humans, by_model, curve_options, as_json)
        return

    # The options both tests take; the t-test's variants only apply without --sequential.
    shared = {
        "humans": humans,
        "scoring": scoring,
        "epsilon": epsilon,
        "q": q,
        "min_humans_per_item": min_humans_per_item,
        "min_items_per_human": min_items_per_human,
        "annotator_weights": weights,
        "expert": expert,
    }
    results = {}
    for name, predictions in by_model.items():
        with model_errors(name):
            if sequential:
                results[name] = alt_test_sequential(llm=predictions, **shared)
            else:
                results[name] = alt_test(
                    llm=predictions, pass_threshold=pass_threshold, **variants, **shared
                )
    if as_json:
        click.echo(json.dumps({name: res.to_dict() for name, res in results.items()}, indent=2))
        return
    for i, (name, res) in enumerate(results.items()):
        if i:
            click.echo()
        if sequential:
            _print_alt_test(name, res.result)
            click.echo(f"  sequential verdict: {res.message}")
        else:
            _print_alt_test(name, res)


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


@click.command("icc")
@_matrix_argument
@_raters_option
@_benchmark_option
@_runs_option
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
    from .icc import icc

    frame = _select(_read(matrix), raters, benchmark, runs)
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
            f"{label}  {_fmt(value, '.4f')}  {pct} CI [{_fmt(ci[0], '.4f')}, {_fmt(ci[1], '.4f')}]"
        )
    click.echo(
        f"MS items {res.ms_items:.6g}  MS raters {res.ms_raters:.6g}  MS error {res.ms_error:.6g}"
    )


@click.command("alpha")
@_matrix_argument
@click.option("--level", type=click.Choice(LEVELS), default="interval", show_default=True)
@_raters_option
@_benchmark_option
@_runs_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def alpha_command(
    matrix: str, level: str, raters: str, benchmark: str | None, runs: str, as_json: bool
) -> None:
    """Krippendorff's alpha of the matrix export MATRIX (a CSV); empty cells are missing."""
    from .alpha import krippendorff_alpha

    frame = _select(_read(matrix), raters, benchmark, runs)
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
    click.echo(f"Krippendorff's alpha ({level}): {_fmt(value, '.4f')}")
    click.echo(f"items {frame.shape[0]}, raters {frame.shape[1]}")


def register(group: click.Group) -> None:
    """Add ``alt-test``, ``icc``, ``alpha`` and ``plan`` to a click group (the app's CLI)."""
    from .plan_cli import plan_command

    group.add_command(alt_test_command)
    group.add_command(icc_command)
    group.add_command(alpha_command)
    group.add_command(plan_command)
