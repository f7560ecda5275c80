"""``annotator plan``: raters for a target reliability, or the alt-test's pass probability.

Like the other commands it imports the statistics (and, for ``--plot``, the figures of
:mod:`annotator.render.figures`) only when it runs.
"""

from __future__ import annotations

import json
from typing import Any

import click

from ..metrics._names import SCORINGS, TESTS
from ..words import plural
from ._common import (
    benchmark_option,
    format_number,
    load_json,
    raters_option,
    read_matrix_or_fail,
    runs_option,
    select_columns,
)

__all__ = ["plan_command"]


def _numbers(value: str | None, *, name: str, kind: type = float) -> tuple[Any, ...] | None:
    if value is None:
        return None
    try:
        return tuple(kind(v) for v in value.split(","))
    except ValueError as exc:
        raise click.BadParameter(
            f"give comma-separated numbers, got {value!r}", param_hint=name
        ) from exc


def _pilot_for_alt_test(path: str, model: str | None, benchmark: str | None, runs: str):
    """(humans, llm) from the alttest JSON export or the matrix CSV export."""
    from ..metrics.runs import aggregate_run_columns, aggregate_run_dicts

    if path.endswith(".json"):
        data = load_json(path, "PILOT")
        if not isinstance(data, dict) or set(data) != {"humans", "llm"}:
            raise click.ClickException(f"{path}: not the alttest export {{humans, llm}}")
        humans, llm = data["humans"], data["llm"]
        nested = isinstance(llm, dict) and llm and all(isinstance(v, dict) for v in llm.values())
        if nested:
            llm = aggregate_run_dicts(llm, how=runs)
        models = list(llm) if nested else None
    else:
        matrix = read_matrix_or_fail(path)
        if benchmark is not None:
            matrix = _select_benchmark(matrix, benchmark)
        combined = aggregate_run_columns(matrix.llm, how=runs)
        humans, llm = matrix.humans, {m: combined[m] for m in combined.columns}
        models = list(llm)
        if not models:
            raise click.ClickException(f"{path}: the matrix has no llm:MODEL column")
    if models is None:
        return humans, llm
    if model is None:
        if len(models) > 1:
            raise click.UsageError(f"choose a model with --model: {', '.join(map(str, models))}")
        model = models[0]
    if model not in llm:
        raise click.UsageError(f"unknown model {model!r}; known: {', '.join(map(str, models))}")
    return humans, llm[model]


def _select_benchmark(matrix, benchmark: str):
    try:
        return matrix.subset(benchmark)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc


def _plan_alt_test(
    pilot: str, model, benchmark, runs, items, study_raters, reps, seed, options, as_json
):
    from ..metrics.power import alt_test_power

    humans, llm = _pilot_for_alt_test(pilot, model, benchmark, runs)
    try:
        table = alt_test_power(
            humans=humans,
            llm=llm,
            n_items=list(items),
            n_raters=list(study_raters),
            reps=reps,
            seed=seed,
            **options,
        )
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        click.echo(json.dumps(table.to_dict(), indent=2))
        return table
    click.echo(f"alt-test by resampling the pilot ({reps} studies per size, seed {seed})")
    click.echo("   items  raters  P(pass)  WR mean  WR sd  adv. prob.")
    for row in table.rows:
        click.echo(
            f"  {row['n_items']:>6}  {row['n_raters']:>6}  {row['pass_probability']:7.2f}  "
            f"{row['winning_rate_mean']:7.2f}  {row['winning_rate_sd']:5.2f}  "
            f"{format_number(row['advantage_mean'], '10.2f')}"
        )
    return table


# Targets of the "raters needed" curve drawn by --plot.
_PLOT_TARGETS = tuple(round(0.5 + 0.025 * i, 3) for i in range(19))


def _save_plot(fig, path: str) -> None:
    try:
        fig.savefig(path, format="png")
    except OSError as exc:
        raise click.ClickException(f"--plot {path}: {exc.strerror}") from exc
    click.echo(f"plot written to {path}", err=True)


def _plan_figure(table, target: float, widths):
    from ..metrics.plan import raters_needed
    from ..render.figures import plan_figure

    single = table.absolute[0]
    needed = {}
    for goal in _PLOT_TARGETS:
        if 0.0 < single < 1.0:
            needed[goal] = raters_needed(single, target=goal)
        else:
            needed[goal] = 1 if single >= 1.0 else None
    return plan_figure(
        table.raters,
        table.absolute,
        table.relative,
        target=target,
        needed_by_target=needed,
        widths=widths.rows if widths is not None else None,
    )


