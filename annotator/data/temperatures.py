"""Which LLM scores are analysed: each judge at one temperature (the one rule).

A judge's runs at different temperatures are never combined (greedy and sampled
scores estimate different things), so each judge (an LLM score ``model``) is
analysed on each scale at one temperature: the one the lead chose for that judge,
else the study's ``[validation] temperature``, else the judge's own main
temperature (the most common among its own scores on that scale). The
dashboard, the report, the CLI and the exports all call :func:`judge_temperatures`,
so they list the same judges with the same numbers.

Kept in ``data`` (it knows no statistics) and pure (no session, no SQL), so that
the exports and the analysis both import it, through :mod:`annotator.data.matrix_rules`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "NOT_RECORDED",
    "JudgeTemperatures",
    "judge_temperatures",
    "parse_judge_temperatures",
    "temperature_label",
]

#: How a score stored without a temperature (an import without one) is named.
NOT_RECORDED = "not recorded"
# What a lead may write for it when choosing a judge's temperature.
NONE_WORDS = ("none", NOT_RECORDED)


# How a temperature was chosen (``JudgeTemperatures.counts``), said of every judge at once.
_ALIKE = {
    "the study's": "the study's setting",
    "chosen for this judge": "chosen for each judge",
    "its most common": "each judge's most common",
}


def temperature_label(temperature: float | None) -> str:
    """``"1"``, ``"0.7"``; :data:`NOT_RECORDED` for a score without a temperature."""
    if temperature is None or (isinstance(temperature, float) and math.isnan(temperature)):
        return NOT_RECORDED
    return f"{temperature:g}"


@dataclass(frozen=True)
class JudgeTemperatures:
    """The temperature each judge is analysed at, per scale.

    Attributes
    ----------
    chosen : tuple of ((str, str), float or None)
        ``((judge, scale), temperature)`` sorted; None: the judge's scores without a
        recorded temperature.
    reasons : tuple of ((str, str), str)
        ``((judge, scale), how its temperature was chosen)``, in the same order.
    counts : tuple of ((str, str), (str, int, int))
        ``((judge, scale), (how, scores at it, scores))`` in the same order; ``how`` is
        ``"the study's"``, ``"chosen for this judge"`` or ``"its most common"``.
    """

    chosen: tuple[tuple[tuple[str, str], float | None], ...] = ()
    reasons: tuple[tuple[tuple[str, str], str], ...] = ()
    counts: tuple[tuple[tuple[str, str], tuple[str, int, int]], ...] = ()

    def of(self, judge: str, scale: str) -> float | None:
        """The temperature of ``judge`` on ``scale``; ``KeyError`` for one without scores."""
        return dict(self.chosen)[(judge, scale)]

    def keep(self, judges: Iterable, scales: Iterable, temperatures: Iterable) -> np.ndarray:
        """True for each score (its judge, scale and temperature, NaN: none) at its
        judge's chosen temperature on that scale."""
        # A Series or an array converts whole; only other iterables go item by item.
        models = np.asarray(_sequence(judges), dtype=object)
        on = np.asarray(_sequence(scales), dtype=object)
        temps = np.asarray(_sequence(temperatures), dtype=float)
        out = np.zeros(len(models), dtype=bool)
        for (judge, scale), temperature in self.chosen:
            mine = (models == judge) & (on == scale)
            at = np.isnan(temps) if temperature is None else np.isclose(temps, temperature)
            out |= mine & at
        return out

    def _on(self, scale: str | None) -> list[tuple[tuple[str, str], float | None]]:
        return [(key, t) for key, t in self.chosen if scale is None or key[1] == scale]

    def _per_judge(self, scale: str | None) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for (judge, _), t in self._on(scale):
            label = temperature_label(t)
            if label not in out.setdefault(judge, []):
                out[judge].append(label)
        return out

    @property
    def uniform(self) -> bool:
        """Every judge is at one temperature on every scale (or there is no judge)."""
        return len({temperature_label(t) for _, t in self.chosen}) <= 1

    @property
    def single(self) -> float | None:
        """The one temperature every judge is at on every scale (None: several, none
        recorded, or no judge)."""
        values = {temperature_label(t) for _, t in self.chosen}
        if len(values) != 1:
            return None
        return self.chosen[0][1]

    def label(self, scale: str | None = None) -> str:
        """``"1"`` when every judge is at one temperature (on ``scale``; None: every
        scale), else ``"judge-a not recorded, judge-c 1"`` (a judge at several on
        different scales: ``"0.1/1"``)."""
        chosen = self._on(scale)
        if not chosen:
            return "none (no LLM scores)"
        values = {temperature_label(t) for _, t in chosen}
        if len(values) == 1:
            return values.pop()
        per = self._per_judge(scale)
        return ", ".join(f"{judge} {'/'.join(ts)}" for judge, ts in per.items())

    def describe(self, scale: str | None = None) -> str:
        """A sentence for a lead: each judge's temperature (on ``scale``; None: every
        scale) and how it was chosen."""
        scales = {on for (_, on), _ in self.reasons if scale is None or on == scale}
        parts: dict[str, list[str]] = {}
        for (judge, on), how in self.reasons:
            if scale is None or on == scale:
                # The scale is named only where the study has several.
                named = how if len(scales) == 1 else f"{how} on scale {on}"
                parts.setdefault(judge, []).append(named)
        if not parts:
            return "no LLM scores"
        return "; ".join(f"{judge} at {', '.join(hows)}" for judge, hows in parts.items())

    def brief(self) -> str:
        """How the scores' temperatures were chosen in a line or two, as the analysis
        says it (``"temperature 0 (...)"``, ``"each judge's own temperature (...)"``)
        but each judge's scores summed over the scales, and how it was chosen said once
        when alike: ``"temperature 0 (each judge's most common; scores at it: judge-a 80
        of 80, judge-b 78 of 80)"``. :meth:`describe` says it scale by scale."""
        if not self.chosen:
            return "no LLM scores"
        per: dict[str, list] = {}
        for (judge, _), (how, found, total) in self.counts:
            mine = per.setdefault(judge, [[], 0, 0])
            if how not in mine[0]:
                mine[0].append(how)
            mine[1] += found
            mine[2] += total
        hows = {how for mine in per.values() for how in mine[0]}
        labels = {judge: "/".join(ts) for judge, ts in self._per_judge(None).items()}

        def scores(found: int, total: int) -> str:
            return f"{found} of {total}" + ("" if found else ": none, so it is left out")

        if self.uniform and len(hows) == 1:
            listed = ", ".join(f"{j} {scores(f, t)}" for j, (_, f, t) in per.items())
            return f"temperature {self.label()} ({_ALIKE[hows.pop()]}; scores at it: {listed})"
        inner = "; ".join(
            f"{j} at {labels[j]} ({'/'.join(how)}; {scores(f, t)} scores)"
            for j, (how, f, t) in per.items()
        )
        head = f"temperature {self.label()}" if self.uniform else "each judge's own temperature"
        return f"{head} ({inner})"

    def to_dict(self) -> dict[str, dict[str, float | None]]:
        """``{judge: {scale: temperature}}`` (None: not recorded), JSON-ready."""
        out: dict[str, dict[str, float | None]] = {}
        for (judge, scale), t in self.chosen:
            out.setdefault(judge, {})[scale] = t
        return out


