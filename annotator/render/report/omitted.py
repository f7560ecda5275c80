"""What the report leaves out, and why: one "Not computed, and why" list, once per reason.

A section whose table holds no result (:func:`.cells.computed`), one that repeats
another's numbers (one benchmark, one temperature per model), a figure with nothing
to draw (:func:`.figures.missing`) and the analysis's notes are gathered here; a
reason that holds for several tables, scales, models or criteria is said once, with
the list of what it holds for.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .cells import Section, computed

__all__ = ["Left", "NotComputed", "left_out", "not_computed", "shown_sections"]


@dataclass(frozen=True)
class Left:
    """One thing left out: ``what`` (a table's heading, a figure's name, a note's
    subject), ``why``, and ``where`` (the criterion, in a rubric study)."""

    what: str
    why: str
    where: str = ""


@dataclass
class NotComputed:
    """One reason and everything it holds for (each with its criteria, if any)."""

    why: str
    what: dict[str, list[str]] = field(default_factory=dict)

    @property
    def items(self) -> list[str]:
        out = []
        named = [w for w in self.what if w]
        for what, where in self.what.items():
            # A note's bare subject ("Table 5", or none) beside the section it names
            # ("Table 5: agreement by demographic group") is said once, by the section.
            if any(_extends(other, what) for other in named):
                continue
            where = [w for w in where if w]
            if where:
                noun = "criterion" if len(where) == 1 else "criteria"
                what = (
                    f"{what} ({noun} {', '.join(where)})" if what else f"{noun} {', '.join(where)}"
                )
            if what:
                out.append(what)
        return out


def _extends(other: str, what: str) -> bool:
    """Whether ``other`` names more of what ``what`` names ("Table 5: agreement by
    demographic group" of "Table 5"), not another thing that starts alike ("scale 0-100"
    is not more of "scale 0-10")."""
    if other == what or not other.startswith(what):
        return False
    following = other[len(what) : len(what) + 1]
    return not what or not (following.isalnum() or following in "-.")


# Sections that repeat another's numbers in a study of one benchmark or one temperature.
_ONE_BENCHMARK = ("table3", "table4a")
_FIGURE_NAMES = {
    "alttest": "Figure: the alt-test against epsilon",
    "alttest_epsilon_curve": "Figure: the alt-test curve against epsilon",
    "alttest_items_curve": "Figure: the alt-test curve against the number of items",
    "items": "Figure: per-item disagreement",
    "bootstrap": "Figure: bootstrap intervals",
    "distributions": "Figure: score distributions",
    "icc": "Figure: ICC intervals",
    "figure2": "Figure: ICC against nMAE (Figure 2)",
}


def _repeats(key: str, tables: Any) -> str | None:
    """Why section ``key`` only repeats another's numbers (None: it does not)."""
    if key in _ONE_BENCHMARK and tables.benchmarks["benchmark"].nunique() <= 1:
        return "one benchmark: Tables 2 and 4b show the same numbers"
    if key == "table6":
        frame = tables.temperatures
        if frame.empty or not frame.duplicated(["model", "scale"]).any():
            return "each model ran at one temperature: Table 4b shows the same numbers"
    if key == "table5" and not (tables.settings or {}).get("group_by"):
        return "the study asks no demographic question to group the raters by"
    return None


def shown_sections(
    sections: Iterable[Section], tables: Any, *, where: str = ""
) -> tuple[list[Section], list[Left]]:
    """The sections to draw, and what is left out of them (the sections with nothing to
    show, the figures of the shown ones with nothing to draw)."""
    from .figures import FIGURES, missing

    shown, left = [], []
    for section in sections:
        why = _repeats(section.key, tables)
        if why is None and not computed(section.frame):
            why = section.empty or "nothing could be computed"
        if why is not None:
            left.append(Left(section.heading, why, where))
            continue
        shown.append(section)
        if section.key in FIGURES:
            why = missing(section.key, tables)
            if why is not None:
                left.append(Left(_FIGURE_NAMES[section.key], why, where))
    return shown, left


def left_out(tables: Any, keys: Iterable[str], *, where: str = "") -> list[Left]:
    """The figures ``keys`` that belong to no table and have nothing to draw."""
    from .figures import missing

    return [
        Left(_FIGURE_NAMES[key], why, where)
        for key in keys
        if (why := missing(key, tables)) is not None
    ]


_CRITERION_FIRST = re.compile(r"^criterion (?P<name>[^:,]+): ")
_CRITERION_INSIDE = re.compile(r"(?:, )?criterion (?P<name>[^:,]+)")


def _note(note: str) -> Left:
    """A note of the analysis as (subject, reason, criterion)."""
    where = ""
    first = _CRITERION_FIRST.match(note)
    if first:
        where, note = first["name"], note[first.end() :]
    subject, sep, why = note.partition(": ")
    if not sep:
        return Left("", note, where)
    inside = _CRITERION_INSIDE.search(subject)
    if inside:
        where = where or inside["name"]
        subject = (subject[: inside.start()] + subject[inside.end() :]).strip(", ")
    return Left(subject, why, where)


def not_computed(notes: Iterable[str], left: Iterable[Left]) -> list[NotComputed]:
    """The notes and what was left out, grouped by reason, in order of first mention."""
    by_reason: dict[str, NotComputed] = {}
    for one in [_note(n) for n in notes] + list(left):
        entry = by_reason.setdefault(one.why, NotComputed(one.why))
        where = entry.what.setdefault(one.what, [])
        if one.where not in where:
            where.append(one.where)
    return list(by_reason.values())
