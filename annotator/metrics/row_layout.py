"""Margins of a row of panels fitted to their text, measured string by string.

:func:`fit_row` sets the margins ``tight_layout`` would set on a figure of one row of
panels, from the sizes of the strings that sit outside the panels (tick labels, axis
labels, titles), each measured once through the text-size cache that drawing uses
after it. ``tight_layout`` finds them by laying out every tick of every axis and
measuring every label's box where it will be drawn: a pass as long as a third of
drawing the figure, whose boxes drawing then works out again (0.1 s of CPU for a
three-panel figure of the report on the slow machine).

The rules are matplotlib's: a tick label sits ``pad`` points plus the outer length of
the tick from the spine, the axis label ``labelpad`` points beyond the tick labels, a
title ``axes.titlepad`` points above the panel (where :data:`~.plotting.TITLE_Y` puts
it). As ``tight_layout`` does, the widths of the x-axis label and of the title are
left out (a too-long label is not made room for), the tick labels are those of the
panels' sizes before the layout, and panels are ``pad`` times the font size apart and
from the figure's edges. ``tests/metrics/test_row_layout.py`` checks that the text
drawn stays on the canvas and off the neighbouring panels.

Once the margins are set, the ticks and axis labels are fixed where drawing would put
them (:func:`_trim_ticks`, :func:`pin_label`), so that drawing neither makes ticks
it does not draw nor measures the tick labels again to place the axis labels. On the
report's five one-row figures, the PNGs are those of ``tight_layout``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.axis import Axis
    from matplotlib.backend_bases import RendererBase
    from matplotlib.figure import Figure
    from matplotlib.text import Text

__all__ = ["fit_row", "pin_label", "text_size"]


def fit_row(fig: Figure, *, pad: float = 1.08) -> None:
    """Set the margins and gaps of ``fig``, a row of panels, to fit their text.

    Parameters
    ----------
    fig : Figure
        A figure whose axes are one row of subplots of one grid (``new_figure``),
        their limits, ticks, labels and titles set.
    pad : float, default 1.08
        Space around the panels' text, as a fraction of the font size
        (``tight_layout``'s default).

    Then each axis's ticks are fixed to those within its limits, and its label put
    beyond its tick labels. Axes whose decorations these rules do not cover (an offset
    or a scale factor above the ticks; tick labels at the top or right, rotated,
    wrapped or of several lines) are laid out by
    :func:`~annotator.metrics.plotting.tight` instead, and so is a figure with any.
    """
    import matplotlib as mpl

    from .plotting import tight

    axes = fig.axes
    renderer = fig.canvas.get_renderer()
    sizes: dict = {}
    sides = [_sides(ax, renderer, sizes) for ax in axes]
    if not axes or any(side is None for side in sides):
        tight(fig)
        return
    width, height = fig.get_size_inches()
    dpi = fig.dpi
    pad_px = pad * mpl.rcParams["font.size"] / 72 * dpi
    left = sides[0][0] + pad_px
    right = sides[-1][1] + pad_px
    bottom = max(side[2] for side in sides) + pad_px
    top = max(side[3] for side in sides) + pad_px
    gap = max((a[1] + b[0] for a, b in zip(sides, sides[1:], strict=False)), default=0.0)
    panel = (width * dpi - left - right - (gap + pad_px) * (len(axes) - 1)) / len(axes)
    fig.subplots_adjust(
        left=left / (width * dpi),
        right=1.0 - right / (width * dpi),
        bottom=bottom / (height * dpi),
        top=1.0 - top / (height * dpi),
        wspace=(gap + pad_px) / panel if len(axes) > 1 else None,
    )
    for ax in axes:
        if ax.axison:
            for axis in (ax.xaxis, ax.yaxis):
                _trim_ticks(axis)
                _pin(axis, renderer, sizes)


def _trim_ticks(axis: Axis) -> None:
    """Fix ``axis``'s ticks to those its locator gives within its limits.

    matplotlib's default locator gives a tick beyond each end, which drawing makes (a
    tick is five artists) and updates, but does not draw: a sixth of the ticks of a
    row of panels. Fixed after the layout, so that the ticks are those of the panels'
    final size; a locator already fixed (its labels may go by position) is kept.
    """
    from matplotlib.ticker import FixedLocator, MaxNLocator

    if isinstance(axis.get_major_locator(), MaxNLocator):
        locs = axis.get_majorticklocs()
        low, high = sorted(axis.get_view_interval())
        slack = (high - low) * 1e-10
        inside = [loc for loc in locs if low - slack <= loc <= high + slack]
        if len(inside) < len(locs):
            axis.set_major_locator(FixedLocator(inside))


def _pin(axis: Axis, renderer: RendererBase, sizes: dict) -> None:
    """Put ``axis``'s label beyond its tick labels, as drawing would (:func:`pin_label`)."""
    ticks = _tick_labels(axis)
    if not ticks or not ticks[1]:
        return  # placed against the spine by drawing
    locs, labels, tick = ticks
    across = 1 if axis.axis_name == "x" else 0  # the tick labels' height or width
    depth = max(size[across] for size in _sizes(labels, tick, renderer, sizes))
    pin_label(axis, tick.get_pad() + tick.get_tick_padding() + depth * 72 / renderer.dpi)


