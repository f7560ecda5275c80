"""The report of a study with ``[[criteria]]``: the tables across criteria, then a
section of every table and figure per criterion.

Each criterion's sections are those of a study without criteria
(:func:`.sections.report_sections` on its own tables), their keys prefixed with the
criterion's place so that every anchor on the page stays unique, and their headings
with its name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .cells import Figure, Section, frame_view, text_columns
from .sections import report_figures, report_sections

if TYPE_CHECKING:
    from ...analysis.model import RubricTables
    from .figures import Drawn

__all__ = ["CriterionPart", "Part", "criterion_part", "rubric_sections"]

# A criterion's name, its report tables and its figures drawn (by key).
CriterionPart = tuple[str, Any, Mapping[str, "Drawn"]]


def _prefix(index: int) -> str:
    return f"criterion-{index + 1}-"


def _section(key: str, heading: str, caption: str, frame, empty: str) -> Section:
    return Section(
        key=key,
        heading=heading,
        caption=caption,
        frame=frame_view(frame),
        text_columns=text_columns(frame),
        empty=empty,
    )


def _tested(frame):
    """The alt-test rows with a result: a model x criterion that tested no annotator
    says why once, in the "Not computed, and why" list (the analysis's note)."""
    if "winning_rate" not in frame.columns:
        return frame
    return frame[frame["winning_rate"].notna()]


def rubric_sections(rubric: RubricTables, settings: Mapping[str, Any]) -> list[Section]:
    """The tables across criteria: the summary, the alt-tests, the correlations."""
    level = 100 * float(settings.get("confidence", 0.95))
    epsilon = settings.get("epsilon", 0.2)
    return [
        _section(
            "criteria-summary",
            "Criteria x scales",
            "Per criterion and scale: the human panel's ICC(A,1) and ICC(A,k) on the complete "
            "items x raters block, Krippendorff's interval alpha over every first rating, "
            "Fleiss' kappa (integer scales only; nominal categories) as GER-Eval reports "
            "them per criterion, and the ensemble's ICC(A,1), nMAE and Pearson r with the "
            "human mean. Each criterion's own tables follow below.",
            rubric.summary,
            "no criterion has ratings yet",
        ),
        _section(
            "criteria-alttest",
            "Alt-test per criterion, pooled and as domains",
            f"At epsilon {epsilon}: each model's alt-test on each criterion alone; on "
            "(pooled) every (item, criterion) pair is an instance, as the alt-test paper "
            "treats SummEval; on (domains) each criterion is a domain, the "
            "Benjamini-Yekutieli procedure runs once over every annotator of every "
            'criterion and the model passes in "criteria passed" of "criteria tested" '
            "(Calderon, Reichart and Dror 2025, Appendix A). A model and criterion that "
            "tested no annotator has no row: the list of what was not computed says why.",
            _tested(rubric.alttest),
            "no model has scores on a criterion with enough human ratings",
        ),
        _section(
            "criteria-correlations",
            "Correlations between criteria",
            "Spearman's rho between two criteria's scores of the same items, for the human "
            f"mean and for each model, with {level:g}% Fisher-z intervals. Correlations near "
            "1 mean the raters (or the judge) do not separate the criteria.",
            rubric.correlations,
            "no two criteria share 3 scored items yet",
        ),
    ]


@dataclass
class Part:
    """One criterion's part of a rubric study's report: its sections and figures."""

    key: str
    name: str
    sections: list[Section]
    figures: list[Figure]


def criterion_part(index: int, name: str, tables: Any, drawn: Mapping[str, Drawn]):
    """Criterion ``name``'s part (keys prefixed, headings named) and what it leaves out
    (:class:`.omitted.Left`, its ``where`` the criterion)."""
    from .omitted import shown_sections

    prefix = _prefix(index)
    shown, left = shown_sections(report_sections(tables, drawn), tables, where=name)
    sections = [
        replace(
            section,
            key=prefix + section.key,
            heading=section.heading,
            figures=[_figure(f, prefix, name) for f in section.figures],
        )
        for section in shown
    ]
    figures = [_figure(f, prefix, name) for f in report_figures(tables, drawn)]
    return Part(prefix.rstrip("-"), name, sections, figures), left


def _figure(fig: Figure, prefix: str, name: str) -> Figure:
    return replace(fig, key=prefix + fig.key, caption=f"Criterion {name}. {fig.caption}")
