"""Gwet's AC1/AC2 against irrCAC 0.4.4 (every weight, six datasets), the values printed in
irrCAC's documentation and test suite, a loop-by-loop Handbook computation, and the
coverage of its interval by a small run of ``validation/gwet_coverage.py``."""

from __future__ import annotations

import importlib.util
import json
import math
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from annotator.metrics import GwetAC, gwet_ac1, gwet_ac2
from annotator.metrics.gwet import GWET_WEIGHTS
from annotator.metrics.notes import collect_notes

from .conftest import REPO_ROOT
from .gwet_references import DATASETS, IRRCAC, SCALE


def _call(dataset: str, weights: str, options: str) -> GwetAC:
    kwargs = {}
    for option in options.split("+"):
        if option == "scale":
            kwargs["categories"] = SCALE
        elif option.startswith("N="):
            size, confidence = option[2:].split(",")
            kwargs.update(population_size=float(size), confidence=float(confidence))
    return gwet_ac2(np.array(DATASETS[dataset]), weights=weights, **kwargs)


@pytest.mark.parametrize("key", sorted(IRRCAC), ids=lambda k: "-".join(k))
def test_equals_irrcac(key):
    coefficient, pa, pe, se, low, high, p_value, t = IRRCAC[key]
    result = _call(*key)
    # irrCAC rounds to 15 decimals; its interval comes from scipy 1.12's t quantile.
    assert result.coefficient == pytest.approx(coefficient, abs=1e-12)
    assert result.pa == pytest.approx(pa, abs=1e-12)
    assert result.pe == pytest.approx(pe, abs=1e-12)
    assert result.se == pytest.approx(se, abs=1e-12)
    assert result.ci == pytest.approx((low, high), abs=1e-9)
    assert result.p_value == pytest.approx(p_value, abs=1e-12)
    assert result.statistic == pytest.approx(t, rel=1e-9)


def test_every_weight_on_two_datasets_with_missing_cells():
    for dataset in ("raw_4raters", "raw_g1g2"):
        assert {w for d, w, o in IRRCAC if d == dataset and o == "-"} == set(GWET_WEIGHTS)
        assert np.isnan(np.array(DATASETS[dataset])).any()


# Printed by irrCAC: the R package's README (kgwet/irrCAC, gwet.ac1.raw(cac.raw4raters),
# p-value one-sided) and the Python package's module docstring (irrCAC/raw.py, 0.4.4).
def test_values_printed_in_irrcac_documentation():
    r = gwet_ac1(DATASETS["raw_4raters"], alternative="greater")
    assert (round(r.pa, 7), round(r.pe, 7)) == (0.8181818, 0.1903212)
    assert (round(r.coefficient, 5), round(r.se, 5)) == (0.77544, 0.14295)
    assert (round(r.ci[0], 3), r.ci[1]) == (0.461, 1.0)
    assert r.p_value == pytest.approx(0.0001043605, abs=5e-11)
    py = gwet_ac1(DATASETS["raw_4raters"])
    assert [round(v, 5) for v in (py.coefficient, *py.ci, py.p_value, py.statistic)] == [
        0.77544, 0.46081, 1.0, 0.00021, 5.42458,
    ]  # fmt: skip
    assert (round(py.se, 5), round(py.pa, 5), round(py.pe, 5)) == (0.14295, 0.81818, 0.19032)
    bipolar = gwet_ac2(DATASETS["raw_4raters"], weights="bipolar")
    assert [round(v, 5) for v in (bipolar.coefficient, *bipolar.ci, bipolar.statistic)] == [
        0.90037, 0.66747, 1.0, 8.50888,
    ]  # fmt: skip
    assert [round(v, 5) for v in (bipolar.se, bipolar.pa, bipolar.pe)] == [
        0.10582,
        0.96836,
        0.68244,
    ]