def pin_label(axis: Axis, beyond: float) -> None:
    """Put ``axis``'s label ``beyond`` points from the panel plus its ``labelpad``, below
    an x-axis or left of a y-axis: where drawing would put it when its tick labels reach
    ``beyond`` points from the panel.

    As the titles at :data:`~annotator.metrics.plotting.TITLE_Y`: drawing places an
    axis label by measuring every tick label of its axis again (updating the ticks
    first), a tenth of the time of drawing a panel.
    """
    from matplotlib.transforms import blended_transform_factory, offset_copy

    ax = axis.axes
    fig = ax.get_figure(root=True)
    points = beyond + axis.labelpad
    if axis.axis_name == "x":
        under = offset_copy(ax.transAxes, fig=fig, y=-points, units="points")
        axis.set_label_coords(0.5, 0.0, blended_transform_factory(ax.transAxes, under))
    else:
        beside = offset_copy(ax.transAxes, fig=fig, x=-points, units="points")
        axis.set_label_coords(0.0, 0.5, blended_transform_factory(beside, ax.transAxes))


def _sides(ax: Axes, renderer: RendererBase, sizes: dict) -> tuple[float, ...] | None:
    """How far ``ax``'s text reaches beyond its box, in pixels: (left, right, bottom, top).

    ``None`` when the axes have decorations the rules leave out. ``sizes``: the sizes of
    the tick labels measured so far, shared by the panels (which repeat their labels).
    """
    import numpy as np

    if not ax.axison:
        return _reach(ax, [t for t in ax.texts if t.get_visible()], renderer)
    box = ax.get_window_extent(renderer)
    dpi = ax.get_figure(root=True).dpi
    reach = [0.0, 0.0, 0.0, 0.0]
    for axis, across in ((ax.xaxis, 2), (ax.yaxis, 0)):
        ticks = _tick_labels(axis)
        if ticks is None:
            return None
        locs, labels, tick = ticks
        offset = (tick.get_pad() + tick.get_tick_padding()) * dpi / 72
        at = ax.transData.transform(np.column_stack([locs, locs]))[:, 0 if across == 2 else 1]
        depth = 0.0
        for where, (width, height) in zip(at, _sizes(labels, tick, renderer, sizes), strict=True):
            if across == 2:  # centred under its tick
                reach[0] = max(reach[0], box.x0 - (where - width / 2))
                reach[1] = max(reach[1], where + width / 2 - box.x1)
                depth = max(depth, height)
            else:  # centred beside its tick
                reach[2] = max(reach[2], box.y0 - (where - height / 2))
                reach[3] = max(reach[3], where + height / 2 - box.y1)
                depth = max(depth, width)
        depth = offset + depth if labels else 0.0
        label = axis.label
        if label.get_visible() and label.get_text():
            size = label.get_window_extent(renderer)
            depth += axis.labelpad * dpi / 72 + (size.height if across == 2 else size.width)
        reach[across] = max(reach[across], depth)
    title = ax.title
    if title.get_text():
        reach[3] = max(reach[3], title.get_window_extent(renderer).y1 - box.y1)
    return tuple(reach)


def _tick_labels(axis: Axis):
    """The locations and labels of ``axis``'s ticks within its limits, and its first tick;
    ``None`` for an offset, or labels elsewhere than the bottom or left."""
    formatter = axis.get_major_formatter()
    locs = axis.get_majorticklocs()
    labels = formatter.format_ticks(locs)
    tick = axis.get_major_ticks(1)[0]  # made for the drawing anyway
    label = tick.label1
    if formatter.get_offset() or tick.label2.get_visible() or not label.get_visible():
        return None
    if label.get_rotation() or label.get_wrap() or "\n" in "".join(labels):
        return None
    # The locator gives a tick beyond each end, which is not drawn.
    low, high = sorted(axis.get_view_interval())
    slack = (high - low) * 1e-10
    keep = [low - slack <= loc <= high + slack for loc in locs]
    locs = [loc for loc, kept in zip(locs, keep, strict=True) if kept]
    return locs, [label for label, kept in zip(labels, keep, strict=True) if kept], tick


def _sizes(labels: list[str], tick, renderer: RendererBase, sizes: dict) -> list[tuple]:
    """The width and height in pixels of each of ``labels`` as ``tick``'s label, each
    measured once in ``sizes`` (by the font)."""
    from matplotlib.text import Text

    font = tick.label1.get_fontproperties()
    scratch = None
    for label in labels:
        if (label, font) not in sizes:
            if scratch is None:
                scratch = Text(fontproperties=font, figure=tick.get_figure(root=True))
            scratch.set_text(label)
            extent = scratch.get_window_extent(renderer)
            sizes[label, font] = extent.width, extent.height
    return [sizes[label, font] for label in labels]


def text_size(model: Text, text: str) -> tuple[float, float]:
    """The width and height in pixels of ``text`` in the font of ``model`` (unrotated)."""
    from matplotlib.text import Text

    fig = model.get_figure(root=True)
    scratch = Text(text=text, fontproperties=model.get_fontproperties(), figure=fig)
    extent = scratch.get_window_extent(fig.canvas.get_renderer())
    return extent.width, extent.height


def _reach(ax: Axes, texts: list[Text], renderer: RendererBase) -> tuple[float, ...]:
    box = ax.get_window_extent(renderer)
    reach = [0.0, 0.0, 0.0, 0.0]
    for text in texts:
        extent = text.get_window_extent(renderer)
        reach = [
            max(reach[0], box.x0 - extent.x0),
            max(reach[1], extent.x1 - box.x1),
            max(reach[2], box.y0 - extent.y0),
            max(reach[3], extent.y1 - box.y1),
        ]
    return tuple(reach)