def _rank(temps: np.ndarray, counts: np.ndarray) -> dict[float | None, tuple]:
    """Each temperature's place among all the study's scores (``counts`` scores
    per entry): the most common first, then the lowest recorded, scores without
    one last (the tie-break of :func:`_main_of`)."""
    recorded = ~np.isnan(temps)
    values, inverse = np.unique(temps[recorded], return_inverse=True)
    totals = np.bincount(inverse, weights=counts[recorded], minlength=len(values))
    out: dict[float | None, tuple] = {
        float(v): (-int(c), 0, float(v)) for v, c in zip(values, totals, strict=True)
    }
    out[None] = (-int(counts[~recorded].sum()), 1, 0.0)
    return out


def _main_of(
    temps: np.ndarray, counts: np.ndarray, rank: dict[float | None, tuple]
) -> tuple[float | None, int]:
    """The most common temperature of one judge's scores on one scale (``counts``
    scores per entry), and its count.

    A tie goes to the temperature most common among all the study's scores (the
    one a study-wide rule would pick, so a judge also run at a second temperature as
    often stays at the study's), then to the lowest recorded one; scores without a
    temperature win a tie only against none recorded.
    """
    totals: dict[float | None, int] = {}
    for t, n in zip(temps.tolist(), counts.tolist(), strict=True):
        key = None if math.isnan(t) else float(t)
        totals[key] = totals.get(key, 0) + n
    top = max(totals.values())
    best = min((t for t, n in totals.items() if n == top), key=rank.__getitem__)
    return best, top


def _sequence(values: Iterable) -> Any:
    return values if hasattr(values, "__array__") else list(values)


def _float_or_none(value: Any) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return float(value)


