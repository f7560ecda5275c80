"""References the metrics tests compare with, and the random studies they share."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pingouin as pg


def pingouin_icc(x: np.ndarray) -> dict[str, tuple[float, np.ndarray]]:
    """pingouin's ICC table of ``x`` (items x raters): type -> (ICC, 95% interval)."""
    long = pd.DataFrame(x).reset_index().melt(id_vars="index", var_name="rater", value_name="y")
    saved = pg.options.get("round.column.CI95")
    pg.options["round.column.CI95"] = None  # full precision instead of 2 decimals
    try:
        with warnings.catch_warnings():
            # pingouin 0.7 uses a pandas keyword that pandas 3.1 deprecates; not ours.
            warnings.filterwarnings("ignore", message="The inplace keyword")
            table = pg.intraclass_corr(long, targets="index", raters="rater", ratings="y")
    finally:
        pg.options["round.column.CI95"] = saved
    return {row.Type: (row.ICC, np.asarray(row.CI95)) for row in table.itertuples()}


def random_study(seed, *, n_items=60, n_humans=5, labels=False, missing=0.3, llm_missing=0.05):
    """Humans (some cells missing) and an LLM rating ``n_items`` items around a truth."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, size=n_items)
    humans = {}
    for h in range(n_humans):
        noisy = np.clip(truth + rng.integers(-1, 2, size=n_items), 1, 5)
        keep = rng.random(n_items) > missing
        humans[f"h{h}"] = {
            f"i{i}": (["a", "b", "c", "d", "e"][v - 1] if labels else int(v))
            for i, v in enumerate(noisy)
            if keep[i]
        }
    llm_values = np.clip(truth + rng.integers(-1, 2, size=n_items), 1, 5)
    llm = {
        f"i{i}": (["a", "b", "c", "d", "e"][v - 1] if labels else int(v))
        for i, v in enumerate(llm_values)
        if rng.random() >= llm_missing
    }
    return humans, llm
