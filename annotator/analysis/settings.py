"""What the dashboard and the report compute with: the study's ``[validation]`` and more."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from ..data.matrix_rules import MatrixSettings
from ..data.temperatures import judge_temperature_pairs
from ..metrics._names import RUNS
from ..study.studyfile import assignment_settings, validation_settings

__all__ = ["AnalysisSettings", "statistics_note", "study_settings"]

# The alt-test's epsilon grid of the report: the paper's range of margins.
EPSILONS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3)


@dataclass(frozen=True)
class AnalysisSettings:
    """Options of :func:`~annotator.analysis.tables.report_tables` and the dashboard.

    Attributes
    ----------
    epsilon, scoring, q : float, str, float
        The alt-test's margin, alignment scoring ("neg_rmse" or "accuracy") and false
        discovery rate: the study file's ``[validation]``.
    temperature : float or None
        The LLM temperature the tables use for every judge with scores at it; None
        (and for a judge without any): each judge's own main temperature, the most
        common among its own scores (:func:`annotator.data.temperatures.judge_temperatures`).
        Scores at other temperatures only enter the temperature table (a model's runs
        at different temperatures are never averaged together).
    judge_temperatures : tuple of (str, float)
        Temperatures the lead chose for single judges (``[validation.temperatures]``,
        ``--judge-temperature``); they win over ``temperature``.
    group_by : str or None
        The demographic answer that splits the raters in the groups table (paper
        Table 5); None: no split.
    epsilons : tuple of float
        The epsilon grid of the alt-test table.
    n_resamples, seed, confidence : int, int, float
        Bootstrap resamples over items, their seed, and the coverage of every interval.
    item_threshold : float
        Per-item nMAE above which an item counts as poorly aligned (paper section 5.4).
    worst_items : int
        Items listed per scale in the worst-items table.
    runs : str
        How a model's runs at one temperature are combined
        (:func:`annotator.metrics.runs.aggregate_runs`): "mean" (default: the mean of
        sampled scores agrees best with humans, design choices 002), "median",
        "majority", "first" or "each" (every run its own column, ``MODEL#RUN``).
    where : tuple of (str, tuple of str)
        The raters kept, by demographic answer (``(("gender", ("female",)),)``;
        :func:`annotator.data.selection.parse_where`); empty: every rater.
    design : str
        The study file's ``[assignment] design``: "crossed" or "overlap".
    raters_per_item : int or None
        Overlap designs: ``k``, the raters of each pool item per scale.
    anchor_items : int or tuple of str
        Overlap designs: the anchor items (a count for the seeded draw, or their
        ids); ICC(A,1) is computed on the anchor block (:meth:`anchor_rows`).
    """

    epsilon: float = 0.2
    scoring: str = "neg_rmse"
    q: float = 0.05
    temperature: float | None = None
    judge_temperatures: tuple[tuple[str, float | None], ...] = ()
    group_by: str | None = "gender"
    epsilons: tuple[float, ...] = EPSILONS
    n_resamples: int = 2000
    seed: int = 0
    confidence: float = 0.95
    item_threshold: float = 0.1
    worst_items: int = 10
    runs: str = "mean"
    where: tuple[tuple[str, tuple[str, ...]], ...] = ()
    design: str = "crossed"
    raters_per_item: int | None = None
    anchor_items: int | tuple[str, ...] = 0

    def __post_init__(self) -> None:
        if isinstance(self.anchor_items, list):
            object.__setattr__(self, "anchor_items", tuple(self.anchor_items))
        # Tuples, so that settings stay hashable (they key the dashboard cache).
        object.__setattr__(self, "epsilons", tuple(float(e) for e in self.epsilons))
        object.__setattr__(
            self, "judge_temperatures", judge_temperature_pairs(self.judge_temperatures)
        )
        where = self.where.items() if isinstance(self.where, Mapping) else self.where
        object.__setattr__(
            self, "where", tuple((str(k), tuple(str(v) for v in vs)) for k, vs in where)
        )
        if self.runs not in RUNS:
            raise ValueError(f"runs must be one of {', '.join(RUNS)}; got {self.runs!r}")
        if not 0.0 < self.confidence < 1.0:
            raise ValueError(f"confidence must be strictly between 0 and 1, got {self.confidence}")
        if isinstance(self.n_resamples, bool) or self.n_resamples < 1:
            raise ValueError(f"n_resamples must be a positive integer, got {self.n_resamples!r}")
        if self.worst_items < 0:
            raise ValueError(f"worst_items must be >= 0, got {self.worst_items}")

    def anchor_rows(self, study: str, item_ids) -> list[str] | None:
        """Overlap designs: the anchor items among ``item_ids`` of the study ``study``
        (its slug), in their order; ``None`` for a crossed design
        (:meth:`annotator.data.matrix_rules.MatrixSettings.anchor_rows`)."""
        return self.matrix_settings.anchor_rows(study, item_ids)

    @property
    def matrix_settings(self) -> MatrixSettings:
        """The settings the matrices follow, as the exports read them from the study file."""
        return MatrixSettings(
            temperature=self.temperature,
            judge_temperatures=self.judge_temperatures,
            design=self.design,
            raters_per_item=self.raters_per_item,
            anchor_items=self.anchor_items,
        )

    def statistics_note(self) -> str | None:
        """What an overlap design's dashboard and report compute, and on which ratings."""
        return statistics_note(self.to_dict())

    @property
    def where_mapping(self) -> dict[str, tuple[str, ...]]:
        """``where`` as ``{key: values}``."""
        return dict(self.where)

    def to_dict(self) -> dict[str, Any]:
        """Plain Python types (JSON-ready)."""
        out = asdict(self)
        out["epsilons"] = list(self.epsilons)
        out["where"] = {key: list(values) for key, values in self.where}
        out["judge_temperatures"] = dict(self.judge_temperatures)
        return out


def statistics_note(settings: Mapping[str, Any]) -> str | None:
    """The caption of an overlap design (``settings``: :meth:`AnalysisSettings.to_dict`):
    which statistics allow the missing cells, and which use the anchor block."""
    if settings.get("design") != "overlap":
        return None
    return (
        f"Overlap design: each item is rated by {settings.get('raters_per_item')} raters per "
        "scale, so the items x raters matrices have missing cells. Krippendorff's alpha and "
        "the alt-test use every rating (missing cells allowed; the alt-test tests a rater "
        "with at least 30 items that another rater rated too, its per-annotator minimum); "
        "ICC and the panels of Table 2 use the anchor block, the anchor items every rater "
        "rates on every scale."
    )


def study_settings(study: Any, **overrides: Any) -> AnalysisSettings:
    """The settings of a stored study: its ``[validation]`` table, then ``overrides``.

    ``study`` is a :class:`annotator.models.Study` (only ``source_toml`` is read).
    """
    source = study.source_toml or ""
    spec = validation_settings(source)
    # The matrices' settings (temperatures, design, anchors): the exports read the same.
    matrix = MatrixSettings.of(spec, assignment_settings(source))
    settings = AnalysisSettings(
        epsilon=spec.epsilon,
        scoring=spec.scoring,
        q=spec.q,
        temperature=matrix.temperature,
        judge_temperatures=matrix.judge_temperatures,
        design=matrix.design,
        raters_per_item=matrix.raters_per_item,
        anchor_items=matrix.anchor_items,
    )
    # Table 5 groups by a question the study asks: a study whose questions include no
    # gender gets no grouping (and no note that nobody answered it). A study stored
    # without its questions (an empty list) keeps the default.
    asked = getattr(study, "demographics", None)
    if (
        isinstance(asked, list)
        and asked
        and settings.group_by not in {q.get("key") for q in asked if isinstance(q, dict)}
    ):
        settings = replace(settings, group_by=None)
    return replace(settings, **overrides)
