"""The report's figure code where it stands in for matplotlib's own: the alt-test
curves' bands as fill_between's polygons."""

import numpy as np
import pytest
from matplotlib.collections import PolyCollection

from annotator.analysis.report.agreement_sections import _bands
from annotator.metrics.plotting import new_figure, png_bytes

X = np.array([30.0, 50.0, 70.0, 90.0, 110.0])
NAN = np.nan


@pytest.mark.parametrize(
    ("low", "high"),
    [
        ([0.1, 0.1, 0.2, 0.2, 0.3], [0.4, 0.5, 0.6, 0.7, 0.5]),
        ([NAN, 0.1, 0.2, NAN, 0.3], [NAN, 0.5, 0.6, 0.7, NAN]),  # undefined points
        ([0.1, 0.1, 0.2, NAN, 0.3], [0.4, 0.5, 0.6, 0.7, 0.5]),  # a gap: two polygons
        ([NAN] * 5, [NAN] * 5),  # nothing to fill
    ],
)
def test_the_bands_are_fill_betweens_polygons_and_pixels(low, high):
    low, high = np.array(low), np.array(high)
    filled, batched = new_figure(1), new_figure(1)
    fill = filled.axes[0].fill_between(X, low, high, color="C1", alpha=0.15)
    polygons = _bands(X, low, high)
    batched.axes[0].add_collection(
        PolyCollection(polygons, color=["C1"] * len(polygons), alpha=0.15)
    )
    assert len(polygons) == len(fill.get_paths())
    for ours, theirs in zip(polygons, fill.get_paths(), strict=True):
        np.testing.assert_array_equal(ours, theirs.vertices[:-1])  # without the closing point
    assert filled.axes[0].dataLim.bounds == batched.axes[0].dataLim.bounds
    assert png_bytes(filled) == png_bytes(batched)