# irrCAC's own test suite (afergadis/irrCAC, test/unit/irrCAC/raw/test_gwet.py), to the
# 3 decimals it asserts: pa, pe, coefficient, se, ci low, ci high; p-value, its decimals.
PUBLISHED = {
    ("raw_4raters", "identity"): (0.818, 0.190, 0.775, 0.143, 0.461, 1, 0.00021, 5),
    ("raw_4raters", "bipolar"): (0.968, 0.682, 0.900, 0.106, 0.667, 1, 4e-6, 6),
    ("raw_4raters", "circular"): (0.902, 0.426, 0.830, 0.133, 0.538, 1, 6e-5, 5),
    ("raw_4raters", "linear"): (0.939, 0.571, 0.859, 0.117, 0.600, 1, 2e-5, 5),
    ("raw_4raters", "ordinal"): (0.968, 0.685, 0.899, 0.107, 0.664, 1, 4e-6, 6),
    ("raw_4raters", "quadratic"): (0.975, 0.714, 0.914, 0.104, 0.685, 1, 3e-6, 6),
    ("raw_4raters", "radical"): (0.897, 0.430, 0.820, 0.128, 0.537, 1, 5e-5, 5),
    ("raw_4raters", "ratio"): (0.954, 0.678, 0.857, 0.122, 0.589, 1, 2e-5, 5),
    ("raw_5observers", "identity"): (0.616, 0.236, 0.497, 0.122, 0.235, 0.758, 0.00114, 5),
    ("raw_g1g2", "identity"): (0.744, 0.187, 0.685, 0.134, 0.396, 0.973, 0.00019, 5),
    ("raw_gender", "identity"): (0.456, 0.312, 0.208, 0.091, 0.014, 0.403, 0.03776, 5),
    ("raw_ben_gerry", "identity"): (0.727, 0.194, 0.661, 0.184, 0.257, 1, 0.00420, 5),
}


@pytest.mark.parametrize("key", sorted(PUBLISHED), ids=lambda k: "-".join(k))
def test_values_of_irrcac_test_suite(key):
    *three, p_value, digits = PUBLISHED[key]
    r = gwet_ac2(DATASETS[key[0]], weights=key[1])
    got = (r.pa, r.pe, r.coefficient, r.se, *r.ci)
    assert [round(v, 3) for v in got] == pytest.approx(three, abs=1e-12)
    assert round(r.p_value, digits) == pytest.approx(p_value, abs=1e-12)


def _handbook(x: np.ndarray, weights: np.ndarray, cats: list[float]) -> tuple[float, float, float]:
    """(pa, pe, AC) by the Handbook's sums, item by item and category by category."""
    rated = [row[~np.isnan(row)] for row in x if (~np.isnan(row)).any()]
    q, n = len(cats), len(rated)
    counts = [[float(np.sum(np.isclose(row, c))) for c in cats] for row in rated]
    pa_terms, pi = [], [0.0] * q
    for r in counts:
        total = sum(r)
        for k in range(q):
            pi[k] += r[k] / total / n
        if total >= 2:
            weighted = [sum(weights[k][m] * r[m] for m in range(q)) for k in range(q)]
            agree = sum(r[k] * (weighted[k] - 1) for k in range(q))
            pa_terms.append(agree / (total * (total - 1)))
    pa = sum(pa_terms) / len(pa_terms)
    pe = weights.sum() / (q * (q - 1)) * sum(p * (1 - p) for p in pi)
    return pa, pe, (pa - pe) / (1 - pe)


def test_ratio_weights_with_a_zero_category_follow_the_handbook():
    # irrCAC refuses 0 with ratio weights (0 / 0 on the diagonal); here 0 against 0 is
    # agreement, the off-diagonal weights as the Handbook's.
    x = np.array(DATASETS["raw_5observers"])
    cats = [0.0, 1.0, 2.0, 3.0]
    w = np.eye(4)
    for k, a in enumerate(cats):
        for m, b in enumerate(cats):
            if a + b > 0:
                w[k, m] = 1 - ((a - b) / (a + b)) ** 2 / ((3 - 0) / (3 + 0)) ** 2
    r = gwet_ac2(x, weights="ratio")
    assert (r.pa, r.pe, r.coefficient) == pytest.approx(_handbook(x, w, cats), abs=1e-12)


