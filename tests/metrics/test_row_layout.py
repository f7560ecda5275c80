"""``fit_row``: a row of panels laid out from its text's sizes, as ``tight_layout`` would."""

import pytest

from annotator.metrics.plotting import TITLE_Y, empty_panel, new_figure, png_bytes, tight
from annotator.metrics.row_layout import fit_row

# Long tick labels and axis labels, a title and an x-axis label that fit their panel:
# as tight_layout, fit_row does not make room for a title or an x-axis label wider than
# the panel.
SHORT = {"ticks": ["0", "1", "2"], "label": "y", "xlabel": "x", "title": "t"}
LONG = {
    "ticks": ["nMAE, 0-5", "human-LLM ICC, 0-10 minus 0-100", "a"],
    "label": "ICC(A,1) filled, Pearson r hollow",
    "xlabel": "share of the range (0-100)",
    "title": "ICC with 95% intervals",
}


def _row(kind, n_panels=3, *, y_scale=1.0, empty_last=False):
    fig = new_figure(n_panels, width=4.0 if kind is SHORT else 5.5, height=3.2)
    for i, ax in enumerate(fig.axes):
        if empty_last and i == n_panels - 1:
            empty_panel(ax, "nothing to draw in this panel at all, a long message")
            continue
        ax.plot([0.0, 150.0], [0.0, 2.0 * y_scale], marker=".", label="a line")
        if kind is LONG:
            ax.set_yticks([0.0, 1.0, 2.0], kind["ticks"])
        ax.set_xlabel(kind["xlabel"])
        ax.set_ylabel(kind["label"])
        ax.set_title(kind["title"], y=TITLE_Y)
        ax.legend(fontsize="small")
    return fig


def _texts(ax):
    """The text ``ax`` draws, each with its window extent (after drawing)."""
    renderer = ax.get_figure(root=True).canvas.get_renderer()
    texts = [*ax.texts, ax.title, ax.xaxis.label, ax.yaxis.label, ax.xaxis.offsetText]
    texts += [*ax.yaxis.offsetText.get_visible() * [ax.yaxis.offsetText]]
    for axis in (ax.xaxis, ax.yaxis):
        low, high = sorted(axis.get_view_interval())
        texts += [
            tick.label1
            for tick in axis.get_major_ticks()
            if low <= tick.get_loc() <= high and tick.label1.get_visible()
        ]
    if ax.get_legend() is not None:
        texts += ax.get_legend().get_texts()
    shown = [t for t in texts if t.get_visible() and t.get_text() and ax.axison | (t in ax.texts)]
    return [(t, t.get_window_extent(renderer)) for t in shown]


def _check_fits(fig):
    fig.canvas.draw()
    canvas = fig.bbox
    boxes = [ax.get_window_extent() for ax in fig.axes]
    for i, ax in enumerate(fig.axes):
        for text, extent in _texts(ax):
            what = f"panel {i}: {text.get_text()!r}"
            assert canvas.x0 <= extent.x0 and extent.x1 <= canvas.x1, what
            assert canvas.y0 <= extent.y0 and extent.y1 <= canvas.y1, what
            for j, other in enumerate(fig.axes):
                if j == i:
                    continue
                assert not extent.overlaps(boxes[j]), f"{what} over panel {j}"
                for other_text, other_extent in _texts(other):
                    assert not extent.overlaps(other_extent), f"{what} over {other_text}"


@pytest.mark.parametrize("kind", [SHORT, LONG], ids=["short", "long"])
@pytest.mark.parametrize("n_panels", [1, 3])
def test_the_text_stays_on_the_canvas_and_off_the_other_panels(kind, n_panels):
    fig = _row(kind, n_panels)
    fit_row(fig)
    _check_fits(fig)


@pytest.mark.parametrize(
    "make",
    [
        lambda: _row(SHORT),
        lambda: _row(LONG),
        lambda: _row(SHORT, 1, y_scale=-2500.0),
        lambda: _row(LONG, 2, empty_last=True),
    ],
    ids=["short", "long", "wide numbers", "empty panel"],
)
def test_the_margins_are_tight_layouts(make):
    # tight_layout measures the drawn boxes; the same rules give the same margins
    # (to a pixel: y tick labels are centred on their baseline, not their box).
    fitted, tight_one = make(), make()
    fit_row(fitted)
    tight(tight_one)
    width, height = fitted.get_size_inches() * fitted.dpi
    ours, theirs = fitted.subplotpars, tight_one.subplotpars
    for side, size in (("left", width), ("right", width), ("bottom", height), ("top", height)):
        assert getattr(ours, side) * size == pytest.approx(getattr(theirs, side) * size, abs=1.0)
    assert ours.wspace == pytest.approx(theirs.wspace, abs=0.005)


def _offset_row():
    fig = _row(SHORT, 2, y_scale=1e-7)
    # Ticks as an offset and small steps: the offset sits above the panel, which the
    # rules leave out.
    fig.axes[0].set_ylim(1.0, 1.0 + 1e-6)
    for ax in fig.axes:
        ax.set_title("")
    return fig


def _rotated_row():
    fig = _row(LONG, 2)
    fig.axes[1].tick_params(axis="x", labelrotation=45)
    return fig


@pytest.mark.parametrize("make", [_offset_row, _rotated_row], ids=["offset", "rotated"])
def test_what_the_rules_leave_out_is_left_to_tight_layout(make):
    fitted, tight_one = make(), make()
    fit_row(fitted)
    tight(tight_one)
    assert vars(fitted.subplotpars) == vars(tight_one.subplotpars)
    _check_fits(fitted)


@pytest.mark.parametrize("kind", [SHORT, LONG], ids=["short", "long"])
def test_the_ticks_are_fixed_to_those_drawn(kind):
    # The same figure with the same margins and matplotlib's own ticks: the same PNG,
    # without a tick beyond either end.
    fitted, auto = _row(kind), _row(kind)
    fit_row(fitted)
    sides = ("left", "right", "bottom", "top", "wspace")
    auto.subplots_adjust(**{side: getattr(fitted.subplotpars, side) for side in sides})
    assert png_bytes(fitted) == png_bytes(auto)
    for ax in fitted.axes:
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            assert all(low <= loc <= high for loc in axis.get_majorticklocs())


def test_the_axis_labels_stay_where_the_layout_put_them():
    # Where drawing would put them (the test above), but fixed: drawing does not measure
    # the tick labels again to place them.
    fig = _row(SHORT, 1)
    fit_row(fig)
    png_bytes(fig)
    ax = fig.axes[0]
    before = [axis.label.get_window_extent().bounds for axis in (ax.xaxis, ax.yaxis)]
    ax.set_yticks([0.0, 1.0, 2.0], ["0", "1", "a much wider label"])
    ax.set_xticks([0.0, 150.0], ["0", "a taller\nlabel"])
    png_bytes(fig)
    assert [axis.label.get_window_extent().bounds for axis in (ax.xaxis, ax.yaxis)] == before
