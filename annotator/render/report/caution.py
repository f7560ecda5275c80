"""Which numbers of a table are too weak to read: shown greyed, never "best".

A correlation, an ICC, an alpha or a kappa is weak when it rests on too few items or
raters, or when its own interval says it is unknown:

- fewer than :data:`MIN_ITEMS` items. Why 16: the 95% Fisher-z interval of a
  correlation of 0 on n items is ``±tanh(1.96 / sqrt(n - 3))``; below 16 items it is
  wider than 1, half the coefficient's range [-1, 1], so the data cannot tell a
  judge that agrees from one that does not (at 8 items it is ±0.70, at 2 items the
  coefficient is ±1 whatever the scores). ICC and kappa intervals on as few items are
  as wide or wider (McGraw and Wong 1996, Table 7's F-based bounds).
- fewer than :data:`MIN_RATERS` raters, for the human panel's own statistics
  (ICC, alpha, Fleiss' kappa among the humans): with 2 the panel is one pair.
- an interval in the row (``X_low``/``X_high`` or ``low``/``high``) wider than
  :data:`MAX_WIDTH`, half the range, for the same reason as the items.

Display only: no number changes; the cells get the ``weak`` class and the section a
note saying why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MAX_WIDTH", "MIN_ITEMS", "MIN_RATERS", "WEAK_NOTE", "is_statistic", "weak_cells"]

MIN_ITEMS = 16
MIN_RATERS = 3
MAX_WIDTH = 1.0

WEAK_NOTE = (
    f"Grey: on fewer than {MIN_ITEMS} items, fewer than {MIN_RATERS} raters (the human "
    f"panel's statistics) or with an interval wider than {MAX_WIDTH:g} (half the range "
    "from -1 to 1): too few to read, and never marked best."
)

# Names (or parts of names) of the coefficients on [-1, 1] a table may hold.
_STATISTICS = ("icc", "pearson", "spearman", "kendall", "kappa", "alpha", "delta_a")
# The human panel's own statistics, weak with fewer than MIN_RATERS raters too.
_PANEL = ("icc_a1_human", "icc_ak_human", "alpha_human", "fleiss_kappa", "delta_a1", "delta_ak")
# Tables whose value column holds a coefficient named in another column.
_VALUE_COLUMNS = ("estimate", "low", "high", "value")


def is_statistic(name: str, frame_columns) -> bool:
    """Whether column ``name`` holds an agreement coefficient (an ICC, a correlation, an
    alpha or a kappa)."""
    if any(part in name for part in _STATISTICS):
        return not name.startswith("n_")
    # The correlations' and kappas' long tables: the coefficient is named by ``method``
    # or ``statistic``, its value in ``estimate``/``value``.
    return name in _VALUE_COLUMNS and ("method" in frame_columns or "statistic" in frame_columns)


def weak_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """A boolean frame (same index and columns) marking the weak cells of ``frame``."""
    import numpy as np
    import pandas as pd

    weak = pd.DataFrame(False, index=frame.index, columns=frame.columns)
    columns = [c for c in frame.columns if is_statistic(str(c), frame.columns)]
    if not columns or frame.empty:
        return weak
    rows = np.zeros(len(frame), dtype=bool)
    bounds: dict = {}
    if "n_items" in frame.columns:
        items = pd.to_numeric(frame["n_items"], errors="coerce").to_numpy(dtype=float)
        rows |= items < MIN_ITEMS
    for column in columns:
        flags = rows.copy()
        for low, high in ((f"{column}_low", f"{column}_high"), ("low", "high")):
            if low in frame.columns and high in frame.columns and column not in (low, high):
                width = frame[high].to_numpy(dtype=float) - frame[low].to_numpy(dtype=float)
                flags |= np.nan_to_num(width, nan=0.0) > MAX_WIDTH
                bounds[(low, high)] = bounds.get((low, high), False) | flags
                break
        if column in _PANEL and "n_raters" in frame.columns:
            raters = pd.to_numeric(frame["n_raters"], errors="coerce").to_numpy(dtype=float)
            flags |= raters < MIN_RATERS
        weak[column] = flags
    # An interval's bounds are as weak as its estimate.
    for (low, high), flags in bounds.items():
        weak[low] = weak[low] | flags
        weak[high] = weak[high] | flags
    return weak