def test_a_fine_fractional_scale_follows_the_handbook():
    # 0-100 in steps of 0.5 (201 categories, most unused) with missing cells.
    rng = np.random.default_rng(7)
    truth = rng.uniform(0, 100, 40)[:, None]
    x = np.clip(np.round((truth + rng.normal(0, 8, (40, 4))) * 2) / 2, 0, 100)
    x[rng.random(x.shape) < 0.25] = np.nan
    cats = [0.5 * k for k in range(201)]
    diff = np.subtract.outer(cats, cats)
    r = gwet_ac2(x, weights="quadratic", categories=np.arange(0, 100.5, 0.5))
    expected = _handbook(x, 1 - diff**2 / 100**2, cats)
    assert (r.pa, r.pe, r.coefficient) == pytest.approx(expected, abs=1e-12)
    assert len(r.categories) == 201


def test_ac1_is_ac2_with_identity_weights_and_inputs_agree():
    x = np.array(DATASETS["raw_5observers"])
    ac1 = gwet_ac1(x)
    assert ac1 == gwet_ac2(x, weights="identity")
    assert gwet_ac1(pd.DataFrame(x)) == ac1
    nullable = pd.DataFrame(x).astype("Int64")  # pd.NA for the missing cells
    assert gwet_ac1(nullable) == ac1
    assert (ac1.n_items, ac1.n_raters, ac1.categories) == (15, 5, (0.0, 1.0, 2.0, 3.0))


def test_items_rated_once_count_in_chance_agreement_only_and_empty_rows_drop():
    x = np.array(DATASETS["raw_4raters"])
    r = gwet_ac1(np.vstack([x, np.full((2, 4), np.nan)]))
    assert (r.n_items, r.n_pairable) == (12, 11)  # item 12 has one rating
    assert r == gwet_ac1(x)


def test_categories_floating_point_steps_match_typed_scores():
    x = [[0.3, 0.3, 0.4], [2.1, 2.2, 2.1], [4.9, 5.0, 5.0], [1.0, 1.7, 1.1]]
    typed = gwet_ac2(x, weights="linear", categories=[round(0.1 * k, 1) for k in range(51)])
    ranged = gwet_ac2(x, weights="linear", categories=np.arange(0, 5.05, 0.1))
    assert ranged.coefficient == pytest.approx(typed.coefficient, abs=1e-12)


def test_unused_categories_change_chance_agreement():
    # The scale 0.5-5 by 0.25 against the halves used: both irrCAC's, and they differ.
    frac = IRRCAC[("fractional", "quadratic", "scale")][0]
    observed = IRRCAC[("fractional", "quadratic", "-")][0]
    assert abs(frac - observed) > 1e-3


def test_perfect_agreement():
    # Complete data, every item unanimous: AC 1, no spread over items.
    r = gwet_ac2([[1, 1, 1], [2, 2, 2], [4, 4, 4]], weights="linear")
    assert (r.coefficient, r.pa, r.se, r.ci, r.p_value) == (1.0, 1.0, 0.0, (1.0, 1.0), 0.0)
    assert r.statistic == math.inf


def test_one_category_is_agreement_on_any_scale_around_it():
    x = [[3, 3], [3, 3], [3, np.nan]]
    alone = gwet_ac1(x)
    scaled = gwet_ac1(x, categories=range(6))
    assert (alone.coefficient, alone.pa, alone.pe) == (1.0, 1.0, 0.0)
    assert (scaled.coefficient, scaled.pa, scaled.pe) == (1.0, 1.0, 0.0)
    assert alone.se == scaled.se


