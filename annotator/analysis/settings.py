"""What the dashboard and the report compute with: the study's ``[validation]`` and more."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from ..studyfile import validation_settings

__all__ = ["AnalysisSettings", "study_settings"]

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
        The LLM temperature the tables use ("main temperature"); None: the most
        common temperature among the study's LLM scores. Scores at other temperatures
        only enter the temperature table (a model's runs at different temperatures are
        never averaged together).
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
        How a model's runs at one temperature are combined: always "mean" (the mean of
        sampled scores agrees best with humans, shared/papers/002).
    """

    epsilon: float = 0.2
    scoring: str = "neg_rmse"
    q: float = 0.05
    temperature: float | None = None
    group_by: str | None = "gender"
    epsilons: tuple[float, ...] = EPSILONS
    n_resamples: int = 2000
    seed: int = 0
    confidence: float = 0.95
    item_threshold: float = 0.1
    worst_items: int = 10
    runs: str = "mean"

    def __post_init__(self) -> None:
        # A tuple, so that settings stay hashable (they key the dashboard cache).
        object.__setattr__(self, "epsilons", tuple(float(e) for e in self.epsilons))
        if self.runs != "mean":
            raise ValueError(f"runs must be 'mean', got {self.runs!r}")
        if not 0.0 < self.confidence < 1.0:
            raise ValueError(f"confidence must be strictly between 0 and 1, got {self.confidence}")
        if isinstance(self.n_resamples, bool) or self.n_resamples < 1:
            raise ValueError(f"n_resamples must be a positive integer, got {self.n_resamples!r}")
        if self.worst_items < 0:
            raise ValueError(f"worst_items must be >= 0, got {self.worst_items}")

    def to_dict(self) -> dict[str, Any]:
        """Plain Python types (JSON-ready)."""
        out = asdict(self)
        out["epsilons"] = list(self.epsilons)
        return out


def study_settings(study: Any, **overrides: Any) -> AnalysisSettings:
    """The settings of a stored study: its ``[validation]`` table, then ``overrides``.

    ``study`` is a :class:`annotator.models.Study` (only ``source_toml`` is read).
    """
    spec = validation_settings(study.source_toml or "")
    settings = AnalysisSettings(
        epsilon=spec.epsilon, scoring=spec.scoring, q=spec.q, temperature=spec.temperature
    )
    return replace(settings, **overrides)
