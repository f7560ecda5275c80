"""``annotator alt-test``: one test per model, and beyond it the matrix input, the
verdict across benchmarks (``--by benchmark``) and the curves (``--curve``).

numpy and the statistics load inside the functions, as in the rest of the command
line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..metrics._names import CURVES, SCORINGS, TESTS
from ..words import noun, plural
from ._common import format_number, load_json, read_matrix_or_fail, runs_option

if TYPE_CHECKING:
    from ..metrics.alttest import AltTestResult

__all__ = ["alt_test_command", "matrix_inputs", "parse_values", "run_by_benchmark", "run_curves"]


@contextmanager
def model_errors(model: str) -> Iterator[None]:
    """The alt-test's refusals as command-line errors that name the model."""
    from ..metrics.alttest import TooFewItemsError

    try:
        yield
    except TooFewItemsError as exc:
        message = exc.describe(option="--min-items-per-human")
        raise click.ClickException(f"model {model}: {message}") from exc
    except ValueError as exc:
        raise click.ClickException(f"model {model}: {exc}") from exc


def _rater_dicts(frame) -> dict[str, dict[str, float]]:
    return {
        str(rater): {str(item): float(v) for item, v in frame[rater].dropna().items()}
        for rater in frame.columns
    }


def matrix_inputs(path: str) -> tuple[dict, dict, dict]:
    """``(humans, {model: {item: score}}, {item: benchmark})`` of a matrix export CSV."""

    matrix = read_matrix_or_fail(path)
    if matrix.humans.shape[1] < 2:
        raise click.ClickException(f"{path}: the matrix has fewer than 2 human rater columns")
    if matrix.llm.shape[1] == 0:
        raise click.ClickException(f"{path}: the matrix has no llm:MODEL column")
    benchmarks = {str(item): str(b) for item, b in matrix.benchmark.items()}
    return _rater_dicts(matrix.humans), _rater_dicts(matrix.llm), benchmarks


def parse_values(text: str | None) -> list[float] | None:
    """``"30,60,90"`` -> ``[30.0, 60.0, 90.0]``; None stays None."""
    if text is None:
        return None
    try:
        return [float(part) for part in text.split(",") if part.strip()]
    except ValueError as exc:
        raise click.BadParameter(f"{text!r} is not a comma-separated list of numbers") from exc


def run_by_benchmark(
    humans: dict, by_model: dict, benchmarks: dict, options: dict[str, Any], as_json: bool
) -> None:
    """One Benjamini-Yekutieli correction over every benchmark, per model."""
    from ..metrics.alttest import alt_test_domains

    names = sorted(set(benchmarks.values()))
    results = {}
    for model, predictions in by_model.items():
        domains = {}
        for name in names:
            items = {i for i, b in benchmarks.items() if b == name}
            domains[name] = {
                "humans": {
                    h: {i: v for i, v in d.items() if i in items} for h, d in humans.items()
                },
                "llm": {i: v for i, v in predictions.items() if i in items},
            }
        with model_errors(model):
            results[model] = alt_test_domains(domains, **options)
    if as_json:
        click.echo(json.dumps({m: r.to_dict() for m, r in results.items()}, indent=2))
        return
    for i, (model, res) in enumerate(results.items()):
        if i:
            click.echo()
        click.echo(
            f"Model {model}: passes in {res.n_passed} of {plural(res.n_domains, 'benchmark')} "
            "(one Benjamini-Yekutieli correction over all)"
        )
        for name, one in res.domains.items():
            click.echo()
            _print_alt_test(f"{model}, benchmark {name}", one)


def run_curves(humans: dict, by_model: dict, curve_options: dict[str, Any], as_json: bool) -> None:
    """Winning rate and advantage probability against items or epsilon, per model."""
    from ..metrics.alttest import alt_test_curve

    curves = {}
    for model, predictions in by_model.items():
        try:
            curves[model] = alt_test_curve(humans=humans, llm=predictions, **curve_options)
        except ValueError as exc:
            raise click.ClickException(f"model {model}: {exc}") from exc
    if as_json:
        click.echo(json.dumps({m: c.to_dict() for m, c in curves.items()}, indent=2))
        return
    for i, (model, curve) in enumerate(curves.items()):
        if i:
            click.echo()
        x = "items" if curve.against == "items" else "epsilon"
        fixed = (
            f"epsilon {curve.epsilon:g}" if curve.against == "items" else f"{curve.n_items} items"
        )
        pct = f"{100 * curve.interval:g}%"
        click.echo(
            f"Model {model}: alt-test against {x} ({fixed}, {curve.n_annotators} annotators "
            f"per resample, {curve.points[0].n_resamples} resamples, {pct} intervals, "
            f"seed {curve.random_state})"
        )
        click.echo(
            f"  {x:>7}  {'winning rate':>12}  {pct + ' interval':>16}  {'adv. prob.':>10}  "
            f"{pct + ' interval':>16}  {'passed':>6}  undefined"
        )
        for p in curve.points:
            click.echo(
                f"  {p.x:>7g}  {format_number(p.winning_rate, '12.3f')}  "
                f"[{format_number(p.winning_rate_low, '.3f')}, {format_number(p.winning_rate_high, '.3f')}]".ljust(
                    43
                )
                + f"  {format_number(p.advantage_probability, '10.3f')}  "
                f"[{format_number(p.advantage_low, '.3f')}, {format_number(p.advantage_high, '.3f')}]".ljust(
                    18
                )
                + f"  {format_number(p.pass_share, '6.2f')}  {p.n_undefined}"
            )


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
            f"  {str(row.annotator):<{width}}  {row.n_items:>5}  {format_number(row.rho_f, '5.2f')}  "
            f"{format_number(row.rho_h, '5.2f')}  {format_number(row.statistic, '9.3f')}  "
            f"{format_number(row.p_value, '9.2e')}  "
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
@runs_option
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
    from ..metrics.alttest import alt_test, alt_test_sequential

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
        data = load_json(humans_path, "--humans")
        if _is_export(data):
            humans, llm = data["humans"], data["llm"]
        else:
            humans, llm = data, None
        if llm_path is not None:
            llm = load_json(llm_path, "--llm")
        if llm is None:
            raise click.UsageError("--llm is required unless --humans is the alttest export")
    by_model = _models(llm, Path(llm_path).stem if llm_path else "llm")
    from ..metrics.runs import aggregate_run_dicts

    by_model = aggregate_run_dicts(by_model, how=runs)
    if models:
        unknown = [name for name in models if name not in by_model]
        if unknown:
            raise click.UsageError(f"unknown {noun(len(unknown), 'model')}: {', '.join(unknown)}")
        by_model = {name: by_model[name] for name in models}
    weights = load_json(weights_path, "--weights") if weights_path else None
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
