"""The report's sections for self-consistency, correlations, kappas, cross-group alpha and
the alt-test curves (tables of :mod:`annotator.analysis.agreement_tables`), with the
curves' figures (drawn by :mod:`annotator.render.figures`). :func:`~annotator.render.report.sections.report_sections` appends them.
"""

from __future__ import annotations

from collections.abc import Mapping

from .cells import Section, frame_view, text_columns
from .figures import Drawn, curves_against, figure

__all__ = ["agreement_sections", "statistics_section"]

_CURVE_VIEW = ["scale", "model", "x", "winning_rate", "winning_rate_low", "winning_rate_high"]
_CURVE_VIEW += ["advantage_probability", "advantage_low", "advantage_high", "pass_share"]
_CURVE_VIEW += ["n_resamples", "n_undefined"]


# (against, heading, caption, figure caption) of the two curve sections.
_CURVES = (
    (
        "epsilon",
        "Alt-test against epsilon, resampling annotators",
        "Mean winning rate and advantage probability over resamples of {annotators} and "
        "100 items (all when fewer), with the 90% empirical interval, per epsilon (the "
        "alt-test paper's Table 3 setting and Figure 3).",
        "Winning rate and advantage probability against epsilon; bands: 90% of resamples "
        "of {annotators}; dotted: the 0.5 needed to pass.",
    ),
    (
        "items",
        "Alt-test against the number of items",
        "For the model with the highest advantage probability on each scale (mean of the "
        "epsilon curve's resamples): mean over resamples of {annotators} and n items (up "
        "to 300) of the winning rate and advantage probability at the study's epsilon, "
        "with the 90% empirical interval (the alt-test paper's Table 3 and Figure 2). "
        "n_undefined: resamples too small to test (under 30 items per annotator).",
        "Winning rate and advantage probability against the number of items; bands: 90% "
        "of resamples.",
    ),
)


def _section(key, heading, caption, frame, *, empty="", figures=()) -> Section:
    return Section(
        key=key,
        heading=heading,
        caption=caption,
        frame=frame_view(frame),
        text_columns=text_columns(frame),
        figures=list(figures),
        empty=empty,
    )


def statistics_section(tables, level: float) -> Section:
    """The further statistics of every scale (:class:`annotator.analysis.model.Statistic`):
    the caption says what each is computed on, from the table itself."""
    frame = tables.statistics
    about = " ".join(dict.fromkeys(a for a in frame["about"] if a)) if "about" in frame else ""
    return _section(
        "statistics",
        "Further agreement statistics",
        f"Per scale, among the humans (no model) and of each model with the humans, with "
        f"{level:g}% intervals. {about}".strip(),
        frame.drop(columns="about", errors="ignore"),
    )


def agreement_sections(tables, drawn: Mapping[str, Drawn] | None = None) -> list[Section]:
    """The sections of this module, in the report's order (``drawn``: as
    :func:`.sections.report_sections`)."""
    # The intervals' coverage is the study's setting, as in the tables.
    level = 100 * float((tables.settings or {}).get("confidence", 0.95))
    sections = [
        _section(
            "consistency",
            "Self-consistency of the LLM runs",
            "Per model, scale and temperature, across the model's runs on the same items "
            "(Rating Roulette, section 4): Krippendorff's alpha (interval; ordinal and "
            "nominal on integer scores), ICC(A,1) of the items x runs matrix with its "
            f"{level:g}% interval, and the share of items given the same score in every run. A judge "
            "that samples little scores close to 1.",
            tables.consistency,
            empty="no model has two runs at one temperature",
        ),
        _section(
            "correlations",
            "Correlations with the human mean",
            "Pearson r, Spearman rho and Kendall tau-b between the human mean (complete "
            "block) and each model and the ensemble at the main temperature, with "
            f"{level:g}% Fisher-z intervals (rank coefficients: Fieller-Hartley-Pearson variances).",
            tables.correlations,
            empty="no model has scores on items the humans rated",
        ),
        _section(
            "kappa",
            "Kappa and percent agreement (integer scales)",
            "Cohen's kappa with quadratic weights between the human consensus rounded half "
            "up and each model (scale points as categories); Fleiss' kappa among the humans "
            "(complete block; nominal categories); percent agreement among the humans: "
            "agreeing pairs of raters per item, and items on which all raters agree. Not "
            "chance-corrected: read it beside the kappas.",
            tables.kappa,
            empty="no integer scale (step 1) in this study",
        ),
        _section(
            "cross_alpha",
            "Cross-group alpha",
            "Krippendorff's alpha counting only pairs of ratings from two different groups "
            "(Rating Roulette, section 3.3): humans against the LLMs (each model a rater) "
            "and between demographic groups; expected disagreement from the pooled ratings.",
            tables.cross_alpha,
            empty="no two groups of raters to compare",
        ),
    ]
    if not tables.statistics.empty:
        sections.append(statistics_section(tables, level))
    for against, heading, caption, figure_caption in _CURVES:
        part = curves_against(tables, against)
        key = f"alttest_{against}_curve"
        # The resamples draw 3 annotators, or all of them when fewer: say how many.
        counts = part["n_annotators"].dropna() if "n_annotators" in part else ()
        n = int(max(counts)) if len(counts) else 3
        annotators = f"{n} annotator" + ("" if n == 1 else "s")
        caption = caption.format(annotators=annotators)
        shown = figure(key, tables, figure_caption.format(annotators=annotators), drawn)
        sections.append(
            _section(
                key,
                heading,
                caption,
                part[_CURVE_VIEW],
                figures=[shown],
                empty="no resample had enough items per annotator to run the alt-test",
            )
        )
    return sections