@click.command("plan")
@click.argument("pilot", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--components",
    default=None,
    help="Stated variance components ITEMS,RATERS,RESIDUAL instead of a PILOT matrix.",
)
@raters_option
@benchmark_option
@click.option("--target", type=float, default=0.8, show_default=True, help="Wanted ICC(A,k).")
@click.option("--max-raters", type=int, default=12, show_default=True, help="Largest k'.")
@click.option(
    "--nan-policy",
    type=click.Choice(["omit", "raise"]),
    default="omit",
    show_default=True,
    help="Drop pilot items with a missing rating, or fail.",
)
@click.option(
    "--ci-items",
    default=None,
    help="Also simulate the ICC interval widths for these numbers of items (e.g. 30,60,120).",
)
@click.option("--ci-raters", default="3", show_default=True, help="... and of raters.")
@click.option(
    "--alttest",
    "for_alt_test",
    is_flag=True,
    help="Plan the alt-test instead: pass probability by resampling the PILOT.",
)
@click.option("--model", default=None, help="--alttest: the LLM column or model to plan for.")
@click.option("--items", default="30,50,100,200", show_default=True, help="--alttest: items.")
@click.option("--study-raters", default="3", show_default=True, help="--alttest: raters per study.")
@click.option("--epsilon", type=float, default=0.2, show_default=True, help="--alttest.")
@click.option("--scoring", type=click.Choice(SCORINGS), default="neg_rmse", show_default=True)
@click.option("--test", type=click.Choice(TESTS), default="ttest", show_default=True)
@click.option("--min-items-per-human", type=int, default=30, show_default=True)
@click.option(
    "--reps", type=int, default=200, show_default=True, help="Simulated studies per size."
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the simulations.")
@runs_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option(
    "--plot",
    "plot_path",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Also draw the planning curves into this PNG file.",
)
def plan_command(
    pilot: str | None,
    components: str | None,
    raters: str,
    benchmark: str | None,
    target: float,
    max_raters: int,
    nan_policy: str,
    ci_items: str | None,
    ci_raters: str,
    for_alt_test: bool,
    model: str | None,
    items: str,
    study_raters: str,
    epsilon: float,
    scoring: str,
    test: str,
    min_items_per_human: int,
    reps: int,
    seed: int,
    runs: str,
    as_json: bool,
    plot_path: str | None,
) -> None:
    """Plan a study from a PILOT export (matrix CSV; alttest JSON with --alttest).

    Reliability (default): a one-facet D-study (items x raters) giving the predicted
    ICC(A,k') and ICC(C,k') of the mean of k' raters and the smallest k' whose
    ICC(A,k') reaches --target; --components replaces the pilot. With --alttest: the
    probability that the LLM passes, and the winning rate's mean and spread, for each
    number of --items and --study-raters, by resampling the pilot.
    """
    if for_alt_test:
        if pilot is None:
            raise click.UsageError("--alttest needs a PILOT export")
        options = {
            "epsilon": epsilon,
            "scoring": scoring,
            "test": test,
            "min_items_per_human": min_items_per_human,
        }
        sizes = _numbers(items, name="--items", kind=int)
        per_study = _numbers(study_raters, name="--study-raters", kind=int)
        table = _plan_alt_test(
            pilot, model, benchmark, runs, sizes, per_study, reps, seed, options, as_json
        )
        if plot_path is not None:
            from ..render.figures import alt_test_power_figure

            _save_plot(alt_test_power_figure(table.rows, epsilon=epsilon), plot_path)
        return
    from ..metrics.plan import (
        VarianceComponents,
        d_study,
        icc_interval_widths,
        raters_needed,
        variance_components,
    )

    stated = _numbers(components, name="--components")
    if stated is not None and len(stated) != 3:
        raise click.BadParameter("give ITEMS,RATERS,RESIDUAL", param_hint="--components")
    if (pilot is None) == (stated is None):
        raise click.UsageError("give either a PILOT matrix or --components, not both")
    if max_raters < 1:
        raise click.BadParameter("must be at least 1", param_hint="--max-raters")
    try:
        if not 0.0 < target < 1.0:
            raise ValueError(f"--target must be strictly between 0 and 1, got {target}")
        if stated is not None:
            comps = VarianceComponents(*stated)
        else:
            comps = variance_components(
                select_columns(read_matrix_or_fail(pilot), raters, benchmark, runs),
                nan_policy=nan_policy,
            )
        table = d_study(comps, raters=range(1, max_raters + 1))
        widths = None
        if ci_items is not None:
            widths = icc_interval_widths(
                comps,
                n_items=list(_numbers(ci_items, name="--ci-items", kind=int)),
                n_raters=list(_numbers(ci_raters, name="--ci-raters", kind=int)),
                reps=reps,
                seed=seed,
            )
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    # Phi(k') is the Spearman-Brown step-up of Phi(1), so inverting it gives k' exactly.
    single = table.absolute[0]
    needed = raters_needed(single, target=target) if 0.0 < single < 1.0 else None
    if single >= 1.0:
        needed = 1
    if plot_path is not None:
        _save_plot(_plan_figure(table, target, widths), plot_path)
    if as_json:
        payload = table.to_dict() | {"target": target, "raters_needed": needed}
        if widths is not None:
            payload["interval_widths"] = widths.to_dict()
        click.echo(json.dumps(payload, indent=2))
        return
    source = f"pilot {comps.n} items x {comps.k} raters" if comps.k else "stated"
    click.echo(
        f"variance components ({source}): items {comps.items:.4g}, raters "
        f"{comps.raters:.4g}, residual {comps.residual:.4g}"
    )
    click.echo("  raters  ICC(A,k)  ICC(C,k)")
    for k, a, r in zip(table.raters, table.absolute, table.relative, strict=True):
        click.echo(f"  {k:>6}  {a:8.3f}  {r:8.3f}")
    if needed is None:
        click.echo(f"no number of raters reaches ICC(A,k) >= {target:g} (no item variance)")
    else:
        click.echo(f"ICC(A,k) >= {target:g} needs {plural(needed, 'rater')}")
    if widths is not None:
        click.echo(
            f"median 95% interval width, {widths.reps} simulated studies per size "
            f"(seed {widths.seed}):"
        )
        click.echo("   items  raters  ICC(A,1)  ICC(A,k)  coverage(A,1)")
        for row in widths.rows:
            click.echo(
                f"  {row['n_items']:>6}  {row['n_raters']:>6}  {row['width_a1']:8.3f}  "
                f"{row['width_ak']:8.3f}  {row['coverage_a1']:13.2f}"
            )