def judge_temperatures(
    judges: Iterable,
    scales: Iterable,
    temperatures: Iterable,
    *,
    requested: float | None = None,
    per_judge: Mapping[str, float | None] | Iterable[tuple[str, float | None]] = (),
    counts: Iterable[int] | None = None,
) -> JudgeTemperatures:
    """The temperature each judge is analysed at on each scale.

    Parameters
    ----------
    judges, scales, temperatures : iterable
        One entry per LLM score: its judge (``model``), scale and temperature (NaN
        or None: not recorded).
    requested : float, optional, keyword-only
        The study's temperature (``[validation] temperature``, ``--temperature``,
        the export form's): every judge is analysed at it, but those chosen in
        ``per_judge``. A judge without scores at it is left out, and its reason
        says so.
    per_judge : mapping, keyword-only
        ``{judge: temperature}`` the lead chose for single judges
        (``[validation.temperatures]``, ``--judge-temperature``); wins over
        ``requested``.
    counts : iterable of int, optional, keyword-only
        How many scores each entry stands for (by default one each): the rule
        counts scores, so ``(judge, scale, temperature)`` groups with their sizes
        give what their scores one by one give.

    Returns
    -------
    JudgeTemperatures
        Without a choice, a judge is analysed on each scale at its main temperature
        there: the most common among its own scores on that scale (a tie goes to the
        temperature most common among all the study's scores, then to the lowest
        recorded one; scores without one win a tie only against none recorded).
    """
    models = np.asarray([str(j) for j in judges], dtype=object)
    on = np.asarray([str(s) for s in scales], dtype=object)
    temps = np.asarray([np.nan if t is None else float(t) for t in temperatures], dtype=float)
    sizes = np.ones(len(temps), dtype=np.int64)
    if counts is not None:
        sizes = np.asarray(list(counts), dtype=np.int64)
        if len(sizes) != len(temps) or (sizes < 1).any():
            raise ValueError(
                f"counts: give a positive count per entry (got {len(sizes)} for "
                f"{len(temps)} entries)"
            )
    if not len(models) == len(on) == len(temps):
        raise ValueError(
            f"judges, scales, temperatures: give one of each per score (got {len(models)}, "
            f"{len(on)} and {len(temps)})"
        )
    lead = dict(judge_temperature_pairs(per_judge))
    rank = _rank(temps, sizes)
    chosen, reasons, counts = [], [], []
    for judge in sorted(set(models.tolist())):
        for scale in sorted(set(on[models == judge].tolist())):
            where = (models == judge) & (on == scale)
            mine, n = temps[where], sizes[where]
            total = int(n.sum())
            if judge in lead or requested is not None:
                t = lead[judge] if judge in lead else float(requested)
                found = int(n[np.isnan(mine) if t is None else np.isclose(mine, t)].sum())
                whose = "chosen for this judge" if judge in lead else "the study's"
                part = f"{temperature_label(t)} ({whose}; {found} of {total} scores"
                part += ")" if found else ": none, so it is left out)"
            else:
                t, found = _main_of(mine, n, rank)
                whose = "its most common"
                part = f"{temperature_label(t)} (its most common: {found} of {total} scores)"
            chosen.append(((judge, scale), t))
            reasons.append(((judge, scale), part))
            counts.append(((judge, scale), (whose, found, total)))
    return JudgeTemperatures(chosen=tuple(chosen), reasons=tuple(reasons), counts=tuple(counts))


def parse_judge_temperatures(
    values: Iterable[str] | str,
) -> tuple[tuple[str, float | None], ...]:
    """``("judge-a=0", "judge-c=1")`` or ``"judge-a=0, judge-c=1"`` as pairs.

    ``JUDGE=none`` (or ``JUDGE=not recorded``) chooses the judge's scores stored
    without a temperature (None). ``ValueError`` naming the clause that is not
    ``JUDGE=TEMPERATURE`` with a temperature of at least 0.
    """
    if isinstance(values, str):
        values = [part for part in values.split(",")]
    out: dict[str, float | None] = {}
    for clause in values:
        clause = clause.strip()
        if not clause:
            continue
        judge, sep, text = clause.rpartition("=")
        judge = judge.strip()
        if sep and judge and text.strip().lower() in NONE_WORDS:
            out[judge] = None
            continue
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not sep or not judge or not value >= 0:
            raise ValueError(
                f"judge temperature: {clause!r} is not JUDGE=TEMPERATURE with a temperature "
                "of at least 0 or none (e.g. judge-a=0.7, judge-b=none)"
            )
        out[judge] = value
    return tuple(sorted(out.items()))


def judge_temperature_pairs(
    chosen: Mapping[str, Any] | Iterable[tuple[str, Any]],
) -> tuple[tuple[str, float | None], ...]:
    """Settings' ``{judge: temperature}`` as sorted pairs; None, NaN or a word of
    :data:`NONE_WORDS` (the study file's way to say it): not recorded."""
    pairs = chosen.items() if isinstance(chosen, Mapping) else chosen
    out = []
    for judge, value in pairs:
        if isinstance(value, str) and value.strip().lower() in NONE_WORDS:
            value = None
        out.append((str(judge), _float_or_none(value)))
    return tuple(sorted(out))
