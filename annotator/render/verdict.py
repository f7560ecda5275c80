"""The verdict table as text: the first table of the dashboard, the report and ``annotator verdict``.

:func:`verdict_lines` words each :class:`~annotator.analysis.verdict.Verdict` of a
:func:`~annotator.analysis.verdict.verdict_summary` once; the three faces print
these lines' fields as they are, so they say the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..analysis.verdict import Verdict, VerdictSummary

__all__ = ["VERDICT_HEADERS", "VerdictLine", "verdict_lines"]

#: The columns' headers, in the lead's words (``ci`` fills in the coverage).
VERDICT_HEADERS = (
    "Judge",
    "Scale",
    "Verdict",
    "Winning rate [{ci}]",
    "Epsilon",
    "Rests on",
    "Human mean: judge-assisted vs human only [{ci}]",
    "Still needs",
)


@dataclass(frozen=True)
class VerdictLine:
    """One verdict as printed: every field a string (empty: nothing to say).

    ``css`` is "passed", "failed" or "open" (the dashboard's verdict colours);
    ``anchor`` a fragment id unique in the study (``verdict-CRITERION-SCALE-JUDGE``).
    """

    criterion: str
    judge: str
    scale: str
    verdict: str
    css: str
    winning_rate: str
    epsilon: str
    rests_on: str
    assisted: str
    needs: str
    anchor: str

    def cells(self) -> tuple[str, ...]:
        """The fields under :data:`VERDICT_HEADERS`, in order."""
        scale = f"{self.scale} ({self.criterion})" if self.criterion else self.scale
        return (
            self.judge,
            scale,
            self.verdict,
            self.winning_rate,
            self.epsilon,
            self.rests_on,
            self.assisted,
            self.needs,
        )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _rests_on(v: Verdict) -> str:
    if v.decision == "undecided":
        return f"{_plural(v.n_raters, 'rater')}, at most {_plural(v.n_items, 'item')} each so far"
    return f"{_plural(v.n_raters, 'rater')}, {_plural(v.n_items, 'item')}"


def _winning_rate(v: Verdict) -> str:
    if v.winning_rate is None:
        return "–"
    return f"{v.winning_rate:.2f} [{v.winning_rate_low:.2f}, {v.winning_rate_high:.2f}]"


def _assisted(v: Verdict) -> str:
    parts = []
    for a in v.assisted:
        parts.append(
            f"{a.benchmark}: {a.estimate:.2f} [{a.estimate_low:.2f}, {a.estimate_high:.2f}] vs "
            f"{a.human_mean:.2f} [{a.human_mean_low:.2f}, {a.human_mean_high:.2f}]"
        )
    return "; ".join(parts)


def _needs(v: Verdict) -> str:
    if v.decision != "undecided":
        if v.decision == "replace" and v.secured is False:
            return "nothing; the pass can still change as ratings arrive"
        return ""
    return "; ".join(v.needs) or (v.reason or "")


def _anchor(v: Verdict) -> str:
    raw = "-".join(p for p in ("verdict", v.criterion, v.scale, v.judge) if p)
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in raw)


def verdict_lines(summary: VerdictSummary) -> tuple[VerdictLine, ...]:
    """Each verdict of ``summary`` as a :class:`VerdictLine`."""
    css = {"replace": "passed", "not": "failed", "undecided": "open"}
    return tuple(
        VerdictLine(
            criterion=v.criterion,
            judge=v.judge,
            scale=v.scale,
            verdict=v.words,
            css=css[v.decision],
            winning_rate=_winning_rate(v),
            epsilon=f"{v.epsilon:g}",
            rests_on=_rests_on(v),
            assisted=_assisted(v),
            needs=_needs(v),
            anchor=_anchor(v),
        )
        for v in summary.rows
    )
