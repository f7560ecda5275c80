"""The parts of ``annotator alt-test`` beyond one test per model: the matrix input, the
verdict across benchmarks (``--by benchmark``) and the curves (``--curve``).

Called from :func:`annotator.metrics.cli.alt_test_command`; numpy and the statistics
load inside the functions, as in the rest of the command line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

__all__ = ["matrix_inputs", "parse_values", "run_by_benchmark", "run_curves"]


@contextmanager
def model_errors(model: str) -> Iterator[None]:
    """The alt-test's refusals as command-line errors that name the model."""
    from .alttest import TooFewItemsError

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
    from .cli import _read

    matrix = _read(path)
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
    from .alttest import alt_test_domains
    from .cli import _print_alt_test

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
            f"Model {model}: passes in {res.n_passed} of {res.n_domains} benchmark(s) "
            "(one Benjamini-Yekutieli correction over all)"
        )
        for name, one in res.domains.items():
            click.echo()
            _print_alt_test(f"{model}, benchmark {name}", one)


def run_curves(humans: dict, by_model: dict, curve_options: dict[str, Any], as_json: bool) -> None:
    """Winning rate and advantage probability against items or epsilon, per model."""
    from .alttest import alt_test_curve
    from .cli import _fmt

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
                f"  {p.x:>7g}  {_fmt(p.winning_rate, '12.3f')}  "
                f"[{_fmt(p.winning_rate_low, '.3f')}, {_fmt(p.winning_rate_high, '.3f')}]".ljust(43)
                + f"  {_fmt(p.advantage_probability, '10.3f')}  "
                f"[{_fmt(p.advantage_low, '.3f')}, {_fmt(p.advantage_high, '.3f')}]".ljust(18)
                + f"  {_fmt(p.pass_share, '6.2f')}  {p.n_undefined}"
            )
