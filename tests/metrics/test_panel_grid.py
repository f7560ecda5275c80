"""``panel_grid``'s ``reuse``: a figure of the same grid drawn again on its own panels,
over the frame it kept (``LayeredFigure``); ``unit_y``'s axes."""

import pytest
from matplotlib.axis import XAxis, YAxis

from annotator.metrics.plotting import (
    TITLE_Y,
    UNIT_LIMITS,
    UNIT_TICKS,
    panel_grid,
    png_bytes,
    unit_y,
)


def _draw(reuse=None, *, rows=2, shift=0.0):
    fig, axes = panel_grid(rows, 2, width=8.0, row_height=3.0, reuse=reuse)
    for row in range(rows):
        for col in range(2):
            ax = axes[row][col]
            for k in range(3):
                ax.plot([0, 1 + shift, 2], [k, k + 1, k + shift], marker=".", label=f"m{k}")
            ax.fill_between([0.0, 1.0], [0.0, 0.1], [0.5, 0.6 + shift], alpha=0.15)
            ax.axhline(0.5, linestyle=":")
            ax.set_title(f"{row}, {col}")
        axes[row][1].legend(loc="lower right")
    return fig


def test_a_reused_grid_gives_the_png_of_a_new_one():
    first = _draw(shift=3.0)
    png_bytes(first)
    again = _draw(first)
    assert again is first
    # Colours restart, limits follow the new data only, one legend per panel.
    assert png_bytes(again) == png_bytes(_draw())
    assert len(again.axes[1].lines) == 4


def test_another_grid_is_not_reused():
    first = _draw()
    assert _draw(first, rows=3) is not first
    assert panel_grid(2, 2, width=9.0, row_height=3.0, reuse=first)[0] is not first


def _curves(reuse=None, *, x=(0.1, 0.2), rows=2, unit=True):
    """A grid as the report's alt-test figures: y in [0, 1] (by ``unit_y``, or only its
    limits), x over ``x``."""
    fig, axes = panel_grid(rows, 2, width=8.0, row_height=3.0, reuse=reuse)
    if unit:
        unit_y(axes)
    else:
        for ax in axes.flat:
            ax.set_ylim(*UNIT_LIMITS)
    for row in range(rows):
        for col in range(2):
            ax = axes[row][col]
            for k in range(3):
                ax.plot([x[0], sum(x) / 2, x[1]], [0.1 * k, 0.5, 0.9], marker=".", label=f"m{k}")
            ax.fill_between(x, [0.0, 0.1], [0.5, 0.6], alpha=0.15)
            ax.axhline(0.5, linestyle=":")
            ax.set_xlabel("epsilon" if x[1] < 1 else "number of items")
            ax.set_ylabel("winning rate")
            ax.set_title(f"{row}, {col}", y=TITLE_Y)
        axes[row][1].legend(loc="lower right")
    return fig


class _Count:
    """How many times the y-axes and the x-axes are drawn (shown)."""

    def __init__(self, monkeypatch):
        self.calls = {"x": 0, "y": 0}
        for name, cls in (("x", XAxis), ("y", YAxis)):
            monkeypatch.setattr(cls, "draw", self._counted(name, cls.draw))

    def _counted(self, name, draw):
        def counted(axis, renderer):
            self.calls[name] += axis.get_visible()
            return draw(axis, renderer)

        return counted


def test_a_grid_drawn_again_over_its_kept_frame_gives_the_png_of_a_new_one(monkeypatch):
    # The frame of the first is kept whole for the second (the same x-axes), without its
    # x-axes for the others (other x-limits, ticks and labels: drawn again over it).
    first = _curves()
    png_bytes(first)
    count = _Count(monkeypatch)
    same = png_bytes(_curves(first))
    assert count.calls == {"x": 0, "y": 0}
    other_x = [png_bytes(_curves(first, x=x)) for x in ((0.0, 0.3), (30.0, 150.0))]
    assert count.calls == {"x": 8, "y": 0}
    monkeypatch.undo()
    assert same == png_bytes(_curves())
    assert other_x == [png_bytes(_curves(x=x)) for x in ((0.0, 0.3), (30.0, 150.0))]
    # Other y-limits: the whole frame drawn again.
    fig = _curves(first)
    fig.axes[0].set_ylim(-0.5, 1.5)
    count = _Count(monkeypatch)
    png_bytes(fig)
    assert count.calls == {"x": 4, "y": 4}


def test_unit_y_ticks_and_axis_labels_are_where_matplotlib_puts_them():
    pinned, auto = _curves(), _curves(unit=False)
    png_bytes(pinned)
    png_bytes(auto)
    for ax, other in zip(pinned.axes, auto.axes, strict=True):
        # No tick made beyond the ends; the labels where drawing would have put them.
        assert list(ax.get_yticks()) == list(UNIT_TICKS)
        assert list(ax.get_xticks()) == list(other.get_xticks())
        for label, auto_label in (
            (ax.xaxis.label, other.xaxis.label),
            (ax.yaxis.label, other.yaxis.label),
        ):
            ours, theirs = label.get_window_extent(), auto_label.get_window_extent()
            assert ours.bounds == pytest.approx(theirs.bounds, abs=1e-6)
