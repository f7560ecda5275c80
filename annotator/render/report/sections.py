"""What the report shows, in order: its table sections and its figures.

Each section picks and orders columns of a :class:`~annotator.analysis.tables.ReportTables`
frame for display; :mod:`.html` turns them into cells and renders the page.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ...analysis.settings import statistics_note
from ...data.temperatures import temperature_label
from .cells import Figure, Section, frame_view, text_columns
from .figures import Drawn, figure
from .judge_assisted import judge_assisted_section
from .rater_quality import rater_quality_section

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["bootstrap_frame", "report_figures", "report_sections", "table1_frame"]


# ------------------------------------------------------------------------ sections

_T2 = [
    "scale",
    "n_items",
    "n_raters",
    "n_models",
    "icc_a1_human",
    "icc_ak_human",
    "icc_a1_llm",
    "icc_ak_llm",
    "icc_human_llm",
    "nmae",
    "pearson_r",
]
_T3 = [
    "benchmark",
    "scale",
    "n_items",
    "n_raters",
    "n_models",
    "icc_a1_human",
    "icc_ak_human",
    "icc_a1_llm",
    "icc_ak_llm",
    "delta_a1",
    "delta_ak",
]
_T4A = ["benchmark", "scale", "n_items", "icc_human_llm", "nmae", "pearson_r"]
_T4B = [
    "model",
    "scale",
    "temperature",
    "n_items",
    "icc_human_llm",
    "icc_human_llm_low",
    "icc_human_llm_high",
    "nmae",
    "pearson_r",
]
_BOOTSTRAP = ["quantity", "estimate", "low", "high", "confidence", "n_items", "n_resamples"]
_BOOTSTRAP += ["n_undefined", "seed"]
TABLE1_AVERAGE = "average"


def _labelled_temperatures(frame):
    """The ``temperature`` column as a lead reads it ("not recorded" for none)."""
    if "temperature" not in frame.columns:
        return frame
    return frame.assign(temperature=frame["temperature"].map(temperature_label))


def table1_frame(tables) -> pd.DataFrame:
    """Table 1 laid out as the paper: a row per benchmark and comparison, a column per model.

    A reshape of ``inter_scale`` (no aggregation: each cell is one value of the long
    table) with the ``inter_scale_average`` column appended.
    """
    import pandas as pd

    long = tables.inter_scale
    if long.empty:
        return pd.DataFrame(columns=["benchmark", "comparison", TABLE1_AVERAGE])
    order = long[["benchmark", "comparison"]].drop_duplicates()
    wide = long.pivot(index=["benchmark", "comparison"], columns="model", values="icc_a1")
    wide = wide[list(dict.fromkeys(long["model"]))]
    average = tables.inter_scale_average.set_index(["benchmark", "comparison"])["icc_a1_mean"]
    wide[TABLE1_AVERAGE] = average.reindex(wide.index)
    wide = wide.reindex(pd.MultiIndex.from_frame(order))
    wide.columns.name = None
    return wide.reset_index()


def _ordered(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """Rows grouped by ``column`` in order of first appearance (stable within a group)."""
    first = {value: i for i, value in enumerate(dict.fromkeys(frame[column]))}
    return frame.sort_values(column, key=lambda c: c.map(first), kind="stable")


def bootstrap_frame(tables) -> pd.DataFrame:
    from ..figures import bootstrap_label

    frame = tables.bootstrap.copy()
    frame.insert(0, "quantity", [bootstrap_label(row) for _, row in frame.iterrows()])
    return frame[_BOOTSTRAP]


def _section(key, heading, caption, frame, *, rule=None, **extra):
    # ``rule``: the table's entry of BEST_RULES, the same the LaTeX tables bold by;
    # a table of one row marks nothing.
    best = rule.mark(frame) if rule is not None and len(frame) > 1 else None
    within = rule.within if rule is not None else None
    return Section(
        key=key,
        heading=heading,
        caption=caption,
        frame=frame_view(frame, best=best),
        best=best is not None,
        within=within,
        text_columns=text_columns(frame),
        **extra,
    )


def report_sections(tables, drawn: Mapping[str, Drawn] | None = None) -> list[Section]:
    """The report's table sections with their figures, in the paper's order.

    ``drawn``: figures already drawn, by key (:func:`.figures.figure`).
    """
    settings = tables.settings or {}
    threshold = settings.get("item_threshold", 0.1)
    # Stated wherever LLM scores enter a table: aggregation is a choice, not a hidden mean.
    runs = f" Runs aggregated by: {settings.get('runs', 'mean')}."
    overlap = statistics_note(settings)
    from ..table_files import BEST_RULES

    sections = [
        _section(
            "table1",
            "Table 1: LLM inter-scale agreement",
            "Per benchmark and model: each model's scores on the scales mapped to [0, 1] and "
            "taken as repeated measurements; absolute-agreement ICC(A,1) across the scales "
            "jointly and pairwise. (all) pools the benchmarks; the last column averages the "
            "models.",
            table1_frame(tables),
            empty="inter-scale agreement (Table 1) needs at least 2 scales",
        ),
        _section(
            "table2",
            "Table 2: reliability and agreement per scale",
            "Human and LLM panels' ICC(A,1) and ICC(A,k) on the complete items x raters "
            "block; human-LLM ICC(A,1) of [human mean, LLM ensemble mean] and nMAE over the "
            "scale's range." + runs + (" " + overlap if overlap else ""),
            tables.scales[_T2],
            rule=BEST_RULES["scales"],
        ),
        _section(
            "table3",
            "Table 3: panel reliability per benchmark",
            "Per benchmark and scale: the human and LLM panels' ICC and their differences "
            "(delta = human - LLM).",
            tables.benchmarks[_T3],
        ),
        _section(
            "table4a",
            "Table 4a: human-LLM agreement per benchmark",
            "Human mean against the LLM ensemble mean, per benchmark and scale.",
            tables.benchmarks[_T4A],
            rule=BEST_RULES["benchmarks"],
        ),
        _section(
            "table4b",
            "Table 4b: human-LLM agreement per model",
            "Human mean against each model at its temperature, per scale." + runs,
            _labelled_temperatures(_ordered(tables.models[_T4B], "model")),
            rule=BEST_RULES["models"],
        ),
        _section(
            "table5",
            "Table 5: agreement by demographic group",
            "Each group's mean against the LLM ensemble, and the reliability within the group.",
            tables.groups,
            rule=BEST_RULES["groups"],
            empty=f"no rater answered a demographic question {settings.get('group_by')!r}",
        ),
        _section(
            "table6",
            "Table 6: agreement per temperature",
            "Per model, scale and temperature: human-LLM ICC(A,1) and nMAE. A model's runs "
            "at different temperatures are never combined." + runs,
            _labelled_temperatures(tables.temperatures),
        ),
        _section(
            "alttest",
            "Alternative annotator test against epsilon",
            "Winning rate and advantage probability of each model per scale for each "
            f"epsilon (study setting: epsilon {settings.get('epsilon', '?')}, scoring "
            f"{settings.get('scoring', '?')}, q {settings.get('q', '?')}). The LLM passes "
            "when the winning rate is at least 0.5.",
            tables.alttest,
            empty="the alt-test tested no annotator",
            figures=[
                figure(
                    "alttest",
                    tables,
                    "Winning rate (dotted: the 0.5 needed to pass) and advantage probability "
                    "against epsilon, per model; one row per scale.",
                    drawn,
                )
            ],
        ),
        _section(
            "items",
            "Per-item disagreement: the worst items",
            f"nMAE between the human mean and the LLM ensemble mean per item; above "
            f"{threshold:g} the paper calls an item poorly aligned. The "
            f"{settings.get('worst_items', 10)} worst items of each scale.",
            tables.worst_items,
            figures=[
                figure(
                    "items",
                    tables,
                    f"nMAE per item, worst first, one line per scale; dashed: {threshold:g}.",
                    drawn,
                )
            ],
        ),
        _section(
            "bootstrap",
            "Bootstrap intervals",
            "Intervals from resampling items: nMAE per scale, and the difference in human-LLM "
            "ICC between scales (an interval excluding 0 says one scale aligns better).",
            bootstrap_frame(tables),
            figures=[
                figure(
                    "bootstrap",
                    tables,
                    "Bootstrap estimates with their intervals.",
                    drawn,
                )
            ],
        ),
    ]
    from .agreement_sections import agreement_sections

    sections.append(rater_quality_section(tables))
    sections.append(
        _section(
            "retest",
            "Test-retest reliability",
            "Per scale, each rater's agreement with their own earlier ratings of the items "
            "shown again in a later block (Krippendorff's interval alpha and ICC(A,1) of "
            "the first and the repeated rating), and pooled over the raters.",
            tables.retest,
            empty="no item was rated twice by one rater (no [test_retest] repeats)",
        )
    )
    judge_assisted = judge_assisted_section(tables)
    if judge_assisted is not None:
        sections.append(judge_assisted)
    return sections + agreement_sections(tables, drawn)


def report_figures(tables, drawn: Mapping[str, Drawn] | None = None) -> list[Figure]:
    """The figures that belong to no single table: distributions, ICC intervals, Figure 2
    (``drawn``: as :func:`report_sections`)."""
    from .figures import cut_intervals, pooled_repeats

    group_by = (tables.settings or {}).get("group_by")
    level = 100 * float((tables.settings or {}).get("confidence", 0.95))
    cut = cut_intervals(tables)
    # An interval wider than the ICC's range is cut at the axis: said in words too.
    cut_note = (
        " Cut at the axis, a triangle marking the cut end, as wider than the ICC's range "
        "from −1 to 1: " + "; ".join(cut) + "."
        if cut
        else ""
    )
    # One benchmark: its panel and the pooled one would show the same points.
    repeated = pooled_repeats(tables.figure2)
    pooled_note = (
        f" With one benchmark, the pooled panel (all) would repeat {repeated}'s: it is left out."
        if repeated is not None
        else ""
    )
    shown = [
        figure(
            "distributions",
            tables,
            "Score distributions per scale (as a share of the range), cumulative: the share "
            "of scores at or below each value for all human ratings, each "
            f"{group_by or 'demographic'} group, and the LLMs at the main temperature.",
            drawn,
        ),
        figure(
            "icc",
            tables,
            f"ICC per scale with its {level:g}% interval (Table 2)." + cut_note,
            drawn,
        ),
        figure(
            "figure2",
            tables,
            "The ICC-vs-nMAE diagnostic (the paper's Figure 2): per benchmark, each model "
            "and the ensemble on each scale; filled: ICC(A,1), hollow: Pearson r. A high r "
            "with a low ICC means an offset or a variance mismatch that nMAE alone hides."
            + pooled_note,
            drawn,
        ),
    ]
    return [f for f in shown if f is not None]
