"""What every figure shares: a plain matplotlib figure, its panels, and its bytes.

Figures are ``matplotlib.figure.Figure`` objects made directly, not through
``pyplot``: no global figure registry and no GUI backend, so drawing is safe in the web
server's threads. Each is laid out by matplotlib's constrained layout engine and saved
with ``Figure.savefig`` (PNG through Agg and Pillow, SVG and PDF through matplotlib's
vector backends). matplotlib is imported inside the functions: ``annotator --help``
must not pay for it.
"""

from __future__ import annotations

import base64
import io
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "DPI",
    "FORMATS",
    "LEGEND_SIZE",
    "MAX_WIDTH",
    "UNIT_LIMITS",
    "VECTOR_SETTINGS",
    "data_uri",
    "empty_panel",
    "figure_bytes",
    "legend_below",
    "new_figure",
    "panel_grid",
    "png_bytes",
]

#: Pixels per inch of the figures: a PNG of a figure W inches wide is 100 W pixels.
DPI = 100
#: The widest figure in inches: at :data:`DPI`, 1,100 pixels fit the report's column
#: (1,120 CSS pixels at a 1,280-pixel window) without being scaled down, so the text
#: is shown at its size.
MAX_WIDTH = 11.0
#: Font size of legends, in points: the smallest text of a figure. At :data:`DPI` and
#: not scaled down, a 9-point text is 9.4 points on screen.
LEGEND_SIZE = 9.0
#: A y-axis for shares and probabilities, with a little room for lines at 0 and 1.
UNIT_LIMITS = (-0.02, 1.02)
#: The file formats :func:`figure_bytes` writes, by name.
FORMATS = ("png", "svg", "pdf")


def new_figure(width: float, height: float) -> Figure:
    """An empty figure of ``width`` x ``height`` inches laid out by constrained layout."""
    from matplotlib.figure import Figure

    if width > MAX_WIDTH:
        raise ValueError(f"width: {width:g} inches is wider than {MAX_WIDTH:g}")
    return Figure(figsize=(width, height), dpi=DPI, layout="constrained")


def panel_grid(
    n_panels: int,
    *,
    columns: int,
    panel_width: float,
    panel_height: float,
    extra_height: float = 0.0,
    sharex: bool = False,
    sharey: bool = False,
) -> tuple[Figure, list[Axes]]:
    """A figure of ``n_panels`` panels wrapped onto rows of at most ``columns``.

    Each panel is about ``panel_width`` x ``panel_height`` inches (constrained layout
    takes the labels out of that); ``extra_height`` is added below for a legend. The
    grid's unused cells are removed. With shared axes, a panel with no panel below it
    keeps its x tick labels (``subplots`` would hide them on every row but the last).
    Returns the figure and its ``n_panels`` axes, row by row.
    """
    if n_panels < 1:
        raise ValueError(f"n_panels: {n_panels} is not a positive number of panels")
    cols = min(n_panels, columns)
    rows = -(-n_panels // cols)
    fig = new_figure(panel_width * cols, panel_height * rows + extra_height)
    grid = fig.subplots(rows, cols, squeeze=False, sharex=sharex, sharey=sharey)
    axes = [ax for row in grid for ax in row]
    for ax in axes[n_panels:]:
        ax.remove()
    axes = axes[:n_panels]
    if sharex:
        for i, ax in enumerate(axes):
            if i + cols >= n_panels:  # nothing drawn below this panel
                ax.xaxis.set_tick_params(labelbottom=True)
    return fig, axes


def legend_below(fig: Figure, handles, *, title: str | None = None, columns: int = 6) -> None:
    """A legend for the whole figure below its panels, never over their data.

    ``handles``: the artists to name; those labelled with a leading underscore (no
    label, as matplotlib marks them) are left out, as ``Axes.legend`` leaves them.
    """
    handles = [h for h in handles if not str(h.get_label()).startswith("_")]
    if not handles:
        return
    fig.legend(
        handles=handles,
        loc="outside lower center",
        ncols=min(len(handles), columns),
        fontsize=LEGEND_SIZE,
        title=title,
        title_fontsize=LEGEND_SIZE,
        frameon=False,
    )


def empty_panel(ax: Axes, message: str) -> None:
    """Say in the panel why it shows nothing."""
    ax.set_axis_off()
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes, wrap=True)


#: matplotlib settings for the vector formats, for papers: the PDF embeds its fonts as
#: TrueType rather than matplotlib's default Type 3, which some publishers' checks
#: refuse; the SVG keeps its text as text (searchable, editable) rather than outlines.
VECTOR_SETTINGS = {"pdf.fonttype": 42, "svg.fonttype": "none"}


def figure_bytes(fig: Figure, fmt: str = "png") -> bytes:
    """The figure saved in ``fmt`` (one of :data:`FORMATS`) by ``Figure.savefig``."""
    import matplotlib

    if fmt not in FORMATS:
        raise ValueError(f"fmt: {fmt!r} is not one of {', '.join(FORMATS)}")
    buffer = io.BytesIO()
    if fmt == "png":
        fig.savefig(buffer, format=fmt)
    else:
        with matplotlib.rc_context(VECTOR_SETTINGS):
            fig.savefig(buffer, format=fmt)
    return buffer.getvalue()


def png_bytes(fig: Figure) -> bytes:
    """The figure as PNG bytes."""
    return figure_bytes(fig, "png")


def data_uri(png: bytes) -> str:
    """PNG bytes as a ``data:image/png;base64,...`` URI, for a self-contained page."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")
