"""A figure drawn once into a PNG, and a layout shared by figures drawn alike.

``Figure.savefig`` of a figure with a layout engine draws it twice: once without
output so that constrained layout can measure the labels (and constrained layout
itself measures every panel's labels twice), then once into the file. A report draws
the same figure for each criterion of a rubric study: the same size, panels, titles,
axis labels and legend, only the data differ, so constrained layout would place the
panels (nearly) alike each time.

:func:`png_once` lays a figure out (or takes the panels' places from a figure drawn
alike, a :class:`Layout`), draws it once into Agg's buffer and encodes that buffer, as
``savefig`` would. A layout is taken over only when the figure's labels, ticks, titles
and legends stay inside the boxes they had in the figure it was made for, where
constrained layout had kept them off each other and inside the figure; otherwise the
figure is laid out afresh. Either way nothing is cut off or overlaps that would not be
in the figure laid out on its own.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from matplotlib.figure import Figure
    from matplotlib.transforms import Bbox

__all__ = ["Layout", "png_once"]

# How far, in pixels, a label may reach past its box in the layout's figure: the
# boxes are measured in floating point, a rounding's worth is not a pixel cut off.
_TOLERANCE = 0.5


@dataclass(frozen=True)
class Layout:
    """Where constrained layout put a figure's panels (in figure coordinates) and how
    far, in pixels, each panel with its labels (its tight box) and each figure legend
    reached there."""

    size: tuple[float, float]
    dpi: float
    positions: tuple[Bbox, ...]
    panels: tuple[Bbox, ...]
    legends: tuple[Bbox, ...]

    def suits(self, fig: Figure) -> bool:
        """Whether ``fig`` has this layout's size and numbers of panels and legends."""
        size = tuple(float(v) for v in fig.get_size_inches())
        return (
            size == self.size
            and fig.dpi == self.dpi
            and len(fig.axes) == len(self.positions)
            and len(fig.legends) == len(self.legends)
        )

    def holds(self, panels: list[Bbox], legends: list[Bbox]) -> bool:
        """Whether every box lies inside the box of the same panel or legend here."""
        return all(
            _inside(new, old)
            for new, old in zip([*panels, *legends], [*self.panels, *self.legends], strict=True)
        )


def _inside(new: Bbox, old: Bbox) -> bool:
    return (
        new.x0 >= old.x0 - _TOLERANCE
        and new.y0 >= old.y0 - _TOLERANCE
        and new.x1 <= old.x1 + _TOLERANCE
        and new.y1 <= old.y1 + _TOLERANCE
    )


def _boxes(fig: Figure, renderer) -> tuple[list[Bbox], list[Bbox]]:
    """Each panel's tight box and each figure legend's box, in pixels, as drawn."""
    panels = [ax.get_tightbbox(renderer) for ax in fig.axes]
    legends = [legend.get_window_extent(renderer) for legend in fig.legends]
    return panels, legends


def _encode(canvas, dpi: float) -> bytes:
    """Agg's buffer as PNG, as ``savefig`` writes it (``FigureCanvasAgg.print_png``)."""
    from matplotlib.image import imsave

    buffer = io.BytesIO()
    imsave(buffer, canvas.buffer_rgba(), format="png", origin="upper", dpi=dpi)
    return buffer.getvalue()


def _place(fig: Figure, layout: Layout) -> None:
    """Put ``fig``'s panels where ``layout`` has them, kept in the figure's layout
    (``Axes.set_position`` would take each out of it)."""
    for ax, position in zip(fig.axes, layout.positions, strict=True):
        ax.set_position(position)
        ax.set_in_layout(True)


def png_once(
    fig: Figure, likes: Sequence[Layout] = (), *, measure: bool = True
) -> tuple[bytes, Layout | None]:
    """``fig`` as PNG bytes, drawn once, and the layout it was drawn in (None for a
    figure without a layout engine, drawn as it stands).

    ``likes``: layouts of figures drawn alike. The panels are put where the first of
    them has them that suits the figure (its size and numbers of panels and legends)
    and holds it: every label, measured there before drawing, stays inside its box
    (:meth:`Layout.holds`). Otherwise the figure's own layout engine places them, and
    when ``measure`` the boxes are measured for a :class:`Layout` to share (else None).
    The figure keeps its panels where they were drawn, without a layout engine, so
    that it is saved in another format (:func:`.base.figure_bytes`) as the PNG shows it.
    """
    import matplotlib

    # At savefig's resolution, as savefig would draw it (its "figure": the figure's).
    dpi, original = matplotlib.rcParams["savefig.dpi"], fig.dpi
    if dpi != "figure":
        fig.set_dpi(dpi)
    try:
        return _png_once(fig, likes, measure=measure)
    finally:
        fig.set_dpi(original)


def _png_once(
    fig: Figure, likes: Sequence[Layout], *, measure: bool
) -> tuple[bytes, Layout | None]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    engine = fig.get_layout_engine()
    if engine is None:
        canvas.draw()
        return _encode(canvas, fig.dpi), None
    # The renderer the drawing will use: measured with it, the texts are measured once.
    renderer = canvas.get_renderer()
    chosen = None
    for like in likes:
        if like.suits(fig):
            _place(fig, like)
            if like.holds(*_boxes(fig, renderer)):
                chosen = like
                break
    if chosen is None:
        # The layout, then one drawing: savefig would lay the figure out in a drawing
        # of its own before the one into the file.
        engine.execute(fig)
        if measure:
            panels, legends = _boxes(fig, renderer)
            chosen = Layout(
                size=tuple(float(v) for v in fig.get_size_inches()),
                dpi=fig.dpi,
                positions=tuple(ax.get_position().frozen() for ax in fig.axes),
                panels=tuple(panels),
                legends=tuple(legends),
            )
    fig.set_layout_engine(None)
    canvas.draw()
    return _encode(canvas, fig.dpi), chosen