def test_one_item_has_no_standard_error():
    with pytest.warns(RuntimeWarning, match="one rated item"):
        r = gwet_ac1([[1, 1, 2]])
    assert math.isnan(r.se) and math.isnan(r.p_value) and all(map(math.isnan, r.ci))
    with collect_notes() as notes:
        gwet_ac1([[1, 1, 2]])
    assert notes == ["one rated item: the standard error of Gwet's AC is undefined"]
    assert json.loads(json.dumps(r.to_dict()))["se"] is None


def test_alternatives_and_population_size():
    x = DATASETS["raw_gender"]
    two, greater, less = (gwet_ac1(x, alternative=a) for a in ("two-sided", "greater", "less"))
    assert greater.p_value + less.p_value == pytest.approx(1.0, abs=1e-15)
    assert two.p_value == pytest.approx(2 * min(greater.p_value, less.p_value), abs=1e-15)
    finite = gwet_ac1(x, population_size=30)
    assert finite.se == pytest.approx(two.se * math.sqrt(1 - 15 / 30), abs=1e-15)
    assert gwet_ac1(x, population_size=15).se == 0.0


@pytest.mark.parametrize(
    ("ratings", "options", "message"),
    [
        (np.empty((0, 3)), {}, "ratings is empty"),
        ([1, 2, 3], {}, "ratings must be 2-D"),
        ([[1, "a"], [2, 2]], {}, "ratings must hold numbers.*'a' at position \\(0, 1\\)"),
        ([[1], [2]], {}, "at least 2 raters"),
        ([[1, np.nan], [np.nan, 2]], {}, "no item with at least 2 ratings"),
        ([[1, 2]], {"weights": "cubic"}, "weights must be one of identity"),
        ([[1, 2]], {"weights": None}, "weights must be one of"),
        ([[1, 2], [3, 3]], {"categories": [1, 2]}, "score 3, which is not among categories"),
        ([[1, 2]], {"categories": [1, np.nan, 2]}, "categories must be"),
        ([[1, 2]], {"categories": ["low", "high"]}, "categories must hold numbers"),
        ([[1, 2]], {"confidence": 1.5}, "confidence must be strictly between"),
        ([[1, 2]], {"alternative": "bigger"}, "alternative must be one of"),
        ([[1, 2]], {"population_size": 0}, "population_size must be a positive"),
        ([[1, 2], [2, 2]], {"population_size": 1}, "population_size \\(1\\) is below the 2"),
        ([[-1, 2], [2, 2]], {"weights": "ratio"}, "needs non-negative categories"),
    ],
)
def test_bad_input_names_the_parameter(ratings, options, message):
    with pytest.raises(ValueError, match=message):
        gwet_ac2(ratings, **options)


def test_result_is_frozen_and_json_ready():
    r = gwet_ac1(DATASETS["raw_4raters"])
    with pytest.raises(AttributeError):
        r.coefficient = 0.0  # type: ignore[misc]
    d = json.loads(json.dumps(r.to_dict(), allow_nan=False))
    assert d["ci"] == list(r.ci) and d["categories"] == [1.0, 2.0, 3.0, 4.0, 5.0]


def _coverage_module():
    path = REPO_ROOT / "validation" / "gwet_coverage.py"
    spec = importlib.util.spec_from_file_location("gwet_coverage", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("scale", ["0-5 by 1, AC1", "0-5 by 0.5, linear"])
def test_interval_coverage_at_30_items_and_5_raters(scale):
    """200 repetitions of the validation at n = 30, 5 raters, 20 % missing: coverage not
    below the 0.001 binomial quantile of a true 0.95 (the full table: docs/metrics.md)."""
    reps = 200
    cell = _coverage_module().run_cell(20261128, scale, "symmetric", 5, 0.2, 30, reps)
    assert cell.coverage >= stats.binom.ppf(0.001, reps, 0.95) / reps
    assert abs(cell.mean - cell.truth) < 0.02
