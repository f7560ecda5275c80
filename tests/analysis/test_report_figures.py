"""The report's figure code where it stands in for matplotlib's own: the alt-test
curves' bands as fill_between's polygons, Figure 2's marks as scatter's."""

import numpy as np
import pytest
from matplotlib.collections import PolyCollection

from annotator.analysis.report.agreement_sections import _bands
from annotator.analysis.report.plots import _scatter
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


@pytest.mark.parametrize("hole", [None, (1, "y"), (0, "x")], ids=["numbers", "y nan", "x nan"])
def test_figure2s_marks_are_scatters(hole):
    # Two scales (markers) of three models, filled and hollow, as Figure 2 draws them.
    rng = np.random.default_rng(5)
    x, y = rng.random((2, 4, 3))
    if hole is not None:
        (x if hole[1] == "x" else y)[hole[0], 1] = NAN
    groups = [
        (x[i], y[i], marker, ["C0", "C3", "C7"], filled)
        for i, (marker, filled) in enumerate([("o", True), ("o", False), ("D", True), ("D", False)])
    ]
    scattered, batched = new_figure(1), new_figure(1)
    for gx, gy, marker, colours, filled in groups:
        if filled:
            scattered.axes[0].scatter(gx, gy, marker=marker, c=colours, s=36)
        else:
            scattered.axes[0].scatter(
                gx, gy, marker=marker, facecolors="none", edgecolors=colours, s=36
            )
    _scatter(batched.axes[0], groups)
    assert scattered.axes[0].get_xlim() == batched.axes[0].get_xlim()
    assert scattered.axes[0].get_ylim() == batched.axes[0].get_ylim()
    assert png_bytes(scattered) == png_bytes(batched)
