"""``annotator consistency`` and ``annotator agreement``: the agreement tables of a study.

They print tables of the study's analysis
(:func:`annotator.analysis.study_analysis.analyse`), the ones the report shows. Only click and Flask's CLI helpers load at import; pandas and the
statistics load when a command runs, so ``annotator --help`` stays fast.
"""

from __future__ import annotations

import json
import math
from typing import Any

import click
from flask.cli import with_appcontext

from ._common import judge_temperature_option

__all__ = ["agreement_command", "consistency_command"]


def _frames_and_settings(slug: str):
    from ..analysis.settings import study_settings
    from ..data.frames import study_frames
    from ..db import session_scope
    from ..study.studies import get_study

    with session_scope() as session:
        study = get_study(session, slug)
        if study is None:
            raise click.ClickException(f"no study with slug {slug!r}")
        return study_frames(session, study), study_settings(study)


def _records(frame) -> list[dict[str, Any]]:
    out = []
    for row in frame.to_dict(orient="records"):
        clean = {}
        for key, value in row.items():
            if hasattr(value, "item"):
                value = value.item()
            if isinstance(value, float) and math.isnan(value):
                value = None
            clean[key] = value
        out.append(clean)
    return out


def _print(title: str, frame, empty: str) -> None:
    click.echo(title)
    if frame.empty:
        click.echo(f"  ({empty})")
    else:
        text = frame.to_string(index=False, float_format=lambda v: f"{v:.3f}", na_rep="-")
        click.echo("\n".join(f"  {line}" for line in text.splitlines()))
    click.echo()


def _only(frame, column: str, values: tuple[str, ...], option: str):
    if not values:
        return frame
    known = set(frame[column].astype(str))
    unknown = [v for v in values if v not in known]
    if unknown:
        listed = ", ".join(sorted(known)) or "none"
        raise click.UsageError(f"{option}: unknown {column} {unknown[0]!r} (known: {listed})")
    return frame[frame[column].astype(str).isin(values)]


@click.command("consistency")
@click.argument("study")
@click.option("--scale", "scales", multiple=True, help="Only this scale (repeatable).")
@click.option("--model", "models", multiple=True, help="Only this model (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@with_appcontext
def consistency_command(
    study: str, scales: tuple[str, ...], models: tuple[str, ...], as_json: bool
) -> None:
    """Self-consistency of each LLM across its runs: alpha, ICC(A,1), identical share."""
    from ..analysis.study_analysis import analyse

    frames, settings = _frames_and_settings(study)
    table = analyse(frames, settings, parts=("consistency",)).consistency
    table = _only(_only(table, "scale", scales, "--scale"), "model", models, "--model")
    if as_json:
        click.echo(json.dumps({"study": study, "consistency": _records(table)}, indent=2))
        return
    _print(
        f"Self-consistency across runs, study {study!r} (per model, scale, temperature)",
        table,
        "no model has stored scores",
    )


@click.command("agreement")
@click.argument("study")
@click.option("--scale", "scales", multiple=True, help="Only this scale (repeatable).")
@click.option(
    "--temperature",
    type=float,
    default=None,
    help="LLM temperature of every judge [default: the study's, else each judge's most common].",
)
@judge_temperature_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@with_appcontext
def agreement_command(
    study: str,
    scales: tuple[str, ...],
    temperature: float | None,
    judge_temperatures: tuple[tuple[str, float], ...],
    as_json: bool,
) -> None:
    """Correlations, kappas, percent agreement and cross-group alpha of a study."""
    from dataclasses import replace

    from ..analysis.study_analysis import analyse

    frames, settings = _frames_and_settings(study)
    if temperature is not None:
        settings = replace(settings, temperature=temperature)
    if judge_temperatures:
        settings = replace(settings, judge_temperatures=judge_temperatures)
    analysis = analyse(frames, settings, parts=("agreement_tables",))
    chosen, how, notes = analysis.temperature, analysis.temperature_note, analysis.agreement_notes
    tables = {
        name: _only(analysis.agreement[name], "scale", scales, "--scale")
        for name in ("correlations", "kappa", "cross_alpha")
    }
    if as_json:
        payload = {
            "study": study,
            # One number when every judge is at one temperature; per judge and scale
            # always (None: not recorded).
            "temperature": chosen.single,
            "temperatures": chosen.to_dict(),
            "temperature_note": how,
            **{name: _records(t) for name, t in tables.items()},
            "notes": list(notes),
        }
        click.echo(json.dumps(payload, indent=2))
        return
    click.echo(f"Study {study!r}: LLM scores at {how}.\n")
    _print(
        f"Correlations with the human mean ({100 * settings.confidence:g}% Fisher-z intervals)",
        tables["correlations"],
        "no human and LLM scores on 2 items",
    )
    _print(
        "Kappa and percent agreement (integer scales)",
        tables["kappa"],
        "no integer scale (step 1)",
    )
    _print(
        "Cross-group Krippendorff's alpha (only pairs across the two groups)",
        tables["cross_alpha"],
        "no two groups rated the same items",
    )
    for note in notes:
        click.echo(f"note: {note}", err=True)
